//! Preparing a plan's targets, once, into the share each job's workers get.
//!
//! [`Plan::prepare`] creates, checks and lays out every file or device, or
//! lets the engine prepare its own target (an image, a pool, a bucket), and
//! resolves what follows from the targets (the region each worker uses, its
//! byte budget). Each job comes out as a [`ReadyJob`]: its [`JobShare`]
//! (plain data, what a worker needs) beside its live engine. Nothing is
//! patched afterwards. A failure removes the files the preparation created
//! (an engine's own target, an image or a bucket, is the engine's to keep
//! or remove: it only creates what is missing, and marks it as storbench's).

use crate::plan::{JobPlan, Plan, PlanError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storbench_engine::files::{self, Need};
use storbench_engine::{EngineConfig, EngineFactory, TargetRequest, Which};
use storbench_model::protocol::JobShare;
use storbench_model::{Fault, StoreTarget, TargetFile, Targets, Warning};
use storbench_workload::gen::Region;
use storbench_workload::JobSpec;

/// A job ready to run: its share, and the engine that carries it out.
pub struct ReadyJob {
    pub share: JobShare,
    pub group: u32,
    pub engine: &'static dyn EngineFactory,
    pub config: Arc<dyn EngineConfig>,
    pub warnings: Vec<Warning>,
    /// A fill of a pool or bucket: what the store's accounting said before it.
    pub fill_before: Option<u64>,
    /// The trace a replaying job issues.
    pub trace: Option<Arc<storbench_workload::trace::Trace>>,
}

impl ReadyJob {
    pub fn name(&self) -> &str {
        &self.share.spec.name
    }
}

/// What a job asks of its engine's own target (`size`: bytes it uses).
fn target_request<'a>(
    spec: &'a JobSpec,
    object_prefix: Option<&'a str>,
    size: Option<u64>,
    stop: &'a dyn Fn() -> bool,
) -> TargetRequest<'a> {
    TargetRequest {
        stop,
        size,
        writes: spec.writes(),
        allow_overwrite: spec.allow_overwrite,
        objects: spec.objects.as_ref(),
        object_prefix,
        written_before: false,
        verifies: spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()),
        transfers: spec.objects.is_none().then_some(storbench_engine::Transfers {
            sizes: &spec.bs,
            reads: spec.read_percent() > 0.0,
            writes: spec.writes(),
            read_back: crate::verify::read_back_len(spec),
            offset: spec.offset,
            offset_increment: spec.offset_increment,
            seq_skip: spec.seq_skip,
            replay: spec.kind.replay().is_some(),
        }),
    }
}

/// Object sets that jobs of earlier groups write and keep (cleanup=0), by
/// engine, engine options and prefix: a later job's `objects_exist` cannot
/// be checked before the run (fio job files write, then read, then trim).
#[derive(Default)]
struct KeptObjects(Vec<(String, u32)>);

impl KeptObjects {
    fn key(job: &JobPlan) -> Option<String> {
        job.spec.objects.as_ref()?;
        let prefix = job.object_prefix.as_deref()?;
        Some(format!("{}\0{:?}\0{prefix}", job.spec.ioengine, job.spec.engine_options))
    }

    fn written_before(&self, job: &JobPlan) -> bool {
        Self::key(job).is_some_and(|k| self.0.iter().any(|(key, group)| *key == k && *group < job.group))
    }

    fn add(&mut self, job: &JobPlan) {
        let keeps = job.spec.objects.as_ref().is_some_and(|o| !o.cleans_up());
        if let (Some(k), true, true) = (Self::key(job), keeps, job.spec.writes()) {
            self.0.push((k, job.group));
        }
    }
}

/// Block jobs on an engine's own target (an RBD image) that write it: the
/// engine, its options and the group.
fn block_writers(jobs: &[JobPlan]) -> Vec<(String, u32)> {
    jobs.iter().filter(|j| j.paths.is_empty() && j.spec.objects.is_none() && j.spec.writes()).map(|j| (store_key(j), j.group)).collect()
}

fn store_key(job: &JobPlan) -> String {
    format!("{}\0{:?}", job.spec.ioengine, job.spec.engine_options)
}

/// A block job on an engine's own target that writes it, or reads what a
/// job of an earlier group or its own writes: what was never written before
/// the run says nothing about what it reads.
fn written_in_run(writers: &[(String, u32)], job: &JobPlan) -> bool {
    job.paths.is_empty()
        && job.spec.objects.is_none()
        && (job.spec.writes() || writers.iter().any(|(k, g)| *g <= job.group && *k == store_key(job)))
}

/// Every job of a plan, ready, and what the preparation created.
pub struct Prepared {
    pub jobs: Vec<ReadyJob>,
    /// Job indexes per group; groups run one after another.
    pub groups: Vec<Vec<usize>>,
    /// Files this run created, and whether their job asked for `unlink`.
    created: Vec<(PathBuf, bool)>,
    /// Sample the hosts once a second (`--no-telemetry` turns it off).
    pub telemetry: bool,
}

/// Preparation failed: why, and anything it could not remove again.
#[derive(Debug)]
pub struct PrepareFailed {
    pub error: PlanError,
    pub leftovers: Vec<String>,
    /// It was stopped (Ctrl-C) rather than failing.
    pub interrupted: bool,
}

impl Plan {
    /// Create, check and lay out every target the plan uses; `stop` (asked
    /// while laying files out) ends it early. `on_ready` hears of each job
    /// as soon as its targets are made (the run's journal records them).
    pub fn prepare(self, stop: &dyn Fn() -> bool, on_ready: &mut dyn FnMut(&ReadyJob)) -> Result<Prepared, PrepareFailed> {
        make_state_dirs(&self).map_err(|error| PrepareFailed { error, leftovers: Vec::new(), interrupted: false })?;
        let mut created = Vec::new();
        let mut seen = Seen::default();
        let mut jobs = Vec::new();
        let mut kept = KeptObjects::default();
        let writers = block_writers(&self.jobs);
        for job in self.jobs {
            let written_before = kept.written_before(&job) || written_in_run(&writers, &job);
            kept.add(&job);
            match ready(job, written_before, &mut seen, &mut created, stop) {
                Ok(j) => {
                    on_ready(&j);
                    jobs.push(j)
                }
                Err(error) => {
                    // No partial writes: files made before the failure go too.
                    let leftovers = remove(&created, true);
                    let interrupted = error.fault() == Fault::Interrupted;
                    return Err(PrepareFailed { error, leftovers, interrupted });
                }
            }
        }
        Ok(Prepared { jobs, groups: self.groups, created, telemetry: true })
    }
}

/// Verification state directories exist before any target is laid out: one
/// that cannot be made fails the run before it writes anything else.
fn make_state_dirs(plan: &Plan) -> Result<(), PlanError> {
    for job in &plan.jobs {
        if let Some(dir) = job.spec.verify.as_ref().and_then(|v| v.state.as_ref()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| input_err(&job.spec.name, format!("verify_state {}: cannot make it: {e}", dir.display())))?;
        }
    }
    Ok(())
}

/// fio refuses a sequence element past the region (EINVAL, "sequence
/// access block out of bounds"); storbench says so before the run. Each
/// direction counts blocks in its own smallest size, so the largest of the
/// directions the job does bounds the elements.
fn check_sequence(spec: &JobSpec, len: u64) -> Result<(), PlanError> {
    let storbench_workload::Distribution::Sequence { blocks } = &spec.distribution else { return Ok(()) };
    let reads = (spec.read_percent() > 0.0).then(|| spec.bs.read.min());
    let writes = spec.writes().then(|| spec.bs.write.min());
    let unit = reads.into_iter().chain(writes).max().unwrap_or(1).max(1);
    match blocks.iter().max() {
        Some(&b) if b >= len / unit => Err(input_err(
            &spec.name,
            format!(
                "random_distribution=sequence: block {b} is past the region's {} blocks of {unit} bytes; give blocks below it",
                len / unit
            ),
        )),
        _ => Ok(()),
    }
}

fn input_err(job: &str, message: impl Into<String>) -> PlanError {
    PlanError::Input { job: job.into(), message: message.into() }
}

impl Plan {
    /// The coordinator's view of jobs that agents prepared on their own
    /// machines: each job's share as the first agent prepared it, with
    /// `workers` the workers of every agent together. Nothing is created
    /// here, so nothing is removed here either: each agent cleans up its own.
    pub fn prepared_elsewhere(self, first: Vec<JobShare>, workers: &[u32]) -> Result<Prepared, PlanError> {
        if first.len() != self.jobs.len() || workers.len() != self.jobs.len() {
            let message =
                format!("the first agent prepared {} of the run's {} jobs (an agent of another storbench?)", first.len(), self.jobs.len());
            let job = self.jobs.first().map(|j| j.spec.name.clone()).unwrap_or_default();
            return Err(PlanError::System { job, message });
        }
        let mut jobs = Vec::new();
        for (job, (mut share, workers)) in self.jobs.into_iter().zip(first.into_iter().zip(workers)) {
            if share.job != job.id {
                return Err(PlanError::System {
                    job: job.spec.name.clone(),
                    message: format!("the agent prepared job {} in its place", share.job),
                });
            }
            share.workers = *workers;
            jobs.push(ReadyJob {
                share,
                group: job.group,
                engine: job.engine,
                config: job.config,
                warnings: job.warnings,
                fill_before: None,
                trace: job.trace,
            });
        }
        Ok(Prepared { jobs, groups: self.groups, created: Vec::new(), telemetry: true })
    }
}

/// One job's targets prepared and its share resolved (or why not: a stop
/// is an error of [`Fault::Interrupted`]).
fn ready(
    mut job: JobPlan,
    written_before: bool,
    seen: &mut Seen,
    created: &mut Vec<(PathBuf, bool)>,
    stop: &dyn Fn() -> bool,
) -> Result<ReadyJob, PlanError> {
    settle_object_fill(&mut job)?;
    let spec = &job.spec;
    // A share of a job over a fleet makes room for the later agents' stripes.
    let bytes = spec.size.map(|s| spec.offset + stripes(spec) + spec.stripes_after as u64 * spec.offset_increment + s);
    let targets = if job.paths.is_empty() {
        // Judged before the target is made (a block job: when its size says how much it writes).
        if spec.objects.is_some() || bytes.is_some() {
            check_room(&job, bytes)?;
        }
        // verify_only runs no workload: what exists is what its check is about, not a precondition.
        let checks_only = spec.verify.as_ref().is_some_and(|v| v.only);
        let req = TargetRequest {
            written_before: written_before || checks_only,
            ..target_request(spec, job.object_prefix.as_deref(), bytes, stop)
        };
        let prepared = job.config.prepare_target(&req).map_err(|e| PlanError::engine(&spec.name, e))?;
        // An existing image's size is known only now (nothing was made for it).
        if let (None, None, Some(t)) = (bytes, &spec.objects, &prepared) {
            check_room(&job, Some(t.size).filter(|s| *s > 0))?;
        }
        prepared.map_or(Targets::None, Targets::Store)
    } else {
        if let (Some(p), Some(missing)) = (spec.size_pct, job.paths.iter().flatten().find(|p| !p.exists())) {
            let message = format!(
                "size={p}% is a share of an existing file or device, and {} does not exist: give a size in bytes (e.g. --size 1g) to create it",
                missing.display()
            );
            return Err(input_err(&spec.name, message));
        }
        let reads = spec.read_percent() > 0.0 || spec.verify.is_some();
        let need = Need { bytes, writes: spec.writes(), reads, allow_overwrite: spec.allow_overwrite, room_only: spec.room_only() };
        Targets::Files(prepare_files(&job, &need, seen, created, stop)?)
    };
    // A fill of objects is judged by how much the store's accounting grows
    // (asked once its bucket or container exists).
    let fill_before = if job.spec.fill.is_some() && job.spec.objects.is_some() { job.config.allocated().ok().flatten() } else { None };
    let (region, io_limit) = region(&job, &targets)?;
    let share = JobShare {
        job: job.id,
        workers: job.spec.workers(),
        rank_base: 0,
        ranks: 0,
        queue_depth: job.queue_depth,
        region,
        io_limit,
        ramp_ns: job.ramp_ns,
        end_ns: job.end_ns,
        ops_per_sec: job.ops_per_sec,
        object_prefix: job.object_prefix,
        targets,
        spec: job.spec,
    };
    crate::verify::check_job(&share).map_err(|e| e.for_job(&share.spec.name))?;
    Ok(ReadyJob { share, group: job.group, engine: job.engine, config: job.config, warnings: job.warnings, fill_before, trace: job.trace })
}

/// Refuse a job whose prefill, fill or precondition cannot fit in what its
/// store says it can take (`end`: where a block job's region ends).
fn check_room(job: &JobPlan, end: Option<u64>) -> Result<(), PlanError> {
    let need = match end {
        _ if job.spec.objects.is_some() => crate::room::object_writes(job),
        Some(end) => {
            let allocated = || job.config.allocated().ok().flatten().unwrap_or(0);
            crate::room::block_writes(job, end, 0).and_then(|_| crate::room::block_writes(job, end, allocated()))
        }
        None => None,
    };
    let Some(need) = need.filter(|n| n.bytes > 0 || n.objects > 0) else { return Ok(()) };
    let room = job.config.room().map_err(|e| PlanError::engine(&job.spec.name, e))?;
    crate::room::check(&job.spec.name, &need, room)
}

/// The most objects a fill writes (the object model keeps a bit per key).
const FILL_MOST_OBJECTS: u64 = 100_000_000;

/// A fill of objects (`run --fill`): how many, from the pool's capacity (or,
/// for a store without one, the job's own object count). The plan's memory
/// check sized the job's own count, so the settled one is judged again.
fn settle_object_fill(job: &mut JobPlan) -> Result<(), PlanError> {
    let (Some(f), Some(o)) = (job.spec.fill, job.spec.objects.as_mut()) else { return Ok(()) };
    let name = job.spec.name.clone();
    let capacity = job.config.capacity().map_err(|e| PlanError::engine(&name, e))?;
    let mean = o.sizes.mean().max(1.0);
    let count = match capacity {
        Some(c) => (f * c as f64 / mean).ceil() as u64,
        None => (f * o.count as f64).ceil() as u64,
    }
    .max(1);
    if count > FILL_MOST_OBJECTS {
        return Err(input_err(&name, format!("the fill needs {count} objects of this size; give a larger object_size")));
    }
    o.count = count;
    job.spec.number_ios = Some(count);
    crate::plan::limits::check_settled_fill(job)
}

/// Paths already prepared by earlier jobs of the run, and the strictest
/// write check each passed: a file is laid out once, but a job that writes
/// is never let through on the strength of an earlier job that only read
/// it, or that was allowed more (a device read first and written later is
/// checked for writing all the same).
#[derive(Default)]
struct Seen(HashMap<PathBuf, (TargetFile, Option<Allowed>)>);

/// What a write check allowed: whether it was with `allow_overwrite`.
type Allowed = bool;

impl Seen {
    /// The target as prepared before, if that covers what `need` asks.
    fn covers(&self, path: &PathBuf, need: &Need) -> Option<TargetFile> {
        let (t, checked) = self.0.get(path)?;
        let big_enough = t.size >= need.bytes.unwrap_or(0);
        let stricter = |allowed: Allowed| !allowed || need.allow_overwrite;
        let writable = !need.writes || checked.is_some_and(stricter);
        (big_enough && writable).then(|| t.clone())
    }

    fn add(&mut self, path: &PathBuf, t: &TargetFile, need: &Need) {
        let earlier = self.0.get(path).and_then(|(_, c)| *c);
        let now = need.writes.then_some(need.allow_overwrite);
        // Keep the strictest check that passed.
        let checked = match (earlier, now) {
            (Some(a), Some(b)) => Some(a && b),
            (a, b) => a.or(b),
        };
        // After a job that writes it, what was never written is no longer known.
        let never_written = if need.writes { None } else { t.never_written };
        self.0.insert(path.clone(), (TargetFile { created: false, note: None, never_written, ..t.clone() }, checked));
    }
}

/// Each worker's files, prepared once per path (a shared file is laid out
/// once, by the first job that needs it at that size).
fn prepare_files(
    job: &JobPlan,
    need: &Need,
    seen: &mut Seen,
    created: &mut Vec<(PathBuf, bool)>,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<Vec<TargetFile>>, PlanError> {
    let mut per_worker = Vec::new();
    for paths in &job.paths {
        let mut mine = Vec::new();
        for path in paths {
            let to_create = job.engine.file_ops().is_some_and(|o| !o.laid_out);
            let t = match seen.covers(path, need) {
                Some(t) => t,
                None if to_create => file_to_create(path, need).map_err(|e| input_err(&job.spec.name, e))?,
                None => files::prepare(path, need, stop).map_err(|source| PlanError::Target { job: job.spec.name.clone(), source })?,
            };
            // filecreate's files are made during the run, unmarked: removed
            // only when the job asks for unlink, and left out of the journal
            // (cleanup would keep them as not storbench's).
            if t.created || to_create {
                created.push((path.clone(), job.spec.unlink));
            }
            seen.add(path, &t, need);
            mine.push(t);
        }
        per_worker.push(mine);
    }
    Ok(per_worker)
}

/// A file the job's engine creates (fio's filecreate): it must not exist,
/// or what is measured would be an open, not a create; nothing is made now.
fn file_to_create(path: &Path, need: &Need) -> Result<TargetFile, String> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(format!(
            "{} exists already: filecreate measures creating new files; remove the job's files (or name a new directory)",
            path.display()
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        return Err(format!("{}: its directory {} does not exist", path.display(), dir.display()));
    }
    let kind = storbench_model::FileKind::File;
    Ok(TargetFile { path: path.into(), kind, size: need.bytes.unwrap_or(0), created: false, note: None, never_written: None, whole: 0 })
}

/// Where block I/O goes, and the byte budget per worker.
/// How far the last worker's region starts after the first's.
fn stripes(spec: &JobSpec) -> u64 {
    spec.offset_increment * (spec.numjobs.max(1) as u64 - 1)
}

fn region(job: &JobPlan, targets: &Targets) -> Result<(Region, Option<u64>), PlanError> {
    let spec = &job.spec;
    let mut region = Region { files: 1, start: spec.offset, len: spec.size.unwrap_or(1 << 30), end: 0 };
    if spec.objects.is_some() {
        return Ok((region, if spec.time_based { None } else { spec.io_size.map(|b| b.saturating_mul(spec.passes.max(1) as u64)) }));
    }
    let target_size = match targets {
        Targets::Store(t) => Some(t.size),
        Targets::Files(f) => f.iter().flatten().map(|p| p.size).min(),
        Targets::None => None,
    };
    // Where fio's offset modifiers wrap: the file's end, past the job's size.
    let whole = match targets {
        Targets::Files(f) => f.iter().flatten().map(|p| p.whole_size()).min(),
        _ => target_size,
    };
    if let Some(smallest) = target_size {
        if smallest <= spec.offset {
            return Err(input_err(&spec.name, format!("offset {} is beyond the end of the target ({smallest} bytes)", spec.offset)));
        }
        // Without a size, each worker's stripe runs to where the last one's
        // must start (fio `offset_increment`), or to the end.
        let room = smallest - spec.offset;
        let len = match (spec.size, spec.size_pct) {
            (Some(s), _) => s,
            // fio's size=N%: that share of the whole file or device, within
            // what lies after the offset.
            (None, Some(p)) => ((smallest as f64 * p / 100.0) as u64).min(room),
            (None, None) if spec.offset_increment > 0 => spec.offset_increment.min(room.saturating_sub(stripes(spec))),
            (None, None) => room,
        };
        // `run --fill`: that share of the region, in whole blocks.
        let len = match spec.fill {
            Some(f) => ((len as f64 * f) as u64 / spec.bs.max().max(1)).max(1) * spec.bs.max(),
            None => len,
        };
        if spec.offset + stripes(spec) + len > smallest {
            return Err(input_err(
                &spec.name,
                format!(
                    "offset_increment {}: the last of {} workers would start at {} and end beyond the target ({smallest} bytes)",
                    spec.offset_increment,
                    spec.numjobs,
                    spec.offset + stripes(spec)
                ),
            ));
        }
        if len < spec.bs.max() {
            return Err(input_err(&spec.name, format!("the target region ({len} bytes) is smaller than the block size")));
        }
        check_sequence(spec, len)?;
        // A worker's volume's units (see `volumes::OnVolume`).
        let files = match targets {
            Targets::Store(t) => crate::volumes::units_per_volume(targets, spec).unwrap_or(t.units.max(1)),
            Targets::Files(f) => f.first().map_or(1, |p| p.len() as u32),
            Targets::None => 1,
        };
        region = Region { files, start: spec.offset, len, end: whole.unwrap_or(smallest) };
    }
    // A runtime with nothing that sizes the job (null engine) bounds it by time alone.
    let time_only = spec.runtime.is_some() && spec.size.is_none() && spec.io_size.is_none() && target_size.is_none();
    let all = region.len * region.files as u64 * spec.passes.max(1) as u64;
    // fio's loops (`passes`) each do io_size (io_bytes_exceeded); the generator ends passes sooner where fio does.
    let io_limit = match spec.io_size {
        _ if spec.time_based || time_only => None,
        Some(b) => Some(b.saturating_mul(spec.passes.max(1) as u64)),
        None => Some(all),
    };
    Ok((region, io_limit))
}

/// What cleaning up after a run did.
#[derive(Debug, Default)]
pub struct Cleaned {
    /// Everything that went wrong or was left, in words.
    pub notes: Vec<String>,
    /// Per job (the plan's order): whether something of its engine's own
    /// target remains (objects left or kept, a bucket kept, an image kept).
    pub left: Vec<bool>,
}

impl Prepared {
    /// After the run: remove the files of jobs that asked for `unlink`, and
    /// let engines tear down what they set up for the run alone (buckets,
    /// containers). `objects_left(job)` is how many objects a job wrote and
    /// did not remove (its cleanup was cut short or failed): those are listed
    /// with the commands that remove them (`storbench cleanup RESULTS_DIR`
    /// when the run has a `results` directory), and their bucket or
    /// container is kept; `None`: not known (a worker stuck in the engine
    /// was abandoned), said so, with the same commands. `stop` (a Ctrl-C
    /// meanwhile) cuts the engines' tear-down short.
    pub fn cleanup(&self, objects_left: &dyn Fn(&str) -> Option<u64>, stop: &dyn Fn() -> bool, results: Option<&Path>) -> Cleaned {
        let mut done = Cleaned { notes: remove(&self.created, false), left: Vec::new() };
        for job in &self.jobs {
            let left = match &job.share.targets {
                Targets::Store(t) => cleanup_store(job, t, objects_left(job.name()), stop, results, &mut done.notes),
                Targets::Files(_) | Targets::None => false,
            };
            done.left.push(left);
        }
        done
    }
}

/// A job's own target after the run; whether something of it remains.
fn cleanup_store(
    job: &ReadyJob,
    target: &StoreTarget,
    left: Option<u64>,
    stop: &dyn Fn() -> bool,
    results: Option<&Path>,
    notes: &mut Vec<String>,
) -> bool {
    let prefix = job.share.object_prefix.as_deref();
    let how = |p: &str| remove_how(&job.share.spec, p, results);
    // A fill's objects stay for the run's jobs, and go at its end.
    if let (Some(_), Some(_), Some(p)) = (job.share.spec.fill, &job.share.spec.objects, prefix) {
        return match job.config.remove_objects(p, Which::Marked, stop) {
            Ok(r) if r.failed == 0 && !r.stopped => false,
            Ok(_) | Err(_) => {
                notes.push(format!("job '{}': the fill's objects could not all be removed; remove them with: {}", job.name(), how(p)));
                true
            }
        };
    }
    let what = match left {
        Some(0) => None,
        Some(n) => Some(format!("{n} objects it wrote were not removed")),
        None => Some("objects it wrote may be left (a worker stuck in the engine was abandoned)".to_string()),
    };
    if let (Some(what), Some(prefix)) = (what, prefix) {
        notes.push(format!(
            "job '{}': {what} (names starting '{prefix}' in {}); remove them with: {}",
            job.name(),
            job.share.targets.labels().join(", "),
            how(prefix)
        ));
    }
    let objects = job.share.spec.objects.as_ref();
    let cleaned = left == Some(0) && objects.is_some_and(|o| o.cleans_up());
    let kept_objects = objects.is_some() && job.share.spec.writes() && !cleaned;
    if job.config.removes_created_at_end() && !target.created.is_empty() {
        return remove_created(job, target, stop, notes) || kept_objects;
    }
    let kept_target = match job.config.finish_target(&target_request(&job.share.spec, prefix, None, stop), cleaned) {
        Ok(Some(note)) => {
            notes.push(format!("job '{}': {note}", job.name()));
            !target.created.is_empty()
        }
        Ok(None) => !target.created.is_empty() && !cleaned,
        Err(e) => {
            notes.push(format!("job '{}': {e}", job.name()));
            !target.created.is_empty()
        }
    };
    kept_objects || kept_target
}

/// What preparing a job's target created (RBD images), now the run is
/// done with it; whether any of it remains (then the notes say why).
fn remove_created(job: &ReadyJob, target: &StoreTarget, stop: &dyn Fn() -> bool, notes: &mut Vec<String>) -> bool {
    let prefix = job.share.object_prefix.as_deref();
    match job.config.remove_created(&target_request(&job.share.spec, prefix, None, stop), Some(&target.created)) {
        Ok(left) => {
            notes.extend(left.iter().map(|n| format!("job '{}': {n}", job.name())));
            !left.is_empty()
        }
        Err(e) => {
            notes.push(format!("job '{}': the images it created could not be removed: {e}", job.name()));
            true
        }
    }
}

/// How to remove a job's objects: the run's own cleanup (its journal knows
/// them), or by prefix.
fn remove_how(spec: &JobSpec, prefix: &str, results: Option<&Path>) -> String {
    match results {
        Some(dir) => format!("storbench cleanup {} (or: {})", shell_word(&dir.display().to_string()), cleanup_command(spec, prefix)),
        None => cleanup_command(spec, prefix),
    }
}

/// The `storbench cleanup` command line that removes a job's objects: its
/// engine and the options that say where (never a secret: credentials come
/// from the same environment or files as the run's).
pub fn cleanup_command(spec: &JobSpec, prefix: &str) -> String {
    let mut words = vec!["storbench".to_string(), "cleanup".into(), "--ioengine".into(), spec.ioengine.clone()];
    for (k, v) in spec.engine_options.iter().filter(|(k, _)| !storbench_workload::spec::SECRET_OPTIONS.contains(&k.as_str())) {
        words.push(format!("--{k}"));
        words.push(shell_word(v));
    }
    words.push("--object_prefix".into());
    words.push(shell_word(prefix));
    words.join(" ")
}

/// `s` as one shell word.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-/:=,@+%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Remove files the run created (`all`, or those whose job asked for unlink).
fn remove(created: &[(PathBuf, bool)], all: bool) -> Vec<String> {
    let mut failures = Vec::new();
    for (path, unlink) in created {
        if *unlink || all {
            // A file the job deleted (filedelete), or never created, is gone already.
            if let Err(e) = files::remove_created(path).or_else(gone) {
                failures.push(format!("could not remove {}: {e}", path.display()));
            }
        }
    }
    failures
}

fn gone(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::NotFound => Ok(()),
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cleanup_command_says_where_and_never_a_secret() {
        let mut spec = JobSpec { ioengine: "s3".into(), ..JobSpec::default() };
        for (k, v) in [("bucket", "b1"), ("endpoint", "http://127.0.0.1:7480"), ("secret_key", "s3cr3t"), ("region", "my region")] {
            spec.engine_options.insert(k.into(), v.into());
        }
        let c = cleanup_command(&spec, "run's.");
        assert_eq!(
            c,
            "storbench cleanup --ioengine s3 --bucket b1 --endpoint http://127.0.0.1:7480 --region 'my region' --object_prefix 'run'\\''s.'"
        );
        assert!(!c.contains("s3cr3t"));
    }
}
