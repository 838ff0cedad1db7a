//! `storbench fleet k8s`: the manifest it writes, parsed into the Kubernetes
//! API types (k8s-openapi), so a misspelt field or a wrong type fails here
//! and not at `kubectl apply`. The commands it gives the pods are run here
//! too, against a real agent on a loopback address: the flags are the real
//! ones, and the agents' readiness probes do not use up their --once.

mod common;

use common::fleet::fleet_dir;
use common::*;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Secret, Service};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const IMAGE: &str = "registry.example/storbench:0.1";

/// `storbench fleet k8s` for `agents` agents with the fleet directory `fleet`, into `out`.
fn generate(dir: &Path, fleet: &Path, out: &str, agents: &str, extra: &[&str]) -> Run {
    let base = ["fleet", "k8s", "--name", "bench", "--agents", agents, "--image", IMAGE, "--fleet-dir", fleet.to_str().unwrap(), "-o", out];
    storbench(dir, &[&base[..], extra].concat())
}

/// The manifest's items (it must be one `v1` `List`).
fn read_items(path: &Path) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("manifest written")).expect("the manifest is JSON");
    assert_eq!((doc["apiVersion"].as_str(), doc["kind"].as_str()), (Some("v1"), Some("List")), "one List for kubectl apply -f");
    doc["items"].as_array().expect("items").clone()
}

/// Parse an item as a Kubernetes type, and require it to serialize back to
/// the same JSON: a field the API does not know would be dropped on the way.
fn parse<T: k8s_openapi::serde::de::DeserializeOwned + k8s_openapi::serde::Serialize>(item: &Value) -> T {
    let t: T = serde_json::from_value(item.clone()).unwrap_or_else(|e| panic!("{e}: {item:#}"));
    assert_eq!(&serde_json::to_value(&t).unwrap(), item, "every field is one of the API's");
    t
}

fn one<'a>(items: &'a [Value], kind: &str, name: &str) -> &'a Value {
    let found: Vec<_> = items.iter().filter(|i| i["kind"] == kind && i["metadata"]["name"] == name).collect();
    assert_eq!(found.len(), 1, "one {kind} {name} in {items:#?}");
    found[0]
}

fn pod_containers(job: &Job) -> (&Vec<Container>, Option<&Vec<Container>>) {
    let spec = job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    (&spec.containers, spec.init_containers.as_ref())
}

/// The value after `flag` in a command line.
fn after<'a>(words: &'a [String], flag: &str) -> &'a str {
    let i = words.iter().position(|w| w == flag).unwrap_or_else(|| panic!("{flag} in {words:?}"));
    &words[i + 1]
}

fn command_line(c: &Container) -> Vec<String> {
    c.command.iter().flatten().chain(c.args.iter().flatten()).cloned().collect()
}

#[test]
fn the_manifest_is_kubernetes_objects_for_a_fleet_and_its_coordinator() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    std::fs::write(dir.path().join("jobs.toml"), "[[job]]\nname = \"k\"\nioengine = \"null\"\nruntime = 1\n").unwrap();
    let r = generate(dir.path(), &fleet, "out.json", "3", &["--job", "jobs.toml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = dir.path().join("out.json");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the manifest holds the fleet's keys");
    let items = read_items(&out);
    assert_eq!(items.len(), 5, "{items:#?}");
    for i in &items {
        let labels = &i["metadata"]["labels"];
        assert_eq!(
            (labels["app.kubernetes.io/part-of"].as_str(), labels["app.kubernetes.io/instance"].as_str()),
            (Some("storbench"), Some("bench"))
        );
        assert!(i["metadata"].get("namespace").is_none(), "no --namespace: kubectl's own");
    }

    let secret: Secret = parse(one(&items, "Secret", "bench-fleet"));
    let data = secret.data.unwrap();
    let names: Vec<&str> = data.keys().map(String::as_str).collect();
    assert_eq!(names, ["agent.key", "agent.pem", "ca.pem", "coordinator.key", "coordinator.pem", "token"], "never ca.key");
    for (name, bytes) in &data {
        assert_eq!(bytes.0, std::fs::read(fleet.join(name)).unwrap(), "{name} as in the fleet directory");
    }

    let service: Service = parse(one(&items, "Service", "bench-agents"));
    let sspec = service.spec.unwrap();
    assert_eq!(sspec.cluster_ip.as_deref(), Some("None"), "headless: one DNS name per agent");
    assert_eq!(sspec.ports.unwrap()[0].port, 7450);

    let agents: Job = parse(one(&items, "Job", "bench-agents"));
    let spec = agents.spec.as_ref().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism, spec.backoff_limit), (Some(3), Some(3), Some(0)));
    let pod = spec.template.spec.as_ref().unwrap();
    assert_eq!(pod.subdomain.as_deref(), Some("bench-agents"), "pod i is bench-agents-i.bench-agents");
    assert_eq!(pod.subdomain.as_deref(), service.metadata.name.as_deref());
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    let pod_labels = spec.template.metadata.as_ref().unwrap().labels.clone().unwrap();
    let selector = sspec.selector.unwrap();
    assert!(!selector.is_empty() && selector.iter().all(|(k, v)| pod_labels.get(k) == Some(v)), "{selector:?} selects {pod_labels:?}");
    let (containers, _) = pod_containers(&agents);
    assert_eq!(containers.len(), 1);
    let agent = &containers[0];
    assert_eq!(agent.image.as_deref(), Some(IMAGE));
    let words = command_line(agent);
    assert_eq!(&words[..2], ["storbench", "agent"]);
    assert!(words.contains(&"--once".to_string()), "{words:?}");
    assert_eq!(after(&words, "--fleet-dir"), "/fleet");
    assert_eq!(after(&words, "--listen"), "0.0.0.0:7450");
    assert_eq!(after(&words, "--name"), "$(POD_NAME)");
    let env = agent.env.as_ref().unwrap();
    assert!(env.iter().any(|e| e.name == "POD_NAME"
        && e.value_from.as_ref().and_then(|v| v.field_ref.as_ref()).map(|f| f.field_path.as_str()) == Some("metadata.name")));
    assert_eq!(
        agent.readiness_probe.as_ref().unwrap().tcp_socket.as_ref().unwrap().port,
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(7450)
    );
    assert_eq!(agent.ports.as_ref().unwrap()[0].container_port, 7450);
    let mounts = agent.volume_mounts.as_ref().unwrap();
    assert!(mounts.iter().any(|m| m.mount_path == "/fleet" && m.read_only == Some(true)));
    let secret_volume = pod.volumes.as_ref().unwrap().iter().find_map(|v| v.secret.as_ref()).expect("the Secret as a volume");
    assert_eq!((secret_volume.secret_name.as_deref(), secret_volume.default_mode), (Some("bench-fleet"), Some(0o400)));

    let config: ConfigMap = parse(one(&items, "ConfigMap", "bench-job"));
    let jobs: BTreeMap<String, String> = config.data.unwrap();
    assert_eq!(jobs.get("jobs.toml").map(String::as_str), Some(std::fs::read_to_string(dir.path().join("jobs.toml")).unwrap().as_str()));

    let coordinator: Job = parse(one(&items, "Job", "bench-coordinator"));
    let cspec = coordinator.spec.as_ref().unwrap();
    assert_eq!(cspec.backoff_limit, Some(0));
    let cpod = cspec.template.spec.as_ref().unwrap();
    assert_eq!(cpod.restart_policy.as_deref(), Some("Never"));
    let clabels = coordinator.spec.as_ref().unwrap().template.metadata.as_ref().unwrap().labels.clone().unwrap();
    assert!(selector_misses(&pod_labels, &clabels), "the agents' Service does not select the coordinator");
    let (containers, init) = pod_containers(&coordinator);
    let words = command_line(&containers[0]);
    assert!(words.contains(&"run".to_string()), "{words:?}");
    assert_eq!(
        after(&words, "--agents"),
        "bench-agents-0.bench-agents:7450,bench-agents-1.bench-agents:7450,bench-agents-2.bench-agents:7450"
    );
    assert_eq!(after(&words, "--fleet-dir"), "/fleet");
    let job_path = words.last().unwrap();
    let jobs_mount = containers[0].volume_mounts.as_ref().unwrap().iter().find(|m| m.name == "jobs").expect("the ConfigMap mounted");
    assert_eq!(job_path, &format!("{}/jobs.toml", jobs_mount.mount_path), "the job file from the ConfigMap");
    let volumes = cpod.volumes.as_ref().unwrap();
    assert!(volumes.iter().any(|v| v.config_map.as_ref().map(|c| c.name.as_str()) == Some("bench-job")));
    assert!(volumes.iter().any(|v| v.empty_dir.is_some()), "results on an emptyDir");
    let init = init.expect("a wait for the agents");
    assert_eq!(
        init[0].args.as_ref().unwrap(),
        &["bench-agents-0.bench-agents", "bench-agents-1.bench-agents", "bench-agents-2.bench-agents"]
    );
}

/// The coordinator's labels do not carry the agents' selector.
fn selector_misses(agent: &BTreeMap<String, String>, coordinator: &BTreeMap<String, String>) -> bool {
    agent.get("app.kubernetes.io/name") != coordinator.get("app.kubernetes.io/name")
}

#[test]
fn a_fio_file_a_namespace_and_no_job_file() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    std::fs::write(dir.path().join("r.fio"), "[r]\nioengine=null\nsize=1m\n").unwrap();
    let r = generate(dir.path(), &fleet, "fio.json", "3", &["--job", "r.fio", "--namespace", "perf", "--port", "7555"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let items = read_items(&dir.path().join("fio.json"));
    assert!(items.iter().all(|i| i["metadata"]["namespace"] == "perf"), "{items:#?}");
    let coordinator: Job = parse(one(&items, "Job", "bench-coordinator"));
    let words = command_line(&pod_containers(&coordinator).0[0]);
    assert_eq!(after(&words, "--fio"), "/jobs/r.fio");
    assert!(after(&words, "--agents").ends_with("bench-agents-2.bench-agents:7555"), "{words:?}");

    let r = generate(dir.path(), &fleet, "agents.json", "3", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let items = read_items(&dir.path().join("agents.json"));
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Secret", "Service", "Job"], "without --job, the agents alone");
    assert!(r.stderr.contains("bench-agents-0.bench-agents:7450"), "says what a coordinator gives --agents: {}", r.stderr);
}

#[test]
fn bad_input_exits_2_in_one_line_and_writes_nothing() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let f = fleet.to_str().unwrap();
    let flags = |name: &str, agents: &str| -> Vec<String> {
        ["fleet", "k8s", "--name", name, "--agents", agents, "--image", IMAGE, "--fleet-dir", f, "-o", "out.json"]
            .map(String::from)
            .to_vec()
    };
    let missing = dir.path().join("nowhere");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (flags("Bad_Name", "3"), "'Bad_Name'"),
        (flags("a-", "3"), "'a-'"),
        (flags(&"a".repeat(41), "3"), "at most 40"),
        (flags("bench", "0"), "--agents"),
        ([flags("bench", "3"), vec!["--namespace".into(), "No".into()]].concat(), "--namespace 'No'"),
        ([flags("bench", "3"), vec!["--job".into(), "missing.toml".into()]].concat(), "missing.toml"),
        (
            flags("bench", "3").into_iter().map(|w| if w == f { missing.display().to_string() } else { w }).collect(),
            "storbench agent --init",
        ),
    ];
    for (args, what) in cases {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = storbench(dir.path(), &words);
        assert_eq!(r.code, 2, "{words:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim_end().lines().count(), 1, "one line: {}", r.stderr);
        assert!(r.stderr.contains(what), "{what}: {}", r.stderr);
        assert!(!dir.path().join("out.json").exists(), "{words:?} wrote nothing");
    }
    // An existing file is never overwritten.
    std::fs::write(dir.path().join("out.json"), "mine").unwrap();
    let r = storbench(dir.path(), &flags("bench", "3").iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("exists"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(dir.path().join("out.json")).unwrap(), "mine");
}

/// A process of the test's own, killed when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The manifest's pods, run here: the agent's command line as the Job gives
/// it (on a loopback address, the fleet directory for /fleet), probed as
/// kubelet probes it, the coordinator's wait and run as its Job gives them.
#[test]
fn the_pods_commands_run_a_job_here_and_probes_do_not_use_up_once() {
    if !have("sh") || !have("getent") {
        assert!(std::env::var_os("CI").is_none(), "sh and getent are on CI's machines");
        eprintln!("SKIP: the pods' scripts need sh and getent");
        return;
    }
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    std::fs::write(
        dir.path().join("jobs.toml"),
        "[[job]]\nname = \"k\"\nioengine = \"null\"\nruntime = 1\ntime_based = true\nsize = \"1m\"\n",
    )
    .unwrap();
    let r = generate(dir.path(), &fleet, "out.json", "1", &["--job", "jobs.toml", "--port", "17450"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let items = read_items(&dir.path().join("out.json"));
    let address = "127.0.0.93:17450";
    // /fleet, /jobs, /results and the agents' DNS names, as they are here.
    let here = |w: &String| -> String {
        match w.as_str() {
            "/fleet" => fleet.display().to_string(),
            "/results/run" => dir.path().join("results").display().to_string(),
            "0.0.0.0:17450" | "bench-agents-0.bench-agents:17450" => address.to_string(),
            "bench-agents-0.bench-agents" => "localhost".to_string(),
            "$(POD_NAME)" => "bench-agents-0-xyz".to_string(),
            w => w.strip_prefix("/jobs/").map_or_else(|| w.to_string(), |f| dir.path().join(f).display().to_string()),
        }
    };
    let run = |c: &Container| -> std::process::Command {
        let words: Vec<String> = command_line(c).iter().map(here).collect();
        let mut cmd = std::process::Command::new(&words[0]);
        let bin_dir = PathBuf::from(bin()).parent().unwrap().to_path_buf();
        let path =
            std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())))
                .unwrap();
        cmd.args(&words[1..]).env("PATH", path).current_dir(dir.path());
        for e in c.env.iter().flatten() {
            if let Some(v) = &e.value {
                cmd.env(&e.name, v);
            }
        }
        cmd
    };

    let agents: Job = parse(one(&items, "Job", "bench-agents"));
    let log = dir.path().join("agent.log");
    let mut agent = run(&pod_containers(&agents).0[0]);
    agent.stdout(std::process::Stdio::null()).stderr(std::fs::File::create(&log).unwrap());
    let mut agent = Child(agent.spawn().expect("start the agent"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("listening on") {
        assert!(Instant::now() < deadline, "the agent never listened: {}", std::fs::read_to_string(&log).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(50));
    }
    // Readiness probes: bare TCP connections, and one with bytes that are not TLS.
    for i in 0..4 {
        let mut s = std::net::TcpStream::connect(address).expect("the agent accepts a probe");
        if i == 3 {
            use std::io::Write as _;
            let _ = s.write_all(b"GET / HTTP/1.0\r\n\r\n");
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(agent.0.try_wait().unwrap().is_none(), "probes are not runs: {}", std::fs::read_to_string(&log).unwrap_or_default());

    let coordinator: Job = parse(one(&items, "Job", "bench-coordinator"));
    let (containers, init) = pod_containers(&coordinator);
    let wait = run(&init.unwrap()[0]).output().unwrap();
    assert!(wait.status.success(), "the wait ends once every agent resolves: {}", String::from_utf8_lossy(&wait.stderr));
    let mut coordinator = run(&containers[0]);
    let out = coordinator.env("KEEP_RESULTS_SECONDS", "0").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\nagent: {}", std::fs::read_to_string(&log).unwrap_or_default());
    assert!(String::from_utf8_lossy(&out.stdout).contains("exit code 0"), "says where the results are");
    assert!(dir.path().join("results/result.json").exists(), "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while agent.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "--once: the agent exits after the run, so its Job completes");
        std::thread::sleep(Duration::from_millis(50));
    }
}
