//! `storbench show DIR`: any format again, from a results directory (or a
//! directory of them), without running anything.

use crate::cli::ShowArgs;
use crate::error::CliError;
use storbench_model::RunSet;

pub fn show(a: &ShowArgs) -> Result<i32, CliError> {
    let runs = RunSet::load(&a.dir).map_err(|e| CliError::usage(e.to_string()))?;
    let format = storbench_report::find(&a.format).ok_or_else(|| CliError::usage(format!("no format '{}'", a.format)))?;
    crate::output::to_stdout(format, &runs).map_err(|e| CliError::usage(e.to_string()))?;
    Ok(0)
}
