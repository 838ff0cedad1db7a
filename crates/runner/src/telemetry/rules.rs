//! What the hosts' seconds say limited the run: the first bottleneck
//! rules, each a typed warning with the seconds it covers and the fix.
//!
//! A rule holds in a second, and is said when it held in at least
//! [`MIN_SECONDS`] whole seconds of the run, from the first to the last.

use storbench_model::telemetry::{metric, Series, Source, SourceKind, Telemetry};
use storbench_model::Warning;

/// Seconds a condition must hold before it is named (one can be a blip).
const MIN_SECONDS: usize = 2;
/// A core this busy (neither idle nor waiting for I/O) is saturated.
const CORE_FULL: f64 = 95.0;
/// A disk busy this share of a second has no room left.
const DISK_FULL: f64 = 90.0;

/// Every rule over every source.
pub fn judge(t: &Telemetry) -> Vec<Warning> {
    let mut out = Vec::new();
    for s in &t.sources {
        if s.kind == SourceKind::Client {
            out.extend(one_core(s));
        }
        out.extend(s.all(metric::DISK_UTIL).filter_map(|d| full_disk(s, d)));
    }
    out
}

/// The seconds (indexes) that lasted about a second and meet `cond`.
fn seconds(s: &Source, cond: impl Fn(usize) -> bool) -> Vec<usize> {
    s.seconds().filter(|&i| s.duration.get(i).is_some_and(|d| *d >= 0.5) && cond(i)).collect()
}

fn at(series: &Series, i: usize) -> Option<f64> {
    series.values.get(i).copied().flatten()
}

fn mean(series: &Series, idx: &[usize]) -> f64 {
    idx.iter().filter_map(|&i| at(series, i)).sum::<f64>() / idx.len().max(1) as f64
}

/// One core saturated while the host had at least half a CPU idle: the
/// load could not use the other cores (pinned, or one thread doing it all).
fn one_core(s: &Source) -> Option<Warning> {
    let core = s.find(metric::CPU_BUSY, "core", "busiest")?;
    let host = s.get(metric::CPU_BUSY)?;
    let which = s.get(metric::BUSIEST_CORE)?;
    if s.cpus < 2 {
        return None;
    }
    let room = 100.0 - 50.0 / s.cpus as f64;
    let idx = seconds(s, |i| at(core, i).is_some_and(|c| c >= CORE_FULL) && at(host, i).is_some_and(|h| h <= room));
    if idx.len() < MIN_SECONDS {
        return None;
    }
    Some(Warning::CoreSaturated {
        host: s.name.clone(),
        core: commonest(idx.iter().filter_map(|&i| at(which, i)).map(|c| c as u32)),
        seconds: idx.len() as u32,
        from_s: start_of(s, idx[0]),
        to_s: s.t[idx[idx.len() - 1]],
        busy_pct: mean(core, &idx),
        host_busy_pct: mean(host, &idx),
    })
}

/// A disk busy nearly all of at least two seconds.
fn full_disk(s: &Source, util: &Series) -> Option<Warning> {
    let idx = seconds(s, |i| at(util, i).is_some_and(|u| u >= DISK_FULL));
    if idx.len() < MIN_SECONDS {
        return None;
    }
    let disk = util.label("disk");
    Some(Warning::DiskSaturated {
        host: s.name.clone(),
        disk: disk.to_string(),
        seconds: idx.len() as u32,
        from_s: start_of(s, idx[0]),
        to_s: s.t[idx[idx.len() - 1]],
        util_pct: mean(util, &idx),
        await_ms: s.find(metric::DISK_AWAIT, "disk", disk).map_or(0.0, |a| mean(a, &idx)),
    })
}

/// Where the second at `i` began.
fn start_of(s: &Source, i: usize) -> f64 {
    (s.t[i] - s.duration[i]).max(0.0).round()
}

/// The value seen most often (the lowest on a tie).
fn commonest(values: impl Iterator<Item = u32>) -> u32 {
    let mut counts = std::collections::BTreeMap::new();
    for v in values {
        *counts.entry(v).or_insert(0u32) += 1;
    }
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map_or(0, |(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::telemetry::{HostSample, Value};

    fn host(cpus: u32, seconds: &[(f64, f64, f64)]) -> Telemetry {
        let mut t = Telemetry::default();
        for (i, (core, all, util)) in seconds.iter().enumerate() {
            let values = vec![
                Value::new(metric::CPU_BUSY, &[("core", "busiest")], *core),
                Value::new(metric::CPU_BUSY, &[], *all),
                Value::new(metric::BUSIEST_CORE, &[], 1.0),
                Value::new(metric::DISK_UTIL, &[("disk", "loop3")], *util),
                Value::new(metric::DISK_AWAIT, &[("disk", "loop3")], 2.0),
            ];
            t.push(i as f64 + 1.0, HostSample { source: "local".into(), cpus, duration: 1.0, values, ..HostSample::default() });
        }
        t
    }

    #[test]
    fn a_saturated_core_beside_an_idle_one_is_named_with_its_seconds() {
        let w = judge(&host(2, &[(40.0, 30.0, 0.0), (99.0, 55.0, 0.0), (100.0, 60.0, 0.0), (98.0, 52.0, 0.0)]));
        assert_eq!(
            w,
            vec![Warning::CoreSaturated {
                host: "local".into(),
                core: 1,
                seconds: 3,
                from_s: 1.0,
                to_s: 4.0,
                busy_pct: 99.0,
                host_busy_pct: 55.666666666666664
            }]
        );
    }

    #[test]
    fn a_host_busy_on_every_core_or_a_blip_is_no_core_bottleneck() {
        assert!(judge(&host(2, &[(100.0, 99.0, 0.0), (100.0, 98.0, 0.0), (100.0, 100.0, 0.0)])).is_empty());
        assert!(judge(&host(2, &[(100.0, 50.0, 0.0), (30.0, 20.0, 0.0)])).is_empty());
        assert!(judge(&host(1, &[(100.0, 50.0, 0.0), (100.0, 50.0, 0.0)])).is_empty());
    }

    #[test]
    fn a_disk_busy_all_the_time_is_named() {
        let w = judge(&host(2, &[(10.0, 10.0, 97.0), (10.0, 10.0, 99.0), (10.0, 10.0, 20.0)]));
        assert!(
            matches!(&w[..], [Warning::DiskSaturated { disk, seconds: 2, from_s, to_s, .. }] if disk == "loop3" && *from_s == 0.0 && *to_s == 2.0),
            "{w:?}"
        );
    }
}
