//! AI workload presets (`run --preset`): training as DLIO / MLPerf Storage
//! define it (unet3d, resnet50, cosmoflow, retinanet, flux, dlrm on each
//! accelerator their configs name: sample sizes, samples per file, batch,
//! reader threads, compute time per step, epochs, the AU floor)
//! and checkpoints of llama3 models by MLPerf Storage's rules (ten written,
//! every rank its shard with an fsync, then the ten read back with the page
//! cache dropped; `default` and `subset` modes; the slowest rank sets the
//! time).
//!
//! And the KV-cache tier of LLM inference as MLPerf Storage's KV-cache
//! benchmark models it (`kvcache:MODEL`, `kvcache:option1..3`; see
//! `storbench_workload::kvcache`): users' requests writing and reading
//! their conversations' cache on the job's file or device; and a vector
//! database's index under queries (`vectordb:CONFIG`, in `vectordb.rs`).
//!
//! `--scale` is the share of the dataset or checkpoint kept, to fit the
//! machine: training keeps each sample's size and compute time (so what one
//! accelerator asks of storage per second is the preset's) and keeps that
//! share of the samples (of the files, or for files of many samples the
//! square root of it of both the files and the samples in each, so files
//! shrink too); checkpoints keep that share of their bytes.

use crate::error::CliError;
use crate::sources::Pairs;
use storbench_workload::train::{Parquet, TrainSpec};
use storbench_workload::JobSpec;

/// One training workload on one accelerator, as MLPerf Storage's DLIO
/// config `configs/dlio/workload/<model>_<accelerator>.yaml` gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    pub model: &'static str,
    pub accelerator: &'static str,
    /// The dataset's file format (`dataset.format`): npz, tfrecord, jpeg, parquet.
    pub format: &'static str,
    pub files: u64,
    pub samples_per_file: u64,
    /// Bytes a sample (`record_length_bytes`).
    pub record: u64,
    pub batch: u32,
    pub reader_threads: u32,
    /// Seconds of compute a step (`train.computation_time`).
    pub compute: f64,
    pub epochs: u32,
    /// The AU a run must reach (`metric.au`).
    pub au_floor: f64,
}

const fn m(
    model: &'static str,
    accelerator: &'static str,
    format: &'static str,
    (files, samples_per_file, record): (u64, u64, u64),
    (batch, reader_threads): (u32, u32),
    (compute, epochs, au_floor): (f64, u32, f64),
) -> Model {
    Model { model, accelerator, format, files, samples_per_file, record, batch, reader_threads, compute, epochs, au_floor }
}

/// Every (workload, accelerator) the MLPerf Storage configs define (the
/// sources, repository path and commit, are in README's table). A model's
/// first row is what `train:MODEL` means: H100 for the first three, as
/// before accelerators were named; B200 for the newer ones, the accelerator
/// of MLPerf Storage v3.0.
pub const TRAIN: &[Model] = &[
    m("unet3d", "h100", "npz", (168, 1, 146_600_628), (7, 4), (0.323, 5, 0.90)),
    m("unet3d", "a100", "npz", (168, 1, 146_600_628), (7, 4), (0.636, 5, 0.90)),
    m("unet3d", "b200", "npz", (7200, 1, 146_600_628), (7, 4), (0.162, 5, 0.90)),
    m("resnet50", "h100", "tfrecord", (1024, 1251, 114_660), (400, 8), (0.224, 5, 0.90)),
    m("resnet50", "a100", "tfrecord", (1024, 1251, 114_660), (400, 8), (0.435, 5, 0.90)),
    m("cosmoflow", "h100", "tfrecord", (524_288, 1, 2_828_486), (1, 4), (0.0035, 5, 0.70)),
    m("cosmoflow", "a100", "tfrecord", (524_288, 1, 2_828_486), (1, 4), (0.00551, 5, 0.70)),
    m("retinanet", "b200", "jpeg", (1_170_301, 1, 322_957), (24, 8), (0.04755, 8, 0.85)),
    m("retinanet", "mi355", "jpeg", (1_170_301, 1, 322_957), (32, 8), (0.0634, 8, 0.85)),
    m("flux", "b200", "parquet", (4296, 288, 2_164_832), (48, 8), (1.35, 1, 0.90)),
    m("flux", "mi355", "parquet", (4296, 288, 2_164_832), (72, 8), (2.025, 1, 0.90)),
    m("dlrm", "b200", "parquet", (1024, 4_718_592, 761), (16384, 4), (0.000375, 1, 0.70)),
    m("dlrm", "mi355", "parquet", (1024, 4_718_592, 761), (18432, 4), (0.0005625, 1, 0.70)),
];

/// dlrm's Parquet columns, one letter each for its type's width (b int8,
/// h float16, f float32, d float64), upper case where the reader reads it
/// (`read: true`): 200 columns, 761 bytes a row, 40 of them (160 bytes) read.
/// From mlcommons/storage configs/dlio/workload/dlrm_b200.yaml at 0b42eb5
/// (dlrm_mi355.yaml at 52714a9 has the same), with `row_group_size: 6144`.
const DLRM_COLUMNS: &str = concat!(
    "hhddfhfbhbfFdfbhfFFhDdddhFfhhfdFdfhhdbbbhFhFdbdddFfbbFffbfHFdhdbfhbFHfhFhfFDhbfdbbffhbhbFbFFHFDdFHbh",
    "hdhfdhhfdfddbhhbBDfbhhbbbhbbfbhfdhhdhFddhFbbdfdFddbbbdDFfbFhFhFhdhdhfBdhbdbbbbhhBdddhdBbhFdbdfdFfddh",
);
const DLRM_ROW_GROUP: u64 = 6144;

/// The Parquet layout a model's files have, where only some columns are
/// read (dlrm); flux's configs read every column and name no row group,
/// so its samples are read whole.
fn parquet(model: &str) -> Option<Parquet> {
    let width = |c: char| match c.to_ascii_lowercase() {
        'b' => 1,
        'h' => 2,
        'f' => 4,
        _ => 8,
    };
    (model == "dlrm")
        .then(|| Parquet { row_group: DLRM_ROW_GROUP, columns: DLRM_COLUMNS.chars().map(|c| (width(c), c.is_ascii_uppercase())).collect() })
}

/// `MODEL` (its first accelerator) or `MODEL:ACCELERATOR`.
pub fn find_train(name: &str) -> Option<&'static Model> {
    match name.split_once(':') {
        Some((model, acc)) => TRAIN.iter().find(|t| t.model == model && t.accelerator == acc),
        None => TRAIN.iter().find(|t| t.model == name),
    }
}

/// A llama3 checkpoint by MLPerf Storage's checkpointing rules
/// (mlcommons/storage, checkpointing/README.md at 53bb3fc, Table 2): its
/// size, its ranks (TP x PP x DP, fixed in the closed division) and what the
/// first 8 ranks hold, for `subset` mode (one host of 8 writing their share;
/// not for 8b, whose 8 ranks are one host already). The table's "GB" are
/// GiB: 8b's 105 is 8.03e9 parameters at 14 bytes, 112.4e9 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checkpoint {
    pub model: &'static str,
    pub gib: f64,
    pub ranks: u32,
    pub subset_gib: Option<f64>,
}

pub const CHECKPOINT: &[Checkpoint] = &[
    Checkpoint { model: "llama3-8b", gib: 105.0, ranks: 8, subset_gib: None },
    Checkpoint { model: "llama3-70b", gib: 912.0, ranks: 64, subset_gib: Some(114.0) },
    Checkpoint { model: "llama3-405b", gib: 5.29 * 1024.0, ranks: 512, subset_gib: Some(94.0) },
    Checkpoint { model: "llama3-1t", gib: 18.0 * 1024.0, ranks: 1024, subset_gib: Some(161.0) },
];

/// A subset run's ranks: one host of 8 (the only count the rules allow).
const SUBSET_RANKS: u32 = 8;

/// Checkpoints written, then read back (10 each in either division).
pub const CHECKPOINTS: u32 = 10;

/// How a checkpoint preset runs: its ranks and each rank's bytes a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CheckpointPlan {
    pub ranks: u32,
    pub shard: u64,
    pub subset: bool,
}

/// How a preset is sized and spread.
#[derive(Clone, Debug)]
pub struct Sizing {
    pub scale: f64,
    /// Accelerators (training) or ranks (checkpoint); None: the preset's.
    pub workers: Option<u32>,
    pub epochs: Option<u32>,
    /// KV cache: users a client (None: the preset's, scaled).
    pub users: Option<u32>,
    /// Vector search: queries a request (None: 1, the reference's).
    pub batch: Option<u32>,
}

/// A model's KV-cache bytes a token (layers x KV heads x head size x 2 x
/// 2 bytes), as mlcommons/storage kv_cache_benchmark/kv_cache/models.py
/// (at 23aa82e) gives them.
pub const KV_MODELS: &[(&str, u64)] = &[
    ("tiny-1b", 24_576),
    ("mistral-7b", 131_072),
    ("llama2-7b", 524_288),
    ("llama3.1-8b", 131_072),
    ("llama3.1-70b-instruct", 327_680),
    ("qwen3-32b", 262_144),
    ("gpt-oss-20b", 49_152),
    ("gpt-oss-120b", 73_728),
    ("deepseek-v3", 70_272),
];

/// A KV-cache run: model, users a client, host-memory tier a client,
/// requests served at once (`--max-concurrent-allocs`), seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KvRun {
    pub model: &'static str,
    pub users: u32,
    pub cpu_bytes: u64,
    pub concurrent: u32,
    pub seconds: u64,
}

/// MLPerf Storage's closed KV-cache workloads (its Rules.md, Table
/// KVCache-1): no accelerator memory tier, generation time `none`, 300 s.
pub const KV_OPTIONS: &[(&str, KvRun)] = &[
    ("option1", KvRun { model: "llama3.1-8b", users: 200, cpu_bytes: 0, concurrent: 16, seconds: 300 }),
    ("option2", KvRun { model: "llama3.1-8b", users: 100, cpu_bytes: 4 << 30, concurrent: 16, seconds: 300 }),
    ("option3", KvRun { model: "llama3.1-70b-instruct", users: 70, cpu_bytes: 0, concurrent: 4, seconds: 300 }),
];

/// `option1..3`, or a model of [`KV_MODELS`] run as option 1 is.
pub fn find_kv(name: &str) -> Option<KvRun> {
    if let Some((_, r)) = KV_OPTIONS.iter().find(|(o, _)| *o == name) {
        return Some(*r);
    }
    let (model, _) = KV_MODELS.iter().find(|(m, _)| *m == name)?;
    Some(KvRun { model, ..KV_OPTIONS[0].1 })
}

/// The storage tier's size when the command line gives none: room for
/// four of the model's largest entries (25,000 tokens), and 8 GiB at least.
fn kv_default_size(bytes_per_token: u64) -> u64 {
    (4 * 25_000 * bytes_per_token).max(8 << 30).div_ceil(1 << 20) << 20
}

/// Every preset name, for help and errors.
pub fn names() -> Vec<String> {
    let mut models: Vec<&str> = TRAIN.iter().map(|t| t.model).collect();
    models.dedup();
    let bare = models.into_iter().map(|m| format!("train:{m}"));
    let qualified = TRAIN.iter().map(|t| format!("train:{}:{}", t.model, t.accelerator));
    let checkpoints = CHECKPOINT.iter().map(|c| format!("checkpoint:{}", c.model));
    let subsets = CHECKPOINT.iter().filter(|c| c.subset_gib.is_some()).map(|c| format!("checkpoint:{}:subset", c.model));
    let kv = KV_OPTIONS.iter().map(|(o, _)| format!("kvcache:{o}")).chain(KV_MODELS.iter().map(|(m, _)| format!("kvcache:{m}")));
    bare.chain(qualified).chain(checkpoints).chain(subsets).chain(kv).chain(super::vectordb::names()).collect()
}

/// The jobs of a preset; `global` (the command line's job options: target,
/// engine, directory...) applies to each before the preset's own.
pub fn specs(name: &str, sizing: &Sizing, global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    if !(sizing.scale > 0.0 && sizing.scale <= 1.0) {
        return Err(CliError::usage(format!("--scale {}: give a share above 0 and at most 1", sizing.scale)));
    }
    let unknown = || CliError::usage(format!("no preset '{name}'; presets: {}", names().join(", ")));
    match name.split_once(':') {
        Some(("train", m)) => find_train(m).map(|t| train(t, sizing, global)).ok_or_else(unknown)?,
        Some(("checkpoint", m)) => checkpoint(&checkpoint_plan(m, sizing).ok_or_else(unknown)??, m, global),
        Some(("kvcache", m)) => kvcache(&find_kv(m).ok_or_else(unknown)?, sizing, global),
        Some(("vectordb", m)) => super::vectordb::specs(super::vectordb::find(m).ok_or_else(unknown)?, sizing, global),
        _ => Err(unknown()),
    }
}

/// The command line's options on a default job; readers and ranks keep
/// their queue depth, so the engine is io_uring unless one is given.
pub(super) fn base(global: &Pairs) -> Result<JobSpec, CliError> {
    let mut s = JobSpec::default();
    if storbench_engine::uring::available() {
        s.ioengine = "io_uring".into();
    }
    for (k, v) in global {
        storbench_workload::apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("--preset: {e}")))?;
    }
    Ok(s)
}

pub(super) fn set(s: &mut JobSpec, k: &str, v: &str) -> Result<(), CliError> {
    storbench_workload::apply_option(s, k, v).map_err(|e| CliError::usage(format!("--preset: {e}")))
}

/// The engine stores objects (s3, swift, rados) rather than blocks.
pub(super) fn objects(s: &JobSpec) -> bool {
    storbench_engine::find(&s.ioengine).is_some_and(|f| !f.capabilities().blocks)
}

/// Whether the job's engine works on files (None: no such engine, which
/// the plan refuses by name).
fn on_files(s: &JobSpec) -> Option<bool> {
    storbench_engine::find(&s.ioengine).map(|f| f.capabilities().needs_files)
}

/// Every worker on one target: a named file or device, or the engine's own
/// (an RBD image, an NBD export).
pub(super) fn one_target(s: &JobSpec) -> bool {
    !s.filenames.is_empty() || on_files(s) == Some(false)
}

fn train(m: &Model, sizing: &Sizing, global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let &Model { model, files, samples_per_file: spf, record, batch, reader_threads: threads, compute, epochs, au_floor: floor, .. } = m;
    let share = if spf > 1 { sizing.scale.sqrt() } else { sizing.scale };
    let scaled = |n: u64| ((n as f64 * share).round() as u64).max(1);
    let layout = parquet(model);
    // Parquet files keep whole row groups.
    let spf_scaled = match &layout {
        Some(p) => scaled(spf / p.row_group) * p.row_group,
        None if spf > 1 => scaled(spf),
        None => 1,
    };
    let accelerators = sizing.workers.unwrap_or(1);
    let t = TrainSpec {
        model: format!("{model}:{}", m.accelerator),
        files: scaled(files),
        samples_per_file: spf_scaled,
        record,
        batch,
        compute_ns: (compute * 1e9) as u64,
        epochs: sizing.epochs.unwrap_or(epochs),
        au_floor: floor,
        prefetch: threads * 2,
        parquet: layout,
        dataset_written: false,
    };
    let most = max_accelerators(&t);
    if accelerators as u64 > most {
        let fewer = if most > 0 { format!(" or use at most {most} accelerators") } else { String::new() };
        return Err(CliError::usage(format!(
            "train:{model}:{} at --scale {} has {} samples{}, too few for a batch ({batch}) on each of {accelerators} accelerators; raise --scale{fewer}",
            m.accelerator,
            sizing.scale,
            t.samples(),
            t.parquet.as_ref().map_or(String::new(), |p| format!(" in {} row groups of {} (each accelerator reads whole groups)", t.units(), p.row_group)),
        )));
    }
    let mut s = base(global)?;
    s.name = format!("train-{model}");
    s.numjobs = accelerators;
    s.iodepth = threads;
    set(&mut s, "rw", "randread")?;
    // A read is a sample, or a Parquet column's chunk of a row group.
    let largest = t.parquet.as_ref().and_then(|p| p.reads().iter().map(|r| r.1).max()).unwrap_or(record);
    set(&mut s, "bs", &largest.to_string())?;
    match objects(&s) {
        true => {
            let o = s.objects.get_or_insert_with(Default::default);
            o.count = t.files;
            o.sizes = storbench_workload::ObjectSizes::Classes { split: storbench_workload::SizeSplit::fixed(t.file_bytes()) };
            o.mix = vec![(storbench_workload::OpKind::Read, 1)];
            // Each accelerator writes its share of the dataset first (not measured).
            o.prefill = true;
            o.prefix.get_or_insert_with(|| format!("storbench.train-{model}."));
        }
        // A file each on a file system (laid out before the run).
        false if s.filenames.is_empty() && on_files(&s) == Some(true) => {
            s.filenames = (0..t.files).map(|i| format!("{model}.{i}.{}", m.format)).collect();
            s.nrfiles = t.files as u32;
            // size is each file's, as in fio with several files.
            s.size = Some(t.file_bytes());
        }
        // Fewer targets than files (an image or export, written by the job
        // before it reads; files or devices named by --filename, laid out
        // before the run as any read job's): the files one after another.
        false => s.size = Some(t.files.div_ceil(s.filenames.len().max(1) as u64) * t.file_bytes()),
    }
    s.kind.set_train(t).map_err(|e| CliError::usage(format!("--preset: {e}")))?;
    Ok(vec![s])
}

/// A KV-cache tier: each client (a worker, `--accelerators`) serves its
/// users on its share of the job's file or device, at most `concurrent`
/// requests at once; `--scale` keeps that share of the users and of the
/// host-memory tier. Entries are written and read in 1 MiB operations
/// with direct I/O where the engine has it (the reference drops the page
/// cache before each read and fsyncs each write), for the run's time.
fn kvcache(r: &KvRun, sizing: &Sizing, global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let clients = sizing.workers.unwrap_or(1);
    let users = sizing.users.unwrap_or_else(|| ((r.users as f64 * sizing.scale).round() as u32).max(1));
    let bytes_per_token = KV_MODELS.iter().find(|(m, _)| *m == r.model).map_or(131_072, |m| m.1);
    let mut s = base(global)?;
    if objects(&s) {
        return Err(CliError::usage(format!(
            "--preset kvcache: runs on blocks (a file, a device, rbd, nbd), not on {}: give --filename or --directory",
            s.ioengine
        )));
    }
    s.name = format!("kvcache-{}", r.model);
    s.numjobs = clients;
    let given = |k: &str| global.iter().any(|(g, _)| g == k);
    if !given("iodepth") {
        s.iodepth = r.concurrent;
    }
    // Written before it is read: the file is made room for, not written first.
    set(&mut s, "rw", "randwrite")?;
    if !given("bs") {
        set(&mut s, "bs", "1m")?;
    }
    if storbench_engine::find(&s.ioengine).is_some_and(|f| f.capabilities().direct_io) && !global.iter().any(|(k, _)| k == "direct") {
        s.direct = true;
    }
    // size is each client's storage tier: on a target they share (a
    // device, an image, a given file) each its own span of it.
    // Whole 4 KiB blocks, so each client's span is aligned for direct I/O.
    let size = s.size.unwrap_or_else(|| kv_default_size(bytes_per_token)) / 4096 * 4096;
    if size == 0 {
        return Err(CliError::usage("--preset kvcache: --size is each client's storage tier; give at least 4k"));
    }
    s.size = Some(size);
    let shared = one_target(&s);
    if shared && clients > 1 {
        s.offset_increment = size;
    }
    if s.runtime.is_none() {
        s.runtime = Some(std::time::Duration::from_secs(r.seconds));
    }
    s.time_based = true;
    let k = storbench_workload::kvcache::KvSpec {
        model: r.model.to_string(),
        bytes_per_token,
        users: users * clients,
        gpu_bytes: 0,
        cpu_bytes: (r.cpu_bytes as f64 * sizing.scale) as u64,
        generation_ns: 0,
        multi_turn: true,
    };
    s.kind.set_kvcache(k).map_err(|e| CliError::usage(format!("--preset: {e}")))?;
    Ok(vec![s])
}

/// The most accelerators a dataset serves: one batch an epoch each. Each
/// accelerator reads whole units (a sample, or a Parquet row group), its
/// share of them rounded down, so a batch takes as many units as it
/// needs rows: 8 row groups of 6,144 rows hold 3 batches of 16,384, but
/// 3 accelerators get 2 groups each, 12,288 rows, no batch at all.
pub fn max_accelerators(t: &TrainSpec) -> u64 {
    let rows = t.parquet.as_ref().map_or(1, |p| p.row_group.max(1));
    t.units() / (t.batch.max(1) as u64).div_ceil(rows)
}

/// `MODEL` (default mode: every rank) or `MODEL:subset`; None: no such model.
pub fn checkpoint_plan(name: &str, sizing: &Sizing) -> Option<Result<CheckpointPlan, CliError>> {
    let (model, mode) = name.split_once(':').unwrap_or((name, "default"));
    let c = CHECKPOINT.iter().find(|c| c.model == model)?;
    let (gib, ranks, subset) = match (mode, c.subset_gib) {
        ("default", _) => (c.gib, c.ranks, false),
        ("subset", Some(gib)) => (gib, SUBSET_RANKS, true),
        ("subset", None) => {
            return Some(Err(CliError::usage(format!(
                "checkpoint:{model}:subset: {model} has no subset mode (its {} ranks are one host's already); run checkpoint:{model}",
                c.ranks
            ))))
        }
        _ => return None,
    };
    let ranks = sizing.workers.unwrap_or(ranks);
    let total = gib * (1u64 << 30) as f64 * sizing.scale;
    // Shards are whole MiB: every byte is written in 1 MiB writes.
    let shard = ((total / ranks as f64) as u64).div_ceil(1 << 20).max(1) << 20;
    Some(Ok(CheckpointPlan { ranks, shard, subset }))
}

/// Ten checkpoints written, each rank its shard with an fsync at its end,
/// then the ten read back, each a job of its own (its time the slowest
/// rank's), the page cache of what is read dropped first.
fn checkpoint(plan: &CheckpointPlan, name: &str, global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let stem = format!("checkpoint-{}", name.split(':').next().unwrap_or(name));
    let mut jobs = Vec::new();
    for phase in ["write", "read"] {
        for n in 1..=CHECKPOINTS {
            jobs.push(checkpoint_job(plan, &stem, phase, n, global)?);
        }
    }
    Ok(jobs)
}

fn checkpoint_job(plan: &CheckpointPlan, stem: &str, phase: &str, n: u32, global: &Pairs) -> Result<JobSpec, CliError> {
    let (ranks, shard) = (plan.ranks, plan.shard);
    let write = phase == "write";
    let mut s = base(global)?;
    s.name = format!("{stem}-{phase}-{n}");
    s.numjobs = ranks;
    // The rules' ranks are the checkpoint's in all: a fleet divides them.
    s.ranks_over_fleet = true;
    s.stonewall = true;
    set(&mut s, "rw", phase)?;
    if objects(&s) {
        let o = s.objects.get_or_insert_with(Default::default);
        o.count = ranks as u64;
        o.sizes = storbench_workload::ObjectSizes::Classes { split: storbench_workload::SizeSplit::fixed(shard) };
        o.prefix = Some(format!("storbench.{stem}-{n}."));
        o.mix = vec![(if write { storbench_workload::OpKind::Create } else { storbench_workload::OpKind::Read }, 1)];
        (o.exist, o.cleanup) = (!write, Some(!write));
        s.number_ios = Some(1);
        return Ok(s);
    }
    set(&mut s, "bs", "1m")?;
    s.size = Some(shard);
    s.file_stem = Some(format!("{stem}-{n}"));
    // One image, device or file for every rank (rbd, nbd, or a given
    // filename): each rank its own stripe of each checkpoint's own span.
    // Checkpoint 1 takes the last span, so the target the first job
    // creates (an image, a file) is large enough for all ten.
    let shared = one_target(&s);
    if shared {
        s.offset_increment = shard;
        s.offset = s.offset.saturating_add((CHECKPOINTS - n) as u64 * ranks as u64 * shard);
    }
    // The rules: fsync on every checkpoint written (files and devices at
    // the end; an image without files, rbd or nbd, a flush after its rank's
    // last write); what is read comes from storage, not from the page cache
    // the writes filled.
    let files = on_files(&s) == Some(true);
    match (write, files) {
        (true, true) => s.end_fsync = true,
        (true, false) => set(&mut s, "fsync", &(shard >> 20).to_string())?,
        (false, _) => s.invalidate = true,
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(scale: f64) -> Sizing {
        Sizing { scale, workers: None, epochs: None, users: None, batch: None }
    }

    #[test]
    fn training_keeps_sample_sizes_and_compute_and_scales_the_dataset() {
        let s = specs("train:resnet50", &sizing(0.01), &Vec::new()).unwrap();
        let t = s[0].kind.train().unwrap();
        assert_eq!((t.files, t.samples_per_file, t.record, t.batch), (102, 125, 114_660, 400), "1% of the samples: 10% of each");
        assert_eq!((t.compute_ns, t.au_floor, t.prefetch, s[0].iodepth), (224_000_000, 0.9, 16, 8));
        assert_eq!(s[0].filenames.len(), 102);
        assert_eq!(s[0].size, Some(125 * 114_660), "a file's size");
        let c = specs("train:cosmoflow", &sizing(0.001), &Vec::new()).unwrap();
        assert_eq!(c[0].kind.train().unwrap().au_floor, 0.7);
    }

    /// The reference figures, copied from mlcommons/storage's
    /// configs/dlio/workload/<model>_<accelerator>.yaml at the commit named
    /// (the same sources as README's table): files, samples per file,
    /// record_length_bytes, batch_size, read_threads, computation_time,
    /// epochs, metric.au, format.
    /// (preset, files, samples/file, bytes/sample, batch, threads,
    /// compute s, epochs, AU floor, format, commit)
    type Reference = (&'static str, u64, u64, u64, u32, u32, f64, u32, f64, &'static str, &'static str);
    const REFERENCE: &[Reference] = &[
        ("unet3d:h100", 168, 1, 146_600_628, 7, 4, 0.323, 5, 0.90, "npz", "7e73663"),
        ("unet3d:a100", 168, 1, 146_600_628, 7, 4, 0.636, 5, 0.90, "npz", "d70e0b6"),
        ("unet3d:b200", 7200, 1, 146_600_628, 7, 4, 0.162, 5, 0.90, "npz", "0d75b41"),
        ("resnet50:h100", 1024, 1251, 114_660, 400, 8, 0.224, 5, 0.90, "tfrecord", "caa90c9"),
        ("resnet50:a100", 1024, 1251, 114_660, 400, 8, 0.435, 5, 0.90, "tfrecord", "caa90c9"),
        ("cosmoflow:h100", 524_288, 1, 2_828_486, 1, 4, 0.0035, 5, 0.70, "tfrecord", "caa90c9"),
        ("cosmoflow:a100", 524_288, 1, 2_828_486, 1, 4, 0.00551, 5, 0.70, "tfrecord", "caa90c9"),
        ("retinanet:b200", 1_170_301, 1, 322_957, 24, 8, 0.04755, 8, 0.85, "jpeg", "11460d0"),
        ("retinanet:mi355", 1_170_301, 1, 322_957, 32, 8, 0.0634, 8, 0.85, "jpeg", "76f4545"),
        ("flux:b200", 4296, 288, 2_164_832, 48, 8, 1.35, 1, 0.90, "parquet", "c25079c"),
        ("flux:mi355", 4296, 288, 2_164_832, 72, 8, 2.025, 1, 0.90, "parquet", "0b42eb5"),
        ("dlrm:b200", 1024, 4_718_592, 761, 16384, 4, 0.000375, 1, 0.70, "parquet", "0b42eb5"),
        ("dlrm:mi355", 1024, 4_718_592, 761, 18432, 4, 0.0005625, 1, 0.70, "parquet", "52714a9"),
    ];

    #[test]
    fn every_training_preset_is_its_reference_config() {
        assert_eq!(TRAIN.len(), REFERENCE.len(), "a preset without its reference, or the reverse");
        for &(name, files, spf, record, batch, threads, compute, epochs, au, format, _source) in REFERENCE {
            let m = find_train(name).unwrap_or_else(|| panic!("no preset train:{name}"));
            assert_eq!(
                (m.files, m.samples_per_file, m.record, m.batch, m.reader_threads, m.compute, m.epochs, m.au_floor, m.format),
                (files, spf, record, batch, threads, compute, epochs, au, format),
                "{name}"
            );
            // The job at full scale carries them unchanged.
            let s = specs(&format!("train:{name}"), &sizing(1.0), &Vec::new()).unwrap();
            let t = s[0].kind.train().unwrap();
            assert_eq!(
                (t.files, t.samples_per_file, t.record, t.batch, t.epochs, t.au_floor),
                (files, spf, record, batch, epochs, au),
                "{name}"
            );
            assert_eq!((t.compute_ns, s[0].iodepth, t.prefetch), ((compute * 1e9) as u64, threads, threads * 2), "{name}");
        }
    }

    #[test]
    fn dlrm_reads_its_selected_columns_of_whole_row_groups() {
        // dlrm_b200.yaml (0b42eb5): 200 columns, 761 bytes a row (its
        // record_length_bytes), 40 read; row groups of 6144 rows.
        let s = specs("train:dlrm", &sizing(1.0), &Vec::new()).unwrap();
        let p = s[0].kind.train().unwrap().parquet.clone().unwrap();
        assert_eq!((p.row_group, p.columns.len()), (6144, 200));
        assert_eq!(p.group_bytes(), 761 * 6144);
        let reads = p.reads();
        assert_eq!(reads.len(), 40);
        assert_eq!(reads.iter().map(|r| r.1).sum::<u64>(), 160 * 6144, "160 of 761 bytes a row read");
        // feature_011 (float32) is the first read, after columns 0-10
        // (h h d d f h f b h b f: 38 bytes a row).
        assert_eq!(reads[0], ((2 + 2 + 8 + 8 + 4 + 2 + 4 + 1 + 2 + 1 + 4) * 6144, 4 * 6144));
        // Scaled: whole row groups, at least one. 1e-5: a share of 0.00316
        // of 1024 files (3) and of 768 row groups a file (2.4: 2).
        let t = specs("train:dlrm:mi355", &sizing(0.00001), &Vec::new()).unwrap()[0].kind.train().cloned().unwrap();
        assert_eq!((t.files, t.samples_per_file), (3, 2 * 6144));
        assert!(specs("train:flux", &sizing(1.0), &Vec::new()).unwrap()[0].kind.train().unwrap().parquet.is_none());
    }

    #[test]
    fn a_bare_model_name_is_its_first_accelerator() {
        for (bare, qualified) in [
            ("unet3d", "unet3d:h100"),
            ("resnet50", "resnet50:h100"),
            ("cosmoflow", "cosmoflow:h100"),
            ("retinanet", "retinanet:b200"),
            ("flux", "flux:b200"),
            ("dlrm", "dlrm:b200"),
        ] {
            assert_eq!(find_train(bare), find_train(qualified), "{bare}");
        }
        assert!(find_train("unet3d:mi355").is_none(), "no config: no preset");
        let e = specs("train:unet3d:mi355", &sizing(0.1), &Vec::new()).unwrap_err().to_string();
        assert!(e.contains("train:unet3d:b200") && e.contains("train:retinanet"), "{e}");
    }

    #[test]
    fn checkpoints_write_ten_then_read_the_same_ten() {
        let s = specs("checkpoint:llama3-8b", &sizing(0.001), &Vec::new()).unwrap();
        assert_eq!(s.len(), 20, "10 written, 10 read");
        // 105 GiB x 0.001 / 8 ranks = 13.44 MiB: 14 in whole MiB.
        assert!(s.iter().all(|j| j.numjobs == 8 && j.size == Some(14 << 20) && j.stonewall));
        for n in 0..10 {
            let (w, r) = (&s[n], &s[n + 10]);
            assert_eq!(
                (w.name.as_str(), r.name.as_str()),
                (format!("checkpoint-llama3-8b-write-{}", n + 1).as_str(), format!("checkpoint-llama3-8b-read-{}", n + 1).as_str())
            );
            assert_eq!(w.file_stem, r.file_stem, "checkpoint {n} is read where it was written");
            assert!(w.end_fsync, "fsync on every checkpoint written");
            assert!(!r.end_fsync && r.invalidate, "the page cache dropped before reading");
            assert_eq!(w.offset_increment, 0, "files: a file per rank");
        }
        let rbd = specs("checkpoint:llama3-8b", &sizing(0.001), &vec![("ioengine".into(), "rbd".into())]).unwrap();
        assert_eq!(rbd[0].offset_increment, 14 << 20, "one image: a stripe per rank");
        assert!(
            !rbd[0].end_fsync && rbd[0].sync.as_ref().map(|s| s.every) == Some(14),
            "an image: flushed after a rank's 14th and last 1 MiB write"
        );
        // Checkpoint 3 (written by job 2, read by job 12) after seven spans
        // of 8 ranks x 14 MiB: checkpoint 1 is the last, its job first.
        assert_eq!((rbd[2].offset, rbd[12].offset), (7 * 8 * (14 << 20), 7 * 8 * (14 << 20)));
        let dev = specs("checkpoint:llama3-8b", &sizing(0.001), &vec![("filename".into(), "/dev/x".into())]).unwrap();
        assert_eq!(
            (dev[0].offset_increment, dev[0].offset, dev[19].offset),
            (14 << 20, 9 * 8 * (14 << 20), 0),
            "one device or file: its own span each"
        );
    }

    #[test]
    fn checkpoint_sizes_and_ranks_are_the_rules_table() {
        let plan = |name: &str| checkpoint_plan(name, &sizing(1.0)).unwrap().unwrap();
        let mib = |gib: f64, ranks: u64| ((gib * 1024.0 * 1024.0 * 1024.0) as u64 / ranks).div_ceil(1 << 20) << 20;
        // Table 2: 105 GiB on 8, 912 on 64, 5.29 TiB on 512, 18 TiB on 1024.
        assert_eq!(plan("llama3-8b"), CheckpointPlan { ranks: 8, shard: 13_440 << 20, subset: false }, "105 x 1024 / 8 MiB");
        assert_eq!(plan("llama3-70b"), CheckpointPlan { ranks: 64, shard: 14_592 << 20, subset: false }, "912 x 1024 / 64 MiB");
        assert_eq!(plan("llama3-405b").ranks, 512);
        assert_eq!(plan("llama3-405b").shard, mib(5.29 * 1024.0, 512), "5416.96 GiB / 512 = 10.58 GiB");
        assert_eq!(plan("llama3-1t"), CheckpointPlan { ranks: 1024, shard: 18 << 30, subset: false }, "18 TiB / 1024 = 18 GiB");
        // Subset: one host of 8 writes what the first 8 ranks hold.
        assert_eq!(plan("llama3-70b:subset"), CheckpointPlan { ranks: 8, shard: 14_592 << 20, subset: true }, "114 GiB / 8");
        assert_eq!(plan("llama3-405b:subset").shard, 12_032 << 20, "94 GiB / 8 = 11.75 GiB");
        assert_eq!(plan("llama3-1t:subset").shard, 20_608 << 20, "161 GiB / 8 = 20.125 GiB");
        let e = checkpoint_plan("llama3-8b:subset", &sizing(1.0)).unwrap().unwrap_err().to_string();
        assert!(e.contains("no subset mode") && e.contains("run checkpoint:llama3-8b"), "{e}");
        assert!(checkpoint_plan("llama3-8b:sideways", &sizing(1.0)).is_none());
        assert_eq!(
            checkpoint_plan("llama3-70b", &Sizing { workers: Some(128), ..sizing(1.0) }).unwrap().unwrap().ranks,
            128,
            "--accelerators: open division's ranks"
        );
    }

    #[test]
    fn bad_presets_and_scales_are_named() {
        let e = specs("train:gpt5", &sizing(0.1), &Vec::new()).unwrap_err().to_string();
        assert!(e.contains("train:unet3d") && e.contains("checkpoint:llama3-8b"), "{e}");
        assert!(specs("train:unet3d", &sizing(2.0), &Vec::new()).is_err());
        let e = specs("train:resnet50", &sizing(0.000001), &Vec::new()).unwrap_err().to_string();
        assert!(e.contains("raise --scale"), "{e}");
    }

    #[test]
    fn every_accelerator_a_dlrm_run_allows_gets_a_batch_of_whole_row_groups() {
        // 5 files of 4 row groups (6,144 rows): 122,880 rows, 7.5 batches of
        // 16,384; but 7 accelerators get 20 / 7 = 2 groups each, 12,288 rows:
        // no step. A batch takes 3 groups, so 20 groups serve 6.
        let at = |n| specs("train:dlrm", &Sizing { workers: Some(n), ..sizing(0.000025) }, &Vec::new());
        let t = at(6).unwrap()[0].kind.train().cloned().unwrap();
        assert_eq!((t.files, t.samples_per_file, max_accelerators(&t)), (5, 4 * 6144, 6));
        let e = at(7).unwrap_err().to_string();
        assert!(e.contains("20 row groups of 6144") && e.contains("at most 6 accelerators"), "{e}");
        // Samples read one by one: the dataset's samples over the batch.
        let r = specs("train:resnet50", &sizing(0.0004), &Vec::new()).unwrap()[0].kind.train().cloned().unwrap();
        assert_eq!(max_accelerators(&r), r.samples() / 400);
    }
}
