//! One coordinator's run on an agent: the blocking side of a gRPC stream.
//!
//! The agent plans and prepares the jobs it is sent on its own machine,
//! then passes the run protocol to an in-process agent (the same one a
//! local run uses) and its messages back. If the coordinator goes away (the
//! stream ends, or the connection's keepalive times out) or the agent is
//! stopped by a signal, the workers are aborted and everything the
//! preparation created is removed, as after a run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;
use storbench_model::protocol::{self, FromAgent, Hello, PrepareJobs, ToAgent};
use storbench_runner::agent::{AgentLink, LocalLink};
use storbench_runner::interrupt::Scope;
use storbench_runner::{build_plan, handshake, local_agent, Prepared};
use tokio::sync::mpsc::Sender;
use tonic::Status;

pub(crate) struct Session {
    /// How this agent names itself.
    pub name: String,
    /// The protocol version it claims (its own, unless a test says otherwise).
    pub protocol: u32,
    /// Added to this machine's clock wherever the protocol carries a time
    /// (tests: an agent whose clock is off).
    pub clock_skew_ns: i64,
    /// The host memory its Hello says (`--rules mlperf` sizes a fleet's
    /// dataset by it).
    pub memory: Option<u64>,
    pub inbox: Receiver<ToAgent>,
    pub out: Sender<Result<FromAgent, Status>>,
    /// The coordinator's stream has ended.
    pub gone: Arc<AtomicBool>,
    pub scope: Scope,
    /// The command names a run may stop and continue on this host
    /// (`--allow-signal`, monitors only).
    pub signals: Vec<String>,
}

/// A prepared run and the in-process agent that runs it, with what its
/// workers said so far (to wind it down without the coordinator).
struct Live {
    prepared: Prepared,
    link: LocalLink,
    /// Workers of the current group, and how many have said Done.
    assigned: usize,
    done: usize,
    /// Objects each job's workers wrote and did not remove.
    objects_left: Vec<u64>,
}

/// How long a run whose coordinator went away may take to clean up.
const WIND_DOWN: Duration = Duration::from_secs(60);

impl Live {
    /// Note what a message from the workers says about the run's state.
    fn saw(&mut self, msg: &FromAgent) {
        if let FromAgent::Done(d) = msg {
            self.done += 1;
            if let Some(n) = self.objects_left.get_mut(d.job as usize) {
                *n += d.objects_left;
            }
        }
    }

    /// Pass the in-process agent's messages on to the coordinator.
    fn pump(&mut self, out: &Sender<Result<FromAgent, Status>>) {
        while let Ok(Some(m)) = self.link.recv(Duration::from_millis(10)) {
            self.saw(&m);
            if out.blocking_send(Ok(m)).is_err() {
                return;
            }
        }
    }

    /// No coordinator any more: stop measuring, let the workers remove what
    /// they wrote (for a bounded time), then clean up as after a run.
    fn wind_down(mut self) -> Vec<String> {
        if self.done < self.assigned && self.link.send(ToAgent::Stop).is_ok() {
            let deadline = std::time::Instant::now() + WIND_DOWN;
            while self.done < self.assigned && std::time::Instant::now() < deadline {
                match self.link.recv(Duration::from_millis(200)) {
                    Ok(Some(m)) => self.saw(&m),
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
        }
        let left = std::mem::take(&mut self.objects_left);
        finish(self, &left)
    }
}

impl Session {
    /// Serve the coordinator until it finishes or goes away; what happened,
    /// for the agent's log.
    pub fn run(self) -> String {
        let mut greeted = false;
        let mut live: Option<Live> = None;
        loop {
            if self.scope.interrupted() {
                self.send(FromAgent::Failed { message: "the agent was stopped (signal)".into() });
                return self.end(live, "stopped by a signal: workers aborted, targets cleaned up");
            }
            let msg = match &mut live {
                Some(l) => {
                    l.pump(&self.out);
                    self.inbox.recv_timeout(Duration::from_millis(1))
                }
                None => self.inbox.recv_timeout(Duration::from_millis(100)),
            };
            let msg = match msg {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return self.end(live, "the coordinator went away: workers aborted, targets cleaned up");
                }
            };
            match msg {
                ToAgent::Hello(h) => {
                    if let Err(e) = h.check() {
                        self.send(FromAgent::Failed { message: e.to_string() });
                        return format!("refused: {e}");
                    }
                    greeted = true;
                    let mut ours = Hello::ours(self.name.clone());
                    ours.protocol = self.protocol;
                    ours.memory_bytes = self.memory;
                    self.send(FromAgent::Hello(ours));
                }
                _ if !greeted => {
                    self.send(FromAgent::Failed { message: "the coordinator sent a message before Hello".into() });
                    return "refused: a message before Hello".into();
                }
                ToAgent::Ping { sent_unix_ns } => {
                    let agent_unix_ns = protocol::unix_now_ns().saturating_add_signed(self.clock_skew_ns);
                    self.send(FromAgent::Pong { sent_unix_ns, agent_unix_ns })
                }
                ToAgent::Prepare(jobs) => match self.prepare(jobs) {
                    Ok(l) => {
                        self.send(FromAgent::Prepared(l.prepared.jobs.iter().map(|j| j.share.clone()).collect()));
                        live = Some(l);
                    }
                    Err(message) => {
                        self.send(FromAgent::Failed { message: message.clone() });
                        return format!("could not prepare: {message}");
                    }
                },
                ToAgent::Finish { objects_left } => {
                    // The coordinator's count: it also knows about workers lost on the way.
                    let notes = live.map(|l| finish(l, &objects_left)).unwrap_or_default();
                    let said = format!("run finished ({} notes)", notes.len());
                    self.send(FromAgent::Finished { notes });
                    return said;
                }
                ToAgent::Signal { id, process, .. } => {
                    let error = Some(storbench_runner::agent::REFUSE_SIGNALS.to_string());
                    self.send(FromAgent::Signalled { id: Some(id), process, answer: String::new(), error });
                }
                other => match &mut live {
                    Some(l) => {
                        let other = match other {
                            ToAgent::Assign(a) => {
                                (l.assigned, l.done) = (a.workers.len(), 0);
                                ToAgent::Assign(a)
                            }
                            // A start time on the clock this agent claims, back to the real one.
                            ToAgent::Start { at_unix_ns, telemetry } => {
                                ToAgent::Start { at_unix_ns: at_unix_ns.saturating_add_signed(-self.clock_skew_ns), telemetry }
                            }
                            other => other,
                        };
                        let _ = l.link.send(other);
                    }
                    None => {
                        self.send(FromAgent::Failed { message: "the coordinator sent a run message before Prepare".into() });
                        return "refused: a run message before Prepare".into();
                    }
                },
            }
        }
    }

    pub(crate) fn send(&self, msg: FromAgent) {
        let _ = self.out.blocking_send(Ok(msg));
    }

    /// Plan and prepare the jobs here, and start an in-process agent for them.
    fn prepare(&self, p: PrepareJobs) -> Result<Live, String> {
        let mut specs = p.jobs;
        for (spec, secrets) in specs.iter_mut().zip(p.secrets) {
            secrets.restore(spec);
        }
        no_programs(&specs)?;
        let plan = build_plan(specs).map_err(|e| e.to_string())?;
        let gone = self.gone.clone();
        let scope = &self.scope;
        // The coordinator's journal holds this agent's part (its prefixes);
        // the shares it gets back say what preparing created.
        let prepared = plan.prepare(&|| gone.load(Ordering::Relaxed) || scope.interrupted(), &mut |_| {}).map_err(|f| {
            let mut m = f.error.to_string();
            for l in f.leftovers {
                m.push_str(&format!("; {l}"));
            }
            m
        })?;
        let mut link = local_agent(&prepared);
        // The in-process agent speaks only after a Hello; its answer stays here.
        handshake(&mut link)?;
        let objects_left = vec![0; prepared.jobs.len()];
        Ok(Live { prepared, link, assigned: 0, done: 0, objects_left })
    }

    /// The run ends without a Finish: abort the workers, clean up.
    fn end(self, live: Option<Live>, said: &str) -> String {
        if let Some(l) = live {
            let notes = l.wind_down();
            if !notes.is_empty() {
                return format!("{said} ({})", notes.join("; "));
            }
        }
        said.to_string()
    }
}

/// Stop the workers (dropping the link aborts what still runs and waits for
/// it), then remove what the preparation created.
fn finish(live: Live, objects_left: &[u64]) -> Vec<String> {
    drop(live.link);
    let left = |name: &str| {
        let i = live.prepared.jobs.iter().position(|j| j.name() == name);
        Some(i.and_then(|i| objects_left.get(i)).copied().unwrap_or(0))
    };
    // The agent cleans up what it prepared even when it is being stopped.
    live.prepared.cleanup(&left, &|| false, None).notes
}

/// Whatever a coordinator asks, an agent starts no programs (fio's exec
/// engine): the fleet token is not a licence to run commands.
fn no_programs(specs: &[storbench_workload::JobSpec]) -> Result<(), String> {
    let runs = |s: &storbench_workload::JobSpec| {
        s.kind.program().is_some() || storbench_engine::find(&s.ioengine).is_some_and(|f| f.name() == storbench_engine::exec::NAME)
    };
    match specs.iter().find(|s| runs(s)) {
        Some(s) => Err(format!("job '{}' runs a program (ioengine=exec); an agent runs no programs", storbench_workload::shown(&s.name))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_refuses_a_job_that_runs_a_program() {
        let io = storbench_workload::JobSpec::default();
        let exec = storbench_workload::JobSpec { name: "mon".into(), ioengine: "exec".into(), ..Default::default() };
        assert!(no_programs(std::slice::from_ref(&io)).is_ok());
        let e = no_programs(&[io, exec]).unwrap_err();
        assert!(e.contains("job 'mon' runs a program") && e.contains("an agent runs no programs"), "{e}");
    }
}
