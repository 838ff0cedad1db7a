//! Waiting for a peer over the network (an NBD server, the other end of a
//! `net` job), bounded: every wait ends at its deadline (an error saying
//! how long it waited: a timeout, never EAGAIN) or within [`TICK`] of a
//! stop request (a Ctrl-C), whatever the peer does. A server that accepts
//! connections and then says nothing (frozen, stopped with SIGSTOP) holds
//! up neither the checks before a run nor a Ctrl-C.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How often a wait looks at the stop request.
pub const TICK: Duration = Duration::from_millis(50);

/// Inside an `io::Error`: the wait ended because the run was stopped.
#[derive(Debug)]
pub struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}

fn stopped() -> std::io::Error {
    std::io::Error::other(Stopped)
}

/// Whether an error is a wait that a stop request ended.
pub fn is_stopped(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<Stopped>())
}

/// A wait that reached its limit, said as such.
pub fn timed_out(limit: Duration) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no answer within {} s (timed out)", limit.as_secs_f64()))
}

/// Wait for the descriptors' events (None: no limit); EINTR is a wake-up.
pub fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> Result<(), i32> {
    let ts = timeout.map(|t| libc::timespec { tv_sec: t.as_secs() as libc::time_t, tv_nsec: t.subsec_nanos() as libc::c_long });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: valid pollfds and their count; a timespec or NULL (no limit).
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, tsp, std::ptr::null()) };
    match rc {
        rc if rc >= 0 => Ok(()),
        _ => match std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) {
            libc::EINTR => Ok(()),
            e => Err(e),
        },
    }
}

/// Connect within `limit`, looking at `stop` every tick (std's
/// `connect_timeout` cannot be interrupted): a blocking stream.
pub fn connect(addr: &SocketAddr, limit: Duration, stop: &dyn Fn() -> bool) -> std::io::Result<TcpStream> {
    connect_with(addr, limit, stop, &|_| Ok(()))
}

/// [`connect`], with `set_up` called on the socket before it connects
/// (options that must precede the handshake: buffer sizes, the MSS).
pub fn connect_with(
    addr: &SocketAddr,
    limit: Duration,
    stop: &dyn Fn() -> bool,
    set_up: &dyn Fn(&socket2::Socket) -> std::io::Result<()>,
) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Protocol, Socket, Type};
    let sock = Socket::new(Domain::for_address(*addr), Type::STREAM, Some(Protocol::TCP))?;
    set_up(&sock)?;
    sock.set_nonblocking(true)?;
    match sock.connect(&(*addr).into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            let deadline = Instant::now() + limit;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let mut pfd = [libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLOUT, revents: 0 }];
                poll(&mut pfd, Some(left.min(TICK))).map_err(std::io::Error::from_raw_os_error)?;
                if pfd[0].revents != 0 {
                    break;
                }
                if stop() {
                    return Err(stopped());
                }
                if left.is_zero() {
                    return Err(timed_out(limit));
                }
            }
            if let Some(e) = sock.take_error()? {
                return Err(e);
            }
        }
        Err(e) => return Err(e),
    }
    sock.set_nonblocking(false)?;
    Ok(sock.into())
}

/// A blocking stream whose reads and writes wait [`TICK`] at a time (the
/// socket's own timeouts must be set to it) until `limit` has passed since
/// it was made, or `stop` says so.
pub struct Guarded<'a, S> {
    pub inner: S,
    deadline: Instant,
    limit: Duration,
    stop: &'a dyn Fn() -> bool,
}

impl<'a, S> Guarded<'a, S> {
    pub fn new(inner: S, limit: Duration, stop: &'a dyn Fn() -> bool) -> Guarded<'a, S> {
        Guarded { inner, deadline: Instant::now() + limit, limit, stop }
    }

    fn retry<T>(&mut self, mut f: impl FnMut(&mut S) -> std::io::Result<T>) -> std::io::Result<T> {
        loop {
            match f(&mut self.inner) {
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    if (self.stop)() {
                        return Err(stopped());
                    }
                    if Instant::now() >= self.deadline {
                        return Err(timed_out(self.limit));
                    }
                }
                r => return r,
            }
        }
    }
}

impl<S: Read> Read for Guarded<'_, S> {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        self.retry(|s| s.read(b))
    }
}

impl<S: Write> Write for Guarded<'_, S> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.retry(|s| s.write(b))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener that accepts (the kernel does) and never says a word.
    fn silent() -> (std::net::TcpListener, SocketAddr) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
    }

    #[test]
    fn a_silent_server_times_out_as_a_timeout_and_a_stop_ends_the_wait_at_once() {
        let (_l, addr) = silent();
        let s = connect(&addr, Duration::from_secs(1), &|| false).unwrap();
        s.set_read_timeout(Some(TICK)).unwrap();
        let t0 = Instant::now();
        let mut g = Guarded::new(s.try_clone().unwrap(), Duration::from_millis(300), &|| false);
        let e = g.read_exact(&mut [0u8; 8]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("no answer within 0.3 s"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(1));
        let t0 = Instant::now();
        let mut g = Guarded::new(s, Duration::from_secs(60), &|| true);
        let e = g.read_exact(&mut [0u8; 8]).unwrap_err();
        assert!(is_stopped(&e) && t0.elapsed() < Duration::from_millis(500), "{e}");
    }
}
