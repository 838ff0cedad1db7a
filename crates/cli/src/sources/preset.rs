//! AI workload presets (`run --preset`): training as DLIO / MLPerf Storage
//! define it (unet3d, resnet50, cosmoflow, retinanet, flux, dlrm on each
//! accelerator their configs name: sample sizes, samples per file, batch,
//! reader threads, compute time per step, epochs, the AU floor)
//! and checkpoints of llama3 models (every rank writes its shard, fsyncs,
//! then reads it back; the slowest rank sets the time).
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
fn find_train(name: &str) -> Option<&'static Model> {
    match name.split_once(':') {
        Some((model, acc)) => TRAIN.iter().find(|t| t.model == model && t.accelerator == acc),
        None => TRAIN.iter().find(|t| t.model == name),
    }
}

/// (name, parameters, ranks): the checkpoint is 14 bytes a parameter
/// (bf16 weights, fp32 master weights, two fp32 Adam moments), about what
/// MLPerf Storage writes (105 GB for llama3-8b).
const CHECKPOINT: &[(&str, f64, u32)] =
    &[("llama3-8b", 8e9, 8), ("llama3-70b", 70e9, 64), ("llama3-405b", 405e9, 512), ("llama3-1t", 1e12, 1024)];
const BYTES_PER_PARAM: f64 = 14.0;

/// How a preset is sized and spread.
#[derive(Clone, Debug)]
pub struct Sizing {
    pub scale: f64,
    /// Accelerators (training) or ranks (checkpoint); None: the preset's.
    pub workers: Option<u32>,
    pub epochs: Option<u32>,
}

/// Every preset name, for help and errors.
pub fn names() -> Vec<String> {
    let mut models: Vec<&str> = TRAIN.iter().map(|t| t.model).collect();
    models.dedup();
    let bare = models.into_iter().map(|m| format!("train:{m}"));
    let qualified = TRAIN.iter().map(|t| format!("train:{}:{}", t.model, t.accelerator));
    bare.chain(qualified).chain(CHECKPOINT.iter().map(|c| format!("checkpoint:{}", c.0))).collect()
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
        Some(("checkpoint", m)) => CHECKPOINT.iter().find(|c| c.0 == m).map(|c| checkpoint(c, sizing, global)).ok_or_else(unknown)?,
        _ => Err(unknown()),
    }
}

/// The command line's options on a default job; readers and ranks keep
/// their queue depth, so the engine is io_uring unless one is given.
fn base(global: &Pairs) -> Result<JobSpec, CliError> {
    let mut s = JobSpec::default();
    if storbench_engine::uring::available() {
        s.ioengine = "io_uring".into();
    }
    for (k, v) in global {
        storbench_workload::apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("--preset: {e}")))?;
    }
    Ok(s)
}

fn set(s: &mut JobSpec, k: &str, v: &str) -> Result<(), CliError> {
    storbench_workload::apply_option(s, k, v).map_err(|e| CliError::usage(format!("--preset: {e}")))
}

/// The engine stores objects (s3, swift, rados) rather than blocks.
fn objects(s: &JobSpec) -> bool {
    storbench_engine::find(&s.ioengine).is_some_and(|f| !f.capabilities().blocks)
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
    };
    if accelerators as u64 > max_accelerators(&t) {
        return Err(CliError::usage(format!(
            "train:{model}:{} at --scale {} has {} samples, fewer than one batch ({batch}) per accelerator ({accelerators}); raise --scale",
            m.accelerator,
            sizing.scale,
            t.samples()
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
        false => {
            s.filenames = (0..t.files).map(|i| format!("{model}.{i}.{}", m.format)).collect();
            s.nrfiles = t.files as u32;
            // size is each file's, as in fio with several files.
            s.size = Some(t.file_bytes());
        }
    }
    s.train = Some(t);
    Ok(vec![s])
}

/// The most accelerators a dataset serves: one batch an epoch each.
pub fn max_accelerators(t: &TrainSpec) -> u64 {
    t.samples() / t.batch.max(1) as u64
}

fn checkpoint(c: &(&str, f64, u32), sizing: &Sizing, global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let (model, params, ranks) = *c;
    let ranks = sizing.workers.unwrap_or(ranks);
    let total = params * BYTES_PER_PARAM * sizing.scale;
    let shard = ((total / ranks as f64) as u64).div_ceil(1 << 20).max(1) << 20;
    let stem = format!("checkpoint-{model}");
    let mut jobs = Vec::new();
    for (phase, rw) in [("write", "write"), ("read", "read")] {
        let mut s = base(global)?;
        s.name = format!("{stem}-{phase}");
        s.numjobs = ranks;
        s.stonewall = true;
        set(&mut s, "rw", rw)?;
        if objects(&s) {
            let o = s.objects.get_or_insert_with(Default::default);
            o.count = ranks as u64;
            o.sizes = storbench_workload::ObjectSizes::Classes { split: storbench_workload::SizeSplit::fixed(shard) };
            o.prefix = Some(format!("storbench.{stem}."));
            o.mix = vec![(if phase == "write" { storbench_workload::OpKind::Create } else { storbench_workload::OpKind::Read }, 1)];
            (o.exist, o.cleanup) = (phase == "read", Some(phase == "read"));
            s.number_ios = Some(1);
        } else {
            // Shards are whole MiB: every byte is written in 1 MiB writes.
            set(&mut s, "bs", "1m")?;
            s.size = Some(shard);
            s.file_stem = Some(stem.clone());
            // One image, device or file for every rank (rbd, nbd, or a given
            // filename): each rank its own stripe, or they would all write one.
            let shared = !s.filenames.is_empty() || storbench_engine::find(&s.ioengine).is_some_and(|f| !f.capabilities().needs_files);
            if shared {
                s.offset_increment = shard;
            }
            s.end_fsync = phase == "write";
        }
        jobs.push(s);
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(scale: f64) -> Sizing {
        Sizing { scale, workers: None, epochs: None }
    }

    #[test]
    fn training_keeps_sample_sizes_and_compute_and_scales_the_dataset() {
        let s = specs("train:resnet50", &sizing(0.01), &Vec::new()).unwrap();
        let t = s[0].train.as_ref().unwrap();
        assert_eq!((t.files, t.samples_per_file, t.record, t.batch), (102, 125, 114_660, 400), "1% of the samples: 10% of each");
        assert_eq!((t.compute_ns, t.au_floor, t.prefetch, s[0].iodepth), (224_000_000, 0.9, 16, 8));
        assert_eq!(s[0].filenames.len(), 102);
        assert_eq!(s[0].size, Some(125 * 114_660), "a file's size");
        let c = specs("train:cosmoflow", &sizing(0.001), &Vec::new()).unwrap();
        assert_eq!(c[0].train.as_ref().unwrap().au_floor, 0.7);
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
            let t = s[0].train.as_ref().unwrap();
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
        let p = s[0].train.as_ref().unwrap().parquet.clone().unwrap();
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
        let t = specs("train:dlrm:mi355", &sizing(0.00001), &Vec::new()).unwrap()[0].train.clone().unwrap();
        assert_eq!((t.files, t.samples_per_file), (3, 2 * 6144));
        assert!(specs("train:flux", &sizing(1.0), &Vec::new()).unwrap()[0].train.as_ref().unwrap().parquet.is_none());
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
    fn checkpoints_write_then_read_the_same_shards() {
        let s = specs("checkpoint:llama3-8b", &sizing(0.001), &Vec::new()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].numjobs, 8);
        assert_eq!(s[0].size, Some(14 << 20), "8e9 x 14 B x 0.001 / 8 ranks, in whole MiB");
        assert!(s[0].end_fsync && !s[1].end_fsync);
        assert_eq!(s[0].file_stem, s[1].file_stem);
        assert!(s[1].stonewall);
        assert_eq!(s[0].offset_increment, 0, "files: a file per rank");
        let rbd = specs("checkpoint:llama3-8b", &sizing(0.001), &vec![("ioengine".into(), "rbd".into())]).unwrap();
        assert_eq!(rbd[0].offset_increment, 14 << 20, "one image: a stripe per rank");
        let dev = specs("checkpoint:llama3-8b", &sizing(0.001), &vec![("filename".into(), "/dev/x".into())]).unwrap();
        assert_eq!((dev[0].offset_increment, dev[1].offset_increment), (14 << 20, 14 << 20), "one device or file: a stripe per rank");
    }

    #[test]
    fn bad_presets_and_scales_are_named() {
        let e = specs("train:gpt5", &sizing(0.1), &Vec::new()).unwrap_err().to_string();
        assert!(e.contains("train:unet3d") && e.contains("checkpoint:llama3-8b"), "{e}");
        assert!(specs("train:unet3d", &sizing(2.0), &Vec::new()).is_err());
        let e = specs("train:resnet50", &sizing(0.000001), &Vec::new()).unwrap_err().to_string();
        assert!(e.contains("raise --scale"), "{e}");
    }
}
