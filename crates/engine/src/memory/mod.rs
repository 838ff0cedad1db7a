//! The `memory` engine: a store in storbench's own memory that keeps what
//! it is given, for testing storbench itself and rehearsing jobs, not for
//! measuring storage. Block jobs get a sparse byte space (never-written
//! bytes read as zeros and are reported as never written); object jobs get
//! named objects (create, update, read whole or a range, write at an
//! offset, stat, delete, list) carrying storbench's mark as the object
//! engines' do, so cleanup keeps what it did not write.
//!
//! Every job and worker of a run that names the same `store` shares it, so
//! a later group reads what an earlier one wrote. Options inject what real
//! storage does to a run: latency per kind of operation, failures of a
//! chosen kind (every Nth operation or with a probability), corrupted
//! writes (for verification), a capacity that fills up.

mod engine;
pub mod faults;
pub mod store;
#[cfg(test)]
mod tests;

use crate::*;
use faults::{Faults, Latency, FAIL_KINDS};
use std::sync::atomic::{AtomicU64, Ordering};
use storbench_workload::rng::{mix64, Rng};
use store::{Admin, Store};

pub struct MemoryFactory;

const NAME: &str = "memory";
/// A store's capacity unless a job gives one.
const DEFAULT_CAPACITY: u64 = 1 << 30;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "store",
        kind: Kind::Text,
        default: "memory",
        help: "the in-memory store's name: jobs naming the same store share its bytes and objects",
    },
    OptionInfo {
        name: "capacity",
        kind: Kind::Size,
        default: "1g",
        help: "bytes the store holds at most; writes beyond fail with no space (ENOSPC)",
    },
    OptionInfo {
        name: "op_latency",
        kind: Kind::Text,
        default: "0",
        help: "time each operation takes: 200us, exp:200us (exponential mean), 100us..300us (uniform); per kind as read:1ms,write:exp:2ms",
    },
    OptionInfo {
        name: "fail_every",
        kind: Kind::Count,
        default: "0",
        help: "every Nth operation (of fail_ops, counted over the job) fails with fail_kind",
    },
    OptionInfo {
        name: "fail_rate",
        kind: Kind::Number,
        default: "0",
        help: "each operation (of fail_ops) fails with fail_kind with this probability, 0 to 1",
    },
    OptionInfo {
        name: "fail_kind",
        kind: Kind::Choice(FAIL_KINDS),
        default: "io",
        help: "how injected failures fail: io (EIO), timeout, not_found, refused, no_space",
    },
    OptionInfo {
        name: "fail_ops",
        kind: Kind::Text,
        default: "",
        help: "operations injected failures hit, e.g. read,create (default: all)",
    },
    OptionInfo {
        name: "corrupt_every",
        kind: Kind::Count,
        default: "0",
        help: "every Nth write succeeds but one byte of it is flipped in the store (a corruption for verify to find)",
    },
];

impl EngineFactory for MemoryFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "keeps bytes and objects in storbench's memory, with injectable latency and failures: for testing storbench and rehearsing jobs, not a storage benchmark"
    }
    /// `does_io`: it keeps and gives back bytes, so what needs data (verify,
    /// prefill, a precondition) applies as on storage.
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: false, does_io: true, blocks: true, objects: true, ordered: true }
    }
    fn options(&self) -> &'static [OptionInfo] {
        OPTIONS
    }
    /// Every block and object operation; no files to truncate.
    fn supports(&self, op: OpKind) -> bool {
        op != OpKind::Truncate
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, OPTIONS, options)?;
        let capacity = options.get("capacity").map(|v| parse(v, "capacity", storbench_workload::units::parse_size)).transpose()?;
        if capacity == Some(0) {
            return Err(bad("capacity", "a store of 0 bytes holds nothing; give a size (e.g. 256m)".into()));
        }
        let name = options.get("store").map_or("memory", String::as_str);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) {
            return Err(bad("store", format!("'{name}' is not a store name: letters, digits, '_', '.' and '-'")));
        }
        let latency = Latency::parse(options.get("op_latency").map_or("", String::as_str)).map_err(|m| bad("op_latency", m))?;
        let faults = faults(options)?;
        Ok(Arc::new(MemoryConfig {
            store: store::named(name, capacity),
            latency: Arc::new(latency),
            faults: Arc::new(faults),
            workers: AtomicU64::new(0),
        }))
    }
}

fn bad(option: &str, message: String) -> EngineError {
    EngineError::BadOption { engine: NAME, option: option.into(), message }
}

fn parse<T, E: std::fmt::Display>(v: &str, option: &str, f: impl Fn(&str) -> Result<T, E>) -> Result<T, EngineError> {
    f(v).map_err(|e| bad(option, e.to_string()))
}

/// The failure and corruption options.
fn faults(options: &EngineOptions) -> Result<Faults, EngineError> {
    let count = |o: &str| options.get(o).map_or(Ok(0), |v| parse(v, o, storbench_workload::units::parse_count));
    let rate = match options.get("fail_rate") {
        None => 0.0,
        Some(v) => match v.trim().parse::<f64>() {
            Ok(p) if (0.0..=1.0).contains(&p) => p,
            _ => return Err(bad("fail_rate", format!("'{v}' is not a probability from 0 to 1 (e.g. 0.01)"))),
        },
    };
    let ops = Faults::parse_ops(options.get("fail_ops").map_or("", String::as_str)).map_err(|m| bad("fail_ops", m))?;
    let kind = options.get("fail_kind").map_or("io", String::as_str);
    Faults::new(count("fail_every")?, rate, kind, ops, count("corrupt_every")?).map_err(|m| bad("fail_kind", m))
}

/// A job's view of its store, with the job's latency and faults.
struct MemoryConfig {
    store: Arc<Store>,
    latency: Arc<Latency>,
    faults: Arc<Faults>,
    /// Workers opened so far: each draws latencies and chances from a
    /// stream of its own, the same from run to run.
    workers: AtomicU64,
}

impl MemoryConfig {
    fn label(&self) -> String {
        format!("memory:{}", self.store.name)
    }

    fn prepare_blocks(&self, t: &TargetRequest) -> Result<StoreTarget, EngineError> {
        let size = match t.size.or(Some(self.store.size()).filter(|s| *s > 0)) {
            Some(s) => s,
            None => return Err(bad("size", "a block job on the memory engine needs a size for its byte space (e.g. --size 64m)".into())),
        };
        self.store.grow_to(size);
        let never_written = (!t.writes && !t.written_before).then(|| self.store.never_written(size));
        Ok(StoreTarget { never_written, ..StoreTarget::new(size, 1, self.label()) })
    }
}

impl EngineConfig for MemoryConfig {
    fn prepare_target(&self, t: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        if t.objects.is_none() {
            return self.prepare_blocks(t).map(Some);
        }
        let (_, prefix) = crate::objects::object_target(NAME, t)?;
        let place = |_: u64| format!("store '{}'", self.store.name);
        crate::objects::check_names(NAME, t, &place, &mut |_, name| Ok(self.store.exists(name)))?;
        Ok(Some(StoreTarget::new(0, 1, format!("{}/{prefix}*", self.label()))))
    }
    fn room(&self) -> Result<Option<Room>, EngineError> {
        let bytes = self.store.capacity().saturating_sub(self.store.used());
        Ok(Some(Room { bytes: Some(bytes), objects: None, source: format!("memory store '{}' (capacity)", self.store.name) }))
    }
    fn allocated(&self) -> Result<Option<u64>, EngineError> {
        Ok(Some(self.store.used()))
    }
    fn capacity(&self) -> Result<Option<u64>, EngineError> {
        Ok(Some(self.store.capacity()))
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let worker = self.workers.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(engine::Memory {
            store: self.store.clone(),
            faults: self.faults.clone(),
            latency: self.latency.clone(),
            buffers: setup.buffers,
            names: setup.object_names.map(|n| Arc::new(n.clone())),
            rng: Rng::new(mix64(worker)),
            epoch: std::time::Instant::now(),
            ready: Vec::with_capacity(setup.queue_depth as usize),
            pending: std::collections::BinaryHeap::with_capacity(setup.queue_depth as usize),
            results: vec![Ok(0); setup.buffers.slots],
            seq: 0,
            list_after: None,
            name: String::new(),
        }))
    }
    fn admin(&self) -> Result<Box<dyn ObjectAdmin>, EngineError> {
        Ok(Box::new(Admin(self.store.clone())))
    }
}
