//! The registry of kinds: [`JobGen`] holds one worker's generator of
//! whichever kind its job is, and passes every call of [`Generator`] on
//! through one `match` (`each!`), so the loop is dispatched statically.

use super::objects::Objects;
use super::{Generator, Issued, KvCaching, Replaying, Searching, Tally, Training, Unmeasured, When};
use crate::gen::{stream, Region};
use crate::rng::Rng;
use crate::trace::{ReplayGen, ReplaySpec, Trace};
use crate::train::TrainGen;
use crate::{IoGen, JobKind, JobSpec, NextIo, ObjGen, OpKind, Settled};
use std::sync::Arc;

/// One worker's generator, of its job's kind.
pub enum JobGen {
    Blocks(IoGen),
    Objects(Objects),
    Replay(Box<Replaying>),
    Train(Box<Training>),
    KvCache(Box<KvCaching>),
    VectorDb(Box<Searching>),
}

/// Every kind's arm, one line each: `$g` bound to the kind's generator.
macro_rules! each {
    ($self:expr, $g:ident => $e:expr) => {
        match $self {
            JobGen::Blocks($g) => $e,
            JobGen::Objects($g) => $e,
            JobGen::Replay($g) => $e,
            JobGen::Train($g) => $e,
            JobGen::KvCache($g) => $e,
            JobGen::VectorDb($g) => $e,
        }
    };
}

/// Where a worker's generator stands in its job.
pub struct GenSetup<'a> {
    /// Its job's place in the run, and its own among the job's workers.
    pub job: u32,
    pub worker: u32,
    pub workers: u32,
    /// Its rank and the ranks in all, over every agent of a fleet (its
    /// worker number and the workers, on one machine): a training
    /// dataset's samples are divided over ranks.
    pub rank: u32,
    pub ranks: u32,
    pub queue_depth: u32,
    /// Its blocks (moved along by `offset_increment` for the workers of
    /// its volume before it).
    pub region: Region,
    /// Its byte budget.
    pub io_limit: Option<u64>,
    /// The store keeps the order of operations on one object.
    pub ordered: bool,
    /// Loads a trace to replay (read once per run, shared by the workers).
    pub trace: &'a dyn Fn(&ReplaySpec) -> Result<Arc<Trace>, String>,
    /// The worker reads each pass of its blocks back before the next
    /// (fio's do_verify inside its loop): the generator stops at a pass's
    /// end until told to go on.
    pub verify_each_pass: bool,
}

impl JobGen {
    /// The generator of `spec`'s kind for the worker `at` describes.
    pub fn new(spec: &JobSpec, at: &GenSetup) -> Result<JobGen, String> {
        let seed = spec.seed ^ at.worker as u64;
        let cleans_up = spec.objects.as_ref().is_some_and(|o| o.cleans_up());
        let unmeasured = Vec::new().into_iter();
        match (&spec.kind, &spec.objects) {
            (JobKind::Train(t), _) => {
                let region = match spec.objects {
                    Some(_) => Region { files: 0, start: 0, len: t.file_bytes(), end: 0 },
                    None => at.region,
                };
                let seed = spec.seed ^ at.rank as u64;
                // Reads are shared out over every rank; each agent writes
                // (and removes) its own copy of an object dataset.
                let gen = TrainGen::new(t, region, at.rank, at.ranks, seed).writing_as(at.worker, at.workers);
                // An earlier run wrote the dataset (`--rules`: written once, before
                // the warm-up, and read by each run): nothing to write first.
                let writes_dataset = match &spec.objects {
                    Some(o) => !o.exist,
                    None => spec.writes_dataset(),
                };
                let chunk = spec.bs.max();
                Ok(JobGen::Train(Box::new(Training {
                    gen,
                    on_objects: spec.objects.is_some(),
                    writes_dataset,
                    cleans_up,
                    unmeasured,
                    chunk,
                })))
            }
            (JobKind::KvCache(k), _) => {
                let chunk = spec.bs.max();
                // Users are a client's own (the job's users are its workers'
                // on each agent); the rank keeps agents' users apart.
                let seed = spec.seed ^ at.rank as u64;
                let gen = crate::kvcache::KvGen::new(k, at.region, chunk, at.queue_depth, at.worker, at.workers, seed);
                Ok(JobGen::KvCache(Box::new(KvCaching { gen })))
            }
            (JobKind::VectorDb(v), _) => {
                // Every process searches the whole index; each writes its
                // share of it first where nothing laid it out (each agent
                // its own copy). The rank keeps agents' node draws apart.
                let seed = spec.seed ^ at.rank as u64;
                let gen = crate::vectordb::VdbGen::new(v, at.region, seed).writing_as(at.worker, at.workers);
                // As large as a worker's buffer slots hold (`buffer_len`).
                let (writes_index, chunk) = (spec.writes_dataset(), spec.dataset_write_len());
                Ok(JobGen::VectorDb(Box::new(Searching { gen, writes_index, chunk, unmeasured })))
            }
            (JobKind::Replay(r), _) => {
                let gen = ReplayGen::new((at.trace)(r)?, r, at.region, at.worker, at.workers, at.queue_depth);
                Ok(JobGen::Replay(Box::new(Replaying { gen, rng: Rng::new(seed), issued: 0, cleans_up, unmeasured })))
            }
            (_, Some(o)) => {
                // Each volume's keys are shared out as in a job of one volume.
                // fio's number_ios is per loop, as io_size (the runner's `prepare::region`).
                let ops = spec.number_ios.map(|n| n.saturating_mul(u64::from(spec.passes.max(1))));
                let mut gen = ObjGen::new(spec, spec.place_in_volume(at.worker), at.io_limit, ops);
                gen.exclusive(!at.ordered);
                Ok(JobGen::Objects(Objects { gen, prefill: o.prefill, cleans_up }))
            }
            // Generated I/O and metadata calls on blocks; a burner or a
            // program has no operations (the worker runs their phases).
            (JobKind::Io | JobKind::Meta(_) | JobKind::Burn(_) | JobKind::Program(_), None) => {
                let mut gen = IoGen::new(spec, at.region, stream(at.job, at.worker), at.io_limit);
                if at.verify_each_pass {
                    gen.verify_each_pass();
                }
                Ok(JobGen::Blocks(gen))
            }
        }
    }
}

impl Generator for JobGen {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        // Spelled out: `IoGen` is an `Iterator` too, whose `next` is the same.
        match self {
            JobGen::Blocks(g) => Iterator::next(g),
            JobGen::Objects(g) => g.next(),
            JobGen::Replay(g) => g.next(),
            JobGen::Train(g) => g.next(),
            JobGen::KvCache(g) => g.next(),
            JobGen::VectorDb(g) => g.next(),
        }
    }
    #[inline]
    fn rng(&mut self) -> &mut Rng {
        each!(self, g => g.rng())
    }
    #[inline]
    fn take_wrapped(&mut self) -> bool {
        each!(self, g => g.take_wrapped())
    }
    #[inline]
    fn count_read(&mut self, bytes: u64) {
        each!(self, g => g.count_read(bytes))
    }
    fn pass_ended(&self) -> bool {
        each!(self, g => g.pass_ended())
    }
    fn next_pass(&mut self) -> bool {
        each!(self, g => g.next_pass())
    }
    #[inline]
    fn start(&mut self, now: u64) -> When {
        each!(self, g => g.start(now))
    }
    #[inline]
    fn arrival(&self, now: u64) -> Option<u64> {
        each!(self, g => g.arrival(now))
    }
    fn scheduled(&self) -> bool {
        each!(self, g => g.scheduled())
    }
    #[inline]
    fn issued(&mut self, slot: u32, io: &NextIo, scheduled: u64, now: u64) -> Issued {
        each!(self, g => g.issued(slot, io, scheduled, now))
    }
    #[inline]
    fn completed(&mut self, slot: u32, op: OpKind, key: u32, settled: impl FnOnce() -> Settled, now: u64) {
        each!(self, g => g.completed(slot, op, key, settled, now))
    }
    fn abandoned(&mut self, slot: u32, op: OpKind, key: u32) {
        each!(self, g => g.abandoned(slot, op, key))
    }
    fn busy_until(&self) -> Option<u64> {
        each!(self, g => g.busy_until())
    }
    fn before(&mut self) -> Result<Option<Unmeasured>, String> {
        each!(self, g => g.before())
    }
    fn before_next(&mut self) -> Option<NextIo> {
        each!(self, g => g.before_next())
    }
    fn before_stopped(&self, work: Unmeasured) -> String {
        each!(self, g => g.before_stopped(work))
    }
    fn after(&mut self) -> Result<Option<Unmeasured>, String> {
        each!(self, g => g.after())
    }
    fn after_next(&mut self) -> Option<NextIo> {
        each!(self, g => g.after_next())
    }
    fn after_failed(&mut self, key: u32) {
        each!(self, g => g.after_failed(key))
    }
    fn ended(&mut self, at: u64) {
        each!(self, g => g.ended(at))
    }
    fn objects_left(&self) -> u64 {
        each!(self, g => g.objects_left())
    }
    fn tally(&self) -> Option<Tally> {
        each!(self, g => g.tally())
    }
}
