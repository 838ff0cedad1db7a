//! The entries fio's outputs list, as fio 3.33's `__show_run_stats` makes
//! them: each thread (a storbench job's worker, or the whole job when it
//! asks for `group_reporting`) is an entry of its own, except that a
//! `group_reporting` thread joins the entry before it when both are in the
//! same reporting group. A reporting group begins at a `stonewall` or a
//! `new_group` (init.c's `groupid`), so fio's group_reporting merges every
//! job of a group, not only a job's numjobs clones. The entry takes its
//! name, description and settings from its first member; its figures are
//! the members' added (histograms merged, runtimes their longest, see
//! `stats::Dir`).

use std::borrow::Cow;
use storbench_model::{JobResult, OpResult, RunResult};

/// One entry of fio's outputs: the members it merges and how it is shown.
pub struct Entry<'a> {
    /// The first member's settings, in the reporting group's number, with
    /// the members' workers, CPU time, failures and operations added.
    pub r: Cow<'a, JobResult>,
    /// Each thread fio would sum into the entry, in order.
    pub parts: Vec<Cow<'a, JobResult>>,
}

/// fio's reporting group of each of the run's jobs: numbered from 0, a new
/// one at a job with `stonewall` or `new_group` after any job.
pub fn reporting_groups(r: &RunResult) -> Vec<u32> {
    let mut id = 0;
    let mut before = 0;
    r.jobs
        .iter()
        .map(|j| {
            if (j.spec.stonewall || j.spec.new_group) && before > 0 {
                id += 1;
                before = 0;
            }
            before += 1;
            id
        })
        .collect()
}

/// The run's entries as fio lists them.
pub fn entries(r: &RunResult) -> Vec<Entry<'_>> {
    let mut members: Vec<(u32, Vec<Cow<'_, JobResult>>)> = Vec::new();
    let mut last = None;
    for (j, id) in r.jobs.iter().zip(reporting_groups(r)) {
        for thread in j.fio_entries() {
            // stat.c: a new entry unless this thread reports as a group and the one before was of its group.
            let joins = j.spec.group_reporting && last == Some(id);
            last = Some(id);
            match members.last_mut() {
                Some((_, parts)) if joins => parts.push(thread),
                _ => members.push((id, vec![thread])),
            }
        }
    }
    members.into_iter().map(|(id, parts)| Entry { r: view(id, &parts), parts }).collect()
}

/// The entry as one job: the first member itself when it is alone and
/// numbered as fio numbers it, else a copy with the group's figures.
fn view<'a>(id: u32, parts: &[Cow<'a, JobResult>]) -> Cow<'a, JobResult> {
    let first = &parts[0];
    if parts.len() == 1 && first.group == id {
        return first.clone();
    }
    let mut v = first.as_ref().clone();
    v.group = id;
    for p in &parts[1..] {
        v.workers += p.workers;
        v.worker_cpu.user_ns += p.worker_cpu.user_ns;
        v.worker_cpu.sys_ns += p.worker_cpu.sys_ns;
        v.worker_cpu.ctx += p.worker_cpu.ctx;
        v.worker_cpu.minflt += p.worker_cpu.minflt;
        v.worker_cpu.majflt += p.worker_cpu.majflt;
        v.failures.extend(p.failures.iter().cloned());
        add_ops(&mut v.ops, &p.ops);
    }
    Cow::Owned(v)
}

/// Another member's operations added to the entry's, kind by kind: counts,
/// failures and histograms (the rates are not read from a merged entry).
fn add_ops(into: &mut Vec<OpResult>, from: &[OpResult]) {
    for o in from {
        let Some(mine) = into.iter_mut().find(|m| m.op == o.op) else {
            into.push(o.clone());
            continue;
        };
        mine.ios += o.ios;
        mine.bytes += o.bytes;
        mine.retries += o.retries;
        mine.histogram.add(&o.histogram);
        for (m, s) in [(&mut mine.service_histogram, &o.service_histogram), (&mut mine.submit_histogram, &o.submit_histogram)] {
            match (m, s) {
                (Some(m), Some(s)) => m.add(s),
                (m @ None, Some(s)) => *m = Some(s.clone()),
                _ => {}
            }
        }
        for (k, n) in &o.errors {
            *mine.errors.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.error_kinds {
            *mine.error_kinds.entry(*k).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::sample;
    use storbench_workload::OpKind;

    fn job(name: &str, opts: &[(&str, &str)], ios: u64) -> JobResult {
        let s = 1_000_000_000;
        sample::job(name, 0, opts, s, vec![sample::op(OpKind::Read, &[(10_000, ios)], 4096, s)])
    }

    fn run(jobs: Vec<JobResult>) -> RunResult {
        let mut r = sample::run();
        r.jobs = jobs;
        r
    }

    #[test]
    fn group_reporting_merges_the_jobs_of_a_reporting_group() {
        let gr = ("group_reporting", "1");
        let r = run(vec![
            job("a", &[gr], 10),
            job("b", &[gr], 20),
            job("c", &[gr, ("new_group", "1")], 30),
            job("d", &[gr, ("stonewall", "1")], 40),
            job("e", &[gr], 50),
        ]);
        assert_eq!(reporting_groups(&r), [0, 0, 1, 2, 2]);
        let e = entries(&r);
        let shown: Vec<_> = e.iter().map(|e| (e.r.name.as_str(), e.r.group, e.r.workers, e.r.total_ios(), e.parts.len())).collect();
        assert_eq!(shown, [("a", 0, 2, 30, 2), ("c", 1, 1, 30, 1), ("d", 2, 2, 90, 2)]);
        assert_eq!(e[0].r.ops[0].histogram.count(), 30, "the members' histograms merged");
    }

    #[test]
    fn without_group_reporting_each_job_is_an_entry() {
        let r = run(vec![job("a", &[], 1), job("b", &[], 2), job("c", &[("group_reporting", "1")], 3)]);
        // fio's quirk kept: a group_reporting job joins the entry before it in its group, whatever that one asked.
        let names: Vec<_> = entries(&r).iter().map(|e| e.r.name.clone()).collect();
        assert_eq!(names, ["a", "b"]);
    }
}
