//! One trait for every output format. A format is one type implementing
//! [`Exporter`] in its own module, plus one line in [`EXPORTERS`]; the CLI's
//! `--output-format`, `storbench show --format` and the files of every results
//! directory all come from this list.

use std::io::{self, Write};
use storbench_model::{RunResult, RunSet};

pub trait Exporter: Sync {
    /// The name `--output-format` and `show --format` take.
    fn name(&self) -> &'static str;
    /// One line for help.
    fn describe(&self) -> &'static str;
    /// The file every results directory has in this format, if any.
    fn file_name(&self) -> Option<&'static str> {
        None
    }
    /// Render the runs (most formats: each run in turn).
    fn write(&self, runs: &RunSet, out: &mut dyn Write) -> io::Result<()>;
}

/// Every format storbench writes.
pub static EXPORTERS: &[&dyn Exporter] = &[
    &crate::text::Text,
    &crate::json::Json,
    &crate::fio_json::FioJson,
    &crate::fio_json::FioJsonPlus,
    &crate::fio_terse::FioTerse,
    &crate::fio_normal::FioNormal,
    &crate::csv::Csv,
    &crate::compat::rados_bench::RadosBench,
    &crate::compat::rbd_bench::RbdBench,
    &crate::compat::swift_bench::SwiftBench,
    &crate::compat::ssbench::SsbenchRamp,
];

/// The format called `name` ("normal" is the text summary's old name).
pub fn find(name: &str) -> Option<&'static dyn Exporter> {
    let name = match name {
        "normal" => "text",
        "fio_json" | "fiojson" => "fio-json",
        n => n,
    };
    EXPORTERS.iter().copied().find(|e| e.name() == name)
}

/// The names of every format, for messages.
pub fn names() -> Vec<&'static str> {
    EXPORTERS.iter().map(|e| e.name()).collect()
}

/// Render each run of the set with `f`, in order.
pub fn each(runs: &RunSet, out: &mut dyn Write, f: impl Fn(&RunResult, &mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    runs.results().try_for_each(|r| f(r, out))
}
