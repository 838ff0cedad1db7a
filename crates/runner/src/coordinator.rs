//! The coordinator: runs the plan's groups one after another over the run
//! protocol, merges interval reports into per-second series and totals, and
//! builds the result.
//!
//! Per group it assigns the jobs to its agent, waits until every worker is
//! set up, starts them together, and turns Ctrl-C into `Stop` (then `Abort`)
//! for this run only. Percentiles are always computed from merged
//! histograms, never averaged.

use crate::agent::{spawn_local, AgentLink, LinkClosed, LocalLink, Resolver};
use crate::interrupt::Scope;
use crate::prepare::{Prepared, ReadyJob};
use crate::telemetry::Collector;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use storbench_engine::{EngineConfig, EngineFactory};
use storbench_metrics::{CpuTimes, HistSample, IntervalReport, LogSample, OpStats};
use storbench_model::protocol::{self, Assignment, FromAgent, Hello, JobShare, Stage, ToAgent, WorkerDone, WorkerId};
use storbench_model::*;
use storbench_workload::OpKind;

/// One second of one job, for live progress.
pub struct Progress<'a> {
    pub job: &'a str,
    pub elapsed_s: f64,
    /// Expected length (ramp included), when time bound.
    pub total_s: Option<f64>,
    pub point: &'a SeriesPoint,
}

/// Watches a run as it goes (live progress, a compatibility tool's
/// per-second lines); must be cheap. It sees every point of the series, in
/// order, the last partial one included.
pub trait Observer {
    fn job_started(&mut self, _job: &JobShare) {}
    /// A job begins unmeasured work (said once per job, by its first worker).
    fn stage(&mut self, _job: &str, _stage: Stage) {}
    /// A Ctrl-C or SIGTERM was passed on to the agents: 1 Stop, 2 Abort.
    fn interrupted(&mut self, _level: u32) {}
    fn second(&mut self, _p: &Progress) {}
    fn group_finished(&mut self) {}
}

/// An observer that does nothing (piped output, tests).
pub struct Silent;
impl Observer for Silent {}

/// How long the coordinator waits for an agent to greet it.
const HELLO_TIMEOUT: Duration = Duration::from_secs(30);
/// How long workers have to say Done after the second interrupt (Abort);
/// those still silent then are stuck in a call to their storage, and are
/// abandoned so the run ends with its results.
const ABANDON_AFTER: Duration = Duration::from_millis(400);
/// The longest the coordinator waits for one message: how soon it sees a
/// signal when nothing else happens.
const POLL: Duration = Duration::from_millis(100);

/// The plan's own engines, for its in-process agent.
struct PlanEngines(HashMap<u32, (&'static dyn EngineFactory, Arc<dyn EngineConfig>)>);

impl Resolver for PlanEngines {
    fn engine(&self, share: &JobShare) -> Result<(&'static dyn EngineFactory, Arc<dyn EngineConfig>), String> {
        self.0.get(&share.job).cloned().ok_or_else(|| format!("job {} is not in this run's plan", share.job))
    }
}

/// Run every group of the plan and return the result (always, even when
/// interrupted or when workers failed).
pub fn run_plan(plan: &Prepared, observer: &mut dyn Observer, scope: &Scope) -> RunResult {
    let mut link = local_agent(plan);
    run_plan_on(&mut link, plan, observer, scope)
}

/// An in-process agent that runs a prepared plan's jobs with the plan's own
/// engines (a remote agent serves its coordinator through one of these).
pub fn local_agent(plan: &Prepared) -> LocalLink {
    let engines = plan.jobs.iter().map(|j| (j.share.job, (j.engine, j.config.clone()))).collect();
    spawn_local(Arc::new(PlanEngines(engines)))
}

/// [`run_plan`] over a given agent link.
pub fn run_plan_on(link: &mut dyn AgentLink, plan: &Prepared, observer: &mut dyn Observer, scope: &Scope) -> RunResult {
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let started_unix = started.as_secs();
    let cpu0 = CpuTimes::process();
    let wall0 = std::time::Instant::now();
    let mut jobs = Vec::new();
    let mut failure = handshake(link).err();
    let mut hosts = Collector::new(plan.telemetry);
    for group in &plan.groups {
        if scope.interrupted() {
            break;
        }
        let members: Vec<&ReadyJob> = group.iter().map(|i| &plan.jobs[*i]).collect();
        let run = GroupRun::new(&members, failure.clone(), &mut hosts);
        let (results, lost) = run.run(link, observer, scope);
        jobs.extend(results);
        failure = failure.or(lost);
        observer.group_finished();
    }
    take_last_seconds(link, &mut hosts);
    let cpu = CpuTimes::process().since(cpu0);
    let interrupted = scope.interrupted();
    let mut warnings = Vec::new();
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as f64;
    let cpu_percent = cpu.total().as_secs_f64() / (wall0.elapsed().as_secs_f64() * cpus).max(1e-9) * 100.0;
    if cpu_percent > 90.0 && plan.jobs.iter().any(|j| j.engine.capabilities().does_io) {
        warnings.push(Warning::ClientCpuBound { cpu_percent });
    }
    if interrupted && (jobs.iter().any(|j: &JobResult| j.interrupted) || jobs.len() < plan.jobs.len()) {
        warnings.push(Warning::Interrupted);
    }
    warnings.extend(stopped(scope, started));
    let telemetry = hosts.finish();
    warnings.extend(telemetry.iter().flat_map(crate::telemetry::rules::judge));
    RunResult {
        schema_version: SCHEMA_VERSION,
        storbench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix,
        hostname: hostname(),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default(),
        command: Vec::new(),
        interrupted,
        jobs,
        cpu,
        warnings,
        parameters: BTreeMap::new(),
        notes: Vec::new(),
        disk_util: Vec::new(),
        agents: Vec::new(),
        telemetry,
        disruption: None,
    }
}

/// The stops (Ctrl-Z) during the run, on its axis.
fn stopped(scope: &Scope, started: Duration) -> impl Iterator<Item = Warning> {
    scope.pauses().into_iter().map(move |p| Warning::Stopped {
        after_s: Duration::from_nanos(p.at_unix_ns).saturating_sub(started).as_secs_f64(),
        seconds: Duration::from_nanos(p.ns).as_secs_f64(),
    })
}

/// How long past a second's boundary its host reading is waited for at
/// the run's end (a reading takes a few ms).
const LAST_SECOND_GRACE: Duration = Duration::from_millis(300);

/// Host seconds already sent when the last group ended (the agent's
/// channel holds them), and the reading of the boundary the group ended on
/// if it is still on its way (a run of 3 s lost its host's third second
/// when the group was over before the sampler's reading of it came):
/// kept, nothing measured is lost.
fn take_last_seconds(link: &mut dyn AgentLink, hosts: &mut Collector) {
    loop {
        let now = protocol::unix_now_ns();
        let wait = hosts.awaited(now, LAST_SECOND_GRACE.as_nanos() as u64).map_or(0, |until| until.saturating_sub(now));
        match link.recv(Duration::from_nanos(wait)) {
            Ok(Some(FromAgent::Host(s))) => hosts.sample(*s),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
}

/// Greet the agent and check it speaks our protocol version.
pub fn handshake(link: &mut dyn AgentLink) -> Result<(), String> {
    let name = link.name().to_string();
    let lost = |_: LinkClosed| format!("{name} hung up before greeting");
    link.send(ToAgent::Hello(Hello::ours("coordinator"))).map_err(lost)?;
    let deadline = std::time::Instant::now() + HELLO_TIMEOUT;
    while std::time::Instant::now() < deadline {
        match link.recv(Duration::from_millis(200)).map_err(lost)? {
            Some(FromAgent::Hello(h)) => return h.check().map_err(|e| e.to_string()),
            Some(FromAgent::Failed { message }) => return Err(format!("{name}: {message}")),
            Some(_) | None => {}
        }
    }
    Err(format!("{name} did not answer within {} s", HELLO_TIMEOUT.as_secs()))
}

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
    /// Totals per I/O priority (see `IntervalReport::prios`).
    prio_totals: Vec<Vec<OpStats>>,
    pending: BTreeMap<u64, Pending>,
    series: Vec<SeriesPoint>,
    done: Vec<WorkerDone>,
    /// Emptied per-point stats, reused so a long run allocates nothing per second.
    spare: Vec<Vec<OpStats>>,
    /// fio's log windows, per worker (jobs that asked for logs only).
    logs: Vec<Vec<LogSample>>,
    /// fio's histogram log lines, per worker.
    hist_logs: Vec<Vec<HistSample>>,
    /// Steady state, judged as the points complete (jobs that asked).
    steady: Option<crate::steady::Tracker>,
    /// Totals per volume (jobs of several volumes only).
    volume_totals: Vec<Vec<OpStats>>,
    /// Each worker's figures on their own (jobs whose clones fio lists apart).
    clones: Option<Clones>,
    /// Measured I/Os by depth in flight (`IntervalReport::depths`).
    depths: [u64; 7],
}

fn add_depths(into: &mut [u64; 7], from: &[u64; 7]) {
    into.iter_mut().zip(from).for_each(|(a, b)| *a += b);
}

/// Each worker's totals and per-second points, by worker number.
struct Clones {
    totals: Vec<Vec<OpStats>>,
    series: Vec<Vec<SeriesPoint>>,
    depths: Vec<[u64; 7]>,
}

impl Clones {
    fn new(workers: u32, with_service: bool) -> Clones {
        let n = workers as usize;
        Clones { totals: (0..n).map(|_| op_stats(with_service)).collect(), series: vec![Vec::new(); n], depths: vec![[0; 7]; n] }
    }

    fn absorb(&mut self, r: &IntervalReport) {
        let w = r.worker as usize;
        let (Some(totals), Some(series)) = (self.totals.get_mut(w), self.series.get_mut(w)) else {
            return;
        };
        if !r.warmup {
            totals.iter_mut().zip(&r.ops).for_each(|(t, o)| t.merge(o));
            add_depths(&mut self.depths[w], &r.depths);
        }
        if r.end_ns > r.start_ns || r.ops.iter().any(|o| o.ios > 0) {
            series.push(point_of(r.start_ns, r.end_ns, r.warmup, &r.ops));
        }
    }

    /// One result per worker; `done` gives each its end and CPU time.
    fn results(self, done: &[WorkerDone], ramp_ns: u64) -> Vec<WorkerJobResult> {
        let parts = self.totals.into_iter().zip(self.series).enumerate();
        parts
            .map(|(w, (totals, series))| {
                let d = done.iter().find(|d| d.worker as usize == w);
                let runtime_ns = d.map_or(0, |d| d.measured_end().saturating_sub(d.measured_from_ns.unwrap_or(ramp_ns)));
                let cpu = d.map_or_else(CpuTimes::default, |d| d.cpu);
                let phases = verify_phase(d);
                let depths = self.depths[w];
                WorkerJobResult { worker: w as u32, runtime_ns, ops: op_results(&totals, runtime_ns), series, cpu, phases, depths }
            })
            .collect()
    }
}

/// A verified job's result from its workers' tallies.
fn verify_result(share: &JobShare, done: &[WorkerDone]) -> Option<storbench_model::VerifyResult> {
    let v = share.spec.verify.as_ref()?;
    let checksum = v.checksum?;
    let mut tally = storbench_metrics::VerifyTally::default();
    for v in done.iter().filter_map(|d| d.verify.as_deref()) {
        tally.merge(v);
    }
    let unit = if share.spec.objects.is_some() { 0 } else { crate::verify::grid_of(share).map_or(0, |g| g.0) };
    Some(storbench_model::VerifyResult { checksum: checksum.name().to_string(), unit, tally })
}

/// A job's verify pass from its workers' (fio's verify phase): their reads
/// added, over the longest worker's pass (they start together, once every
/// writer is done). None when no worker read anything back.
fn verify_phase<'a>(done: impl IntoIterator<Item = &'a WorkerDone>) -> Vec<PhaseResult> {
    let (mut reads, mut ns): (Option<OpStats>, u64) = (None, 0);
    for d in done {
        let Some(pass) = d.pass.as_deref() else { continue };
        reads.get_or_insert_with(|| OpStats::new(false)).merge(pass);
        ns = ns.max(d.verify.as_ref().map_or(0, |v| v.pass_ns));
    }
    match reads {
        Some(r) if r.ios > 0 || r.errors.total() > 0 => {
            vec![PhaseResult { phase: Phase::Verify, runtime_ns: ns, ops: vec![OpResult::from_stats(OpKind::Read, &r, ns)] }]
        }
        _ => Vec::new(),
    }
}

impl JobAcc {
    fn new(share: &JobShare) -> JobAcc {
        let svc = share.paced();
        JobAcc {
            workers: share.workers,
            totals: op_stats(svc),
            class_totals: share.size_classes().iter().map(|_| op_stats(svc)).collect(),
            prio_totals: share.prio_values().iter().map(|_| op_stats(svc)).collect(),
            pending: BTreeMap::new(),
            series: Vec::new(),
            done: Vec::new(),
            spare: Vec::new(),
            logs: Vec::new(),
            hist_logs: Vec::new(),
            steady: share.spec.steady.as_ref().and_then(|ss| crate::steady::Tracker::new(ss, share.ramp_ns)),
            volume_totals: match share.spec.volumes {
                0 | 1 => Vec::new(),
                n => (0..n).map(|_| op_stats(svc)).collect(),
            },
            clones: JobResult::keeps_clones(&share.spec, share.workers).then(|| Clones::new(share.workers, svc)),
            depths: [0; 7],
        }
    }

    fn absorb(&mut self, r: &IntervalReport) {
        if let Some(c) = self.clones.as_mut() {
            c.absorb(r);
        }
        if !r.log.is_empty() {
            if self.logs.len() <= r.worker as usize {
                self.logs.resize(r.worker as usize + 1, Vec::new());
            }
            self.logs[r.worker as usize].extend_from_slice(&r.log);
        }
        if !r.hist_log.is_empty() {
            if self.hist_logs.len() <= r.worker as usize {
                self.hist_logs.resize(r.worker as usize + 1, Vec::new());
            }
            self.hist_logs[r.worker as usize].extend_from_slice(&r.hist_log);
        }
        // Totals go by each report's own flag: a worker that was blocked past
        // a boundary sends one report for several seconds, so the reports of
        // one `seq` need not all be warm-up or all measured.
        if !r.warmup {
            add_depths(&mut self.depths, &r.depths);
            for (t, o) in self.totals.iter_mut().zip(&r.ops) {
                t.merge(o);
            }
            for (tc, rc) in self.class_totals.iter_mut().zip(&r.classes).chain(self.prio_totals.iter_mut().zip(&r.prios)) {
                tc.iter_mut().zip(rc).for_each(|(t, o)| t.merge(o));
            }
            let volumes = self.volume_totals.len() as u32;
            if volumes > 1 {
                let v = &mut self.volume_totals[(r.worker % volumes) as usize];
                v.iter_mut().zip(&r.ops).for_each(|(t, o)| t.merge(o));
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
        // A second's point needs counts and latency only.
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
            let finished_before = self.done.iter().filter(|d| d.last_seq.is_none_or(|l| l < seq)).count() as u32;
            if !all && p.received + finished_before < self.workers {
                break;
            }
            let mut p = self.pending.remove(&seq).expect("key seen above");
            // A run that ends exactly on a boundary leaves an empty last interval.
            if p.end_ns > p.start_ns || p.ops.iter().any(|o| o.ios > 0) {
                let pt = point(&p);
                if let Some(t) = self.steady.as_mut() {
                    t.point(&pt);
                }
                out.push(pt);
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
    point_of(p.start_ns, p.end_ns, p.warmup, &p.ops)
}

/// The per-second point of `ops` over `start_ns..end_ns`.
fn point_of(start_ns: u64, end_ns: u64, warmup: bool, stats: &[OpStats]) -> SeriesPoint {
    let dur = (end_ns.saturating_sub(start_ns)) as f64 / 1e9;
    let per_s = |x: u64| if dur > 0.0 { x as f64 / dur } else { 0.0 };
    let ops = OpKind::ALL
        .iter()
        .zip(stats)
        .filter(|(_, o)| o.ios > 0 || o.errors.total() > 0)
        .map(|(op, o)| SeriesOp {
            op: *op,
            iops: per_s(o.ios),
            bytes_per_sec: per_s(o.bytes),
            errors: o.errors.total(),
            error_kinds: o.errors.by_kind(),
            mean_ns: o.latency.mean().round() as u64,
            p50_ns: o.latency.percentile(50.0),
            p99_ns: o.latency.percentile(99.0),
            max_ns: o.latency.max(),
            buckets: o.latency.log_buckets(),
        })
        .collect();
    SeriesPoint { t: end_ns as f64 / 1e9, duration: dur, warmup, ops }
}

/// How far ahead of now a group starts: time for the agent to wake every
/// worker before any of them runs. Started at once, the first workers woken
/// took the CPUs while the agent was still waking the rest (each wake-up can
/// hand the CPU to the woken thread): with 1,000 CPU-bound workers on 2
/// cores half of them had not begun when a 2 s run ended. Woken early, each
/// sleeps to the common start on its own timer.
fn start_lead(workers: usize) -> Duration {
    Duration::from_millis(2) + Duration::from_micros(20) * workers as u32
}

/// One group on one agent, from assignment to the last worker's Done.
struct GroupRun<'a> {
    members: &'a [&'a ReadyJob],
    assignment: Option<Assignment>,
    accs: BTreeMap<u32, JobAcc>,
    /// Workers that have not said Done yet.
    waiting: HashSet<WorkerId>,
    /// Workers that have not said Ready (or Done) yet.
    unready: HashSet<WorkerId>,
    started: bool,
    /// How far a stop has been asked for (0 none, 1 Stop, 2 Abort).
    stop_sent: u32,
    /// Stages already announced, per job.
    announced: HashSet<(u32, Stage)>,
    /// Workers past their measured phase (cleaning up, or done).
    measured: HashSet<WorkerId>,
    /// Jobs whose measured phase a stop cut short.
    cut: HashSet<u32>,
    /// Why the agent cannot run this group (set before or during it).
    failure: Option<String>,
    /// Each worker's last interval report: (seq, end_ns).
    last: HashMap<WorkerId, (u64, u64)>,
    /// Workers abandoned after the second interrupt, per job.
    abandoned: HashMap<u32, u32>,
    /// CPU burners already told to end (`exit_on_io_done`).
    burners_ended: HashSet<u32>,
    /// The hosts' seconds, across the run's groups.
    hosts: &'a mut Collector,
}

impl<'a> GroupRun<'a> {
    fn new(members: &'a [&'a ReadyJob], failure: Option<String>, hosts: &'a mut Collector) -> GroupRun<'a> {
        let assignment = Assignment::all(members.iter().map(|j| j.share.clone()).collect());
        let workers: HashSet<WorkerId> = assignment.workers.iter().copied().collect();
        GroupRun {
            members,
            assignment: Some(assignment),
            accs: members.iter().map(|j| (j.share.job, JobAcc::new(&j.share))).collect(),
            unready: workers.clone(),
            waiting: workers,
            started: false,
            stop_sent: 0,
            announced: HashSet::new(),
            measured: HashSet::new(),
            cut: HashSet::new(),
            failure,
            last: HashMap::new(),
            abandoned: HashMap::new(),
            burners_ended: HashSet::new(),
            hosts,
        }
    }

    /// Run the group; its results, and why the agent was lost if it was.
    fn run(mut self, link: &mut dyn AgentLink, observer: &mut dyn Observer, scope: &Scope) -> (Vec<JobResult>, Option<String>) {
        for j in self.members {
            observer.job_started(&j.share);
        }
        if let (None, Some(a)) = (&self.failure, self.assignment.take()) {
            if link.send(ToAgent::Assign(a)).is_err() {
                self.failure = Some(format!("{} hung up", link.name()));
            }
        }
        let mut give_up: Option<std::time::Instant> = None;
        while self.failure.is_none() && !self.waiting.is_empty() {
            self.pass_on_interrupts(link, scope, observer);
            if self.stop_sent >= 2 {
                let at = *give_up.get_or_insert_with(|| std::time::Instant::now() + ABANDON_AFTER);
                if std::time::Instant::now() >= at {
                    self.abandon_waiting(link);
                    break;
                }
            }
            match link.recv(POLL) {
                Ok(Some(msg)) => self.handle(msg, link, observer),
                Ok(None) => {}
                Err(LinkClosed) => self.failure = Some(format!("{} was lost mid-run", link.name())),
            }
            // Stopped before it started (in a prefill): workers clean up, nothing is measured.
            if !self.started && self.unready.is_empty() && self.failure.is_none() && self.stop_sent == 0 {
                self.started = true;
                let at_unix_ns = protocol::unix_now_ns() + start_lead(self.waiting.len()).as_nanos() as u64;
                if link.send(ToAgent::Start { at_unix_ns, telemetry: self.hosts.on() }).is_err() {
                    self.failure = Some(format!("{} hung up", link.name()));
                }
                // The hosts' seconds count from the start the agents were given.
                self.hosts.started(link.started_at().unwrap_or(at_unix_ns));
                for j in self.members {
                    observer.stage(&j.share.spec.name, Stage::Measure);
                }
            }
        }
        let lost = self.failure.clone();
        if let Some(why) = &lost {
            self.fail_waiting(why);
        }
        (self.results(observer, scope), lost)
    }

    /// Ctrl-C becomes Stop for this run; a second one, Abort.
    fn pass_on_interrupts(&mut self, link: &mut dyn AgentLink, scope: &Scope, observer: &mut dyn Observer) {
        let level = scope.level().min(2);
        if level > self.stop_sent {
            observer.interrupted(level);
            if self.stop_sent == 0 {
                // A stop during a job's cleanup leaves its measurements whole.
                let measuring = self.waiting.iter().filter(|w| !self.measured.contains(w)).map(|w| w.job);
                self.cut.extend(measuring);
            }
            let msg = if level == 1 { ToAgent::Stop } else { ToAgent::Abort };
            if link.send(msg).is_err() {
                self.failure = Some(format!("{} hung up", link.name()));
            }
            self.stop_sent = level;
        }
    }

    fn handle(&mut self, msg: FromAgent, link: &mut dyn AgentLink, observer: &mut dyn Observer) {
        match msg {
            FromAgent::Ready(id) => {
                self.unready.remove(&id);
            }
            FromAgent::Interval(r) => {
                self.last.insert(WorkerId { job: r.job, worker: r.worker }, (r.seq, r.end_ns));
                let Some(acc) = self.accs.get_mut(&r.job) else { return };
                acc.absorb(&r);
                let job = r.job;
                link.recycle(r);
                self.observe(job, false, observer);
                self.stop_if_steady(job, link);
            }
            FromAgent::Done(d) => {
                let id = WorkerId { job: d.job, worker: d.worker };
                self.unready.remove(&id);
                self.measured.insert(id);
                if self.waiting.remove(&id) {
                    let job = d.job;
                    if let Some(acc) = self.accs.get_mut(&job) {
                        acc.done.push(d);
                    }
                    self.observe(job, false, observer);
                    self.exit_all_after(job, link);
                    self.end_burners(link);
                }
            }
            FromAgent::Stage { id, stage } => {
                if matches!(stage, Stage::Cleanup | Stage::Verify) {
                    self.measured.insert(id);
                }
                if self.announced.insert((id.job, stage)) {
                    if let Some(j) = self.members.iter().find(|j| j.share.job == id.job) {
                        observer.stage(&j.share.spec.name, stage);
                    }
                }
            }
            FromAgent::Failed { message } => self.failure = Some(format!("{}: {message}", link.name())),
            FromAgent::Host(s) => self.hosts.sample(*s),
            // A process fault's answer is the faults' thread's (runner::disruption).
            FromAgent::Hello(_)
            | FromAgent::Pong { .. }
            | FromAgent::Prepared(_)
            | FromAgent::Finished { .. }
            | FromAgent::Signalled { .. } => {}
        }
    }

    /// fio's `exitall`: once every worker of such a job is done, the other
    /// jobs of the group stop measuring (their results are whole, not
    /// interrupted) and clean up.
    fn exit_all_after(&mut self, job: u32, link: &mut dyn AgentLink) {
        let Some(j) = self.members.iter().find(|j| j.share.job == job) else { return };
        let finished = self.accs.get(&job).is_some_and(|a| a.done.len() as u32 >= a.workers);
        if j.share.spec.exitall && finished && self.started && self.stop_sent == 0 && !self.waiting.is_empty() {
            if link.send(ToAgent::Stop).is_err() {
                self.failure = Some(format!("{} hung up", link.name()));
            }
            self.stop_sent = 1;
        }
    }

    /// fio's `exit_on_io_done`: once every worker of the group's jobs that
    /// do I/O is done, the CPU burners that ask for it end their measured
    /// phase (their figures are whole, not interrupted). A group of burners
    /// alone runs to their runtime, as in fio.
    fn end_burners(&mut self, link: &mut dyn AgentLink) {
        let is_burner = |j: &&ReadyJob| j.share.spec.does_no_io();
        let finished = |j: &&ReadyJob| self.accs.get(&j.share.job).is_some_and(|a| a.done.len() as u32 >= a.workers);
        let io: Vec<&ReadyJob> = self.members.iter().copied().filter(|j| !is_burner(j)).collect();
        if self.stop_sent > 0 || io.is_empty() || !io.iter().all(finished) {
            return;
        }
        for b in self.members.iter().filter(|j| j.share.spec.kind.cpu_burn().is_some_and(|b| b.exit_on_io_done)) {
            let job = b.share.job;
            if !finished(b) && self.burners_ended.insert(job) && link.send(ToAgent::StopJob { job }).is_err() {
                self.failure = Some(format!("{} hung up", link.name()));
            }
        }
    }

    /// A job whose figures just became steady ends its measured phase (its
    /// workers clean up and say Done; the other jobs go on).
    fn stop_if_steady(&mut self, job: u32, link: &mut dyn AgentLink) {
        let Some(t) = self.accs.get_mut(&job).and_then(|a| a.steady.as_mut()) else { return };
        if std::mem::take(&mut t.newly_attained) && self.stop_sent == 0 && link.send(ToAgent::StopJob { job }).is_err() {
            self.failure = Some(format!("{} hung up", link.name()));
        }
    }

    /// Show the job's completed points (`all`: every pending one).
    fn observe(&mut self, job: u32, all: bool, observer: &mut dyn Observer) {
        let Some(j) = self.members.iter().find(|j| j.share.job == job) else { return };
        let Some(acc) = self.accs.get_mut(&job) else { return };
        let total_s = j.share.end_ns.map(|e| e as f64 / 1e9);
        for p in acc.complete_points(all) {
            observer.second(&Progress { job: &j.share.spec.name, elapsed_s: p.t, total_s, point: &p });
        }
    }

    /// Workers still silent after an Abort are stuck inside their engine:
    /// each ends here with its last interval (what it measured up to then
    /// stays in the merge), and the link lets their threads go.
    fn abandon_waiting(&mut self, link: &mut dyn AgentLink) {
        for id in std::mem::take(&mut self.waiting) {
            let (seq, end_ns) = self.last.get(&id).map_or((None, 0), |(s, e)| (Some(*s), *e));
            let why = "abandoned: stuck in a call to the storage after the second interrupt";
            let stuck = protocol::Failure { fault: storbench_model::Fault::Interrupted, stage: None };
            let done = WorkerDone { last_seq: seq, end_ns, ..WorkerDone::failed_in(id, why, stuck) };
            if let Some(acc) = self.accs.get_mut(&id.job) {
                acc.done.push(done);
            }
            *self.abandoned.entry(id.job).or_default() += 1;
        }
        link.abandon_workers();
    }

    /// Workers the agent will never report on end with its failure.
    fn fail_waiting(&mut self, why: &str) {
        for id in std::mem::take(&mut self.waiting) {
            if let Some(acc) = self.accs.get_mut(&id.job) {
                let lost = protocol::Failure { fault: storbench_model::Fault::System, stage: None };
                acc.done.push(WorkerDone::failed_in(id, why, lost));
            }
        }
    }

    fn results(mut self, observer: &mut dyn Observer, scope: &Scope) -> Vec<JobResult> {
        let ids: Vec<u32> = self.members.iter().map(|j| j.share.job).collect();
        for id in &ids {
            self.observe(*id, true, observer);
        }
        // A stop before the group's first message still cuts every job.
        let stopped_early = scope.interrupted() && self.stop_sent == 0;
        let cut = |job: u32| stopped_early || self.cut.contains(&job);
        let mut results = Vec::new();
        for j in self.members {
            let acc = self.accs.remove(&j.share.job).expect("one per job");
            let mut r = job_result(j, acc, cut(j.share.job));
            if let Some(&workers) = self.abandoned.get(&j.share.job) {
                r.warnings.push(Warning::WorkersAbandoned { job: r.name.clone(), workers });
            }
            results.push(r);
        }
        crate::warnings::shared_locks_across_jobs(self.members, &mut results);
        results
    }
}

fn job_result(job: &ReadyJob, mut acc: JobAcc, interrupted: bool) -> JobResult {
    acc.complete_points(true);
    let share = &job.share;
    // The time its workers stood still reading passes back is not the writes' (fio's runtime).
    let end = acc.done.iter().map(|d| d.measured_end()).max().unwrap_or(0);
    // A latency_target job's figures start where each worker's search
    // settled: its runtime is the longest of theirs (fio's max_run).
    let ramp_ns = acc.done.iter().map(|d| d.measured_from_ns.unwrap_or(share.ramp_ns)).min().unwrap_or(share.ramp_ns);
    let runtime_ns = match acc.done.iter().any(|d| d.measured_from_ns.is_some()) {
        true => acc.done.iter().map(|d| d.measured_end().saturating_sub(d.measured_from_ns.unwrap_or(share.ramp_ns))).max().unwrap_or(0),
        false => end.saturating_sub(share.ramp_ns),
    };
    let ops = op_results(&acc.totals, runtime_ns);
    let size_classes = size_classes(share, &acc.class_totals, runtime_ns);
    let priorities = priorities(share, &acc.prio_totals, runtime_ns);
    let worker_cpu = acc.done.iter().fold(CpuTimes::default(), |a, d| a.plus(d.cpu));
    acc.done.sort_by_key(|d| d.worker);
    let failures: Vec<String> = acc.done.iter().filter_map(|d| d.error.as_ref().map(|e| format!("worker {}: {e}", d.worker))).collect();
    let objects_left = acc.done.iter().map(|d| d.objects_left).sum();
    let cut_off = acc.done.iter().map(|d| d.cut_off).sum();
    let mut result = JobResult {
        name: share.spec.name.clone(),
        group: job.group,
        description: share.spec.describe(),
        engine: job.engine.name().into(),
        spec: share.spec.clone(),
        queue_depth: share.queue_depth,
        workers: share.workers,
        targets: share.targets.labels(),
        start_ns: acc.done.iter().filter(|d| d.error.is_none()).map(|d| d.start_ns).min().unwrap_or(0),
        runtime_ns,
        ramp_ns,
        rate_per_worker: share.ops_per_sec,
        ops,
        size_classes,
        priorities,
        series: acc.series,
        worker_cpu,
        interrupted,
        failures,
        warnings: job.warnings.clone(),
        objects_left,
        cut_off,
        logs: acc.logs,
        hist_logs: acc.hist_logs,
        steady_state: acc.steady.as_ref().map(crate::steady::Tracker::result),
        verify: verify_result(share, &acc.done),
        phases: verify_phase(&acc.done),
        fill: None,
        kind: None,
        per_agent: Vec::new(),
        per_volume: per_volume(share, &acc.volume_totals, runtime_ns),
        per_worker: acc.clones.take().map(|c| c.results(&acc.done, share.ramp_ns)).unwrap_or_default(),
        depths: acc.depths,
        latency_depth: acc.done.iter().filter_map(|d| d.latency_depth).max(),
    };
    let written = [OpKind::Write, OpKind::Create].iter().filter_map(|op| result.op(*op)).map(|o| o.bytes).sum();
    result.fill = crate::fill::result(job, written);
    result.kind = crate::kinds::result(job, &acc.done, &result);
    result.warnings.extend(crate::warnings::analyse(&result, job));
    result
}

/// Each volume's figures, for a job of several (see `volumes`).
fn per_volume(share: &JobShare, totals: &[Vec<OpStats>], runtime_ns: u64) -> Vec<VolumeJobResult> {
    let spec = &share.spec;
    let targets = |k: u32| match (&share.targets, &share.object_prefix) {
        (_, Some(p)) => vec![crate::volumes::object_prefix(p, spec, k)],
        (Targets::Files(_), _) => {
            let mut t: Vec<String> = (k..share.workers)
                .step_by(spec.volumes.max(1) as usize)
                .flat_map(|w| share.targets.files_of(w).iter().map(|f| f.path.display().to_string()))
                .collect();
            t.dedup();
            t
        }
        _ => Vec::new(),
    };
    (0..totals.len() as u32)
        .zip(totals)
        .map(|(k, t)| VolumeJobResult {
            volume: k,
            workers: share.workers / spec.volumes.max(1),
            targets: targets(k),
            ops: op_results(t, runtime_ns),
        })
        .collect()
}

/// Results of the operations anything was done to.
pub fn op_results(totals: &[OpStats], runtime_ns: u64) -> Vec<OpResult> {
    OpKind::ALL
        .iter()
        .zip(totals)
        .filter(|(_, s)| s.ios > 0 || s.errors.total() > 0)
        .map(|(op, s)| OpResult::from_stats(*op, s, runtime_ns))
        .collect()
}

/// Results per object size class, for classes anything was done to.
fn size_classes(share: &JobShare, totals: &[Vec<OpStats>], runtime_ns: u64) -> Vec<SizeClassResult> {
    share
        .size_classes()
        .iter()
        .zip(totals)
        .map(|(size, t)| SizeClassResult { size: *size, ops: op_results(t, runtime_ns) })
        .filter(|c| !c.ops.is_empty())
        .collect()
}

/// Results per I/O priority, for priorities any I/O carried.
fn priorities(share: &JobShare, totals: &[Vec<OpStats>], runtime_ns: u64) -> Vec<PrioResult> {
    share
        .prio_values()
        .iter()
        .zip(totals)
        .map(|(v, t)| PrioResult::new(*v, op_results(t, runtime_ns)))
        .filter(|p| !p.ops.is_empty())
        .collect()
}

/// This machine's host name (empty if it cannot be read).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent that answers the greeting with another protocol version.
    struct Stranger {
        greeted: bool,
    }

    impl AgentLink for Stranger {
        fn name(&self) -> &str {
            "agent at 192.0.2.7"
        }
        fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed> {
            self.greeted |= matches!(msg, ToAgent::Hello(_));
            Ok(())
        }
        fn recv(&mut self, _: Duration) -> Result<Option<FromAgent>, LinkClosed> {
            let mut h = Hello::ours("agent at 192.0.2.7");
            h.protocol += 7;
            Ok(self.greeted.then_some(FromAgent::Hello(h)))
        }
    }

    #[test]
    fn a_coordinator_refuses_an_agent_of_another_protocol_version() {
        let e = handshake(&mut Stranger { greeted: false }).unwrap_err();
        assert!(e.contains("agent at 192.0.2.7") && e.contains("run protocol version"), "{e}");
    }
}
