//! A run through failure: the clients' operations per second on the run's
//! axis with each fault marked where it came, the figures before, during
//! and after, and how long the clients and the cluster took to recover.

use crate::charts::{self, Lines, Mark, Series};
use crate::page::Page;
use crate::Chart;
use storbench_model::disruption::{clients_per_second, Stretch};
use storbench_model::RunResult;
use storbench_report::fmt::count;

/// The section, when the run injected faults.
pub fn section(page: &mut Page, run: &RunResult) -> Vec<Chart> {
    let Some(d) = &run.disruption else { return Vec::new() };
    page.h2("Faults");
    for l in storbench_report::text::disruption_lines(d) {
        page.para(&l, "notes");
    }
    let head: Vec<String> = ["stretch", "from s", "to s", "ops/s", "MiB/s", "p99", "errors"].iter().map(|s| s.to_string()).collect();
    let rows: Vec<Vec<String>> = [("before", &d.before), ("during", &d.during), ("after", &d.after)]
        .into_iter()
        .filter_map(|(n, s)| Some(row(n, s.as_ref()?)))
        .collect();
    page.table("faults", &head, &rows, 1);
    let line = clients_per_second(run);
    let at = |t: f64| line.iter().find(|(s, _)| *s >= t).or(line.last()).map_or(0.0, |p| p.1);
    let marks: Vec<Mark> = d.events.iter().map(|e| Mark { x: e.at_s, y: at(e.at_s), label: e.action.words() }).collect();
    let series = [Series { label: "every job".into(), points: line }];
    let ops = |v: f64| count(v);
    let chart = Chart {
        name: "faults-clients".into(),
        title: "the clients' operations per second, each fault marked where it came".into(),
        svg: charts::lines(&Lines {
            title: "operations per second",
            x_desc: "seconds",
            y_desc: "ops/s",
            series: &series,
            log_y: false,
            y_fmt: &ops,
            x_fmt: None,
            marks: &marks,
            rule: d.before.as_ref().map(|b| (b.ops_per_s * 0.95, "95% of before".to_string())),
            points: false,
            axis: None,
        }),
    };
    page.chart(&chart);
    vec![chart]
}

fn row(name: &str, s: &Stretch) -> Vec<String> {
    vec![
        name.into(),
        format!("{:.1}", s.from_s),
        format!("{:.1}", s.to_s),
        count(s.ops_per_s),
        format!("{:.1}", s.bytes_per_s / (1 << 20) as f64),
        s.p99_ns.map_or("-".into(), |ns| format!("{:.2} ms", ns as f64 / 1e6)),
        s.errors_words().trim_end_matches(" errors").replacen(" errors (", " (", 1),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_metrics::ErrorKind;

    #[test]
    fn a_row_says_each_figure() {
        let s = Stretch {
            from_s: 0.0,
            to_s: 5.0,
            ops_per_s: 1234.0,
            bytes_per_s: 2.0 * (1 << 20) as f64,
            p99_ns: Some(2_500_000),
            errors: 3,
            ..Stretch::default()
        };
        assert_eq!(row("before", &s), ["before", "0.0", "5.0", &count(1234.0), "2.0", "2.50 ms", "3"]);
        let kinds = [(ErrorKind::Connection, 2), (ErrorKind::Timeout, 1)].into_iter().collect();
        let s = Stretch { error_kinds: kinds, ..s };
        assert_eq!(row("during", &s)[6], "3 (connection 2, timeout 1)");
    }
}
