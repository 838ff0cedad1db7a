//! Jobs of the kinds that are not generated I/O on storage: CPU burners
//! and programs (engines without storage) and metadata calls (an engine's
//! file operation for every operation of the pattern).

use super::checks::writable;
use super::{configure, err, JobPlan, PlanError};
use storbench_engine::EngineFactory;
use storbench_model::Warning;
use storbench_workload::JobSpec;

/// A burner's own options (fio's cpuio engine options).
pub(super) const BURN_OPTIONS: [&str; 4] = ["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"];

/// A program job's own options (fio's exec engine options).
pub(super) const EXEC_OPTIONS: [&str; 4] = ["program", "arguments", "grace_time", "std_redirect"];

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
        kind: spec.kind,
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
pub(super) fn no_storage(id: u32, group: u32, spec: JobSpec, engine: &'static dyn EngineFactory) -> Result<JobPlan, PlanError> {
    let runs_program = engine.name() == storbench_engine::exec::NAME;
    let (theirs, other) = if runs_program { (&BURN_OPTIONS, "cpuio") } else { (&EXEC_OPTIONS, "exec") };
    if let Some(name) = theirs.iter().find(|o| spec.given.has(o)) {
        return Err(err(&spec, format!("{name} applies to ioengine={other}; this job's engine is {}", engine.name())));
    }
    if runs_program {
        check_program(&spec)?;
    } else if spec.kind.cpu_burn().is_none_or(|b| b.load == 0) {
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

/// A program job names its program and how long it runs (fio stops it
/// at once without a runtime), and the files its output goes to are not
/// there yet (unless the job may replace them): found before anything runs.
fn check_program(spec: &JobSpec) -> Result<(), PlanError> {
    let Some(e) = spec.kind.program().filter(|e| !e.program.is_empty()) else {
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
pub(super) fn check_burners(jobs: &[JobPlan]) -> Result<(), PlanError> {
    for b in jobs.iter().filter(|j| j.spec.kind.cpu_burn().is_some() && j.end_ns.is_none()) {
        let io_beside = jobs.iter().any(|j| j.group == b.group && !j.spec.does_no_io());
        if !(io_beside && b.spec.kind.cpu_burn().is_some_and(|c| c.exit_on_io_done)) {
            return Err(err(
                &b.spec,
                "a cpuio job runs until its runtime, or with exit_on_io_done=1 until the I/O jobs of its group end; give runtime (e.g. runtime=30s)",
            ));
        }
    }
    Ok(())
}

/// A metadata engine's job (fio's filecreate, filestat, filedelete,
/// ftruncate): every operation becomes the engine's. Create, stat and
/// delete act once per file per pass, as in fio: each file is one block of
/// its size. ftruncate truncates on writes only (fio's fails its reads).
pub(super) fn file_ops(spec: &mut JobSpec, engine: &str, ops: storbench_engine::meta::FileOps) -> Result<(), PlanError> {
    use storbench_workload::OpKind;
    if let Err(e) = spec.kind.set_meta(ops.op) {
        return Err(err(spec, format!("engine {engine} does one metadata call per file: {e}")));
    }
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
