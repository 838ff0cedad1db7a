//! Block devices as write targets: is the device in use, and is it blank?
//!
//! In use means a file system on it (or on one of its partitions) is
//! mounted, it is active swap, or another device is built on it
//! (device-mapper, md, LVM): found by device number in /proc/self/mountinfo,
//! /proc/swaps and sysfs, so /dev/mapper names and symlinks cannot hide it.
//! Nothing writes to such a device, whatever the flags.
//!
//! Blank means no signature libblkid knows (file systems, partition tables,
//! RAID, LVM, crypto, swap: what `blkid` and `wipefs` find) nor one of our
//! own short table, and zeros wherever the check reads: the whole device up
//! to 2 GiB, beyond that the first and last MiB and 16384 windows evenly
//! spread, so data anywhere longer than 1/16384 of the device is seen.
//! Anything else is somebody's data, named by its signature when one is
//! known, and written only with `allow_overwrite`. What was read is said,
//! in the refusal or in the run's notes.

use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::Path;

const MIB: u64 = 1 << 20;

/// Signatures that mean a device holds someone's data: (offset, magic, what).
const SIGNATURES: &[(usize, &[u8], &str)] = &[
    (510, &[0x55, 0xAA], "an MBR partition table or boot sector"),
    (512, b"EFI PART", "a GPT partition table"),
    (1080, &[0x53, 0xEF], "an ext2/3/4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (536, b"LVM2 001", "an LVM physical volume"),
    (4086, b"SWAPSPACE2", "swap space"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (32769, b"CD001", "an ISO 9660 filesystem"),
    (0, b"bluestore block device", "a Ceph BlueStore OSD"),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (82, b"FAT32   ", "a FAT32 filesystem"),
    (4096, &[0xFC, 0x4E, 0x2B, 0xA9], "an mdraid member"),
];

/// `major:minor` of a device node.
fn dev_numbers(rdev: u64) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// Why a device must not be written, whatever the flags.
#[derive(Debug, PartialEq, Eq)]
pub enum InUse {
    Mounted { name: String, at: String },
    Held { name: String, holder: String },
    Swap { name: String },
}

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            InUse::Mounted { name, at } => write!(f, "{name} is mounted on {at}"),
            InUse::Held { name, holder } => write!(f, "{name} is held by {holder} (device-mapper, md or LVM is built on it)"),
            InUse::Swap { name } => write!(f, "{name} is in use as swap"),
        }
    }
}

impl InUse {
    /// What frees the device, in the user's words.
    pub fn freeing(&self) -> String {
        match self {
            InUse::Mounted { at, .. } => format!("umount {at}"),
            InUse::Held { holder, .. } => format!("stop {holder}: vgchange -an, mdadm --stop or dmsetup remove"),
            InUse::Swap { name } => format!("swapoff {name}"),
        }
    }
}

/// Why the device must not be written at all, if it (or one of its
/// partitions) is in use.
pub fn in_use(path: &Path) -> std::io::Result<Option<InUse>> {
    let rdev = std::fs::metadata(path)?.rdev();
    let me = dev_numbers(rdev);
    let mut devices = vec![(me, path.display().to_string())];
    devices.extend(partitions(me));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for (dev, name) in devices {
        if let Some(at) = mounted_at(&mounts, dev) {
            return Ok(Some(InUse::Mounted { name, at }));
        }
        if let Some(holder) = held_by(dev) {
            return Ok(Some(InUse::Held { name, holder }));
        }
        if is_swap(dev) {
            return Ok(Some(InUse::Swap { name }));
        }
    }
    Ok(None)
}

/// Where a file system on device `dev` is mounted (mountinfo's field 3 is major:minor).
fn mounted_at(mountinfo: &str, (major, minor): (u32, u32)) -> Option<String> {
    let wanted = format!("{major}:{minor}");
    mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&wanted.as_str())).then(|| f.get(4).unwrap_or(&"?").to_string())
    })
}

/// A device built on `dev` (sysfs holders), by name.
fn held_by((major, minor): (u32, u32)) -> Option<String> {
    let dir = std::fs::read_dir(format!("/sys/dev/block/{major}:{minor}/holders")).ok()?;
    dir.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).next()
}

/// Partitions of `dev`: (numbers, /dev name).
fn partitions((major, minor): (u32, u32)) -> Vec<((u32, u32), String)> {
    let Ok(dir) = std::fs::read_dir(format!("/sys/dev/block/{major}:{minor}")) else { return Vec::new() };
    dir.filter_map(|e| e.ok())
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| {
            let numbers = std::fs::read_to_string(e.path().join("dev")).ok()?;
            let (a, b) = numbers.trim().split_once(':')?;
            Some(((a.parse().ok()?, b.parse().ok()?), format!("/dev/{}", e.file_name().to_string_lossy())))
        })
        .collect()
}

/// Whether `dev` is active swap (/proc/swaps names paths: compared by device number).
fn is_swap(dev: (u32, u32)) -> bool {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device() && dev_numbers(m.rdev()) == dev))
}

/// How much of a device the blank check read, for the refusal or the run's notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage {
    pub size: u64,
    /// Bytes read.
    pub read: u64,
    /// Windows read between the first and the last MiB (0: read whole).
    pub samples: u64,
    /// Bytes from one window's start to the next's: data this long or longer
    /// cannot lie between them unseen.
    pub stride: u64,
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let amount = storbench_workload::units::format_amount;
        if self.samples == 0 {
            return write!(f, "read {} of {}", amount(self.read), amount(self.size));
        }
        write!(
            f,
            "read {} of {}: the first and last MiB and {} windows of {} spread over the rest, one every {} \
             (data of that length or more anywhere on it would have been seen)",
            amount(self.read),
            amount(self.size),
            self.samples,
            amount(SAMPLE),
            amount(self.stride)
        )
    }
}

/// The blank check's verdict: what the device holds (if anything) and what was read to say so.
#[derive(Debug)]
pub struct Checked {
    pub holds: Option<String>,
    pub coverage: Coverage,
}

/// What the device holds, if it is not blank: any signature libblkid (or,
/// without it, our own table) knows, then non-zero bytes anywhere it reads.
/// Devices up to [`FULL_READ`] are read whole; larger ones in [`SAMPLES`]
/// evenly spaced windows, so only data shorter than one part in
/// [`SAMPLES`] of the device can go unseen. `stop` (Ctrl-C) ends the read
/// early with `Interrupted`.
pub fn contents(path: &Path, f: &File, size: u64, stop: &dyn Fn() -> bool) -> std::io::Result<Checked> {
    let plan = plan(size);
    let coverage = plan.coverage(size);
    let head = read_at(f, 0, MIB.min(size))?;
    if let Some(what) = signature(path, &head) {
        return Ok(Checked { holds: Some(what), coverage: Coverage { read: head.len() as u64, ..coverage } });
    }
    let holds = first_nonzero(f, &plan, stop)?
        .map(|at| format!("data (non-zero bytes at offset {at}; a blank device reads as zeros wherever the check reads)"));
    Ok(Checked { holds, coverage })
}

/// A known signature: libblkid's probe where the library is there, our own
/// table always (it also knows BlueStore, which libblkid calls unknown).
fn signature(path: &Path, head: &[u8]) -> Option<String> {
    if let super::blkid::Found::Signature(s) = super::blkid::probe(path) {
        return Some(s);
    }
    SIGNATURES
        .iter()
        .find(|(off, magic, _)| off + magic.len() <= head.len() && &head[*off..off + magic.len()] == *magic)
        .map(|(_, _, what)| what.to_string())
}

/// Devices up to this size are read whole (seconds even on a disk).
pub const FULL_READ: u64 = 2 << 30;
/// Windows read across a larger device, between its first and last MiB.
pub const SAMPLES: u64 = 16384;
/// One sampled window.
const SAMPLE: u64 = 4096;
/// Threads reading at once: a disk's queue reorders them, an SSD serves them in parallel.
const READERS: usize = 4;

/// The reads of one check: (offset, length), in ascending order.
struct Plan {
    reads: Vec<(u64, u64)>,
    samples: u64,
    stride: u64,
}

impl Plan {
    fn coverage(&self, size: u64) -> Coverage {
        Coverage { size, read: self.reads.iter().map(|r| r.1).sum(), samples: self.samples, stride: self.stride }
    }
}

fn plan(size: u64) -> Plan {
    if size <= FULL_READ {
        let reads = (0..size.div_ceil(MIB)).map(|i| (i * MIB, MIB.min(size - i * MIB))).collect();
        return Plan { reads, samples: 0, stride: 0 };
    }
    let span = size - 2 * MIB;
    let stride = span / SAMPLES;
    let mut reads = vec![(0, MIB)];
    reads.extend((0..SAMPLES).map(|i| (MIB + stride * i, SAMPLE)));
    reads.push((size - MIB, MIB));
    Plan { reads, samples: SAMPLES, stride }
}

/// The lowest offset of a non-zero byte the plan's reads find, read by
/// [`READERS`] threads (each every READERS-th read), stopping early once
/// one is found or `stop` says so.
fn first_nonzero(f: &File, plan: &Plan, stop: &dyn Fn() -> bool) -> std::io::Result<Option<u64>> {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    // Random advice: no readahead, so a 4 KiB window costs a 4 KiB read.
    // SAFETY: plain advice on an open descriptor.
    unsafe { libc::posix_fadvise(std::os::fd::AsRawFd::as_raw_fd(f), 0, 0, libc::POSIX_FADV_RANDOM) };
    let found = AtomicU64::new(u64::MAX);
    let halt = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None);
    let mut stopped = false;
    std::thread::scope(|s| {
        for r in 0..READERS {
            let (found, halt, done, failed) = (&found, &halt, &done, &failed);
            s.spawn(move || {
                for &(at, len) in plan.reads.iter().skip(r).step_by(READERS) {
                    if halt.load(Ordering::Relaxed) || at > found.load(Ordering::Relaxed) {
                        break;
                    }
                    match read_at(f, at, len) {
                        Ok(data) => {
                            if let Some(i) = first_nonzero_byte(&data) {
                                found.fetch_min(at + i as u64, Ordering::Relaxed);
                            }
                        }
                        Err(e) => {
                            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                            halt.store(true, Ordering::Relaxed);
                        }
                    }
                }
                done.fetch_add(1, Ordering::Release);
            });
        }
        while done.load(Ordering::Acquire) < READERS {
            if stop() {
                stopped = true;
                halt.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if stopped && found.load(Ordering::Relaxed) == u64::MAX {
        return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "stopped while checking the device is blank"));
    }
    Ok(Some(found.into_inner()).filter(|at| *at != u64::MAX))
}

/// Where the first non-zero byte is: compared a 4 KiB page at a time
/// (memcmp), so reading a device whole costs its reads, not a loop per byte.
fn first_nonzero_byte(data: &[u8]) -> Option<usize> {
    const PAGE: usize = 4096;
    static ZEROS: [u8; PAGE] = [0; PAGE];
    let page = data.chunks(PAGE).position(|c| c != &ZEROS[..c.len()])?;
    let at = page * PAGE;
    data[at..].iter().position(|b| *b != 0).map(|i| at + i)
}

fn read_at(f: &File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], at + got as u64)? {
            0 => break,
            n => got += n,
        }
    }
    buf.truncate(got);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_devices_are_read_whole_and_large_ones_sampled_evenly() {
        let whole = plan(FULL_READ);
        assert_eq!((whole.samples, whole.reads.iter().map(|r| r.1).sum::<u64>()), (0, FULL_READ));
        assert_eq!(plan(4096).reads, vec![(0, 4096)]);
        let size = 1 << 40;
        let p = plan(size);
        assert_eq!(p.reads.first(), Some(&(0, MIB)));
        assert_eq!(p.reads.last(), Some(&(size - MIB, MIB)));
        assert_eq!(p.reads.len() as u64, SAMPLES + 2);
        assert!(
            p.reads.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0 && w[1].0 - w[0].0 <= p.stride.max(MIB)),
            "ascending, no gap above the stride"
        );
        assert!(p.stride <= size / SAMPLES);
        let c = p.coverage(size);
        assert_eq!(c.read, 2 * MIB + SAMPLES * SAMPLE);
        assert!(c.to_string().contains("16384 windows of 4.0 KiB"), "{c}");
    }

    #[test]
    fn mountinfo_is_matched_by_device_number() {
        let info = "36 35 98:0 /mnt1 /mnt/one rw,noatime master:1 - ext3 /dev/root rw\n37 35 253:3 / /srv rw - xfs /dev/mapper/vg-srv rw\n";
        assert_eq!(mounted_at(info, (253, 3)), Some("/srv".into()));
        assert_eq!(mounted_at(info, (253, 4)), None);
    }

    #[test]
    fn a_file_of_zeros_is_blank_and_one_byte_at_the_end_is_data() {
        let p = std::env::temp_dir().join(format!("storbench-blank-{}", std::process::id()));
        let size = 8 * MIB;
        std::fs::write(&p, vec![0u8; size as usize]).unwrap();
        let f = File::open(&p).unwrap();
        let never = || false;
        let blank = contents(&p, &f, size, &never).unwrap();
        assert_eq!((blank.holds, blank.coverage.read), (None, size), "read whole");
        // One byte in the middle and one at the end: the first is named.
        let w = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        w.write_at(&[7], size - 10).unwrap();
        w.write_at(&[9], size / 2 + 12345).unwrap();
        let found = contents(&p, &f, size, &never).unwrap().holds.unwrap();
        assert!(found.contains(&format!("non-zero bytes at offset {}", size / 2 + 12345)), "{found}");
        std::fs::remove_file(&p).unwrap();
    }
}
