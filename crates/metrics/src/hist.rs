//! A latency histogram in nanoseconds, wide enough for hour-long stalls.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer as SerdeDe, Serialize, Serializer as SerdeSer};

/// Highest trackable latency: one hour. Larger values are clamped and counted
/// in [`LatencyHistogram::clamped`].
pub const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1% resolution at every magnitude.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Sub-buckets per power of two of [`LatencyHistogram::log_buckets`]
/// (each about 19% wide).
pub const LOG_BUCKETS_PER_OCTAVE: u32 = 4;

/// The coarse bucket of a latency: floor(4 * log2(ns)).
pub fn log_bucket(ns: u64) -> u16 {
    let ns = ns.max(1);
    let octave = 63 - ns.leading_zeros();
    // The position inside the octave, from the bits below the top one.
    let frac = if octave >= 8 { (ns >> (octave - 8)) & 0xFF } else { (ns << (8 - octave)) & 0xFF } as f64 / 256.0;
    let sub = ((1.0 + frac).log2() * LOG_BUCKETS_PER_OCTAVE as f64) as u32;
    (octave * LOG_BUCKETS_PER_OCTAVE + sub.min(LOG_BUCKETS_PER_OCTAVE - 1)) as u16
}

/// The lowest latency of coarse bucket `b`.
pub fn log_bucket_low(b: u16) -> f64 {
    2f64.powf(b as f64 / LOG_BUCKETS_PER_OCTAVE as f64)
}

/// HdrHistogram of latencies in nanoseconds, 1 ns .. 1 h at 3 significant digits.
///
/// The counts (~270 KB) are allocated on the first record: a report carries a
/// histogram for every operation kind, and most jobs use two or three.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    h: Option<Box<Histogram<u64>>>,
    clamped: u64,
}

fn empty() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS).expect("constant histogram bounds are valid")
}

impl LatencyHistogram {
    pub fn new() -> LatencyHistogram {
        LatencyHistogram { h: None, clamped: 0 }
    }

    #[inline]
    fn counts(&mut self) -> &mut Histogram<u64> {
        self.h.get_or_insert_with(|| Box::new(empty()))
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = if ns > MAX_TRACKABLE_NS {
            self.clamped += 1;
            MAX_TRACKABLE_NS
        } else {
            ns.max(1)
        };
        // Cannot fail: v is within the histogram's bounds.
        let _ = self.counts().record(v);
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        if let Some(o) = other.h.as_deref() {
            // Same bounds on both sides, so add cannot fail.
            let _ = self.counts().add(o);
        }
        self.clamped += other.clamped;
    }

    pub fn reset(&mut self) {
        if let Some(h) = self.h.as_deref_mut() {
            h.reset();
        }
        self.clamped = 0;
    }

    pub fn count(&self) -> u64 {
        self.h.as_deref().map_or(0, |h| h.len())
    }
    pub fn clamped(&self) -> u64 {
        self.clamped
    }
    pub fn min(&self) -> u64 {
        match self.h.as_deref() {
            Some(h) if !h.is_empty() => h.min(),
            _ => 0,
        }
    }
    pub fn max(&self) -> u64 {
        self.h.as_deref().map_or(0, |h| h.max())
    }
    pub fn mean(&self) -> f64 {
        self.h.as_deref().map_or(0.0, |h| h.mean())
    }
    pub fn stdev(&self) -> f64 {
        self.h.as_deref().map_or(0.0, |h| h.stdev())
    }
    /// Value at a percentile (0..=100), in ns.
    pub fn percentile(&self, p: f64) -> u64 {
        match self.h.as_deref() {
            Some(h) if !h.is_empty() => h.value_at_percentile(p),
            _ => 0,
        }
    }
    /// Counts in coarse logarithmic buckets ([`LOG_BUCKETS_PER_OCTAVE`] per
    /// power of two; bucket b starts at [`log_bucket_low`]`(b)`), nonzero
    /// ones ascending: small enough to keep one per second of a run (for
    /// latency heatmaps over time).
    pub fn log_buckets(&self) -> Vec<(u16, u64)> {
        let mut out: Vec<(u16, u64)> = Vec::new();
        let Some(h) = self.h.as_deref() else { return out };
        for v in h.iter_recorded() {
            let b = log_bucket(v.value_iterated_to());
            match out.last_mut() {
                Some(last) if last.0 == b => last.1 += v.count_at_value(),
                _ => out.push((b, v.count_at_value())),
            }
        }
        out
    }

    /// Recorded values in `[low, high]`.
    pub fn count_between(&self, low: u64, high: u64) -> u64 {
        self.h.as_deref().map_or(0, |h| h.count_between(low, high))
    }

    /// Base64 of the V2+deflate encoding (the format HdrHistogram tools read).
    pub fn encode(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(self.h.as_deref().unwrap_or(&empty()), &mut bytes)
            .expect("serializing into a Vec cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    pub fn decode(text: &str) -> Result<LatencyHistogram, String> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("histogram is not base64: {e}"))?;
        let h: Histogram<u64> =
            Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(|e| format!("histogram does not decode: {e:?}"))?;
        let mut out = LatencyHistogram::new();
        if h.is_empty() {
            return Ok(out);
        }
        out.counts().add(&h).map_err(|e| format!("histogram out of range: {e:?}"))?;
        Ok(out)
    }
}

#[derive(Serialize, Deserialize)]
struct Encoded {
    hdr_v2_deflate_base64: String,
    #[serde(default)]
    clamped: u64,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: SerdeSer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Encoded { hdr_v2_deflate_base64: self.encode(), clamped: self.clamped }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: SerdeDe<'de>>(d: D) -> Result<Self, D::Error> {
        let e = Encoded::deserialize(d)?;
        let mut h = LatencyHistogram::decode(&e.hdr_v2_deflate_base64).map_err(serde::de::Error::custom)?;
        h.clamped = e.clamped;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn coarse_buckets_are_a_quarter_octave_wide_and_add_up() {
        assert_eq!((log_bucket(1), log_bucket(2), log_bucket(1024)), (0, 4, 40));
        assert!(log_bucket(1_000_000) > log_bucket(999_000 / 2 * 2 - 200_000));
        for ns in [3u64, 700, 1_000, 123_456, 5_000_000_000] {
            let b = log_bucket(ns);
            assert!(log_bucket_low(b) <= ns as f64 * 1.0001 && ns as f64 <= log_bucket_low(b + 1) * 1.0001, "{ns} in bucket {b}");
        }
        let mut h = LatencyHistogram::new();
        for ns in [1_000u64, 1_010, 2_000, 1_000_000] {
            h.record(ns);
        }
        let b = h.log_buckets();
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 4);
        assert_eq!(b[0], (log_bucket(1_000), 2), "1000 and 1010 ns share a bucket");
    }

    use super::*;

    #[test]
    fn records_from_nanoseconds_to_an_hour_and_clamps_beyond() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(50_000);
        h.record(1_800_000_000_000); // 30 minutes
        h.record(MAX_TRACKABLE_NS * 2);
        assert_eq!(h.count(), 4);
        assert_eq!(h.clamped(), 1);
        assert!(h.percentile(75.0) >= 1_798_000_000_000);
    }

    #[test]
    fn encode_decode_round_trip_keeps_every_count() {
        let mut h = LatencyHistogram::new();
        for i in 1..10_000u64 {
            h.record(i * 997);
        }
        let back = LatencyHistogram::decode(&h.encode()).unwrap();
        assert_eq!(back.count(), h.count());
        for p in [50.0, 99.0, 99.99] {
            assert_eq!(back.percentile(p), h.percentile(p));
        }
        assert!(LatencyHistogram::decode("not base64!").is_err());
    }

    #[test]
    fn merging_histograms_is_exact_not_averaged() {
        let (mut a, mut b) = (LatencyHistogram::new(), LatencyHistogram::new());
        for _ in 0..99 {
            a.record(1_000);
        }
        b.record(1_000_000);
        let mut m = a.clone();
        m.add(&b);
        assert_eq!(m.count(), 100);
        assert!(m.percentile(99.5) >= 999_000);
        assert!(m.percentile(50.0) < 1_100);
    }
}
