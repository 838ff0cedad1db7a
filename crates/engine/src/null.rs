//! The `null` engine: completes every operation at once without doing I/O. It
//! measures storbench's own cost per operation and tests the runner end to end.

use crate::*;

pub struct NullFactory;

impl EngineFactory for NullFactory {
    fn name(&self) -> &'static str {
        "null"
    }
    fn description(&self) -> &'static str {
        "does no I/O; measures storbench's own overhead"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { queued: true, direct_io: true, needs_files: false, does_io: false, blocks: true, objects: true, ordered: true }
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        no_options("null", options)?;
        Ok(Arc::new(NullConfig))
    }
}

struct NullConfig;

impl EngineConfig for NullConfig {
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(Null { done: Vec::with_capacity(setup.queue_depth as usize) }))
    }
}

struct Null {
    done: Vec<Completion>,
}

impl Engine for Null {
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.done.push(Completion::new(req.slot, Ok(req.len as u64)));
        Ok(())
    }

    #[inline]
    fn submit_and_reap(&mut self, _min: u32, _t: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}
