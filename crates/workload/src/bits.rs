//! One bit per object key, with summaries, so "the next key at or after k
//! that exists" (or does not) costs a few word reads whatever the key space
//! holds: a 10^8-key space that is full (every create looking for a free
//! key) or nearly empty (every read looking for a live one) would otherwise
//! scan up to 1.5 million words per operation.
//!
//! Level 0 holds the bits. Two summary stacks sit above it, one for each
//! question: in `any_set[0]` bit j says word j of level 0 has a set bit,
//! in `any_clear[0]` that it has a clear one (keys past `n` count as set);
//! each further level summarises the one below the same way (bit j: word j
//! below is not zero), up to a single word. Setting or clearing a bit
//! touches the summaries only when a word's answer changes, and then one
//! word per level.

#[derive(Clone, Debug)]
pub struct Bits {
    words: Vec<u64>,
    n: u64,
    any_set: Vec<Vec<u64>>,
    any_clear: Vec<Vec<u64>>,
    /// Words read by searches (tests bound it per search).
    #[cfg(test)]
    visited: std::cell::Cell<u64>,
}

impl Bits {
    pub fn new(n: u64, set: bool) -> Bits {
        let n = n.max(1);
        let mut words = vec![if set { u64::MAX } else { 0 }; n.div_ceil(64) as usize];
        if set && !n.is_multiple_of(64) {
            *words.last_mut().expect("n > 0") = (1u64 << (n % 64)) - 1;
        }
        let mut b = Bits {
            words,
            n,
            any_set: Vec::new(),
            any_clear: Vec::new(),
            #[cfg(test)]
            visited: std::cell::Cell::new(0),
        };
        b.any_set = summaries((0..b.words.len()).map(|w| b.leaf(w, true) != 0).collect());
        b.any_clear = summaries((0..b.words.len()).map(|w| b.leaf(w, false) != 0).collect());
        b
    }

    #[inline]
    pub fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    #[inline]
    pub fn put(&mut self, i: u64, v: bool) {
        let wi = (i / 64) as usize;
        let before = (self.leaf(wi, true) != 0, self.leaf(wi, false) != 0);
        match v {
            true => self.words[wi] |= 1 << (i % 64),
            false => self.words[wi] &= !(1 << (i % 64)),
        }
        let after = (self.leaf(wi, true) != 0, self.leaf(wi, false) != 0);
        if before.0 != after.0 {
            flip(&mut self.any_set, wi, after.0);
        }
        if before.1 != after.1 {
            flip(&mut self.any_clear, wi, after.1);
        }
    }

    /// The first index at or after `from` (wrapping) whose bit is `want`.
    pub fn next(&self, from: u64, want: bool) -> Option<u64> {
        let from = from % self.n;
        self.seek(0, from, want).or_else(|| if from > 0 { self.seek(0, 0, want) } else { None })
    }

    /// Word `w` of level 0 as the search for `want` sees it: bits that
    /// answer it are set (keys past `n` never do).
    #[inline]
    fn leaf(&self, w: usize, want: bool) -> u64 {
        let word = if want { self.words[w] } else { !self.words[w] };
        match (w + 1 == self.words.len(), self.n % 64) {
            (true, tail) if tail != 0 => word & ((1u64 << tail) - 1),
            _ => word,
        }
    }

    /// Word `w` of `level` (0: the leaf) for the search for `want`.
    #[inline]
    fn word(&self, level: usize, w: usize, want: bool) -> u64 {
        #[cfg(test)]
        self.visited.set(self.visited.get() + 1);
        match level {
            0 => self.leaf(w, want),
            l => (if want { &self.any_set } else { &self.any_clear })[l - 1][w],
        }
    }

    fn len(&self, level: usize, want: bool) -> usize {
        match level {
            0 => self.words.len(),
            l => (if want { &self.any_set } else { &self.any_clear })[l - 1].len(),
        }
    }

    /// The first set position at or after `i` at `level`, found through the
    /// level above: one word here, then the next non-empty word's index from
    /// above, then one word here again.
    fn seek(&self, level: usize, i: u64, want: bool) -> Option<u64> {
        let wi = (i / 64) as usize;
        if wi >= self.len(level, want) {
            return None;
        }
        let w = self.word(level, wi, want) & (u64::MAX << (i % 64));
        if w != 0 {
            return Some(wi as u64 * 64 + w.trailing_zeros() as u64);
        }
        let top = if want { self.any_set.len() } else { self.any_clear.len() };
        let next = match level < top {
            true => self.seek(level + 1, wi as u64 + 1, want)? as usize,
            // The top level is one word: nothing after it.
            false => return None,
        };
        let w = self.word(level, next, want);
        Some(next as u64 * 64 + w.trailing_zeros() as u64)
    }

    #[cfg(test)]
    fn take_visited(&self) -> u64 {
        self.visited.replace(0)
    }
}

/// The summary levels above a level whose words' answers are `nonzero`.
fn summaries(mut nonzero: Vec<bool>) -> Vec<Vec<u64>> {
    let mut levels = Vec::new();
    loop {
        let mut words = vec![0u64; nonzero.len().div_ceil(64).max(1)];
        for (j, _) in nonzero.iter().enumerate().filter(|(_, nz)| **nz) {
            words[j / 64] |= 1 << (j % 64);
        }
        let done = words.len() == 1;
        nonzero = words.iter().map(|w| *w != 0).collect();
        levels.push(words);
        if done {
            return levels;
        }
    }
}

/// Word `w` below `levels` now answers `nonzero`: set or clear its bit, and
/// go up while a summary word's own answer changes.
fn flip(levels: &mut [Vec<u64>], mut w: usize, mut nonzero: bool) {
    for level in levels.iter_mut() {
        let word = &mut level[w / 64];
        let was = *word != 0;
        match nonzero {
            true => *word |= 1 << (w % 64),
            false => *word &= !(1 << (w % 64)),
        }
        if (*word != 0) == was {
            return;
        }
        nonzero = *word != 0;
        w /= 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The same answers as a scan of every bit, on small spaces of every shape.
    #[test]
    fn next_agrees_with_a_plain_scan() {
        let mut rng = Rng::new(7);
        for n in [1u64, 63, 64, 65, 4095, 4096, 4097, 70_000] {
            for start_set in [false, true] {
                let mut b = Bits::new(n, start_set);
                let mut plain = vec![start_set; n as usize];
                for _ in 0..2000 {
                    let i = rng.below(n);
                    let v = rng.below(3) == 0;
                    b.put(i, v);
                    plain[i as usize] = v;
                    let from = rng.below(n + 10);
                    for want in [true, false] {
                        let f = (from % n) as usize;
                        let expect = (f..n as usize).chain(0..f).find(|&k| plain[k] == want).map(|k| k as u64);
                        assert_eq!(b.next(from, want), expect, "n {n}, from {from}, want {want}");
                    }
                }
            }
        }
    }

    /// A search reads a few words per level, whatever the space holds: a
    /// full 2^26-key space (a create looking for a free key) and one with a
    /// single live key (a read looking for it). A scan would read up to a
    /// million words.
    #[test]
    fn a_search_costs_a_few_words_per_level_over_a_large_space() {
        let n = 1u64 << 26;
        let levels = 5;
        let mut full = Bits::new(n, true);
        full.put(n - 3, false);
        full.take_visited();
        assert_eq!(full.next(5, false), Some(n - 3));
        assert!(full.take_visited() <= 2 * levels + 2, "{} words", full.visited.get());
        full.put(n - 3, true);
        full.take_visited();
        assert_eq!(full.next(5, false), None, "full: no free key");
        assert!(full.take_visited() <= 4 * levels + 4);

        let mut sparse = Bits::new(n, false);
        sparse.put(17, true);
        sparse.take_visited();
        assert_eq!(sparse.next(1000, true), Some(17), "the only live key, found by wrapping");
        assert!(sparse.take_visited() <= 4 * levels + 4);
        for i in 0..100_000u64 {
            sparse.put((i * 7919) % n, true);
            let _ = sparse.next(i * 104_729 % n, true);
            assert!(sparse.take_visited() <= 4 * levels + 4, "operation {i}");
        }
    }
}
