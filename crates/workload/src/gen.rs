//! The per-worker operation generator: which operation, where, how large.
//!
//! Allocation happens in [`IoGen::new`] only; [`IoGen::next`] is called once per
//! I/O on the hot path and does a handful of arithmetic operations.

use crate::blockmap::BlockMap;
use crate::dist::{BlockSampler, RandomMap};
use crate::rng::Rng;
use crate::spec::{JobSpec, OpKind, SizeSplit, StridedZones, SyncEvery};

/// One operation to issue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NextIo {
    pub op: OpKind,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// A read of a whole object (HTTP engines then ask for no byte range).
    pub whole: bool,
    /// Object size class, 1-based (see [`crate::ObjectSizes::classes`]); 0
    /// when the job has no classes or the object's size is not known.
    pub class: u8,
}

#[derive(Clone, Debug)]
struct SizeSampler {
    sizes: Vec<u64>,
    cumulative: Vec<u64>,
    total: u64,
}

impl SizeSampler {
    /// Sizes in fio's order: by share, smallest first (fio sorts bssplit
    /// so), which decides the size taken where the drawn one does not fit.
    fn new(split: &SizeSplit) -> SizeSampler {
        let mut entries = split.0.clone();
        entries.sort_by_key(|e| e.1);
        let mut acc = 0;
        let cumulative = entries.iter().map(|(_, w)| {
            acc += *w as u64;
            acc
        });
        let cumulative: Vec<u64> = cumulative.collect();
        SizeSampler { sizes: entries.iter().map(|e| e.0).collect(), cumulative, total: acc }
    }
    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0];
        }
        let x = rng.below(self.total);
        let i = self.cumulative.iter().position(|c| x < *c).unwrap_or(self.sizes.len() - 1);
        self.sizes[i]
    }

    /// A size that fits in `room` bytes, as fio's `get_next_buflen` picks
    /// it: where the drawn size does not fit, the next one in fio's order
    /// that does, and a new draw when none does; `room` itself when not
    /// even the smallest fits.
    fn sample_fitting(&self, rng: &mut Rng, room: u64) -> u64 {
        if self.sizes.iter().all(|s| *s > room) {
            return room;
        }
        loop {
            let x = rng.below(self.total);
            let drawn = self.cumulative.iter().position(|c| x < *c).unwrap_or(self.sizes.len() - 1);
            if let Some(len) = self.sizes[drawn..].iter().find(|s| **s <= room) {
                return *len;
            }
        }
    }
}

/// Where one worker's I/O goes: `files` files, each used over `[start, start+len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Region {
    pub files: u32,
    pub start: u64,
    pub len: u64,
    /// The target's size (its smallest file's), where fio's offset
    /// modifiers wrap; 0: unknown, taken as the region's end (as the job
    /// lays its files out). Absent from earlier coordinators.
    #[serde(default)]
    pub end: u64,
}

impl Region {
    /// fio's real_file_size for the wrap of a holed or backwards pass.
    #[inline]
    fn file_size(&self) -> u64 {
        match self.end {
            0 => self.start + self.len,
            e => e,
        }
    }
}

/// The random stream of `worker` of job `job` (the job's place in the run),
/// as fio seeds by its thread number (init.c `setup_random_seeds`: the seed
/// times the thread number, which counts every job and clone of the file):
/// two jobs given the same seed go to different offsets, and a run of the
/// same jobs repeats itself. The first job's workers keep their numbers.
pub fn stream(job: u32, worker: u32) -> u64 {
    (job as u64) << 32 | worker as u64
}

/// Generates the operations of one worker.
#[derive(Clone, Debug)]
pub struct IoGen {
    rng: Rng,
    read_threshold: u64,
    always_read: bool,
    /// Writes are issued as trims (fio's trim patterns).
    trims: bool,
    /// Every operation is this file-system operation (fio's metadata engines).
    meta: Option<OpKind>,
    read_sizes: SizeSampler,
    write_sizes: SizeSampler,
    random: bool,
    sampler: BlockSampler,
    /// Uniform random offsets without repeats within a pass (fio's random
    /// map), one per file as in fio.
    maps: Vec<RandomMap>,
    /// fio's random map where block sizes differ (bssplit, bsrange), one
    /// per file: a bit per smallest block (see [`BlockMap`]).
    blockmaps: Vec<BlockMap>,
    /// Per direction (read, write), fio's `ba` and `min_bs`: the unit a
    /// random block number of that direction counts in, and the unit its
    /// I/O marks the map in (see [`IoGen::place_mapped`]).
    dir_units: [(u64, u64); 2],
    align: u64,
    region: Region,
    next_file: u32,
    /// Sequential cursors, per file and direction (relative to region start).
    cursors: Vec<[u64; 2]>,
    sync: Option<SyncEvery>,
    writes_since_sync: u32,
    bytes_left: Option<u64>,
    /// How passes over the region follow one another (fio's keep_running).
    passes: Passes,
    /// The largest block of either direction.
    largest: u64,
    ops_left: Option<u64>,
    /// fio's offset modifier: bytes added between sequential I/Os.
    skip: i64,
    /// I/Os in a row from one random offset, and how many of each file's
    /// current run are left.
    rand_run: u32,
    run_left: Vec<u32>,
    /// A pass over the region ended (a sequential cursor or the random map
    /// started over) since [`IoGen::take_wrapped`] was last asked.
    wrapped: bool,
    /// fio's strided zones: the zone in use (start relative to the region)
    /// and the bytes issued in it.
    zones: Option<(StridedZones, u64, u64)>,
    /// The files done this pass (several files: fio's pass ends when every
    /// file is done, not the first; a done file is skipped till then).
    done: Vec<bool>,
    /// Where the first pass's draws began, for `randrepeat` (see
    /// [`IoGen::repeat_first_pass`]); and whether the I/O being drawn is
    /// a new pass's first, drawn again from there.
    first: Option<Box<PassStart>>,
    repeating: bool,
    /// `random_distribution=sequence`: the blocks walked instead of drawn.
    sequence: Option<Box<Sequence>>,
}

/// fio's sequence distribution (io_u.c `__get_next_rand_offset_sequence`):
/// a direction's n-th I/O goes to element n mod len, plus len per round
/// gone by with the stride; block numbers are in the direction's smallest
/// size and placed at its alignment. With the stride the walk leaves the
/// region at some point, and there fio's job has no next offset: it ends.
/// The count is fio's io_issues, per direction, across passes.
#[derive(Clone, Debug)]
struct Sequence {
    blocks: Vec<u64>,
    stride: bool,
    issued: [u64; 2],
}

impl Sequence {
    fn new(spec: &JobSpec) -> Option<Box<Sequence>> {
        match &spec.distribution {
            crate::spec::Distribution::Sequence { blocks } if !blocks.is_empty() && spec.rw.is_random() => {
                Some(Box::new(Sequence { blocks: blocks.clone(), stride: spec.sequence_stride, issued: [0, 0] }))
            }
            _ => None,
        }
    }

    /// The direction's next block, or `None` past `max` blocks.
    #[inline]
    fn next(&mut self, dir: usize, max: u64) -> Option<u64> {
        let n = self.issued[dir];
        let len = self.blocks.len() as u64;
        let element = self.blocks[(n % len) as usize];
        let b = if self.stride { (n / len).saturating_mul(len).saturating_add(element) } else { element };
        self.issued[dir] += 1;
        (b < max).then_some(b)
    }
}

/// The random state a job's first pass drew from.
#[derive(Clone, Debug)]
struct PassStart {
    rng: Rng,
    maps: Vec<RandomMap>,
}

impl IoGen {
    /// `stream` ([`stream`] of the job and worker) makes each worker's
    /// random stream distinct; `io_limit` is the byte budget (None:
    /// unlimited, the run is time bound).
    pub fn new(spec: &JobSpec, region: Region, stream: u64, io_limit: Option<u64>) -> IoGen {
        let read_pct = spec.read_percent();
        let align = spec.blockalign.unwrap_or(spec.bs.min()).max(1);
        let mut rng = Rng::new(spec.seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let files = region.files.max(1) as usize;
        let blocks = (region.len / align).max(1);
        let (maps, blockmaps) = match random_map(spec) {
            Some(MapKind::Permutation) => ((0..files).map(|_| RandomMap::new(blocks, &mut rng)).collect(), Vec::new()),
            // A bit per smallest block of either direction, whatever blockalign (fio's axmap).
            Some(MapKind::Bits) => (Vec::new(), (0..files).map(|_| BlockMap::new(region.len / spec.bs.min().max(1))).collect()),
            None => (Vec::new(), Vec::new()),
        };
        let sampler = BlockSampler::new(&spec.distribution, blocks, &mut rng);
        let unit = |min: u64| (spec.blockalign.unwrap_or(min).max(1), min.max(1));
        IoGen {
            dir_units: [unit(spec.bs.read.min()), unit(spec.bs.write.min())],
            rng,
            read_threshold: (read_pct / 100.0 * u64::MAX as f64) as u64,
            always_read: read_pct >= 100.0,
            trims: spec.trims,
            meta: spec.kind.meta(),
            read_sizes: SizeSampler::new(&spec.bs.read),
            write_sizes: SizeSampler::new(&spec.bs.write),
            random: spec.rw.is_random(),
            sampler,
            maps,
            blockmaps,
            align,
            region,
            next_file: 0,
            cursors: vec![[0, 0]; region.files.max(1) as usize],
            sync: spec.sync,
            writes_since_sync: 0,
            bytes_left: io_limit,
            passes: Passes::new(spec, io_limit),
            largest: spec.bs.read.max().max(spec.bs.write.max()),
            // fio's number_ios is per loop (exceeds_number_ios).
            ops_left: spec.number_ios.map(|n| n.saturating_mul(u64::from(spec.passes.max(1)))),
            wrapped: false,
            skip: spec.seq_skip,
            rand_run: spec.rand_run.max(1),
            run_left: vec![0; region.files.max(1) as usize],
            zones: spec.zones.map(|z| (z, 0, 0)),
            done: vec![false; region.files.max(1) as usize],
            first: None,
            repeating: false,
            sequence: Sequence::new(spec),
        }
        .with_first_pass(spec)
    }

    /// Keep the state the first pass draws from where passes are counted
    /// and `randrepeat` asks each to draw what it drew.
    fn with_first_pass(mut self, spec: &JobSpec) -> IoGen {
        if spec.randrepeat && self.passes.counted {
            self.first = Some(Box::new(PassStart { rng: self.rng.clone(), maps: self.maps.clone() }));
        }
        self
    }

    /// fio's randrepeat (backend.c: clear_io_state at each loop reseeds
    /// every generator, td_fill_rand_seeds): a new pass's first I/O, drawn
    /// from where the last pass left off, is given back (its bytes and
    /// count) and the generator starts again from where the first pass
    /// did, so every pass issues the same offsets, sizes and mix. Whether
    /// it did.
    fn repeat_first_pass(&mut self, io: &NextIo) -> bool {
        let Some(first) = self.first.as_deref() else { return false };
        (self.rng, self.maps) = (first.rng.clone(), first.maps.clone());
        if let Some(left) = self.bytes_left.as_mut() {
            *left += u64::from(io.len);
        }
        if let Some(left) = self.ops_left.as_mut() {
            *left += 1;
        }
        for m in &mut self.blockmaps {
            m.clear();
        }
        self.cursors.iter_mut().for_each(|c| *c = [0, 0]);
        self.run_left.fill(0);
        self.done.fill(false);
        (self.next_file, self.repeating) = (0, true);
        true
    }

    /// fio's strided zones (io_u.c `setup_strided_zone_mode`): once `size`
    /// bytes went to the zone, move `range + skip` on (from the region's
    /// start past its end: fio 3.33 keeps going round the zones until the
    /// job's size is done). The window I/O goes to next: (start, length)
    /// within the region.
    #[inline]
    fn zone_window(&mut self, len: u64) -> Option<(u64, u64)> {
        let (z, mut start, mut done) = self.zones?;
        if done >= z.size {
            done = 0;
            start += z.range + z.skip;
            if start >= self.region.len {
                start = 0;
                self.wrapped = true;
            }
        }
        self.zones = Some((z, start, done + len));
        Some((start, z.range.min(self.region.len - start)))
    }

    /// An offset inside the zone `(start, zone_len)`: sequential from the
    /// zone's start (again from it at its end), or uniform within it.
    #[inline]
    fn place_in_zone(&mut self, dir: usize, len: u64, (start, zone_len): (u64, u64)) -> u64 {
        let last = start + zone_len.saturating_sub(len) / self.align * self.align;
        if self.random {
            let blocks = (zone_len.saturating_sub(len) / self.align) + 1;
            return start + self.rng.below(blocks) * self.align;
        }
        let cur = &mut self.cursors[0][dir];
        if *cur < start || *cur > last {
            *cur = start;
        }
        let off = *cur;
        *cur += len;
        off
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Whether a pass over the region ended since the last call: fio drops
    /// the page cache again there (`invalidate`), so every pass of a
    /// time-based buffered job starts cold.
    #[inline]
    pub fn take_wrapped(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }

    /// Where the next I/O of `len` goes; `None` where there is no next
    /// offset (a strided sequence past the region's end).
    #[inline]
    fn place(&mut self, file: u32, dir: usize, len: u64) -> Option<u64> {
        let last_start = self.region.len.saturating_sub(len);
        if self.random {
            return self.place_random(file, dir, len, last_start);
        }
        let cur = &mut self.cursors[file as usize][dir];
        let mut pos = *cur;
        // fio's `rw=write:4k` / `rw=read:-8k` (io_u.c get_next_seq_offset):
        // the skip applies from the second I/O on, and stepping off the
        // file's end (or, backwards, its start) wraps to its other end
        // within the same pass: only the bytes end such a pass. fio holds
        // the offset within the region against the file's size: from an
        // `offset`, or on a file or device larger than the region, a step
        // past the region but not the file ends the pass instead; and a
        // forward wrap goes to the offset's value within the region, as
        // fio's `pos = f->file_offset` does.
        if pos != 0 && pos < self.region.len && self.skip != 0 {
            pos = match pos.checked_add_signed(self.skip) {
                Some(p) if p < self.region.file_size() => p,
                _ if self.skip > 0 => self.region.start,
                _ => self.region.len.saturating_sub(self.skip.unsigned_abs()),
            };
        }
        // The last I/O reached the end, or the next would cross it (fio's
        // fill_io_u): the pass is over.
        if pos > last_start {
            pos = 0;
            self.wrapped = true;
        }
        *cur = pos + len;
        Some(pos)
    }

    /// A random offset, or with `rw=randread:N` the next of N in a row.
    #[inline]
    fn place_random(&mut self, file: u32, dir: usize, len: u64, last_start: u64) -> Option<u64> {
        let f = file as usize;
        let cur = &mut self.cursors[f][dir];
        if self.run_left[f] > 0 {
            self.run_left[f] -= 1;
            if *cur <= last_start {
                let off = *cur;
                *cur += len;
                return Some(off);
            }
        }
        let (b, align) = match (self.sequence.as_deref_mut(), self.maps.get_mut(f)) {
            (Some(s), _) => {
                // `dir` is 1 for reads; dir_units holds reads first.
                let (unit, min) = self.dir_units[usize::from(dir == 0)];
                (s.next(dir, self.region.len / min)?, unit)
            }
            (None, Some(m)) => {
                self.wrapped |= m.pass_done();
                (m.next(&mut self.rng), self.align)
            }
            (None, None) => (self.sampler.sample(&mut self.rng), self.align),
        };
        let off = b.saturating_mul(align).min(last_start / align * align);
        self.run_left[f] = self.rand_run - 1;
        self.cursors[file as usize][dir] = off + len;
        Some(off)
    }
}

impl IoGen {
    /// Sequential I/O where sizes differ or files are several, without
    /// holes or zones: sizes fit what is left of a file and files are done
    /// one by one, as in fio (see [`IoGen::fitting`]).
    #[inline]
    fn fits_files(&self) -> bool {
        let mixed = self.read_sizes.sizes.len() > 1 || self.write_sizes.sizes.len() > 1;
        !self.random && self.skip == 0 && self.zones.is_none() && (mixed || self.region.files > 1)
    }

    /// A sequential I/O's size and file as fio picks them (io_u.c
    /// `get_next_buflen`, `set_io_u_file`): a size that fits what is left
    /// of the file (drawn again where the drawn one does not); a file
    /// without room for the smallest is done for this pass and the next
    /// file not done is taken; once every file is done the pass ends and
    /// all of them start over (fio's clear_io_state).
    fn fitting(&mut self, file: &mut u32, read: bool) -> u64 {
        let dir = read as usize;
        let sizes = if read { &self.read_sizes } else { &self.write_sizes };
        let min = sizes.sizes.iter().copied().min().unwrap_or(1);
        loop {
            let room = self.region.len.saturating_sub(self.cursors[*file as usize][dir]);
            if room >= min {
                let sizes = if read { &self.read_sizes } else { &self.write_sizes };
                return match sizes.sizes.len() {
                    1 => min,
                    _ => sizes.sample_fitting(&mut self.rng, room),
                };
            }
            self.done[*file as usize] = true;
            match self.next_open(*file) {
                Some(f) => *file = f,
                None => self.all_done(),
            }
        }
    }

    /// A random job's file whose map is full is done for this pass; the
    /// next file not done is taken, and once every file is done the pass
    /// ends with every map cleared (several files only: one file's full
    /// map starts its next pass in [`IoGen::place_mapped`]).
    fn skip_full_maps(&mut self, file: &mut u32) {
        if self.region.files <= 1 {
            return;
        }
        while self.blockmaps[*file as usize].next_free(0).is_none() {
            self.done[*file as usize] = true;
            match self.next_open(*file) {
                Some(f) => *file = f,
                None => return self.all_done(),
            }
        }
    }

    /// The next file after `file`, in turn, not done this pass.
    fn next_open(&self, file: u32) -> Option<u32> {
        let n = self.region.files.max(1);
        (1..n).map(|k| (file + k) % n).find(|f| !self.done[*f as usize])
    }

    /// Every file is done: a new pass over all of them.
    fn all_done(&mut self) {
        self.done.fill(false);
        for c in &mut self.cursors {
            *c = [0, 0];
        }
        for m in &mut self.blockmaps {
            m.clear();
        }
        self.wrapped = true;
    }
}

/// How a random job remembers the blocks it has done this pass.
enum MapKind {
    /// One block size: a keyed permutation walked in order (no memory).
    Permutation,
    /// Sizes differ: a bit per smallest block, I/Os cut at done blocks.
    Bits,
}

/// fio keeps a map of the blocks a random job with uniform offsets has
/// visited unless told `norandommap`, whatever its block sizes; a pass ends
/// when the map is full. Other distributions pick hot blocks on purpose and
/// have no map in fio either (fio turns it off for them).
fn random_map(spec: &JobSpec) -> Option<MapKind> {
    if !(spec.randommap && spec.rw.is_random() && matches!(spec.distribution, crate::spec::Distribution::Uniform)) {
        return None;
    }
    let one_size = spec.bs.read.0.len() == 1 && spec.bs.read == spec.bs.write;
    Some(if one_size { MapKind::Permutation } else { MapKind::Bits })
}

impl IoGen {
    /// Take `len` from the byte budget; `None` once it does not hold it.
    #[inline]
    fn spend(&mut self, len: u64) -> Option<()> {
        if let Some(left) = self.bytes_left.as_mut() {
            if *left < len {
                return None;
            }
            *left -= len;
        }
        Some(())
    }

    /// A random offset and size as fio places them with its random map
    /// when sizes differ: the offset first (the next free block from a
    /// uniform draw; a new pass, with the cache dropped, once none is
    /// free), then a size that fits before the region's end, cut short at
    /// the first block already done (fio's `mark_random_map`), so a pass
    /// moves exactly the region's bytes.
    ///
    /// As in fio (io_u.c), the map has a bit per smallest block of either
    /// direction, but a direction draws its block number in its own unit
    /// (`ba`), checks that bit, and marks from `offset / min_bs` of its own
    /// sizes: where reads and writes differ (cmdprio-bssplit.fio: 64 KiB
    /// reads, 1 MiB writes) a write marks one bit a MiB and is never cut,
    /// and a write whose next free bit lies past its last block lands past
    /// the region, where fio's pass ends (`None`; the job's first pass of
    /// that example ends after 18 of its 64 MiB).
    fn place_mapped(&mut self, file: u32, read: bool) -> Option<(u64, u64)> {
        let (unit, min) = self.dir_units[usize::from(!read)];
        let map = &mut self.blockmaps[file as usize];
        // fio's last_block: the blocks of this unit whose smallest I/O fits.
        let last = (self.region.len.saturating_sub(min.saturating_sub(unit)) / unit).clamp(1, map.blocks());
        let drawn = self.rng.below(last);
        let b = match map.next_free(drawn) {
            Some(b) => b,
            None => {
                map.clear();
                self.wrapped = true;
                drawn
            }
        };
        let offset = b.checked_mul(unit).filter(|o| *o < self.region.len)?;
        let sizes = if read { &self.read_sizes } else { &self.write_sizes };
        let len = sizes.sample_fitting(&mut self.rng, self.region.len - offset);
        let marked = map.set_run(offset / min, len.div_ceil(min));
        Some((offset, len.min(marked * min)))
    }

    /// fio's pass ended short (a block past the region): a new pass begins
    /// while the budget holds a largest block; whether it runs is fio's
    /// keep_running (`Passes`): a job of one pass ends there, a time-bound
    /// one or one of `loops` or an `io_size` beyond the files goes on.
    fn pass_ended_short(&mut self, file: u32) -> Option<()> {
        // Whether another pass follows is decided with its first I/O (`Passes::begin`).
        if self.bytes_left.is_some_and(|left| left < self.largest) {
            return None;
        }
        self.blockmaps[file as usize].clear();
        self.wrapped = true;
        Some(())
    }
}

impl Iterator for IoGen {
    type Item = NextIo;

    /// The next operation, or `None` once the byte budget is spent.
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        if self.passes.ended || self.passes.timed_pass_full() {
            return None;
        }
        if let Some(io) = self.passes.pending.take() {
            return Some(io);
        }
        if let Some(left) = self.ops_left.as_mut() {
            if *left == 0 {
                return None;
            }
            *left -= 1;
        }
        let mut file = self.next_file;
        if let Some(s) = self.sync {
            if self.writes_since_sync >= s.every {
                self.writes_since_sync = 0;
                return Some(NextIo { op: OpKind::Sync, file, offset: 0, len: 0, whole: false, class: 0 });
            }
        }
        let read = self.always_read || (self.read_threshold != 0 && self.rng.next_u64() < self.read_threshold);
        // Whether this I/O begins a new pass (a wrap not yet taken stays so).
        let wrapped_before = std::mem::take(&mut self.wrapped);
        // Strided zones place I/O themselves (fio has no random map there).
        let (at, len) = match self.blockmaps.is_empty() || self.zones.is_some() {
            true => {
                let len = match self.fits_files() {
                    true => self.fitting(&mut file, read),
                    false if read => self.read_sizes.sample(&mut self.rng),
                    false => self.write_sizes.sample(&mut self.rng),
                };
                self.spend(len)?;
                let at = match self.zone_window(len) {
                    Some(window) => self.place_in_zone(read as usize, len, window),
                    None => self.place(file, read as usize, len)?,
                };
                (at, len)
            }
            false => {
                self.skip_full_maps(&mut file);
                let (offset, len) = match self.place_mapped(file, read) {
                    Some(placed) => placed,
                    None => {
                        self.pass_ended_short(file)?;
                        self.place_mapped(file, read)?
                    }
                };
                self.spend(len)?;
                (offset, len)
            }
        };
        let repeated = std::mem::take(&mut self.repeating);
        let new_pass = (self.wrapped || repeated) && self.zones.is_none();
        let offset = self.region.start + at;
        let op = match (self.meta, read, self.trims) {
            (Some(meta), _, _) => meta,
            (None, true, _) => OpKind::Read,
            (None, false, true) => OpKind::Trim,
            (None, false, false) => OpKind::Write,
        };
        let io = NextIo { op, file, offset, len: len as u32, whole: false, class: 0 };
        if new_pass && self.passes.counted && !repeated && self.repeat_first_pass(&io) {
            return self.next();
        }
        self.wrapped |= wrapped_before;
        self.next_file = if file + 1 >= self.region.files { 0 } else { file + 1 };
        if !read {
            self.writes_since_sync += 1;
        }
        if new_pass && self.passes.counted {
            return self.passes.begin(io, self.largest);
        }
        self.passes.done += len;
        self.passes.this_pass += len;
        Some(io)
    }
}

/// fio's rule for the passes over a job's files (backend.c keep_running):
/// `loops` passes first, whatever they moved; then another only while the
/// bytes done, verify reads included, fall short of io_size (or size) by a
/// largest block, and, without io_size, never once the files are done. A
/// pass ends where the files end (a holed `rw=write:112k` pass too) or its
/// random map is full; a time-based job passes until its runtime.
#[derive(Clone, Debug)]
struct Passes {
    /// Not time based: passes end and are counted.
    counted: bool,
    /// Passes still owed to `loops` after the current one.
    loops_left: u32,
    /// fio's limit: io_size or size, bytes per loop.
    limit: u64,
    /// io_size was given, or the job reads its writes back: fio then passes
    /// on over done files (its verify phase sets them undone again).
    sized: bool,
    /// Bytes read and written, verify reads included.
    done: u64,
    /// The worker verifies each pass: the generator stops at a pass's end
    /// and keeps its first I/O of the next pass here until told to go on.
    hold: bool,
    ended: bool,
    pending: Option<NextIo>,
    /// A time-based job that reads each pass back: its passes are the
    /// job's size in bytes issued (fio's do_io leaves for do_verify there),
    /// and the bytes issued in this one.
    per_pass: u64,
    this_pass: u64,
}

impl Passes {
    fn new(spec: &JobSpec, io_limit: Option<u64>) -> Passes {
        let loops = spec.passes.max(1);
        Passes {
            counted: io_limit.is_some(),
            loops_left: loops - 1,
            limit: io_limit.map_or(u64::MAX, |l| l / u64::from(loops)),
            sized: spec.io_size.is_some() || (spec.writes() && spec.verify.as_ref().is_some_and(|v| v.after)),
            done: 0,
            hold: false,
            ended: false,
            pending: None,
            per_pass: u64::MAX,
            this_pass: 0,
        }
    }

    /// A time-based pass read back has issued its bytes: it ends (before
    /// the next I/O is drawn, as fio's do_io leaves its loop).
    #[inline]
    fn timed_pass_full(&mut self) -> bool {
        if self.this_pass < self.per_pass {
            return false;
        }
        (self.this_pass, self.ended) = (0, true);
        true
    }

    /// fio's keep_running at a pass's end: whether another pass follows.
    fn again(&mut self, largest: u64) -> bool {
        if !self.counted {
            return true;
        }
        if self.loops_left > 0 {
            self.loops_left -= 1;
            return true;
        }
        self.sized && self.done < self.limit && self.limit - self.done >= largest
    }

    /// `io` is the first I/O of a new pass: issued if another pass follows,
    /// kept back while the worker verifies the one that ended.
    fn begin(&mut self, io: NextIo, largest: u64) -> Option<NextIo> {
        if self.hold {
            self.ended = true;
            self.pending = Some(io);
            return None;
        }
        let again = self.again(largest);
        // Without another pass the job is over: nothing more is drawn.
        self.ended = !again;
        again.then(|| {
            self.done += u64::from(io.len);
            io
        })
    }
}

impl IoGen {
    /// The worker reads each pass back before the next (fio's do_verify in
    /// its loop): the generator stops at each pass's end (see
    /// [`IoGen::next_pass`]).
    pub fn verify_each_pass(&mut self) {
        self.passes.hold = true;
        if !self.passes.counted {
            // Time based: a pass is the job's size issued (its files' regions).
            self.passes.per_pass = self.region.len.saturating_mul(u64::from(self.region.files.max(1)));
        }
    }

    /// Bytes read besides the generator's I/Os (verify reads), which fio
    /// counts in the bytes that decide whether another pass follows.
    #[inline]
    pub fn count_read(&mut self, bytes: u64) {
        self.passes.done += bytes;
    }

    /// Whether the last `None` ended a pass, not the job.
    pub fn pass_ended(&self) -> bool {
        self.passes.ended && (self.passes.pending.is_some() || !self.passes.counted)
    }

    /// After a pass the worker verified (its reads counted): whether
    /// another pass follows (fio's keep_running); if so the generator
    /// goes on with it.
    pub fn next_pass(&mut self) -> bool {
        self.passes.ended = false;
        if !self.passes.counted {
            return true;
        }
        let again = self.passes.again(self.largest);
        match self.passes.pending.take() {
            Some(io) if again => {
                self.passes.done += u64::from(io.len);
                self.passes.pending = Some(io);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::apply_option;

    fn gen(opts: &[(&str, &str)], region_len: u64) -> IoGen {
        let mut spec = JobSpec::default();
        for (k, v) in opts {
            apply_option(&mut spec, k, v).unwrap();
        }
        IoGen::new(&spec, Region { files: 1, start: 0, len: region_len, end: 0 }, 0, None)
    }

    /// fio's random map where reads and writes differ in size
    /// (cmdprio-bssplit.fio): writes are whole 1 MiB blocks at 1 MiB
    /// offsets (a bit a MiB, never cut), reads 64 KiB-aligned and cut at
    /// blocks done; a write whose next free bit is past its last block ends
    /// a size-bound job short of its size, as fio's first job of that file
    /// ends after 18 of its 64 MiB; a time-bound one starts a new pass.
    #[test]
    fn writes_and_reads_of_different_sizes_share_the_map_in_their_own_units_as_fio() {
        let opts = [("rw", "randrw"), ("bssplit", "64k/40:1m/60,1m/100")];
        let mut short = Vec::new();
        for stream in 0..8 {
            let mut spec = JobSpec::default();
            for (k, v) in opts {
                apply_option(&mut spec, k, v).unwrap();
            }
            let g = IoGen::new(&spec, Region { files: 1, start: 0, len: 64 << 20, end: 0 }, stream, Some(64 << 20));
            let ios: Vec<NextIo> = g.collect();
            for io in &ios {
                match io.op {
                    OpKind::Write => assert!(io.len == 1 << 20 && io.offset % (1 << 20) == 0, "{io:?}"),
                    _ => assert!(io.offset % (64 << 10) == 0 && io.len <= 1 << 20, "{io:?}"),
                }
            }
            let bytes: u64 = ios.iter().map(|io| u64::from(io.len)).sum();
            assert!(bytes <= 64 << 20);
            short.push(bytes >> 20);
        }
        assert!(short.iter().any(|b| *b < 64), "some passes end short, as fio's: {short:?} MiB");
        let mut spec = JobSpec::default();
        for (k, v) in opts {
            apply_option(&mut spec, k, v).unwrap();
        }
        let mut g = IoGen::new(&spec, Region { files: 1, start: 0, len: 64 << 20, end: 0 }, 0, None);
        let bytes: u64 = g.by_ref().take(2000).map(|io| u64::from(io.len)).sum();
        assert!(bytes > 256 << 20 && g.take_wrapped(), "time-bound: new passes ({} MiB)", bytes >> 20);
        // A budget of three passes (fio's loops=3, or an io_size of three
        // times the file) passes again after a short pass, as keep_running.
        spec.io_size = Some(192 << 20);
        let g = IoGen::new(&spec, Region { files: 1, start: 0, len: 64 << 20, end: 0 }, 0, Some(192 << 20));
        let bytes: u64 = g.map(|io| u64::from(io.len)).sum();
        assert!(bytes > 128 << 20 && bytes <= 192 << 20, "three passes' budget: {} MiB", bytes >> 20);
    }

    /// fio's sequence distribution (newer than Debian's 3.33): the elements
    /// in order, over and over; with the stride each round moves on by the
    /// sequence's length and the job ends at the first block past the
    /// region (16 blocks: rounds 0..4 are whole, round 5's 17 is out). The
    /// orders are fio's: its master of 2026-08-21 (f534438), built from
    /// source, wrote these with write_iolog (io_size=160k; randrw bs=4k,8k
    /// sequence:3,0 gave reads 3 0 3 0 and writes 6 0 6 0 in 4k blocks).
    #[test]
    fn a_sequence_distribution_walks_its_blocks_and_a_stride_moves_them_on() {
        let blocks = |opts: &[(&str, &str)]| gen(opts, 16 * 4096).map(|io| io.offset / 4096).take(40).collect::<Vec<_>>();
        let fixed = blocks(&[("rw", "randread"), ("bs", "4k"), ("random_distribution", "sequence:2,0,1")]);
        assert_eq!(fixed[..7], [2, 0, 1, 2, 0, 1, 2]);
        assert_eq!(fixed.len(), 40, "a fixed sequence goes on while the job does");
        let strided =
            blocks(&[("rw", "randread"), ("bs", "4k"), ("random_distribution", "sequence:2,0,1"), ("random_sequence_stride", "1")]);
        assert_eq!(strided, [2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10, 14, 12, 13]);
        // Reads and writes count apart, each in its own smallest size.
        let mixed: Vec<(OpKind, u64)> = gen(&[("rw", "randrw"), ("bs", "4k,8k"), ("random_distribution", "sequence:1,0")], 16 * 4096)
            .take(200)
            .map(|io| (io.op, io.offset))
            .collect();
        let reads: Vec<u64> = mixed.iter().filter(|(op, _)| *op == OpKind::Read).map(|(_, o)| o / 4096).take(4).collect();
        let writes: Vec<u64> = mixed.iter().filter(|(op, _)| *op == OpKind::Write).map(|(_, o)| o / 8192).take(4).collect();
        assert_eq!((reads, writes), (vec![1, 0, 1, 0], vec![1, 0, 1, 0]));
    }

    #[test]
    fn strided_zones_take_size_bytes_from_each_zone_then_skip() {
        for rw in ["read", "randread"] {
            let mut spec = JobSpec::default();
            apply_option(&mut spec, "rw", rw).unwrap();
            apply_option(&mut spec, "bs", "4k").unwrap();
            spec.zones = Some(StridedZones { size: 32 << 10, range: 64 << 10, skip: 192 << 10 });
            let g = IoGen::new(&spec, Region { files: 1, start: 4096, len: 1 << 20, end: 0 }, 0, None);
            // 32 KiB per zone, zones every 256 KiB, back to the first after four.
            let offs: Vec<u64> = g.take(40).map(|io| io.offset - 4096).collect();
            for (i, o) in offs.iter().enumerate() {
                let zone = (i / 8) as u64 % 4 * (256 << 10);
                assert!((zone..zone + (64 << 10)).contains(o), "{rw}: I/O {i} at {o} outside zone {zone}");
            }
            // The job's size is I/O done, round the zones as often as it takes.
            let g = IoGen::new(&spec, Region { files: 1, start: 0, len: 1 << 20, end: 0 }, 0, Some(1 << 20));
            assert_eq!(g.count(), 256, "{rw}");
        }
    }

    #[test]
    fn mix_and_split_come_out_at_requested_proportions() {
        // Without the random map, which cuts I/Os short at blocks done.
        let mut g = gen(&[("rw", "randrw"), ("rwmixread", "70"), ("bssplit", "4k/50:8k/30:64k/20"), ("norandommap", "1")], 1 << 30);
        let (mut reads, mut n4, mut n8, mut n64) = (0, 0, 0, 0);
        let total = 200_000;
        for _ in 0..total {
            let io = g.next().unwrap();
            reads += (io.op == OpKind::Read) as u32;
            match io.len {
                4096 => n4 += 1,
                8192 => n8 += 1,
                65536 => n64 += 1,
                l => panic!("unexpected size {l}"),
            }
            assert!(io.offset + io.len as u64 <= 1 << 30);
            assert_eq!(io.offset % 4096, 0);
        }
        let pct = |x: u32| x as f64 * 100.0 / total as f64;
        assert!((pct(reads) - 70.0).abs() < 0.5, "reads {}", pct(reads));
        assert!((pct(n4) - 50.0).abs() < 0.5 && (pct(n8) - 30.0).abs() < 0.5 && (pct(n64) - 20.0).abs() < 0.5);
    }

    #[test]
    fn sequential_walks_and_wraps() {
        let mut g = gen(&[("rw", "write"), ("bs", "4k")], 16384);
        let offs: Vec<u64> = (0..4).map(|_| g.next().unwrap().offset).collect();
        assert!(!g.take_wrapped());
        let again: Vec<u64> = (0..2).map(|_| g.next().unwrap().offset).collect();
        assert_eq!([offs, again].concat(), vec![0, 4096, 8192, 12288, 0, 4096]);
        assert!(g.take_wrapped() && !g.take_wrapped());
    }

    #[test]
    fn fsync_every_n_writes_and_io_limit() {
        let mut spec = JobSpec::default();
        apply_option(&mut spec, "rw", "write").unwrap();
        apply_option(&mut spec, "fsync", "2").unwrap();
        let mut g = IoGen::new(&spec, Region { files: 1, start: 0, len: 1 << 20, end: 0 }, 0, Some(4 * 4096));
        let ops: Vec<OpKind> = std::iter::from_fn(|| g.next()).map(|io| io.op).collect();
        use OpKind::*;
        assert_eq!(ops, vec![Write, Write, Sync, Write, Write, Sync]);
    }

    #[test]
    fn files_round_robin_and_offset_applies() {
        let mut spec = JobSpec::default();
        apply_option(&mut spec, "rw", "randread").unwrap();
        let mut g = IoGen::new(&spec, Region { files: 3, start: 1 << 20, len: 1 << 20, end: 0 }, 0, None);
        let files: Vec<u32> = (0..6).map(|_| g.next().unwrap().file).collect();
        assert_eq!(files, vec![0, 1, 2, 0, 1, 2]);
        for _ in 0..1000 {
            let io = g.next().unwrap();
            assert!(io.offset >= 1 << 20 && io.offset + 4096 <= 2 << 20);
        }
    }

    #[test]
    fn random_offsets_cover_the_region_once_unless_norandommap() {
        let blocks = 512u64;
        let distinct = |opts: &[(&str, &str)]| {
            let mut g = gen(opts, blocks * 4096);
            let mut seen: Vec<u64> = (0..blocks).map(|_| g.next().unwrap().offset / 4096).collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len() as u64
        };
        assert_eq!(distinct(&[("rw", "randread")]), blocks);
        let repeats = distinct(&[("rw", "randread"), ("norandommap", "1")]);
        assert!(repeats < blocks * 3 / 4, "with replacement about 63% are distinct, got {repeats}");
    }

    #[test]
    fn offset_modifiers_skip_walk_backwards_and_run_in_a_row() {
        let offsets = |opts: &[(&str, &str)], n: usize| {
            let mut g = gen(opts, 8 * 4096);
            (0..n).map(|_| g.next().unwrap().offset / 4096).collect::<Vec<_>>()
        };
        // fio 3.33's own order (write_iolog): backwards wraps to the end
        // less the skip, so the last block is never read.
        assert_eq!(offsets(&[("rw", "write:4k")], 6), vec![0, 2, 4, 6, 0, 2]);
        assert_eq!(offsets(&[("rw", "read:-8k")], 10), vec![0, 6, 5, 4, 3, 2, 1, 0, 6, 5]);
        // A new random offset every 4 I/Os (sooner where a run meets the end).
        let jumps = |v: Vec<u64>| v.windows(2).filter(|w| w[1] != w[0] + 1).count();
        let in_runs = jumps(offsets(&[("rw", "randread:4")], 400));
        let single = jumps(offsets(&[("rw", "randread")], 400));
        assert!((90..=140).contains(&in_runs), "{in_runs} jumps in 400 I/Os in runs of 4");
        assert!(single > 300, "{single} jumps without the modifier");
    }

    /// A size-bound job with an offset modifier, as fio 3.33 orders it
    /// (`--write_iolog`, files of 32 and 28 KiB, 4 KiB blocks): a wrap
    /// past either end stays in the pass, which ends on its bytes (the job
    /// is size= bytes, not one walk to the end); a pass ends early only
    /// where the last I/O reached the end, and io_size starts passes anew.
    #[test]
    fn offset_modifiers_wrap_within_a_size_bound_pass_as_fio() {
        // A file of `file_kib` (0: laid out to the region's end), the region
        // `kib` from `start_kib`, the job's bytes `limit_kib`.
        let run_in = |rw: &str, (start_kib, kib, file_kib): (u64, u64, u64), limit_kib: u64| {
            let mut spec = JobSpec::default();
            apply_option(&mut spec, "rw", rw).unwrap();
            spec.io_size = (limit_kib != kib).then_some(limit_kib << 10);
            let region = Region { files: 1, start: start_kib << 10, len: kib << 10, end: file_kib << 10 };
            IoGen::new(&spec, region, 0, Some(limit_kib << 10)).map(|io| io.offset / 4096).collect::<Vec<_>>()
        };
        let run = |rw: &str, kib: u64, limit_kib: u64| run_in(rw, (0, kib, 0), limit_kib);
        assert_eq!(run("write:4k", 32, 32), vec![0, 2, 4, 6, 0, 2, 4, 6]);
        assert_eq!(run("write:4k", 28, 28), vec![0, 2, 4, 6]);
        assert_eq!(run("write:4k", 28, 64), [0, 2, 4, 6].repeat(4));
        let back = run("read:-8k", 32, 64);
        assert_eq!(back, vec![0, 6, 5, 4, 3, 2, 1, 0, 6, 5, 4, 3, 2, 1, 0, 6]);
        // On a 64 KiB file: a step past the region but inside the file ends
        // the pass (size=32k: one walk); from offset=8k, size=16k, passes of
        // blocks 2 and 4 (io_size=32k), backwards a cycle of 2, 4, 3.
        assert_eq!(run_in("write:4k", (0, 32, 64), 32), vec![0, 2, 4, 6]);
        assert_eq!(run_in("write:4k", (8, 16, 64), 32), [2, 4].repeat(4));
        assert_eq!(run_in("read:-8k", (8, 16, 64), 32), vec![2, 4, 3, 2, 4, 3, 2, 4]);
    }

    #[test]
    fn mixed_sizes_keep_fios_random_map_a_pass_moves_the_region_once() {
        let blocks = 1024u64;
        let mut g = gen(&[("rw", "randrw"), ("bssplit", "4k/50:64k/30:1m/20")], blocks * 4096);
        for pass in 0..3 {
            let mut done = vec![false; blocks as usize];
            let mut bytes = 0;
            while bytes < blocks * 4096 {
                let io = g.next().unwrap();
                assert!(io.offset + io.len as u64 <= blocks * 4096);
                for b in io.offset / 4096..(io.offset + io.len as u64).div_ceil(4096) {
                    assert!(!std::mem::replace(&mut done[b as usize], true), "pass {pass}: block {b} twice");
                }
                bytes += io.len as u64;
                assert!(!g.take_wrapped() || bytes == io.len as u64, "the pass ends only when every block is done");
            }
            assert_eq!(bytes, blocks * 4096, "I/Os are cut at blocks already done");
        }
        // Sizes are cut, never grown: some 1 MiB I/Os remain whole.
        let mut g = gen(&[("rw", "randread"), ("bssplit", "4k/50:64k/30:1m/20")], 1 << 30);
        assert!((0..1000).any(|_| g.next().unwrap().len == 1 << 20));
    }

    #[test]
    fn each_file_has_its_own_random_map() {
        let mut spec = JobSpec::default();
        apply_option(&mut spec, "rw", "randread").unwrap();
        let mut g = IoGen::new(&spec, Region { files: 2, start: 0, len: 8 * 4096, end: 0 }, 0, None);
        let mut seen = [Vec::new(), Vec::new()];
        for _ in 0..16 {
            let io = g.next().unwrap();
            seen[io.file as usize].push(io.offset / 4096);
        }
        for s in &mut seen {
            s.sort_unstable();
            assert_eq!(*s, (0..8).collect::<Vec<_>>(), "every block of every file once");
        }
    }
}
