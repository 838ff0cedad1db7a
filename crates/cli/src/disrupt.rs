//! `--fault TIME:ACTION[:ARG]`, `--allow-exec`, `--watch-ceph [CEPH.conf]`
//! and `--scrape URL`: a run through failure, and the storage cluster's own
//! counters and its exporters' series beside it.
//!
//! The schedule and the URLs are checked with the command's other flags
//! (exit 2: a fault that cannot be read, a command without `--allow-exec`,
//! a URL with credentials in it, an exporter that does not answer); the
//! cluster is reached once the jobs are prepared, before anything runs, and
//! the exporters again for each run. Cluster faults go through the
//! cluster's management interface (Ceph's monitors), never a shell.

use crate::cli::JobSource;
use crate::error::*;
use std::path::PathBuf;
use storbench_engine::{ClusterAdmin, EngineConfig, Watched};
use storbench_model::disruption::{FaultAction, ScheduledFault};
use storbench_runner::disruption::ClusterSetup;

/// A command's faults and the cluster it watches, for each of its runs.
pub struct DisruptSetup {
    /// In time order.
    pub faults: Vec<ScheduledFault>,
    /// `--watch-ceph`: `Some(None)` the jobs' cluster, `Some(Some(conf))`
    /// the one that ceph.conf names.
    pub watch_ceph: Option<Option<PathBuf>>,
    /// `--scrape`: exporters' endpoints, and the metric names kept of them.
    pub scrape: Vec<String>,
    pub scrape_keep: Vec<String>,
}

impl DisruptSetup {
    /// From the command's flags; `None` when it asks for neither.
    pub fn of(source: &JobSource) -> Result<Option<DisruptSetup>, CliError> {
        let mut faults = source.faults.iter().map(|f| ScheduledFault::parse(f).map_err(CliError::usage)).collect::<Result<Vec<_>, _>>()?;
        if let Some(f) = faults.iter().find(|f| f.action.needs_exec_consent()).filter(|_| !source.allow_exec) {
            let what = match f.action {
                FaultAction::Exec(_) => "a fault that runs a command needs --allow-exec (it runs `sh -c` on this machine)",
                _ if f.action.host().is_some() => {
                    "a fault that stops or continues a process needs --allow-exec (it signals a process of a watched host)"
                }
                _ => "a fault that stops or continues a process needs --allow-exec (it signals a process of this machine)",
            };
            return Err(CliError::usage(format!("--fault {}s:{}: {what}", f.at.as_secs_f64(), f.action.words())));
        }
        for f in &faults {
            // A watched host's process is its monitor's to check, once it is reached.
            let checked = match (f.action.process(), f.action.host()) {
                (Some(_), Some(_)) => Ok(()),
                (Some(p), None) => storbench_runner::procs::check(p),
                (None, _) => storbench_runner::netem::check(&f.action),
            };
            checked.map_err(|e| CliError::usage(format!("--fault {}s:{}: {e}", f.at.as_secs_f64(), f.action.words())))?;
        }
        faults.sort_by_key(|f| f.at);
        let watch_ceph = source.watch_ceph.as_ref().map(|p| Some(PathBuf::from(p)).filter(|_| !p.is_empty()));
        if let Some(Some(conf)) = &watch_ceph {
            if !conf.is_file() {
                return Err(CliError::usage(format!("--watch-ceph {}: no such file (give the cluster's ceph.conf)", conf.display())));
            }
        }
        for url in &source.scrape {
            storbench_engine::http::scrape::parse_url(url).map_err(|e| CliError::usage(e.to_string()))?;
        }
        if source.scrape.is_empty() && !source.scrape_keep.is_empty() {
            return Err(CliError::usage("--scrape-keep names what --scrape keeps: give --scrape URL too"));
        }
        if !source.scrape.is_empty() && source.no_telemetry {
            return Err(CliError::usage("--scrape and --no-telemetry: an exporter's series are telemetry; drop one of them"));
        }
        // Reached now, before anything is made: an endpoint that does not
        // answer with Prometheus's text format is named with its URL.
        for url in &source.scrape {
            storbench_engine::http::scrape::Scrape::connect(url, &source.scrape_keep)?;
        }
        let (scrape, scrape_keep) = (source.scrape.clone(), source.scrape_keep.clone());
        let any = !faults.is_empty() || watch_ceph.is_some() || !scrape.is_empty();
        Ok(any.then_some(DisruptSetup { faults, watch_ceph, scrape, scrape_keep }))
    }
}

/// Before anything is made: faults that go through a cluster, or a cluster
/// to watch, need a cluster the run can reach (a rados or rbd job, or
/// `--watch-ceph CEPH.conf`).
pub fn check(setup: Option<&DisruptSetup>, specs: &[storbench_workload::JobSpec]) -> Result<(), CliError> {
    let Some(setup) = setup else { return Ok(()) };
    let needs = setup.faults.iter().any(|f| f.action.on_cluster()) || setup.watch_ceph.is_some();
    let given = matches!(setup.watch_ceph, Some(Some(_)));
    let knows = specs.iter().any(|s| storbench_engine::find(&s.ioengine).is_some_and(|e| e.knows_cluster()));
    match needs && !given && !knows {
        true => Err(CliError::usage(
            "no Ceph cluster to watch or to inject faults into: the run has no rados or rbd job; give --watch-ceph CEPH.conf",
        )),
        false => Ok(()),
    }
}

/// What goes beside one run: the cluster watched (telemetry on, and asked
/// for or faults given), the exporters scraped (telemetry on) and the
/// faults. The cluster is `--watch-ceph`'s, else the first job's whose
/// engine knows it (rados, rbd). An exporter that does not answer with
/// Prometheus's text format now is an error naming its URL.
pub fn cluster<'a>(
    setup: Option<&DisruptSetup>,
    telemetry: bool,
    configs: impl Iterator<Item = &'a dyn EngineConfig>,
) -> Result<ClusterSetup, CliError> {
    let Some(setup) = setup else { return Ok(ClusterSetup::default()) };
    let mut watch = Vec::new();
    if telemetry {
        for url in &setup.scrape {
            let s = storbench_engine::http::scrape::Scrape::connect(url, &setup.scrape_keep)?;
            say!("storbench: scraping {} once a second", s.name());
            watch.push(Box::new(s) as Box<dyn Watched>);
        }
    }
    let on_cluster = setup.faults.iter().any(|f| f.action.on_cluster());
    let watched = telemetry && setup.watch_ceph.is_some();
    if !(on_cluster || watched) {
        // Commands only, or a cluster asked for with telemetry off: nothing to reach.
        return Ok(ClusterSetup { watch, faults: setup.faults.clone(), ..ClusterSetup::default() });
    }
    let Some(mut connect) = reach(setup, configs)? else {
        return Err(CliError::usage(
            "no Ceph cluster to watch or to inject faults into: the run has no rados or rbd job; give --watch-ceph CEPH.conf",
        ));
    };
    // Faults go through a connection of their own, so a slow reading never delays one.
    let injector = on_cluster.then(&mut connect).transpose()?;
    if telemetry {
        watch.insert(0, connect()? as Box<dyn Watched>);
    }
    Ok(ClusterSetup { watch, injector, faults: setup.faults.clone(), ..ClusterSetup::default() })
}

/// Connects to the run's cluster, again each time it is called.
type Connect<'a> = Box<dyn FnMut() -> Result<Box<dyn ClusterAdmin>, CliError> + 'a>;

/// A way to connect to the run's cluster, if it has one.
fn reach<'a>(setup: &DisruptSetup, mut configs: impl Iterator<Item = &'a dyn EngineConfig>) -> Result<Option<Connect<'a>>, CliError> {
    if let Some(Some(conf)) = &setup.watch_ceph {
        let conf = conf.clone();
        return Ok(Some(Box::new(move || {
            Ok(Box::new(storbench_engine::ceph::watch::CephWatch::from_conf(&conf)?) as Box<dyn ClusterAdmin>)
        })));
    }
    // The first job whose engine knows its cluster (its connection checked now).
    let Some(config) = configs.find_map(|c| c.cluster().map(|a| a.map(|_| c)).transpose()).transpose()? else { return Ok(None) };
    Ok(Some(Box::new(move || config.cluster()?.ok_or_else(|| CliError::system("the cluster went away")))))
}
