//! The coordinator: runs the plan's groups one after another, merges interval
//! reports into per-second series and totals, and builds the result.
//!
//! Percentiles are always computed from merged histograms, never averaged.

use crate::agent::{AgentMsg, LocalAgent, WorkerDone};
use crate::plan::{JobPlan, Plan};
use crate::result::*;
use crate::stop;
use crate::warnings::Warning;
use std::collections::BTreeMap;
use std::time::Duration;
use storbench_metrics::{CpuTimes, IntervalReport, OpStats};
use storbench_workload::OpKind;

/// One second of one job, for live progress.
pub struct Progress<'a> {
    pub job: &'a str,
    pub elapsed_s: f64,
    /// Expected length (ramp included), when time bound.
    pub total_s: Option<f64>,
    pub point: &'a SeriesPoint,
}

/// Watches a run as it goes (live progress); must be cheap.
pub trait Observer {
    fn job_started(&self, _job: &JobPlan) {}
    fn second(&self, _p: &Progress) {}
    fn group_finished(&self) {}
}

/// An observer that does nothing (piped output, tests).
pub struct Silent;
impl Observer for Silent {}

struct Pending {
    received: u32,
    start_ns: u64,
    end_ns: u64,
    warmup: bool,
    ops: Vec<OpStats>,
}

/// Per-job accumulation while its group runs.
struct JobAcc {
    workers: u32,
    totals: Vec<OpStats>,
    /// Totals per object size class (see `IntervalReport::classes`).
    class_totals: Vec<Vec<OpStats>>,
    pending: BTreeMap<u64, Pending>,
    series: Vec<SeriesPoint>,
    done: Vec<WorkerDone>,
    /// Emptied per-point stats, reused so a long run allocates nothing per second.
    spare: Vec<Vec<OpStats>>,
}

impl JobAcc {
    fn new(job: &JobPlan) -> JobAcc {
        let svc = job.ops_per_sec.is_some();
        JobAcc {
            workers: job.spec.numjobs,
            totals: op_stats(svc),
            class_totals: (0..job.spec.objects.as_ref().map_or(0, |o| o.sizes.classes().len())).map(|_| op_stats(svc)).collect(),
            pending: BTreeMap::new(),
            series: Vec::new(),
            done: Vec::new(),
            spare: Vec::new(),
        }
    }

    fn absorb(&mut self, r: &IntervalReport) {
        if !r.warmup {
            for (t, o) in self.totals.iter_mut().zip(&r.ops) {
                t.merge(o);
            }
            for (tc, rc) in self.class_totals.iter_mut().zip(&r.classes) {
                tc.iter_mut().zip(rc).for_each(|(t, o)| t.merge(o));
            }
        }
        let spare = &mut self.spare;
        let p = self.pending.entry(r.seq).or_insert_with(|| Pending {
            received: 0,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            warmup: r.warmup,
            ops: spare.pop().unwrap_or_else(|| op_stats(false)),
        });
        p.received += 1;
        p.start_ns = p.start_ns.min(r.start_ns);
        p.end_ns = p.end_ns.max(r.end_ns);
        for (a, o) in p.ops.iter_mut().zip(&r.ops) {
            a.ios += o.ios;
            a.bytes += o.bytes;
            a.errors.merge(&o.errors);
            a.latency.add(&o.latency);
        }
    }

    /// Points every live worker has reported, oldest first; with `all`, every
    /// pending point (the group has ended).
    fn complete_points(&mut self, all: bool) -> Vec<SeriesPoint> {
        let mut out = Vec::new();
        while let Some((&seq, p)) = self.pending.iter().next() {
            let finished_before = self.done.iter().filter(|d| d.last_seq < seq).count() as u32;
            if !all && p.received + finished_before < self.workers {
                break;
            }
            let mut p = self.pending.remove(&seq).expect("key seen above");
            // A run that ends exactly on a boundary leaves an empty last interval.
            if p.end_ns > p.start_ns || p.ops.iter().any(|o| o.ios > 0) {
                out.push(point(&p));
            }
            p.ops.iter_mut().for_each(OpStats::reset);
            self.spare.push(p.ops);
        }
        self.series.extend(out.iter().cloned());
        out
    }
}

/// Empty stats for every operation kind.
fn op_stats(with_service: bool) -> Vec<OpStats> {
    OpKind::ALL.iter().map(|_| OpStats::new(with_service)).collect()
}

fn point(p: &Pending) -> SeriesPoint {
    let dur = (p.end_ns.saturating_sub(p.start_ns)) as f64 / 1e9;
    let per_s = |x: u64| if dur > 0.0 { x as f64 / dur } else { 0.0 };
    let ops = OpKind::ALL
        .iter()
        .zip(&p.ops)
        .filter(|(_, o)| o.ios > 0 || o.errors.total() > 0)
        .map(|(op, o)| SeriesOp {
            op: *op,
            iops: per_s(o.ios),
            bytes_per_sec: per_s(o.bytes),
            errors: o.errors.total(),
            mean_ns: o.latency.mean().round() as u64,
            p50_ns: o.latency.percentile(50.0),
            p99_ns: o.latency.percentile(99.0),
            max_ns: o.latency.max(),
        })
        .collect();
    SeriesPoint { t: p.end_ns as f64 / 1e9, duration: dur, warmup: p.warmup, ops }
}

/// Run every group of the plan and return the result (always, even when
/// interrupted or when workers failed).
pub fn run_plan(plan: &Plan, observer: &dyn Observer) -> RunResult {
    let started_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let cpu0 = CpuTimes::process();
    let wall0 = std::time::Instant::now();
    let mut jobs = Vec::new();
    for group in &plan.groups {
        if stop::requested() {
            break;
        }
        let members: Vec<&JobPlan> = group.iter().map(|i| &plan.jobs[*i]).collect();
        jobs.extend(run_group(&members, observer));
        observer.group_finished();
    }
    let cpu = CpuTimes::process().since(cpu0);
    let interrupted = stop::requested();
    let mut warnings = Vec::new();
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as f64;
    let cpu_percent = cpu.total().as_secs_f64() / (wall0.elapsed().as_secs_f64() * cpus).max(1e-9) * 100.0;
    if cpu_percent > 90.0 && plan.jobs.iter().any(|j| j.engine.capabilities().does_io) {
        warnings.push(Warning::ClientCpuBound { cpu_percent });
    }
    if interrupted {
        warnings.push(Warning::Interrupted);
    }
    RunResult {
        schema_version: SCHEMA_VERSION,
        storbench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix,
        hostname: hostname(),
        interrupted,
        jobs,
        cpu,
        warnings,
    }
}

fn run_group(members: &[&JobPlan], observer: &dyn Observer) -> Vec<JobResult> {
    for j in members {
        observer.job_started(j);
    }
    let agent = LocalAgent::start(members);
    let mut accs: BTreeMap<u32, JobAcc> = members.iter().map(|j| (j.id, JobAcc::new(j))).collect();
    let total_workers: usize = members.iter().map(|j| j.spec.numjobs as usize).sum();
    let mut finished = 0;
    while finished < total_workers {
        let Some(msg) = agent.recv(Duration::from_millis(200)) else {
            continue;
        };
        let job_id = match &msg {
            AgentMsg::Interval(r) => r.job,
            AgentMsg::Done(d) => d.job,
        };
        let acc = accs.get_mut(&job_id).expect("messages come from this group's jobs");
        match msg {
            AgentMsg::Interval(r) => {
                acc.absorb(&r);
                agent.recycle(r);
            }
            AgentMsg::Done(d) => {
                acc.done.push(d);
                finished += 1;
            }
        }
        let job = members.iter().find(|j| j.id == job_id).expect("job of this group");
        for p in acc.complete_points(false) {
            let total_s = job.end_ns.map(|e| e as f64 / 1e9);
            observer.second(&Progress { job: &job.spec.name, elapsed_s: p.t, total_s, point: &p });
        }
    }
    agent.join();
    members.iter().map(|j| job_result(j, accs.remove(&j.id).expect("one per job"))).collect()
}

fn job_result(job: &JobPlan, mut acc: JobAcc) -> JobResult {
    acc.complete_points(true);
    let end = acc.done.iter().map(|d| d.end_ns).max().unwrap_or(0);
    let runtime_ns = end.saturating_sub(job.ramp_ns);
    let ops = op_results(&acc.totals, runtime_ns);
    let size_classes = size_classes(job, &acc.class_totals, runtime_ns);
    let worker_cpu =
        acc.done.iter().fold(CpuTimes::default(), |a, d| CpuTimes { user_ns: a.user_ns + d.cpu.user_ns, sys_ns: a.sys_ns + d.cpu.sys_ns });
    let failures: Vec<String> = acc.done.iter().filter_map(|d| d.error.as_ref().map(|e| format!("worker {}: {e}", d.worker))).collect();
    let mut result = JobResult {
        name: job.spec.name.clone(),
        group: job.group,
        description: job.spec.describe(),
        engine: job.engine.name().into(),
        spec: job.spec.clone(),
        queue_depth: job.queue_depth,
        workers: job.spec.numjobs,
        targets: targets(job),
        runtime_ns,
        ramp_ns: job.ramp_ns,
        rate_per_worker: job.ops_per_sec,
        ops,
        size_classes,
        series: acc.series,
        worker_cpu,
        interrupted: stop::requested(),
        failures,
        warnings: job.warnings.clone(),
    };
    result.warnings.extend(crate::warnings::analyse(&result, job));
    result
}

fn op_results(totals: &[OpStats], runtime_ns: u64) -> Vec<OpResult> {
    OpKind::ALL
        .iter()
        .zip(totals)
        .filter(|(_, s)| s.ios > 0 || s.errors.total() > 0)
        .map(|(op, s)| OpResult::from_stats(*op, s, runtime_ns))
        .collect()
}

/// Results per object size class, for classes anything was done to.
fn size_classes(job: &JobPlan, totals: &[Vec<OpStats>], runtime_ns: u64) -> Vec<SizeClassResult> {
    let sizes = job.spec.objects.as_ref().map(|o| o.sizes.classes()).unwrap_or_default();
    sizes
        .iter()
        .zip(totals)
        .map(|(size, t)| SizeClassResult { size: *size, ops: op_results(t, runtime_ns) })
        .filter(|c| !c.ops.is_empty())
        .collect()
}

fn targets(job: &JobPlan) -> Vec<String> {
    if let Some(t) = &job.engine_target {
        return vec![t.label.clone()];
    }
    let mut t: Vec<String> = job.prepared.iter().flatten().map(|p| p.path.display().to_string()).collect();
    t.dedup();
    t
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}
