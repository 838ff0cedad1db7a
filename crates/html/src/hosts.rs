//! The run's timeline, stacked: the clients' operations per second, then
//! per host its CPU (the host and its busiest core), its disks'
//! utilisation and its network, then the cluster's and the exporters'
//! series, every chart on one x range with the faults marked and the
//! seconds a limit was named shaded.

use crate::charts::{self, Axis, Lines, Series};
use crate::page::Page;
use crate::{slug, Chart};
use storbench_model::telemetry::{metric, Series as Figures, Source, SourceKind, Telemetry};
use storbench_model::{RunResult, Warning};

/// At most this many disks or NICs a chart (the busiest).
const MOST: usize = 6;
/// At most this many of an exporter's metrics get a chart (those that moved).
const EXPORTER_CHARTS: usize = 6;

/// A section per run with telemetry: each host's line, then the stacked charts.
pub fn section(page: &mut Page, run: &RunResult, t: &Telemetry) -> Vec<Chart> {
    page.h2("Hosts");
    for l in storbench_report::hosts::lines(t) {
        page.para(&l, "notes");
    }
    if let Some(note) = axis_note(t) {
        page.para(&note, "notes");
    }
    let axis = axis_of(run, t);
    let mut all: Vec<Chart> = clients_chart(run, &axis).into_iter().collect();
    all.extend(t.sources.iter().flat_map(|s| charts_of(s, Some(&axis))));
    for c in &all {
        page.chart(c);
    }
    all
}

/// The run's x range (every source's seconds and the clients'), its faults
/// and the seconds the bottleneck rules named.
fn axis_of(run: &RunResult, t: &Telemetry) -> Axis {
    let clients = storbench_model::disruption::clients_per_second(run);
    let ends = t.sources.iter().filter_map(|s| s.t.last().copied()).chain(clients.last().map(|p| p.0));
    let events = run.disruption.iter().flat_map(|d| &d.events).filter(|e| !e.skipped).map(|e| (e.at_s, e.action.words())).collect();
    Axis { from: 0.0, to: ends.fold(0.0, f64::max), events, bands: run.warnings.iter().filter_map(band).collect() }
}

/// The seconds a limit was named, with a word for it.
fn band(w: &Warning) -> Option<(f64, f64, String)> {
    let (from, to, what) = match w {
        Warning::CoreSaturated { from_s, to_s, host, .. } => (from_s, to_s, format!("{host}: one core")),
        Warning::HostCpuSaturated { from_s, to_s, host, .. } => (from_s, to_s, format!("{host}: CPU")),
        Warning::DiskSaturated { from_s, to_s, disk, .. } => (from_s, to_s, format!("disk {disk}")),
        Warning::NicSaturated { from_s, to_s, nic, .. } => (from_s, to_s, format!("NIC {nic}")),
        Warning::NetworkAtBaseline { from_s, to_s, nic, .. } => (from_s, to_s, format!("NIC {nic} at baseline")),
        Warning::ClusterRecovering { from_s, to_s, .. } => (from_s, to_s, "recovery".to_string()),
        _ => return None,
    };
    Some((*from, *to, what))
}

/// Every job's operations per second together, on the run's axis.
fn clients_chart(run: &RunResult, axis: &Axis) -> Option<Chart> {
    let line = storbench_model::disruption::clients_per_second(run);
    if line.is_empty() {
        return None;
    }
    let series = [Series { label: "every job".into(), points: line }];
    Some(timeline_on(
        "timeline-clients".into(),
        "clients: operations per second on the run's axis".into(),
        "operations per second",
        "ops/s",
        &series,
        &|v| storbench_report::fmt::count(v),
        Some(axis),
    ))
}

/// Where a later group's seconds sit on the hosts' axis: it counts from the
/// first group's start, a job's timeline from its own group's.
fn axis_note(t: &Telemetry) -> Option<String> {
    let later: Vec<String> = t.group_starts.iter().enumerate().skip(1).map(|(g, s)| format!("group {} at {s:.1} s", g + 1)).collect();
    (!later.is_empty()).then(|| {
        format!(
            "The hosts' seconds count from the first group's start; each job's timeline above counts from its own group's: {}.",
            later.join(", ")
        )
    })
}

/// A host's CPU, disk and network charts (names end -cpu, -disks, -net); a
/// cluster's client operations, OSD latency and recovery.
pub fn charts_of(s: &Source, axis: Option<&Axis>) -> Vec<Chart> {
    match s.kind {
        SourceKind::Cluster => return cluster_charts(s, axis),
        SourceKind::Exporter => return exporter_charts(s, axis),
        SourceKind::Client | SourceKind::Watched => {}
    }
    let id = |what: &str| slug(&format!("host-{}-{what}", s.name));
    let line = |label: String, f: &Figures, scale: f64| line(s, label, f, scale);
    let mut cpu = Vec::new();
    cpu.extend(s.get(metric::CPU_BUSY).map(|f| line("host".into(), f, 1.0)));
    cpu.extend(s.find(metric::CPU_BUSY, "core", "busiest").map(|f| line("busiest core".into(), f, 1.0)));
    cpu.extend(s.get(&metric::cpu("iowait")).map(|f| line("iowait".into(), f, 1.0)));
    let disks: Vec<Series> = busiest(s, metric::DISK_UTIL).into_iter().map(|f| line(f.label("disk").into(), f, 1.0)).collect();
    let net: Vec<Series> = busiest(s, metric::NIC_RX_BYTES)
        .into_iter()
        .flat_map(|rx| {
            let nic = rx.label("nic");
            let tx = s.find(metric::NIC_TX_BYTES, "nic", nic);
            [Some(line(format!("{nic} in"), rx, 8e-6)), tx.map(|f| line(format!("{nic} out"), f, 8e-6))]
        })
        .flatten()
        .collect();
    let pct = |v: f64| format!("{v:.0}%");
    let mbit = |v: f64| format!("{v:.1}");
    [
        ("cpu", "CPU busy", "% of CPU", cpu, &pct as &dyn Fn(f64) -> String),
        ("disks", "disk utilisation", "% busy", disks, &pct),
        ("net", "network", "Mb/s", net, &mbit),
    ]
    .into_iter()
    .filter(|c| !c.3.is_empty())
    .map(|(what, title, y, series, f)| {
        timeline_on(id(what), format!("{} {}: {title} per second", storbench_report::hosts::noun(s), s.name), title, y, &series, f, axis)
    })
    .collect()
}

/// An exporter's metrics that moved during the run, a chart each (the
/// busiest series of each), at most [`EXPORTER_CHARTS`].
fn exporter_charts(s: &Source, axis: Option<&Axis>) -> Vec<Chart> {
    let mut metrics: Vec<&str> = Vec::new();
    for f in &s.series {
        let moved = f.present().reduce(f64::min).zip(f.max()).is_some_and(|(lo, hi)| hi > lo);
        if moved && !metrics.contains(&f.metric.as_str()) {
            metrics.push(&f.metric);
        }
    }
    let n = |v: f64| storbench_report::fmt::count(v);
    metrics
        .into_iter()
        .take(EXPORTER_CHARTS)
        .map(|m| {
            let series: Vec<Series> = busiest(s, m).into_iter().map(|f| line(s, labels_of(f), f, 1.0)).collect();
            timeline_on(slug(&format!("exporter-{}-{m}", s.name)), format!("exporter {}: {m}", s.name), m, "", &series, &n, axis)
        })
        .collect()
}

/// A series' labels as its legend (`ceph_daemon=osd.0`), or its metric's name.
fn labels_of(f: &Figures) -> String {
    match f.labels.is_empty() {
        true => f.metric.clone(),
        false => f.labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
    }
}

/// A figure's seconds as a chart's series, scaled.
fn line(s: &Source, label: String, f: &Figures, scale: f64) -> Series {
    Series { label, points: s.t.iter().zip(&f.values).filter_map(|(t, v)| v.map(|v| (*t, v * scale))).collect() }
}

/// Lines over the run's seconds: every host, cluster and exporter chart.
fn timeline_on(
    name: String,
    heading: String,
    title: &str,
    y: &str,
    series: &[Series],
    y_fmt: &dyn Fn(f64) -> String,
    axis: Option<&Axis>,
) -> Chart {
    Chart {
        name,
        title: heading,
        svg: charts::lines(&Lines {
            title,
            x_desc: "seconds",
            y_desc: y,
            series,
            log_y: false,
            y_fmt,
            x_fmt: None,
            marks: &[],
            rule: None,
            points: false,
            axis,
        }),
    }
}

/// A cluster's own counters: its clients' operations, its OSDs' commit
/// latency (the slowest), and what it had to recover.
fn cluster_charts(s: &Source, axis: Option<&Axis>) -> Vec<Chart> {
    let line = |label: String, f: &Figures| line(s, label, f, 1.0);
    let named = |pairs: &[(&str, &str)]| -> Vec<Series> {
        pairs.iter().filter_map(|(m, label)| s.get(m).map(|f| line(label.to_string(), f))).collect()
    };
    let ops = named(&[
        ("cluster_client_read_ops_per_s", "reads"),
        ("cluster_client_write_ops_per_s", "writes"),
        ("cluster_recovery_objects_per_s", "objects recovered"),
    ]);
    let osds: Vec<Series> = busiest(s, "osd_commit_latency_ms").into_iter().map(|f| line(format!("osd.{}", f.label("osd")), f)).collect();
    let recovery = named(&[
        ("cluster_degraded_objects", "degraded"),
        ("cluster_misplaced_objects", "misplaced"),
        ("cluster_pgs_not_active_clean", "PGs not active+clean"),
    ]);
    let n = |v: f64| format!("{v:.0}");
    [
        ("ops", "operations per second by the cluster's count", "ops/s", ops),
        ("osd-latency", "OSD commit latency (the slowest OSDs)", "ms", osds),
        ("recovery", "objects to recover", "objects", recovery),
    ]
    .into_iter()
    .filter(|c| !c.3.is_empty())
    .map(|(what, title, y, series)| {
        timeline_on(slug(&format!("cluster-{}-{what}", s.name)), format!("cluster {}: {title}", s.name), title, y, &series, &n, axis)
    })
    .collect()
}

/// The series of a metric with the highest peaks, at most [`MOST`].
fn busiest<'a>(s: &'a Source, m: &'a str) -> Vec<&'a Figures> {
    let mut v: Vec<&Figures> = s.all(m).collect();
    v.sort_by(|a, b| b.max().unwrap_or(0.0).total_cmp(&a.max().unwrap_or(0.0)));
    v.truncate(MOST);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::telemetry::{HostSample, Value};

    #[test]
    fn a_host_gets_cpu_disk_and_network_charts() {
        let mut t = Telemetry::default();
        for i in 1..=3 {
            let values = vec![
                Value::new(metric::CPU_BUSY, &[], 40.0),
                Value::new(metric::CPU_BUSY, &[("core", "busiest")], 90.0),
                Value::new(metric::DISK_UTIL, &[("disk", "vda")], 50.0),
                Value::new(metric::NIC_RX_BYTES, &[("nic", "eth0")], 1e6),
            ];
            t.push(i as f64, HostSample { source: "local".into(), duration: 1.0, values, ..HostSample::default() });
        }
        let c = charts_of(&t.sources[0], None);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["host-local-cpu", "host-local-disks", "host-local-net"]);
        assert!(c.iter().all(|c| c.svg.as_ref().is_ok_and(|s| s.contains("<svg"))));
        assert!(c[0].svg.as_ref().unwrap().contains("busiest core"));
    }

    #[test]
    fn a_later_groups_start_on_the_hosts_axis_is_said() {
        assert_eq!(axis_note(&Telemetry { group_starts: vec![0.0], ..Telemetry::default() }), None);
        let two = Telemetry { group_starts: vec![0.0, 3.5], ..Telemetry::default() };
        assert!(axis_note(&two).unwrap().ends_with("its own group's: group 2 at 3.5 s."), "{:?}", axis_note(&two));
    }
}
