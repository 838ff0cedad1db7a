//! Checks across the jobs of a run: waits between jobs (none on a burner
//! that ends only with the job waiting), the ends of a stream started
//! together, and who writes what a verified job checks.

use super::{err, JobPlan, PlanError};
use storbench_workload::JobSpec;

/// fio's `wait_for` names a job defined before this one (fio looks only at
/// those) and not the job itself; one of an earlier group has finished by
/// the time this job's group starts, so only a job of its own group is
/// waited for.
pub(super) fn check_waits(jobs: &[JobPlan]) -> Result<(), PlanError> {
    for (i, j) in jobs.iter().enumerate() {
        let Some(name) = &j.spec.wait_for else { continue };
        if *name == j.spec.name {
            return Err(err(&j.spec, format!("wait_for={name}: a job cannot wait for itself; name an earlier job")));
        }
        let Some(target) = jobs[..i].iter().find(|e| e.spec.name == *name) else {
            return Err(err(&j.spec, format!("wait_for={name}: no earlier job has this name; name a job defined before this one")));
        };
        // Such a burner ends only when its group's I/O jobs have: this one among them, it would never start.
        if target.spec.kind.cpu_burn().is_some() && target.end_ns.is_none() && target.group == j.group {
            return Err(err(
                &j.spec,
                format!("wait_for={name}: {name} is a CPU burner that ends with its group's I/O jobs, so this job would wait forever; give {name} a runtime"),
            ));
        }
    }
    Ok(())
}

/// A job that waits for a peer of the same run and group (a `net`
/// listener) starts when the peer does: fio's listener starts its figures
/// when the connection comes, after the other end's startdelay, while here
/// both ends connect as they are set up, so the wait would be measured.
pub(super) fn start_with_peers(jobs: &mut [JobPlan]) {
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
pub(super) fn judge_by_header(jobs: &mut [JobPlan]) {
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

/// A job that writes a target a verified job checks, without verifying
/// itself, would change data the table says is right: reported as
/// corruption. That is so in the verified job's group, and in a later group
/// when the table outlives the verified job (`verify_state`, or a verified
/// job of the same target after the writer). fio's http-s3.fio writes and
/// verifies, then a later group deletes: the check was done by then.
/// (Unverified writes before any verified job, a fill or a preconditioning,
/// are simply not judged.)
pub(super) fn check_unverified_writers(jobs: &[JobPlan]) -> Result<(), PlanError> {
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
