//! Samplers that pick a block index in `0..n` following a [`Distribution`].
//!
//! Skewed distributions (zipf, pareto, normal) are fio's own generators
//! (fio's lib/zipf.c and lib/gauss.c): they pick a *rank*, which fio then
//! hashes onto the blocks (a multiply by the 64-bit golden ratio, plus a
//! random rotation, modulo the number of blocks). storbench does the same
//! arithmetic, so a theta gives the popularity it gives in fio, collisions
//! of the hash included (where the block count is not a power of two some
//! blocks take the draws of two ranks and some none). Zoned distributions
//! are contiguous by definition and are not hashed.

use crate::rng::Rng;
use crate::spec::{Distribution, Zone};

/// fio sums at most this many terms of zipf's zeta(n) and stops there
/// (lib/zipf.c `ZIPF_MAX_GEN`): the popularity it draws is that of the
/// truncated sum, so storbench truncates it too.
const ZETA_MAX_TERMS: u64 = 10_000_000;

/// fio's `normal` sums this many uniform draws (lib/gauss.c `GAUSS_ITERS`).
const GAUSS_ITERS: u64 = 12;

#[derive(Clone, Debug)]
pub enum BlockSampler {
    Uniform { n: u64 },
    Zipf { n: u64, theta: f64, alpha: f64, zetan: f64, eta: f64, hash: Hash },
    Pareto { n: u64, pow: f64, hash: Hash },
    Normal { n: u64, stddev: u64, hash: Hash },
    Zoned { n: u64, cumulative_access: Vec<f64>, starts: Vec<u64>, lens: Vec<u64> },
}

/// fio's mapping of a rank onto a block: `(rank * GOLDEN_RATIO_64 + off) % n`
/// (hash.h `__hash_u64`, then the generator's `rand_off`).
#[derive(Clone, Debug)]
pub struct Hash {
    n: u64,
    off: u64,
}

impl Hash {
    const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

    fn new(n: u64, off: u64) -> Hash {
        Hash { n, off }
    }
    #[inline]
    fn map(&self, rank: u64) -> u64 {
        rank.wrapping_mul(Self::GOLDEN_RATIO_64).wrapping_add(self.off) % self.n
    }
}

/// fio's random map without the map: a keyed permutation of `0..n` walked in
/// order, so every block is visited once before any block repeats. A bitmap
/// (fio's axmap) would cost n bits per worker; a 4-round Feistel network on
/// the next even power of two, cycle-walked into `0..n`, costs nothing and
/// takes under four tries per block on average. A new key each pass.
#[derive(Clone, Debug)]
pub struct RandomMap {
    n: u64,
    half: u32,
    keys: [u64; 4],
    next: u64,
}

impl RandomMap {
    pub fn new(n: u64, rng: &mut Rng) -> RandomMap {
        let n = n.max(1);
        let bits = 64 - (n - 1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        RandomMap { n, half, keys: [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()], next: 0 }
    }

    /// Every block of this pass has been handed out.
    #[inline]
    pub fn pass_done(&self) -> bool {
        self.next >= self.n
    }

    /// The next block of this pass; a new pass, with a new order, after `n`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        if self.next >= self.n {
            self.next = 0;
            self.keys = [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()];
        }
        self.next += 1;
        self.at(self.next - 1)
    }

    /// The block at position `i` of this pass, without walking to it (the
    /// same as the `i`-th [`RandomMap::next`] of the pass).
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        let mut x = i;
        loop {
            x = self.feistel(x);
            if x < self.n {
                return x;
            }
        }
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let f = (r ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 7;
            (l, r) = (r, l ^ (f & mask));
        }
        (l << self.half) | r
    }
}

/// fio's zeta(n): the first [`ZETA_MAX_TERMS`] terms, no more.
fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n.min(ZETA_MAX_TERMS)).map(|i| (i as f64).powf(-theta)).sum()
}

impl BlockSampler {
    /// A sampler over `n` blocks; `rng` gives the skewed distributions the
    /// random rotation fio gives each file (`rand_off`).
    pub fn new(dist: &Distribution, n: u64, rng: &mut Rng) -> BlockSampler {
        let n = n.max(1);
        let mut rotation = || Hash::new(n, rng.next_u64() as u32 as u64);
        match dist {
            Distribution::Uniform => BlockSampler::Uniform { n },
            Distribution::Zipf { theta } => {
                let zetan = zeta(n, *theta);
                let zeta2 = 1.0 + 0.5f64.powf(*theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                BlockSampler::Zipf { n, theta: *theta, alpha: 1.0 / (1.0 - theta), zetan, eta, hash: rotation() }
            }
            Distribution::Pareto { h } => BlockSampler::Pareto { n, pow: h.ln() / (1.0 - h).ln(), hash: rotation() },
            // fio centres gauss on the middle without a rotation.
            Distribution::Normal { dev_pct } => {
                let stddev = ((n as f64 * dev_pct / 100.0).ceil() as u64).min(n / 2);
                BlockSampler::Normal { n, stddev, hash: Hash::new(n, 0) }
            }
            Distribution::Zoned { zones } => zoned(zones, n),
            // Not drawn: the block generator walks it (`gen::Sequence`),
            // and object jobs refuse it when planned.
            Distribution::Sequence { .. } => BlockSampler::Uniform { n },
        }
    }

    /// The next block index, in `0..n`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            BlockSampler::Uniform { n } => rng.below(*n),
            BlockSampler::Zipf { n, theta, alpha, zetan, eta, hash } => {
                let u = rng.unit();
                let uz = u * zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(*theta) {
                    1
                } else {
                    ((*n as f64) * (eta * u - eta + 1.0).powf(*alpha)) as u64
                };
                hash.map(rank)
            }
            BlockSampler::Pareto { n, pow, hash } => hash.map(((n - 1) as f64 * rng.unit().powf(*pow)) as u64),
            BlockSampler::Normal { n, stddev, hash } => hash.map(gauss(*n, *stddev, rng)),
            BlockSampler::Zoned { cumulative_access, starts, lens, .. } => {
                let u = rng.unit() * 100.0;
                let z = cumulative_access.iter().position(|c| u < *c).unwrap_or(starts.len() - 1);
                starts[z] + rng.below(lens[z])
            }
        }
    }

    pub fn blocks(&self) -> u64 {
        match self {
            BlockSampler::Uniform { n }
            | BlockSampler::Zipf { n, .. }
            | BlockSampler::Pareto { n, .. }
            | BlockSampler::Normal { n, .. }
            | BlockSampler::Zoned { n, .. } => *n,
        }
    }
}

/// fio's `normal` (lib/gauss.c `gauss_next`): the mean of 12 uniform draws
/// over `0..=n`, moved by a uniform draw of width `stddev` (the option's
/// percentage of the blocks), halved until it stays below `n`.
fn gauss(n: u64, stddev: u64, rng: &mut Rng) -> u64 {
    let sum: u64 = (0..GAUSS_ITERS).map(|_| rng.below(n + 1)).sum();
    let sum = sum.div_ceil(GAUSS_ITERS);
    if stddev == 0 {
        return sum;
    }
    let mut dev = (stddev as f64 * rng.unit()) as i64 - (stddev / 2) as i64;
    while dev != 0 && sum as i64 + dev >= n as i64 {
        dev /= 2;
    }
    sum.wrapping_add(dev as u64)
}

fn zoned(zones: &[Zone], n: u64) -> BlockSampler {
    let mut cumulative_access = Vec::new();
    let mut starts = Vec::new();
    let mut lens = Vec::new();
    let (mut acc, mut start) = (0.0, 0u64);
    let mut size_acc = 0.0;
    for (i, z) in zones.iter().enumerate() {
        acc += z.access_pct;
        size_acc += z.size_pct;
        let end = if i + 1 == zones.len() { n } else { ((size_acc / 100.0) * n as f64).round() as u64 };
        let len = end.saturating_sub(start).max(1);
        cumulative_access.push(acc);
        starts.push(start.min(n - 1));
        lens.push(len.min(n - start.min(n - 1)));
        start = end;
    }
    BlockSampler::Zoned { n, cumulative_access, starts, lens }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share_of_hottest(dist: Distribution, n: u64, hot_fraction: f64) -> f64 {
        let mut rng = Rng::new(11);
        let s = BlockSampler::new(&dist, n, &mut rng);
        let mut counts = vec![0u64; n as usize];
        let draws = 200_000;
        for _ in 0..draws {
            let b = s.sample(&mut rng);
            assert!(b < n);
            counts[b as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let hot = (n as f64 * hot_fraction) as usize;
        counts[..hot].iter().sum::<u64>() as f64 / draws as f64
    }

    #[test]
    fn uniform_is_flat() {
        let share = share_of_hottest(Distribution::Uniform, 1000, 0.1);
        assert!(share < 0.13, "hottest 10% got {share}");
    }

    #[test]
    fn pareto_0_2_is_about_80_20() {
        // On a power of two of blocks fio's hash is a bijection; otherwise
        // colliding ranks make the hot blocks hotter still, as in fio.
        let share = share_of_hottest(Distribution::Pareto { h: 0.2 }, 8192, 0.2);
        assert!((share - 0.8).abs() < 0.05, "hottest 20% got {share}");
        let collided = share_of_hottest(Distribution::Pareto { h: 0.2 }, 10_000, 0.2);
        assert!(collided > share, "hottest 20% of 10000 got {collided}");
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let share = share_of_hottest(Distribution::Zipf { theta: 1.2 }, 10_000, 0.01);
        assert!(share > 0.5, "hottest 1% got {share}");
        let mild = share_of_hottest(Distribution::Zipf { theta: 0.8 }, 10_000, 0.01);
        assert!(mild < share && mild > 0.05, "theta 0.8 hottest 1% got {mild}");
    }

    #[test]
    fn hotset_sends_the_asked_share_to_the_hot_zone() {
        let zones = vec![Zone { access_pct: 90.0, size_pct: 10.0 }, Zone { access_pct: 10.0, size_pct: 90.0 }];
        let mut rng = Rng::new(5);
        let s = BlockSampler::new(&Distribution::Zoned { zones }, 1000, &mut rng);
        let hot = (0..100_000).filter(|_| s.sample(&mut rng) < 100).count();
        assert!((hot as f64 / 100_000.0 - 0.9).abs() < 0.01, "hot share {hot}");
    }

    #[test]
    fn normal_is_concentrated() {
        let share = share_of_hottest(Distribution::Normal { dev_pct: 5.0 }, 1000, 0.2);
        assert!(share > 0.6, "hottest 20% got {share}");
    }

    #[test]
    fn ranks_land_where_fio_hashes_them() {
        // fio: rank 0 on the rotation itself, rank 1 on GOLDEN_RATIO_64 mod n.
        let h = Hash::new(65536, 7);
        assert_eq!((h.map(0), h.map(1)), (7, (0x61C8_8646_80B5_83EB_u64 + 7) % 65536));
        // A power of two: a bijection; otherwise some blocks take two ranks.
        let distinct = |n: u64| {
            let h = Hash::new(n, 0);
            let mut seen: Vec<u64> = (0..n).map(|r| h.map(r)).collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len() as u64
        };
        assert_eq!(distinct(4096), 4096);
        assert!(distinct(1000) < 1000);
    }

    #[test]
    fn the_random_map_visits_every_block_once_per_pass_in_a_new_order() {
        let mut rng = Rng::new(7);
        for n in [1u64, 2, 3, 1000, 4097] {
            let mut m = RandomMap::new(n, &mut rng);
            let first: Vec<u64> = (0..n).map(|_| m.next(&mut rng)).collect();
            let mut sorted = first.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n={n}");
            let second: Vec<u64> = (0..n).map(|_| m.next(&mut rng)).collect();
            let mut s2 = second.clone();
            s2.sort_unstable();
            assert_eq!(s2, sorted);
            if n >= 1000 {
                assert_ne!(first, second, "each pass has its own order");
                let in_place = first.iter().enumerate().filter(|(i, b)| *i as u64 == **b).count();
                assert!(in_place < 10, "not the identity: {in_place} fixed points");
            }
        }
    }
}
