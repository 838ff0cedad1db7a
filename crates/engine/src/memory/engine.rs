//! One worker's memory engine: each operation is carried out on the store
//! when it is queued, and completes once its drawn latency has passed
//! (at once without one), failed if a fault says so. The worker owns every
//! buffer all along, so what is in flight can always be abandoned.

use super::faults::{Faults, Latency};
use super::store::{Mark, Store};
use super::NAME;
use crate::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;
use storbench_workload::rng::Rng;
use storbench_workload::ObjectNames;

/// Listings page as S3's and Swift's do.
const LIST_PAGE: usize = 1000;

pub struct Memory {
    pub store: Arc<Store>,
    pub faults: Arc<Faults>,
    pub latency: Arc<Latency>,
    pub buffers: Buffers,
    /// Object jobs: how key numbers become names; `None` for block jobs.
    pub names: Option<Arc<ObjectNames>>,
    pub rng: Rng,
    pub epoch: Instant,
    /// Finished at once (no latency).
    pub ready: Vec<Completion>,
    /// Finishing later: (when, ns since `epoch`; sequence; slot), the
    /// result kept per slot in `results`.
    pub pending: BinaryHeap<Reverse<(u64, u64, u32)>>,
    pub results: Vec<Result<u64, IoFailure>>,
    pub seq: u64,
    /// Where this worker's next listing page starts.
    pub list_after: Option<String>,
    pub name: String,
}

impl Memory {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The slot's first `len` bytes.
    fn slot(&mut self, req: &IoRequest) -> &mut [u8] {
        // SAFETY: the worker lends `slots` buffers of `slot_len` bytes for
        // the engine's lifetime; `queue` checked len <= slot_len, and the
        // slot is the request's own until it completes.
        unsafe { std::slice::from_raw_parts_mut(self.buffers.slot(req.slot), req.len as usize) }
    }

    fn block(&mut self, req: &IoRequest) -> Result<Result<u64, IoFailure>, EngineError> {
        let (store, len) = (self.store.clone(), req.len as u64);
        Ok(match req.op {
            OpKind::Read => {
                store.read_blocks(req.offset, self.slot(req));
                Ok(len)
            }
            OpKind::Write => store.write_blocks(req.offset, self.slot(req)).map(|_| {
                if self.faults.corrupts() {
                    store.corrupt_block(req.offset + len / 2);
                }
                len
            }),
            OpKind::Sync => Ok(0),
            OpKind::Trim => {
                store.trim_blocks(req.offset, req.len as usize);
                Ok(len)
            }
            op => return Err(unsupported_op(NAME, op)),
        })
    }

    fn object(&mut self, req: &IoRequest, names: &ObjectNames) -> Result<Result<u64, IoFailure>, EngineError> {
        let mut name = std::mem::take(&mut self.name);
        name.clear();
        names.write(req.file as u64, &mut name);
        let (store, len) = (self.store.clone(), req.len as u64);
        let result = match req.op {
            OpKind::Read => store.read(&name, req.whole, req.offset, self.slot(req)),
            OpKind::Create | OpKind::Update => {
                let mark = if req.op == OpKind::Create { Mark::Set } else { Mark::Keep };
                store.put(&name, self.slot(req), mark).map(|_| self.corrupt(&name, len / 2, len))
            }
            OpKind::Write => store.write_at(&name, req.offset, self.slot(req)).map(|_| self.corrupt(&name, req.offset + len / 2, len)),
            OpKind::Stat => store.stat(&name).map(|_| 0),
            OpKind::Delete => store.delete(&name).map(|_| 0),
            OpKind::List => {
                let (bytes, next) = store.list_page(&names.prefix, self.list_after.as_deref(), LIST_PAGE);
                self.list_after = next;
                Ok(bytes)
            }
            op => return Err(unsupported_op(NAME, op)),
        };
        self.name = name;
        Ok(result)
    }

    /// A stored write's result, after corrupting it if it is one to corrupt.
    fn corrupt(&self, name: &str, at: u64, len: u64) -> u64 {
        if len > 0 && self.faults.corrupts() {
            self.store.corrupt_object(name, at);
        }
        len
    }
}

impl Engine for Memory {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if req.len as usize > self.buffers.slot_len || req.slot as usize >= self.results.len() {
            return Err(EngineError::Unavailable {
                engine: NAME,
                message: format!("a {}-byte transfer in slot {} does not fit the worker's buffers", req.len, req.slot),
            });
        }
        let result = match (self.faults.fails(req.op, &mut self.rng), self.names.clone()) {
            (Some(f), _) => Err(f),
            (None, Some(names)) => self.object(&req, &names)?,
            (None, None) => self.block(&req)?,
        };
        match self.latency.draw(req.op, &mut self.rng) {
            0 => self.ready.push(Completion::new(req.slot, result)),
            ns => {
                self.results[req.slot as usize] = result;
                self.seq += 1;
                self.pending.push(Reverse((self.now() + ns, self.seq, req.slot)));
            }
        }
        Ok(())
    }

    /// What has finished; waits (sleeping) for at least `min` in all, or
    /// until `timeout`.
    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = self.ready.len() as u32;
        out.append(&mut self.ready);
        let deadline = timeout.map(|t| self.now() + t.as_nanos() as u64);
        loop {
            let now = self.now();
            while let Some(Reverse((at, _, slot))) = self.pending.peek().copied() {
                if at > now {
                    break;
                }
                self.pending.pop();
                out.push(Completion::new(slot, self.results[slot as usize]));
                got += 1;
            }
            let Some(Reverse((next, ..))) = self.pending.peek().copied() else { return Ok(()) };
            if got >= min || deadline.is_some_and(|d| d <= now) {
                return Ok(());
            }
            let wake = deadline.map_or(next, |d| d.min(next));
            std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now)));
        }
    }

    /// Nothing of the worker's is held elsewhere: what is in flight is dropped.
    fn abandon(&mut self) -> bool {
        self.ready.clear();
        self.pending.clear();
        true
    }
}
