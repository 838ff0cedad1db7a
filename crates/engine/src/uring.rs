//! The `io_uring` engine: batched submit and reap, registered files and buffers.
//!
//! A worker queues SQEs and submits them in batches (`iodepth_batch_submit`);
//! the last submission of a round also waits for the first completion, and
//! completions are drained from the CQ ring without further system calls. Registered files and buffers
//! (`registerfiles` on by default, `fixedbufs` on with direct I/O) save the
//! kernel a file lookup and a page pinning per I/O.

use crate::*;
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::AsRawFd;

pub struct UringFactory;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo { name: "registerfiles", kind: Kind::Flag, default: "1", help: "register the files with the ring" },
    OptionInfo { name: "fixedbufs", kind: Kind::Flag, default: "direct", help: "register the I/O buffers with the ring" },
    OptionInfo {
        name: "sqthread_poll",
        kind: Kind::Flag,
        default: "0",
        help: "let a kernel thread poll the submission queue (costs a CPU)",
    },
    OptionInfo { name: "iodepth_batch_submit", kind: Kind::Count, default: "1", help: "submit after this many queued I/Os" },
    OptionInfo {
        name: "submit_each",
        kind: Kind::Flag,
        default: "0",
        help: "one io_uring_enter per I/O as it is queued, as fio (its submission timed apart as fio's slat); default: the newest goes in with the wait",
    },
];

const NAME: &str = "io_uring";

impl EngineFactory for UringFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["uring", "iouring"]
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: NAME, note: None }]
    }
    fn description(&self) -> &'static str {
        "Linux io_uring, batched submission, registered files and buffers"
    }
    fn io_priorities(&self) -> bool {
        true
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: true, does_io: true, blocks: true, objects: false, ordered: true }
    }
    fn options(&self) -> &'static [OptionInfo] {
        OPTIONS
    }
    fn supports(&self, op: OpKind) -> bool {
        matches!(op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim)
    }
    /// The kernel's largest ring (IORING_MAX_ENTRIES).
    fn max_queue_depth(&self) -> u32 {
        32768
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, OPTIONS, options)?;
        let flag = |name: &str| options.get(name).map(|_| bool_option(NAME, options, name, false)).transpose();
        Ok(Arc::new(UringConfig {
            registerfiles: flag("registerfiles")?.unwrap_or(true),
            fixedbufs: flag("fixedbufs")?,
            sqthread_poll: flag("sqthread_poll")?.unwrap_or(false),
            batch: batch_option(options)?,
            submit_each: flag("submit_each")?.unwrap_or(false),
        }))
    }
}

/// The engine's options, parsed once; `None` where the default depends on
/// the worker (direct I/O or not).
struct UringConfig {
    registerfiles: bool,
    fixedbufs: Option<bool>,
    sqthread_poll: bool,
    batch: Option<u32>,
    submit_each: bool,
}

impl UringConfig {
    /// Each entry goes to the kernel in its own io_uring_enter as it is
    /// queued: asked for, and not batched or taken by a polling thread.
    fn each(&self) -> bool {
        self.submit_each && self.batch.unwrap_or(1) == 1 && !self.sqthread_poll
    }
}

impl EngineConfig for UringConfig {
    fn submits_in_queue(&self) -> bool {
        self.each()
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Uring::open(self, setup).map(|u| Box::new(u) as Box<dyn Engine>)
    }
}

const PUNCH_HOLE: i32 = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;

struct Uring {
    ring: IoUring,
    fds: Vec<RawFd>,
    buffers: Buffers,
    fixed_files: bool,
    fixed_bufs: bool,
    queued: u32,
    /// Submit once this many SQEs are queued.
    batch: u32,
    /// The most completions one `submit_and_reap` takes from the ring (fio's
    /// iodepth_batch_complete_max); the rest stay there for the next call.
    reap_max: usize,
    /// Per slot: the length of a discard in flight (fallocate answers 0).
    trim_len: Vec<u32>,
    /// A kernel thread takes entries as they are queued.
    sqpoll: bool,
    /// Every entry submitted in `queue` (fio's commit per I/O).
    each: bool,
    /// The ring's index among this thread's registered rings, when it is
    /// registered (see [`register_ring`]).
    ring_index: Option<u32>,
}

/// How many queued I/Os trigger a submission, when given.
fn batch_option(options: &EngineOptions) -> Result<Option<u32>, EngineError> {
    match options.get("iodepth_batch_submit") {
        None => Ok(None),
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(EngineError::BadOption {
                engine: NAME,
                option: "iodepth_batch_submit".into(),
                message: format!("'{v}' is not a whole number of at least 1"),
            }),
        },
    }
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl Uring {
    fn open(cfg: &UringConfig, setup: &WorkerSetup) -> Result<Uring, EngineError> {
        let fixed_files = cfg.registerfiles;
        // Fixed buffers save pinning pages for direct I/O, but make buffered
        // copies slower (the kernel copies into a bvec), so they follow `direct`.
        let fixed_bufs = cfg.fixedbufs.unwrap_or(setup.direct);
        let sqpoll = cfg.sqthread_poll;
        // Each I/O is submitted as soon as its slot frees, as fio does
        // (iodepth_batch_submit=1). Measured: batches of direct I/O under the
        // block layer's plug lose ~15% IOPS on virtio-blk at QD32, and
        // batches of cold buffered reads (the default, with invalidate) lose
        // ~20% at QD16 (io_uring works through a batch in order). Only reads
        // served from the page cache gain from batching (+27%, a system call
        // saved per I/O): iodepth_batch_submit=N asks for it.
        let batch = cfg.batch.unwrap_or(1);
        let entries = setup.queue_depth.next_power_of_two().max(2);
        let ring = build_ring(entries, sqpoll)?;
        if fixed_files {
            ring.submitter().register_files(setup.fds).map_err(|e| EngineError::os(NAME, "io_uring_register(FILES)", io_errno(&e)))?;
        }
        if fixed_bufs {
            let iov =
                libc::iovec { iov_base: setup.buffers.base as *mut libc::c_void, iov_len: setup.buffers.slot_len * setup.buffers.slots };
            // SAFETY: the buffers outlive the ring (the worker drops the engine first).
            unsafe { ring.submitter().register_buffers(&[iov]) }
                .map_err(|e| EngineError::os(NAME, "io_uring_register(BUFFERS) (try fixedbufs=0)", io_errno(&e)))?;
        }
        let trim_len = vec![0; setup.queue_depth as usize];
        let ring_index = if sqpoll { None } else { register_ring(&ring) };
        Ok(Uring {
            ring,
            fds: setup.fds.to_vec(),
            buffers: setup.buffers,
            fixed_files,
            fixed_bufs,
            queued: 0,
            batch,
            reap_max: setup.reap_max.max(1) as usize,
            trim_len,
            sqpoll,
            each: cfg.each(),
            ring_index,
        })
    }

    fn build_entry(&self, req: &IoRequest) -> squeue::Entry {
        let (buf, len, off, prio) = (self.buffers.slot(req.slot), req.len, req.offset, req.ioprio);
        let fixed_bufs = self.fixed_bufs;
        let flags = if req.data_only { types::FsyncFlags::DATASYNC } else { types::FsyncFlags::empty() };
        // The same opcodes for a registered file index or a plain descriptor,
        // which the io-uring crate types differently.
        macro_rules! entry_for {
            ($fd:expr) => {
                match req.op {
                    OpKind::Read if fixed_bufs => opcode::ReadFixed::new($fd, buf, len, 0).offset(off).ioprio(prio).build(),
                    OpKind::Read => opcode::Read::new($fd, buf, len).offset(off).ioprio(prio).build(),
                    OpKind::Write if fixed_bufs => opcode::WriteFixed::new($fd, buf, len, 0).offset(off).ioprio(prio).build(),
                    OpKind::Write => opcode::Write::new($fd, buf, len).offset(off).ioprio(prio).build(),
                    OpKind::Sync => opcode::Fsync::new($fd).flags(flags).build(),
                    // A discard, as psync's: a hole punched, the size kept.
                    OpKind::Trim => opcode::Fallocate::new($fd, len as u64).offset(off).mode(PUNCH_HOLE).build(),
                    // Refused in queue() before an entry is built.
                    _ => opcode::Nop::new().build(),
                }
            };
        }
        let entry = if self.fixed_files { entry_for!(types::Fixed(req.file)) } else { entry_for!(types::Fd(self.fds[req.file as usize])) };
        entry.user_data(req.slot as u64)
    }
}

/// Whether this kernel (and its seccomp policy) lets a process set up a ring.
pub fn available() -> bool {
    IoUring::new(2).is_ok()
}

fn build_ring(entries: u32, sqpoll: bool) -> Result<IoUring, EngineError> {
    if sqpoll {
        let mut b = IoUring::builder();
        b.setup_sqpoll(2000);
        return b.build(entries).map_err(|e| EngineError::os(NAME, "io_uring_setup(SQPOLL)", io_errno(&e)));
    }
    // Only this thread touches the ring, so completions can wait until it asks
    // for them (DEFER_TASKRUN, 6.1+) or at least skip the IPI (COOP_TASKRUN,
    // 5.19+): measurably less kernel time per I/O. Older kernels get a plain ring.
    let mut defer = IoUring::builder();
    defer.setup_single_issuer().setup_defer_taskrun();
    let mut coop = IoUring::builder();
    coop.setup_coop_taskrun();
    for b in [defer, coop] {
        if let Ok(r) = b.build(entries) {
            return Ok(r);
        }
    }
    IoUring::new(entries).map_err(|e| EngineError::os(NAME, "io_uring_setup", io_errno(&e)))
}

/// `IORING_ENTER_GETEVENTS`, `IORING_ENTER_SQ_WAKEUP`, `IORING_ENTER_EXT_ARG`,
/// `IORING_ENTER_REGISTERED_RING`.
const ENTER_GETEVENTS: u32 = 1;
const ENTER_SQ_WAKEUP: u32 = 2;
const ENTER_EXT_ARG: u32 = 8;
const ENTER_REGISTERED_RING: u32 = 16;
/// `IORING_REGISTER_RING_FDS`, `IORING_UNREGISTER_RING_FDS`.
const REGISTER_RING_FDS: libc::c_uint = 20;
const UNREGISTER_RING_FDS: libc::c_uint = 21;

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// Register the ring's own descriptor with the calling thread (5.18+), so
/// each io_uring_enter names it by index and the kernel skips the file
/// lookup and reference count every call costs (t/io_uring's default; ~1% of
/// a page-cache read at QD32). The index belongs to the thread: the engine is
/// opened, driven and dropped by its worker thread, as a SINGLE_ISSUER ring
/// must be anyway. `None` where the kernel cannot (the plain descriptor is used).
fn register_ring(ring: &IoUring) -> Option<u32> {
    let mut up = RsrcUpdate { offset: u32::MAX, resv: 0, data: ring.as_raw_fd() as u64 };
    // SAFETY: one io_uring_rsrc_update, which the kernel fills in with the index.
    let r = unsafe { libc::syscall(libc::SYS_io_uring_register, ring.as_raw_fd(), REGISTER_RING_FDS, &mut up as *mut RsrcUpdate, 1) };
    (r == 1).then_some(up.offset)
}

impl Drop for Uring {
    fn drop(&mut self) {
        // Registered, the ring would otherwise stay open (with its files)
        // until the thread exits.
        if let Some(index) = self.ring_index {
            let up = RsrcUpdate { offset: index, resv: 0, data: 0 };
            // SAFETY: one io_uring_rsrc_update naming this thread's registration.
            unsafe { libc::syscall(libc::SYS_io_uring_register, self.ring.as_raw_fd(), UNREGISTER_RING_FDS, &up as *const RsrcUpdate, 1) };
        }
    }
}

impl Uring {
    /// Submit what is queued and collect what completed, without waiting.
    /// It must ask for events: on a DEFER_TASKRUN ring completed I/O reaches
    /// the completion queue only when the task enters the kernel to get
    /// events. Without it a paced (fixed-rate) worker, which polls between
    /// arrivals, saw its completions only once every slot was busy: measured
    /// 2.7 ms instead of 37 us issue-to-completion at 20k IOPS, QD 64.
    fn poll(&mut self) -> Result<(), EngineError> {
        let to_submit = self.ring.submission().len() as u32;
        // A submission-polling kernel thread that went to sleep must be woken.
        let wake = if self.ring.submission().need_wakeup() { ENTER_SQ_WAKEUP } else { 0 };
        // SAFETY: no argument is passed; the queued entries point at buffers
        // and files that stay valid until their completions are reaped.
        let r = unsafe { self.raw_enter(to_submit, 0, ENTER_GETEVENTS | wake, None) };
        match r {
            Ok(_) => self.queued = 0,
            Err(e) if matches!(io_errno(&e), libc::EINTR | libc::EBUSY | libc::EAGAIN) => {
                self.queued = self.ring.submission().len() as u32;
            }
            Err(e) => return Err(EngineError::os(NAME, "io_uring_enter", io_errno(&e))),
        }
        Ok(())
    }

    /// Submit every queued entry but the newest, without waiting.
    fn submit_older(&mut self) -> Result<(), EngineError> {
        let older = self.queued - 1;
        // SAFETY: no argument is passed; the entries point at buffers and
        // files that stay valid until their completions are reaped.
        match unsafe { self.raw_enter(older, 0, 0, None) } {
            Ok(n) => self.queued -= (n as u32).min(older),
            Err(e) if matches!(io_errno(&e), libc::EINTR | libc::EBUSY | libc::EAGAIN) => {}
            Err(e) => return Err(EngineError::os(NAME, "io_uring_enter", io_errno(&e))),
        }
        Ok(())
    }

    /// io_uring_enter through the registered ring index when there is one.
    ///
    /// # Safety
    /// As [`io_uring::Submitter::enter`]: the queued entries' buffers and
    /// files stay valid until their completions are reaped.
    #[inline]
    unsafe fn raw_enter(&self, to_submit: u32, min: u32, flags: u32, args: Option<&types::SubmitArgs>) -> std::io::Result<usize> {
        let Some(index) = self.ring_index else {
            // SAFETY: the caller's promise.
            return unsafe { self.ring.submitter().enter(to_submit, min, flags, args) };
        };
        let (arg, size) = match args {
            Some(a) => (a as *const types::SubmitArgs as *const libc::c_void, std::mem::size_of::<types::SubmitArgs>()),
            None => (std::ptr::null(), 0),
        };
        let flags = flags | ENTER_REGISTERED_RING;
        // SAFETY: the caller's promise; `arg` is null or points at `size` bytes.
        match unsafe { libc::syscall(libc::SYS_io_uring_enter, index, to_submit, min, flags, arg, size) } {
            -1 => Err(std::io::Error::last_os_error()),
            n => Ok(n as usize),
        }
    }

    /// One io_uring_enter: submit what is queued, wait for `want` completions.
    fn enter(&mut self, want: usize, timeout: Option<Duration>) -> Result<(), EngineError> {
        let ts = timeout.filter(|_| want > 0).map(types::Timespec::from);
        let args = ts.as_ref().map(|ts| types::SubmitArgs::new().timespec(ts));
        let r = if self.sqpoll {
            // The crate decides whether the polling kernel thread needs a call at all.
            match &args {
                Some(args) => self.ring.submitter().submit_with_args(want, args),
                None => self.ring.submit_and_wait(want),
            }
        } else {
            // Always with GETEVENTS: with nothing to wait for it only runs
            // deferred completion work, which the crate asks for too whenever
            // the kernel flags some (or an overflowed completion queue).
            let flags = ENTER_GETEVENTS | if args.is_some() { ENTER_EXT_ARG } else { 0 };
            let len = self.ring.submission().len() as u32;
            // SAFETY: as raw_enter's; `args` lives across the call.
            unsafe { self.raw_enter(len, want as u32, flags, args.as_ref()) }
        };
        match r {
            Ok(_) => self.queued = 0,
            Err(e) if matches!(io_errno(&e), libc::ETIME | libc::EINTR | libc::EBUSY) => {
                self.queued = self.ring.submission().len() as u32;
            }
            Err(e) => return Err(EngineError::os(NAME, "io_uring_enter", io_errno(&e))),
        }
        Ok(())
    }
}

impl Engine for Uring {
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if !matches!(req.op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim) {
            return Err(crate::unsupported_op(NAME, req.op));
        }
        self.trim_len[req.slot as usize] = if req.op == OpKind::Trim { req.len } else { 0 };
        let entry = self.build_entry(&req);
        // SAFETY: the buffer and file stay valid until the completion is reaped.
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.ring.submit().map_err(|e| EngineError::os(NAME, "io_uring_enter", io_errno(&e)))?;
        }
        self.queued += 1;
        if self.batch > 1 || self.sqpoll || self.each {
            // fio's commit: io_uring_enter(queued, 0, GETEVENTS), after
            // which the worker stamps the I/O's issue (its slat ends).
            if self.queued >= self.batch {
                self.enter(0, None)?;
            }
        } else if self.queued >= 2 {
            // One at a time, as fio, but the newest entry waits for the
            // worker's next submit_and_reap, which always follows a round of
            // queueing: it goes in with the wait, one io_uring_enter for both
            // (t/io_uring's way), where submitting each at once cost a round
            // of k I/Os k + 1 calls. The kernel takes entries from the head,
            // so this submits all but the newest.
            self.submit_older()?;
        }
        Ok(())
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let ready = self.ring.completion().len() as u32;
        if min == 0 {
            self.poll()?;
        } else if self.queued > 0 || ready < min {
            let want = min.saturating_sub(ready) as usize;
            self.enter(want, timeout)?;
        }
        // As fio's io_uring getevents: at most iodepth_batch_complete_max
        // (and at least what was waited for), so each completion's slot is
        // refilled before the next is taken.
        let take = self.reap_max.max(min as usize);
        for cqe in self.ring.completion().take(take) {
            let slot = cqe.user_data() as u32;
            let rc = match (cqe.result(), self.trim_len.get(slot as usize)) {
                (0, Some(&len)) if len > 0 => len as i64,
                (rc, _) => rc as i64,
            };
            out.push(Completion::from_rc(slot, rc));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn config() -> UringConfig {
        UringConfig { registerfiles: true, fixedbufs: Some(false), sqthread_poll: false, batch: None, submit_each: false }
    }

    /// More engines than a thread may register rings (16) are opened, used
    /// and dropped in turn on one thread: each registers its ring (so every
    /// enter goes by index) and its drop gives the place back.
    #[test]
    fn each_engine_registers_its_ring_and_gives_it_back() {
        let path = std::env::temp_dir().join(format!("sb-uring-reg-{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.write_all(&[0x5a; 8192]).unwrap();
        let mut mem = vec![0u8; 4 * 4096];
        let buffers = Buffers { base: mem.as_mut_ptr(), slot_len: 4096, slots: 4 };
        let fds = [f.as_raw_fd()];
        let setup = WorkerSetup {
            fds: &fds,
            paths: &[],
            buffers,
            queue_depth: 4,
            reap_max: 4,
            direct: false,
            object_names: None,
            keep_reads: true,
            stop: &|| false,
            worker: 0,
        };
        for round in 0..20 {
            let mut e = Uring::open(&config(), &setup).unwrap();
            assert!(e.ring_index.is_some(), "round {round}: the ring was not registered (kernel 5.18+ can)");
            let mut done = Vec::new();
            for slot in 0..2 {
                e.queue(IoRequest {
                    op: OpKind::Read,
                    data_only: false,
                    file: 0,
                    whole: false,
                    offset: 4096 * slot as u64,
                    len: 4096,
                    slot,
                    ioprio: 0,
                })
                .unwrap();
            }
            while done.len() < 2 {
                e.submit_and_reap(1, Some(Duration::from_secs(5)), &mut done).unwrap();
            }
            assert!(done.iter().all(|c| c.result == Ok(4096)), "round {round}: {done:?}");
        }
        assert!(mem[..8192].iter().all(|b| *b == 0x5a), "the reads landed in slots 0 and 1");
        std::fs::remove_file(&path).unwrap();
    }
}
