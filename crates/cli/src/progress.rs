//! Live progress on a terminal: one line per job, rewritten each second.
//! Nothing is printed when standard error is not a terminal.

use std::io::Write;
use storbench_model::protocol::JobShare;
use storbench_report::fmt;
use storbench_runner::{Observer, Progress};

pub struct Live {
    enabled: bool,
}

impl Live {
    pub fn new(quiet: bool) -> Live {
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(2) } == 1;
        Live { enabled: tty && !quiet }
    }
}

impl Observer for Live {
    fn job_started(&mut self, job: &JobShare) {
        if self.enabled {
            eprintln!("\r\x1b[K{}: {}", job.spec.name, job.spec.describe());
        }
    }

    fn second(&mut self, p: &Progress) {
        if !self.enabled {
            return;
        }
        let iops: f64 = p.point.ops.iter().map(|o| o.iops).sum();
        let bw: f64 = p.point.ops.iter().map(|o| o.bytes_per_sec).sum();
        let p99 = p.point.ops.iter().map(|o| o.p99_ns).max().unwrap_or(0);
        let eta = p.total_s.map(|t| format!("  ETA {}", fmt::duration((t - p.elapsed_s).max(0.0)))).unwrap_or_default();
        let phase = if p.point.warmup { " (warm-up)" } else { "" };
        eprint!(
            "\r\x1b[K  [{}] {:>5.0}s  {} IOPS  {} MiB/s  p99 {}{eta}{phase}",
            p.job,
            p.elapsed_s,
            fmt::count(iops),
            fmt::mib_per_s(bw),
            fmt::latency(p99)
        );
        let _ = std::io::stderr().flush();
    }

    fn group_finished(&mut self) {
        if self.enabled {
            eprint!("\r\x1b[K");
        }
    }
}
