//! Watched hosts (`--watch HOST[:PORT],...`): storage servers that join a
//! run only to measure themselves (`storbench agent --monitor`).
//!
//! They connect, greet and authenticate as agents do (the fleet's TLS and
//! token, the same clock measurement), take no share of the jobs and are
//! never waited for. [`WatchedLink`] wraps the run's own link, a local
//! agent or a fleet's: each group's `Start` goes to the watched hosts too
//! (on each one's clock, where the run's link put it), and their seconds
//! come back among the run's as `kind: watched` sources on the same axis.
//! A watched host lost mid-run keeps its seconds so far and is a warning,
//! never a failed run.
//!
//! A watched host's processes are the faults' to stop and continue
//! (`proc-stop:ceph-osd@HOST`) through [`HostSignals`]: the faults' thread
//! sends the `Signal` itself and waits for its answer, which comes back on
//! the host's stream and is passed to it as the run's link reads the
//! stream (it does, every tick, while the run goes on).

use crate::agents::{self, AgentSpec};
use crate::client::{Event, Fleet, Role};
use crate::creds::CoordinatorCreds;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storbench_model::protocol::{self, FromAgent, ToAgent};
use storbench_model::telemetry::SourceKind;
use storbench_model::{AgentInfo, RunResult, Warning};
use storbench_runner::agent::{AgentLink, LinkClosed};
use storbench_runner::disruption::RemoteProcs;
use tokio::sync::mpsc::UnboundedSender;

/// `--watch`'s list: `HOST[:PORT],...` as `--agents` takes it.
pub fn parse(list: &str) -> Result<Vec<AgentSpec>, String> {
    if list.split(',').all(|h| h.trim().is_empty()) {
        return Err(format!("--watch '{list}': no hosts given; give HOST[:PORT],... of hosts running `storbench agent --monitor`"));
    }
    agents::parse_list(list).map_err(|e| format!("--watch: {e}"))
}

/// The watched hosts of a run, connected and greeted.
pub struct Watchers {
    fleet: Fleet,
    /// Why each was lost, if it was.
    lost: Vec<Option<String>>,
    /// Their processes, as the faults reach them.
    signals: Arc<HostSignals>,
}

/// Time a watched host is given to hear a `Start` before it is due.
const START_MARGIN: Duration = Duration::from_millis(100);
/// How often a wait on the run's own link looks at the watched hosts.
const TICK: Duration = Duration::from_millis(20);

impl Watchers {
    /// Connect to every watched host; one error naming each that could not
    /// be used (unreachable, refusing, or an agent that runs load).
    pub fn connect(hosts: Vec<AgentSpec>, creds: CoordinatorCreds, timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Watchers, String> {
        let fleet = Fleet::connect_as(hosts, creds, timeout, Role::Watch, stop)?;
        let lost = vec![None; fleet.agents.len()];
        let signals = Arc::new(HostSignals::of(&fleet));
        Ok(Watchers { fleet, lost, signals })
    }

    /// Before the run: a process fault must name a watched host whose
    /// monitor lets runs signal that command name (a process id is judged
    /// by the host when it is due). One error naming the fault and the fix.
    pub fn check_fault(&self, action: &storbench_model::disruption::FaultAction) -> Result<(), String> {
        let (Some(host), Some(process)) = (action.host(), action.process()) else { return Ok(()) };
        let a = self.fleet.agents.iter().find(|a| a.spec.answers_to(host)).ok_or_else(|| format!("{host} is not under --watch"))?;
        let name = if process.parse::<i32>().is_ok() { "NAME" } else { process };
        let fix = format!("start it with `storbench agent --monitor --allow-signal {name}`");
        match (a.signals.is_empty(), process.parse::<i32>().is_ok() || a.signals.iter().any(|s| s == process)) {
            (true, _) => Err(format!("watched host {} lets no run signal its processes; {fix}", a.spec.name)),
            (false, false) => Err(format!("watched host {} allows signals to {} only; {fix}", a.spec.name, a.signals.join(", "))),
            (false, true) => Ok(()),
        }
    }

    /// How the faults reach the watched hosts' processes.
    pub fn signals(&self) -> Arc<HostSignals> {
        self.signals.clone()
    }

    /// Each watched host as connected: its name, host name, clock offset and round trip.
    pub fn hosts(&self) -> impl Iterator<Item = &AgentInfo> {
        self.fleet.agents.iter().map(|a| &a.info)
    }

    /// The run's link, with the watched hosts beside it.
    pub fn link<'a>(&'a mut self, inner: &'a mut dyn AgentLink) -> WatchedLink<'a> {
        WatchedLink { inner, watchers: self, started: None }
    }

    fn lose(&mut self, i: usize, why: String) {
        if self.lost[i].is_none() {
            self.lost[i] = Some(why);
        }
    }

    /// The run is over: every watched host still there stops sampling and
    /// says so (within the agent timeout; one that does not is left).
    pub fn finish(&mut self) {
        let mut waiting: Vec<usize> = (0..self.lost.len()).filter(|i| self.lost[*i].is_none()).collect();
        waiting.retain(|i| self.fleet.agents[*i].send(ToAgent::Finish { objects_left: Vec::new() }));
        let deadline = Instant::now() + self.fleet.timeout;
        while !waiting.is_empty() && Instant::now() < deadline {
            match self.fleet.next(TICK) {
                Some((i, Event::Msg(FromAgent::Finished { .. }))) => {
                    self.signals.finished(i);
                    waiting.retain(|w| *w != i);
                }
                Some((i, Event::Lost(_))) => waiting.retain(|w| *w != i),
                Some((i, Event::Msg(FromAgent::Signalled { id, process, answer, error }))) => {
                    self.signals.heard(i, id, process, error.map_or(Ok(answer), Err));
                }
                _ => {}
            }
        }
    }

    /// The watched hosts lost during the run, as warnings.
    pub fn annotate(&self, result: &mut RunResult) {
        for (a, lost) in self.fleet.agents.iter().zip(&self.lost) {
            if let Some(reason) = lost {
                result.warnings.push(Warning::WatchedHostLost { host: a.spec.name.clone(), reason: reason.clone() });
            }
        }
    }

    /// A watched host's message in the run's terms: its seconds under its
    /// name as a watched source; a failure or a broken stream loses it.
    fn translate(&mut self, i: usize, ev: Event) -> Option<FromAgent> {
        match ev {
            Event::Msg(FromAgent::Host(mut h)) => {
                h.source = self.fleet.agents[i].spec.name.clone();
                h.kind = SourceKind::Watched;
                Some(FromAgent::Host(h))
            }
            Event::Msg(FromAgent::Signalled { id, process, answer, error }) => {
                self.signals.heard(i, id, process, error.map_or(Ok(answer), Err));
                None
            }
            Event::Msg(FromAgent::Failed { message }) => {
                self.lose(i, message);
                None
            }
            Event::Lost(why) => {
                self.lose(i, why);
                None
            }
            _ => None,
        }
    }

    /// The next message of a watched host already here, if any.
    fn poll(&mut self) -> Option<FromAgent> {
        while let Some((i, ev)) = self.fleet.next(Duration::ZERO) {
            if let Some(m) = self.translate(i, ev) {
                return Some(m);
            }
        }
        None
    }

    /// A group starts at `at` (Unix ns, the coordinator's clock): each
    /// watched host still there samples from then, on its own clock.
    fn start(&mut self, at: u64) {
        for (i, a) in self.fleet.agents.iter().enumerate() {
            if self.lost[i].is_none() {
                let theirs = (at as i128 + a.info.clock_offset_ns as i128).max(0) as u64;
                a.send(ToAgent::Start { at_unix_ns: theirs, telemetry: true });
            }
        }
    }

    /// The latest round trip to a watched host still there.
    fn slowest(&self) -> u64 {
        self.fleet.agents.iter().zip(&self.lost).filter(|(_, l)| l.is_none()).map(|(a, _)| a.info.rtt_ns).max().unwrap_or(0)
    }
}

/// How long the faults' thread waits for a watched host to answer a signal.
const SIGNAL_WAIT: Duration = Duration::from_secs(5);

/// A process's outcome as a host said it.
type Said = Result<String, String>;

/// The watched hosts' processes, as the faults' thread reaches them: it
/// sends a host the `Signal` itself and waits for the answer, which the
/// run's link hands over (`heard`) as it reads that host's stream.
pub struct HostSignals {
    /// Each host's name, as --watch gave it, and how to reach it.
    hosts: Vec<(AgentSpec, UnboundedSender<ToAgent>)>,
    next_id: AtomicU64,
    /// Who waits for the answer to each signal sent.
    waiting: Mutex<HashMap<u64, std::sync::mpsc::Sender<Said>>>,
    /// What each host continued as its run ended.
    continued: Mutex<HashMap<usize, Vec<(String, Said)>>>,
    /// The hosts that said their run finished (after what they continued).
    finished: Mutex<std::collections::HashSet<usize>>,
}

impl HostSignals {
    fn of(fleet: &Fleet) -> HostSignals {
        HostSignals {
            hosts: fleet.agents.iter().map(|a| (a.spec.clone(), a.sender())).collect(),
            next_id: AtomicU64::new(1),
            waiting: Mutex::default(),
            continued: Mutex::default(),
            finished: Mutex::default(),
        }
    }

    fn find(&self, host: &str) -> Option<usize> {
        self.hosts.iter().position(|(spec, _)| spec.answers_to(host))
    }

    /// A host answered a signal (`id`), or continued a process as its run
    /// ended (no id).
    fn heard(&self, host: usize, id: Option<u64>, process: String, said: Said) {
        match id {
            Some(id) => {
                if let Some(tx) = self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id) {
                    let _ = tx.send(said);
                }
            }
            None => self.continued.lock().unwrap_or_else(|p| p.into_inner()).entry(host).or_default().push((process, said)),
        }
    }

    /// A host said its run is over (everything it continued said before).
    fn finished(&self, host: usize) {
        self.finished.lock().unwrap_or_else(|p| p.into_inner()).insert(host);
    }
}

impl RemoteProcs for HostSignals {
    fn signal(&self, host: &str, process: &str, stop: bool, give_up: &dyn Fn() -> bool) -> Result<String, String> {
        let i = self.find(host).ok_or_else(|| format!("{host} is not under --watch"))?;
        let (spec, to) = &self.hosts[i];
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = std::sync::mpsc::channel();
        let forget = || self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
        if to.send(ToAgent::Signal { id, process: process.to_string(), stop }).is_err() {
            forget();
            return Err(format!("watched host {} is gone", spec.name));
        }
        let deadline = Instant::now() + SIGNAL_WAIT;
        loop {
            match rx.recv_timeout(TICK) {
                Ok(said) => return said.map_err(|e| format!("{}: {e}", spec.name)),
                Err(_) if Instant::now() < deadline && !give_up() => continue,
                Err(_) => {
                    forget();
                    return Err(match give_up() {
                        true => format!("the run ended before watched host {} answered", spec.name),
                        false => format!("watched host {} did not answer within {} s", spec.name, SIGNAL_WAIT.as_secs()),
                    });
                }
            }
        }
    }

    fn ended(&self, host: &str) -> Option<Vec<(String, Said)>> {
        let i = self.find(host)?;
        if !self.finished.lock().unwrap_or_else(|p| p.into_inner()).contains(&i) {
            return None;
        }
        Some(self.continued.lock().unwrap_or_else(|p| p.into_inner()).get(&i).cloned().unwrap_or_default())
    }
}

/// The run's own link with the watched hosts beside it: everything goes
/// to the run's link as it is, `Start` to the watched hosts as well, and
/// what both send comes back as one stream.
pub struct WatchedLink<'a> {
    inner: &'a mut dyn AgentLink,
    watchers: &'a mut Watchers,
    /// The last start given, when this link moved it.
    started: Option<u64>,
}

impl WatchedLink<'_> {
    /// Start the run's link, then the watched hosts where it started:
    /// late enough for every watched host to hear it first.
    fn start(&mut self, at_unix_ns: u64, telemetry: bool) -> Result<(), LinkClosed> {
        let at = match telemetry {
            true => at_unix_ns.max(protocol::unix_now_ns() + START_MARGIN.as_nanos() as u64 + 2 * self.watchers.slowest()),
            false => at_unix_ns,
        };
        let sent = self.inner.send(ToAgent::Start { at_unix_ns: at, telemetry });
        let given = self.inner.started_at().unwrap_or(at);
        self.started = Some(given);
        if telemetry {
            self.watchers.start(given);
        }
        sent
    }
}

impl AgentLink for WatchedLink<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed> {
        match msg {
            ToAgent::Start { at_unix_ns, telemetry } => self.start(at_unix_ns, telemetry),
            other => self.inner.send(other),
        }
    }

    fn started_at(&self) -> Option<u64> {
        self.started.or_else(|| self.inner.started_at())
    }

    fn recycle(&mut self, report: Box<storbench_metrics::IntervalReport>) {
        self.inner.recycle(report);
    }

    fn abandon_workers(&mut self) {
        self.inner.abandon_workers();
    }

    /// A watched host's second as soon as it is here, else the run's link's
    /// next message, within `timeout` in all (`None`: nothing came).
    fn recv(&mut self, timeout: Duration) -> Result<Option<FromAgent>, LinkClosed> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(m) = self.watchers.poll() {
                return Ok(Some(m));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(m) = self.inner.recv(left.min(TICK))? {
                return Ok(Some(m));
            }
            if Instant::now() >= deadline {
                return Ok(self.watchers.poll());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_list_is_hosts_with_the_agents_port() {
        let hosts = parse("10.0.0.5, 10.0.0.6:7000").unwrap();
        let addresses: Vec<&str> = hosts.iter().map(|h| h.address.as_str()).collect();
        assert_eq!(addresses, vec!["10.0.0.5:7450", "10.0.0.6:7000"]);
        for bad in ["", " , ", "10.0.0.5:http", "10.0.0.5,10.0.0.5", "/tmp/x"] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with("--watch"), "{bad}: {e}");
        }
    }
}
