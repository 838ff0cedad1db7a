//! A worker's kind section: what its generator tallied (the workload's
//! [`Tally`]) with what the worker measured about it, sent once at its end
//! and merged per job (the job's result section is built from that).

use crate::hist::LatencyHistogram;
use crate::replay::ReplayTally;
use serde::{Deserialize, Serialize};
use storbench_workload::kinds::Tally;
use storbench_workload::kvcache::KvTally;
use storbench_workload::train::TrainTally;
use storbench_workload::vectordb::VdbTally;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KindTally {
    /// How its share of a replayed trace went.
    Replay(ReplayTally),
    /// What its accelerator did.
    Train(TrainTally),
    /// What its users asked and its tiers held, and its requests'
    /// latencies as a histogram (not each one's, as the tally keeps them).
    KvCache { tally: KvTally, latency: LatencyHistogram },
    /// What its requests did, and their latencies as a histogram.
    VectorDb { tally: VdbTally, latency: LatencyHistogram },
}

impl KindTally {
    /// The section of a generator's `tally`, with `lag`, how late the
    /// worker issued each operation against the generator's schedule.
    pub fn of(tally: Tally, lag: Option<&LatencyHistogram>) -> KindTally {
        match tally {
            Tally::Replay(c) => {
                let lag = lag.cloned().unwrap_or_default();
                KindTally::Replay(ReplayTally { issued: c.issued, remapped: c.remapped, left: c.left, lag })
            }
            Tally::Train(t) => KindTally::Train(t),
            Tally::KvCache(mut tally) => {
                let latency = histogram(std::mem::take(&mut tally.latencies_ns));
                KindTally::KvCache { tally, latency }
            }
            Tally::VectorDb(mut tally) => {
                let latency = histogram(std::mem::take(&mut tally.latencies_ns));
                KindTally::VectorDb { tally, latency }
            }
        }
    }

    pub fn kvcache(&self) -> Option<(&KvTally, &LatencyHistogram)> {
        match self {
            KindTally::KvCache { tally, latency } => Some((tally, latency)),
            _ => None,
        }
    }

    pub fn vectordb(&self) -> Option<(&VdbTally, &LatencyHistogram)> {
        match self {
            KindTally::VectorDb { tally, latency } => Some((tally, latency)),
            _ => None,
        }
    }

    pub fn replay(&self) -> Option<&ReplayTally> {
        match self {
            KindTally::Replay(t) => Some(t),
            _ => None,
        }
    }

    pub fn train(&self) -> Option<&TrainTally> {
        match self {
            KindTally::Train(t) => Some(t),
            _ => None,
        }
    }
}

/// Latencies a worker kept one by one, as one histogram to send.
fn histogram(ns: Vec<u64>) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for n in ns {
        h.record(n);
    }
    h
}
