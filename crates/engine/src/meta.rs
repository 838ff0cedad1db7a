//! fio's file-system metadata engines: each operation is one system call on
//! one of the job's files instead of a transfer, measured like an I/O, so
//! the figures are creates, stats, deletes or truncates per second and
//! their latency (what mdtest measures on a file system, CephFS or NFS).
//!
//! - `filecreate`: open(O_CREAT | O_RDWR, 0600) and close; the runner
//!   leaves the files to it (they must not exist before the run).
//! - `filestat`: stat, lstat or statx (`stat_type`) of a laid-out file.
//! - `filedelete`: unlink of a laid-out file (the runner's overwrite rules
//!   apply: a delete destroys the file as a write would its data).
//! - `ftruncate`: ftruncate(fd, offset) of an open file, on the pattern's
//!   writes (fio's engines/ftruncate.c; the block size is not used).
//!
//! The first three get their files' paths, one operation per file per pass
//! (the plan makes each file one block); ftruncate gets descriptors.

use crate::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

/// What a metadata engine does to a job's files, and how the runner hands
/// them over ([`EngineFactory::file_ops`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileOps {
    /// The one operation every I/O of the job becomes.
    pub op: OpKind,
    /// The runner lays the files out before the run (stat, delete,
    /// truncate); otherwise they must not exist yet (create).
    pub laid_out: bool,
    /// The runner opens them and passes descriptors (truncate); otherwise
    /// the engine works on their paths and the runner leaves them closed.
    pub opened: bool,
}

/// Which stat call `filestat` makes (fio's `stat_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatType {
    Stat,
    Lstat,
    Statx,
}

const STAT_TYPE: OptionInfo = OptionInfo {
    name: "stat_type",
    kind: Kind::Choice(&["stat", "lstat", "statx"]),
    default: "stat",
    help: "filestat: the call each operation makes: stat, lstat or statx (fio's stat_type)",
};

const CAPS: Capabilities =
    Capabilities { queued: false, direct_io: true, needs_files: true, does_io: true, blocks: true, objects: false, ordered: true };

/// One of the four engines, by the operation it carries out.
pub struct MetaFactory {
    name: &'static str,
    /// fio's name for the engine (the same).
    fio: &'static [FioName],
    description: &'static str,
    ops: FileOps,
}

pub const FILECREATE: MetaFactory = MetaFactory {
    name: "filecreate",
    fio: &[FioName { name: "filecreate", note: None }],
    description: "creates each of the job's files (open with O_CREAT, then close) as the operation (fio's filecreate)",
    ops: FileOps { op: OpKind::Create, laid_out: false, opened: false },
};
pub const FILESTAT: MetaFactory = MetaFactory {
    name: "filestat",
    fio: &[FioName { name: "filestat", note: None }],
    description: "stats each of the job's laid-out files as the operation: stat, lstat or statx (fio's filestat)",
    ops: FileOps { op: OpKind::Stat, laid_out: true, opened: false },
};
pub const FILEDELETE: MetaFactory = MetaFactory {
    name: "filedelete",
    fio: &[FioName { name: "filedelete", note: None }],
    description: "unlinks each of the job's laid-out files as the operation (fio's filedelete)",
    ops: FileOps { op: OpKind::Delete, laid_out: true, opened: false },
};
pub const FTRUNCATE: MetaFactory = MetaFactory {
    name: "ftruncate",
    fio: &[FioName { name: "ftruncate", note: None }],
    description: "truncates the job's file to each write's offset as the operation (fio's ftruncate); reads are not supported",
    ops: FileOps { op: OpKind::Truncate, laid_out: true, opened: true },
};

impl EngineFactory for MetaFactory {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fio_names(&self) -> &'static [FioName] {
        self.fio
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn capabilities(&self) -> Capabilities {
        CAPS
    }
    fn options(&self) -> &'static [OptionInfo] {
        match self.ops.op {
            OpKind::Stat => std::slice::from_ref(&STAT_TYPE),
            _ => &[],
        }
    }
    fn supports(&self, op: OpKind) -> bool {
        // The pattern's reads and writes all become the engine's operation;
        // ftruncate, as fio's, truncates on writes only.
        match self.ops.op {
            OpKind::Truncate => matches!(op, OpKind::Write | OpKind::Truncate),
            mine => matches!(op, OpKind::Read | OpKind::Write) || op == mine,
        }
    }
    fn file_ops(&self) -> Option<FileOps> {
        Some(self.ops)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(self.name, self.options(), options)?;
        let stat = match options.get("stat_type").map(String::as_str) {
            None | Some("stat") => StatType::Stat,
            Some("lstat") => StatType::Lstat,
            Some("statx") => StatType::Statx,
            Some(other) => {
                return Err(EngineError::BadOption {
                    engine: self.name,
                    option: "stat_type".into(),
                    message: format!("'{other}' is not a stat call; give stat, lstat or statx"),
                })
            }
        };
        Ok(Arc::new(MetaConfig { name: self.name, op: self.ops.op, stat }))
    }
}

struct MetaConfig {
    name: &'static str,
    op: OpKind,
    stat: StatType,
}

impl EngineConfig for MetaConfig {
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let paths = setup
            .paths
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| EngineError::failed(self.name, "a file name holds a NUL byte", e))?;
        Ok(Box::new(Meta { name: self.name, op: self.op, stat: self.stat, paths, fds: setup.fds.to_vec(), done: Vec::with_capacity(1) }))
    }
}

struct Meta {
    name: &'static str,
    op: OpKind,
    stat: StatType,
    paths: Vec<CString>,
    fds: Vec<RawFd>,
    done: Vec<Completion>,
}

/// 0 or -errno from a system call's return.
fn rc(r: libc::c_int) -> i64 {
    if r >= 0 {
        return 0;
    }
    -(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
}

impl Meta {
    fn path(&self, file: u32) -> Result<&CString, EngineError> {
        self.paths.get(file as usize).ok_or_else(|| EngineError::Unavailable { engine: self.name, message: format!("no file {file}") })
    }

    /// One operation on one file: 0 or -errno.
    fn carry_out(&self, req: &IoRequest) -> Result<i64, EngineError> {
        // SAFETY (every call below): NUL-terminated paths owned by self,
        // buffers on the stack of the right type, descriptors the runner opened.
        Ok(match (self.op, req.op) {
            (OpKind::Create, OpKind::Create) => {
                let fd = unsafe { libc::open(self.path(req.file)?.as_ptr(), libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC, 0o600) };
                if fd >= 0 {
                    unsafe { libc::close(fd) };
                }
                rc(fd)
            }
            (OpKind::Stat, OpKind::Stat) => self.stat(self.path(req.file)?),
            (OpKind::Delete, OpKind::Delete) => rc(unsafe { libc::unlink(self.path(req.file)?.as_ptr()) }),
            (OpKind::Truncate, OpKind::Truncate) => {
                let fd = *self.fds.get(req.file as usize).ok_or_else(|| crate::unsupported_op(self.name, req.op))?;
                rc(unsafe { libc::ftruncate(fd, req.offset as libc::off_t) })
            }
            (_, op) => return Err(crate::unsupported_op(self.name, op)),
        })
    }

    fn stat(&self, path: &CString) -> i64 {
        // SAFETY: see carry_out.
        unsafe {
            match self.stat {
                StatType::Stat => {
                    let mut st: libc::stat = std::mem::zeroed();
                    rc(libc::stat(path.as_ptr(), &mut st))
                }
                StatType::Lstat => {
                    let mut st: libc::stat = std::mem::zeroed();
                    rc(libc::lstat(path.as_ptr(), &mut st))
                }
                StatType::Statx => {
                    let mut st: libc::statx = std::mem::zeroed();
                    rc(libc::statx(libc::AT_FDCWD, path.as_ptr(), 0, libc::STATX_ALL, &mut st))
                }
            }
        }
    }
}

impl Engine for Meta {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let r = self.carry_out(&req)?;
        // A metadata operation moves no bytes: it counts as the file's
        // length done (fio counts each as one block of the file).
        let result = if r < 0 { r } else { req.len as i64 };
        self.done.push(Completion::from_rc(req.slot, result));
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
    use std::path::PathBuf;

    fn engine(factory: &MetaFactory, options: &[(&str, &str)], paths: &[PathBuf]) -> Box<dyn Engine> {
        let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let config = factory.configure(&options).unwrap();
        let mut buf = [0u8; 4096];
        let buffers = Buffers { base: buf.as_mut_ptr(), slot_len: 4096, slots: 1 };
        let setup = WorkerSetup {
            fds: &[],
            paths,
            buffers,
            queue_depth: 1,
            reap_max: 1,
            direct: false,
            object_names: None,
            keep_reads: false,
            stop: &|| false,
            worker: 0,
        };
        config.open(&setup).unwrap()
    }

    fn run(e: &mut Box<dyn Engine>, op: OpKind) -> Completion {
        e.queue(IoRequest { op, data_only: false, file: 0, whole: false, offset: 0, len: 4096, slot: 0, ioprio: 0 }).unwrap();
        let mut out = Vec::new();
        e.submit_and_reap(0, None, &mut out).unwrap();
        out[0]
    }

    #[test]
    fn create_stat_and_delete_one_file_each_time() {
        let dir = std::env::temp_dir().join(format!("storbench-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = vec![dir.join("f")];
        assert!(run(&mut engine(&FILECREATE, &[], &paths), OpKind::Create).result.is_ok());
        assert!(paths[0].is_file());
        for kind in ["stat", "lstat", "statx"] {
            assert_eq!(run(&mut engine(&FILESTAT, &[("stat_type", kind)], &paths), OpKind::Stat).result, Ok(4096), "{kind}");
        }
        assert!(run(&mut engine(&FILEDELETE, &[], &paths), OpKind::Delete).result.is_ok());
        assert!(!paths[0].exists());
        // A second delete is an I/O error counted as ENOENT, not a failed run.
        let again = run(&mut engine(&FILEDELETE, &[], &paths), OpKind::Delete);
        assert_eq!(again.result, Err(storbench_metrics::IoFailure::errno(libc::ENOENT)));
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_bad_stat_type_is_named() {
        let options = [("stat_type".to_string(), "fstat".to_string())].into_iter().collect();
        let e = FILESTAT.configure(&options).err().unwrap().to_string();
        assert!(e.contains("stat_type") && e.contains("stat, lstat or statx"), "{e}");
    }
}
