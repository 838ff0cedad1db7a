//! fio's random map for jobs whose I/Os differ in size (bssplit, bsrange).
//!
//! fio keeps one bit per smallest block of a file (its axmap). A random
//! offset that is already done moves on to the next free block; an I/O marks
//! the blocks it covers and is cut short at the first block already done;
//! the pass over the file ends when no block is free. That is what decides
//! when fio drops the page cache again in a buffered job, so storbench keeps
//! the same map. The bits are kept in levels, each bit of a level saying
//! that a word of the level below is full, so finding the next free block
//! costs one word per level however full the map is.

/// One bit per block of a file, set once the block has been done this pass.
#[derive(Clone, Debug)]
pub struct BlockMap {
    n: u64,
    /// `levels[0]`: one bit per block; `levels[k + 1]`: one bit per word of
    /// `levels[k]`, set when that word is full. Bits past the end are set,
    /// so they are never free.
    levels: Vec<Vec<u64>>,
}

impl BlockMap {
    /// A map of `n` blocks, all free.
    pub fn new(n: u64) -> BlockMap {
        let n = n.max(1);
        let mut levels = Vec::new();
        let mut bits = n;
        loop {
            let words = bits.div_ceil(64);
            levels.push(vec![0; words as usize]);
            if words == 1 {
                break;
            }
            bits = words;
        }
        let mut m = BlockMap { n, levels };
        m.clear();
        m
    }

    /// Every block free again: a new pass.
    pub fn clear(&mut self) {
        let mut bits = self.n;
        for level in &mut self.levels {
            level.fill(0);
            // The unused tail of the last word counts as done.
            if !bits.is_multiple_of(64) {
                *level.last_mut().expect("a level has a word") = !0u64 << (bits % 64);
            }
            bits = level.len() as u64;
        }
    }

    /// The number of blocks in the map.
    pub fn blocks(&self) -> u64 {
        self.n
    }

    /// Block `b` itself if free, else the next free block after it (from
    /// the start once past the end, as fio's `axmap_next_free`); `None`
    /// once every block is done.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        self.find(0, b.min(self.n - 1)).or_else(|| self.find(0, 0))
    }

    /// Mark up to `nr` blocks from `b` done, stopping at the first one
    /// already done or at the end of the map (fio's `axmap_set_nr`); how
    /// many were marked.
    pub fn set_run(&mut self, b: u64, nr: u64) -> u64 {
        let end = b.saturating_add(nr).min(self.n);
        let mut i = b;
        while i < end && !self.is_set(i) {
            self.set(i);
            i += 1;
        }
        i - b
    }

    fn is_set(&self, b: u64) -> bool {
        self.levels[0][(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    fn set(&mut self, b: u64) {
        let mut i = b;
        for level in &mut self.levels {
            let w = &mut level[(i / 64) as usize];
            *w |= 1 << (i % 64);
            if *w != !0 {
                return;
            }
            // A full word: one more set bit in the level above.
            i /= 64;
        }
    }

    /// The first clear bit at or after `start` in `level`.
    fn find(&self, level: usize, start: u64) -> Option<u64> {
        let words = &self.levels[level];
        let w = (start / 64) as usize;
        let here = !*words.get(w)? & (!0u64 << (start % 64));
        if here != 0 {
            return Some(w as u64 * 64 + here.trailing_zeros() as u64);
        }
        if level + 1 == self.levels.len() {
            return None;
        }
        let next = self.find(level + 1, w as u64 + 1)?;
        Some(next * 64 + (!words[next as usize]).trailing_zeros() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_free_moves_on_and_wraps_and_ends_when_full() {
        for n in [1u64, 63, 64, 65, 4096, 4097, 300_000] {
            let mut m = BlockMap::new(n);
            assert_eq!(m.next_free(n - 1), Some(n - 1));
            assert_eq!(m.set_run(n - 1, 5), 1, "stops at the end of the map");
            assert_eq!(m.next_free(n - 1), if n > 1 { Some(0) } else { None }, "n={n}: wraps to the start");
            let mut done = 1;
            while let Some(b) = m.next_free(n / 2) {
                done += m.set_run(b, 7);
            }
            assert_eq!(done, n, "n={n}: every block once");
            m.clear();
            assert_eq!(m.next_free(0), Some(0));
        }
    }

    #[test]
    fn a_run_stops_at_a_block_already_done() {
        let mut m = BlockMap::new(1000);
        assert_eq!(m.set_run(100, 1), 1);
        assert_eq!(m.set_run(90, 256), 10);
        assert_eq!(m.next_free(95), Some(101));
        assert_eq!(m.set_run(101, 256), 256);
        assert_eq!(m.next_free(200), Some(357));
    }
}
