//! fio's cpuio engine as a kind of job: a CPU burner. Each worker keeps one
//! CPU busy `load` percent of the time, in cycles of `chunk` busy then
//! `chunk x (100 - load) / load` idle (fio's engines/cpu.c arithmetic), and
//! does no I/O. With `qsort` the busy part sorts instead of spinning and
//! its length is whatever the sorting took (fio calibrates the same way).
//! `exit_on_io_done` ends the burner when the jobs doing I/O beside it have
//! ended. This module holds what the job is; the runner burns.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// fio's `cpuchunks` default: 50 ms busy cycles.
pub const DEFAULT_CHUNK: Duration = Duration::from_millis(50);

/// How the busy part of a cycle keeps the CPU busy (fio's `cpumode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BurnMode {
    /// A spin on the clock for `chunk`.
    #[default]
    Noop,
    /// Sorting 1 MiB of numbers four ways (more memory traffic, more power).
    Qsort,
}

impl BurnMode {
    pub fn name(self) -> &'static str {
        match self {
            BurnMode::Noop => "noop",
            BurnMode::Qsort => "qsort",
        }
    }

    pub fn parse(v: &str) -> Result<BurnMode, String> {
        match v {
            "noop" => Ok(BurnMode::Noop),
            "qsort" => Ok(BurnMode::Qsort),
            _ => Err(format!("'{v}' is not a cpumode: give noop or qsort")),
        }
    }
}

/// A burner's settings (fio's `cpuload`, `cpuchunks`, `cpumode`,
/// `exit_on_io_done`). `load` 0 means cpuload was not given.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuBurn {
    /// Percent of one CPU each worker keeps busy, 1-100.
    pub load: u32,
    #[serde(with = "crate::spec::duration_ns")]
    pub chunk: Duration,
    pub mode: BurnMode,
    /// End when the group's jobs doing I/O have all ended.
    pub exit_on_io_done: bool,
}

impl Default for CpuBurn {
    fn default() -> CpuBurn {
        CpuBurn { load: 0, chunk: DEFAULT_CHUNK, mode: BurnMode::Noop, exit_on_io_done: false }
    }
}

impl CpuBurn {
    /// The idle part that follows `busy` so that busy is `load` percent of
    /// the cycle (fio's thinktime: busy x (100 - load) / load).
    pub fn idle_after(&self, busy: Duration) -> Duration {
        let load = u128::from(self.load.clamp(1, 100));
        Duration::from_nanos((busy.as_nanos() * (100 - load) / load).min(u64::MAX as u128) as u64)
    }

    /// "cpuio 50% noop": for job descriptions.
    pub fn describe(&self) -> String {
        format!("cpuio {}% {}", self.load, self.mode.name())
    }
}

/// A cpuload value: a whole percentage from 1 to 100.
pub fn parse_load(v: &str) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if (1..=100).contains(&n) => Ok(n),
        _ => Err(format!("'{v}' is not a percentage of one CPU from 1 to 100")),
    }
}

/// fio's qsort work: numbers from Marsaglia's multiply-with-carry generator
/// (fio's seed), sorted up, down, by byte, and down again.
pub struct SortWork {
    data: Vec<i32>,
    w: u32,
    z: u32,
}

impl Default for SortWork {
    fn default() -> Self {
        Self::new()
    }
}

impl SortWork {
    /// fio sorts 256 Ki 32-bit numbers.
    pub const LEN: usize = 256 << 10;

    pub fn new() -> SortWork {
        SortWork { data: vec![0; Self::LEN], w: 521_288_629, z: 362_436_069 }
    }

    fn next(&mut self) -> u32 {
        self.z = 36969u32.wrapping_mul(self.z & 65535).wrapping_add(self.z >> 16);
        self.w = 18000u32.wrapping_mul(self.w & 65535).wrapping_add(self.w >> 16);
        (self.z << 16).wrapping_add(self.w)
    }

    /// One busy part. The numbers are drawn afresh each time so every cycle
    /// sorts unsorted data (a sort of sorted data is nearly free here, where
    /// glibc's merge sort in fio costs the same each time).
    pub fn run(&mut self) -> i64 {
        for i in 0..self.data.len() {
            self.data[i] = self.next() as i32;
        }
        self.data.sort_unstable();
        self.data.sort_unstable_by(|a, b| b.cmp(a));
        let mut bytes: Vec<u8> = self.data.iter().flat_map(|x| x.to_ne_bytes()).collect();
        bytes.sort_unstable();
        for (x, b) in self.data.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = i32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        }
        self.data.sort_unstable_by(|a, b| b.cmp(a));
        // Something of the result, so the work cannot be left out.
        i64::from(self.data[0]) + i64::from(self.data[Self::LEN - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_keeps_busy_at_the_load() {
        let b = |load| CpuBurn { load, ..CpuBurn::default() };
        assert_eq!(b(50).idle_after(DEFAULT_CHUNK), DEFAULT_CHUNK);
        assert_eq!(b(25).idle_after(Duration::from_millis(10)), Duration::from_millis(30));
        assert_eq!(b(100).idle_after(DEFAULT_CHUNK), Duration::ZERO);
    }

    #[test]
    fn loads_outside_one_to_a_hundred_are_refused() {
        assert_eq!(parse_load("50"), Ok(50));
        for bad in ["0", "101", "-5", "half", "50%"] {
            assert!(parse_load(bad).is_err(), "{bad}");
        }
        assert!(BurnMode::parse("spin").unwrap_err().contains("noop"));
    }

    #[test]
    fn sorting_ends_in_descending_order() {
        let mut s = SortWork::new();
        s.run();
        assert!(s.data.windows(2).all(|w| w[0] >= w[1]));
    }
}
