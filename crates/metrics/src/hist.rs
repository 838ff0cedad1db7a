//! A latency histogram in nanoseconds, wide enough for hour-long stalls.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer, V2Serializer};
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
/// The counts are allocated on the first record (a report carries a
/// histogram for every operation kind, and most jobs use two or three) and
/// grow only as far as the largest latency recorded: 1 h would take 270 KB
/// per histogram, 5 ms takes about 110 KB. Interval reports come and go
/// every second from every worker (and every agent of a fleet), so their
/// size is the coordinator's cost.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    h: Option<Box<Histogram<u64>>>,
    clamped: u64,
}

fn empty() -> Histogram<u64> {
    // Auto-resizing from 1 ns: values up to MAX_TRACKABLE_NS fit (larger
    // ones are clamped before they are recorded).
    Histogram::new(SIGNIFICANT_DIGITS).expect("constant histogram precision is valid")
}

/// A decoded histogram that is one of ours: kept as it came (copying it into
/// a fresh one cost an allocation and a full pass per histogram, per agent,
/// per second in a fleet).
fn ours(mut h: Histogram<u64>) -> Result<Histogram<u64>, Histogram<u64>> {
    if h.low() == 1 && h.sigfig() == SIGNIFICANT_DIGITS && h.high() <= MAX_TRACKABLE_NS * 2 {
        h.auto(true);
        Ok(h)
    } else {
        Err(h)
    }
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
        // Cannot fail: the histogram grows to take v (at most MAX_TRACKABLE_NS).
        let _ = self.counts().record(v);
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        if let Some(o) = other.h.as_deref() {
            // Both auto-resize up to MAX_TRACKABLE_NS, so add cannot fail.
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
    /// Nothing recorded (clamped values count as recorded).
    pub fn is_empty(&self) -> bool {
        self.count() == 0 && self.clamped == 0
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

    /// Every recorded value (the highest of its bucket) and its count,
    /// ascending: two histograms with the same counts give the same list,
    /// whatever their growth history (their encodings may differ in the
    /// highest value the header says they can hold).
    pub fn values(&self) -> Vec<(u64, u64)> {
        self.h.as_deref().map_or_else(Vec::new, |h| h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect())
    }

    /// Recorded values in `[low, high]`.
    pub fn count_between(&self, low: u64, high: u64) -> u64 {
        self.h.as_deref().map_or(0, |h| h.count_between(low, high))
    }

    /// Base64 of the V2+deflate encoding (the format HdrHistogram tools read).
    pub fn encode(&self) -> String {
        self.encode_as(true)
    }

    /// Base64 of the V2 encoding, deflated or not ([`decode`](Self::decode) reads both).
    fn encode_as(&self, deflate: bool) -> String {
        let mut bytes = Vec::new();
        let none = empty();
        let h = self.h.as_deref().unwrap_or(&none);
        // Serializing into a Vec cannot fail.
        let written = if deflate {
            V2DeflateSerializer::new().serialize(h, &mut bytes).is_ok()
        } else {
            V2Serializer::new().serialize(h, &mut bytes).is_ok()
        };
        debug_assert!(written, "serializing a histogram into a Vec failed");
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
        match ours(h) {
            Ok(h) => out.h = Some(Box::new(h)),
            // Another tool's bounds: brought into ours.
            Err(h) => {
                for v in h.iter_recorded() {
                    let value = v.value_iterated_to().clamp(1, MAX_TRACKABLE_NS);
                    out.counts().record_n(value, v.count_at_value()).map_err(|e| format!("histogram out of range: {e:?}"))?;
                }
            }
        }
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

/// Histograms in the run protocol (`#[serde(with = "hist::wire")]`): V2
/// without deflate. An interval's histogram is sparse and V2 already writes
/// runs of empty buckets as one number; inflating every histogram of every
/// report cost a fleet's coordinator more than the bytes it saved.
pub mod wire {
    use super::LatencyHistogram;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Plain {
        hdr_v2_base64: String,
        #[serde(default)]
        clamped: u64,
    }

    pub fn serialize<S: Serializer>(h: &LatencyHistogram, s: S) -> Result<S::Ok, S::Error> {
        Plain { hdr_v2_base64: h.encode_as(false), clamped: h.clamped }.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<LatencyHistogram, D::Error> {
        let p = Plain::deserialize(d)?;
        let mut h = LatencyHistogram::decode(&p.hdr_v2_base64).map_err(serde::de::Error::custom)?;
        h.clamped = p.clamped;
        Ok(h)
    }

    /// The same for an optional histogram.
    pub mod option {
        use super::LatencyHistogram;
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        #[derive(Serialize, Deserialize)]
        struct Wrapped(#[serde(with = "super")] LatencyHistogram);

        pub fn serialize<S: Serializer>(h: &Option<LatencyHistogram>, s: S) -> Result<S::Ok, S::Error> {
            h.as_ref().map(|h| Wrapped(h.clone())).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LatencyHistogram>, D::Error> {
            Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
        }
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
    fn the_wire_form_is_plain_v2_and_keeps_every_count() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct M {
            #[serde(with = "wire")]
            h: LatencyHistogram,
            #[serde(with = "wire::option")]
            o: Option<LatencyHistogram>,
        }
        let mut h = LatencyHistogram::new();
        (1..5000u64).for_each(|i| h.record(i * 1009));
        h.record(MAX_TRACKABLE_NS + 5);
        let text = serde_json::to_string(&M { h: h.clone(), o: Some(h.clone()) }).unwrap();
        assert!(text.contains("hdr_v2_base64"));
        let back: M = serde_json::from_str(&text).unwrap();
        assert_eq!((back.h.values(), back.h.clamped()), (h.values(), 1));
        assert_eq!(back.o.unwrap().values(), h.values());
        let none: M = serde_json::from_str(&serde_json::to_string(&M { h: LatencyHistogram::new(), o: None }).unwrap()).unwrap();
        assert!(none.h.is_empty() && none.o.is_none());
    }

    #[test]
    fn a_decoded_histogram_takes_every_value_and_merge_as_a_new_one() {
        let mut h = LatencyHistogram::new();
        h.record(5_000);
        let mut back = LatencyHistogram::decode(&h.encode()).unwrap();
        back.record(MAX_TRACKABLE_NS);
        back.record(MAX_TRACKABLE_NS + 1);
        back.add(&h);
        assert_eq!((back.count(), back.clamped(), back.min()), (4, 1, h.min()));
        assert_eq!(back.max(), LatencyHistogram::decode(&back.encode()).unwrap().max());
        // Another tool's bounds are brought into ours.
        let mut other = Histogram::<u64>::new_with_bounds(1000, 60_000_000_000, 2).unwrap();
        other.record(2_000_000).unwrap();
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(&other, &mut bytes).unwrap();
        let foreign = LatencyHistogram::decode(&base64::engine::general_purpose::STANDARD.encode(bytes)).unwrap();
        assert_eq!(foreign.count(), 1);
        let mut ours = LatencyHistogram::new();
        ours.add(&foreign);
        ours.record(1);
        assert_eq!(ours.count(), 2);
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
