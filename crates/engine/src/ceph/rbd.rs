//! The `rbd` engine: an RBD image through librbd, as a block device to the
//! workload model. Asynchronous I/O (rbd_aio_*) keeps the queue depth real;
//! completions are collected through an eventfd and rbd_poll_io_events, so no
//! callback runs storbench code on librbd's threads.
//!
//! The librbd cache is off unless `rbd_cache=1`: with it on, writes are
//! acknowledged from client memory and the figures describe the cache, not the
//! cluster (the plan warns so in the report). With it on, the engine flushes
//! once after opening, as a guest's first flush would, so librbd leaves its
//! writethrough-until-flush mode and the job sees the writeback cache.
//! `rbd_cache=conf` leaves the cache to the Ceph configuration (and flushes
//! once, likewise), which is what fio's rbd engine does for buffered jobs
//! (fio job files get it; with direct=1 fio turns the cache off).
//!
//! Several images (`rbdname=a:b:c`) make one job's volumes, as a guest with
//! several disks: the workload's files map to images, one eventfd serves all.
//!
//! Safety as for block devices: an image storbench did not create (marked with
//! the image metadata key `storbench.created`) is only written with
//! allow_overwrite. A missing image is created when a size is given and
//! removed when the run ends (after every job of the run is done with it),
//! unless `keep_image=1` (then named in the run's notes, and removed by
//! `storbench cleanup RESULTS_DIR`, whose journal lists it, or `storbench
//! cleanup --ioengine rbd --pool P --rbdname NAME`; only images carrying the
//! mark go). The pool must be named, as fio's rbd engine requires.

use super::conn::{Cluster, ConnOptions, CONN_OPTIONS};
use super::ffi::{self, Completion as RbdCompletion, Image, RbdApi};
use crate::*;
use std::ffi::{c_void, CString};
use std::ptr;

/// librbd's exclusive-lock feature bit (`RBD_FEATURE_EXCLUSIVE_LOCK`).
const RBD_FEATURE_EXCLUSIVE_LOCK: u64 = 1 << 2;
/// librbd's fast-diff feature bit: extents known from the object map.
const RBD_FEATURE_FAST_DIFF: u64 = 1 << 4;

pub struct RbdFactory;

const NAME: &str = "rbd";
const MARKER_KEY: &str = "storbench.created";
const EVENT_TYPE_EVENTFD: i32 = 2;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo { name: "rbdname", kind: Kind::Text, default: "", help: "image name, or several a:b:c (alias: image; default storbench)" },
    OptionInfo { name: "image", kind: Kind::Text, default: "", help: "image name" },
    OptionInfo {
        name: "images",
        kind: Kind::Count,
        default: "1",
        help: "this many images (volumes) <rbdname>-0 .. <rbdname>-N-1, the job's I/O spread over them (sweep it: --sweep images=1,2,4,8)",
    },
    OptionInfo {
        name: "keep_image",
        kind: Kind::Flag,
        default: "0",
        help: "keep the images this run creates (by default they are removed when the run ends; storbench cleanup removes kept ones)",
    },
    OptionInfo {
        name: "rbd_cache",
        kind: Kind::Flag,
        default: "0",
        help: "librbd cache: 0 off (measure the cluster, not client memory), 1 on, conf as the Ceph configuration says (fio's behaviour)",
    },
];

fn all_options() -> &'static [OptionInfo] {
    static ALL: std::sync::OnceLock<Vec<OptionInfo>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| CONN_OPTIONS.iter().chain(OPTIONS).copied().collect())
}

fn image_names(opts: &EngineOptions) -> Result<Vec<String>, EngineError> {
    let names = opts.get("rbdname").or_else(|| opts.get("image")).map(String::as_str).unwrap_or("storbench");
    let listed: Vec<String> = names.split(':').filter(|s| !s.is_empty()).map(String::from).collect();
    let Some(n) = opts.get("images") else { return Ok(listed) };
    let bad = |message: String| EngineError::BadOption { engine: NAME, option: "images".into(), message };
    let n = storbench_workload::units::parse_count(n)
        .ok()
        .filter(|n| (1..=4096).contains(n))
        .ok_or_else(|| bad(format!("'{n}' is not a count from 1 to 4096")))?;
    match listed.as_slice() {
        [base] => Ok((0..n).map(|k| format!("{base}-{k}")).collect()),
        _ => Err(bad("images=N numbers one rbdname (<rbdname>-0, -1...); give one name, or list the images in rbdname instead".into())),
    }
}

impl EngineFactory for RbdFactory {
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
        "Ceph RBD image through librbd (loaded at run time), asynchronous I/O"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: false, does_io: true, blocks: true, objects: false, ordered: true }
    }
    fn options(&self) -> &'static [OptionInfo] {
        all_options()
    }
    fn supports(&self, op: OpKind) -> bool {
        matches!(op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim)
    }
    /// One image per volume: `rbdname=vol` becomes vol-0 .. vol-N-1 (as
    /// `images=N` numbers them), or the listed images, one per volume.
    fn volume_options(&self, options: &EngineOptions, volumes: u32) -> Result<EngineOptions, EngineError> {
        let bad = |message: String| EngineError::BadOption { engine: NAME, option: "volumes".into(), message };
        if options.contains_key("images") {
            return Err(bad(format!(
                "give volumes={volumes} or images=N, not both (images share the job's queue depth; volumes have one each)"
            )));
        }
        let listed = image_names(options)?;
        let mut out = options.clone();
        match listed.len() {
            1 => {
                out.insert("images".into(), volumes.to_string());
            }
            n if n == volumes as usize => {}
            n => {
                return Err(bad(format!("volumes={volumes} with {n} images in rbdname: list one image per volume, or one name to number")))
            }
        }
        Ok(out)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, all_options(), options)?;
        let images = image_names(options)?;
        if images.is_empty() {
            return Err(EngineError::BadOption { engine: NAME, option: "rbdname".into(), message: "names no image".into() });
        }
        if let Some(dup) = images.iter().enumerate().find(|(i, n)| images[..*i].contains(n)) {
            return Err(EngineError::BadOption {
                engine: NAME,
                option: "rbdname".into(),
                message: format!("image '{}' is listed twice", dup.1),
            });
        }
        let cache = match options.get("rbd_cache").map(String::as_str) {
            Some("conf") => Cache::Conf,
            _ if bool_option(NAME, options, "rbd_cache", false)? => Cache::On,
            _ => Cache::Off,
        };
        let conn = ConnOptions::parse(NAME, options, "")?;
        // As fio's rbd engine ("rbd pool name must be provided"): a default
        // pool would put the image (created, and kept) where no one looks.
        if conn.pool.is_empty() {
            return Err(EngineError::BadOption {
                engine: NAME,
                option: "pool".into(),
                message: "is required: name the pool the image is in (e.g. --pool rbd), as fio's rbd engine requires".into(),
            });
        }
        let keep = bool_option(NAME, options, "keep_image", false)?;
        let named = options.contains_key("rbdname") || options.contains_key("image");
        Ok(Arc::new(RbdConfig { conn, images, cache, keep, named }))
    }
}

/// Connection, images and cache setting, parsed once for every worker.
struct RbdConfig {
    conn: ConnOptions,
    images: Vec<String>,
    cache: Cache,
    /// The images the run creates stay after it (`keep_image=1`).
    keep: bool,
    /// The images were named (not the default `storbench`): what
    /// `cleanup --ioengine rbd` removes must be.
    named: bool,
}

/// Who decides whether librbd caches.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cache {
    Off,
    /// On, and out of writethrough-until-flush mode from the start.
    On,
    /// As the Ceph configuration says (its default is on), nothing flushed.
    Conf,
}

impl EngineConfig for RbdConfig {
    fn warnings(&self, writes: bool) -> Vec<String> {
        match self.cache {
            Cache::On if writes => vec!["the librbd writeback cache is on (rbd_cache=1): writes are acknowledged from client memory, so write latency and IOPS describe the cache, and flush stalls appear as multi-second outliers; use rbd_cache=0 to measure the cluster"
                .into()],
            Cache::Conf => vec!["the librbd cache follows the Ceph configuration (rbd_cache=conf, as in fio; Ceph's default `rbd cache = true`): writes may be acknowledged from client memory and reads served from it, so the figures can describe the cache rather than the cluster; use rbd_cache=0 to measure the cluster"
                .into()],
            _ => Vec::new(),
        }
    }
    fn prepare_target(&self, t: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        let cluster = Cluster::connect(NAME, &self.conn)?;
        let mut smallest = u64::MAX;
        let mut held = Vec::new();
        let mut made = Vec::new();
        let mut exclusive_lock = Vec::new();
        // Never-written extents matter to a job that reads what no job of the run writes first.
        let reads = t.transfers.is_some_and(|x| x.reads) && !t.written_before;
        let (mut never, mut unknown) = (0u64, (!reads).then_some(()));
        for name in &self.images {
            let (img, created) = OpenImage::open_or_create(&cluster, name, t.size)?;
            let features = img.features()?;
            if features & RBD_FEATURE_EXCLUSIVE_LOCK != 0 {
                exclusive_lock.push(name.clone());
            }
            match (reads, created) {
                (false, _) => {}
                (true, true) => never += img.size()?,
                // Cheap only with the object map's fast-diff; else not asked.
                (true, false) if features & RBD_FEATURE_FAST_DIFF != 0 => never += img.size()?.saturating_sub(img.allocated()?),
                (true, false) => unknown = Some(()),
            }
            // A new image is locked by this very handle (marking it wrote its header).
            if created {
                made.push(name.clone());
            } else {
                held.extend(img.lockers()?.iter().map(|l| l.describe(&self.conn.pool, name)));
            }
            if t.writes && !t.allow_overwrite && !img.marked()? {
                return Err(EngineError::Refused {
                    engine: NAME,
                    message: format!(
                        "image '{name}' was not created by storbench; its data would be overwritten. \
                         Name a new image (it is created with the job's size), or pass --allow_overwrite=1"
                    ),
                });
            }
            smallest = smallest.min(img.size()?);
        }
        let label = format!("rbd:{}/{}", self.conn.pool, self.images.join(","));
        let held_by = (!held.is_empty()).then(|| held.join("; "));
        let note = (self.keep && !made.is_empty()).then(|| self.kept_note(&made));
        let created = made.iter().map(|n| self.created_label(n)).collect();
        let never_written = unknown.is_none().then_some(never);
        Ok(Some(StoreTarget {
            size: smallest,
            units: self.images.len() as u32,
            label,
            held_by,
            note,
            created,
            exclusive_lock,
            never_written,
        }))
    }
    fn room(&self) -> Result<Option<Room>, EngineError> {
        Cluster::connect(NAME, &self.conn)?.pool_room(NAME, &self.conn.pool)
    }
    /// The images the run created, if they still carry storbench's mark;
    /// when the run was killed while creating them, nothing is removed
    /// (an image of the same name may be an earlier run's, kept).
    fn remove_created(&self, _t: &TargetRequest, created: Option<&[String]>) -> Result<Vec<String>, EngineError> {
        let Some(created) = created else {
            let names: Vec<String> = self.images.iter().map(|n| self.image_label(n)).collect();
            return Ok(vec![format!(
                "the run was stopped while preparing image {}: if it made it, remove it with: rbd rm IMAGE",
                names.join(", ")
            )]);
        };
        let cluster = Cluster::connect(NAME, &self.conn)?;
        let rbd = ffi::rbd_api(NAME)?;
        let mut notes = Vec::new();
        for name in self.images.iter().filter(|n| created.contains(&self.created_label(n))) {
            let marked = match OpenImage::open(&cluster, rbd, name) {
                Ok(img) => img.marked()?,
                Err(libc::ENOENT) => continue,
                Err(e) => return Err(EngineError::os(NAME, "rbd_open", e)),
            };
            if !marked {
                notes.push(format!("image '{}' no longer carries storbench's mark: kept", self.image_label(name)));
                continue;
            }
            if let Err(e) = remove_image(&cluster, rbd, name) {
                notes.push(format!("removing image '{}' failed: {e}", self.image_label(name)));
            }
        }
        Ok(notes)
    }
    fn removes_created_at_end(&self) -> bool {
        !self.keep
    }
    /// `cleanup --ioengine rbd --pool P --rbdname A[:B...]`: the named
    /// images that carry storbench's mark.
    fn remove_named(&self, _stop: &dyn Fn() -> bool) -> Result<Option<NamedRemoval>, EngineError> {
        if !self.named {
            return Err(EngineError::BadOption {
                engine: NAME,
                option: "rbdname".into(),
                message: "name the images to remove (--rbdname IMAGE[:IMAGE...])".into(),
            });
        }
        let cluster = Cluster::connect(NAME, &self.conn)?;
        let rbd = ffi::rbd_api(NAME)?;
        let mut done = NamedRemoval::default();
        for name in &self.images {
            let label = self.image_label(name);
            let marked = match OpenImage::open(&cluster, rbd, name) {
                Ok(img) => img.marked()?,
                Err(libc::ENOENT) => {
                    done.kept.push(format!("image '{label}' does not exist"));
                    continue;
                }
                Err(e) => return Err(EngineError::os(NAME, "rbd_open", e)),
            };
            if !marked {
                done.kept.push(format!("image '{label}' was not created by storbench: kept"));
                continue;
            }
            remove_image(&cluster, rbd, name)?;
            done.removed.push(format!("image '{label}'"));
        }
        Ok(Some(done))
    }
    fn allocated(&self) -> Result<Option<u64>, EngineError> {
        let cluster = Cluster::connect(NAME, &self.conn)?;
        let rbd = ffi::rbd_api(NAME)?;
        let mut total = 0;
        for name in &self.images {
            let img = OpenImage::open(&cluster, rbd, name).map_err(|e| EngineError::os(NAME, "rbd_open", e))?;
            total += img.allocated()?;
        }
        Ok(Some(total))
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Rbd::open(self, setup).map(|e| Box::new(e) as Box<dyn Engine>)
    }
    fn cluster(&self) -> Result<Option<Box<dyn crate::ClusterAdmin>>, EngineError> {
        Ok(Some(Box::new(super::watch::CephWatch::connect(NAME, &self.conn)?)))
    }
}

impl RbdConfig {
    /// `pool/image`, as rbd's commands take it.
    fn image_label(&self, image: &str) -> String {
        format!("{}/{image}", self.conn.pool)
    }

    /// How the journal names an image the run created.
    fn created_label(&self, image: &str) -> String {
        format!("image '{}'", self.image_label(image))
    }

    /// The run's note on the images it created: they stay (a later run can
    /// read them), and how to remove them.
    fn kept_note(&self, made: &[String]) -> String {
        let named: Vec<String> = made.iter().map(|m| self.image_label(m)).collect();
        let rm: Vec<String> = named.iter().map(|m| format!("rbd rm {m}")).collect();
        format!("rbd: this run created image {} and keeps it (remove it with: {})", named.join(", "), rm.join("; "))
    }
}

/// Remove an image (closed: no handle of this process holds it); one
/// already gone is not a failure.
fn remove_image(cluster: &Cluster, rbd: &'static RbdApi, name: &str) -> Result<(), EngineError> {
    let cname = ffi::cstr(NAME, "rbdname", name)?;
    // SAFETY: valid ioctx and C string.
    let rc = unsafe { (rbd.rbd_remove)(cluster.ioctx, cname.as_ptr()) };
    match rc {
        rc if rc >= 0 || rc == -libc::ENOENT => Ok(()),
        rc => Err(EngineError::os(NAME, "rbd_remove", -rc)),
    }
}

/// An open image, closed on drop.
struct OpenImage<'a> {
    /// The image must not outlive its cluster connection.
    _cluster: &'a Cluster,
    rbd: &'static RbdApi,
    image: Image,
}

impl<'a> OpenImage<'a> {
    fn open(cluster: &'a Cluster, rbd: &'static RbdApi, name: &str) -> Result<OpenImage<'a>, i32> {
        let cname = CString::new(name).map_err(|_| libc::EINVAL)?;
        let mut image: Image = ptr::null_mut();
        // SAFETY: valid ioctx, C string and out-pointer; NULL snapshot = head.
        let rc = unsafe { (rbd.rbd_open)(cluster.ioctx, cname.as_ptr(), &mut image, ptr::null()) };
        if rc < 0 {
            return Err(-rc);
        }
        Ok(OpenImage { _cluster: cluster, rbd, image })
    }

    /// The image, and whether this call created it.
    fn open_or_create(cluster: &'a Cluster, name: &str, size: Option<u64>) -> Result<(OpenImage<'a>, bool), EngineError> {
        let rbd = ffi::rbd_api(NAME)?;
        match Self::open(cluster, rbd, name) {
            Ok(i) => Ok((i, false)),
            Err(libc::ENOENT) => {
                let size = size.ok_or_else(|| EngineError::BadOption {
                    engine: NAME,
                    option: "rbdname".into(),
                    message: format!("image '{name}' does not exist; give a size (e.g. --size 1g) to create it"),
                })?;
                let cname = ffi::cstr(NAME, "rbdname", name)?;
                let mut order = 0;
                // SAFETY: valid ioctx, C string, out-pointer.
                ffi::check(NAME, "rbd_create", unsafe { (rbd.rbd_create)(cluster.ioctx, cname.as_ptr(), size, &mut order) })?;
                let img = Self::open(cluster, rbd, name).map_err(|e| EngineError::os(NAME, "rbd_open", e))?;
                img.mark()?;
                Ok((img, true))
            }
            Err(e) => Err(EngineError::os(NAME, "rbd_open", e)),
        }
    }

    /// Bytes of the image that hold data (its allocated extents, not its size).
    fn allocated(&self) -> Result<u64, EngineError> {
        unsafe extern "C" fn add(_offset: u64, len: usize, exists: std::ffi::c_int, arg: *mut std::ffi::c_void) -> std::ffi::c_int {
            if exists != 0 {
                // SAFETY: `arg` is the u64 below, alive for the whole call.
                unsafe { *(arg as *mut u64) += len as u64 };
            }
            0
        }
        let size = self.size()?;
        let mut total = 0u64;
        // SAFETY: open image; the callback only adds to `total`, which outlives the call.
        let rc =
            unsafe { (self.rbd.rbd_diff_iterate2)(self.image, ptr::null(), 0, size, 1, 0, Some(add), &mut total as *mut u64 as *mut _) };
        ffi::check(NAME, "rbd_diff_iterate2", rc)?;
        Ok(total)
    }

    /// The image's feature bits (`RBD_FEATURE_*`).
    fn features(&self) -> Result<u64, EngineError> {
        let mut features = 0u64;
        // SAFETY: open image, valid out-pointer.
        ffi::check(NAME, "rbd_get_features", unsafe { (self.rbd.rbd_get_features)(self.image, &mut features) })?;
        Ok(features)
    }

    fn size(&self) -> Result<u64, EngineError> {
        let mut size = 0u64;
        // SAFETY: open image, valid out-pointer.
        ffi::check(NAME, "rbd_get_size", unsafe { (self.rbd.rbd_get_size)(self.image, &mut size) })?;
        Ok(size)
    }

    /// Clients holding a lock on the image (before this run writes, any
    /// holder is another client: a run still going, or one killed, whose
    /// lock outlives it until its watch times out).
    fn lockers(&self) -> Result<Vec<Locker>, EngineError> {
        let mut sizes = [256usize; 4];
        loop {
            let mut bufs: Vec<Vec<std::ffi::c_char>> = sizes.iter().map(|n| vec![0; *n]).collect();
            let mut lens = sizes;
            let mut exclusive = 0;
            let [tag, clients, cookies, addrs] = &mut bufs[..] else { unreachable!("four buffers") };
            let [tag_len, clients_len, cookies_len, addrs_len] = &mut lens;
            // SAFETY: open image; each buffer is as long as its length says.
            let rc = unsafe {
                (self.rbd.rbd_list_lockers)(
                    self.image,
                    &mut exclusive,
                    tag.as_mut_ptr(),
                    tag_len,
                    clients.as_mut_ptr(),
                    clients_len,
                    cookies.as_mut_ptr(),
                    cookies_len,
                    addrs.as_mut_ptr(),
                    addrs_len,
                )
            };
            let got = [*tag_len, *clients_len, *cookies_len, *addrs_len];
            if rc == -(libc::ERANGE as isize) && got.iter().zip(&sizes).any(|(g, s)| g > s) {
                sizes = got;
                continue;
            }
            if rc < 0 {
                return Err(EngineError::os(NAME, "rbd_list_lockers", -rc as i32));
            }
            let split = |b: &[std::ffi::c_char], len: usize| -> Vec<String> {
                let bytes: Vec<u8> = b[..len.min(b.len())].iter().map(|c| *c as u8).collect();
                bytes.split(|c| *c == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()).collect()
            };
            let (c, k, a) = (split(clients, got[1]), split(cookies, got[2]), split(addrs, got[3]));
            return Ok((0..rc as usize)
                .map(|i| Locker {
                    client: c.get(i).cloned().unwrap_or_default(),
                    cookie: k.get(i).cloned().unwrap_or_default(),
                    addr: a.get(i).cloned().unwrap_or_default(),
                })
                .collect());
        }
    }

    fn mark(&self) -> Result<(), EngineError> {
        let (k, v) = (ffi::cstr(NAME, "key", MARKER_KEY)?, ffi::cstr(NAME, "value", "1")?);
        // SAFETY: open image, C strings.
        ffi::check(NAME, "rbd_metadata_set", unsafe { (self.rbd.rbd_metadata_set)(self.image, k.as_ptr(), v.as_ptr()) }).map(|_| ())
    }

    fn marked(&self) -> Result<bool, EngineError> {
        let k = ffi::cstr(NAME, "key", MARKER_KEY)?;
        let mut buf = [0 as std::ffi::c_char; 16];
        let mut len = buf.len();
        // SAFETY: open image, buffer and its length.
        let rc = unsafe { (self.rbd.rbd_metadata_get)(self.image, k.as_ptr(), buf.as_mut_ptr(), &mut len) };
        match rc {
            0 => Ok(true),
            rc if rc == -libc::ENOENT => Ok(false),
            rc => Err(EngineError::os(NAME, "rbd_metadata_get", -rc)),
        }
    }
}

impl Drop for OpenImage<'_> {
    fn drop(&mut self) {
        // SAFETY: opened in `open`; no I/O is in flight on this handle.
        unsafe { (self.rbd.rbd_close)(self.image) };
    }
}

/// A client holding a lock on an image.
struct Locker {
    client: String,
    cookie: String,
    addr: String,
}

impl Locker {
    /// In words, with the command that clears a holder that is gone.
    fn describe(&self, pool: &str, image: &str) -> String {
        format!(
            "image '{pool}/{image}' is locked by {} at {} (lock '{}'): if that is a run that was killed, writes wait until its \
             watch times out (about 30 s); `rbd status {pool}/{image}` shows it, and `rbd lock rm {pool}/{image} '{}' {}` clears it",
            self.client, self.addr, self.cookie, self.cookie, self.client
        )
    }
}

/// Per-worker engine: its own connection, image handles and eventfd.
struct Rbd {
    cluster: Cluster,
    rbd: &'static RbdApi,
    images: Vec<Image>,
    efd: i32,
    buffers: Buffers,
    events: Vec<RbdCompletion>,
    /// Length of each slot's write in flight: librbd reports a successful
    /// write as 0, not as the bytes written.
    write_len: Vec<u32>,
    /// Operations librbd refused at submission, reported as failed I/O.
    refused: Vec<Completion>,
}

// SAFETY: the image handle is used only by the worker thread that owns it.
unsafe impl Send for Rbd {}

impl Rbd {
    fn open(cfg: &RbdConfig, setup: &WorkerSetup) -> Result<Rbd, EngineError> {
        let mut cluster = Cluster::connect(NAME, &cfg.conn)?;
        // With the cache on, or left to the configuration (as fio's rbd
        // engine does for buffered jobs), an initial flush takes librbd out
        // of writethrough-until-flush mode, as a guest's first flush would.
        let flush = cfg.cache != Cache::Off;
        if cfg.cache != Cache::Conf {
            cluster.set(NAME, "rbd_cache", if cfg.cache == Cache::On { "true" } else { "false" })?;
        }
        // SAFETY: eventfd has no memory arguments.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(EngineError::last_os(NAME, "eventfd"));
        }
        let mut engine = Rbd {
            cluster,
            rbd: ffi::rbd_api(NAME)?,
            images: Vec::new(),
            efd,
            buffers: setup.buffers,
            events: vec![ptr::null_mut(); setup.queue_depth as usize],
            write_len: vec![0; setup.queue_depth as usize],
            refused: Vec::with_capacity(setup.queue_depth as usize),
        };
        // Pushed one by one so that Drop closes whatever opened before a failure.
        for name in &cfg.images {
            let name = ffi::cstr(NAME, "rbdname", name)?;
            let api = engine.rbd;
            let mut image: Image = ptr::null_mut();
            // SAFETY: valid ioctx, C string, out-pointer.
            ffi::check(NAME, "rbd_open", unsafe { (api.rbd_open)(engine.cluster.ioctx, name.as_ptr(), &mut image, ptr::null()) })?;
            engine.images.push(image);
            if flush {
                // SAFETY: open image, no I/O in flight.
                ffi::check(NAME, "rbd_flush", unsafe { (api.rbd_flush)(image) })?;
            }
            // SAFETY: open image and a valid eventfd.
            ffi::check(NAME, "rbd_set_image_notification", unsafe { (api.rbd_set_image_notification)(image, efd, EVENT_TYPE_EVENTFD) })?;
        }
        Ok(engine)
    }

    /// Collect every finished completion librbd has queued for us.
    fn poll_events(&mut self, out: &mut Vec<Completion>) -> Result<usize, EngineError> {
        let mut total = 0;
        for i in 0..self.images.len() {
            total += self.poll_image(i, out)?;
        }
        Ok(total)
    }

    fn poll_image(&mut self, image: usize, out: &mut Vec<Completion>) -> Result<usize, EngineError> {
        let api = self.rbd;
        // SAFETY: `events` has room for its length; the image is open.
        let n = unsafe { (api.rbd_poll_io_events)(self.images[image], self.events.as_mut_ptr(), self.events.len() as i32) };
        let n = ffi::check(NAME, "rbd_poll_io_events", n)? as usize;
        for &c in &self.events[..n] {
            // SAFETY: c is a completion librbd reports finished; we release it once.
            let (result, slot) = unsafe {
                let r = (api.rbd_aio_get_return_value)(c);
                let arg = (api.rbd_aio_get_arg)(c);
                (api.rbd_aio_release)(c);
                (r as i64, arg as usize as u32)
            };
            let written = self.write_len[slot as usize];
            let result = if result == 0 && written > 0 { written as i64 } else { result };
            out.push(Completion::from_rc(slot, result));
        }
        Ok(n)
    }

    /// Wait until librbd signals completions or the timeout passes.
    fn wait_event(&mut self, timeout: Option<Duration>) -> Result<(), EngineError> {
        let mut pfd = libc::pollfd { fd: self.efd, events: libc::POLLIN, revents: 0 };
        let ts = timeout.map(|t| libc::timespec { tv_sec: t.as_secs() as i64, tv_nsec: t.subsec_nanos() as i64 });
        let tsp = ts.as_ref().map_or(ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: one valid pollfd; timespec pointer or NULL (wait forever).
        let rc = unsafe { libc::ppoll(&mut pfd, 1, tsp, ptr::null()) };
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(EngineError::last_os(NAME, "ppoll(eventfd)"));
        }
        let mut counter = 0u64;
        // SAFETY: reading 8 bytes into a u64 from a non-blocking eventfd.
        unsafe { libc::read(self.efd, &mut counter as *mut u64 as *mut c_void, 8) };
        Ok(())
    }
}

impl Engine for Rbd {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if !matches!(req.op, OpKind::Read | OpKind::Write | OpKind::Sync | OpKind::Trim) {
            return Err(crate::unsupported_op(NAME, req.op));
        }
        let api = self.rbd;
        let mut comp: RbdCompletion = ptr::null_mut();
        // SAFETY: the slot number travels as the completion's argument; no callback.
        ffi::check(NAME, "rbd_aio_create_completion", unsafe {
            (api.rbd_aio_create_completion)(req.slot as usize as *mut c_void, ptr::null(), &mut comp)
        })?;
        let buf = self.buffers.slot(req.slot);
        let image = self.images[req.file as usize];
        self.write_len[req.slot as usize] = if matches!(req.op, OpKind::Write | OpKind::Trim) { req.len } else { 0 };
        // SAFETY: the buffer slot holds at least req.len bytes and outlives the I/O.
        let rc = unsafe {
            match req.op {
                OpKind::Read => (api.rbd_aio_read)(image, req.offset, req.len as usize, buf.cast(), comp),
                OpKind::Write => (api.rbd_aio_write)(image, req.offset, req.len as usize, buf.cast(), comp),
                OpKind::Sync => (api.rbd_aio_flush)(image, comp),
                OpKind::Trim => (api.rbd_aio_discard)(image, req.offset, req.len as u64, comp),
                _ => -libc::EOPNOTSUPP,
            }
        };
        if rc < 0 {
            // SAFETY: librbd did not take the completion.
            unsafe { (api.rbd_aio_release)(comp) };
            self.refused.push(Completion::from_rc(req.slot, rc as i64));
        }
        Ok(())
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = self.refused.len();
        out.append(&mut self.refused);
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        loop {
            got += self.poll_events(out)?;
            if got >= min as usize {
                return Ok(());
            }
            let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
            if left == Some(Duration::ZERO) {
                return Ok(());
            }
            self.wait_event(left)?;
        }
    }
}

impl Drop for Rbd {
    fn drop(&mut self) {
        // SAFETY: the runner drains every in-flight I/O before dropping the engine.
        unsafe {
            for &image in &self.images {
                (self.rbd.rbd_close)(image);
            }
            libc::close(self.efd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_n_numbers_one_name() {
        let o = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<EngineOptions>();
        assert_eq!(image_names(&o(&[("rbdname", "vol"), ("images", "3")])).unwrap(), ["vol-0", "vol-1", "vol-2"]);
        assert_eq!(image_names(&o(&[("rbdname", "a:b")])).unwrap(), ["a", "b"]);
        assert!(image_names(&o(&[("rbdname", "a:b"), ("images", "2")])).is_err());
        assert!(image_names(&o(&[("images", "0")])).is_err());
    }
}
