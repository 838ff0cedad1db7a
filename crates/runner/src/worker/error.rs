//! Why a worker ended early, kept typed (an engine's error stays an
//! `EngineError`) until [`Worker::done`](super::Worker) puts it into words
//! for `WorkerDone`, with whose fault it was and the stage it came in.

use storbench_engine::files::TargetError;
use storbench_engine::EngineError;
use storbench_model::protocol::{Failure, Stage};
use storbench_model::Fault;

/// A worker's failure, by kind.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Its engine failed (opening, queueing, reaping).
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// One of its files could not be opened or its cache dropped.
    #[error("{0}")]
    Target(#[from] TargetError),
    /// A call on this machine failed (memory, a log file, an fsync, the
    /// I/O priority): the words name the call.
    #[error("{0}")]
    System(String),
    /// The job cannot run as given here (a verify table that does not fit
    /// this job, a trace that changed, a share it cannot have).
    #[error("{0}")]
    Input(String),
    /// The storage failed what the worker asked outside its measured
    /// phase, fell below the job's `rate_min`, or gave back wrong data.
    #[error("{0}")]
    Storage(String),
    /// A failure, and a later one on the way out (a log that could not be
    /// written, a cleanup that failed too): the first's kind is the whole's.
    #[error("{0}; {1}")]
    Both(Box<WorkerError>, Box<WorkerError>),
}

impl WorkerError {
    pub fn fault(&self) -> Fault {
        match self {
            WorkerError::Engine(e) => e.fault(),
            WorkerError::Target(e) => e.fault(),
            WorkerError::System(_) => Fault::System,
            WorkerError::Input(_) => Fault::Input,
            WorkerError::Storage(_) => Fault::Storage,
            WorkerError::Both(first, _) => first.fault(),
        }
    }

    /// This failure, and `later` after it.
    pub fn and(self, later: WorkerError) -> WorkerError {
        WorkerError::Both(Box::new(self), Box::new(later))
    }

    /// In the stage it came in.
    pub fn in_stage(self, stage: Stage) -> Failed {
        Failed { stage, error: self }
    }
}

/// A worker's failure and the stage it came in.
#[derive(Debug)]
pub struct Failed {
    pub stage: Stage,
    pub error: WorkerError,
}

impl Failed {
    /// A later failure (in a later stage) added to this one's words; this
    /// one's stage and kind stay.
    pub fn and(self, later: WorkerError) -> Failed {
        Failed { stage: self.stage, error: self.error.and(later) }
    }

    /// The words and kind `WorkerDone` carries.
    pub fn reported(&self) -> (String, Failure) {
        (self.error.to_string(), Failure { fault: self.error.fault(), stage: Some(self.stage) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_keeps_its_first_kind_and_stage_and_every_word() {
        let engine = WorkerError::Engine(EngineError::Unreachable { engine: "s3", message: "connect: refused".into(), source: None });
        let f = engine.in_stage(Stage::Prefill).and(WorkerError::Storage("cleanup of 3 objects: 3 deletes failed".into()));
        let (words, failure) = f.reported();
        assert_eq!(words, "s3: connect: refused; cleanup of 3 objects: 3 deletes failed");
        assert_eq!(failure, Failure { fault: Fault::Storage, stage: Some(Stage::Prefill) });
        assert!(
            matches!(f.error, WorkerError::Both(first, _) if matches!(*first, WorkerError::Engine(_))),
            "the engine's error kept whole"
        );
    }
}
