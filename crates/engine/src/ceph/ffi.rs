//! librados and librbd, loaded at run time (dlopen), so storbench builds and
//! runs where Ceph is not installed and says which library is missing when a
//! Ceph engine is asked for. Every C return code becomes an [`EngineError`]
//! naming the call and the errno.

use crate::EngineError;
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::OnceLock;

pub type Rados = *mut c_void;
pub type IoCtx = *mut c_void;
pub type Image = *mut c_void;
pub type Completion = *mut c_void;
pub type ListCtx = *mut c_void;
pub type WriteOp = *mut c_void;
/// librados completion callback: (completion, argument).
pub type Callback = unsafe extern "C" fn(Completion, *mut c_void);

/// Function pointers into librados.so.2.
pub struct Api {
    _rados: Library,
    pub rados_create2: unsafe extern "C" fn(*mut Rados, *const c_char, *const c_char, u64) -> c_int,
    pub rados_conf_read_file: unsafe extern "C" fn(Rados, *const c_char) -> c_int,
    pub rados_conf_set: unsafe extern "C" fn(Rados, *const c_char, *const c_char) -> c_int,
    pub rados_connect: unsafe extern "C" fn(Rados) -> c_int,
    pub rados_shutdown: unsafe extern "C" fn(Rados),
    pub rados_ioctx_create: unsafe extern "C" fn(Rados, *const c_char, *mut IoCtx) -> c_int,
    pub rados_ioctx_destroy: unsafe extern "C" fn(IoCtx),
    pub rados_ioctx_set_namespace: unsafe extern "C" fn(IoCtx, *const c_char),
    pub rados_aio_create_completion: unsafe extern "C" fn(*mut c_void, Option<Callback>, Option<Callback>, *mut Completion) -> c_int,
    pub rados_aio_read: unsafe extern "C" fn(IoCtx, *const c_char, Completion, *mut c_char, usize, u64) -> c_int,
    pub rados_aio_remove: unsafe extern "C" fn(IoCtx, *const c_char, Completion) -> c_int,
    pub rados_aio_stat: unsafe extern "C" fn(IoCtx, *const c_char, Completion, *mut u64, *mut libc::time_t) -> c_int,
    pub rados_aio_get_return_value: unsafe extern "C" fn(Completion) -> c_int,
    pub rados_aio_wait_for_complete_and_cb: unsafe extern "C" fn(Completion) -> c_int,
    pub rados_aio_release: unsafe extern "C" fn(Completion),
    pub rados_read: unsafe extern "C" fn(IoCtx, *const c_char, *mut c_char, usize, u64) -> c_int,
    pub rados_remove: unsafe extern "C" fn(IoCtx, *const c_char) -> c_int,
    pub rados_stat: unsafe extern "C" fn(IoCtx, *const c_char, *mut u64, *mut libc::time_t) -> c_int,
    pub rados_nobjects_list_open: unsafe extern "C" fn(IoCtx, *mut ListCtx) -> c_int,
    pub rados_nobjects_list_next: unsafe extern "C" fn(ListCtx, *mut *const c_char, *mut *const c_char, *mut *const c_char) -> c_int,
    pub rados_nobjects_list_close: unsafe extern "C" fn(ListCtx),
    pub rados_mon_command: CommandFn,
    pub rados_mgr_command: CommandFn,
    pub rados_buffer_free: unsafe extern "C" fn(*mut c_char),
    // Compound write operations: storbench's mark (an xattr) goes with the
    // data in one operation, and a cleanup removes an object only if the
    // mark is on it, atomically.
    pub rados_create_write_op: unsafe extern "C" fn() -> WriteOp,
    pub rados_release_write_op: unsafe extern "C" fn(WriteOp),
    pub rados_write_op_setxattr: unsafe extern "C" fn(WriteOp, *const c_char, *const c_char, usize),
    /// (op, name, comparison (LIBRADOS_CMPXATTR_OP_EQ = 1), value, length)
    pub rados_write_op_cmpxattr: unsafe extern "C" fn(WriteOp, *const c_char, u8, *const c_char, usize),
    pub rados_write_op_write: unsafe extern "C" fn(WriteOp, *const c_char, usize, u64),
    pub rados_write_op_write_full: unsafe extern "C" fn(WriteOp, *const c_char, usize),
    pub rados_write_op_remove: unsafe extern "C" fn(WriteOp),
    pub rados_write_op_operate: unsafe extern "C" fn(WriteOp, IoCtx, *const c_char, *mut libc::time_t, c_int) -> c_int,
    pub rados_aio_write_op_operate: unsafe extern "C" fn(WriteOp, IoCtx, Completion, *const c_char, *mut libc::time_t, c_int) -> c_int,
}

/// Function pointers into librbd.so.1.
pub struct RbdApi {
    _rbd: Library,
    pub rbd_open: unsafe extern "C" fn(IoCtx, *const c_char, *mut Image, *const c_char) -> c_int,
    pub rbd_close: unsafe extern "C" fn(Image) -> c_int,
    pub rbd_create: unsafe extern "C" fn(IoCtx, *const c_char, u64, *mut c_int) -> c_int,
    pub rbd_remove: unsafe extern "C" fn(IoCtx, *const c_char) -> c_int,
    pub rbd_get_size: unsafe extern "C" fn(Image, *mut u64) -> c_int,
    pub rbd_get_features: unsafe extern "C" fn(Image, *mut u64) -> c_int,
    /// (image, from snapshot, offset, length, include parent, whole objects,
    /// callback(offset, length, exists, arg), arg): the image's allocated extents.
    #[allow(clippy::type_complexity)]
    pub rbd_diff_iterate2: unsafe extern "C" fn(
        Image,
        *const c_char,
        u64,
        u64,
        u8,
        u8,
        Option<unsafe extern "C" fn(u64, usize, c_int, *mut c_void) -> c_int>,
        *mut c_void,
    ) -> c_int,
    pub rbd_metadata_get: unsafe extern "C" fn(Image, *const c_char, *mut c_char, *mut usize) -> c_int,
    pub rbd_metadata_set: unsafe extern "C" fn(Image, *const c_char, *const c_char) -> c_int,
    pub rbd_aio_create_completion: unsafe extern "C" fn(*mut c_void, *const c_void, *mut Completion) -> c_int,
    pub rbd_aio_read: unsafe extern "C" fn(Image, u64, usize, *mut c_char, Completion) -> c_int,
    pub rbd_aio_write: unsafe extern "C" fn(Image, u64, usize, *const c_char, Completion) -> c_int,
    pub rbd_aio_flush: unsafe extern "C" fn(Image, Completion) -> c_int,
    pub rbd_aio_discard: unsafe extern "C" fn(Image, u64, u64, Completion) -> c_int,
    pub rbd_flush: unsafe extern "C" fn(Image) -> c_int,
    pub rbd_aio_get_return_value: unsafe extern "C" fn(Completion) -> isize,
    pub rbd_aio_get_arg: unsafe extern "C" fn(Completion) -> *mut c_void,
    pub rbd_aio_release: unsafe extern "C" fn(Completion),
    pub rbd_set_image_notification: unsafe extern "C" fn(Image, c_int, c_int) -> c_int,
    pub rbd_poll_io_events: unsafe extern "C" fn(Image, *mut Completion, c_int) -> c_int,
    /// (image, exclusive, tag, tag_len, clients, clients_len, cookies,
    /// cookies_len, addrs, addrs_len): lockers of the image's header, each
    /// list '\0'-separated; -ERANGE with the sizes needed when too short.
    #[allow(clippy::type_complexity)]
    pub rbd_list_lockers: unsafe extern "C" fn(
        Image,
        *mut c_int,
        *mut c_char,
        *mut usize,
        *mut c_char,
        *mut usize,
        *mut c_char,
        *mut usize,
        *mut c_char,
        *mut usize,
    ) -> isize,
}

// SAFETY: the structs hold only immutable function pointers and the libraries
// that keep them valid; librados/librbd are thread-safe for distinct handles.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}
unsafe impl Send for RbdApi {}
unsafe impl Sync for RbdApi {}

const RADOS_LIB: &str = "librados.so.2";
const RBD_LIB: &str = "librbd.so.1";

/// A library loaded once per process, or why it could not be (said again to
/// every engine that asks).
static API: OnceLock<Result<Api, String>> = OnceLock::new();
static RBD_API: OnceLock<Result<RbdApi, String>> = OnceLock::new();

fn unavailable(engine: &'static str) -> impl Fn(&String) -> EngineError {
    move |message| EngineError::Unavailable { engine, message: message.clone() }
}

/// The loaded librados API, or why it could not be loaded.
pub fn api(engine: &'static str) -> Result<&'static Api, EngineError> {
    API.get_or_init(load).as_ref().map_err(unavailable(engine))
}

/// The loaded librbd API (librados too, which it needs), or why not.
pub fn rbd_api(engine: &'static str) -> Result<&'static RbdApi, EngineError> {
    api(engine)?;
    RBD_API.get_or_init(load_rbd).as_ref().map_err(unavailable(engine))
}

fn open(name: &str, package: &str) -> Result<Library, String> {
    // SAFETY: loading a shared library runs its initialisers; librados and
    // librbd are designed to be loaded this way.
    unsafe { Library::new(name) }.map_err(|e| format!("cannot load {name} ({e}); install Debian's {package} package"))
}

macro_rules! sym {
    ($lib:expr, $libname:expr, $name:ident) => {{
        // SAFETY: the signature matches the C declaration in rados/librados.h
        // or rbd/librbd.h (or the extern "C" one of cxx/rados_shim.cc) for this symbol.
        let s = unsafe { $lib.get(concat!(stringify!($name), "\0").as_bytes()) }
            .map_err(|e| format!("{} lacks {}: {e}", $libname, stringify!($name)))?;
        *s
    }};
}
pub(super) use sym;

fn load() -> Result<Api, String> {
    let rados = open(RADOS_LIB, "librados2")?;
    Ok(Api {
        rados_create2: sym!(rados, RADOS_LIB, rados_create2),
        rados_conf_read_file: sym!(rados, RADOS_LIB, rados_conf_read_file),
        rados_conf_set: sym!(rados, RADOS_LIB, rados_conf_set),
        rados_connect: sym!(rados, RADOS_LIB, rados_connect),
        rados_shutdown: sym!(rados, RADOS_LIB, rados_shutdown),
        rados_ioctx_create: sym!(rados, RADOS_LIB, rados_ioctx_create),
        rados_ioctx_destroy: sym!(rados, RADOS_LIB, rados_ioctx_destroy),
        rados_ioctx_set_namespace: sym!(rados, RADOS_LIB, rados_ioctx_set_namespace),
        rados_aio_create_completion: sym!(rados, RADOS_LIB, rados_aio_create_completion),
        rados_aio_read: sym!(rados, RADOS_LIB, rados_aio_read),
        rados_aio_remove: sym!(rados, RADOS_LIB, rados_aio_remove),
        rados_aio_stat: sym!(rados, RADOS_LIB, rados_aio_stat),
        rados_aio_get_return_value: sym!(rados, RADOS_LIB, rados_aio_get_return_value),
        rados_aio_wait_for_complete_and_cb: sym!(rados, RADOS_LIB, rados_aio_wait_for_complete_and_cb),
        rados_aio_release: sym!(rados, RADOS_LIB, rados_aio_release),
        rados_read: sym!(rados, RADOS_LIB, rados_read),
        rados_remove: sym!(rados, RADOS_LIB, rados_remove),
        rados_stat: sym!(rados, RADOS_LIB, rados_stat),
        rados_nobjects_list_open: sym!(rados, RADOS_LIB, rados_nobjects_list_open),
        rados_nobjects_list_next: sym!(rados, RADOS_LIB, rados_nobjects_list_next),
        rados_nobjects_list_close: sym!(rados, RADOS_LIB, rados_nobjects_list_close),
        rados_mon_command: sym!(rados, RADOS_LIB, rados_mon_command),
        rados_mgr_command: sym!(rados, RADOS_LIB, rados_mgr_command),
        rados_buffer_free: sym!(rados, RADOS_LIB, rados_buffer_free),
        rados_create_write_op: sym!(rados, RADOS_LIB, rados_create_write_op),
        rados_release_write_op: sym!(rados, RADOS_LIB, rados_release_write_op),
        rados_write_op_setxattr: sym!(rados, RADOS_LIB, rados_write_op_setxattr),
        rados_write_op_cmpxattr: sym!(rados, RADOS_LIB, rados_write_op_cmpxattr),
        rados_write_op_write: sym!(rados, RADOS_LIB, rados_write_op_write),
        rados_write_op_write_full: sym!(rados, RADOS_LIB, rados_write_op_write_full),
        rados_write_op_remove: sym!(rados, RADOS_LIB, rados_write_op_remove),
        rados_write_op_operate: sym!(rados, RADOS_LIB, rados_write_op_operate),
        rados_aio_write_op_operate: sym!(rados, RADOS_LIB, rados_aio_write_op_operate),
        _rados: rados,
    })
}

fn load_rbd() -> Result<RbdApi, String> {
    let rbd = open(RBD_LIB, "librbd1")?;
    Ok(RbdApi {
        rbd_open: sym!(rbd, RBD_LIB, rbd_open),
        rbd_close: sym!(rbd, RBD_LIB, rbd_close),
        rbd_create: sym!(rbd, RBD_LIB, rbd_create),
        rbd_remove: sym!(rbd, RBD_LIB, rbd_remove),
        rbd_get_size: sym!(rbd, RBD_LIB, rbd_get_size),
        rbd_get_features: sym!(rbd, RBD_LIB, rbd_get_features),
        rbd_diff_iterate2: sym!(rbd, RBD_LIB, rbd_diff_iterate2),
        rbd_metadata_get: sym!(rbd, RBD_LIB, rbd_metadata_get),
        rbd_metadata_set: sym!(rbd, RBD_LIB, rbd_metadata_set),
        rbd_aio_create_completion: sym!(rbd, RBD_LIB, rbd_aio_create_completion),
        rbd_aio_read: sym!(rbd, RBD_LIB, rbd_aio_read),
        rbd_aio_write: sym!(rbd, RBD_LIB, rbd_aio_write),
        rbd_aio_flush: sym!(rbd, RBD_LIB, rbd_aio_flush),
        rbd_aio_discard: sym!(rbd, RBD_LIB, rbd_aio_discard),
        rbd_flush: sym!(rbd, RBD_LIB, rbd_flush),
        rbd_aio_get_return_value: sym!(rbd, RBD_LIB, rbd_aio_get_return_value),
        rbd_aio_get_arg: sym!(rbd, RBD_LIB, rbd_aio_get_arg),
        rbd_aio_release: sym!(rbd, RBD_LIB, rbd_aio_release),
        rbd_set_image_notification: sym!(rbd, RBD_LIB, rbd_set_image_notification),
        rbd_poll_io_events: sym!(rbd, RBD_LIB, rbd_poll_io_events),
        rbd_list_lockers: sym!(rbd, RBD_LIB, rbd_list_lockers),
        _rbd: rbd,
    })
}

/// Turn a C return code into a result naming the call.
/// `rados_mon_command` and `rados_mgr_command` alike.
pub type CommandFn = unsafe extern "C" fn(
    Rados,
    *const *const c_char,
    usize,
    *const c_char,
    usize,
    *mut *mut c_char,
    *mut usize,
    *mut *mut c_char,
    *mut usize,
) -> c_int;

pub fn check(engine: &'static str, call: &'static str, rc: c_int) -> Result<c_int, EngineError> {
    if rc < 0 {
        Err(EngineError::os(engine, call, -rc))
    } else {
        Ok(rc)
    }
}

pub fn cstr(engine: &'static str, what: &str, s: &str) -> Result<CString, EngineError> {
    CString::new(s).map_err(|_| EngineError::BadOption { engine, option: what.into(), message: "contains a NUL byte".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_named_with_its_package() {
        let msg = open("libstorbench-no-such.so.9", "librbd1").err().unwrap();
        assert!(msg.contains("libstorbench-no-such.so.9") && msg.contains("librbd1"), "{msg}");
    }

    #[test]
    fn negative_return_codes_become_errors_naming_the_call() {
        let e = check("rados", "rados_connect", -libc::ETIMEDOUT).unwrap_err();
        assert!(e.to_string().contains("rados_connect failed") && e.to_string().contains("110"), "{e}");
        assert_eq!(e.kind(), storbench_metrics::ErrorKind::Timeout);
        assert_eq!(check("rados", "x", 3).unwrap(), 3);
    }
}
