//! `--scrape URL`: an exporter's Prometheus endpoint read once a second
//! beside a run (Ceph's mgr prometheus module, node_exporter, an object
//! store's exporter), its series kept with the run on the run's seconds.
//!
//! The text format is parsed by `prometheus-parse`. What a second keeps:
//! gauges (and untyped samples) as they read; counters as their rate over
//! the second (`NAME_per_s`), since a cumulative count since the daemon
//! started says nothing about the run; a summary's quantiles as gauges; and
//! for every `_sum`/`_count` pair (a histogram's, a summary's, Ceph's
//! average counters such as `ceph_osd_op_w_latency`) the mean over the
//! second (`NAME_mean`: the sum's rise over the count's, the latency of
//! that second's operations). Histogram buckets are left out. A counter's
//! rate is over the time since its value last moved: an exporter that
//! caches its answer (Ceph's manager, for `mgr/prometheus/scrape_interval`)
//! repeats values, and a repeat is no figure rather than a second of
//! nothing done. A counter that went down (the daemon restarted) has no
//! rate that second.

use super::{client, Client, Common, Failure};
use crate::{EngineError, Watched};
use http_body_util::{BodyExt, Limited};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};
use storbench_model::telemetry::{SourceKind, Value};

const ENGINE: &str = "scrape";
/// A reading that takes longer than this is given up (it is one second's).
const LIMIT: Duration = Duration::from_millis(900);
/// The most an answer may be (Ceph's manager on a large cluster answers a
/// few MB; more is not an exporter).
const MOST_BYTES: usize = 64 << 20;
/// The most series one endpoint keeps; past it, `--scrape-keep` narrows.
pub const MOST_SERIES: usize = 2000;

/// A series' identity between readings: its name and labels.
type Key = (String, BTreeMap<String, String>);

/// One exporter's endpoint, read once a second.
pub struct Scrape {
    name: String,
    url: String,
    uri: ::http::Uri,
    rt: tokio::runtime::Runtime,
    client: Client,
    keep: Vec<String>,
    /// Each counter's value when it last moved, and when that was.
    moved: HashMap<Key, (f64, Instant)>,
    /// The series kept so far (at most [`MOST_SERIES`]) and how many more
    /// were left out.
    kept: HashSet<Key>,
    dropped: HashSet<Key>,
    said_dropped: bool,
}

impl Scrape {
    /// Reach `url` and read it once (the counters' first values): an error
    /// names the URL and what is wrong with it. `keep` holds the metric
    /// names to keep (`*` matches any run of characters); empty keeps all.
    pub fn connect(url: &str, keep: &[String]) -> Result<Scrape, EngineError> {
        let (uri, name) = parse_url(url)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| EngineError::os(ENGINE, "tokio runtime", e.raw_os_error().unwrap_or(libc::EIO)))?;
        let common = Common { op_timeout: LIMIT, connect_timeout: LIMIT, retries: 0, tls: Default::default(), connect_to: None };
        let tls = super::tls::client_config(ENGINE, &common.tls)?;
        let client = {
            let _g = rt.enter();
            client(&common, &tls)
        };
        let mut s = Scrape {
            name,
            url: url.to_string(),
            uri,
            rt,
            client,
            keep: keep.to_vec(),
            moved: HashMap::new(),
            kept: HashSet::new(),
            dropped: HashSet::new(),
            said_dropped: false,
        };
        let first = s.read()?;
        if first.samples.is_empty() {
            return Err(EngineError::Rejected {
                engine: ENGINE,
                message: format!("{}: the answer holds no Prometheus samples (give an exporter's metrics URL)", s.url),
                kind: storbench_metrics::ErrorKind::Other,
            });
        }
        s.values(first);
        Ok(s)
    }

    /// One GET of the endpoint, parsed.
    fn read(&self) -> Result<prometheus_parse::Scrape, EngineError> {
        let req = ::http::Request::get(self.uri.clone())
            .header(::http::header::ACCEPT, "text/plain;version=0.0.4")
            .body(super::Body::new(bytes::Bytes::new()))
            .map_err(|e| EngineError::failed(ENGINE, "building the request", e))?;
        let get = async {
            let resp = self.client.request(req).await.map_err(Failure::Client)?;
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, MOST_BYTES).collect().await.map_err(|_| Failure::Body)?.to_bytes();
            Ok::<_, Failure>((parts, body))
        };
        let (parts, body) = self
            .rt
            .block_on(async { tokio::time::timeout(LIMIT, get).await.unwrap_or(Err(Failure::TimedOut)) })
            .map_err(|f| f.unreachable(ENGINE, &self.url))?;
        if !parts.status.is_success() {
            return Err(EngineError::Rejected {
                engine: ENGINE,
                message: format!("{}: HTTP {}", self.url, parts.status),
                kind: storbench_metrics::ErrorKind::Other,
            });
        }
        let text = String::from_utf8_lossy(&body);
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .map_err(|e| EngineError::failed(ENGINE, format!("{}: not Prometheus's text format", self.url), e))
    }

    /// A reading's figures against the previous one's counters.
    fn values(&mut self, scrape: prometheus_parse::Scrape) -> Vec<Value> {
        self.values_at(scrape, Instant::now())
    }

    fn values_at(&mut self, scrape: prometheus_parse::Scrape, now: Instant) -> Vec<Value> {
        let figures = figures(scrape, &self.keep);
        let mut out: Vec<Value> = figures.gauges.iter().map(|(k, v)| value(&k.0, &k.1, *v)).collect();
        // Each counter's rise since it last moved, and over how long: an
        // exporter that caches its answer (Ceph's manager, for its
        // scrape_interval) or whose daemons report every few seconds
        // (mgr_stats_period) repeats a value, and a repeat is no figure,
        // not a second of nothing done.
        let mut rises: HashMap<&Key, f64> = HashMap::new();
        for (k, v) in &figures.counters {
            match self.moved.get(k).copied() {
                Some((p, _)) if *v == p => {}
                Some((p, at)) if *v > p => {
                    let dt = now.duration_since(at).as_secs_f64();
                    if dt > 0.0 {
                        rises.insert(k, v - p);
                        out.push(value(&format!("{}_per_s", k.0), &k.1, (v - p) / dt));
                    }
                    self.moved.insert(k.clone(), (*v, now));
                }
                // First seen, or gone down (the daemon restarted): counted from here.
                _ => {
                    self.moved.insert(k.clone(), (*v, now));
                }
            }
        }
        for (base, labels) in &figures.pairs {
            let rise = |suffix: &str| rises.get(&(format!("{base}{suffix}"), labels.clone())).copied();
            if let (Some(sum), Some(n)) = (rise("_sum"), rise("_count")) {
                if n > 0.0 && sum >= 0.0 {
                    out.push(value(&format!("{base}_mean"), labels, sum / n));
                }
            }
        }
        self.cap(out)
    }

    /// The series past [`MOST_SERIES`] left out (the first ones seen stay).
    fn cap(&mut self, values: Vec<Value>) -> Vec<Value> {
        values
            .into_iter()
            .filter(|v| {
                let k = (v.metric.clone(), v.labels.clone());
                if self.kept.contains(&k) {
                    return true;
                }
                if self.kept.len() < MOST_SERIES {
                    self.kept.insert(k);
                    return true;
                }
                self.dropped.insert(k);
                false
            })
            .collect()
    }

    /// Said once, when series were left out.
    fn dropped_note(&mut self) -> Option<String> {
        if self.dropped.is_empty() || self.said_dropped {
            return None;
        }
        self.said_dropped = true;
        Some(format!(
            "{}: {} series past the first {MOST_SERIES} were not kept; name the ones to keep with --scrape-keep NAME,...",
            self.name,
            self.dropped.len()
        ))
    }
}

impl Watched for Scrape {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Exporter
    }

    fn sample(&mut self) -> Result<Vec<Value>, EngineError> {
        let scrape = self.read()?;
        Ok(self.values(scrape))
    }

    fn notes(&mut self) -> Vec<String> {
        self.dropped_note().into_iter().collect()
    }
}

/// A reading sorted by what a second keeps of it.
#[derive(Default)]
struct Figures {
    gauges: Vec<(Key, f64)>,
    counters: Vec<(Key, f64)>,
    /// `_sum`/`_count` pairs: the name before the suffix, the labels.
    pairs: Vec<(String, BTreeMap<String, String>)>,
}

fn figures(scrape: prometheus_parse::Scrape, keep: &[String]) -> Figures {
    use prometheus_parse::Value as V;
    // A histogram's or a summary's _sum and _count come untyped from the parser.
    let families: HashSet<String> =
        scrape.samples.iter().filter(|s| matches!(s.value, V::Histogram(_) | V::Summary(_))).map(|s| s.metric.clone()).collect();
    let counted = |name: &str, typed: bool| {
        typed || name.ends_with("_total") || ["_sum", "_count"].iter().any(|x| name.strip_suffix(x).is_some_and(|b| families.contains(b)))
    };
    let mut f = Figures::default();
    let mut sums = Vec::new();
    for s in scrape.samples {
        if !kept(&s.metric, keep) {
            continue;
        }
        let labels: BTreeMap<String, String> = s.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let key = (s.metric.clone(), labels);
        match s.value {
            V::Counter(v) if v.is_finite() => f.counters.push((key, v)),
            V::Untyped(v) if v.is_finite() && counted(&s.metric, false) => f.counters.push((key, v)),
            V::Gauge(v) | V::Untyped(v) if v.is_finite() => f.gauges.push((key, v)),
            V::Summary(qs) => {
                for q in qs.into_iter().filter(|q| q.count.is_finite()) {
                    let mut labels = key.1.clone();
                    labels.insert("quantile".into(), q.quantile.to_string());
                    f.gauges.push(((key.0.clone(), labels), q.count));
                }
            }
            _ => {}
        }
    }
    for (k, _) in &f.counters {
        if let Some(base) = k.0.strip_suffix("_sum") {
            sums.push((base.to_string(), k.1.clone()));
        }
    }
    let has = |name: String, labels: &BTreeMap<String, String>| f.counters.iter().any(|(k, _)| k.0 == name && &k.1 == labels);
    f.pairs = sums.into_iter().filter(|(b, l)| has(format!("{b}_count"), l)).collect();
    f
}

/// Whether a metric name is one the run keeps.
fn kept(name: &str, keep: &[String]) -> bool {
    keep.is_empty() || keep.iter().any(|p| glob(p, name))
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn value(metric: &str, labels: &BTreeMap<String, String>, v: f64) -> Value {
    Value { metric: metric.to_string(), labels: labels.clone(), value: v }
}

/// The URL checked (http or https, a host, no credentials: they would be
/// kept with the results), and the source's name: its host and port, and
/// its path unless that is `/metrics`.
pub fn parse_url(url: &str) -> Result<(::http::Uri, String), EngineError> {
    // Credentials are looked for before anything quotes the URL: the error
    // goes to the terminal and the logs.
    // Any '@' at all: a password may hold '/', '#' or '?' itself.
    if let Some((_, after)) = url.rsplit_once('@') {
        let host = after.split(['/', '?', '#']).next().unwrap_or("");
        return Err(EngineError::BadOption {
            engine: ENGINE,
            option: "--scrape".into(),
            message: format!("the URL of {host}: credentials in a URL would be kept with the results; give an endpoint that needs none"),
        });
    }
    let bad = |why: &str| EngineError::BadOption { engine: ENGINE, option: "--scrape".into(), message: format!("'{url}': {why}") };
    let uri: ::http::Uri = url.parse().map_err(|_| bad("not a URL (give http://HOST:PORT/metrics)"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(bad("not an http or https URL (give http://HOST:PORT/metrics)"));
    }
    let Some(auth) = uri.authority() else { return Err(bad("no host in it")) };
    let path = uri.path();
    let name = match path {
        "/metrics" | "/" | "" => auth.as_str().to_string(),
        p => format!("{}{p}", auth.as_str()),
    };
    Ok((uri, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> prometheus_parse::Scrape {
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
    }

    const CEPH: &str = "# HELP ceph_osd_apply_latency_ms OSD stat apply_latency_ms\n\
# TYPE ceph_osd_apply_latency_ms gauge\n\
ceph_osd_apply_latency_ms{ceph_daemon=\"osd.0\"} 3.0\n\
# TYPE ceph_osd_op_w counter\n\
ceph_osd_op_w{ceph_daemon=\"osd.0\"} 1000.0\n\
# TYPE ceph_osd_op_w_latency_sum counter\n\
ceph_osd_op_w_latency_sum{ceph_daemon=\"osd.0\"} 10.0\n\
# TYPE ceph_osd_op_w_latency_count counter\n\
ceph_osd_op_w_latency_count{ceph_daemon=\"osd.0\"} 1000.0\n\
# TYPE rpc_seconds summary\n\
rpc_seconds{quantile=\"0.99\"} 0.25\n\
rpc_seconds_sum 5\n\
rpc_seconds_count 10\n\
# TYPE h histogram\n\
h_bucket{le=\"1\"} 3\n\
h_bucket{le=\"+Inf\"} 4\n\
h_sum 2\n\
h_count 4\n\
up 1\n";

    #[test]
    fn gauges_counters_pairs_and_quantiles_are_sorted_apart() {
        let f = figures(parse(CEPH), &[]);
        let names = |v: &[(Key, f64)]| v.iter().map(|(k, _)| k.0.clone()).collect::<Vec<_>>();
        let mut gauges = names(&f.gauges);
        gauges.sort();
        assert_eq!(gauges, ["ceph_osd_apply_latency_ms", "rpc_seconds", "up"]);
        let mut counters = names(&f.counters);
        counters.sort();
        assert_eq!(
            counters,
            [
                "ceph_osd_op_w",
                "ceph_osd_op_w_latency_count",
                "ceph_osd_op_w_latency_sum",
                "h_count",
                "h_sum",
                "rpc_seconds_count",
                "rpc_seconds_sum"
            ]
        );
        let mut bases: Vec<&str> = f.pairs.iter().map(|p| p.0.as_str()).collect();
        bases.sort();
        assert_eq!(bases, ["ceph_osd_op_w_latency", "h", "rpc_seconds"]);
        let q = f.gauges.iter().find(|(k, _)| k.0 == "rpc_seconds").unwrap();
        assert_eq!((q.0 .1["quantile"].as_str(), q.1), ("0.99", 0.25));
    }

    #[test]
    fn counters_become_rates_and_pairs_means_from_the_second_reading_on() {
        let (uri, name) = parse_url("http://127.0.0.1:1/metrics").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let client = {
            let _g = rt.enter();
            let common = Common { op_timeout: LIMIT, connect_timeout: LIMIT, retries: 0, tls: Default::default(), connect_to: None };
            client(&common, &super::super::tls::client_config(ENGINE, &common.tls).unwrap())
        };
        let mut s = Scrape {
            name,
            url: String::new(),
            uri,
            rt,
            client,
            keep: vec!["ceph_*".into()],
            moved: HashMap::new(),
            kept: HashSet::new(),
            dropped: HashSet::new(),
            said_dropped: false,
        };
        let t0 = Instant::now();
        let first = s.values_at(parse(CEPH), t0);
        assert_eq!(first.iter().map(|v| v.metric.as_str()).collect::<Vec<_>>(), ["ceph_osd_apply_latency_ms"], "no rate from one reading");
        let later = CEPH
            .replace("ceph_osd_op_w{ceph_daemon=\"osd.0\"} 1000.0", "ceph_osd_op_w{ceph_daemon=\"osd.0\"} 1500.0")
            .replace("latency_sum{ceph_daemon=\"osd.0\"} 10.0", "latency_sum{ceph_daemon=\"osd.0\"} 12.0")
            .replace("latency_count{ceph_daemon=\"osd.0\"} 1000.0", "latency_count{ceph_daemon=\"osd.0\"} 1500.0");
        let second = s.values_at(parse(&later), t0 + Duration::from_millis(500));
        let get = |m: &str| second.iter().find(|v| v.metric == m).map(|v| v.value);
        assert_eq!(get("ceph_osd_op_w_per_s"), Some(1000.0), "500 more over half a second");
        assert_eq!(get("ceph_osd_op_w_latency_mean"), Some(2.0 / 500.0), "2 s over 500 operations");
        assert_eq!(second.iter().find(|v| v.metric == "ceph_osd_op_w_per_s").unwrap().labels["ceph_daemon"], "osd.0");
        // A repeated answer (a cached one): no rate, not a rate of zero; the
        // next move is a rate over the time since the last one.
        let repeat = s.values_at(parse(&later), t0 + Duration::from_millis(1500));
        assert!(repeat.iter().all(|v| !v.metric.ends_with("_per_s") && !v.metric.ends_with("_mean")), "{repeat:?}");
        let moved = later.replace("ceph_osd_op_w{ceph_daemon=\"osd.0\"} 1500.0", "ceph_osd_op_w{ceph_daemon=\"osd.0\"} 3500.0");
        let fourth = s.values_at(parse(&moved), t0 + Duration::from_millis(2500));
        assert_eq!(fourth.iter().find(|v| v.metric == "ceph_osd_op_w_per_s").map(|v| v.value), Some(1000.0), "2000 more over 2 s");
        // A restarted daemon's counter went down: no rate that second.
        let third = s.values_at(parse(CEPH), t0 + Duration::from_millis(3500));
        assert!(third.iter().all(|v| v.metric != "ceph_osd_op_w_per_s"), "{third:?}");
    }

    #[test]
    fn keep_patterns_match_whole_names_with_stars() {
        assert!(glob("ceph_osd_*", "ceph_osd_op_w"));
        assert!(glob("*latency*", "ceph_osd_op_w_latency_sum"));
        assert!(glob("up", "up"));
        assert!(!glob("up", "upper"));
        assert!(!glob("ceph_*_ms", "ceph_osd_op_w"));
        assert!(glob("ceph_*_ms", "ceph_osd_apply_latency_ms"));
        let f = figures(parse(CEPH), &["ceph_osd_op_w*".to_string()]);
        assert!(f.gauges.is_empty() && f.counters.len() == 3 && f.pairs.len() == 1);
    }

    #[test]
    fn urls_are_checked_and_named_by_host_and_port() {
        assert_eq!(parse_url("http://127.0.0.1:9283/metrics").unwrap().1, "127.0.0.1:9283");
        assert_eq!(parse_url("https://node1:9100/x/metrics").unwrap().1, "node1:9100/x/metrics");
        let e = parse_url("http://u:secret@h:1/metrics").unwrap_err().to_string();
        assert!(e.contains("credentials in a URL") && e.contains("--scrape") && !e.contains("secret"), "{e}");
        assert!(parse_url("ftp://h/metrics").unwrap_err().to_string().contains("not an http or https URL"));
        for leaky in ["ftp://u:pw1@h/metrics", "http://u:p#w1@h:1/metrics", "u:pw1@h:1"] {
            let e = parse_url(leaky).unwrap_err().to_string();
            assert!(e.contains("credentials in a URL") && !e.contains("pw1") && !e.contains("p#w1"), "{leaky}: {e}");
        }
        assert!(parse_url("not a url").is_err());
    }
}
