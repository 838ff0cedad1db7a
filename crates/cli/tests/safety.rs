//! storbench never writes to data it did not create unless told to.

mod common;
use common::*;
use std::process::Command;

#[test]
fn existing_file_is_read_but_not_written_without_permission() {
    let d = scratch();
    let theirs = d.path().join("theirs.dat");
    let original: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&theirs, &original).unwrap();

    let w = storbench(d.path(), &["run", "--name", "w", "--filename", "theirs.dat", "--rw", "randwrite", "--runtime", "1"]);
    assert_eq!(w.code, 2, "{}", w.stderr);
    assert!(w.stderr.contains("refusing to write") && w.stderr.contains("allow_overwrite"), "{}", w.stderr);
    assert_eq!(std::fs::read(&theirs).unwrap(), original, "the file must be untouched");

    let r = storbench(d.path(), &["run", "--name", "r", "--filename", "theirs.dat", "--rw", "randread", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("out")), 0, "read"), 256, "reads the whole 1 MiB once");
    assert_eq!(std::fs::read(&theirs).unwrap(), original);

    let a = storbench(
        d.path(),
        &["run", "--name", "a", "--filename", "theirs.dat", "--rw", "write", "--allow_overwrite", "--results-dir", "out2", "--quiet"],
    );
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert_ne!(std::fs::read(&theirs).unwrap(), original, "allowed writes happen");
}

/// A target named through a symbolic link (to /etc/passwd, say) is refused
/// as the file it leads to, and the refusal says where it leads: the user
/// named `data.dat`, not the file that would be destroyed.
#[test]
fn a_target_that_is_a_link_to_someone_elses_file_is_refused_naming_it() {
    let d = scratch();
    let precious = d.path().join("precious");
    std::fs::write(&precious, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    std::os::unix::fs::symlink(&precious, d.path().join("data.dat")).unwrap();
    let w = storbench(d.path(), &["run", "--name", "w", "--filename", "data.dat", "--rw", "write", "--size", "4k", "--results-dir", "o"]);
    assert_eq!(w.code, 2, "{}", w.stderr);
    assert!(w.stderr.contains(&format!("data.dat: it is a symbolic link to {}", precious.display())), "{}", w.stderr);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root:x:0:0:root:/root:/bin/bash\n", "untouched");
}

#[test]
fn files_storbench_created_are_reused_and_unlinked_on_request() {
    let d = scratch();
    let args = ["run", "--name", "mine", "--rw", "randwrite", "--size", "2m", "--runtime", "1", "--quiet", "--results-dir"];
    let first = storbench(d.path(), &[&args[..], &["o1"]].concat());
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(d.path().join("mine.0.0").exists(), "fio's naming: name.worker.file");
    let second = storbench(d.path(), &[&args[..], &["o2", "--unlink", "1"]].concat());
    assert_eq!(second.code, 0, "a file storbench made may be written again: {}", second.stderr);
    // Only files created by this run are removed; this one was made by the first.
    assert!(d.path().join("mine.0.0").exists());
    let fresh =
        storbench(d.path(), &["run", "--name", "tmp", "--rw", "write", "--size", "1m", "--unlink", "1", "--quiet", "--results-dir", "o3"]);
    assert_eq!(fresh.code, 0, "{}", fresh.stderr);
    assert!(!d.path().join("tmp.0.0").exists(), "unlink removes what this run created");
}

#[test]
fn block_device_with_a_filesystem_is_refused_blank_one_is_used() {
    let d = scratch();
    let img = d.path().join("disk.img");
    std::fs::write(&img, vec![0u8; 64 << 20]).unwrap();
    let Some(blank) = Loop::new(&img, 512) else {
        return;
    };
    let w = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "w",
            "--filename",
            &blank.dev,
            "--rw",
            "randwrite",
            "--direct",
            "1",
            "--runtime",
            "1",
            "--time_based",
            "--quiet",
            "--results-dir",
            "o1",
        ],
    );
    assert_eq!(w.code, 0, "a blank device may be written: {}", w.stderr);
    drop(blank);

    let fs = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img).status().expect("mkfs.ext4");
    assert!(fs.success());
    let before = std::fs::read(&img).unwrap();
    let Some(dev) = Loop::new(&img, 512) else {
        return;
    };
    let w = storbench(d.path(), &["run", "--name", "w", "--filename", &dev.dev, "--rw", "randwrite", "--runtime", "1"]);
    assert_eq!(w.code, 2, "{}", w.stderr);
    assert!(w.stderr.contains("an ext4 filesystem"), "{}", w.stderr);
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "r",
            "--filename",
            &dev.dev,
            "--rw",
            "randread",
            "--runtime",
            "1",
            "--time_based",
            "--quiet",
            "--results-dir",
            "o2",
        ],
    );
    assert_eq!(r.code, 0, "reads are always allowed: {}", r.stderr);
    drop(dev);
    assert_eq!(std::fs::read(&img).unwrap(), before, "the filesystem is untouched");
}

#[test]
fn per_io_errors_are_counted_reported_and_set_the_exit_code() {
    // 512-byte direct reads on a device with 4 KiB logical sectors fail with EINVAL.
    let d = scratch();
    let img = d.path().join("4k.img");
    std::fs::write(&img, vec![0u8; 16 << 20]).unwrap();
    let Some(dev) = Loop::new(&img, 4096) else {
        return;
    };
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "e",
            "--filename",
            &dev.dev,
            "--rw",
            "randread",
            "--bs",
            "512",
            "--direct",
            "1",
            "--runtime",
            "1",
            "--time_based",
            "--results-dir",
            "out",
        ],
    );
    assert_eq!(r.code, 1, "I/O errors set exit code 1: {}", r.stderr);
    assert!(r.stdout.contains("EINVAL"), "summary names the error:\n{}", r.stdout);
    let doc = result_json(&d.path().join("out"));
    let errors = &doc["jobs"][0]["ops"][0]["errors"];
    assert!(errors.as_object().unwrap().keys().any(|k| k.starts_with("EINVAL")), "{errors}");
}

fn write_job(d: &std::path::Path, dev: &str, extra: &[&str]) -> Run {
    let mut a =
        vec!["run", "--name", "w", "--filename", dev, "--rw", "randwrite", "--bs", "4k", "--runtime", "1", "--time_based", "--quiet"];
    a.extend_from_slice(extra);
    storbench(d, &a)
}

/// A device is blank only if it reads as zeros wherever it is sampled: one
/// full of random bytes (no signature at all), or one with data in its last
/// MiB only, is somebody's and is not written without --allow_overwrite.
#[test]
fn a_device_holding_data_without_a_signature_is_refused() {
    let d = scratch();
    let img = d.path().join("random.img");
    let random = random_bytes(32 << 20, 0x9E37_79B9_7F4A_7C15);
    std::fs::write(&img, &random).unwrap();
    let mut tail = vec![0u8; 32 << 20];
    tail[(32 << 20) - 700] = 1;
    let tail_img = d.path().join("tail.img");
    std::fs::write(&tail_img, &tail).unwrap();
    let Some(dev) = Loop::new(&img, 512) else { return };
    let Some(tail_dev) = Loop::new(&tail_img, 512) else { return };
    for (dev, image, content) in [(&dev.dev, &img, &random), (&tail_dev.dev, &tail_img, &tail)] {
        let w = write_job(d.path(), dev, &[]);
        assert_eq!(w.code, 2, "{}", w.stderr);
        assert!(w.stderr.contains("holds data (non-zero bytes") && w.stderr.contains("--allow_overwrite"), "{}", w.stderr);
        assert_eq!(&std::fs::read(image).unwrap(), content, "nothing was written to {dev}");
    }
    let allowed = write_job(d.path(), &dev.dev, &["--allow_overwrite", "1", "--results-dir", "ok"]);
    assert_eq!(allowed.code, 0, "the user may say so: {}", allowed.stderr);
}

/// A mounted device is refused even with --allow_overwrite; the error names
/// the one flag that overrides it. Mounted read-only: a write through a
/// read-write mount of a scrambled file system can hang the kernel's writeback.
#[test]
fn a_mounted_device_is_refused_even_with_allow_overwrite() {
    if !have("mount") {
        eprintln!("SKIP: no mount");
        return;
    }
    let d = scratch();
    let img = d.path().join("fs.img");
    std::fs::write(&img, vec![0u8; 32 << 20]).unwrap();
    assert!(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img).status().expect("mkfs.ext4").success());
    let Some(dev) = Loop::new(&img, 512) else { return };
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount").args(["-o", "ro", &dev.dev]).arg(&mnt).status().expect("mount");
    assert!(mounted.success(), "mount -o ro {}", dev.dev);
    let before = std::fs::read(&img).unwrap();
    let w = write_job(d.path(), &dev.dev, &["--allow_overwrite", "1"]);
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(w.code, 2, "{}", w.stderr);
    assert!(w.stderr.contains("is mounted on") && w.stderr.contains("no flag overrides") && w.stderr.contains("umount "), "{}", w.stderr);
    assert_eq!(std::fs::read(&img).unwrap(), before, "the file system is untouched");
}
