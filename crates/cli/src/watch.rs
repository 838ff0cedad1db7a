//! `--watch HOST[:PORT],...`: storage servers running `storbench agent
//! --monitor` measure themselves during each run, local or on a fleet.
//!
//! The list is checked with the command's other flags (exit 2); the hosts
//! are reached before anything is prepared, so one that cannot be used
//! (unreachable, refusing, an agent that runs load) ends the run with exit
//! 3 and nothing made, as an agent does. Their seconds land in the run's
//! telemetry as `watched` sources; one lost mid-run is a warning.

use crate::cli::FleetArgs;
use crate::error::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use storbench_fleet::agents::AgentSpec;
use storbench_fleet::watch::Watchers;
use storbench_model::RunResult;
use storbench_runner::agent::{AgentLink, Tap, Tapped};
use storbench_runner::disruption::{ClusterLink, ClusterSetup};
use storbench_runner::interrupt::Scope;
use storbench_runner::{run_plan_on, Observer, Prepared};

/// The hosts a command's runs watch, and how to reach them.
pub struct WatchSetup {
    hosts: Vec<AgentSpec>,
    /// The fleet directory (its token and CA), as for agents.
    dir: PathBuf,
    timeout: Duration,
}

impl WatchSetup {
    /// The watched hosts the flags name, if any; a bad list, one watching
    /// without telemetry or a host also under `--agents` is refused.
    pub fn of(flags: &FleetArgs, no_telemetry: bool) -> Result<Option<WatchSetup>, CliError> {
        let Some(list) = &flags.watch else { return Ok(None) };
        let hosts = storbench_fleet::watch::parse(list).map_err(CliError::usage)?;
        if no_telemetry {
            return Err(CliError::usage("--watch and --no-telemetry: a watched host only sends its telemetry; drop one of them"));
        }
        let agents = flags.agents.as_deref().map(storbench_fleet::agents::parse_list).and_then(Result::ok).unwrap_or_default();
        if let Some(h) = hosts.iter().find(|h| agents.iter().any(|a| a.address == h.address)) {
            return Err(CliError::usage(format!(
                "{} is under both --agents and --watch: an agent serves one run at a time; list it once",
                h.address
            )));
        }
        let dir = flags.fleet_dir.clone().unwrap_or_else(storbench_fleet::creds::default_dir);
        Ok(Some(WatchSetup { hosts, dir, timeout: flags.agent_timeout }))
    }

    /// Reach and greet every watched host (exit 3 naming each that cannot
    /// be used; a Ctrl-C meanwhile ends the wait).
    pub fn connect(&self, scope: &Scope) -> Result<Watchers, CliError> {
        let creds = storbench_fleet::creds::coordinator(&self.dir).map_err(CliError::usage)?;
        let n = self.hosts.len();
        say!("storbench: connecting to {n} watched host{}", if n == 1 { "" } else { "s" });
        let w =
            Watchers::connect(self.hosts.clone(), creds, self.timeout, &|| scope.interrupted()).map_err(|e| match scope.interrupted() {
                true => CliError { code: EXIT_INTERRUPTED, message: format!("{e}: nothing was measured") },
                false => CliError::system(e),
            })?;
        for i in w.hosts() {
            say!(
                "storbench: watched host {} ({}, storbench {}): clock {:+.3} ms from ours (round trip {:.3} ms)",
                i.name,
                i.hostname,
                i.storbench_version,
                i.clock_offset_ns as f64 / 1e6,
                i.rtt_ns as f64 / 1e6
            );
        }
        Ok(w)
    }
}

/// With the flags: a process fault on a host (`proc-stop:NAME@HOST`) must
/// name one under `--watch`.
pub fn check_hosts(watch: Option<&WatchSetup>, disrupt: Option<&crate::disrupt::DisruptSetup>) -> Result<(), CliError> {
    let hosts = watch.map_or(&[][..], |w| &w.hosts[..]);
    for f in disrupt.iter().flat_map(|d| &d.faults) {
        match f.action.host() {
            Some(h) if !hosts.iter().any(|w| w.answers_to(h)) => {
                return Err(CliError::usage(format!(
                    "--fault {}s:{}: {h} is not under --watch; a process fault reaches a host that runs \
                     `storbench agent --monitor --allow-signal NAME` and is listed under --watch",
                    f.at.as_secs_f64(),
                    f.action.words()
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Run the prepared plan over `link`, with the storage cluster (watched,
/// and the faults injected into it) and the watched hosts beside it if
/// there are any; they stop when the run is over, and what the faults did
/// is assessed from the run's own figures. `tap` (`--prometheus`) hears of
/// every telemetry second and fault as it comes.
pub fn run(
    link: &mut dyn AgentLink,
    watchers: Option<&mut Watchers>,
    mut cluster: ClusterSetup,
    tap: Option<Arc<dyn Tap>>,
    prepared: &Prepared,
    observer: &mut dyn Observer,
    scope: &Scope,
) -> RunResult {
    let run = Run { tap: tap.as_deref(), prepared, scope };
    if cluster.is_empty() {
        return run.beside_hosts(link, watchers, observer);
    }
    let faults = !cluster.faults.is_empty();
    cluster.tap = tap.clone();
    if let Some(w) = watchers.as_deref() {
        cluster.remote = Some(w.signals() as Arc<dyn storbench_runner::disruption::RemoteProcs>);
    }
    let mut beside = ClusterLink::new(link, cluster);
    let mut result = run.beside_hosts(&mut beside, watchers, observer);
    let events = beside.finish();
    if faults {
        result.disruption = Some(storbench_model::disruption::Disruption::assess(&result, events));
    }
    result
}

/// What every layer of a run shares.
struct Run<'a> {
    tap: Option<&'a dyn Tap>,
    prepared: &'a Prepared,
    scope: &'a Scope,
}

impl Run<'_> {
    fn beside_hosts(&self, link: &mut dyn AgentLink, watchers: Option<&mut Watchers>, observer: &mut dyn Observer) -> RunResult {
        let Some(w) = watchers else { return self.tapped(link, observer) };
        let mut result = self.tapped(&mut w.link(link), observer);
        w.finish();
        w.annotate(&mut result);
        result
    }

    /// The outermost link, where every source's seconds pass.
    fn tapped(&self, link: &mut dyn AgentLink, observer: &mut dyn Observer) -> RunResult {
        match self.tap {
            Some(tap) => run_plan_on(&mut Tapped { inner: link, tap, agent: None }, self.prepared, observer, self.scope),
            None => run_plan_on(link, self.prepared, observer, self.scope),
        }
    }
}
