//! fio's latency histogram ("plat", stat.h `FIO_IO_U_PLAT_*`) rebuilt from
//! storbench's HdrHistogram, and fio's percentiles over it.
//!
//! fio keeps 29 groups of 64 buckets (1856): values below 128 ns have a
//! bucket each; above, every power-of-two range [2^m, 2^(m+1)) is split into
//! 64 buckets of width 2^(m-6). storbench's histogram (3 significant digits)
//! has buckets of width 2^(m-10) in the same ranges (exact below 2048), and
//! both are aligned on powers of two, so every HDR bucket lies inside one fio
//! bucket: the fio counts are exact, and so are the percentiles fio would
//! print for the same latencies. Limits: storbench records 0 ns as 1 ns, and
//! values of 2^34 ns (17.2 s) and more all land in fio's last bucket, as in fio.

use storbench_metrics::LatencyHistogram;

/// fio's `plat_val_to_idx` (storbench fills the buckets from histogram
/// ranges instead; this checks them).
#[cfg(any(test, feature = "testing"))]
pub use storbench_metrics::plat::plat_index as val_to_idx;
pub use storbench_metrics::plat::PLAT_NR as NR;
use storbench_metrics::plat::{PLAT_BITS as BITS, PLAT_VAL as VAL};

/// fio's `plat_idx_to_val`: a bucket's value (its midpoint), which fio prints
/// as a percentile and as the key of a json+ bin.
pub fn idx_to_val(idx: usize) -> u64 {
    if idx < (VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> BITS) as u32 - 1;
    let base = 1u64 << (error_bits + BITS);
    let k = (idx as u64) % VAL;
    // fio: base + ((k + 0.5) * (1 << error_bits)), exact in a double here.
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// The lowest latency in bucket `idx`.
fn idx_low(idx: usize) -> u64 {
    if idx < (VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> BITS) as u32 - 1;
    (1u64 << (error_bits + BITS)) + (((idx as u64) % VAL) << error_bits)
}

/// Counts per fio bucket.
#[derive(Clone, Debug)]
pub struct Plat {
    counts: Vec<u64>,
    n: u64,
}

impl Plat {
    /// fio's buckets for the latencies of `h` (exact, see the module doc).
    pub fn of(h: &LatencyHistogram) -> Plat {
        let mut counts = vec![0; NR];
        let n = h.count();
        if n > 0 {
            let max = h.max();
            for (idx, c) in counts.iter_mut().enumerate() {
                let low = idx_low(idx);
                if low > max {
                    break;
                }
                let high = if idx + 1 == NR { u64::MAX } else { idx_low(idx + 1) - 1 };
                *c = h.count_between(low, high);
            }
        }
        Plat { counts, n }
    }

    /// Counts from fio's own buckets (as a json+ `bins` object lists them).
    #[cfg(any(test, feature = "testing"))]
    pub fn from_bins(bins: impl IntoIterator<Item = (u64, u64)>) -> Plat {
        let mut counts = vec![0; NR];
        for (value, count) in bins {
            counts[val_to_idx(value)] += count;
        }
        let n = counts.iter().sum();
        Plat { counts, n }
    }

    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The nonzero buckets as (value, count), ascending: json+'s `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| (idx_to_val(i), *c))
    }

    /// fio's `calc_clat_percentiles` for an ascending list: for each p, the
    /// value of the first bucket where the running count reaches p% of N.
    pub fn percentiles(&self, list: &[f64]) -> Vec<u64> {
        let needed: Vec<u128> = list.iter().map(|p| threshold(*p, self.n)).collect();
        let mut out = Vec::with_capacity(list.len());
        let mut sum = 0u128;
        for (idx, c) in self.counts.iter().enumerate() {
            sum += *c as u128;
            while out.len() < needed.len() && sum >= needed[out.len()] {
                out.push(idx_to_val(idx));
            }
            if out.len() == needed.len() {
                break;
            }
        }
        out
    }
}

/// The least running count that reaches percentile `p` of `n` in fio 3.33.
///
/// fio compares `sum >= (long double) p / 100.0 * n`, but it is built with
/// `-ffast-math`, and gcc on x86-64 computes it as `(n * 0.01L) * p` in x87
/// 80-bit arithmetic (checked on the installed binary: with N=100 the 30th
/// percentile is reached at 30 I/Os, with N=1000 the 0.1th at 2, where plain
/// doubles give 31 and 1). This does the same two roundings to a 64-bit
/// mantissa (half to even) with integers.
pub fn threshold(p: f64, n: u64) -> u128 {
    if p.is_nan() || p <= 0.0 || n == 0 {
        return 0;
    }
    // 0.01L: 0xA3D70A3D70A3D70A * 2^-70.
    const HUNDREDTH: u128 = 0xA3D7_0A3D_70A3_D70A;
    let bits = p.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1 << 52) - 1)) as u128;
    let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | 1 << 52, exp - 1075) };
    let (t, s1) = round64(n as u128 * HUNDREDTH);
    let (x, s2) = round64(t * m);
    let e = e - 70 + s1 + s2;
    if e >= 0 {
        x << e
    } else if -e >= 128 {
        (x > 0) as u128
    } else {
        (x + (1u128 << -e) - 1) >> -e
    }
}

/// `m` rounded to 64 significant bits (half to even), as (mantissa, shift):
/// the value is `mantissa << shift`.
fn round64(m: u128) -> (u128, i32) {
    let bits = 128 - m.leading_zeros() as i32;
    if bits <= 64 {
        return (m, 0);
    }
    let shift = bits - 64;
    let mant = m >> shift;
    let rem = m & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let mant = mant + (rem > half || (rem == half && mant & 1 == 1)) as u128;
    if mant >> 64 != 0 {
        (mant >> 1, shift + 1)
    } else {
        (mant, shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_metrics::STANDARD_PERCENTILES;

    /// A real fio 3.33 `--output-format=json+` run (psync 4k randread).
    const REAL: &str = include_str!("testdata/fio-3.33-randread.json+");

    /// Its read clat_ns.
    fn real() -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_str(REAL).unwrap();
        doc["jobs"][0]["read"]["clat_ns"].clone()
    }

    fn real_bins() -> Vec<(u64, u64)> {
        let v = real();
        // serde_json sorts keys as strings; fio lists them by value.
        let mut bins: Vec<(u64, u64)> =
            v["bins"].as_object().unwrap().iter().map(|(k, c)| (k.parse().unwrap(), c.as_u64().unwrap())).collect();
        bins.sort();
        bins
    }

    #[test]
    fn bucket_values_are_fios() {
        // Values fio prints (HOWTO, the notes' checks) and bucket edges.
        assert_eq!([127, 128, 129, 191, 192, 255, 256].map(idx_to_val), [127, 129, 131, 255, 258, 510, 516]);
        assert_eq!(idx_to_val(NR - 1), 17_112_760_320);
        assert_eq!([0, 127, 128, 129, 130, 255, 256, 257, 258].map(val_to_idx), [0, 127, 128, 128, 129, 191, 192, 192, 192]);
        assert_eq!(val_to_idx(1 << 34), NR - 1);
        assert_eq!(val_to_idx(u64::MAX), NR - 1);
        assert_eq!((idx_low(128), idx_low(129), idx_low(192), idx_low(193)), (128, 130, 256, 260));
    }

    #[test]
    fn every_key_of_a_real_json_plus_output_round_trips() {
        let bins = real_bins();
        assert_eq!(bins.len(), 154);
        for (k, _) in &bins {
            assert_eq!(idx_to_val(val_to_idx(*k)), *k, "bin {k}");
        }
        // A few keys as fio wrote them, and their bucket numbers.
        assert_eq!((val_to_idx(29312), val_to_idx(33536), val_to_idx(1056768)), (626, 641, 960));
        assert_eq!(bins[0], (29312, 1));
        assert_eq!(bins[bins.len() - 1], (1056768, 1));
    }

    #[test]
    fn percentiles_over_real_bins_are_the_ones_fio_printed() {
        let plat = Plat::from_bins(real_bins());
        assert_eq!(plat.count(), 48541);
        let v = real();
        let printed: Vec<u64> = STANDARD_PERCENTILES.iter().map(|p| v["percentile"][format!("{p:.6}")].as_u64().unwrap()).collect();
        assert_eq!(printed[0], 33536);
        assert_eq!(printed[16], 659456);
        assert_eq!(plat.percentiles(&STANDARD_PERCENTILES), printed);
    }

    #[test]
    fn storbench_histogram_of_the_same_latencies_gives_fios_bins_and_percentiles() {
        // Record each real bin's value as many times as fio counted it: the
        // fio buckets rebuilt from the HDR histogram are fio's, one for one.
        let bins = real_bins();
        let mut h = LatencyHistogram::new();
        for (v, c) in &bins {
            for _ in 0..*c {
                h.record(*v);
            }
        }
        let plat = Plat::of(&h);
        assert_eq!(plat.bins().collect::<Vec<_>>(), bins);
        assert_eq!(plat.percentiles(&[50.0, 99.99]), [38656, 659456]);
    }

    #[test]
    fn values_at_both_ends_of_a_bucket_share_it() {
        let mut h = LatencyHistogram::new();
        // fio bucket 769 holds 35840..=36351 (width 512): value 36096.
        for v in [35840, 36351, 36352, 5, 20_000_000_000] {
            h.record(v);
        }
        let plat = Plat::of(&h);
        assert_eq!(plat.bins().collect::<Vec<_>>(), [(5, 1), (36096, 2), (36608, 1), (17_112_760_320, 1)]);
    }

    #[test]
    fn thresholds_follow_fios_x87_arithmetic() {
        // Reference values from C on x86-64: (long double)n * 0.01L * p.
        assert_eq!(threshold(30.0, 100), 30);
        assert_eq!(threshold(99.95, 10_000), 9996);
        assert_eq!(threshold(0.1, 1000), 2);
        assert_eq!(threshold(25.8, 500), 130);
        assert_eq!(threshold(50.0, 48541), 24271);
        assert_eq!(threshold(99.99, 48541), 48537);
        assert_eq!(threshold(1.0, 1), 1);
        assert_eq!(threshold(100.0, u64::MAX), u64::MAX as u128 - 1);
        assert_eq!(threshold(1.0, 0), 0);
    }

    #[test]
    fn an_empty_histogram_gives_zero_percentiles_as_fio_does() {
        // fio's terse output calls the percentile code with N=0: every value is bucket 0.
        let plat = Plat::of(&LatencyHistogram::new());
        assert_eq!(plat.percentiles(&[1.0, 99.99]), [0, 0]);
        assert_eq!(plat.bins().count(), 0);
    }
}
