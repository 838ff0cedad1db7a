//! Steady state (fio's `steadystate`/`ss`, `ss_dur`, `ss_ramp`,
//! `ss_interval`): a job ends when every criterion holds on its window,
//! says so when it never does, and a fio job file runs as in fio.

mod common;
use common::*;
use std::time::Duration;
use storbench_model::Warning;

/// A null-engine job at a fixed rate: its IOPS are as steady as the clock.
const STEADY: [&str; 10] = ["--ioengine", "null", "--rate_iops", "20000", "--time_based", "1", "--ss_ramp", "1", "--ss_dur", "3"];

#[test]
fn a_job_ends_the_second_every_criterion_holds() {
    let d = scratch();
    let mut args = vec!["run", "--quiet", "--results-dir", "out", "--name", "rr", "--runtime", "30", "--ss", "iops:5%,iops_slope:2%"];
    args.extend(STEADY);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_valid(&result_json(&d.path().join("out")));
    let res = run_result(&d.path().join("out"));
    let j = &res.jobs[0];
    let ss = j.steady_state.as_ref().expect("a verdict");
    assert!(ss.attained && ss.judged.len() == 2 && ss.judged.iter().all(|v| v.holds), "{ss:?}");
    let at = ss.at_s.unwrap();
    assert!((4.0..8.0).contains(&at), "ss_ramp 1 s + a 3 s window: attained at {at} s");
    assert!((j.runtime_ns as f64 / 1e9) < at + 1.5, "the job ended then, not at 30 s: {} s", j.runtime_ns as f64 / 1e9);
    assert_eq!(ss.window.len(), 3);
    assert!(!j.interrupted && !res.interrupted, "ending at steady state is not an interruption");
    assert!(r.stdout.contains("steady state rr: attained at"), "{}", r.stdout);
    let report = storbench(d.path(), &["report", "out"]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(html.contains("id=\"steady-rr\"") && html.contains("Attained at"), "the report shows the verdict and window");
}

#[test]
fn a_fleet_job_ends_at_the_merged_figures_steady_state() {
    let d = scratch();
    let fleet = common::fleet::fleet_dir(d.path(), "fleet");
    let _agents: Vec<common::fleet::Agent> = (1..=2)
        .map(|i| common::fleet::Agent::start(None, &format!("127.0.0.3{i}:7450"), &fleet, d.path().join(format!("a{i}.log")), &[]))
        .collect();
    let f = fleet.to_str().unwrap();
    let mut args = vec!["run", "--agents", "127.0.0.31,127.0.0.32", "--fleet-dir", f, "--quiet", "--results-dir", "out"];
    args.extend(["--name", "rr", "--runtime", "30", "--ss", "iops:5%"]);
    args.extend(STEADY);
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let j = &res.jobs[0];
    assert!(j.steady_state.as_ref().unwrap().attained);
    assert!(j.per_agent.iter().all(|a| a.runtime_ns < 10_000_000_000), "every agent's workers stopped early");
}

#[test]
fn a_job_that_never_settles_runs_to_its_end_and_says_not_attained() {
    let d = scratch();
    // A store whose rate alternates every second for longer than the job runs
    // (a fixed-rate null job can be exactly steady: 0% deviation).
    let args = [
        "run",
        "--quiet",
        "--results-dir",
        "out",
        "--name",
        "rr",
        "--runtime",
        "4",
        "--ss",
        "iops:5%",
        "--ss_dur",
        "2",
        "--ioengine",
        "null",
        "--service_time",
        "1ms",
        "--servers",
        "4",
        "--iodepth",
        "8",
        "--unsteady_until",
        "60s",
    ];
    let r = storbench(d.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let j = &res.jobs[0];
    let ss = j.steady_state.as_ref().unwrap();
    assert!(!ss.attained && ss.at_s.is_none() && !ss.judged[0].holds, "{ss:?}");
    assert!(j.runtime_ns >= 3_900_000_000, "ran to its runtime");
    assert!(j.warnings.iter().any(|w| matches!(w, Warning::SteadyStateNotAttained { .. })));
    assert!(r.stdout.contains("NOT attained"), "{}", r.stdout);
}

#[test]
fn steady_state_ends_its_own_job_and_the_others_of_the_group_go_on() {
    let d = scratch();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--quiet",
            "--results-dir",
            "out",
            "--ioengine",
            "null",
            "--rate_iops",
            "20000",
            "--time_based",
            "1",
            "--name",
            "steady",
            "--runtime",
            "30",
            "--ss",
            "iops:5%",
            "--ss_dur",
            "2",
            "--name",
            "other",
            "--runtime",
            "6",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let secs = |i: usize| res.jobs[i].runtime_ns as f64 / 1e9;
    assert!(res.jobs[0].steady_state.as_ref().unwrap().attained);
    assert!(secs(0) < 5.0, "the steady job ended early: {} s", secs(0));
    assert!(secs(1) > 5.8, "the other ran its 6 s: {} s", secs(1));
}

#[test]
fn bad_steady_state_options_are_one_clear_error() {
    let d = scratch();
    let r = storbench(d.path(), &["run", "--name", "x", "--ioengine", "null", "--runtime", "1", "--ss_dur", "5"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("ss_dur needs steadystate="), "{}", r.stderr);
    let r = storbench(d.path(), &["run", "--name", "x", "--ioengine", "null", "--runtime", "1", "--ss", "disk:5%", "--ss_dur", "5"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a steady-state criterion") && r.stderr.lines().count() == 1, "{}", r.stderr);
    let r = storbench(d.path(), &["run", "--name", "x", "--ioengine", "null", "--runtime", "1", "--ss", "iops:5%", "--ss_dur", "1.5"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn a_fio_job_file_with_ss_stops_where_fio_stops() {
    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/install-deps.sh installs it");
        eprintln!("SKIP: fio is not installed");
        return;
    }
    let d = scratch();
    let job =
        "[rr]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\nrate_iops=20000\ntime_based\nruntime=30\nss=iops:5%\nss_dur=3s\nss_ramp=1s\n";
    std::fs::write(d.path().join("ss.fio"), job).unwrap();
    let fio = std::process::Command::new("fio").args(["--output-format=json", "ss.fio"]).current_dir(d.path()).output().unwrap();
    assert!(fio.status.success());
    let ours = storbench(d.path(), &["fio", "--output-format=json", "ss.fio"]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let doc = |text: &[u8]| -> serde_json::Value { serde_json::from_slice(text).unwrap() };
    let (theirs, ours) = (doc(&fio.stdout), doc(ours.stdout.as_bytes()));
    let runtime = |d: &serde_json::Value| d["jobs"][0]["job_runtime"].as_f64().unwrap() / 1000.0;
    let ss = |d: &serde_json::Value| d["jobs"][0]["steadystate"].clone();
    assert_eq!(ss(&theirs)["attained"], 1);
    assert_eq!(ss(&ours)["attained"], 1, "{}", ss(&ours));
    assert_eq!(ss(&ours)["ss"], ss(&theirs)["ss"], "the same criterion, in fio's words");
    assert_eq!(ss(&ours)["data"]["iops"].as_array().unwrap().len(), ss(&theirs)["data"]["iops"].as_array().unwrap().len());
    // fio checks once a second from its start and stops at the next check: within a second or two of ours.
    let (f, o) = (runtime(&theirs), runtime(&ours));
    assert!(f < 10.0 && o < 10.0 && (o - f).abs() <= 2.0, "fio stopped at {f} s, storbench at {o} s");
    let _ = Duration::ZERO;
}

/// A simulated store whose rate alternates every second until `until`, then settles.
fn unsettled(until: &str) -> Vec<String> {
    ["--ioengine", "null", "--service_time", "1ms", "--servers", "4", "--iodepth", "8", "--unsteady_until", until].map(String::from).into()
}

#[test]
fn snia_mode_names_the_round_a_settling_store_reaches_steady_state() {
    let d = scratch();
    let mut args: Vec<String> =
        ["run", "--quiet", "--results-dir", "out", "--name", "s", "--steady-state", "snia:1s"].map(String::from).into();
    args.extend(unsettled("7s"));
    let r = storbench(d.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let ss = res.jobs[0].steady_state.as_ref().unwrap();
    assert!(ss.snia && ss.attained && ss.window.len() == 5, "{ss:?}");
    // Rounds 1..7 alternate (the store's seconds start with the first
    // operation); 8..12 is the first window of five settled rounds.
    let round = ss.at_s.unwrap() / ss.interval_s;
    assert!((11.0..=13.0).contains(&round), "attained at round {round}");
    assert!(res.jobs[0].runtime_ns < 15_000_000_000, "the job ended there, not at round 25");
    assert!(r.stdout.contains("attained at round"), "{}", r.stdout);
}

#[test]
fn snia_mode_on_a_store_that_never_settles_says_not_attained() {
    let d = scratch();
    let mut args: Vec<String> =
        ["run", "--quiet", "--results-dir", "out", "--name", "s", "--steady-state", "snia:1s", "--runtime", "8"].map(String::from).into();
    args.extend(unsettled("60s"));
    let r = storbench(d.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("out"));
    let ss = res.jobs[0].steady_state.as_ref().unwrap();
    assert!(!ss.attained && !ss.judged[0].holds && ss.judged[0].value > 20.0, "{ss:?}");
    assert!(r.stdout.contains("NOT attained in round 8"), "{}", r.stdout);
}
