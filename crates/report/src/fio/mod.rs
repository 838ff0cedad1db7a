//! Shared by the fio-compatible outputs (`fio-json`, `fio-json+`,
//! `fio-terse`, `fio-normal`): fio 3.33's numbers computed from storbench's
//! results ([`stats`]), fio's latency buckets ([`plat`]), its number and time
//! formatting ([`num`]) and its JSON layout ([`writer`]).
//!
//! What no storbench result holds, every fio format gets as fio prints it for
//! "nothing": `disk_util` (no device counters are sampled), `ctx`, `majf` and
//! `minf` (0; only CPU time is kept), `slat` (storbench has no separate
//! submission step: N=0, as fio shows for sync engines), the pid (0), trim
//! (empty) and `job options` beyond what the normalised job spec says.

pub mod num;
pub mod plat;
#[cfg(test)]
pub mod sample;
pub mod stats;
pub mod writer;
