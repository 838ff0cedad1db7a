//! The human summary (`summary.txt`): one row per job and operation kind,
//! read at a glance, then the job lines, CPU cost, the block devices under the
//! run's files, a line per host sampled, errors, warnings and notes.

use crate::fmt;
use std::fmt::Write as _;
use storbench_model::{DiskUtil, JobResult, OpResult, RunResult};

const HEADER: [&str; 13] = ["job", "op", "IOPS", "MiB/s", "min", "avg", "p50", "p90", "p99", "p99.9", "max", "errors", ""];

/// Render the summary table, warnings and CPU cost.
pub fn render(r: &RunResult) -> String {
    let mut rows: Vec<Vec<String>> = vec![HEADER.iter().take(12).map(|s| s.to_string()).collect()];
    for j in &r.jobs {
        for o in &j.ops {
            rows.push(op_row(j, o, Row::Latency));
            // The service time beside the latency of fixed-rate runs (an
            // engine's submission apart, libaio's, is fio's slat and not shown here).
            if o.service.is_some() && (o.submit.is_none() || storbench_model::protocol::paced(j.rate_per_worker, &j.spec)) {
                rows.push(op_row(j, o, Row::Service));
            }
            if o.first_byte.is_some() {
                rows.push(op_row(j, o, Row::FirstByte));
            }
            rows.extend(class_rows(j, o));
            rows.extend(prio_rows(j, o));
            rows.extend(agent_rows(j, o));
            rows.extend(volume_rows(j, o));
        }
        // A phase after the measured one (the verify pass) on rows of its
        // own: its rate is its own, never added to the job's.
        for p in &j.phases {
            for o in &p.ops {
                rows.push(row_cells(&j.name, &format!("{} ({} pass)", o.op.name(), p.phase.name()), o, Row::Latency));
            }
        }
        // A CPU burner has its own line below, not a row of zeros; a program no row.
        if j.ops.is_empty() && !j.spec.does_no_io() {
            rows.push(vec![j.name.clone(), "-".into(), "0".into()]);
        }
    }
    let mut out = String::new();
    let partial = r.jobs.iter().any(|j| j.interrupted) || r.warnings.iter().any(|w| matches!(w, storbench_model::Warning::Interrupted));
    let status = match (r.interrupted, partial) {
        (false, _) => "",
        (true, true) => " (INTERRUPTED: partial results)",
        // Stopped while removing what it wrote: every measurement is whole.
        (true, false) => " (INTERRUPTED during cleanup: measurements complete)",
    };
    let _ = writeln!(out, "storbench {}: {} job(s){status}", r.storbench_version, r.jobs.len());
    out.push('\n');
    out.push_str(&table(&rows));
    out.push('\n');
    for j in &r.jobs {
        let _ = writeln!(out, "{}  {}", fmt::pad_right(&j.name, name_width(r)), describe(j));
    }
    out.push('\n');
    for j in &r.jobs {
        burn_line(&mut out, j);
        steady_line(&mut out, j);
        verify_lines(&mut out, j);
        replay_line(&mut out, j);
        train_line(&mut out, j);
        kvcache_line(&mut out, j);
        vectordb_line(&mut out, j);
        fill_line(&mut out, j);
    }
    agents_line(&mut out, r);
    cpu_line(&mut out, r);
    for d in &r.disk_util {
        disk_line(&mut out, d);
    }
    for l in r.telemetry.iter().flat_map(crate::hosts::lines) {
        let _ = writeln!(out, "{l}");
    }
    for l in r.disruption.iter().flat_map(disruption_lines) {
        let _ = writeln!(out, "{l}");
    }
    let job_warnings = r.jobs.iter().flat_map(|j| j.warnings.iter().map(move |w| (Some(j.name.as_str()), w.message())));
    let warnings = storbench_model::warning::fold(job_warnings.chain(r.warnings.iter().map(|w| (None, w.message()))));
    for j in &r.jobs {
        for o in &j.ops {
            if !o.errors.is_empty() {
                let _ = writeln!(out, "errors {} {}: {}", j.name, o.op.name(), errors(o));
            }
            if o.retries > 0 {
                let _ = writeln!(
                    out,
                    "retries {} {}: {} (operations sent again after a failure; their latency covers every attempt)",
                    j.name,
                    o.op.name(),
                    o.retries
                );
            }
        }
        for f in &j.failures {
            let _ = writeln!(out, "FAILED {}: {f}", j.name);
        }
    }
    for w in warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// Failures by kind, then by the storage's own words: "not found 3 (HTTP 404: 3)".
fn errors(o: &OpResult) -> String {
    let kinds: Vec<String> = o.error_kinds.iter().map(|(k, n)| format!("{} {n}", k.name())).collect();
    let details: Vec<String> = o.errors.iter().map(|(d, n)| format!("{d}: {n}")).collect();
    if kinds.is_empty() {
        return details.join(", ");
    }
    format!("{} ({})", kinds.join(", "), details.join(", "))
}

fn name_width(r: &RunResult) -> usize {
    r.jobs.iter().map(|j| j.name.chars().count()).max().unwrap_or(3)
}

fn describe(j: &JobResult) -> String {
    let mut d = format!("{}, {} over {}", j.description, fmt::duration(j.runtime_ns as f64 / 1e9), targets(j));
    if !j.per_agent.is_empty() {
        d += &format!(", on {} agents ({} workers in all)", j.per_agent.len(), j.workers);
    }
    if let Some(rate) = j.rate_per_worker {
        d += &format!(", fixed rate {} IOPS per worker ({:?})", fmt::count(rate), j.spec.rate_process).to_lowercase();
    }
    if let Some(cap) = j.spec.byte_cap {
        d += &format!(", capped at {} MiB/s (latency from each issue)", fmt::mib_per_s(cap));
    }
    d
}

fn targets(j: &JobResult) -> String {
    match j.targets.len() {
        0 => "no target".into(),
        1 => j.targets[0].clone(),
        n => format!("{} and {} more", j.targets[0], n - 1),
    }
}

/// The rows of one operation: its latency, then (when kept) its service
/// time and its time to first byte.
#[derive(Clone, Copy, PartialEq)]
enum Row {
    Latency,
    Service,
    FirstByte,
}

fn op_row(j: &JobResult, o: &OpResult, row: Row) -> Vec<String> {
    row_cells(&j.name, o.op.name(), o, row)
}

/// One row: `name` (the job; on latency rows only) and `what` (the operation,
/// or the operation and a size class), with the latency `row` picks.
fn row_cells(name: &str, what: &str, o: &OpResult, row: Row) -> Vec<String> {
    let (l, suffix) = match row {
        Row::Latency => (&o.latency, ""),
        Row::Service => (o.service.as_ref().expect("checked by caller"), " svc"),
        Row::FirstByte => (o.first_byte.as_ref().expect("checked by caller"), " 1st byte"),
    };
    let mut cells = if row == Row::Latency {
        vec![name.to_string(), what.to_string(), fmt::count(o.iops), fmt::mib_per_s(o.bytes_per_sec)]
    } else {
        vec![String::new(), format!("{what}{suffix}"), String::new(), String::new()]
    };
    cells.extend(fmt::latency_cells(l));
    cells.push(if row == Row::Latency { o.errors.values().sum::<u64>().to_string() } else { String::new() });
    cells
}

/// Rows per object size class the operation touched (weighted object sizes
/// only): its rate and latency apart from the other sizes, and its time to
/// first byte when kept.
fn class_rows<'a>(j: &'a JobResult, o: &'a OpResult) -> impl Iterator<Item = Vec<String>> + 'a {
    j.size_classes.iter().filter_map(|c| Some((c, c.ops.iter().find(|x| x.op == o.op)?))).flat_map(|(c, co)| {
        let what = format!("{} {}", o.op.name(), storbench_workload::units::format_size(c.size));
        let first_byte = co.first_byte.is_some().then(|| row_cells("", &what, co, Row::FirstByte));
        std::iter::once(row_cells("", &what, co, Row::Latency)).chain(first_byte)
    })
}

/// Rows per I/O priority the operation's I/Os carried (fio's cmdprio
/// options, two priorities or more): `read prio 1/0` is class 1, level 0.
fn prio_rows<'a>(j: &'a JobResult, o: &'a OpResult) -> impl Iterator<Item = Vec<String>> + 'a {
    let mine: Vec<_> = j.priorities.iter().filter_map(|p| Some((p, p.ops.iter().find(|x| x.op == o.op)?))).collect();
    let shown = if mine.len() >= 2 { mine } else { Vec::new() };
    shown.into_iter().map(|(p, po)| row_cells("", &format!("{} prio {}/{}", o.op.name(), p.class, p.level), po, Row::Latency))
}

/// Rows as columns: the first two left-aligned (names), the rest right-aligned (figures).
pub fn table(rows: &[Vec<String>]) -> String {
    let widths = fmt::column_widths(rows);
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            match c < 2 {
                true => line += &fmt::pad_right(cell, widths[c]),
                false => line += &fmt::pad_left(cell, widths[c]),
            }
            line += "  ";
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn cpu_line(out: &mut String, r: &RunResult) {
    let ios: u64 = r.jobs.iter().map(|j| j.total_ios()).sum();
    let per_io = |total_ns: u64| total_ns.checked_div(ios).map(|ns| format!(", {} per I/O", fmt::latency(ns))).unwrap_or_default();
    let secs = |ns: u64| ns as f64 / 1e9;
    if r.agents.is_empty() {
        let p = per_io(r.cpu.user_ns + r.cpu.sys_ns);
        let _ = writeln!(out, "client CPU: user {:.2}s, sys {:.2}s{p}", secs(r.cpu.user_ns), secs(r.cpu.sys_ns));
        return;
    }
    // A fleet: the workers ran on the agents; this process only merged.
    let (user, sys) = r.jobs.iter().fold((0, 0), |(u, s), j| (u + j.worker_cpu.user_ns, s + j.worker_cpu.sys_ns));
    let _ = writeln!(
        out,
        "agents' worker CPU: user {:.2}s, sys {:.2}s{}; coordinator CPU: user {:.2}s, sys {:.2}s",
        secs(user),
        secs(sys),
        per_io(user + sys),
        secs(r.cpu.user_ns),
        secs(r.cpu.sys_ns)
    );
}

/// A CPU burner's figures: the share of one CPU each worker used (fio's
/// usr/sys arithmetic: CPU time over the workers' summed runtime) against
/// the share asked for, and its context switches. `None` for other jobs.
pub fn burn_summary(j: &JobResult) -> Option<String> {
    let b = j.spec.kind.cpu_burn()?;
    let runtime = (j.runtime_ns as f64 * f64::from(j.workers.max(1))).max(1.0);
    let pct = |ns: u64| ns as f64 * 100.0 / runtime;
    let c = &j.worker_cpu;
    Some(format!(
        "cpu burner {}: {:.1}% of one CPU per worker (usr {:.1}%, sys {:.1}%; asked {}%), {} context switches, no I/O",
        j.name,
        pct(c.user_ns + c.sys_ns),
        pct(c.user_ns),
        pct(c.sys_ns),
        b.load,
        c.ctx
    ))
}

fn burn_line(out: &mut String, j: &JobResult) {
    if let Some(line) = burn_summary(j) {
        let _ = writeln!(out, "{line}");
    }
}

/// A job's steady-state verdict: `steady state rr: attained at 12 s (iops:10% = 3.21%)`.
fn steady_line(out: &mut String, j: &JobResult) {
    let Some(ss) = &j.steady_state else { return };
    let values: Vec<String> = ss
        .judged
        .iter()
        .map(|v| {
            let pct = if v.criterion.ends_with('%') { "%" } else { "" };
            format!("{} = {:.3}{pct}{}", v.criterion, v.value, if v.holds { "" } else { " (no)" })
        })
        .collect();
    let judged = if values.is_empty() { "the window never filled".to_string() } else { values.join(", ") };
    let round = |t: f64| if ss.snia { format!("round {} ({})", (t / ss.interval_s).round(), fmt::duration(t)) } else { fmt::duration(t) };
    let verdict = match ss.at_s {
        Some(t) => format!("attained at {}", round(t)),
        None => format!("NOT attained in {}", round(j.runtime_ns as f64 / 1e9)),
    };
    let _ = writeln!(out, "steady state {}: {verdict} ({judged}; {} s window)", j.name, ss.dur_s);
}

/// A fill job: what it wrote, and what the store holds for the target.
fn fill_line(out: &mut String, j: &JobResult) {
    use storbench_workload::units::format_amount;
    let Some(f) = &j.fill else { return };
    let held = f
        .allocated_bytes
        .map_or("the store cannot say what it holds".to_string(), |a| format!("the store's own accounting shows {}", format_amount(a)));
    let _ = writeln!(out, "fill {}: wrote {} ({:.0}% of {}); {held}", j.name, format_amount(f.written_bytes), f.fraction * 100.0, f.target);
}

/// An emulated training run: MLPerf Storage's figures and its verdict.
fn train_line(out: &mut String, j: &JobResult) {
    let Some(t) = j.train() else { return };
    let _ = writeln!(
        out,
        "train {} ({}): {} accelerators, {} epochs, {} samples in {} steps over {}: {:.1} samples/s, {} MiB/s read; AU {:.1}% against a floor of {:.0}%: {}",
        j.name,
        t.model,
        t.accelerators,
        t.epochs,
        t.samples,
        t.steps,
        fmt::duration(t.runtime_ns as f64 / 1e9),
        t.samples_per_sec,
        fmt::mib_per_s(t.bytes_per_sec),
        t.au * 100.0,
        t.au_floor * 100.0,
        if t.passed { "PASS" } else { "FAIL" }
    );
    if let Some(line) = rank_spread(t) {
        let _ = writeln!(out, "  {line}");
    }
    for (a, t) in j.per_agent.iter().filter_map(|a| Some((a, a.train.as_ref()?))) {
        let _ = writeln!(
            out,
            "  @{}: ranks {}, {} samples in {} steps over {}: {:.1} samples/s, AU {:.1}%",
            a.agent,
            agent_ranks(t),
            t.samples,
            t.steps,
            fmt::duration(t.runtime_ns as f64 / 1e9),
            t.samples_per_sec,
            t.au * 100.0
        );
    }
}

/// A training run's ranks side by side (several of them): when they ended,
/// the slowest, and the spread of their AU. The text and HTML reports' words.
pub fn rank_spread(t: &storbench_model::TrainResult) -> Option<String> {
    let r = t.ranks.as_ref().filter(|_| t.accelerators > 1)?;
    Some(format!(
        "ranks ended between {} and {} (slowest: rank {}); AU per rank {:.1}% (rank {}) to {:.1}%",
        fmt::duration(r.first_end_ns as f64 / 1e9),
        fmt::duration(r.last_end_ns as f64 / 1e9),
        r.slowest,
        r.au_min * 100.0,
        r.au_min_rank,
        r.au_max * 100.0
    ))
}

/// An agent's ranks of a training run over a fleet, `first-last`.
pub fn agent_ranks(t: &storbench_model::AgentTrain) -> String {
    format!("{}-{}", t.first_rank, t.first_rank + t.accelerators.max(1) - 1)
}

/// An emulated vector index under queries: queries/s, the requests'
/// latency, the reads a query made and the storage's throughput.
fn vectordb_line(out: &mut String, j: &JobResult) {
    let Some(v) = j.vectordb() else { return };
    let l = &v.latency;
    let _ = writeln!(
        out,
        "vectordb {} ({} {}, {} vectors of {} dimensions in {} segment(s), {:.2} GiB index, {} KiB a node): {} process(es), {} queries a request; \
         {} queries in {} requests ({} cut short) over {}: {:.1} queries/s; request latency p50 {} p95 {} p99 {} p99.9 {}; \
         {:.1} node reads a query (search list {}, beam {}); storage read {} MiB/s",
        j.name,
        v.config,
        v.index,
        v.vectors,
        v.dimension,
        v.segments,
        v.index_bytes as f64 / (1u64 << 30) as f64,
        v.node_bytes / 1024,
        v.processes,
        v.batch,
        v.queries,
        v.requests,
        v.pending,
        fmt::duration(v.runtime_ns as f64 / 1e9),
        v.queries_per_sec,
        fmt::latency(l.at(50.0)),
        fmt::latency(l.at(95.0)),
        fmt::latency(l.at(99.0)),
        fmt::latency(l.at(99.9)),
        v.reads_per_query,
        v.search_list,
        v.beam_width,
        fmt::mib_per_s(v.read_bytes_per_sec),
    );
}

/// An emulated KV-cache tier: requests, tokens/s, what each tier served,
/// the requests' latency and the storage's throughput.
fn kvcache_line(out: &mut String, j: &JobResult) {
    let Some(k) = j.kvcache() else { return };
    let l = &k.latency;
    let _ = writeln!(
        out,
        "kvcache {} ({}): {} client(s), {} users; {} requests served of {} ({} waiting at the end) over {}: {:.1} tokens/s; \
         request latency p50 {} p95 {} p99 {}; entries read from storage {}, host memory {}, accelerator {}, {} gone; \
         {} stored, {} moved down, {} dropped, {} cached nowhere; storage read {} MiB/s, written {} MiB/s",
        j.name,
        k.model,
        k.clients,
        k.users,
        k.served,
        k.arrived,
        k.pending,
        fmt::duration(k.runtime_ns as f64 / 1e9),
        k.tokens_per_sec,
        fmt::latency(l.at(50.0)),
        fmt::latency(l.at(95.0)),
        fmt::latency(l.at(99.0)),
        k.hits_storage,
        k.hits_cpu,
        k.hits_gpu,
        k.misses,
        k.stored,
        k.demoted,
        k.evicted,
        k.uncached,
        fmt::mib_per_s(k.read_bytes_per_sec),
        fmt::mib_per_s(k.write_bytes_per_sec),
    );
}

/// How faithfully a trace was replayed: issue lag against the recorded times.
fn replay_line(out: &mut String, j: &JobResult) {
    let Some(r) = j.replay() else { return };
    let l = &r.lag;
    let pace = match r.speed {
        Some(s) => format!(
            "at {s}x its pace; issue lag p50 {} p99 {} max {}",
            fmt::latency(l.at(50.0)),
            fmt::latency(l.at(99.0)),
            fmt::latency(l.max_ns)
        ),
        None => "without stalls (no schedule: latency from each issue)".to_string(),
    };
    let _ = writeln!(out, "replay {}: {} ({}), {} of {} operations issued {pace}", j.name, r.trace, r.format, r.issued, r.records);
    if r.remapped > 0 || r.left > 0 {
        let _ = writeln!(out, "  {} wrapped into a smaller target, {} not issued (stopped or cut by runtime)", r.remapped, r.left);
    }
}

/// A job's verification: what was judged, what failed (the first few
/// failures, each with its place), and what the checking cost.
fn verify_lines(out: &mut String, j: &JobResult) {
    let Some(v) = &j.verify else { return };
    let t = &v.tally;
    let failed = t.failures_total();
    let verdict = if failed == 0 { "no failures".to_string() } else { format!("FAILED {failed} ({})", t.counts_text()) };
    let pass = if t.pass_bytes > 0 {
        format!("; read back {} in {}", storbench_workload::units::format_amount(t.pass_bytes), fmt::duration(t.pass_ns as f64 / 1e9))
    } else {
        String::new()
    };
    let cost =
        t.cpu_ms_per_gib().map(|ms| format!("; checking cost {:.0} ms CPU ({ms:.0} ms/GiB)", t.cpu_ns as f64 / 1e6)).unwrap_or_default();
    let what = if v.unit == 0 { "objects" } else { "units" };
    let _ = writeln!(
        out,
        "verify {} ({}, {}): {} {what} ({}) checked, {verdict}; not judged: {} in flight, {} unknown, {} never written{pass}{cost}",
        j.name,
        v.checksum,
        if v.unit == 0 { "whole versions".to_string() } else { format!("{} B units", v.unit) },
        t.checked,
        storbench_workload::units::format_amount(t.checked_bytes),
        t.in_flight,
        t.unknown,
        t.unwritten
    );
    for note in checksum_note(j).into_iter().chain(judgement_notes(t)) {
        let _ = writeln!(out, "  {note}");
    }
    if t.listed > 0 {
        let _ = writeln!(
            out,
            "  listing: {} objects checked; {} deleted but still listed, {} written but not listed (2 s after a first look)",
            t.listed, t.listing_stale, t.listing_missing
        );
    }
    for f in t.failures.iter().take(5) {
        let _ = writeln!(out, "  {} at {} offset {}: {}", f.kind.name(), f.target, f.offset, f.what);
    }
    if t.failures.len() > 5 {
        let _ = writeln!(out, "  ... {} more kept in the results (result.json)", t.failures.len() - 5);
    }
}

/// Which judgement the job's checksum makes, when it is not the whole
/// unit's: `meta` (fio's) judges each header, and the data only against a
/// `verify_pattern`.
pub fn checksum_note(j: &JobResult) -> Option<String> {
    let v = j.spec.verify.as_ref()?;
    if v.checksum? != storbench_workload::verify::Checksum::Meta {
        return None;
    }
    let data = if v.pattern.is_some() { "data compared with verify_pattern" } else { "data not checked" };
    Some(format!("meta: each unit's header judged (magic, offset, length, generation, the header's own crc32c); {data}"))
}

/// Which judgement was possible: units judged by their headers alone (no
/// table of acknowledged writes), and units of a format not checked.
pub fn judgement_notes(t: &storbench_metrics::VerifyTally) -> Vec<String> {
    let mut notes = Vec::new();
    if t.by_header > 0 {
        let misplaced = if t.misplaced > 0 { format!(" ({} misplaced)", t.misplaced) } else { String::new() };
        notes.push(format!(
            "without verify_state: {} judged by their own headers{misplaced}: corruption and misplacement checked, \
             lost writes (stale generation) not judged",
            t.by_header
        ));
    }
    if t.foreign > 0 {
        let first = t.foreign_first.as_deref().unwrap_or("-");
        notes.push(format!("{} not judged: a header storbench cannot check as read (the first: {first})", t.foreign));
    }
    notes
}

/// A fleet run's agents: their names and clocks against the coordinator's.
fn agents_line(out: &mut String, r: &RunResult) {
    if r.agents.is_empty() {
        return;
    }
    let each: Vec<String> = r
        .agents
        .iter()
        .map(|a| {
            let lost = if a.lost.is_some() { ", LOST" } else { "" };
            format!("{} ({}, clock {:+.2} ms +/- {:.2}{lost})", a.name, a.hostname, a.clock_offset_ns as f64 / 1e6, a.rtt_ns as f64 / 2e6)
        })
        .collect();
    let _ = writeln!(out, "agents: {}", each.join(", "));
}

/// One row per agent under each operation of a fleet run (the job's row is
/// their exact merge).
fn agent_rows<'a>(j: &'a JobResult, o: &'a OpResult) -> impl Iterator<Item = Vec<String>> + 'a {
    j.per_agent.iter().filter_map(move |a| {
        let ao = a.ops.iter().find(|x| x.op == o.op)?;
        let lost = if a.lost { " (lost)" } else { "" };
        Some(row_cells("", &format!("{} @{}{lost}", o.op.name(), a.agent), ao, Row::Latency))
    })
}

/// One row per volume under each operation of a job of several volumes
/// (the job's row is their exact merge).
fn volume_rows<'a>(j: &'a JobResult, o: &'a OpResult) -> impl Iterator<Item = Vec<String>> + 'a {
    j.per_volume.iter().filter_map(move |v| {
        let vo = v.ops.iter().find(|x| x.op == o.op)?;
        Some(row_cells("", &format!("{} vol{}", o.op.name(), v.volume), vo, Row::Latency))
    })
}

/// A block device's counters over the run (fio's `disk_util`):
/// `disk vda: util 62.99%, ios 44940 read / 6 written, in queue 1364 ms (...)`.
fn disk_line(out: &mut String, d: &DiskUtil) {
    let _ = writeln!(
        out,
        "disk {}: util {:.2}%, ios {} read / {} written, in queue {} ms (device-wide: other processes' I/O included)",
        d.name,
        crate::fio::stats::disk_util(d),
        d.read_ios,
        d.write_ios,
        d.in_queue
    );
}

/// The summary as a format.
pub struct Text;

impl crate::Exporter for Text {
    fn name(&self) -> &'static str {
        "text"
    }
    /// fio's name for its default output, and `--output-format`'s default.
    fn aliases(&self) -> &'static [&'static str] {
        &["normal"]
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("normal")
    }
    fn describe(&self) -> &'static str {
        "the summary table (as summary.txt)"
    }
    fn file_name(&self) -> Option<&'static str> {
        Some("summary.txt")
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, out| out.write_all(render(r).as_bytes()))
    }
}

/// A run through failure in words: each fault and its answer, the clients'
/// figures before, during and after, and how long recovery took.
pub fn disruption_lines(d: &storbench_model::disruption::Disruption) -> Vec<String> {
    let mut out: Vec<String> = d
        .events
        .iter()
        .map(|e| {
            let outcome = match &e.error {
                Some(err) => format!("failed: {err}"),
                None if e.answer.is_empty() => "done".to_string(),
                None => e.answer.clone(),
            };
            match (e.skipped, e.restores) {
                (true, _) => format!("fault {} at {:.1} s: {outcome}", e.action.words(), e.at_s),
                (false, true) => format!("at the run's end, {} to undo the run's own fault: {outcome}", e.action.words()),
                (false, false) => format!("fault {} at {:.1} s (carried out at {:.2} s): {outcome}", e.action.words(), e.at_s, e.done_s),
            }
        })
        .collect();
    let stretch = |name: &str, s: &Option<storbench_model::disruption::Stretch>| {
        s.as_ref().map(|s| {
            let p99 = s.p99_ns.map_or(String::new(), |ns| format!(", p99 {}", crate::fmt::latency(ns)));
            format!("{name} {} ops/s{p99}, {}", crate::fmt::count(s.ops_per_s), s.errors_words())
        })
    };
    let parts: Vec<String> =
        [stretch("before", &d.before), stretch("during", &d.during), stretch("after", &d.after)].into_iter().flatten().collect();
    if !parts.is_empty() {
        out.push(format!("faults: {}", parts.join("; ")));
    }
    // Recovery is judged against before's rate, after a fault was carried out.
    let judged = d.before.is_some() && d.events.iter().any(|e| !e.skipped);
    match d.recovered_after_s {
        Some(s) => out.push(format!("the clients were back within 5% of before {s:.0} s after the last fault")),
        None if judged => out.push("the clients were not back within 5% of before by the run's end".into()),
        None => {}
    }
    match (d.cluster_recovery_s, d.cluster_recovering_at_end) {
        (Some([a, _]), true) => out.push(format!(
            "the cluster was recovering (degraded or misplaced objects, recovery traffic) from {a:.0} s and still at the run's end, by its own counters"
        )),
        (Some([a, b]), false) => out.push(format!(
            "the cluster recovered (degraded or misplaced objects, recovery traffic) from {a:.0} s to {b:.0} s by its own counters"
        )),
        (None, _) => {}
    }
    out
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::sample;

    #[test]
    fn each_disk_has_a_line_after_the_cpu_cost() {
        let mut r = sample::run();
        // The notes' real fio run: `vda: ios=44940/6, ..., in_queue=1364, util=62.99%`.
        let vda = DiskUtil {
            name: "vda".into(),
            read_ios: 44940,
            write_ios: 6,
            read_ticks: 1359,
            write_ticks: 4,
            in_queue: 1364,
            util: 62.99,
            ..Default::default()
        };
        r.disk_util = vec![vda, sample::busy_disk()];
        let out = render(&r);
        let lines: Vec<&str> = out.lines().collect();
        let cpu = lines.iter().position(|l| l.starts_with("client CPU: ")).unwrap();
        assert_eq!(
            lines[cpu + 1..cpu + 3],
            [
                "disk vda: util 62.99%, ios 44940 read / 6 written, in queue 1364 ms (device-wide: other processes' I/O included)",
                // Capped at 100, as fio caps it.
                "disk nvme0n1: util 100.00%, ios 12 read / 120345 written, in queue 99001 ms (device-wide: other processes' I/O included)",
            ]
        );
        assert!(lines[cpu + 3].starts_with("errors wsync write: "), "{out}");
        assert!(!render(&sample::run()).contains("\ndisk "));
    }
}
