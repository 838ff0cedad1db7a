//! A recorded trace as a kind: each operation at its recorded time (or as
//! the queue allows, unpaced), in the recorded order on overlapping blocks
//! or one object; the objects the trace found in place written first, and
//! every object it touched removed after.

use super::{queue, Generator, Issued, Tally, Unmeasured, When};
use crate::rng::Rng;
use crate::trace::ReplayGen;
use crate::{NextIo, OpKind, Settled};

/// A worker's share of a trace, and what it came to.
pub struct Replaying {
    pub(super) gen: ReplayGen,
    /// For the data written (the trace decides everything else).
    pub(super) rng: Rng,
    pub(super) issued: u64,
    /// Remove the objects the trace touched at the end.
    pub(super) cleans_up: bool,
    /// The unmeasured operations under way (before or after).
    pub(super) unmeasured: std::vec::IntoIter<NextIo>,
}

/// How a worker's share of a trace went, apart from how late each
/// operation was issued (the worker's lag histogram).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayCounts {
    pub issued: u64,
    /// Offsets wrapped into a target smaller than the trace's.
    pub remapped: u64,
    /// Records not issued (the run was stopped or cut by runtime).
    pub left: u64,
}

impl Generator for Replaying {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        self.gen.next()
    }

    #[inline]
    fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    #[inline]
    fn start(&mut self, now: u64) -> When {
        match self.gen.due() {
            _ if self.gen.blocked() => When::NotYet,
            Some(t) if t > now => When::NotYet,
            // Without stalls nothing is scheduled: latency from the issue.
            Some(_) if self.gen.unpaced() => When::Issue,
            Some(t) => When::At(t),
            // The end: the generator says so next.
            None => When::Issue,
        }
    }

    #[inline]
    fn arrival(&self, now: u64) -> Option<u64> {
        match self.gen.blocked() {
            true => Some(u64::MAX),
            false => Some(self.gen.due().unwrap_or(now)),
        }
    }

    fn scheduled(&self) -> bool {
        true
    }

    #[inline]
    fn issued(&mut self, slot: u32, io: &NextIo, scheduled: u64, now: u64) -> Issued {
        let data_only = Some(self.gen.last_data_only());
        self.gen.issued(slot, io);
        self.issued += 1;
        let lag = (!self.gen.unpaced()).then(|| now.saturating_sub(scheduled));
        Issued { data_only, lag }
    }

    #[inline]
    fn completed(&mut self, slot: u32, _op: OpKind, _key: u32, _settled: impl FnOnce() -> Settled, _now: u64) {
        self.gen.completed(slot);
    }

    fn abandoned(&mut self, slot: u32, _op: OpKind, _key: u32) {
        self.gen.completed(slot);
    }

    fn before(&mut self) -> Result<Option<Unmeasured>, String> {
        let before = self.gen.objects_before();
        Ok(queue(&mut self.unmeasured, before, |n| format!("objects the trace found in place ({n} objects)")))
    }

    fn before_next(&mut self) -> Option<NextIo> {
        self.unmeasured.next()
    }

    fn after(&mut self) -> Result<Option<Unmeasured>, String> {
        if !self.cleans_up {
            return Ok(None);
        }
        let deletes = self.gen.keys().into_iter().map(delete).collect();
        Ok(queue(&mut self.unmeasured, deletes, |n| format!("cleanup of {n} replayed objects")))
    }

    fn after_next(&mut self) -> Option<NextIo> {
        self.unmeasured.next()
    }

    fn tally(&self) -> Option<Tally> {
        let (issued, remapped, left) = (self.issued, self.gen.remapped, self.gen.left() as u64);
        Some(Tally::Replay(ReplayCounts { issued, remapped, left }))
    }
}

/// A delete of object `key`, as the cleanup of a replay or a training
/// dataset issues it.
pub(super) fn delete(key: u32) -> NextIo {
    NextIo { op: OpKind::Delete, file: key, offset: 0, len: 0, whole: false, class: 0 }
}
