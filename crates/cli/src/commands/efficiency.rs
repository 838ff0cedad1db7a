//! `storbench efficiency RUN --devices N --replicas R (--baseline DIR | --device-* ...)`:
//! what a store achieved against the ceiling of the devices under it
//! (`storbench_report::efficiency`), per job and operation.

use crate::cli::EfficiencyArgs;
use crate::error::*;
use std::fmt::Write as _;
use storbench_model::RunSet;
use storbench_report::efficiency::{rows, Device, Network, Protection};
use storbench_report::fmt;

pub fn run(a: &EfficiencyArgs) -> Result<i32, CliError> {
    let protection = protection(a)?;
    let run = last_run(&a.dir)?;
    let baseline = a.baseline.as_deref().map(last_run).transpose()?;
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
    let table = rows(&run, &device, &network, a.devices, protection);
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
    let mut lines: Vec<Vec<String>> = vec![head.map(String::from).into()];
    for r in &table {
        lines.push(vec![
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
        ]);
    }
    out.push_str(&storbench_report::text::table(&lines));
    print!("{out}");
    Ok(0)
}

fn protection(a: &EfficiencyArgs) -> Result<Protection, CliError> {
    match (&a.ec, a.replicas) {
        (Some(ec), _) => {
            let bad = || CliError::usage(format!("--ec {ec}: give K+M, e.g. 4+2"));
            let (k, m) = ec.split_once('+').ok_or_else(bad)?;
            let (k, m): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, m.trim().parse().map_err(|_| bad())?);
            if k == 0 {
                return Err(bad());
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

/// The last run of a results directory (a run, or the last of a set).
fn last_run(dir: &std::path::Path) -> Result<storbench_model::RunResult, CliError> {
    let set = RunSet::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    set.runs.into_iter().last().map(|r| r.result).ok_or_else(|| CliError::usage(format!("{}: no results", dir.display())))
}
