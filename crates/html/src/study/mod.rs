//! The report of a study (`storbench study`, or `storbench report STUDY`):
//! its first screen the answers, one line per question with its numbers and
//! their scope; then a section per question with its chart (lines,
//! iops-latency, surfaces, scaling, ramp or table: [`kinds`]), a table of
//! its points, and its steps: each command, its state, its warnings folded.
//! A step not run, failed or without results is said, never fatal.

mod kinds;
mod points;

use crate::page::Page;
use crate::{Chart, StepData};
use kinds::Part;
use points::{run_rows, views, View};
use std::path::Path;
use storbench_model::study::{Ask, ChartKind, QuestionInfo, StepState, StudyIndex};
use storbench_model::sweep::PointState;
use storbench_report::fmt::{count, figure_cells, probe_load};
use storbench_workload::options::axis;

pub fn page(dir: &Path, index: &StudyIndex, steps: &[StepData]) -> (String, Vec<Chart>) {
    let mut page = Page::new(&format!("storbench study: {}", index.title), &format!("{} — {}", dir.display(), progress(index)));
    let parts: Vec<(&QuestionInfo, Vec<View>, Part)> = index
        .questions
        .iter()
        .map(|q| {
            let v = views(index, steps, &q.id);
            let part = answer(q, &v);
            (q, v, part)
        })
        .collect();
    page.answers(&parts.iter().map(|(q, _, p)| (q.title.clone(), p.answers.clone())).collect::<Vec<_>>());
    if !index.about.is_empty() {
        page.para(&index.about, "notes");
    }
    let mut all = Vec::new();
    for (q, v, part) in parts {
        section(&mut page, q, &v, &part);
        all.extend(part.charts);
    }
    provenance(&mut page, index);
    (page.render(), all)
}

/// `4 questions, 12 steps: 10 done, 1 failed, 1 pending`.
fn progress(index: &StudyIndex) -> String {
    let n = |f: &dyn Fn(&StepState) -> bool| index.steps.iter().filter(|s| f(&s.state)).count();
    let counts = [
        ("done", n(&|s| *s == StepState::Done)),
        ("failed", n(&|s| matches!(s, StepState::Failed { .. }))),
        ("interrupted", n(&|s| *s == StepState::Interrupted)),
        ("pending", n(&|s| *s == StepState::Pending)),
    ];
    let said: Vec<String> = counts.iter().filter(|c| c.1 > 0).map(|(w, k)| format!("{k} {w}")).collect();
    format!("{} questions, {} steps: {}", index.questions.len(), index.steps.len(), said.join(", "))
}

/// The chart the question asks for, and its answers.
fn answer(q: &QuestionInfo, v: &[View]) -> Part {
    let mut part = match q.chart {
        // A comparison's table is its differences, not its steps' runs.
        ChartKind::Table if q.ask == Ask::Compare => Part::default(),
        ChartKind::Lines => kinds::lines(q, v),
        ChartKind::IopsLatency => kinds::iops_latency(q, v),
        ChartKind::Surfaces => kinds::surfaces(q, v),
        ChartKind::Scaling => kinds::scaling(q, v),
        ChartKind::Ramp => kinds::ramp(q, v),
        ChartKind::Table => kinds::table(q, v),
    };
    if q.ask == Ask::Compare {
        let c = kinds::compare(q, v);
        // Its own differences answer it; a surfaces chart's already do.
        if q.chart != ChartKind::Surfaces {
            part.answers = c.answers;
        }
        part.tables.extend(c.tables);
        part.notes.extend(c.notes);
    }
    if part.answers.iter().all(|a| a.is_empty()) {
        part.answers = vec!["nothing measured yet".into()];
    }
    if v.is_empty() {
        part.answers = vec![if q.ask == Ask::Compare { "no steps of the question it compares".into() } else { "no steps".into() }];
    }
    part
}

fn section(page: &mut Page, q: &QuestionInfo, v: &[View], part: &Part) {
    page.h2_id(&q.title, &format!("q-{}", crate::slug(&q.id)));
    let of = q.of.as_deref().map(|o| format!(", comparing the configurations of question {o}")).unwrap_or_default();
    page.para(&format!("{}: {} ({} chart){of}", q.id, q.ask.name(), q.chart.name()), "notes");
    for n in &part.notes {
        page.para(n, "notes");
    }
    let (across, below) = part.charts.split_at(part.side_by_side.min(part.charts.len()));
    if across.len() > 1 {
        page.side_by_side(&across.iter().collect::<Vec<_>>());
    } else {
        across.iter().for_each(|c| page.chart(c));
    }
    for c in below {
        page.chart(c);
    }
    for (id, head, rows) in &part.tables {
        page.table(id, head, rows, 1);
    }
    // A comparison's points are its question's (shown there); its table
    // is the differences.
    if q.ask == Ask::Compare {
        return;
    }
    page.h3("Points");
    let head: Vec<String> = ["step", "point", "IOPS", "MiB/s", "mean", "p50", "p99", "p99.9", "errors", "note"].map(String::from).into();
    page.table(&format!("points-{}", crate::slug(&q.id)), &head, &point_rows(v), 2);
    steps(page, q, v);
}

/// Every point of every step: a sweep's in grid order, an SLO search's
/// probes, a run's whole and per job.
fn point_rows(v: &[View]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let dash = || std::iter::repeat_n("-".to_string(), 7);
    for view in v {
        match view.data {
            StepData::Sweep { index, runs } => {
                let runs = points::runs_by_dir(runs);
                for g in points::grid_points(index) {
                    let at = index.dims.iter().zip(&g.values).map(|(d, x)| format!("{}={}", d.option, axis::label(&d.option, x)));
                    let mut row = vec![view.label.clone(), at.collect::<Vec<_>>().join(" ")];
                    match &g.figures {
                        Some(f) => row.extend(figure_cells(f)),
                        None => row.extend(dash()),
                    }
                    let run = g.dir.as_ref().and_then(|d| runs.get(d)).copied();
                    let scope = g.figures.as_ref().map(|f| points::scope(f, run, None)).unwrap_or_default();
                    let note = if index.is_knee(&g.values) { Some("knee".to_string()) } else { g.note };
                    row.push([note.unwrap_or_default(), scope].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; "));
                    rows.push(row);
                }
            }
            StepData::Slo { index, .. } => {
                for p in &index.probes {
                    let mut row = vec![view.label.clone(), format!("probe {}", probe_load(p)), count(p.achieved_iops)];
                    row.extend(std::iter::repeat_n("-".to_string(), 6));
                    let verdict = if p.pass { "meets".to_string() } else { format!("fails {}", p.note) };
                    row.push(format!("{} {}: {verdict}", index.statistic(), crate::lat(p.value_ns as f64)));
                    rows.push(row);
                }
            }
            StepData::Runs(set) => {
                for r in &set.runs {
                    // A tool's phase (swift-bench's PUT, GET, DELETE) names its rows.
                    let phase = points::phase(&r.result);
                    for (scope, f) in run_rows(&r.result) {
                        let point = match &phase {
                            Some(p) if scope == "all" => p.clone(),
                            Some(p) => format!("{p} {scope}"),
                            None => scope,
                        };
                        let mut row = vec![view.label.clone(), point];
                        row.extend(figure_cells(&f));
                        row.push(f.scope());
                        rows.push(row);
                    }
                }
            }
            StepData::Missing(_) => {}
        }
    }
    rows
}

/// The question's steps: command, state, time; each one's warnings folded
/// under it.
fn steps(page: &mut Page, q: &QuestionInfo, v: &[View]) {
    page.h3("Steps");
    let rows: Vec<Vec<String>> = v
        .iter()
        .map(|view| {
            let s = view.step;
            let mut state = match &s.state {
                StepState::Pending => "pending".to_string(),
                StepState::Done => "done".into(),
                StepState::Interrupted => "interrupted".into(),
                StepState::Failed { code, message } => format!("failed (exit {code}): {message}"),
            };
            if let StepData::Missing(why) = view.data {
                state += &format!("; no results: {why}");
            }
            vec![s.config.clone(), s.line.clone(), state, format!("{:.0}", s.seconds), format!("storbench {}", s.command.join(" "))]
        })
        .collect();
    let head: Vec<String> = ["config", "line", "state", "seconds", "command"].map(String::from).into();
    page.table(&format!("steps-{}", crate::slug(&q.id)), &head, &rows, 3);
    for view in v {
        let w = warnings(view.data);
        if !w.is_empty() {
            let n = w.len();
            page.details(&format!("{}/{}: {n} warning{}", view.step.config, view.step.line, if n == 1 { "" } else { "s" }), &w);
        }
    }
}

/// A step's warnings: its points that failed or were cut short, a search
/// stopped early, and its runs' own.
fn warnings(data: &StepData) -> Vec<String> {
    let mut out = Vec::new();
    let runs = match data {
        StepData::Sweep { index, runs } => {
            out.extend(index.points.iter().filter_map(|p| match &p.state {
                PointState::Failed { message } => Some(format!("run {} failed: {message}", p.dir)),
                PointState::Interrupted => Some(format!("run {} was interrupted", p.dir)),
                _ => None,
            }));
            runs
        }
        StepData::Slo { index, runs } => {
            out.extend(index.stopped.iter().map(|s| format!("search stopped early: {s}")));
            runs
        }
        StepData::Runs(runs) => runs,
        StepData::Missing(_) => return out,
    };
    out.extend(crate::run::warnings_of(runs.runs.iter().map(|r| &r.result)));
    out
}

/// The study's command and variables (a study refuses secrets as
/// variables: their values come from the environment), when it started,
/// and which storbench drew this.
fn provenance(page: &mut Page, index: &StudyIndex) {
    page.h2("Provenance");
    let vars = index.vars.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
    let configs = index.configs.iter().map(|c| format!("{}: {}", c.key, c.label)).collect::<Vec<_>>().join("; ");
    let rows = vec![
        vec!["study".to_string(), index.title.clone()],
        vec!["command".into(), format!("storbench {}", index.command.join(" "))],
        vec!["variables".into(), vars],
        vec!["configurations".into(), configs],
        vec!["started".into(), storbench_report::fmt::utc_time(index.started_unix)],
        vec!["report by".into(), format!("storbench {}", env!("CARGO_PKG_VERSION"))],
    ];
    page.table("provenance", &["".into(), "value".into()], &rows, 2);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use storbench_model::slo::{Probe, SloIndex};
    use storbench_model::study::{ConfigInfo, Metric, Step};
    use storbench_model::sweep::{grid, Dimension, Knee, PointFigures, SweepIndex, SweepMode, SweepPoint};
    use storbench_model::RunSet;

    fn fig(iops: f64, p99_ms: f64) -> PointFigures {
        PointFigures {
            iops,
            bytes_per_sec: iops * 4096.0,
            mean_ns: p99_ms * 5e5,
            p50_ns: (p99_ms * 4e5) as u64,
            p99_ns: (p99_ms * 1e6) as u64,
            p999_ns: (p99_ms * 2e6) as u64,
            errors: 0,
            groups: vec![],
        }
    }

    /// A sweep over `dims` whose figures `f` gives (none: skipped).
    fn sweep(dims: &[(&str, &[&str])], f: &dyn Fn(&[String]) -> Option<PointFigures>) -> StepData {
        let dims: Vec<Dimension> =
            dims.iter().map(|(o, v)| Dimension { option: o.to_string(), values: v.iter().map(|s| s.to_string()).collect() }).collect();
        let points = grid(&dims, SweepMode::Grid)
            .into_iter()
            .enumerate()
            .map(|(i, values)| {
                let figures = f(&values);
                let state = if figures.is_some() { PointState::Done } else { PointState::Skipped { reason: "past the knee".into() } };
                SweepPoint { index: i, repeat: 1, values, dir: format!("{i:03}"), state, figures, seconds: 1.0, ceiling: None }
            })
            .collect();
        let index = SweepIndex {
            version: 1,
            command: vec![],
            dims,
            mode: SweepMode::Grid,
            repeat: 1,
            shuffle: None,
            knee_gain_pct: Some(5.0),
            points,
            knees: vec![],
        };
        StepData::Sweep { index, runs: RunSet::default() }
    }

    fn num(v: &str) -> f64 {
        v.parse().unwrap()
    }

    fn study(q: QuestionInfo, steps: &[(&str, StepState)]) -> StudyIndex {
        StudyIndex {
            version: 1,
            title: "t".into(),
            about: String::new(),
            command: vec!["study".into(), "t.toml".into()],
            vars: BTreeMap::from([("key".to_string(), "(secret)".to_string())]),
            set: BTreeMap::new(),
            scale: None,
            configs: vec![
                ConfigInfo { key: "off".into(), label: "cache off".into() },
                ConfigInfo { key: "on".into(), label: "cache on".into() },
            ],
            steps: steps
                .iter()
                .map(|(c, state)| Step {
                    question: q.id.clone(),
                    config: c.to_string(),
                    line: "all".into(),
                    dir: format!("{}/{c}/all", q.id),
                    command: vec!["sweep".into()],
                    state: state.clone(),
                    seconds: 1.0,
                    estimate: 1.0,
                })
                .collect(),
            questions: vec![q],
            started_unix: 0,
        }
    }

    fn question(id: &str, ask: Ask, chart: ChartKind, metrics: &[Metric]) -> QuestionInfo {
        QuestionInfo {
            id: id.into(),
            title: format!("{id}?"),
            ask,
            chart,
            metrics: metrics.to_vec(),
            configs: vec!["off".into(), "on".into()],
            lines: vec!["all".into()],
            of: None,
            sweep: vec![],
        }
    }

    fn svg<'a>(charts: &'a [Chart], name: &str) -> &'a str {
        let c = charts
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", charts.iter().map(|c| &c.name).collect::<Vec<_>>()));
        c.svg.as_ref().unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// The SVG's text elements (ticks, legends, marks).
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text").skip(1).filter_map(|t| Some(t.split_once('>')?.1.split("</text>").next()?.trim().to_string())).collect()
    }

    fn depth_sweep(scale: f64, knee: Option<&str>) -> StepData {
        let depths: &[&str] = &["1", "4", "16", "64"];
        let mut s = sweep(&[("iodepth", depths)], &|v| Some(fig(scale * 1000.0 * num(&v[0]).min(16.0), num(&v[0]) / 4.0)));
        if let (StepData::Sweep { index, .. }, Some(k)) = (&mut s, knee) {
            index.knees.push(Knee { option: "iodepth".into(), values: vec![k.into()], rule: "r".into() });
        }
        s
    }

    #[test]
    fn lines_chart_each_metric_by_the_swept_option_a_line_per_configuration_on_a_log_axis() {
        let ix = study(
            question("d", Ask::Sweep, ChartKind::Lines, &[Metric::Iops, Metric::P99]),
            &[("off", StepState::Done), ("on", StepState::Done)],
        );
        let data = [depth_sweep(1.0, Some("16")), depth_sweep(2.0, None)];
        let part = kinds::lines(&ix.questions[0], &views(&ix, &data, "d"));
        let iops = svg(&part.charts, "d-iops");
        assert!(iops.contains("cache off") && iops.contains("cache on") && iops.contains("knee"), "legends and the knee");
        let t = texts(iops);
        assert!(
            t.iter().any(|x| x == "iodepth (log scale)") && t.iter().any(|x| x == "64"),
            "1..64 spans 64x: log x, ticks at the values: {t:?}"
        );
        assert!(svg(&part.charts, "d-p99").contains("p99 latency"));
        assert_eq!(part.answers, ["highest IOPS: cache on: 32.0k IOPS at iodepth=16"]);
        let none = [StepData::Missing("not run".into()), StepData::Missing("not run".into())];
        let part = kinds::lines(&ix.questions[0], &views(&ix, &none, "d"));
        assert!(part.charts.is_empty() && part.answers == ["no swept points measured yet"]);
        let jobs: Vec<String> = (1..=20).map(|n| n.to_string()).collect();
        let jobs: Vec<&str> = jobs.iter().map(String::as_str).collect();
        let many = [sweep(&[("numjobs", &jobs), ("iodepth", &["1", "2"])], &|v| Some(fig(num(&v[0]), 1.0))), StepData::Missing("x".into())];
        let part = kinds::lines(&ix.questions[0], &views(&ix, &many, "d"));
        assert_eq!(part.notes, ["the chart draws the first 12 of 20 curves; the points table has every point"]);
        let t = texts(svg(&part.charts, "d-iops"));
        assert!(t.iter().any(|x| x == "cache off numjobs=12") && !t.iter().any(|x| x == "cache off numjobs=13"), "{t:?}");
        assert_eq!(part.answers, ["highest IOPS: cache off: 20 IOPS at iodepth=1 numjobs=20"]);
    }

    #[test]
    fn iops_latency_marks_knees_and_an_slo_searchs_bound_and_answer() {
        let q = question("l", Ask::Sweep, ChartKind::IopsLatency, &[Metric::Iops]);
        let ix = study(q.clone(), &[("off", StepState::Done), ("on", StepState::Done)]);
        let data = [depth_sweep(1.0, Some("16")), depth_sweep(2.0, Some("4"))];
        let part = kinds::iops_latency(&ix.questions[0], &views(&ix, &data, "l"));
        assert!(svg(&part.charts, "l-iops-latency").contains("knee"));
        assert_eq!(part.answers, ["knee at iodepth=16 (cache off), iodepth=4 (cache on)"]);
        let probe = |rate: f64, iops: f64, ms: u64, pass: bool| Probe {
            rate: Some(rate),
            iodepth: None,
            dir: format!("r{rate}"),
            achieved_iops: iops,
            value_ns: ms * 1_000_000,
            samples: 100,
            seconds: 1.0,
            pass,
            note: String::new(),
            group: None,
        };
        let slo = SloIndex {
            version: 1,
            command: vec![],
            percentile: 99.0,
            mean: false,
            bound_ns: 2_000_000,
            probes: vec![probe(2000.0, 2000.0, 1, true), probe(4100.0, 4100.0, 2, true), probe(6000.0, 5000.0, 9, false)],
            answer: Some(4100.0),
            answer_iodepth: None,
            confirmed: true,
            closed_loop: false,
            agents: None,
            stopped: None,
            stop_if: vec![],
        };
        let ix = study(QuestionInfo { ask: Ask::Slo, ..q }, &[("off", StepState::Done)]);
        let data = [StepData::Slo { index: slo, runs: RunSet::default() }];
        let part = kinds::iops_latency(&ix.questions[0], &views(&ix, &data, "l"));
        let s = svg(&part.charts, "l-iops-latency");
        assert!(texts(s).iter().any(|x| x == "bound p99&lt;=2.00ms"), "the bound as a rule: {:?}", texts(s));
        assert!(s.contains("answer"));
        assert_eq!(part.answers, ["rate at p99<=2.00ms: 4100 IOPS"]);
        let ix = study(question("l", Ask::Sweep, ChartKind::IopsLatency, &[]), &[("off", StepState::Pending)]);
        let none = [StepData::Missing("not run".into())];
        let part = kinds::iops_latency(&ix.questions[0], &views(&ix, &none, "l"));
        assert_eq!(part.charts[0].svg.as_ref().unwrap_err(), "no data");
    }

    #[test]
    fn surfaces_draw_a_grid_per_configuration_and_the_difference_against_the_first() {
        let ix =
            study(question("g", Ask::Sweep, ChartKind::Surfaces, &[Metric::Iops]), &[("off", StepState::Done), ("on", StepState::Done)]);
        let dims: &[(&str, &[&str])] = &[("numjobs", &["1", "2"]), ("bs", &["4096", "65536"])];
        let data = [sweep(dims, &|v| Some(fig(100.0 * num(&v[0]), 1.0))), sweep(dims, &|v| Some(fig(150.0 * num(&v[0]), 1.0)))];
        let part = kinds::surfaces(&ix.questions[0], &views(&ix, &data, "g"));
        assert!(svg(&part.charts, "g-grid-off-all").contains("64KiB") && svg(&part.charts, "g-grid-on-all").contains("300"));
        assert!(svg(&part.charts, "g-difference-on-all").contains("+50%"));
        assert!(
            part.answers.contains(&"cache on against cache off: IOPS +50% median over 4 points (from +50% to +50%)".to_string()),
            "{:?}",
            part.answers
        );
        // Two lines: each difference is against the same line on the first configuration.
        let mut two = study(
            question("g", Ask::Sweep, ChartKind::Surfaces, &[Metric::Iops]),
            &[("off", StepState::Done), ("off", StepState::Done), ("on", StepState::Done), ("on", StepState::Done)],
        );
        for (s, line) in two.steps.iter_mut().zip(["seq", "rand", "seq", "rand"]) {
            s.line = line.into();
            s.dir = format!("g/{}/{line}", s.config);
        }
        let by = |k: f64| sweep(dims, &move |v: &[String]| Some(fig(k * num(&v[0]), 1.0)));
        let data = [by(100.0), by(10.0), by(200.0), by(15.0)];
        let part = kinds::surfaces(&two.questions[0], &views(&two, &data, "g"));
        assert!(svg(&part.charts, "g-difference-on-rand").contains("+50%"), "rand against rand, not seq");
        let titles: Vec<&str> = part.charts.iter().map(|c| c.title.as_str()).filter(|t| t.contains("percent")).collect();
        assert_eq!(
            titles,
            ["IOPS of cache on · seq against cache off · seq, percent", "IOPS of cache on · rand against cache off · rand, percent"]
        );
        let one = [depth_sweep(1.0, None), depth_sweep(1.0, None)];
        let part = kinds::surfaces(&ix.questions[0], &views(&ix, &one, "g"));
        assert!(part.notes[0].contains("drawn as lines") && part.charts.iter().any(|c| c.name == "g-iops"));
    }

    #[test]
    fn scaling_says_the_gain_and_the_efficiency_of_each_count() {
        let ix = study(question("s", Ask::Sweep, ChartKind::Scaling, &[]), &[("off", StepState::Done)]);
        let iops = |n: &str| match n {
            "1" => 1000.0,
            "2" => 1900.0,
            _ => 3600.0,
        };
        let data = [sweep(&[("agents", &["1", "2", "4"])], &|v| Some(fig(iops(&v[0]), 1.0)))];
        let part = kinds::scaling(&ix.questions[0], &views(&ix, &data, "s"));
        let chart = svg(&part.charts, "s-scaling");
        assert!(
            chart.contains("IOPS: linear") && !chart.contains(">: linear") && !chart.contains("\n: linear"),
            "one step's legend says what is drawn: {chart}"
        );
        assert_eq!(part.answers, ["scaling 1->4 agents: 3.6x (90%)"]);
        let eff: Vec<&str> = part.tables[0].2.iter().map(|r| r[4].as_str()).collect();
        assert_eq!(eff, ["100%", "95%", "90%"]);
        let mut q = ix.questions[0].clone();
        q.sweep = vec!["volumes=1,2,4".into()];
        let none = [StepData::Missing("x".into())];
        let part = kinds::scaling(&q, &views(&ix, &none, "s"));
        assert_eq!(part.charts[0].svg.as_ref().unwrap_err(), "no data");
        assert_eq!(part.answers, ["no two volumes counts measured yet"], "named by the question's sweep before any point ran");
        let slo = question("l", Ask::Slo, ChartKind::IopsLatency, &[]);
        let ix = study(slo, &[("off", StepState::Pending)]);
        assert_eq!(answer(&ix.questions[0], &views(&ix, &none, "l")).answers, ["nothing measured yet"]);
    }

    #[test]
    fn a_ramp_marks_its_peak() {
        let ix = study(question("r", Ask::Ramp, ChartKind::Ramp, &[]), &[("off", StepState::Done)]);
        let ops = |u: &str| [10.0, 20.0, 30.0, 25.0][["1", "2", "4", "8"].iter().position(|x| *x == u).unwrap()];
        let data = [sweep(&[("users", &["1", "2", "4", "8"])], &|v| Some(fig(ops(&v[0]), 1.0)))];
        let part = kinds::ramp(&ix.questions[0], &views(&ix, &data, "r"));
        assert!(svg(&part.charts, "r-ramp").contains("peak"));
        assert_eq!(part.answers, ["ramp peak: 4 users, 30 ops/s"]);
    }

    #[test]
    fn a_table_has_a_row_per_step_and_per_job_and_says_groups_ran_in_turn() {
        let ix = study(question("t", Ask::Run, ChartKind::Table, &[]), &[("off", StepState::Done), ("on", StepState::Done)]);
        let data = [StepData::Runs(RunSet::one(storbench_report::sample::run())), StepData::Missing("no results directory".into())];
        let part = kinds::table(&ix.questions[0], &views(&ix, &data, "t"));
        let scopes: Vec<&str> = part.tables[0].2.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(scopes, ["all", "job rr", "job rr2", "job wsync"]);
        assert_eq!(part.answers.len(), 1);
        assert!(part.answers[0].starts_with("cache off: ") && part.answers[0].contains("2 groups one after another"), "{:?}", part.answers);
        let mut q = question("t", Ask::Baseline, ChartKind::Table, &[]);
        q.configs = vec!["off".into()];
        let ix = study(q, &[("off", StepState::Done)]);
        let part = kinds::table(&ix.questions[0], &views(&ix, &data[..1], "t"));
        let who: Vec<&str> = part.answers.iter().map(|a| a.split(':').next().unwrap()).collect();
        assert_eq!(who, ["rr", "rr2", "wsync"], "a baseline answers per job, each its own ceiling: {:?}", part.answers);
        // A finished tool step that writes no results (a cleanup) is done, not pending.
        let missing = [StepData::Missing("its command writes no results directory (done)".into())];
        let ix = study(question("c", Ask::Tool, ChartKind::Table, &[]), &[("off", StepState::Done)]);
        assert_eq!(kinds::table(&ix.questions[0], &views(&ix, &missing, "c")).answers, ["done; its commands write no results"]);
        let ix = study(question("c", Ask::Tool, ChartKind::Table, &[]), &[("off", StepState::Pending)]);
        assert_eq!(kinds::table(&ix.questions[0], &views(&ix, &missing, "c")).answers, ["no run measured yet"]);
    }

    #[test]
    fn a_comparison_of_a_tools_phases_matches_each_phase_with_the_same_phase() {
        let phase = |name: &str, k: f64| {
            let mut r = storbench_report::sample::run();
            r.parameters.insert("phase".into(), name.into());
            r.jobs.iter_mut().flat_map(|j| j.ops.iter_mut()).for_each(|o| {
                o.iops *= k;
                o.ios = (o.ios as f64 * k) as u64;
            });
            r
        };
        let set = |runs: Vec<storbench_model::RunResult>| {
            let mut s = RunSet::default();
            runs.into_iter().for_each(|r| s.push(r, None));
            StepData::Runs(s)
        };
        let mut q = question("v", Ask::Compare, ChartKind::Table, &[Metric::Iops]);
        q.of = Some("b".into());
        let mut ix = study(question("b", Ask::Tool, ChartKind::Table, &[]), &[("off", StepState::Done), ("on", StepState::Done)]);
        ix.questions.push(q);
        // The second store's runs load in another order (delete, get, put).
        let data = [set(vec![phase("put", 1.0), phase("get", 2.0)]), set(vec![phase("get", 4.0), phase("put", 3.0)])];
        let part = kinds::compare(&ix.questions[1], &views(&ix, &data, "v"));
        let diff = |point: &str| {
            part.tables[0].2.iter().find(|r| r[1] == point).map(|r| r[6].clone()).unwrap_or_else(|| panic!("{point}: {:?}", part.tables))
        };
        assert_eq!((diff("PUT all"), diff("GET all")), ("+200.0%".to_string(), "+100.0%".to_string()));
    }

    #[test]
    fn the_page_opens_with_the_answers_and_says_steps_not_run() {
        let ix =
            study(question("d", Ask::Sweep, ChartKind::Lines, &[Metric::Iops]), &[("off", StepState::Done), ("on", StepState::Pending)]);
        let data = [depth_sweep(1.0, None), StepData::Missing("no results directory (not run yet)".into())];
        let (html, charts) = page(Path::new("st"), &ix, &data);
        let (answers, section) = (html.find("id=\"answers\"").unwrap(), html.find("id=\"q-d\"").unwrap());
        assert!(answers < section && html[answers..section].contains("highest IOPS: cache off: 16.0k IOPS at iodepth=16"));
        assert!(html.contains("pending; no results: no results directory (not run yet)") && html.contains("1 done, 1 pending"));
        assert!(html.contains("key=(secret)") && html.contains("storbench study t.toml"));
        assert!(charts.iter().all(|c| c.svg.is_ok()) && !html.contains("<script"));
    }

    #[test]
    fn a_comparison_matches_each_point_of_a_later_configuration_with_the_first_ones() {
        let mut q = question("v", Ask::Compare, ChartKind::Table, &[]);
        q.of = Some("d".into());
        let mut ix = study(question("d", Ask::Sweep, ChartKind::Lines, &[]), &[("off", StepState::Done), ("on", StepState::Done)]);
        ix.questions.push(q);
        let data = [depth_sweep(1.0, None), depth_sweep(1.5, None)];
        let (html, _) = page(Path::new("st"), &ix, &data);
        let part = answer(&ix.questions[1], &views(&ix, &data, "v"));
        assert_eq!(part.answers, ["cache on against cache off: IOPS +50% median over 4 points (from +50% to +50%)"]);
        let rows = &part.tables[0].2;
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0][1..].to_vec(), ["iodepth=1", "cache off", "1000 IOPS", "cache on", "1500 IOPS", "+50.0%"]);
        assert!(html.contains("id=\"v-differences\"") && !html.contains("id=\"points-v\""), "its table is the differences");
        let none = [StepData::Missing("x".into()), StepData::Missing("x".into())];
        let part = answer(&ix.questions[1], &views(&ix, &none, "v"));
        assert_eq!(part.answers, ["no points measured on both configurations yet"]);
    }

    #[test]
    fn a_scope_says_what_the_figures_add_up_and_each_parts_share() {
        let mut run = storbench_report::sample::run();
        let f = |r: &storbench_model::RunResult| PointFigures::of(r);
        assert!(points::scope(&f(&run), Some(&run), None).starts_with("2 groups one after another"));
        run.jobs.truncate(2);
        let s = points::scope(&f(&run), Some(&run), None);
        assert_eq!(s, format!("total of 2 jobs together, {} IOPS per job", count(f(&run).iops / 2.0)));
        run.jobs.truncate(1);
        run.jobs[0].workers = 4;
        let s = points::scope(&f(&run), Some(&run), Some(2));
        let (w, a) = (count(f(&run).iops / 4.0), count(f(&run).iops / 2.0));
        assert_eq!(s, format!("one job of 4 workers, {w} IOPS per worker, over 2 agents, {a} IOPS per agent"));
        assert_eq!(points::scope(&f(&run), None, None), "");
    }
}
