//! swift-bench's output: one FINAL line per phase (PUT, GET, DELETE), in its
//! words, and the latency percentiles swift-bench lacks.

use super::percentiles;
use std::collections::BTreeMap;
use storbench_model::{RunResult, RunSet};
use storbench_workload::OpKind;

/// The phases, in order: (name, swift-bench's label, operation).
pub const PHASES: [(&str, &str, OpKind); 3] =
    [("put", "PUTS", OpKind::Create), ("get", "GETS", OpKind::Read), ("delete", "DEL", OpKind::Delete)];

/// What a phase records in its run: the tool, the phase and its place in
/// the set (so a results directory lists them in order).
pub fn parameters(phase: &str) -> BTreeMap<String, String> {
    let step = PHASES.iter().position(|p| p.0 == phase).unwrap_or(0);
    super::parameters([("tool", "swift-bench".to_string()), ("phase", phase.to_string()), ("step", step.to_string())])
}

/// A phase's lines: the FINAL line and the percentiles.
pub fn render(r: &RunResult) -> Option<String> {
    if r.parameter("tool") != Some("swift-bench") {
        return None;
    }
    let (_, label, op) = PHASES.iter().find(|p| Some(p.0) == r.parameter("phase"))?;
    let Some(j) = r.jobs.first() else { return Some(String::new()) };
    let Some(o) = j.op(*op) else {
        return Some(format!("{label} **FINAL** no operation completed\n"));
    };
    let failures: u64 = o.errors.values().sum();
    let secs = j.runtime_ns as f64 / 1e9;
    Some(format!(
        "{} {label} **FINAL** [{failures} failures], {:.1}/s\n  {label} latency: {}\n",
        o.ios + failures,
        o.ios as f64 / secs.max(1e-9),
        percentiles(&o.latency)
    ))
}

pub struct SwiftBench;

impl crate::Exporter for SwiftBench {
    fn name(&self) -> &'static str {
        "swift-bench"
    }
    fn describe(&self) -> &'static str {
        "swift-bench's FINAL lines (the phase directories of storbench swift-bench)"
    }
    fn write(&self, runs: &RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::each(runs, out, |r, out| out.write_all(render(r).ok_or_else(|| super::not_from("swift-bench"))?.as_bytes()))
    }
}
