//! One conformance suite for every engine, run by the real binary: the same
//! jobs, the same checks on what the results say. The engines come from
//! `storbench_engine::registry()`: each with blocks runs a sequential write,
//! a random read with an operation budget, a 70/30 mix and a write+fsync
//! job; each with objects runs a prefilled mix of every operation it
//! supports. Where each meets them is [`block_line`] and [`object_line`]
//! (files in a scratch directory; nbd against nbdkit over TCP and qemu-nbd
//! over a Unix socket, servers the suite starts and kills; the Ceph, RGW and
//! Swift test servers, which CI starts), or why the jobs do not apply: an
//! engine with no line fails the test. What each engine must do through
//! the engine API is crates/engine/tests/conformance.rs.

mod common;
use common::*;
use std::path::Path;
use storbench_engine::Capabilities;

/// An engine and the options that point it at a fresh target.
struct Target {
    engine: &'static str,
    options: Vec<String>,
    env: Vec<(&'static str, String)>,
    /// A server the target lives on, killed when the target is dropped.
    _server: Option<NbdServer>,
}

/// An NBD server process for the nbd engine's targets, killed on drop.
struct NbdServer(std::process::Child);

impl NbdServer {
    /// Start `cmd args` and wait until `up` says it accepts connections;
    /// None (and why) if the command is not installed.
    fn start(cmd: &str, args: &[String], up: impl Fn(u32) -> bool) -> Option<NbdServer> {
        if !have(cmd) {
            assert!(std::env::var_os("CI").is_none(), "nbd tests must run in CI: scripts/install-deps.sh installs nbdkit and qemu-utils");
            eprintln!("SKIP: the nbd engine's {cmd} target: {cmd} is not installed (scripts/install-deps.sh installs it)");
            return None;
        }
        let child = std::process::Command::new(cmd)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the NBD server");
        let s = NbdServer(child);
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !up(s.0.id()) {
            assert!(std::time::Instant::now() < end, "{cmd} {args:?} never accepted a connection");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(s)
    }
}

impl Drop for NbdServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The nbd engine's targets: nbdkit's memory plugin on a TCP port of
/// 127.0.0.1, and qemu-nbd serving a raw file over a Unix socket. The suite
/// writes the same export job after job, so overwriting is allowed.
fn nbd_targets(dir: &Path) -> Vec<Target> {
    let mut t = Vec::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let args: Vec<String> =
        ["--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", &port.to_string(), "memory", "64M"].map(String::from).into();
    let listening = |pid| listens_on(pid, port) && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    if let Some(s) = NbdServer::start("nbdkit", &args, listening) {
        let uri = format!("nbd://127.0.0.1:{port}");
        t.push(Target { engine: "nbd", options: nbd_options(&uri), env: vec![], _server: Some(s) });
    }
    let (file, sock) = (dir.join("conf-nbd.img"), dir.join("conf-nbd.sock"));
    std::fs::File::create(&file).unwrap().set_len(64 << 20).unwrap();
    let args: Vec<String> =
        ["-t", "-e", "8", "-f", "raw", "-x", "conf", "-k", sock.to_str().unwrap(), file.to_str().unwrap()].map(String::from).into();
    if let Some(s) = NbdServer::start("qemu-nbd", &args, |_| std::os::unix::net::UnixStream::connect(&sock).is_ok()) {
        let uri = format!("nbd+unix:///conf?socket={}", sock.display());
        t.push(Target { engine: "nbd", options: nbd_options(&uri), env: vec![], _server: Some(s) });
    }
    t
}

fn nbd_options(uri: &str) -> Vec<String> {
    ["--uri", uri, "--allow_overwrite", "1"].map(String::from).into()
}

impl Target {
    fn new(engine: &'static str, options: &[&str]) -> Target {
        Target { engine, options: options.iter().map(|o| o.to_string()).collect(), env: vec![], _server: None }
    }
}

/// Where the block jobs run on an engine, or why they do not apply.
enum Line {
    Run(Vec<Target>),
    NotApplicable(&'static str),
}

/// The block jobs' targets of every engine with blocks (`None`: it has no
/// line yet, and the test fails until it has one).
fn block_line(engine: &'static str, dir: &Path) -> Option<Line> {
    let file = dir.join("conf.dat").to_string_lossy().into_owned();
    Some(match engine {
        "psync" | "io_uring" | "libaio" => Line::Run(vec![Target::new(engine, &["--filename", &file])]),
        "null" | "memory" => Line::Run(vec![Target::new(engine, &[])]),
        "nbd" => Line::Run(nbd_targets(dir)),
        "rbd" if ceph_cluster() => {
            let img = format!("sbconf-{}", std::process::id());
            Line::Run(vec![Target::new(engine, &["--pool", "rbd", "--rbdname", &img, "--keep_image", "1"])])
        }
        "rbd" => Line::Run(Vec::new()),
        "falloc" => Line::NotApplicable("fallocate as the I/O: no data moves (fio_engines runs falloc.fio against fio)"),
        "tcp" => Line::NotApplicable("the network to an agent (fleet.rs and baseline --network run it)"),
        "net" => Line::NotApplicable("a stream between two jobs, no blocks to read back (fio_net.rs runs it against fio)"),
        "filecreate" | "filestat" | "filedelete" | "ftruncate" => {
            Line::NotApplicable("one metadata call per file, not blocks (fio_meta.rs runs them against fio)")
        }
        _ => return None,
    })
}

/// The object mix's targets of every engine with objects.
fn object_line(engine: &'static str) -> Option<Line> {
    let bucket = format!("sbconf{}", std::process::id());
    let with_env = |options: &[&str], env: Option<Vec<(&'static str, String)>>| {
        Line::Run(env.map(|env| Target { env, ..Target::new(engine, options) }).into_iter().collect())
    };
    Some(match engine {
        "null" | "memory" => Line::Run(vec![Target::new(engine, &[])]),
        "rados" if ceph_cluster() => Line::Run(vec![Target::new(engine, &["--pool", "storbench"])]),
        "rados" => Line::Run(Vec::new()),
        "s3" => with_env(&["--bucket", &bucket], s3_env()),
        "swift" => with_env(&["--container", &bucket], swift_env("aio")),
        _ => return None,
    })
}

/// Every registry entry that `has` its part, by its line; the names of
/// those without one.
fn targets_of(has: fn(&Capabilities) -> bool, line: &dyn Fn(&'static str) -> Option<Line>) -> (Vec<Target>, Vec<&'static str>) {
    let (mut targets, mut missing) = (Vec::new(), Vec::new());
    for f in storbench_engine::registry().iter().filter(|f| has(&f.capabilities())) {
        match line(f.name()) {
            Some(Line::Run(t)) => targets.extend(t),
            Some(Line::NotApplicable(why)) => eprintln!("{}: the suite's jobs do not apply: {why}", f.name()),
            None => missing.push(f.name()),
        }
    }
    (targets, missing)
}

/// Whether engine `e` carries out the operation called `op`, as it declares.
fn supports(e: &str, op: &str) -> bool {
    let engine = storbench_engine::find(e).expect("a registered engine");
    storbench_workload::OpKind::ALL.iter().any(|o| o.name() == op && engine.supports(*o))
}

fn run_job(dir: &Path, t: &Target, name: &str, args: &[&str]) -> serde_json::Value {
    // Numbered: an engine may have several targets (nbd over TCP and a Unix socket).
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = format!("out-{}-{n}-{name}", t.engine);
    let mut a: Vec<&str> = vec!["run", "--name", name, "--ioengine", t.engine];
    a.extend(t.options.iter().map(String::as_str));
    a.extend(args);
    a.extend(["--results-dir", &out, "--quiet"]);
    let r = storbench_env(dir, &t.env, &a);
    let summary = std::fs::read_to_string(dir.join(&out).join("summary.txt")).unwrap_or_default();
    assert_eq!(r.code, 0, "{} {name}: {}\n{summary}", t.engine, r.stderr);
    result_json(&dir.join(&out))
}

fn errors(doc: &serde_json::Value) -> Vec<String> {
    doc["jobs"][0]["ops"].as_array().unwrap().iter().filter(|o| o["errors"] != serde_json::json!({})).map(|o| o.to_string()).collect()
}

#[test]
fn block_engines_agree_on_what_a_job_does() {
    let d = scratch();
    let (targets, missing) = targets_of(|c| c.blocks, &|e| block_line(e, d.path()));
    assert!(missing.is_empty(), "engines with blocks and no line in this suite (block_line): {missing:?}");
    for t in targets {
        let e = t.engine;
        let w = run_job(d.path(), &t, "seqw", &["--size", "4m", "--rw", "write", "--bs", "64k", "--iodepth", "4"]);
        assert_eq!(ios(&w, 0, "write"), 64, "{e}: 4 MiB in 64 KiB writes");
        assert_eq!(w["jobs"][0]["ops"][0]["bytes"], 4 << 20, "{e}");
        let r =
            run_job(d.path(), &t, "randr", &["--size", "4m", "--rw", "randread", "--bs", "4k", "--iodepth", "8", "--number_ios", "500"]);
        assert_eq!(ios(&r, 0, "read"), 500, "{e}: number_ios bounds the job");
        let m = run_job(
            d.path(),
            &t,
            "mix",
            &[
                "--size",
                "4m",
                "--rw",
                "randrw",
                "--rwmixread",
                "70",
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--io_size",
                "1g",
                "--number_ios",
                "2000",
            ],
        );
        let (rd, wr) = (ios(&m, 0, "read"), ios(&m, 0, "write"));
        assert_eq!(rd + wr, 2000, "{e}");
        assert!((1250..=1550).contains(&rd), "{e}: 70% of 2000 reads, got {rd}");
        let s = run_job(d.path(), &t, "sync", &["--size", "1m", "--rw", "write", "--bs", "4k", "--fsync", "4", "--iodepth", "1"]);
        assert_eq!(ios(&s, 0, "write"), 256, "{e}");
        assert_eq!(ios(&s, 0, "sync"), 64, "{e}: one flush after every 4 writes, as fio does");
        for doc in [&w, &r, &m, &s] {
            assert!(errors(doc).is_empty(), "{e}: {:?}", errors(doc));
        }
        if e == "rbd" {
            let img = &t.options[3];
            let _ = std::process::Command::new("rbd").args(["rm", "--no-progress", &format!("rbd/{img}")]).output();
        }
    }
}

/// Every operation on an object is counted in its object's size class too,
/// and a whole-object read of a class moves exactly that class's size.
fn size_classes_add_up(doc: &serde_json::Value, e: &str) {
    let classes = doc["jobs"][0]["size_classes"].as_array().expect("size_classes");
    let sizes: Vec<u64> = classes.iter().map(|c| c["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [8192, 32768], "{e}");
    for op in ["read", "create", "update", "stat", "delete"] {
        let in_classes: u64 =
            classes.iter().flat_map(|c| c["ops"].as_array().unwrap()).filter(|o| o["op"] == op).map(|o| o["ios"].as_u64().unwrap()).sum();
        assert_eq!(in_classes, ios(doc, 0, op), "{e} {op}: per-class counts add up to the total");
    }
    for c in classes {
        let read = c["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").expect("reads in every class");
        assert_eq!(read["bytes"].as_u64().unwrap(), read["ios"].as_u64().unwrap() * c["size"].as_u64().unwrap(), "{e}: {c}");
    }
    assert!(classes.iter().all(|c| !c["ops"].as_array().unwrap().iter().any(|o| o["op"] == "list")), "{e}: listings name no object");
}

#[test]
fn object_engines_agree_on_what_a_job_does() {
    let d = scratch();
    let (targets, missing) = targets_of(|c| c.objects, &object_line);
    assert!(missing.is_empty(), "engines with objects and no line in this suite (object_line): {missing:?}");
    for t in targets {
        let e = t.engine;
        let prefix = format!("sbconf.{}.{e}.", std::process::id());
        let mix: Vec<String> = [("read", 50), ("create", 10), ("update", 10), ("stat", 10), ("delete", 10), ("list", 10)]
            .iter()
            // Operations the engine cannot do are left out of its mix (rados has no listing).
            .filter(|(o, _)| supports(e, o))
            .map(|(o, w)| format!("{o}:{w}"))
            .collect();
        let mix = mix.join(",");
        let doc = run_job(
            d.path(),
            &t,
            "objmix",
            &[
                "--objects",
                "40",
                "--object_size",
                "8k/75:32k/25",
                "--object_prefix",
                &prefix,
                "--object_ops",
                &mix,
                "--rw",
                "randrw",
                "--prefill",
                "1",
                "--iodepth",
                "8",
                "--number_ios",
                "1000",
            ],
        );
        let total: u64 = ["read", "create", "update", "stat", "delete", "list"].iter().map(|o| ios(&doc, 0, o)).sum();
        assert_eq!(total, 1000, "{e}: every operation counted once");
        size_classes_add_up(&doc, e);
        assert!(ios(&doc, 0, "stat") > 0 && ios(&doc, 0, "delete") > 0, "{e}");
        assert!(errors(&doc).is_empty(), "{e}: {:?}", errors(&doc));
        if e == "rados" {
            assert!(rados_objects("storbench", &prefix).is_empty(), "rados: cleanup left objects");
        }
        let seq = run_job(
            d.path(),
            &t,
            "objseq",
            &[
                "--objects",
                "16",
                "--object_size",
                "4k",
                "--object_prefix",
                &prefix,
                "--rw",
                "write",
                "--iodepth",
                "4",
                "--number_ios",
                "16",
            ],
        );
        assert_eq!(ios(&seq, 0, "create"), 16, "{e}: one create per key");
    }
}
