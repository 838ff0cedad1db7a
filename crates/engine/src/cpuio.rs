//! The `cpuio` engine, fio's CPU burner: it carries out no operation. A job
//! on it is a burner (`JobSpec::cpu_burn`), which the runner's worker runs
//! instead of its I/O loop (`runner::burn`), so a burner reports its CPU
//! time and no reads or writes. The engine is here so `ioengine=cpuio`
//! names it, `storbench engines` lists it and the plan sees, from its
//! capabilities (no blocks, no objects), that the job has no storage.

use crate::*;

pub struct CpuioFactory;

const NAME: &str = "cpuio";

impl EngineFactory for CpuioFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: NAME, note: None }]
    }
    fn description(&self) -> &'static str {
        "no I/O: each worker keeps cpuload percent of one CPU busy (fio's cpuio; cpuchunks, cpumode, exit_on_io_done)"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: false, direct_io: true, needs_files: false, does_io: false, blocks: false, objects: false, ordered: true }
    }
    fn supports(&self, _op: OpKind) -> bool {
        false
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options(NAME, options)?;
        Ok(Arc::new(CpuioConfig))
    }
}

struct CpuioConfig;

impl EngineConfig for CpuioConfig {
    fn open(&self, _setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(NoOperations(NAME)))
    }
}

/// The worker of a job without storage (a burner, a program) never queues
/// anything; if it did, that is a bug, reported rather than faked as I/O.
pub(crate) struct NoOperations(pub &'static str);

impl Engine for NoOperations {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        Err(EngineError::Unavailable { engine: self.0, message: format!("{} is not done by a job without storage", req.op.name()) })
    }
    fn submit_and_reap(&mut self, _min: u32, _t: Option<Duration>, _out: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }
}
