//! `storbench slo` on the simulated store: 32 servers of 50 ms each serve
//! 640 operations a second; evenly spaced arrivals below that wait for
//! nothing (latency 50 ms), above it a queue grows without end. With a p90
//! bound of 75 ms the answer is planted at 640 IOPS. (With 10 ms servers a
//! CI machine's scheduling delays alone failed probes near the knee: a
//! late timer is a larger share of a shorter service time.)

mod common;
use common::*;
use storbench_model::slo::SloIndex;

/// The search of the planted 640 IOPS, into `slo/`.
const PLANTED: [&str; 22] = [
    "slo",
    "--latency",
    "p90=75ms",
    "--quiet",
    "--results-dir",
    "slo",
    "--probe-time",
    "2",
    "--name",
    "s",
    "--ioengine",
    "null",
    "--service_time",
    "50ms",
    "--servers",
    "32",
    "--iodepth",
    "128",
    "--size",
    "1g",
    "--rate_process",
    "linear",
];

#[test]
fn the_search_finds_the_planted_rate_within_five_percent_in_ten_probes() {
    let d = scratch();
    let args = PLANTED;
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("slo/slo.json")).unwrap();
    let ix: SloIndex = serde_json::from_str(&text).unwrap();
    assert!(ix.probes.len() <= 10, "{} probes", ix.probes.len());
    let answer = ix.answer.expect("an answer");
    assert!((answer / 640.0 - 1.0).abs() <= 0.05, "answer {answer} vs 640");
    assert!(r.stdout.contains("max IOPS of s with p90 <= 75.00ms"), "{}", r.stdout);
    // Every probe is a run kept in its own directory; the passing ones kept up.
    for p in &ix.probes {
        assert!(d.path().join("slo").join(&p.dir).join("result.json").exists(), "{}", p.dir);
        if let (Some(rate), true) = (p.rate, p.pass) {
            assert!(p.achieved_iops >= 0.95 * rate && p.samples >= 1000, "{p:?}");
        }
    }
    assert!(ix.probes.iter().any(|p| p.rate.is_none_or(|r| r > answer) && !p.pass), "a failing probe above the answer");
    let bad = storbench(d.path(), &["slo", "--latency", "p99", "--name", "s", "--ioengine", "null"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("PERCENTILE=BOUND"), "{}", bad.stderr);
}

/// fio's latency_target question, closed loop: with 4 servers of 2 ms every
/// operation takes 2 ms up to 4 in flight; from 5 on, a fifth or more wait a
/// whole service time, so p90 reaches 4 ms. The planted answer is 4.
#[test]
fn the_closed_loop_search_finds_the_deepest_queue_and_says_what_it_leaves_out() {
    let d = scratch();
    let args = [
        "slo",
        "--closed-loop",
        "--latency",
        "p90=3ms",
        "--quiet",
        "--results-dir",
        "cl",
        "--probe-time",
        "3",
        "--max-probes",
        "8",
        "--name",
        "s",
        "--ioengine",
        "null",
        "--service_time",
        "2ms",
        "--servers",
        "4",
        "--size",
        "1g",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix: SloIndex = serde_json::from_str(&std::fs::read_to_string(d.path().join("cl/slo.json")).unwrap()).unwrap();
    assert!(ix.closed_loop);
    let depth = ix.answer_iodepth.expect("an answer");
    assert_eq!(depth, 4, "{:?}", ix.probes);
    assert!(ix.probes.iter().any(|p| p.iodepth.is_some_and(|q| q > depth) && !p.pass));
    assert!(r.stdout.contains("coordinated omission") && r.stdout.contains(&format!("at iodepth {depth}")), "{}", r.stdout);
}

/// A search killed mid-probe keeps the probes it finished in slo.json (the
/// issue-26 probe found none after a kill), and `slo --resume DIR` takes
/// them as they were, runs the rest, and reaches the same planted answer.
#[test]
fn a_killed_search_keeps_its_probes_and_resumes_from_them() {
    let d = scratch();
    let args = PLANTED;
    let (killed, _) = signalled(d.path(), &[], &args, &[("SLO probe 3:", std::time::Duration::from_millis(500), libc::SIGKILL)]);
    assert_eq!(killed.code, -1, "killed: {}", killed.stderr);
    let kept = SloIndex::load(&d.path().join("slo")).expect("slo.json after a kill");
    assert_eq!(kept.probes.len(), 2, "the finished probes: {:?}", kept.probes);
    let r = storbench(d.path(), &["slo", "--resume", "slo", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr.matches("done before").count(), 2, "{}", r.stderr);
    let ix = SloIndex::load(&d.path().join("slo")).unwrap();
    assert_eq!(ix.probes[..2], kept.probes[..], "taken as they were");
    let answer = ix.answer.expect("an answer");
    assert!((answer / 640.0 - 1.0).abs() <= 0.05, "answer {answer} vs 640");
    // The killed probe's directory is kept aside, not overwritten.
    assert!(std::fs::read_dir(d.path().join("slo")).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains(".interrupted-")));
    let again = storbench(d.path(), &["slo", "--resume", "slo", "--latency", "p99=1ms"]);
    assert!(again.code == 2 && again.stderr.contains("give only --resume DIR"), "{}", again.stderr);
}

/// Two groups run one after another (fio's `stonewall`): a probe's IOPS is
/// one group's own figure (each job runs at the probed rate), never the sum
/// of rates that were never reached together.
#[test]
fn probes_of_groups_run_one_after_another_are_not_added_up() {
    let d = scratch();
    let job = "[global]\nioengine=null\nsize=1g\nservice_time=2ms\nservers=4\niodepth=8\nrate_process=linear\n\
               [a]\nrw=randread\n[b]\nstonewall\nrw=randread\n";
    std::fs::write(d.path().join("two.fio"), job).unwrap();
    let args =
        ["slo", "--latency", "p50=50ms", "--quiet", "--results-dir", "slo", "--probe-time", "1", "--max-probes", "3", "--fio", "two.fio"];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("slo/slo.json")).unwrap()).unwrap();
    let probes = ix["probes"].as_array().unwrap();
    assert!(probes.len() >= 2, "{ix}");
    for p in probes.iter().filter(|p| p["rate"].is_f64() && p["pass"] == true) {
        let (rate, got) = (p["rate"].as_f64().unwrap(), p["achieved_iops"].as_f64().unwrap());
        assert!(got < 1.3 * rate, "one job per group at {rate}: {got} is two groups added up ({p})");
        assert!(p["group"]["label"].is_string(), "which group the figure is of: {p}");
    }
    assert!(r.stdout.contains("run one after another"), "{}", r.stdout);
}

/// The SDS report's bound is on mean latency. Two jobs of 10 ms operations
/// and one of 200 ms, each able to do 400 IOPS and probed at the same rate:
/// two operations in three take 10 ms, so p50 is 10 ms, while the mean is
/// about 73 ms. A p50 bound of 50 ms finds a rate; a mean bound of 50 ms
/// fails every probe, and says so with the mean.
#[test]
fn a_mean_bound_fails_runs_whose_median_passes() {
    let d = scratch();
    let job = |name: &'static str, service: &'static str, n: &'static str| {
        ["--name", name, "--service_time", service, "--servers", n, "--iodepth", n]
    };
    let search = |bound: &str, dir: &str| {
        let mut args = vec!["slo", "--latency", bound, "--quiet", "--results-dir", dir, "--probe-time", "1", "--max-probes", "3"];
        args.extend(["--ioengine", "null", "--size", "1g", "--rate_process", "linear"]);
        args.extend(job("fast1", "10ms", "4").into_iter().chain(job("fast2", "10ms", "4")).chain(job("slow", "200ms", "80")));
        let r = storbench(d.path(), &args);
        let ix: Option<SloIndex> =
            std::fs::read_to_string(d.path().join(dir).join("slo.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
        (r, ix)
    };
    let (r, median) = search("p50=50ms", "p50");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(median.expect("slo.json").answer.is_some(), "{}", r.stdout);
    let (r, mean) = search("mean<50ms", "mean");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mean = mean.expect("slo.json");
    assert!(mean.mean && mean.answer.is_none(), "{}", r.stdout);
    let rated: Vec<_> = mean.probes.iter().filter(|p| p.rate.is_some()).collect();
    // A probe can also fail for falling behind (the 200 ms operations still
    // in flight at a 1 s probe's end); one at least fails on its mean.
    assert!(rated.iter().all(|p| !p.pass && p.value_ns > 50_000_000), "{rated:?}");
    assert!(rated.iter().any(|p| p.note.starts_with("mean ") && p.note.ends_with("> 50.00ms")), "{rated:?}");
    assert!(r.stdout.contains("no probed rate of fast1, fast2, slow met mean <= 50.00ms"), "{}", r.stdout);
}

/// `--stop-if` in a search: a probe whose hosts went over the ceiling fails
/// as one over the bound does, whatever its latency. No host is ever at 0%
/// busy, so every probe fails on `cpu>0%` and the search has no answer; the
/// table says why each failed and the answer's line names the ceiling.
#[test]
fn a_probe_over_a_stop_if_ceiling_fails_like_one_over_the_bound() {
    let d = scratch();
    let mut args: Vec<&str> = PLANTED.to_vec();
    args.extend(["--stop-if", "cpu>0%", "--max-probes", "3"]);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ix = SloIndex::load(&d.path().join("slo")).unwrap();
    assert_eq!(ix.stop_if, ["cpu>0%"]);
    assert!(!ix.probes.is_empty() && ix.probes.iter().all(|p| !p.pass), "{:?}", ix.probes);
    // The closed-loop probe fails on latency first (128 in flight on 32 servers).
    let rated: Vec<_> = ix.probes.iter().filter(|p| p.rate.is_some()).collect();
    assert!(!rated.is_empty() && rated.iter().all(|p| p.note.starts_with("over cpu>0%: cpu ")), "{:?}", ix.probes);
    assert_eq!(ix.answer, None);
    assert!(r.stdout.contains("no probed rate of s met p90 <= 75.00ms and no host over cpu>0%"), "{}", r.stdout);
}
