//! Block devices as write targets: is the device in use, and is it blank?
//!
//! In use means a file system on it (or on one of its partitions) is
//! mounted, it is active swap, or another device is built on it
//! (device-mapper, md, LVM): found by device number in /proc/self/mountinfo,
//! /proc/swaps and sysfs, so /dev/mapper names and symlinks cannot hide it.
//! Nothing but `destroy_device_in_use` writes to such a device.
//!
//! Blank means it reads as zeros wherever it is sampled: the first and last
//! MiB whole (partition tables, superblocks at either end) and 64 KiB
//! windows spread evenly across the rest. Anything else is somebody's data,
//! named by its signature when one is known, and written only with
//! `allow_overwrite`.

use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::Path;

const MIB: u64 = 1 << 20;
const WINDOW: u64 = 64 << 10;
const WINDOWS: u64 = 62;

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

/// Why the device must not be written even with `allow_overwrite`, if it is in use.
pub fn in_use(path: &Path) -> std::io::Result<Option<String>> {
    let rdev = std::fs::metadata(path)?.rdev();
    let me = dev_numbers(rdev);
    let mut devices = vec![(me, path.display().to_string())];
    devices.extend(partitions(me));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for (dev, name) in &devices {
        if let Some(at) = mounted_at(&mounts, *dev) {
            return Ok(Some(format!("{name} is mounted on {at}")));
        }
        if let Some(holder) = held_by(*dev) {
            return Ok(Some(format!("{name} is held by {holder} (device-mapper, md or LVM is built on it)")));
        }
        if is_swap(*dev) {
            return Ok(Some(format!("{name} is in use as swap")));
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

/// What the device holds, if it is not blank.
pub fn contents(f: &File, size: u64) -> std::io::Result<Option<String>> {
    let head = read_at(f, 0, MIB.min(size))?;
    for (off, magic, what) in SIGNATURES {
        if off + magic.len() <= head.len() && &head[*off..off + magic.len()] == *magic {
            return Ok(Some(what.to_string()));
        }
    }
    for (at, len) in samples(size) {
        let data = if at == 0 { head.clone() } else { read_at(f, at, len)? };
        if let Some(i) = data.iter().position(|b| *b != 0) {
            return Ok(Some(format!("data (non-zero bytes at offset {}; a blank device reads as zeros)", at + i as u64)));
        }
    }
    Ok(None)
}

/// Where to look: (offset, length) of the first MiB, evenly spread windows,
/// and the last MiB.
fn samples(size: u64) -> Vec<(u64, u64)> {
    let mut s = vec![(0, MIB.min(size))];
    if size > 2 * MIB {
        let span = size - 2 * MIB;
        for i in 0..WINDOWS {
            let at = MIB + span / WINDOWS * i;
            s.push((at, WINDOW.min(size - at)));
        }
    }
    if size > MIB {
        s.push((size - MIB, MIB));
    }
    s
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
    fn samples_cover_both_ends_and_the_middle() {
        let size = 1 << 30;
        let s = samples(size);
        assert_eq!(s.first(), Some(&(0, MIB)));
        assert_eq!(s.last(), Some(&(size - MIB, MIB)));
        assert_eq!(s.len() as u64, WINDOWS + 2);
        assert!(s.iter().all(|(at, len)| at + len <= size));
        assert_eq!(samples(4096), vec![(0, 4096)]);
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
        assert_eq!(contents(&f, size).unwrap(), None);
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().write_at(&[7], size - 10).unwrap();
        let found = contents(&f, size).unwrap().unwrap();
        assert!(found.contains("non-zero bytes at offset 8388598"), "{found}");
        std::fs::remove_file(&p).unwrap();
    }
}
