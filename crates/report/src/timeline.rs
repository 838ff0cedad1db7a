//! The timeline table ([`storbench_model::timeline`]) as CSV or as a JSON
//! array of flat objects, for `storbench export --series`.

use std::io::Write;
use storbench_model::timeline::{TimelineRow, COLUMNS};

/// A header, then a line per row; numbers as the shortest text that reads back.
pub fn write_csv(rows: &[TimelineRow], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    for r in rows {
        let q = crate::csv::quote;
        writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            q(&r.dir),
            q(&r.source),
            r.kind,
            r.t_s,
            r.duration_s,
            q(&r.metric),
            q(&r.labels),
            number(r.value)
        )?;
    }
    Ok(())
}

/// An array of objects, keys in the columns' order, one row to a line.
pub fn write_json(rows: &[TimelineRow], out: &mut dyn Write) -> std::io::Result<()> {
    write!(out, "[")?;
    for (n, r) in rows.iter().enumerate() {
        let line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        write!(out, "{}\n  {line}", if n == 0 { "" } else { "," })?;
    }
    writeln!(out, "{}]", if rows.is_empty() { "" } else { "\n" })
}

fn number(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_metrics::ErrorKind;
    use storbench_model::disruption::{Disruption, FaultAction, FaultEvent};
    use storbench_model::telemetry::{HostSample, Telemetry, Value};
    use storbench_model::timeline::run_rows;
    use storbench_model::{RunResult, SeriesOp, SeriesPoint};
    use storbench_workload::OpKind;

    /// A job in the second group (started 10 s into the run), a host, a fault.
    fn run() -> RunResult {
        let op = SeriesOp {
            op: OpKind::Write,
            iops: 100.0,
            bytes_per_sec: 100.0 * 1048576.0,
            errors: 2,
            error_kinds: [(ErrorKind::Timeout, 2)].into(),
            mean_ns: 1500,
            p50_ns: 1000,
            p99_ns: 9000,
            max_ns: 10_000,
            buckets: vec![],
        };
        let point = |t: f64, warmup| SeriesPoint { t, duration: 1.0, warmup, ops: vec![op.clone()] };
        let mut job = crate::sample::job("w", 1, &[], 2_000_000_000, vec![]);
        job.series = vec![point(1.0, true), point(2.0, false)];
        let mut t = Telemetry { group_starts: vec![0.0, 10.0], ..Telemetry::default() };
        let values = vec![Value::new("disk_util_pct", &[("disk", "sda")], 97.0)];
        t.push(12.0, HostSample { source: "local".into(), cpus: 2, duration: 1.0, values, ..HostSample::default() });
        let event = FaultEvent {
            at_s: 11.0,
            done_s: 11.25,
            action: FaultAction::OsdOut(2),
            answer: String::new(),
            error: None,
            skipped: false,
            restores: false,
        };
        RunResult {
            jobs: vec![job],
            telemetry: Some(t),
            disruption: Some(Disruption { events: vec![event], ..Disruption::default() }),
            ..crate::sample::run()
        }
    }

    #[test]
    fn jobs_hosts_and_faults_share_the_runs_axis() {
        let rows = run_rows(&run());
        let find = |kind: &str, metric: &str, labels: &str| {
            rows.iter()
                .find(|r| r.kind == kind && r.metric == metric && r.labels == labels)
                .unwrap_or_else(|| panic!("{kind} {metric} {labels}: {rows:?}"))
        };
        let ops = find("job", "ops_per_s", "op=write");
        assert_eq!((ops.source.as_str(), ops.t_s, ops.value), ("w", 12.0, 100.0), "the job's second 2 is the run's 12; warm-up left out");
        assert_eq!(find("job", "mib_per_s", "op=write").value, 100.0);
        assert_eq!(find("job", "p99_us", "op=write").value, 9.0);
        assert_eq!(find("job", "errors_by_kind", "op=write;error=timeout").value, 2.0);
        let disk = find("client", "disk_util_pct", "disk=sda");
        assert_eq!((disk.source.as_str(), disk.t_s, disk.value), ("local", 12.0, 97.0));
        let fault = find("fault", "fault", "outcome=done");
        assert_eq!((fault.source.as_str(), fault.t_s, fault.duration_s), ("osd-out:2", 11.0, 0.25));
        assert_eq!(rows.iter().filter(|r| r.kind == "job").count(), 6, "one second of five figures and one error kind");
    }

    #[test]
    fn the_csv_has_a_line_per_row_and_the_json_reads_back() {
        let rows: Vec<TimelineRow> = run_rows(&run()).into_iter().map(|r| TimelineRow { dir: "sweep/3".into(), ..r }).collect();
        let mut csv = Vec::new();
        write_csv(&rows, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().next(), Some("dir,source,kind,t_s,duration_s,metric,labels,value"));
        assert_eq!(csv.lines().count(), rows.len() + 1);
        assert!(csv.contains("\nsweep/3,w,job,12,1,errors_by_kind,op=write;error=timeout,2\n"), "{csv}");
        assert!(csv.contains("\nsweep/3,osd-out:2,fault,11,0.25,fault,outcome=done,1\n"), "{csv}");
        let mut json = Vec::new();
        write_json(&rows, &mut json).unwrap();
        let back: Vec<TimelineRow> = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, rows);
    }
}
