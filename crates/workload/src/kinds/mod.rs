//! Workload kinds behind one seam: what a worker issues comes from a
//! [`Generator`], and the worker asks it, without knowing which kind it is,
//! for the next operation, when that may start, what its completion means
//! for the model, the unmeasured work before and after the measured phase,
//! and its tally. [`JobGen`] is the registry of kinds, dispatched statically
//! (one `match`, inlined) so the measured loop pays no virtual call.
//!
//! Adding a kind: its spec as a variant of [`JobKind`](crate::JobKind)
//! (and its field in `kind.rs`'s serialized form), its generator here in
//! `workload` (a module of this folder implementing [`Generator`]), a
//! variant of [`JobGen`] with its arm in `JobGen::new` and its line in
//! `each!`, and, if it reports figures of its own, a [`Tally`] variant and
//! the result section built from it.

mod blocks;
mod job;
mod kvcache;
mod objects;
mod replay;
mod train;
mod vectordb;

pub use job::{GenSetup, JobGen};
pub use kvcache::KvCaching;
pub use replay::{ReplayCounts, Replaying};
pub use train::Training;
pub use vectordb::Searching;

use crate::rng::Rng;
use crate::train::TrainTally;
use crate::{NextIo, OpKind, Settled};

/// When the next operation may start, as the generator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// The generator sets no pace: the job's (a fixed rate, a byte cap, or
    /// none) decides.
    Job,
    /// Now, timed from when the engine takes it (nothing paces it).
    Issue,
    /// Now, timed from this scheduled time however late it goes out (a
    /// trace's record).
    At(u64),
    /// Not yet (a record still ahead, an operation that must wait for one
    /// in flight, an accelerator not ready for more reads).
    NotYet,
}

impl When {
    /// Now if the generator has an operation ready, else not yet.
    #[inline]
    pub fn ready(ready: bool) -> When {
        if ready {
            When::Issue
        } else {
            When::NotYet
        }
    }
}

/// What the generator says about an operation the worker is issuing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Issued {
    /// A sync asks for fdatasync rather than fsync (`None`: the job's).
    pub data_only: Option<bool>,
    /// How late it is issued against the generator's own schedule (ns),
    /// for generators that keep one.
    pub lag: Option<u64>,
}

/// Unmeasured work around the measured phase (writing what must exist
/// before, removing what the job made after).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmeasured {
    /// What it is, as an error about it names it ("prefill of 16 objects").
    pub what: String,
    /// A verifying job's checker sees these operations (it stamps the
    /// writes and forgets the deletes).
    pub checked: bool,
}

/// A kind's own figures for its worker, reported once at the end.
#[derive(Clone, Debug, PartialEq)]
pub enum Tally {
    Replay(ReplayCounts),
    Train(TrainTally),
    KvCache(crate::kvcache::KvTally),
    VectorDb(crate::vectordb::VdbTally),
}

/// One kind's generator for one worker. Every method but [`Generator::next`]
/// and [`Generator::rng`] has a default: a kind implements what it uses.
pub trait Generator {
    /// The next operation; `None`: the worker's share is done.
    fn next(&mut self) -> Option<NextIo>;

    /// The random stream the written data is drawn from.
    fn rng(&mut self) -> &mut Rng;

    /// A pass over the region ended since the last call (fio's `invalidate`
    /// drops the page cache there).
    #[inline]
    fn take_wrapped(&mut self) -> bool {
        false
    }

    /// Bytes read besides the generator's operations (a pass's verify
    /// reads), which fio counts in the bytes that decide whether another
    /// pass follows.
    #[inline]
    fn count_read(&mut self, _bytes: u64) {}

    /// The last `None` of [`Generator::next`] ended a pass, not the worker's
    /// share: the worker reads the pass back, then asks
    /// [`Generator::next_pass`] (a generator set up to verify each pass).
    fn pass_ended(&self) -> bool {
        false
    }

    /// After a pass the worker read back (its reads counted): whether
    /// another pass follows (fio's keep_running); if so the generator goes
    /// on with it.
    fn next_pass(&mut self) -> bool {
        false
    }

    /// Whether the next operation may start at `now`.
    #[inline]
    fn start(&mut self, _now: u64) -> When {
        When::Job
    }

    /// When the worker, with a free slot, should wake to issue next
    /// (`u64::MAX`: on a completion); `None`: the job's pacing decides.
    #[inline]
    fn arrival(&self, _now: u64) -> Option<u64> {
        None
    }

    /// The generator keeps a schedule of its own: the worker measures how
    /// late it issues against it (each [`Issued::lag`]).
    fn scheduled(&self) -> bool {
        false
    }

    /// `io`, taken from [`Generator::next`], goes out in `slot` at `now`,
    /// scheduled for `scheduled`.
    #[inline]
    fn issued(&mut self, _slot: u32, _io: &NextIo, _scheduled: u64, _now: u64) -> Issued {
        Issued::default()
    }

    /// The operation in `slot` (`op` on `key`, as in `NextIo::file`) ended
    /// at `now`, as `settled` says (asked only by kinds that model what the
    /// store holds: a block job's completion costs nothing to judge).
    #[inline]
    fn completed(&mut self, _slot: u32, _op: OpKind, _key: u32, _settled: impl FnOnce() -> Settled, _now: u64) {}

    /// The engine gave up on the operation in `slot`: it may or may not
    /// have happened.
    #[inline]
    fn abandoned(&mut self, _slot: u32, _op: OpKind, _key: u32) {}

    /// When the work the operations feed ends (an accelerator's last
    /// compute): the worker's measured phase lasts until then.
    fn busy_until(&self) -> Option<u64> {
        None
    }

    /// The unmeasured writes before the measured phase, if any; their
    /// operations then come from [`Generator::before_next`].
    fn before(&mut self) -> Result<Option<Unmeasured>, String> {
        Ok(None)
    }

    fn before_next(&mut self) -> Option<NextIo> {
        None
    }

    /// What the unmeasured writes `work` are called in their failure's
    /// error, said once they stopped (a count then is of what they left).
    fn before_stopped(&self, work: Unmeasured) -> String {
        work.what
    }

    /// What the job made and removes after its measured phase, if any;
    /// the deletes then come from [`Generator::after_next`].
    fn after(&mut self) -> Result<Option<Unmeasured>, String> {
        Ok(None)
    }

    fn after_next(&mut self) -> Option<NextIo> {
        None
    }

    /// A delete of [`Generator::after_next`] failed: `key` is still there.
    fn after_failed(&mut self, _key: u32) {}

    /// The measured phase ended at `at` (the worker's clock): a kind
    /// whose model runs on its own time brings it there before its tally.
    fn ended(&mut self, _at: u64) {}

    /// Objects the worker made and did not remove.
    fn objects_left(&self) -> u64 {
        0
    }

    /// The kind's own figures, for kinds that keep some.
    fn tally(&self) -> Option<Tally> {
        None
    }
}

/// `ios` queued in `slot` as unmeasured work no checker sees, named by
/// `what` of their count, if there are any.
fn queue(slot: &mut std::vec::IntoIter<NextIo>, ios: Vec<NextIo>, what: impl FnOnce(usize) -> String) -> Option<Unmeasured> {
    if ios.is_empty() {
        return None;
    }
    let what = what(ios.len());
    *slot = ios.into_iter();
    Some(Unmeasured { what, checked: false })
}
