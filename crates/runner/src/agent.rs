//! The in-process agent: speaks the run protocol (`storbench_model::protocol`)
//! over channels, starts the workers of each assignment, releases them
//! together at `Start`, and passes `Stop`/`Abort` on to them.
//!
//! The coordinator sees an agent only through [`AgentLink`]: send a
//! [`ToAgent`], receive a [`FromAgent`]. A remote agent will be another link
//! that serializes the same messages. Workers send their reports straight
//! into the link's channel; the agent's own thread handles only the
//! coordinator's messages.

use crate::worker::{Worker, WorkerLink};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_engine::{EngineConfig, EngineFactory};
use storbench_metrics::IntervalReport;
use storbench_model::disruption::FaultEvent;
use storbench_model::protocol::{self, Assignment, Failure, FromAgent, Hello, JobShare, Stage, ToAgent, WorkerDone, WorkerId};
use storbench_model::telemetry::HostSample;
use storbench_model::Fault;

/// The link is gone: the agent (or its thread) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkClosed;

/// One agent as the coordinator sees it.
pub trait AgentLink {
    /// Who the agent is (for messages).
    fn name(&self) -> &str;
    fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed>;
    /// The next message, or `Ok(None)` when none came within `timeout`.
    fn recv(&mut self, timeout: Duration) -> Result<Option<FromAgent>, LinkClosed>;
    /// An interval report the coordinator is done with, for the worker to
    /// reuse (in-process only; a remote link drops it). Reports travel boxed.
    #[allow(clippy::boxed_local)]
    fn recycle(&mut self, _report: Box<IntervalReport>) {}
    /// The coordinator gave up on workers stuck inside their engine (after
    /// the second interrupt): their threads are not waited for when the
    /// link closes, so the process can end with its results.
    fn abandon_workers(&mut self) {}
    /// Where the last `Start` sent begins on the coordinator's clock (Unix
    /// ns), when the link moved it from the one asked: a fleet starts once
    /// every agent has had time to hear it. None: as asked.
    fn started_at(&self) -> Option<u64> {
        None
    }
}

/// Sees every interval report as it arrives, with the agent that sent it
/// (live metrics: `--prometheus`), and what is measured and done beside
/// the load. Must be cheap: it runs on the coordinator's path.
pub trait Tap: Send + Sync {
    fn interval(&self, agent: &str, report: &IntervalReport);
    /// A second of a host's, a cluster's or an exporter's telemetry.
    fn host(&self, _sample: &HostSample) {}
    /// A fault carried out beside the run (or failed, or not reached).
    fn fault(&self, _event: &FaultEvent) {}
}

/// A link whose messages also go to a tap: its interval reports, as from
/// `agent`; or with no agent its telemetry seconds, as the outermost link
/// of a run, where every host's, the cluster's and the exporters' pass
/// (the interval reports are tapped nearer their agents, by name).
pub struct Tapped<'a> {
    pub inner: &'a mut dyn AgentLink,
    pub tap: &'a dyn Tap,
    pub agent: Option<String>,
}

impl AgentLink for Tapped<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn started_at(&self) -> Option<u64> {
        self.inner.started_at()
    }
    fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed> {
        self.inner.send(msg)
    }
    fn recv(&mut self, timeout: Duration) -> Result<Option<FromAgent>, LinkClosed> {
        let m = self.inner.recv(timeout)?;
        match (&m, &self.agent) {
            (Some(FromAgent::Interval(r)), Some(agent)) => self.tap.interval(agent, r),
            (Some(FromAgent::Host(s)), None) => self.tap.host(s),
            _ => {}
        }
        Ok(m)
    }
    fn recycle(&mut self, report: Box<IntervalReport>) {
        self.inner.recycle(report)
    }
    fn abandon_workers(&mut self) {
        self.inner.abandon_workers()
    }
}

/// How an agent gets a live engine for a job share.
pub trait Resolver: Send + Sync {
    fn engine(&self, share: &JobShare) -> Result<(&'static dyn EngineFactory, Arc<dyn EngineConfig>), String>;
}

/// Where a run stands, shared by the agent and its workers: the start gate,
/// and how far it has been asked to stop.
///
/// The gate wakes each waiting worker on its own (`unpark`), and a woken
/// worker reads the gate without a lock. A mutex and condvar woke them in a
/// chain instead (each waiter must take the mutex in turn, and each hand-off
/// waits for the next thread to be scheduled): with 200 CPU-bound workers on
/// 2 cores two thirds of them had not started when their 2 s (even 8 s) run
/// ended, and their jobs reported nothing.
pub struct RunControl {
    stop: AtomicU8,
    gate: AtomicU8,
    /// The start instant, set before the gate opens.
    at: std::sync::OnceLock<Instant>,
    /// Workers parked at the gate, woken once when it opens or is cancelled.
    waiting: Mutex<Vec<std::thread::Thread>>,
    /// fio's flow control among the jobs of this assignment.
    pub flows: crate::flow::Flows,
    /// Workers of each job (by number) of this assignment not done yet, for
    /// fio's `wait_for`.
    running: HashMap<u32, AtomicU32>,
}

const CLOSED: u8 = 0;
const OPEN: u8 = 1;
/// Stopped before it started.
const CANCELLED: u8 = 2;

const RUNNING: u8 = 0;
const STOPPING: u8 = 1;
const ABORTING: u8 = 2;

impl RunControl {
    fn new() -> RunControl {
        RunControl {
            stop: AtomicU8::new(RUNNING),
            gate: AtomicU8::new(CLOSED),
            at: std::sync::OnceLock::new(),
            waiting: Mutex::new(Vec::new()),
            flows: Default::default(),
            running: HashMap::new(),
        }
    }

    /// Count the workers of each job, so a job can wait for another's end.
    fn counting(mut self, workers: &[WorkerId]) -> RunControl {
        for w in workers {
            self.running.entry(w.job).or_default().fetch_add(1, Ordering::Relaxed);
        }
        self
    }

    /// A worker of `job` is done (or never started).
    fn finished(&self, job: u32) {
        if let Some(n) = self.running.get(&job) {
            let _ = n.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
    }

    /// Wait until every worker of `job` on this agent is done (fio's
    /// `wait_for`), in slices so a stop is heard within 10 ms; false when
    /// the run was stopped first.
    fn wait_job(&self, job: u32) -> bool {
        let Some(n) = self.running.get(&job) else { return true };
        while n.load(Ordering::Acquire) > 0 {
            if self.stopping() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        !self.stopping()
    }

    /// The measured phase must end (Stop or Abort).
    #[inline]
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) >= STOPPING
    }

    /// Set-up and clean-up work must end too.
    #[inline]
    pub fn aborting(&self) -> bool {
        self.stop.load(Ordering::Relaxed) >= ABORTING
    }

    /// How far a stop has been asked for: 0 running, 1 Stop, 2 Abort (so a
    /// clean-up can tell a stop that came while it ran).
    pub fn level(&self) -> u8 {
        self.stop.load(Ordering::Relaxed)
    }

    /// Wait for `Start`: the instant the group starts, or `None` if the run
    /// was stopped first.
    pub fn wait_start(&self) -> Option<Instant> {
        let mut queued = false;
        loop {
            match self.gate.load(Ordering::Acquire) {
                OPEN => return self.at.get().copied(),
                CANCELLED => return None,
                _ => {}
            }
            if !queued {
                // The gate is checked again under the lock the opener takes
                // after changing it, so no wake-up can fall between.
                let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
                if self.gate.load(Ordering::Acquire) != CLOSED {
                    continue;
                }
                w.push(std::thread::current());
                queued = true;
            }
            // Spurious returns only loop again.
            std::thread::park();
        }
    }

    fn open(&self, at: Instant) {
        let _ = self.at.set(at);
        self.set_gate(OPEN);
    }

    fn stop(&self, level: u8) {
        self.stop.fetch_max(level, Ordering::Relaxed);
        self.set_gate(CANCELLED);
    }

    /// Leave the closed state for `to` (once: a started run is not
    /// cancelled), then wake every parked worker.
    fn set_gate(&self, to: u8) {
        let _ = self.gate.compare_exchange(CLOSED, to, Ordering::AcqRel, Ordering::Acquire);
        let parked = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner()));
        for t in parked {
            t.unpark();
        }
    }
}

/// Report buffers on their way back to their workers.
type Spares = Arc<Mutex<HashMap<(u32, u32), Sender<Box<IntervalReport>>>>>;

/// The coordinator's end of an in-process agent.
pub struct LocalLink {
    to_agent: Sender<ToAgent>,
    from_agent: Receiver<FromAgent>,
    spares: Spares,
    thread: Option<JoinHandle<()>>,
    /// Why the agent could not start, said once as its first message.
    failed: Option<String>,
    /// Workers were abandoned: the agent thread (which waits for them) is
    /// let go rather than joined.
    detach: bool,
}

/// Start an in-process agent whose engines come from `resolver`.
pub fn spawn_local(resolver: Arc<dyn Resolver>) -> LocalLink {
    let (to_agent, inbox) = mpsc::channel();
    // Bounded, so workers cannot run arbitrarily far ahead of a stalled
    // coordinator; room for a few seconds of reports from every worker.
    let (outbox, from_agent) = mpsc::sync_channel(4096);
    let spares: Spares = Arc::default();
    let agent = LocalAgent { resolver, outbox, spares: spares.clone(), run: None, verify: Arc::default(), sampler: None };
    let thread = std::thread::Builder::new().name("sb-agent".into()).spawn(move || agent.serve(inbox));
    match thread {
        Ok(t) => LocalLink { to_agent, from_agent, spares, thread: Some(t), failed: None, detach: false },
        // No agent thread: the link says why, then reports itself closed.
        Err(e) => {
            let (to_agent, _) = mpsc::channel();
            let (_, from_agent) = mpsc::sync_channel(1);
            let failed = Some(format!("could not start the agent thread ({e}); raise the thread limit (ulimit -u)"));
            LocalLink { to_agent, from_agent, spares, thread: None, failed, detach: false }
        }
    }
}

impl AgentLink for LocalLink {
    fn name(&self) -> &str {
        "local agent"
    }

    fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed> {
        if self.failed.is_some() {
            return Ok(());
        }
        self.to_agent.send(msg).map_err(|_| LinkClosed)
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<FromAgent>, LinkClosed> {
        if let Some(message) = self.failed.take() {
            return Ok(Some(FromAgent::Failed { message }));
        }
        match self.from_agent.recv_timeout(timeout) {
            Ok(m) => Ok(Some(m)),
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(LinkClosed),
        }
    }

    fn recycle(&mut self, report: Box<IntervalReport>) {
        let spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = spares.get(&(report.job, report.worker)) {
            let _ = tx.send(report);
        }
    }

    fn abandon_workers(&mut self) {
        self.detach = true;
    }
}

impl Drop for LocalLink {
    fn drop(&mut self) {
        // Closing our end of the inbox ends the agent's loop; closing the
        // outbox first means no worker blocks on a report nobody will read.
        let (_, closed) = mpsc::sync_channel(1);
        drop(std::mem::replace(&mut self.from_agent, closed));
        let (dead, _) = mpsc::channel();
        self.to_agent = dead;
        // A detached agent still stops its workers (Abort) and joins them
        // on its own thread, which the process does not wait for.
        if let Some(t) = self.thread.take().filter(|_| !self.detach) {
            let _ = t.join();
        }
    }
}

/// The current assignment: its control, its per-job stops and its worker threads.
struct Run {
    control: Arc<RunControl>,
    job_stops: HashMap<u32, Arc<AtomicBool>>,
    threads: Vec<JoinHandle<()>>,
}

/// Why an agent that runs load signals no process.
pub const REFUSE_SIGNALS: &str =
    "an agent that runs load signals no process: a process fault goes to a watched host (--watch; `storbench agent --monitor --allow-signal NAME`)";

struct LocalAgent {
    resolver: Arc<dyn Resolver>,
    outbox: SyncSender<FromAgent>,
    spares: Spares,
    run: Option<Run>,
    /// Acknowledged writes of every verified target, kept across the run's groups.
    verify: Arc<crate::verify::VerifyTables>,
    /// The host's seconds, from the first start that asked for them.
    sampler: Option<crate::telemetry::Sampler>,
}

impl LocalAgent {
    /// Answer the coordinator until it hangs up (or speaks another version).
    fn serve(mut self, inbox: Receiver<ToAgent>) {
        let mut greeted = false;
        while let Ok(msg) = inbox.recv() {
            let fatal = match msg {
                ToAgent::Hello(h) => self.hello(&h).map(|_| greeted = true).err(),
                _ if !greeted => Some("the coordinator sent a message before Hello".to_string()),
                ToAgent::Assign(a) => {
                    self.assign(a);
                    None
                }
                ToAgent::Start { at_unix_ns, telemetry } => {
                    let at = instant_of(at_unix_ns);
                    self.with_run(|c| c.open(at));
                    if telemetry {
                        self.sample_from(at);
                    }
                    None
                }
                ToAgent::Stop => {
                    self.with_run(|c| c.stop(STOPPING));
                    None
                }
                ToAgent::Abort => {
                    self.with_run(|c| c.stop(ABORTING));
                    None
                }
                ToAgent::StopJob { job } => {
                    if let Some(stop) = self.run.as_ref().and_then(|r| r.job_stops.get(&job)) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    None
                }
                ToAgent::Ping { sent_unix_ns } => {
                    let _ = self.outbox.send(FromAgent::Pong { sent_unix_ns, agent_unix_ns: protocol::unix_now_ns() });
                    None
                }
                // Only a watched host's monitor signals its processes.
                ToAgent::Signal { id, process, .. } => {
                    let error = Some(REFUSE_SIGNALS.to_string());
                    let _ = self.outbox.send(FromAgent::Signalled { id: Some(id), process, answer: String::new(), error });
                    None
                }
                // Preparing and cleaning up targets is the remote agent's
                // service around this one (the coordinator prepares for it here).
                ToAgent::Prepare(_) | ToAgent::Finish { .. } => Some("this agent runs prepared jobs only".to_string()),
            };
            if let Some(message) = fatal {
                let _ = self.outbox.send(FromAgent::Failed { message });
                break;
            }
        }
        // The coordinator is gone (or refused): stop whatever still runs.
        self.with_run(|c| c.stop(ABORTING));
        self.sampler = None;
        self.finish_run();
        self.verify.flush();
    }

    /// The host's seconds count from this start: the sampler starts with
    /// the first group and counts again from each later one.
    fn sample_from(&mut self, at: Instant) {
        match &self.sampler {
            Some(s) => s.restart(at),
            None => {
                self.sampler = crate::telemetry::Sampler::start(at, storbench_model::telemetry::SourceKind::Client, self.outbox.clone())
            }
        }
    }

    fn hello(&self, h: &Hello) -> Result<(), String> {
        h.check().map_err(|e| e.to_string())?;
        self.outbox.send(FromAgent::Hello(Hello::ours("local agent"))).map_err(|_| "the coordinator hung up".to_string())
    }

    fn with_run(&self, f: impl FnOnce(&RunControl)) {
        if let Some(run) = &self.run {
            f(&run.control);
        }
    }

    /// Wait for the workers of the previous assignment.
    fn finish_run(&mut self) {
        if let Some(run) = self.run.take() {
            for t in run.threads {
                let _ = t.join();
            }
        }
    }

    /// Start every worker of the assignment; each reports Ready (or Done with
    /// its failure) and waits for Start.
    fn assign(&mut self, a: Assignment) {
        self.finish_run();
        let control = Arc::new(RunControl::new().counting(&a.workers));
        let mut threads = Vec::new();
        let jobs: HashMap<u32, Arc<JobShare>> = a.jobs.into_iter().map(|j| (j.job, Arc::new(j))).collect();
        // fio's wait_for: the job of that name in this assignment (one of an earlier group is done).
        let waitee = |share: &JobShare| share.spec.wait_for.as_ref().and_then(|n| jobs.values().find(|j| j.spec.name == *n)).map(|j| j.job);
        let job_stops: HashMap<u32, Arc<AtomicBool>> = jobs.keys().map(|j| (*j, Arc::default())).collect();
        for id in a.workers {
            let (Some(share), Some(stop)) = (jobs.get(&id.job).cloned(), job_stops.get(&id.job).cloned()) else {
                control.finished(id.job);
                self.fail_worker(id, format!("assigned a worker of job {} that the assignment does not describe", id.job));
                continue;
            };
            let waits = waitee(&share);
            match self.spawn_worker(id, share, &control, stop, waits) {
                Ok(t) => threads.push(t),
                Err(message) => {
                    control.finished(id.job);
                    self.fail_worker(id, message)
                }
            }
        }
        self.run = Some(Run { control, job_stops, threads });
    }

    fn spawn_worker(
        &self,
        id: WorkerId,
        share: Arc<JobShare>,
        control: &Arc<RunControl>,
        job_stop: Arc<AtomicBool>,
        waits: Option<u32>,
    ) -> Result<JoinHandle<()>, String> {
        let (engine, config) = self.resolver.engine(&share)?;
        let (spare_tx, spare_rx) = mpsc::channel();
        self.spares.lock().unwrap_or_else(|e| e.into_inner()).insert((id.job, id.worker), spare_tx);
        let link = WorkerLink { tx: self.outbox.clone(), spare: spare_rx, control: control.clone(), job_stop, verify: self.verify.clone() };
        let name = format!("sb-{}-{}", share.spec.name.chars().take(8).collect::<String>(), id.worker);
        std::thread::Builder::new()
            .name(name)
            .spawn(move || worker_main(id, share, engine, config, link, waits))
            .map_err(|e| format!("could not start a worker thread ({e}); lower numjobs or raise the thread limit (ulimit -u)"))
    }

    /// A worker that never started still ends, so the coordinator is not
    /// left waiting (the agent could not set it up: the system's fault).
    fn fail_worker(&self, id: WorkerId, error: String) {
        let _ = self.outbox.send(FromAgent::Done(WorkerDone::failed_in(id, error, SET_UP_FAILED)));
    }
}

/// A worker the agent could not set up (no engine for it, no thread, no
/// CPU binding).
const SET_UP_FAILED: Failure = Failure { fault: Fault::System, stage: Some(Stage::SetUp) };

/// A worker thread: set up, say Ready, wait for Start (and for the job its
/// job waits for), run, say Done. A panic in any of it still ends in Done
/// (with the panic's message), so the coordinator is never left waiting for
/// a worker that is gone.
fn worker_main(
    id: WorkerId,
    share: Arc<JobShare>,
    engine: &'static dyn EngineFactory,
    config: Arc<dyn EngineConfig>,
    link: WorkerLink,
    waits: Option<u32>,
) {
    let tx = link.tx.clone();
    let run_control = link.control.clone();
    let body = std::panic::AssertUnwindSafe(|| {
        let tx = link.tx.clone();
        let control = link.control.clone();
        // Bound before set-up, so the worker's buffers follow its memory policy.
        if let Err(error) = share.spec.placement.as_ref().map_or(Ok(()), |p| crate::placement::bind(p, id.worker)) {
            return WorkerDone::failed_in(id, error, SET_UP_FAILED);
        }
        match Worker::set_up(share, id.worker, engine, config, link) {
            Err(error) => {
                let (words, failure) = error.in_stage(Stage::SetUp).reported();
                WorkerDone::failed_in(id, words, failure)
            }
            Ok(mut w) => {
                if let Err(error) = w.prefill() {
                    return w.abandoned(error.in_stage(Stage::Prefill));
                }
                let _ = tx.send(FromAgent::Ready(id));
                let Some(group_at) = control.wait_start() else { return w.cancelled() };
                // Start together (a start in the future is waited for), then
                // after the job's own delay and the end of the job it waits
                // for; a stop meanwhile cancels.
                let at = group_at + w.start_delay();
                if !wait_until(at, &control) || !waits.is_none_or(|job| control.wait_job(job)) {
                    return w.cancelled();
                }
                // A job that waited starts its clock when the wait ended.
                let at = match waits {
                    Some(_) => {
                        w.waited();
                        at.max(Instant::now())
                    }
                    None => at,
                };
                let mut done = w.run(crate::clock::Clock::at(at));
                done.start_ns = at.duration_since(group_at).as_nanos() as u64;
                done
            }
        }
    });
    let done = std::panic::catch_unwind(body).unwrap_or_else(|p| {
        let what = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default();
        let bug = Failure { fault: Fault::System, stage: None };
        WorkerDone::failed_in(id, format!("the worker failed unexpectedly (a bug; please report it): {what}"), bug)
    });
    run_control.finished(id.job);
    let _ = tx.send(FromAgent::Done(done));
}

/// Sleep until `at` in short slices, so a stop is heard within 50 ms; false
/// when the run was stopped first.
fn wait_until(at: Instant, control: &RunControl) -> bool {
    loop {
        if control.stopping() {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// The local instant of a Unix time (a start slightly in the past is now).
pub fn instant_of(at_unix_ns: u64) -> Instant {
    let now = Instant::now();
    let now_unix = protocol::unix_now_ns();
    if at_unix_ns >= now_unix {
        now + Duration::from_nanos(at_unix_ns - now_unix)
    } else {
        now.checked_sub(Duration::from_nanos(now_unix - at_unix_ns)).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoEngines;
    impl Resolver for NoEngines {
        fn engine(&self, _: &JobShare) -> Result<(&'static dyn EngineFactory, Arc<dyn EngineConfig>), String> {
            Err("none".into())
        }
    }

    #[test]
    fn an_agent_refuses_a_coordinator_of_another_protocol_version() {
        let mut link = spawn_local(Arc::new(NoEngines));
        let mut hello = Hello::ours("coordinator");
        hello.protocol += 1;
        link.send(ToAgent::Hello(hello)).unwrap();
        match link.recv(Duration::from_secs(10)).unwrap() {
            Some(FromAgent::Failed { message }) => {
                assert!(message.contains("run protocol version") && message.contains("same storbench version"), "{message}")
            }
            other => panic!("expected a failure, got {other:?}"),
        }
        assert_eq!(link.recv(Duration::from_secs(10)).err(), Some(LinkClosed), "the agent hangs up");
    }

    /// A worker whose prefill the store refuses says so in its Done: the
    /// storage's fault, in its prefill, with the words it always had.
    #[test]
    fn a_failed_worker_says_whose_fault_and_in_which_stage() {
        let spec = storbench_workload::options::spec_from([
            ("name", "p"),
            ("ioengine", "memory"),
            ("store", "agent-failure-stage"),
            ("objects", "8"),
            ("object_size", "4k"),
            ("rw", "read"),
            ("prefill", "1"),
            ("fail_every", "1"),
            ("fail_ops", "create"),
            ("number_ios", "8"),
        ])
        .unwrap();
        let plan = crate::build_plan(vec![spec]).unwrap().prepare(&|| false, &mut |_| {}).unwrap();
        let mut link = crate::local_agent(&plan);
        crate::handshake(&mut link).unwrap();
        link.send(ToAgent::Assign(Assignment::all(vec![plan.jobs[0].share.clone()]))).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let done = loop {
            assert!(Instant::now() < deadline, "no Done within 20 s");
            if let Some(FromAgent::Done(d)) = link.recv(Duration::from_millis(200)).unwrap() {
                break d;
            }
        };
        let error = done.error.unwrap_or_default();
        assert!(
            error.starts_with("prefill (")
                && error.contains("of its objects in the store when it stopped)")
                && error.contains("create failed: EIO"),
            "{error}"
        );
        assert_eq!(done.failure, Some(Failure { fault: Fault::Storage, stage: Some(Stage::Prefill) }));
    }

    #[test]
    fn stop_before_start_cancels_the_gate_and_start_after_stop_does_not_reopen_it() {
        let c = RunControl::new();
        c.stop(STOPPING);
        assert!(c.stopping() && !c.aborting());
        c.open(Instant::now());
        assert!(c.wait_start().is_none());
        c.stop(ABORTING);
        assert!(c.aborting());
    }
}
