//! `storbench report STUDY`: a study's directory (made here by `storbench
//! study` on the simulated store) reported as one page, opened in headless
//! Chromium: the answers first, every question's chart drawn, a failed
//! step said, and `--charts` writing each chart as SVG and PNG.

mod common;
use common::chromium::{check, chromium};
use common::*;
use std::path::Path;

/// Two configurations of the simulated store (4 servers of 2 ms, of 1 ms),
/// a question for each chart, a comparison, and a step that fails.
const STUDY: &str = r#"
[study]
title = "caching, four ways"
[vars]
runtime = "1"
[configs.off]
label = "cache off"
vars = { ms = "2ms" }
[configs.on]
label = "cache on"
vars = { ms = "1ms" }

[[question]]
id = "depth"
title = "IOPS and p99 by queue depth"
ask = "sweep"
args = ["--name=s", "--ioengine=null", "--service_time=${ms}", "--servers=4", "--time_based=1", "--size=1g", "--runtime=${runtime}"]
sweep = ["iodepth=1,4,16,64"]
metrics = ["iops", "p99"]

[[question]]
id = "slo"
title = "the rate at p50 <= 3ms"
ask = "slo"
configs = ["off"]
args = ["--name=s", "--ioengine=null", "--service_time=${ms}", "--servers=4", "--time_based=1", "--size=1g", "--latency=p50=3ms", "--probe-time=1", "--max-probes=4", "--iodepth=32"]

[[question]]
id = "grid"
title = "IOPS by jobs and depth"
ask = "sweep"
args = ["--name=s", "--ioengine=null", "--service_time=${ms}", "--servers=4", "--time_based=1", "--size=1g", "--runtime=${runtime}"]
sweep = ["numjobs=1,2", "iodepth=1,4"]
chart = "surfaces"

[[question]]
id = "versus"
title = "cache on against cache off"
ask = "compare"
of = "depth"

[[question]]
id = "scale"
title = "IOPS by jobs"
ask = "sweep"
configs = ["off"]
args = ["--name=s", "--ioengine=null", "--service_time=${ms}", "--servers=4", "--time_based=1", "--size=1g", "--runtime=${runtime}"]
sweep = ["numjobs=1,2,4"]
chart = "scaling"

[[question]]
id = "one"
title = "one run"
ask = "run"
configs = ["off"]
args = ["--name=s", "--service_time=${ms}", "--servers=4", "--time_based=1", "--size=1g", "--runtime=${runtime}", "--iodepth=4"]
[[question.line]]
name = "null"
args = ["--ioengine=null"]
[[question.line]]
name = "broken"
args = ["--ioengine=nosuch"]
"#;

#[test]
fn a_studys_report_answers_first_and_draws_every_questions_chart() {
    if !chromium() {
        return;
    }
    let d = scratch();
    std::fs::write(d.path().join("s.toml"), STUDY).unwrap();
    let r = storbench(d.path(), &["study", "s.toml", "--results-dir", "study", "--quiet"]);
    assert_eq!(r.code, 1, "the broken step fails the study: {}", r.stderr);
    let study = d.path().join("study");
    let r = storbench(d.path(), &["report", "study", "--charts", "charts"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = study.join("report.html");
    let must =
        ["depth-iops", "depth-p99", "slo-iops-latency", "grid-grid-off-all", "grid-grid-on-all", "grid-difference-on-all", "scale-scaling"];
    let ids = check(&page, d.path(), &must);
    let html = std::fs::read_to_string(&page).unwrap();
    let answers = html.find("id=\"answers\"").expect("an answers section");
    let first_question = html.find("id=\"q-").expect("question sections");
    assert!(answers < first_question, "the answers come first");
    let list = &html[answers..first_question];
    for said in [
        "highest IOPS: cache",
        "at iodepth=",
        "rate at p50&lt;=3.00ms",
        "scaling 1-&gt;4 numjobs",
        "cache on against cache off: IOPS",
        "null: ",
    ] {
        assert!(list.contains(said), "answers say {said:?}: {list}");
    }
    assert!(html.contains("legend") || html.contains("cache on"), "legends name configurations");
    assert!(!html.contains(">A<") && !html.contains(">B<"), "never A/B");
    assert!(html.contains("failed (exit 2)") && html.contains("nosuch"), "the failed step is said");
    assert!(html.contains("id=\"versus-differences\""), "the comparison's table");
    assert!(html.contains("id=\"provenance\"") && html.contains("storbench study s.toml") && html.contains("runtime=1"));
    let files = listing(&d.path().join("charts"));
    assert_eq!(files.len(), 2 * ids.len(), "every chart as SVG and PNG: {files:?}");
    for id in &ids {
        let png = std::fs::read(d.path().join(format!("charts/{id}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{id}.png drawn ({} bytes)", png.len());
    }
}

/// A ramp question (`run --ssbench --users`) on the Swift all-in-one: its
/// chart is throughput by users with the peak marked, its answer the peak.
#[test]
fn a_ramp_study_reports_its_peak() {
    let Some(env) = swift_env("aio") else { return };
    if !chromium() {
        return;
    }
    let d = scratch();
    let scenario = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ssbench/timed_reads.json")).unwrap();
    std::fs::write(d.path().join("s.json"), scenario.replace("sbtest_timed", "sbtest_study_ramp")).unwrap();
    let study = format!(
        "[study]\ntitle = \"ramp\"\n[[question]]\nid = \"ramp\"\ntitle = \"throughput by users\"\nask = \"ramp\"\nargs = [\"--ssbench\", \"{}\", \"--users\", \"1,2\"]\n",
        d.path().join("s.json").display()
    );
    std::fs::write(d.path().join("r.toml"), study).unwrap();
    let r = storbench_env(d.path(), &env, &["study", "r.toml", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = storbench(d.path(), &["report", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    check(&d.path().join("out/report.html"), d.path(), &["ramp-ramp"]);
    let html = std::fs::read_to_string(d.path().join("out/report.html")).unwrap();
    assert!(html.contains("ramp peak: ") && html.contains(" users, ") && html.contains(" ops/s"), "the peak answered");
}
