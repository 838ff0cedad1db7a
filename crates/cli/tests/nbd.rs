//! The nbd engine against real NBD servers the tests start: nbdkit (its
//! memory plugin, over TCP on 127.0.0.1 and over a Unix socket) and
//! qemu-nbd (a raw file). Each server is killed when its test ends. Tests
//! skip, saying why, when nbdkit or qemu-nbd is not installed.

mod common;
use common::*;
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where a server listens.
enum Listen {
    Tcp(u16),
    Unix(PathBuf),
}

/// A server process, killed (and reaped) on drop.
struct Server {
    child: Child,
    listen: Listen,
}

impl Server {
    /// `nbdkit ARGS` (plugin and parameters) on a free port of 127.0.0.1.
    fn nbdkit_tcp(args: &[&str]) -> Option<Server> {
        Self::start("nbdkit", |port| Self::nbdkit_args(&["-p", &port.to_string(), "-i", "127.0.0.1"], args))
    }

    /// `nbdkit ARGS` on a Unix socket in `dir`.
    fn nbdkit_unix(dir: &Path, args: &[&str]) -> Option<Server> {
        let sock = dir.join("nbdkit.sock");
        Self::start_unix("nbdkit", &sock, Self::nbdkit_args(&["-U", sock.to_str().unwrap()], args))
    }

    fn nbdkit_args(listen: &[&str], args: &[&str]) -> Vec<String> {
        ["--exit-with-parent", "-f"].iter().chain(listen).chain(args).map(|s| s.to_string()).collect()
    }

    /// qemu-nbd serving `file` as export `name` on a Unix socket in `dir`;
    /// persistent, several clients at once (the check before a run, then
    /// each worker's connection).
    fn qemu_unix(dir: &Path, name: &str, file: &Path) -> Option<Server> {
        Self::qemu_unix_shared(dir, name, file, 16)
    }

    /// qemu-nbd taking at most `shared` clients at once (qemu-nbd offers
    /// multi-conn only when it takes more than one).
    fn qemu_unix_shared(dir: &Path, name: &str, file: &Path, shared: u32) -> Option<Server> {
        let sock = dir.join(format!("qemu-{shared}.sock"));
        let args = Self::qemu_args(&["-k", sock.to_str().unwrap()], name, file, shared);
        Self::start_unix("qemu-nbd", &sock, args)
    }

    /// qemu-nbd on a free port of 127.0.0.1.
    fn qemu_tcp(name: &str, file: &Path) -> Option<Server> {
        Self::start("qemu-nbd", |port| Self::qemu_args(&["-b", "127.0.0.1", "-p", &port.to_string()], name, file, 16))
    }

    fn qemu_args(listen: &[&str], name: &str, file: &Path, shared: u32) -> Vec<String> {
        let mut a: Vec<String> = ["-t", "-f", "raw", "-x", name, "--discard=unmap"].iter().map(|s| s.to_string()).collect();
        a.extend(listen.iter().map(|s| s.to_string()));
        a.extend(["-e".to_string(), shared.to_string()]);
        a.push(file.to_str().unwrap().into());
        a
    }

    /// Start on a port nothing holds (asked of the kernel, then given to the
    /// server: another test may take it between, so a server that dies at
    /// once is tried again on another).
    fn start(cmd: &str, args: impl Fn(u16) -> Vec<String>) -> Option<Server> {
        if !have(cmd) {
            assert!(std::env::var_os("CI").is_none(), "nbd tests must run in CI: scripts/install-deps.sh installs nbdkit and qemu-utils");
            eprintln!("SKIP: {cmd} is not installed (scripts/install-deps.sh installs it)");
            return None;
        }
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let child = spawn(cmd, &args(port));
            if let Some(s) = (Server { child, listen: Listen::Tcp(port) }).ready() {
                return Some(s);
            }
        }
        panic!("{cmd} would not listen on any port tried");
    }

    fn start_unix(cmd: &str, sock: &Path, args: Vec<String>) -> Option<Server> {
        if !have(cmd) {
            assert!(std::env::var_os("CI").is_none(), "nbd tests must run in CI: scripts/install-deps.sh installs nbdkit and qemu-utils");
            eprintln!("SKIP: {cmd} is not installed (scripts/install-deps.sh installs it)");
            return None;
        }
        let s = Server { child: spawn(cmd, &args), listen: Listen::Unix(sock.to_path_buf()) };
        Some(s.ready().unwrap_or_else(|| panic!("{cmd} {args:?} did not start")))
    }

    /// The server, once it accepts connections; None if it exited.
    fn ready(mut self) -> Option<Server> {
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            let up = match &self.listen {
                Listen::Tcp(p) => listens_on(self.child.id(), *p) && TcpStream::connect(("127.0.0.1", *p)).is_ok(),
                Listen::Unix(s) => UnixStream::connect(s).is_ok(),
            };
            if up {
                return Some(self);
            }
            if self.child.try_wait().ok().flatten().is_some() || Instant::now() > end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn uri(&self, export: &str) -> String {
        match &self.listen {
            Listen::Tcp(p) => format!("nbd://127.0.0.1:{p}/{export}"),
            Listen::Unix(s) => format!("nbd+unix:///{export}?socket={}", s.display()),
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn spawn(cmd: &str, args: &[String]) -> Child {
    Command::new(cmd).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start the server")
}

/// `storbench run` on an NBD URI with `args`; results in `dir/out`.
fn run(dir: &Path, out: &str, uri: &str, args: &[&str]) -> Run {
    let mut a = vec!["run", "--name", "n", "--ioengine", "nbd", "--uri", uri, "--results-dir", out, "--quiet"];
    a.extend(args);
    storbench(dir, &a)
}

/// Errors counted over every operation of the first job.
fn errors(doc: &serde_json::Value) -> u64 {
    let ops = doc["jobs"][0]["ops"].as_array().unwrap();
    ops.iter().flat_map(|o| o["errors"].as_object().into_iter().flat_map(|m| m.values())).filter_map(|v| v.as_u64()).sum()
}

/// The run succeeded, verified its writes by reading them back, and found nothing wrong.
fn verified(dir: &Path, out: &str, r: &Run, writes: u64) {
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let doc = result_json(&dir.join(out));
    assert_eq!(ios(&doc, 0, "write"), writes, "{out}");
    assert_eq!(errors(&doc), 0, "{out}: {}", doc["jobs"][0]["ops"]);
    let v = &doc["jobs"][0]["verify"];
    assert!(v["checked"].as_u64().unwrap() >= writes, "{out}: {v}");
    assert_eq!(v["failed"], serde_json::json!([0, 0, 0, 0]), "{out}: {v}");
}

/// A sparse file of `size` bytes.
fn sparse(path: &Path, size: u64) {
    std::fs::File::create(path).unwrap().set_len(size).unwrap();
}

const VERIFIED_WRITE: &[&str] = &["--rw", "randwrite", "--bs", "4k", "--size", "8m", "--iodepth", "16", "--verify", "crc32c"];

#[test]
fn writes_read_back_verified_over_tcp_and_unix_with_either_reply_kind() {
    let d = scratch();
    let Some(tcp) = Server::nbdkit_tcp(&["memory", "64M"]) else { return };
    let r = run(d.path(), "tcp", &tcp.uri(""), VERIFIED_WRITE);
    verified(d.path(), "tcp", &r, 2048);
    // The same export again: it holds data now, so only with permission.
    let simple = [VERIFIED_WRITE, &["--structured_replies", "0", "--allow_overwrite", "1"]].concat();
    let r = run(d.path(), "tcp-simple", &tcp.uri(""), &simple);
    verified(d.path(), "tcp-simple", &r, 2048);

    // A server that offers no structured replies at all, on a Unix socket.
    let Some(unix) = Server::nbdkit_unix(d.path(), &["--no-sr", "memory", "64M"]) else { return };
    let r = run(d.path(), "unix-nosr", &unix.uri(""), VERIFIED_WRITE);
    verified(d.path(), "unix-nosr", &r, 2048);
}

#[test]
fn several_connections_share_the_work_on_a_multi_conn_server() {
    let d = scratch();
    let log = d.path().join("nbdkit.log");
    let logfile = format!("logfile={}", log.display());
    let Some(srv) = Server::nbdkit_tcp(&["--filter=log", "memory", "64M", &logfile]) else { return };
    let args = [VERIFIED_WRITE, &["--connections", "2", "--numjobs", "2", "--offset_increment", "8m"]].concat();
    let r = run(d.path(), "mc", &srv.uri(""), &args);
    verified(d.path(), "mc", &r, 4096);
    // nbdkit's log: one line per request; every worker connection had its share.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut per_conn = std::collections::BTreeMap::<String, u64>::new();
    for l in text.lines().filter(|l| l.contains(" Write id=")) {
        let conn = l.split_whitespace().find(|w| w.starts_with("connection=")).unwrap().to_string();
        *per_conn.entry(conn).or_default() += 1;
    }
    assert_eq!(per_conn.len(), 4, "2 workers x 2 connections wrote: {per_conn:?}");
    assert_eq!(per_conn.values().sum::<u64>(), 4096);
    assert!(per_conn.values().all(|n| *n >= 900), "round-robin spreads the writes: {per_conn:?}");

    // qemu-nbd serving one client at a time offers no multi-conn: a clear refusal.
    let file = d.path().join("q.img");
    sparse(&file, 16 << 20);
    let Some(q) = Server::qemu_unix_shared(d.path(), "disk", &file, 1) else { return };
    let r = run(d.path(), "q", &q.uri("disk"), &["--rw", "randread", "--connections", "2", "--number_ios", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("does not offer multi-conn") && r.stderr.contains("connections=1"), "{}", r.stderr);
}

#[test]
fn the_export_name_is_honoured() {
    let d = scratch();
    let file = d.path().join("named.img");
    sparse(&file, 16 << 20);
    let Some(q) = Server::qemu_unix(d.path(), "disk", &file) else { return };
    let r = run(d.path(), "ok", &q.uri("disk"), &["--rw", "randread", "--number_ios", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("ok")), 0, "read"), 100);
    let doc = result_json(&d.path().join("ok"));
    assert!(doc["jobs"][0]["targets"].to_string().contains("nbd+unix:///disk?socket="), "{}", doc["jobs"][0]["targets"]);

    let r = run(d.path(), "bad", &q.uri("other"), &["--rw", "randread", "--number_ios", "100"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no export named 'other'") && r.stderr.contains("the server has: 'disk'"), "{}", r.stderr);
    assert!(!d.path().join("bad").join("result.json").exists());
}

#[test]
fn data_written_through_qemu_nbd_is_in_the_backing_file_and_flushes_are_sent() {
    let d = scratch();
    let file = d.path().join("backing.img");
    sparse(&file, 32 << 20);
    let Some(q) = Server::qemu_tcp("disk", &file) else { return };
    let args = ["--rw", "write", "--bs", "64k", "--size", "4m", "--iodepth", "8", "--fsync", "8", "--verify", "crc32c"];
    let r = run(d.path(), "w", &q.uri("disk"), &args);
    verified(d.path(), "w", &r, 64);
    assert_eq!(ios(&result_json(&d.path().join("w")), 0, "sync"), 8, "a flush after every 8 writes");
    // Every 64 KiB unit in the file is the one storbench wrote for that offset.
    let bytes = std::fs::read(&file).unwrap();
    for off in (0..4 << 20).step_by(64 << 10) {
        let found = storbench_workload::verify::check(&bytes[off..off + (64 << 10)], off as u64, None);
        assert!(matches!(found, storbench_workload::verify::Found::Intact { .. }), "offset {off}: {found:?}");
    }
    assert!(bytes[4 << 20..].iter().all(|b| *b == 0), "nothing beyond the job's 4 MiB");
}

#[test]
fn an_export_holding_data_is_refused_without_allow_overwrite() {
    let d = scratch();
    let file = d.path().join("theirs.img");
    sparse(&file, 32 << 20);
    let at = (10 << 20) + 123;
    {
        use std::os::unix::fs::FileExt;
        std::fs::OpenOptions::new().write(true).open(&file).unwrap().write_all_at(b"their data", at).unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    let Some(q) = Server::qemu_unix(d.path(), "theirs", &file) else { return };
    let w = ["--rw", "randwrite", "--bs", "4k", "--number_ios", "500"];
    // Block status (base:allocation) finds it, and so does sampling (no structured replies).
    for extra in [&[][..], &["--structured_replies", "0"]] {
        let r = run(d.path(), "refused", &q.uri("theirs"), &[&w[..], extra].concat());
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains("refusing to write") && r.stderr.contains("--allow_overwrite=1"), "{}", r.stderr);
        assert!(r.stderr.contains(&format!("non-zero byte at offset {at}")), "{extra:?}: {}", r.stderr);
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "untouched");
    let r = run(d.path(), "read", &q.uri("theirs"), &["--rw", "randread", "--number_ios", "200"]);
    assert_eq!(r.code, 0, "reading is always allowed: {}", r.stderr);
    let r = run(d.path(), "allowed", &q.uri("theirs"), &[&w[..], &["--allow_overwrite", "1"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("allowed")), 0, "write"), 500);
    assert_ne!(std::fs::read(&file).unwrap(), before, "allowed writes happen");
}

#[test]
fn a_read_only_export_is_refused_for_writes_and_a_job_larger_than_the_export_too() {
    let d = scratch();
    let Some(ro) = Server::nbdkit_tcp(&["-r", "memory", "16M"]) else { return };
    let r = run(d.path(), "w", &ro.uri(""), &["--rw", "randwrite", "--number_ios", "10", "--allow_overwrite", "1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is read-only"), "{}", r.stderr);
    let r = run(d.path(), "r", &ro.uri(""), &["--rw", "randread", "--number_ios", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(d.path(), "big", &ro.uri(""), &["--rw", "randread", "--size", "32m", "--number_ios", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("holds 16777216 bytes"), "{}", r.stderr);
}

#[test]
fn block_sizes_the_export_refuses_are_a_clear_error_before_the_run() {
    // The server fails every request outside 4 KiB..64 KiB (EINVAL): a run
    // of 512-byte reads used to measure 10,000 errors a second.
    let d = scratch();
    let args =
        ["--filter=blocksize-policy", "memory", "16M", "blocksize-minimum=4096", "blocksize-maximum=65536", "blocksize-error-policy=error"];
    let Some(srv) = Server::nbdkit_tcp(&args) else { return };
    for (bs, says) in [("512", "not a multiple of the export's minimum block size 4096"), ("1m", "use a bs of at most 65536")] {
        let r = run(d.path(), "small", &srv.uri(""), &["--rw", "randread", "--bs", bs, "--number_ios", "100"]);
        assert_eq!(r.code, 2, "bs={bs}: {}", r.stderr);
        assert!(r.stderr.contains(says), "bs={bs}: {}", r.stderr);
        assert!(!d.path().join("small").join("result.json").exists());
    }
    let r = run(d.path(), "ok", &srv.uri(""), &["--rw", "randread", "--bs", "16k", "--number_ios", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("ok"));
    assert_eq!((ios(&doc, 0, "read"), errors(&doc)), (100, 0));
}

#[test]
fn a_server_killed_mid_run_ends_the_run_with_results_and_errors() {
    let d = scratch();
    let Some(mut srv) = Server::nbdkit_tcp(&["memory", "64M"]) else { return };
    let uri = srv.uri("");
    let child = Command::new(bin())
        .args(["run", "--name", "k", "--ioengine", "nbd", "--uri", &uri, "--rw", "randrw", "--bs", "4k", "--iodepth", "16"])
        .args(["--runtime", "60", "--time_based", "--results-dir", "out", "--quiet"])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Instant::now();
    srv.kill();
    let out = child.wait_with_output().unwrap();
    let took = killed.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(took < Duration::from_secs(20), "the run went on {took:?} after the server died: {stderr}");
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    let doc = result_json(&d.path().join("out"));
    let failures = doc["jobs"][0]["failures"].to_string();
    assert!(failures.contains("the server closed the connection"), "the worker says why it ended: {failures}\n{stderr}");
    assert!(ios(&doc, 0, "read") + ios(&doc, 0, "write") > 100, "what ran before is reported");
    assert!(errors(&doc) > 0, "the in-flight operations failed: {}", doc["jobs"][0]["ops"]);
}

#[test]
fn bad_uris_and_tls_only_servers_are_clear_errors() {
    let d = scratch();
    for bad in ["127.0.0.1:10809", "nbd+unix:///disk", "nbds://127.0.0.1/x"] {
        let r = run(d.path(), "o", bad, &["--rw", "randread", "--number_ios", "1"]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("option 'uri'") && r.stderr.contains("nbd+unix:///[EXPORT]?socket=PATH"), "{bad}: {}", r.stderr);
    }
    let psk = d.path().join("keys.psk");
    std::fs::write(&psk, "alice:0123456789abcdef0123456789abcdef\n").unwrap();
    let psk_arg = format!("--tls-psk={}", psk.display());
    let Some(tls) = Server::nbdkit_tcp(&["--tls=require", &psk_arg, "memory", "16M"]) else { return };
    let r = run(d.path(), "o", &tls.uri(""), &["--rw", "randread", "--number_ios", "1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("requires TLS"), "{}", r.stderr);
}

#[test]
fn a_replayed_trace_trims_through_qemu_nbd_into_the_backing_file() {
    // Writes over the first 128 KiB, a flush, then a discard of the first
    // 64 KiB: the discard reaches the file as a hole (qemu-nbd --discard=unmap).
    let d = scratch();
    let file = d.path().join("backing.img");
    sparse(&file, 4 << 20);
    let Some(q) = Server::qemu_unix(d.path(), "disk", &file) else { return };
    let mut trace = String::from("fio version 3 iolog\n");
    for i in 0..32u64 {
        trace.push_str(&format!("{} /dev/vdb write {} 4096\n", i * 100, i * 4096));
    }
    trace.push_str("3300 /dev/vdb sync 0 0\n3400 /dev/vdb trim 0 65536\n");
    std::fs::write(d.path().join("t.log"), trace).unwrap();
    let r = storbench(
        d.path(),
        &["replay", "t.log", "--ioengine", "nbd", "--uri", &q.uri("disk"), "--size", "1m"]
            .into_iter()
            .chain(["--results-dir", "o", "--quiet"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("o"));
    assert_eq!((ios(&doc, 0, "write"), ios(&doc, 0, "sync"), ios(&doc, 0, "trim")), (32, 1, 1));
    assert_eq!(errors(&doc), 0);
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes[..65536].iter().all(|b| *b == 0), "the trimmed range reads as zeros");
    assert!(bytes[65536..131072].iter().any(|b| *b != 0), "the writes after it are there");
}

/// Freeze an NBD server (SIGSTOP) with `act`'s signal to storbench after
/// it; the server is thawed however the test ends, then killed.
struct Frozen(i32);

impl Frozen {
    fn new(srv: &Server) -> Frozen {
        let pid = srv.child.id() as i32;
        signal(pid, libc::SIGSTOP);
        Frozen(pid)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal(self.0, libc::SIGCONT);
    }
}

/// nbdkit stopped with SIGSTOP mid-run: its connections stay open and
/// nothing is answered. A Ctrl-C still ends the run at once: the measured
/// phase ends, what is in flight gets its one-second grace and is cut off,
/// exit 130 with every results file written (before: SIGINT, SIGINT and
/// SIGTERM ignored, nothing written; only SIGKILL ended it). Left alone,
/// the run ends on time (runtime + the grace), its rates over the
/// measured seconds only. (A fresh server for each: nbdkit 1.x asserts and
/// aborts when, thawed, it answers on a connection storbench shut.)
#[test]
fn a_frozen_server_holds_up_neither_a_ctrl_c_nor_the_end_of_the_run() {
    let d = scratch();
    let job = |srv: &Server, out: &'static str, runtime: &'static str| {
        let uri = srv.uri("");
        let a = ["run", "--name", "n", "--ioengine", "nbd", "--uri", &uri, "--size", "64m", "--rw", "randrw", "--iodepth", "8"];
        let mut a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        a.extend(["--time_based", "1", "--runtime", runtime, "--results-dir", out].map(String::from));
        a
    };
    let frozen = std::cell::RefCell::new(None);
    let interrupt = |pid: i32| signal(pid, libc::SIGINT);

    // Frozen 1.5 s into the measured phase, then Ctrl-C.
    let Some(srv) = Server::nbdkit_tcp(&["memory", "256M"]) else { return };
    let freeze = |_: i32| *frozen.borrow_mut() = Some(Frozen::new(&srv));
    let a = job(&srv, "ctrlc", "30");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let steps: [(&str, Duration, Act); 2] = [("measuring", Duration::from_millis(1500), &freeze), ("", Duration::from_secs(1), &interrupt)];
    let (r, took) = staged(d.path(), &[], &a, &steps, Duration::from_secs(20));
    eprintln!("INTERRUPT | nbd | measured, server frozen | SIGINT | {} ms | exit {}", took.as_millis(), r.code);
    assert!(took < Duration::from_millis(2500), "exited {} ms after SIGINT: {}", took.as_millis(), r.stderr);
    assert_eq!(r.code, 130, "{}", r.stderr);
    let res = run_result(&d.path().join("ctrlc"));
    let job0 = &res.jobs[0];
    assert!(res.interrupted && job0.total_ios() > 100, "the seconds before the freeze are measured: {}", r.stdout);
    assert!(job0.cut_off > 0, "what was in flight is counted as cut off: {:?}", job0.warnings);
    assert!(job0.runtime_ns < 3_000_000_000, "the measured phase ended at the Ctrl-C, not after the grace: {} ns", job0.runtime_ns);
    for f in ["summary.txt", "series.csv", "fio.json"] {
        assert!(d.path().join("ctrlc").join(f).exists(), "{f} written");
    }
    drop(frozen.borrow_mut().take());

    // Frozen 1 s into a 3 s run, left alone.
    let Some(srv) = Server::nbdkit_tcp(&["memory", "256M"]) else { return };
    let freeze = |_: i32| *frozen.borrow_mut() = Some(Frozen::new(&srv));
    let a = job(&srv, "alone", "3");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let nothing = |_: i32| {};
    let steps: [(&str, Duration, Act); 2] = [("measuring", Duration::from_secs(1), &freeze), ("", Duration::ZERO, &nothing)];
    let (r, took) = staged(d.path(), &[], &a, &steps, Duration::from_secs(40));
    eprintln!("FAULT | nbd | measured | server frozen, no signal | {} ms after the freeze | exit {}", took.as_millis(), r.code);
    assert!(took < Duration::from_millis(3500), "the 3 s run ended {} ms after the freeze: {}", took.as_millis(), r.stderr);
    let res = run_result(&d.path().join("alone"));
    let j = &res.jobs[0];
    assert!(j.runtime_ns <= 3_050_000_000, "the phase is not stretched past its end: {} ns", j.runtime_ns);
    assert!(j.cut_off > 0 && j.warnings.iter().any(|w| w.message().contains("cut off")), "{:?}", j.warnings);
    assert_eq!(r.code, 1, "operations the server never answered make the run a failure: {}", r.stderr);
    let read = j.op(storbench_workload::OpKind::Read).expect("reads");
    assert!((read.iops * j.runtime_ns as f64 / 1e9 - read.ios as f64).abs() < 1.0, "IOPS over the measured seconds");
    drop(frozen.borrow_mut().take());
}

/// A server frozen before the run: the handshake waits 10 s at most and
/// says it timed out (before: "Resource temporarily unavailable", EAGAIN),
/// and a Ctrl-C during that wait ends the run at once, exit 130.
#[test]
fn a_frozen_server_times_out_the_handshake_by_name_and_a_ctrl_c_ends_the_wait() {
    let d = scratch();
    let Some(srv) = Server::nbdkit_tcp(&["memory", "64M"]) else { return };
    let _frozen = Frozen::new(&srv);
    let t0 = Instant::now();
    let r = run(d.path(), "o", &srv.uri(""), &["--rw", "randread", "--number_ios", "1"]);
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(15), "{took:?}: {}", r.stderr);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("timed out") && !r.stderr.contains("temporarily unavailable"), "a timeout by name: {}", r.stderr);
    let uri = srv.uri("");
    let a = ["run", "--name", "n", "--ioengine", "nbd", "--uri", &uri, "--rw", "randread", "--runtime", "5", "--results-dir", "i"];
    let (r, took) = signalled(d.path(), &[], &a, &[("", Duration::from_secs(2), libc::SIGINT)]);
    eprintln!("INTERRUPT | nbd | handshake, server frozen | SIGINT | {} ms | exit {}", took.as_millis(), r.code);
    assert!(took < Duration::from_secs(1), "exited {} ms after SIGINT: {}", took.as_millis(), r.stderr);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(r.stderr.contains("interrupted"), "{}", r.stderr);
}

/// fio's examples/nbd.fio, scaled down: four jobs at offsets of one export,
/// the URI from the environment as fio's `${unixsocket}`; it runs (it was
/// refused as "fio's NBD engine is not supported") and each job does both
/// reads and writes where its offset puts it.
#[test]
fn fio_s_nbd_example_runs_through_the_nbd_engine() {
    let d = scratch();
    let Some(server) = Server::nbdkit_unix(d.path(), &["memory", "size=64M"]) else { return };
    let Listen::Unix(sock) = &server.listen else { unreachable!() };
    let job = "[global]\nioengine=nbd\nuri=nbd+unix:///?socket=${unixsocket}\nrw=randrw\ntime_based\nruntime=1\n\
               group_reporting\niodepth=16\nsize=16m\n[job0]\noffset=0\n[job1]\noffset=16m\n[job2]\noffset=32m\n[job3]\noffset=48m\n";
    std::fs::write(d.path().join("nbd.fio"), job).unwrap();
    let r = storbench_env(
        d.path(),
        &[("unixsocket", sock.display().to_string())],
        &["run", "--fio", "nbd.fio", "--results-dir", "out", "--quiet"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    for job in 0..4 {
        assert!(ios(&doc, job, "read") > 0 && ios(&doc, job, "write") > 0, "job {job}: {}", doc["jobs"][job]["ops"]);
        assert_eq!(errors(&doc), 0);
    }
}

/// The servers' readiness check asks who listens, not only whether a
/// connection goes through: a port this process holds is not another's.
#[test]
fn a_port_another_process_holds_is_not_taken_for_the_servers() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let mut other = Command::new("sleep").arg("5").spawn().unwrap();
    assert!(listens_on(std::process::id(), port), "this process listens on {port}");
    assert!(!listens_on(other.id(), port), "the child does not, though a connect to {port} succeeds");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
    let _ = other.kill();
    let _ = other.wait();
}
