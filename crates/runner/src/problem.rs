//! A check's or a call's failure that is no engine's, in words, sorted by
//! whose fault it is: the verify tables' and a trace's, which a plan and a
//! worker both meet and classify the same way.

use crate::plan::PlanError;
use crate::worker::WorkerError;
use storbench_model::Fault;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Problem {
    /// The input cannot be used as given: the words say what to change.
    #[error("{0}")]
    Input(String),
    /// A call on this machine failed (a directory, a file, a mapping).
    #[error("{0}")]
    System(String),
}

impl Problem {
    pub fn fault(&self) -> Fault {
        match self {
            Problem::Input(_) => Fault::Input,
            Problem::System(_) => Fault::System,
        }
    }

    /// The job's plan error, of the same kind.
    pub fn for_job(self, job: &str) -> PlanError {
        match self {
            Problem::Input(message) => PlanError::Input { job: job.into(), message },
            Problem::System(message) => PlanError::System { job: job.into(), message },
        }
    }
}

impl From<Problem> for WorkerError {
    fn from(p: Problem) -> WorkerError {
        match p {
            Problem::Input(m) => WorkerError::Input(m),
            Problem::System(m) => WorkerError::System(m),
        }
    }
}
