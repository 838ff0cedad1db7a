//! One reading of the host's counters (/proc/stat, diskstats, net/dev,
//! net/snmp, meminfo, pressure) through the `procfs` crate, and one second's
//! figures from two readings.
//!
//! Counters that only grow are turned into rates over the measured length
//! of the second; levels (memory, in-flight I/O, the kernel's PSI averages)
//! are taken as read at the second's end. A file the kernel lacks (no PSI,
//! a container without /proc/net/snmp) leaves its figures out and is named
//! once in the source's notes.

use procfs::{Current, CurrentSI};
use std::collections::HashMap;
use std::time::Instant;
use storbench_metrics::CpuTimes;
use storbench_model::telemetry::{metric, Value};

/// CPU ticks by mode, from one /proc/stat line.
#[derive(Clone, Copy, Default)]
struct Ticks([u64; 7]);

impl Ticks {
    fn of(c: &procfs::CpuTime) -> Ticks {
        // The order of metric::CPU_MODES; nice counts as user (top's "us" does not, sar's %user does not
        // either, but a benchmark's niced load is still load on the CPU).
        Ticks([c.user + c.nice, c.system, c.iowait.unwrap_or(0), c.steal.unwrap_or(0), c.softirq.unwrap_or(0), c.irq.unwrap_or(0), c.idle])
    }

    /// Percent per mode over the span from `before`.
    fn shares(&self, before: &Ticks) -> [f64; 7] {
        let d: Vec<u64> = self.0.iter().zip(before.0).map(|(a, b)| a.saturating_sub(b)).collect();
        let total = d.iter().sum::<u64>().max(1) as f64;
        std::array::from_fn(|i| d[i] as f64 * 100.0 / total)
    }
}

/// Everything read at one moment.
pub struct Reading {
    pub at: Instant,
    /// The measuring process's own CPU time so far (every thread's).
    own: CpuTimes,
    host: Option<Ticks>,
    cores: Vec<Ticks>,
    disks: HashMap<String, procfs::DiskStat>,
    nics: HashMap<String, procfs::net::DeviceStatus>,
    retrans: Option<u64>,
    mem: Option<procfs::Meminfo>,
    psi: [Option<(procfs::PressureRecord, Option<procfs::PressureRecord>)>; 3],
}

const PSI: [&str; 3] = ["cpu", "io", "memory"];

impl Reading {
    /// Read every counter now; what cannot be read is named in `missing`
    /// (once per kind, by the caller).
    pub fn take(missing: &mut Vec<String>) -> Reading {
        let at = Instant::now();
        let mut note = |what: &str, e: &dyn std::fmt::Display| missing.push(format!("{what}: {e}"));
        let stat = procfs::KernelStats::current().map_err(|e| note("/proc/stat", &e)).ok();
        let disks = procfs::diskstats().map_err(|e| note("/proc/diskstats", &e)).unwrap_or_default();
        let nics = procfs::net::dev_status().map_err(|e| note("/proc/net/dev", &e)).unwrap_or_default();
        let retrans = procfs::net::snmp().map_err(|e| note("/proc/net/snmp", &e)).ok().map(|s| s.tcp_retrans_segs);
        let mem = procfs::Meminfo::current().map_err(|e| note("/proc/meminfo", &e)).ok();
        let psi = [
            procfs::CpuPressure::current().map(|p| (p.some, None)),
            procfs::IoPressure::current().map(|p| (p.some, Some(p.full))),
            procfs::MemoryPressure::current().map(|p| (p.some, Some(p.full))),
        ]
        .map(|r| r.map_err(|e| note("/proc/pressure", &e)).ok());
        Reading {
            at,
            own: CpuTimes::process(),
            host: stat.as_ref().map(|s| Ticks::of(&s.total)),
            cores: stat.as_ref().map(|s| s.cpu_time.iter().map(Ticks::of).collect()).unwrap_or_default(),
            disks: disks.into_iter().filter(|d| whole_disk(&d.name)).map(|d| (d.name.clone(), d)).collect(),
            nics,
            retrans,
            mem,
            psi,
        }
    }

    /// The host's CPUs as /proc/stat counts them (the process's affinity,
    /// a taskset, does not shrink the host).
    pub fn cpus(&self) -> usize {
        self.cores.len()
    }

    /// The figures of the span from `before` to this reading (`kinds`
    /// remembers each disk's kind, read once a run).
    pub fn since(&self, before: &Reading, kinds: &mut DiskKinds) -> Vec<Value> {
        let secs = self.at.duration_since(before.at).as_secs_f64().max(1e-3);
        let mut out = Vec::with_capacity(64);
        self.cpu(before, &mut out);
        out.push(Value::new(metric::RUN_CPU, &[], self.own.since(before.own).total().as_secs_f64() / secs));
        self.disks(before, secs, kinds, &mut out);
        self.nics(before, secs, &mut out);
        if let (Some(a), Some(b)) = (self.retrans, before.retrans) {
            out.push(Value::new(metric::TCP_RETRANS, &[], a.saturating_sub(b) as f64 / secs));
        }
        self.memory(&mut out);
        self.pressure(before, secs, &mut out);
        out
    }

    fn cpu(&self, before: &Reading, out: &mut Vec<Value>) {
        if let (Some(h), Some(b)) = (&self.host, &before.host) {
            push_modes(out, &h.shares(b), &[]);
        }
        let cores: Vec<[f64; 7]> = self.cores.iter().zip(&before.cores).map(|(c, b)| c.shares(b)).collect();
        // The busiest core: most time neither idle nor waiting for I/O.
        let busiest = cores.iter().enumerate().max_by(|(_, a), (_, b)| busy(a).total_cmp(&busy(b)));
        if let Some((core, shares)) = busiest {
            push_modes(out, shares, &[("core", "busiest")]);
            out.push(Value::new(metric::BUSIEST_CORE, &[], core as f64));
            // One saturated core among several differs from several: count them.
            let full = cores.iter().filter(|c| busy(c) >= metric::CORE_FULL_PCT).count();
            out.push(Value::new(metric::CORES_FULL, &[], full as f64));
        }
    }

    fn disks(&self, before: &Reading, secs: f64, kinds: &mut DiskKinds, out: &mut Vec<Value>) {
        for (name, d) in &self.disks {
            let Some(b) = before.disks.get(name) else { continue };
            let delta = |f: fn(&procfs::DiskStat) -> u64| f(d).saturating_sub(f(b)) as f64;
            let (reads, writes) = (delta(|d| d.reads), delta(|d| d.writes));
            // Idle devices (most loop devices) say nothing: left out that second.
            if reads + writes == 0.0 && d.in_progress == 0 && delta(|d| d.time_in_progress) == 0.0 {
                continue;
            }
            let rotational = kinds.rotational(name);
            let mut l = vec![("disk", name.as_str())];
            l.extend(rotational.map(|r| (metric::ROTATIONAL, if r { "1" } else { "0" })));
            let l = &l[..];
            out.push(Value::new(metric::DISK_READS, l, reads / secs));
            out.push(Value::new(metric::DISK_WRITES, l, writes / secs));
            out.push(Value::new(metric::DISK_READ_BYTES, l, delta(|d| d.sectors_read) * 512.0 / secs));
            out.push(Value::new(metric::DISK_WRITE_BYTES, l, delta(|d| d.sectors_written) * 512.0 / secs));
            // Ticks are ms: busy ms per second of wall time, as iostat's %util.
            out.push(Value::new(metric::DISK_UTIL, l, (delta(|d| d.time_in_progress) / (secs * 10.0)).min(100.0)));
            out.push(Value::new(metric::DISK_IN_FLIGHT, l, d.in_progress as f64));
            out.push(Value::new(metric::DISK_QUEUE, l, delta(|d| d.weighted_time_in_progress) / (secs * 1000.0)));
            let waited = delta(|d| d.time_reading) + delta(|d| d.time_writing);
            if reads + writes > 0.0 {
                out.push(Value::new(metric::DISK_AWAIT, l, waited / (reads + writes)));
            }
        }
    }

    fn nics(&self, before: &Reading, secs: f64, out: &mut Vec<Value>) {
        for (name, n) in &self.nics {
            let Some(b) = before.nics.get(name) else { continue };
            let rate = |f: fn(&procfs::net::DeviceStatus) -> u64| f(n).saturating_sub(f(b)) as f64 / secs;
            let (rx, tx) = (rate(|n| n.recv_packets), rate(|n| n.sent_packets));
            if rx + tx == 0.0 {
                continue;
            }
            let mut l = vec![("nic", name.as_str())];
            let master = bridge_of(name);
            if is_bridge(name) {
                l.push((metric::BRIDGE, "1"));
            }
            l.extend(master.as_deref().map(|m| (metric::BRIDGE_PORT_OF, m)));
            let l = &l[..];
            out.push(Value::new(metric::NIC_RX_BYTES, l, rate(|n| n.recv_bytes)));
            out.push(Value::new(metric::NIC_TX_BYTES, l, rate(|n| n.sent_bytes)));
            out.push(Value::new(metric::NIC_RX_PACKETS, l, rx));
            out.push(Value::new(metric::NIC_TX_PACKETS, l, tx));
            out.push(Value::new(metric::NIC_RX_DROPS, l, rate(|n| n.recv_drop)));
            out.push(Value::new(metric::NIC_TX_DROPS, l, rate(|n| n.sent_drop)));
            if let Some(bits) = link_speed(name) {
                out.push(Value::new(metric::NIC_LINK, l, bits));
            }
        }
    }

    fn memory(&self, out: &mut Vec<Value>) {
        let Some(m) = &self.mem else { return };
        out.push(Value::new(metric::MEM_DIRTY, &[], m.dirty as f64));
        out.push(Value::new(metric::MEM_WRITEBACK, &[], m.writeback as f64));
        out.push(Value::new(metric::MEM_CACHED, &[], m.cached as f64));
        if let Some(a) = m.mem_available {
            out.push(Value::new(metric::MEM_AVAILABLE, &[], a as f64));
        }
    }

    fn pressure(&self, before: &Reading, secs: f64, out: &mut Vec<Value>) {
        for ((res, now), then) in PSI.iter().zip(&self.psi).zip(&before.psi) {
            let (Some((some, full)), Some((some0, full0))) = (now, then) else { continue };
            let l = [("resource", *res)];
            // `total` is µs stalled: the share of this second, in percent.
            let share =
                |a: &procfs::PressureRecord, b: &procfs::PressureRecord| (a.total.saturating_sub(b.total) as f64 / (secs * 1e4)).min(100.0);
            out.push(Value::new(metric::PSI_SOME_AVG10, &l, some.avg10 as f64));
            out.push(Value::new(metric::PSI_SOME, &l, share(some, some0)));
            if let (Some(f), Some(f0)) = (full, full0) {
                out.push(Value::new(metric::PSI_FULL_AVG10, &l, f.avg10 as f64));
                out.push(Value::new(metric::PSI_FULL, &l, share(f, f0)));
            }
        }
    }
}

/// Each disk's kind, read from sysfs the first time the disk is seen (it
/// does not change during a run).
#[derive(Default)]
pub struct DiskKinds(HashMap<String, Option<bool>>);

impl DiskKinds {
    /// Whether the disk is rotational; None where sysfs does not say.
    fn rotational(&mut self, disk: &str) -> Option<bool> {
        *self.0.entry(disk.to_string()).or_insert_with(|| {
            let flag = std::fs::read_to_string(format!("/sys/block/{disk}/queue/rotational")).ok()?;
            Some(flag.trim() == "1")
        })
    }
}

/// Busy share: everything but idle and iowait.
fn busy(shares: &[f64; 7]) -> f64 {
    100.0 - shares[2] - shares[6]
}

fn push_modes(out: &mut Vec<Value>, shares: &[f64; 7], labels: &[(&str, &str)]) {
    for (mode, v) in metric::CPU_MODES.iter().zip(shares) {
        out.push(Value::new(metric::cpu(mode), labels, *v));
    }
    out.push(Value::new(metric::CPU_BUSY, labels, busy(shares)));
}

/// Whole disks only (partitions repeat their disk's I/O): the names under
/// /sys/block. Without sysfs, every device counts.
fn whole_disk(name: &str) -> bool {
    let sys = std::path::Path::new("/sys/block");
    !sys.exists() || sys.join(name).exists()
}

/// A bridge (its ports' traffic counted again on it).
fn is_bridge(nic: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(nic).join("bridge").exists()
}

/// The bridge a NIC is a port of (its `master`, when that is a bridge).
fn bridge_of(nic: &str) -> Option<String> {
    let master = std::fs::read_link(std::path::Path::new("/sys/class/net").join(nic).join("master")).ok()?;
    let name = master.file_name()?.to_str()?.to_string();
    is_bridge(&name).then_some(name)
}

/// A NIC's link speed in bits/s (`/sys/class/net/NIC/speed`, Mb/s); none
/// for a virtual NIC (the file says -1 or cannot be read).
fn link_speed(nic: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{nic}/speed")).ok()?;
    text.trim().parse::<f64>().ok().filter(|m| *m > 0.0).map(|m| m * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_of_this_host_has_cpu_memory_and_a_busiest_core() {
        let mut missing = Vec::new();
        let a = Reading::take(&mut missing);
        // Some CPU time to see.
        let t = Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(60) {
            std::hint::black_box(0u64);
        }
        let b = Reading::take(&mut missing);
        let v = b.since(&a, &mut DiskKinds::default());
        let get = |m: &str, core: bool| v.iter().find(|x| x.metric == m && x.labels.contains_key("core") == core).map(|x| x.value);
        let modes: f64 = metric::CPU_MODES.iter().filter_map(|m| get(&metric::cpu(m), false)).sum();
        assert!((modes - 100.0).abs() < 0.01 || modes == 0.0, "CPU modes add up to {modes}");
        assert!(get(metric::CPU_BUSY, true).unwrap() >= get(metric::CPU_BUSY, false).unwrap() - 1e-9);
        assert!(get(metric::MEM_AVAILABLE, false).unwrap() > 0.0);
        // The busy loop above was this process's own CPU.
        assert!(get(metric::RUN_CPU, false).unwrap() > 0.0);
        assert!(get(metric::CORES_FULL, false).unwrap() <= b.cpus() as f64);
    }
}
