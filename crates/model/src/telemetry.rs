//! What the machines did during a run, second by second, on the run's own
//! time axis: the hosts' CPU, disks, network, memory and pressure, as
//! `RunResult::telemetry` holds them.
//!
//! A host is shared by every job of a run, so its series belong to the run,
//! not to a job. The shape is a source's seconds plus named series with
//! labels (Prometheus's data model: `disk_util_pct{disk="sda"}`), so what
//! a later scrape of an exporter or a Ceph counter brings fits beside a
//! host's own figures without a new type: a source, its seconds, its series.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use storbench_metrics::CpuTimes;

/// Every source of a run: the hosts that measured themselves (the
/// coordinator's, each agent's, each watched host's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Telemetry {
    /// Second 0 of the run's time axis (the first group's start), Unix ns on
    /// the coordinator's clock; every source's seconds count from it.
    pub start_unix_ns: u64,
    /// Where each group began on that axis (s): a job's per-second points
    /// (`SeriesPoint::t`, from its group's start) sit at `group_starts[g] + t`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_starts: Vec<f64>,
    pub sources: Vec<Source>,
}

/// What kind of place a source's figures come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A machine that ran the load (the coordinator's, or a fleet agent's).
    #[default]
    Client,
    /// A machine that only measured itself (`storbench agent --monitor`).
    Watched,
    /// A storage cluster's own counters, read through its management
    /// interface (Ceph's managers: `pg stat`, `osd perf`).
    Cluster,
    /// An exporter's Prometheus endpoint named for the run (`--scrape URL`:
    /// Ceph's mgr prometheus module, node_exporter): its series as it
    /// names them, counters as rates per second.
    Exporter,
}

impl SourceKind {
    /// A machine that measured itself (a client's or a watched host's
    /// CPU, disks and network), not a cluster's or an exporter's counters.
    pub fn is_host(self) -> bool {
        matches!(self, SourceKind::Client | SourceKind::Watched)
    }
}

/// One source's seconds and the series measured over them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The name it has in the run ("local", or the agent's name).
    pub name: String,
    pub kind: SourceKind,
    /// The host name it reported.
    pub hostname: String,
    /// The host's CPUs (/proc/stat's, whatever the process's affinity): the
    /// scale of the host-wide CPU percentages.
    pub cpus: u32,
    /// The sampler's own CPU time over the run (what watching cost).
    #[serde(default)]
    pub sampler_cpu: CpuTimes,
    /// The end of each second measured, in s on the run's axis.
    pub t: Vec<f64>,
    /// How long each of those seconds was (a last one may be short).
    pub duration: Vec<f64>,
    /// Series of figures, each with one value per second of `t` (`None`
    /// where it could not be read that second).
    pub series: Vec<Series>,
    /// Why figures are missing (a file the kernel does not have), once each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One named figure over a source's seconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// What is measured, with its unit in the name (`cpu_user_pct`,
    /// `disk_util_pct`, `nic_rx_bytes_per_s`).
    pub metric: String,
    /// Which one (`disk`, `nic`, `core`, `resource`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    pub values: Vec<Option<f64>>,
}

impl Series {
    /// The label's value, "" if the series has none.
    pub fn label(&self, key: &str) -> &str {
        self.labels.get(key).map_or("", String::as_str)
    }

    /// The values measured (missing ones left out).
    pub fn present(&self) -> impl Iterator<Item = f64> + '_ {
        self.values.iter().flatten().copied()
    }

    pub fn mean(&self) -> Option<f64> {
        let (n, sum) = self.present().fold((0usize, 0.0), |(n, s), v| (n + 1, s + v));
        (n > 0).then(|| sum / n as f64)
    }

    pub fn max(&self) -> Option<f64> {
        self.present().reduce(f64::max)
    }
}

impl Source {
    /// Every series of a metric (one per disk, NIC, ...).
    pub fn all<'a>(&'a self, metric: &'a str) -> impl Iterator<Item = &'a Series> + 'a {
        self.series.iter().filter(move |s| s.metric == metric)
    }

    /// The series of a metric whose labels include `key = value`.
    pub fn find(&self, metric: &str, key: &str, value: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.metric == metric && s.label(key) == value)
    }

    /// The one series of a metric without labels (host-wide figures).
    pub fn get(&self, metric: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.metric == metric && s.labels.is_empty())
    }

    /// The seconds that have data, as indexes into `t`.
    pub fn seconds(&self) -> std::ops::Range<usize> {
        0..self.t.len()
    }
}

/// One second of one host, as an agent sends it (`FromAgent::Host`): the
/// coordinator appends it to that host's [`Source`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// The host's name in the run; a fleet's link sets the agent's.
    pub source: String,
    pub kind: SourceKind,
    pub hostname: String,
    pub cpus: u32,
    /// Which `Start` of the run this second counts from (0 the first group's).
    pub start: u32,
    /// The end of the second, in s since that start.
    pub t: f64,
    pub duration: f64,
    /// The sampler's CPU time so far.
    pub sampler_cpu: CpuTimes,
    pub values: Vec<Value>,
    /// Why figures are missing, said with the first second only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One figure of one second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub metric: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Value {
    pub fn new(metric: impl Into<String>, labels: &[(&str, &str)], value: f64) -> Value {
        Value { metric: metric.into(), labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), value }
    }
}

impl Telemetry {
    /// Add a host's second at `t` on the run's axis, creating its source.
    pub fn push(&mut self, t: f64, sample: HostSample) {
        let i = match self.sources.iter().position(|s| s.name == sample.source) {
            Some(i) => i,
            None => {
                let src = Source {
                    name: sample.source.clone(),
                    kind: sample.kind,
                    hostname: sample.hostname.clone(),
                    cpus: sample.cpus,
                    ..Source::default()
                };
                self.sources.push(src);
                self.sources.len() - 1
            }
        };
        self.sources[i].push(t, sample);
    }
}

impl Source {
    /// Append one second: every series gets a value (`None` for those the
    /// second lacks), new series are filled with `None` before it.
    pub fn push(&mut self, t: f64, sample: HostSample) {
        let n = self.t.len();
        self.t.push(t);
        self.duration.push(sample.duration);
        self.sampler_cpu = sample.sampler_cpu;
        self.notes.extend(sample.notes);
        for v in sample.values {
            let i = match self.series.iter().position(|s| s.metric == v.metric && s.labels == v.labels) {
                Some(i) => i,
                None => {
                    self.series.push(Series { metric: v.metric, labels: v.labels, values: vec![None; n] });
                    self.series.len() - 1
                }
            };
            if self.series[i].values.len() == n {
                self.series[i].values.push(Some(v.value));
            }
        }
        for s in self.series.iter_mut().filter(|s| s.values.len() == n) {
            s.values.push(None);
        }
    }
}

/// The metric names the host sampler writes, shared by the sampler, the
/// report and the bottleneck rules so none of them spells one differently.
pub mod metric {
    /// CPU modes, percent of all the host's CPUs (`core="busiest"`: percent
    /// of the one core busiest that second, `cpu_busiest_core` its number).
    pub const CPU_MODES: [&str; 7] = ["user", "system", "iowait", "steal", "softirq", "irq", "idle"];
    /// Busy CPU (everything but idle and iowait), percent.
    pub const CPU_BUSY: &str = "cpu_busy_pct";
    pub const BUSIEST_CORE: &str = "cpu_busiest_core";
    /// How many of the host's cores were at least [`CORE_FULL_PCT`] busy.
    pub const CORES_FULL: &str = "cpu_cores_full";
    /// A core this busy (neither idle nor waiting for I/O) is saturated.
    pub const CORE_FULL_PCT: f64 = 95.0;
    /// The CPU the measuring process itself used (its user and system
    /// time, all threads), in cores: whose the busy cores were.
    pub const RUN_CPU: &str = "run_cpu_cores";
    /// A disk series' label: "1" when /sys/block/DISK/queue/rotational says
    /// the disk is rotational (one I/O at a time: its %util means full), "0"
    /// when not (NVMe, SSD, RBD, loop: %util only says one I/O was in flight).
    pub const ROTATIONAL: &str = "rotational";
    pub const DISK_READS: &str = "disk_reads_per_s";
    pub const DISK_WRITES: &str = "disk_writes_per_s";
    pub const DISK_READ_BYTES: &str = "disk_read_bytes_per_s";
    pub const DISK_WRITE_BYTES: &str = "disk_write_bytes_per_s";
    pub const DISK_UTIL: &str = "disk_util_pct";
    pub const DISK_IN_FLIGHT: &str = "disk_in_flight";
    /// Average queue over the second (weighted time in queue / time).
    pub const DISK_QUEUE: &str = "disk_queue";
    pub const DISK_AWAIT: &str = "disk_await_ms";
    /// A NIC series' label: "1" for a bridge (/sys/class/net/NIC/bridge),
    /// which counts again what its ports carry: the port is the wire.
    pub const BRIDGE: &str = "bridge";
    /// A NIC series' label: the bridge the NIC is a port of.
    pub const BRIDGE_PORT_OF: &str = "bridge_port_of";
    pub const NIC_RX_BYTES: &str = "nic_rx_bytes_per_s";
    pub const NIC_TX_BYTES: &str = "nic_tx_bytes_per_s";
    pub const NIC_RX_PACKETS: &str = "nic_rx_packets_per_s";
    pub const NIC_TX_PACKETS: &str = "nic_tx_packets_per_s";
    pub const NIC_RX_DROPS: &str = "nic_rx_drops_per_s";
    pub const NIC_TX_DROPS: &str = "nic_tx_drops_per_s";
    /// The NIC's link speed as the kernel reports it (bits/s; virtual
    /// NICs such as lo and veth report none).
    pub const NIC_LINK: &str = "nic_link_bits_per_s";
    pub const TCP_RETRANS: &str = "tcp_retrans_segs_per_s";
    pub const MEM_DIRTY: &str = "mem_dirty_bytes";
    pub const MEM_WRITEBACK: &str = "mem_writeback_bytes";
    pub const MEM_CACHED: &str = "mem_cached_bytes";
    pub const MEM_AVAILABLE: &str = "mem_available_bytes";
    /// Pressure stall information (`resource` cpu, io or memory): the
    /// kernel's 10 s averages, and the share of this second stalled.
    pub const PSI_SOME_AVG10: &str = "psi_some_avg10_pct";
    pub const PSI_FULL_AVG10: &str = "psi_full_avg10_pct";
    pub const PSI_SOME: &str = "psi_some_pct";
    pub const PSI_FULL: &str = "psi_full_pct";

    /// The CPU mode's metric name (`cpu_user_pct`).
    pub fn cpu(mode: &str) -> String {
        format!("cpu_{mode}_pct")
    }
}

/// What `storbench baseline --network` measured to each agent: the ceiling
/// a client's NIC is judged against (`--network-baseline DIR`), where the
/// kernel gives no link speed (a veth, a VM's NIC) or the path is slower
/// than the link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkBaseline {
    pub links: Vec<BaselineLink>,
}

/// One link of a network baseline, as the coordinator's machine saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BaselineLink {
    /// The agent's host (no port).
    pub host: String,
    /// Towards the agent, and back, in bytes a second.
    pub send_bytes_per_s: f64,
    pub receive_bytes_per_s: f64,
    /// The coordinator's NIC that carried it (from the baseline's own
    /// telemetry), if it was sampled.
    pub nic: Option<String>,
}

/// The engine of a network baseline's jobs.
pub const NETWORK_ENGINE: &str = "tcp";

/// The NIC that carried a baseline: the busiest one out of this machine,
/// and when that is a bridge, its port that carried as much (within 5%):
/// the two count the same bytes, which one measured more by a hair is
/// chance, and the port is the wire. (Baselines measured before NICs were
/// labelled so keep the busiest.)
fn carried(s: &Source) -> Option<String> {
    let mean = |x: &Series| x.mean().unwrap_or(0.0);
    let busiest = s.all(metric::NIC_TX_BYTES).max_by(|a, b| mean(a).total_cmp(&mean(b)))?;
    let bridge = busiest.label("nic");
    let port = s
        .all(metric::NIC_TX_BYTES)
        .filter(|x| x.label(metric::BRIDGE_PORT_OF) == bridge && mean(x) >= 0.95 * mean(busiest))
        .max_by(|a, b| mean(a).total_cmp(&mean(b)));
    Some(port.unwrap_or(busiest).label("nic").to_string())
}

impl NetworkBaseline {
    /// A baseline run's network jobs, a link per agent (send and receive
    /// jobs each); empty for a run that measured no network.
    pub fn from_run(r: &crate::RunResult) -> NetworkBaseline {
        let mut links: Vec<BaselineLink> = Vec::new();
        for j in r.jobs.iter().filter(|j| j.engine == NETWORK_ENGINE) {
            let opt = |k: &str| j.spec.engine_options.get(k).map(String::as_str).unwrap_or("");
            let host = host_of(opt("hostname")).to_string();
            let i = match links.iter().position(|l| l.host == host) {
                Some(i) => i,
                None => {
                    links.push(BaselineLink { host, ..BaselineLink::default() });
                    links.len() - 1
                }
            };
            let rate = |op| j.op(op).map_or(0.0, |o| o.bytes_per_sec);
            match opt("tcp_mode") {
                "send" => links[i].send_bytes_per_s += rate(storbench_workload::OpKind::Write),
                "receive" => links[i].receive_bytes_per_s += rate(storbench_workload::OpKind::Read),
                _ => {}
            }
        }
        let busiest = r.telemetry.iter().flat_map(|t| &t.sources).find(|s| s.kind == SourceKind::Client).and_then(carried);
        for l in &mut links {
            l.nic = busiest.clone();
        }
        NetworkBaseline { links }
    }

    /// A client's ceiling out and in, and the NIC it holds for (None: every
    /// NIC but the loopback): an agent's own link's, matched by the host its
    /// source is named for (what was sent to it is what it can take in),
    /// else this machine's (`local`) fastest, on the NIC that carried it.
    /// None for a client the baseline did not measure (an agent named
    /// otherwise than by the address the baseline measured).
    pub fn ceiling(&self, source: &str) -> Option<(f64, f64, Option<&str>)> {
        if let Some(l) = self.links.iter().find(|l| l.host == host_of(source)) {
            return Some((l.receive_bytes_per_s, l.send_bytes_per_s, None));
        }
        if source != "local" || self.links.is_empty() {
            return None;
        }
        let out = self.links.iter().map(|l| l.send_bytes_per_s).fold(0.0, f64::max);
        let inn = self.links.iter().map(|l| l.receive_bytes_per_s).fold(0.0, f64::max);
        Some((out, inn, self.links[0].nic.as_deref()))
    }
}

/// `10.0.0.5:7451` -> `10.0.0.5`, `[fd00::5]:7451` -> `fd00::5`; a bare host as it is.
fn host_of(address: &str) -> &str {
    if let Some(rest) = address.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match address.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => address,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent's own link, turned round (what was sent to it is what it
    /// takes in); this machine's the fastest, on its NIC; others none.
    #[test]
    fn a_clients_network_ceiling_is_its_own_link_seen_from_its_side() {
        let link = |host: &str, send: f64, receive: f64| BaselineLink {
            host: host.into(),
            send_bytes_per_s: send,
            receive_bytes_per_s: receive,
            nic: Some("veth1".into()),
        };
        let b = NetworkBaseline { links: vec![link("10.9.0.2", 25e6, 12.5e6), link("fd00::3", 40e6, 5e6)] };
        assert_eq!(b.ceiling("10.9.0.2:7450"), Some((12.5e6, 25e6, None)));
        assert_eq!(b.ceiling("[fd00::3]:7450"), Some((5e6, 40e6, None)));
        assert_eq!(b.ceiling("local"), Some((40e6, 12.5e6, Some("veth1"))));
        assert_eq!(b.ceiling("10.9.0.9:7450"), None, "an agent it did not measure");
        assert_eq!(NetworkBaseline::default().ceiling("local"), None);
    }

    /// The baseline's NIC: the busiest, but a bridge's port over the bridge
    /// when the two carried the same bytes whichever counted a hair more.
    #[test]
    fn the_nic_that_carried_a_baseline_is_the_busiest_a_bridges_port_before_the_bridge() {
        let tx = |nic: &str, port_of: Option<&str>, v: f64| {
            let mut labels: BTreeMap<String, String> = [("nic".to_string(), nic.to_string())].into();
            if nic.starts_with("br") {
                labels.insert(metric::BRIDGE.into(), "1".into());
            }
            if let Some(b) = port_of {
                labels.insert(metric::BRIDGE_PORT_OF.into(), b.into());
            }
            Series { metric: metric::NIC_TX_BYTES.into(), labels, values: vec![Some(v)] }
        };
        let src = |series| Source { series, ..Source::default() };
        let s = src(vec![tx("lo", None, 1e3), tx("br0", None, 25.1e6), tx("veth1", Some("br0"), 25.0e6)]);
        assert_eq!(carried(&s).as_deref(), Some("veth1"), "the port, though the bridge counted more");
        let s = src(vec![tx("br0", None, 25.1e6), tx("eth0", None, 25.0e6), tx("veth2", Some("br1"), 25.0e6)]);
        assert_eq!(carried(&s).as_deref(), Some("br0"), "NICs that are not its ports are not its path");
        let s = src(vec![tx("br0", None, 25e6), tx("veth1", Some("br0"), 10e6)]);
        assert_eq!(carried(&s).as_deref(), Some("br0"), "a port carrying less is not the path");
        let s = src(vec![tx("eth0", None, 5e6), tx("eth1", None, 25e6)]);
        assert_eq!(carried(&s).as_deref(), Some("eth1"));
        assert_eq!(carried(&src(Vec::new())), None);
    }

    #[test]
    fn series_summaries_skip_missing_seconds() {
        let s = Series { metric: "x".into(), labels: BTreeMap::new(), values: vec![Some(1.0), None, Some(3.0)] };
        assert_eq!(s.mean(), Some(2.0));
        assert_eq!(s.max(), Some(3.0));
        let none = Series { values: vec![None], ..s };
        assert_eq!(none.mean(), None);
    }

    #[test]
    fn a_source_round_trips_as_json() {
        let src = Source {
            name: "local".into(),
            hostname: "h".into(),
            cpus: 2,
            t: vec![1.0],
            duration: vec![1.0],
            series: vec![Series {
                metric: metric::DISK_UTIL.into(),
                labels: [("disk".to_string(), "sda".to_string())].into(),
                values: vec![Some(99.5)],
            }],
            ..Source::default()
        };
        let t = Telemetry { start_unix_ns: 5, group_starts: vec![0.0], sources: vec![src] };
        let back: Telemetry = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.sources[0].find(metric::DISK_UTIL, "disk", "sda").unwrap().max(), Some(99.5));
    }

    #[test]
    fn pushed_seconds_keep_every_series_as_long_as_the_axis() {
        let mut t = Telemetry::default();
        let second = |values: Vec<Value>| HostSample { source: "a".into(), duration: 1.0, values, ..HostSample::default() };
        t.push(1.0, second(vec![Value::new("x", &[], 1.0)]));
        t.push(2.0, second(vec![Value::new("y", &[("disk", "sda")], 2.0)]));
        let s = &t.sources[0];
        assert_eq!(s.t, vec![1.0, 2.0]);
        assert_eq!(s.get("x").unwrap().values, vec![Some(1.0), None]);
        assert_eq!(s.find("y", "disk", "sda").unwrap().values, vec![None, Some(2.0)]);
    }
}
