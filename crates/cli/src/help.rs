//! `storbench help` and `storbench engines`.

use crate::error::CliError;
use storbench_workload::options::CORE_OPTIONS;

const USAGE: &str = "storbench: storage benchmarking for files, block devices, Ceph RBD and RADOS, S3 and Swift

usage:
  storbench run                         the quick suite on a scratch file in this directory
  storbench run JOBS.toml [OPTIONS]     jobs from a TOML job file
  storbench run --fio JOB.fio           jobs from a fio job file
  storbench run --name NAME OPTIONS...  one-off jobs from flags (fio names: --rw --bs --iodepth ...)
  storbench rbd bench --io-type write [--io-size 4K] [--io-threads 16] [--io-total 1G]
                  [--io-pattern seq|rand] [--rw-mix-read 50] POOL/IMAGE   rbd bench, with percentiles
  storbench rados bench SECONDS write|seq|rand -p POOL [-b 4M] [-t 16] [--no-cleanup]
                                        rados bench, with percentiles (reads rados bench's objects)
  storbench rados cleanup -p POOL       remove benchmark objects (rados cleanup)
  storbench rados load-gen -p POOL [--num-objects N] [--max-ops N] [--read-percent P] ...
                                        rados load-gen on the object model
  storbench run --ssbench SCENARIO.json [--users 4,8,16] [--ioengine swift|s3]
                                        an ssbench scenario (per size class and CRUD op); a users ramp
  storbench swift-bench [-c 10] [-s 1] [-n 1000] [-g 10000] [-C 20] [-x] [--ioengine swift|s3]
                                        swift-bench's PUT/GET/DELETE phases, with percentiles
  storbench help options                every job option
  storbench engines                     engines and their own options

run flags:
  --output-format normal|json|fio-json  what goes to standard output (default normal)
  --results-dir DIR                     where results go (default storbench-results/<time>)
  --suite quick                         the built-in suite (flags after it override its options)
  --fio-allow-unsupported               drop fio options storbench does not support, with a warning
  --quiet                               no live progress

exit codes: 0 ok, 1 I/O errors, 2 bad input, 3 system failure, 130 interrupted (results still written)
";

pub fn help(rest: &[String]) -> Result<i32, CliError> {
    match rest.first().map(String::as_str) {
        None => print!("{USAGE}"),
        Some("options") => {
            for (name, text) in CORE_OPTIONS {
                println!("  --{name:<28} {text}");
            }
        }
        Some(other) => return Err(CliError::usage(format!("no help on '{other}'; try `storbench help options`"))),
    }
    Ok(0)
}

pub fn engines() -> Result<i32, CliError> {
    for f in storbench_engine::registry() {
        let c = f.capabilities();
        println!("{:<10} {}", f.name(), f.description());
        println!(
            "{:<10} queued: {}, direct I/O: {}, needs files: {}, does I/O: {}, blocks: {}, objects: {}",
            "", c.queued, c.direct_io, c.needs_files, c.does_io, c.blocks, c.objects
        );
        for o in f.options() {
            println!("{:<10}   --{:<16} {}", "", o.name, o.help);
        }
    }
    Ok(0)
}
