//! ssbench scenario files (tests/ssbench/*.json, every field of the format
//! between them) run as they are against the Swift all-in-one and, through
//! the s3 engine, against RGW; the --users ramp.

mod common;
use common::*;
use std::path::PathBuf;

fn scenario(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ssbench").join(name).to_string_lossy().into_owned()
}

fn ops(doc: &serde_json::Value, job: &str) -> Vec<(String, u64, serde_json::Value)> {
    let j = doc["jobs"].as_array().unwrap().iter().find(|j| j["name"] == job).unwrap_or_else(|| panic!("no job {job}"));
    j["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["op"].as_str().unwrap().to_string(), o["ios"].as_u64().unwrap(), o["errors"].clone()))
        .collect()
}

#[test]
fn a_scenario_runs_per_size_class_and_crud_operation_on_swift() {
    let Some(env) = swift_env("aio") else { return };
    let d = scratch();
    let r = storbench_env(d.path(), &env, &["run", "--ssbench", &scenario("small_crud.json"), "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("size class 'unused' has no initial files"), "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let names: Vec<&str> = doc["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["zero", "tiny", "small"], "one job per benchmarked size class");
    let mut total = 0;
    for class in &names {
        for (op, ios, errors) in ops(&doc, class) {
            assert!(["create", "read", "update", "delete"].contains(&op.as_str()), "{op}");
            assert_eq!(errors, serde_json::json!({}), "{class} {op}");
            total += ios;
        }
    }
    assert_eq!(total, 400, "operation_count shared out over the classes");
    let zero = ops(&doc, "zero");
    let creates = zero.iter().find(|o| o.0 == "create").map_or(0, |o| o.1);
    assert!(creates > 80, "the zero class is create-heavy (60%): {zero:?}");
    let small = ops(&doc, "small");
    assert!(small.iter().all(|o| o.0 != "delete"), "the scenario-wide profile has no deletes: {small:?}");
}

#[test]
fn run_seconds_scenarios_run_on_s3_too() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    let r = storbench_env(
        d.path(),
        &env,
        &["run", "--ssbench", &scenario("timed_reads.json"), "--ioengine", "s3", "--results-dir", "out", "--quiet"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let runtime = doc["jobs"][0]["runtime_ns"].as_f64().unwrap() / 1e9;
    assert!((1.9..3.5).contains(&runtime), "run_seconds bounds the run: {runtime}");
    let reads = ops(&doc, "4k").into_iter().find(|o| o.0 == "read").unwrap();
    assert!(reads.1 > 50 && reads.2 == serde_json::json!({}), "{reads:?}");
}

#[test]
fn users_ramp_repeats_the_scenario_and_reports_each_step() {
    let Some(env) = swift_env("aio") else { return };
    let d = scratch();
    let r = storbench_env(
        d.path(),
        &env,
        &["run", "--ssbench", &scenario("timed_reads.json"), "--users", "1,4", "--results-dir", "out", "--quiet"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("ssbench ramp") && r.stdout.contains("<- peak"), "{}", r.stdout);
    let ramp = show(d.path(), "out", "ssbench-ramp");
    assert!(ramp.contains("ssbench ramp") && r.stdout.ends_with(&ramp), "show prints the ramp again:\n{ramp}\n---\n{}", r.stdout);
    let one = result_json(&d.path().join("out/users-1"));
    assert_eq!(one["jobs"][0]["spec"]["iodepth"], 1);
    if d.path().join("out/users-4").exists() {
        assert_eq!(result_json(&d.path().join("out/users-4"))["jobs"][0]["spec"]["iodepth"], 4);
    }
    let bad = storbench_env(d.path(), &env, &["run", "--ssbench", &scenario("timed_reads.json"), "--users", "4,2"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("must grow"), "{}", bad.stderr);
}

/// Each step runs exactly its user count (main ran one user per size class
/// at least: 3 at --users 1 and at 2); a fall ends the ramp only once a
/// repeat of the step confirms it; the ramp's directory reads back as a
/// curve over users (main's `report` refused it: "holds 2 runs and no
/// sweep or SLO index").
#[test]
fn a_ramp_honours_every_user_count_and_reads_back_as_a_curve() {
    let Some(env) = swift_env("aio") else { return };
    let d = scratch();
    let own = format!("sbramp{}", std::process::id());
    let text = std::fs::read_to_string(scenario("small_crud.json"))
        .unwrap()
        .replace("sbtest_ssb", &own)
        .replace("\"operation_count\": 400", "\"operation_count\": 120");
    std::fs::write(d.path().join("s.json"), text).unwrap();
    let r = storbench_env(d.path(), &env, &["run", "--ssbench", "s.json", "--users", "1,2", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for users in [1u64, 2] {
        let doc = result_json(&d.path().join(format!("out/users-{users}")));
        let in_flight: u64 = doc["jobs"].as_array().unwrap().iter().map(|j| j["spec"]["iodepth"].as_u64().unwrap()).sum();
        assert_eq!(in_flight, users, "{users} users in all, not one per size class");
    }
    assert!(r.stderr.contains("1 users for 3 size classes: class 'tiny' gets none"), "{}", r.stderr);
    let out = d.path().join("out");
    if r.stderr.contains("stopping the ramp") {
        assert!(listing(&out).iter().any(|n| n.ends_with("-r2")), "a fall is confirmed by a repeat: {:?}", listing(&out));
    }
    let ix = storbench_model::sweep::SweepIndex::load(&out).expect("the ramp's index");
    assert_eq!(ix.dims[0].option, "users");
    assert!(ix.points.len() >= 2 && ix.points.iter().all(|p| p.dir.starts_with("users-")), "{:?}", ix.points);
    let report = storbench(d.path(), &["report", "out", "-o", "r.html"]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let ramp = show(d.path(), "out", "ssbench-ramp");
    assert!(ramp.contains("ssbench ramp") && r.stdout.ends_with(&ramp), "{ramp}");
}

#[test]
fn swift_bench_preset_puts_gets_and_deletes() {
    let Some(env) = swift_env("aio") else { return };
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let d = scratch();
    let container = format!("sbswb{}", std::process::id());
    let args = swift_bench_args(
        &env,
        &["-c", "8", "-s", "4096", "-n", "100", "-g", "300", "-C", "2", "--container", &container, "--results-dir", "out"],
    );
    let r = storbench(d.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in ["100 PUTS **FINAL** [0 failures]", "300 GETS **FINAL** [0 failures]", "100 DEL **FINAL** [0 failures]"] {
        assert!(r.stdout.contains(line), "{line}:\n{}", r.stdout);
    }
    assert!(!r.stdout.contains(&get("ST_KEY")) && !r.stderr.contains(&get("ST_KEY")));
    let del = result_json(&d.path().join("out/delete"));
    assert_eq!(del["jobs"][0]["ops"][0]["ios"], 100);
    assert_eq!(show(d.path(), "out", "swift-bench"), r.stdout, "show prints the three phases again, in order");
}

/// Ctrl-C in swift-bench's PUT phase: the GET phase is skipped, and the
/// DELETE phase still runs, as a run of its own, removing every object the
/// PUT phase wrote and the containers storbench made. Nothing is left.
#[test]
fn ctrl_c_in_the_put_phase_still_deletes_what_was_written() {
    let Some(env) = swift_env("aio") else { return };
    let d = scratch();
    let container = format!("sbswbint{}", std::process::id());
    let args = swift_bench_args(
        &env,
        &["-c", "8", "-s", "4096", "-n", "1000000", "-g", "100", "-C", "2", "--container", &container, "--results-dir", "out"],
    );
    let r = interrupted(d.path(), &args.iter().map(String::as_str).collect::<Vec<_>>(), std::time::Duration::from_secs(3));
    let (stdout, stderr) = (&r.stdout, &r.stderr);
    assert_eq!(r.code, 130, "{stderr}");
    assert!(stdout.contains("PUTS **FINAL**") && stdout.contains("DEL **FINAL** [0 failures]"), "{stdout}");
    assert!(!stdout.contains("GETS"), "no GET phase after the interrupt:\n{stdout}");
    let put = run_result(&d.path().join("out/put"));
    let del = run_result(&d.path().join("out/delete"));
    assert!(put.interrupted && !del.interrupted);
    let written = put.jobs[0].op(storbench_workload::OpKind::Create).unwrap().ios;
    let deleted = del.jobs[0].op(storbench_workload::OpKind::Delete).unwrap().ios;
    assert!(written > 0 && written < 1_000_000, "{written}");
    assert_eq!(deleted, written, "the DELETE phase removed exactly what was written");
    let (url, token) = swift_session(&env);
    for c in [format!("{container}_000000"), format!("{container}_000001")] {
        assert_eq!(swift_head(&format!("{url}/{c}"), &token), 404, "container {c} is gone");
    }
}

/// `--agents` with an ssbench scenario runs it on the agents (it ran here,
/// the agents ignored without a word): the result names the agent and
/// carries its own figures.
#[test]
fn a_scenario_runs_on_the_agents_it_is_given() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    let fleet = common::fleet::fleet_dir(d.path(), "fleet");
    let _agent = common::fleet::Agent::start_with_env(None, "127.0.0.103:7450", &fleet, d.path().join("agent.log"), &[], &env);
    let f = fleet.to_str().unwrap();
    let args = [
        "run",
        "--ssbench",
        &scenario("timed_reads.json"),
        "--ioengine",
        "s3",
        "--agents",
        "127.0.0.103",
        "--fleet-dir",
        f,
        "--results-dir",
        "out",
        "--quiet",
    ];
    let r = storbench_env(d.path(), &env, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_eq!(doc["agents"][0]["address"], "127.0.0.103:7450", "run on the agent: {}", doc["agents"]);
    assert!(doc["jobs"][0]["per_agent"][0]["ops"].as_array().is_some_and(|o| !o.is_empty()), "{}", doc["jobs"][0]["per_agent"]);
}

/// `compare` of two swift-bench results pairs every phase: PUT, GET and
/// DELETE each have their rows (it compared PUT and dropped the others).
#[test]
fn compare_pairs_every_swift_bench_phase() {
    let Some(env) = swift_env("aio") else { return };
    let d = scratch();
    for (i, out) in ["a", "b"].iter().enumerate() {
        let container = format!("sbcmp{}x{i}", std::process::id());
        let args = swift_bench_args(
            &env,
            &["-c", "4", "-s", "4096", "-n", "50", "-g", "50", "-C", "1", "--container", &container, "--results-dir", out],
        );
        let r = storbench(d.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = storbench(d.path(), &["compare", "--format", "json", "a", "b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = doc["comparisons"][0]["rows"].as_array().unwrap();
    for (phase, op) in [("phase=put", "create"), ("phase=get", "read"), ("phase=delete", "delete")] {
        assert!(rows.iter().any(|row| row["point"] == phase && row["op"] == op), "no {phase} {op} row: {}", r.stdout);
    }
}
