//! Why a plan could not be built or prepared, as a kind that keeps its
//! source and says whose fault it is.

use storbench_engine::files::TargetError;
use storbench_engine::EngineError;
use storbench_model::Fault;

/// Why a plan could not be built or prepared: which job, and the error as
/// it came (an engine's or a target's keeps its type, as `source()`).
/// Whose fault it is comes from the kind ([`PlanError::fault`]), which the
/// exit code is read from.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The job cannot run as given: what is wrong and how to fix it.
    #[error("job '{}': {message}", shown(.job))]
    Input { job: String, message: String },
    /// The job's engine refused or failed (its options, its target, the
    /// room or capacity of its store).
    #[error("job '{}': {source}", shown(.job))]
    Engine { job: String, source: EngineError },
    /// One of the job's files or devices could not be prepared.
    #[error("job '{}': {source}", shown(.job))]
    Target { job: String, source: TargetError },
    /// The system failed, not the input (an agent answering out of step).
    #[error("job '{}': {message}", shown(.job))]
    System { job: String, message: String },
}

impl PlanError {
    /// The job it is about ("-" for none).
    pub fn job(&self) -> &str {
        match self {
            PlanError::Input { job, .. }
            | PlanError::Engine { job, .. }
            | PlanError::Target { job, .. }
            | PlanError::System { job, .. } => job,
        }
    }

    /// What is wrong, without the job's name.
    pub fn message(&self) -> String {
        match self {
            PlanError::Input { message, .. } | PlanError::System { message, .. } => message.clone(),
            PlanError::Engine { source, .. } => source.to_string(),
            PlanError::Target { source, .. } => source.to_string(),
        }
    }

    /// Whose fault it is: the input's (the job as given, its engine's
    /// options, a target refused), the storage's, the system's, or a stop.
    pub fn fault(&self) -> Fault {
        match self {
            PlanError::Input { .. } => Fault::Input,
            PlanError::Engine { source, .. } => source.fault(),
            PlanError::Target { source, .. } => source.fault(),
            PlanError::System { .. } => Fault::System,
        }
    }

    /// A job's engine error, kept whole.
    pub fn engine(job: &str, source: EngineError) -> PlanError {
        PlanError::Engine { job: job.into(), source }
    }
}

fn shown(job: &str) -> std::borrow::Cow<'_, str> {
    storbench_workload::shown(job)
}
