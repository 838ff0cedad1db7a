//! fio's latency buckets (stat.h `FIO_IO_U_PLAT_*`: 29 groups of 64, 1856
//! in all) and the lines of fio's histogram log (`write_hist_log`), which
//! workers fill as they complete I/O: a bucket index is a few bit
//! operations, and a window keeps only its nonzero buckets once closed.

use serde::{Deserialize, Serialize};

/// `FIO_IO_U_PLAT_BITS`.
pub const PLAT_BITS: u32 = 6;
/// `FIO_IO_U_PLAT_VAL`: buckets per group.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// `FIO_IO_U_PLAT_NR`: 29 groups of 64.
pub const PLAT_NR: usize = 29 * PLAT_VAL as usize;

/// fio's `plat_val_to_idx`: the bucket of a latency in ns.
#[inline]
pub fn plat_index(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) << PLAT_BITS) as usize;
    let offset = ((v >> error_bits) & (PLAT_VAL - 1)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// One line of fio's histogram log: one direction's completions since the
/// previous line of that direction, in fio's buckets (nonzero ones only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistSample {
    /// When the line was due: ms since the measured phase began.
    pub t_ms: u64,
    /// 0 reads, 1 writes (fio's ddir).
    pub dir: u8,
    /// Block size of the I/O that closed the window, as fio logs it.
    pub bs: u64,
    /// (bucket index, count), ascending.
    pub bins: Vec<(u16, u64)>,
}

/// One direction's open window of the histogram log.
#[derive(Clone, Debug)]
pub struct PlatWindow {
    counts: Vec<u64>,
    /// When the last line was written (or the first completion came).
    last_ms: Option<u64>,
}

impl Default for PlatWindow {
    fn default() -> Self {
        PlatWindow { counts: vec![0; PLAT_NR], last_ms: None }
    }
}

impl PlatWindow {
    /// Count a completion at `t_ms`; when `window_ms` have passed since the
    /// last line, the line (this completion included), as fio writes it.
    pub fn record(&mut self, latency_ns: u64, t_ms: u64, window_ms: u64, dir: u8, bs: u64) -> Option<HistSample> {
        self.counts[plat_index(latency_ns)] += 1;
        let last = *self.last_ms.get_or_insert(t_ms);
        if t_ms - last < window_ms {
            return None;
        }
        self.last_ms = Some(t_ms);
        let bins = self.counts.iter_mut().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| (i as u16, std::mem::take(c))).collect();
        Some(HistSample { t_ms, dir, bs, bins })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_fios() {
        // Exact below 128 ns, then 64 per power of two; the last catches all.
        assert_eq!((plat_index(0), plat_index(127), plat_index(128), plat_index(129), plat_index(130)), (0, 127, 128, 128, 129));
        assert_eq!(plat_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn a_line_is_written_at_the_first_completion_a_window_after_the_last_and_counts_start_again() {
        let mut w = PlatWindow::default();
        assert_eq!(w.record(100, 10, 500, 0, 4096), None, "the first completion starts the window");
        assert_eq!(w.record(100, 400, 500, 0, 4096), None);
        let line = w.record(200, 510, 500, 0, 8192).unwrap();
        assert_eq!((line.t_ms, line.bs, line.bins.clone()), (510, 8192, vec![(100, 2), (plat_index(200) as u16, 1)]));
        let next = w.record(100, 1100, 500, 0, 4096).unwrap();
        assert_eq!(next.bins, vec![(100, 1)], "deltas since the previous line");
    }
}
