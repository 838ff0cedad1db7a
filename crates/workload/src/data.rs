//! What written buffers contain: incompressible and unique by default, zeros or a
//! controlled compressible/dedupable share only when asked.
//!
//! Every buffer slot starts from the same seeded random image. Before each write
//! the first 8 bytes of every 512-byte sector (in the incompressible part of each
//! 4 KiB chunk) are stamped with a fresh random value, which makes each written
//! sector unique at a cost of a few stores per sector. A dedupable write stamps a
//! constant instead, so it repeats earlier blocks byte for byte (fio's
//! `dedupe_mode=repeat`). With a working set (fio's `working_set`), block i
//! of the set has stamps derived from i alone; a worker's first unique writes
//! are its slice of the set, and a dedupable write repeats a block of the
//! set drawn at random.

use crate::rng::Rng;
use crate::spec::{DataPattern, WorkingSet};
use std::cell::Cell;

const SECTOR: usize = 512;
const CHUNK: usize = 4096;
/// Arbitrary; any constant makes dedupable writes identical to one another.
const DEDUPE_STAMP: u64 = 0x5354_4f52_4245_4e43;
const IMAGE_SEED: u64 = 0xda7a;
const WORKING_SET_SEED: u64 = 0x5e7_b10c;

/// Fills and refreshes write buffers according to a [`DataPattern`].
#[derive(Clone, Debug)]
pub struct Filler {
    zeros: bool,
    /// Bytes at the start of each 4 KiB chunk that are random (the rest is zero).
    random_per_chunk: usize,
    dedupe_threshold: u64,
    rados_bench: bool,
    working_set: Option<WorkingSet>,
    /// This worker's slice of the working set: [from, to).
    slice: (u64, u64),
    /// Unique writes so far (the next one's place in the slice).
    unique: Cell<u64>,
    /// Whose working set: one for all sharing it, else one per worker.
    set_seed: u64,
    /// Mixed into every fresh stamp: jobs draw from the same seeded random
    /// streams, and their "unique" writes must not repeat one another's.
    salt: u64,
}

impl Filler {
    pub fn new(p: &DataPattern) -> Filler {
        let random_per_chunk = ((100.0 - p.compress_pct) / 100.0 * CHUNK as f64).round() as usize;
        Filler {
            zeros: p.zeros,
            random_per_chunk: random_per_chunk.min(CHUNK),
            dedupe_threshold: (p.dedupe_pct / 100.0 * u64::MAX as f64) as u64,
            rados_bench: p.rados_bench,
            working_set: p.working_set,
            slice: (0, p.working_set.map_or(0, |w| w.blocks)),
            unique: Cell::new(0),
            set_seed: WORKING_SET_SEED,
            salt: 0,
        }
    }

    /// The filler of worker `worker` of job `job`: its own stamps, and its
    /// slice of a shared working set.
    pub fn for_worker(mut self, job: u32, worker: u32) -> Filler {
        self.salt = Rng::new(((job as u64) << 32 | worker as u64) ^ 0x5a17).next_u64();
        match self.working_set {
            Some(w) if w.global => {
                let (k, n) = ((w.first + worker) as u64, w.workers.max(1) as u64);
                self.slice = (w.blocks * k / n, w.blocks * (k + 1) / n);
            }
            Some(w) => self.set_seed = Rng::new(WORKING_SET_SEED ^ ((w.first as u64) << 32 | worker as u64)).next_u64(),
            None => {}
        }
        self
    }

    /// Stamp `len` bytes as block `block` of the working set.
    #[inline]
    fn stamp_set_block(&self, buf: &mut [u8], len: usize, block: u64) {
        let mut off = 0;
        while off + 8 <= len {
            if off % CHUNK < self.random_per_chunk {
                let v = Rng::new(self.set_seed ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (off as u64) << 40).next_u64();
                buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
            }
            off += SECTOR;
        }
    }

    /// Initial image of a buffer slot (the same for every slot).
    pub fn init(&self, buf: &mut [u8]) {
        if self.rados_bench {
            buf.fill(b'z');
            return;
        }
        if self.zeros {
            buf.fill(0);
            return;
        }
        let mut rng = Rng::new(IMAGE_SEED);
        for (i, chunk) in buf.chunks_mut(8).enumerate() {
            let within = (i * 8) % CHUNK;
            let v = if within < self.random_per_chunk { rng.next_u64() } else { 0 };
            let bytes = v.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    /// Make the first `len` bytes of `buf` ready for one write to `key` (the
    /// object number, for object jobs).
    #[inline]
    pub fn refresh(&self, buf: &mut [u8], len: usize, key: u32, rng: &mut Rng) {
        if self.rados_bench {
            rados_bench_header(buf, len, key);
            return;
        }
        if self.zeros || self.random_per_chunk < 8 {
            return;
        }
        let dedupe = self.dedupe_threshold != 0 && rng.next_u64() < self.dedupe_threshold;
        if let Some(w) = self.working_set.filter(|w| w.blocks > 0) {
            let n = self.unique.get();
            let block = match dedupe {
                true => Some(rng.below(w.blocks)),
                false => (self.slice.0 + n < self.slice.1).then_some(self.slice.0 + n),
            };
            if !dedupe {
                self.unique.set(n + 1);
            }
            if let Some(b) = block {
                return self.stamp_set_block(buf, len, b);
            }
        }
        let stamp_const = dedupe && self.working_set.is_none();
        let mut off = 0;
        while off + 8 <= len {
            if off % CHUNK < self.random_per_chunk {
                let v = if stamp_const { DEDUPE_STAMP } else { rng.next_u64() ^ self.salt };
                buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
            }
            off += SECTOR;
        }
    }
}

/// rados bench's `snprintf(buf, len, "I'm the %16dth op!", key)` over a buffer of 'z's.
fn rados_bench_header(buf: &mut [u8], len: usize, key: u32) {
    use std::io::Write as _;
    let mut h = [0u8; 31];
    let _ = write!(&mut h[..30], "I'm the {key:>16}th op!");
    let n = len.min(h.len());
    buf[..n].copy_from_slice(&h[..n]);
    if n > 0 && n < h.len() {
        buf[n - 1] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zero_share(buf: &[u8]) -> f64 {
        buf.iter().filter(|b| **b == 0).count() as f64 / buf.len() as f64
    }

    #[test]
    fn default_is_random_and_each_write_is_unique() {
        let f = Filler::new(&DataPattern::default());
        let mut a = vec![0u8; 8192];
        f.init(&mut a);
        assert!(zero_share(&a) < 0.01);
        let mut b = a.clone();
        let mut rng = Rng::new(1);
        f.refresh(&mut a, 8192, 0, &mut rng);
        f.refresh(&mut b, 8192, 0, &mut rng);
        for s in 0..16 {
            assert_ne!(a[s * 512..s * 512 + 512], b[s * 512..s * 512 + 512], "sector {s} repeated");
        }
    }

    #[test]
    fn compress_percentage_zeroes_that_share() {
        let f = Filler::new(&DataPattern { compress_pct: 50.0, ..Default::default() });
        let mut a = vec![1u8; 16384];
        f.init(&mut a);
        f.refresh(&mut a, 16384, 0, &mut Rng::new(2));
        assert!((zero_share(&a) - 0.5).abs() < 0.02, "{}", zero_share(&a));
    }

    #[test]
    fn dedupe_percentage_repeats_blocks() {
        let f = Filler::new(&DataPattern { dedupe_pct: 50.0, ..Default::default() });
        let mut image = vec![0u8; 4096];
        f.init(&mut image);
        let mut rng = Rng::new(3);
        let mut blocks = std::collections::HashSet::new();
        for _ in 0..1000 {
            let mut b = image.clone();
            f.refresh(&mut b, 4096, 0, &mut rng);
            blocks.insert(b);
        }
        // About 500 unique blocks plus one repeated block.
        assert!(blocks.len() > 430 && blocks.len() < 570, "{} distinct", blocks.len());
    }

    #[test]
    fn a_working_set_is_the_first_unique_writes_and_dedupable_writes_repeat_it() {
        let ws = WorkingSet { blocks: 100, global: true, first: 0, workers: 2 };
        let p = DataPattern { dedupe_pct: 50.0, working_set: Some(ws), ..Default::default() };
        let mut image = vec![0u8; 4096];
        Filler::new(&p).init(&mut image);
        let mut written = Vec::new();
        for worker in 0..2 {
            let f = Filler::new(&p).for_worker(0, worker);
            // The same random stream in both workers, as two jobs with one
            // seed have: their own writes still differ.
            let mut rng = Rng::new(10);
            for _ in 0..1000 {
                let mut b = image.clone();
                f.refresh(&mut b, 4096, 0, &mut rng);
                written.push(b);
            }
        }
        let distinct: std::collections::HashSet<&Vec<u8>> = written.iter().collect();
        // ~500 unique writes per worker, 50 of them each worker's half of
        // the set, and ~500 repeats of the set: ~950 distinct of 2000.
        assert!((900..1100).contains(&distinct.len()), "{} distinct", distinct.len());
        let first: std::collections::HashSet<&Vec<u8>> = written[..1000].iter().collect();
        let shared = written[1000..].iter().filter(|b| first.contains(b)).count();
        assert!(shared > 300, "the second worker repeats blocks the first wrote: {shared}");
    }

    #[test]
    fn zeros_stay_zero() {
        let f = Filler::new(&DataPattern { zeros: true, ..Default::default() });
        let mut a = vec![7u8; 4096];
        f.init(&mut a);
        f.refresh(&mut a, 4096, 0, &mut Rng::new(4));
        assert_eq!(zero_share(&a), 1.0);
    }

    #[test]
    fn rados_bench_contents_match_its_verifier() {
        let f = Filler::new(&DataPattern { rados_bench: true, ..DataPattern::default() });
        let mut buf = vec![0u8; 64];
        f.init(&mut buf);
        f.refresh(&mut buf, 64, 1234, &mut Rng::new(1));
        let mut want = b"I'm the             1234th op!\0".to_vec();
        want.resize(64, b'z');
        assert_eq!(buf, want);
        let mut short = vec![b'z'; 8];
        f.refresh(&mut short, 8, 7, &mut Rng::new(1));
        assert_eq!(&short, b"I'm the\0");
    }
}
