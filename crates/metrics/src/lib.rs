//! Measurement: latency histograms, per-interval reports, error tallies, CPU time.
//!
//! Workers record into an [`IntervalReport`] they own and hand it over once per
//! interval; the coordinator folds reports into totals of [`OpStats`]. Reports carry
//! histograms, never percentiles, and serialize (histograms as base64 HdrHistogram
//! V2+deflate) so that a remote agent only has to add a transport. Failures are
//! counted by a backend-independent kind and the storage's own detail
//! ([`errors`]). This crate knows nothing of engines, targets or report formats.

pub mod cpu;
pub mod errors;
pub mod hist;
pub mod interval;
pub mod kinds;
pub mod plat;
pub mod replay;
pub mod summary;
pub mod verify;

pub use cpu::CpuTimes;
pub use errors::{Detail, ErrorKind, ErrorTally, IoFailure};
pub use hist::LatencyHistogram;
pub use interval::{IntervalReport, LogSample, OpStats};
pub use kinds::KindTally;
pub use plat::{HistSample, PlatWindow};
pub use replay::ReplayTally;
pub use summary::{LatencySummary, STANDARD_PERCENTILES};
pub use verify::{VerifyFailure, VerifyKind, VerifyTally};
