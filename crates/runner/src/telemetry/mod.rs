//! Host telemetry: one thread per agent process that reads the host's
//! counters once a second from the measured phase's start and sends each
//! second to the coordinator as `FromAgent::Host`.
//!
//! Its seconds are the workers' seconds: the first reading is taken at the
//! group's `Start` instant and the next ones on whole seconds after it, the
//! boundaries at which workers cut their interval reports. A later group's
//! `Start` closes the second under way early and counts again from the new
//! start, as that group's jobs do. The thread's own CPU time travels with
//! each second, so what watching costs is in the results.

mod collect;
mod read;
pub mod rules;

pub use collect::Collector;

use read::{DiskKinds, Reading};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_metrics::CpuTimes;
use storbench_model::protocol::FromAgent;
use storbench_model::telemetry::{HostSample, SourceKind};

/// A span shorter than this (a group started just after a tick) is left to
/// the next second rather than sent as a second of its own.
const SHORTEST: Duration = Duration::from_millis(50);

enum Cmd {
    /// A new group starts at this instant: its seconds count from there.
    Restart(Instant),
}

/// The running sampler; dropping it stops and joins the thread.
pub struct Sampler {
    tx: Option<Sender<Cmd>>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Start sampling at `at` (the first group's start), sending each second
    /// to `out` as `kind`. None if no thread could be started (the run goes
    /// on without telemetry).
    pub fn start(at: Instant, kind: SourceKind, out: SyncSender<FromAgent>) -> Option<Sampler> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new().name("sb-telemetry".into()).spawn(move || Ticker::new(at, kind, out).run(rx)).ok()?;
        Some(Sampler { tx: Some(tx), thread: Some(thread) })
    }

    /// A later group starts at `at`.
    pub fn restart(&self, at: Instant) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Cmd::Restart(at));
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The sampling thread's state.
struct Ticker {
    kind: SourceKind,
    out: SyncSender<FromAgent>,
    hostname: String,
    cpus: u32,
    /// Which start the seconds count from, and its instant.
    start: u32,
    origin: Instant,
    /// The next reading's nominal time, and a group start waiting for it.
    next: Instant,
    restart: Option<Instant>,
    cpu0: CpuTimes,
    kinds: DiskKinds,
    notes: Vec<String>,
    said: bool,
}

impl Ticker {
    fn new(at: Instant, kind: SourceKind, out: SyncSender<FromAgent>) -> Ticker {
        Ticker {
            kind,
            out,
            hostname: crate::coordinator::hostname(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            start: 0,
            origin: at,
            next: at,
            restart: None,
            cpu0: CpuTimes::thread(),
            kinds: DiskKinds::default(),
            notes: Vec::new(),
            said: false,
        }
    }

    fn run(mut self, rx: Receiver<Cmd>) {
        if !self.wait(&rx) {
            return;
        }
        let mut base = Reading::take(&mut self.notes);
        if base.cpus() > 0 {
            self.cpus = base.cpus() as u32;
        }
        self.next = self.origin + Duration::from_secs(1);
        while self.wait(&rx) {
            let now = Reading::take(&mut self.notes);
            if now.at.duration_since(base.at) >= SHORTEST {
                if !self.send(&now, &base) {
                    return;
                }
                base = now;
            }
            self.advance();
        }
    }

    /// Sleep until the next reading is due, taking group starts meanwhile;
    /// false when the agent is done with the sampler.
    fn wait(&mut self, rx: &Receiver<Cmd>) -> bool {
        loop {
            let left = self.next.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            match rx.recv_timeout(left) {
                Ok(Cmd::Restart(at)) => {
                    // The second under way ends at the new start.
                    self.restart = Some(at);
                    self.next = self.next.min(at);
                }
                Err(RecvTimeoutError::Timeout) => return true,
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// The next tick: a whole second on, or the new group's start.
    fn advance(&mut self) {
        if let Some(at) = self.restart.filter(|at| *at <= self.next) {
            self.restart = None;
            self.start += 1;
            self.origin = at;
            self.next = at;
        }
        self.next += Duration::from_secs(1);
        // Behind (a stalled machine): skip to the next whole second to come.
        let now = Instant::now();
        while self.next + Duration::from_millis(500) < now {
            self.next += Duration::from_secs(1);
        }
        if let Some(at) = self.restart {
            self.next = self.next.min(at);
        }
    }

    /// Send the second that ends with `now`; false once nobody listens.
    fn send(&mut self, now: &Reading, base: &Reading) -> bool {
        let notes = if self.said { Vec::new() } else { dedup(std::mem::take(&mut self.notes)) };
        self.said = true;
        self.notes.clear();
        let sample = HostSample {
            source: "local".into(),
            kind: self.kind,
            hostname: self.hostname.clone(),
            cpus: self.cpus,
            start: self.start,
            // The nominal boundary: the workers' interval ends on it too.
            t: self.next.saturating_duration_since(self.origin).as_secs_f64(),
            duration: now.at.duration_since(base.at).as_secs_f64(),
            sampler_cpu: CpuTimes::thread().since(self.cpu0),
            values: now.since(base, &mut self.kinds),
            notes,
        };
        self.out.send(FromAgent::Host(Box::new(sample))).is_ok()
    }
}

/// This host as a watched source beside a run (`engine::Watched`, read on
/// the run's whole seconds by `disruption::ClusterLink`): a fleet's
/// coordinator, which runs none of the load, measures itself too.
pub struct HostWatch {
    name: String,
    hostname: String,
    base: Reading,
    kinds: DiskKinds,
    notes: Vec<String>,
    said: bool,
}

impl HostWatch {
    /// The first reading is taken now: the first second's figures are
    /// rates over the time from here to its end.
    pub fn new(name: &str) -> HostWatch {
        let mut notes = Vec::new();
        let base = Reading::take(&mut notes);
        HostWatch {
            name: name.to_string(),
            hostname: crate::coordinator::hostname(),
            base,
            kinds: DiskKinds::default(),
            notes,
            said: false,
        }
    }
}

impl storbench_engine::Watched for HostWatch {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Watched
    }

    fn sample(&mut self) -> Result<Vec<storbench_model::telemetry::Value>, storbench_engine::EngineError> {
        let now = Reading::take(&mut self.notes);
        if self.said {
            // Said with the first second; each reading names them again.
            self.notes.clear();
        }
        let values = now.since(&self.base, &mut self.kinds);
        self.base = now;
        Ok(values)
    }

    fn notes(&mut self) -> Vec<String> {
        match std::mem::replace(&mut self.said, true) {
            true => Vec::new(),
            false => dedup(std::mem::take(&mut self.notes)),
        }
    }

    fn host(&self) -> (String, u32) {
        (self.hostname.clone(), self.base.cpus() as u32)
    }
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_count_from_the_start_and_again_from_a_later_group() {
        let (out, rx) = mpsc::sync_channel(64);
        let at = Instant::now() + Duration::from_millis(20);
        let s = Sampler::start(at, SourceKind::Client, out).unwrap();
        let first = |rx: &Receiver<FromAgent>| match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(FromAgent::Host(h)) => *h,
            other => panic!("no second came: {other:?}"),
        };
        let one = first(&rx);
        assert_eq!((one.start, one.t), (0, 1.0));
        assert!((one.duration - 1.0).abs() < 0.2, "a second lasted {} s", one.duration);
        assert!(!one.values.is_empty());
        s.restart(Instant::now() + Duration::from_millis(300));
        let cut = first(&rx);
        assert_eq!(cut.start, 0);
        assert!(cut.duration < 0.5, "the second under way ends at the new start ({} s)", cut.duration);
        let again = first(&rx);
        assert_eq!((again.start, again.t), (1, 1.0));
        drop(s);
    }
}
