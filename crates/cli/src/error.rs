//! The CLI's one error type and its exit codes.

/// Exit codes: 0 ok, 1 I/O errors or failed workers, 2 bad input,
/// 3 the system failed before the run, 130 interrupted (results still written).
pub const EXIT_IO_ERRORS: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_SYSTEM: i32 = 3;
pub const EXIT_INTERRUPTED: i32 = 130;

use storbench_model::Fault;

#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_USAGE }
    }
    pub fn system(message: impl Into<String>) -> CliError {
        CliError { message: message.into(), code: EXIT_SYSTEM }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<storbench_runner::PrepareFailed> for CliError {
    fn from(e: storbench_runner::PrepareFailed) -> Self {
        for w in &e.leftovers {
            say!("storbench: warning: {w}");
        }
        if e.interrupted {
            return CliError {
                code: EXIT_INTERRUPTED,
                message: format!("{}: nothing was measured, and any file it had begun to lay out was removed", e.error),
            };
        }
        e.error.into()
    }
}

/// The exit code of a failure before anything was measured, from whose
/// fault it is: the one place errors' kinds become codes. The input's and
/// the storage's (which the user points storbench at and can change) are
/// bad input, the system's a system failure, a stop an interrupt.
pub fn exit_code(fault: Fault) -> i32 {
    match fault {
        Fault::Input | Fault::Storage => EXIT_USAGE,
        Fault::System => EXIT_SYSTEM,
        Fault::Interrupted => EXIT_INTERRUPTED,
    }
}

impl From<storbench_runner::PlanError> for CliError {
    fn from(e: storbench_runner::PlanError) -> Self {
        CliError { code: exit_code(e.fault()), message: e.to_string() }
    }
}

impl From<storbench_engine::EngineError> for CliError {
    fn from(e: storbench_engine::EngineError) -> Self {
        CliError { code: exit_code(e.fault()), message: e.to_string() }
    }
}

/// A clap error in one line (the first line of clap's message), naming the
/// command's help; `None` for help and version, which clap prints itself.
pub fn from_clap(e: &clap::Error, command: &str) -> Option<CliError> {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
        return None;
    }
    // clap's message up to its usage line, in one line.
    let text = e.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let message = lines.join(" ");
    let message = message.trim_start_matches("error: ");
    Some(CliError::usage(format!("{message}; see `storbench {command}--help`")))
}
