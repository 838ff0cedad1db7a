//! Only storbench's own objects are ever deleted, and a run's journal finds
//! everything it made: objects storbench writes carry its mark (a RADOS
//! xattr, S3 user metadata, a Swift content type), `storbench cleanup` by
//! prefix removes only marked ones (foreign objects beside them are kept and
//! counted; `--force` removes them too), `storbench cleanup RESULTS_DIR`
//! removes exactly what a run killed with SIGKILL left (a fleet agent's
//! objects too), a prefill far beyond a pool's free space is refused before
//! anything is written, and an RBD image a run made is named and removed.
//! The stores' own tools (rados, radosgw-admin, Swift's listing) judge.

mod common;
use common::fleet::{fleet_dir, Agent};
use common::*;
use std::process::Command;
use std::time::Duration;

fn unique(tag: &str) -> String {
    format!("sbown-{tag}-{}", std::process::id())
}

/// The environment variable `k` of a test env list.
fn var(env: &[(&'static str, String)], k: &str) -> String {
    env.iter().find(|e| e.0 == k).map(|e| e.1.clone()).unwrap_or_else(|| panic!("{k} missing"))
}

/// A store the tests put foreign objects into and list, behind storbench's back.
trait Store {
    /// The engine options that name the place (pool, bucket, container).
    fn args(&self) -> Vec<String>;
    fn env(&self) -> Vec<(&'static str, String)>;
    /// Write an object storbench did not write.
    fn put_foreign(&self, name: &str);
    /// Names starting with `prefix`, by the store's own tool.
    fn list(&self, prefix: &str) -> Vec<String>;
    /// Remove whatever a failed test left.
    fn purge(&self);
}

struct Rados {
    pool: String,
}

impl Store for Rados {
    fn args(&self) -> Vec<String> {
        vec!["--ioengine".into(), "rados".into(), "--pool".into(), self.pool.clone()]
    }
    fn env(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    fn put_foreign(&self, name: &str) {
        let out = Command::new("rados").args(["-p", &self.pool, "put", name, "/etc/hostname"]).output().unwrap();
        assert!(out.status.success(), "rados put: {}", String::from_utf8_lossy(&out.stderr));
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        let mut v = rados_objects(&self.pool, prefix);
        v.sort();
        v
    }
    fn purge(&self) {}
}

struct S3 {
    bucket: String,
    env: Vec<(&'static str, String)>,
}

impl S3 {
    fn curl(&self, method: &str, key: &str, data: Option<&str>) -> std::process::Output {
        let url = format!("{}/{}/{key}", var(&self.env, "AWS_ENDPOINT_URL"), self.bucket);
        let user = format!("{}:{}", var(&self.env, "AWS_ACCESS_KEY_ID"), var(&self.env, "AWS_SECRET_ACCESS_KEY"));
        let mut c = Command::new("curl");
        // RGW wants the payload hash header, which curl's signer leaves out.
        c.args([
            "-sf",
            "-X",
            method,
            "-H",
            "x-amz-content-sha256: UNSIGNED-PAYLOAD",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "-u",
            &user,
            &url,
        ]);
        if let Some(d) = data {
            c.args(["--data-binary", d]);
        }
        c.output().unwrap()
    }
}

impl Store for S3 {
    fn args(&self) -> Vec<String> {
        vec!["--ioengine".into(), "s3".into(), "--bucket".into(), self.bucket.clone()]
    }
    fn env(&self) -> Vec<(&'static str, String)> {
        self.env.clone()
    }
    fn put_foreign(&self, name: &str) {
        // The bucket, if it is not there yet (an error if it is: ignored).
        let _ = self.curl("PUT", "", None);
        let out = self.curl("PUT", name, Some("someone else's"));
        assert!(out.status.success(), "curl PUT: {}", String::from_utf8_lossy(&out.stderr));
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        let out =
            Command::new("radosgw-admin").args(["bucket", "list", "--bucket", &self.bucket, "--max-entries", "100000"]).output().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let mut v: Vec<String> =
            doc.as_array().map(|a| a.iter().filter_map(|o| o["name"].as_str().map(String::from)).collect()).unwrap_or_default();
        v.retain(|n| n.starts_with(prefix) && !n.starts_with(".storbench"));
        v.sort();
        v
    }
    fn purge(&self) {
        let _ = Command::new("radosgw-admin").args(["bucket", "rm", "--bucket", &self.bucket, "--purge-objects"]).output();
    }
}

struct Swift {
    container: String,
    env: Vec<(&'static str, String)>,
    url: String,
    token: String,
}

impl Swift {
    fn new(container: String, env: Vec<(&'static str, String)>) -> Swift {
        let (url, token) = swift_session(&env);
        Swift { container, env, url, token }
    }
    fn curl(&self, method: &str, path: &str, data: Option<&str>) -> std::process::Output {
        let mut c = Command::new("curl");
        c.args(["-sf", "-X", method, "-H", &format!("X-Auth-Token: {}", self.token), &format!("{}/{path}", self.url)]);
        if let Some(d) = data {
            c.args(["--data-binary", d]);
        }
        c.output().unwrap()
    }
}

impl Store for Swift {
    fn args(&self) -> Vec<String> {
        vec!["--ioengine".into(), "swift".into(), "--container".into(), self.container.clone()]
    }
    fn env(&self) -> Vec<(&'static str, String)> {
        self.env.clone()
    }
    fn put_foreign(&self, name: &str) {
        assert!(self.curl("PUT", &self.container, None).status.success(), "PUT container");
        let out = self.curl("PUT", &format!("{}/{name}", self.container), Some("someone else's"));
        assert!(out.status.success(), "curl PUT: {}", String::from_utf8_lossy(&out.stderr));
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        let out = self.curl("GET", &format!("{}?format=json&prefix={prefix}", self.container), None);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let mut v: Vec<String> =
            doc.as_array().map(|a| a.iter().filter_map(|o| o["name"].as_str().map(String::from)).collect()).unwrap_or_default();
        v.sort();
        v
    }
    fn purge(&self) {
        for n in self.list("") {
            let _ = self.curl("DELETE", &format!("{}/{n}", self.container), None);
        }
        let _ = self.curl("DELETE", &self.container, None);
    }
}

fn words(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A run writes 8 objects under `prefix` and keeps them (cleanup=0) beside a
/// foreign object under the same prefix; cleanup by prefix removes the 8
/// and keeps the foreign one (and says so); --force removes it too.
fn cleanup_by_prefix_keeps_foreign_objects(store: &dyn Store, prefix: &str) {
    let d = scratch();
    let env = store.env();
    let foreign = format!("{prefix}keepme");
    store.put_foreign(&foreign);
    let mut run: Vec<String> = ["run", "--name", "w", "--quiet", "--results-dir", "out"].map(String::from).into();
    run.extend(store.args());
    run.extend(
        ["--object_prefix", prefix, "--objects", "8", "--object_size", "4k", "--prefill", "1", "--rw", "randread", "--number_ios", "8"]
            .into_iter()
            .chain(["--cleanup", "0"])
            .map(String::from),
    );
    let r = storbench_env(d.path(), &env, &words(&run));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(store.list(prefix).len(), 9, "{:?}", store.list(prefix));
    let mut clean: Vec<String> = vec!["cleanup".into()];
    clean.extend(store.args());
    clean.extend(["--object_prefix".to_string(), prefix.to_string()]);
    let c = storbench_env(d.path(), &env, &words(&clean));
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains("removed 8 objects"), "{}", c.stdout);
    assert!(c.stderr.contains("1 objects under") && c.stderr.contains("not written by storbench: kept; --force"), "{}", c.stderr);
    assert_eq!(store.list(prefix), vec![foreign.clone()], "the foreign object stays, storbench's are gone");
    clean.push("--force".into());
    let f = storbench_env(d.path(), &env, &words(&clean));
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(f.stdout.contains("removed 1 objects"), "{}", f.stdout);
    assert!(store.list(prefix).is_empty(), "--force removes it too");
    store.purge();
}

#[test]
fn cleanup_by_prefix_removes_only_storbenchs_objects_from_a_rados_pool() {
    if !ceph_cluster() {
        return;
    }
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    cleanup_by_prefix_keeps_foreign_objects(&Rados { pool }, &format!("{}.", unique("prefix")));
}

#[test]
fn cleanup_by_prefix_removes_only_storbenchs_objects_from_an_rgw_bucket() {
    let Some(env) = s3_env() else { return };
    cleanup_by_prefix_keeps_foreign_objects(&S3 { bucket: unique("bucket"), env }, "k");
}

#[test]
fn cleanup_by_prefix_removes_only_storbenchs_objects_from_a_swift_container() {
    let Some(env) = swift_env("aio") else { return };
    cleanup_by_prefix_keeps_foreign_objects(&Swift::new(unique("container"), env), "k");
}

#[test]
fn cleanup_by_prefix_removes_only_storbenchs_objects_through_rgws_swift_api() {
    let Some(env) = swift_env("rgw") else { return };
    cleanup_by_prefix_keeps_foreign_objects(&Swift::new(unique("rgwswift"), env), "k");
}

/// A run SIGKILLed in its measured phase leaves its objects; `storbench
/// cleanup RESULTS_DIR` removes exactly those (a foreign object under the
/// same prefix stays), and a second cleanup has nothing to do.
fn a_killed_runs_objects_are_removed_by_its_results_directory(store: &dyn Store, prefix: &str) {
    let d = scratch();
    let env = store.env();
    let mut run: Vec<String> = ["run", "--name", "w", "--results-dir", "out"].map(String::from).into();
    run.extend(store.args());
    run.extend(
        ["--object_prefix", prefix, "--objects", "40", "--object_size", "4k", "--prefill", "1", "--rw", "randrw", "--runtime", "60"]
            .map(String::from),
    );
    let (r, took) = signalled(d.path(), &env, &words(&run), &[("measuring", Duration::from_millis(1500), libc::SIGKILL)]);
    assert!(took < Duration::from_secs(2), "SIGKILL ends it at once");
    assert_ne!(r.code, 0);
    // A write whose body was sent before the kill still lands on the
    // server (a Swift proxy finishes it): listed once the store is quiet.
    std::thread::sleep(Duration::from_millis(1000));
    let left = store.list(prefix);
    assert!(left.len() >= 20, "the killed run left its objects: {left:?}");
    let foreign = format!("{prefix}foreign");
    store.put_foreign(&foreign);
    let c = storbench_env(d.path(), &env, &["cleanup", "out"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    assert!(c.stdout.contains(&format!("removed {} objects", left.len())), "exactly the run's: {}", c.stdout);
    assert!(c.stderr.contains("1 objects under") && c.stderr.contains("kept"), "{}", c.stderr);
    assert_eq!(store.list(prefix), vec![foreign], "only the foreign object is left");
    let again = storbench_env(d.path(), &env, &["cleanup", "out"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("nothing to do"), "{}", again.stdout);
    store.purge();
}

#[test]
fn a_run_killed_on_rados_is_cleaned_up_from_its_results_directory() {
    if !ceph_cluster() {
        return;
    }
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    let rados = Rados { pool };
    let prefix = format!("{}.", unique("killed"));
    a_killed_runs_objects_are_removed_by_its_results_directory(&rados, &prefix);
    // The foreign object goes by hand.
    let _ = Command::new("rados").args(["-p", &rados.pool, "rm", &format!("{prefix}foreign")]).output();
}

#[test]
fn a_run_killed_on_s3_is_cleaned_up_from_its_results_directory() {
    let Some(env) = s3_env() else { return };
    a_killed_runs_objects_are_removed_by_its_results_directory(&S3 { bucket: unique("killed"), env }, "k.");
}

#[test]
fn a_run_killed_on_swift_is_cleaned_up_from_its_results_directory() {
    let Some(env) = swift_env("aio") else { return };
    a_killed_runs_objects_are_removed_by_its_results_directory(&Swift::new(unique("killed"), env), "k.");
}

/// A run that removed everything it made says so in its journal, and
/// `cleanup` of its directory has nothing to do.
#[test]
fn a_run_that_cleaned_up_leaves_nothing_for_cleanup() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    let prefix = format!("{}.", unique("clean"));
    let r = storbench(
        d.path(),
        &["run", "--name", "w", "--quiet", "--results-dir", "out", "--ioengine", "rados", "--pool", &pool, "--object_prefix", &prefix]
            .into_iter()
            .chain(["--objects", "8", "--object_size", "4k", "--prefill", "1", "--rw", "randread", "--runtime", "1"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let journal: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("out/journal.json")).unwrap()).unwrap();
    assert_eq!(journal["finished"], true);
    assert!(journal["entries"].as_array().unwrap().iter().all(|e| e["state"] == "done"), "{journal}");
    let c = storbench(d.path(), &["cleanup", "out"]);
    assert_eq!((c.code, c.stdout.contains("nothing to do")), (0, true), "{}{}", c.stdout, c.stderr);
}

/// A fleet of two agents writes under `a0.` and `a1.`; agent 1 is killed
/// (SIGKILL) mid-measurement, so its objects stay; the coordinator's
/// journal names its prefix, and `cleanup RESULTS_DIR` removes them.
#[test]
fn a_killed_fleet_agents_objects_are_removed_by_the_coordinators_results_directory() {
    if !ceph_cluster() {
        return;
    }
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    // On loopback addresses of their own: the test cluster listens on 127.0.0.1 only.
    let mut agents: Vec<Agent> =
        (1..=2).map(|i| Agent::start(None, &format!("127.0.0.9{i}:7450"), &fleet, dir.path().join(format!("agent{i}.log")), &[])).collect();
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    let p = format!("{}.", unique("fleet"));
    let fleet_arg = fleet.to_str().unwrap();
    let args = [
        "run",
        "--agents",
        "127.0.0.91,127.0.0.92",
        "--fleet-dir",
        fleet_arg,
        "--results-dir",
        "out",
        "--name",
        "w",
        "--ioengine",
        "rados",
        "--pool",
        &pool,
        "--object_prefix",
        &p,
        "--objects",
        "20",
        "--object_size",
        "4k",
        "--prefill",
        "1",
        "--rw",
        "randrw",
        "--runtime",
        "6",
    ];
    let mut c = Command::new(bin());
    c.args(args).current_dir(dir.path()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    agents[1].wait_for("connected", Duration::from_secs(20));
    std::thread::sleep(Duration::from_secs(3));
    agents[1].kill();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let left = rados_objects(&pool, &p);
    assert!(
        !left.is_empty() && left.iter().all(|o| o.starts_with(&format!("{p}a1."))),
        "agent 1's objects stay, agent 0 cleaned up: {left:?}\n{stderr}"
    );
    let clean = storbench(dir.path(), &["cleanup", "out"]);
    assert_eq!(clean.code, 0, "{}\n{}", clean.stdout, clean.stderr);
    assert!(clean.stdout.contains("on agent") && clean.stdout.contains(&format!("removed {} objects", left.len())), "{}", clean.stdout);
    assert!(rados_objects(&pool, &p).is_empty(), "{:?}", rados_objects(&pool, &p));
    drop(agents);
}

/// Pool usage of `pool`: (stored bytes, objects), from ceph df.
fn pool_usage(pool: &str) -> (u64, u64) {
    let out = Command::new("ceph").args(["df", "-f", "json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = doc["pools"].as_array().unwrap().iter().find(|p| p["name"] == pool).unwrap()["stats"].clone();
    (p["stored"].as_u64().unwrap(), p["objects"].as_u64().unwrap())
}

/// A pool of its own for a test (the shared pool's figures move with other
/// tests), listed by `ceph df` before it is used, removed when dropped.
struct Pool(String);

impl Pool {
    fn new(tag: &str, quota: Option<u64>) -> Pool {
        let pool = Pool(unique(tag));
        ceph(&["osd", "pool", "create", &pool.0, "8"]);
        if let Some(q) = quota {
            ceph(&["osd", "pool", "set-quota", &pool.0, "max_bytes", &q.to_string()]);
        }
        // The managers list a new pool (and its quota) in df within seconds.
        let listed = std::time::Instant::now();
        while std::time::Instant::now() < listed + Duration::from_secs(30) {
            let out = Command::new("ceph").args(["df", "detail", "-f", "json"]).output().unwrap();
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let stats = doc["pools"].as_array().and_then(|p| p.iter().find(|p| p["name"] == pool.0.as_str())).map(|p| p["stats"].clone());
            if stats.is_some_and(|s| s["quota_bytes"].as_u64() == Some(quota.unwrap_or(0))) {
                return pool;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("ceph df never listed pool {}", pool.0);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let _ = Command::new("ceph").args(["osd", "pool", "rm", &self.0, &self.0, "--yes-i-really-really-mean-it"]).output();
    }
}

fn ceph(args: &[&str]) {
    let out = Command::new("ceph").args(args).output().unwrap();
    assert!(out.status.success(), "ceph {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `storbench run` that must be refused at once; a build that starts
/// writing instead is stopped after `limit` (SIGINT: it removes what it
/// wrote) rather than left to fill the shared cluster.
fn refused_within(dir: &std::path::Path, args: &[&str], limit: Duration) -> (Run, Duration) {
    let started = std::time::Instant::now();
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = started.elapsed();
    // SAFETY: a signal to our own child (a no-op if it has exited).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    (run, took)
}

/// 300,000 objects of 4 MiB (1.1 TiB) on a pool with a few GiB free: refused
/// with exit 2 and one line naming both figures, before anything is written.
#[test]
fn a_prefill_beyond_the_pools_free_space_is_refused_before_anything_is_written() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let own = Pool::new("huge", None);
    let pool = own.0.clone();
    let prefix = format!("{}.", unique("huge"));
    let args: Vec<&str> =
        ["run", "--name", "w", "--results-dir", "out", "--ioengine", "rados", "--pool", &pool, "--object_prefix", &prefix]
            .into_iter()
            .chain(["--objects", "300000", "--object_size", "4m", "--prefill", "1", "--rw", "randread", "--runtime", "10"])
            .collect();
    let (r, took) = refused_within(d.path(), &args, Duration::from_secs(20));
    assert!(took < Duration::from_secs(20), "refused at once, not after writing for {took:?}");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("1.1 TiB") && r.stderr.contains("MAX AVAIL") && r.stderr.contains("lower objects or object_size"),
        "{}",
        r.stderr
    );
    assert!(listing(d.path()).is_empty(), "nothing written: {:?}", listing(d.path()));
    assert_eq!(pool_usage(&pool), (0, 0), "no object was written");
}

/// A pool's quota is room too: 16 objects of 4 MiB in a pool with a 32 MiB
/// quota are refused, naming the quota.
#[test]
fn a_prefill_beyond_a_pools_quota_is_refused() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let own = Pool::new("quota", Some(32 << 20));
    let pool = own.0.clone();
    let args =
        ["run", "--name", "w", "--results-dir", "out", "--ioengine", "rados", "--pool", &pool, "--op_timeout", "5", "--objects", "16"];
    let args: Vec<&str> = args.into_iter().chain(["--object_size", "4m", "--prefill", "1", "--rw", "randread", "--runtime", "5"]).collect();
    let (r, took) = refused_within(d.path(), &args, Duration::from_secs(20));
    let objects = rados_objects(&pool, "");
    assert!(took < Duration::from_secs(20), "refused at once, not after writing for {took:?}");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("quota") && r.stderr.contains("64.0 MiB") && r.stderr.contains("32.0 MiB"), "{}", r.stderr);
    assert!(objects.is_empty(), "{objects:?}");
}

/// A prefill of 32 objects of 64 KiB (2 MiB) into a place whose quota
/// leaves 1 MiB is refused before anything is written, naming the quota.
fn a_prefill_beyond_a_quota_is_refused(store: &dyn Store, prefix: &str, quota: &str) {
    let d = scratch();
    let mut args: Vec<String> = ["run", "--name", "w", "--results-dir", "out"].map(String::from).into();
    args.extend(store.args());
    args.extend(
        ["--object_prefix", prefix, "--objects", "32", "--object_size", "64k", "--prefill", "1", "--rw", "randread"].map(String::from),
    );
    args.extend(["--runtime", "1"].map(String::from));
    let mut c = Command::new(bin());
    c.args(&args).current_dir(d.path());
    for (k, v) in store.env() {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let left = store.list(prefix);
    store.purge();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(quota) && stderr.contains("2.0 MiB") && stderr.contains("1.0 MiB"), "{stderr}");
    assert!(left.is_empty(), "nothing written: {left:?}");
}

#[test]
fn a_prefill_beyond_an_rgw_buckets_quota_is_refused() {
    let Some(env) = s3_env() else { return };
    let s3 = S3 { bucket: unique("bquota"), env };
    let made = s3.curl("PUT", "", None);
    assert!(made.status.success(), "PUT bucket: {}", String::from_utf8_lossy(&made.stderr));
    for scope in [&["quota", "set", "--max-size", "1048576"][..], &["quota", "enable"][..]] {
        let out = Command::new("radosgw-admin").args(scope).args(["--quota-scope", "bucket", "--bucket", &s3.bucket]).output().unwrap();
        assert!(out.status.success(), "radosgw-admin {scope:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    a_prefill_beyond_a_quota_is_refused(&s3, "k.", &format!("bucket '{}''s quota", s3.bucket));
}

#[test]
fn a_prefill_beyond_a_swift_containers_quota_is_refused() {
    let Some(env) = swift_env("aio") else { return };
    let swift = Swift::new(unique("cquota"), env);
    assert!(swift.curl("PUT", &swift.container, None).status.success(), "PUT container");
    let mut c = Command::new("curl");
    c.args(["-sf", "-X", "POST", "-H", &format!("X-Auth-Token: {}", swift.token), "-H", "X-Container-Meta-Quota-Bytes: 1048576"]);
    assert!(c.arg(format!("{}/{}", swift.url, swift.container)).output().unwrap().status.success(), "POST quota");
    a_prefill_beyond_a_quota_is_refused(&swift, "k.", &format!("container '{}''s quota", swift.container));
}

/// A precondition writes an image whole: a 1 TiB image (thin, so it could
/// be made) on a pool with a few GiB free is refused before it is made.
#[test]
fn a_precondition_of_an_image_larger_than_its_pool_can_hold_is_refused() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let image = unique("big");
    let pool = std::env::var("STORBENCH_RBD_POOL").unwrap_or_else(|_| "rbd".into());
    let args = ["run", "--precondition", "--name", "w", "--results-dir", "out", "--ioengine", "rbd", "--pool", &pool, "--rbdname", &image];
    let args: Vec<&str> = args.into_iter().chain(["--size", "1t", "--rw", "randread", "--runtime", "1"]).collect();
    let (r, took) = refused_within(d.path(), &args, Duration::from_secs(10));
    let images = String::from_utf8_lossy(&Command::new("rbd").args(["ls", &pool]).output().unwrap().stdout).into_owned();
    if images.lines().any(|l| l == image) {
        let _ = Command::new("rbd").args(["rm", "--no-progress", &format!("{pool}/{image}")]).output();
    }
    assert!(took < Duration::from_secs(10), "refused at once, not after writing for {took:?}");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("1.0 TiB") && r.stderr.contains(&format!("pool '{pool}'")), "{}", r.stderr);
    assert!(!images.lines().any(|l| l == image), "the image was not made");
    assert!(listing(d.path()).is_empty(), "nothing written: {:?}", listing(d.path()));
}

/// An RBD run without --pool is refused (fio's rbd engine requires it too);
/// with one, the image it creates is removed when it ends; with
/// keep_image=1 it is named in its notes with the command that removes it,
/// and `cleanup RESULTS_DIR` removes it.
#[test]
fn an_rbd_image_a_run_creates_is_named_and_removed_by_its_results_directory() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let image = unique("img");
    let no_pool =
        storbench(d.path(), &["run", "--name", "w", "--ioengine", "rbd", "--rbdname", &image, "--size", "16m", "--rw", "randwrite"]);
    assert_eq!(no_pool.code, 2, "{}", no_pool.stderr);
    assert!(no_pool.stderr.contains("'pool': is required"), "{}", no_pool.stderr);
    assert!(listing(d.path()).is_empty());
    let pool = std::env::var("STORBENCH_RBD_POOL").unwrap_or_else(|_| "rbd".into());
    let images = || String::from_utf8_lossy(&Command::new("rbd").args(["ls", &pool]).output().unwrap().stdout).into_owned();
    let run = |out: &str, more: &[&str]| {
        let args = ["run", "--name", "w", "--results-dir", out, "--ioengine", "rbd", "--pool", &pool, "--rbdname", &image];
        let tail = ["--size", "16m", "--rw", "randwrite", "--runtime", "1"];
        storbench(d.path(), &args.iter().chain(&tail).chain(more).copied().collect::<Vec<_>>())
    };
    // By default the run removes what it made when it ends.
    let gone = run("gone", &[]);
    assert_eq!(gone.code, 0, "{}", gone.stderr);
    assert!(!images().lines().any(|l| l == image), "the image the run made is removed when it ends");
    let c = storbench(d.path(), &["cleanup", "gone"]);
    assert!(c.code == 0 && c.stdout.contains("nothing to do"), "the journal says nothing is left: {}{}", c.stdout, c.stderr);
    // keep_image=1 keeps it, named, for cleanup RESULTS_DIR.
    let r = run("out", &["--keep_image", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(images().lines().any(|l| l == image), "the image is kept");
    let notes = run_result(&d.path().join("out")).notes.join("\n");
    assert!(notes.contains(&format!("created image {pool}/{image}")) && notes.contains(&format!("rbd rm {pool}/{image}")), "{notes}");
    assert!(notes.contains("storbench cleanup out"), "{notes}");
    let c = storbench(d.path(), &["cleanup", "out"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(!images().lines().any(|l| l == image), "removed");
}

/// A sweep's points are runs of their own: `cleanup SWEEPDIR` finds each
/// point's journal.
#[test]
fn a_sweeps_directory_is_cleaned_up_point_by_point() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    let prefix = format!("{}.", unique("sweep"));
    let r = storbench(
        d.path(),
        &["sweep", "--results-dir", "sw", "--no-knee", "--quiet", "--sweep", "object_size=4k,8k", "--name", "w", "--ioengine", "rados"]
            .into_iter()
            .chain([
                "--pool",
                &pool,
                "--object_prefix",
                &prefix,
                "--objects",
                "4",
                "--prefill",
                "1",
                "--rw",
                "randread",
                "--number_ios",
                "4",
            ])
            .chain(["--cleanup", "0", "--allow_overwrite", "1"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(rados_objects(&pool, &prefix).len(), 4, "both points wrote (and kept) the same 4 names");
    let c = storbench(d.path(), &["cleanup", "sw"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    assert!(rados_objects(&pool, &prefix).is_empty());
    assert_eq!(c.stdout.lines().count(), 2, "one line per point: {}", c.stdout);
}

/// A run still going is not cleaned up under its feet.
#[test]
fn cleanup_of_a_run_still_going_is_refused() {
    let d = scratch();
    let args = ["run", "--name", "n", "--ioengine", "null", "--runtime", "30", "--results-dir", "out"];
    let mut c = Command::new(bin());
    c.args(args).current_dir(d.path()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let journal = d.path().join("out/journal.json");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !journal.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = storbench(d.path(), &["cleanup", "out"]);
    // The journal names the process that measures (and made the targets).
    let pid = measuring(child.id());
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("still going") && r.stderr.contains(&format!("pid {pid}")), "{}", r.stderr);
    let after = storbench(d.path(), &["cleanup", "out"]);
    assert_eq!((after.code, after.stdout.contains("nothing to do")), (0, true), "once it ended: {}{}", after.stdout, after.stderr);
}

#[test]
fn cleanup_of_a_directory_without_a_journal_says_what_to_give_instead() {
    let d = scratch();
    std::fs::create_dir(d.path().join("old")).unwrap();
    let r = storbench(d.path(), &["cleanup", "old"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no journal.json") && r.stderr.contains("--object_prefix"), "{}", r.stderr);
}
