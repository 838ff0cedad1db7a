//! `storbench sweep`: on the simulated store (the null engine with a queue
//! of servers, whose knee is known in advance) the knee is found and the
//! rest of its curve skipped; an interrupted sweep resumes without redoing
//! what finished; on a real file with io_uring a 2-D grid runs whole and
//! reads back as a set of runs.

mod common;
use common::*;
use std::time::Duration;
use storbench_model::sweep::{PointState, SweepIndex};

fn index(dir: &std::path::Path) -> SweepIndex {
    SweepIndex::load(dir).expect("sweep.json")
}

fn states(ix: &SweepIndex) -> Vec<&'static str> {
    ix.points
        .iter()
        .map(|p| match p.state {
            PointState::Done => "done",
            PointState::Skipped { .. } => "skipped",
            PointState::Interrupted => "interrupted",
            PointState::Pending => "pending",
            PointState::Failed { .. } => "failed",
        })
        .collect()
}

/// 4 servers of 10 ms each: IOPS double with the queue depth up to 4 (about
/// 400), then stay while latency doubles: the knee is iodepth=4. (Long
/// service times keep the simulation's own wake-up delays, a few hundred
/// microseconds on a busy machine, small beside them.)
const SIMULATED: [&str; 14] = [
    "--name",
    "s",
    "--ioengine",
    "null",
    "--service_time",
    "10ms",
    "--servers",
    "4",
    "--runtime",
    "1",
    "--time_based",
    "1",
    "--size",
    "1g",
];

#[test]
fn the_sweep_stops_at_the_planted_knee_and_names_it() {
    let d = scratch();
    let mut args = vec!["sweep", "--quiet", "--results-dir", "sw"];
    args.extend(SIMULATED);
    args.extend(["--sweep", "iodepth=1..64x2"]);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("sw"));
    assert_eq!(ix.knees.len(), 1, "{:?}", ix.knees);
    assert_eq!(ix.knees[0].values, ["4"], "{}", ix.knees[0].rule);
    assert_eq!(states(&ix), ["done", "done", "done", "done", "skipped", "skipped", "skipped"], "one step past the knee, no more");
    let f = |i: usize| ix.figures(i).unwrap();
    assert!(f(2).iops > 1.8 * f(1).iops && f(3).iops < 1.05 * f(2).iops, "{} {} {}", f(1).iops, f(2).iops, f(3).iops);
    assert!(r.stdout.contains("<- knee") && r.stdout.contains("knee of iodepth: iodepth=4"), "{}", r.stdout);
    // The set of runs reads back in order, for show, compare and report.
    let shown = show(d.path(), "sw", "csv");
    assert!(shown.lines().count() > 4, "{shown}");
    // A new sweep never overwrites one: it says how to go on with it.
    let again = storbench(d.path(), &args);
    assert!(again.code == 2 && again.stderr.contains("--resume sw"), "{}", again.stderr);
}

#[test]
fn an_interrupted_sweep_resumes_without_redoing_finished_points() {
    let d = scratch();
    let mut args = vec!["sweep", "--results-dir", "sw", "--no-knee"];
    args.extend(SIMULATED);
    args.extend(["--runtime", "2", "--sweep", "iodepth=1,2,4"]);
    // Into the second point (each takes about 2 s).
    let r = interrupted(d.path(), &args, Duration::from_millis(3000));
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(r.stderr.contains("--resume"), "says how to go on: {}", r.stderr);
    let sw = d.path().join("sw");
    let before = index(&sw);
    assert_eq!(states(&before), ["done", "interrupted", "pending"]);
    let first = std::fs::read(sw.join(&before.points[0].dir).join("result.json")).unwrap();
    let r = storbench(d.path(), &["sweep", "--quiet", "--resume", "sw"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = index(&sw);
    assert_eq!(states(&after), ["done", "done", "done"]);
    assert_eq!(std::fs::read(sw.join(&after.points[0].dir).join("result.json")).unwrap(), first, "the finished point was not run again");
    let aside = format!("{}.interrupted-1", after.points[1].dir);
    assert!(sw.join(&aside).join("result.json").exists(), "the interrupted attempt's results are kept in {aside}");
}

/// A sweep records each finished point as one line appended to sweep.log
/// and rewrites sweep.json only when it starts and ends (its cost once grew
/// with the points done: 205 MB rewritten after every point of a 1000 x
/// 1000 grid). Killed (SIGKILL: no chance to tidy up), its finished points
/// still read back, and --resume runs only the others.
#[test]
fn a_killed_sweep_keeps_its_points_in_an_append_only_log() {
    let d = scratch();
    let mut args = vec!["sweep", "--results-dir", "sw", "--no-knee"];
    args.extend(SIMULATED);
    args.extend(["--sweep", "iodepth=1,2,4,8"]);
    let (r, _) = signalled(d.path(), &[], &args, &[("sweep run 3/4", Duration::from_millis(300), libc::SIGKILL)]);
    assert_eq!(r.code, -1, "killed: {}", r.stderr);
    let sw = d.path().join("sw");
    let whole: SweepIndex = serde_json::from_slice(&std::fs::read(sw.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(states(&whole), ["pending"; 4], "sweep.json is written when the sweep starts, not after each point");
    let log = std::fs::read_to_string(sw.join("sweep.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "one line a point: {log}");
    assert_eq!(states(&index(&sw)), ["done", "done", "pending", "pending"], "the log read on top of the index");
    let r = storbench(d.path(), &["sweep", "--quiet", "--resume", "sw"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(states(&index(&sw)), ["done"; 4]);
    assert!(!sw.join("sweep.log").exists(), "folded into sweep.json at the end");
    let whole: SweepIndex = serde_json::from_slice(&std::fs::read(sw.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(states(&whole), ["done"; 4]);
}

#[test]
fn a_two_dimensional_sweep_on_a_file_with_io_uring() {
    let d = scratch();
    let args = [
        "sweep",
        "--quiet",
        "--results-dir",
        "sw",
        "--name",
        "r",
        "--rw",
        "randread",
        "--filename",
        "f",
        "--size",
        "64m",
        "--ioengine",
        "io_uring",
        "--runtime",
        "1",
        "--time_based",
        "1",
        "--no-knee",
        "--sweep",
        "numjobs=1,2",
        "--sweep",
        "iodepth=1,4,16",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("sw"));
    assert_eq!(states(&ix), ["done"; 6]);
    for (i, p) in ix.points.iter().enumerate() {
        let f = p.figures.as_ref().unwrap();
        assert!(f.iops > 0.0 && f.p99_ns >= f.p50_ns && f.errors == 0, "point {i}: {f:?}");
        let result = run_result(&d.path().join("sw").join(&p.dir));
        assert_eq!(result.jobs[0].workers.to_string(), p.values[0], "numjobs applied");
        assert_eq!(result.jobs[0].queue_depth.to_string(), p.values[1], "iodepth applied");
    }
    let bad = storbench(d.path(), &["sweep", "--name", "r", "--filename", "f", "--sweep", "iodepth=1..8x1"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--sweep iodepth=1..8x1"), "{}", bad.stderr);
}

/// A write job with verify reads everything back after its writes (its
/// verify pass): a sweep point's IOPS are the writes' alone, never the
/// pass's reads added as if they had run beside them; the pass is measured
/// as a phase of its own in the point's result.
#[test]
fn a_sweep_over_a_verified_write_job_keeps_the_pass_out_of_its_iops() {
    let d = scratch();
    let args = [
        "sweep",
        "--quiet",
        "--results-dir",
        "sw",
        "--name",
        "wv",
        "--rw",
        "randwrite",
        "--filename",
        "f",
        "--size",
        "4m",
        "--bs",
        "4k",
        "--ioengine",
        "io_uring",
        "--verify",
        "crc32c",
        "--no-knee",
        "--sweep",
        "iodepth=1,2",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("sw"));
    assert_eq!(states(&ix), ["done"; 2]);
    for p in &ix.points {
        let f = p.figures.as_ref().unwrap();
        let job = &run_result(&d.path().join("sw").join(&p.dir)).jobs[0];
        let write = job.op(storbench_workload::OpKind::Write).unwrap();
        assert_eq!((f.iops, job.ops.len()), (write.iops, 1), "the point's IOPS are the writes': {f:?}");
        let pass = job.phase(storbench_model::Phase::Verify).expect("the pass measured as a phase of its own");
        assert_eq!(pass.op(storbench_workload::OpKind::Read).map(|o| o.ios), Some(1024), "{:?}", pass.ops);
    }
}

/// The Ceph field report's surface, scaled down: RBD volumes x queue depth
/// on the test cluster (scripts/testenv/ceph), each point's I/O spread over
/// that many images.
#[test]
fn volumes_by_queue_depth_on_rbd_images() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let base = format!("sbtest-sweep-{}", std::process::id());
    let args = [
        "sweep",
        "--quiet",
        "--results-dir",
        "sw",
        "--name",
        "v",
        "--ioengine",
        "rbd",
        "--pool",
        "rbd",
        "--rbdname",
        &base,
        "--size",
        "32m",
        "--rw",
        "randwrite",
        "--direct",
        "1",
        "--runtime",
        "1",
        "--time_based",
        "1",
        "--no-knee",
        "--sweep",
        "images=1,2",
        "--sweep",
        "iodepth=1,8",
    ];
    let r = storbench(d.path(), &args);
    for k in 0..2 {
        let _ = std::process::Command::new("rbd").args(["rm", "--no-progress", &format!("rbd/{base}-{k}")]).output();
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("sw"));
    assert_eq!(states(&ix), ["done"; 4]);
    for p in &ix.points {
        let result = run_result(&d.path().join("sw").join(&p.dir));
        let images: Vec<String> = (0..p.values[0].parse::<usize>().unwrap()).map(|k| format!("{base}-{k}")).collect();
        assert_eq!(result.jobs[0].targets, [format!("rbd:rbd/{}", images.join(","))], "point {:?}", p.values);
        let f = p.figures.as_ref().unwrap();
        assert!(f.iops > 0.0 && f.errors == 0, "{:?}: {f:?}", p.values);
    }
    let qd = |i: usize| ix.figures(i).unwrap().iops;
    assert!(qd(1) > qd(0) && qd(3) > qd(2), "a deeper queue does more on a cluster: {} {} {} {}", qd(0), qd(1), qd(2), qd(3));
}

#[test]
fn a_job_file_with_a_sweep_table() {
    let d = scratch();
    let toml = "[global]\nioengine = \"null\"\nservice_time = \"10ms\"\nservers = 4\nruntime = 1\ntime_based = true\nsize = \"1g\"\n\
                [[job]]\nname = \"s\"\n[sweep]\nnumjobs = \"1..2\"\niodepth = [1, 2]\n";
    std::fs::write(d.path().join("jobs.toml"), toml).unwrap();
    let r = storbench(d.path(), &["sweep", "jobs.toml", "--quiet", "--no-knee", "--results-dir", "sw"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("sw"));
    assert_eq!(ix.dims.iter().map(|d| d.option.as_str()).collect::<Vec<_>>(), ["numjobs", "iodepth"], "the file's order");
    assert_eq!(states(&ix), ["done"; 4]);
    let run = storbench(d.path(), &["run", "jobs.toml"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("storbench sweep jobs.toml"), "{}", run.stderr);
    let twice = storbench(d.path(), &["sweep", "jobs.toml", "--sweep", "iodepth=4"]);
    assert!(twice.code == 2 && twice.stderr.contains("iodepth is swept twice"), "{}", twice.stderr);
}

/// Two groups run one after another (fio's `stonewall`): one server of
/// 2 ms (about 500 IOPS at any depth), then four (about 2,000 at iodepth 4).
const TWO_GROUPS: &str = "[global]\nioengine=null\nsize=1g\ntime_based=1\nruntime=1\nservice_time=2ms\n\
[one]\nrw=randread\nservers=1\n[four]\nstonewall\nrw=randread\nservers=4\n";

#[test]
fn groups_that_ran_one_after_another_are_never_added_up() {
    let d = scratch();
    std::fs::write(d.path().join("two.fio"), TWO_GROUPS).unwrap();
    let r = storbench(d.path(), &["sweep", "--quiet", "--results-dir", "sw", "--fio", "two.fio", "--sweep", "iodepth=4", "--no-knee"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("sw/sweep.json")).unwrap()).unwrap();
    let f = &ix["points"][0]["figures"];
    let groups = f["groups"].as_array().unwrap_or_else(|| panic!("each group's own figures: {f}"));
    let iops: Vec<f64> = groups.iter().map(|g| g["figures"]["iops"].as_f64().unwrap()).collect();
    assert_eq!(iops.len(), 2, "{f}");
    assert!(iops[1] > 2.5 * iops[0], "one server, then four: {iops:?}");
    // The headline is the sequence's own rate, never the sum of the two.
    let head = f["iops"].as_f64().unwrap();
    assert!(head > iops[0] && head < iops[1], "headline {head} between the groups' {iops:?}, not their sum");
    assert!(r.stdout.contains("group 0 (one)") && r.stdout.contains("group 1 (four)"), "{}", r.stdout);
    assert!(r.stdout.contains("one after another"), "the table says what its headline is: {}", r.stdout);
}

/// A new user's block-size sweep, values typed out of order: the points
/// run, list and compare in the order of their sizes (not 262144 < 32768 <
/// 4096 < 512 as strings), read in KiB, and no knee cuts the block-size
/// axis short (IOPS fall there because each I/O carries more). Along the
/// queue depth of the same grid the knee is still sought; a third dimension
/// gets its grids, one per value, in the report.
#[test]
fn block_sizes_order_by_size_read_with_units_and_have_no_knee() {
    let d = scratch();
    let base = ["--quiet", "--name", "j", "--ioengine", "null", "--rw", "randread", "--size", "1m", "--runtime", "1", "--time_based", "1"];
    let mut args = vec!["sweep", "--results-dir", "bs"];
    args.extend(base);
    args.extend(["--sweep", "bs=262144,512,32k,4096"]);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("bs"));
    assert_eq!(ix.dims[0].values, ["512", "4096", "32k", "262144"]);
    assert_eq!(states(&ix), ["done"; 4], "no point skipped past a knee of bs");
    assert!(ix.knees.is_empty() && r.stderr.contains("no knee is sought"), "{}", r.stderr);
    let firsts: Vec<&str> = r.stdout.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(firsts, ["512B", "4KiB", "32KiB", "256KiB"], "{}", r.stdout);
    let c = storbench(d.path(), &["compare", "bs", "bs"]);
    let order: Vec<&str> = c.stdout.lines().filter(|l| l.contains(" IOPS ")).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(order, ["bs=512", "bs=4096", "bs=32k", "bs=262144"], "{}", c.stdout);

    let mut args = vec!["sweep", "--results-dir", "cube"];
    args.extend(base);
    args.extend(["--sweep", "numjobs=2,1", "--sweep", "bs=4k,64k", "--sweep", "iodepth=1,2"]);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("no knee is sought"), "iodepth loads the store: {}", r.stderr);
    let r = storbench(d.path(), &["report", "cube", "--charts", "charts"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for nj in ["1", "2"] {
        for what in ["iops", "mibs", "p99"] {
            let svg = std::fs::read_to_string(d.path().join(format!("charts/sweep-grid-{what}-numjobs-{nj}.svg"))).unwrap_or_default();
            assert!(svg.contains(&format!("at numjobs={nj}")) && svg.contains("64KiB"), "{what} grid at numjobs={nj}");
        }
    }
}

/// `--stop-if` as VMFleet stops its sweeps at a CPU ceiling: the null engine
/// without a service time spins one core (its busiest core's mean is near
/// 100%), so every first point of a curve goes over `core>50%` and the rest
/// of that curve is skipped, the other curve still run, with or without a
/// knee search. The ceiling needs telemetry and a form it can read.
#[test]
fn a_point_over_a_stop_if_ceiling_is_the_last_of_its_curve() {
    let d = scratch();
    let args = [
        "sweep",
        "--quiet",
        "--no-knee",
        "--results-dir",
        "sw",
        "--name",
        "n",
        "--ioengine",
        "null",
        "--size",
        "1g",
        "--runtime",
        "1",
        "--time_based",
        "1",
        "--sweep",
        "numjobs=1,2",
        "--sweep",
        "iodepth=1,2",
        "--stop-if",
        "iowait>99%",
        "--stop-if",
        "core>50%",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = index(&d.path().join("sw"));
    assert_eq!(states(&ix), ["done", "skipped", "done", "skipped"], "{:?}", ix.points);
    let over = ix.points[0].ceiling.as_deref().expect("the first point's ceiling");
    assert!(over.starts_with("core>50%: core ") && over.ends_with("mean on host local"), "{over}");
    match &ix.points[1].state {
        PointState::Skipped { reason } => assert!(reason.starts_with("over --stop-if at iodepth=1 (core>50%"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(r.stderr.contains("over --stop-if core>50%") && r.stderr.contains("the rest of its curve is skipped"), "{}", r.stderr);
    assert!(r.stdout.contains("over core>50%: core ") && r.stdout.contains("over --stop-if at iodepth=1"), "the table: {}", r.stdout);
    for (bad, says) in
        [(vec!["--stop-if", "gpu>50%"], "'gpu' is not a resource"), (vec!["--stop-if", "cpu>80%", "--no-telemetry"], "--no-telemetry")]
    {
        let mut a = vec!["sweep", "--results-dir", "bad", "--name", "n", "--ioengine", "null", "--size", "1m", "--sweep", "iodepth=1,2"];
        a.extend(bad);
        let r = storbench(d.path(), &a);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(says), "{}", r.stderr);
        assert!(!d.path().join("bad").exists(), "nothing written");
    }
}
