//! `storbench compare` on the simulated store (the null engine with a queue
//! of servers): two runs of one job show no difference, a rate-capped run
//! is named slower with numbers and trips the CI gate, sweeps compare point
//! by point, and repeats give intervals over runs.

mod common;
use common::*;

/// 4 servers of 10 ms each, kept busy: about 400 IOPS (long service times
/// keep the simulation's own wake-up delays small beside them).
fn job<'a>(results: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "run",
        "--quiet",
        "--results-dir",
        results,
        "--name",
        "s",
        "--ioengine",
        "null",
        "--service_time",
        "10ms",
        "--servers",
        "4",
        "--iodepth",
        "4",
        "--runtime",
        "5",
        "--time_based",
        "1",
        "--size",
        "1g",
    ];
    a.extend(extra);
    a
}

fn compare_json(dir: &std::path::Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let mut a = vec!["compare", "--format", "json"];
    a.extend(args);
    let r = storbench(dir, &a);
    let doc = serde_json::from_str(&r.stdout).unwrap_or(serde_json::Value::Null);
    (r.code, doc, r.stderr)
}

fn verdict(doc: &serde_json::Value, metric: &str) -> String {
    let rows = doc["comparisons"][0]["rows"].as_array().expect("rows");
    rows.iter().find(|r| r["metric"] == metric).map(|r| r["verdict"].as_str().unwrap().to_string()).expect("the metric is compared")
}

#[test]
fn the_same_job_twice_is_no_difference_and_a_capped_run_is_slower() {
    let d = scratch();
    for (dir, extra) in [("a", &[][..]), ("b", &[][..]), ("capped", &["--rate_iops", "250"][..])] {
        let r = storbench(d.path(), &job(dir, extra));
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let (code, doc, err) = compare_json(d.path(), &["a", "b"]);
    assert_eq!(code, 0, "{err}");
    for m in ["iops", "mib_per_sec", "p50"] {
        assert_eq!(verdict(&doc, m), "no_difference", "{m}: {doc:#}");
    }
    let (code, doc, err) = compare_json(d.path(), &["a", "capped", "--fail-if-slower", "10"]);
    assert_eq!(code, 4, "the gate trips: {err}");
    assert!(err.contains("IOPS"), "{err}");
    assert_eq!(verdict(&doc, "iops"), "worse", "{doc:#}");
    let row = &doc["comparisons"][0]["rows"][0];
    let (diff, lo, hi) = (row["diff_pct"].as_f64().unwrap(), row["ci_pct"][0].as_f64().unwrap(), row["ci_pct"][1].as_f64().unwrap());
    assert!(diff < -25.0 && lo <= diff && diff <= hi && hi < 0.0, "about 400 -> 250 IOPS: {row}");
    let (code, ..) = compare_json(d.path(), &["a", "capped", "--fail-if-slower", "60"]);
    assert_eq!(code, 0, "a gate above the difference passes");
    // Runs too short for an interval: a gate cannot pass them unseen.
    for dir in ["short1", "short2"] {
        assert_eq!(storbench(d.path(), &job(dir, &["--runtime", "1"])).code, 0);
    }
    let (code, _, err) = compare_json(d.path(), &["short1", "short2", "--fail-if-slower", "50"]);
    assert!(code == 4 && err.contains("no interval"), "{code}: {err}");
    // Text names the faster side.
    let text = storbench(d.path(), &["compare", "capped", "a"]);
    assert!(text.stdout.lines().any(|l| l.contains("IOPS") && l.contains("faster")), "{}", text.stdout);
    // Its sides are named by their directories, not A and B.
    assert!(text.stdout.contains("capped (baseline) = capped"), "{}", text.stdout);
    let head = text.stdout.lines().find(|l| l.starts_with("job")).unwrap_or_default();
    assert!(head.contains("capped") && head.contains(" a ") && !head.contains(" A "), "{head}");
}

#[test]
fn sweeps_compare_point_by_point_and_repeats_give_intervals_over_runs() {
    let d = scratch();
    let sweep = |dir: &str, servers: &str| {
        let a = [
            "sweep",
            "--quiet",
            "--results-dir",
            dir,
            "--name",
            "s",
            "--ioengine",
            "null",
            "--service_time",
            "10ms",
            "--servers",
            servers,
            "--runtime",
            "1",
            "--time_based",
            "1",
            "--size",
            "1g",
            "--no-knee",
            "--repeat",
            "3",
            "--sweep",
            "iodepth=2,8",
        ];
        let r = storbench(d.path(), &a);
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    sweep("two", "2");
    sweep("eight", "8");
    let (code, doc, err) = compare_json(d.path(), &["two", "eight"]);
    assert_eq!(code, 0, "{err}");
    let rows = doc["comparisons"][0]["rows"].as_array().unwrap();
    let at = |point: &str, metric: &str| {
        rows.iter().find(|r| r["point"] == point && r["metric"] == metric).unwrap_or_else(|| panic!("{point} {metric}"))
    };
    // Two servers already serve two in flight; eight in flight need eight.
    assert!(at("iodepth=2", "iops")["diff_pct"].as_f64().unwrap().abs() < 10.0);
    assert_eq!(at("iodepth=8", "iops")["verdict"], "better", "{}", at("iodepth=8", "iops"));
    assert!(at("iodepth=8", "iops")["diff_pct"].as_f64().unwrap() > 200.0);
    assert!(at("iodepth=8", "p999")["ci_pct"].is_array(), "p99.9 has an interval from the repeats");
}

/// A comparison report of two sweeps whose runs all warn: each side's
/// warnings are folded under its name with their count (they opened the
/// report as one list, about 60 lines for a field report's sweeps), and
/// tables and legends name the sides by their directories, not A and B.
#[test]
fn a_comparison_report_folds_warnings_per_side_and_names_the_sides() {
    let d = scratch();
    for side in ["bobtail", "cuttlefish"] {
        let line = format!(
            "sweep --quiet --results-dir {side} --name j --ioengine psync --iodepth 8 --filename f.dat --size 4m --rw randread \
             --runtime 1 --time_based 1 --sweep bs=4k,64k"
        );
        let r = storbench(d.path(), &line.split_whitespace().collect::<Vec<_>>());
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = storbench(d.path(), &["report", "bobtail", "cuttlefish", "-o", "cmp.html"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(d.path().join("cmp.html")).unwrap();
    let warnings = html.split("id=\"warnings\"").nth(1).and_then(|w| w.split("</div>").next()).expect("a warnings block");
    assert!(warnings.contains("Warnings: 2"), "{warnings}");
    for side in ["bobtail", "cuttlefish"] {
        assert!(warnings.contains(&format!("<details><summary>{side}: 1 warning</summary>")), "{side} folded: {warnings}");
        assert!(html.contains(&format!("{side} read")), "the legend names {side}");
    }
    assert!(!html.contains(">A read<") && !html.contains(">\nA read\n<"), "no A/B legend");
    assert!(html.contains("<th>bobtail</th>") || html.contains(">bobtail</th>"), "the table's column is named");
}
