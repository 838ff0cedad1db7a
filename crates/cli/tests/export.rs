//! `storbench export`: real sweeps, a run of two jobs, an SLO search and a
//! `storbench study` of such steps (the null engine, a second a run) as one tidy
//! table: one row per point and job scope, the swept values as columns,
//! figures equal to what `show -f json` says of each run. And `show -f csv`
//! of a sweep carries each point's swept values.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use storbench_model::study::{StepState, StudyIndex};

/// Run storbench in `dir`, killed if it takes longer than a minute.
fn bounded(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new("timeout").arg("60").arg(bin()).args(args).current_dir(dir).output().expect("run storbench");
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    };
    assert_ne!(r.code, 124, "storbench {args:?} took over a minute");
    r
}

fn ok(dir: &Path, args: &[&str]) -> Run {
    let r = bounded(dir, args);
    assert_eq!(r.code, 0, "storbench {args:?}: {}", r.stderr);
    r
}

const JOB: [&str; 10] = ["--ioengine", "null", "--size", "1m", "--runtime", "1", "--time_based", "1", "--rw", "randread"];

fn sweep(dir: &Path, into: &str) {
    let mut args = vec!["sweep", "--quiet", "--no-knee", "--results-dir", into, "--name", "j"];
    args.extend(JOB);
    args.extend(["--sweep", "bs=4k,64k", "--sweep", "iodepth=1,2"]);
    ok(dir, &args);
}

fn two_jobs(dir: &Path, into: &str) {
    let mut args = vec!["run", "--quiet", "--results-dir", into];
    args.extend(JOB);
    args.extend(["--name", "a", "--name", "b", "--rw", "randwrite"]);
    ok(dir, &args);
}

/// The CSV as rows of column -> cell.
fn table(csv: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines.map(|l| header.iter().map(|h| h.to_string()).zip(l.split(',').map(String::from)).collect()).collect()
}

fn num(row: &BTreeMap<String, String>, col: &str) -> f64 {
    row[col].parse().unwrap_or_else(|_| panic!("{col} is not a number in {row:?}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A one-job run's figures as `show -f json` gives them: IOPS, MiB/s, mean, p50, p99, p99.9.
fn shown(dir: &Path, run: &str) -> [f64; 6] {
    let doc: serde_json::Value = serde_json::from_str(&show(dir, run, "json")).expect("show -f json is JSON");
    let op = &doc["jobs"][0]["ops"][0];
    let pct = |p: f64| {
        let all = op["latency"]["percentiles"].as_array().unwrap();
        all.iter().find(|v| v[0].as_f64() == Some(p)).unwrap()[1].as_f64().unwrap() / 1e3
    };
    let f = |k: &str| op[k].as_f64().unwrap();
    [f("iops"), f("bytes_per_sec") / 1048576.0, op["latency"]["mean_ns"].as_f64().unwrap() / 1e3, pct(50.0), pct(99.0), pct(99.9)]
}

#[test]
fn sweeps_and_runs_export_as_one_table_with_the_swept_values_as_columns() {
    let d = scratch();
    sweep(d.path(), "sw");
    two_jobs(d.path(), "r");
    let csv = ok(d.path(), &["export", "sw", "r"]).stdout;
    let header = csv.lines().next().unwrap();
    assert_eq!(header, "study,question,config,line,ask,dir,bs,iodepth,repeat,scope,iops,mib_s,mean_us,p50_us,p99_us,p999_us,errors,mark");
    let rows = table(&csv);
    let points: Vec<&BTreeMap<String, String>> = rows.iter().filter(|r| r["ask"] == "sweep").collect();
    let values: Vec<(&str, &str)> = points.iter().map(|r| (r["bs"].as_str(), r["iodepth"].as_str())).collect();
    assert_eq!(values, [("4096", "1"), ("4096", "2"), ("65536", "1"), ("65536", "2")], "one row per point: {csv}");
    for p in &points {
        assert_eq!(p["scope"], "all");
        let want = shown(d.path(), &p["dir"]);
        let got = ["iops", "mib_s", "mean_us", "p50_us", "p99_us", "p999_us"].map(|c| num(p, c));
        assert!(want.iter().zip(&got).all(|(w, g)| close(*w, *g)), "{} : export {got:?}, show -f json {want:?}", p["dir"]);
    }
    // The run of two jobs that ran together: `all` (their sum) and each job;
    // no swept values of its own.
    let run: Vec<&BTreeMap<String, String>> = rows.iter().filter(|r| r["dir"] == "r").collect();
    let scopes: Vec<&str> = run.iter().map(|r| r["scope"].as_str()).collect();
    assert_eq!(scopes, ["all", "a", "b"], "{csv}");
    assert!(run.iter().all(|r| r["bs"].is_empty() && r["iodepth"].is_empty() && r["ask"] == "run"));
    let doc: serde_json::Value = serde_json::from_str(&show(d.path(), "r", "json")).unwrap();
    let job_iops = |j: usize| doc["jobs"][j]["ops"][0]["iops"].as_f64().unwrap();
    assert!(close(num(run[1], "iops"), job_iops(0)) && close(num(run[2], "iops"), job_iops(1)), "{csv}");
    assert!(close(num(run[0], "iops"), job_iops(0) + job_iops(1)), "{csv}");
    // The same rows as JSON, to a file.
    ok(d.path(), &["export", "sw", "r", "-f", "json", "-o", "t.json"]);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("t.json")).unwrap()).unwrap();
    let json = json.as_array().unwrap();
    assert_eq!(json.len(), rows.len());
    assert_eq!((json[0]["bs"].as_u64(), json[0]["iodepth"].as_u64(), json[4]["bs"].is_null()), (Some(4096), Some(1), true));
}

#[test]
fn a_sweeps_series_as_csv_carries_each_points_swept_values() {
    let d = scratch();
    sweep(d.path(), "sw");
    let csv = show(d.path(), "sw", "csv");
    let rows = table(&csv);
    assert!(csv.starts_with("bs,iodepth,repeat,job,t_s,"), "{}", csv.lines().next().unwrap());
    let mut seen: Vec<(String, String)> = rows.iter().map(|r| (r["bs"].clone(), r["iodepth"].clone())).collect();
    seen.dedup();
    assert_eq!(seen.len(), 4, "every point's rows say which point: {seen:?}");
    // A point's own directory still shows its series.csv as written.
    let point =
        std::fs::read_dir(d.path().join("sw")).unwrap().filter_map(|e| e.ok()).find(|e| e.path().join("series.csv").exists()).unwrap();
    let name = format!("sw/{}", point.file_name().to_string_lossy());
    assert_eq!(show(d.path(), &name, "csv"), std::fs::read_to_string(point.path().join("series.csv")).unwrap());
}

/// A study of a sweep on two configurations, a run of two jobs and an SLO
/// search (the null engine; about 15 s).
const STUDY: &str = r#"
[study]
title = "tidy"
[configs.one]
[configs.two]
label = "second"
[[question]]
id = "by-bs"
title = "IOPS by block size and depth"
ask = "sweep"
args = ["--name=j", "--ioengine=null", "--size=1m", "--runtime=1", "--time_based=1", "--rw=randread"]
sweep = ["bs=4k,64k", "iodepth=1,2"]
[[question]]
id = "mix"
title = "two jobs together"
ask = "run"
configs = ["one"]
args = ["--ioengine=null", "--size=1m", "--runtime=1", "--time_based=1", "--rw=randread", "--name=a", "--name=b", "--rw=randwrite"]
[[question]]
id = "bound"
title = "the rate at a bound"
ask = "slo"
configs = ["one"]
args = ["--latency=mean=50ms", "--probe-time=1", "--max-probes=3", "--name=s", "--ioengine=null", "--service_time=1ms", "--servers=2", "--size=1g"]
"#;

#[test]
fn a_study_exports_every_steps_rows_with_its_question_config_and_line() {
    let d = scratch();
    std::fs::write(d.path().join("s.toml"), STUDY).unwrap();
    ok(d.path(), &["study", "s.toml", "--results-dir", "st", "--quiet"]);
    let csv = ok(d.path(), &["export", "st"]).stdout;
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "study,question,config,line,ask,dir,bs,iodepth,rate,repeat,scope,iops,mib_s,mean_us,p50_us,p99_us,p999_us,errors,mark"
    );
    let rows = table(&csv);
    assert!(rows.iter().all(|r| r["study"] == "tidy" && r["line"] == "all"), "{csv}");
    let of = |q: &str, c: &str| rows.iter().filter(|r| r["question"] == q && r["config"] == c).collect::<Vec<_>>();
    for config in ["one", "two"] {
        let points: Vec<(&str, &str)> = of("by-bs", config).iter().map(|r| (r["bs"].as_str(), r["iodepth"].as_str())).collect();
        assert_eq!(points, [("4096", "1"), ("4096", "2"), ("65536", "1"), ("65536", "2")], "{config}: {csv}");
        for p in of("by-bs", config) {
            let want = shown(d.path(), &p["dir"]);
            assert!(close(num(p, "iops"), want[0]) && close(num(p, "p99_us"), want[4]), "{}: {csv}", p["dir"]);
        }
    }
    let mix: Vec<&str> = of("mix", "one").iter().map(|r| r["scope"].as_str()).collect();
    assert_eq!(mix, ["all", "a", "b"], "{csv}");
    let probes = of("bound", "one");
    let slo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("st/bound/one/all/slo.json")).unwrap()).unwrap();
    assert_eq!(probes.len(), slo["probes"].as_array().unwrap().len(), "one row per probe: {csv}");
    assert!(probes.iter().all(|r| r["ask"] == "slo" && (r["mark"].starts_with("pass") || r["mark"] == "fail")));
    if let Some(answer) = slo["answer"].as_f64() {
        assert!(probes.iter().any(|r| r["mark"] == "pass answer" && close(num(r, "rate"), answer)), "{csv}");
    }
    // What the study runner writes after each step: the same rows, in the study.
    storbench_report::tidy::write_points(&d.path().join("st")).unwrap();
    let points = std::fs::read_to_string(d.path().join("st/points.csv")).unwrap();
    assert_eq!(points.replace(",st/", ","), csv.replace(",st/", ","));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("st/points.json")).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), rows.len());
    // A step that failed after measuring says so on its rows.
    let mut index = StudyIndex::load(&d.path().join("st")).unwrap();
    index.steps.iter_mut().filter(|s| s.question == "mix").for_each(|s| s.state = StepState::Failed { code: 1, message: "m".into() });
    index.save(&d.path().join("st")).unwrap();
    let again = table(&ok(d.path(), &["export", "st"]).stdout);
    assert!(again.iter().filter(|r| r["question"] == "mix").all(|r| r["mark"] == "step-failed"), "{again:?}");
}
