//! fio's `net` engine: a byte stream between two jobs of a run (fio's
//! examples/netio.fio: a receiver that listens, a sender that connects) or
//! between two machines, measured as storage is: a write sends a block, a
//! read takes one whole block off the stream, and with `pingpong` each I/O
//! is a round trip (a write waits for its block to come back; a read sends
//! it back). Worker N of a job uses `port` + N, as fio's numjobs do.
//!
//! Where it differs from fio's, it is for the run's safety: every wait is
//! bounded (`idle_timeout`: for the connection and, once connected, for each
//! block; fio waits for ever) and a Ctrl-C ends a wait for the connection;
//! a unix socket's path is never removed unless this run made it (fio
//! unlinks whatever is there); the peer closing ends the job as its size
//! would (fio's receiver ends on the sender's close message), with the
//! block it cut short left out; a write to a closed peer is that same end,
//! not a SIGPIPE. UDP (fio's datagram protocol of sequence numbers and link
//! messages) is refused by name.

use crate::wait::{self, TICK};
use crate::*;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Instant;

const NAME: &str = "net";
/// fio's listen(2) backlog.
const BACKLOG: i32 = 10;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "hostname",
        kind: Kind::Text,
        default: "",
        help: "the host to connect to (fio takes filename too); with protocol=unix, the socket's path",
    },
    OptionInfo {
        name: "port",
        kind: Kind::Count,
        default: "",
        help: "TCP port to listen on or connect to; worker N of the job uses port+N",
    },
    OptionInfo {
        name: "protocol",
        kind: Kind::Choice(&["tcp", "tcpv6", "unix"]),
        default: "tcp",
        help: "tcp, tcpv6 or unix (a stream socket at hostname's path); udp is not supported",
    },
    OptionInfo { name: "listen", kind: Kind::Flag, default: "0", help: "1: wait for the other end to connect (one connection per worker)" },
    OptionInfo {
        name: "pingpong",
        kind: Kind::Flag,
        default: "0",
        help: "1: each I/O is a round trip (a write waits for its block back, a read sends it back): run both ends with it",
    },
    OptionInfo { name: "nodelay", kind: Kind::Flag, default: "0", help: "1: TCP_NODELAY (no Nagle delay on small blocks)" },
    OptionInfo {
        name: "window_size",
        kind: Kind::Count,
        default: "0",
        help: "socket buffer bytes (SO_RCVBUF listening, SO_SNDBUF connecting, both with pingpong); 0: the kernel's",
    },
    OptionInfo { name: "mss", kind: Kind::Count, default: "0", help: "TCP maximum segment size (TCP_MAXSEG); 0: the kernel's" },
    OptionInfo {
        name: "idle_timeout",
        kind: Kind::Count,
        default: "60",
        help: "seconds to wait for the other end: for its connection, then for each block (the job then fails with a timeout)",
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    Tcp,
    Tcp6,
    Unix,
}

pub struct NetFactory;

impl EngineFactory for NetFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: "net", note: None }]
    }
    fn description(&self) -> &'static str {
        "a TCP or unix-socket stream between two jobs or two machines, as fio's net engine (listen, pingpong)"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: false, direct_io: false, needs_files: false, blocks: true, objects: false, ordered: true, does_io: true }
    }
    fn streams(&self) -> bool {
        true
    }
    fn pairing(&self, options: &EngineOptions) -> Option<(String, bool)> {
        let net = parse(options).ok()?;
        match &net.to {
            Peer::Listen(port) => Some((format!("tcp:{port}"), true)),
            Peer::Host(host, port) if is_this_host(host) => Some((format!("tcp:{port}"), false)),
            Peer::Unix(path) => Some((format!("unix:{}", path.display()), net.listen)),
            Peer::Host(..) => None,
        }
    }
    fn options(&self) -> &'static [OptionInfo] {
        OPTIONS
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        Ok(Arc::new(parse(options)?))
    }
}

/// Whether `host` names this machine (a loopback address or its own name).
fn is_this_host(host: &str) -> bool {
    let own = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    matches!(host, "localhost" | "ip6-localhost" | "::1") || host.starts_with("127.") || host == own.trim()
}

/// The job's options, checked, as the engine's configuration.
fn parse(options: &EngineOptions) -> Result<NetConfig, EngineError> {
    check_known(NAME, OPTIONS, options)?;
    let bad = |option: &str, message: String| EngineError::BadOption { engine: NAME, option: option.into(), message };
    let proto = match options.get("protocol").map(String::as_str) {
        None | Some("tcp") => Proto::Tcp,
        Some("tcpv6") => Proto::Tcp6,
        Some("unix") => Proto::Unix,
        Some("udp" | "udpv6") => {
            return Err(bad("protocol", "UDP (fio's datagrams with sequence numbers and link messages) is not supported; use tcp".into()))
        }
        Some(p) => return Err(bad("protocol", format!("'{p}': give tcp, tcpv6 or unix"))),
    };
    let listen = bool_option(NAME, options, "listen", false)?;
    let host = options.get("hostname").filter(|h| !h.is_empty()).cloned();
    let number = |name: &str| -> Result<Option<u64>, EngineError> {
        options
            .get(name)
            .filter(|v| !v.is_empty())
            .map(|v| v.parse::<u64>().map_err(|_| bad(name, format!("'{v}' is not a whole number"))))
            .transpose()
    };
    let port = number("port")?;
    let to = match (proto, port, &host) {
        (Proto::Unix, Some(p), _) if p > 0 => {
            return Err(bad("port", "a unix socket has no port; its path is hostname (or filename)".into()))
        }
        (Proto::Unix, _, None) => return Err(bad("hostname", "give the unix socket's path as hostname (or filename)".into())),
        (Proto::Unix, _, Some(path)) => Peer::Unix(PathBuf::from(path)),
        (_, Some(p @ 1..=65535), _) => match (listen, &host) {
            (true, Some(_)) => {
                return Err(bad(
                    "hostname",
                    "a listening job takes connections on every address, as fio's; hostname names the host the other end connects to"
                        .into(),
                ))
            }
            (true, None) => Peer::Listen(p as u16),
            (false, None) => {
                return Err(bad("hostname", "give the host to connect to, or listen=1 for the end that waits for the connection".into()))
            }
            (false, Some(h)) => Peer::Host(h.clone(), p as u16),
        },
        _ => return Err(bad("port", "give the TCP port (1 to 65535) the listening end waits on".into())),
    };
    let idle = number("idle_timeout")?.unwrap_or(60);
    if idle == 0 || idle > MAX_TIMEOUT_SECS as u64 {
        return Err(bad("idle_timeout", format!("give 1 to {} seconds", MAX_TIMEOUT_SECS as u64)));
    }
    let int = |name: &str| -> Result<u32, EngineError> { number(name)?.unwrap_or(0).try_into().map_err(|_| bad(name, "too large".into())) };
    Ok(NetConfig {
        proto,
        to,
        listen,
        pingpong: bool_option(NAME, options, "pingpong", false)?,
        nodelay: bool_option(NAME, options, "nodelay", false)?,
        window: int("window_size")?,
        mss: int("mss")?,
        idle: Duration::from_secs(idle),
    })
}

/// Where a worker's end of the stream is.
#[derive(Clone, Debug)]
enum Peer {
    /// Listen on this TCP port (plus the worker's number), every address.
    Listen(u16),
    /// Connect to this host's port (plus the worker's number).
    Host(String, u16),
    /// A unix stream socket at this path (listening or connecting); worker
    /// N > 0 uses `PATH.N`.
    Unix(PathBuf),
}

struct NetConfig {
    proto: Proto,
    to: Peer,
    listen: bool,
    pingpong: bool,
    nodelay: bool,
    window: u32,
    mss: u32,
    idle: Duration,
}

impl NetConfig {
    fn label(&self) -> String {
        match &self.to {
            Peer::Listen(p) => format!("net:listen:{p}"),
            Peer::Host(h, p) => format!("net:{h}:{p}"),
            Peer::Unix(path) => format!("net:unix:{}", path.display()),
        }
    }

    /// Socket options that must come before the connection (fio's
    /// set_window_size and set_mss): the receiving side's buffer on a
    /// listener, the sending side's on the end that connects.
    fn set_up(&self, s: &Socket) -> std::io::Result<()> {
        if self.window > 0 {
            if self.listen || self.pingpong {
                s.set_recv_buffer_size(self.window as usize)?;
            }
            if !self.listen || self.pingpong {
                s.set_send_buffer_size(self.window as usize)?;
            }
        }
        if self.mss > 0 && self.proto != Proto::Unix {
            s.set_tcp_mss(self.mss)?;
        }
        Ok(())
    }

    fn unreachable(&self, what: String) -> EngineError {
        EngineError::Unreachable { engine: NAME, message: what, source: None }
    }

    /// Wait for the other end to connect to worker `n`'s port or path.
    fn accept(&self, n: u32, stop: &dyn Fn() -> bool) -> Result<Socket, EngineError> {
        let (listener, place, made) = match &self.to {
            Peer::Unix(path) => {
                let path = worker_path(path, n);
                (self.bind_unix(&path)?, path.display().to_string(), Some(path))
            }
            Peer::Listen(port) => {
                let port = worker_port(*port, n)?;
                (self.bind_tcp(port)?, format!("port {port}"), None)
            }
            Peer::Host(..) => unreachable!("a listening job has no host"),
        };
        let got = accept_within(&listener, self.idle, stop);
        // The connection lives on without the path: it goes at once.
        if let Some(path) = made {
            let _ = std::fs::remove_file(path);
        }
        match got {
            Ok(s) => Ok(s),
            Err(e) if wait::is_stopped(&e) => {
                Err(EngineError::Interrupted { engine: NAME, what: format!("waiting for a connection on {place}") })
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Err(self.unreachable(format!(
                "no connection came to {place} within {} s: start the end that connects (idle_timeout= waits longer)",
                self.idle.as_secs()
            ))),
            Err(e) => Err(self.unreachable(format!("accepting on {place}: {e}"))),
        }
    }

    fn bind_tcp(&self, port: u16) -> Result<Socket, EngineError> {
        let addr: SocketAddr = match self.proto {
            Proto::Tcp6 => (std::net::Ipv6Addr::UNSPECIFIED, port).into(),
            _ => (std::net::Ipv4Addr::UNSPECIFIED, port).into(),
        };
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(|e| EngineError::Os {
            engine: NAME,
            call: "socket",
            source: e,
        })?;
        // As fio (and any server): a port in TIME_WAIT from the last run is free.
        let _ = s.set_reuse_address(true);
        self.set_up(&s).map_err(|e| EngineError::Os { engine: NAME, call: "setsockopt", source: e })?;
        s.bind(&addr.into()).map_err(|e| match e.raw_os_error() {
            Some(libc::EADDRINUSE) => EngineError::BadOption {
                engine: NAME,
                option: "port".into(),
                message: format!("port {port} is in use (by another program, or another job's port+N); give another port"),
            },
            Some(libc::EACCES) => EngineError::BadOption {
                engine: NAME,
                option: "port".into(),
                message: format!("port {port} needs privileges to listen on; give a port above 1023"),
            },
            _ => EngineError::Os { engine: NAME, call: "bind", source: e },
        })?;
        s.listen(BACKLOG).map_err(|e| EngineError::Os { engine: NAME, call: "listen", source: e })?;
        Ok(s)
    }

    /// A unix listener at `path`, which must not exist: what is there is
    /// someone else's (fio would unlink it).
    fn bind_unix(&self, path: &Path) -> Result<Socket, EngineError> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(EngineError::BadOption {
                engine: NAME,
                option: "hostname".into(),
                message: format!(
                    "{} exists; a listening job makes its socket and never removes what it did not make: remove it or give another path",
                    path.display()
                ),
            });
        }
        let s = Socket::new(Domain::UNIX, Type::STREAM, None).map_err(|e| EngineError::Os { engine: NAME, call: "socket", source: e })?;
        self.set_up(&s).map_err(|e| EngineError::Os { engine: NAME, call: "setsockopt", source: e })?;
        let addr =
            SockAddr::unix(path).map_err(|e| EngineError::BadOption { engine: NAME, option: "hostname".into(), message: e.to_string() })?;
        s.bind(&addr).map_err(|e| EngineError::BadOption {
            engine: NAME,
            option: "hostname".into(),
            message: format!("cannot make the socket {}: {e}", path.display()),
        })?;
        if let Err(e) = s.listen(BACKLOG) {
            let _ = std::fs::remove_file(path);
            return Err(EngineError::Os { engine: NAME, call: "listen", source: e });
        }
        Ok(s)
    }

    /// Connect worker `n` to the listening end, trying again while it is
    /// not listening yet (its job may be setting up beside this one, or on
    /// another machine) until `idle` has passed.
    fn connect(&self, n: u32, stop: &dyn Fn() -> bool) -> Result<Socket, EngineError> {
        let deadline = Instant::now() + self.idle;
        let (place, attempt): (String, Box<dyn Fn(Duration) -> std::io::Result<Socket>>) = match &self.to {
            Peer::Host(host, port) => {
                let port = worker_port(*port, n)?;
                let addr = self.resolve(host, port)?;
                (addr.to_string(), Box::new(move |left| wait::connect_with(&addr, left, stop, &|s| self.set_up(s)).map(Socket::from)))
            }
            Peer::Unix(path) => {
                let path = worker_path(path, n);
                (path.display().to_string(), Box::new(move |_| self.connect_unix(&path)))
            }
            Peer::Listen(_) => unreachable!("a connecting job has a host"),
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match attempt(left.max(TICK)) {
                Ok(s) => return Ok(s),
                Err(e) if wait::is_stopped(&e) || stop() => {
                    return Err(EngineError::Interrupted { engine: NAME, what: format!("connecting to {place}") })
                }
                // Not listening yet (or, for a unix socket, its backlog full):
                // the other end may still be setting up.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ECONNREFUSED | libc::ENOENT | libc::EAGAIN)) && !left.is_zero() => {
                    std::thread::sleep(TICK.min(left))
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ECONNREFUSED | libc::ENOENT | libc::EAGAIN)) => {
                    return Err(self.unreachable(format!(
                        "connecting to {place}: {e} (for {} s; is the listening end running? idle_timeout= waits longer)",
                        self.idle.as_secs()
                    )))
                }
                Err(e) => return Err(self.unreachable(format!("connecting to {place}: {e}"))),
            }
        }
    }

    fn connect_unix(&self, path: &Path) -> std::io::Result<Socket> {
        let s = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        self.set_up(&s)?;
        // A listener whose backlog is full holds a unix connect until its
        // send timeout: one tick, then the loop looks at the stop and tries again.
        s.set_write_timeout(Some(TICK))?;
        s.connect(&SockAddr::unix(path)?)?;
        Ok(s)
    }

    fn resolve(&self, host: &str, port: u16) -> Result<SocketAddr, EngineError> {
        let v6 = self.proto == Proto::Tcp6;
        (host, port).to_socket_addrs().ok().and_then(|mut all| all.find(|a| a.is_ipv6() == v6)).ok_or_else(|| EngineError::BadOption {
            engine: NAME,
            option: "hostname".into(),
            message: format!("'{host}' has no {} address", if v6 { "IPv6" } else { "IPv4" }),
        })
    }
}

/// fio's port for worker `n` of a job (its subjob_number added).
fn worker_port(port: u16, n: u32) -> Result<u16, EngineError> {
    u16::try_from(u32::from(port) + n).map_err(|_| EngineError::BadOption {
        engine: NAME,
        option: "port".into(),
        message: format!("port {port} + {n} workers is past 65535; give a lower port"),
    })
}

fn worker_path(path: &Path, n: u32) -> PathBuf {
    match n {
        0 => path.to_path_buf(),
        n => PathBuf::from(format!("{}.{n}", path.display())),
    }
}

/// Accept one connection within `limit`, looking at `stop` every tick.
fn accept_within(listener: &Socket, limit: Duration, stop: &dyn Fn() -> bool) -> std::io::Result<Socket> {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = [libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        wait::poll(&mut pfd, Some(left.min(TICK))).map_err(std::io::Error::from_raw_os_error)?;
        if pfd[0].revents != 0 {
            return listener.accept().map(|(s, _)| s);
        }
        if stop() {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, wait::Stopped));
        }
        if left.is_zero() {
            return Err(wait::timed_out(limit));
        }
    }
}

impl EngineConfig for NetConfig {
    fn prepare_target(&self, _target: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        // A stream has no end of its own: the job's size (or runtime) ends it.
        Ok(Some(StoreTarget::new(1 << 50, 1, self.label())))
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let s = match self.listen {
            true => self.accept(setup.worker, setup.stop)?,
            false => self.connect(setup.worker, setup.stop)?,
        };
        let os = |call: &'static str| move |e: std::io::Error| EngineError::Os { engine: NAME, call, source: e };
        s.set_nonblocking(false).map_err(os("fcntl"))?;
        if self.nodelay && self.proto != Proto::Unix {
            s.set_tcp_nodelay(true).map_err(os("setsockopt TCP_NODELAY"))?;
        }
        // A block the other end never sends (or never takes) fails the I/O
        // as a timeout after this long, rather than holding the run.
        s.set_read_timeout(Some(self.idle)).map_err(os("setsockopt SO_RCVTIMEO"))?;
        s.set_write_timeout(Some(self.idle)).map_err(os("setsockopt SO_SNDTIMEO"))?;
        Ok(Box::new(Net { fd: s.into(), pingpong: self.pingpong, buffers: setup.buffers, done: Vec::new(), ended: false }))
    }
}

struct Net {
    fd: OwnedFd,
    pingpong: bool,
    buffers: Buffers,
    done: Vec<Completion>,
    /// The other end closed: every later I/O ends the job.
    ended: bool,
}

/// How a transfer of a whole block ended.
enum Moved {
    All,
    /// The other end closed the stream before the block was through.
    Closed,
}

impl Net {
    /// Send all of `buf`. More follows unless each block waits for its
    /// answer (fio's MSG_MORE); never SIGPIPE: a closed peer is [`Moved::Closed`].
    fn send(&self, buf: &[u8]) -> Result<Moved, i32> {
        let more = if self.pingpong { 0 } else { libc::MSG_MORE };
        let mut sent = 0;
        while sent < buf.len() {
            // SAFETY: a valid socket and the unsent rest of a live buffer.
            let rc = unsafe { libc::send(self.fd.as_raw_fd(), buf[sent..].as_ptr().cast(), buf.len() - sent, libc::MSG_NOSIGNAL | more) };
            match rc {
                rc if rc > 0 => sent += rc as usize,
                _ => match last_errno() {
                    libc::EINTR => {}
                    libc::EPIPE | libc::ECONNRESET => return Ok(Moved::Closed),
                    e => return Err(timeout_as_such(e)),
                },
            }
        }
        Ok(Moved::All)
    }

    /// Fill all of `buf` from the stream.
    fn recv(&self, buf: &mut [u8]) -> Result<Moved, i32> {
        let mut got = 0;
        while got < buf.len() {
            // SAFETY: a valid socket and the unfilled rest of a live buffer.
            let rc = unsafe { libc::recv(self.fd.as_raw_fd(), buf[got..].as_mut_ptr().cast(), buf.len() - got, libc::MSG_WAITALL) };
            match rc {
                0 => return Ok(Moved::Closed),
                rc if rc > 0 => got += rc as usize,
                _ => match last_errno() {
                    libc::EINTR => {}
                    libc::ECONNRESET => return Ok(Moved::Closed),
                    e => return Err(timeout_as_such(e)),
                },
            }
        }
        Ok(Moved::All)
    }

    fn transfer(&self, op: OpKind, buf: &mut [u8]) -> Result<Moved, i32> {
        let (first, answer) = match op {
            OpKind::Write => (self.send(buf)?, self.pingpong),
            OpKind::Read => (self.recv(buf)?, self.pingpong),
            _ => return Err(libc::EOPNOTSUPP),
        };
        match (first, answer, op) {
            (Moved::All, true, OpKind::Write) => self.recv(buf),
            (Moved::All, true, _) => self.send(buf),
            (moved, ..) => Ok(moved),
        }
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// The socket's own timeout (SO_RCVTIMEO, SO_SNDTIMEO) reports EAGAIN: a timeout.
fn timeout_as_such(errno: i32) -> i32 {
    match errno {
        libc::EAGAIN => libc::ETIMEDOUT,
        e => e,
    }
}

impl Engine for Net {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        // SAFETY: the slot is the worker's, `len` bytes long at most, and not in use elsewhere.
        let buf = unsafe { std::slice::from_raw_parts_mut(self.buffers.slot(req.slot), req.len as usize) };
        let c = match self.ended {
            true => Completion::ended(req.slot),
            false => match self.transfer(req.op, buf) {
                Ok(Moved::All) => Completion::from_rc(req.slot, req.len as i64),
                Ok(Moved::Closed) => {
                    self.ended = true;
                    Completion::ended(req.slot)
                }
                Err(errno) => Completion::from_rc(req.slot, -(errno as i64)),
            },
        };
        self.done.push(c);
        Ok(())
    }
    fn submit_and_reap(&mut self, _min: u32, _timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<Arc<dyn EngineConfig>, EngineError> {
        let options: EngineOptions = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        NetFactory.configure(&options)
    }

    fn refusal(pairs: &[(&str, &str)]) -> String {
        config(pairs).err().expect("refused").to_string()
    }

    #[test]
    fn options_that_cannot_work_are_refused_by_name() {
        assert!(refusal(&[("port", "9000")]).contains("give the host to connect to, or listen=1"));
        assert!(refusal(&[("listen", "1")]).contains("give the TCP port"));
        assert!(refusal(&[("listen", "1"), ("port", "9000"), ("hostname", "h")]).contains("every address"));
        assert!(refusal(&[("protocol", "udp"), ("port", "9000"), ("hostname", "h")]).contains("UDP"));
        assert!(refusal(&[("protocol", "unix"), ("port", "9000"), ("hostname", "/tmp/s")]).contains("no port"));
        assert!(refusal(&[("protocol", "unix")]).contains("socket's path"));
        assert!(refusal(&[("port", "70000"), ("hostname", "h")]).contains("1 to 65535"));
        assert!(refusal(&[("port", "9000"), ("hostname", "h"), ("idle_timeout", "0")]).contains("idle_timeout"));
        assert!(worker_port(65535, 1).is_err());
    }
}
