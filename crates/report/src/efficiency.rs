//! Efficiency against the hardware: what a store achieved against what its
//! devices can do, as the SDS field report computes it (28 SSDs, 3 replicas:
//! 433,620 random write IOPS is 15,486 per SSD, times 3 replicas = 46,459 per
//! SSD). Reads land on one device each; writes on `replicas` devices, or
//! `(k+m)/k` times the data for erasure coding. Pure arithmetic on results.

use storbench_model::RunResult;
use storbench_workload::OpKind;

/// How the store keeps data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Protection {
    Replicas(u32),
    Ec { k: u32, m: u32 },
}

impl Protection {
    /// Bytes (and operations) the devices write per byte the client writes.
    pub fn write_amplification(self) -> f64 {
        match self {
            Protection::Replicas(n) => n.max(1) as f64,
            Protection::Ec { k, m } => (k + m) as f64 / k.max(1) as f64,
        }
    }
}

/// What one device can do (from a run on one raw device, or its data sheet).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Device {
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
}

impl Device {
    /// A baseline run's figures: each operation's best device job (its
    /// network jobs are the [`Network`]'s).
    pub fn from_run(r: &RunResult) -> Device {
        let best = |op: OpKind, f: fn(&storbench_model::OpResult) -> f64| {
            r.jobs.iter().filter(|j| j.engine != NETWORK_ENGINE).filter_map(|j| j.op(op)).map(f).fold(0.0, f64::max)
        };
        Device {
            read_iops: best(OpKind::Read, |o| o.iops),
            write_iops: best(OpKind::Write, |o| o.iops),
            read_bytes_per_sec: best(OpKind::Read, |o| o.bytes_per_sec),
            write_bytes_per_sec: best(OpKind::Write, |o| o.bytes_per_sec),
        }
    }
}

/// The engine of a baseline's network jobs.
use storbench_model::telemetry::NETWORK_ENGINE;

/// What the client's network can carry: bytes/s out (writes) and in (reads),
/// over every link a baseline measured (they are paths in parallel).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Network {
    pub send_bytes_per_sec: f64,
    pub receive_bytes_per_sec: f64,
}

impl Network {
    /// A baseline run's network jobs (`storbench baseline --network`): each
    /// link's send and receive throughput, added up; round trips carry none.
    pub fn from_run(r: &RunResult) -> Network {
        let links = storbench_model::telemetry::NetworkBaseline::from_run(r).links;
        Network {
            send_bytes_per_sec: links.iter().map(|l| l.send_bytes_per_s).sum(),
            receive_bytes_per_sec: links.iter().map(|l| l.receive_bytes_per_s).sum(),
        }
    }
}

/// One operation of one job against the devices.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub job: String,
    pub op: OpKind,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// IOPS each device served (writes amplified).
    pub per_device_iops: f64,
    pub per_device_bytes_per_sec: f64,
    /// The devices' ceiling for this operation, IOPS and bytes/s (writes divided by the amplification).
    pub ceiling_iops: f64,
    pub ceiling_bytes_per_sec: f64,
    /// The client network's ceiling for this operation (0: not measured).
    pub network_bytes_per_sec: f64,
    /// Achieved / ceiling, the largest of the IOPS, bandwidth and network shares (the one that binds).
    pub efficiency: f64,
    /// "IOPS", "bandwidth" or "network": which ceiling is nearest.
    pub bound: &'static str,
}

/// Every read and write of the run against `devices` devices like `device`.
pub fn rows(r: &RunResult, device: &Device, network: &Network, devices: u32, protection: Protection) -> Vec<Row> {
    let n = devices.max(1) as f64;
    let mut out = Vec::new();
    for j in &r.jobs {
        for o in j.ops.iter().filter(|o| matches!(o.op, OpKind::Read | OpKind::Write)) {
            let (amp, dev_iops, dev_bw) = match o.op {
                OpKind::Read => (1.0, device.read_iops, device.read_bytes_per_sec),
                _ => (protection.write_amplification(), device.write_iops, device.write_bytes_per_sec),
            };
            let (ceiling_iops, ceiling_bw) = (n * dev_iops / amp, n * dev_bw / amp);
            // The client sends a write once (replicas and parity travel the cluster's own network).
            let net = if o.op == OpKind::Read { network.receive_bytes_per_sec } else { network.send_bytes_per_sec };
            let share = |achieved: f64, ceiling: f64| if ceiling > 0.0 { achieved / ceiling } else { 0.0 };
            let (by_iops, by_bw, by_net) = (share(o.iops, ceiling_iops), share(o.bytes_per_sec, ceiling_bw), share(o.bytes_per_sec, net));
            let (efficiency, bound) = [(by_iops, "IOPS"), (by_bw, "bandwidth"), (by_net, "network")]
                .into_iter()
                .fold((0.0, "IOPS"), |best, (s, what)| if s > best.0 { (s, what) } else { best });
            out.push(Row {
                job: j.name.clone(),
                op: o.op,
                iops: o.iops,
                bytes_per_sec: o.bytes_per_sec,
                per_device_iops: o.iops * amp / n,
                per_device_bytes_per_sec: o.bytes_per_sec * amp / n,
                ceiling_iops,
                ceiling_bytes_per_sec: ceiling_bw,
                network_bytes_per_sec: net,
                efficiency,
                bound,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ops: &[(OpKind, f64, f64)]) -> RunResult {
        let mut r: RunResult = crate::fio::sample::run();
        let template = r.jobs[0].ops[0].clone();
        r.jobs.truncate(1);
        r.jobs[0].ops = ops
            .iter()
            .map(|(op, iops, bw)| storbench_model::OpResult { op: *op, iops: *iops, bytes_per_sec: *bw, ..template.clone() })
            .collect();
        r
    }

    /// The SDS field report (shared/seeds/004): 4 nodes x 7 Intel S3610
    /// SSDs, 3 replicas; the drives rated 84,000 4K random read IOPS and
    /// 27,000 steady-state random write IOPS.
    #[test]
    fn the_sds_reports_arithmetic() {
        let ssd = Device { read_iops: 84_000.0, write_iops: 27_000.0, ..Device::default() };
        let reads = rows(&run(&[(OpKind::Read, 1_587_480.0, 0.0)]), &ssd, &Network::default(), 28, Protection::Replicas(3));
        // "28 SSDs contribute 56,595 IOPS on average" (1,587,480 / 28 = 56,695.7: the report's typo).
        assert!((reads[0].per_device_iops - 56_695.7).abs() < 0.1);
        assert!((reads[0].efficiency - 56_695.7 / 84_000.0).abs() < 1e-6, "{}", reads[0].efficiency);
        let writes = rows(&run(&[(OpKind::Write, 433_620.0, 0.0)]), &ssd, &Network::default(), 28, Protection::Replicas(3));
        // "15,486 x 3 = 46459 per SSD, beyond the rated 27,000".
        assert!((writes[0].per_device_iops - 46_459.3).abs() < 0.1, "{}", writes[0].per_device_iops);
        assert!((writes[0].ceiling_iops - 28.0 * 27_000.0 / 3.0).abs() < 1e-6);
        assert!(writes[0].efficiency > 1.7, "above the data sheet's steady state: {}", writes[0].efficiency);
        // "2626 MB/s sequential write: with 3 replicas 1969 MB/s per node" (4 nodes).
        let seq = rows(&run(&[(OpKind::Write, 0.0, 2626e6)]), &Device::default(), &Network::default(), 4, Protection::Replicas(3));
        assert!((seq[0].per_device_bytes_per_sec - 1969.5e6).abs() < 1.0);
    }

    #[test]
    fn erasure_coding_amplifies_writes_by_k_plus_m_over_k() {
        assert_eq!(Protection::Ec { k: 4, m: 2 }.write_amplification(), 1.5);
        let dev = Device { read_iops: 1000.0, write_iops: 1000.0, read_bytes_per_sec: 1e9, write_bytes_per_sec: 1e8 };
        let r = rows(&run(&[(OpKind::Write, 1000.0, 6e8)]), &dev, &Network::default(), 6, Protection::Ec { k: 4, m: 2 });
        assert_eq!(r[0].ceiling_iops, 4000.0);
        assert_eq!((r[0].bound, r[0].efficiency), ("bandwidth", 1.5), "6e8 B/s against 6 x 1e8 / 1.5");
    }

    #[test]
    fn a_slower_network_than_the_devices_is_what_binds() {
        let dev = Device { read_iops: 100_000.0, read_bytes_per_sec: 3e9, ..Device::default() };
        let net = Network { receive_bytes_per_sec: 1.2e9, send_bytes_per_sec: 1.1e9 };
        let r = rows(&run(&[(OpKind::Read, 1000.0, 1.08e9)]), &dev, &net, 4, Protection::Replicas(3));
        assert_eq!(r[0].bound, "network");
        assert!((r[0].efficiency - 0.9).abs() < 1e-9, "{}", r[0].efficiency);
        assert_eq!(r[0].network_bytes_per_sec, 1.2e9);
    }
}
