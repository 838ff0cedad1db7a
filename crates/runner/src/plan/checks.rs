//! One job against what its engine and options allow: verification,
//! streams, iologs, the model, priorities, objects and sizes.

use super::{err, PlanError};
use storbench_engine::EngineFactory;
use storbench_workload::JobSpec;

/// Verification needs blocks that keep what is written, in whole units.
pub(super) fn check_verify(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let Some(v) = spec.verify.as_ref() else { return Ok(()) };
    let caps = engine.capabilities();
    if v.checksum.is_none() {
        let given = ["verify_only", "verify_state", "verify_backlog", "verify_fatal", "verify_pattern", "verify_interval"];
        return match given.iter().find(|o| spec.given.has(o)) {
            Some(o) => Err(err(spec, format!("{o} needs verify= (crc32c, xxhash, sha256 or meta): which checksum the blocks carry"))),
            None => Ok(()),
        };
    }
    // The table counts at most 1023 writes in flight per unit.
    if spec.iodepth as u64 * spec.numjobs as u64 > 1000 {
        return Err(err(
            spec,
            "verify keeps track of at most 1000 operations in flight per job (iodepth x numjobs); lower iodepth or numjobs",
        ));
    }
    if let Some(o) = &spec.objects {
        if o.count < spec.numjobs as u64 {
            return Err(err(
                spec,
                format!("verify: {} objects cannot be shared out among {} workers; give objects >= numjobs", o.count, spec.numjobs),
            ));
        }
        if v.backlog > 0 {
            return Err(err(spec, "verify_backlog reads back blocks; object jobs read their objects as the mix says (and after the run)"));
        }
        return Ok(());
    }
    if !caps.does_io {
        return Err(err(spec, "the null engine keeps no data, so there is nothing to verify; give a real engine (psync, io_uring, rbd)"));
    }
    if let Some(op) = spec.kind.meta() {
        return Err(err(
            spec,
            format!("the {} engine's operations ({}) move no data, so there is nothing to verify", spec.ioengine, op.name()),
        ));
    }
    if engine.name() == "falloc" {
        return Err(err(spec, "the falloc engine allocates and punches space without moving data, so there is nothing to verify"));
    }
    if v.only && v.state.is_none() && spec.time_based {
        return Err(err(
            spec,
            "verify_only without verify_state reads back, once, what the job's writes would cover (fio's dry run), and a \
             time_based job's writes have no end: drop time_based, or give verify_state=DIR (the state the writing run kept)",
        ));
    }
    if let Some(dir) = &v.state {
        writable(dir).map_err(|e| err(spec, format!("verify_state {}: {e}", dir.display())))?;
    }
    storbench_workload::verify::block_unit(spec).map_err(|e| err(spec, e))?;
    Ok(())
}

/// A stream (the network engines) is read or written in order, one way
/// (fio: "network IO can't be random"; a mix would have both ends waiting
/// to read); an offset, a sync or a read-back means nothing there.
pub(super) fn check_stream(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    if !engine.streams() {
        return Ok(());
    }
    let what = match () {
        _ if spec.rw.is_random() => "a random pattern",
        _ if spec.rw.is_mixed() => "reads and writes mixed (both ends could wait to read at once)",
        _ if spec.trims => "trims",
        _ if spec.sync.is_some() || spec.end_fsync => "syncs",
        _ if spec.kind.replay().is_some() => "a replayed trace",
        _ if spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()) => "verification",
        _ => return Ok(()),
    };
    Err(err(
        spec,
        format!(
            "engine {} moves a byte stream, so it cannot do {what}; give rw=read or rw=write (with pingpong=1 for round trips)",
            engine.name()
        ),
    ))
}

/// fio's write_iolog records block operations, and never over the trace
/// the same job replays.
pub(super) fn check_iolog(spec: &JobSpec, caps: storbench_engine::Capabilities) -> Result<(), PlanError> {
    let Some(out) = &spec.write_iolog else { return Ok(()) };
    if spec.objects.is_some() || !caps.blocks {
        return Err(err(spec, "write_iolog records block operations (fio's iolog); object jobs have none"));
    }
    let same = |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if spec.kind.replay().is_some_and(|r| same(&r.path, out)) {
        return Err(err(spec, "write_iolog names the trace read_iolog replays: it would be overwritten; give another file"));
    }
    check_iolog_files(spec, out)
}

/// The files write_iolog will make (FILE, or FILE.N per worker) do not
/// exist yet, unless `allow_overwrite`, and their directory takes files:
/// found before anything runs, not when the first worker starts.
fn check_iolog_files(spec: &JobSpec, out: &std::path::Path) -> Result<(), PlanError> {
    let files: Vec<std::path::PathBuf> = match spec.numjobs {
        1 => vec![out.to_path_buf()],
        n => (0..n).map(|w| std::path::PathBuf::from(format!("{}.{w}", out.display()))).collect(),
    };
    if let Some(f) = files.iter().find(|f| std::fs::symlink_metadata(f).is_ok()) {
        if !spec.allow_overwrite {
            return Err(err(
                spec,
                format!("write_iolog: {} exists; give another file, remove it, or pass --allow_overwrite=1 to replace it", f.display()),
            ));
        }
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(err(spec, format!("write_iolog: its directory {} does not exist", dir.display())));
    }
    writable(dir).map_err(|e| err(spec, format!("write_iolog: {e}")))
}

/// Files can be made in `dir`, or in the directory that making it would
/// start from (its nearest existing ancestor): checked before anything
/// runs, so a run never ends by failing to write what it was asked to keep.
pub(super) fn writable(dir: &std::path::Path) -> Result<(), String> {
    let mut at = dir;
    while std::fs::symlink_metadata(at).is_err() {
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
    }
    if !at.is_dir() {
        return Err(format!("{} is not a directory", at.display()));
    }
    let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).map_err(|_| "the path has a NUL byte".to_string())?;
    // SAFETY: access only reads the C string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!("cannot write in {}: {}", at.display(), std::io::Error::last_os_error()));
    }
    Ok(())
}

/// `dataset_exists` says a preset's dataset is on an engine's own target
/// (an image, an export): anywhere else it would change nothing, which
/// the user is told rather than left to believe.
pub(super) fn check_dataset_exists(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    if !spec.dataset_exists {
        return Ok(());
    }
    let on_files = engine.capabilities().needs_files || !spec.filenames.is_empty();
    let why = if spec.kind.train().is_none() && spec.kind.vectordb().is_none() {
        "dataset_exists is for a train or vectordb preset's dataset; this job has none"
    } else if spec.objects.is_some() {
        "dataset_exists is for an RBD image or NBD export; objects an earlier run left are objects_exist=1"
    } else if on_files {
        "dataset_exists is for an RBD image or NBD export; files are laid out only where missing or short, and a file or device given is read as it is"
    } else {
        return Ok(());
    };
    Err(err(spec, why))
}

/// Block jobs go to block engines, object jobs to object engines.
pub(super) fn check_model(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let caps = engine.capabilities();
    let objects: Vec<&str> =
        storbench_engine::registry().iter().filter(|f| f.capabilities().objects && f.capabilities().does_io).map(|f| f.name()).collect();
    match (&spec.objects, caps.objects, caps.blocks) {
        (Some(_), false, _) => Err(err(
            spec,
            format!(
                "object options (objects, object_size, object_ops...) need an object engine ({}), not {}",
                objects.join(", "),
                engine.name()
            ),
        )),
        _ => Ok(()),
    }
}

/// fio's cmdprio options give I/Os priorities of their own: only engines
/// that carry one with each I/O can (fio has them for io_uring and libaio
/// alone); `prio` and `prioclass` are the thread's, for every engine.
pub(super) fn check_prio(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let Some(p) = &spec.prio else { return Ok(()) };
    p.check().map_err(|e| err(spec, e))?;
    if p.per_io() && !engine.io_priorities() {
        let able: Vec<&str> = storbench_engine::registry().iter().filter(|f| f.io_priorities()).map(|f| f.name()).collect();
        return Err(err(
            spec,
            format!(
                "cmdprio_percentage and cmdprio_bssplit give each I/O its own priority, which {} cannot carry; use ioengine={} (or prio/prioclass for the whole job)",
                engine.name(),
                able.join(" or ")
            ),
        ));
    }
    Ok(())
}

/// The object model's own checks, including reads of objects nothing writes.
pub(super) fn check_objects(spec: &JobSpec, engine: &'static dyn EngineFactory) -> Result<(), PlanError> {
    let o = spec.objects.as_ref().expect("object job");
    if spec.direct {
        return Err(err(spec, "direct=1 has no meaning for object jobs; remove it"));
    }
    if matches!(spec.distribution, storbench_workload::Distribution::Sequence { .. }) {
        return Err(err(
            spec,
            "random_distribution=sequence walks block numbers; object jobs take zipf, pareto, normal or zoned popularity",
        ));
    }
    let mix = o.effective_mix(spec.read_percent());
    if let Some((op, _)) = mix.iter().find(|m| !engine.supports(m.0)) {
        return Err(err(spec, format!("engine {} cannot {} objects; remove {} from object_ops", engine.name(), op.name(), op.name())));
    }
    use storbench_workload::OpKind;
    let needs_existing = mix.iter().any(|m| matches!(m.0, OpKind::Read | OpKind::Update | OpKind::Stat | OpKind::Delete));
    let creates = mix.iter().any(|m| matches!(m.0, OpKind::Create | OpKind::Write));
    let checks_only = spec.verify.as_ref().is_some_and(|v| v.only);
    if needs_existing && !creates && !o.prefill && !o.exist && !checks_only {
        return Err(err(
            spec,
            "the job reads, updates or removes objects that nothing writes first: add prefill=1, put create in object_ops, \
             or set objects_exist=1 if an earlier run left them (object_prefix must then match)",
        ));
    }
    if o.exist && o.sizes.fixed().is_none() && o.op_len.is_none() {
        return Err(err(
            spec,
            "objects_exist=1 with varying object sizes: the sizes of objects an earlier run wrote are not known; give one object_size or object_op_size",
        ));
    }
    if let Some((_, max)) = o.op_len {
        if o.sizes.fixed().is_some_and(|s| max > s) {
            return Err(err(spec, format!("object_op_size up to {max} bytes is larger than object_size; lower it")));
        }
    }
    if spec.max_transfer() > u32::MAX as u64 / 2 {
        return Err(err(spec, "objects above 2 GiB are not supported"));
    }
    Ok(())
}

pub(super) fn check_sizes(spec: &JobSpec) -> Result<(), PlanError> {
    let max_bs = spec.bs.max();
    if max_bs > u32::MAX as u64 / 2 {
        return Err(err(spec, "block size above 2 GiB is not supported"));
    }
    if let Some(size) = spec.size {
        if max_bs > size {
            return Err(err(spec, format!("block size {max_bs} is larger than size {size}; raise size or lower bs")));
        }
    }
    if spec.direct {
        for (what, v) in [("block size", spec.bs.min()), ("offset", spec.offset)] {
            if v % 512 != 0 {
                return Err(err(spec, format!("direct=1 needs a {what} that is a multiple of 512 (got {v})")));
            }
        }
        for (bs, _) in spec.bs.read.0.iter().chain(spec.bs.write.0.iter()) {
            if bs % 512 != 0 {
                return Err(err(spec, format!("direct=1 needs every block size to be a multiple of 512 (got {bs})")));
            }
        }
    }
    if spec.data.zeros && (spec.data.compress_pct > 0.0 || spec.data.dedupe_pct > 0.0) {
        return Err(err(spec, "zero_buffers conflicts with buffer_compress_percentage/dedupe_percentage; choose one"));
    }
    if spec.logs.max_value && spec.logs.avg_msec > 0 {
        return Err(err(spec, "log_max_value=1 with log_avg_msec: storbench's averaged logs hold each window's mean; drop log_max_value, or log_avg_msec=0 for a line per I/O"));
    }
    Ok(())
}
