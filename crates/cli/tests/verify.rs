//! Verification under load against real targets: files, a loop device whose
//! backing file is changed behind storbench's back mid-run, a write run
//! killed with SIGKILL and checked afterwards from its verify state, and an
//! RBD image whose data object is put back to an older copy (lost writes),
//! and later read runs without a state file that check each block (or
//! object) by its own header, storbench's or fio's.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn verify_of(results: &Path) -> Value {
    let doc = result_json(results);
    assert_valid(&doc);
    doc["jobs"][0]["verify"].clone()
}

/// A run's verification judged more than `min` units and found nothing wrong.
fn clean(results: &Path, min: u64) -> Value {
    let v = verify_of(results);
    assert!(v["checked"].as_u64().unwrap() > min, "{v}");
    assert_eq!(v["failed"], serde_json::json!([0, 0, 0, 0]), "{v}");
    v
}

fn failed(v: &Value, kind: usize) -> u64 {
    v["failed"][kind].as_u64().unwrap()
}

const CORRUPT: usize = 0;
const LOST_WRITE: usize = 1;
const MISSING: usize = 3;

#[test]
fn eight_workers_overwriting_one_region_raise_no_false_failure() {
    let d = scratch();
    let f = d.path().join("region.dat");
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "m",
            "--filename",
            f.to_str().unwrap(),
            "--size",
            "1m",
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--ioengine",
            "io_uring",
            "--direct",
            "1",
            "--iodepth",
            "8",
            "--numjobs",
            "8",
            "--runtime",
            "3",
            "--time_based",
            "1",
            "--verify",
            "crc32c",
            "--results-dir",
            "o",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = clean(&d.path().join("o"), 1000);
    assert!(v["pass_bytes"].as_u64().unwrap() > 0, "the read-back pass ran: {v}");
    assert!(v["stamped_bytes"].as_u64().unwrap() > 0 && v["cpu_ns"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn bytes_flipped_under_a_loop_device_mid_run_are_corruption_at_their_offset() {
    let d = scratch();
    let img = d.path().join("disk.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let Some(dev) = Loop::new(&img, 512) else { return };
    let state = d.path().join("state");
    let common = ["--filename", &dev.dev, "--size", "1m", "--direct", "1", "--verify", "xxhash", "--verify_state", state.to_str().unwrap()];
    let w = storbench(
        d.path(),
        &[&["run", "--name", "w", "--rw", "write", "--bs", "4k", "--do_verify", "0", "--results-dir", "w", "--quiet"][..], &common]
            .concat(),
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    // Reads for 3 s; a second in, two bytes of the unit at 40960 change in the backing file.
    let flip = std::thread::spawn({
        let img = img.clone();
        move || {
            std::thread::sleep(Duration::from_secs(1));
            use std::os::unix::fs::FileExt;
            let f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
            f.write_all_at(b"XY", 40960 + 1000).unwrap();
            f.sync_all().unwrap();
        }
    });
    let more = ["--allow_overwrite", "1", "--runtime", "3", "--time_based", "1", "--results-dir", "r", "--quiet"];
    let r = storbench(
        d.path(),
        &[&["run", "--name", "r", "--rw", "randread", "--bs", "4k", "--ioengine", "io_uring", "--iodepth", "4"][..], &more, &common]
            .concat(),
    );
    flip.join().unwrap();
    assert_eq!(r.code, 1, "a verify failure fails the run: {}", r.stderr);
    assert!(r.stdout.contains("VERIFY FAILED"), "{}", r.stdout);
    let v = verify_of(&d.path().join("r"));
    assert!(failed(&v, CORRUPT) >= 1 && failed(&v, LOST_WRITE) == 0 && failed(&v, MISSING) == 0, "{v}");
    let first = &v["failures"][0];
    assert_eq!(
        (first["kind"].as_str(), first["offset"].as_u64(), first["byte"].as_u64()),
        (Some("corrupt"), Some(40960), Some(1000)),
        "{v}"
    );
    assert_eq!(first["target"].as_str(), Some(dev.dev.as_str()));
    assert!(v["checked"].as_u64().unwrap() > 100, "{v}");
}

#[test]
fn a_verify_pass_after_sigkill_checks_only_what_was_acknowledged() {
    let d = scratch();
    let f = d.path().join("killed.dat");
    let state = d.path().join("state");
    let (f, state) = (f.to_str().unwrap(), state.to_str().unwrap());
    let mut child = Command::new(bin())
        .current_dir(d.path())
        .args(["run", "--name", "w", "--filename", f, "--size", "2m", "--rw", "randwrite", "--bs", "4k", "--ioengine", "io_uring"])
        .args(["--iodepth", "16", "--numjobs", "2", "--runtime", "60", "--time_based", "1", "--verify", "crc32c", "--verify_state", state])
        .args(["--results-dir", "w", "--quiet"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    crash(child.id()); // SIGKILL: nothing of storbench's own runs after this
    child.wait().unwrap();
    let v = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "v",
            "--filename",
            f,
            "--size",
            "2m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--verify",
            "crc32c",
            "--verify_interval",
            "4k",
            "--verify_state",
            state,
            "--verify_only",
            "1",
            "--results-dir",
            "v",
            "--quiet",
        ],
    );
    assert_eq!(v.code, 0, "{}", v.stderr);
    let t = verify_of(&d.path().join("v"));
    assert_eq!(t["failed"], serde_json::json!([0, 0, 0, 0]), "{t}");
    assert!(t["checked"].as_u64().unwrap() > 256, "most of the 512 units were written and checked: {t}");
}

#[test]
fn zeros_where_a_write_was_acknowledged_are_missing_and_a_stale_state_is_refused() {
    let d = scratch();
    let f = d.path().join("holes.dat");
    let state = d.path().join("state");
    let (fs, st) = (f.to_str().unwrap(), state.to_str().unwrap());
    let args = |name: &'static str, more: &[&'static str]| -> Vec<String> {
        let mut a: Vec<String> =
            ["run", "--name", name, "--filename", fs, "--size", "256k", "--verify", "sha256", "--verify_state", st, "--quiet"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        a.extend(more.iter().map(|s| s.to_string()));
        a.extend(["--results-dir".to_string(), name.to_string()]);
        a
    };
    let run = |a: Vec<String>| storbench(d.path(), &a.iter().map(String::as_str).collect::<Vec<_>>());
    let w = run(args("w", &["--rw", "write", "--bs", "8k", "--do_verify", "0"]));
    assert_eq!(w.code, 0, "{}", w.stderr);
    // Punch out one 8 KiB write behind storbench's back: its unit reads back as zeros.
    let punched = Command::new("fallocate").args(["--punch-hole", "--offset", "65536", "--length", "8192", fs]).status().unwrap();
    assert!(punched.success());
    let v = run(args("v", &["--rw", "read", "--bs", "8k", "--verify_only", "1"]));
    assert_eq!(v.code, 1, "{}", v.stderr);
    let t = verify_of(&d.path().join("v"));
    assert_eq!((failed(&t, MISSING), failed(&t, CORRUPT), failed(&t, LOST_WRITE)), (1, 0, 0), "{t}");
    assert_eq!(t["failures"][0]["offset"].as_u64(), Some(65536));
    assert_eq!(t["checked"].as_u64(), Some(32));
    // The report names the failure with its place.
    assert_eq!(storbench(d.path(), &["report", "v"]).code, 0);
    let html = std::fs::read_to_string(d.path().join("v/report.html")).unwrap();
    assert!(html.contains("v: verification (sha256, 8192 B units)") && html.contains("1 FAILED (1 missing)"), "{html}");
    assert!(html.contains("<td>65536</td>") && html.contains("zeros where a write was acknowledged"));
    // The state was kept in 8 KiB units: another unit size is refused, by name.
    let other = run(args("x", &["--rw", "read", "--bs", "8k", "--verify_interval", "4k", "--verify_only", "1"]));
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(other.stderr.contains("verify_interval=8192"), "{}", other.stderr);
}

#[test]
fn a_fio_job_with_verify_writes_then_reads_back_everything() {
    let d = scratch();
    std::fs::write(
        d.path().join("v.fio"),
        "[w]\nfilename=fv.dat\nsize=1m\nrw=randwrite\nbs=4k\nverify=md5\nverify_fatal=1\nioengine=psync\n",
    )
    .unwrap();
    let r = storbench(d.path(), &["run", "--fio", "v.fio", "--results-dir", "o", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = verify_of(&d.path().join("o"));
    assert_eq!(v["checksum"].as_str(), Some("sha256"), "fio's md5 is checked with sha256");
    assert_eq!(v["checked"].as_u64(), Some(256), "every 4 KiB block of the 1 MiB written once, read back once: {v}");
    assert_eq!(v["pass_bytes"].as_u64(), Some(1 << 20));
}

#[test]
fn verification_that_cannot_work_is_refused_before_anything_runs() {
    let d = scratch();
    for (args, says) in [
        (&["--ioengine", "null", "--size", "1m", "--verify", "crc32c"][..], "null engine keeps no data"),
        (&["--size", "1m", "--verify", "crc32c", "--verify_only", "1", "--time_based", "--runtime", "1"][..], "give verify_state=DIR"),
        (&["--size", "1m", "--bssplit", "4k/50:6k/50", "--verify", "crc32c"][..], "not a multiple of verify_interval"),
        (&["--size", "1m", "--verify_only", "1"][..], "verify_only needs verify="),
        (&["--size", "1m", "--bs", "256", "--verify", "crc32c"][..], "cannot hold a header"),
        (&["--size", "1m", "--rw", "write:1k", "--verify", "crc32c"][..], "rw skip 1024 is not a multiple"),
        (
            &["--size", "1m", "--ioengine", "io_uring", "--iodepth", "128", "--numjobs", "8", "--verify", "crc32c"][..],
            "at most 1000 operations in flight",
        ),
        (
            &[
                "--size",
                "1m",
                "--filename",
                "shared.dat",
                "--verify",
                "crc32c",
                "--name",
                "y",
                "--filename",
                "shared.dat",
                "--rw",
                "randwrite",
            ][..],
            "writes the target job 'x' verifies, without verify=",
        ),
        (
            // A later group's writer changes what a group after it checks against x's table.
            &[
                "--size",
                "1m",
                "--filename",
                "shared.dat",
                "--verify",
                "crc32c",
                "--name",
                "y",
                "--stonewall",
                "--filename",
                "shared.dat",
                "--rw",
                "randwrite",
                "--name",
                "z",
                "--stonewall",
                "--filename",
                "shared.dat",
                "--rw",
                "read",
                "--verify",
                "crc32c",
            ][..],
            "job 'y': writes the target job 'x' verifies",
        ),
    ] {
        let r = storbench(d.path(), &[&["run", "--name", "x", "--rw", "write"][..], args].concat());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        let written = ["storbench-results", "x.0.0", "shared.dat"].iter().any(|f| d.path().join(f).exists());
        assert!(!written, "{args:?}: nothing written");
    }
}

#[test]
fn an_rbd_image_put_back_to_an_older_copy_has_lost_writes() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let img = format!("sbverify-{}", std::process::id());
    let state = d.path().join("state");
    let base =
        ["--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--keep_image", "1", "--size", "8m", "--bs", "64k", "--verify", "crc32c"];
    let with = |more: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = base.iter().chain(more).map(|s| s.to_string()).collect();
        a.extend(["--verify_state".into(), state.display().to_string(), "--verify_interval".into(), "4k".into(), "--quiet".into()]);
        a
    };
    let run = |name: &str, more: &[&str]| {
        let mut a = vec!["run".to_string(), "--name".into(), name.into(), "--results-dir".into(), name.into()];
        a.extend(with(more));
        storbench(d.path(), &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let first = run("w1", &["--rw", "write", "--do_verify", "0", "--iodepth", "8"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    // The image's first data object (4 MiB) as the first write left it.
    let info = Command::new("rbd").args(["info", "--format", "json", &format!("rbd/{img}")]).output().unwrap();
    let prefix = serde_json::from_slice::<Value>(&info.stdout).unwrap()["block_name_prefix"].as_str().unwrap().to_string();
    let object = format!("{prefix}.0000000000000000");
    let old = d.path().join("old-object");
    assert!(Command::new("rados").args(["-p", "rbd", "get", &object]).arg(&old).status().unwrap().success());
    let second = run("w2", &["--rw", "write", "--iodepth", "8"]);
    assert_eq!(second.code, 0, "the second write verifies clean: {}", second.stderr);
    assert!(Command::new("rados").args(["-p", "rbd", "put", &object]).arg(&old).status().unwrap().success());
    let check = run("v", &["--rw", "read", "--verify_only", "1"]);
    let _ = Command::new("rbd").args(["rm", "--no-progress", &format!("rbd/{img}")]).output();
    assert_eq!(check.code, 1, "{}", check.stderr);
    let v = verify_of(&d.path().join("v"));
    assert_eq!(failed(&v, LOST_WRITE), 1024, "every 4 KiB unit of the first 4 MiB is the first write's: {v}");
    assert_eq!((failed(&v, CORRUPT), failed(&v, MISSING), v["checked"].as_u64()), (0, 0, Some(2048)), "{v}");
    let f = &v["failures"][0];
    assert!(f["found"].as_u64().unwrap() < f["expected"][0].as_u64().unwrap(), "older than acknowledged: {f}");
}

#[test]
fn rados_objects_verify_clean_under_a_mixed_load() {
    // (No creates and deletes beside partial writes: the object model's reads can then
    // come up short for reasons of its own, not verification's; see the closing note.)
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let p = format!("sbvmix{}.", std::process::id());
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "o",
            "--ioengine",
            "rados",
            "--pool",
            "storbench",
            "--object_prefix",
            &p,
            "--objects",
            "64",
            "--object_size",
            "8k",
            "--object_ops",
            "read:60,update:15,write:5",
            "--object_op_size",
            "1k-2k",
            "--rw",
            "randrw",
            "--prefill",
            "1",
            "--numjobs",
            "2",
            "--iodepth",
            "8",
            "--runtime",
            "3",
            "--time_based",
            "1",
            "--verify",
            "crc32c",
            "--results-dir",
            "o",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stderr, r.stdout);
    let v = clean(&d.path().join("o"), 100);
    assert!(v["unknown"].as_u64().unwrap() > 0, "partial writes make objects unknown rather than judged: {v}");
    assert!(rados_objects("storbench", &p).is_empty(), "cleaned up");
}

#[test]
fn a_rados_object_put_back_is_a_lost_write_and_one_removed_is_missing() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let p = format!("sbvobj{}.", std::process::id());
    let state = d.path().join("state");
    let run = |name: &str, more: &[&str]| {
        let mut a = vec!["run", "--name", name, "--ioengine", "rados", "--pool", "storbench", "--object_prefix", &p, "--objects", "20"];
        a.extend([
            "--object_size",
            "8k",
            "--verify",
            "xxhash",
            "--verify_state",
            state.to_str().unwrap(),
            "--quiet",
            "--results-dir",
            name,
        ]);
        a.extend(more);
        storbench(d.path(), &a)
    };
    let w = run("w", &["--rw", "write", "--number_ios", "20", "--cleanup", "0", "--do_verify", "0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let old = d.path().join("old");
    let (three, five) = (format!("{p}3"), format!("{p}5"));
    assert!(Command::new("rados").args(["-p", "storbench", "get", &three]).arg(&old).status().unwrap().success());
    // Every object updated again (and read back clean), then one put back and one removed behind storbench's back.
    let u = run("u", &["--object_ops", "update:1", "--objects_exist", "1", "--number_ios", "400", "--cleanup", "0"]);
    assert_eq!(u.code, 0, "{}", u.stderr);
    assert_eq!(verify_of(&d.path().join("u"))["checked"].as_u64(), Some(20));
    assert!(Command::new("rados").args(["-p", "storbench", "put", &three]).arg(&old).status().unwrap().success());
    assert!(Command::new("rados").args(["-p", "storbench", "rm", &five]).status().unwrap().success());
    let v = run("v", &["--rw", "read", "--objects_exist", "1", "--verify_only", "1", "--cleanup", "1"]);
    assert_eq!(v.code, 1, "{}", v.stderr);
    let t = verify_of(&d.path().join("v"));
    assert_eq!((failed(&t, LOST_WRITE), failed(&t, MISSING), failed(&t, CORRUPT)), (1, 1, 0), "{t}");
    assert_eq!(t["checked"].as_u64(), Some(20));
    let targets: Vec<&str> = t["failures"].as_array().unwrap().iter().map(|f| f["target"].as_str().unwrap()).collect();
    assert!(targets.iter().any(|t| t.ends_with(" key 3")) && targets.iter().any(|t| t.ends_with(" key 5")), "{targets:?}");
    assert_eq!(t["listed"].as_u64(), Some(19), "the listing was checked for every object but the one already found missing: {t}");
    // That run removed the objects (cleanup=1); one put back behind storbench's back is a stale listing.
    assert!(rados_objects("storbench", &p).is_empty());
    assert!(Command::new("rados").args(["-p", "storbench", "put", &format!("{p}7")]).arg(&old).status().unwrap().success());
    let l = run("l", &["--rw", "read", "--verify_only", "1", "--cleanup", "0"]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let t = verify_of(&d.path().join("l"));
    let counts = (t["listing_stale"].as_u64(), t["listed"].as_u64(), t["failed"].clone());
    assert_eq!(counts, (Some(1), Some(20), serde_json::json!([0, 0, 0, 0])), "a listing is a warning, not a data failure: {t}");
    assert!(t["listing_examples"][0].as_str().unwrap().contains(" key 7: still listed after its delete"), "{t}");
    assert!(l.stdout.contains("deleted objects listed"), "{}", l.stdout);
    for o in rados_objects("storbench", &p) {
        let _ = Command::new("rados").args(["-p", "storbench", "rm", &o]).status();
    }
}

/// A mixed object load with verification on an HTTP store: multipart (or
/// SLO) objects, ranged and whole reads, updates, deletes; clean, and every
/// read judged against the version acknowledged.
fn http_objects_verify_clean(env: &[(&'static str, String)], engine: &str, place: (&str, &str), segmented: (&str, &str)) {
    let d = scratch();
    let r = storbench_env(
        d.path(),
        env,
        &[
            "run",
            "--name",
            "h",
            "--ioengine",
            engine,
            place.0,
            place.1,
            "--objects",
            "300",
            "--object_size",
            "4k/50:96k/50",
            segmented.0,
            segmented.1,
            "--object_ops",
            "read:60,create:10,update:15,delete:15",
            "--object_op_size",
            "1k-8k",
            "--rw",
            "randrw",
            "--prefill",
            "1",
            "--iodepth",
            "8",
            "--number_ios",
            "600",
            "--verify",
            "crc32c",
            "--results-dir",
            "h",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{engine}: {}{}", r.stderr, r.stdout);
    let v = clean(&d.path().join("h"), 100);
    assert!(v["pass_bytes"].as_u64().unwrap() > 0, "{engine}: the read-back pass read the objects: {v}");
}

#[test]
fn s3_objects_with_multipart_verify_clean() {
    let Some(env) = s3_env() else { return };
    let bucket = format!("sbv{}", std::process::id());
    http_objects_verify_clean(&env, "s3", ("--bucket", &bucket), ("--multipart_threshold", "64k"));
}

#[test]
fn swift_objects_with_slo_verify_clean_and_one_deleted_behind_storbench_is_missing() {
    let Some(env) = swift_env("aio") else { return };
    let container = format!("sbv{}", std::process::id());
    http_objects_verify_clean(&env, "swift", ("--container", &container), ("--slo_threshold", "64k"));
    // Objects written and kept, one deleted with the Swift API, then checked.
    let d = scratch();
    let state = d.path().join("state");
    let kept = format!("{container}k");
    let run = |name: &str, more: &[&str]| {
        let mut a = vec!["run", "--name", name, "--ioengine", "swift", "--container", &kept, "--objects", "10", "--object_size", "8k"];
        a.extend([
            "--object_prefix",
            "o.",
            "--verify",
            "xxhash",
            "--verify_state",
            state.to_str().unwrap(),
            "--quiet",
            "--results-dir",
            name,
        ]);
        a.extend(more);
        storbench_env(d.path(), &env, &a)
    };
    let w = run("w", &["--rw", "write", "--number_ios", "10", "--cleanup", "0", "--do_verify", "0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let (url, token) = swift_session(&env);
    let deleted = Command::new("curl")
        .args(["-sf", "-X", "DELETE", "-H", &format!("X-Auth-Token: {token}"), &format!("{url}/{kept}/o.4")])
        .status()
        .unwrap();
    assert!(deleted.success());
    let v = run("v", &["--rw", "read", "--objects_exist", "1", "--verify_only", "1", "--cleanup", "1"]);
    assert_eq!(v.code, 1, "{}", v.stderr);
    let t = verify_of(&d.path().join("v"));
    assert_eq!((failed(&t, MISSING), failed(&t, LOST_WRITE), failed(&t, CORRUPT), t["checked"].as_u64()), (1, 0, 0, Some(10)), "{t}");
    assert!(t["failures"][0]["target"].as_str().unwrap().ends_with(" key 4"), "{t}");
}

/// A read run over `file` (1 MiB in 4 KiB blocks) with verify and no state.
fn read_by_headers(dir: &Path, name: &str, file: &Path) -> Run {
    let f = file.to_str().unwrap();
    let args = ["run", "--name", name, "--filename", f, "--size", "1m", "--rw", "read", "--bs", "4k", "--verify", "crc32c"];
    storbench(dir, &[&args[..], &["--results-dir", name]].concat())
}

/// Change `len` bytes of `file` at `offset` behind storbench's back.
fn overwrite(file: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(bytes, offset).unwrap();
    f.sync_all().unwrap();
}

#[test]
fn a_later_read_run_without_state_checks_every_block_by_its_header() {
    let d = scratch();
    let f = d.path().join("f.dat");
    let fs = f.to_str().unwrap();
    let w =
        storbench(d.path(), &["run", "--name", "w", "--filename", fs, "--size", "1m", "--rw", "write", "--bs", "4k", "--verify", "crc32c"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    // Clean: every block checked by its header, and the run says what it could not judge.
    let clean = read_by_headers(d.path(), "r0", &f);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    let v = verify_of(&d.path().join("r0"));
    assert_eq!((v["checked"].as_u64(), v["by_header"].as_u64(), v["unwritten"].as_u64()), (Some(256), Some(256), Some(0)), "{v}");
    assert_eq!(v["failed"], serde_json::json!([0, 0, 0, 0]), "{v}");
    assert!(clean.stdout.contains("without verify_state: 256 judged by their own headers"), "{}", clean.stdout);
    assert!(clean.stdout.contains("lost writes (stale generation) not judged"), "{}", clean.stdout);
    // Read in larger blocks than were written: each header says how long its unit is.
    let large = ["run", "--name", "r64", "--filename", fs, "--size", "1m", "--rw", "read", "--bs", "64k", "--verify", "crc32c"];
    let r64 = storbench(d.path(), &[&large[..], &["--results-dir", "r64"]].concat());
    assert_eq!(r64.code, 0, "{}", r64.stderr);
    let v = verify_of(&d.path().join("r64"));
    assert_eq!((v["checked"].as_u64(), v["by_header"].as_u64()), (Some(256), Some(256)), "{v}");
    // A flipped byte, a block copied over another, a block zeroed: each found at its offset.
    overwrite(&f, 163840 + 1000, b"XY");
    let mut block = vec![0u8; 4096];
    std::fs::File::open(&f).and_then(|h| std::os::unix::fs::FileExt::read_exact_at(&h, &mut block, 40960)).unwrap();
    overwrite(&f, 81920, &block);
    overwrite(&f, 122880, &[0u8; 4096]);
    let bad = read_by_headers(d.path(), "r1", &f);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    let v = verify_of(&d.path().join("r1"));
    assert_eq!((failed(&v, CORRUPT), failed(&v, MISSING), failed(&v, LOST_WRITE)), (2, 1, 0), "{v}");
    assert_eq!((v["checked"].as_u64(), v["misplaced"].as_u64()), (Some(256), Some(1)), "{v}");
    let found: Vec<(u64, &str)> =
        v["failures"].as_array().unwrap().iter().map(|f| (f["offset"].as_u64().unwrap(), f["what"].as_str().unwrap())).collect();
    assert!(found.iter().any(|(o, w)| *o == 81920 && w.contains("written for offset 40960")), "{found:?}");
    assert!(found.iter().any(|(o, w)| *o == 122880 && w.contains("zeros")), "{found:?}");
    assert!(found.iter().any(|(o, w)| *o == 163840 && w.contains("first wrong byte at +1000")), "{found:?}");
    assert!(bad.stdout.contains(&format!("corrupt at {fs} offset 163840")), "{}", bad.stdout);
}

/// fio's verify_only without a state file: the job's writes are drawn but
/// not issued (fio's do_dry_run), and what they would have written is read
/// back and judged by its headers. A random write of half the file reads
/// back exactly the half it wrote (reading the whole region would call the
/// other half missing); storbench refused this ("give verify_state").
#[test]
fn verify_only_without_state_reads_back_what_the_job_would_have_written() {
    let d = scratch();
    let f = d.path().join("f.dat");
    let fs = f.to_str().unwrap();
    let job =
        ["--name", "w", "--filename", fs, "--size", "1m", "--io_size", "512k", "--rw", "randwrite", "--bs", "4k", "--verify", "crc32c"];
    let w = storbench(d.path(), &[&["run"][..], &job, &["--results-dir", "w"]].concat());
    assert_eq!(w.code, 0, "{}", w.stderr);
    let check = |dir: &str| storbench(d.path(), &[&["run"][..], &job, &["--verify_only", "1", "--results-dir", dir]].concat());
    let clean = check("v0");
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    let v = verify_of(&d.path().join("v0"));
    assert_eq!((v["checked"].as_u64(), v["by_header"].as_u64()), (Some(128), Some(128)), "the 128 blocks written, each once: {v}");
    assert_eq!(v["failed"], serde_json::json!([0, 0, 0, 0]), "{v}");
    assert!(clean.stdout.contains("without verify_state: 128 judged by their own headers"), "{}", clean.stdout);
    // A byte flipped in a block the job wrote: found, named, exit 1.
    let mut bytes = std::fs::read(&f).unwrap();
    let hit = (0..256u64).map(|b| b * 4096).find(|o| bytes[*o as usize..*o as usize + 4] != [0; 4]).expect("a written block");
    bytes[hit as usize + 2000] ^= 0x20;
    std::fs::write(&f, &bytes).unwrap();
    let bad = check("v1");
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    let v = verify_of(&d.path().join("v1"));
    assert_eq!((failed(&v, CORRUPT), v["checked"].as_u64()), (1, Some(128)), "{v}");
    assert_eq!(v["failures"][0]["offset"].as_u64(), Some(hit), "{v}");
    // A time-based job's writes never end: refused, saying what to give.
    let timed = storbench(d.path(), &[&["run"][..], &job, &["--verify_only", "1", "--time_based", "--runtime", "1"]].concat());
    assert_eq!(timed.code, 2, "{}", timed.stderr);
    assert!(timed.stderr.contains("time_based") && timed.stderr.contains("verify_state"), "{}", timed.stderr);
}

#[test]
fn a_file_fio_wrote_with_verify_is_checked_by_fios_headers() {
    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh must install it");
        eprintln!("SKIP: fio is not installed (scripts/test.sh installs it)");
        return;
    }
    let d = scratch();
    let fio_write = |file: &str, verify: &str| {
        let args = ["--name=w", "--size=1m", "--rw=write", "--bs=4k", "--output=/dev/null"];
        let mut fio = Command::new("fio");
        fio.current_dir(d.path()).args(args).arg(format!("--filename={file}")).arg(format!("--verify={verify}"));
        assert!(fio.status().unwrap().success(), "fio wrote {file}");
    };
    fio_write("g.dat", "crc32c");
    let g = d.path().join("g.dat");
    let clean = read_by_headers(d.path(), "r0", &g);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    let v = verify_of(&d.path().join("r0"));
    assert_eq!((v["checked"].as_u64(), v["by_header"].as_u64()), (Some(256), Some(256)), "fio's blocks checked: {v}");
    overwrite(&g, 163840 + 1000, b"XY");
    let bad = read_by_headers(d.path(), "r1", &g);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    let v = verify_of(&d.path().join("r1"));
    assert_eq!((failed(&v, CORRUPT), v["failures"][0]["offset"].as_u64()), (1, Some(163840)), "{v}");
    assert!(v["failures"][0]["what"].as_str().unwrap().contains("fio's block: crc32c"), "{v}");
    // A checksum storbench does not compute: fio's blocks are not called corruption.
    fio_write("m.dat", "md5");
    let other = read_by_headers(d.path(), "r2", &d.path().join("m.dat"));
    let v = verify_of(&d.path().join("r2"));
    assert_eq!((v["foreign"].as_u64(), v["failed"].clone()), (Some(256), serde_json::json!([0, 0, 0, 0])), "{v}");
    assert!(other.stdout.contains("cannot check as read") && other.stdout.contains("fio's checksum type"), "{}", other.stdout);
}

/// Removes a test's RADOS objects however the test ends.
struct RemoveObjects(String);

impl Drop for RemoveObjects {
    fn drop(&mut self) {
        for o in rados_objects("storbench", &self.0) {
            let _ = Command::new("rados").args(["-p", "storbench", "rm", &o]).status();
        }
    }
}

#[test]
fn rados_objects_read_later_without_state_are_checked_by_the_version_they_name() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let p = format!("sbvhdr{}.", std::process::id());
    let _cleanup = RemoveObjects(p.clone());
    let run = |name: &str, more: &[&str]| {
        let mut a = vec!["run", "--name", name, "--ioengine", "rados", "--pool", "storbench", "--object_prefix", &p, "--objects", "20"];
        a.extend(["--object_size", "8k", "--verify", "xxhash", "--number_ios", "20", "--cleanup", "0", "--results-dir", name]);
        a.extend(more);
        storbench(d.path(), &a)
    };
    let w = run("w", &["--rw", "write", "--do_verify", "0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let clean = run("r0", &["--rw", "read", "--objects_exist", "1"]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    let v = verify_of(&d.path().join("r0"));
    assert_eq!((v["checked"].as_u64(), v["by_header"].as_u64()), (Some(20), Some(20)), "every object read once, in order: {v}");
    assert!(clean.stdout.contains("without verify_state"), "{}", clean.stdout);
    // One object's byte flipped behind storbench's back: the key is named.
    let obj = d.path().join("obj");
    let three = format!("{p}3");
    assert!(Command::new("rados").args(["-p", "storbench", "get", &three]).arg(&obj).status().unwrap().success());
    let mut bytes = std::fs::read(&obj).unwrap();
    bytes[5000] ^= 0x40;
    std::fs::write(&obj, bytes).unwrap();
    assert!(Command::new("rados").args(["-p", "storbench", "put", &three]).arg(&obj).status().unwrap().success());
    let bad = run("r1", &["--rw", "read", "--objects_exist", "1"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    let v = verify_of(&d.path().join("r1"));
    assert_eq!((failed(&v, CORRUPT), v["checked"].as_u64()), (1, Some(20)), "{v}");
    let f = &v["failures"][0];
    assert!(f["target"].as_str().unwrap().ends_with(" key 3") && f["byte"].as_u64() == Some(5000), "{f}");
    // Key 4's object put under key 7's name: an intact version, of another key (its header names it).
    let four = d.path().join("four");
    assert!(Command::new("rados").args(["-p", "storbench", "get", &format!("{p}4")]).arg(&four).status().unwrap().success());
    assert!(Command::new("rados").args(["-p", "storbench", "put", &format!("{p}7")]).arg(&four).status().unwrap().success());
    let moved = run("r2", &["--rw", "read", "--objects_exist", "1"]);
    assert_eq!(moved.code, 1, "{}", moved.stderr);
    let v = verify_of(&d.path().join("r2"));
    assert_eq!((failed(&v, CORRUPT), v["misplaced"].as_u64()), (2, Some(1)), "key 3 damaged, key 7 holding key 4's: {v}");
    let f = v["failures"].as_array().unwrap().iter().find(|f| f["target"].as_str().unwrap().ends_with(" key 7")).expect("key 7 named");
    assert!(f["what"].as_str().unwrap().contains("misplaced: an intact version of key 4"), "{f}");
}

/// fio's cross-stripe-verify.fio writes 16 KiB blocks every 128 KiB from
/// 120 KiB (units not on a 16 KiB grid) and verifies them: storbench
/// refused it ("the offset 122880 is not a multiple of the 16384-byte
/// unit"); now the units are laid from the job's offset, checked where
/// they were written, kept so in a verify state, and a flipped byte is
/// found at its own block's offset by a later read run.
#[test]
fn blocks_verified_off_the_unit_grid_as_fios_cross_stripe_example() {
    let d = scratch();
    let job = "[global]\nbs=16k\nrw=write:112k\nverify=crc32c\nfilename=cs.dat\nsize=4m\nverify_backlog=1\noffset_increment=1m\n\
               offset=120k\nio_size=512k\ngroup_reporting\nloops=2\n[write-verify]\nnumjobs=2\n";
    std::fs::write(d.path().join("cs.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "cs.fio", "--results-dir", "fio", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    clean(&d.path().join("fio"), 8);
    let f = d.path().join("st.dat");
    let fs = f.to_str().unwrap();
    let common = ["--filename", fs, "--size", "1m", "--offset", "120k", "--bs", "16k", "--verify", "crc32c", "--verify_state", "vs"];
    let w = storbench(d.path(), &[&["run", "--name", "w", "--rw", "write:112k"][..], &common, &["--results-dir", "w"]].concat());
    assert_eq!(w.code, 0, "{}", w.stderr);
    clean(&d.path().join("w"), 4);
    // The third block written: 120k + 2 x 128k.
    overwrite(&f, 376 * 1024 + 100, b"XY");
    let r = storbench(d.path(), &[&["run", "--name", "r", "--rw", "read:112k"][..], &common, &["--results-dir", "r"]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = verify_of(&d.path().join("r"));
    assert!(failed(&v, CORRUPT) >= 1 && failed(&v, LOST_WRITE) + failed(&v, MISSING) == 0, "{v}");
    let offsets: Vec<u64> = v["failures"].as_array().unwrap().iter().map(|f| f["offset"].as_u64().unwrap()).collect();
    assert!(offsets.iter().all(|o| *o == 376 * 1024), "each read of that block, and only it, fails: {offsets:?}");
    // A job laying its units from another phase on the same state is refused by name.
    let other = ["--filename", fs, "--size", "1016k", "--offset", "128k", "--bs", "16k", "--verify", "crc32c", "--verify_state", "vs"];
    let r = storbench(d.path(), &[&["run", "--name", "o", "--rw", "read"][..], &other, &["--results-dir", "o"]].concat());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("units starting at offset 8192"), "{}", r.stderr);
}

/// fio counts a write job's verify pass among the job's reads (backend.c:
/// the pass's I/Os are reads, its time the read runtime). The fio drop-in
/// shows the pass so: one read per block written (the pass reads back each
/// write as it was made), over the pass's own time, as fio does for the
/// same job file; storbench's own result keeps it apart, as a phase.
#[test]
fn a_verified_write_jobs_pass_is_its_fio_reads_as_in_fio() {
    let d = scratch();
    let text = "[wv]\nrw=randwrite\nbs=4k\nsize=4m\nioengine=psync\nverify=crc32c\nfilename=wv.dat\n";
    std::fs::write(d.path().join("wv.fio"), text).unwrap();
    let json = |r: &Run| -> Value { serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout)) };
    let r = storbench(d.path(), &["fio", "--output-format=json", "wv.fio"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = json(&r);
    let (read, write) = (&ours["jobs"][0]["read"], &ours["jobs"][0]["write"]);
    assert_eq!(
        (read["total_ios"].as_u64(), read["io_bytes"].as_u64(), read["clat_ns"]["N"].as_u64()),
        (Some(1024), Some(4 << 20), Some(1024)),
        "{read}"
    );
    assert!(read["iops"].as_f64().unwrap() > 0.0, "{read}");
    assert_eq!(write["total_ios"].as_u64(), Some(1024), "{write}");
    // storbench's own result: the writes alone, the pass a phase of its own ...
    let res = storbench(d.path(), &["run", "--fio", "wv.fio", "--results-dir", "o", "--quiet"]);
    assert_eq!(res.code, 0, "{}", res.stderr);
    let doc = result_json(&d.path().join("o"));
    assert_valid(&doc);
    let job = &doc["jobs"][0];
    assert!(job["ops"].as_array().unwrap().iter().all(|o| o["op"] != "read"), "no reads in the measured phase: {}", job["ops"]);
    let pass = &job["phases"][0];
    let (reads, pass_ns) = (&pass["ops"][0], pass["runtime_ns"].as_u64().unwrap());
    assert_eq!((pass["phase"].as_str(), reads["op"].as_str(), reads["ios"].as_u64()), (Some("verify"), Some("read"), Some(1024)), "{pass}");
    assert!(show(d.path(), "o", "text").contains("read (verify pass)"), "the summary shows the pass on a line of its own");
    // ... and its fio-json the pass as the job's reads, over the pass's time.
    let shown: Value = serde_json::from_str(&show(d.path(), "o", "fio-json")).unwrap();
    let read = &shown["jobs"][0]["read"];
    assert_eq!((read["total_ios"].as_u64(), read["runtime"].as_u64()), (Some(1024), Some((pass_ns / 1000).div_ceil(1000))), "{read}");
    // With verify_backlog each write is read back once, by the backlog or
    // by the pass, as in fio (which takes what its backlog verified off the
    // list its verify phase reads).
    std::fs::write(
        d.path().join("wb.fio"),
        text.replace("verify=crc32c\n", "verify=crc32c\nverify_backlog=64\n").replace("wv.dat", "wb.dat"),
    )
    .unwrap();
    let r = storbench(d.path(), &["fio", "--output-format=json", "wb.fio"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let backlog = json(&r);
    assert_eq!(backlog["jobs"][0]["read"]["total_ios"].as_u64(), Some(1024), "{}", backlog["jobs"][0]["read"]);
    if !fio_available() {
        return;
    }
    let count = |doc: &Value, dir: &str| doc["jobs"][0][dir]["total_ios"].as_u64();
    for (file, ours) in [("wv.fio", &ours), ("wb.fio", &backlog)] {
        let f = Command::new("fio").current_dir(d.path()).args(["--output-format=json", file]).output().unwrap();
        assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
        let fio: Value = serde_json::from_slice(&f.stdout).unwrap();
        assert_eq!((count(ours, "read"), count(ours, "write")), (count(&fio, "read"), count(&fio, "write")), "{file}: fio's counts");
    }
}

/// fio's verify=meta checks each block's header (its own crc32c, offset,
/// length) and not the data: a flipped data byte passes, a flipped header
/// byte fails at its block's offset. storbench's meta is the same check, on
/// its own blocks and on fio's.
#[test]
fn verify_meta_finds_a_corrupt_header_and_not_a_flipped_data_byte_as_fio() {
    let d = scratch();
    let f = d.path().join("m.dat");
    let fs = f.to_str().unwrap();
    let base = ["--filename", fs, "--size", "1m", "--bs", "4k", "--verify", "meta", "--verify_interval", "512"];
    let w = storbench(d.path(), &[&["run", "--name", "w", "--rw", "write", "--results-dir", "w", "--quiet"][..], &base].concat());
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert!(show(d.path(), "w", "text").contains("meta: each unit's header judged"), "the summary says which judgement meta makes");
    let read =
        |name: &str| storbench(d.path(), &[&["run", "--name", name, "--rw", "read", "--results-dir", name, "--quiet"][..], &base].concat());
    overwrite(&f, 163840 + 1000, b"XY");
    let data = read("r0");
    assert_eq!(data.code, 0, "a data byte is not meta's to judge: {}", data.stderr);
    let v = verify_of(&d.path().join("r0"));
    assert_eq!((v["checked"].as_u64(), v["failed"].clone()), (Some(2048), serde_json::json!([0, 0, 0, 0])), "{v}");
    overwrite(&f, 163840 + 512 + 20, b"Z");
    let head = read("r1");
    assert_eq!(head.code, 1, "{}", head.stderr);
    let v = verify_of(&d.path().join("r1"));
    assert_eq!((failed(&v, CORRUPT), v["failures"][0]["offset"].as_u64()), (1, Some(163840 + 512)), "{v}");
    if !fio_available() {
        return;
    }
    let fio = |args: &[&str]| {
        let common =
            ["--name=m", "--filename=fm.dat", "--size=1m", "--bs=4k", "--verify=meta", "--verify_interval=512", "--output=/dev/null"];
        Command::new("fio").current_dir(d.path()).args(common).args(args).output().unwrap()
    };
    assert!(fio(&["--rw=write", "--do_verify=0"]).status.success(), "fio wrote fm.dat");
    let fm = d.path().join("fm.dat");
    overwrite(&fm, 163840 + 1000, b"XY");
    assert!(fio(&["--rw=read"]).status.success(), "fio's meta does not judge a data byte either");
    let ours = read_by_headers(d.path(), "r2", &fm);
    assert_eq!(ours.code, 0, "storbench reading fio's meta blocks: {}", ours.stderr);
    overwrite(&fm, 163840 + 512 + 20, b"Z");
    let theirs = fio(&["--rw=read"]);
    assert!(!theirs.status.success(), "fio finds the header");
    let ours = read_by_headers(d.path(), "r3", &fm);
    assert_eq!(ours.code, 1, "{}", ours.stderr);
    assert_eq!(verify_of(&d.path().join("r3"))["failures"][0]["offset"].as_u64(), Some(163840 + 512));
}

/// A state file that is a symbolic link is refused (bad input, one line),
/// never written through: a link to a missing file elsewhere had the state
/// created there (exit 0).
#[test]
fn a_verify_state_file_that_is_a_link_is_refused_and_nothing_is_made_where_it_leads() {
    let d = scratch();
    std::fs::create_dir_all(d.path().join("vs")).unwrap();
    std::fs::create_dir_all(d.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere/state", d.path().join("vs/st.dat.vstate")).unwrap();
    let args = ["run", "--name", "w", "--filename", "st.dat", "--size", "1m", "--rw", "write", "--verify", "crc32c"];
    let r = storbench(d.path(), &[&args[..], &["--verify_state", "vs", "--results-dir", "out", "--quiet"]].concat());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("vs/st.dat.vstate: a symbolic link") && r.stderr.lines().count() == 1, "{}", r.stderr);
    assert!(listing(&d.path().join("elsewhere")).is_empty(), "nothing made where the link leads");
}
