//! An ssbench users ramp: the scenario run with more and more users until
//! throughput fell, one run per step, summed up in a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use storbench_model::{RunResult, RunSet};

/// What one step of a ramp records in its run.
pub fn parameters(scenario: &str, users: u32, step: usize) -> BTreeMap<String, String> {
    super::parameters([
        ("tool", "ssbench".to_string()),
        ("scenario", scenario.to_string()),
        ("users", users.to_string()),
        ("step", step.to_string()),
    ])
}

/// Operations per second of a step, all jobs (size classes) together.
pub fn ops_per_sec(r: &RunResult) -> f64 {
    r.jobs.iter().flat_map(|j| j.ops.iter()).map(|o| o.iops).sum()
}

/// The ramp table.
pub fn render(runs: &RunSet) -> Option<String> {
    let steps: Vec<(&RunResult, u32)> = runs.results().map(|r| Some((r, r.parameter("users")?.parse().ok()?))).collect::<Option<_>>()?;
    let name = steps.first()?.0.parameter("scenario").unwrap_or_default();
    let mut out = format!("\nssbench ramp '{name}':\n  users     ops/s\n");
    let best = steps.iter().map(|(r, _)| ops_per_sec(r)).fold(0.0, f64::max);
    for (r, users) in &steps {
        let ops = ops_per_sec(r);
        let _ = writeln!(out, "  {users:>5} {ops:>9.1}{}", if ops == best { "  <- peak" } else { "" });
    }
    Some(out)
}

pub struct SsbenchRamp;

impl crate::Exporter for SsbenchRamp {
    fn name(&self) -> &'static str {
        "ssbench-ramp"
    }
    fn describe(&self) -> &'static str {
        "the users ramp of an ssbench scenario (the directory of storbench run --ssbench --users)"
    }
    fn write(&self, runs: &RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(runs).ok_or_else(|| super::not_from("run --ssbench --users"))?.as_bytes())
    }
}
