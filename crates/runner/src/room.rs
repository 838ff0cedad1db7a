//! What a job writes before it measures, against what its store can take.
//!
//! A prefill (every object written once), a `run --fill` (a share of a pool,
//! bucket or image) and a precondition (an image written whole) write a known
//! amount up front; if the store says how much more it can take (a pool's
//! MAX AVAIL, a quota: `EngineConfig::room`), a job that cannot fit is
//! refused before anything is written, with both figures and what to lower.
//! Jobs that write as they go (a time-based create mix) are not bounded in
//! advance, and not refused. The store is asked only when a job writes such
//! an amount, so other runs cost nothing here.

use crate::plan::{JobPlan, PlanError};
use storbench_engine::Room;
use storbench_workload::units::format_amount;

/// What a job writes before it measures: bytes, objects, and in words.
#[derive(Clone, Debug, PartialEq)]
pub struct UpFront {
    pub bytes: u64,
    pub objects: u64,
    pub what: String,
    /// The options to lower, for the message.
    pub lower: &'static str,
}

/// The objects an object job writes up front (its prefill or fill).
pub fn object_writes(job: &JobPlan) -> Option<UpFront> {
    let o = job.spec.objects.as_ref()?;
    if !job.spec.writes() {
        return None;
    }
    let (count, what, lower) = match job.spec.fill {
        Some(_) => (o.count, "the fill", "the fill's share"),
        None if o.prefill && !o.exist => (o.initial.unwrap_or(o.count).min(o.count), "the prefill", "objects or object_size"),
        None => return None,
    };
    let bytes = (count as f64 * o.sizes.mean()).ceil() as u64;
    let what = format!("{what} writes {count} objects of {} on average ({})", format_amount(o.sizes.mean() as u64), format_amount(bytes));
    Some(UpFront { bytes, objects: count, what, lower })
}

/// The bytes a block job writes whole on an engine's own target (an RBD
/// image): a precondition writes its region, a fill its share; `size` is
/// the region's end, `allocated` what the store holds for it already.
pub fn block_writes(job: &JobPlan, size: u64, allocated: u64) -> Option<UpFront> {
    let spec = &job.spec;
    if spec.objects.is_some() || !spec.writes() || !(spec.precondition || spec.fill.is_some()) {
        return None;
    }
    let region = size.saturating_sub(spec.offset);
    let extent = match spec.fill {
        Some(f) => (region as f64 * f) as u64,
        None => region,
    };
    let bytes = extent.saturating_sub(allocated);
    let what = format!(
        "writing {} of the target ({} of it already holds data) needs {} more",
        format_amount(extent),
        format_amount(allocated),
        format_amount(bytes)
    );
    Some(UpFront { bytes, objects: 0, what, lower: "size (or the fill's share)" })
}

/// Refuse `need` if it does not fit in `room`.
pub fn check(job: &str, need: &UpFront, room: Option<Room>) -> Result<(), PlanError> {
    let Some(room) = room else { return Ok(()) };
    let over_bytes = room.bytes.filter(|b| need.bytes > *b);
    let over_objects = room.objects.filter(|o| need.objects > *o);
    let message = match (over_bytes, over_objects) {
        (Some(b), _) => format!(
            "{}, but {} can take {} more: lower {}, or make room on the store",
            need.what,
            room.source,
            format_amount(b),
            need.lower
        ),
        (None, Some(o)) => {
            format!("{}, but {} allows {o} more objects: lower {}, or raise the quota", need.what, room.source, need.lower)
        }
        (None, None) => return Ok(()),
    };
    Err(PlanError::Input { job: job.into(), message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_model::Fault;

    fn need(bytes: u64, objects: u64) -> UpFront {
        UpFront { bytes, objects, what: "the prefill writes 3 objects".into(), lower: "objects or object_size" }
    }

    #[test]
    fn what_does_not_fit_is_refused_with_both_figures_and_what_to_lower() {
        let room = |bytes, objects| Some(Room { bytes, objects, source: "pool 'p' (MAX AVAIL in ceph df)".into() });
        assert!(check("w", &need(100, 3), room(Some(100), None)).is_ok());
        assert!(check("w", &need(100, 3), None).is_ok(), "a store that says nothing is not judged");
        let e = check("w", &need(2 << 30, 3), room(Some(1 << 30), None)).unwrap_err();
        assert_eq!(e.fault(), Fault::Input);
        assert!(
            e.message().contains("pool 'p'") && e.message().contains("1.0 GiB") && e.message().contains("lower objects or object_size"),
            "{}",
            e.message()
        );
        let e = check("w", &need(1, 3), room(None, Some(2))).unwrap_err();
        assert!(e.message().contains("allows 2 more objects"), "{}", e.message());
    }
}
