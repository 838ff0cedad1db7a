//! The `rados` engine: named objects in a pool through librados, with the
//! asynchronous calls (rados_aio_*) so the queue depth is real.
//!
//! librados reports completions only through callbacks on its own threads; the
//! callback here does the least it can (push the slot number, wake the worker)
//! and the worker collects return values itself. Objects are named by the
//! job's prefix and the key number the object workload model chose.
//!
//! Before anything is written the target is checked: the pool exists, no write
//! is larger than the OSDs accept (`osd_max_object_size`, else every write fails
//! with EFBIG), objects the job means to create are not already there (they
//! would belong to someone else, or to an earlier run kept with cleanup=0), and
//! objects a job says exist (`objects_exist=1`) do exist.
//!
//! Every write that may create an object carries storbench's mark, the xattr
//! [`MARK_XATTR`], set in the same operation as the data (one OSD
//! transaction; an update keeps the object's xattrs), so `storbench
//! cleanup` can tell storbench's objects from anyone else's under a prefix,
//! and removes one only if the mark is on it (compared and removed in one
//! operation: nothing can slip in between).

use super::conn::{Cluster, ConnOptions, PoolDf, CONN_OPTIONS};
use super::cxx::{self, CxxIoCtx};
use super::ffi::{self, Completion as RadosCompletion};
use crate::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Condvar, Mutex};
use storbench_workload::ObjectNames;

pub struct RadosFactory;

const NAME: &str = "rados";
/// The xattr every object storbench writes carries, and its value.
pub const MARK_XATTR: &std::ffi::CStr = c"storbench";
pub const MARK_VALUE: &[u8] = b"written";
/// librados' LIBRADOS_CMPXATTR_OP_EQ.
const CMPXATTR_EQ: u8 = 1;

impl EngineFactory for RadosFactory {
    fn knows_cluster(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: NAME, note: None }]
    }
    fn description(&self) -> &'static str {
        "Ceph RADOS objects through librados (loaded at run time), asynchronous I/O"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: false, needs_files: false, does_io: true, blocks: false, objects: true, ordered: true }
    }
    fn options(&self) -> &'static [OptionInfo] {
        CONN_OPTIONS
    }
    fn supports(&self, op: OpKind) -> bool {
        !matches!(op, OpKind::List | OpKind::Sync | OpKind::Trim)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, CONN_OPTIONS, options)?;
        if !options.contains_key("pool") {
            return Err(EngineError::BadOption {
                engine: NAME,
                option: "pool".into(),
                message: "is required: name the pool the objects go to (e.g. --pool mypool)".into(),
            });
        }
        Ok(Arc::new(RadosConfig { conn: ConnOptions::parse(NAME, options, "")? }))
    }
}

/// The connection, parsed once for every worker.
pub struct RadosConfig {
    conn: ConnOptions,
}

impl RadosConfig {
    /// The pool's figures as `ceph df detail` has them.
    fn pool_df(&self) -> Result<PoolDf, EngineError> {
        Cluster::connect(NAME, &self.conn)?.pool_df(NAME, &self.conn.pool)
    }
}

impl EngineConfig for RadosConfig {
    fn prepare_target(&self, t: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        let (o, prefix) = crate::objects::object_target(NAME, t)?;
        let cluster = Cluster::connect(NAME, &self.conn)?;
        let pool = &self.conn.pool;
        if t.writes {
            check_object_size(&cluster, o.sizes.max())?;
        }
        crate::objects::check_names(NAME, t, &|_| format!("pool '{pool}'"), &mut |_, name| exists(&cluster, name))?;
        // Which way the writes go, as a note: the label names the target
        // alone (readers and writers of one target must agree on it).
        let note = t.writes.then(|| format!("rados {}", cxx::write_path(NAME, t.verifies)));
        Ok(Some(StoreTarget { note, ..StoreTarget::new(0, 1, format!("rados:{pool}/{prefix}*")) }))
    }
    fn allocated(&self) -> Result<Option<u64>, EngineError> {
        Ok(Some(self.pool_df()?.stored))
    }
    fn capacity(&self) -> Result<Option<u64>, EngineError> {
        let df = self.pool_df()?;
        Ok(Some(df.stored + df.max_avail))
    }
    fn room(&self) -> Result<Option<Room>, EngineError> {
        Cluster::connect(NAME, &self.conn)?.pool_room(NAME, &self.conn.pool)
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Rados::open(&self.conn, setup).map(|e| Box::new(e) as Box<dyn Engine>)
    }
    fn cluster(&self) -> Result<Option<Box<dyn crate::ClusterAdmin>>, EngineError> {
        Ok(Some(Box::new(super::watch::CephWatch::connect(NAME, &self.conn)?)))
    }
    fn admin(&self) -> Result<Box<dyn ObjectAdmin>, EngineError> {
        Ok(Box::new(Admin(Cluster::connect(NAME, &self.conn)?)))
    }
}

fn check_object_size(cluster: &Cluster, largest: u64) -> Result<(), EngineError> {
    let max = cluster.max_object_size(NAME);
    if largest > max {
        return Err(EngineError::BadOption {
            engine: NAME,
            option: "object_size".into(),
            message: format!(
                "objects of {largest} bytes exceed the cluster's osd_max_object_size ({max} bytes): \
                 the OSDs would reject every such write (EFBIG). Lower object_size, or raise \
                 osd_max_object_size on the cluster"
            ),
        });
    }
    Ok(())
}

/// Whether an object exists (a synchronous stat).
pub fn exists(cluster: &Cluster, name: &str) -> Result<bool, EngineError> {
    let cname = ffi::cstr(NAME, "object name", name)?;
    let (mut size, mut mtime) = (0u64, 0 as libc::time_t);
    // SAFETY: valid ioctx, C string and out-pointers.
    let rc = unsafe { (cluster.api.rados_stat)(cluster.ioctx, cname.as_ptr(), &mut size, &mut mtime) };
    match rc {
        0 => Ok(true),
        rc if rc == -libc::ENOENT => Ok(false),
        rc => Err(EngineError::os(NAME, "rados_stat", -rc)),
    }
}

/// A write of `len` bytes from `buf` at `offset` (`None`: the whole
/// object) through the C API (which copies the data), with storbench's mark
/// set in the same operation when `mark`; asynchronous with a completion,
/// else synchronous. Returns what librados returns.
///
/// # Safety
/// `io` is a live ioctx, `oid` a C string and `buf` `len` readable bytes,
/// all valid until the call returns (the C API copies the data).
#[allow(clippy::too_many_arguments)]
unsafe fn write_op(
    api: &ffi::Api,
    io: ffi::IoCtx,
    oid: *const std::ffi::c_char,
    comp: Option<RadosCompletion>,
    buf: *const std::ffi::c_char,
    len: usize,
    offset: Option<u64>,
    mark: bool,
) -> i32 {
    // SAFETY: as the function's contract says; the operation is released
    // once performed (librados moved its steps into its own request).
    unsafe {
        let op = (api.rados_create_write_op)();
        if op.is_null() {
            return -libc::ENOMEM;
        }
        match offset {
            Some(off) => (api.rados_write_op_write)(op, buf, len, off),
            None => (api.rados_write_op_write_full)(op, buf, len),
        }
        if mark {
            (api.rados_write_op_setxattr)(op, MARK_XATTR.as_ptr(), MARK_VALUE.as_ptr().cast(), MARK_VALUE.len());
        }
        let rc = match comp {
            Some(c) => (api.rados_aio_write_op_operate)(op, io, c, oid, ptr::null_mut(), 0),
            None => (api.rados_write_op_operate)(op, io, oid, ptr::null_mut(), 0),
        };
        (api.rados_release_write_op)(op);
        rc
    }
}

/// Whether a write sets storbench's mark: writes that may create the object
/// do; an update rewrites an existing one, whose xattrs a whole-object
/// write keeps (so an object storbench did not write stays unmarked).
fn marks(op: OpKind) -> bool {
    op != OpKind::Update
}

/// Completed slots, filled by librados's callback threads.
struct Ready {
    slots: Mutex<Vec<u32>>,
    cond: Condvar,
}

/// The argument librados hands back to the callback: where to report, and which slot.
struct SlotArg {
    ready: *const Ready,
    slot: u32,
}

/// Runs on a librados thread: record the slot and wake the worker. It must not
/// unwind into C; the vector has room for every slot, so push does not allocate.
unsafe extern "C" fn on_complete(_c: RadosCompletion, arg: *mut c_void) {
    // SAFETY: arg is a SlotArg in the engine's boxed slice, which outlives every
    // completion (Drop waits for callbacks), and ready points at its boxed Ready.
    let a = unsafe { &*(arg as *const SlotArg) };
    let ready = unsafe { &*a.ready };
    let mut slots = ready.slots.lock().unwrap_or_else(|e| e.into_inner());
    slots.push(a.slot);
    drop(slots);
    ready.cond.notify_one();
}

/// Per-worker engine: its own connection and completion bookkeeping.
struct Rados {
    /// Writes without librados' copy (see cxx.rs), when the shim loaded.
    /// Declared before `cluster`: it drops first, as the C ioctx needs.
    cxx: Option<CxxIoCtx>,
    cluster: Cluster,
    ready: Box<Ready>,
    args: Box<[SlotArg]>,
    /// The completion in flight per slot (null when idle).
    comps: Vec<RadosCompletion>,
    /// Each slot's object name (NUL-terminated), reused between operations.
    names: Vec<String>,
    object_names: ObjectNames,
    ops: Vec<OpKind>,
    lens: Vec<u32>,
    stat_size: Vec<u64>,
    stat_mtime: Vec<libc::time_t>,
    buffers: Buffers,
    /// Operations librados refused at submission, reported as failed I/O.
    refused: Vec<Completion>,
    taken: Vec<u32>,
}

// SAFETY: the handles are used only by the worker thread that owns the engine;
// the raw pointers in `args` point into the engine's own boxes.
unsafe impl Send for Rados {}

impl Rados {
    fn open(conn: &ConnOptions, setup: &WorkerSetup) -> Result<Rados, EngineError> {
        let cluster = Cluster::connect(NAME, conn)?;
        let qd = setup.queue_depth as usize;
        let names = setup.object_names.cloned().unwrap_or_else(|| ObjectNames::new("", None));
        let ready = Box::new(Ready { slots: Mutex::new(Vec::with_capacity(qd)), cond: Condvar::new() });
        let ready_ptr: *const Ready = &*ready;
        let args = (0..qd as u32).map(|slot| SlotArg { ready: ready_ptr, slot }).collect();
        // Verifying jobs keep the copy: a write librados gave up on (op
        // timeout) may still sit in a connection's queue, and would go out
        // later with whatever the slot then holds, which the check would
        // call corruption. SAFETY: the C ioctx lives in `cluster`, which
        // drops after `cxx`.
        let shim = cxx::shim(NAME).ok().filter(|_| !setup.keep_reads);
        let cxx = shim.and_then(|s| unsafe { CxxIoCtx::new(s, cluster.ioctx) });
        Ok(Rados {
            cxx,
            cluster,
            ready,
            args,
            comps: vec![ptr::null_mut(); qd],
            names: (0..qd).map(|_| String::with_capacity(names.prefix.len() + 24)).collect(),
            object_names: names,
            ops: vec![OpKind::Read; qd],
            lens: vec![0; qd],
            stat_size: vec![0; qd],
            stat_mtime: vec![0; qd],
            buffers: setup.buffers,
            refused: Vec::with_capacity(qd),
            taken: Vec::with_capacity(qd),
        })
    }

    /// The object's name + NUL, in the slot's own buffer (no allocation
    /// once the buffer has grown to the longest name).
    fn name(&mut self, slot: usize, key: u32) -> *const std::ffi::c_char {
        let n = &mut self.names[slot];
        n.clear();
        self.object_names.write(key as u64, n);
        n.push('\0');
        n.as_ptr().cast()
    }

    /// An operation through librados' C API (which copies a write into a
    /// new bufferlist).
    ///
    /// # Safety
    /// As for `queue`: the name, buffer and stat slots live until the
    /// completion is reaped.
    unsafe fn queue_c(
        &mut self,
        i: usize,
        req: &IoRequest,
        oid: *const std::ffi::c_char,
        comp: RadosCompletion,
        buf: *mut std::ffi::c_char,
    ) -> i32 {
        let (api, io) = (self.cluster.api, self.cluster.ioctx);
        let (len, off) = (req.len as usize, req.offset);
        // SAFETY: as the function's contract says.
        unsafe {
            match req.op {
                OpKind::Read => (api.rados_aio_read)(io, oid, comp, buf, len, off),
                OpKind::Write => write_op(api, io, oid, Some(comp), buf, len, Some(off), true),
                OpKind::Create | OpKind::Update => write_op(api, io, oid, Some(comp), buf, len, None, marks(req.op)),
                OpKind::Stat => (api.rados_aio_stat)(io, oid, comp, &mut self.stat_size[i], &mut self.stat_mtime[i]),
                OpKind::Delete => (api.rados_aio_remove)(io, oid, comp),
                OpKind::List | OpKind::Sync | OpKind::Trim | OpKind::Truncate => -libc::EOPNOTSUPP,
            }
        }
    }

    /// The bytes an operation moved, from librados's return value: writes
    /// report 0 on success, reads the bytes read.
    fn result(&self, slot: usize, rc: i32) -> Result<u64, IoFailure> {
        match self.ops[slot] {
            OpKind::Write | OpKind::Create | OpKind::Update if rc == 0 => Ok(self.lens[slot] as u64),
            _ => rc_result(rc as i64),
        }
    }
}

impl Engine for Rados {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if req.len as usize > self.buffers.slot_len {
            return Err(EngineError::Unavailable {
                engine: NAME,
                message: format!("a {}-byte transfer exceeds the {}-byte buffer", req.len, self.buffers.slot_len),
            });
        }
        let api = self.cluster.api;
        let i = req.slot as usize;
        let mut comp: RadosCompletion = ptr::null_mut();
        let arg = &self.args[i] as *const SlotArg as *mut c_void;
        // SAFETY: arg stays valid until the completion is released (see on_complete).
        ffi::check(NAME, "rados_aio_create_completion", unsafe {
            (api.rados_aio_create_completion)(arg, Some(on_complete), None, &mut comp)
        })?;
        let oid = self.name(i, req.file);
        let buf = self.buffers.slot(req.slot).cast::<std::ffi::c_char>();
        let (len, off) = (req.len as usize, req.offset);
        self.ops[i] = req.op;
        self.lens[i] = req.len;
        // SAFETY: the name and buffer live in this slot until the completion is
        // reaped (the worker fills a slot's buffer only then, and frees the
        // buffers after the engine, hence after rados_shutdown: librados may
        // keep the no-copy bufferlist past the completion); the stat
        // out-pointers likewise.
        let rc = unsafe {
            match (req.op, &self.cxx) {
                (OpKind::Write, Some(c)) => c.write(oid, comp, buf, len, Some(off), true),
                (OpKind::Create | OpKind::Update, Some(c)) => c.write(oid, comp, buf, len, None, marks(req.op)),
                _ => self.queue_c(i, &req, oid, comp, buf),
            }
        };
        if rc < 0 {
            // SAFETY: librados did not take the completion.
            unsafe { (api.rados_aio_release)(comp) };
            self.refused.push(Completion::from_rc(req.slot, rc as i64));
        } else {
            self.comps[i] = comp;
        }
        Ok(())
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let got = self.refused.len();
        out.append(&mut self.refused);
        let want = (min as usize).saturating_sub(got);
        {
            let deadline = timeout.map(|t| std::time::Instant::now() + t);
            let mut slots = self.ready.slots.lock().unwrap_or_else(|e| e.into_inner());
            while slots.len() < want {
                slots = match deadline {
                    None => self.ready.cond.wait(slots).unwrap_or_else(|e| e.into_inner()),
                    Some(d) => {
                        let left = d.saturating_duration_since(std::time::Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        self.ready.cond.wait_timeout(slots, left).unwrap_or_else(|e| e.into_inner()).0
                    }
                };
            }
            std::mem::swap(&mut *slots, &mut self.taken);
        }
        let api = self.cluster.api;
        for k in 0..self.taken.len() {
            let slot = self.taken[k];
            let i = slot as usize;
            let comp = std::mem::replace(&mut self.comps[i], ptr::null_mut());
            // SAFETY: the callback reported this completion finished; released once.
            let rc = unsafe {
                let rc = (api.rados_aio_get_return_value)(comp);
                (api.rados_aio_release)(comp);
                rc
            };
            out.push(Completion::new(slot, self.result(i, rc)));
        }
        self.taken.clear();
        Ok(())
    }
}

impl Drop for Rados {
    fn drop(&mut self) {
        let api = self.cluster.api;
        for c in self.comps.iter_mut().filter(|c| !c.is_null()) {
            // SAFETY: an operation still in flight (the worker stopped on an
            // error): wait for it and its callback before freeing what they use.
            unsafe {
                (api.rados_aio_wait_for_complete_and_cb)(*c);
                (api.rados_aio_release)(*c);
            }
            *c = ptr::null_mut();
        }
    }
}

/// Single objects through a connection of its own, for tools that manage
/// objects outside a measured run.
struct Admin(Cluster);

impl ObjectAdmin for Admin {
    fn get(&self, name: &str, max: usize) -> Result<Option<Vec<u8>>, EngineError> {
        let cname = ffi::cstr(NAME, "object name", name)?;
        let mut buf = vec![0u8; max];
        // SAFETY: valid ioctx, C string and a buffer of `max` bytes.
        let rc = unsafe { (self.0.api.rados_read)(self.0.ioctx, cname.as_ptr(), buf.as_mut_ptr().cast(), max, 0) };
        if rc == -libc::ENOENT {
            return Ok(None);
        }
        buf.truncate(ffi::check(NAME, "rados_read", rc)? as usize);
        Ok(Some(buf))
    }

    /// Written with storbench's mark, as every object the engine writes.
    fn put(&self, name: &str, data: &[u8]) -> Result<(), EngineError> {
        let cname = ffi::cstr(NAME, "object name", name)?;
        // SAFETY: valid ioctx, C string and buffer.
        let rc = unsafe { write_op(self.0.api, self.0.ioctx, cname.as_ptr(), None, data.as_ptr().cast(), data.len(), None, true) };
        ffi::check(NAME, "rados_write_op_operate", rc).map(|_| ())
    }

    /// The mark compared and the object removed in one operation, so an
    /// object rewritten by someone else in between is never removed.
    fn remove_if_marked(&self, name: &str) -> Result<Removal, EngineError> {
        let cname = ffi::cstr(NAME, "object name", name)?;
        let api = self.0.api;
        // SAFETY: valid ioctx and C strings; the operation is released once performed.
        let rc = unsafe {
            let op = (api.rados_create_write_op)();
            if op.is_null() {
                return Err(EngineError::os(NAME, "rados_create_write_op", libc::ENOMEM));
            }
            (api.rados_write_op_cmpxattr)(op, MARK_XATTR.as_ptr(), CMPXATTR_EQ, MARK_VALUE.as_ptr().cast(), MARK_VALUE.len());
            (api.rados_write_op_remove)(op);
            let rc = (api.rados_write_op_operate)(op, self.0.ioctx, cname.as_ptr(), ptr::null_mut(), 0);
            (api.rados_release_write_op)(op);
            rc
        };
        match rc {
            0 => Ok(Removal::Removed),
            rc if rc == -libc::ENOENT => Ok(Removal::Absent),
            // The comparison failed: another value, or no mark at all.
            rc if rc == -libc::ECANCELED || rc == -libc::ENODATA => Ok(Removal::Unmarked),
            rc => Err(EngineError::os(NAME, "rados_write_op_operate (remove if marked)", -rc)),
        }
    }

    fn remove(&self, name: &str) -> Result<bool, EngineError> {
        let cname = ffi::cstr(NAME, "object name", name)?;
        // SAFETY: valid ioctx and C string.
        let rc = unsafe { (self.0.api.rados_remove)(self.0.ioctx, cname.as_ptr()) };
        if rc == -libc::ENOENT {
            return Ok(false);
        }
        ffi::check(NAME, "rados_remove", rc).map(|_| true)
    }

    /// Names in the pool (and namespace) starting with `prefix`.
    fn list(&self, prefix: &str) -> Result<Vec<String>, EngineError> {
        let api = self.0.api;
        let mut ctx: ffi::ListCtx = ptr::null_mut();
        // SAFETY: valid ioctx and out-pointer.
        ffi::check(NAME, "rados_nobjects_list_open", unsafe { (api.rados_nobjects_list_open)(self.0.ioctx, &mut ctx) })?;
        let mut names = Vec::new();
        let result = loop {
            let mut entry: *const std::ffi::c_char = ptr::null();
            // SAFETY: open list context; key and namespace out-pointers may be NULL.
            let rc = unsafe { (api.rados_nobjects_list_next)(ctx, &mut entry, ptr::null_mut(), ptr::null_mut()) };
            if rc == -libc::ENOENT {
                break Ok(());
            }
            if rc < 0 {
                break Err(EngineError::os(NAME, "rados_nobjects_list_next", -rc));
            }
            // SAFETY: librados returns a NUL-terminated name valid until the next call.
            let name = unsafe { std::ffi::CStr::from_ptr(entry) }.to_string_lossy();
            if name.starts_with(prefix) {
                names.push(name.into_owned());
            }
        };
        // SAFETY: opened above, closed once.
        unsafe { (api.rados_nobjects_list_close)(ctx) };
        result.map(|_| names)
    }
}
