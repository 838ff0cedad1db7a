//! Samplers that pick a block index in `0..n` following a [`Distribution`].
//!
//! Skewed distributions (zipf, pareto, normal) pick a *rank*; ranks are then
//! scattered over the region by a bijective multiplicative permutation so hot
//! blocks are not all at the start (as fio does by hashing). Zoned distributions
//! are contiguous by definition and are not scattered.

use crate::rng::Rng;
use crate::spec::{Distribution, Zone};

/// Cap on the terms summed exactly for zipf's zeta(n); the rest is estimated,
/// as fio does, so set-up stays under a second on large devices.
const ZETA_EXACT_TERMS: u64 = 10_000_000;

#[derive(Clone, Debug)]
pub enum BlockSampler {
    Uniform { n: u64 },
    Zipf { n: u64, theta: f64, alpha: f64, zetan: f64, eta: f64, scatter: Scatter },
    Pareto { n: u64, pow: f64, scatter: Scatter },
    Normal { n: u64, dev: f64, scatter: Scatter },
    Zoned { n: u64, cumulative_access: Vec<f64>, starts: Vec<u64>, lens: Vec<u64> },
}

/// A bijection on `0..n`: `i -> (i * mult + add) mod n`, with `gcd(mult, n) = 1`.
#[derive(Clone, Debug)]
pub struct Scatter {
    n: u64,
    mult: u64,
    add: u64,
}

impl Scatter {
    fn new(n: u64) -> Scatter {
        // A large odd multiplier near n * golden ratio, nudged until coprime with n.
        let mut mult = ((n as f64 * 0.618_033_988_75) as u64) | 1;
        while n > 1 && gcd(mult, n) != 1 {
            mult += 2;
        }
        Scatter { n, mult: mult.max(1), add: n / 3 }
    }
    #[inline]
    fn map(&self, i: u64) -> u64 {
        ((i as u128 * self.mult as u128 + self.add as u128) % self.n as u128) as u64
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

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn zeta(n: u64, theta: f64) -> f64 {
    let exact = n.min(ZETA_EXACT_TERMS);
    let mut z: f64 = (1..=exact).map(|i| (i as f64).powf(-theta)).sum();
    if n > exact {
        // Integral of x^-θ from exact+0.5 to n+0.5 estimates the remaining terms.
        let f = |x: f64| x.powf(1.0 - theta) / (1.0 - theta);
        z += f(n as f64 + 0.5) - f(exact as f64 + 0.5);
    }
    z
}

impl BlockSampler {
    pub fn new(dist: &Distribution, n: u64) -> BlockSampler {
        let n = n.max(1);
        match dist {
            Distribution::Uniform => BlockSampler::Uniform { n },
            Distribution::Zipf { theta } => {
                let zetan = zeta(n, *theta);
                let zeta2 = zeta(2, *theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                BlockSampler::Zipf { n, theta: *theta, alpha: 1.0 / (1.0 - theta), zetan, eta, scatter: Scatter::new(n) }
            }
            Distribution::Pareto { h } => BlockSampler::Pareto { n, pow: h.ln() / (1.0 - h).ln(), scatter: Scatter::new(n) },
            Distribution::Normal { dev_pct } => BlockSampler::Normal { n, dev: dev_pct / 100.0 * n as f64, scatter: Scatter::new(n) },
            Distribution::Zoned { zones } => zoned(zones, n),
        }
    }

    /// The next block index, in `0..n`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            BlockSampler::Uniform { n } => rng.below(*n),
            BlockSampler::Zipf { n, theta, alpha, zetan, eta, scatter } => {
                let u = rng.unit();
                let uz = u * zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(*theta) {
                    1
                } else {
                    ((*n as f64) * (eta * u - eta + 1.0).powf(*alpha)) as u64
                };
                scatter.map(rank.min(n - 1))
            }
            BlockSampler::Pareto { n, pow, scatter } => {
                let rank = ((n - 1) as f64 * rng.unit().powf(*pow)) as u64;
                scatter.map(rank.min(n - 1))
            }
            BlockSampler::Normal { n, dev, scatter } => loop {
                let x = (*n as f64) / 2.0 + rng.normal() * dev;
                if x >= 0.0 && x < *n as f64 {
                    break scatter.map(x as u64);
                }
            },
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
        let s = BlockSampler::new(&dist, n);
        let mut rng = Rng::new(11);
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
        let share = share_of_hottest(Distribution::Pareto { h: 0.2 }, 10_000, 0.2);
        assert!((share - 0.8).abs() < 0.05, "hottest 20% got {share}");
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
        let s = BlockSampler::new(&Distribution::Zoned { zones }, 1000);
        let mut rng = Rng::new(5);
        let hot = (0..100_000).filter(|_| s.sample(&mut rng) < 100).count();
        assert!((hot as f64 / 100_000.0 - 0.9).abs() < 0.01, "hot share {hot}");
    }

    #[test]
    fn normal_centres_on_the_middle_before_scatter() {
        let share = share_of_hottest(Distribution::Normal { dev_pct: 5.0 }, 1000, 0.2);
        assert!(share > 0.6, "hottest 20% got {share}");
    }

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 10, 4096, 1000] {
            let s = Scatter::new(n);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = s.map(i) as usize;
                assert!(!seen[j]);
                seen[j] = true;
            }
        }
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
