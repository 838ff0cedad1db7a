//! What a worker issues: its job's generator (blocks of files and devices,
//! named objects, a recorded trace, a training run), one enum the loop asks
//! for the next operation, and the share of a training dataset a worker
//! writes before the run and removes after it.

use storbench_metrics::ReplayTally;
use storbench_model::protocol::JobShare;
use storbench_workload::trace::ReplayGen;
use storbench_workload::train::TrainGen;
use storbench_workload::{IoGen, NextIo, ObjGen, OpKind};

/// Blocks of files and devices, named objects, or a recorded trace.
pub(super) enum Gen {
    Blocks(IoGen),
    Objects(ObjGen),
    Replay(Box<Replaying>),
    Train(Box<TrainGen>),
}

/// A worker's share of a trace and how late it is being issued.
pub(super) struct Replaying {
    pub(super) gen: ReplayGen,
    /// For the data written (the trace decides everything else).
    pub(super) rng: storbench_workload::rng::Rng,
    pub(super) tally: ReplayTally,
}

impl Gen {
    #[inline]
    pub(super) fn next(&mut self) -> Option<NextIo> {
        match self {
            Gen::Blocks(g) => g.next(),
            Gen::Objects(g) => g.next(),
            Gen::Replay(r) => r.gen.next(),
            Gen::Train(t) => t.next(),
        }
    }
    #[inline]
    pub(super) fn take_wrapped(&mut self) -> bool {
        match self {
            Gen::Blocks(g) => g.take_wrapped(),
            Gen::Objects(_) | Gen::Replay(_) | Gen::Train(_) => false,
        }
    }
    /// Verify reads issued besides the generator's (see [`IoGen::count_read`]).
    #[inline]
    pub(super) fn count_read(&mut self, len: u32) {
        if let Gen::Blocks(g) = self {
            g.count_read(u64::from(len));
        }
    }
    #[inline]
    pub(super) fn rng(&mut self) -> &mut storbench_workload::rng::Rng {
        match self {
            Gen::Blocks(g) => g.rng(),
            Gen::Objects(g) => g.rng(),
            Gen::Replay(r) => &mut r.rng,
            Gen::Train(t) => t.rng(),
        }
    }
}

/// The dataset's objects a worker writes before a training run (and
/// removes after it): every `workers`-th, so each is written once.
pub(super) fn dataset_share(share: &JobShare, worker: u32) -> Result<impl Iterator<Item = NextIo>, String> {
    let t = share.spec.train.clone().ok_or("not a training job")?;
    let len = u32::try_from(t.file_bytes())
        .map_err(|_| format!("training files of {} bytes: objects above 4 GiB are not supported", t.file_bytes()))?;
    Ok((worker as u64..t.files).step_by(share.workers.max(1) as usize).map(move |k| NextIo {
        op: OpKind::Read,
        file: k as u32,
        offset: 0,
        len,
        whole: true,
        class: 0,
    }))
}
