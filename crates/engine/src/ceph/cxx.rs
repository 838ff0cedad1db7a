//! librados writes without the copy, through the C++ shim build.rs compiles
//! when Ceph's C++ headers are present (cxx/rados_shim.cc says why and how).
//! The shim is embedded in the binary and loaded from a memory file once
//! librados itself is loaded, so the binary still runs where Ceph is not
//! installed; `STORBENCH_RADOS_COPY=1` makes writes take the C API (for an
//! A/B measurement of the two paths).

use super::ffi::{self, Completion, IoCtx};
use libloading::Library;
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

/// Function pointers into the shim.
pub struct Shim {
    _lib: Library,
    pub ioctx_new: unsafe extern "C" fn(IoCtx) -> *mut c_void,
    pub ioctx_free: unsafe extern "C" fn(*mut c_void),
    /// (ioctx, oid, completion, buffer, length, offset, whole object,
    /// mark xattr name, mark value, its length)
    #[allow(clippy::type_complexity)]
    pub aio_write: unsafe extern "C" fn(
        *mut c_void,
        *const c_char,
        Completion,
        *mut c_char,
        usize,
        u64,
        c_int,
        *const c_char,
        *const c_char,
        usize,
    ) -> c_int,
}

// SAFETY: immutable function pointers and the library keeping them valid.
unsafe impl Send for Shim {}
unsafe impl Sync for Shim {}

static SHIM: OnceLock<Result<Shim, String>> = OnceLock::new();

/// The shim, or why writes take the C API.
pub fn shim(engine: &'static str) -> Result<&'static Shim, &'static str> {
    SHIM.get_or_init(|| load(engine)).as_ref().map_err(String::as_str)
}

/// How this process writes to RADOS, for the run's notes.
pub fn write_path(engine: &'static str, verifies: bool) -> String {
    match shim(engine) {
        Ok(_) if verifies => "writes: C API, librados copies each (a verifying job keeps its writes' bytes fixed)".into(),
        Ok(_) => "writes: C++ bufferlists over storbench's buffers, no copy".into(),
        Err(why) => format!("writes: C API, librados copies each ({why})"),
    }
}

#[cfg(storbench_rados_shim)]
const EMBEDDED: Option<&[u8]> = Some(include_bytes!(concat!(env!("OUT_DIR"), "/librados_shim.so")));
#[cfg(not(storbench_rados_shim))]
const EMBEDDED: Option<&[u8]> = None;

fn load(engine: &'static str) -> Result<Shim, String> {
    if std::env::var("STORBENCH_RADOS_COPY").is_ok_and(|v| v == "1") {
        return Err("STORBENCH_RADOS_COPY=1".into());
    }
    let bytes = EMBEDDED.ok_or("built without Ceph's C++ headers (libradospp-dev)")?;
    // librados.so.2 first: the shim needs it, and shares its one instance.
    ffi::api(engine).map_err(|e| e.to_string())?;
    let lib = open_from_memory(bytes)?;
    Ok(Shim {
        ioctx_new: ffi::sym!(lib, "the rados shim", sb_ioctx_new),
        ioctx_free: ffi::sym!(lib, "the rados shim", sb_ioctx_free),
        aio_write: ffi::sym!(lib, "the rados shim", sb_aio_write),
        _lib: lib,
    })
}

/// dlopen a shared object held in memory, through a memfd (no file left
/// anywhere; the mapping outlives the descriptor).
fn open_from_memory(bytes: &[u8]) -> Result<Library, String> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // MFD_EXEC where vm.memfd_noexec would otherwise make the memory file
    // unloadable (kernels from 6.3); older kernels refuse the flag.
    let make = |flags| {
        // SAFETY: a valid C string; the descriptor is owned by the File below.
        unsafe { libc::memfd_create(c"storbench-rados-shim".as_ptr(), flags) }
    };
    const MFD_EXEC: libc::c_uint = 0x10;
    let mut fd = make(libc::MFD_CLOEXEC | MFD_EXEC);
    if fd < 0 {
        fd = make(libc::MFD_CLOEXEC);
    }
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.write_all(bytes).map_err(|e| format!("cannot write the shim to memory: {e}"))?;
    // SAFETY: the shim's initialisers are those of a C++ library linked to
    // librados, which is loaded already.
    unsafe { Library::new(format!("/proc/self/fd/{fd}")) }.map_err(|e| format!("cannot load the shim: {e}"))
}

/// A C++ IoCtx sharing a C one, freed (its reference dropped) on drop,
/// which must come before the C ioctx is destroyed.
pub struct CxxIoCtx {
    pub shim: &'static Shim,
    pub ptr: *mut c_void,
}

impl CxxIoCtx {
    /// # Safety
    /// `io` is a live C ioctx that outlives the result.
    pub unsafe fn new(shim: &'static Shim, io: IoCtx) -> Option<CxxIoCtx> {
        // SAFETY: as the caller promises.
        let ptr = unsafe { (shim.ioctx_new)(io) };
        (!ptr.is_null()).then_some(CxxIoCtx { shim, ptr })
    }
}

impl CxxIoCtx {
    /// A write over the caller's buffer (no copy) at `off` (`None`: the
    /// whole object), with storbench's mark set in the same operation when
    /// `mark`.
    ///
    /// # Safety
    /// `oid` a C string valid for the call; `buf..buf+len` untouched until
    /// the completion, and alive until librados shuts down (see rados.rs).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn write(&self, oid: *const c_char, comp: Completion, buf: *mut c_char, len: usize, off: Option<u64>, mark: bool) -> c_int {
        use super::rados::{MARK_VALUE, MARK_XATTR};
        let name = if mark { MARK_XATTR.as_ptr() } else { std::ptr::null() };
        let full = off.is_none() as c_int;
        // SAFETY: as the caller promises; the mark constants are static.
        unsafe {
            (self.shim.aio_write)(self.ptr, oid, comp, buf, len, off.unwrap_or(0), full, name, MARK_VALUE.as_ptr().cast(), MARK_VALUE.len())
        }
    }
}

impl Drop for CxxIoCtx {
    fn drop(&mut self) {
        // SAFETY: made by ioctx_new, freed once.
        unsafe { (self.shim.ioctx_free)(self.ptr) }
    }
}
