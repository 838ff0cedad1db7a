//! The built-in studies: each field report's experiment as a study file
//! (`storbench study --builtin NAME`), its targets and scale given as
//! variables (`--set NAME=VALUE`, `--scale X`).

use crate::error::CliError;

/// Name and study file of each built-in.
pub const BUILTINS: &[(&str, &str)] = &[];

pub fn text(name: &str) -> Result<&'static str, CliError> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        let names: Vec<&str> = BUILTINS.iter().map(|(n, _)| *n).collect();
        CliError::usage(format!(
            "--builtin {name}: no such built-in study (there are: {})",
            if names.is_empty() { "none yet".to_string() } else { names.join(", ") }
        ))
    })
}
