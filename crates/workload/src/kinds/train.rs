//! A training run as a kind: an emulated accelerator's sample reads, paced
//! by its compute timeline; on an object store its share of the dataset
//! written before the run and removed after it.

use super::replay::delete;
use super::{queue, Generator, Tally, Unmeasured, When};
use crate::rng::Rng;
use crate::train::TrainGen;
use crate::{NextIo, OpKind, Settled};

/// One accelerator's generator, and where its dataset lives.
pub struct Training {
    pub(super) gen: TrainGen,
    /// The dataset is objects this job writes first (not files prepared
    /// before the run).
    pub(super) on_objects: bool,
    /// Whether the dataset is written before the measured phase (not when
    /// an earlier run left it in place: `objects_exist`).
    pub(super) writes_dataset: bool,
    /// Remove the dataset's objects at the end.
    pub(super) cleans_up: bool,
    /// The largest write of a dataset on an engine's own target (the job's block size).
    pub(super) chunk: u64,
    pub(super) unmeasured: std::vec::IntoIter<NextIo>,
}

impl Generator for Training {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        self.gen.next()
    }

    #[inline]
    fn rng(&mut self) -> &mut Rng {
        self.gen.rng()
    }

    #[inline]
    fn start(&mut self, now: u64) -> When {
        match self.gen.wait(now) {
            None => When::Issue,
            // Every read issued: the generator says so next.
            Some(u64::MAX) if self.gen.finished() => When::Issue,
            Some(_) => When::NotYet,
        }
    }

    #[inline]
    fn arrival(&self, now: u64) -> Option<u64> {
        Some(self.gen.wait(now).unwrap_or(now))
    }

    #[inline]
    fn completed(&mut self, _slot: u32, _op: OpKind, _key: u32, _settled: impl FnOnce() -> Settled, now: u64) {
        self.gen.completed(now);
    }

    fn busy_until(&self) -> Option<u64> {
        Some(self.gen.tally.end_ns)
    }

    fn before(&mut self) -> Result<Option<Unmeasured>, String> {
        if !self.writes_dataset {
            return Ok(None);
        }
        if !self.on_objects {
            // On an engine's own target (files are laid out before the run).
            let writes = self.gen.dataset_writes(self.chunk);
            return Ok(queue(&mut self.unmeasured, writes, |n| format!("the training dataset ({n} writes)")));
        }
        let files = self.gen.dataset_share()?.map(|file| NextIo { op: OpKind::Create, whole: true, ..file }).collect();
        Ok(queue(&mut self.unmeasured, files, |n| format!("the training dataset ({n} objects)")))
    }

    fn before_next(&mut self) -> Option<NextIo> {
        self.unmeasured.next()
    }

    fn after(&mut self) -> Result<Option<Unmeasured>, String> {
        if !self.on_objects {
            return Ok(None);
        }
        let deletes: Vec<NextIo> = self.gen.dataset_share()?.map(|io| delete(io.file)).collect();
        if !self.cleans_up {
            return Ok(None);
        }
        Ok(queue(&mut self.unmeasured, deletes, |n| format!("cleanup of {n} replayed objects")))
    }

    fn after_next(&mut self) -> Option<NextIo> {
        self.unmeasured.next()
    }

    fn tally(&self) -> Option<Tally> {
        Some(Tally::Train(self.gen.tally.clone()))
    }
}
