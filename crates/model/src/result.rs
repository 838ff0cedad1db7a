//! Results as plain data: what every report format renders.
//!
//! Results keep the full histograms (encoded), so any percentile can be
//! recomputed and runs merged or compared later without re-running.

use crate::warning::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use storbench_metrics::{CpuTimes, ErrorKind, HistSample, LatencyHistogram, LatencySummary, LogSample, OpStats};
use storbench_workload::{JobSpec, OpKind};

/// Version of the JSON result schema (`schema/result-v1.json`).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub storbench_version: String,
    /// Unix time (seconds) the run started.
    pub started_unix: u64,
    pub hostname: String,
    /// The kernel release (`uname -r`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kernel: String,
    /// The command line (values of secret options replaced).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Stopped early by Ctrl-C/SIGTERM: the results cover the elapsed time.
    pub interrupted: bool,
    pub jobs: Vec<JobResult>,
    /// The whole process's CPU time during the run.
    pub cpu: CpuTimes,
    pub warnings: Vec<Warning>,
    /// What produced this run, when it is one of a set (a sweep point, a
    /// ramp step, a compatibility tool's own arguments): name -> value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// Notes about how the job source was read (fio options mapped or
    /// dropped, the quick suite's scratch file): part of the summary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The block devices under the run's files, their counters over the run
    /// (fio's `disk_util`); device-wide, so other processes' I/O is in them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<DiskUtil>,
    /// The client machines of a fleet run (`run --agents`), in the order
    /// they were given; empty for a run on this machine alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentInfo>,
    /// What the hosts did, second by second on the run's axis (CPU, disks,
    /// network, memory, pressure); absent with `--no-telemetry` and in
    /// results from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::telemetry::Telemetry>,
    /// The faults the run injected (`--fault`) and what they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption: Option<crate::disruption::Disruption>,
}

/// One agent of a fleet run: who it was, how its clock stood against the
/// coordinator's, and whether it was lost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// The name it is known by in the results (given, or its address).
    pub name: String,
    pub address: String,
    /// The host name the agent reported.
    pub hostname: String,
    pub storbench_version: String,
    /// Agent clock minus coordinator clock, from the round trip with the
    /// smallest delay at connection time (NTP's estimate).
    pub clock_offset_ns: i64,
    /// That round trip's time: the offset is known to within half of it.
    pub rtt_ns: u64,
    /// The agent's host memory (its MemTotal, bytes) as its Hello said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Why and when the agent was lost, if it was: its data up to its last
    /// interval is kept, the run is partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// One block device's counters over a run: differences of
/// `/sys/block/NAME/stat` (ticks in ms), and `util` the share of the run the
/// device was busy, as fio reports them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Percent of the elapsed time with I/O in flight (capped at 100).
    pub util: f64,
}

impl RunResult {
    /// A parameter's value, if the run has it.
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(String::as_str)
    }
}

/// How a failure of fio's latency bounds (max_latency, latency_target at
/// depth 1) ends its line in `JobResult::failures`: fio's outputs give
/// those jobs fio's error for them, ETIMEDOUT, where other failures are EIO.
pub const FIO_LATENCY_EXCEEDED: &str = "(fio: max latency exceeded)";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub group: u32,
    pub description: String,
    pub engine: String,
    pub spec: JobSpec,
    pub queue_depth: u32,
    pub workers: u32,
    pub targets: Vec<String>,
    /// When the job began, ns after its group started: fio's `startdelay`,
    /// or the wait for the job its `wait_for` names (its earliest worker).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_ns: u64,
    /// Measured time (ramp excluded), ns.
    pub runtime_ns: u64,
    pub ramp_ns: u64,
    /// Fixed-rate target per worker (ops/s), when set.
    pub rate_per_worker: Option<f64>,
    pub ops: Vec<OpResult>,
    /// The same operations per object size class (jobs with weighted
    /// object sizes only; objects an earlier run left are in no class).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub size_classes: Vec<SizeClassResult>,
    /// The same reads and writes per I/O priority they carried (fio's
    /// cmdprio options; the job's own priority first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub priorities: Vec<PrioResult>,
    pub series: Vec<SeriesPoint>,
    /// CPU time of the job's worker threads.
    pub worker_cpu: CpuTimes,
    pub interrupted: bool,
    /// Worker failures (set-up or engine), one line each.
    pub failures: Vec<String>,
    pub warnings: Vec<Warning>,
    /// Objects the job wrote that are still in the store although it was
    /// to remove them (cleanup interrupted or failed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub objects_left: u64,
    /// Operations in flight when the measured phase ended that got no
    /// answer in time: abandoned, in no count (a server that stopped answering).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_off: u64,
    /// fio's averaged log windows, per worker (jobs with `write_*_log`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<Vec<LogSample>>,
    /// fio's histogram log lines, per worker (jobs with `write_hist_log`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hist_logs: Vec<Vec<HistSample>>,
    /// Steady state, when the job asked for it (fio `steadystate`): the
    /// verdict and the window it was judged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateResult>,
    /// Verification, when the job asked for it (fio `verify`): what reading
    /// back found, by kind, with the first failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyResult>,
    /// A fill job (`run --fill`): written against allocated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<FillResult>,
    /// The figures of the job's kind, for kinds that have their own: in
    /// the job under the kind's name (`replay`, `train`), as earlier builds
    /// wrote them.
    #[serde(flatten, with = "crate::kind_result")]
    pub kind: Option<KindResult>,
    /// A fleet run: the same job's figures per agent (the job's own `ops`
    /// are the exact merge of these: histograms added, never averaged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_agent: Vec<AgentJobResult>,
    /// A job of several volumes (`volumes=N`): each volume's figures (the
    /// job's own `ops` are their exact merge).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_volume: Vec<VolumeJobResult>,
    /// Each worker on its own (fio's numjobs clones), kept when fio's
    /// outputs list the clones apart (see [`JobResult::keeps_clones`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_worker: Vec<WorkerJobResult>,
    /// Phases measured apart from the job's own (`ops`, `runtime_ns`): its
    /// verify pass. They ran after it, so their rates are never added to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseResult>,
    /// Its measured I/Os by the depth in flight once issued, in fio's
    /// `iodepth_level` buckets (1, 2, 4, 8, 16, 32, >=64); all zero in
    /// results from before storbench counted them.
    #[serde(default, skip_serializing_if = "no_depths")]
    pub depths: [u64; 7],
    /// fio's `latency_target` search inside the job: the queue depth it
    /// settled on (the deepest of its workers'), its figures those of the
    /// run at that depth (fio's final run); where it did not settle before
    /// the job ended, the depth it stood at and the job's whole figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
}

fn no_depths(d: &[u64; 7]) -> bool {
    d.iter().all(|n| *n == 0)
}

/// What a job did after its measured phase, measured on its own: the
/// verify pass (fio's `do_verify`) reads back what the job wrote. fio
/// counts those reads among the job's reads (its outputs do here too);
/// storbench's own figures keep them apart, as they ran after the writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhaseResult {
    pub phase: Phase,
    /// From the phase's start to its last worker's end.
    pub runtime_ns: u64,
    pub ops: Vec<OpResult>,
}

/// Which phase a [`PhaseResult`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The read-back of a verified write job (fio's verify phase).
    Verify,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Verify => "verify",
        }
    }
}

impl PhaseResult {
    pub fn op(&self, op: OpKind) -> Option<&OpResult> {
        self.ops.iter().find(|o| o.op == op)
    }
}

/// Worker `w`'s entry of per-worker lists, as the only one.
fn own<T: Clone>(lists: &[Vec<T>], w: u32) -> Vec<Vec<T>> {
    lists.get(w as usize).map(|l| vec![l.clone()]).unwrap_or_default()
}

/// One worker of a job on its own: what fio reports for one clone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerJobResult {
    pub worker: u32,
    /// Measured time of this worker (ramp excluded).
    pub runtime_ns: u64,
    pub ops: Vec<OpResult>,
    /// Its own per-second points.
    pub series: Vec<SeriesPoint>,
    pub cpu: CpuTimes,
    /// Its own verify pass (see [`JobResult::phases`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseResult>,
    /// Its own I/Os by depth (see [`JobResult::depths`]).
    #[serde(default, skip_serializing_if = "no_depths")]
    pub depths: [u64; 7],
}

/// What a fill job (`run --fill`) wrote, and what the store allocated for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FillResult {
    /// The share of the target asked for.
    pub fraction: f64,
    pub target: String,
    pub written_bytes: u64,
    /// What the store says it holds for the target (`None`: it cannot tell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_bytes: Option<u64>,
}

/// A job's kind's own figures (one section: a job is of one kind).
#[derive(Clone, Debug)]
pub enum KindResult {
    /// A job that replayed a trace (fio `read_iolog`): how faithfully.
    Replay(ReplayResult),
    /// An emulated training run (`--preset train:MODEL`): samples/s and
    /// accelerator utilization against the preset's floor.
    Train(TrainResult),
    /// An emulated KV-cache tier (`--preset kvcache:MODEL`): requests,
    /// tokens/s, what each tier served and the requests' latency.
    KvCache(KvCacheResult),
    /// An emulated vector index under queries (`--preset vectordb:CONFIG`):
    /// queries/s, the requests' latency and the reads behind them.
    VectorDb(VectorDbResult),
}

/// What an emulated vector index under queries came to (the VectorDB
/// benchmark's figures, over the job's query processes).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VectorDbResult {
    /// The reference config and the index type.
    pub config: String,
    pub index: String,
    pub vectors: u64,
    pub dimension: u32,
    /// Indexes searched by each query (Milvus's segments), nodes each
    /// search expands, and reads it has in flight at once.
    pub segments: u32,
    pub search_list: u32,
    pub beam_width: u32,
    /// Bytes a node read, and the index's bytes on storage.
    pub node_bytes: u64,
    pub index_bytes: u64,
    /// Query processes (the job's workers) and queries a request.
    pub processes: u32,
    pub batch: u32,
    pub runtime_ns: u64,
    /// Requests and their queries that ended, and requests cut short.
    pub requests: u64,
    pub queries: u64,
    pub pending: u64,
    pub queries_per_sec: f64,
    /// Node reads completed, over the queries that ended.
    pub reads_per_query: f64,
    /// Storage's bytes read a second (measured).
    pub read_bytes_per_sec: f64,
    /// Each request's latency, its start to its last search's end.
    pub latency: storbench_metrics::LatencySummary,
    pub latency_histogram: storbench_metrics::LatencyHistogram,
}

/// What an emulated KV-cache tier came to (MLPerf Storage's KV-cache
/// figures, over the job's clients).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KvCacheResult {
    pub model: String,
    /// Clients (the job's workers, MLPerf's ranks) and their users in all.
    pub clients: u32,
    pub users: u32,
    pub runtime_ns: u64,
    /// Requests that arrived, were served, and were still waiting or
    /// being served at the end (a queue that grows: the storage could not
    /// keep up with the users).
    pub arrived: u64,
    pub served: u64,
    pub pending: u64,
    pub context_tokens: u64,
    pub generated_tokens: u64,
    /// Generated tokens of the requests served, a second of the run.
    pub tokens_per_sec: f64,
    /// Entries read, by the tier that held them: accelerator, host memory, storage.
    pub hits_gpu: u64,
    pub hits_cpu: u64,
    pub hits_storage: u64,
    /// Earlier turns' entries no tier held any more.
    pub misses: u64,
    /// Entries written to storage (the requests' own, and moved down to it),
    /// moved down from a memory tier, dropped from storage for room, and
    /// taken by no tier.
    pub stored: u64,
    pub demoted: u64,
    pub evicted: u64,
    pub uncached: u64,
    /// Storage's bytes a second, read and written (measured).
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    /// Each served request's latency, its arrival to its end (queueing included).
    pub latency: storbench_metrics::LatencySummary,
    pub latency_histogram: storbench_metrics::LatencyHistogram,
    /// How long each request pending at the end had waited by then.
    #[serde(default)]
    pub waiting_histogram: storbench_metrics::LatencyHistogram,
}

impl KvCacheResult {
    /// The requests judged against a latency bound: those that met it
    /// (served within it), and those judged (served, and pending ones that
    /// had already waited past it: they missed it whenever they end).
    /// Pending ones still within it are not judged either way.
    pub fn within(&self, bound_ns: u64) -> (u64, u64) {
        let met = self.latency_histogram.count_between(0, bound_ns);
        let late = self.waiting_histogram.count() - self.waiting_histogram.count_between(0, bound_ns);
        (met, self.latency_histogram.count() + late)
    }
}

/// What an emulated training run came to (MLPerf Storage's figures).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainResult {
    pub model: String,
    pub accelerators: u32,
    pub epochs: u32,
    pub samples: u64,
    pub steps: u64,
    /// From the start to the end of the last step's compute.
    pub runtime_ns: u64,
    pub samples_per_sec: f64,
    /// Read from storage, measured (not samples x record size).
    pub bytes_per_sec: f64,
    /// Accelerator utilization: compute time over accelerators x runtime.
    pub au: f64,
    pub au_floor: f64,
    pub passed: bool,
    /// Time accelerators waited for data, in all.
    pub stall_ns: u64,
    /// How the ranks differed: the last to end (whose end is the run's
    /// duration) and the lowest utilization of any, over every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankSpread>,
}

/// A training job's ranks side by side. A rank's utilization is its
/// compute over its own time (its start to its last step's end).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSpread {
    pub first_end_ns: u64,
    pub last_end_ns: u64,
    /// The rank that ended last: the slowest.
    pub slowest: u32,
    pub au_min: f64,
    pub au_min_rank: u32,
    pub au_max: f64,
}

/// One agent's ranks of a training job on a fleet: its share of the
/// job's figures, over its own time (its ranks' start to the last one's end).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentTrain {
    pub accelerators: u32,
    /// Its first rank (its ranks are `first_rank..first_rank + accelerators`).
    pub first_rank: u32,
    pub samples: u64,
    pub steps: u64,
    pub runtime_ns: u64,
    pub samples_per_sec: f64,
    /// Its ranks' compute over its ranks x its runtime.
    pub au: f64,
    pub stall_ns: u64,
}

/// How a replayed trace went: what it held, what was issued, and how late
/// against the recorded times (the replay's own fidelity: a lag that grows
/// means the target, or the queue depth, could not keep the trace's pace).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayResult {
    pub trace: String,
    pub format: String,
    /// Operations in the trace.
    pub records: u64,
    pub issued: u64,
    /// Records not issued (stopped, or cut by runtime).
    pub left: u64,
    /// Offsets wrapped into a target smaller than the trace's.
    pub remapped: u64,
    /// Pace against the trace's (2: twice as fast); `None`: without stalls.
    pub speed: Option<f64>,
    /// Issue time minus recorded time.
    pub lag: LatencySummary,
    pub lag_histogram: LatencyHistogram,
}

/// What a job's verification found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    pub checksum: String,
    /// Bytes per header.
    pub unit: u32,
    #[serde(flatten)]
    pub tally: storbench_metrics::VerifyTally,
}

/// Whether a job reached steady state, and on what window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateResult {
    /// The criteria, as given (`iops:10%,bw_slope:1%`).
    pub criteria: String,
    pub dur_s: f64,
    pub ramp_s: f64,
    pub interval_s: f64,
    /// SNIA PTS mode: each sample is a round.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snia: bool,
    pub attained: bool,
    /// Measured seconds when every criterion held (the job ended then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    /// Each criterion's value on the last window judged.
    pub judged: Vec<SteadyValue>,
    /// That window's samples.
    pub window: Vec<storbench_workload::steady::Sample>,
}

/// A criterion's value on a window (largest deviation or |slope|; a
/// percentage of the window's mean when the criterion is one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyValue {
    pub criterion: String,
    pub value: f64,
    pub holds: bool,
}

/// One agent's part of a job in a fleet run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentJobResult {
    pub agent: String,
    pub workers: u32,
    pub targets: Vec<String>,
    /// Measured time of this agent's workers (ramp excluded).
    pub runtime_ns: u64,
    pub ops: Vec<OpResult>,
    /// The agent was lost during the job: its figures end at its last interval.
    #[serde(default)]
    pub lost: bool,
    /// A training job's figures of this agent's ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train: Option<AgentTrain>,
}

/// One volume's part of a job of several (`volumes=N`): its own workers'
/// operations, over the job's measured time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VolumeJobResult {
    pub volume: u32,
    pub workers: u32,
    /// Its files, or its objects' name prefix; empty for an engine's own
    /// units (an RBD image: `-<volume>` of the job's name, see `targets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    pub ops: Vec<OpResult>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl JobResult {
    /// How a replayed trace went (jobs that replayed one).
    pub fn replay(&self) -> Option<&ReplayResult> {
        match &self.kind {
            Some(KindResult::Replay(r)) => Some(r),
            _ => None,
        }
    }

    /// What an emulated training run came to (training jobs).
    pub fn train(&self) -> Option<&TrainResult> {
        match &self.kind {
            Some(KindResult::Train(t)) => Some(t),
            _ => None,
        }
    }

    /// What an emulated KV-cache tier came to.
    pub fn kvcache(&self) -> Option<&KvCacheResult> {
        match &self.kind {
            Some(KindResult::KvCache(k)) => Some(k),
            _ => None,
        }
    }

    /// What an emulated vector index under queries came to.
    pub fn vectordb(&self) -> Option<&VectorDbResult> {
        match &self.kind {
            Some(KindResult::VectorDb(v)) => Some(v),
            _ => None,
        }
    }

    /// fio lists each clone of a numjobs job as a job of its own unless the
    /// job asks for `group_reporting`: the runner keeps each worker's
    /// figures apart for such jobs.
    pub fn keeps_clones(spec: &JobSpec, workers: u32) -> bool {
        workers > 1 && !spec.group_reporting
    }

    /// The job as fio's outputs list it: one entry per clone when each
    /// worker's figures were kept, else the job itself.
    pub fn fio_entries(&self) -> Vec<std::borrow::Cow<'_, JobResult>> {
        if self.per_worker.is_empty() {
            return vec![std::borrow::Cow::Borrowed(self)];
        }
        self.per_worker.iter().map(|w| std::borrow::Cow::Owned(self.clone_of(w))).collect()
    }

    /// One clone: the job's settings with the worker's own figures (the
    /// job's other figures, per agent and per worker, are not copied).
    fn clone_of(&self, w: &WorkerJobResult) -> JobResult {
        let mine = format!("worker {}: ", w.worker);
        JobResult {
            name: self.name.clone(),
            group: self.group,
            description: self.description.clone(),
            engine: self.engine.clone(),
            spec: self.spec.clone(),
            queue_depth: self.queue_depth,
            workers: 1,
            targets: self.targets.clone(),
            runtime_ns: w.runtime_ns,
            ramp_ns: self.ramp_ns,
            rate_per_worker: self.rate_per_worker,
            ops: w.ops.clone(),
            size_classes: Vec::new(),
            series: w.series.clone(),
            worker_cpu: w.cpu,
            interrupted: self.interrupted,
            failures: self.failures.iter().filter(|f| f.starts_with(&mine)).cloned().collect(),
            warnings: self.warnings.clone(),
            objects_left: self.objects_left,
            cut_off: self.cut_off,
            logs: own(&self.logs, w.worker),
            hist_logs: own(&self.hist_logs, w.worker),
            steady_state: self.steady_state.clone(),
            verify: self.verify.clone(),
            fill: self.fill.clone(),
            kind: self.kind.clone(),
            per_agent: Vec::new(),
            per_volume: Vec::new(),
            per_worker: Vec::new(),
            phases: w.phases.clone(),
            // Kept per job, not per worker: a clone lists none.
            priorities: Vec::new(),
            start_ns: self.start_ns,
            depths: w.depths,
            latency_depth: self.latency_depth,
        }
    }

    pub fn op(&self, op: OpKind) -> Option<&OpResult> {
        self.ops.iter().find(|o| o.op == op)
    }
    /// A phase measured apart, if the job had it.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| p.phase == phase)
    }
    /// How long its verify pass took (0: it had none).
    pub fn pass_ns(&self) -> u64 {
        self.phase(Phase::Verify).map_or(0, |p| p.runtime_ns)
    }
    pub fn total_ios(&self) -> u64 {
        self.ops.iter().map(|o| o.ios).sum()
    }
    pub fn total_errors(&self) -> u64 {
        self.ops.iter().map(|o| o.errors.values().sum::<u64>()).sum()
    }
    /// Errors that fail the job: all of them, less those the job tolerates
    /// (fio's `continue_on_error` with `ignore_error`).
    pub fn failing_errors(&self) -> u64 {
        let Some(t) = &self.spec.tolerated_errors else { return self.total_errors() };
        let tolerated = |op: OpKind, name: &String| match op {
            OpKind::Read => t.read.contains(name),
            OpKind::Write => t.write.contains(name),
            _ => false,
        };
        self.ops.iter().flat_map(|o| o.errors.iter().filter(move |(k, _)| !tolerated(o.op, k)).map(|(_, n)| *n)).sum()
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpResult {
    pub op: OpKind,
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// Completion latency; in fixed-rate runs counted from the scheduled start.
    pub latency: LatencySummary,
    /// Issue-to-completion time, in fixed-rate runs and for engines that
    /// submit apart (libaio), where it counts from the submission (fio's clat).
    pub service: Option<LatencySummary>,
    /// Failures by the storage's own detail ("ENOENT (...)", "HTTP 404").
    pub errors: BTreeMap<String, u64>,
    /// The same failures by backend-independent kind ("not_found"), so runs
    /// on different engines line up.
    #[serde(default)]
    pub error_kinds: BTreeMap<ErrorKind, u64>,
    pub histogram: LatencyHistogram,
    pub service_histogram: Option<LatencyHistogram>,
    /// Time to first byte (streamed reads of HTTP engines), from the same
    /// start as `latency`, which is then the time to the last byte.
    #[serde(default)]
    pub first_byte: Option<LatencySummary>,
    /// Resends after failures (only when the engine was asked to retry);
    /// the latency of those operations covers every attempt.
    #[serde(default)]
    pub retries: u64,
    /// Submission latency (fio's slat), for engines that submit apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_histogram: Option<LatencyHistogram>,
}

impl OpResult {
    pub fn from_stats(op: OpKind, s: &OpStats, runtime_ns: u64) -> OpResult {
        let secs = (runtime_ns as f64 / 1e9).max(1e-9);
        OpResult {
            op,
            ios: s.ios,
            bytes: s.bytes,
            iops: s.ios as f64 / secs,
            bytes_per_sec: s.bytes as f64 / secs,
            latency: LatencySummary::of(&s.latency),
            service: s.service.as_ref().map(LatencySummary::of),
            errors: s.errors.by_detail(),
            error_kinds: s.errors.by_kind(),
            histogram: s.latency.clone(),
            service_histogram: s.service.clone(),
            first_byte: (s.first_byte.count() > 0).then(|| LatencySummary::of(&s.first_byte)),
            retries: s.retries,
            submit: (s.submit.count() > 0).then(|| LatencySummary::of(&s.submit)),
            submit_histogram: (s.submit.count() > 0).then(|| s.submit.clone()),
        }
    }
}

/// The operations on objects of one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SizeClassResult {
    /// Object size in bytes.
    pub size: u64,
    pub ops: Vec<OpResult>,
}

/// The reads and writes that carried one I/O priority.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrioResult {
    /// The kernel's ioprio value (class << 13 | level; 0: none set).
    pub ioprio: u16,
    /// 1 real time, 2 best effort, 3 idle (0: none set).
    pub class: u8,
    /// 0 (highest) to 7.
    pub level: u8,
    pub ops: Vec<OpResult>,
}

impl PrioResult {
    pub fn new(ioprio: u16, ops: Vec<OpResult>) -> PrioResult {
        let (class, level) = storbench_workload::prio::parts(ioprio);
        PrioResult { ioprio, class, level, ops }
    }
}

/// One second (or the last, partial interval) of a job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// End of the interval, seconds since the job started (ramp included).
    pub t: f64,
    pub duration: f64,
    pub warmup: bool,
    pub ops: Vec<SeriesOp>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeriesOp {
    pub op: OpKind,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub errors: u64,
    /// The same failures by kind (empty in older results), so a stretch of
    /// the run can say what went wrong, not only how often.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_kinds: BTreeMap<ErrorKind, u64>,
    /// Mean latency of the interval (0 in results written before it existed).
    #[serde(default)]
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// The interval's latencies in coarse log buckets (`LatencyHistogram::
    /// log_buckets`), for heatmaps; empty in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<(u16, u64)>,
}
