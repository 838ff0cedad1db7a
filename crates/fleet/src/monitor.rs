//! `storbench agent --monitor`: one coordinator's run on a watched host.
//!
//! A monitor takes no jobs: it greets (saying it only watches), answers
//! the clock pings, and from the run's `Start` samples its host once a
//! second, the same sampler a load agent runs but as a `watched` source,
//! counting again from each later group's start as the clients do. The
//! seconds go to the coordinator until it sends `Finish` or goes away
//! (its stream ends, or keepalive finds it silent for the agent's
//! `--timeout`). A `Prepare` or `Assign` is refused by name: such a
//! coordinator listed this host under `--agents`.
//!
//! With `--allow-signal NAME,...` it also stops and continues this host's
//! processes of those command names when the run's faults say so
//! (`proc-stop:ceph-osd@HOST`): the token alone is never a licence to
//! freeze a server's processes. Whatever the run stopped and did not
//! continue is continued when the session ends, however it ends, each one
//! said to the coordinator before `Finished`.

use crate::session::Session;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::thread::JoinHandle;
use std::time::Duration;
use storbench_model::protocol::{self, FromAgent, Hello, ToAgent};
use storbench_model::telemetry::SourceKind;
use storbench_runner::agent::instant_of;
use storbench_runner::telemetry::Sampler;
use tokio::sync::mpsc::Sender;
use tonic::Status;

/// Why a monitor refuses jobs, as the coordinator shows it.
pub const REFUSE_JOBS: &str = "this agent only watches (--monitor): list it under --watch, not --agents";

/// The sampler and the thread passing its seconds on to the coordinator.
struct Watching {
    sampler: Sampler,
    forward: JoinHandle<()>,
}

impl Watching {
    /// Sample from `at` on, each second sent to `out` as it comes.
    fn start(at: std::time::Instant, out: Sender<Result<FromAgent, Status>>) -> Option<Watching> {
        // The sampler's channel is bounded: a coordinator that stops reading
        // holds the sampler up rather than this host's memory.
        let (tx, rx) = std::sync::mpsc::sync_channel(64);
        let sampler = Sampler::start(at, SourceKind::Watched, tx)?;
        let forward = std::thread::Builder::new()
            .name("sb-monitor".into())
            .spawn(move || {
                while let Ok(m) = rx.recv() {
                    if out.blocking_send(Ok(m)).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Watching { sampler, forward })
    }

    /// Stop sampling; every second taken is passed on before this returns.
    fn stop(self) {
        drop(self.sampler);
        let _ = self.forward.join();
    }
}

/// A monitor serves a coordinator's session by watching only.
impl Session {
    /// Serve the coordinator until it finishes or goes away by sampling
    /// this host; what happened, for the agent's log.
    pub fn watch(self) -> String {
        let mut greeted = false;
        let mut watching: Option<Watching> = None;
        let mut stopped = storbench_runner::procs::Stopped::new();
        let said = loop {
            if self.scope.interrupted() {
                self.send(FromAgent::Failed { message: "the agent was stopped (signal)".into() });
                break "stopped by a signal".to_string();
            }
            let msg = match self.inbox.recv_timeout(Duration::from_millis(100)) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) if !self.gone.load(Ordering::Relaxed) => continue,
                Err(_) => break "the coordinator went away: watching stopped".to_string(),
            };
            match msg {
                ToAgent::Hello(h) => {
                    if let Err(e) = h.check() {
                        self.send(FromAgent::Failed { message: e.to_string() });
                        break format!("refused: {e}");
                    }
                    greeted = true;
                    let signals = self.signals.clone();
                    self.send(FromAgent::Hello(Hello {
                        protocol: self.protocol,
                        monitor: true,
                        signals,
                        ..Hello::ours(self.name.clone())
                    }));
                }
                _ if !greeted => {
                    self.send(FromAgent::Failed { message: "the coordinator sent a message before Hello".into() });
                    break "refused: a message before Hello".into();
                }
                ToAgent::Ping { sent_unix_ns } => {
                    let agent_unix_ns = protocol::unix_now_ns().saturating_add_signed(self.clock_skew_ns);
                    self.send(FromAgent::Pong { sent_unix_ns, agent_unix_ns });
                }
                ToAgent::Start { at_unix_ns, telemetry: true } => {
                    // A start on the clock this agent claims, back to the real one.
                    let at = instant_of(at_unix_ns.saturating_add_signed(-self.clock_skew_ns));
                    match &watching {
                        Some(w) => w.sampler.restart(at),
                        None => watching = Watching::start(at, self.out.clone()),
                    }
                }
                ToAgent::Prepare(_) | ToAgent::Assign(_) => {
                    self.send(FromAgent::Failed { message: REFUSE_JOBS.into() });
                    break "refused jobs: this agent only watches".into();
                }
                ToAgent::Signal { id, process, stop } => {
                    let done = storbench_runner::procs::permitted(&process, &self.signals)
                        .and_then(|_| storbench_runner::procs::signal(&process, stop, &mut stopped));
                    let (answer, error) = done.map_or_else(|e| (String::new(), Some(e)), |a| (a, None));
                    self.send(FromAgent::Signalled { id: Some(id), process, answer, error });
                }
                ToAgent::Finish { .. } => {
                    // Every second taken goes before the answer, and so does
                    // every process the run left stopped, continued.
                    if let Some(w) = watching.take() {
                        w.stop();
                    }
                    self.thaw(&mut stopped);
                    self.send(FromAgent::Finished { notes: Vec::new() });
                    break "run finished".into();
                }
                // Nothing runs here to stop.
                ToAgent::Start { .. } | ToAgent::Stop | ToAgent::StopJob { .. } | ToAgent::Abort => {}
            }
        };
        if let Some(w) = watching {
            w.stop();
        }
        // However the session ended (the coordinator gone, a signal).
        self.thaw(&mut stopped);
        said
    }

    /// Continue every process the run stopped and left stopped, each said
    /// to the coordinator (which may be gone) and in the agent's log.
    fn thaw(&self, stopped: &mut storbench_runner::procs::Stopped) {
        while let Some(pid) = stopped.pop_first() {
            let done = storbench_runner::procs::thaw(pid);
            crate::server::log(&match &done {
                Ok(a) => format!("{a}: the run had stopped it"),
                Err(e) => format!("the run stopped process {pid} and it could NOT be continued: {e}"),
            });
            let (answer, error) = done.map_or_else(|e| (String::new(), Some(e)), |a| (a, None));
            self.send(FromAgent::Signalled { id: None, process: pid.to_string(), answer, error });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use storbench_model::protocol::PrepareJobs;
    use storbench_runner::interrupt::Scope;

    /// A monitor and the two ends a coordinator would hold.
    fn monitor() -> (std::sync::mpsc::Sender<ToAgent>, tokio::sync::mpsc::Receiver<Result<FromAgent, Status>>, JoinHandle<String>) {
        let (to, inbox) = std::sync::mpsc::channel();
        let (out, from) = tokio::sync::mpsc::channel(64);
        let m = Session {
            name: "m".into(),
            protocol: protocol::PROTOCOL_VERSION,
            clock_skew_ns: 0,
            memory: None,
            inbox,
            out,
            gone: Arc::default(),
            scope: Scope::begin(),
            signals: vec!["sleep".into()],
        };
        (to, from, std::thread::spawn(move || m.watch()))
    }

    fn next(from: &mut tokio::sync::mpsc::Receiver<Result<FromAgent, Status>>) -> FromAgent {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            match from.try_recv() {
                Ok(m) => return m.expect("no status"),
                Err(_) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => panic!("nothing from the monitor: {e}"),
            }
        }
    }

    #[test]
    fn a_monitor_greets_as_one_and_refuses_jobs_by_name() {
        let (to, mut from, thread) = monitor();
        to.send(ToAgent::Hello(Hello::ours("coordinator"))).unwrap();
        assert!(matches!(next(&mut from), FromAgent::Hello(Hello { monitor: true, .. })));
        to.send(ToAgent::Prepare(PrepareJobs { jobs: Vec::new(), secrets: Vec::new() })).unwrap();
        assert!(matches!(next(&mut from), FromAgent::Failed { message } if message == REFUSE_JOBS));
        assert_eq!(thread.join().unwrap(), "refused jobs: this agent only watches");
    }

    #[test]
    fn a_monitor_samples_from_the_start_as_a_watched_host_until_finish() {
        let (to, mut from, thread) = monitor();
        to.send(ToAgent::Hello(Hello::ours("coordinator"))).unwrap();
        let _ = next(&mut from);
        to.send(ToAgent::Start { at_unix_ns: protocol::unix_now_ns(), telemetry: true }).unwrap();
        let FromAgent::Host(h) = next(&mut from) else { panic!("not a host second") };
        assert_eq!((h.kind, h.start, h.t), (SourceKind::Watched, 0, 1.0));
        to.send(ToAgent::Finish { objects_left: Vec::new() }).unwrap();
        // Seconds taken meanwhile come first, then the answer.
        let finished = loop {
            match next(&mut from) {
                FromAgent::Host(_) => continue,
                other => break other,
            }
        };
        assert!(matches!(finished, FromAgent::Finished { notes } if notes.is_empty()));
        assert_eq!(thread.join().unwrap(), "run finished");
    }

    fn state(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit(')').next().unwrap().trim_start().chars().next().unwrap()
    }

    /// What it was allowed to stop it stops; what the run left stopped it
    /// continues before it says the run finished, and says so.
    #[test]
    fn a_monitor_signals_what_it_allows_and_continues_it_when_the_run_ends() {
        let mut daemon = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = daemon.id();
        let (to, mut from, thread) = monitor();
        to.send(ToAgent::Hello(Hello::ours("coordinator"))).unwrap();
        let FromAgent::Hello(h) = next(&mut from) else { panic!("no Hello") };
        assert_eq!(h.signals, ["sleep"], "its allowlist, for the coordinator to check faults against");
        to.send(ToAgent::Signal { id: 7, process: "1".into(), stop: true }).unwrap();
        let FromAgent::Signalled { id: Some(7), error: Some(e), .. } = next(&mut from) else { panic!("init not refused") };
        assert!(e.contains("init"), "{e}");
        to.send(ToAgent::Signal { id: 8, process: pid.to_string(), stop: true }).unwrap();
        let FromAgent::Signalled { id: Some(8), answer, error: None, .. } = next(&mut from) else { panic!("not stopped") };
        assert_eq!(answer, format!("stopped process {pid}"));
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(state(pid), 'T');
        to.send(ToAgent::Finish { objects_left: Vec::new() }).unwrap();
        let FromAgent::Signalled { id: None, process, error: None, .. } = next(&mut from) else { panic!("not continued at the end") };
        assert_eq!(process, pid.to_string());
        assert!(matches!(next(&mut from), FromAgent::Finished { .. }));
        assert_eq!(thread.join().unwrap(), "run finished");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(state(pid), 'S', "running again");
        let _ = daemon.kill();
        let _ = daemon.wait();
    }
}
