//! Renderers: each output format is a pure function of results in its own
//! module, behind one [`Exporter`] trait. They depend on the model only (no
//! runner, no engine), so every report can be rendered again from a results
//! directory (`storbench show`). Nothing here measures or runs anything.
//!
//! The compatibility tools' own outputs (`rados bench`, `rbd bench`,
//! swift-bench, an ssbench ramp) are renderers too, in [`compat`].

pub mod compare;
pub mod compat;
pub mod csv;
pub mod efficiency;
mod export;
mod fio;
pub mod fio_json;
pub mod fio_logs;
pub mod fio_normal;
pub mod fio_terse;
pub mod fmt;
pub mod hosts;
pub mod json;
pub mod text;
pub mod tidy;
pub mod timeline;

pub use export::{each, find, find_fio, find_stdout, fio_names, names, stdout_names, Exporter, EXPORTERS};
/// Results with known figures, for tests (feature `testing`).
#[cfg(any(test, feature = "testing"))]
pub use fio::sample;
