//! The object workload model: a set of named objects and a weighted mix of
//! operations on them (create, read, update, partial write, stat, delete, list).
//!
//! Each worker owns the keys `worker, worker + workers, ...` below the job's
//! object count, so workers never race on one object and a worker knows exactly
//! which of its objects exist: reads, stats and deletes go to objects that do,
//! creates to ones that do not, and cleanup removes only what the run wrote.

use crate::bits::Bits;
use crate::dist::BlockSampler;
use crate::gen::NextIo;
use crate::rng::Rng;
use crate::spec::{JobSpec, OpKind, SizeSplit};
use serde::{Deserialize, Serialize};

/// Sizes of whole objects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ObjectSizes {
    /// One size, or weighted size classes (`4k/70:1m/30`).
    Classes { split: SizeSplit },
    /// Uniform between two sizes, inclusive (`4k-1m`).
    Range { min: u64, max: u64 },
}

impl ObjectSizes {
    /// The mean size of an object (weighted classes, or the middle of a range).
    pub fn mean(&self) -> f64 {
        match self {
            ObjectSizes::Classes { split } => {
                let total: f64 = split.0.iter().map(|e| e.1 as f64).sum::<f64>().max(1.0);
                split.0.iter().map(|e| e.0 as f64 * e.1 as f64).sum::<f64>() / total
            }
            ObjectSizes::Range { min, max } => (*min + *max) as f64 / 2.0,
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            ObjectSizes::Classes { split } => split.max(),
            ObjectSizes::Range { max, .. } => *max,
        }
    }
    pub fn fixed(&self) -> Option<u64> {
        match self {
            ObjectSizes::Classes { split } if split.0.len() == 1 => Some(split.0[0].0),
            ObjectSizes::Range { min, max } if min == max => Some(*min),
            _ => None,
        }
    }
    /// The size classes results are kept apart for: the distinct sizes of a
    /// weighted split, ascending; none for one size or a range.
    pub fn classes(&self) -> Vec<u64> {
        match self {
            ObjectSizes::Classes { split } => {
                let mut c: Vec<u64> = split.0.iter().map(|e| e.0).collect();
                c.sort_unstable();
                c.dedup();
                // One class or more than a u8 can name: nothing to keep apart.
                if c.len() < 2 || c.len() > u8::MAX as usize {
                    c.clear();
                }
                c
            }
            ObjectSizes::Range { .. } => Vec::new(),
        }
    }
    pub fn describe(&self) -> String {
        match self {
            ObjectSizes::Classes { split } => split.describe(),
            ObjectSizes::Range { min, max } => {
                format!("{}-{}", crate::units::format_size(*min), crate::units::format_size(*max))
            }
        }
    }
}

/// The object side of a job (present only for object jobs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectSpec {
    /// Objects in the job's key space, shared out among its workers.
    pub count: u64,
    pub sizes: ObjectSizes,
    /// Object names are the prefix followed by the key number.
    pub prefix: Option<String>,
    /// Operation weights; empty: derived from `rw` (reads, creates, or both
    /// in `rwmixread` proportion).
    pub mix: Vec<(OpKind, u32)>,
    /// Length range of partial reads and writes; `None`: whole objects.
    pub op_len: Option<(u64, u64)>,
    /// Write every object once before the measured phase (or, with
    /// `initial`, that many of them).
    pub prefill: bool,
    /// Objects written before the measured phase, when not all of them
    /// (ssbench's initial_files); the rest of the key space is for creates.
    #[serde(default)]
    pub initial: Option<u64>,
    /// The objects already exist (an earlier run left them).
    pub exist: bool,
    /// Remove the objects when the run ends; by default only when this run
    /// wrote them (not when `exist` says an earlier run left them).
    pub cleanup: Option<bool>,
    /// How names are made from key numbers.
    #[serde(default)]
    pub naming: Naming,
}

/// How an object's name is made from its key number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Naming {
    /// The prefix followed by the key number.
    #[default]
    Numbered,
    /// fio's http engine: one object per block of a file, named
    /// `<file>_<offset>_<length>`. With `jobnum` (fio's `$jobnum` in
    /// `filename_format`) each of `workers` workers has a file of its own,
    /// `<prefix><worker><jobnum tail>`, and offsets count its own blocks;
    /// without it the workers share one file (the prefix).
    FioBlocks { block: u64, workers: u32, jobnum: Option<String> },
}

/// Names of a job's objects: the prefix and the naming rule.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectNames {
    pub prefix: String,
    pub naming: Naming,
}

impl ObjectNames {
    pub fn new(prefix: &str, spec: Option<&ObjectSpec>) -> ObjectNames {
        ObjectNames { prefix: prefix.to_string(), naming: spec.map(|o| o.naming.clone()).unwrap_or_default() }
    }

    /// Appends the name of object `key` to `out`.
    pub fn write(&self, key: u64, out: &mut String) {
        use std::fmt::Write;
        out.push_str(&self.prefix);
        match &self.naming {
            Naming::Numbered => {
                let _ = write!(out, "{key}");
            }
            Naming::FioBlocks { block, jobnum: None, .. } => {
                let _ = write!(out, "_{}_{block}", key * block);
            }
            Naming::FioBlocks { block, workers, jobnum: Some(tail) } => {
                let w = (*workers).max(1) as u64;
                let _ = write!(out, "{}{tail}_{}_{block}", key % w, key / w * block);
            }
        }
    }

    pub fn name(&self, key: u64) -> String {
        let mut s = String::with_capacity(self.prefix.len() + 24);
        self.write(key, &mut s);
        s
    }
}

impl Default for ObjectSpec {
    fn default() -> Self {
        ObjectSpec {
            count: 1024,
            sizes: ObjectSizes::Classes { split: SizeSplit::fixed(4 << 20) },
            prefix: None,
            mix: Vec::new(),
            op_len: None,
            prefill: false,
            initial: None,
            exist: false,
            cleanup: None,
            naming: Naming::Numbered,
        }
    }
}

impl ObjectSpec {
    /// The weights in effect: the explicit mix, or the one `rw` implies.
    pub fn effective_mix(&self, read_pct: f64) -> Vec<(OpKind, u32)> {
        if !self.mix.is_empty() {
            return self.mix.clone();
        }
        let reads = read_pct.round() as u32;
        [(OpKind::Read, reads), (OpKind::Create, 100 - reads.min(100))].into_iter().filter(|e| e.1 > 0).collect()
    }

    /// The largest single transfer (buffer size per slot).
    pub fn max_transfer(&self, read_pct: f64) -> u64 {
        let whole = self.sizes.max();
        match self.op_len {
            // Prefill, create and update move whole objects.
            Some((_, max))
                if !self.prefill && !self.effective_mix(read_pct).iter().any(|m| matches!(m.0, OpKind::Create | OpKind::Update)) =>
            {
                max.min(whole)
            }
            _ => whole,
        }
    }

    pub fn cleans_up(&self) -> bool {
        self.cleanup.unwrap_or(!self.exist)
    }

    pub fn prefix_for(&self, job: &str) -> String {
        self.prefix.clone().unwrap_or_else(|| format!("storbench.{job}."))
    }

    pub fn describe_mix(&self, read_pct: f64) -> String {
        self.effective_mix(read_pct).iter().map(|(o, w)| format!("{}:{w}", o.name())).collect::<Vec<_>>().join(",")
    }
}

/// An object's state before an operation changed it, kept while the
/// operation is in flight so that a failed change is undone in the model: a
/// create that failed leaves no object behind to be read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Prior {
    changed: bool,
    existed: bool,
    /// Its size as [`SizeMemo`] remembers it.
    size: u8,
}

impl Prior {
    /// The operation changed nothing the model keeps.
    const NONE: Prior = Prior { changed: false, existed: false, size: 0 };
}

/// How an operation ended, as far as the object model is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    Done,
    /// The object was not there.
    NotFound,
    /// Any other failure.
    Failed,
    /// It failed, but the store may have carried it out: the connection
    /// broke or timed out after the request went out. The model undoes the
    /// change; a new object is still removed at cleanup, in case it exists.
    Unknown,
}

/// Operations that change an object (and so may need undoing).
#[inline]
fn changes(op: OpKind) -> bool {
    matches!(op, OpKind::Create | OpKind::Update | OpKind::Write | OpKind::Delete)
}

/// What the model remembers of each object's size: at most a byte an
/// object (a 4-byte length per object was 400 MB at 10^8 objects). A byte
/// of 0 means not known (objects an earlier run left).
#[derive(Clone, Debug)]
enum SizeMemo {
    /// Every object has this size: nothing kept.
    One(u64),
    /// Weighted sizes: the 1-based entry each object was written with.
    Classes { sizes: Vec<u64>, cumulative: Vec<u64>, tags: Vec<u8> },
    /// A range: each write makes a new version (1..=254), the size a hash
    /// of key and version; 255 is the largest size (a partial write's new object).
    Range { min: u64, max: u64, seed: u64, tags: Vec<u8> },
}

const LARGEST: u8 = u8::MAX;

impl SizeMemo {
    fn new(sizes: &ObjectSizes, n: u64, seed: u64) -> SizeMemo {
        match sizes {
            _ if sizes.fixed().is_some() => SizeMemo::One(sizes.fixed().unwrap_or(0)),
            ObjectSizes::Classes { split } => {
                let mut acc = 0;
                let cumulative = split.0.iter().map(|e| {
                    acc += e.1 as u64;
                    acc
                });
                SizeMemo::Classes {
                    sizes: split.0.iter().map(|e| e.0).collect(),
                    cumulative: cumulative.collect(),
                    tags: vec![0; n as usize],
                }
            }
            ObjectSizes::Range { min, max } => SizeMemo::Range { min: *min, max: *max, seed, tags: vec![0; n as usize] },
        }
    }

    #[inline]
    fn size(&self, k: u64) -> u64 {
        match self {
            SizeMemo::One(s) => *s,
            SizeMemo::Classes { sizes, tags, .. } => match tags[k as usize] {
                0 => 0,
                t => sizes[t as usize - 1],
            },
            SizeMemo::Range { min, max, seed, tags } => match tags[k as usize] {
                0 => 0,
                LARGEST => *max,
                t => min + crate::rng::mix64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ t as u64) % (max - min + 1),
            },
        }
    }

    /// A whole write of `k`: its new size.
    fn draw(&mut self, k: u64, rng: &mut Rng) -> u64 {
        match self {
            SizeMemo::One(s) => return *s,
            SizeMemo::Classes { cumulative, tags, .. } => {
                let x = rng.below(*cumulative.last().unwrap_or(&1));
                let i = cumulative.iter().position(|c| x < *c).unwrap_or(cumulative.len() - 1);
                tags[k as usize] = i as u8 + 1;
            }
            SizeMemo::Range { tags, .. } => {
                let t = &mut tags[k as usize];
                *t = *t % (LARGEST - 1) + 1;
            }
        }
        self.size(k)
    }

    /// `k` was made by a partial write: as large as objects get.
    fn largest(&mut self, k: u64) {
        match self {
            SizeMemo::One(_) => {}
            SizeMemo::Classes { sizes, tags, .. } => {
                let i = sizes.iter().enumerate().max_by_key(|e| *e.1).map_or(0, |e| e.0);
                tags[k as usize] = i as u8 + 1;
            }
            SizeMemo::Range { tags, .. } => tags[k as usize] = LARGEST,
        }
    }

    fn tag(&self, k: u64) -> u8 {
        match self {
            SizeMemo::One(_) => 0,
            SizeMemo::Classes { tags, .. } | SizeMemo::Range { tags, .. } => tags[k as usize],
        }
    }

    fn restore(&mut self, k: u64, tag: u8) {
        if let SizeMemo::Classes { tags, .. } | SizeMemo::Range { tags, .. } = self {
            tags[k as usize] = tag;
        }
    }
}

/// Generates the object operations of one worker.
#[derive(Clone, Debug)]
pub struct ObjGen {
    rng: Rng,
    ops: Vec<OpKind>,
    cumulative: Vec<u64>,
    total_weight: u64,
    op_len: Option<(u64, u64)>,
    sequential: bool,
    popularity: BlockSampler,
    workers: u64,
    worker: u64,
    /// Keys this worker owns.
    n: u64,
    exists: Bits,
    /// Sizes of existing objects, when they vary.
    object_size: SizeMemo,
    live: u64,
    create_cursor: u64,
    /// Where cleanup goes on looking for objects to remove.
    cleanup_cursor: u64,
    seq_cursor: u64,
    /// Sequential partial I/O: the object being walked and the offset reached.
    walk: Option<(u64, u64)>,
    fill_cursor: u64,
    /// Keys the prefill writes (all, or this worker's share of `initial`).
    fill_limit: u64,
    bytes_left: Option<u64>,
    ops_left: Option<u64>,
    /// Keep operations on one object apart (see [`ObjGen::exclusive`]).
    exclusive: bool,
    /// Local keys with an operation in flight (at most the queue depth).
    busy: Vec<u64>,
    /// Size classes ([`ObjectSizes::classes`]); empty: none.
    classes: Vec<u64>,
    /// Changes in flight (creates, updates, writes, deletes), oldest first:
    /// the local key and the object's state before, to undo a failure.
    pending: Vec<(u64, Prior)>,
    /// The state before the change the operation being built makes.
    staged: Prior,
    /// Keys a create may have written although it failed ([`Settled::Unknown`]).
    uncertain: Vec<u64>,
}

impl ObjGen {
    /// `workers` share the job's keys; `io_limit` is the byte budget and
    /// `op_limit` the operation budget of this worker.
    pub fn new(spec: &JobSpec, worker: u32, io_limit: Option<u64>, op_limit: Option<u64>) -> ObjGen {
        let o = spec.objects.clone().unwrap_or_default();
        let workers = spec.numjobs.max(1) as u64;
        let worker = worker as u64;
        let n = (o.count / workers + u64::from(worker < o.count % workers)).max(1);
        let mix = o.effective_mix(spec.read_percent());
        let mut acc = 0;
        let cumulative = mix.iter().map(|m| {
            acc += m.1 as u64;
            acc
        });
        let cumulative: Vec<u64> = cumulative.collect();
        let mut rng = Rng::new(spec.seed ^ (worker + 1).wrapping_mul(0xA24B_AED4_963E_E407));
        let popularity = BlockSampler::new(&spec.distribution, n, &mut rng);
        ObjGen {
            rng,
            ops: mix.iter().map(|m| m.0).collect(),
            total_weight: acc.max(1),
            cumulative,
            op_len: o.op_len,
            sequential: !spec.rw.is_random(),
            popularity,
            workers,
            worker,
            n,
            exists: Bits::new(n, o.exist),
            object_size: SizeMemo::new(&o.sizes, n, spec.seed ^ worker),
            live: if o.exist { n } else { 0 },
            create_cursor: 0,
            cleanup_cursor: 0,
            seq_cursor: 0,
            walk: None,
            fill_cursor: 0,
            fill_limit: o.initial.map_or(n, |i| (i / workers + u64::from(worker < i % workers)).min(n)),
            bytes_left: io_limit,
            ops_left: op_limit,
            exclusive: false,
            busy: Vec::new(),
            classes: o.sizes.classes(),
            pending: Vec::new(),
            staged: Prior::NONE,
            uncertain: Vec::new(),
        }
    }

    /// For stores that do not keep the order of operations on one object
    /// (HTTP): never issue an operation on an object another one is still in
    /// flight on, or a read could overtake the create before it (a false
    /// 404). The worker reports completions through [`ObjGen::completed`].
    /// When every candidate is busy (key space not much larger than the queue
    /// depth) the operation goes ahead anyway.
    pub fn exclusive(&mut self, on: bool) {
        self.exclusive = on;
    }

    /// An operation `op` on `key` (as in `NextIo::file`) of [`Iterator::next`]
    /// ended. Its object is free again (exclusive mode), and a change that
    /// failed is undone: the object is as it was before (a failed delete of a
    /// missing object leaves it missing). Changes to one object complete in
    /// the order they were issued (ordered stores) or one at a time
    /// (exclusive mode), so the oldest pending change of the key is this one.
    /// Listings name no object and were never marked busy.
    #[inline]
    pub fn completed(&mut self, op: OpKind, key: u32, settled: Settled) {
        if op == OpKind::List {
            return;
        }
        let local = (key as u64).saturating_sub(self.worker) / self.workers;
        if self.exclusive {
            if let Some(i) = self.busy.iter().position(|b| *b == local) {
                self.busy.swap_remove(i);
            }
        }
        if !changes(op) {
            return;
        }
        let Some(i) = self.pending.iter().position(|p| p.0 == local) else { return };
        let (_, prior) = self.pending.remove(i);
        if settled == Settled::Done || (op == OpKind::Delete && settled == Settled::NotFound) {
            return;
        }
        if settled == Settled::Unknown && op != OpKind::Delete && !prior.existed && !self.uncertain.contains(&local) {
            self.uncertain.push(local);
        }
        self.undo(local, prior);
    }

    /// A change to `k` that did not happen: `k` is as it was before it. If a
    /// later change to `k` is still in flight, that one now changes what was
    /// there before the failed one (the state to return to if it fails too).
    fn undo(&mut self, k: u64, prior: Prior) {
        if !prior.changed {
            return;
        }
        if let Some(next) = self.pending.iter_mut().find(|p| p.0 == k) {
            next.1 = prior;
            return;
        }
        self.mark(k, prior.existed);
        self.object_size.restore(k, prior.size);
    }

    /// Note object `k` as it is now, before the change being built.
    fn stage(&mut self, k: u64) {
        self.staged = Prior { changed: true, existed: self.exists.get(k), size: self.object_size.tag(k) };
    }

    #[inline]
    fn is_busy(&self, k: u64) -> bool {
        self.exclusive && self.busy.contains(&k)
    }

    /// `k`, or the next key with the same existence that is not busy; `None`
    /// if every such key is busy.
    fn not_busy(&self, k: u64, exists: bool) -> Option<u64> {
        if !self.is_busy(k) {
            return Some(k);
        }
        let mut c = k;
        for _ in 0..=self.busy.len() {
            match self.exists.next(c + 1, exists) {
                Some(n) if !self.is_busy(n) => return Some(n),
                Some(n) if n != k => c = n,
                _ => break,
            }
        }
        None
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Objects of this worker that exist now.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// The next object to write before the measured phase, if any is missing.
    pub fn prefill_next(&mut self) -> Option<NextIo> {
        let k = self.exists.next(self.fill_cursor, false)?;
        if k < self.fill_cursor || k >= self.fill_limit {
            return None;
        }
        self.fill_cursor = k + 1;
        Some(self.write_whole(OpKind::Create, k))
    }

    /// A delete of [`ObjGen::cleanup_next`] failed: object `key` (as in
    /// `NextIo::file`) is still there.
    pub fn delete_failed(&mut self, key: u32) {
        let local = (key as u64).saturating_sub(self.worker) / self.workers;
        self.mark(local, true);
    }

    /// The next object to remove when the run ends: objects that exist,
    /// then those a failed create may have left.
    pub fn cleanup_next(&mut self) -> Option<NextIo> {
        let k = if self.live > 0 {
            // From where the last removal was, not from key 0: a scan from 0
            // made cleanup quadratic in the object count (1M objects: 11 s).
            // The search wraps, so a key put back by a failed delete is found.
            let k = self.exists.next(self.cleanup_cursor, true)?;
            self.cleanup_cursor = k + 1;
            self.mark(k, false);
            k
        } else {
            self.uncertain.pop()?
        };
        Some(NextIo { op: OpKind::Delete, file: self.global(k), offset: 0, len: 0, whole: false, class: 0 })
    }

    /// Objects cleanup has still to remove: those that exist, and those a
    /// failed create may have left.
    pub fn left(&self) -> u64 {
        self.live + self.uncertain.iter().filter(|k| !self.exists.get(**k)).count() as u64
    }

    #[inline]
    fn pick_op(&mut self) -> OpKind {
        if self.ops.len() == 1 {
            return self.ops[0];
        }
        let x = self.rng.below(self.total_weight);
        let i = self.cumulative.iter().position(|c| x < *c).unwrap_or(self.ops.len() - 1);
        self.ops[i]
    }

    #[inline]
    fn global(&self, k: u64) -> u32 {
        (k * self.workers + self.worker) as u32
    }

    fn mark(&mut self, k: u64, exists: bool) {
        if self.exists.get(k) != exists {
            self.exists.put(k, exists);
            if exists {
                self.live += 1;
            } else {
                self.live -= 1;
            }
        }
    }

    /// A new object; once every key exists, a replacement, counted as an update.
    fn create(&mut self) -> NextIo {
        match self.exists.next(self.create_cursor, false).and_then(|k| self.not_busy(k, false)) {
            Some(k) => {
                self.create_cursor = k + 1;
                self.write_whole(OpKind::Create, k)
            }
            None => {
                let k = self.existing().unwrap_or(0);
                self.write_whole(OpKind::Update, k)
            }
        }
    }

    fn write_whole(&mut self, op: OpKind, k: u64) -> NextIo {
        self.stage(k);
        let len = self.object_size.draw(k, &mut self.rng);
        self.mark(k, true);
        NextIo { op, file: self.global(k), offset: 0, len: len as u32, whole: false, class: 0 }
    }

    /// A read or write of an existing object: whole, or a range of it. In
    /// sequential jobs ranges walk each object from start to end (as fio's
    /// rados engine does), then move to the next object.
    fn partial(&mut self, op: OpKind) -> NextIo {
        let Some((min, max)) = self.op_len else {
            let k = self.target(op);
            return NextIo { op, file: self.global(k), offset: 0, len: self.size_of(k) as u32, whole: true, class: 0 };
        };
        let len_drawn = if min == max { min } else { min + self.rng.below(max - min + 1) };
        let (k, offset, len) = match self.walk.filter(|_| self.sequential) {
            Some((k, off)) if off < self.size_of(k) && self.exists.get(k) => {
                let len = len_drawn.min(self.size_of(k) - off);
                (k, off, len)
            }
            _ => {
                let k = self.target(op);
                let size = self.size_of(k);
                let len = len_drawn.min(size);
                let off = if self.sequential { 0 } else { self.rng.below(size - len + 1) };
                (k, off, len)
            }
        };
        if self.sequential {
            self.walk = Some((k, offset + len));
        }
        NextIo { op, file: self.global(k), offset, len: len as u32, whole: false, class: 0 }
    }

    /// The object a read or partial write goes to. Reads go to existing objects;
    /// with nothing written yet, to a key that does not exist, so they fail as
    /// the storage reports it (ENOENT), never as a fake success. Partial writes
    /// go where the key order or popularity says and create missing objects
    /// (staged, so a failed write can be undone).
    fn target(&mut self, op: OpKind) -> u64 {
        if op != OpKind::Write {
            return self.existing().unwrap_or(0);
        }
        let k = if self.sequential {
            let k = self.seq_cursor;
            self.seq_cursor = (k + 1) % self.n;
            k
        } else {
            self.popularity.sample(&mut self.rng)
        };
        if self.exists.get(k) {
            return k;
        }
        self.stage(k);
        self.object_size.largest(k);
        self.mark(k, true);
        k
    }

    fn delete(&mut self) -> NextIo {
        let k = self.existing().unwrap_or(0);
        self.stage(k);
        self.mark(k, false);
        NextIo { op: OpKind::Delete, file: self.global(k), offset: 0, len: 0, whole: false, class: 0 }
    }

    /// An existing key: in order for sequential jobs, else by popularity (the
    /// nearest existing key after the one drawn, when that one is gone).
    fn existing(&mut self) -> Option<u64> {
        if self.live == 0 {
            return None;
        }
        let from = if self.sequential { self.seq_cursor } else { self.popularity.sample(&mut self.rng) };
        let k = if self.exists.get(from % self.n) { from % self.n } else { self.exists.next(from, true)? };
        // Only when every existing object is busy do two operations overlap.
        let k = self.not_busy(k, true).unwrap_or(k);
        if self.sequential {
            self.seq_cursor = (k + 1) % self.n;
        }
        Some(k)
    }

    /// 1-based class of object `k`, 0 if the job has none or `k`'s size is
    /// not known (objects an earlier run left).
    #[inline]
    fn class_of(&self, k: u64) -> u8 {
        if self.classes.is_empty() {
            return 0;
        }
        let size = self.size_of(k);
        self.classes.iter().position(|c| *c == size).map_or(0, |i| i as u8 + 1)
    }

    fn size_of(&self, k: u64) -> u64 {
        self.object_size.size(k)
    }
}

impl Iterator for ObjGen {
    type Item = NextIo;

    /// The next measured operation, or `None` once a budget is spent.
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        if self.ops_left == Some(0) {
            return None;
        }
        let op = self.pick_op();
        self.staged = Prior::NONE;
        let mut io = match op {
            OpKind::Create => self.create(),
            OpKind::Update => match self.existing() {
                Some(k) => self.write_whole(OpKind::Update, k),
                None => self.create(),
            },
            OpKind::Read | OpKind::Write => self.partial(op),
            OpKind::Delete => self.delete(),
            OpKind::Stat => {
                let k = self.existing().unwrap_or(0);
                NextIo { op, file: self.global(k), offset: 0, len: 0, whole: false, class: 0 }
            }
            OpKind::List | OpKind::Sync | OpKind::Trim | OpKind::Truncate => {
                NextIo { op, file: 0, offset: 0, len: 0, whole: false, class: 0 }
            }
        };
        if let Some(left) = self.bytes_left.as_mut() {
            if *left < io.len as u64 {
                // Not issued: the change it made to the model is taken back.
                if changes(io.op) {
                    let local = (io.file as u64 - self.worker) / self.workers;
                    self.undo(local, self.staged);
                }
                return None;
            }
            *left -= io.len as u64;
        }
        if let Some(left) = self.ops_left.as_mut() {
            *left -= 1;
        }
        if io.op != OpKind::List {
            let local = (io.file as u64 - self.worker) / self.workers;
            io.class = self.class_of(local);
            if self.exclusive {
                self.busy.push(local);
            }
            if changes(io.op) {
                self.pending.push((local, self.staged));
            }
        }
        Some(io)
    }
}

#[cfg(test)]
mod tests {
    use super::Settled;
    use super::*;

    #[test]
    fn sizes_take_a_byte_an_object_and_come_back_the_same() {
        let mut rng = Rng::new(3);
        let mut r = SizeMemo::new(&ObjectSizes::Range { min: 4096, max: 1 << 20 }, 1000, 9);
        let first: Vec<u64> = (0..1000).map(|k| r.draw(k, &mut rng)).collect();
        assert!(first.iter().all(|s| (4096..=1 << 20).contains(s)));
        assert_eq!((0..1000).map(|k| r.size(k)).collect::<Vec<_>>(), first, "a size is kept, not drawn again");
        let distinct: std::collections::HashSet<_> = first.iter().collect();
        assert!(distinct.len() > 900, "spread over the range");
        let before = r.tag(5);
        let again = r.draw(5, &mut rng);
        assert_ne!(r.tag(5), before, "a rewrite is a new version");
        r.restore(5, before);
        assert_eq!(r.size(5), first[5], "undone, the old size is back");
        assert_ne!(again, 0);
        for _ in 0..600 {
            r.draw(7, &mut rng);
            assert!(r.tag(7) != 0 && r.tag(7) != LARGEST, "versions never reach 'unknown' or 'largest'");
        }
        r.largest(8);
        assert_eq!(r.size(8), 1 << 20);
        let split = SizeSplit(vec![(4096, 70), (1 << 20, 30)]);
        let mut c = SizeMemo::new(&ObjectSizes::Classes { split }, 10_000, 1);
        let big = (0..10_000).filter(|k| c.draw(*k, &mut rng) == 1 << 20).count();
        assert!((2700..3300).contains(&big), "30% of 10,000: {big}");
        assert_eq!(c.size(0), c.size(0));
        let n = SizeMemo::new(&ObjectSizes::Classes { split: SizeSplit::fixed(8192) }, 10, 1);
        assert!(matches!(n, SizeMemo::One(8192)), "one size keeps nothing");
    }

    fn spec(pairs: &[(&str, &str)]) -> JobSpec {
        crate::options::spec_from(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn names_are_numbered_or_fio_blocks_per_file_or_per_worker() {
        let numbered = ObjectNames { prefix: "p.".into(), naming: Naming::Numbered };
        assert_eq!(numbered.name(12), "p.12");
        let shared = ObjectNames { prefix: "k/e.y".into(), naming: Naming::FioBlocks { block: 4096, workers: 2, jobnum: None } };
        assert_eq!(shared.name(3), "k/e.y_12288_4096");
        let own = ObjectNames { prefix: "b.".into(), naming: Naming::FioBlocks { block: 4096, workers: 2, jobnum: Some(".x".into()) } };
        assert_eq!(
            (own.name(0), own.name(1), own.name(2), own.name(5)),
            ("b.0.x_0_4096".into(), "b.1.x_0_4096".into(), "b.0.x_4096_4096".into(), "b.1.x_8192_4096".into())
        );
    }

    #[test]
    fn bits_find_the_next_set_or_clear_bit_with_wrap() {
        let mut b = Bits::new(130, false);
        assert_eq!(b.next(5, false), Some(5));
        assert_eq!(b.next(5, true), None);
        b.put(3, true);
        b.put(129, true);
        assert_eq!(b.next(4, true), Some(129));
        assert_eq!(b.next(0, true), Some(3));
        let full = Bits::new(130, true);
        assert_eq!(full.next(77, false), None);
        assert!(full.get(129));
    }

    #[test]
    fn every_operation_on_an_object_carries_that_objects_size_class() {
        let s = spec(&[
            ("objects", "64"),
            ("object_size", "4k/70:1m/20:64k/10"),
            ("object_ops", "create:2,read:3,stat:1,delete:1,update:1,list:1"),
            ("numjobs", "2"),
        ]);
        assert_eq!(s.objects.as_ref().unwrap().sizes.classes(), vec![4096, 65536, 1 << 20]);
        let mut g = ObjGen::new(&s, 1, None, None);
        let mut known: std::collections::HashMap<u32, u64> = Default::default();
        let mut seen = [0u32; 4];
        for _ in 0..5000 {
            let io = g.next().unwrap();
            match io.op {
                OpKind::List => assert_eq!(io.class, 0),
                OpKind::Create | OpKind::Update => {
                    known.insert(io.file, io.len as u64);
                }
                _ => {}
            }
            if let (true, Some(size)) = (io.op != OpKind::List, known.get(&io.file)) {
                let want = [4096u64, 65536, 1 << 20].iter().position(|c| c == size).unwrap() as u8 + 1;
                assert_eq!(io.class, want, "{io:?}");
            }
            seen[io.class as usize] += 1;
        }
        assert!(seen[1] > seen[3] && seen[3] > seen[2] && seen[2] > 0, "{seen:?}");
        let one = spec(&[("objects", "8"), ("object_size", "4k-1m")]);
        assert!(one.objects.unwrap().sizes.classes().is_empty());
    }

    #[test]
    fn cleanup_removes_every_object_once_and_finds_one_a_failed_delete_put_back() {
        let s = spec(&[("objects", "1000"), ("object_size", "4k"), ("rw", "read")]);
        let mut g = ObjGen::new(&s, 0, None, None);
        while g.prefill_next().is_some() {}
        let mut gone: Vec<u32> = (0..500).map(|_| g.cleanup_next().unwrap().file).collect();
        g.delete_failed(10);
        gone.extend(std::iter::from_fn(|| g.cleanup_next()).map(|io| io.file));
        assert_eq!(gone.len(), 1001, "every key once, and key 10 again");
        assert_eq!(gone.last(), Some(&10), "found after the search wraps");
        assert_eq!(g.live(), 0);
    }

    #[test]
    fn prefill_writes_each_owned_key_once_and_cleanup_removes_them() {
        let s = spec(&[("objects", "10"), ("object_size", "64k"), ("numjobs", "3"), ("rw", "randread")]);
        let mut g = ObjGen::new(&s, 1, None, None);
        let keys: Vec<u32> = std::iter::from_fn(|| g.prefill_next()).map(|io| io.file).collect();
        assert_eq!(keys, vec![1, 4, 7]);
        assert_eq!(g.live(), 3);
        let reads: Vec<NextIo> = (0..50).map(|_| g.next().unwrap()).collect();
        assert!(reads.iter().all(|io| io.op == OpKind::Read && io.len == 65536 && io.file % 3 == 1));
        let gone: Vec<u32> = std::iter::from_fn(|| g.cleanup_next()).map(|io| io.file).collect();
        assert_eq!(gone.len(), 3);
        assert_eq!(g.live(), 0);
    }

    #[test]
    fn mix_weights_are_followed_and_deletes_keep_state_true() {
        let s = spec(&[
            ("objects", "200"),
            ("object_size", "4k"),
            ("object_ops", "read:50,create:20,delete:20,stat:10"),
            ("rw", "randrw"),
            ("prefill", "1"),
        ]);
        let mut g = ObjGen::new(&s, 0, None, None);
        while g.prefill_next().is_some() {}
        let mut counts = std::collections::HashMap::new();
        let mut alive: std::collections::HashSet<u32> = (0..200).collect();
        for _ in 0..20_000 {
            let io = g.next().unwrap();
            *counts.entry(io.op).or_insert(0u32) += 1;
            match io.op {
                OpKind::Delete => assert!(alive.remove(&io.file), "deleted a missing object"),
                OpKind::Create => assert!(alive.insert(io.file), "created an existing object"),
                OpKind::Update => assert!(alive.contains(&io.file)),
                _ => assert!(alive.contains(&io.file), "{:?} of a missing object", io.op),
            }
        }
        assert_eq!(alive.len() as u64, g.live());
        let share = |op| counts.get(&op).copied().unwrap_or(0) as f64 / 20_000.0;
        assert!((share(OpKind::Read) - 0.5).abs() < 0.02);
        assert!((share(OpKind::Stat) - 0.1).abs() < 0.02);
        // Creates past a full key space become updates; the two together keep their weight.
        assert!((share(OpKind::Create) + share(OpKind::Update) - 0.2).abs() < 0.02);
    }

    #[test]
    fn ranges_stay_inside_objects_of_varying_size() {
        let s = spec(&[
            ("objects", "50"),
            ("object_size", "10k-100k"),
            ("object_op_size", "1k-8k"),
            ("object_ops", "read:1,write:1"),
            ("rw", "randrw"),
        ]);
        let mut g = ObjGen::new(&s, 0, None, None);
        let mut sizes = std::collections::HashMap::new();
        while let Some(io) = g.prefill_next() {
            assert!((10_240..=102_400).contains(&io.len));
            sizes.insert(io.file, io.len as u64);
        }
        for _ in 0..5000 {
            let io = g.next().unwrap();
            assert!((1024..=8192).contains(&io.len));
            assert!(io.offset + io.len as u64 <= sizes[&io.file]);
        }
    }

    #[test]
    fn sequential_reads_walk_the_keys_in_order_and_budgets_stop_the_job() {
        let s = spec(&[("objects", "5"), ("object_size", "1m"), ("rw", "read"), ("objects_exist", "1")]);
        let mut g = ObjGen::new(&s, 0, Some(7 << 20), None);
        let keys: Vec<u32> = std::iter::from_fn(|| g.next()).map(|io| io.file).collect();
        assert_eq!(keys, vec![0, 1, 2, 3, 4, 0, 1]);
        let mut g = ObjGen::new(&s, 0, None, Some(3));
        assert_eq!(std::iter::from_fn(|| g.next()).count(), 3);
    }

    #[test]
    fn sequential_ranges_walk_each_object_then_the_next() {
        let s = spec(&[("objects", "2"), ("object_size", "10k"), ("object_op_size", "4k"), ("object_ops", "write"), ("rw", "write")]);
        let mut g = ObjGen::new(&s, 0, None, None);
        let first = g.next().unwrap();
        assert_eq!((first.file, first.offset, first.len), (0, 0, 4096));
        assert_eq!(g.live(), 1, "the partial write created object 0, and cleanup knows it");
        while g.prefill_next().is_some() {}
        let got: Vec<(u32, u64, u32)> = (0..4).map(|_| g.next().unwrap()).map(|io| (io.file, io.offset, io.len)).collect();
        assert_eq!(got, vec![(0, 4096, 4096), (0, 8192, 2048), (1, 0, 4096), (1, 4096, 4096)]);
    }

    #[test]
    fn exclusive_mode_never_overlaps_operations_on_one_object() {
        let s =
            spec(&[("objects", "1000"), ("object_size", "4k"), ("object_ops", "read:40,create:20,update:20,delete:20"), ("rw", "randrw")]);
        let mut g = ObjGen::new(&s, 0, None, None);
        g.exclusive(true);
        while g.prefill_next().is_some() {}
        let mut in_flight: std::collections::VecDeque<u32> = Default::default();
        for _ in 0..20_000 {
            let io = g.next().unwrap();
            assert!(!in_flight.contains(&io.file), "{:?} on {} while another op is in flight", io.op, io.file);
            in_flight.push_back(io.file);
            if in_flight.len() == 16 {
                g.completed(OpKind::Read, in_flight.pop_front().unwrap(), Settled::Done);
            }
        }
    }

    #[test]
    fn initial_objects_prefill_a_share_and_leave_keys_for_creates() {
        let s = spec(&[("objects", "100"), ("initial_objects", "30"), ("object_size", "0-4k"), ("numjobs", "2"), ("object_ops", "create")]);
        let mut g = ObjGen::new(&s, 1, None, None);
        assert_eq!(std::iter::from_fn(|| g.prefill_next()).count(), 15);
        let io = g.next().unwrap();
        assert_eq!((io.op, io.file), (OpKind::Create, 31), "the first free key after the prefilled ones");
        assert!(io.len <= 4096);
    }

    #[test]
    fn a_finished_listing_frees_no_object() {
        let s = spec(&[("objects", "100"), ("object_size", "4k"), ("object_ops", "delete"), ("rw", "write"), ("objects_exist", "1")]);
        let mut g = ObjGen::new(&s, 0, None, None);
        g.exclusive(true);
        let first = g.next().unwrap();
        assert_eq!((first.op, first.file), (OpKind::Delete, 0));
        g.completed(OpKind::List, 0, Settled::Done);
        assert!(g.is_busy(0), "the delete of object 0 is still in flight");
        g.completed(OpKind::Delete, 0, Settled::Done);
        assert!(!g.is_busy(0));
    }

    #[test]
    fn a_failed_create_leaves_no_object_to_read_and_a_failed_delete_leaves_it() {
        let s = spec(&[("objects", "64"), ("object_size", "4k/50:8k/50"), ("object_ops", "create:1,read:2,delete:1"), ("rw", "randrw")]);
        let mut g = ObjGen::new(&s, 0, None, None);
        g.exclusive(true);
        let mut alive: std::collections::HashMap<u32, u32> = Default::default();
        for i in 0..20_000 {
            let io = g.next().unwrap();
            let settled = match io.op {
                // Every third create fails, and one delete in five (not with 404).
                OpKind::Create | OpKind::Update if i % 3 == 0 => Settled::Failed,
                OpKind::Create | OpKind::Update => {
                    alive.insert(io.file, io.len);
                    Settled::Done
                }
                OpKind::Delete if alive.is_empty() => Settled::NotFound,
                OpKind::Delete if i % 5 == 0 => Settled::Failed,
                OpKind::Delete => {
                    assert!(alive.remove(&io.file).is_some(), "delete of a missing object");
                    Settled::Done
                }
                // With nothing written, reads and deletes go to a missing key
                // on purpose (they fail as the storage reports it); otherwise never.
                OpKind::Read if alive.is_empty() => Settled::NotFound,
                OpKind::Read => {
                    assert_eq!(alive.get(&io.file), Some(&io.len), "a read of an object that is not there (or not that size)");
                    Settled::Done
                }
                op => panic!("{op:?}"),
            };
            g.completed(io.op, io.file, settled);
        }
        assert_eq!(g.live(), alive.len() as u64, "cleanup removes exactly the objects there are");
    }

    #[test]
    fn an_operation_the_byte_budget_stops_changes_nothing() {
        let s = spec(&[("objects", "10"), ("object_size", "4m"), ("object_ops", "create"), ("rw", "write")]);
        let mut g = ObjGen::new(&s, 0, Some(10 << 20), None);
        let made = std::iter::from_fn(|| g.next()).count();
        assert_eq!((made, g.live()), (2, 2), "two 4 MiB creates fit in 10 MiB; the third was not issued and left no object");
    }

    #[test]
    fn a_failed_change_hands_its_prior_state_to_the_next_change_in_flight() {
        let s = spec(&[("objects", "1"), ("object_size", "4k"), ("object_ops", "create"), ("rw", "write")]);
        for second_fails in [false, true] {
            let mut g = ObjGen::new(&s, 0, None, None);
            // An ordered store: a create of key 0 and, the key space being
            // full, an update of it, both in flight.
            let ops: Vec<OpKind> = (0..2).map(|_| g.next().unwrap().op).collect();
            assert_eq!(ops, [OpKind::Create, OpKind::Update]);
            g.completed(OpKind::Create, 0, Settled::Failed);
            assert_eq!(g.live(), 1, "the update in flight still writes the object");
            g.completed(OpKind::Update, 0, if second_fails { Settled::Failed } else { Settled::Done });
            assert_eq!(g.live(), u64::from(!second_fails), "the object exists exactly when one of the writes succeeded");
        }
    }

    #[test]
    fn a_create_whose_connection_broke_is_not_read_but_is_still_removed_at_cleanup() {
        let s = spec(&[("objects", "4"), ("object_size", "4k"), ("object_ops", "create"), ("rw", "write")]);
        let mut g = ObjGen::new(&s, 0, None, None);
        for key in 0..3 {
            assert_eq!(g.next().unwrap().file, key);
        }
        g.completed(OpKind::Create, 0, Settled::Done);
        g.completed(OpKind::Create, 1, Settled::Unknown);
        g.completed(OpKind::Create, 2, Settled::Failed);
        assert_eq!((g.live(), g.left()), (1, 2), "key 1 may exist, key 2 surely does not");
        let deletes: Vec<u32> = std::iter::from_fn(|| g.cleanup_next()).map(|io| io.file).collect();
        assert_eq!(deletes, [0, 1]);
        assert_eq!(g.left(), 0);
        g.delete_failed(1);
        assert_eq!(g.left(), 1, "a delete that failed leaves its object counted");
    }

    #[test]
    fn hot_set_concentrates_reads() {
        let s = spec(&[
            ("objects", "1000"),
            ("object_size", "4k"),
            ("rw", "randread"),
            ("objects_exist", "1"),
            ("random_distribution", "hotset:90/10"),
        ]);
        let mut g = ObjGen::new(&s, 0, None, None);
        let hot = (0..10_000).filter(|_| g.next().unwrap().file < 100).count();
        assert!((8_700..=9_300).contains(&hot), "{hot}");
    }
}
