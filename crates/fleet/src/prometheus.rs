//! `--prometheus ADDR`: a run's live figures for Prometheus, and so for the
//! Grafana dashboards operators already have.
//!
//! Every interval report a coordinator receives (from its in-process agent,
//! or from each agent of a fleet) is added into counters and a latency
//! histogram per job, operation and agent; `GET /metrics` renders them in
//! Prometheus' text format. Histograms have the same buckets everywhere, so
//! `sum by (job, op)` over agents is exact, like the run's own merge.
//! Counters keep growing across the runs of one command (a sweep's points),
//! as Prometheus expects; the `job` label tells them apart.
//!
//! Beside them, every telemetry second the run gathers (each host's CPU,
//! disks and network, a watched server's, the cluster's own counters, an
//! exporter's series) is a gauge with its last value, named for its source
//! (`storbench_host_cpu_busy_pct{source="local",role="client"}`,
//! `storbench_cluster_degraded_objects`, `storbench_exporter_...`), and each
//! fault carried out beside the run counts in `storbench_faults_total` by
//! its outcome, so a dashboard marks it where it came.

use http_body_util::Full;
use hyper::body::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use storbench_metrics::IntervalReport;
use storbench_model::disruption::{FaultAction, FaultEvent};
use storbench_model::telemetry::{HostSample, SourceKind};
use storbench_runner::agent::Tap;
use storbench_workload::OpKind;

/// Upper bounds of the latency buckets, in ns: 1-2-5 steps from 1 us to 100 s.
const BOUNDS_NS: [u64; 25] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    20_000_000_000,
    50_000_000_000,
    100_000_000_000,
];

#[derive(Default)]
struct Series {
    ops: u64,
    bytes: u64,
    errors: u64,
    /// Per bucket (not cumulative), the last one past every bound.
    buckets: [u64; BOUNDS_NS.len() + 1],
    sum_ns: f64,
}

/// A counter's name, help text and value.
type Counter = (&'static str, &'static str, fn(&Series) -> u64);

#[derive(Default)]
struct Inner {
    /// Job numbers of the current run -> names.
    jobs: HashMap<u32, String>,
    /// (job, op, agent) -> figures.
    series: BTreeMap<(String, &'static str, String), Series>,
    /// Exposed name -> rendered labels -> the last second's value; the
    /// current run's only (a sweep's finished point shows nothing stale).
    gauges: BTreeMap<String, BTreeMap<String, f64>>,
    /// (fault as written, outcome) -> how many.
    faults: BTreeMap<(String, &'static str), u64>,
}

/// The figures so far; a [`Tap`] for the coordinator's links.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

impl Registry {
    /// Name the jobs of the run about to start.
    pub fn run_starts<'a>(&self, jobs: impl Iterator<Item = (u32, &'a str)>) {
        let mut i = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        i.jobs = jobs.map(|(id, name)| (id, name.to_string())).collect();
        i.gauges.clear();
    }

    /// Prometheus' text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let i = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        let counters: [Counter; 3] = [
            ("storbench_operations_total", "Operations completed in measured time.", |s| s.ops),
            ("storbench_bytes_total", "Bytes moved in measured time.", |s| s.bytes),
            ("storbench_errors_total", "Operations that failed in measured time.", |s| s.errors),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (key, s) in &i.series {
                let _ = writeln!(out, "{name}{{{}}} {}", labels(key), value(s));
            }
        }
        let name = "storbench_latency_seconds";
        let _ = writeln!(out, "# HELP {name} Completion latency (in fixed-rate jobs from each operation's intended start).");
        let _ = writeln!(out, "# TYPE {name} histogram");
        for (key, s) in &i.series {
            let l = labels(key);
            let mut cumulative = 0;
            for (bound, n) in BOUNDS_NS.iter().zip(&s.buckets) {
                cumulative += n;
                let _ = writeln!(out, "{name}_bucket{{{l},le=\"{}\"}} {cumulative}", *bound as f64 / 1e9);
            }
            let count = cumulative + s.buckets[BOUNDS_NS.len()];
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {count}");
            let _ = writeln!(out, "{name}_sum{{{l}}} {}", s.sum_ns / 1e9);
            let _ = writeln!(out, "{name}_count{{{l}}} {count}");
        }
        for (name, series) in &i.gauges {
            let _ = writeln!(out, "# HELP {name} The run's telemetry, its last second.\n# TYPE {name} gauge");
            for (labels, v) in series {
                let _ = writeln!(out, "{name}{{{labels}}} {v}");
            }
        }
        if !i.faults.is_empty() {
            let name = "storbench_faults_total";
            let _ = writeln!(out, "# HELP {name} Faults carried out beside the run, by outcome.\n# TYPE {name} counter");
            for ((fault, outcome), n) in &i.faults {
                let _ = writeln!(out, "{name}{{fault=\"{}\",outcome=\"{outcome}\"}} {n}", escape(fault));
            }
        }
        out
    }
}

/// A telemetry figure's exposed name: what its source is, then the
/// figure's own name in the characters Prometheus allows.
fn gauge_name(kind: SourceKind, metric: &str) -> String {
    let (prefix, metric) = match kind {
        SourceKind::Client | SourceKind::Watched => ("host", metric),
        SourceKind::Cluster => ("cluster", metric.strip_prefix("cluster_").unwrap_or(metric)),
        SourceKind::Exporter => ("exporter", metric),
    };
    format!("storbench_{prefix}_{}", sanitize(metric))
}

/// Letters, digits and `_` (anything else becomes `_`), not led by a digit.
fn sanitize(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.chars().next().is_none_or(|c| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The source, a host's role, then the figure's own labels (one named like
/// ours gets a `series_` in front).
fn gauge_labels(s: &HostSample, labels: &BTreeMap<String, String>) -> String {
    let mut out = format!("source=\"{}\"", escape(&s.source));
    match s.kind {
        SourceKind::Client => out.push_str(",role=\"client\""),
        SourceKind::Watched => out.push_str(",role=\"watched\""),
        SourceKind::Cluster | SourceKind::Exporter => {}
    }
    for (k, v) in labels {
        let k = sanitize(k);
        let k = if matches!(k.as_str(), "source" | "role") || k.starts_with("__") { format!("series_{k}") } else { k };
        let _ = write!(out, ",{k}=\"{}\"", escape(v));
    }
    out
}

impl Tap for Registry {
    fn interval(&self, agent: &str, r: &IntervalReport) {
        if r.warmup {
            return;
        }
        let mut i = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let job = i.jobs.get(&r.job).cloned().unwrap_or_else(|| r.job.to_string());
        for (op, o) in OpKind::ALL.iter().zip(&r.ops) {
            let errors = o.errors.total();
            if o.ios == 0 && errors == 0 {
                continue;
            }
            let s = i.series.entry((job.clone(), op.name(), agent.to_string())).or_default();
            s.ops += o.ios;
            s.bytes += o.bytes;
            s.errors += errors;
            s.sum_ns += o.latency.mean() * o.latency.count() as f64;
            for (value, n) in o.latency.values() {
                s.buckets[BOUNDS_NS.partition_point(|b| *b < value)] += n;
            }
        }
    }

    fn host(&self, s: &HostSample) {
        let mut i = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for v in s.values.iter().filter(|v| v.value.is_finite()) {
            i.gauges.entry(gauge_name(s.kind, &v.metric)).or_default().insert(gauge_labels(s, &v.labels), v.value);
        }
    }

    fn fault(&self, e: &FaultEvent) {
        let mut i = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // A command's words stay out of a label anyone reaching the endpoint reads.
        let fault = match &e.action {
            FaultAction::Exec(_) => "exec".to_string(),
            a => a.words(),
        };
        *i.faults.entry((fault, e.outcome())).or_default() += 1;
    }
}

fn labels((job, op, agent): &(String, &'static str, String)) -> String {
    format!("job=\"{}\",op=\"{op}\",agent=\"{}\"", escape(job), escape(agent))
}

/// A label value as the text format wants it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The scrape endpoint; stops when dropped.
pub struct Endpoint {
    pub registry: Arc<Registry>,
    pub address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serve `GET /metrics` on `addr` from a thread of its own.
pub fn serve(addr: SocketAddr) -> Result<Endpoint, String> {
    let listener = std::net::TcpListener::bind(addr).map_err(|e| format!("--prometheus {addr}: {e}"))?;
    let address = listener.local_addr().map_err(|e| format!("--prometheus {addr}: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| format!("--prometheus {addr}: {e}"))?;
    let registry = Arc::new(Registry::default());
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let reg = registry.clone();
    let thread = std::thread::Builder::new()
        .name("sb-prometheus".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            rt.block_on(accept(listener, reg, stopped));
        })
        .map_err(|e| format!("could not start the metrics thread: {e}"))?;
    Ok(Endpoint { registry, address, stop: Some(stop), thread: Some(thread) })
}

async fn accept(listener: std::net::TcpListener, registry: Arc<Registry>, mut stopped: tokio::sync::oneshot::Receiver<()>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let registry = registry.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let response = respond(req.uri().path(), &registry);
                        async move { Ok::<_, std::convert::Infallible>(response) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        }
    }
}

fn respond(path: &str, registry: &Registry) -> hyper::Response<Full<Bytes>> {
    let (status, kind, body) = if path == "/metrics" {
        (200, "text/plain; version=0.0.4; charset=utf-8", registry.render())
    } else {
        (404, "text/plain; charset=utf-8", "storbench serves /metrics\n".to_string())
    };
    hyper::Response::builder()
        .status(status)
        .header("content-type", kind)
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| hyper::Response::new(Full::new(Bytes::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_become_counters_and_a_summable_histogram() {
        let reg = Registry::default();
        reg.run_starts([(0, "rr \"x\"")].into_iter());
        let mut r = IntervalReport::new(0, 0, false);
        for ns in [500, 1_500, 3_000_000, 200_000_000_000] {
            r.op(OpKind::Read).record(4096, ns, 0);
        }
        reg.interval("a1", &r);
        reg.interval("a2", &r);
        r.warmup = true;
        reg.interval("a1", &r);
        let text = reg.render();
        assert!(text.contains("storbench_operations_total{job=\"rr \\\"x\\\"\",op=\"read\",agent=\"a1\"} 4"), "{text}");
        assert!(text.contains("storbench_bytes_total{job=\"rr \\\"x\\\"\",op=\"read\",agent=\"a2\"} 16384"), "{text}");
        assert!(text.contains("le=\"0.000001\"} 1\n") && text.contains("le=\"0.005\"} 3\n") && text.contains("le=\"100\"} 3\n"), "{text}");
        assert!(text.contains("le=\"+Inf\"} 4\n") && text.contains("_count{job=\"rr \\\"x\\\"\",op=\"read\",agent=\"a1\"} 4"), "{text}");
        assert!(!text.contains("storbench_faults_total"), "no faults, no counter: {text}");
    }

    #[test]
    fn telemetry_seconds_become_gauges_and_faults_count_by_outcome() {
        use storbench_model::disruption::FaultAction;
        use storbench_model::telemetry::Value;
        let reg = Registry::default();
        let host = |kind, source: &str, values| HostSample { source: source.into(), kind, values, ..HostSample::default() };
        reg.host(&host(SourceKind::Client, "local", vec![Value::new("cpu_busy_pct", &[], 40.0)]));
        reg.host(&host(SourceKind::Client, "local", vec![Value::new("cpu_busy_pct", &[], 55.0)]));
        reg.host(&host(SourceKind::Watched, "osd1", vec![Value::new("disk_util_pct", &[("disk", "vd\"b")], 99.5)]));
        reg.host(&host(SourceKind::Cluster, "ceph", vec![Value::new("cluster_degraded_objects", &[], 12.0)]));
        let odd = Value::new("ceph_osd.op-w", &[("source", "x"), ("ceph_daemon", "osd.2")], 3.0);
        reg.host(&host(SourceKind::Exporter, "http://h:9283/metrics", vec![odd, Value::new("nan", &[], f64::NAN)]));
        let event = |action, error: Option<&str>, skipped| FaultEvent {
            at_s: 5.0,
            done_s: 5.0,
            action,
            answer: String::new(),
            error: error.map(String::from),
            skipped,
            restores: false,
        };
        reg.fault(&event(FaultAction::OsdOut(2), None, false));
        reg.fault(&event(FaultAction::OsdIn(2), Some("timed out"), false));
        reg.fault(&event(FaultAction::NetCut("veth0".into()), None, true));
        let text = reg.render();
        for line in [
            "# TYPE storbench_host_cpu_busy_pct gauge\n",
            "storbench_host_cpu_busy_pct{source=\"local\",role=\"client\"} 55\n",
            "storbench_host_disk_util_pct{source=\"osd1\",role=\"watched\",disk=\"vd\\\"b\"} 99.5\n",
            "storbench_cluster_degraded_objects{source=\"ceph\"} 12\n",
            "storbench_exporter_ceph_osd_op_w{source=\"http://h:9283/metrics\",ceph_daemon=\"osd.2\",series_source=\"x\"} 3\n",
            "storbench_faults_total{fault=\"osd-out:2\",outcome=\"done\"} 1\n",
            "storbench_faults_total{fault=\"osd-in:2\",outcome=\"failed\"} 1\n",
            "storbench_faults_total{fault=\"net-cut:veth0\",outcome=\"not_reached\"} 1\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!text.contains("storbench_exporter_nan"), "a value that is not a number is left out");
        // A new run (a sweep's next point) starts without the last one's seconds.
        reg.run_starts(std::iter::empty());
        assert!(!reg.render().contains("storbench_host_"));
    }
}
