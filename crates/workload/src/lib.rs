//! The workload model: what to do next, and nothing about storage.
//!
//! A [`JobSpec`] is the normalised description of one job (pattern, sizes, mix,
//! distribution, rate, data), built from TOML, CLI flags or fio job files through
//! the one option table in [`options`]. An [`IoGen`] turns a spec into a stream of
//! operations for one worker. This crate must not know how an operation is
//! carried out (engines) or how it is measured and reported.

pub mod bits;
pub mod blockmap;
pub mod burn;
pub mod data;
pub mod dist;
pub mod exec;
pub mod gen;
pub mod input;
pub mod kind;
pub mod kinds;
pub mod kvcache;
pub mod objects;
pub mod options;
pub mod placement;
pub mod prio;
pub mod rate;
pub mod rng;
pub mod spec;
pub mod steady;
pub mod trace;
pub mod train;
pub mod units;
pub mod vectordb;
pub mod verify;

pub use gen::{IoGen, NextIo};
pub use kind::JobKind;
pub use objects::{Naming, ObjGen, ObjectNames, ObjectSizes, ObjectSpec, Settled};
pub use options::{apply_option, OptionError};
pub use spec::*;
