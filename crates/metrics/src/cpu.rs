//! The tool's own CPU cost, from getrusage: CPU time, and the context
//! switches and page faults fio reports beside it (`ctx`, `majf`, `minf`).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// User and system CPU time, context switches (voluntary and not) and
/// page faults (minor, major). Results from before the counts were kept
/// read them as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
    #[serde(default)]
    pub ctx: u64,
    #[serde(default)]
    pub minflt: u64,
    #[serde(default)]
    pub majflt: u64,
}

impl CpuTimes {
    /// CPU time of the whole process so far.
    pub fn process() -> CpuTimes {
        Self::of(libc::RUSAGE_SELF)
    }

    /// CPU time of the calling thread so far.
    pub fn thread() -> CpuTimes {
        Self::of(libc::RUSAGE_THREAD)
    }

    fn of(who: libc::c_int) -> CpuTimes {
        // SAFETY: getrusage writes into the zeroed struct we pass; it cannot fail
        // for RUSAGE_SELF/RUSAGE_THREAD with a valid pointer.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut ru) };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
        CpuTimes {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
            minflt: ru.ru_minflt as u64,
            majflt: ru.ru_majflt as u64,
        }
    }

    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            ctx: self.ctx.saturating_sub(earlier.ctx),
            minflt: self.minflt.saturating_sub(earlier.minflt),
            majflt: self.majflt.saturating_sub(earlier.majflt),
        }
    }

    /// Both added up (a job's workers).
    pub fn plus(self, other: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns + other.user_ns,
            sys_ns: self.sys_ns + other.sys_ns,
            ctx: self.ctx + other.ctx,
            minflt: self.minflt + other.minflt,
            majflt: self.majflt + other.majflt,
        }
    }

    pub fn total(self) -> Duration {
        Duration::from_nanos(self.user_ns + self.sys_ns)
    }
}

/// Peak resident set size of this process, in bytes.
pub fn max_rss_bytes() -> u64 {
    // SAFETY: as above.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64 * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_shows_up_as_thread_cpu_time() {
        // Spin until the thread's own clock says 20 ms were spent, bounded by
        // wall time so a broken measurement fails instead of hanging.
        let before = CpuTimes::thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while CpuTimes::thread().since(before).total() < Duration::from_millis(20) {
            x = x.wrapping_add(std::hint::black_box(1));
            assert!(start.elapsed() < Duration::from_secs(20), "thread CPU time did not grow ({x} iterations)");
        }
        assert!(CpuTimes::process().total() >= Duration::from_millis(20));
    }
}
