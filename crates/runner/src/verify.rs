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

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use storbench_metrics::{VerifyFailure, VerifyKind, VerifyTally};
use storbench_model::protocol::JobShare;
use storbench_model::target::Targets;
use storbench_workload::rng::Rng;
use storbench_workload::verify::{self as format, Checksum, Found, Stamp, VerifySpec};
use storbench_workload::{NextIo, OpKind};

// One unit's word: the newest acknowledged generation (40 bits), how far
// below it older generations are also right (12 bits), unknown, fresh (a
// cluster of overlapping writes began and none has completed yet) and the
// writes in flight (10 bits).
const GEN_MASK: u64 = (1 << 40) - 1;
const DELTA_SHIFT: u32 = 40;
const DELTA_MAX: u64 = (1 << 12) - 1;
const UNKNOWN: u64 = 1 << 52;
const FRESH: u64 = 1 << 53;
const INFLIGHT_SHIFT: u32 = 54;
const INFLIGHT_ONE: u64 = 1 << INFLIGHT_SHIFT;

fn inflight(w: u64) -> u64 {
    w >> INFLIGHT_SHIFT
}

/// The word after a write to its unit was issued.
fn began(w: u64) -> u64 {
    let w = if inflight(w) == 0 { (w | FRESH) & !UNKNOWN } else { w };
    w + INFLIGHT_ONE
}

/// The word after a write of `generation` completed (`ok`) or failed.
fn ended(w: u64, generation: u64, ok: bool) -> u64 {
    let rest = w - INFLIGHT_ONE;
    if !ok {
        return rest | UNKNOWN;
    }
    let keep = rest & (UNKNOWN | (u64::MAX << INFLIGHT_SHIFT));
    let (lo, hi) = if rest & FRESH != 0 {
        (generation, generation)
    } else {
        let hi = rest & GEN_MASK;
        let lo = hi - ((rest >> DELTA_SHIFT) & DELTA_MAX);
        (lo.min(generation), hi.max(generation))
    };
    // A cluster too spread to describe is not judged rather than judged too narrowly.
    let unknown = if hi - lo > DELTA_MAX { UNKNOWN } else { 0 };
    keep | unknown | ((hi - lo).min(DELTA_MAX) << DELTA_SHIFT) | hi
}

/// What a read of a unit whose word was `w` when it was issued may find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    InFlight,
    Unknown,
    Unwritten,
    Range(u64, u64),
}

fn expect(w: u64) -> Expect {
    if inflight(w) > 0 {
        return Expect::InFlight;
    }
    if w & (UNKNOWN | FRESH) != 0 {
        return Expect::Unknown;
    }
    let hi = w & GEN_MASK;
    if hi == 0 {
        return Expect::Unwritten;
    }
    Expect::Range(hi - ((w >> DELTA_SHIFT) & DELTA_MAX), hi)
}

/// A crashed run's word: what was in flight is unknown now.
fn recovered(w: u64) -> u64 {
    if inflight(w) > 0 || w & FRESH != 0 {
        (w & !(FRESH | (u64::MAX << INFLIGHT_SHIFT))) | UNKNOWN
    } else {
        w
    }
}

const TABLE_MAGIC: &[u8; 8] = b"SBVSTATE";
const TABLE_VERSION: u32 = 1;
/// The header page of a table: magic, version, unit, units, target size,
/// the generation counter (at `GEN_AT`), the target's label.
const TABLE_HEADER: usize = 4096;
const GEN_AT: usize = 32;
const LABEL_AT: usize = 64;

/// One target's words (see the module's notes), in memory or in a state file.
pub struct BlockTable {
    map: memmap2::MmapMut,
    base: *mut u8,
    units: u64,
    unit: u32,
    pub label: String,
    /// The state file, locked for this run.
    _file: Option<File>,
}

// SAFETY: the mapping is only reached through atomics (the header's
// counter and the words), and lives as long as the table.
unsafe impl Send for BlockTable {}
unsafe impl Sync for BlockTable {}

impl BlockTable {
    /// A table for `size` bytes in units of `unit`: in memory, or in `dir`
    /// (created, or the earlier run's table loaded after checking it is for
    /// the same target and unit).
    pub fn open(label: &str, size: u64, unit: u32, dir: Option<&Path>) -> Result<BlockTable, String> {
        let units = size / unit as u64;
        let bytes = TABLE_HEADER as u64 + units * 8;
        let (mut map, file) = match dir {
            None => {
                check_memory(label, bytes)?;
                let map = memmap2::MmapMut::map_anon(bytes as usize).map_err(|e| format!("verify table for {label}: {e}"))?;
                (map, None)
            }
            Some(dir) => {
                let (map, file) = map_state(label, size, unit, bytes, dir)?;
                (map, Some(file))
            }
        };
        let fresh = map[..8] != TABLE_MAGIC[..];
        if fresh {
            map[..8].copy_from_slice(TABLE_MAGIC);
            map[8..12].copy_from_slice(&TABLE_VERSION.to_le_bytes());
            map[12..16].copy_from_slice(&unit.to_le_bytes());
            map[16..24].copy_from_slice(&units.to_le_bytes());
            map[24..32].copy_from_slice(&size.to_le_bytes());
            map[GEN_AT..GEN_AT + 8].copy_from_slice(&1u64.to_le_bytes());
            let l = &label.as_bytes()[..label.len().min(TABLE_HEADER - LABEL_AT - 4)];
            map[40..44].copy_from_slice(&(l.len() as u32).to_le_bytes());
            map[LABEL_AT..LABEL_AT + l.len()].copy_from_slice(l);
        }
        let base = map.as_mut_ptr();
        let table = BlockTable { map, base, units, unit, label: label.to_string(), _file: file };
        if !fresh {
            for i in 0..units as usize {
                let w = table.word(i);
                w.store(recovered(w.load(Ordering::Relaxed)), Ordering::Relaxed);
            }
        }
        Ok(table)
    }

    pub fn unit(&self) -> u32 {
        self.unit
    }

    #[inline]
    fn word(&self, i: usize) -> &AtomicU64 {
        assert!((i as u64) < self.units, "unit {i} beyond the table of {}", self.label);
        // SAFETY: in bounds of the mapping (checked), 8-aligned (the
        // mapping is page aligned), and only ever used as an atomic.
        unsafe { &*(self.base.add(TABLE_HEADER + i * 8) as *const AtomicU64) }
    }

    #[inline]
    fn next_generation(&self) -> u64 {
        // SAFETY: as in `word`: the header's counter, 8-aligned, atomics only.
        let counter = unsafe { &*(self.base.add(GEN_AT) as *const AtomicU64) };
        counter.fetch_add(1, Ordering::Relaxed) & GEN_MASK
    }

    fn update(&self, i: usize, f: impl Fn(u64) -> u64) {
        let _ = self.word(i).fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| Some(f(w)));
    }

    /// Units `[first, first + n)` that any write of this run (or its saved
    /// state) reached.
    fn any_written(&self, first: usize, n: usize) -> bool {
        (first..first + n).any(|i| self.word(i).load(Ordering::Relaxed) != 0)
    }

    /// Write the table to its file now (a run that ends normally; a crash
    /// leaves it to the kernel, which keeps the mapped pages).
    pub fn flush(&self) {
        if self._file.is_some() {
            let _ = self.map.flush();
        }
    }
}

/// The state file of a target: created, or opened and checked.
fn map_state(label: &str, size: u64, unit: u32, bytes: u64, dir: &Path) -> Result<(memmap2::MmapMut, File), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("verify_state {}: {e}", dir.display()))?;
    let path = state_path(dir, label);
    let exists = path.exists();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: flock on an open descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(format!(
            "{}: another storbench run is using this verify state; wait for it or give another verify_state",
            path.display()
        ));
    }
    let len = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
    if exists && len > 0 {
        check_state(&file, &path, label, size, unit, bytes, len)?;
    } else {
        file.set_len(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // SAFETY: the file is ours (locked) for the table's lifetime; another
    // process changing it underneath would only change what is judged.
    let map = unsafe { memmap2::MmapMut::map_mut(&file) }.map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((map, file))
}

fn check_state(file: &File, path: &Path, label: &str, size: u64, unit: u32, bytes: u64, len: u64) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; TABLE_HEADER];
    file.read_exact_at(&mut head, 0).map_err(|e| format!("{}: not a verify state ({e})", path.display()))?;
    let u32_at = |a: usize| u32::from_le_bytes(head[a..a + 4].try_into().expect("4 bytes"));
    let u64_at = |a: usize| u64::from_le_bytes(head[a..a + 8].try_into().expect("8 bytes"));
    let p = path.display();
    if head[..8] != TABLE_MAGIC[..] || u32_at(8) != TABLE_VERSION {
        return Err(format!("{p}: not a verify state this storbench writes; remove it or give another verify_state"));
    }
    let saved_label = String::from_utf8_lossy(&head[LABEL_AT..LABEL_AT + (u32_at(40) as usize).min(TABLE_HEADER - LABEL_AT)]).into_owned();
    if saved_label != label || u64_at(24) != size {
        return Err(format!("{p}: kept for {saved_label} ({} bytes), not {label} ({size} bytes); give another verify_state", u64_at(24)));
    }
    if u32_at(12) != unit {
        return Err(format!("{p}: kept in {}-byte units; give verify_interval={} (or another verify_state)", u32_at(12), u32_at(12)));
    }
    if len != bytes {
        return Err(format!("{p}: cut short ({len} of {bytes} bytes); remove it or give another verify_state"));
    }
    Ok(())
}

/// A target's state file in `dir`: its label with what is not a letter or
/// digit made '_'.
pub fn state_path(dir: &Path, label: &str) -> PathBuf {
    let name: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    dir.join(format!("{}.vstate", name.trim_start_matches('_')))
}

/// The read-back pass reads in pieces of up to this many bytes (whole units).
pub const READ_BACK_BYTES: u64 = 256 << 10;

/// An in-memory table takes memory for the whole run: refuse one that would
/// crowd the machine (as the plan's own limits do).
fn check_memory(label: &str, bytes: u64) -> Result<(), String> {
    let avail = crate::limits::available_memory().unwrap_or(u64::MAX);
    if bytes > avail / 2 {
        return Err(format!(
            "verifying {label} needs a table of {} MiB (8 bytes per unit), more than half the memory available; \
             give a larger verify_interval, a smaller size, or verify_state=DIR to keep it in a file",
            bytes >> 20
        ));
    }
    Ok(())
}

/// The tables of one run (all its groups), and per job how many of its
/// workers still write (the read-back pass waits for them).
#[derive(Default)]
pub struct VerifyTables {
    tables: Mutex<HashMap<String, Arc<BlockTable>>>,
    writers: Mutex<HashMap<u32, Arc<AtomicU32>>>,
}

impl VerifyTables {
    fn table(&self, label: &str, size: u64, unit: u32, dir: Option<&Path>) -> Result<Arc<BlockTable>, String> {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = tables.get(label) {
            if t.unit != unit {
                return Err(format!("{label} is verified in {}-byte units by an earlier job; give verify_interval={}", t.unit, t.unit));
            }
            return Ok(t.clone());
        }
        let t = Arc::new(BlockTable::open(label, size, unit, dir)?);
        tables.insert(label.to_string(), t.clone());
        Ok(t)
    }

    fn writers(&self, job: u32) -> Arc<AtomicU32> {
        self.writers.lock().unwrap_or_else(|e| e.into_inner()).entry(job).or_default().clone()
    }

    /// Every table to its file (the run ends).
    pub fn flush(&self) {
        for t in self.tables.lock().unwrap_or_else(|e| e.into_inner()).values() {
            t.flush();
        }
    }
}

/// What a job verifies, as (label, usable bytes): worker `w`'s files or
/// volumes in the order its I/O numbers them, or (`None`) every worker's.
fn verified_targets(share: &JobShare, worker: Option<u32>) -> Result<Vec<(String, u64)>, String> {
    match &share.targets {
        Targets::Files(per_worker) => {
            let files = match worker {
                Some(w) => share.targets.files_of(w).to_vec(),
                None => per_worker.iter().flatten().cloned().collect(),
            };
            Ok(files.into_iter().map(|f| (f.path.display().to_string(), f.size)).collect())
        }
        Targets::Store(s) if s.size > 0 => Ok((0..s.units.max(1)).map(|u| (format!("{}#{u}", s.label), s.size)).collect()),
        _ => Err("verify works on files, block devices and RBD images; objects are not verified yet".into()),
    }
}

/// Before anything runs: a verified job's unit fits its blocks, and any
/// state an earlier run kept for its targets is for the same target and unit.
pub fn check_job(share: &JobShare) -> Result<(), String> {
    let Some(v) = share.spec.verify.as_ref().filter(|v| v.checksum.is_some()) else { return Ok(()) };
    let unit = unit_of(share)?;
    let targets = verified_targets(share, None)?;
    let Some(dir) = &v.state else { return Ok(()) };
    for (label, size) in targets {
        let path = state_path(dir, &label);
        let Ok(file) = File::open(&path) else { continue };
        let len = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
        check_state(&file, &path, &label, size, unit, TABLE_HEADER as u64 + size / unit as u64 * 8, len)?;
    }
    Ok(())
}

/// The unit a job's blocks are verified in: `verify_interval`, else its
/// smallest block; every block size and offset must be whole units.
pub fn unit_of(share: &JobShare) -> Result<u32, String> {
    let spec = &share.spec;
    let v = spec.verify.as_ref().ok_or("not verified")?;
    let unit = v.interval.map_or(spec.bs.min(), u64::from);
    if unit < format::MIN_UNIT as u64 || unit > u32::MAX as u64 {
        return Err(format!(
            "verify needs blocks of at least {} bytes (a header is {} bytes); raise bs or give verify_interval",
            format::MIN_UNIT,
            format::HEADER
        ));
    }
    let sizes = spec.bs.read.0.iter().chain(&spec.bs.write.0).map(|e| e.0);
    for (what, v) in sizes.map(|s| ("block size", s)).chain([("offset", share.region.start), ("offset_increment", spec.offset_increment)]) {
        if v % unit != 0 {
            return Err(format!(
                "verify: the {what} {v} is not a multiple of the {unit}-byte unit; give verify_interval (a divisor of every block size)"
            ));
        }
    }
    Ok(unit as u32)
}

/// A worker's side of verification: stamps its writes, judges its reads,
/// keeps its tally.
pub struct Checker {
    sum: Checksum,
    pattern: Option<Vec<u8>>,
    unit: u32,
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
    draining: bool,
    writers: Arc<AtomicU32>,
    /// Counted among the job's writers until its measured phase ends.
    writing: bool,
    /// Set at the first failure of a `verify_fatal` job.
    pub fatal: Option<String>,
    pub tally: VerifyTally,
}

impl Checker {
    /// The worker's checker, or `None` when its job does not verify.
    pub fn new(share: &JobShare, worker: u32, registry: &VerifyTables, qd: usize, slot_len: u64) -> Result<Option<Checker>, String> {
        let Some(spec) = share.spec.verify.as_ref().filter(|v| v.checksum.is_some()) else { return Ok(None) };
        let unit = unit_of(share)?;
        let dir = spec.state.as_deref();
        let tables = verified_targets(share, Some(worker))?
            .into_iter()
            .map(|(label, size)| registry.table(&label, size, unit, dir))
            .collect::<Result<Vec<_>, _>>()?;
        let per_slot = (slot_len / unit as u64).max(1) as usize;
        // Counted until its measured phase ends: the job's read-back pass waits for every writer.
        let writers = registry.writers(share.job);
        let writing = share.spec.writes() && !spec.only;
        if writing {
            writers.fetch_add(1, Ordering::AcqRel);
        }
        Ok(Some(Checker {
            sum: spec.checksum.unwrap_or(Checksum::Crc32c),
            pattern: spec.pattern.clone(),
            unit,
            job: share.job,
            worker,
            spec: spec.clone(),
            tables,
            gens: vec![0; qd],
            snaps: vec![0; qd * per_slot],
            per_slot,
            backlog: VecDeque::new(),
            draining: false,
            writers,
            writing,
            fatal: None,
            tally: VerifyTally::default(),
        }))
    }

    /// Make a write's buffer: every unit stamped with the write's generation.
    /// Not in flight yet: see [`Checker::issued`].
    #[inline]
    pub fn stamp(&mut self, buf: &mut [u8], io: &NextIo, slot: u32, rng: &mut Rng) {
        let t0 = std::time::Instant::now();
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

    /// An operation goes out: a write's units are in flight from now; a
    /// read remembers the words it will be judged against.
    #[inline]
    pub fn issued(&mut self, io: &NextIo, slot: u32) {
        let table = &self.tables[io.file as usize];
        let first = (io.offset / self.unit as u64) as usize;
        let n = (io.len / self.unit) as usize;
        match io.op {
            OpKind::Write => (first..first + n).for_each(|i| table.update(i, began)),
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
    pub fn completed(&mut self, io: &NextIo, slot: u32, buf: &[u8], ok: bool) {
        let table = self.tables[io.file as usize].clone();
        let first = (io.offset / self.unit as u64) as usize;
        let n = (io.len / self.unit) as usize;
        match io.op {
            OpKind::Write => {
                let generation = self.gens[slot as usize];
                (first..first + n).for_each(|i| table.update(i, |w| ended(w, generation, ok)));
                if ok && self.spec.backlog > 0 {
                    self.backlog.push_back(NextIo { op: OpKind::Read, ..*io });
                    self.draining |= self.backlog.len() >= self.spec.backlog as usize;
                }
            }
            OpKind::Read if ok => {
                let t0 = std::time::Instant::now();
                for k in 0..n {
                    let snap = self.snaps[slot as usize * self.per_slot + k];
                    let unit = &buf[k * self.unit as usize..][..self.unit as usize];
                    self.judge(&table, first + k, snap, unit);
                }
                self.tally.cpu_ns += t0.elapsed().as_nanos() as u64;
            }
            _ => {}
        }
    }

    /// Judge one unit read back, against the word it had when the read went out.
    fn judge(&mut self, table: &BlockTable, i: usize, snap: u64, unit: &[u8]) {
        if table.word(i).load(Ordering::Acquire) != snap {
            self.tally.in_flight += 1;
            return;
        }
        let (lo, hi) = match expect(snap) {
            Expect::InFlight => return self.tally.in_flight += 1,
            Expect::Unknown => return self.tally.unknown += 1,
            Expect::Unwritten => return self.tally.unwritten += 1,
            Expect::Range(lo, hi) => (lo, hi),
        };
        let offset = i as u64 * self.unit as u64;
        self.tally.checked += 1;
        self.tally.checked_bytes += unit.len() as u64;
        let found = format::check(unit, offset, self.pattern.as_deref());
        if let Found::Intact { generation } = found {
            if (lo..=hi).contains(&generation) {
                return;
            }
        }
        self.failed(table, offset, [lo, hi], found);
    }

    #[cold]
    fn failed(&mut self, table: &BlockTable, offset: u64, expected: [u64; 2], found: Found) {
        let want = if expected[0] == expected[1] { expected[1].to_string() } else { format!("{}..{}", expected[0], expected[1]) };
        let (kind, generation, byte, what) = match found {
            Found::Intact { generation: g } if g < expected[0] => {
                (VerifyKind::LostWrite, Some(g), None, format!("intact but older: generation {g}, expected {want}"))
            }
            Found::Intact { generation: g } => {
                (VerifyKind::Corrupt, Some(g), None, format!("generation {g} was never acknowledged here (expected {want})"))
            }
            Found::NoHeader { zeros: true } => {
                (VerifyKind::Missing, None, None, format!("zeros where a write was acknowledged (generation {want})"))
            }
            Found::NoHeader { zeros: false } => (VerifyKind::Corrupt, None, Some(0), format!("no header (expected generation {want})")),
            Found::Misplaced { offset: o, generation: g } => {
                (VerifyKind::Corrupt, Some(g), Some(8), format!("a unit written for offset {o} (generation {g}, expected {want})"))
            }
            Found::Corrupt { generation: g, first_bad } => {
                let at = first_bad.map_or("in the header".to_string(), |b| format!("first wrong byte at +{b}"));
                (VerifyKind::Corrupt, Some(g), first_bad, format!("checksum fails, {at} (its header says generation {g}, expected {want})"))
            }
        };
        if self.spec.fatal && self.fatal.is_none() {
            self.fatal = Some(format!("verify failed ({}) at {} offset {offset}: {what}", kind.name(), table.label));
        }
        self.tally.fail(VerifyFailure { kind, target: table.label.clone(), offset, expected, found: generation, byte, what });
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
        io
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

    /// The reads of the read-back pass: the worker's region in chunks of
    /// up to `max_len` bytes (whole units), each chunk once across the job's
    /// workers when they share a region, skipping what nothing wrote.
    pub fn pass(&self, share: &JobShare, worker: u32, max_len: u64) -> Vec<NextIo> {
        let unit = self.unit as u64;
        let chunk = (max_len / unit).max(1) * unit;
        let mut region = share.region;
        region.start += worker as u64 * share.spec.offset_increment;
        let shared = share.spec.offset_increment == 0 && share.workers > 1;
        let mut out = Vec::new();
        let mut c = 0u64;
        for (file, table) in self.tables.iter().enumerate() {
            let end = (region.start + region.len).min(table.units * unit);
            let mut at = region.start;
            while at < end {
                let len = chunk.min(end - at) / unit * unit;
                if len == 0 {
                    break;
                }
                let mine = !shared || c % share.workers as u64 == worker as u64;
                if mine && table.any_written((at / unit) as usize, (len / unit) as usize) {
                    out.push(NextIo { op: OpKind::Read, file: file as u32, offset: at, len: len as u32, whole: false, class: 0 });
                }
                c += 1;
                at += len;
            }
        }
        out
    }
}

impl Drop for Checker {
    /// A worker that ends any other way (a panic) must not hold up the pass.
    fn drop(&mut self) {
        self.writes_done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_alone_becomes_the_only_right_generation() {
        let w = began(0);
        assert_eq!(expect(w), Expect::InFlight);
        let w = ended(w, 5, true);
        assert_eq!(expect(w), Expect::Range(5, 5));
        let w = ended(began(w), 9, true);
        assert_eq!(expect(w), Expect::Range(9, 9), "a later write alone replaces the earlier");
    }

    #[test]
    fn overlapping_writes_make_each_of_their_generations_right() {
        let w = began(ended(began(0), 3, true));
        let w = began(w); // a second write while the first is in flight
        let w = ended(w, 8, true);
        assert_eq!(expect(w), Expect::InFlight);
        let w = ended(w, 7, true);
        assert_eq!(expect(w), Expect::Range(7, 8), "not 3: both overlapping writes came after it");
    }

    #[test]
    fn a_failed_write_makes_the_unit_unknown_until_one_succeeds() {
        let w = ended(began(ended(began(0), 3, true)), 4, false);
        assert_eq!(expect(w), Expect::Unknown);
        let w = ended(began(w), 6, true);
        assert_eq!(expect(w), Expect::Range(6, 6));
    }

    #[test]
    fn a_crash_with_writes_in_flight_leaves_them_unknown() {
        let w = began(ended(began(0), 3, true));
        assert_eq!(expect(recovered(w)), Expect::Unknown);
        assert_eq!(expect(recovered(ended(began(0), 3, true))), Expect::Range(3, 3));
    }

    #[test]
    fn a_cluster_too_spread_to_describe_is_not_judged() {
        let w = began(began(0));
        let w = ended(ended(w, 1, true), DELTA_MAX + 10, true);
        assert_eq!(expect(w), Expect::Unknown);
    }

    #[test]
    fn a_state_file_keeps_generations_and_refuses_another_target_or_unit() {
        let dir = std::env::temp_dir().join(format!("sb-vstate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let t = BlockTable::open("/dev/x", 1 << 20, 4096, Some(&dir)).unwrap();
            let g = t.next_generation();
            t.update(3, began);
            t.update(3, |w| ended(w, g, true));
            t.update(4, began); // in flight when the run "dies"
            t.flush();
        }
        let t = BlockTable::open("/dev/x", 1 << 20, 4096, Some(&dir)).unwrap();
        assert_eq!(expect(t.word(3).load(Ordering::Relaxed)), Expect::Range(1, 1));
        assert_eq!(expect(t.word(4).load(Ordering::Relaxed)), Expect::Unknown);
        assert_eq!(t.next_generation(), 2, "the counter goes on");
        drop(t);
        assert!(BlockTable::open("/dev/x", 1 << 20, 8192, Some(&dir)).err().unwrap().contains("verify_interval=4096"));
        assert!(BlockTable::open("/dev/x", 2 << 20, 4096, Some(&dir)).err().unwrap().contains("not /dev/x"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
