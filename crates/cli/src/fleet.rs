//! `storbench agent`, and runs on a fleet of agents (`--agents`).
//!
//! The coordinator plans the jobs here first (bad input fails before any
//! agent is contacted), connects to every agent, has each prepare its own
//! targets, runs the plan over the fleet as one run, puts the per-agent
//! breakdown and clock offsets into the result, and has every agent clean
//! up. The merging itself is the coordinator's, as for a local run.

use crate::cli::{AgentArgs, FleetArgs};
use crate::error::*;
use crate::journal::RunJournal;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use storbench_fleet::agents::{self, AgentSpec};
use storbench_fleet::client::Fleet;
use storbench_fleet::link::{FleetLink, OnLost};
use storbench_fleet::ssh::{self, Launched, SshOptions};
use storbench_model::journal::{Made, State};
use storbench_model::{RunResult, Warning};
use storbench_runner::interrupt::Scope;
use storbench_runner::{Observer, Plan};
use storbench_workload::JobSpec;

/// Where a fleet run goes.
#[derive(Clone)]
pub struct FleetSetup {
    agents: std::rc::Rc<Agents>,
    on_lost: OnLost,
    timeout: Duration,
    share_numjobs: bool,
    /// Run on the first this many agents only (a sweep over `agents`).
    first: Option<usize>,
}

/// The agents: given (with the fleet directory to reach them), or started
/// over SSH when the first run needs them and stopped when the command ends.
enum Agents {
    Given(Vec<AgentSpec>, PathBuf),
    Ssh(Box<(SshOptions, RefCell<Option<Launched>>)>),
}

impl FleetSetup {
    /// How many agents the fleet has (before [`FleetSetup::first`]).
    pub fn count(&self) -> usize {
        match &*self.agents {
            Agents::Given(a, _) => a.len(),
            Agents::Ssh(ssh) => ssh.0.hosts.len(),
        }
    }

    /// The same fleet, run on its first `n` agents only (agents started
    /// over ssh are started once, all of them, and shared).
    pub fn first(&self, n: usize) -> Result<FleetSetup, String> {
        match n {
            0 => Err("agents=0: a run needs at least one agent".into()),
            n if n > self.count() => Err(format!("agents={n}: the fleet has {} agents (--agents, --agents-file or --ssh)", self.count())),
            n => Ok(FleetSetup { first: Some(n), ..self.clone() }),
        }
    }

    /// The agents to connect to and the fleet directory to connect with.
    fn agents(&self) -> Result<(Vec<AgentSpec>, PathBuf), CliError> {
        let (mut list, dir) = self.all_agents()?;
        list.truncate(self.first.unwrap_or(usize::MAX));
        Ok((list, dir))
    }

    fn all_agents(&self) -> Result<(Vec<AgentSpec>, PathBuf), CliError> {
        match &*self.agents {
            Agents::Given(a, dir) => Ok((a.clone(), dir.clone())),
            Agents::Ssh(ssh) => {
                let (opts, launched) = &**ssh;
                let mut l = launched.borrow_mut();
                if l.is_none() {
                    say!("storbench: starting agents over ssh on {}", opts.hosts.join(", "));
                    *l = Some(ssh::launch(opts).map_err(CliError::system)?);
                }
                let l = l.as_ref().expect("launched above");
                Ok((l.agents.clone(), l.dir.clone()))
            }
        }
    }
}

impl FleetSetup {
    /// How many agents the fleet has, and each job's workers over all of
    /// them (every agent runs a job's numjobs, after its own options, or
    /// its share with `--share-numjobs`): what a rate for the whole fleet
    /// is divided by. Agents started over ssh are counted, not started.
    pub fn workers(&self, specs: &[JobSpec]) -> Result<(usize, Vec<u32>), CliError> {
        let mut list: Vec<AgentSpec> = match &*self.agents {
            Agents::Given(a, _) => a.clone(),
            Agents::Ssh(ssh) => {
                ssh.0.hosts.iter().map(|h| AgentSpec { name: h.clone(), address: h.clone(), options: Vec::new() }).collect()
            }
        };
        list.truncate(self.first.unwrap_or(usize::MAX));
        let mut total = vec![0u32; specs.len()];
        for (i, a) in list.iter().enumerate() {
            let jobs = agents::jobs_for(specs, a, i, list.len(), self.share_numjobs).map_err(CliError::usage)?;
            for (t, j) in total.iter_mut().zip(&jobs) {
                *t += j.numjobs.max(1);
            }
        }
        Ok((list.len(), total))
    }
}

impl FleetSetup {
    /// Each agent's name and host memory as its Hello said (connecting once,
    /// preparing nothing): what `--rules mlperf` sizes a fleet's dataset by.
    pub fn memories(&self) -> Result<Vec<(String, Option<u64>)>, CliError> {
        let (list, dir) = self.agents()?;
        let creds = storbench_fleet::creds::coordinator(&dir).map_err(CliError::usage)?;
        let scope = Scope::begin();
        say!("storbench: asking {} agents their memory", list.len());
        let mut fleet = connect(list, creds, self.timeout, &scope).map_err(|e| CliError {
            message: format!("reading the agents' memory: {}; or give each client's memory with --client-memory SIZE", e.message),
            ..e
        })?;
        let out = fleet.agents.iter().map(|a| (a.spec.name.clone(), a.info.memory_bytes)).collect();
        let n = fleet.agents.len();
        fleet.finish(&vec![Vec::new(); n], &vec![true; n], &|| scope.level() >= 2);
        Ok(out)
    }
}

impl FleetArgs {
    /// The fleet these flags name, if any.
    pub fn setup(&self) -> Result<Option<FleetSetup>, CliError> {
        let on_lost = if self.on_lost == "abort" { OnLost::Abort } else { OnLost::Continue };
        let (timeout, share_numjobs) = (self.agent_timeout, self.share_numjobs);
        if let Some(hosts) = &self.ssh {
            let hosts: Vec<String> = hosts.split(',').map(str::trim).filter(|h| !h.is_empty()).map(String::from).collect();
            let command: Vec<String> = self.ssh_command.split_whitespace().map(String::from).collect();
            if hosts.is_empty() || command.is_empty() {
                return Err(CliError::usage("--ssh needs hosts ([USER@]HOST,...) and --ssh-command a command"));
            }
            let opts = SshOptions { hosts, command, binary: self.ssh_binary.clone(), timeout };
            let agents = std::rc::Rc::new(Agents::Ssh(Box::new((opts, RefCell::new(None)))));
            return Ok(Some(FleetSetup { agents, on_lost, timeout, share_numjobs, first: None }));
        }
        let agents = match (&self.agents, &self.agents_file) {
            (Some(list), _) => agents::parse_list(list).map_err(CliError::usage)?,
            (None, Some(path)) => {
                let text = crate::sources::read_job_file(path, "agents file")?;
                agents::parse_file(&text, &path.display().to_string()).map_err(CliError::usage)?
            }
            (None, None) => {
                // Watched hosts are reached with the fleet directory too.
                if (self.fleet_dir.is_some() && self.watch.is_none()) || self.share_numjobs {
                    return Err(CliError::usage(
                        "--fleet-dir and --share-numjobs go with --agents or --agents-file (--fleet-dir also with --watch)",
                    ));
                }
                return Ok(None);
            }
        };
        let dir = self.fleet_dir.clone().unwrap_or_else(storbench_fleet::creds::default_dir);
        Ok(Some(FleetSetup { agents: std::rc::Rc::new(Agents::Given(agents, dir)), on_lost, timeout, share_numjobs, first: None }))
    }
}

/// A training job's ranks over every agent share one dataset's batches:
/// refused before any agent prepares when it holds too few for a batch each.
fn check_ranks(jobs: &[Vec<JobSpec>]) -> Result<(), CliError> {
    for (k, spec) in jobs.first().into_iter().flatten().enumerate() {
        let Some(t) = spec.kind.train() else { continue };
        let ranks: u64 = jobs.iter().filter_map(|a| a.get(k)).map(|s| s.workers() as u64).sum();
        let most = crate::sources::preset::max_accelerators(t);
        if ranks > most {
            return Err(CliError::usage(format!(
                "job '{}': {ranks} accelerators over {} agents, and its dataset holds a batch for at most {most}: \
                 raise --scale, or give fewer --accelerators",
                spec.name,
                jobs.len()
            )));
        }
    }
    Ok(())
}

/// Every agent reached and greeted (Ctrl-C while connecting: nothing was measured).
fn connect(
    list: Vec<AgentSpec>,
    creds: storbench_fleet::creds::CoordinatorCreds,
    timeout: Duration,
    scope: &Scope,
) -> Result<Fleet, CliError> {
    Fleet::connect(list, creds, timeout, &|| scope.interrupted()).map_err(|e| match scope.interrupted() {
        true => CliError { code: EXIT_INTERRUPTED, message: format!("{e}: nothing was measured") },
        false => CliError::system(e),
    })
}

/// Run `plan` (built from `specs`) on the fleet.
pub fn run(
    fleet: &FleetSetup,
    specs: &[JobSpec],
    plan: Plan,
    observer: &mut dyn Observer,
    scope: &Scope,
    watching: crate::session::Watching,
    journal: &mut RunJournal,
) -> Result<RunResult, CliError> {
    let (agent_list, dir) = fleet.agents()?;
    // What the fleet's link cannot carry is the plan's to refuse.
    storbench_runner::check_link(specs, storbench_runner::LinkCaps::FLEET)?;
    let creds = storbench_fleet::creds::coordinator(&dir).map_err(CliError::usage)?;
    let n = agent_list.len();
    let specs = with_credentials(specs);
    let jobs = agent_list
        .iter()
        .enumerate()
        .map(|(i, a)| agents::jobs_for(&specs, a, i, n, fleet.share_numjobs))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::usage)?;
    check_ranks(&jobs)?;
    // Each agent's part (its options and object prefix) is in the journal
    // before any agent prepares: a lost agent's objects are found by it.
    let parts = AgentParts::journal(journal, &agent_list, &jobs);
    say!("storbench: connecting to {n} agent{}", if n == 1 { "" } else { "s" });
    let mut connected = connect(agent_list, creds, fleet.timeout, scope)?;
    for a in &connected.agents {
        let i = &a.info;
        say!(
            "storbench: agent {} ({}, storbench {}): clock {:+.3} ms from ours (round trip {:.3} ms)",
            a.spec.name,
            i.hostname,
            i.storbench_version,
            i.clock_offset_ns as f64 / 1e6,
            i.rtt_ns as f64 / 1e6
        );
    }
    // Watched hosts are checked before any agent prepares: one that cannot
    // be used stops the run with nothing made.
    let mut watchers = watching.connect(scope)?;
    // On failure, the agents that did prepare clean up in order (the first
    // last), as after a run: it may hold a target the others share.
    let all_live = vec![true; n];
    let none_left = vec![Vec::new(); n];
    let aborted = || scope.level() >= 2;
    let shares = match connected.prepare(jobs, &|| scope.interrupted()) {
        Ok(s) => s,
        Err(e) => {
            connected.finish(&none_left, &all_live, &aborted);
            return Err(if scope.interrupted() {
                CliError { code: EXIT_INTERRUPTED, message: format!("{e}: nothing was measured, and the agents cleaned up") }
            } else {
                CliError::system(e)
            });
        }
    };
    parts.prepared(journal, &shares);
    let workers = FleetLink::total_workers(&shares);
    let first = shares.first().cloned().unwrap_or_default();
    let mut prepared = match plan.prepared_elsewhere(first, &workers) {
        Ok(p) => p,
        Err(e) => {
            connected.finish(&none_left, &all_live, &aborted);
            return Err(e.into());
        }
    };
    prepared.telemetry = watching.telemetry;
    let ids: HashMap<String, u32> = prepared.jobs.iter().map(|j| (j.name().to_string(), j.share.job)).collect();
    let notes = agent_notes(&connected, &shares);
    let cluster = match crate::disrupt::cluster(watching.disrupt.as_deref(), watching.telemetry, prepared.jobs.iter().map(|j| &*j.config)) {
        // The coordinator runs none of the load: it measures itself beside the agents.
        Ok(mut c) if watching.telemetry => {
            c.watch.push(Box::new(storbench_runner::telemetry::HostWatch::new("coordinator")));
            c
        }
        Ok(c) => c,
        Err(e) => {
            connected.finish(&none_left, &all_live, &aborted);
            return Err(e);
        }
    };
    let mut link = FleetLink::new(&mut connected, shares, fleet.on_lost);
    let tap = watching.metrics.clone().map(|r| r as std::sync::Arc<dyn storbench_runner::agent::Tap>);
    if let Some(registry) = watching.metrics {
        registry.run_starts(prepared.jobs.iter().map(|j| (j.share.job, j.name())));
        link.set_tap(registry);
    }
    let mut result = crate::watch::run(&mut link, watchers.as_mut(), cluster, tap, &prepared, observer, scope);
    link.annotate(&mut result, &ids);
    let (left, live) = link.leftovers();
    for message in connected.finish(&left, &live, &aborted) {
        result.warnings.push(Warning::Cleanup { message });
    }
    parts.finished(journal, &left, &live);
    result.notes.extend(notes);
    Ok(result)
}

/// The jobs with the store credentials this machine resolves for them (the
/// job's options, this machine's environment and credential files) filled in
/// where the job does not name them, so agents reach the same store as the
/// same user without a copy of the coordinator's environment (as warp's
/// clients take the server's). Secrets among them travel apart from the
/// specs inside the fleet's TLS channel (`Secrets`) and are redacted where
/// results or the journal show options; an agent's own options still win.
fn with_credentials(specs: &[JobSpec]) -> Vec<JobSpec> {
    let mut specs = specs.to_vec();
    for s in &mut specs {
        let resolved = storbench_engine::http::creds::resolved_options(&s.ioengine, &s.engine_options);
        if resolved.is_empty() {
            continue;
        }
        // What they were found by names files on this machine.
        s.engine_options.remove("cloud");
        s.engine_options.remove("profile");
        for (k, v) in resolved {
            s.engine_options.entry(k).or_insert(v);
        }
    }
    specs
}

/// Where each agent's jobs are in the run's journal: agent i's job j is
/// part `first + i * jobs + j`.
struct AgentParts {
    first: usize,
    jobs: usize,
    /// Per job: its run removes its objects itself (or writes none).
    self_cleaning: Vec<bool>,
}

impl AgentParts {
    /// Each agent's jobs' engine targets, before any agent prepares.
    fn journal(journal: &mut RunJournal, agents: &[AgentSpec], jobs: &[Vec<JobSpec>]) -> AgentParts {
        let parts = agents
            .iter()
            .zip(jobs)
            .flat_map(|(a, specs)| specs.iter().map(|s| storbench_runner::journal::agent_store(s, &a.name).into_iter().collect()))
            .collect();
        let self_cleaning = jobs
            .first()
            .map(|specs| specs.iter().map(|s| s.objects.as_ref().is_some_and(|o| o.cleans_up() || !s.writes())).collect())
            .unwrap_or_default();
        AgentParts { first: journal.add(parts), jobs: jobs.first().map_or(0, Vec::len), self_cleaning }
    }

    fn part(&self, agent: usize, job: usize) -> usize {
        self.first + agent * self.jobs + job
    }

    /// What each agent's preparation created, from the shares it sent back.
    fn prepared(&self, journal: &mut RunJournal, shares: &[Vec<storbench_model::protocol::JobShare>]) {
        for (i, agent) in shares.iter().enumerate() {
            for (j, share) in agent.iter().enumerate() {
                let storbench_model::Targets::Store(t) = &share.targets else { continue };
                let mut entries = journal.part(self.part(i, j)).to_vec();
                for e in &mut entries {
                    if let Made::Store { prefix, created, .. } = &mut e.made {
                        *created = Some(t.created.clone());
                        e.state = if prefix.is_some() || !t.created.is_empty() { State::Left } else { State::Done };
                    }
                }
                journal.set(self.part(i, j), entries);
            }
        }
    }

    /// After the agents cleaned up: a lost agent's part is left as it was;
    /// a job whose objects all went (and that made no image to keep) is done.
    fn finished(&self, journal: &mut RunJournal, left: &[Vec<u64>], live: &[bool]) {
        for i in 0..live.len() {
            for (j, objects_gone) in self.self_cleaning.iter().copied().enumerate() {
                let clean = live.get(i).copied().unwrap_or(false) && left.get(i).and_then(|l| l.get(j)).copied().unwrap_or(0) == 0;
                let mut entries = journal.part(self.part(i, j)).to_vec();
                for e in entries.iter_mut().filter(|e| e.state == State::Left) {
                    if clean && objects_gone {
                        e.state = State::Done;
                    }
                }
                journal.set(self.part(i, j), entries);
            }
        }
        journal.finish(&|_| true);
    }
}

/// What each agent's engines said about how they drive their targets (the
/// agents may be built differently), once per agent and note.
fn agent_notes(connected: &Fleet, shares: &[Vec<storbench_model::protocol::JobShare>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (agent, jobs) in connected.agents.iter().zip(shares) {
        for n in jobs.iter().flat_map(|j| j.targets.notes()) {
            let line = format!("agent {}: {n}", agent.spec.name);
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// `storbench agent`: make a fleet directory, or serve.
pub fn agent(a: &AgentArgs) -> Result<i32, CliError> {
    if let Some(dir) = &a.init {
        let files = storbench_fleet::creds::init(dir, &a.host).map_err(CliError::usage)?;
        for f in files {
            out!("{}", f.display());
        }
        say!(
            "storbench: fleet credentials in {}: copy the directory to every agent and the coordinator \
             (ca.key need not leave this machine); keep it private",
            dir.display()
        );
        return Ok(0);
    }
    let name =
        a.name.clone().unwrap_or_else(|| Some(storbench_runner::hostname()).filter(|h| !h.is_empty()).unwrap_or_else(|| "agent".into()));
    let opts = storbench_fleet::server::AgentOptions {
        listen: a.listen,
        dir: a.fleet_dir.clone().unwrap_or_else(storbench_fleet::creds::default_dir),
        mtls: a.mtls,
        name,
        timeout: a.timeout,
        once: a.once,
        protocol: a.protocol_version.unwrap_or(storbench_model::protocol::PROTOCOL_VERSION),
        clock_skew_ns: a.clock_skew_ms.unwrap_or(0).saturating_mul(1_000_000),
        memory: a.memory_bytes.or_else(storbench_runner::plan::limits::total_memory),
        remove_on_exit: a.remove_on_exit.clone(),
        net_port: match a.net_port {
            Some(0) => None,
            Some(p) => Some(p),
            None => a.listen.port().checked_add(1),
        },
        monitor: a.monitor,
        allow_signal: a.allow_signal.clone(),
    };
    storbench_fleet::server::serve(opts).map_err(CliError::system)?;
    Ok(0)
}
