//! fio's token-based flow control between the jobs running together
//! (`flow`, `flow_id`, `flow_sleep`): the workers of one flow id share a
//! counter of operations issued and the sum of their weights; a worker whose
//! share of the counter is above its share of the weights holds back (after
//! its operations in flight complete, for `flow_sleep`), so jobs of weights
//! 8 and 1 issue about 8:1. The arithmetic is fio's (flow.c).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Without flow_sleep fio retries at once; storbench sleeps this long when
/// nothing is in flight (so the worker does not spin on a held flow: the
/// workers it waits for are threads of the same process and, under the
/// kernel's autogroup scheduling, of the same scheduling group, where fio's
/// jobs are processes of sessions of their own).
pub const RETRY_NS: u64 = 10_000;

/// The flows of one assignment (the jobs that run together).
#[derive(Default)]
pub struct Flows(Mutex<HashMap<u32, Arc<Group>>>);

/// One flow id's shared counts.
pub struct Group {
    issued: AtomicU64,
    weight: AtomicU64,
}

impl Flows {
    /// A worker of weight `weight` joins flow `id` (before any worker starts).
    pub fn join(&self, id: u32, weight: u32, sleep_ns: u64) -> Gate {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // fio starts the shared counter at 1.
        let group = map.entry(id).or_insert_with(|| Arc::new(Group { issued: AtomicU64::new(1), weight: AtomicU64::new(0) })).clone();
        group.weight.fetch_add(weight as u64, Ordering::Relaxed);
        Gate { group, weight: weight as f64, mine: 0, sleep_ns }
    }
}

/// One worker's place in its flow.
pub struct Gate {
    group: Arc<Group>,
    weight: f64,
    mine: u64,
    pub sleep_ns: u64,
}

impl Gate {
    /// True if the worker must hold back now; else the operation about to
    /// be issued is counted.
    #[inline]
    pub fn held(&mut self) -> bool {
        let issued = self.group.issued.load(Ordering::Relaxed) as f64;
        let weights = self.group.weight.load(Ordering::Relaxed) as f64;
        if self.mine as f64 / issued > self.weight / weights {
            return true;
        }
        self.group.issued.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_eight_and_one_issue_eight_to_one() {
        let flows = Flows::default();
        let (mut a, mut b) = (flows.join(0, 8, 0), flows.join(0, 1, 0));
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..9000 {
            na += !a.held() as u64;
            nb += !b.held() as u64;
        }
        let ratio = na as f64 / nb as f64;
        assert!((7.5..8.5).contains(&ratio), "{na}:{nb}");
    }

    #[test]
    fn flows_of_other_ids_do_not_hold_each_other() {
        let flows = Flows::default();
        let (mut a, mut b) = (flows.join(1, 1, 0), flows.join(2, 1, 0));
        assert!((0..100).all(|_| !a.held()));
        assert!(!b.held());
    }
}
