//! `storbench baseline DEVICE... [--network AGENT,...]`: what the raw
//! devices under a store can do, and the network to each agent (the `tcp`
//! engine against the agent's network service: round trips, then
//! throughput each way over several streams), kept as a run (so `storbench efficiency --baseline DIR` reads it, and
//! `show`, `report` and `compare` work on it). Read-only unless
//! `--allow-writes` (which destroys the data on the devices: it is the
//! explicit permission the safety checks ask for).

use crate::cli::BaselineArgs;
use crate::error::*;
use crate::session::{execute, finish, RunSetup};
use storbench_workload::{apply_option, JobSpec};

/// (name, rw, bs, iodepth): small random and large sequential, both ways.
const READS: [(&str, &str, &str, &str); 2] = [("randread-4k", "randread", "4k", "32"), ("read-1m", "read", "1m", "8")];
const WRITES: [(&str, &str, &str, &str); 2] = [("randwrite-4k", "randwrite", "4k", "32"), ("write-1m", "write", "1m", "8")];

pub fn run(a: &BaselineArgs) -> Result<i32, CliError> {
    for d in &a.devices {
        refuse_never_written(d)?;
    }
    let specs = jobs(a)?;
    let mut observer = crate::progress::Live::new(a.quiet);
    let mut setup = RunSetup { results_dir: a.results_dir.clone(), replace: a.force, ..RunSetup::default() };
    setup.parameters.insert("baseline".into(), a.devices.iter().chain(&a.network).cloned().collect::<Vec<_>>().join(","));
    let (mut result, dir) = execute(specs, setup, &mut observer)?;
    result.warnings.extend(reads_not_on_disk(&result));
    finish(&dir, &result, Some("normal"))
}

/// A file more than 1% of which was never written (preallocated, sparse)
/// is no baseline: its reads return zeros from no medium (a preallocated
/// file "did" 858k 4 KiB reads a second on a disk that does 78k).
fn refuse_never_written(device: &str) -> Result<(), CliError> {
    let path = std::path::Path::new(device);
    let Some(m) = std::fs::metadata(path).ok().filter(|m| m.is_file()) else { return Ok(()) };
    match storbench_engine::files::extents::never_written(path, m.len()) {
        Some(n) if n * 100 > m.len() => Err(CliError::usage(format!(
            "baseline {device}: {n} of its {} bytes were never written (preallocated or sparse), and reads there never reach \
             the disk; write it in full first (storbench run --name fill --filename {device} --rw write --bs 1m --direct 1 \
             --allow_overwrite 1) or measure the device",
            m.len()
        ))),
        _ => Ok(()),
    }
}

/// Reads the disks under the run did not see: fewer than half of those
/// issued to files and devices (page cache hits, never-written extents).
/// The counters are device-wide, so other processes only add to them.
fn reads_not_on_disk(r: &storbench_model::RunResult) -> Option<storbench_model::Warning> {
    if r.disk_util.is_empty() {
        return None;
    }
    let issued: u64 = r
        .jobs
        .iter()
        .filter(|j| j.engine != "tcp")
        .flat_map(|j| &j.ops)
        .filter(|o| o.op == storbench_workload::OpKind::Read)
        .map(|o| o.ios)
        .sum();
    let disk_reads: u64 = r.disk_util.iter().map(|d| d.read_ios + d.read_merges).sum();
    (issued > 0 && disk_reads * 2 < issued).then_some(storbench_model::Warning::ReadsNotOnDisk { issued, disk_reads })
}

/// Per agent: 64-byte round trips on one connection, then 1 MiB sends and
/// receives on `--streams` connections each.
fn network_jobs(a: &BaselineArgs, runtime: &str) -> Result<Vec<JobSpec>, CliError> {
    let dir = a.fleet_dir.clone().unwrap_or_else(storbench_fleet::creds::default_dir);
    let dir = dir.display().to_string();
    let streams = a.streams.max(1).to_string();
    let mut specs = Vec::new();
    for (i, agent) in a.network.iter().enumerate() {
        let (host, port) = match agent.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') => (h.trim_matches(['[', ']']), p),
            _ => (agent.as_str(), "7451"),
        };
        let tag = if a.network.len() > 1 { format!(".{}", i + 1) } else { String::new() };
        for (name, mode, rw, bs, jobs) in [
            ("net-rtt", "echo", "read", "64", "1"),
            ("net-send", "send", "write", "1m", &streams),
            ("net-receive", "receive", "read", "1m", &streams),
        ] {
            let mut s = JobSpec { name: format!("{name}{tag}"), ..JobSpec::default() };
            let opts = [
                ("ioengine", "tcp"),
                ("hostname", host),
                ("port", port),
                ("tcp_mode", mode),
                ("fleet_dir", dir.as_str()),
                ("rw", rw),
                ("bs", bs),
                ("numjobs", jobs),
                ("runtime", runtime),
                ("time_based", "1"),
                ("ramp_time", "1s"),
                ("stonewall", "1"),
            ];
            for (k, v) in opts {
                apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("baseline --network {agent}: {e}")))?;
            }
            specs.push(s);
        }
    }
    Ok(specs)
}

fn jobs(a: &BaselineArgs) -> Result<Vec<JobSpec>, CliError> {
    let runtime = format!("{}s", a.runtime.as_secs().max(1));
    let mut specs = network_jobs(a, &runtime)?;
    for (d, device) in a.devices.iter().enumerate() {
        let writes = if a.allow_writes { &WRITES[..] } else { &[][..] };
        for (name, rw, bs, depth) in READS.iter().chain(writes) {
            let mut s =
                JobSpec { name: if a.devices.len() > 1 { format!("{name}.{}", d + 1) } else { name.to_string() }, ..JobSpec::default() };
            let opts = [
                ("filename", device.as_str()),
                ("rw", rw),
                ("bs", bs),
                ("iodepth", depth),
                ("ioengine", "io_uring"),
                ("direct", "1"),
                ("runtime", runtime.as_str()),
                ("time_based", "1"),
                ("ramp_time", "2s"),
                ("stonewall", "1"),
                ("allow_overwrite", if a.allow_writes { "1" } else { "0" }),
            ];
            for (k, v) in opts {
                apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("baseline: {e}")))?;
            }
            specs.push(s);
        }
    }
    Ok(specs)
}
