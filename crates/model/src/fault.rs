//! Whose fault a failure is: the kind every error from planning to a
//! worker's end is sorted into, and the one thing an exit code is read from.
//!
//! Errors keep their own types and sources (an engine's error stays an
//! `EngineError`); each says its [`Fault`], so no call site decides by a
//! flag whether a failure was the user's, and the CLI maps kinds to exit
//! codes in one place. It travels in [`crate::protocol::WorkerDone`], so it
//! is plain serde data.

use serde::{Deserialize, Serialize};

/// Whose fault a failure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fault {
    /// The input cannot run as given (an option, a file, a target refused
    /// for its data's safety): the message says what to change.
    Input,
    /// The storage could not be reached or said no (a connection, a
    /// status, a missing pool), or failed operations it was given.
    Storage,
    /// A call on this machine failed (a file, memory, a thread), or
    /// storbench itself did (a bug, an agent out of step).
    System,
    /// A Ctrl-C (or SIGTERM, or the coordinator aborting) stopped it.
    Interrupted,
}
