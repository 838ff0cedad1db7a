//! Files and block devices as targets: creation, layout, safety, opening.
//!
//! storbench never writes to data it did not create unless told to: an existing
//! regular file is writable only if storbench created it (marked with the
//! `user.storbench` extended attribute, or a `.name.storbench` marker file where
//! the filesystem has no user xattrs), and a block device only if it is blank
//! and not in use ([`device`]). Reads are always allowed. New files are laid
//! out with incompressible data before use when the job reads them (or
//! overwrites), as fio does, so reads hit real blocks; a job that only writes
//! gets only the room `fallocate` makes (`Need::room_only`) and writes it
//! itself, as under fio.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use storbench_model::{FileKind, TargetFile};
use storbench_workload::data::Filler;
use storbench_workload::rng::Rng;
use storbench_workload::{DataPattern, Fallocate};

mod blkid;
mod device;
pub mod diskstats;
pub mod extents;

const MARKER_XATTR: &str = "user.storbench";
const LAYOUT_CHUNK: usize = 1 << 20;
/// Layouts are written back to the disk in steps of this many bytes.
const FLUSH_EVERY: u64 = 128 << 20;

/// Why a target could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Refused for the data's safety; the message says how to allow it.
    #[error("refusing to write to {path}: {reason}")]
    Refused { path: PathBuf, reason: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: {call} failed: {source}")]
    Os { path: PathBuf, call: &'static str, source: std::io::Error },
    /// Stopped (Ctrl-C) while laying the file out; what was made is removed.
    #[error("{path}: interrupted while laying it out")]
    Interrupted { path: PathBuf },
}

impl TargetError {
    fn os(path: &Path, call: &'static str, source: std::io::Error) -> TargetError {
        TargetError::Os { path: path.to_path_buf(), call, source }
    }
    /// Whether the error is the user's input (exit code 2) rather than the system's.
    pub fn is_user_error(&self) -> bool {
        !matches!(self, TargetError::Os { .. })
    }
    pub fn is_interrupted(&self) -> bool {
        matches!(self, TargetError::Interrupted { .. })
    }
    /// Whose fault it is (see [`storbench_model::Fault`]): a refused or
    /// unusable path is the input's, a failed call the system's.
    pub fn fault(&self) -> storbench_model::Fault {
        use storbench_model::Fault;
        match self {
            TargetError::Refused { .. } | TargetError::Invalid { .. } => Fault::Input,
            TargetError::Os { .. } => Fault::System,
            TargetError::Interrupted { .. } => Fault::Interrupted,
        }
    }

    /// A refusal that names where a symbolic link leads: `data.dat` linked
    /// to /etc/passwd is refused as that file, and the user sees which.
    fn refused(path: &Path, reason: String) -> TargetError {
        let reason = match std::fs::read_link(path) {
            Ok(to) => format!("it is a symbolic link to {}; {reason}", to.display()),
            Err(_) => reason,
        };
        TargetError::Refused { path: path.into(), reason }
    }
}

/// What the job needs from one target path.
#[derive(Clone, Debug)]
pub struct Need {
    /// Bytes from the start of the target that the job touches (offset + size),
    /// or `None` to use the whole existing file or device.
    pub bytes: Option<u64>,
    pub writes: bool,
    /// The job reads (or reads back what it wrote).
    pub reads: bool,
    pub allow_overwrite: bool,
    /// Make room this way instead of writing data (a job that neither
    /// reads nor overwrites: [`storbench_workload::JobSpec::room_only`]).
    pub room_only: Option<Fallocate>,
}

/// Check, create and lay out one target; `stop` is asked between chunks of
/// the layout, which ends (removing a file it made) when it says so.
pub fn prepare(path: &Path, need: &Need, stop: &dyn Fn() -> bool) -> Result<TargetFile, TargetError> {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => prepare_device(path, need, stop),
        Ok(m) if m.is_file() => prepare_existing_file(path, m.len(), need, stop),
        Ok(m) if m.file_type().is_char_device() => prepare_char_device(path, m.rdev(), need),
        Ok(_) => Err(TargetError::Invalid {
            path: path.into(),
            message: "is neither a regular file, a block device nor /dev/null or /dev/zero".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_file(path, need, stop),
        Err(e) => Err(TargetError::os(path, "stat", e)),
    }
}

fn create_file(path: &Path, need: &Need, stop: &dyn Fn() -> bool) -> Result<TargetFile, TargetError> {
    let size = need.bytes.ok_or_else(|| TargetError::Invalid {
        path: path.into(),
        message: "does not exist and no size was given; set size (e.g. --size 1g) to create it".into(),
    })?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        return Err(TargetError::Invalid { path: path.into(), message: format!("its directory {} does not exist", dir.display()) });
    }
    let mut f = OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| TargetError::os(path, "create", e))?;
    let made = mark_created(&f, path).and_then(|_| make_room(&mut f, path, 0, size, need, stop));
    if let Err(e) = made {
        // No partial writes: a file we could not finish is not left behind.
        let _ = remove_created(path);
        return Err(e);
    }
    let never_written = Some(if need.room_only.is_some() { size } else { 0 });
    Ok(TargetFile { path: path.into(), kind: FileKind::File, size, created: true, note: None, never_written, whole: 0 })
}

fn prepare_existing_file(path: &Path, len: u64, need: &Need, stop: &dyn Fn() -> bool) -> Result<TargetFile, TargetError> {
    let ours = is_marked(path);
    if need.writes && !ours && len > 0 && !need.allow_overwrite {
        return Err(TargetError::refused(
            path,
            format!(
                "it exists ({} bytes) and was not created by storbench; its data would be overwritten. \
                 Point storbench at a new file, or pass --allow_overwrite=1 if this data may be destroyed",
                len
            ),
        ));
    }
    let wanted = need.bytes.unwrap_or(len);
    if wanted == 0 {
        return Err(TargetError::Invalid { path: path.into(), message: "is empty; set size to lay it out".into() });
    }
    if wanted > len {
        if !(ours || len == 0 || need.allow_overwrite) {
            return Err(TargetError::Invalid {
                path: path.into(),
                message: format!(
                    "is {len} bytes but the job needs {wanted}; storbench only extends files it created \
                     (lower size, or pass --allow_overwrite=1)"
                ),
            });
        }
        let mut f = OpenOptions::new().write(true).open(path).map_err(|e| TargetError::os(path, "open", e))?;
        if len == 0 && !ours {
            mark_created(&f, path)?;
        }
        make_room(&mut f, path, len, wanted, need, stop)?;
    }
    // A file someone preallocated (or left sparse) reads zeros from no medium.
    let never_written = extents::never_written(path, wanted);
    Ok(TargetFile { path: path.into(), kind: FileKind::File, size: wanted, created: false, note: None, never_written, whole: len })
}

fn prepare_device(path: &Path, need: &Need, stop: &dyn Fn() -> bool) -> Result<TargetFile, TargetError> {
    let f = File::open(path).map_err(|e| TargetError::os(path, "open", e))?;
    let dev_size = device_size(&f).map_err(|e| TargetError::os(path, "ioctl(BLKGETSIZE64)", e))?;
    let size = need.bytes.unwrap_or(dev_size);
    if size > dev_size {
        return Err(TargetError::Invalid {
            path: path.into(),
            message: format!("the job needs {size} bytes but the device has {dev_size}; lower size or offset"),
        });
    }
    let note = if need.writes { check_device_writable(path, &f, dev_size, need, stop)? } else { None };
    Ok(TargetFile { path: path.into(), kind: FileKind::BlockDevice, size, created: false, note, never_written: None, whole: dev_size })
}

/// fio's character-device targets (steadystate.fio writes /dev/null and
/// reads /dev/zero): the kernel's memory devices that hold no data, by
/// device number wherever the node is (major 1: null 3, zero 5, full 7,
/// random 8, urandom 9). They have no size, so the job's is theirs (fio asks
/// for it too); nothing is laid out and nothing is there to destroy. Other
/// character devices are refused: fio would run them, but they are hardware
/// behind no safety check (a disk's SCSI or NVMe generic node, /dev/mem) or
/// wait for input (a terminal).
fn prepare_char_device(path: &Path, rdev: u64, need: &Need) -> Result<TargetFile, TargetError> {
    let memory = libc::major(rdev) == 1 && matches!(libc::minor(rdev), 3 | 5 | 7 | 8 | 9);
    if !memory {
        return Err(TargetError::Invalid {
            path: path.into(),
            message: "is a character device other than /dev/null, /dev/zero, /dev/full or /dev/urandom; \
                      storbench measures those and block devices (give the disk's block device, e.g. /dev/sdX or /dev/nvme0n1)"
                .into(),
        });
    }
    let fails = match libc::minor(rdev) {
        3 if need.reads => Some("reads from /dev/null return nothing (fio fails each with an I/O error); read /dev/zero"),
        7 if need.writes => Some("writes to /dev/full fail with ENOSPC; write /dev/null"),
        _ => None,
    };
    if let Some(why) = fails {
        return Err(TargetError::Invalid { path: path.into(), message: why.into() });
    }
    let size = need.bytes.ok_or_else(|| TargetError::Invalid {
        path: path.into(),
        message: "is a character device and has no size; set size (e.g. --size 128m), as fio asks".into(),
    })?;
    Ok(TargetFile { path: path.into(), kind: FileKind::CharDevice, size, created: false, note: None, never_written: None, whole: 0 })
}

/// A device in use is refused whatever the flags (writing under a mounted
/// file system, live swap or an active volume corrupts more than the device
/// and can hang the kernel's writeback); a device that is not blank unless
/// `allow_overwrite`. Returns what the blank check read, for the run's notes.
fn check_device_writable(
    path: &Path,
    f: &File,
    dev_size: u64,
    need: &Need,
    stop: &dyn Fn() -> bool,
) -> Result<Option<String>, TargetError> {
    let refused = |reason: String| TargetError::refused(path, reason);
    if let Some(why) = device::in_use(path).map_err(|e| TargetError::os(path, "checking whether it is in use", e))? {
        return Err(refused(format!(
            "{why}: writing would destroy a file system or volume in use, and no flag overrides that. \
             Free the device first ({})",
            why.freeing()
        )));
    }
    if need.allow_overwrite {
        return Ok(None);
    }
    let checked = device::contents(path, f, dev_size, stop).map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted => TargetError::Interrupted { path: path.into() },
        _ => TargetError::os(path, "read (checking it is blank)", e),
    })?;
    match checked.holds {
        Some(what) => Err(refused(format!(
            "it holds {what}; the check {}. storbench writes only to blank devices; \
             pass --allow_overwrite=1 if everything on it may be destroyed",
            checked.coverage
        ))),
        None => Ok(Some(format!("{} was checked blank before writing: {}", path.display(), checked.coverage))),
    }
}

fn device_size(f: &File) -> std::io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 into the pointer we pass.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

fn sidecar(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.storbench"))
}

fn mark_created(f: &File, path: &Path) -> Result<(), TargetError> {
    let key = CString::new(MARKER_XATTR).expect("constant has no NUL");
    let value = b"created";
    // SAFETY: valid fd, NUL-terminated key, value pointer/length pair.
    let r = unsafe { libc::fsetxattr(f.as_raw_fd(), key.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    if r == 0 {
        return Ok(());
    }
    std::fs::write(sidecar(path), b"created by storbench\n").map_err(|e| TargetError::os(path, "write marker", e))
}

/// Whether storbench created this file.
pub fn is_marked(path: &Path) -> bool {
    let Ok(cpath) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    let key = CString::new(MARKER_XATTR).expect("constant has no NUL");
    let mut buf = [0u8; 16];
    // SAFETY: valid C strings and buffer.
    let n = unsafe { libc::getxattr(cpath.as_ptr(), key.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (n > 0 && &buf[..n as usize] == b"created") || sidecar(path).exists()
}

/// Data from `from` to `to`, or only the room the job's `fallocate` makes.
fn make_room(f: &mut File, path: &Path, from: u64, to: u64, need: &Need, stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
    match need.room_only {
        None => lay_out(f, path, from, to, stop),
        Some(mode) => allocate(f, path, from, to, mode),
    }
}

/// fio's `fallocate` for a file of `size` bytes (fio's fallocate_file: a
/// native fallocate that fails leaves the file as it was, as in fio).
fn allocate(f: &File, path: &Path, from: u64, size: u64, mode: Fallocate) -> Result<(), TargetError> {
    // Only the new end needs room (a file extended keeps its first bytes).
    check_free_space(f, path, size.saturating_sub(from))?;
    let fd = f.as_raw_fd();
    // SAFETY: plain system calls on a descriptor we own.
    let rc = match mode {
        Fallocate::None => 0,
        Fallocate::Native => unsafe { libc::fallocate(fd, 0, 0, size as i64) },
        Fallocate::Keep => unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, size as i64) },
        Fallocate::Posix => match unsafe { libc::posix_fallocate(fd, 0, size as i64) } {
            0 => 0,
            e => return Err(TargetError::os(path, "posix_fallocate", std::io::Error::from_raw_os_error(e))),
        },
        Fallocate::Truncate => unsafe { libc::ftruncate(fd, size as i64) },
    };
    let e = std::io::Error::last_os_error();
    match (rc, mode) {
        (0, _) => Ok(()),
        // fio ignores a file system without fallocate here: writes extend the file.
        (_, Fallocate::Native) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS)) => Ok(()),
        (_, Fallocate::Truncate) => Err(TargetError::os(path, "ftruncate", e)),
        _ => Err(TargetError::os(path, "fallocate", e)),
    }
}

/// Write incompressible data from `from` to `to`, after checking it fits.
/// Written back to the disk every [`FLUSH_EVERY`] bytes, so a stop request
/// (asked between chunks) is never kept waiting behind gigabytes of dirty
/// pages.
fn lay_out(f: &mut File, path: &Path, from: u64, to: u64, stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
    check_free_space(f, path, to.saturating_sub(from))?;
    let filler = Filler::new(&DataPattern::default());
    let mut buf = vec![0u8; LAYOUT_CHUNK];
    filler.init(&mut buf);
    let mut rng = Rng::new(from ^ to);
    f.seek(SeekFrom::Start(from)).map_err(|e| TargetError::os(path, "seek", e))?;
    let mut at = from;
    while at < to {
        if stop() {
            return Err(TargetError::Interrupted { path: path.into() });
        }
        let n = ((to - at) as usize).min(LAYOUT_CHUNK);
        filler.refresh(&mut buf, n, 0, &mut rng);
        f.write_all(&buf[..n]).map_err(|e| TargetError::os(path, "write (laying out)", e))?;
        at += n as u64;
        if (at - from).is_multiple_of(FLUSH_EVERY) {
            f.sync_data().map_err(|e| TargetError::os(path, "fdatasync (laying out)", e))?;
        }
    }
    f.sync_all().map_err(|e| TargetError::os(path, "fsync (laying out)", e))
}

/// Refuse a layout larger than the free space of the file's file system.
fn check_free_space(f: &File, path: &Path, bytes: u64) -> Result<(), TargetError> {
    // SAFETY: fstatvfs fills the zeroed struct for a valid descriptor.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(f.as_raw_fd(), &mut st) } != 0 {
        return Err(TargetError::os(path, "fstatvfs", std::io::Error::last_os_error()));
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    if bytes > free {
        return Err(TargetError::Invalid {
            path: path.into(),
            message: format!(
                "laying it out needs {} but its file system has {} free; lower size, or use another directory",
                storbench_workload::units::format_amount(bytes),
                storbench_workload::units::format_amount(free)
            ),
        });
    }
    Ok(())
}

/// Remove a file this run created, with its marker.
pub fn remove_created(path: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(sidecar(path));
    std::fs::remove_file(path)
}

/// Open a prepared target for one worker.
///
/// With O_NOATIME (t/io_uring's way; fio uses it on devices only): a
/// benchmark's reads leave the file's access time as it was, and the kernel
/// skips the access-time check each read costs (~1% of a 4 KiB page-cache
/// read, perf). Only the file's owner (or CAP_FOWNER) may ask for it, so on
/// EPERM the file is opened without, as fio does.
pub fn open(p: &TargetFile, writes: bool, direct: bool, sync: storbench_workload::OpenSync) -> Result<File, TargetError> {
    let mut o = OpenOptions::new();
    o.read(true).write(writes);
    let sync_flag = match sync {
        storbench_workload::OpenSync::None => 0,
        storbench_workload::OpenSync::Sync => libc::O_SYNC,
        storbench_workload::OpenSync::Dsync => libc::O_DSYNC,
    };
    let flags = if direct { libc::O_DIRECT } else { 0 } | sync_flag;
    o.custom_flags(flags | libc::O_NOATIME);
    let opened = match o.open(&p.path) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => o.custom_flags(flags).open(&p.path),
        r => r,
    };
    opened.map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            TargetError::Invalid {
                path: p.path.clone(),
                message: "its filesystem does not support direct I/O (tmpfs does not); use direct=0".into(),
            }
        } else {
            TargetError::os(&p.path, "open", e)
        }
    })
}

/// Drop what the page cache holds of a file or device before a job starts
/// (fio `invalidate`): buffered reads then come from storage, not memory.
/// Files: posix_fadvise(DONTNEED), after the layout's fsync nothing of them
/// is dirty. Block devices: BLKFLSBUF as fio does (writes back and drops the
/// device's buffers); without CAP_SYS_ADMIN that is refused and fadvise does
/// what it can.
pub fn drop_cache(f: &File, path: &Path) -> Result<(), TargetError> {
    let fd = f.as_raw_fd();
    let is_block = f.metadata().map(|m| m.file_type().is_block_device()).unwrap_or(false);
    // SAFETY: fd is open for the life of `f`; BLKFLSBUF takes no argument.
    if is_block && unsafe { libc::ioctl(fd, BLKFLSBUF, 0) } == 0 {
        return Ok(());
    }
    // SAFETY: plain advice on an open descriptor.
    match unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        e => Err(TargetError::os(path, "posix_fadvise (invalidate)", std::io::Error::from_raw_os_error(e))),
    }
}

/// Tell the kernel how a file will be read (fio `fadvise_hint`): random
/// access turns readahead off, so a 4 KiB random read costs one 4 KiB read.
/// Advice only: a refusal changes nothing measurable and is not an error.
pub fn advise(f: &File, random: bool) {
    let advice = if random { libc::POSIX_FADV_RANDOM } else { libc::POSIX_FADV_SEQUENTIAL };
    // SAFETY: plain advice on an open descriptor.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
}

/// `_IO(0x12, 97)`: flush a block device's buffer cache.
const BLKFLSBUF: libc::c_ulong = 0x1261;

/// Whether files in `dir` can be opened with O_DIRECT (tmpfs: no).
pub fn direct_io_works(dir: &Path) -> bool {
    let probe = dir.join(format!(".storbench-direct-probe-{}", std::process::id()));
    let ok = OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_DIRECT).open(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("storbench-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        let _ = std::fs::remove_file(sidecar(&d));
        d
    }

    #[test]
    fn creates_marks_and_lays_out_then_reuses() {
        let p = tmp("new");
        let need = Need { bytes: Some(3 << 20), writes: true, reads: false, allow_overwrite: false, room_only: None };
        let t = prepare(&p, &need, &|| false).unwrap();
        assert!(t.created && is_marked(&p));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20);
        let data = std::fs::read(&p).unwrap();
        assert!(data.iter().filter(|b| **b == 0).count() < data.len() / 100, "layout must not be zeros");
        let again = prepare(&p, &need, &|| false).unwrap();
        assert!(!again.created);
        remove_created(&p).unwrap();
        assert!(!sidecar(&p).exists());
    }

    /// A job that only writes gets its new file allocated, not written: the
    /// file has its size and, where the file system tells, no data yet.
    #[test]
    fn a_file_only_written_is_allocated_not_laid_out() {
        let p = tmp("alloc");
        let need = Need { bytes: Some(4 << 20), writes: true, reads: false, allow_overwrite: false, room_only: Some(Fallocate::Native) };
        let t = prepare(&p, &need, &|| false).unwrap();
        assert!(t.created && is_marked(&p));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4 << 20);
        assert_eq!(t.never_written, Some(4 << 20));
        if let Some(never) = extents::never_written(&p, 4 << 20) {
            assert_eq!(never, 4 << 20, "nothing written before the job");
        }
        remove_created(&p).unwrap();
    }

    #[test]
    fn refuses_to_write_someone_elses_file_but_reads_it() {
        let p = tmp("theirs");
        std::fs::write(&p, vec![1u8; 8192]).unwrap();
        let write = Need { bytes: Some(8192), writes: true, reads: false, allow_overwrite: false, room_only: None };
        let err = prepare(&p, &write, &|| false).unwrap_err();
        assert!(matches!(err, TargetError::Refused { .. }), "{err}");
        assert!(err.to_string().contains("allow_overwrite"));
        assert_eq!(std::fs::read(&p).unwrap(), vec![1u8; 8192], "nothing written");
        let read = Need { bytes: None, writes: false, reads: false, allow_overwrite: false, room_only: None };
        assert_eq!(prepare(&p, &read, &|| false).unwrap().size, 8192);
        let too_big = Need { bytes: Some(1 << 20), writes: false, reads: false, allow_overwrite: false, room_only: None };
        assert!(prepare(&p, &too_big, &|| false).is_err());
        let allowed = Need { bytes: Some(8192), writes: true, reads: false, allow_overwrite: true, room_only: None };
        assert!(prepare(&p, &allowed, &|| false).is_ok());
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_layout_stops_when_asked_and_leaves_nothing() {
        let p = tmp("stopped");
        let need = Need { bytes: Some(64 << 20), writes: true, reads: false, allow_overwrite: false, room_only: None };
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 3
        };
        let e = prepare(&p, &need, &stop).unwrap_err();
        assert!(e.is_interrupted(), "{e}");
        assert!(!p.exists() && !sidecar(&p).exists(), "the half-made file is removed");
    }

    #[test]
    fn a_layout_larger_than_the_free_space_is_refused_before_writing() {
        let p = tmp("huge");
        let need = Need { bytes: Some(1 << 60), writes: true, reads: false, allow_overwrite: false, room_only: None };
        let e = prepare(&p, &need, &|| false).unwrap_err();
        assert!(e.to_string().contains("free; lower size"), "{e}");
        assert!(!p.exists());
    }

    #[test]
    fn new_file_without_size_is_a_clear_error() {
        let p = tmp("nosize");
        let err =
            prepare(&p, &Need { bytes: None, writes: true, reads: false, allow_overwrite: false, room_only: None }, &|| false).unwrap_err();
        assert!(err.to_string().contains("size"), "{err}");
        assert!(!p.exists());
    }

    #[test]
    fn memory_character_devices_take_the_jobs_size_and_others_are_refused() {
        let need = |bytes, writes, reads| Need { bytes, writes, reads, allow_overwrite: false, room_only: None };
        let null = prepare(Path::new("/dev/null"), &need(Some(1 << 27), true, false), &|| false).unwrap();
        assert_eq!((null.kind, null.size, null.created), (FileKind::CharDevice, 1 << 27, false));
        assert_eq!(prepare(Path::new("/dev/zero"), &need(Some(4096), true, true), &|| false).unwrap().size, 4096);
        let e = prepare(Path::new("/dev/null"), &need(Some(4096), false, true), &|| false).unwrap_err();
        assert!(e.to_string().contains("read /dev/zero"), "{e}");
        let e = prepare(Path::new("/dev/zero"), &need(None, false, true), &|| false).unwrap_err();
        assert!(e.to_string().contains("set size"), "{e}");
        // A terminal (5:0), where there is one: a character device that is not memory.
        if Path::new("/dev/tty").exists() {
            let e = prepare(Path::new("/dev/tty"), &need(Some(4096), true, false), &|| false).unwrap_err();
            assert!(e.is_user_error() && e.to_string().contains("other than /dev/null"), "{e}");
        }
    }

    /// A file's access time, after setting it two days back (relatime then
    /// updates it on the next read).
    fn age_atime(p: &Path) -> i64 {
        let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86400);
        File::options().write(true).open(p).unwrap().set_times(std::fs::FileTimes::new().set_accessed(two_days_ago)).unwrap();
        atime(p)
    }

    fn atime(p: &Path) -> i64 {
        std::fs::metadata(p).unwrap().atime()
    }

    #[test]
    fn reads_leave_the_access_time_as_it_was() {
        use std::io::Read;
        let p = tmp("atime");
        std::fs::write(&p, vec![7u8; 8192]).unwrap();
        let mut buf = vec![0u8; 4096];
        // The control: a plain read does move it here (not on a noatime mount).
        let before = age_atime(&p);
        File::open(&p).unwrap().read_exact(&mut buf).unwrap();
        if atime(&p) == before {
            eprintln!("skipped: {} does not update access times (noatime mount)", p.display());
            return;
        }
        let before = age_atime(&p);
        let t = TargetFile { path: p.clone(), kind: FileKind::File, size: 8192, created: false, note: None, never_written: None, whole: 0 };
        open(&t, false, false, storbench_workload::OpenSync::None).unwrap().read_exact(&mut buf).unwrap();
        assert_eq!(atime(&p), before, "storbench's read changed the access time");
        std::fs::remove_file(&p).unwrap();
    }
}
