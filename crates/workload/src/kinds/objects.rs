//! Named objects: [`ObjGen`] as a kind, with the prefill before the
//! measured phase and the cleanup after it. A completion settles the
//! object's state in the model; one given up on is unknown.

use super::{Generator, Unmeasured};
use crate::rng::Rng;
use crate::{NextIo, ObjGen, OpKind, Settled};

/// An object job's generator, with what its spec asks around the measured
/// phase.
pub struct Objects {
    pub(super) gen: ObjGen,
    /// Write the objects the measured phase uses first.
    pub(super) prefill: bool,
    /// Remove what the job made at the end.
    pub(super) cleans_up: bool,
}

impl Generator for Objects {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        self.gen.next()
    }

    #[inline]
    fn rng(&mut self) -> &mut Rng {
        self.gen.rng()
    }

    #[inline]
    fn completed(&mut self, _slot: u32, op: OpKind, key: u32, settled: impl FnOnce() -> Settled, _now: u64) {
        self.gen.completed(op, key, settled());
    }

    fn abandoned(&mut self, _slot: u32, op: OpKind, key: u32) {
        self.gen.completed(op, key, Settled::Unknown);
    }

    fn before(&mut self) -> Result<Option<Unmeasured>, String> {
        Ok(self.prefill.then(|| Unmeasured { what: "prefill".into(), checked: true }))
    }

    /// Counted once it stopped: before it, the worker's objects are those
    /// an earlier run left (the message said "prefill of 0 objects").
    fn before_stopped(&self, work: Unmeasured) -> String {
        format!("{} ({} of its objects in the store when it stopped)", work.what, self.gen.live())
    }

    fn before_next(&mut self) -> Option<NextIo> {
        self.gen.prefill_next()
    }

    fn after(&mut self) -> Result<Option<Unmeasured>, String> {
        let left = self.gen.left();
        Ok((self.cleans_up && left > 0).then(|| Unmeasured { what: format!("cleanup of {left} objects"), checked: true }))
    }

    fn after_next(&mut self) -> Option<NextIo> {
        self.gen.cleanup_next()
    }

    fn after_failed(&mut self, key: u32) {
        self.gen.delete_failed(key);
    }

    fn objects_left(&self) -> u64 {
        match self.cleans_up {
            true => self.gen.left(),
            false => 0,
        }
    }
}
