//! Engines: how one operation is carried out against one kind of storage.
//!
//! An engine is a factory (name, capabilities, its own options, validated once)
//! plus a per-worker [`Engine`] with two calls: `queue` an operation, then
//! `submit_and_reap`. Engines know nothing of workloads, timing or reports; the
//! runner never branches on an engine's name, only on its [`Capabilities`].
//! Adding an engine means one module and one line in [`registry`].

pub mod ceph;
pub mod files;
pub mod http;
pub mod null;
pub mod objects;
pub mod psync;
pub mod uring;

use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::time::Duration;
use storbench_workload::{ObjectSpec, OpKind};

/// What an engine can do; checked once when the plan is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Keeps more than one I/O in flight per worker (else iodepth is capped at 1).
    pub queued: bool,
    /// Honours O_DIRECT.
    pub direct_io: bool,
    /// Works on files or block devices the runner opens for it.
    pub needs_files: bool,
    /// Carries out block operations (read/write at an offset, sync).
    pub blocks: bool,
    /// Carries out object operations on named objects (create, read, update,
    /// write at offset, stat, delete, list).
    pub objects: bool,
    /// Operations on one object take effect in the order they were issued
    /// (RADOS does this per client; HTTP stores do not, so the object model
    /// keeps their operations on one object apart).
    pub ordered: bool,
    /// Moves real data to storage (false for the null engine, whose runs
    /// measure storbench itself, so a busy client CPU is expected there).
    pub does_io: bool,
}

/// One engine-specific option, documented where the engine is.
#[derive(Clone, Copy, Debug)]
pub struct OptionDesc {
    pub name: &'static str,
    pub help: &'static str,
}

/// Memory the worker owns and lends to the engine for its lifetime: `slots`
/// buffers of `slot_len` bytes each, contiguous from `base`, 4 KiB aligned.
#[derive(Clone, Copy, Debug)]
pub struct Buffers {
    pub base: *mut u8,
    pub slot_len: usize,
    pub slots: usize,
}

// SAFETY: the worker that owns the buffer memory is the only user of the
// engine holding this pointer, and it outlives the engine.
unsafe impl Send for Buffers {}

impl Buffers {
    #[inline]
    pub fn slot(&self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.base.add(slot as usize * self.slot_len) }
    }
}

/// What a worker gives its engine when it opens it.
pub struct WorkerSetup<'a> {
    pub fds: &'a [RawFd],
    pub buffers: Buffers,
    pub queue_depth: u32,
    /// Files were opened with O_DIRECT.
    pub direct: bool,
    pub options: &'a BTreeMap<String, String>,
    /// Object jobs: names are this prefix followed by `IoRequest::file`.
    pub object_prefix: Option<&'a str>,
}

/// One operation to carry out. `slot` names both the buffer and the request.
#[derive(Clone, Copy, Debug)]
pub struct IoRequest {
    pub op: OpKind,
    /// For [`OpKind::Sync`]: fdatasync rather than fsync.
    pub data_only: bool,
    /// The file (block jobs) or the object's key number (object jobs).
    pub file: u32,
    /// Object reads: the whole object (no byte range needed).
    pub whole: bool,
    pub offset: u64,
    pub len: u32,
    pub slot: u32,
}

/// A finished operation: bytes transferred, or a negative errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
    /// For responses that stream (HTTP GET): ns from the first body byte to
    /// the end, so the runner can tell first-byte from last-byte latency. 0
    /// when the engine cannot tell.
    pub tail_ns: u64,
    /// Times the operation was sent again after a failure (engines that
    /// retry only when asked); the latency covers every attempt.
    pub retries: u32,
}

impl Completion {
    #[inline]
    pub fn new(slot: u32, result: i64) -> Completion {
        Completion { slot, result, tail_ns: 0, retries: 0 }
    }
}

/// An engine call that failed as a whole (not one I/O): the call and errno.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("{engine}: {call} failed: {} (errno {errno})", std::io::Error::from_raw_os_error(*errno))]
    Os { engine: &'static str, call: &'static str, errno: i32 },
    #[error("{engine}: option '{option}': {message}")]
    BadOption { engine: &'static str, option: String, message: String },
    #[error("{engine}: {message}")]
    Unsupported { engine: &'static str, message: String },
    /// Refused for the data's safety; the message says how to allow it.
    #[error("{engine}: refusing to write: {message}")]
    Refused { engine: &'static str, message: String },
}

impl EngineError {
    /// Whether the user's input or environment is at fault (exit 2) rather
    /// than a call failing (exit 3).
    pub fn is_user_error(&self) -> bool {
        !matches!(self, EngineError::Os { .. })
    }

    pub fn os(engine: &'static str, call: &'static str, errno: i32) -> EngineError {
        EngineError::Os { engine, call, errno }
    }
    pub fn last_os(engine: &'static str, call: &'static str) -> EngineError {
        Self::os(engine, call, std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

/// A per-worker engine instance.
pub trait Engine: Send {
    /// Queue one operation. Synchronous engines carry it out here.
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError>;

    /// Submit what was queued and collect finished operations into `out`,
    /// waiting for at least `min_complete` (or until `timeout`, if given).
    fn submit_and_reap(&mut self, min_complete: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError>;
}

/// Creates per-worker engines; one static instance per engine kind.
pub trait EngineFactory: Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn capabilities(&self) -> Capabilities;
    /// The engine's own options (beyond the core workload options).
    fn options(&self) -> &'static [OptionDesc] {
        &[]
    }
    /// Whether the engine can carry out this operation (object engines differ:
    /// RADOS has no listing in the object model, S3 no partial writes).
    fn supports(&self, op: OpKind) -> bool {
        let caps = self.capabilities();
        match op {
            OpKind::Read | OpKind::Write => true,
            OpKind::Sync => caps.blocks,
            _ => caps.objects,
        }
    }
    /// Check the engine's options once, before any worker starts.
    fn validate(&self, options: &BTreeMap<String, String>) -> Result<(), EngineError> {
        check_known(self.name(), self.options(), options)
    }
    /// Notes about what the job's figures will mean with these options (e.g.
    /// a client-side cache), shown as warnings in the report.
    fn warnings(&self, _options: &BTreeMap<String, String>, _writes: bool) -> Vec<String> {
        Vec::new()
    }
    /// For engines that bring their own target (not files): check it, create
    /// it if asked and allowed, and return its size in bytes and a label.
    fn prepare_target(&self, _target: &TargetRequest) -> Result<Option<EngineTarget>, EngineError> {
        Ok(None)
    }
    /// After the run: tear down what `prepare_target` set up for the run alone
    /// (a bucket or container it created), if the run removed its objects.
    /// Returns a note for the report when something was left in place.
    fn finish_target(&self, _target: &TargetRequest, _cleaned_up: bool) -> Result<Option<String>, EngineError> {
        Ok(None)
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError>;
}

/// An engine's own target, ready: its usable size and how to name it.
#[derive(Clone, Debug)]
pub struct EngineTarget {
    /// Usable bytes (the smallest volume's, when there are several).
    pub size: u64,
    /// Volumes the job spreads over (`IoRequest::file` is below this).
    pub units: u32,
    pub label: String,
}

/// What a job needs from an engine's own target.
pub struct TargetRequest<'a> {
    pub options: &'a BTreeMap<String, String>,
    /// Bytes the job uses (offset + size), when given.
    pub size: Option<u64>,
    pub writes: bool,
    pub allow_overwrite: bool,
    /// Object jobs: the object model and the name prefix in use.
    pub objects: Option<&'a ObjectSpec>,
    pub object_prefix: Option<&'a str>,
}

/// A block engine handed an object operation: the plan gives those only to
/// engines that declare `objects`, so this is a bug, reported rather than faked.
pub fn unsupported_op(engine: &'static str, op: OpKind) -> EngineError {
    EngineError::Unsupported { engine, message: format!("{} is not a block operation", op.name()) }
}

/// Reject options the engine does not declare (the caller adds suggestions).
pub fn check_known(engine: &'static str, known: &[OptionDesc], options: &BTreeMap<String, String>) -> Result<(), EngineError> {
    for k in options.keys() {
        if !known.iter().any(|o| o.name == k) {
            return Err(EngineError::BadOption { engine, option: k.clone(), message: "unknown option".into() });
        }
    }
    Ok(())
}

/// Every engine storbench has.
pub fn registry() -> &'static [&'static dyn EngineFactory] {
    &[
        &psync::PsyncFactory,
        &uring::UringFactory,
        &null::NullFactory,
        &ceph::rbd::RbdFactory,
        &ceph::rados::RadosFactory,
        &http::s3::S3Factory,
        &http::swift::SwiftFactory,
    ]
}

/// The engine called `name` (fio's aliases included).
pub fn find(name: &str) -> Option<&'static dyn EngineFactory> {
    let name = match name {
        "sync" | "pvsync" => "psync",
        "uring" | "iouring" => "io_uring",
        n => n,
    };
    registry().iter().copied().find(|f| f.name() == name)
}

/// Every option name any engine declares (for suggestions).
pub fn all_option_names() -> Vec<&'static str> {
    registry().iter().flat_map(|f| f.options().iter().map(|o| o.name)).collect()
}

/// Parse a boolean engine option with a default.
pub fn bool_option(engine: &'static str, options: &BTreeMap<String, String>, name: &str, default: bool) -> Result<bool, EngineError> {
    match options.get(name) {
        None => Ok(default),
        Some(v) => storbench_workload::units::parse_bool(v).map_err(|e| EngineError::BadOption {
            engine,
            option: name.into(),
            message: e.to_string(),
        }),
    }
}
