//! The runner: turns job specs into a plan, runs it, and returns plain results.
//!
//! A run is a coordinator talking to agents. Locally there is one in-process
//! agent ([`agent::LocalAgent`]) whose workers each own a workload generator, an
//! engine and an interval recorder, and hand over one [`IntervalReport`] per
//! second; the coordinator merges them into per-second series and totals. A
//! remote agent would send the same messages over a transport. The runner never
//! branches on an engine's name and knows nothing about output formats.
//!
//! [`IntervalReport`]: storbench_metrics::IntervalReport

pub mod agent;
pub mod buffers;
pub mod clock;
pub mod coordinator;
pub mod plan;
pub mod result;
pub mod stop;
pub mod warnings;
pub mod worker;

pub use coordinator::{run_plan, Observer, Progress, Silent};
pub use plan::{build_plan, prepare_targets, Plan, PlanError};
pub use result::*;
pub use warnings::Warning;
