//! `storbench efficiency RUN --devices N --replicas R (--baseline DIR | --device-* ...)`:
//! what a store achieved against the ceiling of the devices under it
//! (`storbench_report::efficiency`), per job and operation. A sweep, an SLO
//! search or any directory of runs is judged run by run, each named by its
//! directory. The baseline must be a `storbench baseline` run (its
//! `baseline` parameter); any other run is refused saying what it is.

use crate::cli::EfficiencyArgs;
use crate::error::*;
use std::fmt::Write as _;
use std::path::Path;
use storbench_model::{RunResult, RunSet};
use storbench_report::efficiency::{rows, Device, Network, Protection, Row};
use storbench_report::fmt;

pub fn run(a: &EfficiencyArgs) -> Result<i32, CliError> {
    let protection = protection(a)?;
    let points = judged(&a.dir)?;
    let baseline = a.baseline.as_deref().map(baseline).transpose()?;
    let mut device = baseline.as_ref().map(Device::from_run).unwrap_or_default();
    let network = baseline.as_ref().map(Network::from_run).unwrap_or_default();
    let mib = |v: Option<f64>| v.map(|m| m * 1_048_576.0);
    device.read_iops = a.device_read_iops.unwrap_or(device.read_iops);
    device.write_iops = a.device_write_iops.unwrap_or(device.write_iops);
    device.read_bytes_per_sec = mib(a.device_read_mibs).unwrap_or(device.read_bytes_per_sec);
    device.write_bytes_per_sec = mib(a.device_write_mibs).unwrap_or(device.write_bytes_per_sec);
    if device == Device::default() && network == Network::default() {
        return Err(CliError::usage(
            "give what one device can do: --baseline DIR (a run on one raw device) or --device-read-iops and the like",
        ));
    }
    let table: Vec<(&str, Row)> = points
        .iter()
        .flat_map(|(point, run)| rows(run, &device, &network, a.devices, protection).into_iter().map(move |r| (point.as_str(), r)))
        .collect();
    if table.is_empty() {
        return Err(CliError::usage(format!("{} has no reads or writes to compare with the devices", a.dir.display())));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} devices, {} (writes x{:.2}); one device: {} read / {} write IOPS, {} / {} MiB/s",
        a.devices,
        describe(protection),
        protection.write_amplification(),
        fmt::count(device.read_iops),
        fmt::count(device.write_iops),
        fmt::mib_per_s(device.read_bytes_per_sec),
        fmt::mib_per_s(device.write_bytes_per_sec),
    );
    if network != Network::default() {
        let _ = writeln!(
            out,
            "client network: {} MiB/s out (writes), {} MiB/s in (reads)",
            fmt::mib_per_s(network.send_bytes_per_sec),
            fmt::mib_per_s(network.receive_bytes_per_sec)
        );
    }
    let head = [
        "point",
        "job",
        "op",
        "IOPS",
        "MiB/s",
        "per device IOPS",
        "per device MiB/s",
        "ceiling IOPS",
        "ceiling MiB/s",
        "network MiB/s",
        "efficiency",
        "bound",
    ];
    // A single run has no point to name: its column is left out.
    let named = points.len() > 1;
    let mut lines: Vec<Vec<String>> = vec![head[usize::from(!named)..].iter().map(|h| h.to_string()).collect()];
    for (point, r) in &table {
        lines.push(
            named
                .then(|| point.to_string())
                .into_iter()
                .chain([
                    r.job.clone(),
                    r.op.name().into(),
                    fmt::count(r.iops),
                    fmt::mib_per_s(r.bytes_per_sec),
                    fmt::count(r.per_device_iops),
                    fmt::mib_per_s(r.per_device_bytes_per_sec),
                    fmt::count(r.ceiling_iops),
                    fmt::mib_per_s(r.ceiling_bytes_per_sec),
                    fmt::mib_per_s(r.network_bytes_per_sec),
                    // No figure for this operation (a read-only baseline has no writes): nothing to judge.
                    if r.efficiency > 0.0 { format!("{:.1}%", r.efficiency * 100.0) } else { "-".into() },
                    if r.efficiency > 0.0 { r.bound.into() } else { "no device figure".into() },
                ])
                .collect(),
        );
    }
    out.push_str(&storbench_report::text::table(&lines));
    out_part!("{out}");
    Ok(0)
}

fn protection(a: &EfficiencyArgs) -> Result<Protection, CliError> {
    match (&a.ec, a.replicas) {
        (Some(ec), _) => {
            let bad = || CliError::usage(format!("--ec {ec}: give K+M, e.g. 4+2"));
            let (k, m) = ec.split_once('+').ok_or_else(bad)?;
            let (k, m): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, m.trim().parse().map_err(|_| bad())?);
            // Real codes have tens of chunks; more is a typo (and overflowed K+M).
            if !(1..=256).contains(&k) || m > 256 {
                return Err(CliError::usage(format!("--ec {ec}: K from 1 to 256 and M at most 256, e.g. 4+2")));
            }
            Ok(Protection::Ec { k, m })
        }
        (None, r) => Ok(Protection::Replicas(r)),
    }
}

fn describe(p: Protection) -> String {
    match p {
        Protection::Replicas(1) => "no replication".into(),
        Protection::Replicas(n) => format!("{n} replicas"),
        Protection::Ec { k, m } => format!("erasure coding {k}+{m}"),
    }
}

/// The runs `dir` holds, each named by its directory when there are several
/// (a sweep's points, an SLO search's probes, repeats).
fn judged(dir: &Path) -> Result<Vec<(String, RunResult)>, CliError> {
    let set = RunSet::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    let name = |d: &Option<std::path::PathBuf>| {
        d.as_deref().and_then(Path::file_name).map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    Ok(set.runs.into_iter().map(|r| (name(&r.dir), r.result)).collect())
}

/// The run of a `storbench baseline` (its `baseline` parameter names the
/// devices and agents it measured); anything else is refused saying what
/// it is, since a store's run as the ceiling makes every figure nonsense.
fn baseline(dir: &Path) -> Result<RunResult, CliError> {
    baseline_run(dir, "--baseline")
}

/// The run of a `storbench baseline` in `dir`, for the flag named.
pub fn baseline_run(dir: &Path, flag: &str) -> Result<RunResult, CliError> {
    let set = RunSet::load(dir).map_err(|e| CliError::usage(format!("{flag}: {e}")))?;
    if set.runs.len() > 1 {
        return Err(CliError::usage(format!(
            "{flag} {}: it holds {} runs, not one baseline; give the directory of one `storbench baseline` run",
            dir.display(),
            set.runs.len()
        )));
    }
    let run = set.runs.into_iter().next().map(|r| r.result).ok_or_else(|| CliError::usage(format!("{}: no results", dir.display())))?;
    if run.parameter("baseline").is_none() {
        return Err(CliError::usage(format!(
            "{flag} {}: it is not a `storbench baseline` run but {}; measure the raw devices with `storbench baseline DEVICE...`, \
             or give a data sheet's figures with --device-read-iops and the like",
            dir.display(),
            what_run(&run)
        )));
    }
    // A ceiling measured where the reads never reached the medium divides nothing.
    if let Some(w) = run
        .jobs
        .iter()
        .flat_map(|j| &j.warnings)
        .chain(&run.warnings)
        .find(|w| matches!(w, storbench_model::Warning::NeverWrittenReads { .. } | storbench_model::Warning::ReadsNotOnDisk { .. }))
    {
        return Err(CliError::usage(format!(
            "{flag} {}: its reads did not reach the medium, so it is no ceiling: {}",
            dir.display(),
            w.message()
        )));
    }
    Ok(run)
}

/// A run as a refusal names it: its jobs' engines and what they did.
fn what_run(run: &RunResult) -> String {
    let mut engines: Vec<&str> = run.jobs.iter().map(|j| j.engine.as_str()).collect();
    engines.dedup();
    let objects = run.jobs.iter().any(|j| j.spec.objects.is_some());
    let kind = if objects { "object" } else { "block" };
    let tool = run.parameter("tool").map(|t| format!(" ({t})")).unwrap_or_default();
    format!("a run of {} {kind} job(s) on {}{tool}", run.jobs.len(), engines.join(", "))
}
