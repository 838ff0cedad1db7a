//! A vector index under queries as a kind (`crate::vectordb`): a query
//! process's searches reading index nodes, a beam at a time; on an
//! engine's own target its share of the index written first.

use super::{queue, Generator, Issued, Tally, Unmeasured, When};
use crate::rng::Rng;
use crate::vectordb::VdbGen;
use crate::{NextIo, OpKind, Settled};

/// One query process, and whether it writes its share of the index first.
pub struct Searching {
    pub(super) gen: VdbGen,
    /// The index is written before the queries (on an engine's own target;
    /// files are laid out before the run).
    pub(super) writes_index: bool,
    /// The largest write of the index (`JobSpec::dataset_write_len`: what
    /// a worker's buffer slots hold).
    pub(super) chunk: u64,
    pub(super) unmeasured: std::vec::IntoIter<NextIo>,
}

impl Generator for Searching {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        self.gen.next_io()
    }

    #[inline]
    fn rng(&mut self) -> &mut Rng {
        self.gen.rng()
    }

    #[inline]
    fn start(&mut self, now: u64) -> When {
        When::ready(self.gen.advance(now))
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

    fn before(&mut self) -> Result<Option<Unmeasured>, String> {
        if !self.writes_index {
            return Ok(None);
        }
        let writes = self.gen.index_writes(self.chunk);
        Ok(queue(&mut self.unmeasured, writes, |n| format!("the vector index ({n} writes)")))
    }

    fn before_next(&mut self) -> Option<NextIo> {
        self.unmeasured.next()
    }

    /// Only the requests that ended by `at` are figures.
    fn ended(&mut self, at: u64) {
        self.gen.ended(at);
    }

    fn tally(&self) -> Option<Tally> {
        Some(Tally::VectorDb(self.gen.tally.clone()))
    }
}
