//! AI training as the storage sees it (the DLIO / MLPerf Storage model):
//! each worker is an accelerator that trains for some epochs over a dataset
//! of files (or objects) holding samples of a fixed size. Every epoch its
//! share of the samples comes in a fresh shuffled order; reader threads (the
//! worker's queue depth) read samples ahead into batches, at most
//! `prefetch` batches ahead of the accelerator; a batch whose samples are all
//! read is computed on for `compute` (emulated: time passes, nothing runs),
//! after the one before it.
//!
//! A Parquet-like dataset (`TrainSpec::parquet`, dlrm's) is read by row
//! group rather than by sample: each column of a row group lies in one run
//! of bytes, and a reader reads only the selected columns, one ranged read
//! each; the row group's rows count as read when all of them are.
//!
//! The accelerator's utilization (AU) is its compute time over the run's
//! time: data that arrives late leaves it waiting, and AU falls. The
//! timeline is arithmetic on completion times, so a training run costs the
//! client only its reads.

use crate::dist::RandomMap;
use crate::gen::{NextIo, Region};
use crate::rng::Rng;
use crate::spec::OpKind;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A training workload (`--preset train:MODEL`, or the `train_*` options).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainSpec {
    pub model: String,
    /// Files (or objects) in the dataset, shared by every accelerator.
    pub files: u64,
    pub samples_per_file: u64,
    /// Bytes per sample.
    pub record: u64,
    /// Samples per step.
    pub batch: u32,
    /// Compute per step, ns (the accelerator's time for one batch).
    pub compute_ns: u64,
    pub epochs: u32,
    /// AU a run must reach to pass (0.9 for unet3d and resnet50, 0.7 for cosmoflow).
    pub au_floor: f64,
    /// Batches read ahead of the accelerator (PyTorch's loader: reader
    /// threads x its prefetch factor of 2).
    pub prefetch: u32,
    /// Files laid out as Parquet row groups, only some columns read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parquet: Option<Parquet>,
    /// On an engine's own target (an RBD image, an NBD export) an earlier
    /// run wrote the dataset and it is read as it is (`--rules`: the first
    /// run writes it, the others read it), not written again first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dataset_written: bool,
}

/// A Parquet-like file: row groups of `row_group` rows, in each the rows'
/// values column by column (a column's chunk is rows x its bytes a row).
/// Pages, encodings and footers are left out: what is emulated is where the
/// selected bytes lie and that each is a ranged read of its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parquet {
    pub row_group: u64,
    /// Each column's bytes a row, and whether the reader reads it.
    pub columns: Vec<(u32, bool)>,
}

impl Parquet {
    /// (offset in the row group, bytes) of each column read.
    pub fn reads(&self) -> Vec<(u64, u64)> {
        let mut at = 0;
        let mut out = Vec::new();
        for &(bytes, read) in &self.columns {
            let chunk = bytes as u64 * self.row_group;
            if read {
                out.push((at, chunk));
            }
            at += chunk;
        }
        out
    }

    /// Bytes a row group, every column.
    pub fn group_bytes(&self) -> u64 {
        self.columns.iter().map(|c| c.0 as u64).sum::<u64>() * self.row_group
    }
}

impl TrainSpec {
    pub fn samples(&self) -> u64 {
        self.files * self.samples_per_file
    }
    pub fn file_bytes(&self) -> u64 {
        self.samples_per_file * self.record
    }

    /// What is read as one: a sample, or a row group of a Parquet file.
    pub fn units(&self) -> u64 {
        match &self.parquet {
            Some(p) => self.files * (self.samples_per_file / p.row_group.max(1)),
            None => self.samples(),
        }
    }

    /// Samples a unit holds.
    fn unit_samples(&self) -> u64 {
        self.parquet.as_ref().map_or(1, |p| p.row_group.max(1))
    }

    /// Reads a unit takes (a Parquet row group: one a column read).
    /// Counted, not built: the measured loop asks on every read.
    fn unit_reads(&self) -> u64 {
        self.parquet.as_ref().map_or(1, |p| p.columns.iter().filter(|c| c.1).count().max(1) as u64)
    }
}

/// What one accelerator did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainTally {
    pub samples: u64,
    pub steps: u64,
    pub compute_ns: u64,
    /// Time the accelerator waited for data (between steps and before the first).
    pub stall_ns: u64,
    /// When its last step ended, ns since the job started.
    pub end_ns: u64,
}

impl TrainTally {
    pub fn merge(&mut self, o: &TrainTally) {
        self.samples += o.samples;
        self.steps += o.steps;
        self.compute_ns += o.compute_ns;
        self.stall_ns += o.stall_ns;
        self.end_ns = self.end_ns.max(o.end_ns);
    }

    /// Its samples over its time (to its last step's end).
    pub fn samples_per_sec(&self) -> f64 {
        self.samples as f64 / (self.end_ns as f64 / 1e9).max(1e-9)
    }

    /// Its accelerators' utilization: `accelerators` of them over its time.
    pub fn au(&self, accelerators: u32) -> f64 {
        utilization(self.compute_ns, accelerators, self.end_ns)
    }
}

/// Accelerator utilization: compute over accelerators x run time.
pub fn utilization(compute_ns: u64, accelerators: u32, runtime_ns: u64) -> f64 {
    match accelerators as u64 * runtime_ns {
        0 => 0.0,
        d => (compute_ns as f64 / d as f64).min(1.0),
    }
}

/// An epoch's order of the dataset, the same on every accelerator.
fn epoch_order(spec: &TrainSpec, epoch: u32) -> RandomMap {
    RandomMap::new(spec.units(), &mut Rng::new(0x7a11 ^ epoch as u64))
}

/// One accelerator's reads and its emulated compute.
#[derive(Debug)]
pub struct TrainGen {
    spec: TrainSpec,
    region: Region,
    rng: Rng,
    /// Its rank among the accelerators reading the dataset (over every
    /// agent of a fleet), and theirs in all.
    worker: u64,
    workers: u64,
    /// Its place among the workers writing its copy of the dataset on an
    /// object store (its agent's: each agent's objects are its own).
    writer: (u64, u64),
    /// This epoch's order of the whole dataset (a keyed permutation, the
    /// same on every accelerator; nothing materialised).
    order: RandomMap,
    /// Units (samples, or row groups) of its share taken this epoch.
    pos: u64,
    epoch: u32,
    /// Units per epoch this accelerator reads (enough for whole batches).
    per_epoch: u64,
    /// Steps an epoch.
    steps_per_epoch: u64,
    /// Reads issued and completed (a unit takes `unit_reads`).
    issued: u64,
    completed: u64,
    /// The unit being read column by column, and the next column.
    unit: u64,
    column: usize,
    columns: Vec<(u64, u64)>,
    /// Compute starts of batches that are read but not yet begun.
    starts: VecDeque<u64>,
    started: u64,
    pub tally: TrainTally,
}

impl TrainGen {
    pub fn new(spec: &TrainSpec, region: Region, worker: u32, workers: u32, seed: u64) -> TrainGen {
        let workers = workers.max(1) as u64;
        let (rows, batch) = (spec.unit_samples(), spec.batch.max(1) as u64);
        let steps_per_epoch = spec.units() / workers * rows / batch;
        let per_epoch = (steps_per_epoch * batch).div_ceil(rows);
        TrainGen {
            spec: spec.clone(),
            region,
            rng: Rng::new(seed),
            worker: worker as u64,
            workers,
            writer: (worker as u64, workers),
            order: epoch_order(spec, 0),
            pos: 0,
            epoch: 0,
            per_epoch,
            steps_per_epoch,
            issued: 0,
            completed: 0,
            unit: 0,
            column: 0,
            columns: spec.parquet.as_ref().map(Parquet::reads).unwrap_or_default(),
            starts: VecDeque::new(),
            started: 0,
            tally: TrainTally::default(),
        }
    }

    /// Write (and remove) its copy of the dataset as worker `worker` of
    /// `workers` (its agent's), reading as the rank it was made with.
    pub fn writing_as(mut self, worker: u32, workers: u32) -> TrainGen {
        self.writer = (worker as u64, workers.max(1) as u64);
        self
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    fn total(&self) -> u64 {
        self.per_epoch * self.spec.epochs as u64 * self.spec.unit_reads()
    }

    /// Steps whose samples are all read once `units` units are.
    fn steps_due(&self, units: u64) -> u64 {
        let (epoch, within) = (units / self.per_epoch.max(1), units % self.per_epoch.max(1));
        let steps = within * self.spec.unit_samples() / self.spec.batch.max(1) as u64;
        epoch * self.steps_per_epoch + steps.min(self.steps_per_epoch)
    }

    /// Batches whose compute has begun by `now`.
    fn begun(&self, now: u64) -> u64 {
        self.started + self.starts.iter().take_while(|s| **s <= now).count() as u64
    }

    /// `None`: a read may be issued now; `Some(t)`: not before `t`
    /// (`u64::MAX`: not before a read completes, or never: the run is read).
    pub fn wait(&self, now: u64) -> Option<u64> {
        if self.issued >= self.total() {
            return Some(u64::MAX);
        }
        let ahead = (self.begun(now) + self.spec.prefetch as u64) * self.spec.batch as u64;
        let k = self.spec.unit_reads();
        // A unit begun is read whole.
        match !self.issued.is_multiple_of(k) || self.issued / k * self.spec.unit_samples() < ahead {
            true => None,
            false => Some(self.starts.iter().copied().find(|s| *s > now).unwrap_or(u64::MAX)),
        }
    }

    /// A read finished at `now`: the batch it completes, if any, is
    /// scheduled for compute after the one before it.
    pub fn completed(&mut self, now: u64) {
        while self.starts.front().is_some_and(|s| *s <= now) {
            self.starts.pop_front();
            self.started += 1;
        }
        self.completed += 1;
        let due = self.steps_due(self.completed / self.spec.unit_reads());
        while self.tally.steps < due {
            self.step(now);
        }
    }

    /// A batch is read at `now`: its compute follows the one before it.
    fn step(&mut self, now: u64) {
        let batch = self.spec.batch as u64;
        let free = if self.tally.steps == 0 { 0 } else { self.tally.end_ns };
        let start = now.max(free);
        self.tally.stall_ns += start - free;
        self.tally.end_ns = start + self.spec.compute_ns;
        self.tally.compute_ns += self.spec.compute_ns;
        self.tally.steps += 1;
        self.tally.samples += batch;
        self.starts.push_back(start);
    }

    /// The dataset's objects this accelerator writes before a run on an
    /// object store (and removes after it): every `workers`-th of its
    /// agent's workers, so each is written once in each agent's copy.
    pub fn dataset_share(&self) -> Result<impl Iterator<Item = NextIo>, String> {
        let bytes = self.spec.file_bytes();
        let len = u32::try_from(bytes).map_err(|_| format!("training files of {bytes} bytes: objects above 4 GiB are not supported"))?;
        let whole = move |k: u64| NextIo { op: OpKind::Read, file: k as u32, offset: 0, len, whole: true, class: 0 };
        let (writer, writers) = self.writer;
        Ok((writer..self.spec.files).step_by(writers as usize).map(whole))
    }

    /// Every read issued and done: the rest is compute, until `tally.end_ns`.
    pub fn finished(&self) -> bool {
        self.completed >= self.total()
    }
}

impl Iterator for TrainGen {
    type Item = NextIo;

    fn next(&mut self) -> Option<NextIo> {
        if self.issued >= self.total() {
            return None;
        }
        if self.spec.parquet.is_some() {
            return Some(self.next_column());
        }
        if self.pos >= self.per_epoch {
            self.epoch += 1;
            self.order = epoch_order(&self.spec, self.epoch);
            self.pos = 0;
        }
        // DLIO's sharding: the epoch's shuffled dataset dealt out in turn.
        let sample = self.order.at(self.worker + self.pos * self.workers);
        self.pos += 1;
        self.issued += 1;
        let spf = self.spec.samples_per_file.max(1);
        let (file, within) = (sample / spf, sample % spf);
        let whole = spf == 1;
        let (file, offset) = self.place(file, within * self.spec.record);
        Some(NextIo { op: OpKind::Read, file, offset, len: self.spec.record as u32, whole, class: 0 })
    }
}

impl TrainGen {
    /// The next selected column of the row group being read (a new row
    /// group, in the epoch's order, after the last column of one).
    fn next_column(&mut self) -> NextIo {
        if self.column == 0 {
            if self.pos >= self.per_epoch {
                self.epoch += 1;
                self.order = epoch_order(&self.spec, self.epoch);
                self.pos = 0;
            }
            self.unit = self.order.at(self.worker + self.pos * self.workers);
            self.pos += 1;
        }
        let p = self.spec.parquet.as_ref().expect("a Parquet layout");
        let groups = (self.spec.samples_per_file / p.row_group.max(1)).max(1);
        let (file, group) = (self.unit / groups, self.unit % groups);
        let (at, len) = self.columns[self.column];
        self.column = (self.column + 1) % self.columns.len();
        self.issued += 1;
        let within = group * p.row_group * self.spec.record + at;
        let (file, offset) = self.place(file, within);
        NextIo { op: OpKind::Read, file, offset, len: len as u32, whole: false, class: 0 }
    }

    /// Where byte `within` of dataset file `file` is: objects are keyed by
    /// the file; a file target holds one dataset file each; a target with
    /// fewer (one RBD image, NBD export or device) holds the files one
    /// after another, each in its own `file_bytes`.
    fn place(&self, file: u64, within: u64) -> (u32, u64) {
        match self.region.files as u64 {
            0 => (file as u32, within),
            n => ((file % n) as u32, self.region.start + (file / n) * self.spec.file_bytes() + within),
        }
    }

    /// Its share of writing the dataset on an engine's own target (see
    /// [`TrainGen::place`]) before the run, in writes of at most `chunk`
    /// bytes (its writer's share of the files).
    pub fn dataset_writes(&self, chunk: u64) -> Vec<NextIo> {
        let (bytes, chunk) = (self.spec.file_bytes(), chunk.clamp(1, u32::MAX as u64));
        let (writer, writers) = self.writer;
        let mut out = Vec::new();
        for k in (writer..self.spec.files).step_by(writers as usize) {
            for at in (0..bytes).step_by(chunk as usize) {
                let (file, offset) = self.place(k, at);
                let len = chunk.min(bytes - at) as u32;
                out.push(NextIo { op: OpKind::Write, file, offset, len, whole: false, class: 0 });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(compute_ms: u64) -> TrainSpec {
        TrainSpec {
            model: "t".into(),
            files: 16,
            samples_per_file: 2,
            record: 4096,
            batch: 4,
            compute_ns: compute_ms * 1_000_000,
            epochs: 2,
            au_floor: 0.9,
            prefetch: 2,
            parquet: None,
            dataset_written: false,
        }
    }

    fn region() -> Region {
        Region { files: 16, start: 0, len: 8192, end: 0 }
    }

    #[test]
    fn a_dataset_on_one_image_is_its_files_one_after_another_written_first() {
        // 16 files of 2 samples of 4 KiB on one image from 1 MiB: file k at
        // 1 MiB + k x 8 KiB; every read within its file's place.
        let packed = Region { files: 1, start: 1 << 20, len: 16 * 8192, end: 0 };
        for io in TrainGen::new(&spec(0), packed, 0, 1, 1).take(64) {
            assert_eq!(io.file, 0);
            assert!(io.offset >= 1 << 20 && io.offset + io.len as u64 <= (1 << 20) + 16 * 8192, "{io:?}");
        }
        let mut reads: Vec<u64> = TrainGen::new(&spec(0), packed, 0, 1, 1).take(32).map(|io| io.offset).collect();
        reads.sort();
        let places: Vec<u64> = (0..32).map(|k| (1 << 20) + k * 4096).collect();
        assert_eq!(reads, places, "an epoch reads every sample of the 16 files once");
        // Two writers of 3 KiB chunks: a file is 3 + 3 + 2 KiB; writer 0
        // has the even files, writer 1 the odd; together every byte once.
        let w0 = TrainGen::new(&spec(0), packed, 0, 2, 1).writing_as(0, 2).dataset_writes(3072);
        let w1 = TrainGen::new(&spec(0), packed, 1, 2, 1).writing_as(1, 2).dataset_writes(3072);
        assert_eq!((w0.len(), w1.len()), (24, 24));
        assert_eq!(
            w0[..3].iter().map(|w| (w.op, w.offset, w.len)).collect::<Vec<_>>(),
            vec![(OpKind::Write, 1 << 20, 3072), (OpKind::Write, (1 << 20) + 3072, 3072), (OpKind::Write, (1 << 20) + 6144, 2048)]
        );
        assert_eq!(w1[0].offset, (1 << 20) + 8192, "file 1");
        let mut all: Vec<(u64, u32)> = w0.iter().chain(&w1).map(|w| (w.offset, w.len)).collect();
        all.sort();
        let mut next = 1 << 20;
        for (at, len) in all {
            assert_eq!(at, next, "no gap, no overlap");
            next += len as u64;
        }
        assert_eq!(next, (1 << 20) + 16 * 8192);
    }

    #[test]
    fn utilization_is_compute_over_accelerator_time() {
        assert_eq!(utilization(900, 1, 1000), 0.9);
        assert_eq!(utilization(900, 2, 1000), 0.45);
        assert_eq!(utilization(5, 1, 0), 0.0);
        assert_eq!(utilization(2000, 1, 1000), 1.0, "never above 1");
    }

    #[test]
    fn instant_reads_keep_the_accelerator_busy() {
        let mut g = TrainGen::new(&spec(10), region(), 0, 1, 1);
        let mut now = 0;
        let mut n = 0;
        loop {
            match g.wait(now) {
                None => {
                    g.next().unwrap();
                    g.completed(now);
                    n += 1;
                }
                Some(u64::MAX) => break,
                Some(t) => now = t,
            }
        }
        assert_eq!(n, 64, "32 samples, 2 epochs");
        assert_eq!(g.tally.steps, 16);
        assert_eq!(g.tally.stall_ns, 0, "data always ready");
        assert_eq!(g.tally.end_ns, 16 * 10_000_000);
        assert!((utilization(g.tally.compute_ns, 1, g.tally.end_ns) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn slow_reads_stall_the_accelerator_and_lower_its_utilization() {
        // One read at a time, 5 ms each: a batch of 4 takes 20 ms to read
        // and 10 ms to compute, so compute waits half the time.
        let mut g = TrainGen::new(&spec(10), region(), 0, 1, 1);
        let mut now = 0;
        while g.wait(now) != Some(u64::MAX) {
            if let Some(t) = g.wait(now) {
                now = now.max(t);
                continue;
            }
            g.next().unwrap();
            now += 5_000_000;
            g.completed(now);
        }
        assert!(g.finished());
        let au = utilization(g.tally.compute_ns, 1, g.tally.end_ns);
        assert!((au - 160.0 / 330.0).abs() < 1e-9, "16 steps of 10 ms over 320 ms of reads + the last compute: {au}");
        assert_eq!(g.tally.stall_ns, g.tally.end_ns - g.tally.compute_ns);
    }

    #[test]
    fn reads_stay_within_the_prefetch_window() {
        let mut g = TrainGen::new(&spec(1000), region(), 0, 1, 1);
        let mut issued = 0;
        while g.wait(0).is_none() {
            g.next().unwrap();
            issued += 1;
        }
        assert_eq!(issued, 8, "2 batches ahead of a compute that has not begun");
        for _ in 0..4 {
            g.completed(0);
        }
        assert_eq!(g.wait(0), None, "the first batch's compute began at once: one more batch may be read");
    }

    /// Two files of 3 row groups of 4 rows; columns of 1, 2 and 4 bytes a
    /// row (7 a row), the 1- and 4-byte ones read; batches of 6 rows.
    fn parquet() -> TrainSpec {
        TrainSpec {
            files: 2,
            samples_per_file: 12,
            record: 7,
            batch: 6,
            epochs: 1,
            parquet: Some(Parquet { row_group: 4, columns: vec![(1, true), (2, false), (4, true)] }),
            dataset_written: false,
            ..spec(10)
        }
    }

    #[test]
    fn parquet_row_groups_are_read_column_by_column_and_only_the_selected_ones() {
        let s = parquet();
        let p = s.parquet.as_ref().unwrap();
        // A row group: 4 rows x 1 B, then 4 x 2 B, then 4 x 4 B.
        assert_eq!(p.reads(), vec![(0, 4), (12, 16)]);
        assert_eq!(p.group_bytes(), 28);
        assert_eq!(s.units(), 6);
        let mut g = TrainGen::new(&s, Region { files: 2, start: 0, len: 84, end: 0 }, 0, 1, 1);
        let reads: Vec<_> = g.by_ref().map(|io| (io.file, io.offset, io.len)).collect();
        // 24 rows make 4 batches of 6: 4 batches need 24 rows, all 6 groups.
        assert_eq!(reads.len(), 12, "two reads a row group: {reads:?}");
        for pair in reads.chunks(2) {
            let (f, a, l) = pair[0];
            assert_eq!((l, pair[1].2), (4, 16), "the 1-byte column's chunk, then the 4-byte one's");
            assert_eq!((pair[1].0, pair[1].1), (f, a + 12), "the same row group");
            assert_eq!(a % 28, 0, "a row group starts every 28 bytes");
        }
        let mut groups: Vec<_> = reads.iter().step_by(2).map(|r| (r.0, r.1)).collect();
        groups.sort();
        groups.dedup();
        assert_eq!(groups.len(), 6, "every row group once an epoch");
    }

    #[test]
    fn parquet_steps_follow_the_rows_read() {
        // Instant reads: 6 groups of 4 rows are 4 steps of 6 rows.
        let mut g = TrainGen::new(&parquet(), Region { files: 2, start: 0, len: 84, end: 0 }, 0, 1, 1);
        let mut now = 0;
        loop {
            match g.wait(now) {
                None => {
                    g.next().unwrap();
                    g.completed(now);
                }
                Some(u64::MAX) => break,
                Some(t) => now = t,
            }
        }
        assert!(g.finished());
        assert_eq!((g.tally.steps, g.tally.samples), (4, 24));
        assert_eq!(g.tally.end_ns, 4 * 10_000_000, "never waiting: 4 computes back to back");
    }

    #[test]
    fn accelerators_share_each_epoch_without_overlap() {
        let s = spec(1);
        let mut seen = Vec::new();
        for w in 0..2 {
            let mut g = TrainGen::new(&s, region(), w, 2, 1);
            for _ in 0..16 {
                let io = g.next().unwrap();
                seen.push((io.file, io.offset));
            }
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 32, "the first epoch reads every sample once across both");
    }
}
