//! `run --preset train:... --rules mlperf`: MLPerf Storage's run rules on
//! a training preset (one warm-up and five measured runs, the dataset
//! sized against the client's memory and for 500 steps an epoch, AU at or
//! above the floor in every measured run), judged in `mlperf.json` and a
//! printed verdict naming each rule. On the null engine (no dataset to
//! write): a run meeting the rules, and one failing them.

mod common;
use common::*;

fn verdict(results: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(results.join("mlperf.json")).unwrap()).unwrap()
}

/// The parameters of the issues in a division.
fn rules_in(v: &serde_json::Value, division: &str) -> Vec<String> {
    let issues = v["issues"].as_array().unwrap();
    issues.iter().filter(|i| i["validation"] == division).map(|i| i["parameter"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_run_meeting_the_rules_is_valid_in_the_closed_division() {
    // cosmoflow:h100 keeps one sample a file, so --scale changes only the
    // file count (a closed parameter): 500 files are 500 steps an epoch of
    // batch 1, and 1.32 GiB, at least 5 x 256 MiB. Six runs of five epochs
    // of 500 steps of 3.5 ms: about 53 s, mostly emulated compute.
    let d = scratch();
    let r = storbench(
        d.path(),
        &["run", "--preset", "train:cosmoflow", "--scale", "0.000954", "--ioengine", "null", "--rules", "mlperf"]
            .into_iter()
            .chain(["--client-memory", "256MiB", "--results-dir", "rules", "--quiet"])
            .collect::<Vec<_>>(),
    );
    let v = verdict(&d.path().join("rules"));
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!((v["division"].as_str(), v["valid"].as_bool(), v["dataset_files"].as_u64()), (Some("closed"), Some(true), Some(500)), "{v}");
    assert!(rules_in(&v, "invalid").is_empty() && rules_in(&v, "open").is_empty(), "{v}");
    let closed = rules_in(&v, "closed");
    for rule in ["warmup", "num_runs", "run-1.au", "run-5.au", "dataset.num_files_train"] {
        assert!(closed.iter().any(|c| c == rule), "{rule}: {closed:?}");
    }
    // The result is the mean of the five measured runs, each kept whole.
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    let mean = runs.iter().map(|r| r["train"]["samples_per_sec"].as_f64().unwrap()).sum::<f64>() / 5.0;
    assert!((v["samples_per_sec"].as_f64().unwrap() - mean).abs() < 1e-6 * mean, "{v}");
    for run in ["warmup", "run-1", "run-5"] {
        let doc = result_json(&d.path().join("rules").join(run));
        assert_eq!(doc["jobs"][0]["train"]["steps"].as_u64(), Some(5 * 500), "{run}: five epochs of 500 steps");
    }
    assert!(r.stdout.contains("VALID (closed division)") && r.stdout.contains("num_runs"), "{}", r.stdout);
}

#[test]
fn a_run_failing_the_rules_names_each_rule_it_failed() {
    // A store of one server at 10 ms an operation serves a sample every
    // 10 ms to an accelerator computing 3.5 ms a step: AU about 35%, under
    // cosmoflow's 70% in every run. The dataset (52 files) and one epoch
    // break the rules too: run anyway with --allow-invalid-params.
    let d = scratch();
    let r = storbench(
        d.path(),
        &["run", "--preset", "train:cosmoflow", "--scale", "0.0001", "--epochs", "1", "--ioengine", "null", "--service_time", "10ms"]
            .into_iter()
            .chain(["--servers", "1", "--rules", "mlperf", "--allow-invalid-params", "--results-dir", "rules", "--quiet"])
            .chain(["--output-format", "json"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let v = verdict(&d.path().join("rules"));
    assert_eq!((v["division"].as_str(), v["valid"].as_bool()), (Some("invalid"), Some(false)), "{v}");
    let invalid = rules_in(&v, "invalid");
    for rule in ["run-1.au", "run-2.au", "run-3.au", "run-4.au", "run-5.au", "train.epochs", "dataset.num_files_train"] {
        assert!(invalid.iter().any(|c| c == rule), "{rule}: {invalid:?}");
    }
    // The runs themselves were whole: five of them, after a warm-up.
    let closed = rules_in(&v, "closed");
    assert!(closed.iter().any(|c| c == "warmup") && closed.iter().any(|c| c == "num_runs"), "{v}");
    // Standard output is the verdict's JSON; the table is on standard error.
    let printed: serde_json::Value = serde_json::from_str(&r.stdout).expect("stdout is JSON");
    assert_eq!(printed, v);
    assert!(r.stderr.contains("INVALID") && r.stderr.contains("run-3.au"), "{}", r.stderr);
}

#[test]
fn a_dataset_too_small_for_the_rules_is_refused_before_anything_runs() {
    // 524 cosmoflow files (1.38 GiB) against 5 x this host's memory.
    let d = scratch();
    let r = storbench(d.path(), &["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--rules", "mlperf", "--results-dir", "r"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("5x the client's memory") && r.stderr.contains("--client-memory SIZE"), "{}", r.stderr);
    assert!(listing(d.path()).is_empty(), "nothing written: {:?}", listing(d.path()));
}
