//! Resolving job specs into a plan: validated once, before anything is touched.
//!
//! [`build_plan`] checks every job (engine, options, sizes, combinations),
//! parses each job's engine options once into the engine's typed
//! configuration, and writes nothing; only then does [`Plan::prepare`]
//! (in `prepare`) create and lay out targets.
//!
//! Here: each job resolved (`resolve`, the engine looked up once), the
//! link's capabilities. Beside it: the error (`error`), checks of one job
//! against its engine (`checks`), jobs that are not generated I/O on
//! storage (`kinds`), checks across a run's jobs (`group`) and the
//! machine's memory and threads (`limits`).

use std::path::PathBuf;
use std::sync::Arc;
use storbench_engine::{EngineConfig, EngineFactory};
use storbench_model::Warning;
use storbench_workload::options::{core, core_names, suggest};
use storbench_workload::{JobSpec, RateLimit};

mod checks;
mod error;
mod group;
mod kinds;
pub mod limits;
#[cfg(test)]
mod tests;

use checks::{check_dataset_exists, check_iolog, check_model, check_objects, check_prio, check_sizes, check_stream, check_verify};
pub use error::PlanError;
use group::{check_unverified_writers, check_waits, judge_by_header, start_with_peers};
use kinds::{check_burners, file_ops, no_storage, BURN_OPTIONS, EXEC_OPTIONS};

/// One job, validated, its engine configured; nothing touched yet.
pub struct JobPlan {
    pub id: u32,
    pub group: u32,
    pub spec: JobSpec,
    pub engine: &'static dyn EngineFactory,
    pub config: Arc<dyn EngineConfig>,
    pub queue_depth: u32,
    /// Paths each worker uses (empty for engines that need no files).
    pub paths: Vec<Vec<PathBuf>>,
    pub ramp_ns: u64,
    /// End of the run (ramp included), if time bound.
    pub end_ns: Option<u64>,
    /// Fixed-rate arrivals per second, per worker.
    pub ops_per_sec: Option<f64>,
    /// Object jobs: the prefix of every object name.
    pub object_prefix: Option<String>,
    pub warnings: Vec<Warning>,
    /// The trace a replaying job issues (held so workers share one copy).
    pub trace: Option<Arc<storbench_workload::trace::Trace>>,
}

pub struct Plan {
    pub jobs: Vec<JobPlan>,
    /// Job indexes per group; groups run one after another.
    pub groups: Vec<Vec<usize>>,
}

/// Validate every spec and resolve it. Writes nothing.
pub fn build_plan(specs: Vec<JobSpec>) -> Result<Plan, PlanError> {
    if specs.is_empty() {
        return Err(PlanError::Input { job: "-".into(), message: "no jobs to run".into() });
    }
    let mut jobs = Vec::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    // fio numbers its threads across the whole job file (cpus_allowed_policy=split).
    let mut threads = 0u32;
    for (i, mut spec) in specs.into_iter().enumerate() {
        if let Some(p) = &mut spec.placement {
            p.first = threads;
        }
        threads = threads.saturating_add(spec.workers());
        if spec.stonewall || groups.is_empty() {
            groups.push(Vec::new());
        }
        let group = groups.len() as u32 - 1;
        groups.last_mut().expect("pushed above").push(i);
        jobs.push(resolve(i as u32, group, spec)?);
    }
    let mut names = std::collections::HashSet::new();
    for j in &jobs {
        if !names.insert(j.spec.name.clone()) {
            return Err(err(&j.spec, "two jobs have this name; give each job its own name"));
        }
    }
    check_burners(&jobs)?;
    start_with_peers(&mut jobs);
    check_waits(&jobs)?;
    check_unverified_writers(&jobs)?;
    judge_by_header(&mut jobs);
    crate::plan::limits::check(&jobs, &groups)?;
    Ok(Plan { jobs, groups })
}

/// What the agents a plan runs on can do together: the checks that depend
/// on the link rather than on a job (a fleet's agents each keep their own
/// table of acknowledged writes, and each would replay a whole trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkCaps {
    /// One table of acknowledged writes sees every writer of a target.
    pub one_verify_table: bool,
    /// A replayed trace is shared out between the link's workers.
    pub shares_traces: bool,
}

impl LinkCaps {
    /// One process, the in-process agent.
    pub const LOCAL: LinkCaps = LinkCaps { one_verify_table: true, shares_traces: true };
    /// Agents on other machines (`--agents`, `--ssh`).
    pub const FLEET: LinkCaps = LinkCaps { one_verify_table: false, shares_traces: false };
}

/// The jobs against what the link they will run over can do: a job that
/// needs more is refused as input, before anything connects.
pub fn check_link(specs: &[JobSpec], caps: LinkCaps) -> Result<(), PlanError> {
    for spec in specs {
        if !caps.one_verify_table && spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()) {
            return Err(err(
                spec,
                "verify is not built for fleet runs yet (each agent would judge only its own writes); run it without --agents",
            ));
        }
        if !caps.shares_traces && spec.kind.replay().is_some() {
            return Err(err(
                spec,
                "trace replay is not built for fleet runs yet (the trace is not split between agents); run it without --agents",
            ));
        }
    }
    Ok(())
}

fn err(spec: &JobSpec, message: impl Into<String>) -> PlanError {
    PlanError::Input { job: spec.name.clone(), message: message.into() }
}

fn resolve(id: u32, group: u32, mut spec: JobSpec) -> Result<JobPlan, PlanError> {
    // SNIA PTS: at most 25 rounds, unless the job says how long.
    if let Some(round) = spec.steady.as_ref().filter(|s| s.snia).map(|s| s.interval) {
        if spec.runtime.is_none() {
            spec.runtime = Some(round * storbench_workload::steady::SNIA_MAX_ROUNDS);
            spec.time_based = true;
        }
    }
    storbench_workload::check_name(&spec.name).map_err(|m| err(&spec, format!("its name: {m}")))?;
    if let Some(p) = &spec.placement {
        crate::placement::check(p).map_err(|m| err(&spec, m))?;
    }
    let engine = find_engine(&spec)?;
    let caps = engine.capabilities();
    // An engine with no storage at all (cpuio) runs CPU burners.
    if !caps.blocks && !caps.objects {
        return no_storage(id, group, spec, engine);
    }
    if let Some(name) = BURN_OPTIONS.iter().find(|o| spec.given.has(o)) {
        return Err(err(&spec, format!("{name} applies to ioengine=cpuio (a CPU burner); engine {} does I/O", engine.name())));
    }
    if let Some(name) = EXEC_OPTIONS.iter().find(|o| spec.given.has(o)) {
        return Err(err(
            &spec,
            format!("{name} applies to ioengine=exec (a program run for the job's time); engine {} does I/O", engine.name()),
        ));
    }
    crate::volumes::resolve(&mut spec, engine)?;
    let trace = crate::replay::resolve(&mut spec, engine)?;
    let config = configure(&spec, engine)?;
    if let Some(ops) = engine.file_ops() {
        file_ops(&mut spec, engine.name(), ops)?;
    }
    if !caps.blocks && spec.objects.is_none() {
        // An object engine with no object options: the model's defaults.
        spec.objects = Some(storbench_workload::ObjectSpec::default());
    }
    let mut warnings: Vec<Warning> = config
        .warnings(spec.writes())
        .into_iter()
        .map(|message| Warning::Engine { job: spec.name.clone(), engine: engine.name().into(), message })
        .collect();
    let mut queue_depth = spec.iodepth;
    if !caps.queued && queue_depth > 1 {
        warnings.push(Warning::QueueDepthCapped { engine: engine.name().into(), asked: queue_depth });
        queue_depth = 1;
        // The job is described (and labelled) as it runs.
        spec.iodepth = 1;
    }
    if queue_depth > engine.max_queue_depth() {
        return Err(err(
            &spec,
            format!(
                "engine {} keeps at most {} operations in flight per worker; lower iodepth, or use more workers (numjobs)",
                engine.name(),
                engine.max_queue_depth()
            ),
        ));
    }
    if spec.trims && !engine.supports(storbench_workload::OpKind::Trim) {
        let able = storbench_engine::names_where(|f| f.capabilities().does_io && f.supports(storbench_workload::OpKind::Trim));
        return Err(err(
            &spec,
            format!("engine {} cannot trim; rw=trim and randtrim need an engine that does ({})", engine.name(), able.join(", ")),
        ));
    }
    if spec.trims && spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()) {
        return Err(err(&spec, "a trim job writes no blocks to verify; verify a job that writes"));
    }
    check_verify(&spec, engine)?;
    check_stream(&spec, engine)?;
    check_iolog(&spec, caps)?;
    if let Some(ss) = &spec.steady {
        if !ss.dur.is_zero() && ss.criteria.is_empty() {
            return Err(err(&spec, "ss_dur needs steadystate= (e.g. steadystate=iops:10%): what must be steady"));
        }
        if ss.enabled() && ss.dur < ss.interval * 2 {
            return Err(err(&spec, "ss_dur must hold at least two samples of ss_interval"));
        }
    }
    if spec.direct && !caps.direct_io {
        return Err(err(&spec, format!("engine {} cannot do direct I/O; use direct=0", engine.name())));
    }
    let needs = [
        (spec.open_sync != storbench_workload::OpenSync::None && !caps.needs_files, "sync", "files and block devices"),
        (spec.end_fsync && !caps.needs_files, "end_fsync", "files and block devices"),
        (spec.offset_increment > 0 && !caps.blocks, "offset_increment", "block targets"),
    ];
    if let Some((_, name, what)) = needs.iter().find(|n| n.0) {
        return Err(err(&spec, format!("{name} applies to {what}; engine {} has none", engine.name())));
    }
    check_model(&spec, engine)?;
    check_dataset_exists(&spec, engine)?;
    check_prio(&spec, engine)?;
    if let Some(o) = &spec.objects {
        check_objects(&spec, engine)?;
        let per_worker = o.count / spec.numjobs.max(1) as u64;
        if !caps.ordered && per_worker < 4 * queue_depth as u64 {
            let message = format!(
                "{per_worker} objects per worker for {queue_depth} operations in flight: when every object is busy, two \
                 operations on one object can overlap, and this store does not keep their order (reads may then fail \
                 with 404); give the job more objects"
            );
            warnings.push(Warning::Engine { job: spec.name.clone(), engine: engine.name().into(), message });
        }
    } else {
        check_sizes(&spec)?;
    }
    if spec.time_based && spec.runtime.is_none_or(|r| r.is_zero()) {
        return Err(err(&spec, "time_based needs a runtime above 0 (e.g. --runtime 30s)"));
    }
    let bounded = spec.runtime.is_some()
        || spec.io_size.is_some()
        || spec.number_ios.is_some()
        // verify_only runs no workload: the read-back pass is bounded by what was written.
        || spec.verify.as_ref().is_some_and(|v| v.only && v.checksum.is_some())
        // A replay ends with its trace, training with its epochs.
        || spec.kind.replay().is_some()
        || spec.kind.train().is_some()
        || spec.objects.is_none() && (spec.size.is_some() || caps.does_io);
    if !bounded {
        let what = if spec.objects.is_some() { "an object job runs until runtime, io_size or number_ios" } else { "set runtime or size" };
        return Err(err(&spec, format!("engine {} has no target to bound the job: {what}", engine.name())));
    }
    let paths = if caps.needs_files { crate::volumes::worker_paths(&spec) } else { Vec::new() };
    let ramp_ns = spec.ramp_time.as_nanos() as u64;
    let end_ns = spec.runtime.map(|r| ramp_ns + r.as_nanos() as u64);
    let ops_per_sec = spec.rate.map(|r| ops_per_sec(&spec, r));
    Ok(JobPlan {
        id,
        group,
        queue_depth,
        engine,
        config,
        paths,
        ramp_ns,
        end_ns,
        ops_per_sec,
        object_prefix: spec.objects.as_ref().map(|o| o.prefix_for(&spec.name)),
        warnings,
        trace,
        spec,
    })
}

fn find_engine(spec: &JobSpec) -> Result<&'static dyn EngineFactory, PlanError> {
    storbench_engine::find(&spec.ioengine).ok_or_else(|| {
        let names: Vec<&str> = storbench_engine::registry().iter().map(|f| f.name()).collect();
        let hint = suggest(&spec.ioengine, names.iter().copied()).map(|s| format!(" Did you mean '{s}'?")).unwrap_or_default();
        err(spec, format!("unknown ioengine '{}'; available: {}.{hint}", spec.ioengine, names.join(", ")))
    })
}

/// Options storbench once had, and why they went (said instead of "unknown").
fn retired(key: &str) -> Option<&'static str> {
    match key {
        "destroy_device_in_use" => Some(
            "storbench never writes to a device that is mounted, swap or under device-mapper, md or LVM; \
             free it first (umount, swapoff, vgchange -an, mdadm --stop)",
        ),
        _ => None,
    }
}

/// Options nobody claimed get the nearest known name as a suggestion; the
/// rest the engine parses, once, into its configuration.
fn configure(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<Arc<dyn EngineConfig>, PlanError> {
    for key in spec.engine_options.keys() {
        if engine.options().iter().any(|o| o.name == key) {
            continue;
        }
        let mut known: Vec<&str> = core_names().collect();
        known.extend(storbench_engine::all_option_names());
        let owners: Vec<&str> =
            storbench_engine::registry().iter().filter(|f| f.options().iter().any(|o| o.name == key)).map(|f| f.name()).collect();
        let msg = if let Some(why) = retired(key) {
            format!("option '{key}' is gone: {why}")
        } else if !owners.is_empty() {
            format!("option '{key}' belongs to engine {}, not {}", owners.join(", "), engine.name())
        } else {
            match suggest(key, known.iter().copied()) {
                Some(s) if engine.options().iter().any(|o| o.name == s) || core(s).is_some() => {
                    format!("unknown option '{key}'; did you mean '{s}'?")
                }
                Some(s) => format!(
                    "option '{key}' is not an option of engine {} (did you mean '{s}', an option of another engine?)",
                    engine.name()
                ),
                None => format!("unknown option '{key}' (see `storbench help options`)"),
            }
        };
        return Err(err(spec, msg));
    }
    engine.configure(&spec.engine_options).map_err(|e| PlanError::engine(&spec.name, e))
}

/// Arrivals per second for one worker, from IOPS or bytes/s and the mean size.
fn ops_per_sec(spec: &JobSpec, rate: RateLimit) -> f64 {
    match rate {
        RateLimit::Iops(iops) => iops,
        RateLimit::Bytes(bps) => {
            let mean = |s: &storbench_workload::SizeSplit| {
                let w: u64 = s.0.iter().map(|e| e.1 as u64).sum();
                s.0.iter().map(|e| e.0 as f64 * e.1 as f64).sum::<f64>() / w as f64
            };
            let r = spec.read_percent() / 100.0;
            bps / (r * mean(&spec.bs.read) + (1.0 - r) * mean(&spec.bs.write))
        }
    }
}
