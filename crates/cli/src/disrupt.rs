//! `--fault TIME:ACTION[:ARG]`, `--allow-exec` and `--watch-ceph [CEPH.conf]`:
//! a run through failure, and the storage cluster's own counters beside it.
//!
//! The schedule is checked with the command's other flags (exit 2: a fault
//! that cannot be read, a command without `--allow-exec`); the cluster is
//! reached once the jobs are prepared, before anything runs (exit 3 when
//! it cannot be). Cluster faults go through the cluster's management
//! interface (Ceph's monitors), never a shell.

use crate::cli::JobSource;
use crate::error::*;
use std::path::PathBuf;
use storbench_engine::{ClusterAdmin, EngineConfig};
use storbench_model::disruption::ScheduledFault;
use storbench_runner::disruption::ClusterSetup;

/// A command's faults and the cluster it watches, for each of its runs.
pub struct DisruptSetup {
    /// In time order.
    pub faults: Vec<ScheduledFault>,
    /// `--watch-ceph`: `Some(None)` the jobs' cluster, `Some(Some(conf))`
    /// the one that ceph.conf names.
    pub watch_ceph: Option<Option<PathBuf>>,
}

impl DisruptSetup {
    /// From the command's flags; `None` when it asks for neither.
    pub fn of(source: &JobSource) -> Result<Option<DisruptSetup>, CliError> {
        let mut faults = source.faults.iter().map(|f| ScheduledFault::parse(f).map_err(CliError::usage)).collect::<Result<Vec<_>, _>>()?;
        if let Some(f) = faults.iter().find(|f| !f.action.on_cluster()).filter(|_| !source.allow_exec) {
            return Err(CliError::usage(format!(
                "--fault {}s:{}: a fault that runs a command needs --allow-exec (it runs `sh -c` on this machine)",
                f.at.as_secs_f64(),
                f.action.words()
            )));
        }
        faults.sort_by_key(|f| f.at);
        let watch_ceph = source.watch_ceph.as_ref().map(|p| Some(PathBuf::from(p)).filter(|_| !p.is_empty()));
        if let Some(Some(conf)) = &watch_ceph {
            if !conf.is_file() {
                return Err(CliError::usage(format!("--watch-ceph {}: no such file (give the cluster's ceph.conf)", conf.display())));
            }
        }
        Ok((!faults.is_empty() || watch_ceph.is_some()).then_some(DisruptSetup { faults, watch_ceph }))
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
/// for or faults given) and the faults. The cluster is `--watch-ceph`'s,
/// else the first job's whose engine knows it (rados, rbd).
pub fn cluster<'a>(
    setup: Option<&DisruptSetup>,
    telemetry: bool,
    configs: impl Iterator<Item = &'a dyn EngineConfig>,
) -> Result<ClusterSetup, CliError> {
    let Some(setup) = setup else { return Ok(ClusterSetup::default()) };
    let on_cluster = setup.faults.iter().any(|f| f.action.on_cluster());
    let watched = telemetry && setup.watch_ceph.is_some();
    if !(on_cluster || watched) {
        // Commands only, or a cluster asked for with telemetry off: nothing to reach.
        return Ok(ClusterSetup { faults: setup.faults.clone(), ..ClusterSetup::default() });
    }
    let Some(mut connect) = reach(setup, configs)? else {
        return Err(CliError::usage(
            "no Ceph cluster to watch or to inject faults into: the run has no rados or rbd job; give --watch-ceph CEPH.conf",
        ));
    };
    // Faults go through a connection of their own, so a slow reading never delays one.
    let injector = on_cluster.then(&mut connect).transpose()?;
    let watch = telemetry.then(&mut connect).transpose()?;
    Ok(ClusterSetup { watch, injector, faults: setup.faults.clone() })
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
