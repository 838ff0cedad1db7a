//! Watched hosts: real `storbench agent --monitor` processes on their own
//! 127.0.0.x addresses that a run lists under `--watch`: they run none of
//! the load, and their CPU, disks and network land in the run's telemetry
//! as `watched` sources on the client's seconds.

mod common;

use common::fleet::{fleet_dir, Agent};
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};
use storbench_model::telemetry::{metric, Source, SourceKind};
use storbench_model::{RunResult, Warning};

/// A run of `runtime` s on a file of `dir` (direct I/O, so the host's
/// disk sees it), with `extra` flags.
fn file_run(dir: &Path, fleet: &Path, runtime: &str, extra: &[&str]) -> Vec<String> {
    let file = dir.join("w.dat");
    let flags = ["run", "--fleet-dir", fleet.to_str().unwrap(), "--results-dir", "out", "--quiet"];
    let job = [
        "--name",
        "w",
        "--ioengine",
        "psync",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--size",
        "8m",
        "--direct",
        "1",
        "--filename",
        file.to_str().unwrap(),
        "--runtime",
        runtime,
        "--time_based",
        "1",
        "--unlink",
        "1",
    ];
    flags.iter().chain(extra).chain(&job).map(|w| w.to_string()).collect()
}

fn words(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn source<'a>(r: &'a RunResult, name: &str) -> &'a Source {
    let t = r.telemetry.as_ref().expect("the run's telemetry");
    t.sources
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no source {name}: {:?}", t.sources.iter().map(|s| &s.name).collect::<Vec<_>>()))
}

/// The job's whole seconds (ends on the run's axis, one group).
fn client_seconds(r: &RunResult) -> Vec<f64> {
    r.jobs[0].series.iter().filter(|p| (p.duration - 1.0).abs() < 1e-3).map(|p| p.t).collect()
}

/// A watched source's seconds are the client's: each whole second of the
/// job but the last (whose reading may come after the run closed) is one
/// of its seconds, and it has none the run did not.
fn assert_on_the_clients_seconds(r: &RunResult, watched: &Source) {
    let client = client_seconds(r);
    assert!(client.len() >= 2, "the job's seconds: {client:?}");
    let last = client.iter().copied().fold(0.0, f64::max);
    for c in client.iter().filter(|c| **c < last) {
        assert!(watched.t.contains(c), "{}: the client's second ending at {c} s is not one of its seconds {:?}", watched.name, watched.t);
    }
    assert!(watched.t.iter().all(|t| *t <= last + 1e-6), "{}: seconds past the run's end: {:?} (run {client:?})", watched.name, watched.t);
}

/// CPU every second, and disk and network series.
fn assert_cpu_disk_and_network(s: &Source) {
    let cpu = s.get(metric::CPU_BUSY).unwrap_or_else(|| panic!("{}: no CPU series", s.name));
    assert_eq!(cpu.present().count(), s.t.len(), "{}: CPU every second: {:?}", s.name, cpu.values);
    assert!(s.all(metric::DISK_UTIL).next().is_some(), "{}: no disk series", s.name);
    assert!(s.all(metric::NIC_RX_BYTES).next().is_some(), "{}: no network series", s.name);
}

#[test]
fn a_local_run_watches_a_server_on_its_own_seconds() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let _server = Agent::start(None, "127.0.0.131:7450", &fleet, dir.path().join("server.log"), &["--monitor", "--name", "server1"]);
    let t0 = Instant::now();
    let run = storbench(dir.path(), &words(&file_run(dir.path(), &fleet, "3", &["--watch", "127.0.0.131"])));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(t0.elapsed() < Duration::from_secs(60), "took {:?}", t0.elapsed());
    assert!(run.stderr.contains("watched host 127.0.0.131:7450 (server1"), "{}", run.stderr);
    let out = dir.path().join("out");
    assert_valid(&result_json(&out));
    let r = run_result(&out);
    assert!(r.agents.is_empty(), "a watched host is no agent: {:?}", r.agents);
    assert!(r.jobs[0].per_agent.is_empty(), "and takes no share of the jobs");
    let local = source(&r, "local");
    let server = source(&r, "127.0.0.131:7450");
    assert_eq!((local.kind, server.kind), (SourceKind::Client, SourceKind::Watched));
    // Its sampler names the machine it runs on: this one, here.
    assert_eq!(server.hostname, local.hostname);
    assert_on_the_clients_seconds(&r, server);
    assert_cpu_disk_and_network(server);
    assert!(r.warnings.iter().all(|w| !matches!(w, Warning::WatchedHostLost { .. })), "{:?}", r.warnings);
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("watched host 127.0.0.131:7450 ("), "{summary}");
    assert!(std::fs::read_to_string(out.join("hosts.csv")).unwrap().contains("127.0.0.131:7450,watched,"));
    let html = storbench(dir.path(), &["report", "out"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("watched host 127.0.0.131:7450: CPU busy per second"), "the Hosts section charts the watched host");
}

#[test]
fn a_fleet_run_watches_a_server_beside_its_agents() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let _agents: Vec<Agent> = (2..=3)
        .map(|i| Agent::start(None, &format!("127.0.0.13{i}:7450"), &fleet, dir.path().join(format!("agent{i}.log")), &[]))
        .collect();
    let _server = Agent::start(None, "127.0.0.134:7450", &fleet, dir.path().join("server.log"), &["--monitor"]);
    let fleet_dir = fleet.to_str().unwrap();
    let args = [
        "run",
        "--agents",
        "127.0.0.132,127.0.0.133",
        "--watch",
        "127.0.0.134",
        "--fleet-dir",
        fleet_dir,
        "--results-dir",
        "out",
        "--quiet",
        "--name",
        "n",
        "--ioengine",
        "null",
        "--runtime",
        "3",
        "--time_based",
        "1",
    ];
    let run = storbench(dir.path(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run_result(&dir.path().join("out"));
    assert_eq!(r.agents.len(), 2, "the agents only");
    assert_eq!(r.jobs[0].per_agent.len(), 2);
    let server = source(&r, "127.0.0.134:7450");
    assert_eq!(server.kind, SourceKind::Watched);
    assert_on_the_clients_seconds(&r, server);
    for a in ["127.0.0.132:7450", "127.0.0.133:7450"] {
        assert_eq!(source(&r, a).kind, SourceKind::Client);
    }
    assert!(server.get(metric::CPU_BUSY).is_some() && server.all(metric::NIC_RX_BYTES).next().is_some());
    // The coordinator, which ran none of the load, measured itself on the same seconds.
    let coordinator = source(&r, "coordinator");
    assert_eq!(coordinator.kind, SourceKind::Watched);
    assert!(coordinator.cpus > 0 && coordinator.get(metric::CPU_BUSY).is_some() && coordinator.get(metric::RUN_CPU).is_some());
    assert_on_the_clients_seconds(&r, coordinator);
}

#[test]
fn a_monitor_refuses_jobs_an_agent_is_no_watcher_and_an_unreachable_one_is_named() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let server = Agent::start(None, "127.0.0.135:7450", &fleet, dir.path().join("server.log"), &["--monitor"]);
    let agent = Agent::start(None, "127.0.0.136:7450", &fleet, dir.path().join("agent.log"), &[]);
    let refused = |extra: &[&str], says: &[&str]| {
        let t0 = Instant::now();
        let r = storbench(dir.path(), &words(&file_run(dir.path(), &fleet, "1", &[&["--agent-timeout", "3s"], extra].concat())));
        // Found only at the host, as a wrong token or protocol version: exit 3.
        assert_eq!(r.code, 3, "{extra:?}: {}", r.stderr);
        assert!(t0.elapsed() < Duration::from_secs(30), "{extra:?} took {:?}", t0.elapsed());
        for s in says {
            assert!(r.stderr.contains(s), "{extra:?}: no '{s}' in {}", r.stderr);
        }
        assert!(!dir.path().join("out").exists() && !dir.path().join("w.dat").exists(), "{extra:?}: nothing written");
    };
    refused(
        &["--agents", "127.0.0.135"],
        &["agent 127.0.0.135:7450: this agent only watches (--monitor): list it under --watch, not --agents"],
    );
    refused(&["--watch", "127.0.0.136"], &["watched host 127.0.0.136:7450: this agent runs load", "--monitor"]);
    refused(&["--watch", "127.0.0.135,127.0.0.139"], &["watched host 127.0.0.139:7450: could not connect"]);
    // Both are still there for the next run.
    let r = storbench(dir.path(), &words(&file_run(dir.path(), &fleet, "1", &["--agents", "127.0.0.136", "--watch", "127.0.0.135"])));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(server.log_text().contains("run finished"), "{}", server.log_text());
    drop((server, agent));
}

#[test]
fn a_watched_host_lost_mid_run_is_a_warning_and_keeps_its_seconds() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let mut server = Agent::start(None, "127.0.0.137:7450", &fleet, dir.path().join("server.log"), &["--monitor"]);
    let args = file_run(dir.path(), &fleet, "6", &["--watch", "127.0.0.137"]);
    let c = std::process::Command::new(bin())
        .args(words(&args))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_for("connected", Duration::from_secs(30));
    // Two of its seconds in, the server's storbench dies.
    std::thread::sleep(Duration::from_millis(2600));
    server.kill();
    let t0 = Instant::now();
    let out = c.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30), "the run went on to its end: {:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r = run_result(&dir.path().join("out"));
    let lost: Vec<&str> = r
        .warnings
        .iter()
        .filter_map(|w| match w {
            Warning::WatchedHostLost { host, .. } => Some(host.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(lost, vec!["127.0.0.137:7450"], "{:?}", r.warnings);
    let kept = source(&r, "127.0.0.137:7450");
    assert!(!kept.t.is_empty() && kept.t.len() < 6, "the seconds before it was lost: {:?}", kept.t);
    assert!(client_seconds(&r).len() >= 5, "the run's own seconds are whole: {:?}", client_seconds(&r));
    assert!(std::fs::read_to_string(dir.path().join("out/summary.txt")).unwrap().contains("watched host 127.0.0.137:7450 was lost"));
}

#[test]
fn a_monitor_whose_coordinator_stops_answering_stops_within_its_timeout() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let server = Agent::start(None, "127.0.0.138:7450", &fleet, dir.path().join("server.log"), &["--monitor", "--timeout", "2s"]);
    let args = file_run(dir.path(), &fleet, "60", &["--watch", "127.0.0.138"]);
    // The coordinator itself, not a launcher of it in a session of its own.
    let mut c = std::process::Command::new(bin())
        .args(words(&args))
        .env("STORBENCH_SAME_SESSION", "1")
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    server.wait_for("connected", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(1500));
    // Stopped, not gone: its connection stays open and silent (a hung or
    // suspended coordinator); keepalive finds it.
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(c.id() as i32, libc::SIGSTOP) };
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs(20);
    while !server.log_text().contains("watching stopped") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = t0.elapsed();
    let _ = c.kill();
    let _ = c.wait();
    assert!(server.log_text().contains("the coordinator went away: watching stopped"), "{}", server.log_text());
    assert!(took < Duration::from_secs(10), "stopped after {took:?}");
}

/// Issue 30's check: a run against the Ceph cluster with two agents and one
/// watched host shows CPU, disk and network series for every host, each on
/// the run's seconds.
#[test]
fn two_agents_and_a_watched_host_against_the_ceph_cluster_each_show_cpu_disk_and_network() {
    if !ceph_cluster() {
        return;
    }
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    // On their own loopback addresses: the test cluster listens on 127.0.0.1 only.
    let _agents: Vec<Agent> = (1..=2)
        .map(|i| Agent::start(None, &format!("127.0.0.15{i}:7450"), &fleet, dir.path().join(format!("agent{i}.log")), &[]))
        .collect();
    let _server = Agent::start(None, "127.0.0.153:7450", &fleet, dir.path().join("server.log"), &["--monitor"]);
    let p = format!("sbwatch.{}.", std::process::id());
    let args = [
        "run",
        "--agents",
        "127.0.0.151,127.0.0.152",
        "--watch",
        "127.0.0.153",
        "--fleet-dir",
        fleet.to_str().unwrap(),
        "--results-dir",
        "out",
        "--quiet",
        "--name",
        "put",
        "--ioengine",
        "rados",
        "--pool",
        "storbench",
        "--object_prefix",
        &p,
        "--objects",
        "64",
        "--object_size",
        "4k",
        "--rw",
        "randwrite",
        "--iodepth",
        "4",
        "--runtime",
        "3",
        "--time_based",
        "1",
    ];
    let run = storbench(dir.path(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run_result(&dir.path().join("out"));
    let sources = &r.telemetry.as_ref().expect("telemetry").sources;
    // The two agents, the watched server and the coordinator.
    assert_eq!(sources.len(), 4, "{:?}", sources.iter().map(|s| &s.name).collect::<Vec<_>>());
    for name in ["127.0.0.151:7450", "127.0.0.152:7450", "127.0.0.153:7450"] {
        let s = source(&r, name);
        assert_eq!(s.kind == SourceKind::Watched, name.ends_with("153:7450"), "{name}: {:?}", s.kind);
        assert_on_the_clients_seconds(&r, s);
        assert_cpu_disk_and_network(s);
    }
    assert!(rados_objects("storbench", &p).is_empty(), "the agents removed their objects");
}

/// A server process on a watched host, frozen and thawed by the run's
/// faults through the host's monitor (`proc-stop:PID@HOST`), the last stop
/// thawed by the monitor as the run ends; a monitor without
/// `--allow-signal`, a name it does not allow and a host not watched are
/// refused before anything runs.
#[test]
fn a_watched_hosts_process_is_stopped_by_the_schedule_and_continued_by_its_monitor() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let _server = Agent::start(None, "127.0.0.141:7450", &fleet, dir.path().join("server.log"), &["--monitor", "--allow-signal", "sleep"]);
    let _closed = Agent::start(None, "127.0.0.142:7450", &fleet, dir.path().join("closed.log"), &["--monitor"]);
    let mut daemon = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let pid = daemon.id().to_string();
    let state =
        || std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| s.rsplit(')').next()?.trim_start().chars().next());
    let fault = |at: &str, what: &str, host: &str| format!("{at}:{what}:{pid}@{host}");
    let null_run = |extra: &[String]| {
        let mut a: Vec<String> = ["run", "--fleet-dir", fleet.to_str().unwrap(), "--results-dir", "out", "--quiet", "--allow-exec"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        a.extend(extra.iter().cloned());
        a.extend(["--name", "x", "--ioengine", "null", "--runtime", "5", "--time_based", "1"].map(String::from));
        a
    };
    for (watch, f, says, code) in [
        ("127.0.0.142", fault("1s", "proc-stop", "127.0.0.142"), "lets no run signal its processes", 2),
        ("127.0.0.141", "1s:proc-stop:cat@127.0.0.141".to_string(), "allows signals to sleep only", 2),
        ("127.0.0.141", fault("1s", "proc-stop", "127.0.0.9"), "127.0.0.9 is not under --watch", 2),
    ] {
        let r = storbench(dir.path(), &words(&null_run(&["--watch".into(), watch.into(), "--fault".into(), f.clone()])));
        assert_eq!(r.code, code, "{f}: {}", r.stderr);
        assert!(r.stderr.contains(says) && r.stderr.contains("--allow-signal"), "{f}: {}", r.stderr);
        assert!(!dir.path().join("out").exists(), "{f}: nothing written");
    }
    let (stop1, cont, stop2) =
        (fault("1s", "proc-stop", "127.0.0.141"), fault("2s", "proc-cont", "127.0.0.141"), fault("3s", "proc-stop", "127.0.0.141"));
    let extra: Vec<String> = ["--watch", "127.0.0.141", "--fault", &stop1, "--fault", &cont, "--fault", &stop2].map(String::from).to_vec();
    let child = std::process::Command::new(bin())
        .args(words(&null_run(&extra)))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for _ in 0..60 {
        if let Some(c) = state().filter(|c| matches!(c, 'S' | 'T')) {
            if !seen.ends_with(c) {
                seen.push(c);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(200));
    let after = state();
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(seen.starts_with("STST"), "asleep, stopped, asleep, stopped again: {seen}");
    assert_eq!(after, Some('S'), "continued by the monitor when the run ended");
    let dis = run_result(&dir.path().join("out")).disruption.unwrap();
    let said: Vec<(String, &str)> = dis.events.iter().map(|e| (e.action.words(), e.outcome())).collect();
    let expect = [
        (stop1[3..].to_string(), "done"),
        (cont[3..].to_string(), "done"),
        (stop2[3..].to_string(), "done"),
        // Named as the schedule named the host.
        (format!("proc-cont:{pid}@127.0.0.141"), "undone"),
    ];
    assert_eq!(said, expect, "{:?}", dis.events);
    assert_eq!(dis.events[0].answer, format!("stopped process {pid}"));
    assert!(dis.events[3].answer.contains("by 127.0.0.141's monitor as the run ended"), "{:?}", dis.events[3]);
    assert_valid(&result_json(&dir.path().join("out")));
}
