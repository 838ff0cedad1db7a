//! What a worker's share of a replayed trace came to: how many operations it
//! issued, how many landed elsewhere than recorded, and how late each was
//! issued against its recorded time (the replay's own fidelity, apart from
//! the storage's latency).

use crate::hist::LatencyHistogram;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReplayTally {
    pub issued: u64,
    /// Offsets wrapped into a target smaller than the trace's.
    pub remapped: u64,
    /// Records not issued (the run was stopped or cut by runtime).
    pub left: u64,
    /// Issue time minus recorded time (scaled), per operation.
    #[serde(with = "crate::hist::wire")]
    pub lag: LatencyHistogram,
}

impl ReplayTally {
    pub fn merge(&mut self, o: &ReplayTally) {
        self.issued += o.issued;
        self.remapped += o.remapped;
        self.left += o.left;
        self.lag.add(&o.lag);
    }
}
