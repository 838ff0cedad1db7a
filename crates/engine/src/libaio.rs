//! The `libaio` engine: Linux native AIO (io_setup / io_submit /
//! io_getevents), as fio's libaio engine uses it.
//!
//! It exists beside io_uring because the two differ where it shows in the
//! numbers: with buffered I/O, io_submit copies to or from the page cache in
//! the submitting call and the I/O is complete when it returns, while a
//! buffered io_uring write that cannot finish inline goes to kernel worker
//! threads. A fio job that says `ioengine=libaio` measures the former, so
//! storbench runs it the same way. With O_DIRECT both are truly
//! asynchronous.
//!
//! The kernel ABI is a handful of plain structs and three system calls; no
//! crate wraps them in a maintained form, so they are declared here.

use crate::*;

pub struct LibaioFactory;

const NAME: &str = "libaio";

impl EngineFactory for LibaioFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    /// glibc's POSIX AIO runs each file's requests in order on a helper
    /// thread: like native AIO on a buffered file, one at a time; with
    /// O_DIRECT native AIO keeps the queue depth fio's posixaio asks for.
    fn fio_names(&self) -> &'static [FioName] {
        &[
            FioName { name: NAME, note: None },
            FioName {
                name: "posixaio",
                note: Some(
                    "ioengine=posixaio runs on libaio (kernel AIO: like glibc's POSIX AIO, a buffered I/O completes before the next on its file)",
                ),
            },
        ]
    }
    fn description(&self) -> &'static str {
        "Linux native AIO (io_submit/io_getevents); buffered I/O completes in the submitting call, as in fio"
    }
    fn io_priorities(&self) -> bool {
        true
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: true, does_io: true, blocks: true, objects: false, ordered: true }
    }
    /// A context holds at most fs.aio-max-nr events system-wide (65536 by default).
    fn max_queue_depth(&self) -> u32 {
        65536
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options(NAME, options)?;
        Ok(Arc::new(LibaioConfig))
    }
}

struct LibaioConfig;

impl EngineConfig for LibaioConfig {
    fn submits_in_queue(&self) -> bool {
        true
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(Libaio::open(setup)?))
    }
}

/// `struct iocb` of <linux/aio_abi.h> (little-endian field order).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const CMD_PREAD: u16 = 0;
const CMD_PWRITE: u16 = 1;
const CMD_FSYNC: u16 = 2;
const CMD_FDSYNC: u16 = 3;
/// `aio_reqprio` holds the I/O's priority (<linux/aio_abi.h>).
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

struct Libaio {
    ctx: libc::c_ulong,
    fds: Vec<RawFd>,
    buffers: Buffers,
    /// One control block per slot, so the pointers handed to the kernel stay
    /// put while the I/O is in flight.
    iocbs: Vec<Iocb>,
    /// Queued, not yet accepted by io_submit (slot numbers).
    pending: Vec<u32>,
    /// The pointers handed to io_submit (kept to reuse the allocation).
    ptrs: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// The most events one io_getevents takes (fio's iodepth_batch_complete_max).
    reap_max: usize,
    /// Operations io_submit refused outright, completed with their errno.
    refused: Vec<Completion>,
}

// SAFETY: the context and buffers are used by the owning worker thread only.
unsafe impl Send for Libaio {}

impl Libaio {
    fn open(setup: &WorkerSetup) -> Result<Libaio, EngineError> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into `ctx`.
        if unsafe { libc::syscall(libc::SYS_io_setup, setup.queue_depth as libc::c_long, &mut ctx as *mut libc::c_ulong) } != 0 {
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
            let call = if e == libc::EAGAIN { "io_setup (queue depth above fs.aio-max-nr; raise it or lower iodepth)" } else { "io_setup" };
            return Err(EngineError::os(NAME, call, e));
        }
        let qd = setup.queue_depth as usize;
        Ok(Libaio {
            ctx,
            fds: setup.fds.to_vec(),
            buffers: setup.buffers,
            iocbs: vec![Iocb::default(); setup.buffers.slots.max(qd)],
            pending: Vec::with_capacity(qd),
            ptrs: Vec::with_capacity(qd),
            events: vec![IoEvent::default(); qd.max(1)],
            reap_max: setup.reap_max.max(1) as usize,
            refused: Vec::new(),
        })
    }

    /// Hand every pending control block to the kernel. A buffered request is
    /// carried out inside this call. A refusal of the first block (bad
    /// alignment, a bad descriptor) completes that operation with the error;
    /// EAGAIN (the context is full) leaves the rest pending for the next call.
    fn submit(&mut self) -> Result<(), EngineError> {
        while !self.pending.is_empty() {
            self.ptrs.clear();
            for &slot in &self.pending {
                self.ptrs.push(&mut self.iocbs[slot as usize] as *mut Iocb);
            }
            // SAFETY: every pointer is to a live control block whose buffer
            // outlives the I/O (the worker drops the engine first).
            let n = unsafe { libc::syscall(libc::SYS_io_submit, self.ctx, self.ptrs.len() as libc::c_long, self.ptrs.as_mut_ptr()) };
            if n >= 0 {
                self.pending.drain(..n as usize);
                continue;
            }
            match std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) {
                libc::EINTR => continue,
                libc::EAGAIN => return Ok(()),
                e => {
                    let slot = self.pending.remove(0);
                    self.refused.push(Completion::from_rc(slot, -(e as i64)));
                }
            }
        }
        Ok(())
    }

    /// At least `min` events (unless the timeout passes first), at most
    /// `reap_max` or `min`: as fio's libaio, which asks io_getevents for
    /// `iodepth_batch_complete_max`, so by default one completion is taken,
    /// and its slot refilled, at a time (taking every event there was and
    /// then submitting as many one by one left the device idle meanwhile:
    /// 26-33k against 38-54k IOPS on a direct 4 KiB randwrite at QD16).
    fn get_events(&mut self, min: usize, timeout: Option<Duration>) -> Result<usize, EngineError> {
        let max = self.reap_max.max(min).min(self.events.len());
        let ts = timeout.map(|t| libc::timespec { tv_sec: t.as_secs() as libc::time_t, tv_nsec: t.subsec_nanos() as libc::c_long });
        let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `events` has room for `len` events; `tsp` is null or valid.
        let n = unsafe {
            libc::syscall(libc::SYS_io_getevents, self.ctx, min as libc::c_long, max as libc::c_long, self.events.as_mut_ptr(), tsp)
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        match std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) {
            libc::EINTR => Ok(0),
            e => Err(EngineError::os(NAME, "io_getevents", e)),
        }
    }
}

impl Engine for Libaio {
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let opcode = match req.op {
            OpKind::Read => CMD_PREAD,
            OpKind::Write => CMD_PWRITE,
            OpKind::Sync if req.data_only => CMD_FDSYNC,
            OpKind::Sync => CMD_FSYNC,
            op => return Err(crate::unsupported_op(NAME, op)),
        };
        let sync = req.op == OpKind::Sync;
        self.iocbs[req.slot as usize] = Iocb {
            data: req.slot as u64,
            opcode,
            fildes: self.fds[req.file as usize] as u32,
            buf: if sync { 0 } else { self.buffers.slot(req.slot) as u64 },
            nbytes: if sync { 0 } else { req.len as u64 },
            offset: if sync { 0 } else { req.offset as i64 },
            // Each I/O's own priority, as fio's cmdprio sets it.
            reqprio: req.ioprio as i16,
            flags: if req.ioprio != 0 && !sync { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        self.pending.push(req.slot);
        // fio's libaio submits each I/O as it is queued (iodepth_batch 1).
        self.submit()
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.submit()?;
        let refused = self.refused.len() as u32;
        out.append(&mut self.refused);
        let min = min.saturating_sub(refused) as usize;
        let n = self.get_events(min, timeout)?;
        for e in &self.events[..n] {
            out.push(Completion::from_rc(e.data as u32, e.res));
        }
        Ok(())
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        // SAFETY: io_destroy waits for what is in flight and frees the context.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_structs_have_the_abi_sizes() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }
}
