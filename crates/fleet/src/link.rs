//! The fleet as one agent: an `AgentLink` over every connected agent.
//!
//! The coordinator runs a fleet's plan exactly as a local one: it sees the
//! workers of all agents as one job's workers (agent i's worker w of a job
//! is the job's worker `offset[i] + w`), waits for all of them to be Ready,
//! and merges their interval reports per second into one histogram (added,
//! never averaged). This link translates worker numbers both ways, moves
//! `Start` to a moment every agent can meet (corrected by each agent's
//! clock offset), keeps each agent's own totals for the per-agent breakdown,
//! and turns a lost agent into `Done` for each of its workers with the
//! sequence number of its last interval, so the run goes on with the rest
//! and that agent's data up to its last interval stays in the merge.

use crate::client::{Event, Fleet};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use storbench_metrics::{IntervalReport, OpStats};
use storbench_model::protocol::{self, Assignment, FromAgent, Hello, JobShare, ToAgent, WorkerDone, WorkerId};

/// A worker of a lost agent: the system failed, and where it was is not known.
const LOST: protocol::Failure = protocol::Failure { fault: storbench_model::Fault::System, stage: None };
use storbench_model::{AgentJobResult, AgentTrain, RunResult, Warning};
use storbench_runner::agent::{AgentLink, LinkClosed, Tap};
use storbench_runner::op_results;
use storbench_workload::train::TrainTally;
use storbench_workload::OpKind;

/// What a lost agent does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnLost {
    /// The others run to the end; the run is marked partial.
    Continue,
    /// The others stop measuring at once (and clean up); the run is partial.
    Abort,
}

/// Per agent, per job.
struct AgentJob {
    /// Its workers are the job's `share.rank_base..` over all agents.
    share: JobShare,
    totals: Vec<OpStats>,
    /// Latest end among its workers (ns since the group started).
    end_ns: u64,
    objects_left: u64,
    lost: bool,
    /// A training job's ranks on this agent, merged (`None`: not training).
    train: Option<TrainTally>,
}

pub struct FleetLink<'a> {
    fleet: &'a mut Fleet,
    on_lost: OnLost,
    /// [agent][job]
    jobs: Vec<Vec<AgentJob>>,
    /// Why each agent was lost, if it was.
    lost: Vec<Option<String>>,
    /// Workers of the current group that have not said Done: global id -> agent.
    open: HashMap<WorkerId, usize>,
    /// The last interval seen per global worker: (seq, end_ns).
    last: HashMap<WorkerId, (u64, u64)>,
    /// Messages made here (Hello, the Done of a lost agent's workers).
    queue: VecDeque<FromAgent>,
    /// `--on-lost abort` has stopped the others.
    stopped: bool,
    /// Sees every interval report with its agent's name (`--prometheus`).
    tap: Option<Arc<dyn Tap>>,
    /// The last start given, on the coordinator's clock (Unix ns).
    started: Option<u64>,
}

/// Time given to every agent to receive `Start` before it is due.
const START_MARGIN: Duration = Duration::from_millis(250);

impl<'a> FleetLink<'a> {
    /// `shares[i]` are agent i's prepared jobs (the same jobs on every agent).
    pub fn new(fleet: &'a mut Fleet, shares: Vec<Vec<JobShare>>, on_lost: OnLost) -> FleetLink<'a> {
        let mut offsets: HashMap<u32, u32> = HashMap::new();
        let mut ranks: HashMap<u32, u32> = HashMap::new();
        for share in shares.iter().flatten() {
            *ranks.entry(share.job).or_insert(0) += share.workers;
        }
        let jobs: Vec<Vec<AgentJob>> = shares
            .into_iter()
            .map(|agent| {
                agent
                    .into_iter()
                    .map(|mut share| {
                        let next = offsets.entry(share.job).or_insert(0);
                        let offset = *next;
                        *next += share.workers;
                        // Its workers are ranks `offset..` of the job's over every agent.
                        (share.rank_base, share.ranks) = (offset, ranks[&share.job]);
                        let totals = OpKind::ALL.iter().map(|_| OpStats::new(share.paced())).collect();
                        AgentJob { share, totals, end_ns: 0, objects_left: 0, lost: false, train: None }
                    })
                    .collect()
            })
            .collect();
        let n = fleet.agents.len();
        FleetLink {
            fleet,
            on_lost,
            jobs,
            lost: vec![None; n],
            open: HashMap::new(),
            last: HashMap::new(),
            queue: VecDeque::new(),
            stopped: false,
            tap: None,
            started: None,
        }
    }

    /// Show every interval report to `tap` as well, labelled with its agent.
    pub fn set_tap(&mut self, tap: Arc<dyn Tap>) {
        self.tap = Some(tap);
    }

    /// Every job's workers over all agents, in job order.
    pub fn total_workers(shares: &[Vec<JobShare>]) -> Vec<u32> {
        let jobs = shares.first().map_or(0, Vec::len);
        (0..jobs).map(|j| shares.iter().map(|a| a.get(j).map_or(0, |s| s.workers)).sum()).collect()
    }

    fn job(&self, agent: usize, job: u32) -> Option<&AgentJob> {
        self.jobs.get(agent)?.iter().find(|j| j.share.job == job)
    }

    fn job_mut(&mut self, agent: usize, job: u32) -> Option<&mut AgentJob> {
        self.jobs.get_mut(agent)?.iter_mut().find(|j| j.share.job == job)
    }

    /// An agent's local worker as the job's global worker (`None`: a job or
    /// worker the agent was never given).
    fn global(&self, agent: usize, id: WorkerId) -> Option<WorkerId> {
        let j = self.job(agent, id.job).filter(|j| id.worker < j.share.workers)?;
        Some(WorkerId { job: id.job, worker: j.share.rank_base + id.worker })
    }

    fn assign(&mut self, a: &Assignment) {
        if self.stopped {
            // `--on-lost abort`: the groups after the loss are not run.
            for w in &a.workers {
                self.queue.push_back(FromAgent::Done(WorkerDone::failed_in(*w, "not run: an agent was lost and --on-lost is abort", LOST)));
            }
            return;
        }
        let ids: Vec<u32> = a.jobs.iter().map(|j| j.job).collect();
        for agent in 0..self.jobs.len() {
            let mine: Vec<&AgentJob> = ids.iter().filter_map(|id| self.job(agent, *id)).collect();
            let workers: Vec<WorkerId> =
                mine.iter().flat_map(|j| (0..j.share.workers).map(move |w| WorkerId { job: j.share.job, worker: w })).collect();
            let assignment = Assignment { jobs: mine.iter().map(|j| j.share.clone()).collect(), workers: workers.clone() };
            for w in &workers {
                if let Some(g) = self.global(agent, *w) {
                    self.open.insert(g, agent);
                }
            }
            if self.lost[agent].is_some() || !self.fleet.agents[agent].send(ToAgent::Assign(assignment)) {
                let why = self.lost[agent].clone().unwrap_or_else(|| "its connection closed".into());
                self.lose(agent, why);
            }
        }
    }

    /// Start when every agent has had time to hear it, on each agent's own clock.
    fn start(&mut self, at_unix_ns: u64, telemetry: bool) {
        let slowest = self.fleet.agents.iter().map(|a| a.info.rtt_ns).max().unwrap_or(0);
        let at = at_unix_ns.max(protocol::unix_now_ns()) + START_MARGIN.as_nanos() as u64 + 2 * slowest;
        self.started = Some(at);
        for (i, a) in self.fleet.agents.iter().enumerate() {
            if self.lost[i].is_none() {
                let theirs = (at as i128 + a.info.clock_offset_ns as i128).max(0) as u64;
                a.send(ToAgent::Start { at_unix_ns: theirs, telemetry });
            }
        }
    }

    fn broadcast(&self, msg: &ToAgent) {
        for (i, a) in self.fleet.agents.iter().enumerate() {
            if self.lost[i].is_none() {
                a.send(msg.clone());
            }
        }
    }

    /// The agent is gone: each of its workers still open ends here, with
    /// what it reported so far.
    fn lose(&mut self, agent: usize, why: String) {
        if self.lost[agent].is_none() {
            self.lost[agent] = Some(why.clone());
            self.fleet.agents[agent].info.lost = Some(why.clone());
        }
        let name = self.fleet.agents[agent].spec.name.clone();
        let mine: Vec<WorkerId> = self.open.iter().filter(|(_, a)| **a == agent).map(|(g, _)| *g).collect();
        for g in mine {
            self.open.remove(&g);
            let (last_seq, end_ns) = self.last.get(&g).map_or((None, 0), |(s, e)| (Some(*s), *e));
            if let Some(j) = self.job_mut(agent, g.job) {
                j.lost = true;
                j.end_ns = j.end_ns.max(end_ns);
            }
            self.queue.push_back(FromAgent::Done(WorkerDone {
                last_seq,
                end_ns,
                ..WorkerDone::failed_in(g, format!("agent {name} was lost: {why}"), LOST)
            }));
        }
        if self.on_lost == OnLost::Abort && !self.stopped {
            self.stopped = true;
            self.broadcast(&ToAgent::Stop);
        }
    }

    /// An agent's message in the run's terms (worker numbers made global).
    fn translate(&mut self, agent: usize, msg: FromAgent) -> Option<FromAgent> {
        let who = match &msg {
            FromAgent::Ready(id) | FromAgent::Stage { id, .. } => Some(*id),
            FromAgent::Interval(r) => Some(WorkerId { job: r.job, worker: r.worker }),
            FromAgent::Done(d) => Some(WorkerId { job: d.job, worker: d.worker }),
            _ => None,
        };
        let g = match who.map(|id| (id, self.global(agent, id))) {
            Some((id, None)) => {
                self.lose(agent, format!("it spoke of job {} worker {}, which it was never given (a bug)", id.job, id.worker));
                return None;
            }
            Some((_, g)) => g,
            None => None,
        };
        match msg {
            FromAgent::Ready(_) => g.map(FromAgent::Ready),
            FromAgent::Stage { stage, .. } => g.map(|id| FromAgent::Stage { id, stage }),
            FromAgent::Interval(mut r) => {
                let g = g?;
                self.last.insert(g, (r.seq, r.end_ns));
                self.absorb(agent, &r);
                if let Some(t) = &self.tap {
                    t.interval(&self.fleet.agents[agent].spec.name, &r);
                }
                r.worker = g.worker;
                Some(FromAgent::Interval(r))
            }
            FromAgent::Done(mut d) => {
                let g = g?;
                self.open.remove(&g);
                if let Some(j) = self.job_mut(agent, d.job) {
                    j.end_ns = j.end_ns.max(d.end_ns);
                    j.objects_left += d.objects_left;
                    if let Some(t) = d.kind.as_deref().and_then(|k| k.train()) {
                        j.train.get_or_insert_with(TrainTally::default).merge(t);
                    }
                }
                d.worker = g.worker;
                Some(FromAgent::Done(d))
            }
            FromAgent::Failed { message } => {
                self.lose(agent, message);
                None
            }
            // A host's seconds go by the agent's name in the run.
            FromAgent::Host(mut h) => {
                h.source = self.fleet.agents[agent].spec.name.clone();
                Some(FromAgent::Host(h))
            }
            // Load agents are sent no Signal (process faults go to watched hosts).
            FromAgent::Hello(_)
            | FromAgent::Pong { .. }
            | FromAgent::Prepared(_)
            | FromAgent::Finished { .. }
            | FromAgent::Signalled { .. } => None,
        }
    }

    /// The agent's own totals (measured intervals only, as the coordinator's).
    fn absorb(&mut self, agent: usize, r: &IntervalReport) {
        if r.warmup {
            return;
        }
        if let Some(j) = self.job_mut(agent, r.job) {
            j.totals.iter_mut().zip(&r.ops).for_each(|(t, o)| t.merge(o));
        }
    }

    /// Objects each agent's jobs left (for `Fleet::finish`), and whether each agent is still there.
    pub fn leftovers(&self) -> (Vec<Vec<u64>>, Vec<bool>) {
        let left = self.jobs.iter().map(|a| a.iter().map(|j| j.objects_left).collect()).collect();
        (left, self.lost.iter().map(Option::is_none).collect())
    }

    /// Put the fleet into the result: the agents (clock offsets, losses),
    /// each job's per-agent breakdown and targets, and the warnings.
    pub fn annotate(&self, result: &mut RunResult, job_ids: &HashMap<String, u32>) {
        for job in &mut result.jobs {
            let Some(id) = job_ids.get(&job.name) else { continue };
            job.per_agent.clear();
            job.targets.clear();
            for (i, a) in self.fleet.agents.iter().enumerate() {
                let Some(j) = self.job(i, *id) else { continue };
                let runtime_ns = j.end_ns.saturating_sub(j.share.ramp_ns);
                let targets = j.share.targets.labels();
                job.targets.extend(targets.iter().map(|t| format!("{}: {t}", a.spec.name)));
                job.per_agent.push(AgentJobResult {
                    agent: a.spec.name.clone(),
                    workers: j.share.workers,
                    targets,
                    runtime_ns,
                    ops: op_results(&j.totals, runtime_ns),
                    lost: j.lost,
                    train: j.train.as_ref().map(|t| agent_train(&j.share, t)),
                });
            }
        }
        for a in &self.fleet.agents {
            if let Some(reason) = &a.info.lost {
                result.warnings.push(Warning::AgentLost { agent: a.spec.name.clone(), reason: reason.clone() });
            }
            if a.info.clock_offset_ns.unsigned_abs() > 1_000_000_000 {
                result.warnings.push(Warning::ClockSkew { agent: a.spec.name.clone(), offset_ms: a.info.clock_offset_ns as f64 / 1e6 });
            }
        }
        result.agents = self.fleet.agents.iter().map(|a| a.info.clone()).collect();
    }
}

/// An agent's ranks of a training job, over their own time (the run's
/// duration is its slowest rank's, over every agent).
fn agent_train(share: &JobShare, t: &TrainTally) -> AgentTrain {
    AgentTrain {
        accelerators: share.workers,
        first_rank: share.rank_base,
        samples: t.samples,
        steps: t.steps,
        runtime_ns: t.end_ns,
        samples_per_sec: t.samples_per_sec(),
        au: t.au(share.workers),
        stall_ns: t.stall_ns,
    }
}

impl AgentLink for FleetLink<'_> {
    fn name(&self) -> &str {
        "the fleet"
    }

    fn send(&mut self, msg: ToAgent) -> Result<(), LinkClosed> {
        match &msg {
            // Every agent was greeted when it connected.
            ToAgent::Hello(_) => self.queue.push_back(FromAgent::Hello(Hello::ours("fleet"))),
            ToAgent::Assign(a) => self.assign(a),
            ToAgent::Start { at_unix_ns, telemetry } => self.start(*at_unix_ns, *telemetry),
            ToAgent::Stop | ToAgent::Abort | ToAgent::StopJob { .. } => self.broadcast(&msg),
            ToAgent::Ping { .. } | ToAgent::Prepare(_) | ToAgent::Finish { .. } | ToAgent::Signal { .. } => {}
        }
        if self.lost.iter().all(Option::is_some) && self.queue.is_empty() {
            return Err(LinkClosed);
        }
        Ok(())
    }

    fn started_at(&self) -> Option<u64> {
        self.started
    }

    /// `None` only when nothing came within `timeout`: an event that makes
    /// no message (a Pong, a lost agent whose workers were all done) is
    /// handled and the next one taken, so a caller draining with a zero
    /// timeout (the coordinator's last host seconds) does not stop there and
    /// leave a later agent's loss or seconds in the channel.
    fn recv(&mut self, timeout: Duration) -> Result<Option<FromAgent>, LinkClosed> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(m) = self.queue.pop_front() {
                return Ok(Some(m));
            }
            let Some((agent, ev)) = self.fleet.next(deadline.saturating_duration_since(std::time::Instant::now())) else {
                return Ok(None);
            };
            let msg = match ev {
                Event::Msg(m) => self.translate(agent, m),
                Event::Pong { .. } => None,
                Event::Lost(why) => {
                    self.lose(agent, why);
                    None
                }
            };
            if msg.is_some() {
                return Ok(msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_the_fleet_gives_is_the_one_its_seconds_count_from() {
        let mut fleet = Fleet::none();
        let mut link = FleetLink::new(&mut fleet, Vec::new(), OnLost::Continue);
        let asked = protocol::unix_now_ns();
        let _ = link.send(ToAgent::Start { at_unix_ns: asked, telemetry: true });
        // Every agent gets time to hear it: the start moves, and the
        // coordinator's hosts' axis must count from where it moved to.
        let given = link.started_at().expect("the start given");
        assert!(given >= asked + START_MARGIN.as_nanos() as u64, "{given} against {asked}");
    }
}
