//! `storbench`: the command-line entry point. A dispatcher only: each command
//! lives in its own module.

mod args;
mod error;
mod fiofile;
mod help;
mod jobfile;
mod output;
mod progress;
mod rados_cmd;
mod rbd_bench;
mod run;
mod specs;
mod ssbench;
mod suite;
mod swift_bench;

use error::CliError;

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let code = match dispatch(&words) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("storbench: error: {e}");
            e.code
        }
    };
    std::process::exit(code);
}

fn dispatch(words: &[String]) -> Result<i32, CliError> {
    let (cmd, rest) = match words.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("run", &[][..]),
    };
    match cmd {
        "run" => run::run(rest),
        "rbd" => rbd_bench::rbd(rest),
        "rados" => rados_cmd::rados(rest),
        "swift-bench" => swift_bench::swift_bench(rest),
        "help" | "--help" | "-h" => help::help(rest),
        "engines" => help::engines(),
        "version" | "--version" | "-V" => {
            println!("storbench {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        other => {
            let hint = storbench_workload::options::suggest(other, ["run", "rbd", "rados", "swift-bench", "help", "engines", "version"])
                .map(|s| format!(" Did you mean '{s}'?"))
                .unwrap_or_default();
            Err(CliError::usage(format!("unknown command '{other}'.{hint} See `storbench help`.")))
        }
    }
}
