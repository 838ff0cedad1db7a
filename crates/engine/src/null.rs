//! The `null` engine: completes every operation at once without doing I/O. It
//! measures storbench's own cost per operation and tests the runner end to end.
//!
//! With `service_time` it becomes a simulated store instead: a queue in front
//! of `servers` servers (default 1), shared by every worker of the job, each
//! serving one operation for `service_time`. Throughput then tops out at
//! `servers / service_time` and latency grows with the queue beyond that, so
//! the knee of a sweep and the answer of a latency search are known in
//! advance (tests of storbench's own search).

use crate::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;
use std::time::Instant;

pub struct NullFactory;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "service_time",
        kind: Kind::Duration,
        default: "0",
        help: "simulate a store: each operation takes this long on one of `servers` servers (e.g. 200us)",
    },
    OptionInfo { name: "servers", kind: Kind::Count, default: "1", help: "simulated servers the job's operations queue for" },
    OptionInfo {
        name: "unsteady_until",
        kind: Kind::Duration,
        default: "0",
        help: "simulated store: until this long after set-up, every other second operations take twice service_time (a store that settles)",
    },
];

impl EngineFactory for NullFactory {
    fn name(&self) -> &'static str {
        "null"
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: "null", note: None }]
    }
    fn description(&self) -> &'static str {
        "does no I/O; measures storbench's own overhead (or, with service_time, simulates a queue of servers)"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: false, does_io: false, blocks: true, objects: true, ordered: true }
    }
    fn options(&self) -> &'static [OptionInfo] {
        OPTIONS
    }
    fn supports(&self, _op: OpKind) -> bool {
        true
    }
    /// Volumes of nothing: each volume's workers queue for the job's
    /// simulated servers like any other worker of the job.
    fn volume_options(&self, options: &EngineOptions, _volumes: u32) -> Result<EngineOptions, EngineError> {
        Ok(options.clone())
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known("null", OPTIONS, options)?;
        let bad = |option: &str, message: String| EngineError::BadOption { engine: "null", option: option.into(), message };
        let service = match options.get("service_time") {
            None => Duration::ZERO,
            Some(v) => {
                storbench_workload::units::parse_duration(v, Duration::from_micros(1)).map_err(|e| bad("service_time", e.to_string()))?
            }
        };
        let servers = match options.get("servers") {
            None => 1,
            Some(v) => match storbench_workload::units::parse_count(v) {
                Ok(n) if (1..=1_000_000).contains(&n) => n as usize,
                _ => return Err(bad("servers", format!("'{v}' is not a count from 1 to 1000000"))),
            },
        };
        if service.is_zero() && options.contains_key("servers") {
            return Err(bad("servers", "simulated servers need service_time (how long each operation takes)".into()));
        }
        let unsteady = match options.get("unsteady_until") {
            None => Duration::ZERO,
            Some(v) => {
                storbench_workload::units::parse_duration(v, Duration::from_secs(1)).map_err(|e| bad("unsteady_until", e.to_string()))?
            }
        };
        if service.is_zero() && !unsteady.is_zero() {
            return Err(bad("unsteady_until", "a store that settles needs service_time (how long each operation takes)".into()));
        }
        let sim = (!service.is_zero()).then(|| Arc::new(Sim::new(service, servers, unsteady)));
        Ok(Arc::new(NullConfig { sim }))
    }
}

struct NullConfig {
    sim: Option<Arc<Sim>>,
}

impl EngineConfig for NullConfig {
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let qd = setup.queue_depth as usize;
        Ok(match &self.sim {
            None => Box::new(Null { done: Vec::with_capacity(qd) }),
            Some(sim) => Box::new(Simulated { sim: sim.clone(), pending: BinaryHeap::with_capacity(qd) }),
        })
    }
}

struct Null {
    done: Vec<Completion>,
}

impl Engine for Null {
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.done.push(Completion::new(req.slot, Ok(req.len as u64)));
        Ok(())
    }

    #[inline]
    fn submit_and_reap(&mut self, _min: u32, _t: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}

/// The servers of one job: when each is next free, ns since `epoch`, the
/// first operation (so the store's seconds are the run's, however long the
/// set-up between configuring it and the start took).
struct Sim {
    service_ns: u64,
    /// Until then (ns since `epoch`), operations starting in an even second
    /// take twice as long: the rate alternates, then settles.
    unsteady_until_ns: u64,
    free_at: Mutex<BinaryHeap<Reverse<u64>>>,
    epoch: std::sync::OnceLock<Instant>,
}

impl Sim {
    fn new(service: Duration, servers: usize, unsteady: Duration) -> Sim {
        Sim {
            service_ns: service.as_nanos() as u64,
            unsteady_until_ns: unsteady.as_nanos() as u64,
            free_at: Mutex::new((0..servers).map(|_| Reverse(0)).collect()),
            epoch: std::sync::OnceLock::new(),
        }
    }

    fn now(&self) -> u64 {
        self.epoch.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }

    /// An operation arriving now: it starts on the server free first (or
    /// waits for it) and ends `service_time` later. Returns when it ends.
    fn admit(&self) -> u64 {
        let now = self.now();
        let mut free = self.free_at.lock().unwrap_or_else(|e| e.into_inner());
        let Reverse(first) = free.pop().unwrap_or(Reverse(0));
        let start = first.max(now);
        let slow = start < self.unsteady_until_ns && (start / 1_000_000_000) % 2 == 0;
        let done = start + if slow { 2 * self.service_ns } else { self.service_ns };
        free.push(Reverse(done));
        done
    }
}

/// One worker's operations in the simulated store, by completion time.
struct Simulated {
    sim: Arc<Sim>,
    pending: BinaryHeap<Reverse<(u64, u32, u64)>>,
}

impl Engine for Simulated {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.pending.push(Reverse((self.sim.admit(), req.slot, req.len as u64)));
        Ok(())
    }

    /// Completions whose time has come; waits (sleeping) for at least `min`
    /// of them, or until `timeout`.
    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let deadline = timeout.map(|t| self.sim.now() + t.as_nanos() as u64);
        let mut got = 0;
        loop {
            let now = self.sim.now();
            while let Some(Reverse((at, slot, len))) = self.pending.peek().copied() {
                if at > now {
                    break;
                }
                self.pending.pop();
                out.push(Completion::new(slot, Ok(len)));
                got += 1;
            }
            let Some(Reverse((next, ..))) = self.pending.peek().copied() else { return Ok(()) };
            if got >= min {
                return Ok(());
            }
            let wake = deadline.map_or(next, |d| d.min(next));
            if wake <= now && deadline.is_some_and(|d| d <= now) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_share_the_work_and_a_queue_forms_beyond_them() {
        let sim = Sim::new(Duration::from_millis(10), 2, Duration::ZERO);
        let ends: Vec<u64> = (0..4).map(|_| sim.admit()).collect();
        // Two start at once, the next two wait one service time.
        let ms = |ns: u64| (ns as f64 / 1e6).round() as u64;
        assert_eq!(ends.iter().map(|e| ms(*e)).collect::<Vec<_>>(), vec![10, 10, 20, 20]);
    }

    #[test]
    fn options_are_checked() {
        let opts = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<EngineOptions>();
        assert!(NullFactory.configure(&opts(&[("service_time", "100us"), ("servers", "4")])).is_ok());
        let e = NullFactory.configure(&opts(&[("servers", "4")])).err().unwrap().to_string();
        assert!(e.contains("service_time"), "{e}");
        assert!(NullFactory.configure(&opts(&[("service_time", "x")])).is_err());
    }
}
