//! Which warnings about the measurement a job's results call for: decided
//! here, where the plan (engine, rate, options) and the results meet. The
//! warnings themselves are plain data in the model.

use crate::prepare::ReadyJob;
use storbench_metrics::ErrorKind;
use storbench_model::protocol::JobShare;
use storbench_model::{JobResult, Targets, Warning};
use storbench_workload::OpKind;

/// Warnings that follow from a job's results.
pub fn analyse(result: &JobResult, job: &ReadyJob) -> Vec<Warning> {
    let mut w = Vec::new();
    let name = result.name.clone();
    let share = &job.share;
    if let Some(rate) = share.ops_per_sec {
        let asked = rate * share.workers as f64;
        let achieved: f64 = result.ops.iter().map(|o| o.iops).sum();
        if !result.interrupted && achieved < asked * 0.98 {
            w.push(Warning::RateNotMet { job: name.clone(), asked_iops: asked, achieved_iops: achieved });
        }
    }
    if let Some(r) = result.op(OpKind::Read) {
        // Submission included: libaio carries out a buffered read inside
        // io_submit, so its service time (fio's clat) is near 0 wherever the data came from.
        let p50 = match (&r.service, &r.submit) {
            (Some(s), None) => s,
            _ => &r.latency,
        }
        .at(50.0);
        if !share.spec.direct && job.engine.capabilities().needs_files && r.ios > 0 && p50 < 5_000 {
            w.push(Warning::PageCacheReads { job: name.clone(), p50_ns: p50 });
        }
    }
    if result.cut_off > 0 {
        w.push(Warning::CutOff { job: name.clone(), ops: result.cut_off, grace_ms: crate::worker::DRAIN_GRACE_NS / 1_000_000 });
    }
    if let Some(ss) = result.steady_state.as_ref().filter(|ss| !ss.attained && !result.interrupted) {
        w.push(Warning::SteadyStateNotAttained { job: name.clone(), criteria: ss.criteria.clone() });
    }
    if let (Some(v), Some(asked)) = (&result.verify, share.spec.verify.as_ref()) {
        // A write job told not to read back (do_verify=0) judges nothing, on purpose.
        let reads = share.spec.read_percent() > 0.0 || asked.only || (asked.after && share.spec.writes());
        let queued = job.engine.capabilities().queued;
        if share.spec.read_percent() == 0.0 && crate::verify::time_based_passes(share, queued) == Some(false) {
            w.push(Warning::VerifyNeverRead { job: name.clone(), engine: job.engine.name().into() });
        } else {
            w.extend(verify_warning(&name, &v.tally, reads && !result.interrupted));
        }
    }
    if let Some(f) = result.fill.as_ref().filter(|_| !result.interrupted) {
        w.extend(fill_warning(&name, f));
    }
    if let Some(w0) = first_ops_waited(result, share) {
        w.push(w0);
    }
    if let Some(w0) = never_written_reads(result, share) {
        w.push(w0);
    }
    if let Some(w0) = shared_exclusive_lock(result, share) {
        w.push(w0);
    }
    let cannot_connect: u64 = result.ops.iter().filter_map(|o| o.error_kinds.get(&ErrorKind::Connection)).sum();
    if cannot_connect > 0 {
        let backoff_ms = job.engine.connection_backoff().map(|d| d.as_millis() as u64);
        w.push(Warning::ConnectionFailures { job: name.clone(), failures: cannot_connect, backoff_ms });
    }
    if let Some(w0) = no_operations(result, share) {
        w.push(w0);
    }
    for o in result.ops.iter().filter(|_| !share.spec.precondition) {
        if o.ios > 0 && o.ios < 1000 && o.op != OpKind::Sync {
            w.push(Warning::FewSamples { job: name.clone(), op: o.op.name().into(), ios: o.ios });
        }
    }
    w
}

/// A fill the store kept less of than was written. Allocation goes by
/// whole blocks or objects: a little below what was written is rounding.
fn fill_warning(job: &str, f: &storbench_model::FillResult) -> Option<Warning> {
    let allocated = f.allocated_bytes.filter(|a| (*a as f64) < f.written_bytes as f64 * 0.9)?;
    Some(Warning::FillNotAllocated { job: job.to_string(), target: f.target.clone(), written: f.written_bytes, allocated })
}

/// Failures found, or nothing judged at all.
fn verify_warning(job: &str, t: &storbench_metrics::VerifyTally, reads: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    if t.listing_stale + t.listing_missing > 0 {
        let first = t.listing_examples.first().cloned().unwrap_or_default();
        w.push(Warning::ListingDiffers { job: job.to_string(), stale: t.listing_stale, missing: t.listing_missing, first });
    }
    if t.failures_total() > 0 {
        let first =
            t.failures.first().map(|f| format!("{} at {} offset {}: {}", f.kind.name(), f.target, f.offset, f.what)).unwrap_or_default();
        w.push(Warning::VerifyFailed { job: job.to_string(), counts: t.counts_text(), first });
    } else if reads && t.checked == 0 && t.in_flight == 0 {
        w.push(Warning::NothingVerified { job: job.to_string() });
    }
    w
}

/// A job that measured for a while and completed nothing (not one that was
/// stopped, whose workers failed, or that only reads back to verify): its
/// results are empty, which a table row of zeros does not say loudly enough.
fn no_operations(result: &JobResult, share: &JobShare) -> Option<Warning> {
    let verify_only = share.spec.verify.as_ref().is_some_and(|v| v.only);
    // A CPU burner or a program does no operation by design.
    let quiet = result.failures.is_empty() && !result.interrupted && !verify_only && !share.spec.does_no_io();
    (quiet && completed_nothing(&result.ops, result.runtime_ns))
        .then(|| Warning::NoOperations { job: result.name.clone(), seconds: result.runtime_ns as f64 / 1e9 })
}

/// No operation completed, nor failed, in a measured phase of some length.
fn completed_nothing(ops: &[storbench_model::OpResult], runtime_ns: u64) -> bool {
    runtime_ns > 0 && ops.iter().all(|o| o.ios == 0 && o.errors.is_empty())
}

/// A job that read files of which more than 1% had never been written
/// when the run began (each file counted once, however many workers share it).
fn never_written_reads(result: &JobResult, share: &JobShare) -> Option<Warning> {
    result.ops.iter().find(|o| o.op == OpKind::Read && o.ios > 0)?;
    // A KV-cache tier reads only the entries it wrote during the run.
    if share.spec.kind.kvcache().is_some() {
        return None;
    }
    let per_worker = match &share.targets {
        Targets::Files(f) => f,
        Targets::Store(t) => {
            let (never, size) = store_span_never_written(t, &share.spec, share.workers)?;
            return (never > 0 && never * 100 > size).then(|| Warning::NeverWrittenReads {
                job: result.name.clone(),
                files: t.label.clone(),
                never_written: never,
                size,
            });
        }
        Targets::None => return None,
    };
    let mut seen = std::collections::HashSet::new();
    let (mut never, mut size, mut names) = (0u64, 0u64, Vec::new());
    for f in per_worker.iter().flatten().filter(|f| seen.insert(f.path.clone())) {
        if let Some(n) = f.never_written.filter(|n| *n > 0) {
            never += n;
            size += f.size;
            names.push(f.path.display().to_string());
        }
    }
    (never * 100 > size && never > 0).then(|| Warning::NeverWrittenReads {
        job: result.name.clone(),
        files: names.join(", "),
        never_written: never,
        size,
    })
}

/// Of an engine's own target (images), the bytes never written that the
/// job's span surely holds, and the span (every unit's): the store counts
/// an image's never-written bytes over all of it, and a job that reads
/// only its first part (an index, a dataset smaller than the image) is
/// judged on that part, by the fewest of those bytes that can lie in it.
fn store_span_never_written(t: &storbench_model::StoreTarget, spec: &storbench_workload::JobSpec, workers: u32) -> Option<(u64, u64)> {
    let units = u64::from(t.units.max(1));
    let never = t.never_written?;
    let reach = spec.size.map_or(t.size, |size| spec.offset + u64::from(workers.max(1) - 1) * spec.offset_increment + size);
    let span = reach.min(t.size);
    Some((never.saturating_sub((t.size - span) * units), span * units))
}

/// Several workers wrote to an image whose exclusive lock they must take
/// in turn (reads need no lock).
fn shared_exclusive_lock(result: &JobResult, share: &JobShare) -> Option<Warning> {
    let Targets::Store(t) = &share.targets else { return None };
    let wrote = result.ops.iter().any(|o| o.op.writes_data() && o.ios > 0);
    (share.workers > 1 && wrote && !t.exclusive_lock.is_empty()).then(|| Warning::SharedExclusiveLock {
        job: result.name.clone(),
        workers: share.workers,
        images: t.exclusive_lock.join(", "),
    })
}

/// Jobs of one group writing to the same image with its exclusive lock: the
/// lock moves between their handles as between one job's workers (a job of
/// several workers is warned about on its own, above). Each writing job is
/// told, the others named.
pub fn shared_locks_across_jobs(members: &[&ReadyJob], results: &mut [JobResult]) {
    let images = |j: &ReadyJob| match &j.share.targets {
        Targets::Store(t) => t.exclusive_lock.clone(),
        _ => Vec::new(),
    };
    let wrote = |r: &JobResult| r.ops.iter().any(|o| o.op.writes_data() && o.ios > 0);
    let writers: Vec<(usize, Vec<String>)> =
        members.iter().zip(results.iter()).enumerate().filter(|(_, (_, r))| wrote(r)).map(|(i, (j, _))| (i, images(j))).collect();
    let mut warned: Vec<(usize, Warning)> = Vec::new();
    for (i, held) in &writers {
        for image in held {
            let sharing: Vec<usize> = writers.iter().filter(|(_, h)| h.contains(image)).map(|(k, _)| *k).collect();
            if sharing.len() < 2 {
                continue;
            }
            let workers = sharing.iter().map(|k| members[*k].share.workers).sum();
            let names: Vec<&str> = sharing.iter().map(|k| results[*k].name.as_str()).collect();
            warned.push((*i, Warning::SharedExclusiveLock { job: names.join(" + "), workers, images: image.clone() }));
        }
    }
    for (i, w) in warned {
        results[i].warnings.push(w);
    }
}

/// Operations that waited more than this at the start of a run on a locked
/// target are flagged.
const LOCK_WAIT_NS: u64 = 1_000_000_000;

/// The target was locked by another client when the run began, and the first
/// operations to complete took long: they waited for the lock.
fn first_ops_waited(result: &JobResult, share: &JobShare) -> Option<Warning> {
    let Targets::Store(t) = &share.targets else { return None };
    let held_by = t.held_by.clone()?;
    let first = result.series.iter().find(|p| !p.ops.is_empty())?;
    let waited_ns = first.ops.iter().map(|o| o.max_ns).max()?;
    (waited_ns > LOCK_WAIT_NS).then(|| Warning::FirstOpsWaited { job: result.name.clone(), waited_ns, held_by })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fill_the_store_kept_less_of_is_warned_about_and_rounding_is_not() {
        let f = |allocated| storbench_model::FillResult {
            fraction: 0.8,
            target: "rbd:p/i".into(),
            written_bytes: 100 << 20,
            allocated_bytes: allocated,
        };
        assert!(
            matches!(fill_warning("fill.1", &f(Some(10 << 20))), Some(Warning::FillNotAllocated { allocated, .. }) if allocated == 10 << 20)
        );
        assert_eq!(fill_warning("fill.1", &f(Some(95 << 20))), None, "within a block's rounding");
        assert_eq!(fill_warning("fill.1", &f(None)), None, "nothing to judge when the store cannot tell");
    }

    #[test]
    fn an_image_is_judged_on_the_span_the_job_reads() {
        let t = |never| storbench_model::StoreTarget {
            never_written: Some(never),
            ..storbench_model::StoreTarget::new(64 << 20, 1, "rbd:p/i".into())
        };
        let spec = |size: Option<u64>| storbench_workload::JobSpec { size, ..Default::default() };
        // A 40 MiB index on a 64 MiB image whose other 24 MiB were never written: none of the span is.
        assert_eq!(store_span_never_written(&t(24 << 20), &spec(Some(40 << 20)), 2), Some((0, 40 << 20)));
        // 30 MiB never written: at least 6 MiB of them in the span.
        assert_eq!(store_span_never_written(&t(30 << 20), &spec(Some(40 << 20)), 1), Some((6 << 20, 40 << 20)));
        // No size: the whole image; a span past the image's end is the image.
        assert_eq!(store_span_never_written(&t(1 << 20), &spec(None), 1), Some((1 << 20, 64 << 20)));
        assert_eq!(store_span_never_written(&t(1 << 20), &spec(Some(1 << 30)), 1), Some((1 << 20, 64 << 20)));
        let stepped = storbench_workload::JobSpec { offset_increment: 16 << 20, ..spec(Some(16 << 20)) };
        assert_eq!(store_span_never_written(&t(32 << 20), &stepped, 2), Some((0, 32 << 20)), "two workers' spans");
    }

    #[test]
    fn a_job_that_completed_nothing_is_told_from_one_that_did_or_failed() {
        use storbench_metrics::OpStats;
        use storbench_model::OpResult;
        let op = |ios: u64, errors: u64| {
            let mut s = OpStats::new(false);
            for _ in 0..ios {
                s.record(4096, 1_000, 1_000);
            }
            let mut r = OpResult::from_stats(OpKind::Read, &s, 2_000_000_000);
            if errors > 0 {
                r.errors.insert("EIO".into(), errors);
            }
            r
        };
        assert!(completed_nothing(&[], 2_000_000_000), "no operation kind at all");
        assert!(completed_nothing(&[op(0, 0)], 2_000_000_000));
        assert!(!completed_nothing(&[op(0, 0), op(3, 0)], 2_000_000_000));
        assert!(!completed_nothing(&[op(0, 2)], 2_000_000_000), "failures are results too");
        assert!(!completed_nothing(&[], 0), "nothing measured, nothing to say");
    }
}
