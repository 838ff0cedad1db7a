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
