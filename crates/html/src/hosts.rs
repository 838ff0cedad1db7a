//! The hosts' seconds under the jobs' timelines: per host, its CPU (the
//! host and its busiest core), its disks' utilisation and its network, on
//! the run's time axis.

use crate::charts::{self, Lines, Series};
use crate::page::Page;
use crate::{slug, Chart};
use storbench_model::telemetry::{metric, Series as Figures, Source, Telemetry};

/// At most this many disks or NICs a chart (the busiest).
const MOST: usize = 6;

/// A section per run with telemetry: each host's line, then its charts.
pub fn section(page: &mut Page, t: &Telemetry) -> Vec<Chart> {
    page.h2("Hosts");
    for l in storbench_report::hosts::lines(t) {
        page.para(&l, "notes");
    }
    if let Some(note) = axis_note(t) {
        page.para(&note, "notes");
    }
    let mut all = Vec::new();
    for s in &t.sources {
        for c in charts_of(s) {
            page.chart(&c);
            all.push(c);
        }
    }
    all
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
pub fn charts_of(s: &Source) -> Vec<Chart> {
    if s.kind == storbench_model::telemetry::SourceKind::Cluster {
        return cluster_charts(s);
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
        timeline(id(what), format!("{} {}: {title} per second", storbench_report::hosts::noun(s), s.name), title, y, &series, f)
    })
    .collect()
}

/// A figure's seconds as a chart's series, scaled.
fn line(s: &Source, label: String, f: &Figures, scale: f64) -> Series {
    Series { label, points: s.t.iter().zip(&f.values).filter_map(|(t, v)| v.map(|v| (*t, v * scale))).collect() }
}

/// Lines over the run's seconds: every host and cluster chart.
fn timeline(name: String, heading: String, title: &str, y: &str, series: &[Series], y_fmt: &dyn Fn(f64) -> String) -> Chart {
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
        }),
    }
}

/// A cluster's own counters: its clients' operations, its OSDs' commit
/// latency (the slowest), and what it had to recover.
fn cluster_charts(s: &Source) -> Vec<Chart> {
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
        timeline(slug(&format!("cluster-{}-{what}", s.name)), format!("cluster {}: {title}", s.name), title, y, &series, &n)
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
        let c = charts_of(&t.sources[0]);
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
