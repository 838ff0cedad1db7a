//! `storbench report STUDY`: a study's directory (made here by real sweep,
//! slo and run commands into its step directories, and its index written
//! from the model's type) reported as one page, opened in headless
//! Chromium: the answers first, every question's chart drawn, a step not
//! run said, and `--charts` writing each chart as SVG and PNG.

mod common;
use common::chromium::{check, chromium};
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use storbench_model::study::*;

/// The simulated store of a configuration: 4 servers of `ms` each.
fn sim(ms: &str) -> Vec<String> {
    ["--ioengine", "null", "--service_time", ms, "--servers", "4", "--time_based", "1", "--size", "1g", "--name", "s"]
        .map(String::from)
        .into()
}

struct Q {
    id: &'static str,
    ask: Ask,
    chart: ChartKind,
    metrics: Vec<Metric>,
    configs: &'static [&'static str],
    args: Vec<&'static str>,
    /// A configuration whose step is left unrun (pending).
    pending: Option<&'static str>,
}

fn question(q: &Q) -> QuestionInfo {
    QuestionInfo {
        id: q.id.into(),
        title: format!("question {}", q.id),
        ask: q.ask,
        chart: q.chart,
        metrics: q.metrics.clone(),
        configs: q.configs.iter().map(|c| c.to_string()).collect(),
        lines: vec!["all".into()],
        of: None,
        sweep: Vec::new(),
    }
}

/// Runs each step's command as `storbench study` would, into
/// STUDY/<id>/<config>/all, and returns its index entry.
fn step(study: &Path, q: &Q, config: &str) -> Step {
    let dir = format!("{}/{config}/all", q.id);
    let ms = if config == "off" { "2ms" } else { "1ms" };
    let mut words: Vec<String> = q.args.iter().map(|s| s.to_string()).collect();
    words.extend(sim(ms));
    words.extend(["--results-dir".to_string(), study.join(&dir).display().to_string(), "--quiet".into()]);
    let state = if q.pending == Some(config) {
        StepState::Pending
    } else {
        let r = storbench(study, &words.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(r.code, 0, "{words:?}: {}", r.stderr);
        StepState::Done
    };
    Step { question: q.id.into(), config: config.into(), line: "all".into(), dir, command: words, state, seconds: 1.0, estimate: 1.0 }
}

fn make_study(study: &Path) {
    std::fs::create_dir_all(study).unwrap();
    let qs = [
        Q {
            id: "depth",
            ask: Ask::Sweep,
            chart: ChartKind::Lines,
            metrics: vec![Metric::Iops, Metric::P99],
            configs: &["off", "on"],
            args: vec!["sweep", "--runtime", "1", "--sweep", "iodepth=1,4,16,64"],
            pending: None,
        },
        Q {
            id: "slo",
            ask: Ask::Slo,
            chart: ChartKind::IopsLatency,
            metrics: vec![Metric::P50],
            configs: &["off"],
            args: vec!["slo", "--latency", "p50=3ms", "--probe-time", "1", "--max-probes", "4", "--iodepth", "32"],
            pending: None,
        },
        Q {
            id: "grid",
            ask: Ask::Sweep,
            chart: ChartKind::Surfaces,
            metrics: vec![Metric::Iops],
            configs: &["off", "on"],
            args: vec!["sweep", "--runtime", "1", "--sweep", "numjobs=1,2", "--sweep", "iodepth=1,4"],
            pending: None,
        },
        Q {
            id: "scale",
            ask: Ask::Sweep,
            chart: ChartKind::Scaling,
            metrics: vec![Metric::Iops],
            configs: &["off"],
            args: vec!["sweep", "--runtime", "1", "--sweep", "numjobs=1,2,4"],
            pending: None,
        },
        Q {
            id: "one",
            ask: Ask::Run,
            chart: ChartKind::Table,
            metrics: vec![Metric::Iops],
            configs: &["off", "on"],
            args: vec!["run", "--runtime", "1", "--iodepth", "4"],
            pending: Some("on"),
        },
    ];
    let steps = qs.iter().flat_map(|q| q.configs.iter().map(move |c| (q, *c))).map(|(q, c)| step(study, q, c)).collect();
    let index = StudyIndex {
        version: STUDY_VERSION,
        title: "caching, four ways".into(),
        about: String::new(),
        command: vec!["study".into(), "s.toml".into()],
        vars: BTreeMap::from([("runtime".to_string(), "1".to_string()), ("token".to_string(), "(secret)".to_string())]),
        configs: vec![
            ConfigInfo { key: "off".into(), label: "cache off".into() },
            ConfigInfo { key: "on".into(), label: "cache on".into() },
        ],
        questions: qs.iter().map(question).collect(),
        steps,
        started_unix: 1_700_000_000,
    };
    index.save(study).unwrap();
}

#[test]
fn a_studys_report_answers_first_and_draws_every_questions_chart() {
    if !chromium() {
        return;
    }
    let d = scratch();
    let study = d.path().join("study");
    make_study(&study);
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
        "cache off: ",
    ] {
        assert!(list.contains(said), "answers say {said:?}: {list}");
    }
    assert!(html.contains("legend") || html.contains("cache on"), "legends name configurations");
    assert!(!html.contains(">A<") && !html.contains(">B<"), "never A/B");
    assert!(html.contains("pending; no results: no results directory (not run yet)"), "the step not run is said");
    assert!(html.contains("id=\"provenance\"") && html.contains("storbench study s.toml") && html.contains("token=(secret)"));
    let files = listing(&d.path().join("charts"));
    assert_eq!(files.len(), 2 * ids.len(), "every chart as SVG and PNG: {files:?}");
    for id in &ids {
        let png = std::fs::read(d.path().join(format!("charts/{id}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{id}.png drawn ({} bytes)", png.len());
    }
}
