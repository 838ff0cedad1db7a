//! Verification under load: which generation of each unit is the right
//! one, and the worker's side of stamping writes and judging reads.
//!
//! A [`BlockTable`] keeps one 64-bit word per unit of a target, shared by
//! every worker and job of the run that verifies that target (and kept in a
//! file with `verify_state`, so a later run, after a crash too, checks
//! exactly what was acknowledged). A word holds the newest acknowledged
//! generation, how far back concurrent writes make older ones right too,
//! and how many writes are in flight. The rules that keep it free of false
//! failures under full concurrency:
//! - a unit with a write in flight is never judged;
//! - writes to one unit that overlap in time may land in either order, so
//!   every generation of such a cluster is right once they are all done;
//! - a read is judged only if the unit's word did not change while it was in
//!   flight (else it may hold the old or the new data, rightly);
//! - a failed write, or one in flight when a run died, makes the unit
//!   unknown until the next write that completes.
//!
//! The generation counter is one per target, so a later write always has a
//! higher number: an intact unit older than the newest acknowledged write
//! is a lost write, not corruption.
//!
//! A job that keeps no `verify_state`, on a target nothing of its run writes
//! before or beside it, has no table to judge by: each unit it reads is
//! judged by its own header
//! (`by_header`): checksum, and the offset the header names against where
//! it was read; no header is a missing unit, fio's header is checked as fio
//! would. Which generation should be there cannot be told, so a lost write
//! is not judged then.

use crate::problem::Problem;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use storbench_metrics::{ErrorKind, IoFailure};
use storbench_metrics::{VerifyFailure, VerifyKind, VerifyTally};
use storbench_model::protocol::JobShare;
use storbench_model::target::Targets;
use storbench_workload::rng::Rng;
use storbench_workload::verify::fio::{self, FioFound};
use storbench_workload::verify::{self as format, Checksum, Found, Stamp, VerifySpec};
use storbench_workload::{NextIo, OpKind};
use table::{began, ended, expect, pieces, removed, BlockTable, Expect};
pub use table::{state_path, VerifyTables};

mod objects;
mod table;

/// The read-back pass reads in pieces of up to this many bytes (whole units).
pub const READ_BACK_BYTES: u64 = 256 << 10;

/// The largest read a verifying job's read-back makes (its slots are that
/// large); `None` for a job that does not verify.
pub fn read_back_len(spec: &storbench_workload::JobSpec) -> Option<u64> {
    spec.verify.is_some().then(|| spec.max_transfer().max(READ_BACK_BYTES))
}

/// What a job verifies, as (label, usable bytes): worker `w`'s files or
/// volumes in the order its I/O numbers them, or (`None`) every worker's.
fn verified_targets(share: &JobShare, worker: Option<u32>) -> Result<Vec<(String, u64)>, Problem> {
    match &share.targets {
        Targets::Files(per_worker) => {
            let files = match worker {
                Some(w) => share.targets.files_of(w).to_vec(),
                None => per_worker.iter().flatten().cloned().collect(),
            };
            Ok(files.into_iter().map(|f| (f.path.display().to_string(), f.size)).collect())
        }
        Targets::Store(s) if s.size > 0 => Ok((0..s.units.max(1)).map(|u| (format!("{}#{u}", s.label), s.size)).collect()),
        // Objects: one word per key of the job's key space, named by store and prefix.
        Targets::Store(s) => match (&share.spec.objects, &share.object_prefix) {
            (Some(o), Some(prefix)) => Ok(vec![(format!("{} {prefix}", s.label), o.count)]),
            _ => Err(Problem::Input("verify: this job names no objects".into())),
        },
        _ => Err(Problem::Input("verify works on files, block devices and RBD images; objects are not verified yet".into())),
    }
}

/// Before anything runs: a verified job's unit fits its blocks, and any
/// state an earlier run kept for its targets is for the same target, unit
/// and phase.
pub fn check_job(share: &JobShare) -> Result<(), Problem> {
    let Some(v) = share.spec.verify.as_ref().filter(|v| v.checksum.is_some()) else { return Ok(()) };
    let grid = grid_of(share)?;
    let targets = verified_targets(share, None)?;
    let Some(dir) = &v.state else { return Ok(()) };
    for (label, size) in targets {
        table::check_saved(dir, &label, size, grid)?;
    }
    Ok(())
}

/// The unit a job's blocks are verified in (`verify_interval`, else its
/// smallest block; every block size, skip and stripe whole units) and the
/// phase its units are laid in: the job's offset past a whole number of
/// units, as fio verifies each block where it was written (its
/// cross-stripe-verify.fio writes 16k blocks from 120k).
pub fn grid_of(share: &JobShare) -> Result<(u32, u64), Problem> {
    if share.spec.objects.is_some() {
        return Ok((1, 0));
    }
    let unit = format::block_unit(&share.spec).map_err(Problem::Input)?;
    Ok((unit, share.region.start % unit as u64))
}

/// Whether a job's workers read each pass back before the next (see
/// [`Checker::verifies_each_pass`]).
pub fn each_pass(share: &JobShare) -> bool {
    let Some(v) = share.spec.verify.as_ref() else { return false };
    let alone = share.spec.offset_increment > 0 || share.workers <= 1;
    let after = v.after && !v.only && share.spec.writes();
    alone && after && v.backlog == 0 && share.spec.objects.is_none()
}

/// How a time-based job reads its passes back (see
/// [`Checker::time_based_passes`]).
pub fn time_based_passes(share: &JobShare, queued: bool) -> Option<bool> {
    (share.spec.time_based && each_pass(share)).then_some(queued)
}

/// A worker's side of verification: stamps its writes, judges its reads,
/// keeps its tally.
pub struct Checker {
    sum: Checksum,
    pattern: Option<Vec<u8>>,
    unit: u32,
    /// Where the job's unit 0 starts (see [`grid_of`]).
    phase: u64,
    job: u32,
    worker: u32,
    pub spec: VerifySpec,
    /// Per file (or volume) the worker's I/O names.
    tables: Vec<Arc<BlockTable>>,
    /// Per slot: the generation its write carries; the words its read saw.
    gens: Vec<u64>,
    snaps: Vec<u64>,
    per_slot: usize,
    /// Acknowledged writes waiting to be read back (`verify_backlog`).
    backlog: VecDeque<NextIo>,
    /// Per slot: its read came from the backlog (the next one issued does,
    /// when `next_from_backlog`).
    from_backlog: Vec<bool>,
    next_from_backlog: bool,
    draining: bool,
    writers: Arc<AtomicU32>,
    /// Counted among the job's writers until its measured phase ends.
    writing: bool,
    /// In the measured phase (only its writes are read back by `verify_backlog`).
    pub measuring: bool,
    /// Set at the first failure of a `verify_fatal` job.
    pub fatal: Option<String>,
    pub tally: VerifyTally,
    /// Objects rather than blocks: one word per key, contents from `object_bytes`.
    objects: Option<ObjectMode>,
    /// Judging by header: the last unit seen that was larger than the read
    /// holding its header (its other pieces are not judged either).
    inside: std::ops::Range<u64>,
}

/// What an object job's checker needs beside the blocks' fields.
struct ObjectMode {
    /// The read-back pass reads whole objects of up to this size.
    max_size: u64,
    /// Expected bytes are made here (never allocated in the loop).
    scratch: Vec<u8>,
    /// Keys a read found missing (the listing does not count them twice).
    missing: Vec<u64>,
}

impl Checker {
    /// The worker's checker, or `None` when its job does not verify.
    pub fn new(share: &JobShare, worker: u32, registry: &VerifyTables, qd: usize, slot_len: u64) -> Result<Option<Checker>, Problem> {
        let Some(spec) = share.spec.verify.as_ref().filter(|v| v.checksum.is_some()) else { return Ok(None) };
        let (unit, phase) = grid_of(share)?;
        let dir = spec.state.as_deref();
        let tables = verified_targets(share, Some(worker))?
            .into_iter()
            .map(|(label, size)| registry.table(&label, size, (unit, phase), dir))
            .collect::<Result<Vec<_>, _>>()?;
        let per_slot = if share.spec.objects.is_some() { 1 } else { (slot_len / unit as u64).max(1) as usize };
        // Counted until its measured phase ends: the job's read-back pass waits for every writer.
        let writers = registry.writers(share.job);
        let writing = share.spec.writes() && !spec.only;
        if writing {
            writers.fetch_add(1, Ordering::AcqRel);
        }
        Ok(Some(Checker {
            sum: spec.checksum.unwrap_or(Checksum::Crc32c),
            pattern: spec.pattern.as_deref().map(|p| format::unit_pattern(p, unit as usize)),
            unit,
            phase,
            job: share.job,
            worker,
            spec: spec.clone(),
            tables,
            gens: vec![0; qd],
            snaps: vec![0; qd * per_slot],
            per_slot,
            backlog: VecDeque::new(),
            from_backlog: vec![false; qd],
            next_from_backlog: false,
            draining: false,
            writers,
            writing,
            measuring: false,
            fatal: None,
            tally: VerifyTally::default(),
            objects: share.spec.objects.as_ref().map(|o| ObjectMode {
                max_size: o.sizes.max(),
                scratch: vec![0; slot_len as usize],
                missing: Vec::new(),
            }),
            inside: 0..0,
        }))
    }

    /// Make a write's buffer: every unit stamped with the write's generation.
    /// Not in flight yet: see [`Checker::issued`].
    #[inline]
    pub fn stamp(&mut self, buf: &mut [u8], io: &NextIo, slot: u32, rng: &mut Rng) {
        let t0 = std::time::Instant::now();
        if self.objects.is_some() {
            return self.stamp_object(buf, io, slot, t0);
        }
        let table = &self.tables[io.file as usize];
        let generation = table.next_generation();
        self.gens[slot as usize] = generation;
        let unit = self.unit as usize;
        for (k, chunk) in buf[..io.len as usize].chunks_exact_mut(unit).enumerate() {
            let offset = io.offset + (k * unit) as u64;
            let s = Stamp { offset, generation, seed: rng.next_u64(), job: self.job, worker: self.worker };
            format::stamp(chunk, &s, self.sum, self.pattern.as_deref());
        }
        self.tally.cpu_ns += t0.elapsed().as_nanos() as u64;
        self.tally.stamped_bytes += io.len as u64;
    }

    /// A whole object's version: its bytes from key and generation (a
    /// partial write is not stamped: it makes the object unknown).
    fn stamp_object(&mut self, buf: &mut [u8], io: &NextIo, slot: u32, t0: std::time::Instant) {
        if matches!(io.op, OpKind::Create | OpKind::Update) {
            let generation = self.tables[0].next_generation();
            self.gens[slot as usize] = generation;
            format::object_bytes(&mut buf[..io.len as usize], io.file as u64, generation, 0);
            self.tally.stamped_bytes += io.len as u64;
        }
        self.tally.cpu_ns += t0.elapsed().as_nanos() as u64;
    }

    /// The table and the words an operation covers: units of a block
    /// target, or the one word of an object's key.
    #[inline]
    fn span(&self, io: &NextIo) -> (usize, usize, usize) {
        match self.objects {
            Some(_) => (0, io.file as usize, 1),
            None => (io.file as usize, ((io.offset - self.phase) / self.unit as u64) as usize, (io.len / self.unit) as usize),
        }
    }

    /// An operation goes out: a write's units are in flight from now; a
    /// read remembers the words it will be judged against.
    #[inline]
    pub fn issued(&mut self, io: &NextIo, slot: u32) {
        let (t, first, n) = self.span(io);
        let table = &self.tables[t];
        if let Some(f) = self.from_backlog.get_mut(slot as usize) {
            *f = std::mem::take(&mut self.next_from_backlog);
        }
        match io.op {
            OpKind::Write | OpKind::Create | OpKind::Update | OpKind::Delete => (first..first + n).for_each(|i| table.update(i, began)),
            OpKind::Read => {
                let snaps = &mut self.snaps[slot as usize * self.per_slot..][..n];
                for (k, s) in snaps.iter_mut().enumerate() {
                    *s = table.word(first + k).load(Ordering::Acquire);
                }
            }
            _ => {}
        }
    }

    /// An operation came back: a write's generation becomes the one to
    /// find (or its units unknown, if it failed); a read is judged.
    pub fn completed(&mut self, io: &NextIo, slot: u32, buf: &[u8], result: Result<u64, IoFailure>) {
        let ok = matches!(result, Ok(n) if n == io.len as u64 || self.objects.is_some());
        let (t, first, n) = self.span(io);
        let table = self.tables[t].clone();
        match io.op {
            OpKind::Write | OpKind::Create | OpKind::Update => {
                // A partial write of an object leaves it part old, part new: unknown.
                let whole = self.objects.is_none() || io.op != OpKind::Write;
                let generation = self.gens[slot as usize];
                (first..first + n).for_each(|i| {
                    table.update(i, |w| ended(w, generation, ok && whole));
                    table.unchecked(i);
                });
                if ok && self.spec.backlog > 0 && whole && self.measuring {
                    let read = match &self.objects {
                        Some(o) => NextIo { op: OpKind::Read, offset: 0, len: o.max_size as u32, whole: true, ..*io },
                        None => NextIo { op: OpKind::Read, ..*io },
                    };
                    self.backlog.push_back(read);
                    self.draining |= self.backlog.len() >= self.spec.backlog as usize;
                }
            }
            OpKind::Delete => {
                let gone = ok || matches!(result, Err(f) if f.kind == ErrorKind::NotFound);
                table.update(first, |w| if gone { removed(w) } else { ended(w, 0, false) });
            }
            OpKind::Read => {
                let t0 = std::time::Instant::now();
                match (&self.objects, result) {
                    // No table: nothing of the run writes here, so no word to look at.
                    (None, Ok(_)) if ok && self.spec.by_header => self.walk_by_header(&table, io.offset, &buf[..io.len as usize]),
                    (None, Ok(_)) if ok => {
                        for k in 0..n {
                            let snap = self.snaps[slot as usize * self.per_slot + k];
                            let unit = &buf[k * self.unit as usize..][..self.unit as usize];
                            self.judge(&table, first + k, snap, unit);
                        }
                        if self.from_backlog.get(slot as usize) == Some(&true) {
                            table.mark_checked(first, &self.snaps[slot as usize * self.per_slot..][..n]);
                        }
                    }
                    // A body longer than the slot (an object an earlier run left larger) cannot be judged whole.
                    (Some(_), Ok(got)) if got as usize > buf.len() => self.tally.unknown += 1,
                    (Some(_), Ok(got)) => {
                        self.judge_object(&table, io, self.snaps[slot as usize * self.per_slot], Some(&buf[..got as usize]))
                    }
                    (Some(_), Err(f)) if f.kind == ErrorKind::NotFound => {
                        self.judge_object(&table, io, self.snaps[slot as usize * self.per_slot], None)
                    }
                    _ => {}
                }
                self.tally.cpu_ns += t0.elapsed().as_nanos() as u64;
            }
            _ => {}
        }
    }

    /// What a read of unit `i` is judged against, given the word it had
    /// when the read went out; `None` (and counted) when it cannot be judged.
    fn expected(&mut self, table: &BlockTable, i: usize, snap: u64) -> Option<Against> {
        if table.word(i).load(Ordering::Acquire) != snap {
            self.tally.in_flight += 1;
            return None;
        }
        match expect(snap) {
            Expect::InFlight => self.tally.in_flight += 1,
            Expect::Unknown => self.tally.unknown += 1,
            // No table to judge by (see `VerifySpec::by_header`): an earlier run's units.
            Expect::Unwritten if self.spec.by_header => return Some(Against::Header),
            Expect::Unwritten | Expect::Deleted => self.tally.unwritten += 1,
            Expect::Range(lo, hi) => return Some(Against::Generations([lo, hi])),
        }
        None
    }

    /// Judge one unit read back.
    fn judge(&mut self, table: &BlockTable, i: usize, snap: u64, unit: &[u8]) {
        let offset = self.phase + i as u64 * self.unit as u64;
        let [lo, hi] = match self.expected(table, i, snap) {
            None => return,
            Some(Against::Header) => return self.judge_by_header(table, offset, unit),
            Some(Against::Generations(g)) => g,
        };
        self.tally.checked += 1;
        self.tally.checked_bytes += unit.len() as u64;
        let found = format::check(unit, offset, self.pattern.as_deref());
        if let Found::Intact { generation } = found {
            if (lo..=hi).contains(&generation) {
                return;
            }
        }
        let (kind, generation, byte, what) = block_failure(found, [lo, hi], fio::is_fio(unit));
        self.failed(VerifyFailure { kind, target: table.label.clone(), offset, expected: [lo, hi], found: generation, byte, what });
    }

    /// Judge a read by the headers it holds: each says how long its unit
    /// is, so units written in another size than this job's are judged
    /// whole (a header-less stretch is judged in this job's units).
    fn walk_by_header(&mut self, table: &BlockTable, start: u64, buf: &[u8]) {
        let mut at = 0;
        while at < buf.len() {
            let rest = &buf[at..];
            let offset = start + at as u64;
            let len = match format::unit_len(rest).or_else(|| fio::unit_len(rest)) {
                Some(l) if l > rest.len() => {
                    // A unit larger than what is left of this read: cannot be checked from it,
                    // nor the rest of it when read next (a sequential read's next blocks).
                    self.inside = offset..offset + l as u64;
                    let why = format!("a header for a {l}-byte unit, read in smaller pieces: read in blocks of at least {l}, aligned");
                    return self.foreign(table, offset, why);
                }
                Some(l) => l,
                None if self.inside.contains(&offset) => {
                    self.tally.foreign += 1;
                    at += (self.unit as usize).min(rest.len());
                    continue;
                }
                None => (self.unit as usize).min(rest.len()),
            };
            self.judge_by_header(table, offset, &rest[..len]);
            at += len;
        }
    }

    /// A unit in a format storbench does not check: counted, not judged.
    fn foreign(&mut self, table: &BlockTable, offset: u64, why: String) {
        self.tally.foreign += 1;
        self.tally.foreign_first.get_or_insert_with(|| format!("{} offset {offset}: {why}", table.label));
    }

    /// Judge a unit no table speaks for by its own header (storbench's or
    /// fio's): checksum and offset. A header of a format storbench cannot
    /// check is counted apart, not judged.
    fn judge_by_header(&mut self, table: &BlockTable, offset: u64, unit: &[u8]) {
        let failure = match format::check(unit, offset, self.pattern.as_deref()) {
            Found::NoHeader { .. } if fio::is_fio(unit) => match fio::check(unit, offset) {
                FioFound::Unchecked { why } => return self.foreign(table, offset, why),
                found => fio_failure(found),
            },
            found => header_failure(found),
        };
        self.tally.checked += 1;
        self.tally.checked_bytes += unit.len() as u64;
        self.tally.by_header += 1;
        let Some(HeaderFailure { kind, found, byte, what, misplaced }) = failure else { return };
        self.tally.misplaced += misplaced as u64;
        self.failed(VerifyFailure { kind, target: table.label.clone(), offset, expected: [0, 0], found, byte, what });
    }

    /// Judge an object read (`None`: the store said it does not exist).
    fn judge_object(&mut self, table: &BlockTable, io: &NextIo, snap: u64, got: Option<&[u8]>) {
        let key = io.file as u64;
        let expected = match self.expected(table, key as usize, snap) {
            None => return,
            Some(Against::Header) => return self.judge_object_by_header(table, io, got),
            Some(Against::Generations(g)) => g,
        };
        self.tally.checked += 1;
        let target = format!("{} key {key}", table.label);
        let Some(got) = got else {
            self.objects.as_mut().expect("object mode").missing.push(key);
            let what = format!("not found, though generation {} was acknowledged", expected[1]);
            return self.failed(VerifyFailure {
                kind: VerifyKind::Missing,
                target,
                offset: io.offset,
                expected,
                found: None,
                byte: None,
                what,
            });
        };
        self.tally.checked_bytes += got.len() as u64;
        let scratch = &mut self.objects.as_mut().expect("object mode").scratch;
        let Some(HeaderFailure { kind, found, byte, what, misplaced }) = objects::judge(got, key, io.offset, expected, scratch) else {
            return;
        };
        self.tally.misplaced += misplaced as u64;
        self.failed(VerifyFailure { kind, target, offset: io.offset, expected, found, byte, what });
    }

    /// Judge an object no table speaks for by the version its bytes name
    /// (only a whole read from its start shows that; a missing object may
    /// never have been written).
    fn judge_object_by_header(&mut self, table: &BlockTable, io: &NextIo, got: Option<&[u8]>) {
        let key = io.file as u64;
        let Some(got) = got.filter(|g| io.offset == 0 && g.len() >= 16) else {
            match got {
                None => self.tally.unwritten += 1,
                Some(_) => self.tally.unknown += 1,
            }
            return;
        };
        self.tally.checked += 1;
        self.tally.checked_bytes += got.len() as u64;
        self.tally.by_header += 1;
        let scratch = &mut self.objects.as_mut().expect("object mode").scratch;
        let Some(HeaderFailure { kind, found, byte, what, misplaced }) = objects::judge_alone(got, key, scratch) else { return };
        self.tally.misplaced += misplaced as u64;
        let target = format!("{} key {key}", table.label);
        self.failed(VerifyFailure { kind, target, offset: 0, expected: [0, 0], found, byte, what });
    }

    #[cold]
    fn failed(&mut self, f: VerifyFailure) {
        if self.spec.fatal && self.fatal.is_none() {
            self.fatal = Some(format!("verify failed ({}) at {} offset {}: {}", f.kind.name(), f.target, f.offset, f.what));
        }
        self.tally.fail(f);
    }

    /// Every object's word now: taken before a listing, so only objects
    /// whose state did not change while it was taken are judged by it.
    pub fn words(&self) -> Vec<u64> {
        let table = &self.tables[0];
        (0..table.units as usize).map(|k| table.now(k)).collect()
    }

    /// What an object job's listing (`names`, under the job's prefix) says
    /// against what the run believed before it (`before`, from
    /// [`Checker::words`]): an object written and not deleted that is not
    /// listed is missing, one whose delete was acknowledged that is still
    /// listed is a stale listing. Objects whose state changed meanwhile, in
    /// flight or unknown, already found missing, or names that are not the
    /// job's numbered keys, are not judged. Returns the findings and how
    /// many objects were judged; nothing is counted yet.
    pub fn listing(&self, before: &[u64], names: &[String], prefix: &str) -> (Vec<(u64, VerifyKind, String)>, u64) {
        let table = &self.tables[0];
        let mut listed = vec![false; before.len()];
        for key in names.iter().filter_map(|n| n.strip_prefix(prefix)?.parse::<u64>().ok()) {
            if let Some(l) = listed.get_mut(key as usize) {
                *l = true;
            }
        }
        let missing = self.objects.as_ref().map(|o| o.missing.as_slice()).unwrap_or_default();
        let (mut findings, mut judged) = (Vec::new(), 0);
        for (key, listed) in listed.into_iter().enumerate() {
            if table.now(key) != before[key] || missing.contains(&(key as u64)) {
                continue;
            }
            match (expect(before[key]), listed) {
                (Expect::Range(_, hi), false) => {
                    findings.push((key as u64, VerifyKind::Missing, format!("not in the listing, though generation {hi} was acknowledged")))
                }
                (Expect::Deleted, true) => {
                    findings.push((key as u64, VerifyKind::Stale, "still listed after its delete was acknowledged".into()))
                }
                (Expect::Range(..) | Expect::Deleted, _) => {}
                _ => continue,
            }
            judged += 1;
        }
        (findings, judged)
    }

    /// Count a listing's findings (those that held on a second look):
    /// listings may be eventually consistent, so they are counted apart from
    /// the data's failures.
    pub fn listed(&mut self, findings: Vec<(u64, VerifyKind, String)>, judged: u64) {
        self.tally.listed += judged;
        let label = self.tables[0].label.clone();
        for (key, kind, what) in findings {
            match kind {
                VerifyKind::Stale => self.tally.listing_stale += 1,
                _ => self.tally.listing_missing += 1,
            }
            if self.tally.listing_examples.len() < 10 {
                self.tally.listing_examples.push(format!("{label} key {key}: {what}"));
            }
        }
    }

    /// Whether this checker's job is on objects (a listing can be checked).
    pub fn objects(&self) -> bool {
        self.objects.is_some()
    }

    /// The next acknowledged write to read back (`verify_backlog`): once
    /// the backlog is full, it is read back whole before new writes go out.
    #[inline]
    pub fn backlog_next(&mut self) -> Option<NextIo> {
        if !self.draining {
            return None;
        }
        let io = self.backlog.pop_front();
        self.draining = !self.backlog.is_empty();
        self.next_from_backlog = io.is_some();
        io
    }

    /// fio reads a writing job's passes back one by one (do_verify inside
    /// its loop): where this worker alone writes its region, after a pass's
    /// writes with no backlog read back already (a shared region is read
    /// back once, when every writer is done). A time-based job's passes
    /// end only where its engine queues (see [`Checker::time_based_passes`]).
    pub fn verifies_each_pass(&self, share: &JobShare) -> bool {
        each_pass(share)
    }

    /// A time-based job that reads its passes back, as fio 3.33 does it
    /// (backend.c): do_io leaves its loop for do_verify once the bytes
    /// issued reach the job's size, but counts only what the engine
    /// queued (io_queue_event, FIO_Q_QUEUED): a synchronous engine's I/O
    /// completes in the call and is never counted, so such a job never
    /// reads back (fio: "verification read phase will never start"); a
    /// queued one reads back every `size` bytes written. Neither reads
    /// back the pass the runtime cut short (td->terminate). `Some(true)`:
    /// each `size` bytes read back; `Some(false)`: nothing read back; None:
    /// not such a job.
    pub fn time_based_passes(&self, share: &JobShare, queued: bool) -> Option<bool> {
        time_based_passes(share, queued)
    }

    /// This worker's measured phase ended: it writes no more.
    pub fn writes_done(&mut self) {
        if std::mem::take(&mut self.writing) {
            self.writers.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether every writer of the job has finished (the read-back pass may start).
    pub fn writers_done(&self) -> bool {
        self.writers.load(Ordering::Acquire) == 0
    }

    /// The reads of the read-back pass: the worker's region as it was
    /// written, each piece once across the job's workers when they share a
    /// region, skipping what nothing wrote. A piece is a run of units the
    /// same write left (one generation), of up to `max_len` bytes: fio's
    /// verify phase reads back each write as it was issued, so a pass of
    /// 4 KiB random writes is as many 4 KiB reads (and counts as fio's).
    pub fn pass(&self, share: &JobShare, worker: u32, max_len: u64) -> Vec<NextIo> {
        if let Some(o) = &self.objects {
            // Objects: this worker's keys (worker, worker + workers, ...) that hold a version.
            let table = &self.tables[0];
            let keys = (worker as u64..table.units).step_by(share.workers.max(1) as usize);
            let len = o.max_size.min(max_len) as u32;
            // verify_only with no table: every key the job names, each judged by the version it holds.
            let every = self.spec.only && self.spec.by_header;
            return keys
                .filter(|k| every || table.any_written(*k as usize, 1))
                .map(|k| NextIo { op: OpKind::Read, file: k as u32, offset: 0, len, whole: true, class: 0 })
                .collect();
        }
        let unit = self.unit as u64;
        let most = (max_len / unit).max(1) as usize;
        let mut region = share.region;
        region.start += worker as u64 * share.spec.offset_increment;
        let shared = share.spec.offset_increment == 0 && share.workers > 1;
        let mut out = Vec::new();
        let mut c = 0u64;
        for (file, table) in self.tables.iter().enumerate() {
            let end = (region.start + region.len).min(self.phase + table.units * unit);
            if end <= region.start {
                continue;
            }
            let (first, last) = (((region.start - self.phase) / unit) as usize, ((end - self.phase) / unit) as usize);
            for (i, n) in pieces(table, first..last, most) {
                if !shared || c % share.workers as u64 == worker as u64 {
                    let (offset, len) = (self.phase + i as u64 * unit, (n as u64 * unit) as u32);
                    out.push(NextIo { op: OpKind::Read, file: file as u32, offset, len, whole: false, class: 0 });
                }
                c += 1;
            }
        }
        out
    }
}

/// What a read is judged against: the generations the table says are
/// right, or (no table) the unit's own header.
enum Against {
    Generations([u64; 2]),
    Header,
}

/// How a unit judged by its header alone was wrong.
#[derive(Debug, PartialEq)]
struct HeaderFailure {
    kind: VerifyKind,
    /// The generation its header names.
    found: Option<u64>,
    byte: Option<u32>,
    what: String,
    misplaced: bool,
}

/// A storbench unit judged by its header alone; `None`: intact here.
#[cold]
fn header_failure(found: Found) -> Option<HeaderFailure> {
    let (kind, found, byte, what, misplaced) = match found {
        Found::Intact { .. } => return None,
        Found::Corrupt { generation: g, first_bad } => {
            let at = first_bad.map_or("in the header".to_string(), |b| format!("first wrong byte at +{b}"));
            (VerifyKind::Corrupt, Some(g), first_bad, format!("checksum fails, {at} (its header says generation {g})"), false)
        }
        Found::Misplaced { offset: o, generation: g } => {
            (VerifyKind::Corrupt, Some(g), Some(8), format!("misplaced: an intact unit written for offset {o} (generation {g})"), true)
        }
        Found::NoHeader { zeros: true } => {
            (VerifyKind::Missing, None, None, "zeros, no header: never written, or its write was lost".into(), false)
        }
        Found::NoHeader { zeros: false } => (
            VerifyKind::Missing,
            None,
            Some(0),
            "no header: not written by storbench (nor by fio) with verify, its header overwritten, or inside a larger unit \
             (read in blocks of at least the unit written)"
                .into(),
            false,
        ),
    };
    Some(HeaderFailure { kind, found, byte, what, misplaced })
}

/// A block fio wrote, judged by its header; `None`: intact here.
#[cold]
fn fio_failure(found: FioFound) -> Option<HeaderFailure> {
    let (what, byte, misplaced) = match found {
        FioFound::Intact | FioFound::Unchecked { .. } => return None,
        FioFound::Misplaced { offset: o } => (format!("misplaced: fio's intact block written for offset {o}"), Some(16), true),
        FioFound::Corrupt { checksum, in_header: true } => (format!("fio's block: {checksum} fails"), Some(0), false),
        FioFound::Corrupt { checksum, in_header: false } => (format!("fio's block: {checksum} of its data fails"), None, false),
    };
    Some(HeaderFailure { kind: VerifyKind::Corrupt, found: None, byte, what, misplaced })
}

/// How a block unit read back was wrong: kind, the generation it holds, the
/// first wrong byte, in words (`fio`: the unit starts with fio's magic).
#[cold]
fn block_failure(found: Found, expected: [u64; 2], fio: bool) -> (VerifyKind, Option<u64>, Option<u32>, String) {
    let want = objects::generations(expected);
    match found {
        Found::Intact { generation: g } if g < expected[0] => {
            (VerifyKind::LostWrite, Some(g), None, format!("intact but older: generation {g}, expected {want}"))
        }
        Found::Intact { generation: g } => {
            (VerifyKind::Corrupt, Some(g), None, format!("generation {g} was never acknowledged here (expected {want})"))
        }
        Found::NoHeader { zeros: true } => {
            (VerifyKind::Missing, None, None, format!("zeros where a write was acknowledged (generation {want})"))
        }
        Found::NoHeader { zeros: false } if fio => (
            VerifyKind::Corrupt,
            None,
            Some(0),
            format!("not written by storbench (fio's header?) where generation {want} was acknowledged"),
        ),
        Found::NoHeader { zeros: false } => (VerifyKind::Corrupt, None, Some(0), format!("no header (expected generation {want})")),
        Found::Misplaced { offset: o, generation: g } => {
            (VerifyKind::Corrupt, Some(g), Some(8), format!("a unit written for offset {o} (generation {g}, expected {want})"))
        }
        Found::Corrupt { generation: g, first_bad } => {
            let at = first_bad.map_or("in the header".to_string(), |b| format!("first wrong byte at +{b}"));
            (VerifyKind::Corrupt, Some(g), first_bad, format!("checksum fails, {at} (its header says generation {g}, expected {want})"))
        }
    }
}

impl Drop for Checker {
    /// A worker that ends any other way (a panic) must not hold up the pass.
    fn drop(&mut self) {
        self.writes_done();
    }
}
