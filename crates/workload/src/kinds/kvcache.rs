//! The KV-cache tier as a kind (`crate::kvcache`): users' requests
//! reading and writing their conversations' KV cache on the worker's
//! region, paced by their arrivals and by the requests' own operations.

use super::{Generator, Issued, Tally, When};
use crate::kvcache::KvGen;
use crate::rng::Rng;
use crate::{NextIo, OpKind, Settled};

/// One client's users and tiers.
pub struct KvCaching {
    pub(super) gen: KvGen,
}

impl Generator for KvCaching {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        self.gen.next_io()
    }

    #[inline]
    fn rng(&mut self) -> &mut Rng {
        self.gen.rng()
    }

    /// The model is brought to `now` here (arrivals queued, requests
    /// moved on), so `next` always has the operation this says is ready.
    #[inline]
    fn start(&mut self, now: u64) -> When {
        When::ready(self.gen.advance(now))
    }

    #[inline]
    fn arrival(&self, _now: u64) -> Option<u64> {
        Some(self.gen.wake())
    }

    #[inline]
    fn issued(&mut self, slot: u32, _io: &NextIo, _scheduled: u64, _now: u64) -> Issued {
        self.gen.issued(slot);
        Issued::default()
    }

    #[inline]
    fn completed(&mut self, slot: u32, _op: OpKind, _key: u32, _settled: impl FnOnce() -> Settled, now: u64) {
        self.gen.completed(slot, now);
    }

    fn abandoned(&mut self, slot: u32, _op: OpKind, _key: u32) {
        self.gen.abandoned(slot);
    }

    /// Requests that arrived since the last operation are counted as
    /// waiting, and every waiting one's wait runs to the end.
    fn ended(&mut self, at: u64) {
        self.gen.ended(at);
    }

    fn tally(&self) -> Option<Tally> {
        Some(Tally::KvCache(self.gen.tally()))
    }
}
