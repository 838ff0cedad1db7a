//! fio's `dedupe_mode` (`repeat`, the default, or `working_set`),
//! `dedupe_working_set_percentage` and `dedupe_global` (dedupe.c, io_u.c
//! `get_buf_state`). `repeat` is what `dedupe_percentage` already does: a
//! dedupable write repeats an earlier block. `working_set`: the set is the
//! first `size` x percentage / smallest write block of unique writes, and a
//! dedupable write repeats one of them drawn at random; with
//! `dedupe_global` one set is spread evenly over the jobs that have it.
//! fio's own checks: `size` given, one file per job, the two percentages
//! at most 100 together.

use storbench_workload::spec::WorkingSet;
use storbench_workload::JobSpec;

/// The job's working set (whose it is settled by [`share`] once every job
/// is built).
pub fn apply(spec: &mut JobSpec, get: &super::http::Get, files: u64) -> Result<(), String> {
    match get("dedupe_mode") {
        None | Some("repeat") => return Ok(()),
        Some("working_set") => {}
        Some(m) => return Err(format!("dedupe_mode={m}: give repeat or working_set")),
    }
    if spec.data.dedupe_pct == 0.0 {
        return Ok(());
    }
    let pct: f64 = match get("dedupe_working_set_percentage") {
        Some(v) => {
            v.parse().ok().filter(|p| (0.0..=100.0).contains(p)).ok_or(format!("dedupe_working_set_percentage={v}: give 0 to 100"))?
        }
        None => 5.0,
    };
    let Some(size) = spec.size.filter(|_| spec.given.has("size")) else {
        return Err("dedupe_mode=working_set needs size= (the working set is a share of it)".into());
    };
    if files != 1 {
        return Err(format!("dedupe_mode=working_set works on one file per job, not {files} (as in fio)"));
    }
    if pct + spec.data.dedupe_pct > 100.0 {
        return Err(format!(
            "dedupe_percentage {} and dedupe_working_set_percentage {pct} add up to more than 100 (the set's blocks are unique writes)",
            spec.data.dedupe_pct
        ));
    }
    let blocks = (size as f64 * pct / 100.0) as u64 / spec.bs.write.min().max(1);
    let global = get("dedupe_global").is_some_and(|v| v != "0");
    spec.data.working_set = Some(WorkingSet { blocks, global, first: 0, workers: 1 });
    Ok(())
}

/// `dedupe_global`: the jobs that have it share one set, each worker of
/// theirs contributing an even slice (numbered across the jobs); the other
/// jobs' sets are their own (numbered by job).
pub fn share(specs: &mut [JobSpec]) {
    let global = |s: &JobSpec| s.data.working_set.is_some_and(|w| w.global);
    let workers: u32 = specs.iter().filter(|s| global(s)).map(|s| s.numjobs).sum();
    let mut first = 0;
    for (job, s) in specs.iter_mut().enumerate() {
        let numjobs = s.numjobs;
        match s.data.working_set.as_mut() {
            Some(w) if w.global => {
                (w.first, w.workers) = (first, workers);
                first += numjobs;
            }
            Some(w) => w.first = job as u32,
            None => {}
        }
    }
}
