//! Resolving job specs into a plan: validated once, before anything is touched.
//!
//! [`build_plan`] checks every job (engine, options, sizes, combinations),
//! parses each job's engine options once into the engine's typed
//! configuration, and writes nothing; only then does [`Plan::prepare`]
//! (in `prepare`) create and lay out targets.

use std::path::PathBuf;
use std::sync::Arc;
use storbench_engine::files::TargetError;
use storbench_engine::{EngineConfig, EngineError, EngineFactory};
use storbench_model::{Fault, Warning};
use storbench_workload::options::{core, core_names, suggest};
use storbench_workload::{JobSpec, RateLimit};

/// Why a plan could not be built or prepared: which job, and the error as
/// it came (an engine's or a target's keeps its type, as `source()`).
/// Whose fault it is comes from the kind ([`PlanError::fault`]), which the
/// exit code is read from.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The job cannot run as given: what is wrong and how to fix it.
    #[error("job '{}': {message}", shown(.job))]
    Input { job: String, message: String },
    /// The job's engine refused or failed (its options, its target, the
    /// room or capacity of its store).
    #[error("job '{}': {source}", shown(.job))]
    Engine { job: String, source: EngineError },
    /// One of the job's files or devices could not be prepared.
    #[error("job '{}': {source}", shown(.job))]
    Target { job: String, source: TargetError },
    /// The system failed, not the input (an agent answering out of step).
    #[error("job '{}': {message}", shown(.job))]
    System { job: String, message: String },
}

impl PlanError {
    /// The job it is about ("-" for none).
    pub fn job(&self) -> &str {
        match self {
            PlanError::Input { job, .. }
            | PlanError::Engine { job, .. }
            | PlanError::Target { job, .. }
            | PlanError::System { job, .. } => job,
        }
    }

    /// What is wrong, without the job's name.
    pub fn message(&self) -> String {
        match self {
            PlanError::Input { message, .. } | PlanError::System { message, .. } => message.clone(),
            PlanError::Engine { source, .. } => source.to_string(),
            PlanError::Target { source, .. } => source.to_string(),
        }
    }

    /// Whose fault it is: the input's (the job as given, its engine's
    /// options, a target refused), the storage's, the system's, or a stop.
    pub fn fault(&self) -> Fault {
        match self {
            PlanError::Input { .. } => Fault::Input,
            PlanError::Engine { source, .. } => source.fault(),
            PlanError::Target { source, .. } => source.fault(),
            PlanError::System { .. } => Fault::System,
        }
    }

    /// A job's engine error, kept whole.
    pub fn engine(job: &str, source: EngineError) -> PlanError {
        PlanError::Engine { job: job.into(), source }
    }
}

fn shown(job: &str) -> std::borrow::Cow<'_, str> {
    storbench_workload::shown(job)
}

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
    crate::limits::check(&jobs, &groups)?;
    Ok(Plan { jobs, groups })
}

/// fio's `wait_for` names a job defined before this one (fio looks only at
/// those) and not the job itself; one of an earlier group has finished by
/// the time this job's group starts, so only a job of its own group is
/// waited for.
fn check_waits(jobs: &[JobPlan]) -> Result<(), PlanError> {
    for (i, j) in jobs.iter().enumerate() {
        let Some(name) = &j.spec.wait_for else { continue };
        if *name == j.spec.name {
            return Err(err(&j.spec, format!("wait_for={name}: a job cannot wait for itself; name an earlier job")));
        }
        let Some(target) = jobs[..i].iter().find(|e| e.spec.name == *name) else {
            return Err(err(&j.spec, format!("wait_for={name}: no earlier job has this name; name a job defined before this one")));
        };
        // Such a burner ends only when its group's I/O jobs have: this one among them, it would never start.
        if target.spec.cpu_burn.is_some() && target.end_ns.is_none() && target.group == j.group {
            return Err(err(
                &j.spec,
                format!("wait_for={name}: {name} is a CPU burner that ends with its group's I/O jobs, so this job would wait forever; give {name} a runtime"),
            ));
        }
    }
    Ok(())
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
        if !caps.shares_traces && spec.replay.is_some() {
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
        || spec.replay.is_some()
        || spec.train.is_some()
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

/// A burner's own options (fio's cpuio engine options).
const BURN_OPTIONS: [&str; 4] = ["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"];
/// A program job's own options (fio's exec engine options).
const EXEC_OPTIONS: [&str; 4] = ["program", "arguments", "grace_time", "std_redirect"];

/// What a CPU burner keeps of its options: its name, workers, timing,
/// group, placement and the burn. fio ignores the rest on a cpuio job (a
/// [global] section shared with the I/O jobs beside it sets them); so does
/// storbench, and says which.
fn burner_spec(spec: JobSpec) -> (JobSpec, Vec<String>) {
    const KEPT: [&str; 14] = [
        "name",
        "ioengine",
        "numjobs",
        "runtime",
        "ramp_time",
        "time_based",
        "startdelay",
        "stonewall",
        "exitall",
        "randseed",
        "randrepeat",
        "group_reporting",
        "new_group",
        "wait_for",
    ];
    let placement = ["cpus_allowed", "cpumask", "cpus_allowed_policy", "numa_cpu_nodes", "numa_mem_policy"];
    let kept = |n: &&str| KEPT.contains(n) || BURN_OPTIONS.contains(n) || EXEC_OPTIONS.contains(n) || placement.contains(n);
    let given = spec.given.0.iter().filter(|n| !kept(n)).map(|n| n.to_string());
    let ignored: Vec<String> = given.chain(spec.engine_options.keys().cloned()).collect();
    let kept = JobSpec {
        name: spec.name,
        ioengine: spec.ioengine,
        numjobs: spec.numjobs,
        runtime: spec.runtime,
        ramp_time: spec.ramp_time,
        time_based: spec.time_based,
        start_delay: spec.start_delay,
        stonewall: spec.stonewall,
        exitall: spec.exitall,
        seed: spec.seed,
        placement: spec.placement,
        cpu_burn: spec.cpu_burn,
        exec: spec.exec,
        allow_overwrite: spec.allow_overwrite,
        group_reporting: spec.group_reporting,
        new_group: spec.new_group,
        wait_for: spec.wait_for,
        given: spec.given,
        iodepth: 1,
        ..JobSpec::default()
    };
    (kept, ignored)
}

/// A job without storage: a CPU burner (fio's cpuio: cpuload given, and
/// an end; one without a runtime must end with the I/O jobs of its group,
/// `check_burners`) or a program (fio's exec: `check_program`).
fn no_storage(id: u32, group: u32, spec: JobSpec, engine: &'static dyn EngineFactory) -> Result<JobPlan, PlanError> {
    let runs_program = engine.name() == storbench_engine::exec::NAME;
    let (theirs, other) = if runs_program { (&BURN_OPTIONS, "cpuio") } else { (&EXEC_OPTIONS, "exec") };
    if let Some(name) = theirs.iter().find(|o| spec.given.has(o)) {
        return Err(err(&spec, format!("{name} applies to ioengine={other}; this job's engine is {}", engine.name())));
    }
    if runs_program {
        check_program(&spec)?;
    } else if spec.cpu_burn.is_none_or(|b| b.load == 0) {
        return Err(err(
            &spec,
            format!("ioengine={} needs cpuload= (the percent of one CPU each worker keeps busy, 1-100)", engine.name()),
        ));
    }
    if spec.time_based && spec.runtime.is_none_or(|r| r.is_zero()) {
        return Err(err(&spec, "time_based needs a runtime above 0 (e.g. --runtime 30s)"));
    }
    let (spec, ignored) = burner_spec(spec);
    let config = configure(&spec, engine)?;
    let mut warnings = Vec::new();
    if !ignored.is_empty() {
        let what = if runs_program { "a program job" } else { "a CPU burner" };
        let message = format!("{what} does no I/O; ignored, as fio ignores them: {}", ignored.join(", "));
        warnings.push(Warning::Engine { job: spec.name.clone(), engine: engine.name().into(), message });
    }
    let ramp_ns = spec.ramp_time.as_nanos() as u64;
    Ok(JobPlan {
        id,
        group,
        queue_depth: 1,
        engine,
        config,
        paths: Vec::new(),
        ramp_ns,
        end_ns: spec.runtime.map(|r| ramp_ns + r.as_nanos() as u64),
        ops_per_sec: None,
        object_prefix: None,
        warnings,
        trace: None,
        spec,
    })
}

/// A job that waits for a peer of the same run and group (a `net`
/// listener) starts when the peer does: fio's listener starts its figures
/// when the connection comes, after the other end's startdelay, while here
/// both ends connect as they are set up, so the wait would be measured.
fn start_with_peers(jobs: &mut [JobPlan]) {
    // Each job's key once (an engine parses its options for it).
    let keys: Vec<Option<(String, bool)>> = jobs.iter().map(|j| j.engine.pairing(&j.spec.engine_options)).collect();
    let starts: Vec<Option<std::time::Duration>> = jobs
        .iter()
        .zip(&keys)
        .map(|(j, key)| match key {
            Some((k, true)) => jobs
                .iter()
                .zip(&keys)
                .filter(|(p, pk)| p.group == j.group && pk.as_ref().is_some_and(|(pk, waits)| pk == k && !waits))
                .map(|(p, _)| p.spec.start_delay)
                .max(),
            _ => None,
        })
        .collect();
    for (j, start) in jobs.iter_mut().zip(starts) {
        if let Some(s) = start.filter(|s| *s > j.spec.start_delay) {
            j.spec.start_delay = s;
        }
    }
}

/// A program job names its program and how long it runs (fio stops it
/// at once without a runtime), and the files its output goes to are not
/// there yet (unless the job may replace them): found before anything runs.
fn check_program(spec: &JobSpec) -> Result<(), PlanError> {
    let Some(e) = spec.exec.as_ref().filter(|e| !e.program.is_empty()) else {
        return Err(err(spec, "ioengine=exec needs program= (the program to run for the job's time)"));
    };
    if spec.runtime.is_none_or(|r| r.is_zero()) {
        return Err(err(spec, "ioengine=exec needs runtime= (how long the program runs before it is stopped)"));
    }
    for w in 0..spec.numjobs {
        for f in e.output_files(&spec.name, w, spec.numjobs).into_iter().flatten() {
            if std::fs::symlink_metadata(&f).is_ok() && !spec.allow_overwrite {
                return Err(err(
                    spec,
                    format!("the program's output would replace {f}; remove it, pass --allow_overwrite=1, or std_redirect=0"),
                ));
            }
        }
    }
    if e.std_redirect {
        writable(std::path::Path::new(".")).map_err(|m| err(spec, format!("the program's output files: {m}")))?;
    }
    Ok(())
}

/// A burner without a runtime ends only through `exit_on_io_done`, so its
/// group needs a job doing I/O (fio would burn forever).
fn check_burners(jobs: &[JobPlan]) -> Result<(), PlanError> {
    for b in jobs.iter().filter(|j| j.spec.cpu_burn.is_some() && j.end_ns.is_none()) {
        let io_beside = jobs.iter().any(|j| j.group == b.group && !j.spec.does_no_io());
        if !(io_beside && b.spec.cpu_burn.is_some_and(|c| c.exit_on_io_done)) {
            return Err(err(
                &b.spec,
                "a cpuio job runs until its runtime, or with exit_on_io_done=1 until the I/O jobs of its group end; give runtime (e.g. runtime=30s)",
            ));
        }
    }
    Ok(())
}

/// What a job's target is, for telling which jobs share one.
fn target(j: &JobPlan) -> String {
    let s = &j.spec;
    // Without filename= each job has files of its own, named after it.
    let own = if s.filenames.is_empty() && j.engine.capabilities().needs_files { s.name.as_str() } else { "" };
    format!("{}\0{:?}\0{:?}\0{:?}\0{:?}\0{own}", s.ioengine, s.engine_options, s.directory, s.filenames, j.object_prefix)
}

/// Whether a job puts data on its target (its mix, a prefill, a fill or a
/// preconditioning; an object job's cleanup only removes).
fn puts_data(s: &JobSpec) -> bool {
    // verify_only runs no workload: it reads back what its writes would have written.
    let only = s.verify.as_ref().is_some_and(|v| v.only);
    match &s.objects {
        Some(o) => o.prefill || (!only && o.effective_mix(s.read_percent()).iter().any(|m| m.0.writes_data())),
        None => (!only && s.writes()) || s.fill.is_some() || s.precondition,
    }
}

/// A verifying job that keeps no state, on a target nothing of the run
/// writes before or beside it, has no table to judge by: it judges each
/// unit by its own header (fio's way). Anything written earlier in the run,
/// verified or not, keeps today's rule: what the run did not write is not judged.
fn judge_by_header(jobs: &mut [JobPlan]) {
    let alone: Vec<bool> = jobs
        .iter()
        .map(|v| {
            let no_state = v.spec.verify.as_ref().is_some_and(|s| s.checksum.is_some() && s.state.is_none());
            no_state && !jobs.iter().any(|w| w.group <= v.group && puts_data(&w.spec) && target(w) == target(v))
        })
        .collect();
    for (j, alone) in jobs.iter_mut().zip(alone) {
        if let Some(v) = j.spec.verify.as_mut() {
            v.by_header = alone;
        }
    }
}

/// A job that writes a target a verified job checks, in the same group or
/// a later one, without verifying itself, would change data the table
/// says is right: reported as corruption. (Unverified writes before any
/// verified job, a fill or a preconditioning, are simply not judged.)
/// A job that writes a target a verified job checks, without verifying
/// itself, would change data the table says is right: reported as
/// corruption. That is so in the verified job's group, and in a later group
/// when the table outlives the verified job (`verify_state`, or a verified
/// job of the same target after the writer). fio's http-s3.fio writes and
/// verifies, then a later group deletes: the check was done by then.
/// (Unverified writes before any verified job, a fill or a preconditioning,
/// are simply not judged.)
fn check_unverified_writers(jobs: &[JobPlan]) -> Result<(), PlanError> {
    let verifies = |s: &JobSpec| s.verify.as_ref().is_some_and(|v| v.checksum.is_some());
    let kept = |v: &JobPlan| v.spec.verify.as_ref().is_some_and(|x| x.state.is_some());
    let checked_after = |v: &JobPlan, group| jobs.iter().any(|c| c.group > group && verifies(&c.spec) && target(c) == target(v));
    for v in jobs.iter().filter(|j| verifies(&j.spec)) {
        let writer = jobs.iter().find(|w| {
            let changes = w.group == v.group || (w.group > v.group && (kept(v) || checked_after(v, w.group)));
            changes && !verifies(&w.spec) && w.spec.writes() && target(w) == target(v)
        });
        if let Some(w) = writer {
            return Err(err(
                &w.spec,
                format!("writes the target job '{}' verifies, without verify=; give it verify= too (or another target)", v.spec.name),
            ));
        }
    }
    Ok(())
}

/// Verification needs blocks that keep what is written, in whole units.
fn check_verify(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let Some(v) = spec.verify.as_ref() else { return Ok(()) };
    let caps = engine.capabilities();
    if v.checksum.is_none() {
        let given = ["verify_only", "verify_state", "verify_backlog", "verify_fatal", "verify_pattern", "verify_interval"];
        return match given.iter().find(|o| spec.given.has(o)) {
            Some(o) => Err(err(spec, format!("{o} needs verify= (crc32c, xxhash, sha256 or meta): which checksum the blocks carry"))),
            None => Ok(()),
        };
    }
    // The table counts at most 1023 writes in flight per unit.
    if spec.iodepth as u64 * spec.numjobs as u64 > 1000 {
        return Err(err(
            spec,
            "verify keeps track of at most 1000 operations in flight per job (iodepth x numjobs); lower iodepth or numjobs",
        ));
    }
    if let Some(o) = &spec.objects {
        if o.count < spec.numjobs as u64 {
            return Err(err(
                spec,
                format!("verify: {} objects cannot be shared out among {} workers; give objects >= numjobs", o.count, spec.numjobs),
            ));
        }
        if v.backlog > 0 {
            return Err(err(spec, "verify_backlog reads back blocks; object jobs read their objects as the mix says (and after the run)"));
        }
        return Ok(());
    }
    if !caps.does_io {
        return Err(err(spec, "the null engine keeps no data, so there is nothing to verify; give a real engine (psync, io_uring, rbd)"));
    }
    if let Some(op) = spec.meta {
        return Err(err(
            spec,
            format!("the {} engine's operations ({}) move no data, so there is nothing to verify", spec.ioengine, op.name()),
        ));
    }
    if engine.name() == "falloc" {
        return Err(err(spec, "the falloc engine allocates and punches space without moving data, so there is nothing to verify"));
    }
    if v.only && v.state.is_none() && spec.time_based {
        return Err(err(
            spec,
            "verify_only without verify_state reads back, once, what the job's writes would cover (fio's dry run), and a \
             time_based job's writes have no end: drop time_based, or give verify_state=DIR (the state the writing run kept)",
        ));
    }
    if let Some(dir) = &v.state {
        writable(dir).map_err(|e| err(spec, format!("verify_state {}: {e}", dir.display())))?;
    }
    storbench_workload::verify::block_unit(spec).map_err(|e| err(spec, e))?;
    Ok(())
}

/// A stream (the network engines) is read or written in order, one way
/// (fio: "network IO can't be random"; a mix would have both ends waiting
/// to read); an offset, a sync or a read-back means nothing there.
fn check_stream(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    if !engine.streams() {
        return Ok(());
    }
    let what = match () {
        _ if spec.rw.is_random() => "a random pattern",
        _ if spec.rw.is_mixed() => "reads and writes mixed (both ends could wait to read at once)",
        _ if spec.trims => "trims",
        _ if spec.sync.is_some() || spec.end_fsync => "syncs",
        _ if spec.replay.is_some() => "a replayed trace",
        _ if spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()) => "verification",
        _ => return Ok(()),
    };
    Err(err(
        spec,
        format!(
            "engine {} moves a byte stream, so it cannot do {what}; give rw=read or rw=write (with pingpong=1 for round trips)",
            engine.name()
        ),
    ))
}

/// fio's write_iolog records block operations, and never over the trace
/// the same job replays.
fn check_iolog(spec: &JobSpec, caps: storbench_engine::Capabilities) -> Result<(), PlanError> {
    let Some(out) = &spec.write_iolog else { return Ok(()) };
    if spec.objects.is_some() || !caps.blocks {
        return Err(err(spec, "write_iolog records block operations (fio's iolog); object jobs have none"));
    }
    let same = |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if spec.replay.as_ref().is_some_and(|r| same(&r.path, out)) {
        return Err(err(spec, "write_iolog names the trace read_iolog replays: it would be overwritten; give another file"));
    }
    check_iolog_files(spec, out)
}

/// The files write_iolog will make (FILE, or FILE.N per worker) do not
/// exist yet, unless `allow_overwrite`, and their directory takes files:
/// found before anything runs, not when the first worker starts.
fn check_iolog_files(spec: &JobSpec, out: &std::path::Path) -> Result<(), PlanError> {
    let files: Vec<std::path::PathBuf> = match spec.numjobs {
        1 => vec![out.to_path_buf()],
        n => (0..n).map(|w| std::path::PathBuf::from(format!("{}.{w}", out.display()))).collect(),
    };
    if let Some(f) = files.iter().find(|f| std::fs::symlink_metadata(f).is_ok()) {
        if !spec.allow_overwrite {
            return Err(err(
                spec,
                format!("write_iolog: {} exists; give another file, remove it, or pass --allow_overwrite=1 to replace it", f.display()),
            ));
        }
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(err(spec, format!("write_iolog: its directory {} does not exist", dir.display())));
    }
    writable(dir).map_err(|e| err(spec, format!("write_iolog: {e}")))
}

/// Files can be made in `dir`, or in the directory that making it would
/// start from (its nearest existing ancestor): checked before anything
/// runs, so a run never ends by failing to write what it was asked to keep.
fn writable(dir: &std::path::Path) -> Result<(), String> {
    let mut at = dir;
    while std::fs::symlink_metadata(at).is_err() {
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
    }
    if !at.is_dir() {
        return Err(format!("{} is not a directory", at.display()));
    }
    let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).map_err(|_| "the path has a NUL byte".to_string())?;
    // SAFETY: access only reads the C string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!("cannot write in {}: {}", at.display(), std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Block jobs go to block engines, object jobs to object engines.
fn check_model(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let caps = engine.capabilities();
    let objects: Vec<&str> =
        storbench_engine::registry().iter().filter(|f| f.capabilities().objects && f.capabilities().does_io).map(|f| f.name()).collect();
    match (&spec.objects, caps.objects, caps.blocks) {
        (Some(_), false, _) => Err(err(
            spec,
            format!(
                "object options (objects, object_size, object_ops...) need an object engine ({}), not {}",
                objects.join(", "),
                engine.name()
            ),
        )),
        _ => Ok(()),
    }
}

/// fio's cmdprio options give I/Os priorities of their own: only engines
/// that carry one with each I/O can (fio has them for io_uring and libaio
/// alone); `prio` and `prioclass` are the thread's, for every engine.
fn check_prio(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let Some(p) = &spec.prio else { return Ok(()) };
    p.check().map_err(|e| err(spec, e))?;
    if p.per_io() && !engine.io_priorities() {
        let able: Vec<&str> = storbench_engine::registry().iter().filter(|f| f.io_priorities()).map(|f| f.name()).collect();
        return Err(err(
            spec,
            format!(
                "cmdprio_percentage and cmdprio_bssplit give each I/O its own priority, which {} cannot carry; use ioengine={} (or prio/prioclass for the whole job)",
                engine.name(),
                able.join(" or ")
            ),
        ));
    }
    Ok(())
}

/// The object model's own checks, including reads of objects nothing writes.
fn check_objects(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let o = spec.objects.as_ref().expect("object job");
    if spec.direct {
        return Err(err(spec, "direct=1 has no meaning for object jobs; remove it"));
    }
    if matches!(spec.distribution, storbench_workload::Distribution::Sequence { .. }) {
        return Err(err(
            spec,
            "random_distribution=sequence walks block numbers; object jobs take zipf, pareto, normal or zoned popularity",
        ));
    }
    let mix = o.effective_mix(spec.read_percent());
    if let Some((op, _)) = mix.iter().find(|m| !engine.supports(m.0)) {
        return Err(err(spec, format!("engine {} cannot {} objects; remove {} from object_ops", engine.name(), op.name(), op.name())));
    }
    use storbench_workload::OpKind;
    let needs_existing = mix.iter().any(|m| matches!(m.0, OpKind::Read | OpKind::Update | OpKind::Stat | OpKind::Delete));
    let creates = mix.iter().any(|m| matches!(m.0, OpKind::Create | OpKind::Write));
    let checks_only = spec.verify.as_ref().is_some_and(|v| v.only);
    if needs_existing && !creates && !o.prefill && !o.exist && !checks_only {
        return Err(err(
            spec,
            "the job reads, updates or removes objects that nothing writes first: add prefill=1, put create in object_ops, \
             or set objects_exist=1 if an earlier run left them (object_prefix must then match)",
        ));
    }
    if o.exist && o.sizes.fixed().is_none() && o.op_len.is_none() {
        return Err(err(
            spec,
            "objects_exist=1 with varying object sizes: the sizes of objects an earlier run wrote are not known; give one object_size or object_op_size",
        ));
    }
    if let Some((_, max)) = o.op_len {
        if o.sizes.fixed().is_some_and(|s| max > s) {
            return Err(err(spec, format!("object_op_size up to {max} bytes is larger than object_size; lower it")));
        }
    }
    if spec.max_transfer() > u32::MAX as u64 / 2 {
        return Err(err(spec, "objects above 2 GiB are not supported"));
    }
    Ok(())
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

fn check_sizes(spec: &JobSpec) -> Result<(), PlanError> {
    let max_bs = spec.bs.max();
    if max_bs > u32::MAX as u64 / 2 {
        return Err(err(spec, "block size above 2 GiB is not supported"));
    }
    if let Some(size) = spec.size {
        if max_bs > size {
            return Err(err(spec, format!("block size {max_bs} is larger than size {size}; raise size or lower bs")));
        }
    }
    if spec.direct {
        for (what, v) in [("block size", spec.bs.min()), ("offset", spec.offset)] {
            if v % 512 != 0 {
                return Err(err(spec, format!("direct=1 needs a {what} that is a multiple of 512 (got {v})")));
            }
        }
        for (bs, _) in spec.bs.read.0.iter().chain(spec.bs.write.0.iter()) {
            if bs % 512 != 0 {
                return Err(err(spec, format!("direct=1 needs every block size to be a multiple of 512 (got {bs})")));
            }
        }
    }
    if spec.data.zeros && (spec.data.compress_pct > 0.0 || spec.data.dedupe_pct > 0.0) {
        return Err(err(spec, "zero_buffers conflicts with buffer_compress_percentage/dedupe_percentage; choose one"));
    }
    if spec.logs.max_value && spec.logs.avg_msec > 0 {
        return Err(err(spec, "log_max_value=1 with log_avg_msec: storbench's averaged logs hold each window's mean; drop log_max_value, or log_avg_msec=0 for a line per I/O"));
    }
    Ok(())
}

/// A metadata engine's job (fio's filecreate, filestat, filedelete,
/// ftruncate): every operation becomes the engine's. Create, stat and
/// delete act once per file per pass, as in fio: each file is one block of
/// its size. ftruncate truncates on writes only (fio's fails its reads).
fn file_ops(spec: &mut JobSpec, engine: &str, ops: storbench_engine::meta::FileOps) -> Result<(), PlanError> {
    use storbench_workload::OpKind;
    spec.meta = Some(ops.op);
    if ops.op == OpKind::Truncate {
        if spec.read_percent() > 0.0 {
            return Err(err(spec, format!("engine {engine} truncates on writes only; give rw=write or randwrite")));
        }
        return Ok(());
    }
    let Some(size) = spec.size.filter(|s| *s > 0) else {
        return Err(err(spec, format!("engine {engine} needs each file's size: give filesize (e.g. filesize=4k), as fio does")));
    };
    // A second pass would open the files made by the first, or find none to delete (fio's job then fails on ENOENT).
    let files = if spec.filenames.is_empty() { spec.nrfiles } else { spec.filenames.len() as u32 };
    let more_passes = spec.time_based || spec.passes > 1 || spec.io_size.is_some_and(|b| b > size.saturating_mul(files.max(1) as u64));
    if more_passes && matches!(ops.op, OpKind::Create | OpKind::Delete) {
        return Err(err(
            spec,
            format!(
                "engine {engine} {}s each file once: drop time_based, loops and io_size (raise nrfiles or numjobs for more)",
                ops.op.name()
            ),
        ));
    }
    let one = storbench_workload::SizeSplit::fixed(size);
    spec.bs = storbench_workload::spec::BlockSizes { read: one.clone(), write: one };
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        storbench_workload::options::spec_from(opts.iter().copied()).unwrap()
    }

    /// An engine's refusal stays the engine's error (its source, its
    /// fault), with the words it had when it was a string.
    #[test]
    fn an_engine_error_keeps_its_type_and_says_whose_fault_it_is() {
        let e = build_plan(vec![spec(&[("name", "a"), ("ioengine", "memory"), ("capacity", "0")])]).err().expect("refused");
        assert_eq!(e.to_string(), "job 'a': memory: option 'capacity': a store of 0 bytes holds nothing; give a size (e.g. 256m)");
        assert_eq!((e.job(), e.fault()), ("a", Fault::Input));
        let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<EngineError>());
        assert!(matches!(source, Some(EngineError::BadOption { option, .. }) if option == "capacity"), "{source:?}");
        let mine = build_plan(vec![spec(&[("name", "a"), ("ioengine", "null"), ("bs", "3g")])]).err().expect("refused");
        assert!(matches!(mine, PlanError::Input { .. }) && std::error::Error::source(&mine).is_none(), "{mine:?}");
    }

    #[test]
    fn snia_mode_runs_at_most_25_rounds_unless_the_job_says_how_long() {
        let plan = build_plan(vec![spec(&[("name", "a"), ("ioengine", "null"), ("ss", "snia:2s")])]).unwrap();
        assert_eq!(plan.jobs[0].end_ns, Some(50_000_000_000));
        assert!(plan.jobs[0].spec.time_based);
        let given = build_plan(vec![spec(&[("name", "a"), ("ioengine", "null"), ("ss", "snia:2s"), ("runtime", "7")])]).unwrap();
        assert_eq!(given.jobs[0].end_ns, Some(7_000_000_000));
    }

    #[test]
    fn small_key_spaces_on_unordered_stores_are_warned_about() {
        let base = [
            ("ioengine", "s3"),
            ("endpoint", "http://127.0.0.1:1"),
            ("access_key", "a"),
            ("secret_key", "s"),
            ("object_size", "4k"),
            ("rw", "write"),
            ("iodepth", "8"),
            ("number_ios", "10"),
        ];
        let small = spec(&[&base[..], &[("name", "small"), ("objects", "20")]].concat());
        let large = spec(&[&base[..], &[("name", "large"), ("objects", "5000")]].concat());
        let rados = spec(&[
            ("name", "r"),
            ("ioengine", "rados"),
            ("pool", "p"),
            ("objects", "20"),
            ("iodepth", "8"),
            ("rw", "write"),
            ("number_ios", "1"),
        ]);
        let plan = build_plan(vec![small, large, rados]).unwrap();
        let warned = |i: usize| plan.jobs[i].warnings.iter().any(|w| w.message().contains("objects per worker"));
        assert!(warned(0), "20 objects for 8 in flight on s3");
        assert!(!warned(1), "5000 objects are plenty");
        assert!(!warned(2), "RADOS keeps the order of operations on one object");
    }

    #[test]
    fn byte_rates_become_arrivals_by_mean_size() {
        let s = spec(&[("rw", "randrw"), ("rwmixread", "75"), ("bs", "4k,12k")]);
        // mean = 0.75 * 4 KiB + 0.25 * 12 KiB = 6 KiB
        let ops = ops_per_sec(&s, RateLimit::Bytes(6144.0 * 1000.0));
        assert!((ops - 1000.0).abs() < 1e-6, "{ops}");
    }

    #[test]
    fn stonewall_starts_groups_and_sync_engines_cap_queue_depth() {
        let a = spec(&[("name", "a"), ("ioengine", "null"), ("size", "1m")]);
        let b = spec(&[("name", "b"), ("ioengine", "null"), ("size", "1m")]);
        let c = spec(&[("name", "c"), ("ioengine", "psync"), ("size", "1m"), ("iodepth", "8"), ("stonewall", "1")]);
        let plan = build_plan(vec![a, b, c]).unwrap();
        assert_eq!(plan.groups, vec![vec![0, 1], vec![2]]);
        assert_eq!(plan.jobs[2].queue_depth, 1);
        assert!(matches!(plan.jobs[2].warnings[0], Warning::QueueDepthCapped { asked: 8, .. }));
    }

    #[test]
    fn a_verifying_read_judges_by_header_only_when_nothing_of_the_run_wrote_its_target_before_or_beside_it() {
        let job = |name: &str, rw: &str, more: &[(&'static str, &'static str)]| {
            let mut o = vec![("name", name), ("filename", "hdr.dat"), ("size", "1m"), ("rw", rw), ("stonewall", "1")];
            o.extend_from_slice(more);
            spec(&o)
        };
        let by_header = |specs: Vec<JobSpec>| -> Vec<bool> {
            build_plan(specs).unwrap().jobs.iter().map(|j| j.spec.verify.as_ref().is_some_and(|v| v.by_header)).collect()
        };
        let verified = [("verify", "crc32c")];
        assert_eq!(by_header(vec![job("r", "read", &verified)]), [true]);
        assert_eq!(by_header(vec![job("w", "write", &verified)]), [false], "it writes itself");
        assert_eq!(by_header(vec![job("w", "write", &[]), job("r", "read", &verified)]), [false, false], "an earlier unverified write");
        assert_eq!(by_header(vec![job("r", "read", &verified), job("w", "write", &verified)]), [true, false], "a later write");
        assert_eq!(by_header(vec![job("r", "read", &[("verify", "crc32c"), ("verify_state", "/tmp")])]), [false], "a table kept");
        let only = [("verify", "crc32c"), ("verify_only", "1")];
        assert_eq!(by_header(vec![job("v", "write", &only)]), [true], "verify_only writes nothing: its headers judge it");
    }

    #[test]
    fn a_fleets_link_refuses_what_its_agents_cannot_do_together_and_a_local_one_takes_it() {
        let verified = spec(&[("name", "v"), ("filename", "f.dat"), ("size", "1m"), ("rw", "write"), ("verify", "crc32c")]);
        let plain = spec(&[("name", "p"), ("filename", "f.dat"), ("size", "1m"), ("rw", "write")]);
        let refused = check_link(&[plain.clone(), verified.clone()], LinkCaps::FLEET).unwrap_err();
        assert_eq!(refused.fault(), storbench_model::Fault::Input);
        assert!(refused.to_string().starts_with("job 'v': verify is not built for fleet runs"), "{refused}");
        assert!(check_link(std::slice::from_ref(&plain), LinkCaps::FLEET).is_ok());
        assert!(check_link(&[plain, verified], LinkCaps::LOCAL).is_ok());
    }
}
