//! The `nbd` engine: an export of an NBD (Network Block Device) server, as
//! a block device to the workload model, through storbench's own
//! asynchronous client (no libnbd, no kernel nbd device). Each worker opens
//! `connections` connections (several only when the server offers
//! multi-conn) and spreads its operations over them round-robin; requests
//! carry the slot as their cookie, so the queue depth is real and replies
//! may come back in any order. Reads land in, and writes are sent from,
//! the worker's slot buffers without a copy.
//!
//! The URI is fio's: `nbd://HOST[:PORT][/EXPORT]` or
//! `nbd+unix:///[EXPORT]?socket=PATH`. No TLS.
//!
//! Safety as for block devices: a writing job is refused an export that
//! holds data (unless allow_overwrite) and any read-only export. Whether it
//! holds data comes from the server's base:allocation block status when it
//! offers it, else from reading samples of the export.
//!
//! Every wait is bounded (`wait.rs`): connecting and the handshake by
//! [`HANDSHAKE`], each check before the run by [`PROBE`], each request of
//! the run by `op_timeout` (the connection is then given up, its requests
//! failing with ETIMEDOUT), and all of them end within a tick of a Ctrl-C.
//! What is in flight when a run ends can be abandoned (the sockets are shut).

mod conn;
pub mod proto;
pub mod uri;

use crate::wait::{self, poll, Guarded, TICK};
use crate::*;
use conn::Conn;
use proto::{HandshakeError, Negotiated, Wants};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;
use uri::{Addr, NbdUri};

const NAME: &str = "nbd";
/// Connecting and the handshake must be done within this long.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// A request of the checks before a run must be answered within this long.
const PROBE: Duration = Duration::from_secs(30);
/// A request of the run unanswered this long gives up its connection, unless set.
const OP_TIMEOUT: f64 = 30.0;
/// The most connections per worker.
const MAX_CONNECTIONS: u32 = 64;
/// Block status is asked in pieces of at most this many bytes (a request's
/// length is 32 bits).
const STATUS_PIECE: u64 = 1 << 30;
/// Without block status: the first and last MiB, and this many pieces of
/// SAMPLE bytes spread evenly over the export, are read.
const EDGE: u64 = 1 << 20;
const SAMPLES: u64 = 64;
const SAMPLE: u64 = 64 << 10;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "uri",
        kind: Kind::Text,
        default: "",
        help: "the export: nbd://HOST[:PORT][/EXPORT] (port 10809) or nbd+unix:///[EXPORT]?socket=PATH",
    },
    OptionInfo {
        name: "connections",
        kind: Kind::Count,
        default: "1",
        help: "connections per worker, operations spread round-robin (more than 1 needs a server that offers multi-conn)",
    },
    OptionInfo {
        name: "structured_replies",
        kind: Kind::Flag,
        default: "1",
        help: "negotiate structured replies when the server offers them (0: simple replies only)",
    },
    OptionInfo {
        name: "op_timeout",
        kind: Kind::Duration,
        default: "30",
        help: "seconds a request may go unanswered; then its connection is given up and its requests fail with ETIMEDOUT",
    },
];

pub struct NbdFactory;

impl EngineFactory for NbdFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: NAME, note: None }]
    }
    fn description(&self) -> &'static str {
        "an NBD server's export (nbd:// or nbd+unix:// URI), asynchronous, several connections with multi-conn"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: false, does_io: true, blocks: true, objects: false, ordered: false }
    }
    fn options(&self) -> &'static [OptionInfo] {
        OPTIONS
    }
    fn supports(&self, op: OpKind) -> bool {
        matches!(op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, OPTIONS, options)?;
        let bad = |option: &str, message: String| EngineError::BadOption { engine: NAME, option: option.into(), message };
        let text = options.get("uri").filter(|u| !u.is_empty()).ok_or_else(|| bad("uri", format!("give the export: {}", uri::FORMS)))?;
        let uri = uri::parse(text).map_err(|m| bad("uri", m))?;
        let connections = match options.get("connections") {
            None => 1,
            Some(c) => c
                .parse::<u32>()
                .ok()
                .filter(|c| (1..=MAX_CONNECTIONS).contains(c))
                .ok_or_else(|| bad("connections", format!("'{c}' is not a count from 1 to {MAX_CONNECTIONS}")))?,
        };
        let structured = bool_option(NAME, options, "structured_replies", true)?;
        let op_timeout = match options.get("op_timeout") {
            None => Duration::from_secs_f64(OP_TIMEOUT),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0 && s.is_finite() && *s <= 86_400.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| bad("op_timeout", format!("'{v}' is not a number of seconds above 0 (at most a day)")))?,
        };
        Ok(Arc::new(NbdConfig { label: format!("nbd:{}", uri.display()), uri, connections, structured, op_timeout }))
    }
}

struct NbdConfig {
    uri: NbdUri,
    label: String,
    connections: u32,
    structured: bool,
    op_timeout: Duration,
}

/// The socket during the handshake (blocking, with timeouts).
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Stream {
    /// Reads and writes wait at most this long each (see [`Guarded`]).
    fn set_timeouts(&self, t: Duration) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(Some(t)).and_then(|_| s.set_write_timeout(Some(t))),
            Stream::Unix(s) => s.set_read_timeout(Some(t)).and_then(|_| s.set_write_timeout(Some(t))),
        }
    }

    /// Ready for transmission: non-blocking, no timeouts, as a plain descriptor.
    fn into_fd(self) -> std::io::Result<OwnedFd> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(true).map(|_| s.into()),
            Stream::Unix(s) => s.set_nonblocking(true).map(|_| s.into()),
        }
    }
}

impl NbdConfig {
    fn unreachable(&self, what: impl std::fmt::Display) -> EngineError {
        EngineError::Unreachable { engine: NAME, message: format!("{}: {what}", self.uri.display()), source: None }
    }

    fn open_stream(&self, stop: &dyn Fn() -> bool) -> Result<Stream, EngineError> {
        let stream = match &self.uri.addr {
            Addr::Tcp { host, port } => {
                let addrs =
                    (host.as_str(), *port).to_socket_addrs().map_err(|e| self.unreachable(format!("'{host}' does not resolve: {e}")))?;
                let mut last = None;
                let mut conn = None;
                for a in addrs {
                    match wait::connect(&a, HANDSHAKE, stop) {
                        Ok(s) => {
                            conn = Some(s);
                            break;
                        }
                        Err(e) if wait::is_stopped(&e) => return Err(self.interrupted("connecting")),
                        Err(e) => last = Some(e),
                    }
                }
                let s = conn
                    .ok_or_else(|| self.unreachable(format!("cannot connect: {}", last.map_or("no address".into(), |e| e.to_string()))))?;
                // Requests are small and latency is what is measured: no Nagle delay.
                let _ = s.set_nodelay(true);
                Stream::Tcp(s)
            }
            Addr::Unix(path) => Stream::Unix(UnixStream::connect(path).map_err(|e| self.unreachable(format!("cannot connect: {e}")))?),
        };
        stream.set_timeouts(TICK).map_err(|e| self.unreachable(format!("socket: {e}")))?;
        Ok(stream)
    }

    fn interrupted(&self, what: &str) -> EngineError {
        EngineError::Interrupted { engine: NAME, what: format!("{what} to {}", self.uri.display()) }
    }

    /// A connection in the transmission phase, and what was negotiated.
    fn connect(&self, allocation: bool, stop: &dyn Fn() -> bool) -> Result<(OwnedFd, Negotiated), EngineError> {
        let mut s = Guarded::new(self.open_stream(stop)?, HANDSHAKE, stop);
        let want = Wants { export: &self.uri.export, structured: self.structured, allocation };
        let n = proto::handshake(&mut s, &want).map_err(|e| self.handshake_error(e))?;
        let s = s.inner;
        if self.connections > 1 && n.flags & proto::FLAG_CAN_MULTI_CONN == 0 {
            return Err(EngineError::BadOption {
                engine: NAME,
                option: "connections".into(),
                message: format!(
                    "the server at {} does not offer multi-conn (NBD_FLAG_CAN_MULTI_CONN), so writes on one connection \
                     need not be seen by another; use connections=1 (and numjobs for more clients)",
                    self.uri.display()
                ),
            });
        }
        let fd = s.into_fd().map_err(|e| self.unreachable(format!("socket: {e}")))?;
        Ok((fd, n))
    }

    fn handshake_error(&self, e: HandshakeError) -> EngineError {
        let at = self.uri.display();
        match e {
            HandshakeError::Io(_, ref io) if wait::is_stopped(io) => self.interrupted("the NBD handshake"),
            HandshakeError::Io(..) => self.unreachable(format!("handshake: {e}")),
            HandshakeError::TlsRequired => EngineError::Unavailable {
                engine: NAME,
                message: format!("{at}: the server requires TLS (NBD_REP_ERR_TLS_REQD), which the nbd engine does not support; serve the export without TLS"),
            },
            HandshakeError::UnknownExport { message, exports } => {
                let listed = match exports {
                    Some(e) if e.is_empty() => "; the server lists no exports".to_string(),
                    Some(e) => format!("; the server has: {}", e.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")),
                    None => String::new(),
                };
                EngineError::Rejected {
                    engine: NAME,
                    message: format!("{at}: no export named '{}' ({message}){listed}", self.uri.export),
                    kind: ErrorKind::NotFound,
                }
            }
            HandshakeError::Refused(m) => {
                EngineError::Rejected { engine: NAME, message: format!("{at}: export '{}': {m}", self.uri.export), kind: ErrorKind::Permission }
            }
            HandshakeError::Protocol(m) => {
                EngineError::Rejected { engine: NAME, message: format!("{at}: the server broke the NBD protocol: {m}"), kind: ErrorKind::Other }
            }
        }
    }

    fn refused(&self, message: String) -> EngineError {
        EngineError::Refused { engine: NAME, message }
    }

    /// The job's transfers against the export's block sizes (NBD_INFO_BLOCK_SIZE:
    /// minimum, preferred, maximum payload): a server may fail every request
    /// outside them (nbdkit's blocksize-policy does, EINVAL each), so a run
    /// would measure only errors. Said before anything is done.
    fn check_transfers(&self, (min, _, max): (u32, u32, u32), t: &Transfers) -> Result<(), EngineError> {
        let (min, max) = (min.max(1) as u64, max as u64);
        let at = self.uri.display();
        let bad = |message: String| EngineError::Rejected { engine: NAME, message: format!("{at}: {message}"), kind: ErrorKind::Other };
        let info = match max {
            0 => format!("NBD_INFO_BLOCK_SIZE: at least {min} bytes, no maximum"),
            _ => format!("NBD_INFO_BLOCK_SIZE: {min}..{max} bytes"),
        };
        let minimum = format!("the export's minimum block size {min} ({info})");
        // A replay's sizes are its trace's, not a bs the user gave.
        let subject = |size: u64| match t.replay {
            true => format!("the trace has a block size of {size} bytes,"),
            false => format!("a block size of {size} bytes is"),
        };
        let fix = |bs: String| if t.replay { "replay it onto an export that takes them".to_string() } else { bs };
        let read = t.sizes.read.0.iter().filter(|_| t.reads);
        let written = t.sizes.write.0.iter().filter(|_| t.writes);
        for size in read.chain(written).map(|e| e.0) {
            if size % min != 0 {
                return Err(bad(format!("{} not a multiple of {minimum}; {}", subject(size), fix("use a bs that is".into()))));
            }
            if max > 0 && size > max {
                let fix = fix(format!("use a bs of at most {max}"));
                return Err(bad(format!("{} above the export's largest request of {max} bytes ({info}); {fix}", subject(size))));
            }
        }
        if let Some(piece) = t.read_back.filter(|p| max > 0 && *p > max) {
            return Err(bad(format!(
                "verify reads the job's writes back in pieces of {piece} bytes, above the export's largest request of {max} bytes ({info}); \
                 verify on an export that takes them, or without verify"
            )));
        }
        for (name, value) in
            [("offset", t.offset), ("offset_increment", t.offset_increment), ("the sequential skip (rw=...:N)", t.seq_skip.unsigned_abs())]
        {
            if value % min != 0 {
                return Err(bad(format!("{name} {value} is not a multiple of {minimum}; align it")));
            }
        }
        Ok(())
    }
}

impl EngineConfig for NbdConfig {
    fn prepare_target(&self, t: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        let checks = t.writes && !t.allow_overwrite;
        let (fd, n) = self.connect(checks, t.stop)?;
        let at = self.uri.display();
        if t.writes && n.flags & proto::FLAG_READ_ONLY != 0 {
            return Err(
                self.refused(format!("the export {at} is read-only (the server says NBD_FLAG_READ_ONLY); run a job that only reads"))
            );
        }
        if let Some(need) = t.size.filter(|need| *need > n.size) {
            return Err(EngineError::Rejected {
                engine: NAME,
                message: format!(
                    "the job needs {need} bytes (offset + size) but the export {at} holds {} bytes; give a smaller size",
                    n.size
                ),
                kind: ErrorKind::NoSpace,
            });
        }
        if let (Some(limits), Some(transfers)) = (n.block_size, t.transfers) {
            self.check_transfers(limits, &transfers)?;
        }
        let mut probe = Probe::new(self, fd, &n, t.stop);
        if checks {
            if let Some(found) = probe.first_data(&n)? {
                let what = match found {
                    Found::NonZero(offset) => format!("a non-zero byte at offset {offset}"),
                    Found::Allocated(offset) => format!("data at offset {offset}, by the server's block status"),
                };
                return Err(self.refused(format!(
                    "the export {at} holds data ({what}); the job would overwrite it. \
                     Use an empty export, or pass --allow_overwrite=1"
                )));
            }
        }
        probe.conn.disconnect();
        drop(probe);
        Ok(Some(StoreTarget::new(n.size, 1, self.label.clone())))
    }

    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let slots = setup.buffers.slots.max(setup.queue_depth as usize);
        let mut conns = Vec::new();
        let mut flags = 0;
        for _ in 0..self.connections {
            let (fd, n) = self.connect(false, setup.stop)?;
            flags = n.flags;
            conns.push(Conn::new(fd, n.structured, setup.buffers, slots));
        }
        Ok(Box::new(Nbd {
            label: self.uri.display(),
            conns,
            next: 0,
            flags,
            ready: Vec::new(),
            polls: Vec::new(),
            op_timeout: self.op_timeout,
            next_check: Instant::now(),
        }))
    }
}

/// Where an export was found to hold data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// A byte read back non-zero.
    NonZero(u64),
    /// An extent block status calls allocated, whose first MiB reads as zeros.
    Allocated(u64),
}

/// One request at a time on a connection of its own, waiting for each
/// answer: the checks before a run.
struct Probe<'a> {
    config: &'a NbdConfig,
    stop: &'a dyn Fn() -> bool,
    conn: Conn,
    size: u64,
    /// Largest read (the server's maximum payload, if it gave one).
    piece: u64,
    /// The buffer the single slot points at; it outlives `conn`'s use of it.
    buf: Vec<u8>,
}

impl<'a> Probe<'a> {
    fn new(config: &'a NbdConfig, fd: OwnedFd, n: &Negotiated, stop: &'a dyn Fn() -> bool) -> Probe<'a> {
        let mut buf = vec![0u8; EDGE as usize];
        let buffers = Buffers { base: buf.as_mut_ptr(), slot_len: buf.len(), slots: 1 };
        let mut conn = Conn::new(fd, n.structured, buffers, 1);
        conn.allocation = n.allocation;
        let piece = n.block_size.map_or(EDGE, |b| (b.2 as u64).clamp(4096, EDGE));
        Probe { config, stop, conn, size: n.size, piece, buf }
    }

    /// Send one request and wait for its answer.
    fn call(&mut self, cmd: u16, offset: u64, len: u32) -> Result<Result<u64, IoFailure>, EngineError> {
        let mut out = Vec::new();
        let malformed = |m: String| EngineError::Rejected {
            engine: NAME,
            message: format!("{}: the server broke the NBD protocol: {m}", self.config.uri.display()),
            kind: ErrorKind::Other,
        };
        self.conn.queue(cmd, 0, offset, len, &mut out).map_err(malformed)?;
        let deadline = Instant::now() + PROBE;
        loop {
            self.conn.send(&mut out);
            self.conn.receive(&mut out).map_err(malformed)?;
            if let Some(c) = out.pop() {
                return Ok(c.result);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.config.unreachable(format!("checking the export: no answer within {} s (timed out)", PROBE.as_secs())));
            }
            if (self.stop)() {
                return Err(self.config.interrupted("checking the export"));
            }
            let events = libc::POLLIN | if self.conn.wants_to_send() { libc::POLLOUT } else { 0 };
            let mut pfd = [libc::pollfd { fd: self.conn.fd(), events, revents: 0 }];
            poll(&mut pfd, Some(left.min(TICK))).map_err(|e| EngineError::os(NAME, "ppoll", e))?;
        }
    }

    /// The offset of the first byte known to hold data, if any.
    fn first_data(&mut self, n: &Negotiated) -> Result<Option<Found>, EngineError> {
        if n.allocation.is_some() {
            if let Some(answer) = self.by_block_status()? {
                return Ok(answer);
            }
        }
        self.by_sampling()
    }

    /// From base:allocation: None if block status failed (sample instead).
    fn by_block_status(&mut self) -> Result<Option<Option<Found>>, EngineError> {
        let mut offset = 0;
        while offset < self.size {
            let len = (self.size - offset).min(STATUS_PIECE) as u32;
            self.conn.extents.clear();
            if self.call(proto::CMD_BLOCK_STATUS, offset, len)?.is_err() || self.conn.extents.is_empty() {
                return Ok(None);
            }
            let extents = std::mem::take(&mut self.conn.extents);
            for (elen, flags) in extents {
                if flags & (proto::STATE_ZERO | proto::STATE_HOLE) == 0 {
                    // Allocated: name the first non-zero byte if it is near, else the extent.
                    let look = (elen as u64).min(self.size - offset);
                    let found = self.first_nonzero(offset, look)?.map_or(Found::Allocated(offset), Found::NonZero);
                    return Ok(Some(Some(found)));
                }
                offset += elen as u64;
                if offset >= self.size {
                    break;
                }
            }
        }
        Ok(Some(None))
    }

    /// From reading the first and last MiB and pieces spread evenly.
    fn by_sampling(&mut self) -> Result<Option<Found>, EngineError> {
        let size = self.size;
        let mut ranges = vec![(0, EDGE.min(size)), (size.saturating_sub(EDGE), EDGE.min(size))];
        ranges.extend((0..SAMPLES).map(|i| (i * (size / SAMPLES), SAMPLE.min(size - i * (size / SAMPLES)))));
        for (offset, len) in ranges {
            if let Some(at) = self.first_nonzero(offset, len)? {
                return Ok(Some(Found::NonZero(at)));
            }
        }
        Ok(None)
    }

    /// The first non-zero byte in `len` bytes at `offset` (up to one MiB looked at).
    fn first_nonzero(&mut self, offset: u64, len: u64) -> Result<Option<u64>, EngineError> {
        let end = offset + len.min(EDGE);
        let mut at = offset;
        while at < end {
            let n = (end - at).min(self.piece);
            match self.call(proto::CMD_READ, at, n as u32)? {
                Ok(_) => {}
                Err(f) => return Err(self.config.unreachable(format!("reading {n} bytes at offset {at} to check for data: {f}"))),
            }
            if let Some(i) = self.buf[..n as usize].iter().position(|b| *b != 0) {
                return Ok(Some(at + i as u64));
            }
            at += n;
        }
        Ok(None)
    }
}

/// A worker's engine: its connections and what completed without the server.
struct Nbd {
    label: String,
    conns: Vec<Conn>,
    next: usize,
    /// Transmission flags (the same export on every connection).
    flags: u16,
    /// Completions decided here (no flush to send, no trim offered, a dead connection).
    ready: Vec<Completion>,
    polls: Vec<libc::pollfd>,
    /// A request unanswered this long gives up its connection.
    op_timeout: Duration,
    /// When to look for requests past `op_timeout` next (once a tick).
    next_check: Instant,
}

impl Nbd {
    /// The next connection round-robin, passing over broken ones while any works.
    fn pick(&mut self) -> usize {
        let n = self.conns.len();
        let start = self.next;
        let mut i = start;
        loop {
            let c = i;
            i = (i + 1) % n;
            if !self.conns[c].is_dead() || i == start {
                self.next = i;
                return c;
            }
        }
    }

    /// A reply broke the protocol: that connection is abandoned and the
    /// run learns why.
    fn malformed(&mut self, c: usize, why: String, out: &mut Vec<Completion>) -> EngineError {
        self.conns[c].abandon(out);
        EngineError::Rejected {
            engine: NAME,
            message: format!("{}: the server broke the NBD protocol: {why}; the connection was closed", self.label),
            kind: ErrorKind::Io,
        }
    }

    /// Send and receive on every connection; completions pushed.
    fn pump(&mut self, out: &mut Vec<Completion>) -> Result<usize, EngineError> {
        let mut got = 0;
        for c in 0..self.conns.len() {
            got += self.conns[c].send(out);
            match self.conns[c].receive(out) {
                Ok(n) => got += n,
                Err(why) => return Err(self.malformed(c, why, out)),
            }
        }
        Ok(got)
    }

    /// Wait until a connection with work can make progress (a tick at
    /// most, so requests past `op_timeout` are found).
    fn wait_any(&mut self, timeout: Option<Duration>) -> Result<(), EngineError> {
        self.polls.clear();
        for c in self.conns.iter().filter(|c| !c.is_dead() && (c.in_flight() > 0 || c.wants_to_send())) {
            let events = libc::POLLIN | if c.wants_to_send() { libc::POLLOUT } else { 0 };
            self.polls.push(libc::pollfd { fd: c.fd(), events, revents: 0 });
        }
        poll(&mut self.polls, Some(timeout.map_or(TICK, |t| t.min(TICK)))).map_err(|e| EngineError::os(NAME, "ppoll", e))
    }

    /// Connections with a request unanswered for `op_timeout` are given up:
    /// a reply may still come for a cookie that is then reused, so the
    /// connection cannot be trusted again. Their requests fail with ETIMEDOUT.
    fn expire(&mut self, out: &mut Vec<Completion>) -> usize {
        let now = Instant::now();
        if now < self.next_check {
            return 0;
        }
        self.next_check = now + TICK;
        let limit = self.op_timeout;
        self.conns.iter_mut().filter(|c| c.oldest().is_some_and(|t| now.duration_since(t) >= limit)).map(|c| c.time_out(out)).sum()
    }

    /// Why no connection is left, in words.
    fn all_dead(&self, errno: i32) -> String {
        match errno {
            libc::ETIMEDOUT => format!(
                "{}: a request got no answer within {} s (op_timeout, timed out), so its connection was given up",
                self.label,
                self.op_timeout.as_secs_f64()
            ),
            e => format!("{}: the server closed the connection ({})", self.label, std::io::Error::from_raw_os_error(e)),
        }
    }
}

impl Engine for Nbd {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let (cmd, offset, len) = match req.op {
            OpKind::Read => (proto::CMD_READ, req.offset, req.len),
            OpKind::Write => (proto::CMD_WRITE, req.offset, req.len),
            // No flush offered: the server keeps nothing to flush, or will not say.
            OpKind::Sync if self.flags & proto::FLAG_SEND_FLUSH == 0 => {
                self.ready.push(Completion::new(req.slot, Ok(0)));
                return Ok(());
            }
            OpKind::Sync => (proto::CMD_FLUSH, 0, 0),
            OpKind::Trim if self.flags & proto::FLAG_SEND_TRIM == 0 => {
                self.ready.push(Completion::new(req.slot, Err(IoFailure::errno(libc::ENOTSUP))));
                return Ok(());
            }
            OpKind::Trim => (proto::CMD_TRIM, req.offset, req.len),
            op => return Err(crate::unsupported_op(NAME, op)),
        };
        // Every connection broke: failing each further request at once would
        // only spin until the run's end, so the worker ends here, saying why.
        if let Some(errno) = self.conns.iter().map(Conn::dead).collect::<Option<Vec<i32>>>().and_then(|e| e.first().copied()) {
            return Err(EngineError::Unreachable { engine: NAME, message: self.all_dead(errno), source: None });
        }
        let c = self.pick();
        let mut ready = std::mem::take(&mut self.ready);
        let r = self.conns[c].queue(cmd, req.slot, offset, len, &mut ready);
        self.ready = ready;
        r.map_err(|m| EngineError::failed(NAME, "queueing a request", m))
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = self.ready.len();
        out.append(&mut self.ready);
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            got += self.pump(out)?;
            got += self.expire(out);
            if got >= min as usize {
                return Ok(());
            }
            // Nothing in flight anywhere: nothing can arrive, so waiting would hang.
            if self.conns.iter().all(|c| c.in_flight() == 0) {
                return Ok(());
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO) {
                return Ok(());
            }
            self.wait_any(left)?;
        }
    }

    fn abandon(&mut self) -> bool {
        for c in &mut self.conns {
            c.forget();
        }
        self.ready.clear();
        true
    }
}

impl Drop for Nbd {
    fn drop(&mut self) {
        for c in &mut self.conns {
            c.disconnect();
        }
    }
}

#[cfg(test)]
mod tests;
