//! What every engine must do, checked through the engine API alone: a
//! target it prepared opens; what is written at offsets reads back the
//! same, whole and in ranges, and bytes never written read as zeros;
//! objects are created, read (whole and a range), stated, listed, deleted,
//! and a deleted one is not found; every operation completes exactly once,
//! with up to the queue depth in flight at once; cleanup removes what the
//! engine made under its prefix and nothing else.

use std::alloc::Layout;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use storbench_engine::*;
use storbench_metrics::{ErrorKind, IoFailure};
use storbench_workload::rng::mix64;
use storbench_workload::{ObjectNames, ObjectSizes, ObjectSpec, OpKind, SizeSplit};

/// The largest transfer the suite makes.
const SLOT: usize = 64 << 10;
/// The most operations the suite keeps in flight.
const MOST_IN_FLIGHT: u32 = 16;
/// How long one operation may take before the suite calls it lost.
const PATIENCE: Duration = Duration::from_secs(30);

/// `len` bytes no other (seed, position) shares.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| mix64(seed.wrapping_mul(1 << 32) ^ i as u64) as u8).collect()
}

/// One operation for [`Harness::run`].
#[derive(Clone)]
pub struct Op {
    pub op: OpKind,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub whole: bool,
    /// What a write writes.
    pub data: Vec<u8>,
}

impl Op {
    pub fn of(op: OpKind, file: u32, offset: u64, len: usize) -> Op {
        Op { op, file, offset, len: len as u32, whole: false, data: Vec::new() }
    }
    pub fn write(op: OpKind, file: u32, offset: u64, data: Vec<u8>) -> Op {
        Op { data, ..Op::of(op, file, offset, 0) }.sized()
    }
    fn sized(mut self) -> Op {
        self.len = self.data.len() as u32;
        self
    }
    pub fn whole(file: u32, len: usize) -> Op {
        Op { whole: true, ..Op::of(OpKind::Read, file, 0, len) }
    }
}

/// What one operation came back with, and the slot's bytes after a read.
pub struct Done {
    pub result: Result<u64, IoFailure>,
    pub read: Vec<u8>,
}

/// The worker's side: slots of buffer memory lent to one engine instance,
/// and the bookkeeping that catches a completion reported twice or never.
pub struct Harness {
    pub name: &'static str,
    pub engine: Box<dyn Engine>,
    base: *mut u8,
    layout: Layout,
    pub qd: u32,
    /// The most operations that were in flight at once.
    pub most: u32,
}

impl Drop for Harness {
    fn drop(&mut self) {
        // The engine goes first: it may hold the buffers until then.
        drop(std::mem::replace(&mut self.engine, Box::new(Closed)));
        // SAFETY: allocated in `open` with this layout; the engine that
        // borrowed it is gone.
        unsafe { std::alloc::dealloc(self.base, self.layout) };
    }
}

/// What stands in for the engine while the harness is taken down.
struct Closed;
impl Engine for Closed {
    fn queue(&mut self, _req: IoRequest) -> Result<(), EngineError> {
        unreachable!()
    }
    fn submit_and_reap(&mut self, _: u32, _: Option<Duration>, _: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }
}

/// The queue depth the suite asks of an engine: as deep as it goes, up to
/// [`MOST_IN_FLIGHT`]; 1 for one that keeps a single operation.
pub fn depth(f: &dyn EngineFactory) -> u32 {
    assert!(f.max_queue_depth() >= 1, "{}: max_queue_depth is 0", f.name());
    if f.capabilities().queued {
        MOST_IN_FLIGHT.min(f.max_queue_depth())
    } else {
        1
    }
}

impl Harness {
    pub fn open(f: &dyn EngineFactory, config: &dyn EngineConfig, fds: &[i32], names: Option<&ObjectNames>) -> Harness {
        let qd = depth(f);
        let layout = Layout::from_size_align(SLOT * qd as usize, 4096).unwrap();
        // SAFETY: a non-zero size.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!base.is_null());
        let setup = WorkerSetup {
            fds,
            paths: &[],
            buffers: Buffers { base, slot_len: SLOT, slots: qd as usize },
            queue_depth: qd,
            reap_max: qd,
            direct: false,
            object_names: names,
            keep_reads: true,
            stop: &|| false,
            worker: 0,
        };
        let engine = config.open(&setup).unwrap_or_else(|e| panic!("{}: a prepared target does not open: {e}", f.name()));
        Harness { name: f.name(), engine, base, layout, qd, most: 0 }
    }

    fn slot(&mut self, slot: u32, len: usize) -> &mut [u8] {
        // SAFETY: slot < qd and len <= SLOT, inside the allocation; the
        // engine is not using this slot (nothing is in flight in it).
        unsafe { std::slice::from_raw_parts_mut(self.base.add(slot as usize * SLOT), len) }
    }

    /// Carry out `ops`, keeping up to the queue depth in flight, and return
    /// what each came back with, in `ops`' order. Every completion must
    /// name a slot in flight, and come once.
    pub fn run(&mut self, ops: &[Op]) -> Vec<Done> {
        let mut done: Vec<Option<Done>> = ops.iter().map(|_| None).collect();
        let mut free: Vec<u32> = (0..self.qd).rev().collect();
        let mut in_flight: HashMap<u32, usize> = HashMap::new();
        let mut next = 0;
        let mut out = Vec::new();
        let mut last = Instant::now();
        while next < ops.len() || !in_flight.is_empty() {
            while next < ops.len() && !free.is_empty() {
                let slot = free.pop().unwrap();
                let o = &ops[next];
                assert!(o.len as usize <= SLOT);
                self.slot(slot, o.data.len()).copy_from_slice(&o.data);
                let req =
                    IoRequest { op: o.op, data_only: false, file: o.file, whole: o.whole, offset: o.offset, len: o.len, slot, ioprio: 0 };
                self.engine.queue(req).unwrap_or_else(|e| panic!("{}: queueing {:?}: {e}", self.name, o.op));
                in_flight.insert(slot, next);
                next += 1;
            }
            self.most = self.most.max(in_flight.len() as u32);
            out.clear();
            self.engine
                .submit_and_reap(1, Some(Duration::from_millis(100)), &mut out)
                .unwrap_or_else(|e| panic!("{}: reaping: {e}", self.name));
            if !out.is_empty() {
                last = Instant::now();
            }
            assert!(last.elapsed() < PATIENCE, "{}: {} operations never completed", self.name, in_flight.len());
            for c in &out {
                let i = in_flight
                    .remove(&c.slot)
                    .unwrap_or_else(|| panic!("{}: slot {} completed twice, or was never queued", self.name, c.slot));
                let read = match c.result {
                    Ok(n) if ops[i].op == OpKind::Read => self.slot(c.slot, (n as usize).min(ops[i].len as usize)).to_vec(),
                    _ => Vec::new(),
                };
                done[i] = Some(Done { result: c.result, read });
                free.push(c.slot);
            }
        }
        out.clear();
        self.engine.submit_and_reap(0, Some(Duration::from_millis(20)), &mut out).unwrap();
        assert!(out.is_empty(), "{}: {} completions came after every operation had completed", self.name, out.len());
        done.into_iter().map(Option::unwrap).collect()
    }
}

/// Every result is a success of `want` bytes.
fn all_ok(name: &str, what: &str, done: &[Done], want: impl Fn(usize) -> u64) {
    for (i, d) in done.iter().enumerate() {
        assert_eq!(d.result, Ok(want(i)), "{name}: {what} #{i}");
    }
}

/// The block checks on an opened target of `size` bytes. `keeps` says
/// whether the engine keeps what it is given (the null engine does not).
pub fn blocks(f: &dyn EngineFactory, h: &mut Harness, size: u64, keeps: bool) {
    let name = f.name();
    let piece = 16 << 10;
    let count = 32u64.min(size / (64 << 10));
    assert!(count >= 8, "{name}: the target ({size} bytes) is too small for the suite");
    // Offsets 4 KiB apart within each 64 KiB, so pieces start unaligned to their size.
    let at = |i: u64| i * (64 << 10) + (i % 4) * 4096;
    let writes: Vec<Op> = (0..count).map(|i| Op::write(OpKind::Write, 0, at(i), pattern(i, piece))).collect();
    all_ok(name, "write", &h.run(&writes), |_| piece as u64);
    assert_eq!(h.most, h.qd.min(count as u32), "{name}: the queue depth was not kept full");
    let reads: Vec<Op> = (0..count).map(|i| Op::of(OpKind::Read, 0, at(i), piece)).collect();
    let back = h.run(&reads);
    all_ok(name, "read", &back, |_| piece as u64);
    let ranged: Vec<Op> = (0..count).map(|i| Op::of(OpKind::Read, 0, at(i) + 8192 + 512, 3000)).collect();
    let parts = h.run(&ranged);
    all_ok(name, "ranged read", &parts, |_| 3000);
    if keeps {
        for (i, d) in back.iter().enumerate() {
            assert!(d.read == pattern(i as u64, piece), "{name}: block {i} read back other bytes than were written");
        }
        for (i, d) in parts.iter().enumerate() {
            assert!(
                d.read[..] == pattern(i as u64, piece)[8704..11704],
                "{name}: a ranged read of block {i} differs from what was written"
            );
        }
    }
    // Between the pieces, bytes never written read as a fresh target's: zeros.
    let unwritten: Vec<Op> = (0..count).map(|i| Op::of(OpKind::Read, 0, i * (64 << 10) + (32 << 10), 4096)).collect();
    let holes = h.run(&unwritten);
    all_ok(name, "read of bytes never written", &holes, |_| 4096);
    if keeps {
        assert!(holes.iter().all(|d| d.read.iter().all(|b| *b == 0)), "{name}: bytes never written read as other than zeros");
    }
    if f.supports(OpKind::Sync) {
        let d = h.run(&[Op::of(OpKind::Sync, 0, 0, 0)]);
        assert!(d[0].result.is_ok(), "{name}: sync: {:?}", d[0].result);
    }
}

/// Objects of 8 KiB, named from `prefix`.
pub fn object_spec(count: u64) -> ObjectSpec {
    ObjectSpec { count, sizes: ObjectSizes::Classes { split: SizeSplit::fixed(8192) }, ..ObjectSpec::default() }
}

pub fn object_request<'a>(spec: &'a ObjectSpec, prefix: &'a str) -> TargetRequest<'a> {
    TargetRequest {
        size: None,
        writes: true,
        allow_overwrite: false,
        objects: Some(spec),
        object_prefix: Some(prefix),
        written_before: false,
        verifies: true,
        stop: &|| false,
        transfers: None,
    }
}

/// Create `keys` objects under `prefix` through a harness of their own.
fn create(f: &dyn EngineFactory, config: &dyn EngineConfig, spec: &ObjectSpec, prefix: &str, keys: std::ops::Range<u32>) -> Harness {
    let names = ObjectNames::new(prefix, Some(spec));
    let mut h = Harness::open(f, config, &[], Some(&names));
    let ops: Vec<Op> = keys.clone().map(|k| Op::write(OpKind::Create, k, 0, pattern(1000 + k as u64, 8192))).collect();
    all_ok(f.name(), "create", &h.run(&ops), |_| 8192);
    h
}

/// The object checks under `prefix` (and a second prefix beside it, which
/// cleanup must leave alone).
pub fn objects(f: &dyn EngineFactory, config: &dyn EngineConfig, prefix: &str, keeps: bool) {
    let name = f.name();
    let spec = object_spec(8);
    let req = object_request(&spec, prefix);
    let target = config.prepare_target(&req).unwrap_or_else(|e| panic!("{name}: preparing the objects' target: {e}"));
    assert!(target.is_some() || !keeps, "{name}: an object engine that keeps objects says what its target is");
    let mut h = create(f, config, &spec, prefix, 0..8);
    let whole: Vec<Op> = (0..8).map(|k| Op::whole(k, 8192)).collect();
    let back = h.run(&whole);
    all_ok(name, "whole read", &back, |_| 8192);
    let ranged: Vec<Op> = (0..8).map(|k| Op::of(OpKind::Read, k, 1000, 3000)).collect();
    let parts = h.run(&ranged);
    all_ok(name, "ranged read", &parts, |_| 3000);
    if keeps {
        for (k, (w, r)) in back.iter().zip(&parts).enumerate() {
            let want = pattern(1000 + k as u64, 8192);
            assert!(w.read == want, "{name}: object {k} read back other bytes than were written");
            assert!(r.read[..] == want[1000..4000], "{name}: a ranged read of object {k} differs from what was written");
        }
    }
    for op in [OpKind::Stat, OpKind::List].into_iter().filter(|o| f.supports(*o)) {
        let done = h.run(&(0..4).map(|k| Op::of(op, k, 0, 0)).collect::<Vec<_>>());
        assert!(done.iter().all(|d| d.result.is_ok()), "{name}: {op:?} failed");
    }
    let deleted = h.run(&(0..4).map(|k| Op::of(OpKind::Delete, k, 0, 0)).collect::<Vec<_>>());
    assert!(deleted.iter().all(|d| d.result.is_ok()), "{name}: delete failed");
    if keeps {
        for op in [Op::whole(0, 8192), Op::of(OpKind::Stat, 1, 0, 0)].into_iter().filter(|o| f.supports(o.op)) {
            let d = h.run(std::slice::from_ref(&op));
            assert_eq!(d[0].result.map_err(|e| e.kind), Err(ErrorKind::NotFound), "{name}: {:?} of a deleted object", op.op);
        }
    }
    drop(h);
    cleanup(f, config, &spec, prefix, keeps);
    config.finish_target(&req, true).unwrap_or_else(|e| panic!("{name}: finishing the objects' target: {e}"));
}

/// Cleanup removes the objects under the prefix and leaves another
/// prefix's, where the engine can list (the null engine keeps none).
fn cleanup(f: &dyn EngineFactory, config: &dyn EngineConfig, spec: &ObjectSpec, prefix: &str, keeps: bool) {
    let name = f.name();
    let listed = config.list_names(prefix).unwrap_or_else(|e| panic!("{name}: listing: {e}"));
    let Some(mut listed) = listed else {
        assert!(!keeps, "{name}: keeps objects but cannot list them");
        return;
    };
    listed.sort();
    let names = ObjectNames::new(prefix, Some(spec));
    assert_eq!(listed, (4..8).map(|k| names.name(k)).collect::<Vec<_>>(), "{name}: the listing after four deletes");
    let removed = config.remove_objects(prefix, Which::Marked, &|| false).unwrap_or_else(|e| panic!("{name}: cleanup: {e}"));
    assert_eq!((removed.removed, removed.failed, removed.kept), (4, 0, 0), "{name}: cleanup of the prefix");
    assert_eq!(config.list_names(prefix).unwrap(), Some(Vec::new()), "{name}: objects left after cleanup");
    let other = format!("{}other.", prefix.trim_end_matches('.'));
    drop(create(f, config, spec, &other, 0..2));
    let none = config.remove_objects(prefix, Which::Marked, &|| false).unwrap();
    assert_eq!(none.removed, 0, "{name}: cleanup of '{prefix}' removed objects of '{other}'");
    let left = config.list_names(&other).unwrap().unwrap_or_default();
    assert_eq!(left.len(), 2, "{name}: objects of another prefix were touched");
    assert_eq!(config.remove_objects(&other, Which::Marked, &|| false).unwrap().removed, 2, "{name}");
}
