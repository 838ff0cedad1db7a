//! The `tcp` engine: the network between a client and a `storbench agent`,
//! measured as the storage is (`storbench baseline --network`). Each worker
//! holds one connection in one mode: `send` (a write sends its bytes, the
//! agent discards them), `receive` (a read takes bytes the agent streams) or
//! `echo` (a read sends its bytes and waits for them to come back: the
//! round trip). The agent's side is [`serve`], a plain TCP listener beside
//! its gRPC service: no TLS, so the figures are the network's and not the
//! cipher's, but a connection must prove it holds the fleet token (an HMAC
//! of the agent's random challenge), so the agent is not an open traffic
//! source, and the token never crosses the wire. A connection that has not
//! answered the challenge is one of at most [`MAX_HANDSHAKES`] and is closed
//! [`HANDSHAKE`] after it was accepted, however slowly it trickles bytes.

use crate::*;
use ring::hmac;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

const NAME: &str = "tcp";
const MAGIC: &[u8; 8] = b"SBNET001";
/// Port of an agent's network service unless given (the agent's own, plus one).
pub const DEFAULT_PORT: u16 = 7451;
/// A connection idle this long is dropped (both sides).
const IDLE: Duration = Duration::from_secs(15);
/// The longest stream an agent sends in `receive` mode (the client's
/// closing ends it sooner; this only bounds one that never closes).
const LONGEST: Duration = Duration::from_secs(24 * 3600);
/// A connection must answer the challenge within this long.
const HANDSHAKE: Duration = Duration::from_secs(5);
/// Echo mode sends and receives in pieces of at most this many bytes, so a
/// large block cannot fill both sides' socket buffers and stall.
const ECHO_PIECE: usize = 16 << 10;
/// Connections an agent serves at once.
const MAX_CONNECTIONS: usize = 256;
/// Of those, connections that have not answered the challenge yet.
const MAX_HANDSHAKES: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Send = 1,
    Receive = 2,
    Echo = 3,
}

const OPTIONS: &[OptionInfo] = &[
    OptionInfo { name: "hostname", kind: Kind::Text, default: "", help: "the agent to measure the network to (host or address)" },
    OptionInfo { name: "port", kind: Kind::Count, default: "7451", help: "the agent's network service port (its --net-port)" },
    OptionInfo {
        name: "tcp_mode",
        kind: Kind::Choice(&["send", "receive", "echo"]),
        default: "send",
        help: "send: writes go to the agent; receive: reads come from it; echo: each read is a round trip",
    },
    OptionInfo {
        name: "fleet_dir",
        kind: Kind::Text,
        default: "$STORBENCH_FLEET_DIR or ~/.config/storbench/fleet",
        help: "the fleet directory whose token the agent checks",
    },
];

pub struct TcpFactory;

impl EngineFactory for TcpFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "the network to a storbench agent: throughput each way and round trips (storbench baseline --network)"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: false, direct_io: false, needs_files: false, blocks: true, objects: false, ordered: true, does_io: true }
    }
    fn streams(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [OptionInfo] {
        OPTIONS
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, OPTIONS, options)?;
        let bad = |option: &str, message: String| EngineError::BadOption { engine: NAME, option: option.into(), message };
        let host = options.get("hostname").filter(|h| !h.is_empty()).ok_or_else(|| bad("hostname", "give the agent's address".into()))?;
        let port = match options.get("port") {
            None => DEFAULT_PORT,
            Some(p) => p.parse::<u16>().map_err(|_| bad("port", format!("'{p}' is not a port number")))?,
        };
        let mode = match options.get("tcp_mode").map(String::as_str) {
            None | Some("send") => Mode::Send,
            Some("receive") => Mode::Receive,
            Some("echo") => Mode::Echo,
            Some(m) => return Err(bad("tcp_mode", format!("'{m}': give send, receive or echo"))),
        };
        let dir = options.get("fleet_dir").map(PathBuf::from).unwrap_or_else(default_fleet_dir);
        let token = storbench_workload::input::read_text(&dir.join("token"), "token file", storbench_workload::input::CREDENTIALS_LIMIT)
            .map_err(|e| {
                bad("fleet_dir", format!("cannot read {}: {e} (make one with storbench agent --init)", dir.join("token").display()))
            })?
            .trim()
            .to_string();
        let addr = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| bad("hostname", format!("'{host}' does not resolve")))?;
        Ok(Arc::new(TcpConfig { addr, label: format!("tcp:{host}:{port}"), mode, token }))
    }
}

/// The fleet directory when none is given: `$STORBENCH_FLEET_DIR`, else
/// `~/.config/storbench/fleet` (the agent's too: `fleet::creds::default_dir`).
pub fn default_fleet_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("STORBENCH_FLEET_DIR") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".config/storbench/fleet")
}

struct TcpConfig {
    addr: SocketAddr,
    label: String,
    mode: Mode,
    token: String,
}

impl TcpConfig {
    fn connect(&self, duration: Duration) -> Result<TcpStream, EngineError> {
        let unreachable = |what: String, e: std::io::Error| EngineError::Unreachable {
            engine: NAME,
            message: format!("{}: {what}: {}", self.addr, std::io::Error::from_raw_os_error(errno_of(&e))),
            source: None,
        };
        let mut s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).map_err(|e| unreachable("connect".into(), e))?;
        s.set_read_timeout(Some(IDLE)).and_then(|_| s.set_write_timeout(Some(IDLE))).map_err(|e| unreachable("socket".into(), e))?;
        let _ = s.set_nodelay(self.mode == Mode::Echo);
        let mut hello = [0u8; 40];
        s.read_exact(&mut hello).map_err(|e| unreachable("no greeting (is it a storbench agent's --net-port?)".into(), e))?;
        if &hello[..8] != MAGIC {
            return Err(EngineError::Rejected {
                engine: NAME,
                message: format!("{} is not a storbench agent's network service", self.addr),
                kind: ErrorKind::Other,
            });
        }
        let key = hmac::Key::new(hmac::HMAC_SHA256, self.token.as_bytes());
        let mut ask = Vec::with_capacity(48);
        ask.extend_from_slice(hmac::sign(&key, &hello[8..]).as_ref());
        ask.push(self.mode as u8);
        ask.extend_from_slice(&[0; 7]);
        ask.extend_from_slice(&(duration.as_millis() as u64).to_le_bytes());
        s.write_all(&ask).map_err(|e| unreachable("handshake".into(), e))?;
        let mut answer = [0u8; 1];
        match s.read_exact(&mut answer) {
            Ok(()) if answer[0] == 0 => Ok(s),
            _ => Err(EngineError::Rejected {
                engine: NAME,
                message: format!("the agent at {} refused the fleet token (give the fleet directory it was started with)", self.addr),
                kind: ErrorKind::Permission,
            }),
        }
    }
}

impl EngineConfig for TcpConfig {
    fn prepare_target(&self, _target: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        // Reach the agent once before the run: a wrong address or token fails here, by name.
        let s = self.connect(Duration::ZERO)?;
        let _ = s.shutdown(Shutdown::Both);
        Ok(Some(StoreTarget::new(1 << 50, 1, self.label.clone())))
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let stream = self.connect(LONGEST)?;
        Ok(Box::new(Tcp { stream, mode: self.mode, buffers: setup.buffers, done: Vec::new() }))
    }
}

struct Tcp {
    stream: TcpStream,
    mode: Mode,
    buffers: Buffers,
    done: Vec<Completion>,
}

impl Engine for Tcp {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        // SAFETY: the slot is the worker's, `len` bytes long at most, and not in use elsewhere.
        let buf = unsafe { std::slice::from_raw_parts_mut(self.buffers.slot(req.slot), req.len as usize) };
        let result = match (self.mode, req.op) {
            (Mode::Send, OpKind::Write) => self.stream.write_all(buf),
            (Mode::Receive, OpKind::Read) => self.stream.read_exact(buf),
            (Mode::Echo, OpKind::Read) => buf.chunks_mut(ECHO_PIECE).try_for_each(|piece| {
                self.stream.write_all(piece)?;
                self.stream.read_exact(piece)
            }),
            _ => Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
        };
        let rc = match result {
            Ok(()) => req.len as i64,
            Err(e) => -(errno_of(&e) as i64),
        };
        self.done.push(Completion::from_rc(req.slot, rc));
        Ok(())
    }
    fn submit_and_reap(&mut self, _min: u32, _timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}

/// An I/O error's errno; a socket timeout (which the kernel reports as
/// EAGAIN) is a timeout, ETIMEDOUT.
fn errno_of(e: &std::io::Error) -> i32 {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => libc::ETIMEDOUT,
        _ => e.raw_os_error().unwrap_or(libc::EIO),
    }
}

/// An agent's network service: serve connections on `listener` until `stop`,
/// each in a thread of its own, for holders of `token`. `log` hears refusals.
pub fn serve(listener: TcpListener, token: String, stop: Arc<AtomicBool>, log: fn(&str)) {
    let active = Arc::new(AtomicUsize::new(0));
    let handshakes = Arc::new(AtomicUsize::new(0));
    let _ = listener.set_nonblocking(true);
    while !stop.load(Ordering::Relaxed) {
        let (conn, peer) = match listener.accept() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(_) => continue,
        };
        if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS || handshakes.load(Ordering::Relaxed) >= MAX_HANDSHAKES {
            continue;
        }
        active.fetch_add(1, Ordering::Relaxed);
        handshakes.fetch_add(1, Ordering::Relaxed);
        let (token, mine, shaking) = (token.clone(), active.clone(), handshakes.clone());
        let spawned = std::thread::Builder::new().name("sb-net".into()).spawn(move || {
            if let Err(why) = serve_one(conn, &token, &shaking) {
                log(&format!("network test from {peer}: {why}"));
            }
            mine.fetch_sub(1, Ordering::Relaxed);
        });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::Relaxed);
            handshakes.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// One connection: challenge, check, then sink, source or echo. It counts
/// in `handshakes` until it has answered the challenge (or failed to).
fn serve_one(mut s: TcpStream, token: &str, handshakes: &AtomicUsize) -> Result<(), String> {
    let asked = challenge(&mut s);
    handshakes.fetch_sub(1, Ordering::Relaxed);
    let (nonce, ask) = asked?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, token.as_bytes());
    if hmac::verify(&key, &nonce, &ask[..32]).is_err() {
        let _ = s.write_all(&[1]);
        return Err("refused: not the fleet token".into());
    }
    s.write_all(&[0]).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(IDLE)).and_then(|_| s.set_write_timeout(Some(IDLE))).map_err(|e| e.to_string())?;
    let duration = Duration::from_millis(u64::from_le_bytes(ask[40..48].try_into().expect("8 bytes"))).min(LONGEST);
    let mut buf = vec![0u8; 1 << 20];
    match ask[32] {
        1 => while matches!(s.read(&mut buf), Ok(n) if n > 0) {},
        2 => {
            let end = Instant::now() + duration;
            while Instant::now() < end && s.write_all(&buf).is_ok() {}
        }
        3 => {
            let _ = s.set_nodelay(true);
            while let Ok(n) = s.read(&mut buf[..64 << 10]) {
                if n == 0 || s.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
        m => return Err(format!("unknown mode {m}")),
    }
    let _ = s.shutdown(Shutdown::Both);
    Ok(())
}

/// Send the challenge and read the answer, all within [`HANDSHAKE`] of now
/// (each read waits only what is left, so trickled bytes do not extend it).
fn challenge(s: &mut TcpStream) -> Result<([u8; 32], [u8; 48]), String> {
    let deadline = Instant::now() + HANDSHAKE;
    let _ = s.set_nonblocking(false);
    s.set_read_timeout(Some(HANDSHAKE)).and_then(|_| s.set_write_timeout(Some(HANDSHAKE))).map_err(|e| e.to_string())?;
    let mut nonce = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce).map_err(|_| "no random numbers".to_string())?;
    s.write_all(&[&MAGIC[..], &nonce[..]].concat()).map_err(|e| e.to_string())?;
    let mut ask = [0u8; 48];
    let mut got = 0;
    while got < ask.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no answer to the challenge within {} s (timed out)", HANDSHAKE.as_secs()));
        }
        s.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        match s.read(&mut ask[got..]) {
            Ok(0) => return Err("the connection closed before answering the challenge".into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("no answer to the challenge: {}", std::io::Error::from_raw_os_error(errno_of(&e)))),
        }
    }
    Ok((nonce, ask))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(token: &str) -> (SocketAddr, Arc<AtomicBool>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (token.to_string(), stop.clone());
        std::thread::spawn(move || serve(l, t, s, |_| {}));
        (addr, stop)
    }

    fn config(addr: SocketAddr, mode: Mode, token: &str) -> TcpConfig {
        TcpConfig { addr, label: "t".into(), mode, token: token.into() }
    }

    #[test]
    fn each_mode_moves_its_bytes_and_a_wrong_token_is_refused() {
        let (addr, stop) = agent("secret");
        for mode in [Mode::Send, Mode::Receive, Mode::Echo] {
            let mut s = config(addr, mode, "secret").connect(Duration::from_secs(2)).unwrap();
            let mut buf = vec![7u8; 100_000];
            match mode {
                Mode::Send => s.write_all(&buf).unwrap(),
                Mode::Receive => s.read_exact(&mut buf).unwrap(),
                Mode::Echo => {
                    s.write_all(&buf[..64]).unwrap();
                    let mut back = [0u8; 64];
                    s.read_exact(&mut back).unwrap();
                    assert_eq!(back, [7u8; 64]);
                }
            }
        }
        let e = config(addr, Mode::Send, "guess").connect(Duration::ZERO).err().unwrap();
        assert!(e.to_string().contains("refused the fleet token") && !e.to_string().contains("guess"), "{e}");
        stop.store(true, Ordering::Relaxed);
    }
}
