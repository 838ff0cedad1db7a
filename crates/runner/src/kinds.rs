//! A job's kind section (`JobResult::kind`) from its workers' tallies
//! (`WorkerDone::kind`): a replayed trace's fidelity, a training run's
//! samples/s and accelerator utilization, a KV-cache tier's requests and
//! tokens/s, a vector index's queries/s. A kind with figures of its own
//! adds its builder here.

use storbench_model::protocol::{JobShare, WorkerDone};
use storbench_model::{JobResult, KindResult};
use storbench_workload::OpKind;

/// The job's kind section from its workers' tallies and the job's own
/// figures (what it read and wrote, a training run's or a KV tier's
/// throughput).
pub(crate) fn result(job: &crate::prepare::ReadyJob, done: &[WorkerDone], figures: &JobResult) -> Option<KindResult> {
    let bytes = |op: OpKind| figures.op(op).map_or(0, |o| o.bytes);
    let replay = replay_result(job, done).map(KindResult::Replay);
    replay
        .or_else(|| train_result(&job.share, done, bytes(OpKind::Read)).map(KindResult::Train))
        .or_else(|| {
            kvcache_result(&job.share, done, (bytes(OpKind::Read), bytes(OpKind::Write)), figures.runtime_ns).map(KindResult::KvCache)
        })
        .or_else(|| vectordb_result(&job.share, done, bytes(OpKind::Read), figures.runtime_ns).map(KindResult::VectorDb))
}

/// A vector index's result from its query processes' tallies, over the
/// job's runtime.
fn vectordb_result(share: &JobShare, done: &[WorkerDone], read: u64, runtime_ns: u64) -> Option<storbench_model::VectorDbResult> {
    let spec = share.spec.kind.vectordb()?;
    let mut t = storbench_workload::vectordb::VdbTally::default();
    let mut latency = storbench_metrics::LatencyHistogram::new();
    for (v, h) in done.iter().filter_map(|d| d.kind.as_deref()?.vectordb()) {
        t.merge(v);
        latency.add(h);
    }
    let secs = (runtime_ns as f64 / 1e9).max(1e-9);
    Some(storbench_model::VectorDbResult {
        config: spec.config.clone(),
        index: spec.index.clone(),
        vectors: spec.vectors,
        dimension: spec.dimension,
        segments: spec.segments,
        search_list: spec.search_list,
        beam_width: spec.beam_width,
        node_bytes: spec.read_bytes(),
        index_bytes: spec.index_bytes(),
        processes: share.workers,
        batch: spec.batch,
        runtime_ns,
        requests: t.requests,
        queries: t.queries,
        pending: t.pending,
        queries_per_sec: t.queries as f64 / secs,
        // Reads of a request cut short are left out with its queries.
        reads_per_query: t.reads as f64 / t.queries.max(1) as f64,
        read_bytes_per_sec: read as f64 / secs,
        latency: storbench_metrics::LatencySummary::of(&latency),
        latency_histogram: latency,
    })
}

/// A KV-cache job's result from its clients' tallies, over the job's runtime.
fn kvcache_result(
    share: &JobShare,
    done: &[WorkerDone],
    (read, written): (u64, u64),
    runtime_ns: u64,
) -> Option<storbench_model::KvCacheResult> {
    let spec = share.spec.kind.kvcache()?;
    let mut t = storbench_workload::kvcache::KvTally::default();
    let mut latency = storbench_metrics::LatencyHistogram::new();
    for (k, h) in done.iter().filter_map(|d| d.kind.as_deref()?.kvcache()) {
        t.merge(k);
        latency.add(h);
    }
    let mut waiting = storbench_metrics::LatencyHistogram::new();
    for ns in &t.waiting_ns {
        waiting.record(*ns);
    }
    let secs = (runtime_ns as f64 / 1e9).max(1e-9);
    Some(storbench_model::KvCacheResult {
        model: spec.model.clone(),
        clients: share.workers,
        // The spec's users are one machine's (its clients' users); on a
        // fleet every agent's clients serve as many each.
        users: (spec.users as u64 * share.workers as u64 / share.spec.workers().max(1) as u64) as u32,
        runtime_ns,
        arrived: t.arrived,
        served: t.served,
        pending: t.pending,
        context_tokens: t.context_tokens,
        generated_tokens: t.generated_tokens,
        tokens_per_sec: t.generated_tokens as f64 / secs,
        hits_gpu: t.hits[0],
        hits_cpu: t.hits[1],
        hits_storage: t.hits[2],
        misses: t.misses,
        stored: t.stored,
        demoted: t.demoted,
        evicted: t.evicted,
        uncached: t.uncached,
        read_bytes_per_sec: read as f64 / secs,
        write_bytes_per_sec: written as f64 / secs,
        latency: storbench_metrics::LatencySummary::of(&latency),
        latency_histogram: latency,
        waiting_histogram: waiting,
    })
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
    let ranks: Vec<(u32, &storbench_workload::train::TrainTally)> =
        done.iter().filter_map(|d| Some((d.worker, d.kind.as_deref()?.train()?))).collect();
    for (_, r) in &ranks {
        t.merge(r);
    }
    let accelerators = share.workers;
    let au = t.au(accelerators);
    let secs = (t.end_ns as f64 / 1e9).max(1e-9);
    Some(storbench_model::TrainResult {
        model: spec.model.clone(),
        accelerators,
        epochs: spec.epochs,
        samples: t.samples,
        steps: t.steps,
        runtime_ns: t.end_ns,
        samples_per_sec: t.samples_per_sec(),
        bytes_per_sec: read_bytes as f64 / secs,
        au,
        au_floor: spec.au_floor,
        passed: au >= spec.au_floor && t.steps > 0,
        stall_ns: t.stall_ns,
        ranks: rank_spread(&ranks),
    })
}

/// The ranks side by side (each rank's tally by its number over every
/// agent): the last to end, and the lowest and highest utilization, each
/// over the rank's own time.
fn rank_spread(ranks: &[(u32, &storbench_workload::train::TrainTally)]) -> Option<storbench_model::RankSpread> {
    let au = |t: &storbench_workload::train::TrainTally| t.au(1);
    let slowest = ranks.iter().max_by_key(|(rank, t)| (t.end_ns, std::cmp::Reverse(*rank)))?;
    let lowest = ranks.iter().min_by(|a, b| au(a.1).total_cmp(&au(b.1)).then(a.0.cmp(&b.0)))?;
    Some(storbench_model::RankSpread {
        first_end_ns: ranks.iter().map(|(_, t)| t.end_ns).min().unwrap_or(0),
        last_end_ns: slowest.1.end_ns,
        slowest: slowest.0,
        au_min: au(lowest.1),
        au_min_rank: lowest.0,
        au_max: ranks.iter().map(|(_, t)| au(t)).fold(0.0, f64::max),
    })
}
