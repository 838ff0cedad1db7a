//! One safety gate for every path that writes to a block device: `run`,
//! `run --fio`, the `fio` drop-in, `baseline --allow-writes`,
//! `--precondition`, `--fill`, `replay`, `sweep` and `slo`. A device with a
//! mounted file system is refused by each, whatever the flags; a device with
//! data hidden between the places an older check sampled is found by the
//! blank check (read whole up to 2 GiB, sampled densely beyond) and refused
//! without `--allow_overwrite`. Every case checks the device's bytes after.
//! (Issue 26, defects 1 and 2: `baseline` wiped a mounted ext4; 62 MiB of
//! data between the 64 KiB samples was overwritten.)

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// A digest of a file's bytes (compared before and after: nothing written).
fn digest(p: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(p).unwrap().hash(&mut h);
    h.finish()
}

/// Every command that can write to `dev`, each with the flags that allow
/// overwriting data (but not a device in use).
fn writing_commands(dev: &str) -> Vec<(&'static str, Vec<String>)> {
    let job = |rw: &str| -> Vec<String> {
        ["--name", "w", "--filename", dev, "--rw", rw, "--bs", "4k", "--runtime", "1", "--time_based", "--quiet", "--allow_overwrite", "1"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let with = |head: &[&str], tail: Vec<String>| -> Vec<String> { head.iter().map(|s| s.to_string()).chain(tail).collect() };
    vec![
        ("run", with(&["run"], job("randwrite"))),
        ("run --fio", with(&["run", "--fio", "job.fio"], vec![])),
        ("fio drop-in", with(&["fio", &format!("--filename={dev}"), "--name=w", "--rw=randwrite", "--runtime=1", "--time_based"], vec![])),
        ("baseline --allow-writes", with(&["baseline", dev, "--allow-writes", "--runtime", "1", "--quiet"], vec![])),
        ("run --precondition", with(&["run", "--precondition"], job("randread"))),
        ("run --fill", with(&["run", "--fill", "50%"], job("randread"))),
        ("replay", with(&["replay", "trace.log", "--filename", dev, "--allow_overwrite", "1", "--quiet"], vec![])),
        ("sweep", with(&["sweep", "--sweep", "iodepth=1,2"], job("randwrite"))),
        ("slo", with(&["slo", "--latency", "p99=50ms", "--max-probes", "3", "--probe-time", "1"], job("randwrite"))),
    ]
}

/// A job file and an iolog that write to `dev`, in `d`.
fn write_inputs(d: &Path, dev: &str) {
    std::fs::write(d.join("job.fio"), format!("[w]\nfilename={dev}\nrw=randwrite\nbs=4k\nruntime=1\ntime_based\nallow_overwrite=1\n"))
        .unwrap();
    let mut log = format!("fio version 2 iolog\n{dev} add\n{dev} open\n");
    for i in 0..64 {
        log.push_str(&format!("{dev} write {} 4096\n", i * 65536));
    }
    log.push_str(&format!("{dev} close\n"));
    std::fs::write(d.join("trace.log"), log).unwrap();
}

/// A device whose ext4 is mounted (read-only, so the kernel keeps no dirty
/// state of it) is refused by every path that writes, with the override
/// named, and not one byte of it changes.
#[test]
fn every_writing_path_refuses_a_mounted_device() {
    if !have("mount") || !have("mkfs.ext4") {
        eprintln!("SKIP: no mount or mkfs.ext4");
        return;
    }
    let d = scratch();
    let img = d.path().join("fs.img");
    std::fs::write(&img, vec![0u8; 64 << 20]).unwrap();
    assert!(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img).status().unwrap().success());
    let Some(dev) = Loop::new(&img, 512) else { return };
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount").args(["-o", "ro", &dev.dev]).arg(&mnt).status().unwrap().success());
    write_inputs(d.path(), &dev.dev);
    let before = digest(&img);
    let mut failures = Vec::new();
    for (what, args) in writing_commands(&dev.dev) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = storbench(d.path(), &args);
        // The drop-in exits as fio does on bad input: 1.
        let bad_input = if what == "fio drop-in" { 1 } else { 2 };
        let refused = r.code == bad_input
            && r.stderr.contains("is mounted on")
            && r.stderr.contains("no flag overrides")
            && r.stderr.contains("umount ");
        if !refused {
            failures.push(format!("{what}: exit {}: {}", r.code, r.stderr.trim()));
        }
    }
    let _ = Command::new("umount").arg(&mnt).status();
    drop(dev);
    assert_eq!(digest(&img), before, "the mounted file system was written to");
    assert!(failures.is_empty(), "not refused:\n{}", failures.join("\n"));
    let fsck = Command::new("e2fsck").args(["-n", "-f"]).arg(&img).output().unwrap();
    assert!(fsck.status.success(), "the file system is intact: {}", String::from_utf8_lossy(&fsck.stdout));
}

/// `len` random bytes in the middle of every gap between the 64 KiB windows
/// the old check read (the first and last MiB, 62 windows evenly between).
fn hide_between_old_samples(img: &Path, size: u64, len: usize) -> u64 {
    use std::os::unix::fs::FileExt;
    const MIB: u64 = 1 << 20;
    let f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    let stride = (size - 2 * MIB) / 62;
    let mut hidden = 0;
    for i in 0..62u64 {
        let at = MIB + stride * i + (64 << 10) + (stride - (64 << 10) - len as u64) / 2;
        f.write_at(&random_bytes(len, at), at).unwrap();
        hidden += len as u64;
    }
    hidden
}

fn refused_as_data(r: &Run) -> bool {
    r.code == 2 && r.stderr.contains("holds data (non-zero bytes at offset") && r.stderr.contains("--allow_overwrite")
}

/// 62 MiB of data between the old check's samples of a 1 GiB device: the
/// device is read whole and refused; the message says how much was read.
#[test]
fn data_between_the_old_samples_of_a_small_device_is_found() {
    let d = scratch();
    let img = d.path().join("hidden.img");
    let size = 1u64 << 30;
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    assert_eq!(hide_between_old_samples(&img, size, 1 << 20), 62 << 20);
    let Some(dev) = Loop::new(&img, 512) else { return };
    let before = digest(&img);
    let r = storbench(d.path(), &["run", "--name", "w", "--filename", &dev.dev, "--rw", "randwrite", "--runtime", "1", "--time_based"]);
    drop(dev);
    assert!(refused_as_data(&r), "exit {}: {}", r.code, r.stderr);
    assert!(r.stderr.contains("read 1.0 GiB of 1.0 GiB"), "says how much it read: {}", r.stderr);
    assert_eq!(digest(&img), before);
}

/// On a device too large to read whole (8 GiB, sparse), data longer than
/// the sampling stride (8 GiB / 16384 = 512 KiB) anywhere is found; a
/// blank one passes, and the run's notes say what the check read.
#[test]
fn data_on_a_sampled_device_is_found_and_a_blank_one_is_noted() {
    let d = scratch();
    let img = d.path().join("big.img");
    let size = 8u64 << 30;
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let Some(blank) = Loop::new(&img, 512) else { return };
    let ok = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "w",
            "--filename",
            &blank.dev,
            "--rw",
            "randwrite",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--time_based",
            "--quiet",
            "--results-dir",
            "ok",
        ],
    );
    drop(blank);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let notes = run_result(&d.path().join("ok")).notes.join("\n");
    assert!(notes.contains("was checked blank before writing: read 66.0 MiB of 8.0 GiB") && notes.contains("16384 windows"), "{notes}");

    let img2 = d.path().join("big2.img");
    std::fs::File::create(&img2).unwrap().set_len(size).unwrap();
    hide_between_old_samples(&img2, size, 600 << 10);
    let Some(dev) = Loop::new(&img2, 512) else { return };
    // Sparse: any write lands in a hole and allocates blocks.
    let blocks = || std::os::unix::fs::MetadataExt::blocks(&std::fs::metadata(&img2).unwrap());
    let before = blocks();
    let r = storbench(d.path(), &["run", "--name", "w", "--filename", &dev.dev, "--rw", "randwrite", "--size", "16m", "--runtime", "1"]);
    drop(dev);
    assert!(refused_as_data(&r), "exit {}: {}", r.code, r.stderr);
    assert!(r.stderr.contains("16384 windows"), "{}", r.stderr);
    assert_eq!(blocks(), before, "nothing was written");
}

/// A job that reads a device before another writes it: the write is
/// checked all the same (the baseline path: reads first, then writes, and
/// the target prepared for the reads was reused unchecked).
#[test]
fn a_device_read_by_an_earlier_job_is_still_checked_before_a_later_one_writes() {
    let d = scratch();
    let img = d.path().join("data.img");
    let data = random_bytes(32 << 20, 7);
    std::fs::write(&img, &data).unwrap();
    let Some(dev) = Loop::new(&img, 512) else { return };
    let toml = format!(
        "[global]\nfilename = \"{}\"\nbs = \"4k\"\nruntime = \"1s\"\ntime_based = true\n\n[[job]]\nname = \"r\"\nrw = \"randread\"\n\n[[job]]\nname = \"w\"\nrw = \"randwrite\"\nstonewall = true\n",
        dev.dev
    );
    std::fs::write(d.path().join("jobs.toml"), toml).unwrap();
    let r = storbench(d.path(), &["run", "jobs.toml", "--quiet"]);
    drop(dev);
    assert!(refused_as_data(&r), "exit {}: {}", r.code, r.stderr);
    assert_eq!(std::fs::read(&img).unwrap(), data);
}
