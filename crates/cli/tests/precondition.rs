//! `run --precondition`: every block target written twice over in 128 KiB
//! sequential writes before the jobs, within the safety rules.

mod common;
use common::*;

#[test]
fn the_target_is_written_twice_over_before_the_jobs() {
    let d = scratch();
    let f = d.path().join("t.dat");
    let r = storbench(
        d.path(),
        &[
            "run",
            "--precondition",
            "--quiet",
            "--results-dir",
            "out",
            "--name",
            "r",
            "--filename",
            f.to_str().unwrap(),
            "--size",
            "8m",
            "--rw",
            "randread",
            "--runtime",
            "1",
            "--time_based",
            "1",
            "--ioengine",
            "io_uring",
            "--direct",
            "1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let names: Vec<&str> = res.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["precondition.1", "r"]);
    let pre = &res.jobs[0];
    let w = pre.op(storbench_workload::OpKind::Write).unwrap();
    assert_eq!((w.ios, w.bytes), (128, 16 << 20), "twice 8 MiB in 128 KiB writes");
    assert!(pre.spec.precondition && pre.spec.direct && pre.queue_depth == 32);
    assert!(pre.group < res.jobs[1].group, "before the jobs, in a group of its own");
    assert!(pre.warnings.is_empty(), "a precondition's few samples are not warned about: {:?}", pre.warnings);
}

#[test]
fn a_target_the_jobs_may_not_write_is_not_preconditioned() {
    let d = scratch();
    let f = d.path().join("data.dat");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--precondition",
            "--results-dir",
            "out",
            "--name",
            "r",
            "--filename",
            f.to_str().unwrap(),
            "--rw",
            "randread",
            "--runtime",
            "1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("refusing to write") && r.stderr.contains("allow_overwrite"), "{}", r.stderr);
    assert_eq!(std::fs::read(&f).unwrap(), data, "the data is untouched");
    assert!(!d.path().join("out").exists());
}

/// `run --fill 25%` on a sparse file: a quarter written once in 1 MiB
/// writes, and the file's own allocation (its blocks, not its size) read
/// back as what the store holds.
/// `run --fill PCT` before a one-second random-read job on `target` (the
/// job's target options), results in `dir/out`.
fn fill_run(dir: &std::path::Path, env: &[(&'static str, String)], pct: &str, target: &[&str]) -> Run {
    let mut args = vec!["run", "--fill", pct, "--quiet", "--results-dir", "out", "--name", "r", "--rw", "randread"];
    args.extend(target);
    args.extend(["--runtime", "1", "--time_based", "1"]);
    storbench_env(dir, env, &args)
}

#[test]
fn a_fill_writes_its_share_and_reads_back_what_the_file_really_holds() {
    let d = scratch();
    let f = d.path().join("sparse.dat");
    std::fs::File::create(&f).unwrap().set_len(64 << 20).unwrap();
    let r = fill_run(d.path(), &[], "25%", &["--filename", f.to_str().unwrap(), "--allow_overwrite", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let fill = res.jobs[0].fill.as_ref().expect("the fill job's result");
    assert_eq!((res.jobs[0].name.as_str(), fill.written_bytes), ("fill.1", 16 << 20));
    let held = fill.allocated_bytes.unwrap();
    assert!((16 << 20..=17 << 20).contains(&held), "the sparse file holds what was written, not its 64 MiB: {held}");
    assert!(
        res.jobs[0].warnings.is_empty()
            || !res.jobs[0].warnings.iter().any(|w| matches!(w, storbench_model::Warning::FillNotAllocated { .. }))
    );
    assert!(res.jobs[1].fill.is_none());
    assert!(show(d.path(), "out", "normal").contains("fill fill.1: wrote 16.0 MiB (25% of"));
}

#[test]
fn an_rbd_fill_is_checked_against_the_images_allocated_extents() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let img = format!("sbfill-{}", std::process::id());
    let r =
        fill_run(d.path(), &[], "0.5", &["--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--keep_image", "1", "--size", "64m"]);
    let du = std::process::Command::new("rbd").args(["du", "--format", "json", &format!("rbd/{img}")]).output().unwrap();
    let _ = std::process::Command::new("rbd").args(["rm", "--no-progress", &format!("rbd/{img}")]).output();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fill = run_result(&d.path().join("out")).jobs[0].fill.clone().unwrap();
    assert_eq!(fill.written_bytes, 32 << 20);
    let used = serde_json::from_slice::<serde_json::Value>(&du.stdout).unwrap()["images"][0]["used_size"].as_u64().unwrap();
    assert_eq!(fill.allocated_bytes, Some(used), "what rbd du says the image uses");
    assert_eq!(used, 32 << 20);
}

/// `run --fill 1%` on a RADOS pool: objects of the job's size up to 1% of
/// the pool's capacity (stored + max_avail, as `ceph df` has it), checked
/// against how much the pool's stored bytes grew, and gone after the run.
#[test]
fn a_pool_fill_takes_its_share_of_the_capacity_and_the_pool_accounts_for_it() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let df = std::process::Command::new("ceph").args(["df", "--format", "json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&df.stdout).unwrap();
    let pool = doc["pools"].as_array().unwrap().iter().find(|p| p["name"] == "storbench").unwrap()["stats"].clone();
    let capacity = pool["stored"].as_u64().unwrap() + pool["max_avail"].as_u64().unwrap();
    let p = format!("sbfillp{}.", std::process::id());
    let r = fill_run(
        d.path(),
        &[],
        "1%",
        &["--ioengine", "rados", "--pool", "storbench", "--object_prefix", &p, "--objects", "20", "--object_size", "4m", "--prefill", "1"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let fill = res.jobs[0].fill.clone().unwrap();
    let want = capacity as f64 * 0.01;
    assert!(
        (fill.written_bytes as f64 - want).abs() <= 4.0 * 1_048_576.0 + want * 0.05,
        "{} written for 1% of {capacity}",
        fill.written_bytes
    );
    let grown = fill.allocated_bytes.unwrap();
    assert!(grown as f64 >= fill.written_bytes as f64 * 0.9, "the pool's stored bytes grew by {grown} for {} written", fill.written_bytes);
    assert!(rados_objects("storbench", "storbench.fill").is_empty(), "the fill's objects are removed at the end");
}

#[test]
fn a_bucket_fill_is_a_share_of_the_jobs_objects_and_the_bucket_accounts_for_it() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    let bucket = format!("sbfillb{}", std::process::id());
    let r = fill_run(
        d.path(),
        &env,
        "50%",
        &["--ioengine", "s3", "--bucket", &bucket, "--objects", "40", "--object_size", "64k", "--prefill", "1"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fill = run_result(&d.path().join("out")).jobs[0].fill.clone().unwrap();
    assert_eq!((fill.written_bytes, fill.allocated_bytes), (20 * 65536, Some(20 * 65536)), "RGW's bytes used grew by what was written");
}

/// The jobs' names and each one's written bytes in a run's result.
fn written(run: &std::path::Path) -> Vec<(String, u64)> {
    let doc = result_json(run);
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let w = j["ops"].as_array().unwrap().iter().filter(|o| o["op"] == "write").map(|o| o["bytes"].as_u64().unwrap()).sum();
            (j["name"].as_str().unwrap().to_string(), w)
        })
        .collect()
}

/// `sweep --precondition` (and `--fill`) writes each target once, before
/// the points, in a run of its own (before: `sweep` took neither flag and
/// a sweep's points ran on targets in whatever state they were);
/// `--each-point` writes them before every point instead; a resumed sweep
/// does not write them again.
#[test]
fn a_sweep_preconditions_its_targets_once_before_the_points() {
    let d = scratch();
    let sweep = |extra: &[&str], out: &str| {
        let mut a = vec!["sweep", "--quiet", "--results-dir", out, "--name", "j", "--ioengine", "psync", "--filename", "t.dat"];
        a.extend(["--size", "4m", "--rw", "randread", "--runtime", "1", "--time_based", "1", "--sweep", "bs=4k,64k"]);
        a.extend(extra);
        storbench(d.path(), &a)
    };
    let r = sweep(&["--precondition"], "once");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(written(&d.path().join("once/000_precondition")), [("precondition.1".to_string(), 8 << 20)], "twice over 4 MiB");
    for p in ["once/001_bs-4k", "once/002_bs-64k"] {
        assert_eq!(written(&d.path().join(p)), [("j".to_string(), 0)], "{p}: the point's own job alone");
    }
    let r = storbench(d.path(), &["sweep", "--resume", "once"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("000_precondition finished before"), "{}", r.stderr);
    // The sweep's report takes its provenance from the first point, not the precondition run.
    let r = storbench(d.path(), &["report", "once", "-o", "once.html"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = std::fs::read_to_string(d.path().join("once.html")).unwrap();
    let provenance = &page[page.find("Provenance (first point)").expect("a provenance section")..];
    assert!(provenance.contains("--sweep") && !provenance.contains("precondition.1"), "{}", &provenance[..provenance.len().min(2000)]);

    let r = sweep(&["--fill", "50%", "--each-point"], "each");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!d.path().join("each/000_fill").exists());
    for p in ["each/001_bs-4k", "each/002_bs-64k"] {
        assert_eq!(written(&d.path().join(p)), [("fill.1".to_string(), 2 << 20), ("j".to_string(), 0)], "{p}");
    }
    let r = sweep(&["--each-point"], "bad");
    assert!(r.code == 2 && r.stderr.contains("--each-point goes with --precondition or --fill"), "{}", r.stderr);
    assert!(!d.path().join("bad").exists(), "nothing written before refusing");
}
