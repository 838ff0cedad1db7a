//! The storage cluster beside a run: its own counters read once a second on
//! the run's axis (a telemetry source of kind `cluster`), and the faults a
//! run injects at times on that axis (`--fault 5s:osd-out:2`).
//!
//! Both ride on the run's link ([`ClusterLink`] wraps any [`AgentLink`],
//! local or a fleet's): the first `Start` it carries is second 0, samples
//! come back among the agents' messages, and the faults run on a thread of
//! their own so a slow answer from the cluster delays neither. It knows
//! nothing of any cluster but through `ClusterAdmin`.

use crate::agent::{AgentLink, LinkClosed, Tap};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_engine::{ClusterAdmin, Watched};
use storbench_model::disruption::{FaultAction, FaultEvent, ScheduledFault};
use storbench_model::protocol::{unix_now_ns, FromAgent, ToAgent};
use storbench_model::telemetry::HostSample;

/// How often a waiting thread looks at the stop flag.
const TICK: Duration = Duration::from_millis(20);
/// How long a command fault may run before it is killed.
const EXEC_LIMIT: Duration = Duration::from_secs(60);
/// How long the end of a run waits for a thread inside a cluster call.
const JOIN_WAIT: Duration = Duration::from_secs(2);
/// How long it waits for the faults' thread, which may be putting back in
/// the OSDs the run took out (a monitor command each).
const RESTORE_WAIT: Duration = Duration::from_secs(15);
/// How much of a command's output is kept (the rest is read and dropped).
const OUTPUT_KEPT: usize = 64 * 1024;

/// What the faults' thread did so far, shared as it happens: the end of
/// the run reads it even when the thread is inside a call that hangs.
#[derive(Default)]
struct FaultLog {
    events: Vec<FaultEvent>,
    /// Faults of the schedule taken up (done, or being done).
    taken: usize,
    /// The one being carried out now.
    current: Option<ScheduledFault>,
    /// OSDs this run took out and has not put back in.
    out: BTreeSet<u32>,
    /// NICs this run shaped (nftables, netem) and has not restored.
    shaped: crate::netem::Shaped,
    /// Processes this run stopped and has not continued.
    stopped: crate::procs::Stopped,
    /// On each watched host, what this run stopped there and has not
    /// continued, as the faults named it (the host's monitor continues
    /// them when the run ends).
    remote: BTreeMap<String, BTreeSet<String>>,
    /// Hears of each event as it is recorded (`--prometheus`).
    tap: Option<Arc<dyn Tap>>,
}

impl FaultLog {
    fn record(&mut self, e: FaultEvent) {
        if let Some(t) = &self.tap {
            t.fault(&e);
        }
        self.events.push(e);
    }
}

/// Processes on other machines, signalled through their links: the
/// watched hosts' monitors (`proc-stop:NAME@HOST`).
pub trait RemoteProcs: Send + Sync {
    /// Stop or continue `process` on `host`: the host's answer, or why not
    /// (refused by it, gone, silent for some seconds, or `give_up`).
    fn signal(&self, host: &str, process: &str, stop: bool, give_up: &dyn Fn() -> bool) -> Result<String, String>;
    /// What `host`'s monitor continued on its own as the run ended (each
    /// process the run stopped there and left stopped, and how it went);
    /// `None`: the host did not say (lost before the end).
    fn ended(&self, host: &str) -> Option<Vec<(String, Result<String, String>)>>;
}

/// What goes beside the run: a cluster and exporters to watch, and faults
/// (the ones that go through the cluster need `injector`, those on
/// watched hosts `remote`).
#[derive(Default)]
pub struct ClusterSetup {
    /// Each sampled once a second on a thread of its own (telemetry on), so
    /// a slow one delays none of the others.
    pub watch: Vec<Box<dyn Watched>>,
    /// Carries out the cluster's faults (a connection of its own).
    pub injector: Option<Box<dyn ClusterAdmin>>,
    pub faults: Vec<ScheduledFault>,
    /// Reaches the watched hosts' processes.
    pub remote: Option<Arc<dyn RemoteProcs>>,
    /// Hears of each fault's outcome as it comes (`--prometheus`).
    pub tap: Option<Arc<dyn Tap>>,
}

impl ClusterSetup {
    pub fn is_empty(&self) -> bool {
        self.watch.is_empty() && self.faults.is_empty()
    }
}

/// The run's link with the cluster beside it.
pub struct ClusterLink<'a> {
    inner: &'a mut dyn AgentLink,
    setup: Option<ClusterSetup>,
    samples: Option<Receiver<HostSample>>,
    samplers: Vec<JoinHandle<()>>,
    faulter: Option<JoinHandle<()>>,
    log: Arc<Mutex<FaultLog>>,
    stop: Arc<AtomicBool>,
    /// Second 0 (Unix ns), once the first `Start` went out.
    zero: Option<u64>,
    faults: Vec<ScheduledFault>,
    remote: Option<Arc<dyn RemoteProcs>>,
}

impl<'a> ClusterLink<'a> {
    pub fn new(inner: &'a mut dyn AgentLink, setup: ClusterSetup) -> ClusterLink<'a> {
        let (faults, remote) = (setup.faults.clone(), setup.remote.clone());
        let log = FaultLog { tap: setup.tap.clone(), ..FaultLog::default() };
        ClusterLink {
            inner,
            setup: Some(setup),
            samples: None,
            samplers: Vec::new(),
            faulter: None,
            log: Arc::new(Mutex::new(log)),
            stop: Arc::new(AtomicBool::new(false)),
            zero: None,
            faults,
            remote,
        }
    }

    /// The run is over: sampling stops, faults not yet due are not carried
    /// out (listed as not reached), the OSDs the run took out are put back
    /// in, and what each fault did is returned.
    pub fn finish(mut self) -> Vec<FaultEvent> {
        self.stop.store(true, Ordering::Release);
        for h in std::mem::take(&mut self.samplers) {
            join_within(h, JOIN_WAIT);
        }
        if let Some(h) = self.faulter.take() {
            join_within(h, RESTORE_WAIT);
        }
        // The faults' thread restores the NICs and thaws the processes as it
        // ends; one still stuck in a cluster call leaves them to this thread
        // (nft, tc and signals are local).
        let zero = self.zero;
        restore_local(zero.unwrap_or_else(unix_now_ns), &self.log);
        let now = zero.map_or(0.0, |z| unix_now_ns().saturating_sub(z) as f64 / 1e9);
        continued_by_hosts(now, self.remote.as_deref(), &self.log);
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        // Heard of once: a call still going would report its outcome too.
        let tap = log.tap.take();
        let mut events = log.events.clone();
        let recorded = events.len();
        if let Some(f) = &log.current {
            events.push(FaultEvent {
                at_s: f.at.as_secs_f64(),
                done_s: f.at.as_secs_f64(),
                action: f.action.clone(),
                answer: String::new(),
                error: Some("outcome unknown: still being carried out when the run ended".into()),
                skipped: false,
                restores: false,
            });
        }
        for id in &log.out {
            let why = format!("NOT put back in: the cluster did not answer in time; run `ceph osd in {id}`");
            events.push(FaultEvent::undo(now, FaultAction::OsdIn(*id), Err(why)));
        }
        for f in self.faults.iter().skip(log.taken) {
            let why = match zero {
                Some(_) => "not carried out: the run ended first",
                None => "not carried out: the run never started",
            };
            events.push(FaultEvent {
                at_s: f.at.as_secs_f64(),
                done_s: f.at.as_secs_f64(),
                action: f.action.clone(),
                answer: String::new(),
                error: Some(why.into()),
                skipped: true,
                restores: false,
            });
        }
        if let Some(t) = &tap {
            events[recorded..].iter().for_each(|e| t.fault(e));
        }
        events
    }

    /// Second 0 is where the run's link started its first group.
    fn begin(&mut self, zero: u64) {
        self.zero = Some(zero);
        let Some(setup) = self.setup.take() else { return };
        if !setup.watch.is_empty() {
            let (tx, rx) = channel();
            self.samples = Some(rx);
            for watched in setup.watch {
                let (stop, tx) = (self.stop.clone(), tx.clone());
                let thread = std::thread::Builder::new().name("watch".into()).spawn(move || sample(watched, zero, tx, &stop));
                self.samplers.extend(thread.ok());
            }
        }
        if !setup.faults.is_empty() {
            let stop = self.stop.clone();
            let hands = Hands { injector: setup.injector, remote: setup.remote };
            let (faults, log) = (setup.faults, self.log.clone());
            self.faulter = std::thread::Builder::new().name("faults".into()).spawn(move || inject(faults, hands, zero, &stop, &log)).ok();
        }
    }
}

impl Drop for ClusterLink<'_> {
    /// A run that ends without `finish` (a panic) still leaves no NIC cut
    /// or delayed and no process stopped; after `finish` there is nothing
    /// left to restore.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        restore_local(self.zero.unwrap_or_else(unix_now_ns), &self.log);
    }
}

impl AgentLink for ClusterLink<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed> {
        let start = match &msg {
            ToAgent::Start { at_unix_ns, .. } if self.zero.is_none() => Some(*at_unix_ns),
            _ => None,
        };
        let sent = self.inner.send(msg);
        if let Some(at) = start {
            let given = self.inner.started_at().unwrap_or(at);
            self.begin(given);
        }
        sent
    }

    fn started_at(&self) -> Option<u64> {
        self.inner.started_at()
    }

    fn recycle(&mut self, report: Box<storbench_metrics::IntervalReport>) {
        self.inner.recycle(report);
    }

    fn abandon_workers(&mut self) {
        self.inner.abandon_workers();
    }

    /// A cluster second as soon as it is here, else the run's link's next
    /// message, within `timeout` in all.
    fn recv(&mut self, timeout: Duration) -> Result<Option<FromAgent>, LinkClosed> {
        let Some(rx) = &self.samples else { return self.inner.recv(timeout) };
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(s) = rx.try_recv() {
                return Ok(Some(FromAgent::Host(Box::new(s))));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(m) = self.inner.recv(left.min(TICK))? {
                return Ok(Some(m));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }
}

/// Once the run is over, what it did to this machine and did not undo is
/// undone: the NICs it shaped, the processes it stopped.
fn restore_local(zero: u64, log: &Mutex<FaultLog>) {
    restore_nics(zero, log);
    thaw_processes(zero, log);
}

/// Every process this run stopped and did not continue, continued, each
/// an event (or, failing, one saying what is left to do); taken from the
/// log first, as the NICs are.
fn thaw_processes(zero: u64, log: &Mutex<FaultLog>) {
    let lock = || log.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let Some(pid) = lock().stopped.pop_first() else { return };
        let done = crate::procs::thaw(pid);
        let at = unix_now_ns().saturating_sub(zero) as f64 / 1e9;
        let action = FaultAction::ProcCont { process: pid.to_string(), host: None };
        lock().record(FaultEvent::undo(at, action, done.map_err(|e| format!("NOT continued: {e}"))));
    }
}

/// What the run left stopped on the watched hosts, continued by their
/// monitors as the run ended (they said so when it finished): an event for
/// each, or, for a host that never said, one naming what may still be
/// stopped there. A host's monitor answers only for what it stopped, so
/// one the schedule continued under another spelling (its id, its name)
/// gives no event.
fn continued_by_hosts(now: f64, remote: Option<&dyn RemoteProcs>, log: &Mutex<FaultLog>) {
    let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
    let left = std::mem::take(&mut l.remote);
    for (host, processes) in left.into_iter().filter(|(_, p)| !p.is_empty()) {
        let event = |process: String, done| FaultEvent::undo(now, FaultAction::ProcCont { process, host: Some(host.clone()) }, done);
        match remote.and_then(|r| r.ended(&host)) {
            Some(continued) => {
                for (process, done) in continued {
                    let done = done
                        .map(|a| format!("{a} (by {host}'s monitor as the run ended)"))
                        .map_err(|e| format!("NOT continued by {host}'s monitor: {e}"));
                    l.record(event(process, done));
                }
            }
            None => {
                for p in processes {
                    let why =
                        format!("NOT confirmed: {host} did not answer at the run's end; on it, check `{p}` and run `kill -CONT` on it");
                    l.record(event(p, Err(why)));
                }
            }
        }
    }
}

/// The NICs the run shaped and did not restore, restored, each an event
/// (or, failing, one saying what is left to do). Each is taken from the log
/// before it is undone, so two threads ending the run never undo one twice.
fn restore_nics(zero: u64, log: &Mutex<FaultLog>) {
    let lock = || log.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let Some((nic, set)) = lock().shaped.pop_first() else { return };
        let mut one = crate::netem::Shaped::from([(nic.clone(), set)]);
        let done = crate::netem::restore(&nic, &mut one);
        let at = unix_now_ns().saturating_sub(zero) as f64 / 1e9;
        let left = one.get(&nic).copied().unwrap_or(set);
        let done = done.map_err(|e| format!("NOT restored: {e}; {}", crate::netem::undo_hint(&nic, left)));
        lock().record(FaultEvent::undo(at, FaultAction::NetRestore(nic), done));
    }
}

/// Sleep until Unix time `at_ns`, or until the stop flag; false if stopped.
fn wait_until(at_ns: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        let now = unix_now_ns();
        if now >= at_ns {
            return true;
        }
        std::thread::sleep(Duration::from_nanos(at_ns - now).min(TICK));
    }
}

/// Read a watched source at every whole second from `zero`, each reading
/// sent as that second's (a failed reading keeps its second, empty, and
/// says why once).
fn sample(mut admin: Box<dyn Watched>, zero: u64, tx: Sender<HostSample>, stop: &AtomicBool) {
    let (name, kind, (hostname, cpus)) = (admin.name().to_string(), admin.kind(), admin.host());
    let mut said = false;
    let mut k = 1u64;
    loop {
        if !wait_until(zero + k * 1_000_000_000, stop) {
            return;
        }
        let (values, mut notes) = match admin.sample() {
            Ok(v) => (v, Vec::new()),
            Err(e) if !said => {
                said = true;
                (Vec::new(), vec![format!("reading {name} failed at second {k}: {e}")])
            }
            Err(_) => (Vec::new(), Vec::new()),
        };
        notes.extend(admin.notes());
        let s = HostSample {
            source: name.clone(),
            kind,
            hostname: hostname.clone(),
            cpus,
            start: 0,
            t: k as f64,
            duration: 1.0,
            values,
            notes,
            ..HostSample::default()
        };
        if tx.send(s).is_err() {
            return;
        }
        // A reading that took longer than its second leaves the seconds it
        // ran over empty: the next reading is the next second's, not a
        // catch-up one stamped with a second already past.
        let now = unix_now_ns().saturating_sub(zero) / 1_000_000_000;
        k = (k + 1).max(now + 1);
    }
}

/// What carries out the faults that are not this machine's own.
struct Hands {
    /// The cluster's management interface.
    injector: Option<Box<dyn ClusterAdmin>>,
    /// The watched hosts' monitors.
    remote: Option<Arc<dyn RemoteProcs>>,
}

/// A process fault on a watched host, through its monitor; what the run
/// left stopped there is kept in the log for the end of the run.
fn on_host(
    action: &FaultAction,
    host: &str,
    remote: Option<&dyn RemoteProcs>,
    stop: &AtomicBool,
    log: &Mutex<FaultLog>,
) -> Result<String, String> {
    let remote = remote.ok_or_else(|| format!("{host} is no watched host of this run"))?;
    let (process, stopping) = (action.process().unwrap_or_default(), matches!(action, FaultAction::ProcStop { .. }));
    let done = remote.signal(host, process, stopping, &|| stop.load(Ordering::Acquire));
    let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
    let on = l.remote.entry(host.to_string()).or_default();
    // A stop not answered in time may still be carried out: kept too, so a
    // host that never says how its run ended is named for it.
    match (stopping, &done) {
        (true, _) => on.insert(process.to_string()),
        (false, Ok(_)) => on.remove(process),
        (false, Err(_)) => false,
    };
    done
}

/// Carry out each fault at its time, each event logged as it is done. A
/// fault the cluster refused, or a command that failed, is an event with
/// its error: the run goes on, as a client would. Once the run ends, the
/// OSDs it took out and did not put back in are put back in: a benchmark
/// leaves the cluster as it found it.
fn inject(faults: Vec<ScheduledFault>, hands: Hands, zero: u64, stop: &AtomicBool, log: &Mutex<FaultLog>) {
    let lock = || log.lock().unwrap_or_else(|p| p.into_inner());
    let Hands { mut injector, remote } = hands;
    for f in faults {
        if !wait_until(zero + f.at.as_nanos() as u64, stop) {
            break;
        }
        {
            let mut l = lock();
            l.taken += 1;
            l.current = Some(f.clone());
        }
        let done = match (&f.action, injector.as_mut()) {
            (FaultAction::Exec(cmd), _) => exec(cmd, stop),
            // The host's monitor answers; the log is not held meanwhile.
            (action, _) if action.host().is_some() => on_host(action, action.host().unwrap_or_default(), remote.as_deref(), stop, log),
            // Signals take microseconds: held under the lock, so a restore
            // at the run's end never misses one being stopped.
            (FaultAction::ProcStop { process, .. } | FaultAction::ProcCont { process, .. }, _) => {
                crate::procs::signal(process, matches!(f.action, FaultAction::ProcStop { .. }), &mut lock().stopped)
            }
            (action, _) if action.nic().is_some() => {
                let mut shaped = lock().shaped.clone();
                let done = crate::netem::apply(action, &mut shaped);
                lock().shaped = shaped;
                done
            }
            (action, Some(admin)) => admin.inject(action).map_err(|e| e.to_string()),
            (_, None) => Err("no cluster to carry it out".into()),
        };
        let done_s = unix_now_ns().saturating_sub(zero) as f64 / 1e9;
        let mut l = lock();
        l.current = None;
        match (&f.action, done.is_ok()) {
            (FaultAction::OsdOut(id), true) => l.out.insert(*id),
            (FaultAction::OsdIn(id), true) => l.out.remove(id),
            _ => false,
        };
        let (answer, error) = match done {
            Ok(a) => (a, None),
            Err(e) => (String::new(), Some(e)),
        };
        l.record(FaultEvent { at_s: f.at.as_secs_f64(), done_s, action: f.action, answer, error, skipped: false, restores: false });
    }
    let undone = || !lock().out.is_empty() || !lock().shaped.is_empty() || !lock().stopped.is_empty();
    while undone() && !stop.load(Ordering::Acquire) {
        std::thread::sleep(TICK);
    }
    restore_local(zero, log);
    let Some(admin) = injector.as_mut() else { return };
    let out: Vec<u32> = lock().out.iter().copied().collect();
    for id in out {
        let action = FaultAction::OsdIn(id);
        let done = admin.inject(&action).map_err(|e| e.to_string());
        let at = unix_now_ns().saturating_sub(zero) as f64 / 1e9;
        let mut l = lock();
        if done.is_ok() {
            l.out.remove(&id);
        }
        l.record(FaultEvent::undo(at, action, done.map_err(|e| format!("{e}; run `ceph osd in {id}`"))));
    }
}

/// `sh -c COMMAND` in a process group of its own, bounded: the group is
/// killed after [`EXEC_LIMIT`] or when the run ends. Its status and the
/// first words it printed. Its output is read as it comes (a command that
/// prints more than a pipe holds is not stalled), and what it left running
/// in the background once `sh` returned (a daemon it restarted) is left
/// running, its output no longer waited for.
fn exec(cmd: &str, stop: &AtomicBool) -> Result<String, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let (tx, rx) = channel();
    for pipe in [child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>), child.stderr.take().map(|p| Box::new(p) as _)]
        .into_iter()
        .flatten()
    {
        let tx = tx.clone();
        let _ = std::thread::Builder::new().name("fault-output".into()).spawn(move || forward(pipe, &tx));
    }
    drop(tx);
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if began.elapsed() > EXEC_LIMIT || stop.load(Ordering::Acquire) => {
                // The whole group: sh and whatever it started.
                // SAFETY: kill(2) with the group's id (the child's pid, as
                // process_group(0) made it), no memory involved.
                unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
                let _ = child.wait();
                return Err(format!(
                    "killed after {:.1} s (the limit is {} s, or the run ended)",
                    began.elapsed().as_secs_f64(),
                    EXEC_LIMIT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(TICK),
            Err(e) => return Err(format!("waiting for it: {e}")),
        }
    };
    // Each pipe's reader ends when every writer is gone; a background child
    // still holding one is not waited for past a moment.
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_millis(500);
    while let Ok(part) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        out.extend(part);
    }
    let said: String = String::from_utf8_lossy(&out).trim().chars().take(200).collect();
    match status.success() {
        true => Ok(said),
        false => Err(format!("{status}{}", if said.is_empty() { String::new() } else { format!(": {said}") })),
    }
}

/// What a pipe gives, passed on as it comes until it closes: the first
/// [`OUTPUT_KEPT`] bytes, the rest read and dropped (so the writer never
/// blocks on a full pipe).
fn forward(mut pipe: Box<dyn std::io::Read + Send>, tx: &Sender<Vec<u8>>) {
    let mut sent = 0;
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf) {
        if n == 0 {
            return;
        }
        let keep = n.min(OUTPUT_KEPT.saturating_sub(sent));
        if keep > 0 && tx.send(buf[..keep].to_vec()).is_err() {
            return;
        }
        sent += keep;
    }
}

/// Join a thread if it ends within `wait` (one inside a cluster call that
/// hangs is left to end on its own).
fn join_within<T: Send + 'static>(h: JoinHandle<T>, wait: Duration) -> Option<T> {
    let began = Instant::now();
    while !h.is_finished() {
        if began.elapsed() > wait {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    h.join().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::telemetry::{SourceKind, Value};

    /// A cluster that counts what it is asked.
    struct Fake {
        said: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Watched for Fake {
        fn name(&self) -> &str {
            "fake"
        }
        fn sample(&mut self) -> Result<Vec<Value>, storbench_engine::EngineError> {
            Ok(vec![Value::new("cluster_degraded_objects", &[], 3.0)])
        }
    }

    impl ClusterAdmin for Fake {
        fn inject(&mut self, action: &FaultAction) -> Result<String, storbench_engine::EngineError> {
            self.said.lock().unwrap().push(action.words());
            Ok(format!("done {}", action.words()))
        }
    }

    #[test]
    fn faults_run_at_their_times_and_those_not_reached_are_listed() {
        let said = Arc::new(std::sync::Mutex::new(Vec::new()));
        let faults = vec![
            ScheduledFault::parse("100ms:osd-out:1").unwrap(),
            ScheduledFault::parse("200ms:exec:echo hi").unwrap(),
            ScheduledFault::parse("300ms:exec:exit 3").unwrap(),
            ScheduledFault::parse("60s:osd-in:1").unwrap(),
        ];
        let stop = AtomicBool::new(false);
        let zero = unix_now_ns();
        let injector: Box<dyn ClusterAdmin> = Box::new(Fake { said: said.clone() });
        let log = Mutex::new(FaultLog::default());
        std::thread::scope(|s| {
            let h = s.spawn(|| inject(faults, Hands { injector: Some(injector), remote: None }, zero, &stop, &log));
            std::thread::sleep(Duration::from_millis(600));
            assert_eq!(log.lock().unwrap().events.len(), 3, "logged as done, before the run ends");
            stop.store(true, Ordering::Release);
            h.join().unwrap()
        });
        // The OSD the run took out is put back in once it ends.
        assert_eq!(said.lock().unwrap().as_slice(), ["osd-out:1", "osd-in:1"]);
        let log = log.into_inner().unwrap();
        assert_eq!((log.taken, log.out.len()), (3, 0));
        let stopper = log.events;
        assert_eq!(stopper.len(), 4, "the 60 s fault was not reached, the restore added: {stopper:?}");
        assert!(stopper[3].restores && stopper[3].action == FaultAction::OsdIn(1) && stopper[3].error.is_none(), "{:?}", stopper[3]);
        assert!(stopper[0].done_s >= 0.1 && stopper[0].done_s < 0.5, "{:?}", stopper[0]);
        assert_eq!((stopper[1].answer.as_str(), &stopper[1].error), ("hi", &None));
        assert!(stopper[2].error.as_deref().is_some_and(|e| e.contains("exit status: 3")), "{:?}", stopper[2]);
    }

    /// Hosts whose monitors answer as scripted: `a` continued what it had
    /// stopped, `b` never said how its run ended.
    struct Hosts;

    impl RemoteProcs for Hosts {
        fn signal(&self, host: &str, process: &str, stop: bool, _: &dyn Fn() -> bool) -> Result<String, String> {
            Ok(format!("{} {process} on {host}", if stop { "stopped" } else { "continued" }))
        }
        fn ended(&self, host: &str) -> Option<Vec<(String, Result<String, String>)>> {
            (host == "a").then(|| vec![("4242".to_string(), Ok("continued process 4242".to_string()))])
        }
    }

    #[test]
    fn what_a_run_left_stopped_on_a_host_is_said_undone_by_its_monitor_or_named_when_the_host_never_said() {
        let log = Mutex::new(FaultLog::default());
        let stop = AtomicBool::new(false);
        for (action, host) in [("proc-stop:osd", "a"), ("proc-stop:osd", "b"), ("proc-stop:mds", "b"), ("proc-cont:mds", "b")] {
            let f = ScheduledFault::parse(&format!("1s:{action}@{host}")).unwrap();
            on_host(&f.action, host, Some(&Hosts), &stop, &log).unwrap();
        }
        continued_by_hosts(9.0, Some(&Hosts), &log);
        let events = log.into_inner().unwrap().events;
        let said: Vec<(String, &str)> = events.iter().map(|e| (e.action.words(), e.outcome())).collect();
        assert_eq!(said, [("proc-cont:4242@a".to_string(), "undone"), ("proc-cont:osd@b".to_string(), "undo_failed")]);
        assert!(events[0].answer.contains("by a's monitor"), "{:?}", events[0]);
        assert!(events[1].error.as_deref().unwrap().contains("b did not answer at the run's end"), "{:?}", events[1]);
        let e = on_host(&FaultAction::ProcStop { process: "osd".into(), host: Some("c".into()) }, "c", None, &stop, &Mutex::default());
        assert!(e.unwrap_err().contains("c is no watched host"));
    }

    #[test]
    fn a_command_is_not_held_by_its_output_nor_by_what_it_leaves_running() {
        let stop = AtomicBool::new(false);
        let t = Instant::now();
        assert_eq!(exec("echo hi; sleep 3 &", &stop).as_deref(), Ok("hi"), "a background child holding stdout");
        let big = exec("head -c 300000 /dev/zero | tr '\\0' x", &stop).unwrap();
        assert_eq!(big.len(), 200, "more than a pipe holds, the first words kept");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        stop.store(true, Ordering::Release);
        let t = Instant::now();
        let e = exec("sleep 30 & sleep 30", &stop).unwrap_err();
        assert!(e.starts_with("killed after") && t.elapsed() < Duration::from_secs(2), "{e}");
    }

    #[test]
    fn a_cluster_second_is_sampled_on_the_runs_axis() {
        let (tx, rx) = channel();
        let stop = AtomicBool::new(false);
        let zero = unix_now_ns();
        std::thread::scope(|s| {
            s.spawn(|| sample(Box::new(Fake { said: Default::default() }), zero, tx, &stop));
            let first = rx.recv_timeout(Duration::from_secs(3)).unwrap();
            stop.store(true, Ordering::Release);
            assert_eq!((first.t, first.kind, first.source.as_str()), (1.0, SourceKind::Cluster, "fake"));
            assert_eq!(first.values[0].value, 3.0);
            assert!(unix_now_ns() - zero >= 1_000_000_000, "read at the second's end");
        });
    }
}
