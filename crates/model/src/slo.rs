//! An SLO search's index (`slo.json`): the bound, every probe (a fixed-rate
//! run) with what it achieved, and the answer. Written when the search
//! starts and after every probe, so a search that is killed can be resumed
//! from it (`slo --resume DIR`) and read as far as it went.

use serde::{Deserialize, Serialize};
use std::path::Path;

pub const SLO_VERSION: u32 = 1;
pub const SLO_FILE: &str = "slo.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The rate asked for (operations per second over all workers of each
    /// job); none for the closed-loop probe that measures capacity.
    pub rate: Option<f64>,
    /// The queue depth, for the closed-loop search over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth: Option<u32>,
    /// Its results directory, relative to the search's.
    pub dir: String,
    pub achieved_iops: f64,
    /// The chosen percentile of latency from each operation's intended start.
    pub value_ns: u64,
    /// Operations the percentile was taken over.
    pub samples: u64,
    pub seconds: f64,
    /// Met the bound (and kept up with the rate).
    pub pass: bool,
    /// Why it failed, or what it took to judge it (a longer run).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// A run of several groups (one after another, so their rates are never
    /// added): the group `achieved_iops` is the figure of, the one that
    /// kept up least per job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<ProbeGroup>,
}

/// The group a probe's figure is of, and how many jobs ran in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeGroup {
    /// `group 2 (randread, randwrite)`.
    pub label: String,
    pub jobs: u32,
    /// Groups in the run.
    pub of: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SloIndex {
    pub version: u32,
    /// The command line that made it (secret values replaced), for resuming;
    /// empty in an index of an older storbench.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The percentile judged (99 for p99) and its bound; 0 with `mean`.
    pub percentile: f64,
    pub bound_ns: u64,
    /// The bound is on mean latency (the SDS report's "rate at a latency
    /// bound"), not a percentile: a store whose median passes can fail it
    /// on a long tail.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mean: bool,
    pub probes: Vec<Probe>,
    /// The highest rate that met the bound (closed loop: the IOPS at the
    /// deepest queue that did).
    pub answer: Option<f64>,
    /// Closed loop: the deepest queue that met the bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_iodepth: Option<u32>,
    /// The answer held when probed again (a rate at the knee of a real
    /// device can pass once and fail the next time).
    #[serde(default)]
    pub confirmed: bool,
    /// The search varied the queue depth (closed loop) instead of the rate.
    #[serde(default)]
    pub closed_loop: bool,
    /// A fleet's search (`--agents`): how many agents. Rates and the answer
    /// are the fleet's; each agent's share is the answer over this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<u32>,
    /// Set when the search ended early (Ctrl-C, a failed probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// `--stop-if` ceilings on the hosts a passing probe stayed under
    /// (`cpu>80%`): the answer is the most the store gave within them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_if: Vec<String>,
}

impl SloIndex {
    /// The figure judged, as tables and charts name it: `p99`, `mean`.
    pub fn statistic(&self) -> String {
        if self.mean {
            "mean".into()
        } else {
            format!("p{}", self.percentile)
        }
    }

    /// The judged figure of a probe's latencies.
    pub fn value_of(&self, all: &storbench_metrics::LatencyHistogram) -> u64 {
        if self.mean {
            all.mean().round() as u64
        } else {
            all.percentile(self.percentile)
        }
    }

    /// `DIR/slo.json`; the error says which file and why.
    pub fn load(dir: &Path) -> Result<SloIndex, String> {
        let path = dir.join(SLO_FILE);
        let limit = storbench_workload::input::RESULTS_LIMIT;
        let text = storbench_workload::input::read_text(&path, "results file", limit)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{} is not an SLO index: {e}", path.display()))
    }

    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(format!("{SLO_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_string_pretty(self).expect("the index serializes") + "\n")?;
        std::fs::rename(&tmp, dir.join(SLO_FILE))
    }
}

impl SloIndex {
    /// `, 1,399 per agent (2 agents)` beside a fleet's figure; empty on one machine.
    pub fn per_agent(&self, fleet_iops: f64, count: impl Fn(f64) -> String) -> String {
        match self.agents {
            Some(n) if n > 1 => format!(" over {n} agents ({} per agent)", count(fleet_iops / n as f64)),
            _ => String::new(),
        }
    }
}
