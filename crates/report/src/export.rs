//! One trait for every output format. A format is one type implementing
//! [`Exporter`] in its own module, plus one line in [`EXPORTERS`]; the CLI's
//! `--output-format` (the formats that may go to standard output), `storbench
//! show --format`, the fio drop-in's `--output-format` (fio's names) and the
//! files of every results directory all come from this list and what each
//! exporter declares.

use std::io::{self, Write};
use storbench_model::{RunResult, RunSet};

pub trait Exporter: Sync {
    /// The name `--output-format` and `show --format` take.
    fn name(&self) -> &'static str;
    /// Other names they take for it.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// The name (or alias) a run's `--output-format` lists it by, if a run may print it
    /// on standard output: formats of any run (the text summary is
    /// `normal` there, fio's word for it, and the default). The
    /// compatibility tools' outputs render their own commands' runs, which
    /// print them themselves.
    fn stdout_name(&self) -> Option<&'static str> {
        None
    }
    /// fio's `--output-format` names for it (the drop-in's), if fio has it.
    fn fio_names(&self) -> &'static [&'static str] {
        &[]
    }
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
    &crate::hosts::HostsCsv,
    &crate::compat::rados_bench::RadosBench,
    &crate::compat::rbd_bench::RbdBench,
    &crate::compat::swift_bench::SwiftBench,
    &crate::compat::ssbench::SsbenchRamp,
];

/// The format called `name` or one of its aliases, with dashes or
/// underscores (`fio_json` is `fio-json`).
pub fn find(name: &str) -> Option<&'static dyn Exporter> {
    let name = name.replace('_', "-");
    EXPORTERS.iter().copied().find(|e| e.name() == name || e.aliases().contains(&name.as_str()))
}

/// The format fio's `--output-format` calls `name`.
pub fn find_fio(name: &str) -> Option<&'static dyn Exporter> {
    EXPORTERS.iter().copied().find(|e| e.fio_names().contains(&name))
}

/// The names of every format, for messages.
pub fn names() -> Vec<&'static str> {
    EXPORTERS.iter().map(|e| e.name()).collect()
}

/// The format a run's `--output-format` calls `name` (dashes or underscores).
pub fn find_stdout(name: &str) -> Option<&'static dyn Exporter> {
    find(name).filter(|e| e.stdout_name().is_some())
}

/// The names of the formats a run may print on standard output.
pub fn stdout_names() -> Vec<&'static str> {
    EXPORTERS.iter().filter_map(|e| e.stdout_name()).collect()
}

/// fio's names for its formats, each format's first, for messages.
pub fn fio_names() -> Vec<&'static str> {
    EXPORTERS.iter().filter_map(|e| e.fio_names().first().copied()).collect()
}

/// Render each run of the set with `f`, in order.
pub fn each(runs: &RunSet, out: &mut dyn Write, f: impl Fn(&RunResult, &mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    runs.results().try_for_each(|r| f(r, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name, alias and fio name means one format, and the finders give it.
    #[test]
    fn every_name_means_one_format_and_find_gives_it() {
        let (mut seen, mut fio_seen) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
        for e in EXPORTERS {
            for n in std::iter::once(e.name()).chain(e.aliases().iter().copied()) {
                assert!(!n.contains('_'), "{n}: find reads underscores as dashes");
                assert_eq!(seen.insert(n, e.name()), None, "'{n}' names two formats");
                assert_eq!(find(n).map(|f| f.name()), Some(e.name()));
                assert_eq!(find(&n.replace('-', "_")).map(|f| f.name()), Some(e.name()));
            }
            if let Some(n) = e.stdout_name() {
                assert_eq!(find_stdout(n).map(|f| f.name()), Some(e.name()), "--output-format {n}");
                assert_eq!(find(n).map(|f| f.name()), Some(e.name()), "show --format {n}");
            }
            for n in e.fio_names() {
                assert_eq!(fio_seen.insert(*n, e.name()), None, "fio's '{n}' names two formats");
                assert_eq!(find_fio(n).map(|f| f.name()), Some(e.name()), "fio's {n}");
            }
        }
        assert!(find("xml").is_none() && find_fio("fio-json").is_none());
    }
}
