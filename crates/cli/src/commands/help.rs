//! `storbench help [COMMAND|options]` and `storbench engines`: generated from
//! the clap command tree and the option tables, never written by hand.

use crate::error::CliError;
use clap::CommandFactory;
use storbench_workload::options::{Kind, OptionInfo, CORE};

pub fn help(topic: &[String]) -> Result<i32, CliError> {
    let mut cmd = crate::cli::Cli::command();
    // Built, so that subcommands' usage names them in full ("storbench rbd bench").
    cmd.build();
    match topic.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => out_part!("{}", cmd.render_long_help()),
        ["options"] => out_part!("{}", options_text()),
        ["options", "--markdown"] => out_part!("{}", options_markdown()),
        path => {
            let mut c = &mut cmd;
            for word in path {
                c = c.find_subcommand_mut(word).ok_or_else(|| {
                    CliError::usage(format!("no help on '{}'; try `storbench help` or `storbench help options`", path.join(" ")))
                })?;
            }
            out_part!("{}", c.render_long_help());
        }
    }
    Ok(0)
}

fn line(o: &OptionInfo) -> String {
    let default = if o.default.is_empty() { String::new() } else { format!(" (default {})", o.default) };
    let choices = match o.kind {
        Kind::Choice(c) => format!(": {}", c.join("|")),
        _ => String::new(),
    };
    format!("  --{:<28} {:<7} {}{choices}{default}", o.name, o.kind.placeholder(), o.help)
}

/// Every job option: the core's, then each engine's own.
pub fn options_text() -> String {
    let mut out = String::from("job options (dashes or underscores; fio's names):\n");
    for o in CORE {
        out.push_str(&line(&o.info));
        out.push('\n');
    }
    for f in storbench_engine::registry().iter().filter(|f| !f.options().is_empty()) {
        out.push_str(&format!("\nengine {} options:\n", f.name()));
        for o in f.options() {
            out.push_str(&line(o));
            out.push('\n');
        }
    }
    out.push_str(ENVIRONMENT);
    out
}

/// Settings of the process rather than of a job, read from the environment.
const ENVIRONMENT: &str = "
environment:
  STORBENCH_SAME_SESSION=1      measure in the caller's session; by default a command that measures (run, sweep, slo,
                                study, replay, baseline, fio, the compatibility benches) runs its measurement in a
                                session of its own, as fio's jobs do, so the kernel's autogroup does not share the
                                caller's CPU share (a build in the same shell) with its workers
";

/// The core options as the README lists them (a test keeps the README equal to this).
pub fn options_markdown() -> String {
    let names: Vec<String> = CORE.iter().map(|o| format!("`--{}`", o.info.name)).collect();
    let mut out = String::new();
    let mut width = 0;
    for (i, n) in names.iter().enumerate() {
        let piece = if i + 1 < names.len() { format!("{n} ") } else { format!("{n}.") };
        if width + piece.trim_end().len() > 78 && width > 0 {
            out = out.trim_end().to_string();
            out.push('\n');
            width = 0;
        }
        width += piece.len();
        out.push_str(&piece);
    }
    out.trim_end().to_string() + "\n"
}

pub fn engines() -> Result<i32, CliError> {
    for f in storbench_engine::registry() {
        let c = f.capabilities();
        out!("{:<10} {}", f.name(), f.description());
        out!(
            "{:<10} queued: {}, direct I/O: {}, needs files: {}, does I/O: {}, blocks: {}, objects: {}",
            "",
            c.queued,
            c.direct_io,
            c.needs_files,
            c.does_io,
            c.blocks,
            c.objects
        );
        names(*f);
        for o in f.options() {
            out!("{:<10}   --{:<16} {}", "", o.name, o.help);
        }
    }
    Ok(0)
}

/// The engine's other names: storbench's aliases, and fio's ioengine=
/// values it carries out, with what differs from fio's where something does.
fn names(f: &'static dyn storbench_engine::EngineFactory) {
    if !f.aliases().is_empty() {
        out!("{:<10} also: {}", "", f.aliases().join(", "));
    }
    if !f.fio_names().is_empty() {
        let fio: Vec<&str> = f.fio_names().iter().map(|n| n.name).collect();
        out!("{:<10} fio: ioengine={}", "", fio.join(", "));
    }
    for n in f.fio_names().iter().filter_map(|n| n.note) {
        out!("{:<10}   {n}", "");
    }
}
