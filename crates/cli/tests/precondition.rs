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
#[test]
fn a_fill_writes_its_share_and_reads_back_what_the_file_really_holds() {
    let d = scratch();
    let f = d.path().join("sparse.dat");
    std::fs::File::create(&f).unwrap().set_len(64 << 20).unwrap();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--fill",
            "25%",
            "--quiet",
            "--results-dir",
            "out",
            "--name",
            "r",
            "--filename",
            f.to_str().unwrap(),
            "--allow_overwrite",
            "1",
            "--rw",
            "randread",
            "--runtime",
            "1",
            "--time_based",
            "1",
        ],
    );
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
    let r = storbench(
        d.path(),
        &[
            "run",
            "--fill",
            "0.5",
            "--quiet",
            "--results-dir",
            "out",
            "--name",
            "r",
            "--ioengine",
            "rbd",
            "--pool",
            "rbd",
            "--rbdname",
            &img,
            "--size",
            "64m",
            "--rw",
            "randread",
            "--runtime",
            "1",
            "--time_based",
            "1",
        ],
    );
    let du = std::process::Command::new("rbd").args(["du", "--format", "json", &format!("rbd/{img}")]).output().unwrap();
    let _ = std::process::Command::new("rbd").args(["rm", "--no-progress", &format!("rbd/{img}")]).output();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fill = run_result(&d.path().join("out")).jobs[0].fill.clone().unwrap();
    assert_eq!(fill.written_bytes, 32 << 20);
    let used = serde_json::from_slice::<serde_json::Value>(&du.stdout).unwrap()["images"][0]["used_size"].as_u64().unwrap();
    assert_eq!(fill.allocated_bytes, Some(used), "what rbd du says the image uses");
    assert_eq!(used, 32 << 20);
}
