//! Planning a job that replays a trace: the trace is read and checked once,
//! and the job is described by it (its mix, transfer sizes and extent, or
//! its keys, object sizes and mix), so the safety checks, buffers and
//! report see what the trace will do.

use crate::plan::PlanError;
use std::sync::Arc;
use storbench_engine::{names_where, EngineFactory};
use storbench_workload::trace::{LoadError, Trace, TraceSummary};
use storbench_workload::{BlockSizes, JobSpec, ObjectSizes, OpKind, RwMode, SizeSplit};

/// Most transfer sizes the job's description lists (the rest are rare).
const SIZES_KEPT: usize = 16;

/// Load the job's trace, if it replays one, and make the spec describe it.
pub fn resolve(spec: &mut JobSpec, engine: &'static dyn EngineFactory) -> Result<Option<Arc<Trace>>, PlanError> {
    let Some(r) = spec.kind.replay().cloned() else { return Ok(None) };
    let job = spec.name.clone();
    let bad = |m: String| PlanError::Input { job: job.clone(), message: m };
    if r.path.as_os_str().is_empty() {
        return Err(bad("replay_* options need read_iolog=TRACE: the trace to replay".into()));
    }
    let conflicts = [
        (spec.rate.is_some(), "rate (the trace sets the pace; replay_time_scale changes it)"),
        (spec.time_based, "time_based (a replay runs once through the trace; runtime cuts it short)"),
        (spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()), "verify"),
        (spec.number_ios.is_some() || spec.io_size.is_some(), "number_ios and io_size (the trace says how much)"),
    ];
    if let Some((_, what)) = conflicts.iter().find(|c| c.0) {
        return Err(bad(format!("read_iolog replays a trace as recorded; it cannot be combined with {what}")));
    }
    if !(r.speed > 0.0 && r.speed.is_finite()) {
        return Err(bad("replay_time_scale must be above 0".into()));
    }
    let trace = load(&r.path).map_err(bad)?;
    let objects = trace.format.objects();
    if !replays_onto(engine, objects) {
        let (what, onto) = match objects {
            true => ("an object-store log", "object stores"),
            false => ("a block trace", "files, devices, RBD images or NBD exports"),
        };
        let able = either(&names_where(|f| f.capabilities().does_io && replays_onto(f, objects)));
        return Err(bad(format!("{} is {what} ({}); replay it onto {onto} ({able})", r.path.display(), trace.format.name())));
    }
    let s = trace.summary(&r);
    let issued = |f: &'static dyn EngineFactory| OpKind::ALL.into_iter().all(|op| s.ops[op.index()] == 0 || f.supports(op));
    if let Some(op) = OpKind::ALL.into_iter().find(|op| s.ops[op.index()] > 0 && !engine.supports(*op)) {
        let with = either(&names_where(|f| f.capabilities().does_io && replays_onto(f, objects) && issued(f)));
        return Err(bad(format!(
            "the trace holds {} {} operations, which engine {} cannot issue; replay it with {with}",
            s.ops[op.index()],
            op.name(),
            engine.name()
        )));
    }
    match objects {
        true => describe_objects(spec, &s, trace.files.len() as u64),
        false => describe(spec, &s, engine).map_err(bad)?,
    }
    Ok(Some(trace))
}

/// Whether `engine` can replay a trace of this kind, by what it declares:
/// block traces need block operations on targets of the engine's own (not
/// the file-system metadata engines' one call per file), object logs need
/// object operations.
pub fn replays_onto(engine: &'static dyn EngineFactory, objects: bool) -> bool {
    let caps = engine.capabilities();
    match objects {
        true => caps.objects,
        false => caps.blocks && engine.file_ops().is_none(),
    }
}

/// Names for a message: "a", "a or b", "a, b or c".
fn either(names: &[&str]) -> String {
    match names.split_last() {
        None => "none".into(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The trace at `path`, if loading it fits in the memory a plan may take
/// (the share of MemAvailable [`limits`](crate::plan::limits) allows buffers):
/// estimated from the file before it is read, and bounded while it is.
pub fn load(path: &std::path::Path) -> Result<Arc<Trace>, String> {
    let available = crate::plan::limits::available_memory();
    let budget = available.map_or(u64::MAX, |a| (a as f64 * crate::plan::limits::MEMORY_SHARE) as u64);
    Trace::load(path, budget).map_err(|e| match (e, available) {
        (LoadError::TooLarge { needs, budget, stopped_at }, Some(a)) => {
            let needs = LoadError::TooLarge { needs, budget, stopped_at };
            format!(
                "{}: {needs} ({:.0}% of the {} MemAvailable); replay a part of it (split the file by lines) or free memory",
                path.display(),
                crate::plan::limits::MEMORY_SHARE * 100.0,
                storbench_workload::units::format_amount(a)
            )
        }
        (e, _) => e.to_string(),
    })
}

/// An object log as the job's object model: its keys, sizes and mix (the
/// replay issues them; the model describes the job and sizes its buffers).
fn describe_objects(spec: &mut JobSpec, s: &TraceSummary, keys: u64) {
    let (min, max) = (s.sizes.iter().map(|e| e.0).min().unwrap_or(0), s.sizes.iter().map(|e| e.0).max().unwrap_or(0));
    let o = spec.objects.get_or_insert_with(Default::default);
    o.count = keys.max(1);
    o.sizes = match min == max {
        true => ObjectSizes::Classes { split: SizeSplit::fixed(max.max(1) as u64) },
        false => ObjectSizes::Range { min: min as u64, max: max as u64 },
    };
    o.mix =
        OpKind::ALL.into_iter().filter(|op| s.ops[op.index()] > 0).map(|op| (op, s.ops[op.index()].min(u32::MAX as u64) as u32)).collect();
    o.prefill = false;
}

/// Files a replay creates are sized from its trace up to this; beyond it,
/// the user says how large (a production device's trace would otherwise lay
/// out a file as large as the device).
const NEW_FILE_LIMIT: u64 = 16 << 30;

/// The job's targets are files this run creates (not a device, image or
/// export, nor files that exist).
fn creates_files(spec: &JobSpec, engine: &'static dyn EngineFactory) -> bool {
    engine.capabilities().needs_files && spec.filenames.iter().all(|f| !std::path::Path::new(f).exists())
}

/// The trace's mix, sizes and extent as the job's own options.
fn describe(spec: &mut JobSpec, s: &TraceSummary, engine: &'static dyn EngineFactory) -> Result<(), String> {
    let reads = s.ops[OpKind::Read.index()];
    let changes = s.ops[OpKind::Write.index()] + s.ops[OpKind::Trim.index()];
    spec.rw = match (reads, changes) {
        (_, 0) => RwMode::RandRead,
        (0, _) => RwMode::RandWrite,
        _ => RwMode::RandRw,
    };
    if spec.rw == RwMode::RandRw {
        spec.rwmixread = reads as f64 * 100.0 / (reads + changes) as f64;
    }
    let split = size_split(&s.sizes);
    spec.bs = BlockSizes { read: split.clone(), write: split };
    if spec.filenames.is_empty() && !spec.given.has("nrfiles") {
        spec.nrfiles = (s.extent.len() as u32).clamp(1, 64);
    }
    // size is each file's region: the largest extent any trace file has,
    // for files the run creates. A target that exists (a device, an image,
    // an export, a file) keeps its own size, and offsets past it wrap.
    if spec.size.is_none() && creates_files(spec, engine) {
        let extent = s.extent.iter().copied().max().unwrap_or(0).max(1 << 20);
        if extent > NEW_FILE_LIMIT {
            return Err(format!(
                "the trace reaches {} into its files; laying out files that large is refused: give --size (offsets past it wrap) or a filename that exists",
                storbench_workload::units::format_amount(extent)
            ));
        }
        spec.size = Some(extent.div_ceil(1 << 20) * (1 << 20));
    }
    Ok(())
}

/// The commonest sizes with their weights, the largest always among them
/// (buffers are sized from it).
fn size_split(sizes: &[(u32, u64)]) -> SizeSplit {
    let Some(largest) = sizes.iter().map(|e| e.0).max() else { return SizeSplit::fixed(4096) };
    let top = sizes[0].1.max(1);
    let mut kept: Vec<(u64, u32)> =
        sizes.iter().take(SIZES_KEPT).map(|&(len, n)| (len as u64, ((n as f64 / top as f64) * 10_000.0).ceil().max(1.0) as u32)).collect();
    if !kept.iter().any(|e| e.0 == largest as u64) {
        kept.push((largest as u64, 1));
    }
    SizeSplit(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_size_is_kept_and_weights_follow_counts() {
        let mut sizes: Vec<(u32, u64)> = (0..20).map(|i| (4096 * (i + 1), 1000 - i as u64)).collect();
        sizes.push((1 << 20, 1));
        let s = size_split(&sizes);
        assert_eq!(s.0.len(), SIZES_KEPT + 1);
        assert_eq!(s.max(), 1 << 20);
        assert_eq!(s.0[0], (4096, 10_000));
    }

    /// The engines a message names: the list in its closing parentheses.
    fn named(message: &str) -> std::collections::BTreeSet<String> {
        let list = &message[message.rfind('(').expect("a list") + 1..message.len() - 1];
        list.replace(" or ", ", ").split(", ").map(String::from).collect()
    }

    /// Issue 29: a trace replays onto exactly the engines whose capabilities
    /// allow it (block operations on targets of their own for a block trace,
    /// object operations for an object log), and a refusal names exactly
    /// those that move data. Every engine in the registry is tried, so a new
    /// one is judged by what it declares, and a name listed or left out by
    /// hand anywhere fails here.
    #[test]
    fn a_trace_replays_onto_exactly_the_engines_whose_capabilities_allow_it() {
        let dir = std::env::temp_dir().join(format!("storbench-replay-onto-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let block = dir.join("block.log");
        std::fs::write(&block, "fio version 2 iolog\n/f add\n/f open\n/f write 0 4096\n/f read 0 4096\n/f close\n").unwrap();
        let log = dir.join("ops.log");
        let put = r#"{"bucket":"b","time":"2026-11-23T04:10:07.500000Z","operation":"put_obj","uri":"PUT /b/k1 HTTP/1.1","http_status":"200","bytes_received":4096,"object_size":4096,"total_time":2,"object":"k1"}"#;
        let get = r#"{"bucket":"b","time":"2026-11-23T04:10:07.600000Z","operation":"get_obj","uri":"GET /b/k1 HTTP/1.1","http_status":"200","bytes_sent":4096,"object_size":4096,"total_time":1}"#;
        std::fs::write(&log, format!("{put}\n{get}\n")).unwrap();
        let allowed = |f: &'static dyn EngineFactory, objects: bool| {
            let c = f.capabilities();
            if objects {
                c.objects
            } else {
                c.blocks && f.file_ops().is_none()
            }
        };
        for (path, objects) in [(&block, false), (&log, true)] {
            let able: std::collections::BTreeSet<String> = storbench_engine::registry()
                .iter()
                .filter(|f| f.capabilities().does_io && allowed(**f, objects))
                .map(|f| f.name().to_string())
                .collect();
            for f in storbench_engine::registry() {
                let mut spec = JobSpec {
                    kind: storbench_workload::JobKind::Replay(storbench_workload::trace::ReplaySpec::new(path.clone())),
                    ..JobSpec::default()
                };
                match resolve(&mut spec, *f) {
                    Ok(_) => {
                        assert!(allowed(*f, objects), "{} replayed onto {}, whose capabilities do not allow it", path.display(), f.name())
                    }
                    Err(e) => {
                        assert!(!allowed(*f, objects), "{} refused onto {}: {}", path.display(), f.name(), e.message());
                        assert_eq!(named(&e.message()), able, "{}", e.message());
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_spec_takes_the_traces_mix_and_extent() {
        let mut spec = JobSpec::default();
        let mut ops = [0; OpKind::COUNT];
        (ops[OpKind::Read.index()], ops[OpKind::Write.index()]) = (3, 1);
        let s = TraceSummary { ops, extent: vec![5 << 20, 1 << 20], sizes: vec![(4096, 4)], ..Default::default() };
        describe(&mut spec, &s, storbench_engine::find("psync").unwrap()).unwrap();
        assert_eq!(spec.rw, RwMode::RandRw);
        assert_eq!(spec.rwmixread, 75.0);
        assert_eq!((spec.nrfiles, spec.size), (2, Some(5 << 20)), "a file per trace file, each as large as the largest extent");
        assert!(spec.writes(), "a trace that writes is a writing job (the safety checks)");
    }
}
