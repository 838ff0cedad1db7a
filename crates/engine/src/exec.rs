//! The `exec` engine, fio's program runner: it carries out no operation. A
//! job on it runs a program for its time (`JobSpec::exec`), which the
//! runner's worker does instead of its I/O loop (`runner::exec`), so the job
//! reports no reads or writes. The engine is here so `ioengine=exec` names
//! it, `storbench engines` lists it and the plan sees, from its
//! capabilities (no blocks, no objects), that the job has no storage.

use crate::*;

pub struct ExecFactory;

/// Its name (the plan tells a program job from a CPU burner by it).
pub const NAME: &str = "exec";

impl EngineFactory for ExecFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn fio_names(&self) -> &'static [FioName] {
        &[FioName { name: NAME, note: None }]
    }
    fn description(&self) -> &'static str {
        "no I/O: runs `program` for the job's time, then SIGTERM and SIGKILL (fio's exec; needs --allow-exec)"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: false, direct_io: true, needs_files: false, does_io: false, blocks: false, objects: false, ordered: true }
    }
    fn supports(&self, _op: OpKind) -> bool {
        false
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options(NAME, options)?;
        Ok(Arc::new(ExecConfig))
    }
}

struct ExecConfig;

impl EngineConfig for ExecConfig {
    fn open(&self, _setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(crate::cpuio::NoOperations(NAME)))
    }
}
