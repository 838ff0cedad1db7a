//! The `falloc` engine, as fio's: each operation is a fallocate(2) on the
//! job's file instead of a transfer. A write allocates its range (the file
//! grows if it ends beyond it), a read preallocates it keeping the size
//! (FALLOC_FL_KEEP_SIZE), a trim punches a hole; a sync is an fsync. No
//! data moves, so what it measures is the file system's allocator (fio's
//! falloc.fio fragments a file this way before timing I/O on it).

use crate::*;

pub struct FallocFactory;

const NAME: &str = "falloc";

impl EngineFactory for FallocFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: NAME, note: None }]
    }
    fn description(&self) -> &'static str {
        "fallocate as the I/O (fio's falloc): writes allocate, reads preallocate keeping the size, trims punch holes; no data moves"
    }
    fn capabilities(&self) -> Capabilities {
        // O_DIRECT changes nothing for fallocate; falloc.fio sets buffered=0 (direct) and fio runs it.
        Capabilities { queued: false, direct_io: true, needs_files: true, does_io: true, blocks: true, objects: false, ordered: true }
    }
    fn supports(&self, op: OpKind) -> bool {
        matches!(op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options(NAME, options)?;
        Ok(Arc::new(FallocConfig))
    }
}

struct FallocConfig;

impl EngineConfig for FallocConfig {
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(Falloc { fds: setup.fds.to_vec(), done: Vec::with_capacity(4) }))
    }
}

struct Falloc {
    fds: Vec<RawFd>,
    done: Vec<Completion>,
}

/// fio's mode for each direction (engines/falloc.c).
fn mode(op: OpKind) -> Option<libc::c_int> {
    match op {
        OpKind::Read => Some(libc::FALLOC_FL_KEEP_SIZE),
        OpKind::Write => Some(0),
        OpKind::Trim => Some(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE),
        _ => None,
    }
}

/// A system call's result as a completion's: the length done, or -errno.
fn outcome(rc: libc::c_int, len: u32) -> i64 {
    if rc == 0 {
        return len as i64;
    }
    -(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
}

impl Engine for Falloc {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let fd = self.fds[req.file as usize];
        let rc = match (req.op, mode(req.op)) {
            // SAFETY: no memory is passed; a bad descriptor is an error return.
            (_, Some(m)) => loop {
                let rc = unsafe { libc::fallocate(fd, m, req.offset as libc::off_t, req.len as libc::off_t) };
                if rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break outcome(rc, req.len);
                }
            },
            // SAFETY: as above.
            (OpKind::Sync, None) => outcome(unsafe { libc::fsync(fd) }, 0),
            (op, None) => return Err(crate::unsupported_op(NAME, op)),
        };
        self.done.push(Completion::from_rc(req.slot, rc));
        Ok(())
    }

    fn submit_and_reap(&mut self, _min: u32, _t: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Blocks the file system allocated to `f`, in 512-byte units.
    fn blocks(f: &std::fs::File) -> u64 {
        use std::os::unix::fs::MetadataExt;
        f.metadata().unwrap().blocks()
    }

    #[test]
    fn writes_allocate_reads_keep_the_size_and_trims_punch_holes() {
        let path = std::env::temp_dir().join(format!("storbench-falloc-{}", std::process::id()));
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut e = Falloc { fds: vec![f.as_raw_fd()], done: Vec::new() };
        let mut out = Vec::new();
        let req = |op, offset, len| IoRequest { op, data_only: false, file: 0, whole: false, offset, len, slot: 0, ioprio: 0 };
        e.queue(req(OpKind::Write, 0, 1 << 20)).unwrap();
        e.submit_and_reap(0, None, &mut out).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 1 << 20);
        let allocated = blocks(&f);
        assert!(allocated >= 2048, "{allocated}");
        e.queue(req(OpKind::Read, 1 << 20, 1 << 20)).unwrap();
        e.queue(req(OpKind::Trim, 0, 512 << 10)).unwrap();
        e.submit_and_reap(0, None, &mut out).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 1 << 20, "a read keeps the size");
        assert!(blocks(&f) < allocated + 2048, "the trim gave back half the first MiB");
        assert!(out.iter().all(|c| c.result.is_ok_and(|n| n > 0)), "{out:?}");
    }
}
