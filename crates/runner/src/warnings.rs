//! Which warnings about the measurement a job's results call for: decided
//! here, where the plan (engine, rate, options) and the results meet. The
//! warnings themselves are plain data in the model.

use crate::prepare::ReadyJob;
use storbench_model::{JobResult, Warning};
use storbench_workload::OpKind;

/// Warnings that follow from a job's results.
pub fn analyse(result: &JobResult, job: &ReadyJob) -> Vec<Warning> {
    let mut w = Vec::new();
    let name = result.name.clone();
    let share = &job.share;
    if let Some(rate) = share.ops_per_sec {
        let asked = rate * share.workers as f64;
        let achieved: f64 = result.ops.iter().map(|o| o.iops).sum();
        if !result.interrupted && achieved < asked * 0.98 {
            w.push(Warning::RateNotMet { job: name.clone(), asked_iops: asked, achieved_iops: achieved });
        }
    }
    if let Some(r) = result.op(OpKind::Read) {
        let p50 = r.service.as_ref().unwrap_or(&r.latency).at(50.0);
        if !share.spec.direct && job.engine.capabilities().needs_files && r.ios > 0 && p50 < 5_000 {
            w.push(Warning::PageCacheReads { job: name.clone(), p50_ns: p50 });
        }
    }
    for o in &result.ops {
        if o.ios > 0 && o.ios < 1000 && o.op != OpKind::Sync {
            w.push(Warning::FewSamples { job: name.clone(), op: o.op.name().into(), ios: o.ios });
        }
    }
    w
}
