//! The report of one run: summary (warnings first), per-job timelines,
//! latency spectrum and heatmap, size classes, provenance.

use crate::charts::{self, Lines, Series};
use crate::page::Page;
use crate::{lat, provenance, slug, Chart};
use std::path::Path;
use storbench_model::{JobResult, OpResult, RunResult};
use storbench_report::fmt::{count, latency_cells, mib_per_s, LATENCY_COLUMNS};

pub fn page(dir: &Path, run: &RunResult) -> (String, Vec<Chart>) {
    let mut page = Page::new("storbench report: run", &dir.display().to_string());
    page.warnings(&warnings(run));
    let mut all = Vec::new();
    let charted = charted_jobs(run);
    // Too many jobs to chart each: the overview before a table this long.
    if charted.len() < run.jobs.len() {
        all.extend(at_a_glance(&mut page, run, charted.len()));
    }
    page.h2("Summary");
    summary(&mut page, run);
    for (i, why) in &charted {
        let j = &run.jobs[*i];
        page.h2(&format!("Job {}", j.name));
        if !why.is_empty() {
            page.para(&format!("shown for: {why}"), "notes");
        }
        page.para(&j.description, "notes");
        if let Some(burn) = storbench_report::text::burn_summary(j) {
            page.para(&burn, "notes");
        }
        for c in job_charts(j, "") {
            page.chart(&c);
            all.push(c);
        }
        for c in size_classes(&mut page, j) {
            page.chart(&c);
            all.push(c);
        }
        steady_state(&mut page, j);
        verification(&mut page, j);
        replay_and_training(&mut page, j);
        per_agent(&mut page, j);
        per_volume(&mut page, j);
    }
    // What the hosts did, on the run's axis: the first group's seconds are
    // the jobs' timelines' own; a later group's are offset by its start (said there).
    all.extend(crate::disruption::section(&mut page, run));
    if let Some(t) = &run.telemetry {
        all.extend(crate::hosts::section(&mut page, run, t));
    }
    agents(&mut page, run);
    if !run.notes.is_empty() {
        page.h2("Notes");
        for n in &run.notes {
            page.para(n, "notes");
        }
    }
    provenance(&mut page, run, "");
    (page.render(), all)
}

/// Past this many jobs a run's report draws the sections of a chosen few:
/// five charts a job made a 1000-job run's page 10 MB, more than a browser
/// opens comfortably or anyone reads. Every job stays in the summary table,
/// in the charts at a glance and in result.json.
pub const CHARTED_JOBS: usize = 12;

/// The jobs whose sections are drawn, in job order, each with why (empty
/// when every job is): the first and the last, up to three with failures
/// or warnings, the three highest p99s, the three lowest IOPS and the highest.
pub fn charted_jobs(run: &RunResult) -> Vec<(usize, String)> {
    let n = run.jobs.len();
    if n <= CHARTED_JOBS {
        return (0..n).map(|i| (i, String::new())).collect();
    }
    // Each job's figures once (the summaries hold the percentiles), not per comparison.
    let iops: Vec<f64> = run.jobs.iter().map(|j| j.ops.iter().map(|o| o.iops).sum()).collect();
    let p99: Vec<u64> = run.jobs.iter().map(|j| j.ops.iter().map(|o| o.latency.at(99.0)).max().unwrap_or(0)).collect();
    let mut by_p99: Vec<usize> = (0..n).collect();
    by_p99.sort_by_key(|&i| std::cmp::Reverse(p99[i]));
    let mut by_iops: Vec<usize> = (0..n).collect();
    by_iops.sort_by(|&a, &b| iops[a].total_cmp(&iops[b]));
    let troubled = run.jobs.iter().enumerate().filter(|(_, j)| !j.failures.is_empty() || !j.warnings.is_empty()).map(|(i, _)| i);
    // At most 1 + 1 + 3 + 3 + 3 + 1 = CHARTED_JOBS candidates, so none is dropped.
    let picks = [(0, "the first job"), (n - 1, "the last job")]
        .into_iter()
        .chain(troubled.take(3).map(|i| (i, "failures or warnings")))
        .chain(by_p99.iter().take(3).map(|&i| (i, "one of the highest p99s")))
        .chain(by_iops.iter().take(3).map(|&i| (i, "one of the lowest IOPS")))
        .chain([(by_iops[n - 1], "the highest IOPS")]);
    let mut out: Vec<(usize, String)> = Vec::new();
    for (i, why) in picks {
        match out.iter_mut().find(|o| o.0 == i) {
            Some(o) if !o.1.contains(why) => o.1 = format!("{}; {why}", o.1),
            Some(_) => {}
            None => out.push((i, why.to_string())),
        }
    }
    out.sort_by_key(|o| o.0);
    out
}

/// Every job's IOPS and p99 by job number, for runs with too many jobs to
/// chart each, and a line saying which jobs have their own section.
fn at_a_glance(page: &mut Page, run: &RunResult, shown: usize) -> Vec<Chart> {
    page.h2("Jobs at a glance");
    page.para(
        &format!(
            "{} jobs: each is a point below (x: its place in the job list) and a row of the summary table; {shown} of them have their own section, chosen as each says. Every job's full result is in result.json.",
            run.jobs.len()
        ),
        "notes",
    );
    let mut kinds: Vec<storbench_workload::OpKind> = Vec::new();
    for o in run.jobs.iter().flat_map(|j| &j.ops) {
        if !kinds.contains(&o.op) {
            kinds.push(o.op);
        }
    }
    let by_job = |f: &dyn Fn(&OpResult) -> f64| -> Vec<Series> {
        kinds
            .iter()
            .map(|&k| Series {
                label: k.name().into(),
                points: run
                    .jobs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, j)| j.ops.iter().find(|o| o.op == k).map(|o| ((i + 1) as f64, f(o))))
                    .collect(),
            })
            .collect()
    };
    let job_number = |v: f64| format!("{v:.0}");
    let chart = |title: &str, y: &str, series: &[Series], log: bool, fmt: &dyn Fn(f64) -> String| {
        charts::lines(&Lines {
            title,
            x_desc: "job",
            y_desc: y,
            series,
            log_y: log,
            y_fmt: fmt,
            x_fmt: Some(&job_number),
            marks: &[],
            rule: None,
            // A dot a job while they can be told apart.
            points: run.jobs.len() <= 100,
            axis: None,
        })
    };
    let iops = by_job(&|o| o.iops);
    let p99 = by_job(&|o| o.latency.at(99.0) as f64);
    let out = vec![
        Chart {
            name: "run.jobs-iops".into(),
            title: "IOPS of each job".into(),
            svg: chart("IOPS by job", "IOPS", &iops, false, &|v| count(v)),
        },
        Chart {
            name: "run.jobs-p99".into(),
            title: "p99 latency of each job".into(),
            svg: chart("p99 by job", "latency", &p99, true, &lat),
        },
    ];
    for c in &out {
        page.chart(c);
    }
    out
}

/// Every warning of the run and its jobs (they name their job), and any
/// worker failure.
pub fn warnings(run: &RunResult) -> Vec<String> {
    let mut out: Vec<(Option<&str>, String)> = run.warnings.iter().map(|w| (None, w.to_string())).collect();
    for j in &run.jobs {
        out.extend(j.warnings.iter().map(|w| (Some(j.name.as_str()), w.to_string())));
        out.extend(j.failures.iter().map(|f| (Some(j.name.as_str()), format!("job {}: {f}", j.name))));
    }
    storbench_model::warning::fold(out)
}

/// The warnings of many runs, each said once with how many runs had it.
pub fn warnings_of<'a>(runs: impl Iterator<Item = &'a RunResult>) -> Vec<String> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for w in runs.flat_map(warnings) {
        match seen.iter_mut().find(|s| s.0 == w) {
            Some(s) => s.1 += 1,
            None => seen.push((w, 1)),
        }
    }
    seen.into_iter().map(|(w, n)| if n > 1 { format!("{w} ({n} runs)") } else { w }).collect()
}

pub fn summary(page: &mut Page, run: &RunResult) {
    let mut head: Vec<String> = ["job", "op", "IOPS", "MiB/s"].map(String::from).into();
    head.extend(LATENCY_COLUMNS.map(String::from));
    head.push("errors".into());
    let rows: Vec<Vec<String>> = run.jobs.iter().flat_map(|j| j.ops.iter().map(move |o| op_row(&j.name, o))).collect();
    page.table("summary", &head, &rows, 2);
}

fn op_row(job: &str, o: &OpResult) -> Vec<String> {
    let mut r = vec![job.to_string(), o.op.name().to_string(), count(o.iops), mib_per_s(o.bytes_per_sec)];
    r.extend(latency_cells(&o.latency));
    r.push(o.errors.values().sum::<u64>().to_string());
    r
}

/// The per-size-class table, and with two classes or more the latency and
/// throughput of each operation by size (what ssbench's size tiers show).
fn size_classes(page: &mut Page, j: &JobResult) -> Vec<Chart> {
    if j.size_classes.is_empty() {
        return Vec::new();
    }
    page.h3(&format!("{}: per object size class", j.name));
    let mut head: Vec<String> = ["size", "op", "IOPS", "MiB/s"].map(String::from).into();
    head.extend(LATENCY_COLUMNS.map(String::from));
    head.push("errors".into());
    let rows: Vec<Vec<String>> =
        j.size_classes.iter().flat_map(|c| c.ops.iter().map(move |o| op_row(&storbench_workload::units::format_size(c.size), o))).collect();
    page.table(&format!("classes-{}", slug(&j.name)), &head, &rows, 2);
    if j.size_classes.len() < 2 {
        return Vec::new();
    }
    size_class_charts(j)
}

fn size_class_charts(j: &JobResult) -> Vec<Chart> {
    let sizes: Vec<String> = j.size_classes.iter().map(|c| storbench_workload::units::format_size(c.size)).collect();
    let label = |x: f64| charts::value_label(&sizes, x);
    let by_class = |f: &dyn Fn(&OpResult) -> f64, what: &str| -> Vec<Series> {
        j.ops
            .iter()
            .map(|o| Series {
                label: format!("{}{what}", o.op.name()),
                points: (j.size_classes.iter().enumerate())
                    .filter_map(|(i, c)| c.ops.iter().find(|x| x.op == o.op && x.ios > 0).map(|x| (i as f64, f(x))))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let mut latency = by_class(&|o| o.latency.at(50.0) as f64, " p50");
    latency.extend(by_class(&|o| o.latency.at(99.0) as f64, " p99"));
    let mib = by_class(&|o| o.bytes_per_sec / 1048576.0, "");
    let chart = |title: &str, y: &str, s: &[Series], log: bool, f: &dyn Fn(f64) -> String| {
        charts::lines(&Lines {
            title,
            x_desc: "object size",
            y_desc: y,
            series: s,
            log_y: log,
            y_fmt: f,
            x_fmt: Some(&label),
            marks: &[],
            rule: None,
            points: true,
            axis: None,
        })
    };
    let id = |what: &str| slug(&format!("{}-size-{what}", j.name));
    vec![
        Chart {
            name: id("latency"),
            title: format!("{}: p50 and p99 latency by object size", j.name),
            svg: chart("latency by object size", "latency", &latency, true, &lat),
        },
        Chart {
            name: id("mibs"),
            title: format!("{}: MiB/s by object size", j.name),
            svg: chart("MiB/s by object size", "MiB/s", &mib, false, &|v| format!("{v:.1}")),
        },
    ]
}

/// The steady-state verdict and the window it was judged on.
fn steady_state(page: &mut Page, j: &JobResult) {
    let Some(ss) = &j.steady_state else { return };
    page.h3(&format!("{}: steady state ({})", j.name, ss.criteria));
    let values: Vec<String> =
        ss.judged.iter().map(|v| format!("{} = {:.3}{}", v.criterion, v.value, if v.holds { "" } else { " (no)" })).collect();
    let verdict = match ss.at_s {
        Some(t) => format!("Attained at {t:.0} s of measured time; the job ended then."),
        None => "NOT attained: the figures were still moving when the job ended.".to_string(),
    };
    page.para(&format!("{verdict} Last window ({} s, samples of {} s): {}.", ss.dur_s, ss.interval_s, values.join(", ")), "notes");
    let head: Vec<String> = ["t (s)", "IOPS", "MiB/s", "mean", "p99"].map(String::from).into();
    let rows: Vec<Vec<String>> = ss
        .window
        .iter()
        .map(|s| {
            vec![
                format!("{:.0}", s.t),
                count(s.iops),
                mib_per_s(s.bw),
                storbench_report::fmt::latency(s.lat_ns as u64),
                storbench_report::fmt::latency(s.p99_ns as u64),
            ]
        })
        .collect();
    page.table(&format!("steady-{}", slug(&j.name)), &head, &rows, 1);
}

/// What reading back found: the verdict, what was not judged and why,
/// what the checking cost, and the failures kept, each with its place.
fn verification(page: &mut Page, j: &JobResult) {
    let Some(v) = &j.verify else { return };
    let t = &v.tally;
    let units = if v.unit == 0 { "whole versions".to_string() } else { format!("{} B units", v.unit) };
    page.h3(&format!("{}: verification ({}, {units})", j.name, v.checksum));
    let verdict = match t.failures_total() {
        0 => format!("{} units checked: no failures.", t.checked),
        n => format!("{} units checked: {n} FAILED ({}).", t.checked, t.counts_text()),
    };
    let cost = t.cpu_ms_per_gib().map(|ms| format!(" Checking cost {ms:.0} ms of CPU per GiB stamped or checked.")).unwrap_or_default();
    page.para(
        &format!(
            "{verdict} Not judged: {} with a write in flight, {} unknown (a failed or interrupted write), {} never written.{cost}",
            t.in_flight, t.unknown, t.unwritten
        ),
        "notes",
    );
    for note in storbench_report::text::checksum_note(j).into_iter().chain(storbench_report::text::judgement_notes(t)) {
        page.para(&format!("{}{}.", note[..1].to_uppercase(), &note[1..]), "notes");
    }
    if t.failures.is_empty() {
        return;
    }
    let head: Vec<String> = ["kind", "target", "offset", "found", "expected", "what"].map(String::from).into();
    let rows: Vec<Vec<String>> = t
        .failures
        .iter()
        .map(|f| {
            let found = f.found.map_or("-".to_string(), |g| g.to_string());
            let expected =
                if f.expected[0] == f.expected[1] { f.expected[1].to_string() } else { format!("{}..{}", f.expected[0], f.expected[1]) };
            vec![f.kind.name().into(), f.target.clone(), f.offset.to_string(), found, expected, f.what.clone()]
        })
        .collect();
    page.table(&format!("verify-{}", slug(&j.name)), &head, &rows, 2);
}

/// A replayed trace's fidelity, and an emulated training run's figures.
fn replay_and_training(page: &mut Page, j: &JobResult) {
    if let Some(r) = j.replay() {
        page.h3(&format!("{}: replay of {} ({})", j.name, r.trace, r.format));
        let lag = |p: f64| storbench_report::fmt::latency(r.lag.at(p));
        let pace = match r.speed {
            Some(s) => format!(
                "at {s}x the recorded pace; issue lag against the recorded times p50 {}, p99 {}, max {}",
                lag(50.0),
                lag(99.0),
                storbench_report::fmt::latency(r.lag.max_ns)
            ),
            None => "without stalls (no schedule: latency counts from each issue)".to_string(),
        };
        page.para(
            &format!(
                "{} of {} operations issued {pace}; {} wrapped into a smaller target, {} not issued.",
                r.issued, r.records, r.remapped, r.left
            ),
            "notes",
        );
    }
    if let Some(t) = j.train() {
        page.h3(&format!("{}: training ({})", j.name, t.model));
        page.para(
            &format!(
                "{} accelerators, {} epochs: {} samples in {} steps, {:.1} samples/s, {} MiB/s read. Accelerator utilization {:.1}% against a floor of {:.0}%: {}.",
                t.accelerators,
                t.epochs,
                t.samples,
                t.steps,
                t.samples_per_sec,
                storbench_report::fmt::mib_per_s(t.bytes_per_sec),
                t.au * 100.0,
                t.au_floor * 100.0,
                if t.passed { "PASS" } else { "FAIL" }
            ),
            "notes",
        );
        if let Some(line) = storbench_report::text::rank_spread(t) {
            page.para(&format!("The {line}: the run's figures are the slowest rank's."), "notes");
        }
        training_agents(page, j);
    }
}

/// A training run over a fleet: each agent's ranks and their figures.
fn training_agents(page: &mut Page, j: &JobResult) {
    let rows: Vec<Vec<String>> = j
        .per_agent
        .iter()
        .filter_map(|a| {
            let t = a.train.as_ref()?;
            Some(vec![
                a.agent.clone(),
                storbench_report::text::agent_ranks(t),
                t.samples.to_string(),
                t.steps.to_string(),
                storbench_report::fmt::duration(t.runtime_ns as f64 / 1e9),
                format!("{:.1}", t.samples_per_sec),
                format!("{:.1}%", t.au * 100.0),
            ])
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let head: Vec<String> = ["agent", "ranks", "samples", "steps", "time", "samples/s", "AU"].map(String::from).into();
    page.table(&format!("train-agents-{}", slug(&j.name)), &head, &rows, 1);
}

/// A fleet run: the job's figures per agent (the summary row is their exact merge).
fn per_agent(page: &mut Page, j: &JobResult) {
    if j.per_agent.is_empty() {
        return;
    }
    page.h3(&format!("{}: per agent", j.name));
    let mut head: Vec<String> = ["agent", "op", "workers", "IOPS", "MiB/s"].map(String::from).into();
    head.extend(LATENCY_COLUMNS.map(String::from));
    head.extend(["errors", "lost"].map(String::from));
    let rows: Vec<Vec<String>> = j
        .per_agent
        .iter()
        .flat_map(|a| {
            a.ops.iter().map(move |o| {
                let mut r = op_row(&a.agent, o);
                r.insert(2, a.workers.to_string());
                r.push(if a.lost { "LOST".into() } else { String::new() });
                r
            })
        })
        .collect();
    page.table(&format!("agents-{}", slug(&j.name)), &head, &rows, 2);
}

/// A job of several volumes: each volume's figures (the summary row is
/// their exact merge), with its files or object prefix.
fn per_volume(page: &mut Page, j: &JobResult) {
    if j.per_volume.is_empty() {
        return;
    }
    page.h3(&format!("{}: per volume", j.name));
    let mut head: Vec<String> = ["volume", "op", "workers", "IOPS", "MiB/s"].map(String::from).into();
    head.extend(LATENCY_COLUMNS.map(String::from));
    head.extend(["errors", "targets"].map(String::from));
    let rows: Vec<Vec<String>> = j
        .per_volume
        .iter()
        .flat_map(|v| {
            v.ops.iter().map(move |o| {
                let mut r = op_row(&v.volume.to_string(), o);
                r.insert(2, v.workers.to_string());
                r.push(v.targets.join(", "));
                r
            })
        })
        .collect();
    page.table(&format!("volumes-{}", slug(&j.name)), &head, &rows, 2);
}

/// A fleet run's agents: who they were and how their clocks stood.
fn agents(page: &mut Page, run: &RunResult) {
    if run.agents.is_empty() {
        return;
    }
    page.h2("Agents");
    let head: Vec<String> = ["agent", "address", "name it gave", "version", "clock offset", "+/-", "lost"].map(String::from).into();
    let rows: Vec<Vec<String>> = run
        .agents
        .iter()
        .map(|a| {
            vec![
                a.name.clone(),
                a.address.clone(),
                a.hostname.clone(),
                a.storbench_version.clone(),
                format!("{:+.3} ms", a.clock_offset_ns as f64 / 1e6),
                format!("{:.3} ms", a.rtt_ns as f64 / 2e6),
                a.lost.clone().unwrap_or_default(),
            ]
        })
        .collect();
    page.table("agents", &head, &rows, 4);
}

/// The measured seconds of one operation: (t, value). A last, partial
/// interval shorter than half a second is left out (its rates are noise).
fn per_second(j: &JobResult, op: storbench_workload::OpKind, f: impl Fn(&storbench_model::SeriesOp) -> f64) -> Vec<(f64, f64)> {
    j.series
        .iter()
        .filter(|p| !p.warmup && p.duration > 0.5)
        .filter_map(|p| p.ops.iter().find(|s| s.op == op).map(|s| (p.t, f(s))))
        .collect()
}

/// Timelines, spectrum and heatmap of one job; `tag` keeps names apart
/// when several runs are in one report.
pub fn job_charts(j: &JobResult, tag: &str) -> Vec<Chart> {
    let id = |what: &str| slug(&format!("{tag}{}-{what}", j.name));
    let mut out = timelines(j, tag);
    out.push(Chart { name: id("spectrum"), title: format!("{}: latency percentile spectrum", j.name), svg: spectrum(&[(j, "")]) });
    out.push(Chart { name: id("heatmap"), title: format!("{}: latency over time (darker: more operations)", j.name), svg: heatmap(j) });
    out
}

/// A job's per-second IOPS, MiB/s and p50/p99 latency (names end -iops,
/// -mibs, -latency).
pub fn timelines(j: &JobResult, tag: &str) -> Vec<Chart> {
    let id = |what: &str| slug(&format!("{tag}{}-{what}", j.name));
    let by_op = |f: &dyn Fn(&storbench_model::SeriesOp) -> f64| -> Vec<Series> {
        j.ops
            .iter()
            .map(|o| Series { label: o.op.name().into(), points: per_second(j, o.op, f) })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let plain = |v: f64| count(v);
    let mib = |v: f64| format!("{v:.1}");
    let lat_series: Vec<Series> = j
        .ops
        .iter()
        .flat_map(|o| {
            [("p50", per_second(j, o.op, |s| s.p50_ns as f64)), ("p99", per_second(j, o.op, |s| s.p99_ns as f64))]
                .map(|(p, points)| Series { label: format!("{} {p}", o.op.name()), points })
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let line = |title: &str, y: &str, s: &[Series], log: bool, f: &dyn Fn(f64) -> String| {
        charts::lines(&Lines {
            title,
            x_desc: "seconds",
            y_desc: y,
            series: s,
            log_y: log,
            y_fmt: f,
            x_fmt: None,
            marks: &[],
            rule: None,
            points: false,
            axis: None,
        })
    };
    vec![
        Chart {
            name: id("iops"),
            title: format!("{}: IOPS per second", j.name),
            svg: line("IOPS", "IOPS", &by_op(&|s| s.iops), false, &plain),
        },
        Chart {
            name: id("mibs"),
            title: format!("{}: MiB/s per second", j.name),
            svg: line("MiB/s", "MiB/s", &by_op(&|s| s.bytes_per_sec / 1048576.0), false, &mib),
        },
        Chart {
            name: id("latency"),
            title: format!("{}: p50 and p99 latency per second", j.name),
            svg: line("latency", "latency", &lat_series, false, &lat),
        },
    ]
}

/// Percentiles on a "nines" axis (p50, p90, p99, p99.9...), one line per
/// job and operation (labelled with `label`, the side when comparing).
pub fn spectrum(jobs: &[(&JobResult, &str)]) -> Result<String, String> {
    let series: Vec<Series> = jobs
        .iter()
        .flat_map(|(j, label)| j.ops.iter().map(move |o| (o, *label)))
        .filter(|(o, _)| o.histogram.count() > 0)
        .map(|(o, label)| {
            let top = (o.histogram.count() as f64).log10().clamp(1.0, 6.0);
            let points = (0..=(top * 20.0) as usize)
                .map(|k| k as f64 / 20.0)
                .map(|x| (x, o.histogram.percentile(100.0 * (1.0 - 10f64.powf(-x))) as f64))
                .collect();
            Series { label: format!("{}{}{}", label, if label.is_empty() { "" } else { " " }, o.op.name()), points }
        })
        .collect();
    charts::lines(&Lines {
        title: "latency by percentile",
        x_desc: "percentile",
        y_desc: "latency",
        series: &series,
        log_y: true,
        y_fmt: &lat,
        x_fmt: Some(&charts::nines_label),
        marks: &[],
        rule: None,
        points: false,
        axis: None,
    })
}

/// Each measured second's latencies (every operation), as a heatmap.
fn heatmap(j: &JobResult) -> Result<String, String> {
    let mut columns = Vec::new();
    for p in j.series.iter().filter(|p| !p.warmup) {
        let mut merged: Vec<(u16, u64)> = Vec::new();
        for s in &p.ops {
            for (b, n) in &s.buckets {
                match merged.iter_mut().find(|m| m.0 == *b) {
                    Some(m) => m.1 += n,
                    None => merged.push((*b, *n)),
                }
            }
        }
        columns.push((p.t - p.duration, p.t, merged));
    }
    if columns.iter().all(|c| c.2.is_empty()) {
        return Err("no per-second latency buckets in these results (written by storbench before they were kept)".into());
    }
    charts::time_heatmap("latency over time", &columns, &lat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_report::sample;
    use storbench_workload::OpKind;

    /// A run of `n` read jobs; job i does i+1 reads of 100 us, job `slow`
    /// has a 50 ms tail and job `warned` a warning.
    fn run_of(n: usize, slow: usize, warned: usize) -> RunResult {
        let mut r = sample::run();
        r.jobs = (0..n)
            .map(|i| {
                let tail = if i == slow { 50_000_000 } else { 100_000 };
                let ops = vec![sample::op(OpKind::Read, &[(100_000, 100 + i as u64), (tail, 20)], 4096, 1_000_000_000)];
                let mut j = sample::job(&format!("j{i}"), 0, &[], 1_000_000_000, ops);
                if i == warned {
                    j.warnings.push(storbench_model::Warning::NoOperations { job: j.name.clone(), seconds: 1.0 });
                }
                j
            })
            .collect();
        r
    }

    #[test]
    fn a_run_of_many_jobs_charts_a_chosen_few_and_shows_all_at_a_glance() {
        let r = run_of(1000, 700, 400);
        let picked = charted_jobs(&r);
        assert!(picked.len() <= CHARTED_JOBS, "{picked:?}");
        let why = |i: usize| picked.iter().find(|p| p.0 == i).map(|p| p.1.clone()).unwrap_or_default();
        assert!(why(0).contains("first") && why(0).contains("lowest IOPS"), "{picked:?}");
        assert!(why(999).contains("last") && why(999).contains("highest IOPS"), "{picked:?}");
        assert!(why(700).contains("highest p99"), "{picked:?}");
        assert!(why(400).contains("warnings"), "{picked:?}");
        let (html, charts) = page(Path::new("res"), &r);
        assert_eq!(html.matches("<h2>Job ").count(), picked.len(), "one section per chosen job");
        assert!(html.contains("Jobs at a glance") && html.contains("1000 jobs"));
        assert!(charts.iter().any(|c| c.name == "run.jobs-iops") && charts.iter().any(|c| c.name == "run.jobs-p99"));
        // Five charts a job before: 10 MB at this size.
        assert!(html.len() < 1_500_000, "{} bytes", html.len());
    }

    #[test]
    fn a_run_of_few_jobs_charts_every_one() {
        let r = run_of(CHARTED_JOBS, 3, 99);
        let picked = charted_jobs(&r);
        assert_eq!(picked.iter().map(|p| p.0).collect::<Vec<_>>(), (0..CHARTED_JOBS).collect::<Vec<_>>());
        assert!(picked.iter().all(|p| p.1.is_empty()));
        let (html, _) = page(Path::new("res"), &r);
        assert!(!html.contains("Jobs at a glance"));
    }
}
