//! A job's kind section (`JobResult::kind`) from its workers' tallies
//! (`WorkerDone::kind`): a replayed trace's fidelity, a training run's
//! samples/s and accelerator utilization. A kind with figures of its own
//! adds its builder here.

use storbench_model::protocol::{JobShare, WorkerDone};
use storbench_model::KindResult;

/// The job's kind section from its workers' tallies (`read_bytes`: what
/// the job read, a training run's throughput).
pub(crate) fn result(job: &crate::prepare::ReadyJob, done: &[WorkerDone], read_bytes: u64) -> Option<KindResult> {
    let replay = replay_result(job, done).map(KindResult::Replay);
    replay.or_else(|| train_result(&job.share, done, read_bytes).map(KindResult::Train))
}

/// A replaying job's result from its workers' tallies.
fn replay_result(job: &crate::prepare::ReadyJob, done: &[WorkerDone]) -> Option<storbench_model::ReplayResult> {
    let (spec, trace) = (job.share.spec.kind.replay()?, job.trace.as_ref()?);
    let mut t = storbench_metrics::ReplayTally::default();
    for d in done.iter().filter_map(|d| d.kind.as_deref()?.replay()) {
        t.merge(d);
    }
    Some(storbench_model::ReplayResult {
        trace: spec.path.display().to_string(),
        format: trace.format.name().to_string(),
        records: trace.records.len() as u64,
        issued: t.issued,
        left: t.left,
        remapped: t.remapped,
        speed: (!spec.no_stall).then_some(spec.speed),
        lag: storbench_metrics::LatencySummary::of(&t.lag),
        lag_histogram: t.lag,
    })
}

/// A training job's result from its accelerators' tallies.
fn train_result(share: &JobShare, done: &[WorkerDone], read_bytes: u64) -> Option<storbench_model::TrainResult> {
    let spec = share.spec.kind.train()?;
    let mut t = storbench_workload::train::TrainTally::default();
    for d in done.iter().filter_map(|d| d.kind.as_deref()?.train()) {
        t.merge(d);
    }
    let accelerators = share.workers;
    let au = storbench_workload::train::utilization(t.compute_ns, accelerators, t.end_ns);
    let secs = (t.end_ns as f64 / 1e9).max(1e-9);
    Some(storbench_model::TrainResult {
        model: spec.model.clone(),
        accelerators,
        epochs: spec.epochs,
        samples: t.samples,
        steps: t.steps,
        runtime_ns: t.end_ns,
        samples_per_sec: t.samples as f64 / secs,
        bytes_per_sec: read_bytes as f64 / secs,
        au,
        au_floor: spec.au_floor,
        passed: au >= spec.au_floor && t.steps > 0,
        stall_ns: t.stall_ns,
    })
}
