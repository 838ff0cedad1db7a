//! A run's telemetry for people and for tables: a line per host for the
//! summary (what its CPU, its busiest core, its busiest disk and its
//! network did, and what watching it cost), and every second of every
//! series as long-format CSV (`hosts.csv`: a row per source, second, metric
//! and labels, so any later source's series fit the same columns).

use storbench_model::telemetry::{metric, Series, Source, SourceKind, Telemetry};

/// How a source is named for people: a client's host, or a watched one
/// (`storbench agent --monitor`: a server that ran none of the load).
pub fn noun(s: &Source) -> &'static str {
    match s.kind {
        SourceKind::Client => "host",
        SourceKind::Watched => "watched host",
        SourceKind::Cluster => "cluster",
        SourceKind::Exporter => "exporter",
    }
}

/// One line per source, in the order they joined the run.
pub fn lines(t: &Telemetry) -> Vec<String> {
    t.sources.iter().map(line).collect()
}

fn line(s: &Source) -> String {
    match s.kind {
        SourceKind::Cluster => return cluster_line(s),
        SourceKind::Exporter => return exporter_line(s),
        SourceKind::Client | SourceKind::Watched => {}
    }
    let mut parts = Vec::new();
    if let Some(cpu) = s.get(metric::CPU_BUSY) {
        parts.push(format!("CPU busy {}% mean, {}% max", pct(cpu.mean()), pct(cpu.max())));
    }
    if let Some(core) = s.find(metric::CPU_BUSY, "core", "busiest") {
        parts.push(format!("busiest core {}% max", pct(core.max())));
    }
    if let Some(d) = busiest(s, metric::DISK_UTIL) {
        parts.push(format!("busiest disk {} {}% util max", d.label("disk"), pct(d.max())));
    }
    let net: Vec<String> = s
        .all(metric::NIC_RX_BYTES)
        .filter_map(|rx| {
            let nic = rx.label("nic");
            let tx = s.find(metric::NIC_TX_BYTES, "nic", nic).and_then(Series::mean).unwrap_or(0.0);
            let mbit = (rx.mean().unwrap_or(0.0) + tx) * 8.0 / 1e6;
            (mbit >= 0.01).then(|| format!("{nic} {mbit:.1} Mb/s"))
        })
        .collect();
    if !net.is_empty() {
        parts.push(format!("network {} mean (in + out)", net.join(", ")));
    }
    if let Some(r) = s.get(metric::TCP_RETRANS) {
        let total: f64 = r.present().zip(&s.duration).map(|(v, d)| v * d).sum();
        parts.push(format!("{} TCP retransmits", total.round()));
    }
    let secs: f64 = s.duration.iter().sum();
    let cost = s.sampler_cpu.total().as_secs_f64() * 1e3 / secs.max(1e-9);
    format!(
        "{} {} ({}, {} CPUs, {} s): {}; sampling took {:.2} ms CPU a second",
        noun(s),
        s.name,
        s.hostname,
        s.cpus,
        s.t.len(),
        if parts.is_empty() { "no figures".into() } else { parts.join(", ") },
        cost
    )
}

/// A storage cluster's own counters: what its clients did by its count, its
/// slowest OSD, and whether it had data to recover.
fn cluster_line(s: &Source) -> String {
    let mean = |m: &str| s.get(m).and_then(Series::mean).unwrap_or(0.0);
    let max = |m: &str| s.get(m).and_then(Series::max).unwrap_or(0.0);
    let mut parts = vec![format!(
        "clients {:.0} reads/s and {:.0} writes/s mean",
        mean("cluster_client_read_ops_per_s"),
        mean("cluster_client_write_ops_per_s")
    )];
    let slowest =
        s.all("osd_commit_latency_ms").filter_map(|x| Some((x.max()?, x.label("osd")))).reduce(|a, b| if b.0 > a.0 { b } else { a });
    if let Some((ms, osd)) = slowest {
        parts.push(format!("slowest OSD commit osd.{osd} {ms:.0} ms max"));
    }
    let (degraded, misplaced) = (max("cluster_degraded_objects"), max("cluster_misplaced_objects"));
    if degraded > 0.0 || misplaced > 0.0 {
        parts.push(format!("up to {degraded:.0} objects degraded and {misplaced:.0} misplaced"));
    }
    if let Some(up) = s.get("cluster_osds_in").and_then(|x| x.present().reduce(f64::min)) {
        parts.push(format!("at least {up:.0} of {:.0} OSDs in", max("cluster_osds")));
    }
    format!("cluster {} ({} s, its managers' figures): {}", s.name, s.t.len(), parts.join(", "))
}

/// An exporter's endpoint: how much of it was kept, and why any was not.
fn exporter_line(s: &Source) -> String {
    let metrics: std::collections::BTreeSet<&str> = s.series.iter().map(|x| x.metric.as_str()).collect();
    let mut l = format!(
        "exporter {} ({} s): {} series of {} metrics kept, counters as rates per second (every second in hosts.csv)",
        s.name,
        s.t.len(),
        s.series.len(),
        metrics.len()
    );
    for n in &s.notes {
        l.push_str("; ");
        l.push_str(n);
    }
    l
}

pub const HEADER: &str = "host,kind,t_s,duration_s,metric,labels,value";

/// Every second of every series, a row each (missing values left out).
pub fn write(r: &storbench_model::RunResult, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for s in r.telemetry.iter().flat_map(|t| &t.sources) {
        let kind = serde_json::to_value(s.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        for series in &s.series {
            let labels: Vec<String> = series.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let labels = crate::csv::quote(&labels.join(";"));
            for ((t, d), v) in s.t.iter().zip(&s.duration).zip(&series.values) {
                let Some(v) = v else { continue };
                writeln!(out, "{},{kind},{t:.3},{d:.3},{},{labels},{v}", crate::csv::quote(&s.name), series.metric)?;
            }
        }
    }
    Ok(())
}

/// The hosts' series as a format (`hosts.csv`).
pub struct HostsCsv;

impl crate::Exporter for HostsCsv {
    fn name(&self) -> &'static str {
        "hosts-csv"
    }
    fn describe(&self) -> &'static str {
        "every host's per-second CPU, disk, network, memory and pressure figures (as hosts.csv)"
    }
    fn file_name(&self) -> Option<&'static str> {
        Some("hosts.csv")
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "{HEADER}")?;
        runs.results().try_for_each(|r| write(r, out))
    }
}

/// The series of a metric with the highest peak.
fn busiest<'a>(s: &'a Source, m: &'a str) -> Option<&'a Series> {
    s.all(m).max_by(|a, b| a.max().unwrap_or(0.0).total_cmp(&b.max().unwrap_or(0.0)))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::telemetry::{HostSample, Value};

    #[test]
    fn a_host_line_names_its_busiest_core_disk_and_network() {
        let mut t = Telemetry::default();
        for (i, util) in [40.0, 99.0].into_iter().enumerate() {
            let values = vec![
                Value::new(metric::CPU_BUSY, &[], 30.0),
                Value::new(metric::CPU_BUSY, &[("core", "busiest")], 100.0),
                Value::new(metric::DISK_UTIL, &[("disk", "loop7")], util),
                Value::new(metric::DISK_UTIL, &[("disk", "sda")], 1.0),
                Value::new(metric::NIC_RX_BYTES, &[("nic", "eth0")], 1e6),
                Value::new(metric::NIC_TX_BYTES, &[("nic", "eth0")], 0.25e6),
                Value::new(metric::TCP_RETRANS, &[], 2.0),
            ];
            let s = HostSample { source: "local".into(), hostname: "h".into(), cpus: 2, duration: 1.0, values, ..HostSample::default() };
            t.push(i as f64 + 1.0, s);
        }
        let l = &lines(&t)[0];
        assert!(l.starts_with("host local (h, 2 CPUs, 2 s): CPU busy 30% mean, 30% max, busiest core 100% max"), "{l}");
        assert!(l.contains("busiest disk loop7 99% util max"), "{l}");
        assert!(l.contains("network eth0 10.0 Mb/s mean"), "{l}");
        assert!(l.contains("4 TCP retransmits"), "{l}");
        let r = storbench_model::RunResult { telemetry: Some(t), ..crate::sample::run() };
        let mut csv = Vec::new();
        write(&r, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert!(csv.contains("local,client,2.000,1.000,disk_util_pct,disk=loop7,99\n"), "{csv}");
        assert_eq!(csv.lines().count(), 14);
    }
}
