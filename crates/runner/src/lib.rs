//! The runner: turns job specs into a plan, runs it, and returns plain results.
//!
//! [`plan`] validates every job and configures its engine (nothing is touched);
//! [`prepare`] creates and checks the targets and resolves each job into the
//! share its workers receive ([`JobShare`], plain data). A run is a
//! [`coordinator`] talking to agents over the versioned run protocol
//! (`storbench_model::protocol`); locally there is one in-process agent
//! ([`agent`]) whose workers each own a workload generator, an engine and an
//! interval recorder, and hand over one [`IntervalReport`] per second. The
//! coordinator merges them into per-second series and totals and judges the
//! measurement ([`warnings`]); each agent samples its host once a second
//! ([`telemetry`]). The runner never branches on an engine's name
//! and knows nothing about output formats.
//!
//! [`IntervalReport`]: storbench_metrics::IntervalReport
//! [`JobShare`]: storbench_model::protocol::JobShare

pub mod agent;
pub mod buffers;
pub mod burn;
pub mod clock;
pub mod coordinator;
pub mod disruption;
pub mod exec;
pub mod fill;
pub mod flow;
pub mod interrupt;
pub mod iolog;
pub mod journal;
mod kinds;
pub mod min_rate;
pub mod netem;
pub mod placement;
pub mod plan;
pub mod prepare;
pub mod problem;
pub mod procs;
pub mod replay;
pub mod room;
pub mod steady;
pub mod telemetry;
pub mod unit_log;
pub mod verify;
pub mod volumes;
pub mod warnings;
pub mod worker;

pub use coordinator::{handshake, hostname, local_agent, op_results, run_plan, run_plan_on, Observer, Progress, Silent};
pub use plan::{build_plan, check_link, LinkCaps, Plan, PlanError};
pub use prepare::{Cleaned, PrepareFailed, Prepared, ReadyJob};
