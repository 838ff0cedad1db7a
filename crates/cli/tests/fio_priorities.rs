//! fio's ordering and priority options in fio job files, shaped as fio's
//! examples write them (waitfor.fio, cmdprio-percentage.fio,
//! cmdprio-bssplit.fio): jobs that wait for a named job start when it has
//! ended (start times in the results), and I/O priorities reach the kernel
//! and are counted apart per priority.

mod common;
use common::*;

/// The jobs of a result document: (name, start_ns, runtime_ns).
fn starts(doc: &serde_json::Value) -> Vec<(String, u64, u64)> {
    let jobs = doc["jobs"].as_array().unwrap();
    jobs.iter()
        .map(|j| (j["name"].as_str().unwrap().to_string(), j["start_ns"].as_u64().unwrap_or(0), j["runtime_ns"].as_u64().unwrap()))
        .collect()
}

/// waitfor.fio, scaled down: four jobs of one group, each but the first
/// waiting for the one before (new_group changes only fio's reporting), run
/// one after another as in fio; a job that names none starts with the first.
#[test]
fn wait_for_starts_a_job_when_the_named_one_has_ended() {
    let d = scratch();
    let job = "[global]\nthreads=1\ngroup_reporting\nfilename=f.dat\nfilesize=8m\nioengine=psync\n\
               [writers]\nrw=write\nbs=128k\nnumjobs=2\nruntime=1\n\
               [readers]\nnew_group\nwait_for=writers\nrw=randread\nbs=4k\nnumjobs=2\nruntime=1\n\
               [writers2]\nnew_group\nwait_for=readers\nrw=randwrite\nbs=4k\nnumjobs=2\nruntime=1\n\
               [readers2]\nnew_group\nwait_for=writers2\nrw=randread\nbs=4k\nnumjobs=2\nruntime=1\n\
               [free]\nrw=randread\nbs=4k\nruntime=1\nsize=1m\n";
    std::fs::write(d.path().join("w.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "w.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let jobs = starts(&doc);
    assert_eq!(jobs.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["writers", "readers", "writers2", "readers2", "free"]);
    assert_eq!(jobs[0].1, 0, "the first job does not wait");
    for w in jobs[..4].windows(2) {
        let ((prev, start, runtime), (name, next, _)) = (&w[0], &w[1]);
        assert!(*next >= start + runtime, "{name} started at {next} ns, before {prev} ended ({start} + {runtime} ns)");
    }
    assert_eq!(jobs[4].1, 0, "a job that waits for none starts with the group: {jobs:?}");
    assert!(ios(&doc, 3, "read") > 0, "the last job ran");
}
