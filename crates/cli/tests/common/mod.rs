//! Helpers shared by the CLI tests: run the real binary in a scratch directory.

#![allow(dead_code)]

pub mod chromium;
pub mod fleet;
pub mod store;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_storbench")
}

pub fn storbench(dir: &Path, args: &[&str]) -> Run {
    Run::from(Command::new(bin()).args(args).current_dir(dir).output().expect("run storbench"))
}

pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("storbench-test-").tempdir_in(std::env::temp_dir()).expect("temp dir")
}

/// Entries of a directory, sorted (to check nothing was written).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

pub fn result_json(results: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(results.join("result.json")).expect("result.json written");
    serde_json::from_str(&text).expect("result.json is JSON")
}

pub fn results_dir(dir: &Path) -> PathBuf {
    dir.join("out")
}

/// ios of one op kind of one job in a result document.
pub fn ios(doc: &serde_json::Value, job: usize, op: &str) -> u64 {
    doc["jobs"][job]["ops"].as_array().unwrap().iter().find(|o| o["op"] == op).map(|o| o["ios"].as_u64().unwrap()).unwrap_or(0)
}

pub fn have(cmd: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {cmd}")).output().map(|o| o.status.success()).unwrap_or(false)
}

/// fio is installed; without it a test skips and says so (under CI it fails:
/// scripts/test.sh installs Debian's fio).
pub fn fio_available() -> bool {
    if have("fio") {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh must install it");
    eprintln!("SKIP: fio is not installed (scripts/test.sh installs it)");
    false
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `dir/small`, a tmpfs of `size` mounted there (needs root): a file
/// system that fills up. The caller unmounts it before judging.
pub fn small_tmpfs(dir: &Path, size: &str) -> PathBuf {
    let small = dir.join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&small).status().unwrap();
    assert!(mounted.success(), "mount a {size} tmpfs");
    small
}

/// Whether the Ceph test cluster (scripts/testenv/ceph) is up and its env
/// sourced. Without it Ceph tests skip and say why; under CI they fail.
pub fn ceph_cluster() -> bool {
    if std::env::var_os("CEPH_CONF").is_some() && std::env::var_os("STORBENCH_CEPH_POOL").is_some() {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "no Ceph test cluster in CI: scripts/test.sh must start scripts/testenv/ceph");
    eprintln!("SKIP: no Ceph test cluster (run scripts/testenv/ceph up and source its env file)");
    false
}

/// Bytes of an RBD image that were ever written (`rbd diff` of a new image
/// lists only written extents).
pub fn rbd_written(image: &str) -> u64 {
    let diff = Command::new("rbd").args(["diff", "--format", "json", image]).output().expect("rbd diff");
    let extents: serde_json::Value = serde_json::from_slice(&diff.stdout).expect("rbd diff's JSON");
    extents.as_array().expect("extents").iter().filter(|e| e["exists"] == "true").map(|e| e["length"].as_u64().unwrap_or(0)).sum()
}

/// Objects in a pool whose names start with `prefix` (through the rados CLI).
pub fn rados_objects(pool: &str, prefix: &str) -> Vec<String> {
    let out = Command::new("rados").args(["-p", pool, "ls"]).output().expect("rados ls");
    assert!(out.status.success(), "rados ls: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with(prefix)).map(String::from).collect()
}

/// S3 (RGW) credentials from the Ceph test cluster's env, as the engine's
/// standard variables. Skips (and says why) without the cluster; fails in CI.
pub fn s3_env() -> Option<Vec<(&'static str, String)>> {
    if !ceph_cluster() {
        return None;
    }
    let v = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} missing from the Ceph test env"));
    Some(vec![
        ("AWS_ENDPOINT_URL", v("STORBENCH_S3_ENDPOINT")),
        ("AWS_ACCESS_KEY_ID", v("STORBENCH_S3_ACCESS_KEY")),
        ("AWS_SECRET_ACCESS_KEY", v("STORBENCH_S3_SECRET_KEY")),
    ])
}

/// [`s3_env`] on RGW's https endpoint, and the test CA's certificate file.
pub fn s3_tls_env() -> Option<(Vec<(&'static str, String)>, String)> {
    let mut env = s3_env()?;
    let v = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} missing from the Ceph test env"));
    env.retain(|(k, _)| *k != "AWS_ENDPOINT_URL");
    env.push(("AWS_ENDPOINT_URL", v("STORBENCH_S3_TLS_ENDPOINT")));
    Some((env, v("STORBENCH_TLS_CA")))
}

/// Swift credentials: RGW's Swift API (`rgw`) or the Swift all-in-one (`aio`).
pub fn swift_env(which: &str) -> Option<Vec<(&'static str, String)>> {
    let (auth, user, key, what) = match which {
        "rgw" => ("STORBENCH_SWIFT_AUTH", "STORBENCH_SWIFT_USER", "STORBENCH_SWIFT_KEY", "Ceph test cluster"),
        _ => {
            ("STORBENCH_SWIFT_AIO_AUTH", "STORBENCH_SWIFT_AIO_USER", "STORBENCH_SWIFT_AIO_KEY", "Swift all-in-one (scripts/testenv/swift)")
        }
    };
    if std::env::var_os(auth).is_none() {
        assert!(std::env::var_os("CI").is_none(), "no {what} in CI: scripts/test.sh must start it");
        eprintln!("SKIP: no {what} (start it and source its env file)");
        return None;
    }
    let v = |k: &str| std::env::var(k).unwrap();
    Some(vec![("ST_AUTH", v(auth)), ("ST_USER", v(user)), ("ST_KEY", v(key))])
}

/// Keystone v3 credentials (OS_* variables) for the Swift all-in-one's
/// Keystone proxy.
pub fn keystone_env() -> Option<Vec<(&'static str, String)>> {
    if std::env::var_os("STORBENCH_SWIFT_KS_AUTH_URL").is_none() {
        assert!(std::env::var_os("CI").is_none(), "no Keystone in CI: scripts/test.sh must start scripts/testenv/swift");
        eprintln!("SKIP: no Keystone (scripts/testenv/swift up, then source its env file)");
        return None;
    }
    let v = |k: &str| std::env::var(k).unwrap();
    Some(vec![
        ("OS_AUTH_URL", v("STORBENCH_SWIFT_KS_AUTH_URL")),
        ("OS_USERNAME", v("STORBENCH_SWIFT_KS_USER")),
        ("OS_PASSWORD", v("STORBENCH_SWIFT_KS_PASSWORD")),
        ("OS_PROJECT_NAME", v("STORBENCH_SWIFT_KS_PROJECT")),
    ])
}

/// Run storbench with extra environment variables.
pub fn storbench_env(dir: &Path, env: &[(&str, String)], args: &[&str]) -> Run {
    let mut c = Command::new(bin());
    c.args(args).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    Run::from(c.output().expect("run storbench"))
}

/// A Swift storage URL and token for the credentials of [`swift_env`], got
/// with curl behind storbench's back.
pub fn swift_session(env: &[(&'static str, String)]) -> (String, String) {
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let out = Command::new("curl")
        .args([
            "-sf",
            "-i",
            "-H",
            &format!("X-Auth-User: {}", get("ST_USER")),
            "-H",
            &format!("X-Auth-Key: {}", get("ST_KEY")),
            &get("ST_AUTH"),
        ])
        .output()
        .expect("curl");
    assert!(out.status.success(), "curl auth: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let header = |name: &str| {
        text.lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim().to_string()))
            .unwrap_or_else(|| panic!("{name} missing from the auth answer:\n{text}"))
    };
    (header("X-Storage-Url"), header("X-Auth-Token"))
}

/// The HTTP status of a HEAD on `url` with a Swift token.
pub fn swift_head(url: &str, token: &str) -> u16 {
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-I", "-H", &format!("X-Auth-Token: {token}"), url])
        .output()
        .expect("curl");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
}

/// The results of one run, as the model (not by indexing JSON).
pub fn run_result(results: &Path) -> storbench_model::RunResult {
    let text = std::fs::read_to_string(results.join("result.json")).expect("result.json written");
    serde_json::from_str(&text).expect("result.json is a storbench result")
}

/// `storbench show DIR --format FORMAT`'s standard output (it must succeed).
pub fn show(dir: &Path, results: &str, format: &str) -> String {
    let r = storbench(dir, &["show", results, "--format", format]);
    assert_eq!(r.code, 0, "show {results} --format {format}: {}", r.stderr);
    r.stdout
}

/// Run storbench in `dir`, send it SIGINT after `after`, and wait for it.
pub fn interrupted(dir: &Path, args: &[&str], after: std::time::Duration) -> Run {
    let child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run storbench");
    std::thread::sleep(after);
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    Run::from(child.wait_with_output().expect("storbench ends"))
}

/// Whether storbench measures in a child that starts a session of its own
/// here (crates/cli/src/own_session.rs): the kernel's autogroup is on and
/// the test's environment does not opt out (the test is no session leader).
pub fn measures_apart() -> bool {
    let on = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|s| s.trim() != "0");
    on && std::env::var_os("STORBENCH_SAME_SESSION").is_none_or(|v| v != "1")
}

/// The children of process `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    text.split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

/// The process that measures for the storbench process `pid`: the child it
/// starts in a session of its own (once it is there, within 10 s), or
/// `pid` itself where it measures in place.
pub fn measuring(pid: u32) -> u32 {
    if !measures_apart() {
        return pid;
    }
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let same = |c: &u32| std::fs::read_link(format!("/proc/{c}/exe")).ok() == std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        if let Some(c) = children(pid).into_iter().find(same) {
            return c;
        }
        if std::time::Instant::now() > end || !Path::new(&format!("/proc/{pid}")).exists() {
            return pid;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A crash: the measuring process of storbench `pid` SIGKILLed, with no
/// chance to clean up (the launcher then dies of the same signal). A
/// SIGKILL of the launcher alone is a stop (its child gets SIGTERM).
pub fn crash(pid: u32) {
    signal(measuring(pid) as i32, libc::SIGKILL);
}

/// `child` (a storbench process the test started) and the process it
/// measures in, SIGKILLed: a test giving up on a hung run.
pub fn kill_all(child: &mut std::process::Child) {
    for c in children(child.id()) {
        signal(c as i32, libc::SIGKILL);
    }
    let _ = child.kill();
}

/// `storbench swift-bench` with the credentials of [`swift_env`] and `more`.
pub fn swift_bench_args(env: &[(&'static str, String)], more: &[&str]) -> Vec<String> {
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let mut a: Vec<String> = ["swift-bench", "-A", &get("ST_AUTH"), "-U", &get("ST_USER"), "-K", &get("ST_KEY")].map(String::from).into();
    a.extend(more.iter().map(|s| s.to_string()));
    a
}

/// A run sent signals as its standard error shows stages: for each step
/// `(when, after, signal)`, `signal` goes `after` the first line containing
/// `when` (e.g. "measuring"); a SIGKILL is a crash ([`crash`]). What it
/// printed, and how long after the last signal it exited. Gives up (kills
/// it) after two minutes.
pub fn signalled(
    dir: &Path,
    env: &[(&str, String)],
    args: &[&str],
    steps: &[(&str, std::time::Duration, i32)],
) -> (Run, std::time::Duration) {
    // A SIGKILL is a crash: it goes to the process that measures.
    let send = |pid: i32, sig: i32| if sig == libc::SIGKILL { crash(pid as u32) } else { signal(pid, sig) };
    let kills: Vec<_> = steps.iter().map(|(_, _, sig)| move |pid: i32| send(pid, *sig)).collect();
    let acts: Vec<(&str, std::time::Duration, Act)> = steps.iter().zip(&kills).map(|((w, a, _), k)| (*w, *a, k as Act)).collect();
    staged(dir, env, args, &acts, std::time::Duration::from_secs(120))
}

/// Send `sig` to process `pid` (one the test started).
pub fn signal(pid: i32, sig: i32) {
    // 0 is the test's own process group (cargo, the CI shell), -1 every
    // process: a lookup that found no process must fail the test, not them.
    assert!(pid > 1, "no process to signal (pid {pid})");
    // SAFETY: sending a signal to a process the test started.
    unsafe { libc::kill(pid, sig) };
}

/// What a step of [`staged`] does; it is given storbench's process id.
pub type Act<'a> = &'a dyn Fn(i32);

/// A run acted upon as its standard error shows stages: for each step
/// `(when, after, act)`, `act` runs `after` the first line containing
/// `when` (an empty `when`: `after` the previous step). What it printed, and
/// how long after the last step it exited. A run still alive `limit` after
/// the last step is killed (SIGKILL) and its exit time is then `limit` or
/// more, so a hang fails the test's time bound instead of hanging the test;
/// one that never shows a stage fails after two minutes.
pub fn staged(
    dir: &Path,
    env: &[(&str, String)],
    args: &[&str],
    steps: &[(&str, std::time::Duration, Act)],
    limit: std::time::Duration,
) -> (Run, std::time::Duration) {
    use std::io::BufRead;
    let mut c = Command::new(bin());
    c.args(args).current_dir(dir).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("run storbench");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut stdout = child.stdout.take().expect("piped");
    let out_reader = std::thread::spawn(move || std::io::read_to_string(&mut stdout).unwrap_or_default());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut missed = None;
    let mut sent = std::time::Instant::now();
    for (when, after, act) in steps {
        let seen = when.is_empty()
            || loop {
                match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
                    Ok(line) if line.contains(when) => break true,
                    Ok(_) => {}
                    Err(_) => break false,
                }
            };
        if !seen {
            missed = Some(*when);
            kill_all(&mut child);
            break;
        }
        std::thread::sleep(*after);
        sent = std::time::Instant::now();
        act(pid);
    }
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for storbench") {
            break s;
        }
        if sent.elapsed() >= limit {
            kill_all(&mut child);
            break child.wait().expect("storbench killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let took = sent.elapsed();
    let stderr = reader.join().unwrap_or_default();
    let stdout = out_reader.join().unwrap_or_default();
    assert!(missed.is_none(), "storbench never said '{}':\n{stderr}", missed.unwrap_or_default());
    (Run { code: status.code().unwrap_or(-1), stdout, stderr }, took)
}

pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

fn schema() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/result-v1.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The result document matches schema/result-v1.json.
pub fn assert_valid(doc: &serde_json::Value) {
    let schema = schema();
    let compiled = jsonschema::JSONSchema::options().with_draft(jsonschema::Draft::Draft202012).compile(&schema).expect("schema compiles");
    let msgs: Vec<String> = match compiled.validate(doc) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.map(|e| format!("{} at {}", e, e.instance_path)).collect(),
    };
    assert!(msgs.is_empty(), "result does not match schema/result-v1.json:\n{}", msgs.join("\n"));
}

/// A loop device over a file: a real block device. Needs root and losetup.
/// `n` bytes no file system or compressor mistakes for anything (xorshift).
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

pub struct Loop {
    pub dev: String,
}

impl Loop {
    pub fn new(backing: &std::path::Path, sector: u32) -> Option<Loop> {
        if !is_root() || !have("losetup") {
            eprintln!("SKIP: loop devices need root and losetup");
            return None;
        }
        let out = Command::new("losetup").args(["--find", "--show", "--sector-size", &sector.to_string()]).arg(backing).output().ok()?;
        if !out.status.success() {
            panic!("losetup failed as root: {}", String::from_utf8_lossy(&out.stderr));
        }
        Some(Loop { dev: String::from_utf8_lossy(&out.stdout).trim().to_string() })
    }
}

impl Loop {
    /// A loop device doing direct I/O to its backing file (`--direct-io=on`):
    /// its reads wait for the disk under the file, not the page cache.
    pub fn direct(backing: &std::path::Path) -> Option<Loop> {
        if !is_root() || !have("losetup") {
            eprintln!("SKIP: loop devices need root and losetup");
            return None;
        }
        let out = Command::new("losetup").args(["--find", "--show", "--direct-io=on"]).arg(backing).output().ok()?;
        if !out.status.success() {
            panic!("losetup --direct-io=on failed as root: {}", String::from_utf8_lossy(&out.stderr));
        }
        Some(Loop { dev: String::from_utf8_lossy(&out.stdout).trim().to_string() })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// storbench with its standard output a pipe whose reader has already gone
/// (`storbench ... | head` after head exits): every write to it fails.
pub fn into_closed_pipe(dir: &Path, args: &[&str]) -> Run {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(bin()).args(args).current_dir(dir).stdout(writer).stderr(std::process::Stdio::piped()).output();
    Run::from(out.expect("run storbench"))
}

/// storbench with its standard output on a full disk (`> /dev/full`: every
/// write fails with ENOSPC), standard error captured.
pub fn into_full_disk(dir: &Path, args: &[&str]) -> Run {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let out = Command::new(bin()).args(args).current_dir(dir).stdout(full).stderr(std::process::Stdio::piped()).output();
    Run::from(out.expect("run storbench"))
}

/// Whether process `pid` itself holds the listening socket on `port`: a
/// connection alone does not say so. Another test's server may have taken
/// the port between the kernel naming it free and this server binding it;
/// this one then exits (address in use) while a connect still succeeds, to
/// the other, which goes away when its test ends (CI saw "Connection
/// refused" in the middle of a test that way).
pub fn listens_on(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else { return false };
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit(':').next()?;
            let (state, inode) = (f.get(3)?, f.get(9)?);
            (*state == "0A" && u16::from_str_radix(local_port, 16).ok()? == port).then(|| format!("socket:[{inode}]"))
        })
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str())))
}

/// How soon after a Ctrl-C a run must have exited in tests that time it.
/// The promise is a second (0.3-0.6 s typical here); the bound leaves room
/// for a loaded machine (1.07-1.18 s seen at load 5) and still fails a run
/// that waits out a storage timeout (10 s and more) or hangs.
pub const EXIT_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// What a server appended to its log while `run` ran.
pub fn captured(log: &Path, run: impl FnOnce()) -> String {
    let before = std::fs::metadata(log).map_or(0, |m| m.len()) as usize;
    run();
    // Servers write an entry as a request ends: wait until the log stops growing.
    let len = || std::fs::metadata(log).map_or(0, |m| m.len());
    let mut last = len();
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        match len() {
            l if l == last => break,
            l => last = l,
        }
    }
    let all = std::fs::read(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    String::from_utf8_lossy(&all[before.min(all.len())..]).into_owned()
}
