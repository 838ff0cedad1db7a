//! Engines: how one operation is carried out against one kind of storage.
//!
//! An engine is a factory (name, capabilities, its own options) that parses a
//! job's options once into a typed [`EngineConfig`], which prepares targets
//! and opens a per-worker [`Engine`] with two calls: `queue` an operation,
//! then `submit_and_reap`. Per-I/O failures come back as an [`IoFailure`]
//! (backend-independent kind plus the storage's own detail); failures of a
//! whole call as an [`EngineError`] that keeps its source. Engines know
//! nothing of workloads, timing or reports; the runner never branches on an
//! engine's name, only on its [`Capabilities`]. Adding an engine means one
//! module and one line in [`registry`]: its names (its own, aliases, fio's),
//! options and capabilities come from its factory, and every list of engines
//! (`find`, the fio reader, replay, help, messages) is derived from there.

pub mod ceph;
pub mod cpuio;
pub mod exec;
pub mod falloc;
pub mod files;
pub mod http;
pub mod libaio;
pub mod memory;
pub mod meta;
pub mod nbd;
pub mod net;
pub mod null;
pub mod objects;
pub mod psync;
pub mod tcp;
pub mod uring;
mod wait;

use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Duration;
use storbench_metrics::{ErrorKind, IoFailure};
pub use storbench_model::{StoreTarget, TargetFile};
pub use storbench_workload::options::{Kind, OptionInfo};
use storbench_workload::{ObjectSpec, OpKind};

/// The longest timeout an engine option may give (`op_timeout`,
/// `connect_timeout`): a day. Longer is a typo, and `1e308` seconds
/// overflowed a Duration.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Engine options as the job gives them (name -> value); each engine parses
/// its own once, in [`EngineFactory::configure`].
pub type EngineOptions = BTreeMap<String, String>;

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
    /// The worker's files by name, for engines that work on names rather
    /// than descriptors ([`EngineFactory::file_ops`]); empty otherwise.
    pub paths: &'a [std::path::PathBuf],
    pub buffers: Buffers,
    pub queue_depth: u32,
    /// The most completions one `submit_and_reap` takes (fio's
    /// `iodepth_batch_complete_max`, 1 by default), at least the call's
    /// `min_complete`; the rest wait for the next call. Queued engines
    /// that can leave completions for later (libaio, io_uring) keep it.
    pub reap_max: u32,
    /// Files were opened with O_DIRECT.
    pub direct: bool,
    /// Object jobs: how `IoRequest::file` (the key number) becomes a name.
    pub object_names: Option<&'a storbench_workload::ObjectNames>,
    /// Reads must leave the data in the slot (verification reads it); engines
    /// that otherwise discard what they read (HTTP bodies) keep it then.
    pub keep_reads: bool,
    /// Asked while opening waits for the storage (a handshake): true once
    /// the run is stopped, so a server that does not answer holds up no Ctrl-C.
    pub stop: &'a dyn Fn() -> bool,
    /// The worker's number in its job (0..numjobs): fio's `net` engine
    /// listens on, or connects to, its port plus this.
    pub worker: u32,
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
    /// The I/O's priority (the kernel's ioprio value; 0: none of its own),
    /// for engines that carry one per I/O ([`EngineFactory::io_priorities`]).
    pub ioprio: u16,
}

/// A finished operation: the bytes it moved, or how it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: Result<u64, IoFailure>,
    /// For responses that stream (HTTP GET): ns from the first body byte to
    /// the end, so the runner can tell first-byte from last-byte latency. 0
    /// when the engine cannot tell.
    pub tail_ns: u64,
    /// Times the operation was sent again after a failure (engines that
    /// retry only when asked); the latency covers every attempt.
    pub retries: u32,
    /// The target ended (the other end of a stream closed it): the
    /// operation did not happen and none will, so the job ends as when its
    /// size is reached. Its figures leave it out.
    pub ended: bool,
}

impl Completion {
    #[inline]
    pub fn new(slot: u32, result: Result<u64, IoFailure>) -> Completion {
        Completion { slot, result, tail_ns: 0, retries: 0, ended: false }
    }

    /// The operation found the target ended ([`Completion::ended`]).
    #[inline]
    pub fn ended(slot: u32) -> Completion {
        Completion { ended: true, ..Completion::new(slot, Ok(0)) }
    }

    /// From a C-style return code: bytes moved, or a negative errno.
    #[inline]
    pub fn from_rc(slot: u32, rc: i64) -> Completion {
        Completion::new(slot, rc_result(rc))
    }
}

/// A C-style return code (bytes, or a negative errno) as a result.
#[inline]
pub fn rc_result(rc: i64) -> Result<u64, IoFailure> {
    if rc >= 0 {
        Ok(rc as u64)
    } else {
        Err(IoFailure::errno((-rc).min(i32::MAX as i64) as i32))
    }
}

/// Any error, boxed, as the source of an [`EngineError`].
pub type Source = Box<dyn std::error::Error + Send + Sync>;

/// An engine call that failed as a whole (not one I/O). Each variant says
/// whose fault it is; [`EngineError::kind`] gives the backend-independent kind.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A system or library call failed.
    #[error("{engine}: {call} failed: {source}")]
    Os { engine: &'static str, call: &'static str, source: std::io::Error },
    /// An option's value is wrong; the message says how to fix it.
    #[error("{engine}: option '{option}': {message}")]
    BadOption { engine: &'static str, option: String, message: String },
    /// Refused for the data's safety; the message says how to allow it.
    #[error("{engine}: refusing to write: {message}")]
    Refused { engine: &'static str, message: String },
    /// The storage could not be reached (DNS, connection, TLS).
    #[error("{engine}: {message}")]
    Unreachable { engine: &'static str, message: String, source: Option<Source> },
    /// The storage answered, and said no (an HTTP status, a missing pool).
    #[error("{engine}: {message}")]
    Rejected { engine: &'static str, message: String, kind: ErrorKind },
    /// The engine cannot work here or cannot do this (a library missing, an
    /// operation it lacks).
    #[error("{engine}: {message}")]
    Unavailable { engine: &'static str, message: String },
    /// storbench itself failed (building or signing a request, a runtime).
    #[error("{engine}: {message}: {source}")]
    Failed { engine: &'static str, message: String, source: Source },
    /// A Ctrl-C (or SIGTERM) came while the engine waited for its storage.
    #[error("{engine}: interrupted while {what}")]
    Interrupted { engine: &'static str, what: String },
}

impl EngineError {
    /// Whether the user's input or environment is at fault (exit 2) rather
    /// than a call failing (exit 3).
    pub fn is_user_error(&self) -> bool {
        !matches!(self, EngineError::Os { .. } | EngineError::Failed { .. })
    }

    /// Whose fault it is: the option or the target (input), the storage
    /// that could not be reached or said no, this machine or storbench
    /// itself (system), or a stop. Agrees with [`EngineError::is_user_error`]:
    /// everything but the system's is the user's to change.
    pub fn fault(&self) -> storbench_model::Fault {
        use storbench_model::Fault;
        match self {
            EngineError::Os { .. } | EngineError::Failed { .. } => Fault::System,
            EngineError::BadOption { .. } | EngineError::Refused { .. } | EngineError::Unavailable { .. } => Fault::Input,
            EngineError::Unreachable { .. } | EngineError::Rejected { .. } => Fault::Storage,
            EngineError::Interrupted { .. } => Fault::Interrupted,
        }
    }

    /// The backend-independent kind of the failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            EngineError::Os { source, .. } => source.raw_os_error().map_or(ErrorKind::Other, ErrorKind::of_errno),
            EngineError::Refused { .. } => ErrorKind::Permission,
            EngineError::Unreachable { .. } => ErrorKind::Connection,
            EngineError::Rejected { kind, .. } => *kind,
            EngineError::BadOption { .. }
            | EngineError::Unavailable { .. }
            | EngineError::Failed { .. }
            | EngineError::Interrupted { .. } => ErrorKind::Other,
        }
    }

    pub fn os(engine: &'static str, call: &'static str, errno: i32) -> EngineError {
        EngineError::Os { engine, call, source: std::io::Error::from_raw_os_error(errno) }
    }
    pub fn last_os(engine: &'static str, call: &'static str) -> EngineError {
        EngineError::Os { engine, call, source: std::io::Error::last_os_error() }
    }
    pub fn failed(engine: &'static str, message: impl Into<String>, source: impl Into<Source>) -> EngineError {
        EngineError::Failed { engine, message: message.into(), source: source.into() }
    }
    pub fn is_interrupted(&self) -> bool {
        matches!(self, EngineError::Interrupted { .. })
    }
}

/// What `cleanup --ioengine E` did to the targets its options name.
#[derive(Debug, Default)]
pub struct NamedRemoval {
    pub removed: Vec<String>,
    /// Kept, and why (not storbench's, or not there).
    pub kept: Vec<String>,
}

/// A per-worker engine instance.
pub trait Engine: Send {
    /// Queue one operation. Synchronous engines carry it out here.
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError>;

    /// Submit what was queued and collect finished operations into `out`,
    /// waiting for at least `min_complete` (or until `timeout`, if given).
    fn submit_and_reap(&mut self, min_complete: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError>;

    /// Give up on every operation in flight (a server that stopped
    /// answering, at the end of the measured phase or of a cleanup): the
    /// engine lets go of their buffers at once and never completes them.
    /// False if it cannot (the kernel or a library still owns the buffers
    /// until they complete): the worker then waits on, and only a second
    /// interrupt ends the run without it.
    fn abandon(&mut self) -> bool {
        false
    }
}

/// A value of fio's `ioengine=` that this engine carries out, and what
/// differs from fio's engine of that name when something does (said in the
/// notes of a run from a fio job file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FioName {
    pub name: &'static str,
    pub note: Option<&'static str>,
}

/// One kind of engine: what it is and can do, its names and its options.
/// One static instance per kind, in [`registry`].
pub trait EngineFactory: Sync {
    fn name(&self) -> &'static str;
    /// Other spellings `ioengine` takes for this engine (storbench's own).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// fio's `ioengine=` values this engine carries out: fio job files and
    /// the drop-in run them on it, and `ioengine` takes them too. Empty for
    /// engines fio does not have.
    fn fio_names(&self) -> &'static [FioName] {
        &[]
    }
    fn description(&self) -> &'static str;
    fn capabilities(&self) -> Capabilities;
    /// The engine's own options (beyond the core workload options).
    fn options(&self) -> &'static [OptionInfo] {
        &[]
    }
    /// Whether the engine can carry out this operation (object engines differ:
    /// RADOS has no listing in the object model, S3 no partial writes).
    fn supports(&self, op: OpKind) -> bool {
        let caps = self.capabilities();
        match op {
            OpKind::Read | OpKind::Write => true,
            OpKind::Sync => caps.blocks,
            // Discards are offered engine by engine.
            OpKind::Trim => false,
            _ => caps.objects,
        }
    }
    /// How long at most an operation that could not connect waits before
    /// it completes (HTTP engines back off while a server refuses them).
    fn connection_backoff(&self) -> Option<Duration> {
        None
    }
    /// Carries [`IoRequest::ioprio`] to the kernel with each read and write
    /// (fio's cmdprio options belong to io_uring and libaio).
    fn io_priorities(&self) -> bool {
        false
    }
    /// Whether it moves a byte stream (the network engines), where an
    /// offset means nothing: a job must read or write in order, without
    /// trims, syncs or verification.
    fn streams(&self) -> bool {
        false
    }
    /// For jobs that pair up within a run (a `net` listener and the job of
    /// the run that connects to it): the key both ends share and whether
    /// this end is the one that waits. The plan starts a waiting end with
    /// its peer (fio's listener starts its figures when the connection
    /// comes, after the other end's startdelay).
    fn pairing(&self, _options: &EngineOptions) -> Option<(String, bool)> {
        None
    }
    /// The most operations one worker may keep in flight (a ring's size).
    fn max_queue_depth(&self) -> u32 {
        u32::MAX
    }
    /// The job's options for `volumes` volumes (`volumes=N`, above 1): what
    /// names them. Files and objects need nothing (the runner gives each
    /// volume its files or its object prefix); an engine with units of its
    /// own (RBD images) names one per volume; an engine with one target
    /// (an NBD export, a network peer) refuses.
    fn volume_options(&self, options: &EngineOptions, volumes: u32) -> Result<EngineOptions, EngineError> {
        let caps = self.capabilities();
        match caps.needs_files || (caps.objects && !caps.blocks) {
            true => Ok(options.clone()),
            false => Err(EngineError::BadOption {
                engine: self.name(),
                option: "volumes".into(),
                message: format!(
                    "engine {} drives one target, so it cannot drive {volumes} volumes; volumes need files or devices, RBD \
                     images or objects (psync, io_uring, libaio, rbd, rados, s3, swift)",
                    self.name()
                ),
            }),
        }
    }
    /// fio's file-system metadata engines: the one operation each of the
    /// job's files gets and how the runner hands the files over; `None`
    /// for engines that do I/O in files the runner opened.
    fn file_ops(&self) -> Option<meta::FileOps> {
        None
    }
    /// Whether a configured job can reach the storage cluster behind its
    /// target ([`EngineConfig::cluster`]: its counters, faults injected).
    fn knows_cluster(&self) -> bool {
        false
    }
    /// Parse and check the job's engine options once, resolving what they
    /// refer to (credentials from the environment and files) into the
    /// engine's typed configuration. Contacts no storage.
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError>;
}

/// An engine configured for one job: everything else an engine does, from
/// typed options parsed once.
pub trait EngineConfig: Send + Sync {
    /// Whether its engines' `queue` hands the operation to the kernel before it returns
    /// (libaio's io_submit, as fio's libaio commits each I/O as it is
    /// queued; io_uring with `submit_each`, as fio's io_uring commits): the
    /// time after it is fio's issue_time, where its submission latency
    /// (slat) ends and its completion latency (clat) begins. Engines that
    /// submit later (io_uring's newest entry goes in with the wait, by
    /// default) or do the operation in `queue` (psync: fio's clat is all of
    /// it) say no.
    fn submits_in_queue(&self) -> bool {
        false
    }
    /// Notes about what the job's figures will mean with these options (e.g.
    /// a client-side cache), shown as warnings in the report.
    fn warnings(&self, _writes: bool) -> Vec<String> {
        Vec::new()
    }
    /// For engines that bring their own target (not files): check it, create
    /// it if asked and allowed, and return its size in bytes and a label.
    fn prepare_target(&self, _target: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        Ok(None)
    }
    /// After the run: tear down what `prepare_target` set up for the run alone
    /// (a bucket or container it created), if the run removed its objects.
    /// Returns a note for the report when something was left in place.
    fn finish_target(&self, _target: &TargetRequest, _cleaned_up: bool) -> Result<Option<String>, EngineError> {
        Ok(None)
    }
    /// Remove the objects whose names start with `prefix` from the job's
    /// pool, buckets or containers, until there are none left or `stop` says
    /// so (`storbench cleanup`, after a run whose cleanup was cut short).
    /// Names without the prefix are never touched; with [`Which::Marked`],
    /// neither are objects without storbench's mark (they are counted as
    /// kept). The default goes through [`EngineConfig::admin`], one object at
    /// a time.
    fn remove_objects(&self, prefix: &str, which: Which, stop: &dyn Fn() -> bool) -> Result<Removed, EngineError> {
        let admin = self.admin()?;
        let mut tally = Removed::default();
        for name in admin.list(prefix)? {
            if stop() || tally.given_up() {
                tally.stopped = true;
                break;
            }
            let done = match which {
                Which::All => admin.remove(&name).map(|_| Removal::Removed),
                Which::Marked => admin.remove_if_marked(&name),
            };
            match done {
                Ok(Removal::Removed | Removal::Absent) => tally.removed(),
                Ok(Removal::Unmarked) => tally.kept += 1,
                Err(e) => tally.failed(e.to_string()),
            }
        }
        Ok(tally)
    }
    /// Whether what preparing created ([`StoreTarget::created`]) goes
    /// through [`EngineConfig::remove_created`] when the run ends (RBD
    /// images, unless the job keeps them); buckets and containers go in
    /// [`EngineConfig::finish_target`] instead.
    fn removes_created_at_end(&self) -> bool {
        false
    }
    /// `storbench cleanup --ioengine E ...` without a prefix: remove the
    /// targets these options name, each only if it carries storbench's mark
    /// (RBD images). `None`: the engine has no such targets. Otherwise what
    /// was removed and what was kept, in words.
    fn remove_named(&self, _stop: &dyn Fn() -> bool) -> Result<Option<NamedRemoval>, EngineError> {
        Ok(None)
    }
    /// What `prepare_target` made for a run that `storbench cleanup
    /// RESULTS_DIR` should now remove: `created` as the target reported it
    /// ([`StoreTarget::created`]), or `None` when the run was killed while
    /// preparing it. Called after the run's objects are gone; a bucket or
    /// container goes only if storbench made it and it is empty. Returns
    /// notes on what was kept. The default is [`EngineConfig::finish_target`].
    fn remove_created(&self, target: &TargetRequest, _created: Option<&[String]>) -> Result<Vec<String>, EngineError> {
        Ok(self.finish_target(target, true)?.into_iter().collect())
    }
    /// How much more the target can take, where the store says (a pool's
    /// MAX AVAIL, a quota), so a prefill or fill far beyond it is refused
    /// before anything is written. `None`: the store does not say.
    fn room(&self) -> Result<Option<Room>, EngineError> {
        Ok(None)
    }
    /// Bytes the store holds for the engine's own target by its own
    /// accounting (an RBD image's written extents, a pool's stored bytes, a
    /// bucket's bytes used), so a fill can be checked against what thin
    /// provisioning really stored; `None` when the engine cannot tell.
    fn allocated(&self) -> Result<Option<u64>, EngineError> {
        Ok(None)
    }
    /// What the target can hold in all, for a fill to a share of it (a
    /// pool's stored bytes plus what it can still take); `None`: no such thing
    /// (a bucket), and the fill is a share of the job's objects instead.
    fn capacity(&self) -> Result<Option<u64>, EngineError> {
        Ok(None)
    }
    /// Names of the objects starting with `prefix` in the job's pool,
    /// buckets or containers (verification checks a listing against what
    /// the run believes exists); `None` when the engine cannot list. The
    /// default goes through [`EngineConfig::admin`].
    fn list_names(&self, prefix: &str) -> Result<Option<Vec<String>>, EngineError> {
        match self.admin() {
            Ok(admin) => admin.list(prefix).map(Some),
            Err(_) => Ok(None),
        }
    }
    /// A worker's own engine instance.
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError>;
    /// Synchronous access to single objects, for tools that manage objects
    /// outside a measured run (rados bench's metadata object, cleanup).
    fn admin(&self) -> Result<Box<dyn ObjectAdmin>, EngineError> {
        Err(EngineError::Unavailable { engine: "storbench", message: "this engine has no single-object access (rados has)".into() })
    }
    /// The storage cluster behind the target, connected: its own counters
    /// and the faults a run may inject (Ceph's). `None`: the engine knows
    /// of no cluster behind its target.
    fn cluster(&self) -> Result<Option<Box<dyn ClusterAdmin>>, EngineError> {
        Ok(None)
    }
}

/// Something read once a second beside a run, on its own thread: a
/// storage cluster's management interface, an exporter's endpoint.
pub trait Watched: Send {
    /// Its name in the run's telemetry (`ceph`, `127.0.0.1:9283`).
    fn name(&self) -> &str;
    /// What kind of source its seconds make.
    fn kind(&self) -> storbench_model::telemetry::SourceKind {
        storbench_model::telemetry::SourceKind::Cluster
    }
    /// One reading, rates per second as the source computes them or as
    /// the reader derives them from the previous reading
    /// (`cluster_client_write_ops_per_s`, `osd_commit_latency_ms{osd="2"}`).
    fn sample(&mut self) -> Result<Vec<storbench_model::telemetry::Value>, EngineError>;
    /// What its readings so far left out and why, said once each.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// The host name it reports, and its CPUs (0: not a host).
    fn host(&self) -> (String, u32) {
        (self.name().to_string(), 0)
    }
}

/// A storage cluster as its operators' tools see it (Ceph's monitors and
/// managers): its own counters, read once a second during a run, and the
/// faults a run injects. Used from one thread at a time.
pub trait ClusterAdmin: Watched {
    /// Carry out a fault that goes through the cluster (`osd out 2`); what
    /// it answered.
    fn inject(&mut self, action: &storbench_model::disruption::FaultAction) -> Result<String, EngineError>;
}

/// Which objects under a prefix [`EngineConfig::remove_objects`] may remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// Only those carrying storbench's mark (written by storbench): anything
    /// else under the prefix is someone else's, kept and counted.
    Marked,
    /// Every object under the prefix (`storbench cleanup --force`).
    All,
}

/// What removing one object did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    Removed,
    /// It was not there (any more).
    Absent,
    /// It does not carry storbench's mark: kept.
    Unmarked,
}

/// How much more a target can take, as its store says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Room {
    /// Bytes of data it can still take (replication already counted).
    pub bytes: Option<u64>,
    /// Objects it can still take (an object-count quota).
    pub objects: Option<u64>,
    /// Where the figure comes from, for the message ("pool 'p' (MAX AVAIL in
    /// ceph df)", "bucket 'b''s quota").
    pub source: String,
}

/// What [`EngineConfig::remove_objects`] did.
#[derive(Debug, Default)]
pub struct Removed {
    pub removed: u64,
    pub failed: u64,
    /// Objects under the prefix without storbench's mark, left alone.
    pub kept: u64,
    /// Why the first failure failed.
    pub first_failure: Option<String>,
    /// It stopped before the end (asked to, or too many failures in a row).
    pub stopped: bool,
    in_a_row: u32,
}

impl Removed {
    /// Failures in a row after which removal gives up: the store is gone.
    pub const GIVE_UP_AFTER: u32 = 64;

    pub fn removed(&mut self) {
        self.removed += 1;
        self.in_a_row = 0;
    }
    pub fn failed(&mut self, why: String) {
        self.failed += 1;
        self.in_a_row += 1;
        self.first_failure.get_or_insert(why);
    }
    pub fn given_up(&self) -> bool {
        self.in_a_row >= Self::GIVE_UP_AFTER
    }
}

/// Single objects, one call at a time (not measured).
pub trait ObjectAdmin {
    /// Up to `max` bytes of an object; `None` if it does not exist.
    fn get(&self, name: &str, max: usize) -> Result<Option<Vec<u8>>, EngineError>;
    /// Write a whole object.
    fn put(&self, name: &str, data: &[u8]) -> Result<(), EngineError>;
    /// Names of the objects starting with `prefix`.
    fn list(&self, prefix: &str) -> Result<Vec<String>, EngineError>;
    /// Remove an object; false if it was not there.
    fn remove(&self, name: &str) -> Result<bool, EngineError>;
    /// Remove an object only if it carries storbench's mark.
    fn remove_if_marked(&self, name: &str) -> Result<Removal, EngineError>;
}

/// What a job needs from an engine's own target.
pub struct TargetRequest<'a> {
    /// Bytes the job uses (offset + size), when given.
    pub size: Option<u64>,
    pub writes: bool,
    pub allow_overwrite: bool,
    /// Object jobs: the object model and the name prefix in use.
    pub objects: Option<&'a ObjectSpec>,
    pub object_prefix: Option<&'a str>,
    /// An earlier job of the run writes these objects (and keeps them):
    /// `objects_exist` cannot be checked before the run starts. For a block
    /// job on the engine's own target: the job, or one of an earlier group
    /// or its own, writes it, so what was never written before the run
    /// says nothing about what this job reads.
    pub written_before: bool,
    /// The job reads back and checks what it wrote.
    pub verifies: bool,
    /// Asked while preparing waits for the storage: true once a Ctrl-C
    /// came, and the engine then returns [`EngineError::Interrupted`].
    pub stop: &'a dyn Fn() -> bool,
    /// A block job's transfer sizes and the offsets its workers' regions
    /// start at (`offset`, `offset_increment`), for targets that limit them
    /// (an NBD export's block sizes); `None` where nothing is transferred
    /// in blocks (objects, a cleanup).
    pub transfers: Option<Transfers<'a>>,
}

/// What [`TargetRequest::transfers`] carries.
#[derive(Clone, Copy, Debug)]
pub struct Transfers<'a> {
    /// Read sizes count if the job reads, write sizes if it writes.
    pub sizes: &'a storbench_workload::spec::BlockSizes,
    pub reads: bool,
    pub writes: bool,
    /// A verifying job's read-back pieces, when it verifies.
    pub read_back: Option<u64>,
    pub offset: u64,
    pub offset_increment: u64,
    /// fio's `rw=read:N`: sequential offsets also move by this.
    pub seq_skip: i64,
    /// The sizes are a replayed trace's commonest ones, not the job's bs.
    pub replay: bool,
}

/// A block engine handed an object operation: the plan gives those only to
/// engines that declare `objects`, so this is a bug, reported rather than faked.
pub fn unsupported_op(engine: &'static str, op: OpKind) -> EngineError {
    EngineError::Unavailable { engine, message: format!("{} is not a block operation", op.name()) }
}

/// Reject options the engine does not declare (the caller adds suggestions).
pub fn check_known(engine: &'static str, known: &[OptionInfo], options: &EngineOptions) -> Result<(), EngineError> {
    for k in options.keys() {
        if !known.iter().any(|o| o.name == k) {
            return Err(EngineError::BadOption { engine, option: k.clone(), message: "unknown option".into() });
        }
    }
    Ok(())
}

/// A configuration with nothing in it, for engines without options.
pub fn no_options(engine: &'static str, options: &EngineOptions) -> Result<(), EngineError> {
    check_known(engine, &[], options)
}

/// Every engine storbench has.
pub fn registry() -> &'static [&'static dyn EngineFactory] {
    &[
        &psync::PsyncFactory,
        &uring::UringFactory,
        &libaio::LibaioFactory,
        &null::NullFactory,
        &ceph::rbd::RbdFactory,
        &ceph::rados::RadosFactory,
        &http::s3::S3Factory,
        &http::swift::SwiftFactory,
        &memory::MemoryFactory,
        &tcp::TcpFactory,
        &nbd::NbdFactory,
        &net::NetFactory,
        &falloc::FallocFactory,
        &cpuio::CPUIO,
        &exec::EXEC,
        &meta::FILECREATE,
        &meta::FILESTAT,
        &meta::FILEDELETE,
        &meta::FTRUNCATE,
    ]
}

/// Every name `ioengine` takes for the engine: its own, its aliases, fio's.
pub fn names_of(f: &'static dyn EngineFactory) -> impl Iterator<Item = &'static str> {
    std::iter::once(f.name()).chain(f.aliases().iter().copied()).chain(f.fio_names().iter().map(|n| n.name))
}

/// The engine called `name` (by its name, an alias or a fio name).
pub fn find(name: &str) -> Option<&'static dyn EngineFactory> {
    registry().iter().copied().find(|f| names_of(*f).any(|n| n == name))
}

/// The engine fio's `ioengine=NAME` runs on, with what differs from fio's.
pub fn find_fio(name: &str) -> Option<(&'static dyn EngineFactory, FioName)> {
    registry().iter().find_map(|f| f.fio_names().iter().find(|n| n.name == name).map(|n| (*f, *n)))
}

/// The names of the engines that pass `keep`, for messages ("psync, io_uring").
pub fn names_where(keep: impl Fn(&'static dyn EngineFactory) -> bool) -> Vec<&'static str> {
    registry().iter().copied().filter(|f| keep(*f)).map(|f| f.name()).collect()
}

/// Every option name any engine declares (for suggestions).
pub fn all_option_names() -> Vec<&'static str> {
    registry().iter().flat_map(|f| f.options().iter().map(|o| o.name)).collect()
}

/// Parse a boolean engine option with a default.
pub fn bool_option(engine: &'static str, options: &EngineOptions, name: &str, default: bool) -> Result<bool, EngineError> {
    match options.get(name) {
        None => Ok(default),
        Some(v) => storbench_workload::units::parse_bool(v).map_err(|e| EngineError::BadOption {
            engine,
            option: name.into(),
            message: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine error's fault says what `is_user_error` says (the exit
    /// code before a run comes from the fault now), and a stop is a stop.
    #[test]
    fn an_engine_errors_fault_agrees_with_whose_error_it_was() {
        use storbench_model::Fault;
        let e = "x";
        let all = [
            EngineError::os(e, "open", libc::ENOENT),
            EngineError::BadOption { engine: e, option: "o".into(), message: "m".into() },
            EngineError::Refused { engine: e, message: "m".into() },
            EngineError::Unreachable { engine: e, message: "m".into(), source: None },
            EngineError::Rejected { engine: e, message: "m".into(), kind: ErrorKind::NotFound },
            EngineError::Unavailable { engine: e, message: "m".into() },
            EngineError::failed(e, "m", "why"),
            EngineError::Interrupted { engine: e, what: "w".into() },
        ];
        for err in &all {
            assert_eq!(err.is_user_error(), err.fault() != Fault::System, "{err}");
            assert_eq!(err.is_interrupted(), err.fault() == Fault::Interrupted, "{err}");
        }
    }

    /// Each name `ioengine` takes means one engine, and `find` gives that
    /// engine for it: there is no list of names but the factories'.
    #[test]
    fn every_name_means_one_engine_and_find_gives_it() {
        let mut seen = std::collections::BTreeMap::new();
        for f in registry() {
            for n in names_of(*f) {
                assert!(!n.is_empty() && n.trim() == n, "{}: name '{n}'", f.name());
                if let Some(other) = seen.insert(n, f.name()) {
                    assert_eq!(other, f.name(), "'{n}' names both {other} and {}", f.name());
                }
                assert_eq!(find(n).map(|e| e.name()), Some(f.name()), "find('{n}')");
            }
            for n in f.fio_names() {
                assert_eq!(find_fio(n.name).map(|(e, m)| (e.name(), m)), Some((f.name(), *n)));
            }
        }
        // Names no engine declares resolve to none.
        for n in ["", "http", "vsync", "netsplice", "PSYNC", "memory-x"] {
            assert!(find(n).is_none() && find_fio(n).is_none(), "'{n}' resolves to an engine that does not declare it");
        }
    }

    /// The spellings `find` took before engines declared their names, each
    /// still the same engine (posixaio with a note: it is not fio's).
    #[test]
    fn the_old_spellings_still_resolve() {
        let cases = [("sync", "psync"), ("pvsync", "psync"), ("uring", "io_uring"), ("iouring", "io_uring"), ("posixaio", "libaio")];
        for (name, engine) in cases {
            assert_eq!(find(name).map(|f| f.name()), Some(engine), "{name}");
        }
        assert!(find_fio("posixaio").is_some_and(|(_, n)| n.note.is_some()));
        assert!(find_fio("uring").is_none(), "uring is storbench's spelling, not fio's");
    }
}
