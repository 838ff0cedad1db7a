//! The `io_uring` engine: batched submit and reap, registered files and buffers.
//!
//! A worker queues a batch of SQEs and submits them with one `io_uring_enter`,
//! which also waits for the first completion; completions are drained from the
//! CQ ring without further system calls. Registered files and buffers
//! (`registerfiles`, `fixedbufs`, both on by default) save the kernel a file
//! lookup and a page pinning per I/O.

use crate::*;
use io_uring::{opcode, squeue, types, IoUring};

pub struct UringFactory;

const OPTIONS: &[OptionDesc] = &[
    OptionDesc { name: "registerfiles", help: "register the files with the ring (default 1)" },
    OptionDesc { name: "fixedbufs", help: "register the I/O buffers with the ring (default 1)" },
    OptionDesc { name: "sqthread_poll", help: "let a kernel thread poll the submission queue (default 0; costs a CPU)" },
];

const NAME: &str = "io_uring";

impl EngineFactory for UringFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "Linux io_uring, batched submission, registered files and buffers"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: true }
    }
    fn options(&self) -> &'static [OptionDesc] {
        OPTIONS
    }
    fn validate(&self, options: &BTreeMap<String, String>) -> Result<(), EngineError> {
        check_known(NAME, OPTIONS, options)?;
        for o in OPTIONS {
            bool_option(NAME, options, o.name, false)?;
        }
        Ok(())
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Uring::open(setup).map(|u| Box::new(u) as Box<dyn Engine>)
    }
}

struct Uring {
    ring: IoUring,
    fds: Vec<RawFd>,
    buffers: Buffers,
    fixed_files: bool,
    fixed_bufs: bool,
    queued: u32,
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl Uring {
    fn open(setup: &WorkerSetup) -> Result<Uring, EngineError> {
        let fixed_files = bool_option(NAME, setup.options, "registerfiles", true)?;
        let fixed_bufs = bool_option(NAME, setup.options, "fixedbufs", true)?;
        let sqpoll = bool_option(NAME, setup.options, "sqthread_poll", false)?;
        let entries = setup.queue_depth.next_power_of_two().max(2);
        let ring = build_ring(entries, sqpoll)?;
        if fixed_files {
            ring.submitter().register_files(setup.fds).map_err(|e| EngineError::os(NAME, "io_uring_register(FILES)", io_errno(&e)))?;
        }
        if fixed_bufs {
            let iov = libc::iovec {
                iov_base: setup.buffers.base as *mut libc::c_void,
                iov_len: setup.buffers.slot_len * setup.buffers.slots,
            };
            // SAFETY: the buffers outlive the ring (the worker drops the engine first).
            unsafe { ring.submitter().register_buffers(&[iov]) }.map_err(|e| {
                EngineError::os(NAME, "io_uring_register(BUFFERS) (try fixedbufs=0)", io_errno(&e))
            })?;
        }
        Ok(Uring { ring, fds: setup.fds.to_vec(), buffers: setup.buffers, fixed_files, fixed_bufs, queued: 0 })
    }

    fn build_entry(&self, req: &IoRequest) -> squeue::Entry {
        let buf = self.buffers.slot(req.slot);
        let entry = match (req.op, self.fixed_files) {
            (OpKind::Read, true) => self.read(types::Fixed(req.file), buf, req),
            (OpKind::Read, false) => self.read(types::Fd(self.fds[req.file as usize]), buf, req),
            (OpKind::Write, true) => self.write(types::Fixed(req.file), buf, req),
            (OpKind::Write, false) => self.write(types::Fd(self.fds[req.file as usize]), buf, req),
            (OpKind::Sync, fixed) => {
                let flags = if req.data_only { types::FsyncFlags::DATASYNC } else { types::FsyncFlags::empty() };
                if fixed {
                    opcode::Fsync::new(types::Fixed(req.file)).flags(flags).build()
                } else {
                    opcode::Fsync::new(types::Fd(self.fds[req.file as usize])).flags(flags).build()
                }
            }
        };
        entry.user_data(req.slot as u64)
    }

    fn read(&self, fd: impl Into<Target>, buf: *mut u8, req: &IoRequest) -> squeue::Entry {
        match (fd.into(), self.fixed_bufs) {
            (Target::Fixed(f), true) => opcode::ReadFixed::new(f, buf, req.len, 0).offset(req.offset).build(),
            (Target::Fixed(f), false) => opcode::Read::new(f, buf, req.len).offset(req.offset).build(),
            (Target::Fd(f), true) => opcode::ReadFixed::new(f, buf, req.len, 0).offset(req.offset).build(),
            (Target::Fd(f), false) => opcode::Read::new(f, buf, req.len).offset(req.offset).build(),
        }
    }

    fn write(&self, fd: impl Into<Target>, buf: *mut u8, req: &IoRequest) -> squeue::Entry {
        match (fd.into(), self.fixed_bufs) {
            (Target::Fixed(f), true) => opcode::WriteFixed::new(f, buf, req.len, 0).offset(req.offset).build(),
            (Target::Fixed(f), false) => opcode::Write::new(f, buf, req.len).offset(req.offset).build(),
            (Target::Fd(f), true) => opcode::WriteFixed::new(f, buf, req.len, 0).offset(req.offset).build(),
            (Target::Fd(f), false) => opcode::Write::new(f, buf, req.len).offset(req.offset).build(),
        }
    }
}

enum Target {
    Fixed(types::Fixed),
    Fd(types::Fd),
}
impl From<types::Fixed> for Target {
    fn from(f: types::Fixed) -> Self {
        Target::Fixed(f)
    }
}
impl From<types::Fd> for Target {
    fn from(f: types::Fd) -> Self {
        Target::Fd(f)
    }
}

fn build_ring(entries: u32, sqpoll: bool) -> Result<IoUring, EngineError> {
    let mut b = IoUring::builder();
    if sqpoll {
        b.setup_sqpoll(2000);
    } else {
        // Cheaper completions when only this thread touches the ring (5.19+/6.0+).
        b.setup_coop_taskrun().setup_single_issuer();
    }
    match b.build(entries) {
        Ok(r) => Ok(r),
        Err(e) if io_errno(&e) == libc::EINVAL && !sqpoll => {
            IoUring::new(entries).map_err(|e| EngineError::os(NAME, "io_uring_setup", io_errno(&e)))
        }
        Err(e) => Err(EngineError::os(NAME, "io_uring_setup", io_errno(&e))),
    }
}

impl Engine for Uring {
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let entry = self.build_entry(&req);
        // SAFETY: the buffer and file stay valid until the completion is reaped.
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.ring.submit().map_err(|e| EngineError::os(NAME, "io_uring_enter", io_errno(&e)))?;
        }
        self.queued += 1;
        Ok(())
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let ready = self.ring.completion().len() as u32;
        if self.queued > 0 || ready < min {
            let want = min.saturating_sub(ready) as usize;
            let r = match timeout {
                Some(t) if want > 0 => {
                    let ts = types::Timespec::from(t);
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(want, &args)
                }
                _ => self.ring.submit_and_wait(want),
            };
            match r {
                Ok(_) => self.queued = 0,
                Err(e) if matches!(io_errno(&e), libc::ETIME | libc::EINTR | libc::EBUSY) => {
                    self.queued = self.ring.submission().len() as u32;
                }
                Err(e) => return Err(EngineError::os(NAME, "io_uring_enter", io_errno(&e))),
            }
        }
        for cqe in self.ring.completion() {
            out.push(Completion { slot: cqe.user_data() as u32, result: cqe.result() as i64 });
        }
        Ok(())
    }
}
