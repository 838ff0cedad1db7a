//! The table of acknowledged writes: one 64-bit word per unit (a block, or
//! an object), in memory or in a memory-mapped state file, and the rules
//! that keep it free of false failures (see the module above).

use crate::problem::Problem;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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

pub(super) fn inflight(w: u64) -> u64 {
    w >> INFLIGHT_SHIFT
}

/// The word after a write to its unit was issued.
pub(super) fn began(w: u64) -> u64 {
    let w = if inflight(w) == 0 { (w | FRESH) & !UNKNOWN } else { w };
    w + INFLIGHT_ONE
}

/// The word after a write of `generation` completed (`ok`) or failed.
pub(super) fn ended(w: u64, generation: u64, ok: bool) -> u64 {
    // An end without its beginning (a crashed run's leftovers): not judged again until a write completes.
    let Some(rest) = w.checked_sub(INFLIGHT_ONE).filter(|_| inflight(w) > 0) else { return w | UNKNOWN };
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

/// The word after a delete of its object completed: nothing to find, unless
/// another change is still in flight.
pub(super) fn removed(w: u64) -> u64 {
    let Some(rest) = w.checked_sub(INFLIGHT_ONE).filter(|_| inflight(w) > 0) else { return w | UNKNOWN };
    if inflight(rest) == 0 {
        DELETED
    } else {
        rest | UNKNOWN
    }
}

/// An object whose delete was acknowledged: the highest generation, which
/// the counter never reaches, with nothing else set.
pub(super) const DELETED: u64 = GEN_MASK;

/// What a read of a unit whose word was `w` when it was issued may find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
    InFlight,
    Unknown,
    Unwritten,
    /// An object this run deleted.
    Deleted,
    Range(u64, u64),
}

pub(super) fn expect(w: u64) -> Expect {
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
    if w == DELETED {
        return Expect::Deleted;
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
/// the generation counter (at `GEN_AT`), the label's length, the phase (at
/// `PHASE_AT`; zero in states of earlier versions, which had none), the
/// target's label.
const TABLE_HEADER: usize = 4096;
const GEN_AT: usize = 32;
const PHASE_AT: usize = 48;
const LABEL_AT: usize = 64;

/// One target's words (see the module's notes), in memory or in a state file.
pub struct BlockTable {
    map: memmap2::MmapMut,
    base: *mut u8,
    pub(super) units: u64,
    unit: u32,
    /// Where unit 0 starts: a job whose offset is not a whole number of
    /// units (fio's cross-stripe-verify.fio: 16k blocks from 120k) has its
    /// units laid from there.
    pub(super) phase: u64,
    pub label: String,
    /// The state file, locked for this run.
    _file: Option<File>,
    /// A bit per unit a `verify_backlog` read judged since its last write
    /// (made at the first such read): the verify pass skips those, as
    /// fio's takes what its backlog verified off the list it reads back.
    checked: OnceLock<Box<[AtomicU64]>>,
}

// SAFETY: the mapping is only reached through atomics (the header's
// counter and the words), and lives as long as the table.
unsafe impl Send for BlockTable {}
unsafe impl Sync for BlockTable {}

impl BlockTable {
    /// A table for `size` bytes in units of `unit` from `phase`: in memory,
    /// or in `dir` (created, or the earlier run's table loaded after
    /// checking it is for the same target, unit and phase).
    pub fn open(label: &str, size: u64, unit: u32, phase: u64, dir: Option<&Path>) -> Result<BlockTable, Problem> {
        let units = size.saturating_sub(phase) / unit as u64;
        let bytes = TABLE_HEADER as u64 + units * 8;
        let (mut map, file) = match dir {
            None => {
                check_memory(label, bytes)?;
                let map =
                    memmap2::MmapMut::map_anon(bytes as usize).map_err(|e| Problem::System(format!("verify table for {label}: {e}")))?;
                (map, None)
            }
            Some(dir) => {
                let (map, file) = map_state(label, size, (unit, phase), bytes, dir)?;
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
            map[PHASE_AT..PHASE_AT + 8].copy_from_slice(&phase.to_le_bytes());
            map[LABEL_AT..LABEL_AT + l.len()].copy_from_slice(l);
        }
        let base = map.as_mut_ptr();
        let table = BlockTable { map, base, units, unit, phase, label: label.to_string(), _file: file, checked: OnceLock::new() };
        if !fresh {
            // What was in flight when the last run ended is unknown; and after a
            // host crash the counter may lag the words it numbered: it goes on
            // above the highest generation any word holds.
            let mut highest = 0;
            for i in 0..units as usize {
                let w = table.word(i);
                let now = recovered(w.load(Ordering::Relaxed));
                w.store(now, Ordering::Relaxed);
                if now != DELETED {
                    highest = highest.max(now & GEN_MASK);
                }
            }
            // SAFETY: as in `next_generation`.
            let counter = unsafe { &*(table.base.add(GEN_AT) as *const AtomicU64) };
            counter.fetch_max(highest + 1, Ordering::Relaxed);
        }
        Ok(table)
    }

    #[inline]
    pub(super) fn word(&self, i: usize) -> &AtomicU64 {
        assert!((i as u64) < self.units, "unit {i} beyond the table of {}", self.label);
        // SAFETY: in bounds of the mapping (checked), 8-aligned (the
        // mapping is page aligned), and only ever used as an atomic.
        unsafe { &*(self.base.add(TABLE_HEADER + i * 8) as *const AtomicU64) }
    }

    #[inline]
    pub(super) fn next_generation(&self) -> u64 {
        // SAFETY: as in `word`: the header's counter, 8-aligned, atomics only.
        let counter = unsafe { &*(self.base.add(GEN_AT) as *const AtomicU64) };
        counter.fetch_add(1, Ordering::Relaxed) & GEN_MASK
    }

    pub(super) fn update(&self, i: usize, f: impl Fn(u64) -> u64) {
        let _ = self.word(i).fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| Some(f(w)));
    }

    /// Units `[first, first + n)` that any write of this run (or its saved
    /// state) reached and no delete removed.
    pub(super) fn any_written(&self, first: usize, n: usize) -> bool {
        (first..first + n).any(|i| !matches!(self.word(i).load(Ordering::Relaxed), 0 | DELETED))
    }

    /// The generation unit `i` holds for this run (0: none, deleted, or
    /// checked by a backlog read since its last write).
    fn written(&self, i: usize) -> u64 {
        if self.checked.get().is_some_and(|b| b[i / 64].load(Ordering::Acquire) & (1 << (i % 64)) != 0) {
            return 0;
        }
        match self.word(i).load(Ordering::Relaxed) {
            0 | DELETED => 0,
            w => (w & GEN_MASK).max(1),
        }
    }

    /// A `verify_backlog` read judged units `first..` while their words
    /// stayed `snaps`: the verify pass need not read them again. (A write
    /// issued meanwhile changed the word, so its unit is not marked; one
    /// issued later clears the mark when it completes.)
    pub(super) fn mark_checked(&self, first: usize, snaps: &[u64]) {
        let bits = self.checked.get_or_init(|| (0..self.units.div_ceil(64)).map(|_| AtomicU64::new(0)).collect());
        for (k, snap) in snaps.iter().enumerate() {
            let i = first + k;
            if self.word(i).load(Ordering::Acquire) == *snap {
                bits[i / 64].fetch_or(1 << (i % 64), Ordering::AcqRel);
            }
        }
    }

    /// A write to unit `i` completed: the pass reads it again.
    #[inline]
    pub(super) fn unchecked(&self, i: usize) {
        if let Some(bits) = self.checked.get() {
            bits[i / 64].fetch_and(!(1 << (i % 64)), Ordering::AcqRel);
        }
    }

    /// The word of unit `i` now.
    pub(super) fn now(&self, i: usize) -> u64 {
        self.word(i).load(Ordering::Acquire)
    }

    /// Write the table to its file now (a run that ends normally; a crash
    /// leaves it to the kernel, which keeps the mapped pages).
    pub fn flush(&self) {
        if self._file.is_some() {
            let _ = self.map.flush();
        }
    }
}

/// The written pieces of `units`: (first unit, count) of each run of units
/// one write left (the same generation), at most `most` units long; what
/// nothing wrote is left out.
pub(super) fn pieces(table: &BlockTable, units: std::ops::Range<usize>, most: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut last = 0u64;
    for i in units {
        let g = table.written(i);
        match out.last_mut() {
            Some((start, n)) if g != 0 && g == last && *start + *n == i && *n < most => *n += 1,
            _ if g != 0 => out.push((i, 1)),
            _ => {}
        }
        last = g;
    }
    out
}

/// The state file of a target: created, or opened and checked.
fn map_state(label: &str, size: u64, grid: (u32, u64), bytes: u64, dir: &Path) -> Result<(memmap2::MmapMut, File), Problem> {
    std::fs::create_dir_all(dir).map_err(|e| Problem::System(format!("verify_state {}: {e}", dir.display())))?;
    let path = state_path(dir, label);
    let exists = path.symlink_metadata().is_ok();
    // Never through a symbolic link: a state file is written to, and a link
    // may lead anywhere (a missing file it names was created there).
    let mut open = OpenOptions::new();
    open.read(true).write(true).create(true).truncate(false).custom_flags(libc::O_NOFOLLOW);
    let file = open.open(&path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => a_link(&path),
        _ => Problem::System(format!("{}: {e}", path.display())),
    })?;
    // SAFETY: flock on an open descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(Problem::Input(format!(
            "{}: another storbench run is using this verify state; wait for it or give another verify_state",
            path.display()
        )));
    }
    let len = file.metadata().map_err(|e| Problem::System(format!("{}: {e}", path.display())))?.len();
    if exists && len > 0 {
        check_state(&file, &path, label, size, grid, bytes, len)?;
    } else {
        file.set_len(bytes).map_err(|e| Problem::System(format!("{}: {e}", path.display())))?;
    }
    // SAFETY: the file is ours (locked) for the table's lifetime; another
    // process changing it underneath would only change what is judged.
    let map = unsafe { memmap2::MmapMut::map_mut(&file) }.map_err(|e| Problem::System(format!("{}: {e}", path.display())))?;
    Ok((map, file))
}

/// `grid`: the unit and the phase the job lays its units in.
fn check_state(file: &File, path: &Path, label: &str, size: u64, grid: (u32, u64), bytes: u64, len: u64) -> Result<(), Problem> {
    let (unit, phase) = grid;
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; TABLE_HEADER];
    file.read_exact_at(&mut head, 0).map_err(|e| Problem::Input(format!("{}: not a verify state ({e})", path.display())))?;
    let u32_at = |a: usize| u32::from_le_bytes(head[a..a + 4].try_into().expect("4 bytes"));
    let u64_at = |a: usize| u64::from_le_bytes(head[a..a + 8].try_into().expect("8 bytes"));
    let p = path.display();
    if head[..8] != TABLE_MAGIC[..] || u32_at(8) != TABLE_VERSION {
        return Err(Problem::Input(format!("{p}: not a verify state this storbench writes; remove it or give another verify_state")));
    }
    let saved_label = String::from_utf8_lossy(&head[LABEL_AT..LABEL_AT + (u32_at(40) as usize).min(TABLE_HEADER - LABEL_AT)]).into_owned();
    if saved_label != label || u64_at(24) != size {
        return Err(Problem::Input(format!(
            "{p}: kept for {saved_label} ({} bytes), not {label} ({size} bytes); give another verify_state",
            u64_at(24)
        )));
    }
    if u32_at(12) != unit {
        return Err(Problem::Input(format!(
            "{p}: kept in {}-byte units; give verify_interval={} (or another verify_state)",
            u32_at(12),
            u32_at(12)
        )));
    }
    if u64_at(PHASE_AT) != phase {
        return Err(Problem::Input(format!(
            "{p}: kept in units starting at offset {}, not {phase}; give the job an offset a whole number of units from it (or another verify_state)",
            u64_at(PHASE_AT)
        )));
    }
    if len != bytes {
        return Err(Problem::Input(format!("{p}: cut short ({len} of {bytes} bytes); remove it or give another verify_state")));
    }
    Ok(())
}

fn a_link(path: &Path) -> Problem {
    Problem::Input(format!(
        "{}: a symbolic link; state files are never written through one: remove it or give another verify_state",
        path.display()
    ))
}

/// An earlier run's state for this target, if `dir` has one, is for the
/// same target, unit and phase, and no symbolic link (refused when planned).
pub(super) fn check_saved(dir: &Path, label: &str, size: u64, grid: (u32, u64)) -> Result<(), Problem> {
    let path = state_path(dir, label);
    if path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(a_link(&path));
    }
    let Ok(file) = File::open(&path) else { return Ok(()) };
    let len = file.metadata().map_err(|e| Problem::System(format!("{}: {e}", path.display())))?.len();
    let units = size.saturating_sub(grid.1) / grid.0 as u64;
    check_state(&file, &path, label, size, grid, TABLE_HEADER as u64 + units * 8, len)
}

/// A target's state file in `dir`: its label with what is not a letter or
/// digit made '_'.
pub fn state_path(dir: &Path, label: &str) -> PathBuf {
    let name: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    dir.join(format!("{}.vstate", name.trim_start_matches('_')))
}

/// An in-memory table takes memory for the whole run: refuse one that would
/// crowd the machine (as the plan's own limits do).
fn check_memory(label: &str, bytes: u64) -> Result<(), Problem> {
    let avail = crate::plan::limits::available_memory().unwrap_or(u64::MAX);
    if bytes > avail / 2 {
        return Err(Problem::Input(format!(
            "verifying {label} needs a table of {} MiB (8 bytes per unit), more than half the memory available; \
             give a larger verify_interval, a smaller size, or verify_state=DIR to keep it in a file",
            bytes >> 20
        )));
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
    pub(super) fn table(&self, label: &str, size: u64, grid: (u32, u64), dir: Option<&Path>) -> Result<Arc<BlockTable>, Problem> {
        let (unit, phase) = grid;
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = tables.get(label) {
            if t.unit != unit {
                return Err(Problem::Input(format!(
                    "{label} is verified in {}-byte units by an earlier job; give verify_interval={}",
                    t.unit, t.unit
                )));
            }
            if t.phase != phase {
                return Err(Problem::Input(format!(
                    "{label} is verified in units starting at offset {} by an earlier job; give this job an offset a whole number of {unit}-byte units from it",
                    t.phase
                )));
            }
            if t.units < size.saturating_sub(phase) / unit as u64 {
                return Err(Problem::Input(format!(
                    "{label} is verified over {} bytes by an earlier job; give the jobs that verify it the same size",
                    t.units * unit as u64
                )));
            }
            return Ok(t.clone());
        }
        let t = Arc::new(BlockTable::open(label, size, unit, phase, dir)?);
        tables.insert(label.to_string(), t.clone());
        Ok(t)
    }

    pub(super) fn writers(&self, job: u32) -> Arc<AtomicU32> {
        self.writers.lock().unwrap_or_else(|e| e.into_inner()).entry(job).or_default().clone()
    }

    /// Every table to its file (the run ends).
    pub fn flush(&self) {
        for t in self.tables.lock().unwrap_or_else(|e| e.into_inner()).values() {
            t.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pass_reads_back_each_write_as_it_was_made() {
        let t = BlockTable::open("pieces", 8 * 512, 512, 0, None).unwrap();
        let write = |units: std::ops::Range<usize>, g: u64| units.for_each(|i| t.update(i, |w| ended(began(w), g, true)));
        write(0..4, 5);
        write(4..6, 6);
        write(7..8, 7);
        assert_eq!(pieces(&t, 0..8, 64), [(0, 4), (4, 2), (7, 1)], "one read per write; unit 6 was never written");
        assert_eq!(pieces(&t, 0..8, 2), [(0, 2), (2, 2), (4, 2), (7, 1)], "at most the slot's length");
        assert_eq!(pieces(&t, 1..5, 64), [(1, 3), (4, 1)], "within the region asked for");
        // What a backlog read judged is left out, until a write changes it again.
        let snaps: Vec<u64> = (4..6).map(|i| t.now(i)).collect();
        t.mark_checked(4, &snaps);
        assert_eq!(pieces(&t, 0..8, 64), [(0, 4), (7, 1)]);
        write(5..6, 8);
        t.unchecked(5);
        assert_eq!(pieces(&t, 0..8, 64), [(0, 4), (5, 1), (7, 1)]);
    }

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

    /// A state that is not this target's is the input's to change; a
    /// directory that cannot be made is the system's (an exit code each).
    #[test]
    fn a_state_that_does_not_fit_is_the_inputs_fault_and_a_failed_call_the_systems() {
        let dir = std::env::temp_dir().join(format!("sb-vstate-kind-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        drop(BlockTable::open("/dev/x", 1 << 20, 4096, 0, Some(&dir)).unwrap());
        let other = BlockTable::open("/dev/x", 1 << 20, 8192, 0, Some(&dir)).err().expect("another unit");
        assert!(matches!(&other, Problem::Input(m) if m.contains("verify_interval=4096")), "{other:?}");
        std::fs::write(dir.join("plain"), b"a file").unwrap();
        let under_a_file = BlockTable::open("/dev/x", 1 << 20, 4096, 0, Some(&dir.join("plain").join("d"))).err().expect("ENOTDIR");
        assert_eq!(under_a_file.fault(), storbench_model::Fault::System, "{under_a_file}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_state_file_keeps_generations_and_refuses_another_target_or_unit() {
        let dir = std::env::temp_dir().join(format!("sb-vstate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let t = BlockTable::open("/dev/x", 1 << 20, 4096, 0, Some(&dir)).unwrap();
            let g = t.next_generation();
            t.update(3, began);
            t.update(3, |w| ended(w, g, true));
            t.update(4, began); // in flight when the run "dies"
            t.flush();
        }
        let t = BlockTable::open("/dev/x", 1 << 20, 4096, 0, Some(&dir)).unwrap();
        assert_eq!(expect(t.word(3).load(Ordering::Relaxed)), Expect::Range(1, 1));
        assert_eq!(expect(t.word(4).load(Ordering::Relaxed)), Expect::Unknown);
        assert_eq!(t.next_generation(), 2, "the counter goes on");
        drop(t);
        assert!(BlockTable::open("/dev/x", 1 << 20, 8192, 0, Some(&dir)).err().unwrap().to_string().contains("verify_interval=4096"));
        assert!(BlockTable::open("/dev/x", 2 << 20, 4096, 0, Some(&dir)).err().unwrap().to_string().contains("not /dev/x"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
