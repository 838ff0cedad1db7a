//! The built-in studies: each field report's experiment as a study file
//! (`storbench study --builtin NAME`), its targets and scale given as
//! variables (`--set NAME=VALUE`, `--scale X`).

use crate::error::CliError;

/// Name and study file of each built-in, one per field report storbench
/// started from (README, Studies).
pub const BUILTINS: &[(&str, &str)] = &[
    ("sheepdog", include_str!("builtin/sheepdog.toml")),
    ("ceph-rbd", include_str!("builtin/ceph-rbd.toml")),
    ("swift", include_str!("builtin/swift.toml")),
    ("ceph-tools", include_str!("builtin/ceph-tools.toml")),
    ("hci", include_str!("builtin/hci.toml")),
];

pub fn text(name: &str) -> Result<&'static str, CliError> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        let names: Vec<&str> = BUILTINS.iter().map(|(n, _)| *n).collect();
        CliError::usage(format!(
            "--builtin {name}: no such built-in study (there are: {})",
            if names.is_empty() { "none yet".to_string() } else { names.join(", ") }
        ))
    })
}
