//! Ceilings on what the hosts may spend (`--stop-if cpu>80%`), as VMFleet
//! stops its sweeps: a point or probe whose hosts went over one is the last
//! of its curve in a sweep, and fails in an SLO search, so the answer is the
//! most the store gives while the machines keep their headroom.
//!
//! A ceiling is judged on a run's own telemetry (the coordinator, every
//! agent and every `--monitor` host; not a cluster's counters), each host's
//! figure the mean over the run's seconds, the worst host counted.

use crate::telemetry::{metric, Source, Telemetry};
use std::fmt;

/// What a ceiling limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// A host's busy CPU (neither idle nor waiting for I/O), % of all its CPUs.
    Cpu,
    /// A host's busiest core that second, % of one core.
    Core,
    /// CPU waiting for I/O, % of all the host's CPUs.
    Iowait,
    /// A host's busiest disk, % of the second with I/O in flight.
    Disk,
}

const RESOURCES: [(&str, Resource); 4] =
    [("cpu", Resource::Cpu), ("core", Resource::Core), ("iowait", Resource::Iowait), ("disk", Resource::Disk)];

impl Resource {
    fn name(self) -> &'static str {
        RESOURCES.iter().find(|(_, r)| *r == self).map_or("", |(n, _)| n)
    }

    /// The host's mean over the run, and which one (a disk's name) when the
    /// resource has several.
    fn of(self, s: &Source) -> Option<(f64, String)> {
        match self {
            Resource::Cpu => s.get(metric::CPU_BUSY)?.mean().map(|v| (v, String::new())),
            Resource::Core => s.find(metric::CPU_BUSY, "core", "busiest")?.mean().map(|v| (v, String::new())),
            Resource::Iowait => s.get(&metric::cpu("iowait"))?.mean().map(|v| (v, String::new())),
            Resource::Disk => s
                .all(metric::DISK_UTIL)
                .filter_map(|d| d.mean().map(|v| (v, d.label("disk").to_string())))
                .max_by(|a, b| a.0.total_cmp(&b.0)),
        }
    }
}

/// `RESOURCE>PCT%`: the run is over the ceiling when a host's mean is above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ceiling {
    pub resource: Resource,
    pub limit_pct: f64,
}

impl fmt::Display for Ceiling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}>{}%", self.resource.name(), self.limit_pct)
    }
}

/// How a run stood against a ceiling.
#[derive(Clone, Debug, PartialEq)]
pub enum Judged {
    Within,
    /// Over it: which host (and disk), its figure, the ceiling.
    Over(String),
    /// No host reported the figure (telemetry off, or a kernel without it).
    Unmeasured(String),
}

impl Ceiling {
    pub fn parse(text: &str) -> Result<Ceiling, String> {
        let names: Vec<&str> = RESOURCES.iter().map(|(n, _)| *n).collect();
        let bad = |why: &str| format!("{why}; give RESOURCE>PERCENT, RESOURCE one of {} (e.g. --stop-if cpu>80%)", names.join(", "));
        let (name, limit) = text.split_once('>').ok_or_else(|| bad("no '>'"))?;
        let resource = RESOURCES
            .iter()
            .find(|(n, _)| *n == name.trim())
            .map(|(_, r)| *r)
            .ok_or_else(|| bad(&format!("'{}' is not a resource", name.trim())))?;
        let limit = limit.trim().trim_end_matches('%');
        let limit_pct: f64 = limit.parse().map_err(|_| bad(&format!("'{limit}' is not a percentage")))?;
        if !(0.0..100.0).contains(&limit_pct) {
            return Err(bad("the percentage is from 0 to under 100"));
        }
        Ok(Ceiling { resource, limit_pct })
    }

    /// The run's hosts against the ceiling: the worst one over it names it.
    pub fn judge(&self, t: Option<&Telemetry>) -> Judged {
        let hosts = t.map_or(&[][..], |t| &t.sources).iter().filter(|s| s.kind.is_host());
        let figures: Vec<(&Source, f64, String)> = hosts.filter_map(|s| self.resource.of(s).map(|(v, which)| (s, v, which))).collect();
        let Some((s, v, which)) = figures.into_iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            return Judged::Unmeasured(format!("{self}: no host reported it (telemetry off, or the kernel has no such figure)"));
        };
        if v <= self.limit_pct {
            return Judged::Within;
        }
        let what = match which.is_empty() {
            true => self.resource.name().to_string(),
            false => format!("disk {which}"),
        };
        Judged::Over(format!("{self}: {what} {v:.1}% mean on host {}", s.name))
    }
}

/// The first ceiling a run went over, as a line; and the ceilings that
/// could not be judged.
pub fn first_over(ceilings: &[Ceiling], t: Option<&Telemetry>) -> (Option<String>, Vec<String>) {
    let mut unmeasured = Vec::new();
    for c in ceilings {
        match c.judge(t) {
            Judged::Over(why) => return (Some(why), unmeasured),
            Judged::Unmeasured(why) => unmeasured.push(why),
            Judged::Within => {}
        }
    }
    (None, unmeasured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{HostSample, SourceKind, Value};

    fn host(name: &str, kind: SourceKind, seconds: &[(f64, f64, f64)]) -> Vec<(f64, HostSample)> {
        seconds
            .iter()
            .enumerate()
            .map(|(i, &(cpu, core, disk))| {
                let values = vec![
                    Value::new(metric::CPU_BUSY, &[], cpu),
                    Value::new(metric::CPU_BUSY, &[("core", "busiest")], core),
                    Value::new(metric::DISK_UTIL, &[("disk", "sdb")], disk),
                    Value::new(metric::DISK_UTIL, &[("disk", "sda")], disk / 2.0),
                ];
                (i as f64 + 1.0, HostSample { source: name.into(), kind, duration: 1.0, values, ..HostSample::default() })
            })
            .collect()
    }

    fn telemetry(hosts: Vec<Vec<(f64, HostSample)>>) -> Telemetry {
        let mut t = Telemetry::default();
        for (at, s) in hosts.into_iter().flatten() {
            t.push(at, s);
        }
        t
    }

    #[test]
    fn ceilings_parse_with_or_without_the_percent_sign_and_bad_ones_say_the_form() {
        assert_eq!(Ceiling::parse("cpu>80%").unwrap(), Ceiling { resource: Resource::Cpu, limit_pct: 80.0 });
        assert_eq!(Ceiling::parse(" disk > 95 ").unwrap(), Ceiling { resource: Resource::Disk, limit_pct: 95.0 });
        assert_eq!(Ceiling::parse("core>99.5%").unwrap().to_string(), "core>99.5%");
        for (bad, says) in
            [("cpu<80", "no '>'"), ("gpu>80", "'gpu' is not a resource"), ("cpu>lots", "not a percentage"), ("cpu>100", "under 100")]
        {
            let e = Ceiling::parse(bad).unwrap_err();
            assert!(e.contains(says) && e.contains("cpu, core, iowait, disk"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_worst_hosts_mean_over_the_run_is_judged_and_named() {
        // Host a: mean CPU 70, core 90; host b: mean CPU 85 (one second at 100), disk sdb 60.
        let t = telemetry(vec![
            host("a", SourceKind::Client, &[(60.0, 80.0, 10.0), (80.0, 100.0, 10.0)]),
            host("b", SourceKind::Watched, &[(70.0, 90.0, 50.0), (100.0, 100.0, 70.0)]),
        ]);
        let cpu = |pct| Ceiling { resource: Resource::Cpu, limit_pct: pct };
        assert_eq!(cpu(90.0).judge(Some(&t)), Judged::Within, "a mean, not a peak second");
        assert_eq!(cpu(80.0).judge(Some(&t)), Judged::Over("cpu>80%: cpu 85.0% mean on host b".into()));
        let disk = Ceiling { resource: Resource::Disk, limit_pct: 55.0 };
        assert_eq!(disk.judge(Some(&t)), Judged::Over("disk>55%: disk sdb 60.0% mean on host b".into()));
        let iowait = Ceiling { resource: Resource::Iowait, limit_pct: 10.0 };
        assert!(matches!(iowait.judge(Some(&t)), Judged::Unmeasured(_)));
        let (over, unmeasured) = first_over(&[iowait, cpu(90.0), disk], Some(&t));
        assert_eq!(over.as_deref(), Some("disk>55%: disk sdb 60.0% mean on host b"));
        assert_eq!(unmeasured.len(), 1);
    }

    #[test]
    fn a_clusters_counters_are_not_a_host() {
        let t = telemetry(vec![host("ceph", SourceKind::Cluster, &[(100.0, 100.0, 100.0)])]);
        let cpu = Ceiling { resource: Resource::Cpu, limit_pct: 50.0 };
        assert!(matches!(cpu.judge(Some(&t)), Judged::Unmeasured(_)));
        assert!(matches!(cpu.judge(None), Judged::Unmeasured(_)), "a run without telemetry");
    }
}
