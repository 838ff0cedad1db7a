//! The storage cluster beside a run: its own counters read once a second on
//! the run's axis (a telemetry source of kind `cluster`), and the faults a
//! run injects at times on that axis (`--fault 5s:osd-out:2`).
//!
//! Both ride on the run's link ([`ClusterLink`] wraps any [`AgentLink`],
//! local or a fleet's): the first `Start` it carries is second 0, samples
//! come back among the agents' messages, and the faults run on a thread of
//! their own so a slow answer from the cluster delays neither. It knows
//! nothing of any cluster but through `ClusterAdmin`.

use crate::agent::{AgentLink, LinkClosed};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_engine::ClusterAdmin;
use storbench_model::disruption::{FaultAction, FaultEvent, ScheduledFault};
use storbench_model::protocol::{unix_now_ns, FromAgent, ToAgent};
use storbench_model::telemetry::{HostSample, SourceKind};

/// How often a waiting thread looks at the stop flag.
const TICK: Duration = Duration::from_millis(20);
/// How long a command fault may run before it is killed.
const EXEC_LIMIT: Duration = Duration::from_secs(60);
/// How long the end of a run waits for a thread inside a cluster call.
const JOIN_WAIT: Duration = Duration::from_secs(2);

/// What goes beside the run: a cluster to watch, and faults (the ones that
/// go through the cluster need `injector`).
#[derive(Default)]
pub struct ClusterSetup {
    /// Sampled once a second (telemetry on).
    pub watch: Option<Box<dyn ClusterAdmin>>,
    /// Carries out the cluster's faults (a connection of its own).
    pub injector: Option<Box<dyn ClusterAdmin>>,
    pub faults: Vec<ScheduledFault>,
}

impl ClusterSetup {
    pub fn is_empty(&self) -> bool {
        self.watch.is_none() && self.faults.is_empty()
    }
}

/// The run's link with the cluster beside it.
pub struct ClusterLink<'a> {
    inner: &'a mut dyn AgentLink,
    setup: Option<ClusterSetup>,
    samples: Option<Receiver<HostSample>>,
    sampler: Option<JoinHandle<()>>,
    faulter: Option<JoinHandle<Vec<FaultEvent>>>,
    stop: Arc<AtomicBool>,
    /// Second 0 (Unix ns), once the first `Start` went out.
    zero: Option<u64>,
    faults: Vec<ScheduledFault>,
}

impl<'a> ClusterLink<'a> {
    pub fn new(inner: &'a mut dyn AgentLink, setup: ClusterSetup) -> ClusterLink<'a> {
        let faults = setup.faults.clone();
        ClusterLink {
            inner,
            setup: Some(setup),
            samples: None,
            sampler: None,
            faulter: None,
            stop: Arc::new(AtomicBool::new(false)),
            zero: None,
            faults,
        }
    }

    /// The run is over: sampling stops, faults not yet due are not carried
    /// out (listed as not reached), and what each fault did is returned.
    pub fn finish(mut self) -> Vec<FaultEvent> {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.sampler.take() {
            join_within(h, JOIN_WAIT);
        }
        let done = self.faulter.take().and_then(|h| join_within(h, JOIN_WAIT)).unwrap_or_default();
        let zero = self.zero;
        let mut events = done;
        for f in self.faults.iter().skip(events.len()) {
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
            });
        }
        events
    }

    /// Second 0 is where the run's link started its first group.
    fn begin(&mut self, zero: u64) {
        self.zero = Some(zero);
        let Some(setup) = self.setup.take() else { return };
        if let Some(admin) = setup.watch {
            let (tx, rx) = channel();
            let stop = self.stop.clone();
            self.samples = Some(rx);
            self.sampler = std::thread::Builder::new().name("cluster-watch".into()).spawn(move || sample(admin, zero, tx, &stop)).ok();
        }
        if !setup.faults.is_empty() {
            let stop = self.stop.clone();
            let (faults, injector) = (setup.faults, setup.injector);
            self.faulter = std::thread::Builder::new().name("faults".into()).spawn(move || inject(faults, injector, zero, &stop)).ok();
        }
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

/// Read the cluster at every whole second from `zero`, each reading sent
/// as that second's (a failed reading keeps its second, empty, and says
/// why once).
fn sample(mut admin: Box<dyn ClusterAdmin>, zero: u64, tx: Sender<HostSample>, stop: &AtomicBool) {
    let name = admin.name().to_string();
    let mut said = false;
    for k in 1u64.. {
        if !wait_until(zero + k * 1_000_000_000, stop) {
            return;
        }
        let (values, notes) = match admin.sample() {
            Ok(v) => (v, Vec::new()),
            Err(e) if !said => {
                said = true;
                (Vec::new(), vec![format!("reading the cluster failed at second {k}: {e}")])
            }
            Err(_) => (Vec::new(), Vec::new()),
        };
        let s = HostSample {
            source: name.clone(),
            kind: SourceKind::Cluster,
            hostname: name.clone(),
            cpus: 0,
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
    }
}

/// Carry out each fault at its time; what each did. A fault the cluster
/// refused, or a command that failed, is an event with its error: the run
/// goes on, as a client would.
fn inject(faults: Vec<ScheduledFault>, mut injector: Option<Box<dyn ClusterAdmin>>, zero: u64, stop: &AtomicBool) -> Vec<FaultEvent> {
    let mut events = Vec::new();
    for f in faults {
        if !wait_until(zero + f.at.as_nanos() as u64, stop) {
            break;
        }
        let done = match (&f.action, injector.as_mut()) {
            (FaultAction::Exec(cmd), _) => exec(cmd, stop),
            (action, Some(admin)) => admin.inject(action).map_err(|e| e.to_string()),
            (_, None) => Err("no cluster to carry it out".into()),
        };
        let done_s = unix_now_ns().saturating_sub(zero) as f64 / 1e9;
        let (answer, error) = match done {
            Ok(a) => (a, None),
            Err(e) => (String::new(), Some(e)),
        };
        events.push(FaultEvent { at_s: f.at.as_secs_f64(), done_s, action: f.action, answer, error, skipped: false });
    }
    events
}

/// `sh -c COMMAND`, bounded: killed after [`EXEC_LIMIT`] or when the run
/// ends. Its status and the first words it printed.
fn exec(cmd: &str, stop: &AtomicBool) -> Result<String, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if began.elapsed() > EXEC_LIMIT || stop.load(Ordering::Acquire) => {
                let _ = child.kill();
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
    let out = child.wait_with_output().map(|o| [o.stdout, o.stderr].concat()).unwrap_or_default();
    let said: String = String::from_utf8_lossy(&out).trim().chars().take(200).collect();
    match status.success() {
        true => Ok(said),
        false => Err(format!("{status}{}", if said.is_empty() { String::new() } else { format!(": {said}") })),
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
    use storbench_model::telemetry::Value;

    /// A cluster that counts what it is asked.
    struct Fake {
        said: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl ClusterAdmin for Fake {
        fn name(&self) -> &str {
            "fake"
        }
        fn sample(&mut self) -> Result<Vec<Value>, storbench_engine::EngineError> {
            Ok(vec![Value::new("cluster_degraded_objects", &[], 3.0)])
        }
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
        let stopper = std::thread::scope(|s| {
            let h = s.spawn(|| inject(faults, Some(injector), zero, &stop));
            std::thread::sleep(Duration::from_millis(600));
            stop.store(true, Ordering::Release);
            h.join().unwrap()
        });
        assert_eq!(said.lock().unwrap().as_slice(), ["osd-out:1"]);
        assert_eq!(stopper.len(), 3, "the 60 s fault was not reached: {stopper:?}");
        assert!(stopper[0].done_s >= 0.1 && stopper[0].done_s < 0.5, "{:?}", stopper[0]);
        assert_eq!((stopper[1].answer.as_str(), &stopper[1].error), ("hi", &None));
        assert!(stopper[2].error.as_deref().is_some_and(|e| e.contains("exit status: 3")), "{:?}", stopper[2]);
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
