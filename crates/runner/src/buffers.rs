//! Page-aligned I/O buffer memory owned by one worker (O_DIRECT needs alignment).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use storbench_engine::Buffers;

const ALIGN: usize = 4096;

pub struct AlignedBuffers {
    ptr: *mut u8,
    layout: Layout,
    slot_len: usize,
    slots: usize,
}

// SAFETY: the memory is owned exclusively by this value.
unsafe impl Send for AlignedBuffers {}

impl AlignedBuffers {
    /// `slots` buffers of `slot_len` bytes (rounded up to whole pages), or
    /// why they could not be had.
    pub fn new(slots: usize, slot_len: usize) -> Result<AlignedBuffers, String> {
        let slot_len = slot_len.div_ceil(ALIGN).max(1) * ALIGN;
        let bytes = slot_len.checked_mul(slots.max(1)).ok_or("the I/O buffers' size overflows")?;
        let layout = Layout::from_size_align(bytes, ALIGN).map_err(|e| format!("I/O buffers of {bytes} bytes: {e}"))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(format!("cannot allocate {bytes} bytes of I/O buffers; lower bs or iodepth"));
        }
        Ok(AlignedBuffers { ptr, layout, slot_len, slots: slots.max(1) })
    }

    pub fn lend(&self) -> Buffers {
        Buffers { base: self.ptr, slot_len: self.slot_len, slots: self.slots }
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        assert!((slot as usize) < self.slots);
        // SAFETY: in bounds, and &mut self guarantees no other Rust reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(slot as usize * self.slot_len), self.slot_len) }
    }
}

impl Drop for AlignedBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
