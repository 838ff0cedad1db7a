//! What the block devices under a run's files did while it ran (fio's
//! `disk_util`): each file's disk (a regular file's file system, a block
//! device itself; a partition counts as its whole disk), and the counters of
//! `/sys/block/NAME/stat` before and after. The counters are device-wide, so
//! they include other processes' I/O, as fio's do.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Instant;
use storbench_model::DiskUtil;

/// The sysfs name of the disk under `path` (`vda`, `nvme0n1`, `dm-0`), if it
/// is on one (not tmpfs or overlay). A path not yet made is looked up by its
/// directory.
pub fn disk_of(path: &Path) -> Option<String> {
    disk_of_device(device_of(path)?)
}

/// The device a path's data is on: a block device itself, else its file
/// system's (its directory's, for a path not yet made).
fn device_of(path: &Path) -> Option<u64> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let md = std::fs::metadata(path).or_else(|_| std::fs::metadata(dir)).ok()?;
    Some(if md.file_type().is_block_device() { md.rdev() } else { md.dev() })
}

/// A device number's disk in sysfs (a partition counts as its whole disk).
fn disk_of_device(dev: u64) -> Option<String> {
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{}:{}", libc::major(dev), libc::minor(dev))).ok()?;
    // A partition's directory holds a `partition` file, inside its disk's.
    let disk = if sys.join("partition").exists() { sys.parent()? } else { &sys };
    Some(disk.file_name()?.to_string_lossy().into_owned())
}

/// The first eleven counters of `/sys/block/NAME/stat`: reads, read merges,
/// sectors read, read ticks, writes, write merges, sectors written, write
/// ticks, in flight, io ticks, time in queue.
fn counters(name: &str) -> Option<[u64; 11]> {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?;
    let v: Vec<u64> = text.split_whitespace().take(11).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    v.try_into().ok()
}

/// The disks' counters at the start of a run.
pub struct DiskSnapshot {
    at: Instant,
    disks: Vec<(String, [u64; 11])>,
}

impl DiskSnapshot {
    /// The disks under `paths`, each once, in the order first seen.
    pub fn take<'a>(paths: impl Iterator<Item = &'a Path>) -> DiskSnapshot {
        let mut disks: Vec<(String, [u64; 11])> = Vec::new();
        // Workers share files: each path is looked up once.
        let mut seen = std::collections::HashSet::new();
        // Thousands of files (a metadata job's) sit on a handful of file
        // systems: sysfs is asked once per device, not once per file.
        let mut devices = std::collections::HashSet::new();
        for dev in paths.filter(|p| seen.insert(*p)).filter_map(device_of).filter(|d| devices.insert(*d)) {
            if let Some(name) = disk_of_device(dev).filter(|n| !disks.iter().any(|d| &d.0 == n)) {
                if let Some(c) = counters(&name) {
                    disks.push((name, c));
                }
            }
        }
        DiskSnapshot { at: Instant::now(), disks }
    }

    /// What each disk did since the snapshot; `util` is the share of the
    /// elapsed time it had I/O in flight, as fio computes it.
    pub fn since(&self) -> Vec<DiskUtil> {
        let ms = self.at.elapsed().as_millis().max(1) as f64;
        let mut out = Vec::new();
        for (name, before) in &self.disks {
            let Some(now) = counters(name) else { continue };
            let d = |i: usize| now[i].saturating_sub(before[i]);
            out.push(DiskUtil {
                name: name.clone(),
                read_ios: d(0),
                read_merges: d(1),
                read_ticks: d(3),
                write_ios: d(4),
                write_merges: d(5),
                write_ticks: d(7),
                in_queue: d(10),
                util: (d(9) as f64 * 100.0 / ms).min(100.0),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_on_a_disk_finds_it_and_its_counters_move_with_io() {
        // This machine's root file system is on a disk; tmpfs is on none.
        let dir = std::env::temp_dir();
        let Some(name) = disk_of(Path::new("/")) else {
            eprintln!("SKIP: / is not on a block device here");
            return;
        };
        assert!(!name.is_empty() && counters(&name).is_some(), "{name}");
        assert_eq!(disk_of(Path::new("/dev/shm/none-such")), None, "tmpfs has no disk");
        let f = dir.join(format!("sb-diskstats-{}", std::process::id()));
        let snap = DiskSnapshot::take([Path::new("/"), f.as_path(), Path::new("/")].into_iter());
        std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
        std::fs::File::open(&f).unwrap().sync_all().unwrap();
        let after = snap.since();
        std::fs::remove_file(&f).unwrap();
        assert!(!after.is_empty() && after.len() <= 2, "each disk once: {after:?}");
        assert!(after.iter().all(|d| (0.0..=100.0).contains(&d.util)));
    }
}
