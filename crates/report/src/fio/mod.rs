//! Shared by the fio-compatible outputs (`fio-json`, `fio-json+`,
//! `fio-terse`, `fio-normal`): fio 3.33's numbers computed from storbench's
//! results ([`stats`]), fio's latency buckets ([`plat`]), its number and time
//! formatting ([`num`]) and its JSON layout ([`writer`]).
//!
//! The run's block devices (`RunResult::disk_util`, fio's `disk_util`) are
//! printed as fio prints them: the JSON array, the terse fields after each job
//! and the normal output's "Disk stats" lines; a run without them has none, as
//! fio when it finds no disk.
//!
//! What no storbench result holds, every fio format gets as fio prints it for
//! "nothing": `ctx`, `majf` and `minf` (0; only CPU time is kept), `slat`
//! (storbench has no separate submission step: N=0, as fio shows for sync
//! engines), the pid (0), trim (empty unless the job trims), disk slaves (no `aggr_*` fields) and
//! `job options` beyond what the normalised job spec says.

pub mod entries;
pub mod num;
pub mod plat;
#[cfg(any(test, feature = "testing"))]
pub mod sample;
pub mod stats;
pub mod writer;
