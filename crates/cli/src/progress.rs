//! Live progress on a terminal: one line per job, rewritten each second
//! (not when standard error is not a terminal). What happens outside the
//! measured phase (prefill, cleanup, an interrupt) is said in one line each,
//! on a terminal or not, unless --quiet.

use std::io::Write;
use storbench_model::protocol::{JobShare, Stage};
use storbench_report::fmt;
use storbench_runner::{Observer, Progress};

pub struct Live {
    /// Per-second lines (a terminal, not --quiet).
    enabled: bool,
    /// Stage and interrupt lines (not --quiet).
    say: bool,
    /// A job's cleanup has begun (a Ctrl-C now skips it).
    cleaning: bool,
}

impl Live {
    pub fn new(quiet: bool) -> Live {
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(2) } == 1;
        Live { enabled: tty && !quiet, say: !quiet, cleaning: false }
    }

    fn line(&self, text: &str) {
        if self.say {
            let clear = if self.enabled { "\r\x1b[K" } else { "" };
            say!("{clear}storbench: {text}");
        }
    }
}

impl Observer for Live {
    fn job_started(&mut self, job: &JobShare) {
        if self.enabled {
            say!("\r\x1b[K{}: {}", job.spec.name, job.spec.describe());
        }
    }

    fn stage(&mut self, job: &str, stage: Stage) {
        match stage {
            Stage::Prefill => self.line(&format!("job '{job}': writing its objects before measuring (prefill)")),
            // A terminal shows the measured phase second by second instead.
            Stage::Measure if !self.enabled => self.line(&format!("job '{job}': measuring")),
            Stage::Measure => {}
            // Never announced (a failure's stage only).
            Stage::SetUp => {}
            Stage::Verify => self.line(&format!("job '{job}': reading back and checking what it wrote (verify)")),
            Stage::Cleanup => {
                self.cleaning = true;
                self.line(&format!("job '{job}': removing the objects it wrote (Ctrl-C skips this and lists them)"));
            }
        }
    }

    fn interrupted(&mut self, level: u32) {
        if level >= 2 || self.cleaning {
            self.line("interrupted: skipping the rest of the cleanup; what is left is listed with the command that removes it");
        } else {
            self.line("interrupted: stopping; what was measured is kept, and what the run wrote is removed (Ctrl-C again skips that)");
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
        say_part!(
            "\r\x1b[K  [{}] {:>5.0}s  {} IOPS  {} MiB/s  p99 {}{eta}{phase}",
            p.job,
            p.elapsed_s,
            fmt::count(iops),
            fmt::mib_per_s(bw),
            fmt::latency(p99)
        );
        crate::streams::checked(crate::streams::Stream::Stderr, std::io::stderr().flush());
    }

    fn group_finished(&mut self) {
        if self.enabled {
            say_part!("\r\x1b[K");
        }
    }
}
