//! A run's journal entries (`storbench_model::journal`): what each job may
//! make, from its plan before anything is made, and what it did make once
//! its targets are prepared. Writing the journal is the caller's (it lives
//! in the results directory).

use crate::plan::{JobPlan, Plan};
use crate::prepare::ReadyJob;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use storbench_model::journal::{Entry, Made, State};
use storbench_model::Targets;
use storbench_workload::JobSpec;

/// Each job's entries before anything is made (index: the job's id): the
/// files it would lay out (those not there yet), and its engine's own
/// target with the prefix of the objects it writes.
pub fn planned(plan: &Plan) -> Vec<Vec<Entry>> {
    // A set: a job of 500,000 files (fio's filecreate example) took minutes
    // of path comparisons with a list.
    let mut seen: HashSet<&PathBuf> = HashSet::new();
    let mut out = Vec::new();
    for job in &plan.jobs {
        let mut entries = Vec::new();
        for path in job.paths.iter().flatten() {
            if !seen.contains(path) && std::fs::symlink_metadata(path).is_err() {
                seen.insert(path);
                entries.push(file(&job.spec.name, path.clone(), State::Preparing));
            }
        }
        if job.paths.is_empty() && job.engine.capabilities().does_io {
            entries.push(store(&job.spec, None, job_prefix(job), None, State::Preparing));
        }
        out.push(entries);
    }
    out
}

/// A job's entries once its targets are prepared: the files it created
/// (kept until the run removes them), and its target with what preparing
/// it created. Nothing to remove: done.
pub fn prepared(job: &ReadyJob) -> Vec<Entry> {
    let name = &job.share.spec.name;
    match &job.share.targets {
        Targets::Files(per_worker) => {
            let mut paths: Vec<&PathBuf> = per_worker.iter().flatten().filter(|f| f.created).map(|f| &f.path).collect();
            paths.dedup();
            paths.into_iter().map(|p| file(name, p.clone(), State::Left)).collect()
        }
        Targets::Store(t) => {
            let prefix = writes_objects(&job.share.spec).then(|| job.share.object_prefix.clone()).flatten();
            let state = if prefix.is_some() || !t.created.is_empty() { State::Left } else { State::Done };
            vec![store(&job.share.spec, None, prefix, Some(t.created.clone()), state)]
        }
        Targets::None => Vec::new(),
    }
}

/// The objects a job writes that are the run's to remove: new ones, or
/// existing ones it was told to clean up (never those it only reads, or
/// updates and keeps: someone else's).
fn writes_objects(spec: &JobSpec) -> bool {
    spec.objects.as_ref().is_some_and(|o| spec.writes() && (!o.exist || o.cleans_up()))
}

fn job_prefix(job: &JobPlan) -> Option<String> {
    writes_objects(&job.spec).then(|| job.object_prefix.clone()).flatten()
}

fn file(job: &str, path: PathBuf, state: State) -> Entry {
    Entry { job: job.into(), agent: None, made: Made::File { path }, state }
}

/// A store entry for `spec`'s engine, its secrets left out.
pub fn store(spec: &JobSpec, agent: Option<String>, prefix: Option<String>, created: Option<Vec<String>>, state: State) -> Entry {
    let secret = storbench_workload::spec::SECRET_OPTIONS;
    let options: BTreeMap<String, String> =
        spec.engine_options.iter().filter(|(k, _)| !secret.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    Entry { job: spec.name.clone(), agent, made: Made::Store { engine: spec.ioengine.clone(), options, prefix, created }, state }
}

/// A fleet agent's entry for `spec` (its options and prefix applied), before
/// it prepares.
pub fn agent_store(spec: &JobSpec, agent: &str) -> Option<Entry> {
    let engine = storbench_engine::find(&spec.ioengine)?;
    if !spec.filenames.is_empty() || engine.capabilities().needs_files || !engine.capabilities().does_io {
        return None;
    }
    let prefix = writes_objects(spec).then(|| spec.objects.as_ref().map(|o| o.prefix_for(&spec.name))).flatten();
    Some(store(spec, Some(agent.into()), prefix, None, State::Preparing))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pairs: &[(&str, &str)]) -> JobSpec {
        storbench_workload::options::spec_from(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn a_store_entry_names_the_engine_and_where_never_a_secret() {
        let s = spec(&[("name", "w"), ("ioengine", "s3"), ("bucket", "b"), ("secret_key", "s3cr3t"), ("objects", "4"), ("rw", "write")]);
        let e = agent_store(&s, "a1").unwrap();
        let text = format!("{e:?}");
        assert!(!text.contains("s3cr3t"), "{text}");
        let Made::Store { engine, options, prefix, .. } = &e.made else { panic!("a store") };
        assert_eq!(
            (engine.as_str(), options.get("bucket").map(String::as_str), prefix.as_deref()),
            ("s3", Some("b"), Some("storbench.w."))
        );
        assert_eq!((e.agent.as_deref(), e.state), (Some("a1"), State::Preparing));
    }

    #[test]
    fn objects_a_job_only_reads_or_keeps_after_an_earlier_run_are_not_the_runs() {
        let read =
            spec(&[("name", "r"), ("ioengine", "rados"), ("pool", "p"), ("objects", "4"), ("objects_exist", "1"), ("rw", "randread")]);
        assert!(!writes_objects(&read));
        let update =
            spec(&[("name", "u"), ("ioengine", "rados"), ("pool", "p"), ("objects", "4"), ("objects_exist", "1"), ("rw", "randwrite")]);
        assert!(!writes_objects(&update), "kept: an earlier run's objects");
        let fresh = spec(&[("name", "f"), ("ioengine", "rados"), ("pool", "p"), ("objects", "4"), ("rw", "randwrite")]);
        assert!(writes_objects(&fresh));
    }
}
