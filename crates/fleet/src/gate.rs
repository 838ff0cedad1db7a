//! The agent's door: every TCP connection is registered when it is
//! accepted and counts as unauthenticated until a run request on it shows
//! the fleet token (with `--mtls`, until it makes one: the TLS handshake
//! checked its certificate). At most [`MAX_UNAUTHENTICATED`] are kept at
//! once (the oldest is closed to let a new one in, so whoever connects now
//! is served, not whoever connected first), and each is closed once it has
//! been open for the handshake deadline without authenticating. A prober
//! that opened 3,000 idle connections held 3,010 of the agent's 20,000
//! descriptors; now it holds the count at most, for the deadline at most.
//!
//! A connection is closed by shutting its socket down (its reads end, and
//! the server drops it); the registry's lock is held while shutting and
//! while a connection leaves, so a descriptor is never shut after its
//! number went to another socket.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// Unauthenticated connections kept at once.
pub const MAX_UNAUTHENTICATED: usize = 64;

/// The connections that have not authenticated yet.
pub struct Gate {
    inner: Mutex<Inner>,
    /// How long a connection may stay unauthenticated.
    deadline: Duration,
}

#[derive(Default)]
struct Inner {
    next: u64,
    /// By admission order (oldest first).
    waiting: BTreeMap<u64, Waiting>,
    by_peer: HashMap<SocketAddr, u64>,
}

struct Waiting {
    fd: RawFd,
    since: Instant,
    peer: Option<SocketAddr>,
}

impl Gate {
    pub fn new(deadline: Duration) -> Arc<Gate> {
        Arc::new(Gate { inner: Mutex::default(), deadline })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Register a new connection, closing the oldest unauthenticated one
    /// if there are too many.
    pub fn admit(self: &Arc<Gate>, stream: TcpStream) -> Admitted {
        let peer = stream.peer_addr().ok();
        let mut g = self.lock();
        let id = g.next;
        g.next += 1;
        while g.waiting.len() >= MAX_UNAUTHENTICATED {
            let Some((old, w)) = g.waiting.pop_first() else { break };
            shut(w.fd);
            g.forget(old, &w);
        }
        g.waiting.insert(id, Waiting { fd: stream.as_raw_fd(), since: Instant::now(), peer });
        if let Some(p) = peer {
            g.by_peer.insert(p, id);
        }
        Admitted { stream, id, gate: self.clone() }
    }

    /// The connection from `peer` showed the fleet's credentials: it no
    /// longer counts, and is never closed by the gate.
    pub fn authenticated(&self, peer: SocketAddr) {
        let mut g = self.lock();
        if let Some(id) = g.by_peer.remove(&peer) {
            g.waiting.remove(&id);
        }
    }

    /// Close the connections unauthenticated for longer than the deadline.
    pub fn reap(&self) {
        let mut g = self.lock();
        let late: Vec<u64> = g.waiting.iter().filter(|(_, w)| w.since.elapsed() >= self.deadline).map(|(id, _)| *id).collect();
        for id in late {
            if let Some(w) = g.waiting.remove(&id) {
                shut(w.fd);
                g.forget(id, &w);
            }
        }
    }

    /// Unauthenticated connections now.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    fn leave(&self, id: u64) {
        let mut g = self.lock();
        if let Some(w) = g.waiting.remove(&id) {
            g.forget(id, &w);
        }
    }
}

impl Inner {
    fn forget(&mut self, id: u64, w: &Waiting) {
        if let Some(p) = w.peer {
            if self.by_peer.get(&p) == Some(&id) {
                self.by_peer.remove(&p);
            }
        }
    }
}

fn shut(fd: RawFd) {
    // SAFETY: the descriptor belongs to an `Admitted` still registered (it
    // leaves under the same lock before its socket is closed); shutting it
    // down passes no memory.
    unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
}

/// A connection the gate let in; it leaves the gate when dropped.
pub struct Admitted {
    stream: TcpStream,
    id: u64,
    gate: Arc<Gate>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.gate.leave(self.id);
    }
}

impl Connected for Admitted {
    type ConnectInfo = TcpConnectInfo;
    fn connect_info(&self) -> TcpConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Admitted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Admitted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_unauthenticated_connections_go_first_and_late_ones_are_reaped() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            let gate = Gate::new(Duration::from_millis(200));
            let mut clients = Vec::new();
            let mut admitted = Vec::new();
            for _ in 0..MAX_UNAUTHENTICATED + 3 {
                clients.push(tokio::net::TcpStream::connect(addr).await.unwrap());
                admitted.push(gate.admit(l.accept().await.unwrap().0));
            }
            assert_eq!(gate.waiting(), MAX_UNAUTHENTICATED, "never more than the bound");
            // The first three were shut: their client sees the end.
            let mut b = [0u8; 1];
            for c in &mut clients[..3] {
                assert_eq!(tokio::io::AsyncReadExt::read(c, &mut b).await.unwrap(), 0);
            }
            // One authenticates; the rest are reaped after the deadline.
            let peer = clients.last().unwrap().local_addr().unwrap();
            gate.authenticated(peer);
            tokio::time::sleep(Duration::from_millis(250)).await;
            gate.reap();
            assert_eq!(gate.waiting(), 0);
            let last = clients.last_mut().unwrap();
            let open = tokio::time::timeout(Duration::from_millis(100), tokio::io::AsyncReadExt::read(last, &mut b)).await;
            assert!(open.is_err(), "the authenticated connection stays open");
            drop(admitted);
        });
    }
}
