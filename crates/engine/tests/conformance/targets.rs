//! Where each engine meets the suite: a scratch file, the process itself,
//! an nbdkit it starts, or the test servers named by the environment
//! (`/tmp/storbench-ceph/env`, `/tmp/storbench-swift/env`). Without a
//! server an engine is skipped, saying why; under CI that fails instead.

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use storbench_engine::*;

/// The bytes of a block target the suite asks for.
pub const SIZE: u64 = 4 << 20;

/// An engine's options and what its target lives on (removed on drop).
pub struct Target {
    pub options: EngineOptions,
    file: Option<(std::fs::File, PathBuf)>,
    server: Option<Child>,
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some((_, path)) = &self.file {
            let _ = std::fs::remove_dir_all(path.parent().unwrap());
        }
        if let Some(s) = &mut self.server {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

/// A block target the engine brings itself, as a run asks for it.
fn block_request() -> TargetRequest<'static> {
    TargetRequest {
        size: Some(SIZE),
        writes: true,
        // The suite writes its own target only; an NBD export is written job after job.
        allow_overwrite: true,
        objects: None,
        object_prefix: None,
        written_before: false,
        verifies: false,
        stop: &|| false,
        transfers: None,
    }
}

/// A block target, prepared: its size, the descriptors a worker is handed,
/// and what the engine said of its own target.
pub struct Blocks {
    pub size: u64,
    pub fds: Vec<i32>,
    store: Option<StoreTarget>,
}

impl Target {
    fn new(options: &[(&str, String)]) -> Target {
        Target { options: options.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(), file: None, server: None }
    }

    pub fn block_target(&self, f: &dyn EngineFactory, config: &dyn EngineConfig) -> Blocks {
        if let Some((file, _)) = &self.file {
            return Blocks { size: SIZE, fds: vec![file.as_raw_fd()], store: None };
        }
        let t = config.prepare_target(&block_request()).unwrap_or_else(|e| panic!("{}: preparing its target: {e}", f.name()));
        // The null engine has no target: nothing is kept anywhere.
        let Some(t) = t.or_else(|| (!f.capabilities().does_io).then(|| StoreTarget::new(SIZE, 1, "nothing".into()))) else {
            panic!("{}: a block engine without files that keeps data brings a target of its own", f.name())
        };
        assert!(t.size >= SIZE, "{}: a target of {} bytes where {SIZE} were asked for", f.name(), t.size);
        Blocks { size: t.size, fds: Vec::new(), store: Some(t) }
    }

    /// What preparing made goes again (an RBD image).
    pub fn finish_blocks(&self, f: &dyn EngineFactory, config: &dyn EngineConfig, b: Blocks) {
        if let Some(t) = b.store.filter(|t| !t.created.is_empty()) {
            let notes = config
                .remove_created(&block_request(), Some(&t.created))
                .unwrap_or_else(|e| panic!("{}: removing {:?}: {e}", f.name(), t.created));
            eprintln!("{}: removed {:?} {notes:?}", f.name(), t.created);
        }
    }

    /// Names of the suite's objects on this engine, apart from any other run's.
    pub fn prefix(&self, f: &dyn EngineFactory) -> String {
        format!("sbconf.{}.{}.", std::process::id(), f.name())
    }
}

/// Not reachable here: said, and under CI a failure.
fn skip(f: &dyn EngineFactory, why: &str) -> Option<Target> {
    assert!(std::env::var_os("CI").is_none(), "{}: {why}, and under CI every engine must meet the suite (scripts/test.sh)", f.name());
    eprintln!("SKIP {}: {why}", f.name());
    None
}

/// A variable of the test servers' environment files.
fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// A fresh file in a scratch directory of its own.
pub fn file(f: &dyn EngineFactory) -> Option<Target> {
    let dir = std::env::temp_dir().join(format!("sbconf-{}-{}", std::process::id(), f.name()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("target.dat");
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
    file.set_len(SIZE).unwrap();
    let mut t = Target::new(&[]);
    t.file = Some((file, path));
    Some(t)
}

/// Engines whose target is the process's own (memory, null): their defaults.
pub fn in_process(_f: &dyn EngineFactory) -> Option<Target> {
    Some(Target::new(&[]))
}

/// nbdkit's memory plugin on a free port of 127.0.0.1.
pub fn nbd(f: &dyn EngineFactory) -> Option<Target> {
    if Command::new("nbdkit").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_err() {
        return skip(f, "nbdkit is not installed (scripts/install-deps.sh installs it)");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("nbdkit")
        .args(["--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", &port.to_string(), "memory", "64M"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nbdkit");
    let mut t = Target::new(&[("uri", format!("nbd://127.0.0.1:{port}"))]);
    t.server = Some(child);
    let end = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "nbdkit never accepted a connection on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(t)
}

/// The Ceph test cluster's configuration file, or why there is none.
fn ceph(f: &dyn EngineFactory) -> Result<String, Option<Target>> {
    env("CEPH_CONF")
        .filter(|_| env("STORBENCH_CEPH_POOL").is_some())
        .ok_or_else(|| skip(f, "no Ceph test cluster (scripts/testenv/ceph up, then source /tmp/storbench-ceph/env)"))
}

/// An image of its own in the cluster's RBD pool, made by preparing and removed after.
pub fn rbd(f: &dyn EngineFactory) -> Option<Target> {
    let conf = ceph(f).ok()?;
    let pool = env("STORBENCH_RBD_POOL").unwrap_or_else(|| "rbd".into());
    Some(Target::new(&[("conf", conf), ("pool", pool), ("rbdname", format!("sbconf-{}", std::process::id()))]))
}

pub fn rados(f: &dyn EngineFactory) -> Option<Target> {
    let conf = ceph(f).ok()?;
    Some(Target::new(&[("conf", conf), ("pool", env("STORBENCH_CEPH_POOL")?)]))
}

/// RGW's S3 API, in a bucket of the suite's own (made, then removed).
pub fn s3(f: &dyn EngineFactory) -> Option<Target> {
    let (Some(endpoint), Some(access), Some(secret)) =
        (env("STORBENCH_S3_ENDPOINT"), env("STORBENCH_S3_ACCESS_KEY"), env("STORBENCH_S3_SECRET_KEY"))
    else {
        return skip(f, "no S3 endpoint (scripts/testenv/ceph up, then source /tmp/storbench-ceph/env)");
    };
    let bucket = format!("sbconf{}", std::process::id());
    Some(Target::new(&[("endpoint", endpoint), ("access_key", access), ("secret_key", secret), ("bucket", bucket)]))
}

/// The Swift all-in-one, in a container of the suite's own (made, then removed).
pub fn swift(f: &dyn EngineFactory) -> Option<Target> {
    let (Some(auth), Some(user), Some(key)) =
        (env("STORBENCH_SWIFT_AIO_AUTH"), env("STORBENCH_SWIFT_AIO_USER"), env("STORBENCH_SWIFT_AIO_KEY"))
    else {
        return skip(f, "no Swift all-in-one (scripts/testenv/swift up, then source /tmp/storbench-swift/env)");
    };
    let container = format!("sbconf{}", std::process::id());
    Some(Target::new(&[("auth", auth), ("user", user), ("key", key), ("container", container)]))
}
