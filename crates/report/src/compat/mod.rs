//! The outputs of the tools storbench stands in for, rendered from results:
//! `rados bench`, `rbd bench`, swift-bench and an ssbench users ramp. Each is
//! a pure function of a run (or a set of runs) and the parameters the
//! command recorded in it, so `storbench show DIR --format rados-bench`
//! prints exactly what the command printed.

pub mod rados_bench;
pub mod rbd_bench;
pub mod ssbench;
pub mod swift_bench;

use crate::fmt;
use storbench_metrics::LatencySummary;
use storbench_model::RunResult;

/// "min 1.2ms  avg ...  max ..." for one latency summary.
pub fn percentiles(l: &LatencySummary) -> String {
    let cells = fmt::latency_cells(l);
    let parts: Vec<String> = fmt::LATENCY_COLUMNS.iter().zip(cells).map(|(c, v)| format!("{c} {v}")).collect();
    parts.join("  ")
}

/// A command's parameters as a run records them.
pub fn parameters<const N: usize>(pairs: [(&str, String); N]) -> std::collections::BTreeMap<String, String> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A parameter the command recorded, parsed; 0 (or empty) if missing.
fn num(r: &RunResult, name: &str) -> u64 {
    r.parameter(name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Why a run cannot be shown in a tool's format, and the formats of any run.
fn not_from(tool: &str) -> std::io::Error {
    let any: Vec<&str> = crate::EXPORTERS.iter().filter(|e| e.stdout_name().is_some()).map(|e| e.name()).collect();
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("this run was not made by `storbench {tool}`; show it as {}", any.join(", ")),
    )
}
