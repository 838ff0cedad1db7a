//! `storbench show DIR`: any format again, from a results directory (or a
//! directory of them), without running anything. A sweep's series as CSV
//! carries each point's swept values in front of its rows (`storbench
//! export` is the table of one row per point).

use crate::cli::ShowArgs;
use crate::error::CliError;
use storbench_model::sweep::{SweepIndex, INDEX_FILE};
use storbench_model::RunSet;

pub fn show(a: &ShowArgs) -> Result<i32, CliError> {
    let runs = RunSet::load(&a.dir).map_err(|e| CliError::usage(e.to_string()))?;
    let format = storbench_report::find(&a.format).ok_or_else(|| CliError::usage(format!("no format '{}'", a.format)))?;
    if format.name() == "csv" && a.dir.join(INDEX_FILE).is_file() {
        let index = SweepIndex::load(&a.dir).map_err(|e| CliError::usage(e.to_string()))?;
        let options: Vec<String> = index.dims.iter().map(|d| d.option.clone()).collect();
        return swept_csv(&runs, &options);
    }
    match crate::output::to_stdout(format, &runs) {
        // A format that cannot show these runs says so: the input's fault.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return Err(CliError::usage(e.to_string())),
        // Standard output that cannot be written is main's exit 3.
        written => crate::streams::checked(crate::streams::Stream::Stdout, written),
    }
    Ok(0)
}

fn swept_csv(runs: &RunSet, options: &[String]) -> Result<i32, CliError> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    crate::streams::checked(
        crate::streams::Stream::Stdout,
        storbench_report::csv::write_swept(runs, options, &mut out).and_then(|_| out.flush()),
    );
    Ok(0)
}
