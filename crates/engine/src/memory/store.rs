//! One memory store: a sparse byte space for block jobs and named objects for
//! object jobs, shared by every job and worker of the process that names it
//! (`store=NAME`), with what it holds counted against its capacity.
//!
//! The byte space keeps only the 4 KiB pages something was written to; a
//! page never written reads as zeros, as a fresh file's holes do, and the
//! pages written are what a target's "never written" figure is taken from.

use crate::{EngineError, ObjectAdmin, Removal};
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use storbench_metrics::IoFailure;

/// The byte space's granularity: a page is kept once any byte of it is written.
pub const PAGE: u64 = 4096;
/// Pages are spread over this many locks, so workers writing different
/// pages seldom wait for each other.
const SHARDS: u64 = 64;

type Page = Box<[u8; PAGE as usize]>;

/// How a whole-object write treats storbench's mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Set it (a create: storbench wrote this object).
    Set,
    /// An existing object keeps what it has (an update rewrites someone
    /// else's object without making it storbench's); a new one gets it.
    Keep,
    /// None (an object written from outside storbench, in tests of what
    /// cleanup leaves alone).
    Unmarked,
}

/// A named object and whether storbench's mark is on it.
struct Object {
    data: Vec<u8>,
    marked: bool,
}

pub struct Store {
    pub name: String,
    pages: Vec<Mutex<HashMap<u64, Page>>>,
    objects: Mutex<BTreeMap<String, Object>>,
    /// Bytes held (pages and objects' data), against `capacity`.
    used: AtomicU64,
    capacity: AtomicU64,
    /// The byte space's size: the largest any job asked for.
    size: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

const NO_SPACE: IoFailure =
    IoFailure { kind: storbench_metrics::ErrorKind::NoSpace, detail: storbench_metrics::Detail::Errno(libc::ENOSPC) };
const NOT_FOUND: IoFailure =
    IoFailure { kind: storbench_metrics::ErrorKind::NotFound, detail: storbench_metrics::Detail::Errno(libc::ENOENT) };

/// The store called `name` in this process, made with `capacity` bytes the
/// first time; a later job that gives a capacity sets it anew.
pub fn named(name: &str, capacity: Option<u64>) -> Arc<Store> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<Store>>>> = OnceLock::new();
    let mut stores = lock(STORES.get_or_init(Default::default));
    let store = stores.entry(name.to_string()).or_insert_with(|| Arc::new(Store::new(name, super::DEFAULT_CAPACITY))).clone();
    if let Some(c) = capacity {
        store.capacity.store(c, Ordering::Relaxed);
    }
    store
}

impl Store {
    fn new(name: &str, capacity: u64) -> Store {
        Store {
            name: name.to_string(),
            pages: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            objects: Mutex::new(BTreeMap::new()),
            used: AtomicU64::new(0),
            capacity: AtomicU64::new(capacity),
            size: AtomicU64::new(0),
        }
    }

    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
    pub fn capacity(&self) -> u64 {
        self.capacity.load(Ordering::Relaxed)
    }
    pub fn size(&self) -> u64 {
        self.size.load(Ordering::Relaxed)
    }
    /// The byte space grows to what a job asks for (it never shrinks: an
    /// earlier job's data stays readable).
    pub fn grow_to(&self, size: u64) {
        self.size.fetch_max(size, Ordering::Relaxed);
    }

    /// Take `n` bytes of the capacity, or say there is no room.
    fn reserve(&self, n: u64) -> Result<(), IoFailure> {
        let cap = self.capacity();
        self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| (u + n <= cap).then_some(u + n)).map(|_| ()).map_err(|_| NO_SPACE)
    }
    fn release(&self, n: u64) {
        self.used.fetch_sub(n, Ordering::Relaxed);
    }

    fn shard(&self, page: u64) -> MutexGuard<'_, HashMap<u64, Page>> {
        lock(&self.pages[(page % SHARDS) as usize])
    }

    /// Each page `[offset, offset + len)` touches: its number, where in it
    /// the range starts, and where in the range it starts and how long.
    fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize, usize)> {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            (at < len).then(|| {
                let pos = offset + at as u64;
                let (page, within) = (pos / PAGE, (pos % PAGE) as usize);
                let n = (PAGE as usize - within).min(len - at);
                let piece = (page, within, at, n);
                at += n;
                piece
            })
        })
    }

    /// Read `buf.len()` bytes at `offset`: never-written pages read as zeros.
    pub fn read_blocks(&self, offset: u64, buf: &mut [u8]) {
        for (page, within, at, n) in Self::pieces(offset, buf.len()) {
            let out = &mut buf[at..at + n];
            match self.shard(page).get(&page) {
                Some(p) => out.copy_from_slice(&p[within..within + n]),
                None => out.fill(0),
            }
        }
    }

    /// Write `data` at `offset`; a page is taken from the capacity the first
    /// time it is written (what was written before a full store stays).
    pub fn write_blocks(&self, offset: u64, data: &[u8]) -> Result<(), IoFailure> {
        for (page, within, at, n) in Self::pieces(offset, data.len()) {
            let mut shard = self.shard(page);
            let p = match shard.entry(page) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    self.reserve(PAGE)?;
                    e.insert(Box::new([0; PAGE as usize]))
                }
            };
            p[within..within + n].copy_from_slice(&data[at..at + n]);
        }
        Ok(())
    }

    /// Discard `[offset, offset + len)`: whole pages are let go (never
    /// written again), the ends of partial ones zeroed.
    pub fn trim_blocks(&self, offset: u64, len: usize) {
        for (page, within, _, n) in Self::pieces(offset, len) {
            let mut shard = self.shard(page);
            if n == PAGE as usize {
                if shard.remove(&page).is_some() {
                    self.release(PAGE);
                }
            } else if let Some(p) = shard.get_mut(&page) {
                p[within..within + n].fill(0);
            }
        }
    }

    /// Flip the bits of one stored byte (an injected corruption); false if
    /// that byte was never written.
    pub fn corrupt_block(&self, at: u64) -> bool {
        let page = at / PAGE;
        self.shard(page).get_mut(&page).map(|p| p[(at % PAGE) as usize] ^= 0xff).is_some()
    }

    /// Bytes of `[0, size)` in pages never written.
    pub fn never_written(&self, size: u64) -> u64 {
        let pages = size.div_ceil(PAGE);
        let written: u64 = self.pages.iter().map(|s| lock(s).keys().filter(|p| **p < pages).count() as u64).sum();
        size.saturating_sub(written * PAGE)
    }

    /// Write a whole object, with storbench's mark as `mark` says.
    pub fn put(&self, name: &str, data: &[u8], mark: Mark) -> Result<(), IoFailure> {
        let mut objects = lock(&self.objects);
        let old = objects.get(name).map_or(0, |o| o.data.len() as u64);
        // Only the growth needs room: rewriting an object of the same size
        // in a full store succeeds.
        let new = data.len() as u64;
        if new > old {
            self.reserve(new - old)?;
        } else {
            self.release(old - new);
        }
        let marked = match mark {
            Mark::Set => true,
            Mark::Keep => objects.get(name).is_none_or(|o| o.marked),
            Mark::Unmarked => false,
        };
        objects.insert(name.to_string(), Object { data: data.to_vec(), marked });
        Ok(())
    }

    /// Write part of an object at `offset` (made, marked, if it is not there).
    pub fn write_at(&self, name: &str, offset: u64, data: &[u8]) -> Result<(), IoFailure> {
        let mut objects = lock(&self.objects);
        let end = offset as usize + data.len();
        let old = objects.get(name).map_or(0, |o| o.data.len());
        self.reserve(end.saturating_sub(old) as u64)?;
        let o = objects.entry(name.to_string()).or_insert_with(|| Object { data: Vec::new(), marked: true });
        if o.data.len() < end {
            o.data.resize(end, 0);
        }
        o.data[offset as usize..end].copy_from_slice(data);
        Ok(())
    }

    /// Read an object into `buf`: the whole of it (as much as fits), or the
    /// range at `offset`. The bytes it holds (whole) or the bytes read.
    pub fn read(&self, name: &str, whole: bool, offset: u64, buf: &mut [u8]) -> Result<u64, IoFailure> {
        let objects = lock(&self.objects);
        let data = &objects.get(name).ok_or(NOT_FOUND)?.data;
        let from = if whole { 0 } else { (offset as usize).min(data.len()) };
        let n = buf.len().min(data.len() - from);
        buf[..n].copy_from_slice(&data[from..from + n]);
        Ok(if whole { data.len() as u64 } else { n as u64 })
    }

    /// An object's size.
    pub fn stat(&self, name: &str) -> Result<u64, IoFailure> {
        lock(&self.objects).get(name).map(|o| o.data.len() as u64).ok_or(NOT_FOUND)
    }

    /// Remove an object.
    pub fn delete(&self, name: &str) -> Result<(), IoFailure> {
        let o = lock(&self.objects).remove(name).ok_or(NOT_FOUND)?;
        self.release(o.data.len() as u64);
        Ok(())
    }

    /// Flip the bits of byte `at` of an object (an injected corruption).
    pub fn corrupt_object(&self, name: &str, at: u64) -> bool {
        let mut objects = lock(&self.objects);
        objects.get_mut(name).and_then(|o| o.data.get_mut(at as usize)).map(|b| *b ^= 0xff).is_some()
    }

    /// One page of a listing: up to `max` names starting with `prefix`
    /// after `after`; the bytes of the names, and the last one (the next
    /// page's start, `None` at the end).
    pub fn list_page(&self, prefix: &str, after: Option<&str>, max: usize) -> (u64, Option<String>) {
        let objects = lock(&self.objects);
        let start = after.map_or(Bound::Included(prefix), Bound::Excluded);
        let page: Vec<&String> =
            objects.range::<str, _>((start, Bound::Unbounded)).map(|(k, _)| k).take_while(|k| k.starts_with(prefix)).take(max).collect();
        let bytes = page.iter().map(|k| k.len() as u64 + 1).sum();
        (bytes, page.last().filter(|_| page.len() == max).map(|k| k.to_string()))
    }

    pub fn names(&self, prefix: &str) -> Vec<String> {
        let objects = lock(&self.objects);
        objects
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(prefix))
            .cloned()
            .collect()
    }

    pub fn exists(&self, name: &str) -> bool {
        lock(&self.objects).contains_key(name)
    }

    fn remove_if_marked(&self, name: &str) -> Removal {
        let mut objects = lock(&self.objects);
        match objects.get(name).map(|o| o.marked) {
            None => Removal::Absent,
            Some(false) => Removal::Unmarked,
            Some(true) => {
                let o = objects.remove(name).expect("present under the lock");
                self.release(o.data.len() as u64);
                Removal::Removed
            }
        }
    }
}

/// Single objects of a store, for cleanup, listings and the rados tools.
pub struct Admin(pub Arc<Store>);

fn admin_err(call: &str, f: IoFailure) -> EngineError {
    EngineError::Rejected { engine: super::NAME, message: format!("{call}: {f}"), kind: f.kind }
}

impl ObjectAdmin for Admin {
    fn get(&self, name: &str, max: usize) -> Result<Option<Vec<u8>>, EngineError> {
        let size = match self.0.stat(name) {
            Ok(s) => s as usize,
            Err(_) => return Ok(None),
        };
        let mut buf = vec![0; size.min(max)];
        match self.0.read(name, false, 0, &mut buf) {
            Ok(n) => {
                buf.truncate(n as usize);
                Ok(Some(buf))
            }
            Err(_) => Ok(None),
        }
    }
    /// Marked, as every object storbench writes.
    fn put(&self, name: &str, data: &[u8]) -> Result<(), EngineError> {
        self.0.put(name, data, Mark::Set).map_err(|f| admin_err("put", f))
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, EngineError> {
        Ok(self.0.names(prefix))
    }
    fn remove(&self, name: &str) -> Result<bool, EngineError> {
        Ok(self.0.delete(name).is_ok())
    }
    fn remove_if_marked(&self, name: &str) -> Result<Removal, EngineError> {
        Ok(self.0.remove_if_marked(name))
    }
}
