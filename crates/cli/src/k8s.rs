//! `storbench fleet k8s`: a fleet on Kubernetes, as one file for `kubectl apply -f`.
//!
//! The manifest is a pure function of its inputs ([`manifest`]), so the test
//! can parse every object into the Kubernetes API types without a cluster.
//! It is JSON (a `v1` `List`), which kubectl reads as it reads YAML: no YAML
//! library and no Kubernetes crate in the binary.
//!
//! What it makes, and why each piece is there:
//! - a Secret with the fleet directory's files, but never `ca.key`: whoever
//!   holds it can mint certificates the fleet trusts, and it is not needed to
//!   serve or to run;
//! - an Indexed Job of agents (`storbench agent --once`): Kubernetes names pod
//!   i `<name>-agents-<i>`, so with the headless Service as its subdomain each
//!   agent has a stable DNS name the coordinator can list before any pod
//!   exists; `--once` lets the Job complete when the run is over;
//! - with a job file, a ConfigMap holding it and a coordinator Job that waits
//!   until every agent is ready, runs it, and keeps its results directory a
//!   while for `kubectl cp`. The job file is the only file it gets: a fio
//!   file's `include` lines, or paths to other local files, find nothing.

use crate::error::CliError;
use serde_json::{json, Map, Value};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;

/// The fleet directory's files that go into the cluster: all but `ca.key`.
pub const FLEET_FILES: [&str; 6] = ["ca.pem", "agent.pem", "agent.key", "coordinator.pem", "coordinator.key", "token"];

/// Where pods see the Secret, the job file and the results.
pub const FLEET_MOUNT: &str = "/fleet";
pub const JOBS_MOUNT: &str = "/jobs";
pub const RESULTS_MOUNT: &str = "/results";
/// The coordinator's results directory (`--results-dir`).
pub const RESULTS_DIR: &str = "/results/run";

/// How long the coordinator's pod keeps its results after the run, for
/// `kubectl cp` (which needs a running container). An env value in the
/// manifest, so it can be changed there without regenerating it.
pub const KEEP_RESULTS_SECONDS: u32 = 600;

/// Longest `--name`: the longest name made from it, the coordinator's pods
/// (`<name>-coordinator-xxxxx`), must stay a DNS label (63).
pub const MAX_NAME: usize = 40;

/// A ConfigMap holds at most 1 MiB.
const MAX_CONFIGMAP: usize = 1 << 20;

/// Everything a manifest is made of.
pub struct K8sManifest {
    pub name: String,
    pub namespace: Option<String>,
    pub agents: u32,
    pub image: String,
    /// File name -> contents, from the fleet directory (never ca.key).
    pub fleet_files: Vec<(String, Vec<u8>)>,
    /// (file name, text) of a TOML or fio job file for the coordinator.
    pub job_file: Option<(String, String)>,
    /// The words naming the job file to `storbench run` ([`job_args`]).
    pub job_args: Vec<String>,
    pub port: u16,
}

/// `storbench fleet k8s`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Writes one file for kubectl: a Secret with the fleet directory's keys (never ca.key), a headless \
Service, an Indexed Job of N agents (storbench agent --once), and with --job a ConfigMap holding the job file and a \
coordinator Job that waits for every agent, runs the job on them and keeps its results 10 minutes.

  kubectl apply -f OUT.json
  kubectl logs -f job/NAME-coordinator          the run's report (once the agents are up; -c wait-for-agents before)
  kubectl cp $(kubectl get pod -l app.kubernetes.io/name=NAME-coordinator -o jsonpath='{.items[0].metadata.name}'):/results/run ./results
                                                the results directory, within 10 minutes of the end (the image needs tar)
  kubectl delete -f OUT.json                    everything, the Secret included

With --namespace, add -n NAMESPACE to logs, get and cp. Without --job, start a coordinator in the cluster yourself: \
storbench run --agents NAME-agents-0.NAME-agents:7450,... --fleet-dir DIR. The image must hold storbench, sh and getent \
(any glibc or musl base image). OUT.json holds the fleet's keys: it is written readable by its owner only, and never \
overwritten.")]
pub struct K8sArgs {
    /// Prefix of every object's name (a DNS label of at most 40 characters)
    #[arg(long, default_value = "storbench", value_name = "NAME")]
    pub name: String,
    /// Namespace of every object (default: kubectl's current one)
    #[arg(long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// How many agents (pods of the agents' Job)
    #[arg(long, value_name = "N")]
    pub agents: u32,
    /// The container image that holds storbench
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The fleet directory made by `storbench agent --init` (default $STORBENCH_FLEET_DIR or ~/.config/storbench/fleet)
    #[arg(long = "fleet-dir", value_name = "DIR")]
    pub fleet_dir: Option<PathBuf>,
    /// The agents' port
    #[arg(long, default_value_t = 7450, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub port: u16,
    /// A TOML or fio (.fio) job file: adds a coordinator Job that runs it on the agents
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    /// Where the manifest goes (a new file: never overwritten)
    #[arg(long, short = 'o', value_name = "OUT.json")]
    pub output: PathBuf,
}

/// Read the fleet directory and the job file, build the manifest, write it.
/// Nothing is written unless everything is valid, and an existing file is
/// never replaced: it may be another fleet's keys.
pub fn run(args: &K8sArgs) -> Result<i32, CliError> {
    // The flags first: a bad name fails the same whatever the files.
    check_flags(&args.name, args.namespace.as_deref(), args.agents, &args.image, args.port).map_err(CliError::usage)?;
    if args.output.exists() {
        return Err(exists(&args.output));
    }
    let dir = args.fleet_dir.clone().unwrap_or_else(storbench_fleet::creds::default_dir);
    let mut fleet_files = Vec::new();
    for f in FLEET_FILES {
        let path = dir.join(f);
        let limit = storbench_workload::input::CREDENTIALS_LIMIT;
        let bytes = storbench_workload::input::read_bytes(&path, "fleet file", limit).map_err(|e| {
            CliError::usage(format!(
                "{}: {e}; make a fleet directory with `storbench agent --init {}` and give it with --fleet-dir",
                path.display(),
                dir.display()
            ))
        })?;
        fleet_files.push((f.to_string(), bytes));
    }
    let job_file = match &args.job {
        None => None,
        Some(path) => {
            let text = crate::sources::read_job_file(path, "job file")?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Some((name, text))
        }
    };
    let job_args = job_file.as_ref().map(|(name, _)| job_args(name)).unwrap_or_default();
    let m = K8sManifest {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        agents: args.agents,
        image: args.image.clone(),
        fleet_files,
        job_file,
        job_args,
        port: args.port,
    };
    let doc = manifest(&m).map_err(CliError::usage)?;
    let text = serde_json::to_string_pretty(&doc).map_err(|e| CliError::system(format!("could not render the manifest: {e}")))? + "\n";
    write_private(&args.output, text.as_bytes())?;
    let ns = args.namespace.as_ref().map(|n| format!(" -n {n}")).unwrap_or_default();
    let next = if m.job_file.is_some() {
        format!("; then `kubectl{ns} logs -f job/{}-coordinator`", m.name)
    } else {
        format!("; then run a coordinator in the cluster with --agents {}", agent_addresses(&m.name, m.agents, m.port).join(","))
    };
    say!(
        "storbench: wrote {} (it holds the fleet's keys: keep it private): `kubectl apply -f {}`{next}",
        args.output.display(),
        args.output.display()
    );
    Ok(0)
}

fn exists(path: &std::path::Path) -> CliError {
    CliError::usage(format!(
        "{} exists: a manifest holds a fleet's keys and is never overwritten; remove it or choose another -o",
        path.display()
    ))
}

/// A new file readable by its owner only (it holds the fleet's keys);
/// removed again if it cannot be written whole.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            exists(path)
        } else {
            CliError::system(format!("could not create {}: {e}", path.display()))
        }
    })?;
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(|e| {
        let _ = std::fs::remove_file(path);
        CliError::system(format!("could not write {}: {e}", path.display()))
    })
}

/// The words that hand the job file, as the coordinator sees it in the
/// ConfigMap's mount, to `storbench run`: `--fio PATH` for a fio file, the
/// positional path for TOML.
pub fn job_args(file_name: &str) -> Vec<String> {
    let path = format!("{JOBS_MOUNT}/{file_name}");
    if file_name.ends_with(".fio") {
        vec!["--fio".into(), path]
    } else {
        vec![path]
    }
}

/// Agent i's address: its Indexed Job pod's host name under the headless
/// Service (the pod's namespace is in the resolver's search path).
fn agent_addresses(name: &str, agents: u32, port: u16) -> Vec<String> {
    (0..agents).map(|i| format!("{name}-agents-{i}.{name}-agents:{port}")).collect()
}

/// The manifest: one `v1` `List` of every object, for `kubectl apply -f`.
/// Every input is checked first; each error says what is wrong and how to fix it.
pub fn manifest(m: &K8sManifest) -> Result<Value, String> {
    check(m)?;
    let name = &m.name;
    let agents_name = format!("{name}-agents");
    let agent_app = format!("{name}-agent");
    let secret_name = format!("{name}-fleet");
    let port = m.port;

    let mut items = Vec::new();

    use base64::Engine as _;
    let data: Map<String, Value> = m
        .fleet_files
        .iter()
        .map(|(f, bytes)| (f.clone(), Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))))
        .collect();
    items.push(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(m, &secret_name),
        "type": "Opaque",
        "data": data,
    }));

    // Headless: no virtual IP, only per-pod DNS records, and those only for
    // ready pods (the readiness probe below), which the coordinator's wait
    // relies on.
    items.push(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(m, &agents_name),
        "spec": {
            "clusterIP": "None",
            "selector": { "app.kubernetes.io/name": agent_app },
            "ports": [{ "name": "fleet", "port": port, "targetPort": port, "protocol": "TCP" }],
        },
    }));

    let fleet_volume = json!({
        "name": "fleet",
        // 0400 (JSON has no octal): the keys readable by their owner only,
        // root, as which the containers run (benchmarks open devices and
        // drop caches); an image with another user needs a pod fsGroup.
        "secret": { "secretName": secret_name, "defaultMode": 0o400 },
    });
    let fleet_mount = json!({ "name": "fleet", "mountPath": FLEET_MOUNT, "readOnly": true });

    let listen = format!("0.0.0.0:{port}");
    items.push(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(m, &agents_name),
        "spec": {
            // Indexed: pod i gets host name <name>-agents-<i>, known in advance.
            "completionMode": "Indexed",
            "completions": m.agents,
            "parallelism": m.agents,
            // A benchmark is not retried behind its user's back.
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": labels(name, Some(&agent_app)) },
                "spec": {
                    "subdomain": agents_name,
                    "restartPolicy": "Never",
                    // A fleet stands for many client machines: agents sharing
                    // a node share its network and CPU. Preferred, so a
                    // small cluster still runs them.
                    "affinity": { "podAntiAffinity": { "preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": { "matchLabels": { "app.kubernetes.io/name": agent_app } },
                        },
                    }]}},
                    "containers": [{
                        "name": "agent",
                        "image": m.image,
                        "command": ["storbench", "agent", "--listen", listen, "--fleet-dir", FLEET_MOUNT, "--once", "--name", "$(POD_NAME)"],
                        "env": [{ "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } }],
                        "ports": [{ "name": "fleet", "containerPort": port, "protocol": "TCP" }],
                        // A bare TCP connection: the agent drops it at the TLS
                        // handshake, and it is not a run (--once counts runs).
                        "readinessProbe": { "tcpSocket": { "port": port }, "periodSeconds": 2 },
                        "volumeMounts": [fleet_mount],
                    }],
                    "volumes": [fleet_volume],
                },
            },
        },
    }));

    if let Some((file, text)) = &m.job_file {
        let job_name = format!("{name}-job");
        items.insert(
            1,
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata(m, &job_name),
                "data": { file.clone(): text },
            }),
        );
        items.push(coordinator(m, &job_name, &fleet_volume, &fleet_mount));
    }

    Ok(json!({ "apiVersion": "v1", "kind": "List", "items": items }))
}

/// Waits for every agent, then exits. A name under a headless Service
/// resolves only once its pod is ready, and the agents are ready once they
/// listen (their readiness probe), so resolving is waiting for the agent:
/// `getent` is in every glibc and musl base image, where `nc` often is not.
/// The wait is needed: `storbench run` does not retry a connection, and a
/// coordinator that reached only some agents would use up their --once.
const WAIT_SCRIPT: &str = r#"command -v getent >/dev/null || { echo "storbench: the image has no getent: cannot wait for the agents" >&2; exit 1; }
for h in "$@"; do
  echo "waiting for agent $h"
  until getent hosts "$h" >/dev/null 2>&1; do sleep 1; done
done
echo "every agent is ready""#;

/// Runs `storbench` with its arguments and passes SIGTERM on (a shell as
/// PID 1 ignores it otherwise), so `kubectl delete` stops the run and the
/// agents clean up. Then, unless it was stopped so, keeps the pod running
/// for $KEEP_RESULTS_SECONDS: `kubectl cp` needs a running container to
/// fetch the results. Exits with storbench's code either way.
const COORDINATOR_SCRIPT: &str = r#"stop=
storbench "$@" & pid=$!
trap 'stop=1; kill -TERM "$pid" 2>/dev/null' TERM INT
wait "$pid"; code=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; code=$?; done
trap 'kill "$sleeper" 2>/dev/null; exit "$code"' TERM INT
[ -z "$stop" ] || exit "$code"
echo "storbench: exit code $code; results in /results/run for ${KEEP_RESULTS_SECONDS}s (kubectl cp), then this pod ends"
sleep "$KEEP_RESULTS_SECONDS" & sleeper=$!
wait "$sleeper"
exit "$code""#;

/// The coordinator's Job: wait for the agents, run the job file on them.
fn coordinator(m: &K8sManifest, job_name: &str, fleet_volume: &Value, fleet_mount: &Value) -> Value {
    let addresses = agent_addresses(&m.name, m.agents, m.port);
    let hosts: Vec<String> = addresses.iter().map(|a| a.rsplit_once(':').map_or(a.clone(), |(h, _)| h.to_string())).collect();
    let mut args: Vec<String> = vec![
        "run".into(),
        "--agents".into(),
        addresses.join(","),
        "--fleet-dir".into(),
        FLEET_MOUNT.into(),
        // Pods on busy nodes may be slow to answer; a lost agent still ends
        // the run well within a minute.
        "--agent-timeout".into(),
        "30s".into(),
        "--results-dir".into(),
        RESULTS_DIR.into(),
    ];
    args.extend(m.job_args.iter().cloned());
    let app = format!("{}-coordinator", m.name);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(m, &app),
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": labels(&m.name, Some(&app)) },
                "spec": {
                    "restartPolicy": "Never",
                    "initContainers": [{
                        "name": "wait-for-agents",
                        "image": m.image,
                        "command": ["sh", "-c", WAIT_SCRIPT, "wait-for-agents"],
                        "args": hosts,
                    }],
                    "containers": [{
                        "name": "coordinator",
                        "image": m.image,
                        "command": ["sh", "-c", COORDINATOR_SCRIPT, "storbench"],
                        "args": args,
                        "env": [{ "name": "KEEP_RESULTS_SECONDS", "value": KEEP_RESULTS_SECONDS.to_string() }],
                        "volumeMounts": [
                            fleet_mount,
                            { "name": "jobs", "mountPath": JOBS_MOUNT, "readOnly": true },
                            { "name": "results", "mountPath": RESULTS_MOUNT },
                        ],
                    }],
                    "volumes": [
                        fleet_volume,
                        { "name": "jobs", "configMap": { "name": job_name } },
                        { "name": "results", "emptyDir": {} },
                    ],
                },
            },
        },
    })
}

/// The labels of every object (and, with `app`, of pods: the Service and
/// anti-affinity select agents by `app.kubernetes.io/name`).
fn labels(name: &str, app: Option<&str>) -> Value {
    let mut l = Map::new();
    if let Some(app) = app {
        l.insert("app.kubernetes.io/name".into(), app.into());
    }
    l.insert("app.kubernetes.io/part-of".into(), "storbench".into());
    l.insert("app.kubernetes.io/instance".into(), name.into());
    Value::Object(l)
}

fn metadata(m: &K8sManifest, object: &str) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), object.into());
    if let Some(ns) = &m.namespace {
        meta.insert("namespace".into(), ns.as_str().into());
    }
    meta.insert("labels".into(), labels(&m.name, None));
    Value::Object(meta)
}

/// The flags' own checks, before any file is read.
fn check_flags(name: &str, namespace: Option<&str>, agents: u32, image: &str, port: u16) -> Result<(), String> {
    if !is_dns_label(name) {
        return Err(format!(
            "--name '{name}' is not a DNS label: use lowercase letters, digits and '-', starting and ending with a letter or digit"
        ));
    }
    if name.len() > MAX_NAME {
        return Err(format!(
            "--name '{name}' is {} characters: use at most {MAX_NAME}, so the names made from it stay within Kubernetes' 63",
            name.len()
        ));
    }
    if let Some(ns) = namespace {
        if !is_dns_label(ns) || ns.len() > 63 {
            return Err(format!(
                "--namespace '{ns}' is not a namespace name: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
            ));
        }
    }
    if agents == 0 {
        return Err("--agents 0: a fleet needs at least one agent; give --agents 1 or more".into());
    }
    if image.trim().is_empty() || image.chars().any(char::is_whitespace) {
        return Err(format!(
            "--image '{image}' is not an image reference: give the image that holds storbench, e.g. registry.example/storbench:0.1"
        ));
    }
    if port == 0 {
        return Err("--port 0 is not a port the agents can listen on: give 1 to 65535 (default 7450)".into());
    }
    Ok(())
}

/// Every input, before anything is built.
fn check(m: &K8sManifest) -> Result<(), String> {
    check_flags(&m.name, m.namespace.as_deref(), m.agents, &m.image, m.port)?;
    if m.fleet_files.is_empty() {
        return Err("no fleet files: read them from a directory made by `storbench agent --init DIR`".into());
    }
    for (f, _) in &m.fleet_files {
        if f == "ca.key" {
            return Err("ca.key must not go into the cluster: it signs certificates the fleet trusts; leave it out".into());
        }
        if !is_config_key(f) {
            return Err(format!("fleet file '{f}' cannot be a Secret key: rename it to letters, digits, '-', '_' and '.'"));
        }
    }
    if let Some((file, text)) = &m.job_file {
        if !is_config_key(file) {
            return Err(format!(
                "the job file's name '{file}' cannot be a ConfigMap key: rename the file to letters, digits, '-', '_' and '.'"
            ));
        }
        if m.job_args.is_empty() {
            return Err(format!("no words hand the job file {file} to the coordinator: set job_args with job_args(\"{file}\")"));
        }
        if file.len() + text.len() > MAX_CONFIGMAP {
            return Err(format!(
                "the job file {file} is {} bytes, more than the 1 MiB a ConfigMap holds: make it smaller (e.g. fewer repeated sections)",
                text.len()
            ));
        }
    }
    Ok(())
}

/// RFC 1123 label: lowercase alphanumerics and '-', alphanumeric at both ends, 1..=63.
fn is_dns_label(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| ok(c) || c == '-')
        && s.chars().next().is_some_and(ok)
        && s.chars().last().is_some_and(ok)
}

/// A Secret or ConfigMap key: `[-._a-zA-Z0-9]+`, not `.` or `..`, at most 253.
fn is_config_key(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s != "." && s != ".." && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> K8sManifest {
        K8sManifest {
            name: "bench".into(),
            namespace: Some("perf".into()),
            agents: 2,
            image: "img:1".into(),
            fleet_files: vec![("token".into(), b"t\n".to_vec())],
            job_file: Some(("j.fio".into(), "[a]\n".into())),
            job_args: job_args("j.fio"),
            port: 7450,
        }
    }

    #[test]
    fn every_object_is_labelled_and_namespaced() {
        let doc = manifest(&sample()).unwrap();
        let items = doc["items"].as_array().unwrap();
        let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["Secret", "ConfigMap", "Service", "Job", "Job"]);
        for i in items {
            assert_eq!(i["metadata"]["namespace"], "perf");
            assert_eq!(i["metadata"]["labels"]["app.kubernetes.io/part-of"], "storbench");
            assert_eq!(i["metadata"]["labels"]["app.kubernetes.io/instance"], "bench");
        }
        assert_eq!(items[0]["data"]["token"], "dAo=");
    }

    #[test]
    fn bad_input_is_refused_in_one_sentence() {
        for (change, what) in [
            (Box::new(|m: &mut K8sManifest| m.name = "Bad_Name".into()) as Box<dyn Fn(&mut K8sManifest)>, "--name 'Bad_Name'"),
            (Box::new(|m| m.name = "-a".into()), "not a DNS label"),
            (Box::new(|m| m.name = "a".repeat(41)), "at most 40"),
            (Box::new(|m| m.namespace = Some("Perf".into())), "--namespace"),
            (Box::new(|m| m.agents = 0), "--agents 0"),
            (Box::new(|m| m.image = " ".into()), "--image"),
            (Box::new(|m| m.fleet_files.push(("ca.key".into(), vec![]))), "ca.key"),
            (Box::new(|m| m.job_file = Some(("my job.toml".into(), String::new()))), "ConfigMap key"),
            (Box::new(|m| m.job_file = Some(("j.toml".into(), "#".repeat(MAX_CONFIGMAP)))), "1 MiB"),
        ] {
            let mut m = sample();
            change(&mut m);
            let e = manifest(&m).unwrap_err();
            assert!(e.contains(what) && !e.contains('\n'), "{e}");
        }
        assert!(is_dns_label("a") && is_dns_label("a-1") && !is_dns_label("a-") && !is_dns_label(""));
    }

    #[test]
    fn a_fio_file_is_given_with_fio_and_toml_by_position() {
        assert_eq!(job_args("x.fio"), ["--fio", "/jobs/x.fio"]);
        assert_eq!(job_args("x.toml"), ["/jobs/x.toml"]);
    }
}
