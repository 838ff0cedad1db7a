//! A CPU burner's measured phase (fio's cpuio; the job is
//! `workload::burn::CpuBurn`). The worker runs this instead of its I/O loop,
//! so a burner's results are its CPU time and context switches, with no
//! operations: nothing is counted that was not done.
//!
//! Each cycle is a busy part (a spin on the clock for `cpuchunks`, or one
//! round of sorting, whose length is what it took) and then an idle part
//! that makes the busy part `cpuload` percent of the cycle, as fio's
//! engines/cpu.c times its think time: from `cpuchunks` for a spin (a spin
//! that overran, preempted past its end, is not made up for), from the
//! sort's measured length for qsort. The spin is on the clock, not on the
//! thread's CPU time, as in fio: on a busy machine a burner gets less CPU
//! than it asks for, and both tools report what it got. The idle part is
//! slept in slices, so a stop (Ctrl-C, the run's end, `exit_on_io_done`)
//! ends the burner within one slice.

use crate::clock::Clock;
use storbench_workload::burn::{BurnMode, CpuBurn, SortWork};

/// The longest sleep between looks at the stop and the interval boundary.
const SLICE_NS: u64 = 50_000_000;

/// One worker's burner.
pub struct Burner {
    spec: CpuBurn,
    sort: Option<Box<SortWork>>,
    /// What the sorting gave, kept so the work is not left out.
    sink: i64,
}

impl Burner {
    pub fn new(spec: CpuBurn) -> Burner {
        let sort = (spec.mode == BurnMode::Qsort).then(|| Box::new(SortWork::new()));
        Burner { spec, sort, sink: 0 }
    }

    /// The busy part of a cycle from `start`: returns when it ended and
    /// the idle part that follows. A spin ends at `limit` at the latest
    /// (the phase's end) or when `stopped`.
    fn busy(&mut self, clock: &Clock, start: u64, limit: u64, stopped: &dyn Fn() -> bool) -> (u64, u64) {
        let busy = match self.sort.as_mut() {
            Some(sort) => {
                self.sink = self.sink.wrapping_add(std::hint::black_box(sort.run()));
                std::time::Duration::from_nanos(clock.now() - start)
            }
            None => {
                let until = (start + self.spec.chunk.as_nanos() as u64).min(limit);
                while clock.now() < until && !stopped() {
                    std::hint::spin_loop();
                }
                self.spec.chunk
            }
        };
        (clock.now(), self.spec.idle_after(busy).as_nanos() as u64)
    }
}

/// Burn until the phase's end (`end_ns`) or `stopped`; `tick` is called at
/// least every slice with the time (the worker closes its intervals there).
/// Returns the phase's end.
pub fn run(b: &mut Burner, clock: &Clock, end_ns: Option<u64>, stopped: &dyn Fn() -> bool, tick: &mut dyn FnMut(u64)) -> u64 {
    let limit = end_ns.unwrap_or(u64::MAX);
    loop {
        let start = clock.now();
        tick(start);
        if stopped() || start >= limit {
            return start.min(limit);
        }
        let (busy_end, idle) = b.busy(clock, start, limit, stopped);
        let idle_until = busy_end.saturating_add(idle);
        loop {
            let now = clock.now();
            tick(now);
            if now >= idle_until || now >= limit || stopped() {
                break;
            }
            let wake = idle_until.min(limit).min(now + SLICE_NS);
            std::thread::sleep(std::time::Duration::from_nanos(wake - now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};
    use storbench_metrics::CpuTimes;

    /// A 40% burner for 600 ms spends about 240 ms busy: its thread's CPU
    /// time stays well under the whole time (not a spin throughout), and it
    /// ends at the phase's end.
    #[test]
    fn a_burner_keeps_busy_its_share_of_the_time() {
        let spec = CpuBurn { load: 40, chunk: Duration::from_millis(20), ..CpuBurn::default() };
        let clock = Clock::at(Instant::now());
        let cpu0 = CpuTimes::thread();
        let mut ticks = 0;
        let end = run(&mut Burner::new(spec), &clock, Some(600_000_000), &|| false, &mut |_| ticks += 1);
        let cpu = CpuTimes::thread().since(cpu0).total();
        assert_eq!(end, 600_000_000);
        assert!(cpu < Duration::from_millis(450), "{cpu:?} of CPU in 600 ms at 40%");
        assert!(ticks >= 12, "{ticks}");
    }

    #[test]
    fn a_stop_ends_it_at_once() {
        let spec = CpuBurn { load: 1, chunk: Duration::from_millis(10), ..CpuBurn::default() };
        let clock = Clock::at(Instant::now());
        let t0 = Instant::now();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let end = run(&mut Burner::new(spec), &clock, None, &|| stop.load(std::sync::atomic::Ordering::Relaxed), &mut |now| {
            if now > 100_000_000 {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(end >= 100_000_000 && t0.elapsed() < Duration::from_millis(400), "{end} {:?}", t0.elapsed());
    }
}
