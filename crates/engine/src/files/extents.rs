//! Which bytes of a file were never written: holes, and extents the file
//! system allocated but marks unwritten (`fallocate`, a preallocated file).
//! Reads of them return zeros without reaching the medium, so a figure
//! measured on them is not the disk's. FIEMAP tells both; a file system
//! that does not answer it (tmpfs, some network file systems) cannot tell.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `FS_IOC_FIEMAP`: `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Write the file's dirty pages back before mapping it: data written over
/// preallocated (unwritten) extents stays marked unwritten until written
/// back, so a file a job just filled through the page cache read as never
/// written.
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
/// Extents asked for per call.
const BATCH: usize = 128;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Extent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped: u32,
    count: u32,
    reserved: u32,
    extents: [Extent; BATCH],
}

/// Bytes of the first `len` of `path` that were never written (holes and
/// unwritten extents), or `None` when the file system cannot tell.
pub fn never_written(path: &Path, len: u64) -> Option<u64> {
    let f = File::open(path).ok()?;
    written(&f, len).map(|w| len.saturating_sub(w))
}

/// Bytes of `[0, len)` in extents that hold data (delayed allocation
/// counts: it is data not yet on disk).
fn written(f: &File, len: u64) -> Option<u64> {
    let mut data = 0u64;
    let mut start = 0u64;
    while start < len {
        let mut m = Fiemap {
            start,
            length: len - start,
            flags: FIEMAP_FLAG_SYNC,
            mapped: 0,
            count: BATCH as u32,
            reserved: 0,
            extents: [Extent::default(); BATCH],
        };
        // SAFETY: `m` is a `struct fiemap` with room for `count` extents, as the ioctl expects.
        if unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, &mut m as *mut Fiemap) } != 0 {
            return None;
        }
        let got = &m.extents[..(m.mapped as usize).min(BATCH)];
        let Some(last) = got.last() else { break };
        for e in got.iter().filter(|e| e.flags & FIEMAP_EXTENT_UNWRITTEN == 0) {
            data += (e.logical + e.length).min(len).saturating_sub(e.logical.max(start));
        }
        if last.flags & FIEMAP_EXTENT_LAST != 0 {
            break;
        }
        start = last.logical + last.length;
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn preallocated_and_sparse_bytes_are_never_written_and_written_ones_are() {
        let p = std::env::temp_dir().join(format!("storbench-extents-{}", std::process::id()));
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        // 1 MiB written, 2 MiB preallocated, then 1 MiB of hole.
        // SAFETY: valid descriptor.
        let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 1 << 20, 2 << 20) };
        f.set_len(4 << 20).unwrap();
        let Some(n) = never_written(&p, 4 << 20) else { return eprintln!("SKIP: this file system does not answer FIEMAP") };
        assert!(rc != 0 || n == 3 << 20, "{n}");
        assert_eq!(never_written(&p, 1 << 20), Some(0));
        std::fs::remove_file(&p).unwrap();
    }

    /// A preallocated file written through the page cache and not yet
    /// written back holds data (a write-only job's file right after it).
    #[test]
    fn preallocated_bytes_written_but_not_yet_written_back_are_written() {
        let p = std::env::temp_dir().join(format!("storbench-extents-dirty-{}", std::process::id()));
        let mut f = File::create(&p).unwrap();
        // SAFETY: valid descriptor.
        if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, 2 << 20) } != 0 {
            std::fs::remove_file(&p).unwrap();
            return eprintln!("SKIP: this file system does not preallocate");
        }
        f.write_all(&vec![7u8; 2 << 20]).unwrap();
        let n = never_written(&p, 2 << 20);
        std::fs::remove_file(&p).unwrap();
        assert!(n.is_none_or(|n| n == 0), "{n:?} bytes never written");
    }
}
