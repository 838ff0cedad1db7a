//! The model: what a run produced and what its parts say to each other, as
//! plain data that depends on no engine.
//!
//! - [`result`]: a run's results (jobs, operations, size classes, per-second
//!   series, full histograms), exactly as `result.json` holds them;
//! - [`warning`]: typed warnings about the measurement, each saying how to fix
//!   the run (their analysis lives in the runner, where plan and result meet);
//! - [`runset`]: runs labelled with the parameters that produced them, the unit
//!   of sweeps and comparisons, loaded back from results directories;
//! - [`protocol`]: the versioned, two-way messages between a coordinator and
//!   its agents, and the share of a job an agent runs;
//! - [`fault`]: whose fault a failure is (input, storage, system, a stop),
//!   which every error from planning to a worker's end says;
//! - [`target`]: the files, devices and stores a job works on, once prepared;
//! - [`journal`]: what a run creates (`journal.json`), for `storbench cleanup
//!   RESULTS_DIR`;
//! - [`sweep`]: a sweep's index (`sweep.json`): dimensions, points, knees;
//! - [`study`]: a study's index (`study.json`): questions, configurations,
//!   and each step (a storbench command) with its state;
//! - [`telemetry`]: the hosts' per-second series on the run's time axis
//!   (sources, seconds, named series with labels);
//! - [`ceiling`]: ceilings on the hosts' CPU, cores and disks (`--stop-if`)
//!   that end a sweep's curve or fail an SLO probe;
//! - [`tidy`]: one row per point and job scope, swept values as columns,
//!   from run, sweep, SLO search and study directories (`storbench export`).
//!
//! Renderers depend on this crate, never on the runner, so a report can be
//! built (and re-built from a results directory) without any engine.

pub mod ceiling;
pub mod disruption;
pub mod fault;
pub mod journal;
mod kind_result;
pub mod protocol;
pub mod result;
pub mod runset;
pub mod slo;
pub mod study;
pub mod sweep;
pub mod target;
pub mod telemetry;
pub mod tidy;
pub mod timeline;
pub mod warning;

pub use fault::Fault;
pub use result::*;
pub use runset::{LoadError, Run, RunSet};
pub use target::{FileKind, StoreTarget, TargetFile, Targets};
pub use warning::Warning;
