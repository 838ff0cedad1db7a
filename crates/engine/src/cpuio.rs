//! Engines without storage: fio's `cpuio`, the CPU burner, and `exec`, the
//! program runner (exec.rs names it). Neither carries out an operation: a
//! job on cpuio is a burner (`JobKind::Burn`), one on exec a program
//! (`JobKind::Program`), which the runner's worker runs instead of its I/O loop
//! (`runner::burn`, `runner::exec`), so the job reports no reads or writes.
//! The engines are here so `ioengine=cpuio|exec` names them, `storbench
//! engines` lists them and the plan sees, from their capabilities (no
//! blocks, no objects), that the job has no storage.

use crate::*;

/// An engine whose jobs have no storage: its name (fio's too) and what its jobs do.
pub struct NoStorage {
    pub name: &'static str,
    pub fio: &'static [FioName],
    pub description: &'static str,
}

const NAME: &str = "cpuio";

pub const CPUIO: NoStorage = NoStorage {
    name: NAME,
    fio: &[FioName { name: NAME, note: None }],
    description: "no I/O: each worker keeps cpuload percent of one CPU busy (fio's cpuio; cpuchunks, cpumode, exit_on_io_done)",
};

impl EngineFactory for NoStorage {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fio_names(&self) -> &'static [FioName] {
        self.fio
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: false, direct_io: true, needs_files: false, does_io: false, blocks: false, objects: false, ordered: true }
    }
    fn supports(&self, _op: OpKind) -> bool {
        false
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options(self.name, options)?;
        Ok(Arc::new(NoStorageConfig(self.name)))
    }
}

struct NoStorageConfig(&'static str);

impl EngineConfig for NoStorageConfig {
    fn open(&self, _setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(NoOperations(self.0)))
    }
}

/// The worker of a job without storage never queues anything; if it did,
/// that is a bug, reported rather than faked as I/O.
struct NoOperations(&'static str);

impl Engine for NoOperations {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        Err(EngineError::Unavailable { engine: self.0, message: format!("{} is not done by a job without storage", req.op.name()) })
    }
    fn submit_and_reap(&mut self, _min: u32, _t: Option<Duration>, _out: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }
}
