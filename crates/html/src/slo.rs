//! The report of an SLO search: the probes, the latency each rate gave
//! against the bound, and the answer marked.

use crate::charts::{self, Lines, Mark, Series};
use crate::page::Page;
use crate::{lat, provenance, Chart};
use std::path::Path;
use storbench_model::slo::SloIndex;
use storbench_model::RunSet;
use storbench_report::fmt::count;

pub fn page(dir: &Path, index: &SloIndex, runs: &RunSet) -> (String, Vec<Chart>) {
    let stat = index.statistic();
    let bound = lat(index.bound_ns as f64);
    let answer = match (index.answer, index.answer_iodepth) {
        (Some(a), Some(d)) => {
            format!("deepest queue with {stat} <= {bound}, closed loop: iodepth {d}, {} IOPS{}", count(a), index.per_agent(a, count))
        }
        (Some(a), None) => format!(
            "highest rate with {stat} <= {bound}: {} IOPS{}{}",
            count(a),
            index.per_agent(a, count),
            if index.confirmed { " (held when probed again)" } else { " (not confirmed by a second probe)" }
        ),
        _ => format!("nothing probed met {stat} <= {bound}"),
    };
    let mut page = Page::new("storbench report: SLO search", &format!("{} — {answer}", dir.display()));
    let mut warnings: Vec<String> = index.stopped.iter().map(|s| format!("search stopped early: {s}")).collect();
    warnings.extend(crate::run::warnings_of(runs.runs.iter().map(|r| &r.result)));
    page.warnings(&warnings);
    page.h2("Probes");
    let head: Vec<String> = ["probe", "rate", "IOPS", &stat, "samples", "seconds", "verdict"].map(String::from).into();
    let rows: Vec<Vec<String>> = index
        .probes
        .iter()
        .map(|pr| {
            vec![
                pr.dir.clone(),
                storbench_report::fmt::probe_load(pr),
                count(pr.achieved_iops),
                lat(pr.value_ns as f64),
                pr.samples.to_string(),
                format!("{:.0}", pr.seconds),
                if pr.pass { "meets".into() } else { format!("fails: {}", pr.note) },
            ]
        })
        .collect();
    page.table("probes", &head, &rows, 1);
    let probed = |p: &&storbench_model::slo::Probe| p.rate.is_some() || p.iodepth.is_some();
    let mut pts: Vec<(f64, f64)> = index.probes.iter().filter(probed).map(|p| (p.achieved_iops, p.value_ns as f64)).collect();
    pts.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    let marks: Vec<Mark> = index
        .probes
        .iter()
        .filter(|pr| (pr.rate.is_some() && pr.rate == index.answer) || (pr.iodepth.is_some() && pr.iodepth == index.answer_iodepth))
        .map(|pr| Mark { x: pr.achieved_iops, y: pr.value_ns as f64, label: format!(" answer {} IOPS", count(pr.achieved_iops)) })
        .collect();
    let series = [Series { label: format!("{stat} at each probed rate"), points: pts }];
    let svg = charts::lines(&Lines {
        title: &format!("{stat} latency against the rate achieved"),
        x_desc: "IOPS",
        y_desc: &stat,
        series: &series,
        log_y: true,
        y_fmt: &lat,
        x_fmt: Some(&|v| count(v)),
        marks: &marks,
        rule: Some((index.bound_ns as f64, format!("bound {bound}"))),
        points: true,
        axis: None,
    });
    let chart = Chart { name: "slo-probes".into(), title: format!("each fixed-rate probe's {stat}; the bound and the answer marked"), svg };
    page.h2("Charts");
    page.chart(&chart);
    let mut all = vec![chart];
    all.extend(crate::point_timelines(&mut page, runs, &chosen(index)));
    if let Some(first) = runs.runs.first() {
        provenance(&mut page, &first.result, " (first probe)");
    }
    (page.render(), all)
}

/// The probes at the answer (the first and its confirmation) and the
/// lowest failing probe above it: the two sides of the bound.
fn chosen(index: &SloIndex) -> Vec<(String, String)> {
    let load = |p: &storbench_model::slo::Probe| p.rate.or(p.iodepth.map(f64::from));
    let answer = index.answer_iodepth.map(f64::from).or(index.answer);
    let Some(a) = answer else { return Vec::new() };
    let mut out: Vec<(String, String)> =
        index.probes.iter().filter(|p| load(p) == Some(a)).map(|p| (p.dir.clone(), "the answer".to_string())).collect();
    let above = index
        .probes
        .iter()
        .filter(|p| !p.pass && load(p).is_some_and(|l| l > a))
        .min_by(|x, y| load(x).partial_cmp(&load(y)).unwrap_or(std::cmp::Ordering::Equal));
    if let Some(p) = above {
        out.push((p.dir.clone(), "the next probe above it, failing".into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::slo::Probe;

    fn probe(rate: Option<f64>, iodepth: Option<u32>, iops: f64, value_ns: u64, pass: bool) -> Probe {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = format!("p{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 3 + 1);
        Probe { rate, iodepth, dir, achieved_iops: iops, value_ns, samples: 10_000, seconds: 5.0, pass, note: String::new(), group: None }
    }

    #[test]
    fn open_and_closed_loop_searches_chart_their_probes_and_mark_the_answer() {
        let open = SloIndex {
            version: 1,
            command: Vec::new(),
            percentile: 99.0,
            mean: false,
            bound_ns: 2_000_000,
            probes: vec![
                probe(None, None, 1000.0, 9_000_000, false),
                probe(Some(500.0), None, 500.0, 1_000_000, true),
                probe(Some(750.0), None, 0.0, 0, false),
            ],
            answer: Some(500.0),
            answer_iodepth: None,
            confirmed: true,
            closed_loop: false,
            agents: None,
            stopped: None,
            stop_if: vec![],
        };
        let dirs: Vec<String> = chosen(&open).into_iter().map(|c| format!("{}:{}", c.0, c.1)).collect();
        assert_eq!(dirs, ["p2:the answer", "p3:the next probe above it, failing"]);
        let (html, charts) = page(Path::new("slo"), &open, &RunSet::default());
        let svg = charts[0].svg.as_ref().expect("drawn, the zero-latency probe left off the log axis");
        assert!(svg.contains("answer") && html.contains("held when probed again"));
        let closed = SloIndex {
            probes: vec![
                probe(None, Some(1), 200.0, 1_000_000, true),
                probe(None, Some(2), 400.0, 1_500_000, true),
                probe(None, Some(4), 450.0, 4_000_000, false),
            ],
            answer: Some(400.0),
            answer_iodepth: Some(2),
            closed_loop: true,
            agents: None,
            ..open
        };
        let (html, charts) = page(Path::new("slo"), &closed, &RunSet::default());
        assert!(charts[0].svg.as_ref().unwrap().contains("answer") && html.contains("iodepth 2"));
    }
}
