//! One NBD connection in the transmission phase, non-blocking: requests go
//! out from a send queue (headers and write payloads straight from the
//! worker's slot buffers, gathered into one sendmsg), replies are parsed
//! from a staging buffer, and read payloads land in the slot buffers. A
//! read of the socket during a payload is a readv into the rest of the slot
//! and then the staging buffer, so a payload arrives without a copy and
//! the next replies' headers arrive in the same call.
//!
//! The cookie of a request is its slot number. A connection that breaks
//! (end of file, reset) fails what it has in flight with an errno and
//! fails whatever is queued on it afterwards at once; a reply that breaks
//! the protocol is an error naming what was wrong. One whose server stops
//! answering is timed out (ETIMEDOUT) or, when the run gives up on what
//! is in flight, forgotten: shut, and nothing completes.

use super::proto::{self, ReplyHeader};
use crate::{Buffers, Completion};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;
use storbench_metrics::IoFailure;

/// Staging buffer for reply headers and small chunks.
const STAGING: usize = 64 << 10;
/// The largest non-data chunk accepted (a block status chunk of 2^20
/// extents, the protocol's advice, plus its context id).
const MAX_CHUNK: usize = 4 + 8 * (1 << 20);
/// iovecs per sendmsg (well below IOV_MAX).
const MAX_IOV: usize = 64;

/// A request waiting to be (fully) sent.
struct Outgoing {
    header: [u8; proto::REQUEST_LEN],
    /// A write's payload: the slot buffer, which the worker keeps until the
    /// request completes.
    payload: *const u8,
    payload_len: usize,
    /// Bytes of header + payload sent so far.
    sent: usize,
}

/// A request sent and not yet answered.
#[derive(Clone, Copy)]
struct Pending {
    cmd: u16,
    offset: u64,
    len: u32,
    /// The first error a structured reply reported (the reply goes on until DONE).
    error: Option<i32>,
    /// Bytes of a structured read's range covered by data and hole chunks.
    covered: u64,
    /// When it was queued (a request unanswered too long times out).
    queued: Instant,
}

/// What the receiver waits for.
#[derive(Clone, Copy)]
enum Want {
    /// A reply header.
    Header,
    /// A whole chunk payload of this length in the staging buffer.
    Chunk { cookie: u64, flags: u16, kind: u16, len: usize },
    /// An OFFSET_DATA chunk's offset (8 bytes), `data_len` bytes following it.
    DataOffset { cookie: u64, flags: u16, data_len: usize },
    /// Payload bytes going straight into a slot; `done` completes the
    /// request afterwards (simple replies, or a final data chunk).
    Payload { cookie: u64, dst: *mut u8, left: usize, done: bool },
}

/// A protocol violation, in words.
pub type Malformed = String;

pub struct Conn {
    fd: OwnedFd,
    structured: bool,
    buffers: Buffers,
    sendq: VecDeque<Outgoing>,
    pending: Vec<Option<Pending>>,
    in_flight: usize,
    staging: Vec<u8>,
    start: usize,
    end: usize,
    want: Want,
    /// Set once the connection broke: the errno its operations fail with.
    dead: Option<i32>,
    /// base:allocation's context id, and the extents block status replies
    /// brought (for the safety check before a run).
    pub allocation: Option<u32>,
    pub extents: Vec<(u32, u32)>,
}

// SAFETY: the raw pointers are into the worker's slot buffers, used only
// by the worker thread that owns this connection.
unsafe impl Send for Conn {}

impl Conn {
    pub fn new(fd: OwnedFd, structured: bool, buffers: Buffers, slots: usize) -> Conn {
        Conn {
            fd,
            structured,
            buffers,
            sendq: VecDeque::with_capacity(slots),
            pending: vec![None; slots],
            in_flight: 0,
            staging: vec![0; STAGING],
            start: 0,
            end: 0,
            want: Want::Header,
            dead: None,
            allocation: None,
            extents: Vec::new(),
        }
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
    pub fn wants_to_send(&self) -> bool {
        !self.sendq.is_empty()
    }
    pub fn is_dead(&self) -> bool {
        self.dead.is_some()
    }
    /// The errno of a broken connection.
    pub fn dead(&self) -> Option<i32> {
        self.dead
    }

    /// Queue a request; on a broken connection it fails at once.
    pub fn queue(&mut self, cmd: u16, slot: u32, offset: u64, len: u32, out: &mut Vec<Completion>) -> Result<(), Malformed> {
        if let Some(errno) = self.dead {
            out.push(Completion::new(slot, Err(IoFailure::errno(errno))));
            return Ok(());
        }
        let entry = self.pending.get_mut(slot as usize).ok_or_else(|| format!("slot {slot} beyond the queue depth"))?;
        if entry.is_some() {
            return Err(format!("slot {slot} queued while still in flight"));
        }
        *entry = Some(Pending { cmd, offset, len, error: None, covered: 0, queued: Instant::now() });
        self.in_flight += 1;
        let (payload, payload_len) = match cmd {
            proto::CMD_WRITE => (self.buffers.slot(slot) as *const u8, len as usize),
            _ => (std::ptr::null(), 0),
        };
        let header = proto::request(cmd, 0, slot as u64, offset, len);
        self.sendq.push_back(Outgoing { header, payload, payload_len, sent: 0 });
        Ok(())
    }

    /// Send what the socket takes now. Returns completions of a connection
    /// that broke while sending.
    pub fn send(&mut self, out: &mut Vec<Completion>) -> usize {
        while self.dead.is_none() && !self.sendq.is_empty() {
            match self.send_some() {
                Ok(true) => {}
                Ok(false) => break,
                Err(errno) => return self.die(errno, out),
            }
        }
        0
    }

    /// One sendmsg of as much of the queue as fits in MAX_IOV iovecs;
    /// false when the socket is full.
    fn send_some(&mut self) -> Result<bool, i32> {
        let mut iov: [libc::iovec; MAX_IOV] = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; MAX_IOV];
        let mut n = 0;
        for o in self.sendq.iter() {
            if n + 2 > MAX_IOV {
                break;
            }
            let h = proto::REQUEST_LEN;
            if o.sent < h {
                iov[n] = libc::iovec { iov_base: o.header[o.sent..].as_ptr() as *mut _, iov_len: h - o.sent };
                n += 1;
            }
            if o.payload_len > 0 {
                let done = o.sent.saturating_sub(h);
                // SAFETY: the payload is the slot buffer, at least payload_len long.
                iov[n] = libc::iovec { iov_base: unsafe { o.payload.add(done) } as *mut _, iov_len: o.payload_len - done };
                n += 1;
            }
        }
        // SAFETY: a zeroed msghdr is valid; it points at `n` live iovecs.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_mut_ptr();
        msg.msg_iovlen = n as _;
        // MSG_NOSIGNAL: a server that went away is an EPIPE here, not a SIGPIPE.
        // SAFETY: the iovecs point into the queue's headers and slot buffers.
        let rc = unsafe { libc::sendmsg(self.fd(), &msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
        if rc < 0 {
            return match last_errno() {
                libc::EAGAIN => Ok(false),
                libc::EINTR => Ok(true),
                e => Err(e),
            };
        }
        self.advance_sent(rc as usize);
        Ok(true)
    }

    fn advance_sent(&mut self, mut n: usize) {
        while n > 0 {
            let Some(o) = self.sendq.front_mut() else { return };
            let left = proto::REQUEST_LEN + o.payload_len - o.sent;
            if n < left {
                o.sent += n;
                return;
            }
            n -= left;
            self.sendq.pop_front();
        }
    }

    /// Read and handle whatever replies have arrived; the number of
    /// completions pushed.
    pub fn receive(&mut self, out: &mut Vec<Completion>) -> Result<usize, Malformed> {
        let mut done = 0;
        while self.dead.is_none() {
            done += self.consume(out)?;
            match self.fill() {
                Ok(true) => {}
                Ok(false) => break,
                Err(errno) => {
                    done += self.die(errno, out);
                    break;
                }
            }
        }
        Ok(done)
    }

    /// Read from the socket into the slot (during a payload) and the
    /// staging buffer. false: nothing to read now.
    fn fill(&mut self) -> Result<bool, i32> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        let need = match self.want {
            Want::Chunk { len, .. } => len,
            _ => proto::STRUCTURED_REPLY_LEN,
        };
        if self.staging.len() - self.start < need {
            // Make room: move what is buffered to the front, and grow for a big chunk.
            self.staging.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
            if self.staging.len() < need {
                self.staging.resize(need, 0);
            }
        }
        let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 2];
        let mut n = 0;
        let mut direct = 0;
        if let Want::Payload { dst, left, .. } = self.want {
            iov[0] = libc::iovec { iov_base: dst as *mut _, iov_len: left };
            direct = left;
            n = 1;
        }
        // SAFETY: end <= staging.len(); the tail is ours to fill.
        iov[n] =
            libc::iovec { iov_base: unsafe { self.staging.as_mut_ptr().add(self.end) } as *mut _, iov_len: self.staging.len() - self.end };
        n += 1;
        // SAFETY: the iovecs point at the rest of a slot buffer and the staging tail.
        let rc = unsafe { libc::readv(self.fd(), iov.as_ptr(), n as i32) };
        if rc < 0 {
            return match last_errno() {
                libc::EAGAIN => Ok(false),
                libc::EINTR => Ok(true),
                e => Err(e),
            };
        }
        if rc == 0 {
            // The server closed the connection.
            return Err(libc::ECONNRESET);
        }
        let rc = rc as usize;
        if let Want::Payload { dst, left, done, cookie } = self.want {
            let into_slot = rc.min(direct);
            // SAFETY: dst + into_slot stays within the slot range being filled.
            self.want = Want::Payload { dst: unsafe { dst.add(into_slot) }, left: left - into_slot, done, cookie };
            self.end += rc - into_slot;
        } else {
            self.end += rc;
        }
        Ok(true)
    }

    /// Handle what the staging buffer holds; completions pushed.
    fn consume(&mut self, out: &mut Vec<Completion>) -> Result<usize, Malformed> {
        let mut done = 0;
        loop {
            let have = self.end - self.start;
            match self.want {
                Want::Payload { cookie, dst, left, done: finish } => {
                    let n = left.min(have);
                    // SAFETY: dst has `left` bytes of slot room; the staging range is filled.
                    unsafe { std::ptr::copy_nonoverlapping(self.staging.as_ptr().add(self.start), dst, n) };
                    self.start += n;
                    if n < left {
                        // SAFETY: as above, still within the slot.
                        self.want = Want::Payload { cookie, dst: unsafe { dst.add(n) }, left: left - n, done: finish };
                        return Ok(done);
                    }
                    self.want = Want::Header;
                    if finish {
                        done += self.complete(cookie, out)?;
                    }
                }
                Want::Header => {
                    if have < 4 {
                        return Ok(done);
                    }
                    let magic = [0, 1, 2, 3].map(|i| self.staging[self.start + i]);
                    let len = proto::reply_header_len(magic)?;
                    if have < len {
                        return Ok(done);
                    }
                    let h = proto::reply_header(&self.staging[self.start..self.start + len])?;
                    self.start += len;
                    done += self.header(h, out)?;
                }
                Want::DataOffset { cookie, flags, data_len } => {
                    if have < 8 {
                        return Ok(done);
                    }
                    let offset = proto::be64(&self.staging[self.start..self.start + 8]);
                    self.start += 8;
                    let dst = self.slot_range(cookie, offset, data_len as u64, "a data chunk")?;
                    let finish = flags & proto::REPLY_FLAG_DONE != 0;
                    self.want = Want::Payload { cookie, dst, left: data_len, done: finish };
                }
                Want::Chunk { cookie, flags, kind, len } => {
                    if have < len {
                        return Ok(done);
                    }
                    let range = self.start..self.start + len;
                    self.start += len;
                    self.want = Want::Header;
                    // Borrowed out and put back: chunk() never touches the staging buffer.
                    let staging = std::mem::take(&mut self.staging);
                    let r = self.chunk(cookie, flags, kind, &staging[range], out);
                    self.staging = staging;
                    done += r?;
                }
            }
        }
    }

    fn pending(&mut self, cookie: u64) -> Result<&mut Pending, Malformed> {
        self.pending
            .get_mut(cookie as usize)
            .and_then(Option::as_mut)
            .ok_or_else(|| format!("a reply for cookie {cookie}, which is not in flight"))
    }

    /// A reply header arrived: decide what follows it.
    fn header(&mut self, h: ReplyHeader, out: &mut Vec<Completion>) -> Result<usize, Malformed> {
        match h {
            ReplyHeader::Simple { error, cookie } => {
                let p = *self.pending(cookie)?;
                if error != 0 {
                    self.pending(cookie)?.error = Some(proto::errno(error));
                    return self.complete(cookie, out);
                }
                if p.cmd == proto::CMD_READ {
                    let dst = self.buffers.slot(cookie as u32);
                    self.want = Want::Payload { cookie, dst, left: p.len as usize, done: true };
                    return Ok(0);
                }
                if p.cmd == proto::CMD_BLOCK_STATUS {
                    return Err("a simple reply to NBD_CMD_BLOCK_STATUS".into());
                }
                self.complete(cookie, out)
            }
            ReplyHeader::Chunk { flags, kind, cookie, len } => {
                if !self.structured {
                    return Err("a structured reply, which was not negotiated".into());
                }
                self.pending(cookie)?;
                if kind == proto::REPLY_TYPE_OFFSET_DATA {
                    return self.data_chunk_header(cookie, flags, len as usize);
                }
                if len as usize > MAX_CHUNK {
                    return Err(format!("a reply chunk of type {kind} and {len} bytes"));
                }
                self.want = Want::Chunk { cookie, flags, kind, len: len as usize };
                Ok(0)
            }
        }
    }

    /// An OFFSET_DATA chunk: first its 8-byte offset, then the data.
    fn data_chunk_header(&mut self, cookie: u64, flags: u16, len: usize) -> Result<usize, Malformed> {
        if len < 9 {
            return Err(format!("an NBD_REPLY_TYPE_OFFSET_DATA chunk of {len} bytes (at least 9)"));
        }
        self.want = Want::DataOffset { cookie, flags, data_len: len - 8 };
        Ok(0)
    }

    /// Where in the request's slot `len` bytes at `offset` of the export
    /// go; the range must lie within the request and it must be a read.
    fn slot_range(&mut self, cookie: u64, offset: u64, len: u64, what: &str) -> Result<*mut u8, Malformed> {
        let p = self.pending(cookie)?;
        let within = offset >= p.offset && offset.checked_add(len).is_some_and(|e| e <= p.offset + p.len as u64);
        if p.cmd != proto::CMD_READ || !within {
            return Err(format!("{what} for bytes {offset}+{len}, outside the request's {}+{} (command {})", p.offset, p.len, p.cmd));
        }
        p.covered += len;
        let at = (offset - p.offset) as usize;
        // SAFETY: at + len <= the request's length <= the slot's length.
        Ok(unsafe { self.buffers.slot(cookie as u32).add(at) })
    }

    /// A whole non-data chunk arrived.
    fn chunk(&mut self, cookie: u64, flags: u16, kind: u16, p: &[u8], out: &mut Vec<Completion>) -> Result<usize, Malformed> {
        match kind {
            proto::REPLY_TYPE_NONE if p.is_empty() => {}
            proto::REPLY_TYPE_NONE => return Err(format!("an NBD_REPLY_TYPE_NONE chunk of {} bytes", p.len())),
            proto::REPLY_TYPE_OFFSET_HOLE => {
                if p.len() != 12 {
                    return Err(format!("an NBD_REPLY_TYPE_OFFSET_HOLE chunk of {} bytes (12)", p.len()));
                }
                let (offset, len) = (proto::be64(&p[0..8]), proto::be32(&p[8..12]) as u64);
                let dst = self.slot_range(cookie, offset, len, "a hole")?;
                // SAFETY: slot_range checked that the range lies in the slot.
                unsafe { std::ptr::write_bytes(dst, 0, len as usize) };
            }
            proto::REPLY_TYPE_BLOCK_STATUS => {
                let (id, extents) = proto::block_status_chunk(p)?;
                if Some(id) == self.allocation {
                    self.extents.extend(extents);
                }
            }
            k if k & (1 << 15) != 0 => {
                let (error, _message, _offset) = proto::error_chunk(k, p)?;
                let e = self.pending(cookie)?;
                e.error.get_or_insert(proto::errno(error));
            }
            k => return Err(format!("a reply chunk of unknown type {k}")),
        }
        if flags & proto::REPLY_FLAG_DONE != 0 {
            return self.complete(cookie, out);
        }
        Ok(0)
    }

    /// The request is answered: its completion.
    fn complete(&mut self, cookie: u64, out: &mut Vec<Completion>) -> Result<usize, Malformed> {
        let p = *self.pending(cookie)?;
        // A successful structured read must cover its whole range with data
        // and holes (checked before the request is taken off, so abandoning
        // the connection fails it).
        if p.error.is_none() && self.structured && p.cmd == proto::CMD_READ && p.covered != p.len as u64 {
            return Err(format!("a read of {} bytes answered with {} (data and holes)", p.len, p.covered));
        }
        self.pending[cookie as usize] = None;
        self.in_flight -= 1;
        let result = match p.error {
            Some(errno) => Err(IoFailure::errno(errno)),
            None => Ok(match p.cmd {
                proto::CMD_FLUSH | proto::CMD_BLOCK_STATUS => 0,
                _ => p.len as u64,
            }),
        };
        out.push(Completion::new(cookie as u32, result));
        Ok(1)
    }

    /// The connection broke: fail everything in flight with `errno`.
    fn die(&mut self, errno: i32, out: &mut Vec<Completion>) -> usize {
        let errno = if errno == libc::EPIPE { libc::ECONNRESET } else { errno };
        self.dead = Some(errno);
        self.sendq.clear();
        let mut n = 0;
        for (slot, p) in self.pending.iter_mut().enumerate() {
            if p.take().is_some() {
                out.push(Completion::new(slot as u32, Err(IoFailure::errno(errno))));
                n += 1;
            }
        }
        self.in_flight = 0;
        n
    }

    /// After a protocol violation nothing more on this connection can be
    /// trusted: fail what is in flight (EPROTO) and stop using it.
    pub fn abandon(&mut self, out: &mut Vec<Completion>) -> usize {
        self.shut();
        self.die(libc::EPROTO, out)
    }

    /// When the oldest request still in flight was queued.
    pub fn oldest(&self) -> Option<Instant> {
        if self.in_flight == 0 {
            return None;
        }
        self.pending.iter().flatten().map(|p| p.queued).min()
    }

    /// The server stopped answering: shut the connection and fail what is
    /// in flight with ETIMEDOUT (a late reply could name a reused cookie).
    pub fn time_out(&mut self, out: &mut Vec<Completion>) -> usize {
        self.shut();
        self.die(libc::ETIMEDOUT, out)
    }

    /// Give up on what is in flight without completing it: the socket is
    /// shut, so nothing more is read into (or sent from) the slots.
    pub fn forget(&mut self) {
        if self.in_flight == 0 && self.sendq.is_empty() {
            return;
        }
        self.shut();
        self.die(libc::ETIMEDOUT, &mut Vec::new());
    }

    fn shut(&self) {
        // SAFETY: shutting down our own socket; no memory is passed.
        let _ = unsafe { libc::shutdown(self.fd(), libc::SHUT_RDWR) };
    }

    /// A polite goodbye (NBD_CMD_DISC), if the socket takes it now.
    pub fn disconnect(&mut self) {
        if self.dead.is_some() || !self.sendq.is_empty() {
            return;
        }
        let h = proto::request(proto::CMD_DISC, 0, 0, 0, 0);
        // SAFETY: a 28-byte buffer on the stack.
        unsafe { libc::send(self.fd(), h.as_ptr() as *const _, h.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}
