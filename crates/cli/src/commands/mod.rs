//! Commands of storbench's own (the compatibility tools are in `compat`).

pub mod baseline;
pub mod checkpoint;
pub mod cleanup;
pub mod compare;
pub mod efficiency;
pub mod export;
pub mod help;
pub mod kv_search;
pub mod preset;
pub mod ramp;
pub mod replay;
pub mod report;
pub mod rules;
pub mod rules_options;
pub mod rules_search;
pub mod run;
pub mod show;
pub mod slo;
pub mod study;
pub mod sweep;
