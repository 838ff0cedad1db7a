// librados writes without the copy: librados' C API (rados_aio_write) copies
// every write buffer into a new bufferlist; its C++ API takes a bufferlist,
// which here points at the caller's own buffer (buffer::create_static), as
// `rados bench` writes prebuilt bufferlists. storbench keeps a slot's buffer
// untouched until the write's completion, and frees its buffers only after
// rados_shutdown, so librados may hold the bufferlist as long as it likes
// without reading freed memory. Its bytes are only fixed until the
// completion, though: a write librados gave up on (op timeout) that still
// sits in a connection's queue would go out with what the slot holds later,
// so verifying jobs keep the C API (rados.rs).
//
// Built by crates/engine/build.rs into a shared object that storbench embeds
// and loads at run time beside librados.so.2 (never linked into the binary,
// which must run where Ceph is not installed). The handles are librados' C
// ones: a C ioctx and completion are the C++ API's IoCtxImpl and
// AioCompletionImpl.

#include <rados/librados.hpp>

#include <cerrno>
#include <new>

extern "C" {

// A C++ IoCtx sharing the C one (it takes a reference); freed before the C
// ioctx is destroyed.
void *sb_ioctx_new(rados_ioctx_t io) {
  auto *c = new (std::nothrow) librados::IoCtx();
  if (c != nullptr) {
    librados::IoCtx::from_rados_ioctx_t(io, *c);
  }
  return c;
}

void sb_ioctx_free(void *ioctx) { delete static_cast<librados::IoCtx *>(ioctx); }

// A write at `off` (full == 0) or of the whole object (full != 0) over
// `buf` without copying it, with the xattr `mark_name` = `mark` (storbench's
// mark, static) set in the same operation unless `mark_name` is null.
// Returns what librados returns, or -ENOMEM.
int sb_aio_write(void *ioctx, const char *oid, rados_completion_t comp, char *buf, size_t len, uint64_t off,
                 int full, const char *mark_name, const char *mark, size_t mark_len) {
  try {
    ceph::bufferlist bl;
    bl.push_back(ceph::buffer::create_static(static_cast<unsigned>(len), buf));
    librados::ObjectWriteOperation op;
    if (full) {
      op.write_full(bl);
    } else {
      op.write(off, bl);
    }
    if (mark_name != nullptr) {
      ceph::bufferlist mark_bl;
      mark_bl.push_back(ceph::buffer::create_static(static_cast<unsigned>(mark_len), const_cast<char *>(mark)));
      op.setxattr(mark_name, mark_bl);
    }
    // The C++ completion wraps the caller's; its destructor would drop the
    // caller's reference, so it lives in local storage and is never destroyed
    // (aio_operate reads only its pointer).
    alignas(librados::AioCompletion) unsigned char storage[sizeof(librados::AioCompletion)];
    auto *c = new (storage) librados::AioCompletion(static_cast<librados::AioCompletionImpl *>(comp));
    auto *io = static_cast<librados::IoCtx *>(ioctx);
    return io->aio_operate(oid, c, &op);
  } catch (const std::bad_alloc &) {
    return -ENOMEM;
  } catch (...) {
    return -EIO;
  }
}

}  // extern "C"
