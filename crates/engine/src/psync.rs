//! The `psync` engine: pread/pwrite/fsync, one operation at a time.

use crate::*;

pub struct PsyncFactory;

impl EngineFactory for PsyncFactory {
    fn name(&self) -> &'static str {
        "psync"
    }
    /// fio's sync (read/write after lseek) and pvsync (preadv at the
    /// offset, one buffer) are one positioned call per I/O, as pread is.
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: "psync", note: None }, FioName { name: "sync", note: None }, FioName { name: "pvsync", note: None }]
    }
    fn description(&self) -> &'static str {
        "pread/pwrite, synchronous (iodepth 1 per worker; use numjobs for concurrency)"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: false, direct_io: true, needs_files: true, does_io: true, blocks: true, objects: false, ordered: true }
    }
    fn supports(&self, op: OpKind) -> bool {
        matches!(op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options("psync", options)?;
        Ok(Arc::new(PsyncConfig))
    }
}

struct PsyncConfig;

impl EngineConfig for PsyncConfig {
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(Psync { fds: setup.fds.to_vec(), buffers: setup.buffers, done: Vec::with_capacity(4) }))
    }
}

struct Psync {
    fds: Vec<RawFd>,
    buffers: Buffers,
    done: Vec<Completion>,
}

/// A discard: the range deallocated and reading as zeros. On a block
/// device the kernel turns this into a discard or a write of zeros.
pub fn punch_hole(fd: RawFd, offset: u64, len: u64) -> isize {
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: no memory is passed; a bad descriptor is an error return.
    unsafe { libc::fallocate(fd, mode, offset as libc::off_t, len as libc::off_t) as isize }
}

/// pread/pwrite as bare system calls where the offset fits one register.
/// glibc's wrappers are cancellation points: in a threaded process each
/// call enables and disables asynchronous cancellation around the system
/// call, which perf showed as ~1.2% of a 4 KiB page-cache read (storbench
/// never cancels threads, so it buys nothing).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
unsafe fn pread(fd: RawFd, buf: *mut libc::c_void, len: usize, off: libc::off_t) -> isize {
    // SAFETY: as pread's; the caller passes a buffer of `len` bytes.
    unsafe { libc::syscall(libc::SYS_pread64, fd, buf, len, off) as isize }
}
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
unsafe fn pwrite(fd: RawFd, buf: *mut libc::c_void, len: usize, off: libc::off_t) -> isize {
    // SAFETY: as pwrite's.
    unsafe { libc::syscall(libc::SYS_pwrite64, fd, buf as *const libc::c_void, len, off) as isize }
}
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
use libc::{pread, pwrite};

fn retry_eintr(mut f: impl FnMut() -> isize) -> i64 {
    loop {
        let r = f();
        if r >= 0 {
            return r as i64;
        }
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
        if errno != libc::EINTR {
            return -(errno as i64);
        }
    }
}

impl Engine for Psync {
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let fd = self.fds[req.file as usize];
        let buf = self.buffers.slot(req.slot) as *mut libc::c_void;
        let (len, off) = (req.len as usize, req.offset as libc::off_t);
        // SAFETY: buf points at a slot of at least `len` bytes owned by the worker.
        let result = match req.op {
            OpKind::Read => retry_eintr(|| unsafe { pread(fd, buf, len, off) }),
            OpKind::Write => retry_eintr(|| unsafe { pwrite(fd, buf, len, off) }),
            OpKind::Sync if req.data_only => retry_eintr(|| unsafe { libc::fdatasync(fd) as isize }),
            OpKind::Sync => retry_eintr(|| unsafe { libc::fsync(fd) as isize }),
            OpKind::Trim => match retry_eintr(|| punch_hole(fd, req.offset, req.len as u64)) {
                0 => len as i64,
                e => e,
            },
            op => return Err(crate::unsupported_op("psync", op)),
        };
        self.done.push(Completion::from_rc(req.slot, result));
        Ok(())
    }

    #[inline]
    fn submit_and_reap(&mut self, _min: u32, _t: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}
