//! The rbd engine against the real one-node cluster started by
//! scripts/testenv/ceph (scripts/test.sh starts it and exports its env).
//! Without the cluster these tests skip and say why; under CI they fail.

mod common;
use common::*;
use std::time::{Duration, Instant};

fn cluster() -> bool {
    ceph_cluster()
}

fn image_name(tag: &str) -> String {
    format!("sbtest-{tag}-{}", std::process::id())
}

fn remove_image(name: &str) {
    let _ = std::process::Command::new("rbd").args(["rm", "--no-progress", &format!("rbd/{name}")]).output();
}

#[test]
fn creates_a_marked_image_writes_and_reads_it() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let img = image_name("rw");
    let w = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "w",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &img,
            "--size",
            "64m",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--iodepth",
            "4",
            "--keep_image",
            "1",
            "--results-dir",
            "w",
            "--quiet",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    let doc = result_json(&d.path().join("w"));
    assert_eq!(ios(&doc, 0, "write"), 64, "the whole 64 MiB image written once");
    assert_eq!(doc["jobs"][0]["targets"], serde_json::json!([format!("rbd:rbd/{img}")]));
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "r",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &img,
            "--rw",
            "randread",
            "--iodepth",
            "16",
            "--runtime",
            "2",
            "--time_based",
            "--results-dir",
            "r",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("r"));
    assert!(ios(&doc, 0, "read") > 100, "reads happened");
    assert_eq!(doc["jobs"][0]["ops"][0]["errors"], serde_json::json!({}));
    remove_image(&img);
}

#[test]
fn refuses_to_write_an_image_storbench_did_not_create() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let img = image_name("theirs");
    let made = std::process::Command::new("rbd").args(["create", "--size", "16M", &format!("rbd/{img}")]).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let w = storbench(
        d.path(),
        &["run", "--name", "w", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--rw", "randwrite", "--runtime", "1"],
    );
    assert_eq!(w.code, 2, "{}", w.stderr);
    assert!(w.stderr.contains("was not created by storbench") && w.stderr.contains("allow_overwrite"), "{}", w.stderr);
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "r",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &img,
            "--rw",
            "randread",
            "--runtime",
            "1",
            "--time_based",
            "--quiet",
            "--results-dir",
            "r",
        ],
    );
    assert_eq!(r.code, 0, "reads are allowed: {}", r.stderr);
    remove_image(&img);
}

#[test]
fn missing_pool_image_and_bad_keyring_are_clear_errors() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let r =
        storbench(d.path(), &["run", "--name", "p", "--ioengine", "rbd", "--pool", "no-such-pool", "--rw", "randread", "--runtime", "1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("pool 'no-such-pool' does not exist"), "{}", r.stderr);
    let r = storbench(
        d.path(),
        &["run", "--name", "i", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", "no-such-image", "--rw", "randread", "--runtime", "1"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("does not exist; give a size"), "{}", r.stderr);
    std::fs::write(d.path().join("bad.keyring"), "[client.admin]\n\tkey = AQBbadbadbadbadbadbadbadbadbadbadbadbadbQ==\n").unwrap();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "k",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--keyring",
            "bad.keyring",
            "--connect_timeout",
            "5",
            "--rw",
            "randread",
            "--runtime",
            "1",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("rados_connect failed"), "{}", r.stderr);
}

#[test]
fn unreachable_monitor_fails_within_the_timeout() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let conf = d.path().join("nowhere.conf");
    std::fs::write(&conf, "[global]\nmon host = 127.0.0.1:1\nauth client required = none\n").unwrap();
    let start = Instant::now();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "m",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--conf",
            conf.to_str().unwrap(),
            "--connect_timeout",
            "3",
            "--rw",
            "randread",
            "--runtime",
            "1",
        ],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("rados_connect failed"), "{}", r.stderr);
    assert!(start.elapsed() < Duration::from_secs(60), "bounded, not a hang: {:?}", start.elapsed());
}

#[test]
fn fio_job_files_with_ioengine_rbd_run_on_storbench() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let img = image_name("fio");
    let job = format!("[global]\nioengine=rbd\nclientname=admin\npool=rbd\nrbdname={img}\nsize=16m\n[seq]\nrw=write\nbs=64k\niodepth=8\n");
    std::fs::write(d.path().join("rbd.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "rbd.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("out")), 0, "write"), 256);
    remove_image(&img);
}

#[test]
fn rbd_bench_mode_prints_rbd_bench_lines_and_percentiles() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let img = image_name("bench");
    let mk = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "mk",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &img,
            "--size",
            "32m",
            "--rw",
            "write",
            "--bs",
            "4m",
            "--keep_image",
            "1",
            "--quiet",
            "--results-dir",
            "mk",
        ],
    );
    assert_eq!(mk.code, 0, "{}", mk.stderr);
    let r = storbench(
        d.path(),
        &[
            "rbd",
            "bench",
            "--io-type",
            "write",
            "--io-size",
            "64K",
            "--io-threads",
            "8",
            "--io-total",
            "16M",
            "--io-pattern",
            "rand",
            &format!("rbd/{img}"),
            "--results-dir",
            "out",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("bench  type write io_size 65536 io_threads 8 bytes 16777216 pattern random"), "{}", r.stdout);
    assert!(r.stdout.contains("  SEC       OPS   OPS/SEC   BYTES/SEC"), "{}", r.stdout);
    assert!(r.stdout.contains("ops: 256 "), "16 MiB in 64 KiB writes:\n{}", r.stdout);
    assert!(r.stdout.contains("write latency: min") && r.stdout.contains("p99.9"), "{}", r.stdout);
    assert_eq!(ios(&result_json(&d.path().join("out")), 0, "write"), 256);
    assert_eq!(show(d.path(), "out", "rbd-bench"), r.stdout, "show prints rbd bench's output again, byte for byte");
    let refused = storbench(d.path(), &["rbd", "bench", "--io-type", "write", "--io-total", "4M", "rbd/storbench"]);
    assert_eq!(refused.code, 2, "the cluster's own image is not storbench's: {}", refused.stderr);
    remove_image(&img);
}

fn used_bytes(img: &str) -> u64 {
    let o = std::process::Command::new("rbd").args(["du", "--format", "json", &format!("rbd/{img}")]).output().unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("rbd du: {}", String::from_utf8_lossy(&o.stderr)));
    v["images"][0]["used_size"].as_u64().unwrap()
}

#[test]
fn one_job_spreads_over_several_images() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let (a, b) = (image_name("vol-a"), image_name("vol-b"));
    let both = format!("{a}:{b}");
    let w = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "v",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &both,
            "--size",
            "8m",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--iodepth",
            "4",
            "--keep_image",
            "1",
            "--results-dir",
            "w",
            "--quiet",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    let doc = result_json(&d.path().join("w"));
    assert_eq!(ios(&doc, 0, "write"), 16, "8 MiB on each of two images");
    assert_eq!(doc["jobs"][0]["targets"], serde_json::json!([format!("rbd:rbd/{a},{b}")]));
    assert_eq!((used_bytes(&a), used_bytes(&b)), (8 << 20, 8 << 20), "both volumes written in full");
    remove_image(&b);
    let theirs = std::process::Command::new("rbd").args(["create", "--size", "8M", &format!("rbd/{b}")]).output().unwrap();
    assert!(theirs.status.success());
    let r = storbench(
        d.path(),
        &["run", "--name", "v", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &both, "--rw", "randwrite", "--runtime", "1"],
    );
    assert_eq!(r.code, 2, "one foreign image refuses the whole job: {}", r.stderr);
    assert!(r.stderr.contains(&format!("image '{b}' was not created by storbench")), "{}", r.stderr);
    remove_image(&a);
    remove_image(&b);
}

/// Workers sharing an image with the exclusive-lock feature (the cluster's
/// default features) hand the lock back and forth on every write: the run
/// says so, what it costs and the fix; one worker, or reads only, do not.
#[test]
fn workers_sharing_an_image_with_its_exclusive_lock_are_warned_about() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let img = image_name("xlock");
    let run = |out: &str, rw: &str, numjobs: &str| {
        let args = [
            "run",
            "--name",
            "x",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &img,
            "--size",
            "64m",
            "--rw",
            rw,
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--numjobs",
            numjobs,
            "--runtime",
            "2",
            "--time_based",
            "1",
            "--keep_image",
            "1",
            "--results-dir",
            out,
            "--quiet",
        ];
        let r = storbench(d.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc = result_json(&d.path().join(out));
        let kinds: Vec<String> =
            doc["jobs"][0]["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap().to_string()).collect();
        (kinds, r.stdout)
    };
    let (shared, text) = run("two", "randwrite", "2");
    assert!(shared.iter().any(|k| k == "shared_exclusive_lock"), "{shared:?}");
    assert!(text.contains("exclusive-lock") && text.contains("one worker with a deeper queue"), "{text}");
    let (one, _) = run("one", "randwrite", "1");
    assert!(!one.iter().any(|k| k == "shared_exclusive_lock"), "one worker holds the lock alone: {one:?}");
    let (reads, _) = run("reads", "randread", "2");
    assert!(!reads.iter().any(|k| k == "shared_exclusive_lock"), "reads take no lock: {reads:?}");
    // Two jobs of one worker each, writing the image together: the lock moves between them just the same.
    let job = format!(
        "[global]\nioengine=rbd\nclientname=admin\npool=rbd\nrbdname={img}\nsize=64m\nbs=4k\niodepth=4\nruntime=2\n\
         time_based\n[a]\nrw=randwrite\n[b]\nrw=randwrite\n[c]\nrw=randread\n"
    );
    std::fs::write(d.path().join("two.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "two.fio", "--results-dir", "jobs", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("jobs"));
    for (k, wrote) in [(0, true), (1, true), (2, false)] {
        let w: Vec<&serde_json::Value> =
            doc["jobs"][k]["warnings"].as_array().unwrap().iter().filter(|w| w["kind"] == "shared_exclusive_lock").collect();
        assert_eq!(w.len(), wrote as usize, "job {k}: {w:?}");
        if wrote {
            assert_eq!((w[0]["job"].as_str(), w[0]["workers"].as_u64()), (Some("a + b"), Some(2)), "{w:?}");
        }
    }
    remove_image(&img);
}

/// Reads of an image's never-written extents are answered without reaching
/// an OSD's disk: a job reading a new, empty image is flagged; one reading
/// what an earlier group of the run wrote is not.
#[test]
fn reads_of_never_written_image_extents_are_flagged() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let img = image_name("unwritten");
    let common = ["--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--size", "32m", "--bs", "4k", "--quiet"];
    let kinds = |out: &str, job: usize| -> Vec<String> {
        let doc = result_json(&d.path().join(out));
        doc["jobs"][job]["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap().to_string()).collect()
    };
    // Made by rbd itself (a read-only job does not create an image), never written.
    let made = std::process::Command::new("rbd").args(["create", "--size", "32M", &format!("rbd/{img}")]).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let fresh = storbench(
        d.path(),
        &[&["run", "--results-dir", "fresh"][..], &common, &["--name", "r", "--rw", "randread", "--runtime", "1", "--time_based", "1"]]
            .concat(),
    );
    assert_eq!(fresh.code, 0, "{}", fresh.stderr);
    assert!(kinds("fresh", 0).iter().any(|k| k == "never_written_reads"), "a new image reads zeros from no disk: {:?}", kinds("fresh", 0));
    remove_image(&img);
    let args = [
        &["run", "--results-dir", "both"][..],
        &common,
        &[
            "--name",
            "w",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--name",
            "r",
            "--stonewall",
            "--rw",
            "randread",
            "--runtime",
            "1",
            "--time_based",
            "1",
        ],
    ]
    .concat();
    let both = storbench(d.path(), &args);
    assert_eq!(both.code, 0, "{}", both.stderr);
    assert!(!kinds("both", 1).iter().any(|k| k == "never_written_reads"), "the first group wrote it: {:?}", kinds("both", 1));
    remove_image(&img);
}

fn rbd_images() -> Vec<String> {
    let o = std::process::Command::new("rbd").args(["ls", "rbd"]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).lines().map(String::from).collect()
}

/// volumes=2: one image per volume (`<rbdname>-0`, `-1`), both there while
/// the run goes, each driven at the job's own iodepth (per-volume figures
/// beside the job's), and both removed when the run ends.
#[test]
fn each_volume_is_an_image_of_its_own_removed_when_the_run_ends() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let base = image_name("vols");
    let names = [format!("{base}-0"), format!("{base}-1")];
    let mut child = std::process::Command::new(bin())
        .args(["run", "--name", "v", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &base, "--size", "16m", "--rw", "randwrite"])
        .args(["--bs", "4k", "--iodepth", "2", "--volumes", "2", "--runtime", "3", "--time_based", "1", "--results-dir", "out", "--quiet"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let mut seen = false;
    while !seen && began.elapsed() < Duration::from_secs(30) && child.try_wait().unwrap().is_none() {
        let now = rbd_images();
        seen = names.iter().all(|n| now.contains(n));
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let left: Vec<String> = rbd_images().into_iter().filter(|i| i.starts_with(&base)).collect();
    for n in &left {
        remove_image(n);
    }
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(seen, "both volumes' images existed during the run");
    assert!(left.is_empty(), "the images the run made are removed when it ends: {left:?}");
    let doc = result_json(&d.path().join("out"));
    let vols = doc["jobs"][0]["per_volume"].as_array().unwrap();
    assert_eq!(vols.len(), 2);
    assert!(vols.iter().all(|v| v["ops"][0]["ios"].as_u64().unwrap() > 0), "{vols:?}");
    assert_eq!(doc["jobs"][0]["workers"], 2);
}

/// `cleanup --ioengine rbd --pool P --rbdname A:B` removes the images
/// storbench made (kept by keep_image=1) and keeps one it did not make.
#[test]
fn cleanup_removes_named_images_storbench_made_and_keeps_others() {
    if !cluster() {
        return;
    }
    let d = scratch();
    let (ours, theirs) = (image_name("ours"), image_name("theirs-c"));
    let w = storbench(
        d.path(),
        &["run", "--name", "w", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &ours, "--size", "8m", "--rw", "write"]
            .into_iter()
            .chain(["--bs", "1m", "--keep_image", "1", "--quiet", "--results-dir", "w"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    let made = std::process::Command::new("rbd").args(["create", "--size", "8M", &format!("rbd/{theirs}")]).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let both = format!("{ours}:{theirs}");
    let c = storbench(d.path(), &["cleanup", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &both]);
    let now = rbd_images();
    remove_image(&theirs);
    remove_image(&ours);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains(&format!("removed image 'rbd/{ours}'")), "{}", c.stdout);
    assert!(c.stderr.contains(&format!("image 'rbd/{theirs}' was not created by storbench: kept")), "{}", c.stderr);
    assert!(!now.contains(&ours) && now.contains(&theirs), "{now:?}");
}
