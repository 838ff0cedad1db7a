//! What every object engine checks before a run writes or reads, in one
//! place: the objects a job says exist do, and the objects it would create
//! do not (they would belong to someone else, or to an earlier run kept with
//! cleanup=0).

use crate::{EngineError, TargetRequest};
use storbench_workload::ObjectSpec;

/// Keys checked for objects left by someone else before a job writes.
pub const OWNERSHIP_PROBES: u64 = 8;

/// The object side of a target request, or the error for a block job.
pub fn object_target<'a>(engine: &'static str, t: &TargetRequest<'a>) -> Result<(&'a ObjectSpec, &'a str), EngineError> {
    match (t.objects, t.object_prefix) {
        (Some(o), Some(prefix)) => Ok((o, prefix)),
        _ => Err(EngineError::Unavailable { engine, message: "works on objects only: give the job objects=N".into() }),
    }
}

/// Check object names against the store. `exists(key, name)` asks whether
/// object `name` (key number `key`) is there; `place(key)` names where it would
/// be ("pool 'p'", "bucket 'b'"), for the messages.
pub fn check_names(
    engine: &'static str,
    t: &TargetRequest,
    place: &dyn Fn(u64) -> String,
    exists: &mut dyn FnMut(u64, &str) -> Result<bool, EngineError>,
) -> Result<(), EngineError> {
    let (o, prefix) = object_target(engine, t)?;
    let names = storbench_workload::ObjectNames::new(prefix, Some(o));
    if o.exist {
        if t.written_before {
            return Ok(());
        }
        let first = names.name(0);
        if !exists(0, &first)? {
            return Err(EngineError::BadOption {
                engine,
                option: "objects_exist".into(),
                message: format!(
                    "object '{first}' does not exist in {}: there is nothing to read. \
                     Write the objects first (a job with cleanup=0), or check object_prefix",
                    place(0)
                ),
            });
        }
    } else if t.writes && !t.allow_overwrite {
        for k in 0..o.count.min(OWNERSHIP_PROBES) {
            let name = names.name(k);
            if exists(k, &name)? {
                return Err(EngineError::Refused {
                    engine,
                    message: format!(
                        "object '{name}' already exists in {} and this run did not write it. \
                         Set objects_exist=1 to use objects an earlier run left, allow_overwrite=1 to \
                         overwrite them, or choose another object_prefix",
                        place(k)
                    ),
                });
            }
        }
    }
    Ok(())
}
