//! `storbench report`: the HTML file of a run, a sweep, an SLO search and a
//! comparison, each opened in headless Chromium (Debian's `chromium`, which
//! scripts/install-deps.sh installs): no console errors, every chart there
//! and drawn, a screenshot taken, the file self-contained and small.

mod common;
use common::chromium::{check, chromium};
use common::*;
use std::path::Path;

/// The simulated store: 4 servers of 2 ms.
const SIM: [&str; 12] =
    ["--ioengine", "null", "--service_time", "2ms", "--servers", "4", "--time_based", "1", "--size", "1g", "--name", "s"];

fn sb(dir: &Path, args: &[&str]) {
    let r = storbench(dir, args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
}

#[test]
fn a_run_report_opens_with_every_chart_drawn() {
    if !chromium() {
        return;
    }
    let d = scratch();
    let mut args = vec!["run", "--quiet", "--results-dir", "r", "--runtime", "4", "--rw", "randrw", "--iodepth", "8"];
    args.extend(SIM);
    sb(d.path(), &args);
    sb(d.path(), &["report", "r", "--charts", "charts"]);
    let ids = check(&d.path().join("r/report.html"), d.path(), &["s-iops", "s-mibs", "s-latency", "s-spectrum", "s-heatmap"]);
    let files = listing(&d.path().join("charts"));
    assert_eq!(files.len(), 2 * ids.len(), "every chart as SVG and PNG files too: {files:?}");
    for id in &ids {
        let png = std::fs::read(d.path().join(format!("charts/{id}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{id}.png drawn ({} bytes)", png.len());
        assert!(d.path().join(format!("charts/{id}.svg")).exists());
    }
    let html = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    assert!(html.contains("id=\"summary\"") && html.contains("id=\"provenance\"") && html.contains("storbench run"));

    // Objects of three sizes: the per-size-class table and its charts.
    let o = ["--objects", "500", "--object_size", "4k/40:64k/30:1m/30", "--object_ops", "read:60,create:20,delete:20", "--prefill", "1"];
    let mut args = vec!["run", "--quiet", "--results-dir", "o", "--runtime", "2", "--iodepth", "4"];
    args.extend(o);
    args.extend(SIM);
    sb(d.path(), &args);
    sb(d.path(), &["report", "o"]);
    check(&d.path().join("o/report.html"), d.path(), &["s-size-latency", "s-size-mibs"]);
    let html = std::fs::read_to_string(d.path().join("o/report.html")).unwrap();
    assert!(html.contains("id=\"classes-s\"") && html.contains("64KiB"), "the size class table");
}

#[test]
fn sweep_slo_and_comparison_reports_open_with_their_charts() {
    if !chromium() {
        return;
    }
    let d = scratch();
    let mut sweep =
        vec!["sweep", "--quiet", "--results-dir", "sw", "--runtime", "1", "--sweep", "numjobs=1,2,3", "--sweep", "iodepth=1..16x2"];
    sweep.extend(SIM);
    sb(d.path(), &sweep);
    sb(d.path(), &["report", "sw"]);
    let html = std::fs::read_to_string(d.path().join("sw/report.html")).unwrap();
    assert!(html.contains("knee"), "the knee is named");
    // Three values a dimension: a surface besides the grids; the first
    // run's own timelines (shown for every sweep: all runs of one of up to
    // 12, else the first, the knees and the last).
    let must = ["sweep-hockey", "sweep-iops", "sweep-grid-iops", "sweep-grid-p99", "sweep-surface-iops", "001_numjobs-1_iodepth-1-s-iops"];
    let ids = check(&d.path().join("sw/report.html"), d.path(), &must);
    assert!(ids.iter().any(|i| i.ends_with("-s-latency")), "{ids:?}");

    let mut slo =
        vec!["slo", "--quiet", "--results-dir", "slo", "--latency", "p50=3ms", "--probe-time", "1", "--max-probes", "5", "--iodepth", "32"];
    slo.extend(SIM);
    sb(d.path(), &slo);
    sb(d.path(), &["report", "slo"]);
    let ids = check(&d.path().join("slo/report.html"), d.path(), &["slo-probes"]);
    let html = std::fs::read_to_string(d.path().join("slo/report.html")).unwrap();
    assert!(html.contains("(the answer)") && ids.iter().any(|i| i.ends_with("-s-iops")), "the answer's timelines: {ids:?}");

    for (dir, extra) in [("a", vec![]), ("b", vec!["--rate_iops", "800"])] {
        let mut a = vec!["run", "--quiet", "--results-dir", dir, "--runtime", "4", "--iodepth", "4"];
        a.extend(SIM);
        a.extend(extra);
        sb(d.path(), &a);
    }
    sb(d.path(), &["report", "a", "b", "-o", "cmp.html"]);
    check(&d.path().join("cmp.html"), d.path(), &["compare-s-spectrum", "compare-s-iops"]);
    let html = std::fs::read_to_string(d.path().join("cmp.html")).unwrap();
    assert!(html.contains("slower") || html.contains("faster"), "the verdict is in the table");
}

#[test]
fn a_fleet_run_report_shows_each_agent() {
    if !chromium() {
        return;
    }
    let d = scratch();
    let fleet = common::fleet::fleet_dir(d.path(), "fleet");
    let _agents: Vec<common::fleet::Agent> = (1..=2)
        .map(|i| common::fleet::Agent::start(None, &format!("127.0.0.4{i}:7450"), &fleet, d.path().join(format!("a{i}.log")), &[]))
        .collect();
    let f = fleet.to_str().unwrap();
    let mut args = vec!["run", "--agents", "127.0.0.41,127.0.0.42", "--fleet-dir", f, "--quiet", "--results-dir", "r", "--runtime", "3"];
    args.extend(SIM);
    sb(d.path(), &args);
    sb(d.path(), &["report", "r"]);
    check(&d.path().join("r/report.html"), d.path(), &["s-iops", "s-latency"]);
    let html = std::fs::read_to_string(d.path().join("r/report.html")).unwrap();
    assert!(html.contains("id=\"agents-s\"") && html.contains("id=\"agents\""), "per-agent and agents tables");
    assert!(html.contains("127.0.0.41:7450") && html.contains("127.0.0.42:7450"));
}
