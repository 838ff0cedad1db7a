//! `--prometheus ADDR`: the live figures scraped as Prometheus would, while
//! a run goes, on this machine and on a fleet.

mod common;

use common::fleet::{fleet_dir, Agent};
use common::*;
use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::time::Duration;

/// `GET /metrics` (status line checked), the body.
fn scrape(addr: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("the metrics endpoint listens while the run goes");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200") && head.to_lowercase().contains("text/plain; version=0.0.4"), "{head}");
    body.to_string()
}

/// Every sample line, `name{labels}` -> value; every line is a comment or a sample.
fn samples(body: &str) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for line in body.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
        out.insert(key.to_string(), value.parse().unwrap_or_else(|_| panic!("not a number: {line}")));
    }
    out
}

/// Counters and histograms agree for one job, operation and agent.
fn check_series(s: &HashMap<String, f64>, labels: &str) -> f64 {
    let ops = s[&format!("storbench_operations_total{{{labels}}}")];
    assert!(ops > 0.0, "{labels}: operations counted while the run goes");
    assert_eq!(s[&format!("storbench_latency_seconds_count{{{labels}}}")], ops);
    assert_eq!(s[&format!("storbench_latency_seconds_bucket{{{labels},le=\"+Inf\"}}")], ops);
    let mut last = 0.0;
    for le in ["0.000001", "0.00001", "0.0001", "0.001", "0.01", "0.1", "1", "10", "100"] {
        let b = s[&format!("storbench_latency_seconds_bucket{{{labels},le=\"{le}\"}}")];
        assert!(b >= last, "{labels}: buckets are cumulative");
        last = b;
    }
    assert!(s[&format!("storbench_bytes_total{{{labels}}}")] >= ops * 4096.0);
    ops
}

#[test]
fn a_local_run_serves_its_figures_while_it_goes_and_stops_serving_after() {
    let dir = scratch();
    let addr = "127.0.0.1:19464";
    let child = std::process::Command::new(bin())
        .args(["run", "--prometheus", addr, "--results-dir", "out", "--quiet", "--name", "n", "--ioengine", "null", "--runtime", "4"])
        .args(["--fault", "1s:exec:true", "--allow-exec"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let first = samples(&scrape(addr));
    let ops1 = check_series(&first, "job=\"n\",op=\"read\",agent=\"local\"");
    std::thread::sleep(Duration::from_millis(1200));
    let second = samples(&scrape(addr));
    let ops2 = check_series(&second, "job=\"n\",op=\"read\",agent=\"local\"");
    assert!(ops2 > ops1, "a counter that grows each second: {ops1} then {ops2}");
    // The host's telemetry and the fault beside the run, live too.
    let busy = second.get("storbench_host_cpu_busy_pct{source=\"local\",role=\"client\"}").copied();
    assert!(busy.is_some_and(|b| (0.0..=100.0).contains(&b)), "the host's CPU as a gauge: {second:?}");
    assert!(second.keys().any(|k| k.starts_with("storbench_host_run_cpu_cores{")), "{second:?}");
    assert_eq!(second.get("storbench_faults_total{fault=\"exec\",outcome=\"done\"}"), Some(&1.0), "{second:?}");
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("http://{addr}/metrics")));
    assert_eq!(out.status.code(), Some(0));
    assert!(std::net::TcpStream::connect(addr).is_err(), "the endpoint closes with the command");
    // What the run measured is at least what was scraped before its end.
    assert!(run_result(&dir.path().join("out")).jobs[0].ops[0].ios as f64 >= ops2);
}

#[test]
fn a_fleet_run_labels_each_agents_figures() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let agents: Vec<Agent> =
        (1..=2).map(|i| Agent::start(None, &format!("127.0.0.5{i}:7450"), &fleet, dir.path().join(format!("agent{i}.log")), &[])).collect();
    let addr = "127.0.0.1:19465";
    let child = std::process::Command::new(bin())
        .args(["run", "--agents", "127.0.0.51,127.0.0.52", "--fleet-dir", fleet.to_str().unwrap(), "--prometheus", addr])
        .args(["--results-dir", "out", "--quiet", "--name", "f", "--ioengine", "null", "--runtime", "4"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    agents[1].wait_for("connected", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(3000));
    let s = samples(&scrape(addr));
    for a in ["127.0.0.51:7450", "127.0.0.52:7450"] {
        check_series(&s, &format!("job=\"f\",op=\"read\",agent=\"{a}\""));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
