//! What the hosts' seconds say limited the run: the first bottleneck
//! rules, each a typed warning with the seconds it covers and the fix.
//!
//! A rule holds in a second, and is said when it held in at least
//! [`MIN_SECONDS`] whole seconds of the run, from the first to the last.
//! Each rule names a limit only where the seconds show it is the run's:
//! a core the run itself kept busy, a disk that could not take more.

use storbench_model::telemetry::{metric, NetworkBaseline, Series, Source, SourceKind, Telemetry};
use storbench_model::Warning;

/// Seconds a condition must hold before it is named (one can be a blip).
const MIN_SECONDS: usize = 2;
/// The run's own CPU that second, in cores, for a saturated core to be its.
const ONE_CORE: f64 = 0.9;
/// A rotational disk busy this share of a second has no room left.
const DISK_FULL: f64 = 90.0;
/// A parallel disk (NVMe, SSD, RBD, loop) is full where its average queue
/// is above one, at least this many times its shortest queue in the run ...
const QUEUE_GREW: f64 = 2.0;
/// ... and its await rose with the queue, so the longer queue bought
/// less than this many times the operations (Little's law: IOPS = queue / await).
const MORE_OPS: f64 = 1.25;
/// A second whose queue is below this was not loading the disk: no reference.
const LOADED: f64 = 0.5;

/// A host's CPUs this busy as a whole (neither idle nor waiting for I/O)
/// have no room left.
const HOST_FULL: f64 = 90.0;
/// On a client, the run's own share of the host's CPUs for a busy host to
/// be the run's limit (the rest: the kernel's work for it, and the others).
const RUN_SHARE: f64 = 0.5;
/// A NIC carrying this share of its link's speed in one direction is full.
const LINK_FULL: f64 = 0.9;

/// Every rule over every source.
pub fn judge(t: &Telemetry) -> Vec<Warning> {
    let mut out = Vec::new();
    for s in &t.sources {
        match s.kind {
            SourceKind::Client | SourceKind::Watched => {
                out.extend(one_core(s).or_else(|| busy_host(s)));
                out.extend(s.all(metric::DISK_UTIL).filter_map(|d| full_disk(s, d)));
                out.extend(s.all(metric::NIC_LINK).filter_map(|l| full_link(s, l)));
            }
            SourceKind::Cluster => out.extend(recovering(s)),
            SourceKind::Exporter => {}
        }
    }
    out
}

/// A host busy on (nearly) all its CPUs for at least two seconds: on a
/// client, with the run's own process using at least half of them (else
/// another program's load, said by no rule); on a watched server, whoever
/// used them.
fn busy_host(s: &Source) -> Option<Warning> {
    let busy = s.get(metric::CPU_BUSY)?;
    let watched = s.kind == SourceKind::Watched;
    let run = s.get(metric::RUN_CPU);
    let runs = |i| watched || run.and_then(|r| at(r, i)).is_some_and(|c| c >= RUN_SHARE * s.cpus as f64);
    let idx = seconds(s, |i| at(busy, i).is_some_and(|b| b >= HOST_FULL) && runs(i));
    if s.cpus == 0 {
        return None;
    }
    let (seconds, from_s, to_s) = held(s, &idx)?;
    Some(Warning::HostCpuSaturated {
        host: s.name.clone(),
        watched,
        seconds,
        from_s,
        to_s,
        busy_pct: mean(busy, &idx),
        cpus: s.cpus,
        run_cores: if watched { 0.0 } else { run.map_or(0.0, |r| mean(r, &idx)) },
    })
}

/// A NIC with a link speed carrying at least 90% of it in one direction.
fn full_link(s: &Source, link: &Series) -> Option<Warning> {
    let nic = link.label("nic");
    let (rx, tx) = (s.find(metric::NIC_RX_BYTES, "nic", nic)?, s.find(metric::NIC_TX_BYTES, "nic", nic)?);
    let bits = |i| Some(at(rx, i).unwrap_or(0.0).max(at(tx, i).unwrap_or(0.0)) * 8.0);
    let idx = seconds(s, |i| matches!((bits(i), at(link, i)), (Some(b), Some(l)) if l > 0.0 && b >= LINK_FULL * l));
    let (seconds, from_s, to_s) = held(s, &idx)?;
    let mean_bits = idx.iter().filter_map(|&i| bits(i)).sum::<f64>() / idx.len() as f64;
    Some(Warning::NicSaturated {
        host: s.name.clone(),
        nic: nic.to_string(),
        seconds,
        from_s,
        to_s,
        mbit_per_s: mean_bits / 1e6,
        link_mbit_per_s: mean(link, &idx) / 1e6,
    })
}

/// Each client NIC that carried, one way, at least 90% of what `storbench
/// baseline --network` measured over its link (`--network-baseline`): on
/// this machine the NIC that carried the baseline (every NIC but the
/// loopback when it was not sampled), on an agent it measured every NIC but
/// the loopback. A NIC the kernel gives a speed for is judged by it too
/// ([`full_link`]); the baseline names the path's limit where there is none.
pub fn against_network(t: &Telemetry, b: &NetworkBaseline) -> Vec<Warning> {
    let mut out = Vec::new();
    for s in t.sources.iter().filter(|s| s.kind == SourceKind::Client) {
        let Some((tx_max, rx_max, nic)) = b.ceiling(&s.name) else { continue };
        let judged = |x: &&Series| nic.map_or(x.label("nic") != "lo", |n| x.label("nic") == n);
        out.extend(s.all(metric::NIC_TX_BYTES).filter(judged).filter_map(|x| at_baseline(s, x, "out", tx_max)));
        out.extend(s.all(metric::NIC_RX_BYTES).filter(judged).filter_map(|x| at_baseline(s, x, "in", rx_max)));
    }
    out
}

fn at_baseline(s: &Source, bytes: &Series, direction: &str, ceiling: f64) -> Option<Warning> {
    if ceiling <= 0.0 {
        return None;
    }
    let idx = seconds(s, |i| at(bytes, i).is_some_and(|v| v >= LINK_FULL * ceiling));
    let (seconds, from_s, to_s) = held(s, &idx)?;
    Some(Warning::NetworkAtBaseline {
        host: s.name.clone(),
        nic: bytes.label("nic").to_string(),
        direction: direction.to_string(),
        seconds,
        from_s,
        to_s,
        mbit_per_s: mean(bytes, &idx) * 8.0 / 1e6,
        baseline_mbit_per_s: ceiling * 8.0 / 1e6,
    })
}

/// A cluster with objects degraded or misplaced, or recovering them, for
/// at least two seconds, by its own counters.
fn recovering(s: &Source) -> Option<Warning> {
    let get = |m: &str, i: usize| s.get(m).and_then(|x| at(x, i)).unwrap_or(0.0);
    let behind = |i| get("cluster_degraded_objects", i) + get("cluster_misplaced_objects", i);
    let idx = seconds(s, |i| behind(i) > 0.0 || get("cluster_recovery_objects_per_s", i) > 0.0);
    let (seconds, from_s, to_s) = held(s, &idx)?;
    let bytes = idx.iter().map(|&i| get("cluster_recovery_bytes_per_s", i)).sum::<f64>() / idx.len() as f64;
    Some(Warning::ClusterRecovering {
        cluster: s.name.clone(),
        seconds,
        from_s,
        to_s,
        recovery_mib_per_s: bytes / (1 << 20) as f64,
        degraded_max: idx.iter().map(|&i| behind(i)).fold(0.0, f64::max),
    })
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

/// Exactly one core saturated, and the run itself using about that one
/// core: the load could not use the other cores (pinned, or one thread
/// doing it all). A busy core with the run's CPU elsewhere is another
/// process's; several full cores are the run's spread, not one limit.
fn one_core(s: &Source) -> Option<Warning> {
    let core = s.find(metric::CPU_BUSY, "core", "busiest")?;
    let host = s.get(metric::CPU_BUSY)?;
    let which = s.get(metric::BUSIEST_CORE)?;
    let full = s.get(metric::CORES_FULL)?;
    let run = s.get(metric::RUN_CPU)?;
    if s.cpus < 2 {
        return None;
    }
    let idx = seconds(s, |i| at(full, i) == Some(1.0) && at(run, i).is_some_and(|c| c >= ONE_CORE));
    let (seconds, from_s, to_s) = held(s, &idx)?;
    Some(Warning::CoreSaturated {
        host: s.name.clone(),
        core: commonest(idx.iter().filter_map(|&i| at(which, i)).map(|c| c as u32)),
        seconds,
        from_s,
        to_s,
        busy_pct: mean(core, &idx),
        host_busy_pct: mean(host, &idx),
        run_cores: mean(run, &idx),
    })
}

/// A disk that could take no more for at least two seconds: a rotational
/// one busy nearly all of each, a parallel one queueing longer for no
/// more operations. %util alone says nothing of a parallel device (iostat's
/// manual says so): one I/O always in flight on an NVMe disk reads 100%.
fn full_disk(s: &Source, util: &Series) -> Option<Warning> {
    let disk = util.label("disk");
    let queue = s.find(metric::DISK_QUEUE, "disk", disk);
    let wait = s.find(metric::DISK_AWAIT, "disk", disk);
    let rotational = util.label(metric::ROTATIONAL) == "1";
    let idx = if rotational { seconds(s, |i| at(util, i).is_some_and(|u| u >= DISK_FULL)) } else { queued_for_nothing(s, queue?, wait?) };
    let (seconds, from_s, to_s) = held(s, &idx)?;
    Some(Warning::DiskSaturated {
        host: s.name.clone(),
        disk: disk.to_string(),
        seconds,
        from_s,
        to_s,
        util_pct: mean(util, &idx),
        await_ms: wait.map_or(0.0, |a| mean(a, &idx)),
        queue: queue.map_or(0.0, |q| mean(q, &idx)),
        rotational,
    })
}

/// A parallel disk's seconds whose queue was above one and at least twice
/// its shortest loaded queue of the run, with await risen nearly in
/// proportion: the extra queue bought under a quarter more operations.
/// A run at one constant depth has nothing to compare and names nothing.
fn queued_for_nothing(s: &Source, queue: &Series, wait: &Series) -> Vec<usize> {
    let both = |i| Some((at(queue, i)?, at(wait, i).filter(|a| *a > 0.0)?));
    let base = seconds(s, |i| both(i).is_some_and(|(q, _)| q >= LOADED)).into_iter().filter_map(&both).min_by(|a, b| a.0.total_cmp(&b.0));
    let Some((q0, a0)) = base else { return Vec::new() };
    seconds(s, |i| both(i).is_some_and(|(q, a)| q > 1.0 && q >= QUEUE_GREW * q0 && (q / q0) / (a / a0) < MORE_OPS))
}

/// The seconds a rule held, if at least [`MIN_SECONDS`]: how many, where
/// the first began and where the last ended.
fn held(s: &Source, idx: &[usize]) -> Option<(u32, f64, f64)> {
    let (&first, &last) = (idx.first()?, idx.last()?);
    (idx.len() >= MIN_SECONDS).then(|| (idx.len() as u32, start_of(s, first), s.t[last]))
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

    /// A host's seconds of CPU: (busiest core %, host %, cores full, the run's cores).
    fn cpu_host(cpus: u32, seconds: &[(f64, f64, f64, f64)]) -> Telemetry {
        host(
            cpus,
            seconds.iter().map(|(core, all, full, run)| {
                vec![
                    Value::new(metric::CPU_BUSY, &[("core", "busiest")], *core),
                    Value::new(metric::CPU_BUSY, &[], *all),
                    Value::new(metric::BUSIEST_CORE, &[], 1.0),
                    Value::new(metric::CORES_FULL, &[], *full),
                    Value::new(metric::RUN_CPU, &[], *run),
                ]
            }),
        )
    }

    /// A host's seconds of one disk, rotational or not: (util %, queue, await ms).
    fn disk_host(rotational: &str, seconds: &[(f64, f64, f64)]) -> Telemetry {
        let l = [("disk", "loop3"), (metric::ROTATIONAL, rotational)];
        host(
            2,
            seconds.iter().map(|(util, queue, wait)| {
                vec![
                    Value::new(metric::DISK_UTIL, &l, *util),
                    Value::new(metric::DISK_QUEUE, &l, *queue),
                    Value::new(metric::DISK_AWAIT, &l, *wait),
                ]
            }),
        )
    }

    fn host(cpus: u32, seconds: impl Iterator<Item = Vec<Value>>) -> Telemetry {
        source(SourceKind::Client, cpus, seconds)
    }

    fn source(kind: SourceKind, cpus: u32, seconds: impl Iterator<Item = Vec<Value>>) -> Telemetry {
        let mut t = Telemetry::default();
        for (i, values) in seconds.enumerate() {
            t.push(i as f64 + 1.0, HostSample { source: "local".into(), kind, cpus, duration: 1.0, values, ..HostSample::default() });
        }
        t
    }

    /// Seconds of a host's whole CPU: (host %, the run's cores).
    fn busy(kind: SourceKind, cpus: u32, seconds: &[(f64, f64)]) -> Telemetry {
        let second = |(all, run): &(f64, f64)| {
            vec![
                Value::new(metric::CPU_BUSY, &[], *all),
                Value::new(metric::CPU_BUSY, &[("core", "busiest")], 100.0),
                Value::new(metric::BUSIEST_CORE, &[], 0.0),
                Value::new(metric::CORES_FULL, &[], cpus as f64),
                Value::new(metric::RUN_CPU, &[], *run),
            ]
        };
        source(kind, cpus, seconds.iter().map(second))
    }

    #[test]
    fn a_client_busy_on_every_cpu_with_the_run_on_most_of_them_is_named() {
        let w = judge(&busy(SourceKind::Client, 2, &[(97.0, 1.6), (99.0, 1.8), (40.0, 0.5)]));
        assert!(
            matches!(&w[..], [Warning::HostCpuSaturated { watched: false, seconds: 2, cpus: 2, run_cores, .. }] if (*run_cores - 1.7).abs() < 1e-9),
            "{w:?}"
        );
        assert!(w[0].message().contains("the client's CPU was the limit"), "{}", w[0].message());
        // Busy with another program's load: not the run's limit.
        assert!(judge(&busy(SourceKind::Client, 2, &[(97.0, 0.3), (99.0, 0.3)])).is_empty());
    }

    #[test]
    fn a_watched_server_busy_on_every_cpu_is_named_whoever_used_them() {
        let w = judge(&busy(SourceKind::Watched, 4, &[(95.0, 0.0), (96.0, 0.0)]));
        assert!(matches!(&w[..], [Warning::HostCpuSaturated { watched: true, seconds: 2, .. }]), "{w:?}");
        assert!(w[0].message().contains("that host's CPU was the limit"), "{}", w[0].message());
    }

    #[test]
    fn a_nic_at_its_link_speed_is_named_and_one_without_a_speed_is_not() {
        let nic = |bytes: f64, link: Option<f64>| {
            let l = [("nic", "eth0")];
            let mut v = vec![Value::new(metric::NIC_RX_BYTES, &l, bytes), Value::new(metric::NIC_TX_BYTES, &l, 1e3)];
            v.extend(link.map(|b| Value::new(metric::NIC_LINK, &l, b)));
            v
        };
        // 118 MB/s on a gigabit link: 944 Mb/s.
        let w = judge(&host(2, [nic(118e6, Some(1e9)), nic(118e6, Some(1e9)), nic(1e6, Some(1e9))].into_iter()));
        assert!(
            matches!(&w[..], [Warning::NicSaturated { nic, seconds: 2, mbit_per_s, link_mbit_per_s, .. }] if nic == "eth0" && (*mbit_per_s - 944.0).abs() < 1e-6 && *link_mbit_per_s == 1000.0),
            "{w:?}"
        );
        assert!(judge(&host(2, [nic(118e6, None), nic(118e6, None)].into_iter())).is_empty());
    }

    /// A veth with no speed, measured at 25 MB/s out and 12.5 MB/s in by
    /// `baseline --network`: the seconds at 90% of it are named, one way.
    #[test]
    fn a_nic_at_the_network_baseline_is_named_for_its_direction() {
        use storbench_model::telemetry::{BaselineLink, NetworkBaseline};
        let second = |nic: &str, tx: f64, rx: f64| {
            let l = [("nic", nic)];
            vec![Value::new(metric::NIC_TX_BYTES, &l, tx), Value::new(metric::NIC_RX_BYTES, &l, rx)]
        };
        let seconds = |nic: &'static str, tx: [f64; 3]| host(2, tx.into_iter().map(move |t| second(nic, t, 1e5)));
        let link = |nic: Option<&str>| BaselineLink {
            host: "10.9.0.2".into(),
            send_bytes_per_s: 25e6,
            receive_bytes_per_s: 12.5e6,
            nic: nic.map(String::from),
        };
        let b = NetworkBaseline { links: vec![link(Some("veth1"))] };
        let w = against_network(&seconds("veth1", [24e6, 23e6, 5e6]), &b);
        assert!(
            matches!(&w[..], [Warning::NetworkAtBaseline { nic, direction, seconds: 2, mbit_per_s, baseline_mbit_per_s: 200.0, .. }]
                if nic == "veth1" && direction == "out" && (*mbit_per_s - 188.0).abs() < 1e-6),
            "{w:?}"
        );
        assert!(w[0].message().contains("the network was the limit"), "{}", w[0].message());
        assert!(against_network(&seconds("veth1", [20e6, 20e6, 20e6]), &b).is_empty(), "80% is not the limit");
        assert!(against_network(&seconds("eth0", [24e6, 24e6, 24e6]), &b).is_empty(), "another NIC than the baseline's");
        // Unsampled baseline: every NIC but the loopback.
        let b = NetworkBaseline { links: vec![link(None)] };
        assert_eq!(against_network(&seconds("eth0", [24e6, 24e6, 24e6]), &b).len(), 1);
        assert!(against_network(&seconds("lo", [24e6, 24e6, 24e6]), &b).is_empty());
    }

    #[test]
    fn a_cluster_recovering_by_its_own_counters_is_named() {
        let second = |degraded: f64, bytes: f64| {
            vec![
                Value::new("cluster_degraded_objects", &[], degraded),
                Value::new("cluster_misplaced_objects", &[], 0.0),
                Value::new("cluster_recovery_bytes_per_s", &[], bytes),
            ]
        };
        let t = source(
            SourceKind::Cluster,
            0,
            [second(0.0, 0.0), second(120.0, 4.0 * 1048576.0), second(60.0, 2.0 * 1048576.0), second(0.0, 0.0)].into_iter(),
        );
        let w = judge(&t);
        assert!(
            matches!(&w[..], [Warning::ClusterRecovering { seconds: 2, from_s, to_s, recovery_mib_per_s, degraded_max, .. }] if *from_s == 1.0 && *to_s == 3.0 && *recovery_mib_per_s == 3.0 && *degraded_max == 120.0),
            "{w:?}"
        );
        let calm = source(SourceKind::Cluster, 0, [second(0.0, 0.0), second(0.0, 0.0), second(0.0, 0.0)].into_iter());
        assert!(judge(&calm).is_empty());
    }

    #[test]
    fn the_runs_one_saturated_core_beside_idle_ones_is_named_with_its_seconds() {
        let w = judge(&cpu_host(2, &[(40.0, 30.0, 0.0, 0.4), (99.0, 55.0, 1.0, 1.0), (100.0, 60.0, 1.0, 1.0), (98.0, 52.0, 1.0, 0.94)]));
        assert_eq!(
            w,
            vec![Warning::CoreSaturated {
                host: "local".into(),
                core: 1,
                seconds: 3,
                from_s: 1.0,
                to_s: 4.0,
                busy_pct: 99.0,
                host_busy_pct: 55.666666666666664,
                run_cores: 0.98,
            }]
        );
    }

    #[test]
    fn several_full_cores_are_the_runs_spread_not_one_saturated_core() {
        // numjobs=4 on 8 cores, each at 100%: half the host idle, four cores full.
        assert!(judge(&cpu_host(8, &[(100.0, 50.0, 4.0, 4.0), (100.0, 50.0, 4.0, 4.0), (100.0, 50.0, 4.0, 4.0)])).is_empty());
    }

    #[test]
    fn another_processs_saturated_core_is_not_the_runs() {
        // A light run (a tenth of a core) beside some other program's busy loop.
        assert!(judge(&cpu_host(2, &[(100.0, 55.0, 1.0, 0.1), (100.0, 56.0, 1.0, 0.1), (100.0, 55.0, 1.0, 0.1)])).is_empty());
    }

    #[test]
    fn a_host_busy_on_every_core_a_blip_or_one_cpu_is_no_core_bottleneck() {
        // Every core full with the run on them: the host's CPU, not one core.
        let all = judge(&cpu_host(2, &[(100.0, 99.0, 2.0, 2.0), (100.0, 98.0, 2.0, 2.0), (100.0, 100.0, 2.0, 2.0)]));
        assert!(matches!(&all[..], [Warning::HostCpuSaturated { seconds: 3, .. }]), "{all:?}");
        assert!(judge(&cpu_host(2, &[(100.0, 50.0, 1.0, 1.0), (30.0, 20.0, 0.0, 0.3)])).is_empty());
        assert!(judge(&cpu_host(1, &[(100.0, 50.0, 1.0, 1.0), (100.0, 50.0, 1.0, 1.0)])).is_empty());
    }

    #[test]
    fn a_rotational_disk_busy_all_the_time_is_named() {
        let w = judge(&disk_host("1", &[(97.0, 1.0, 8.0), (99.0, 1.0, 8.0), (20.0, 0.2, 8.0)]));
        assert!(
            matches!(&w[..], [Warning::DiskSaturated { disk, seconds: 2, from_s, to_s, rotational: true, .. }] if disk == "loop3" && *from_s == 0.0 && *to_s == 2.0),
            "{w:?}"
        );
    }

    #[test]
    fn a_parallel_disk_always_busy_at_queue_depth_one_is_not_saturated() {
        // QD1 on NVMe: one I/O always in flight reads 100% util; more depth would help.
        assert!(judge(&disk_host("0", &[(99.0, 1.0, 0.08), (100.0, 1.0, 0.08), (99.5, 0.99, 0.08)])).is_empty());
        // Unknown kind: judged as a parallel one.
        assert!(judge(&disk_host("", &[(99.0, 1.0, 0.08), (100.0, 1.0, 0.08)])).is_empty());
    }

    #[test]
    fn a_parallel_disks_deeper_queue_that_bought_operations_is_not_saturated() {
        // QD1 then QD32: await barely rose, the operations grew sixteenfold.
        assert!(judge(&disk_host("0", &[(99.0, 1.0, 0.08), (99.0, 1.0, 0.08), (100.0, 32.0, 0.16), (100.0, 32.0, 0.16)])).is_empty());
        // One constant depth throughout: nothing to compare, nothing named.
        assert!(judge(&disk_host("0", &[(100.0, 32.0, 3.0), (100.0, 32.0, 3.0), (100.0, 32.0, 3.0)])).is_empty());
    }

    #[test]
    fn a_parallel_disk_queueing_longer_for_no_more_operations_is_named() {
        // QD8 then QD32: await rose 3.8 times with a queue 4 times longer (5% more operations).
        let w = judge(&disk_host("0", &[(100.0, 8.0, 0.8), (100.0, 8.0, 0.8), (100.0, 32.0, 3.05), (100.0, 32.0, 3.05), (40.0, 0.3, 0.1)]));
        assert!(
            matches!(&w[..], [Warning::DiskSaturated { seconds: 2, from_s, to_s, queue, rotational: false, .. }] if *from_s == 2.0 && *to_s == 4.0 && *queue == 32.0),
            "{w:?}"
        );
        assert!(w[0].message().contains("queued 32.0 I/Os on average, its await rising with the queue"), "{}", w[0].message());
    }
}
