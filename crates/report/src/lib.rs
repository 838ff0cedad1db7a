//! Renderers: each output format is a pure function of a [`RunResult`] in its
//! own module. Nothing here measures or runs anything.
//!
//! [`RunResult`]: storbench_runner::RunResult

pub mod csv;
pub mod fio_json;
pub mod fmt;
pub mod json;
pub mod text;
