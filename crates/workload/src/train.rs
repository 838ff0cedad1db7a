//! AI training as the storage sees it (the DLIO / MLPerf Storage model):
//! each worker is an accelerator that trains for some epochs over a dataset
//! of files (or objects) holding samples of a fixed size. Every epoch its
//! share of the samples comes in a fresh shuffled order; reader threads (the
//! worker's queue depth) read samples ahead into batches, at most
//! `prefetch` batches ahead of the accelerator; a batch whose samples are all
//! read is computed on for `compute` (emulated: time passes, nothing runs),
//! after the one before it.
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
}

impl TrainSpec {
    pub fn samples(&self) -> u64 {
        self.files * self.samples_per_file
    }
    pub fn file_bytes(&self) -> u64 {
        self.samples_per_file * self.record
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
    RandomMap::new(spec.samples(), &mut Rng::new(0x7a11 ^ epoch as u64))
}

/// One accelerator's reads and its emulated compute.
#[derive(Debug)]
pub struct TrainGen {
    spec: TrainSpec,
    region: Region,
    rng: Rng,
    worker: u64,
    workers: u64,
    /// This epoch's order of the whole dataset (a keyed permutation, the
    /// same on every accelerator; nothing materialised).
    order: RandomMap,
    /// Samples of its share this accelerator has taken this epoch.
    pos: u64,
    epoch: u32,
    /// Samples per epoch this accelerator trains on (whole batches).
    per_epoch: u64,
    issued: u64,
    completed: u64,
    /// Compute starts of batches that are read but not yet begun.
    starts: VecDeque<u64>,
    started: u64,
    pub tally: TrainTally,
}

impl TrainGen {
    pub fn new(spec: &TrainSpec, region: Region, worker: u32, workers: u32, seed: u64) -> TrainGen {
        let workers = workers.max(1) as u64;
        let share = spec.samples() / workers;
        let per_epoch = share - share % spec.batch.max(1) as u64;
        TrainGen {
            spec: spec.clone(),
            region,
            rng: Rng::new(seed),
            worker: worker as u64,
            workers,
            order: epoch_order(spec, 0),
            pos: 0,
            epoch: 0,
            per_epoch,
            issued: 0,
            completed: 0,
            starts: VecDeque::new(),
            started: 0,
            tally: TrainTally::default(),
        }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    fn total(&self) -> u64 {
        self.per_epoch * self.spec.epochs as u64
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
        match self.issued < ahead {
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
        let batch = self.spec.batch as u64;
        if !self.completed.is_multiple_of(batch) {
            return;
        }
        let free = if self.tally.steps == 0 { 0 } else { self.tally.end_ns };
        let start = now.max(free);
        self.tally.stall_ns += start - free;
        self.tally.end_ns = start + self.spec.compute_ns;
        self.tally.compute_ns += self.spec.compute_ns;
        self.tally.steps += 1;
        self.tally.samples += batch;
        self.starts.push_back(start);
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
        let (file, offset) = match self.region.files {
            // Objects: the file is the key; a sample is a range of it.
            0 => (file as u32, within * self.spec.record),
            n => ((file % n as u64) as u32, self.region.start + within * self.spec.record),
        };
        Some(NextIo { op: OpKind::Read, file, offset, len: self.spec.record as u32, whole, class: 0 })
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
        }
    }

    fn region() -> Region {
        Region { files: 16, start: 0, len: 8192 }
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
