//! One worker: a workload generator, an engine and an interval recorder on one
//! thread. The loop is prep -> submit -> reap: it reads the clock once per
//! batch, takes no lock, allocates nothing and formats nothing; it hands its
//! interval report over once per second and takes an empty one back.

mod error;
mod hot;
mod latency;
mod logs;
mod no_io;
mod outcome;
mod phases;
#[cfg(test)]
mod tests;
mod unmeasured;

use crate::agent::RunControl;
use crate::buffers::AlignedBuffers;
use crate::clock::{precise_timers, sleep_until, Clock};
use crate::iolog::IologWriter;
use crate::unit_log::UnitLogWriter;
use crate::verify::Checker;
pub use error::{Failed, WorkerError};
use logs::LogWindow;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::Duration;
use storbench_engine::files;
use storbench_engine::{Engine, EngineConfig, EngineFactory, WorkerSetup};
use storbench_metrics::{CpuTimes, IntervalReport, KindTally, LatencyHistogram, PlatWindow};
use storbench_model::protocol::{FromAgent, JobShare, Stage, WorkerDone, WorkerId};
use storbench_workload::data::Filler;
use storbench_workload::gen::stream;
use storbench_workload::kinds::{GenSetup, Generator, JobGen};
use storbench_workload::prio::PrioPicker;
use storbench_workload::rate::{ByteCap, Schedule};
use storbench_workload::ObjectNames;
use storbench_workload::{Fadvise, JobKind, JobSpec, RateLimit, Reaping};

const INTERVAL_NS: u64 = 1_000_000_000;

/// The seconds a latency_target search may keep back (a second's report is
/// tens to hundreds of KiB of histograms): fio's searches of a few windows
/// of seconds settle well within it.
const HELD_SECONDS: usize = 120;

/// How long operations still in flight when the measured phase ends may
/// take to complete (they are counted); then they are abandoned, counted as
/// cut off, and the time waited for them is not measured: a server that
/// stops answering neither stretches the phase nor holds up a Ctrl-C.
pub const DRAIN_GRACE_NS: u64 = 1_000_000_000;

/// The longest single wait for completions, so a stop or a deadline is
/// seen while a server is silent.
const WAIT_SLICE: Duration = Duration::from_millis(50);

const WAIT_SLICE_NS: u64 = 50_000_000;

/// How a worker talks to its agent: reports out, emptied reports back, and
/// the run's start gate and stop requests.
pub struct WorkerLink {
    pub tx: SyncSender<FromAgent>,
    pub spare: Receiver<Box<IntervalReport>>,
    pub control: Arc<RunControl>,
    /// This worker's job alone must end its measured phase (steady state).
    pub job_stop: Arc<std::sync::atomic::AtomicBool>,
    /// The run's tables of acknowledged writes (jobs that verify).
    pub verify: Arc<crate::verify::VerifyTables>,
}

/// What the loop consults on every batch, derived once from the share:
/// reaching it through the shared `JobShare` costs a pointer chase per use
/// in the hottest loop (measured: about 5 ns per operation on the null engine).
#[derive(Clone, Copy)]
struct Consts {
    end_ns: Option<u64>,
    ramp_ns: u64,
    think_ns: u64,
    think_blocks: u32,
    data_only: bool,
    /// Drop the files' page cache at the end of each pass (fio `invalidate`).
    invalidate: bool,
    /// fio's log window (`log_avg_msec`) in ns; 0 when no log was asked for.
    log_window_ns: u64,
    /// fio's histogram log window (`log_hist_msec`) in ms; 0: none.
    hist_window_ms: u64,
    rate_min: Option<RateLimit>,
    /// The job reads / writes blocks (rate_min applies to block jobs).
    reads: bool,
    writes: bool,
    /// fio's completion batching (`iodepth_batch_complete_min`/`_max`,
    /// `iodepth_low`) for this worker's queue depth.
    reap: Reaping,
    /// The engine submits in `queue` (`EngineConfig::submits_in_queue`): each
    /// I/O's submission latency is kept apart, as fio's slat.
    sent_apart: bool,
    /// fio's `max_latency`, reads' and writes' (ns, 0: none).
    max_latency: Option<[u64; 2]>,
}

impl Consts {
    fn of(share: &JobShare) -> Consts {
        let spec = &share.spec;
        Consts {
            end_ns: share.end_ns,
            ramp_ns: share.ramp_ns,
            think_ns: spec.thinktime.as_nanos() as u64,
            think_blocks: spec.thinktime_blocks,
            data_only: spec.sync.is_some_and(|x| x.data_only),
            // As fio: O_DIRECT reads bypass the cache, and dropping it again
            // would put a system call (a device flush, on a block device)
            // inside the measured loop for nothing.
            invalidate: spec.invalidate && !spec.direct,
            log_window_ns: if spec.logs.is_empty() { 0 } else { spec.logs.avg_msec as u64 * 1_000_000 },
            hist_window_ms: spec.logs.hist_window_ms().unwrap_or(0),
            rate_min: spec.rate_min,
            reads: spec.objects.is_none() && spec.read_percent() > 0.0,
            writes: spec.objects.is_none() && spec.read_percent() < 100.0,
            reap: spec.reaping(share.queue_depth),
            sent_apart: false,
            max_latency: spec.max_latency_ns,
        }
    }
}

/// A worker ready to run: files open, buffers filled, engine open.
pub struct Worker {
    // Fields drop in declaration order: the engine goes first, while the
    // buffers and files it may still use (I/O in flight after an error, bodies
    // lent to an HTTP client) are alive.
    engine: Box<dyn Engine>,
    share: Arc<JobShare>,
    worker: u32,
    k: Consts,
    files: Vec<File>,
    buffers: AlignedBuffers,
    /// What it issues: its job's kind's generator.
    gen: JobGen,
    /// How late it issued against the generator's own schedule (a trace's).
    lag: Option<Box<LatencyHistogram>>,
    filler: Filler,
    schedule: Option<Schedule>,
    /// A cap on bytes per second (rados load-gen), per worker.
    cap: Option<ByteCap>,
    report: Box<IntervalReport>,
    link: WorkerLink,
    seq: u64,
    interval_start: u64,
    log: LogWindow,
    /// fio's histogram log, reads and writes (allocated when asked for).
    hist: Option<Box<[PlatWindow; 2]>>,
    /// Set when a direction fell below `rate_min` (or verification failed
    /// fatally): the worker's end.
    below_min: Option<String>,
    min_rate: Option<crate::min_rate::MinRate>,
    /// Stamps writes and judges reads (jobs that verify).
    verify: Option<Checker>,
    /// Its verify pass's reads and length, once it ran.
    pass: Option<Box<storbench_metrics::OpStats>>,
    /// Its passes were read back as they ended (see [`Worker::run_passes`]):
    /// the last one too, so nothing is left to read after the loop.
    passes_verified: bool,
    /// How long its measured phase stood still reading passes back.
    between_passes_ns: u64,
    /// Where the measured loop's current interval ends (0: not begun).
    boundary: u64,
    /// The job's engine configuration (a verified object job's listing).
    config: Arc<dyn EngineConfig>,
    /// fio's write_iolog, when asked for.
    iolog: Option<IologWriter>,
    /// fio's per-I/O logs (`log_avg_msec=0`), when asked for.
    unit_log: Option<UnitLogWriter>,
    /// Operations in flight when the measured phase ended that did not
    /// complete within [`DRAIN_GRACE_NS`]: abandoned, not counted.
    cut_off: u64,
    /// The target ended (the other end of a stream closed it): the job
    /// ends as when its size is reached.
    target_ended: bool,
    /// fio's flow control, when the job has a flow weight.
    flow: Option<crate::flow::Gate>,
    /// Which priority each read and write carries (jobs with `prio`,
    /// `prioclass` or the cmdprio options).
    prio: Option<PrioPicker>,
    /// fio's latency_target search over queue depth (jobs that set one).
    latency: Option<latency::LatencyCtl>,
    /// While that search has not settled, the seconds it measured are
    /// kept back: once it settles they were its warm-up (fio resets its
    /// figures there); if the job ends first they are its figures.
    /// Boxed as they travel (`FromAgent::Interval`): kept, not copied. At
    /// most [`HELD_SECONDS`]: a search still going then keeps its seconds
    /// in the job's figures (sent, and not started over when it settles).
    #[allow(clippy::vec_box)]
    held: Option<Vec<Box<IntervalReport>>>,
}

impl Worker {
    /// Open files and engine and fill the buffers; errors here name the
    /// file or the call.
    pub fn set_up(
        share: Arc<JobShare>,
        worker: u32,
        factory: &'static dyn EngineFactory,
        config: Arc<dyn EngineConfig>,
        link: WorkerLink,
    ) -> Result<Worker, WorkerError> {
        let spec = &share.spec;
        let mine = share.targets.files_of(worker);
        // Metadata engines that work on names get paths and no descriptors
        // (a file to create does not exist yet, one to delete is not held open).
        let by_name = factory.file_ops().is_some_and(|o| !o.opened);
        let paths: Vec<std::path::PathBuf> = if by_name { mine.iter().map(|t| t.path.clone()).collect() } else { Vec::new() };
        let files: Vec<File> = if by_name { Vec::new() } else { mine.iter().map(|t| open_file(t, spec)).collect::<Result<_, _>>()? };
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let qd = share.queue_depth as usize;
        // A job that reads its writes back does so in larger reads than its blocks.
        let slot_len = crate::verify::read_back_len(spec).unwrap_or(spec.buffer_len());
        let mut buffers = AlignedBuffers::new(qd, (slot_len as usize).max(1)).map_err(WorkerError::System)?;
        let filler = Filler::new(&spec.data).for_worker(share.job, worker);
        for s in 0..qd as u32 {
            filler.init(buffers.slot_mut(s));
        }
        let names = share
            .object_prefix
            .as_deref()
            .map(|p| ObjectNames::new(&crate::volumes::object_prefix(p, spec, worker), spec.objects.as_ref()));
        let setup = WorkerSetup {
            fds: &fds,
            paths: &paths,
            buffers: buffers.lend(),
            queue_depth: share.queue_depth,
            reap_max: spec.reaping(share.queue_depth).max,
            direct: spec.direct,
            object_names: names.as_ref(),
            keep_reads: spec.verify.as_ref().is_some_and(|v| v.checksum.is_some()),
            stop: &|| link.control.stopping(),
            worker,
        };
        let mut engine = config.open(&setup)?;
        if let Some(first_unit) = crate::volumes::first_unit(&share, worker).filter(|u| *u > 0) {
            engine = Box::new(crate::volumes::OnVolume { inner: engine, first_unit });
        }
        let verify = Checker::new(&share, worker, &link.verify, qd, buffers.slot_len() as u64)?;
        let timed_passes = verify.as_ref().and_then(|v| v.time_based_passes(&share, factory.capabilities().queued));
        let (rank, ranks) = share.rank(worker);
        let at = GenSetup {
            job: share.job,
            worker,
            workers: share.workers,
            rank,
            ranks,
            queue_depth: share.queue_depth,
            region: worker_region(&share, worker),
            io_limit: share.io_limit,
            ordered: factory.capabilities().ordered,
            trace: &|r| crate::replay::load(&r.path),
            // fio reads each pass back before the next (see `Worker::run_passes`).
            verify_each_pass: timed_passes.unwrap_or_else(|| verify.as_ref().is_some_and(|v| v.verifies_each_pass(&share))),
        };
        let gen = JobGen::new(spec, &at).map_err(WorkerError::Input)?;
        let lag = gen.scheduled().then(|| Box::new(LatencyHistogram::new()));
        let iolog = IologWriter::create(spec, worker, target_names(&share, worker)).map_err(WorkerError::System)?;
        let unit_log = UnitLogWriter::create(spec, worker).map_err(WorkerError::System)?;
        let sent_apart = config.submits_in_queue();
        let report = Box::new(new_report(&share, worker, sent_apart));
        let schedule = share.ops_per_sec.map(|r| Schedule::new(r, spec.rate_process, 0));
        let cap = spec.byte_cap.map(|b| ByteCap::new(b / f64::from(spec.numjobs.max(1))));
        let k = Consts { sent_apart, ..Consts::of(&share) };
        // fio starts the search over where its ramp ends (reset_all_stats).
        let latency = spec.latency_target.as_ref().map(|t| latency::LatencyCtl::new(t, share.queue_depth, share.ramp_ns));
        // latency_run never settles, so nothing it measured is taken back.
        let latency_held = spec.latency_target.filter(|t| !t.keep_adjusting).map(|_| Vec::new());
        let flow = spec.flow.filter(|f| f.weight > 0).map(|f| link.control.flows.join(f.id, f.weight, f.sleep.as_nanos() as u64));
        let prio = spec.prio.as_ref().map(|p| PrioPicker::new(p, spec.seed ^ stream(share.job, worker)));
        set_thread_ioprio(spec.prio.as_ref().map_or(0, |p| p.job_value())).map_err(WorkerError::System)?;
        Ok(Worker {
            share,
            worker,
            k,
            files,
            buffers,
            engine,
            gen,
            lag,
            filler,
            schedule,
            cap,
            report,
            link,
            seq: 0,
            interval_start: 0,
            log: LogWindow::default(),
            hist: None,
            below_min: None,
            min_rate: k.rate_min.filter(|_| k.reads || k.writes).map(|m| crate::min_rate::MinRate::new(m, k.ramp_ns)),
            verify,
            pass: None,
            // A time-based job's last pass, cut short by its runtime, is not read back.
            passes_verified: timed_passes.is_some(),
            between_passes_ns: 0,
            boundary: 0,
            config,
            iolog,
            unit_log,
            cut_off: 0,
            target_ended: false,
            flow,
            prio,
            latency,
            held: latency_held,
        })
    }

    /// Run to the end (time, byte budget or stop request) and report.
    pub fn run(mut self, clock: Clock) -> WorkerDone {
        precise_timers();
        let cpu0 = CpuTimes::thread();
        let only = self.verify.as_ref().is_some_and(|v| v.spec.only);
        if let Some(v) = self.verify.as_mut() {
            v.measuring = true;
        }
        // Kinds without storage have phases of their own; the others' generator is the job's kind.
        let share = Arc::clone(&self.share);
        let result: Result<Option<u64>, Failed> = match &share.spec.kind {
            _ if only => Ok(None),
            JobKind::Program(e) => self.program(&clock, e.clone()).map(Some),
            JobKind::Burn(b) => Ok(Some(self.burn(&clock, *b))),
            JobKind::Io | JobKind::Meta(_) | JobKind::Replay(_) | JobKind::Train(_) | JobKind::KvCache(_) | JobKind::VectorDb(_) => {
                self.run_passes(&clock)
            }
        };
        // Operations abandoned at the end: the phase ended then, not when they were given up on.
        let measured_end = result.as_ref().ok().copied().flatten();
        let result = result.map(|_| ());
        // The last batches' compute: the accelerator is busy until it ends.
        if let (Some(end), Ok(())) = (self.gen.busy_until(), &result) {
            if !self.link.control.stopping() {
                sleep_until(&clock, end);
            }
        }
        if let Some(v) = self.verify.as_mut() {
            v.measuring = false;
        }
        let result = result.and_then(|_| {
            let below = self.below_min.take().map_or(Ok(()), |m| Err(WorkerError::Storage(m)));
            below.and_then(|_| self.end_fsync()).map_err(|e| e.in_stage(Stage::Measure))
        });
        let end = measured_end.unwrap_or_else(|| clock.now());
        self.gen.ended(end);
        // The log is written out whatever became of the run: it is what
        // shows how far a failed run got.
        let result = match (self.iolog.take().map(|log| log.finish(end)), result) {
            (Some(Err(log)), Err(e)) => Err(e.and(WorkerError::System(log))),
            (Some(Err(log)), Ok(())) => Err(WorkerError::System(log).in_stage(Stage::Measure)),
            (_, result) => result,
        };
        let result = match (self.unit_log.take().map(UnitLogWriter::finish), result) {
            (Some(Err(log)), Err(e)) => Err(e.and(WorkerError::System(log))),
            (Some(Err(log)), Ok(())) => Err(WorkerError::System(log).in_stage(Stage::Measure)),
            (_, result) => result,
        };
        if self.log.end > 0 {
            // Windows that ended while no I/O completed, then the last,
            // partial one (fio writes that to latency logs only).
            let (ramp, window) = (self.k.ramp_ns, self.k.log_window_ns);
            while end >= self.log.end {
                self.log.close(&mut self.report.log, (self.log.end - ramp) / 1_000_000, window / 1_000_000);
                self.log.end += window;
            }
            let part = (end - (self.log.end - window)) / 1_000_000;
            self.log.close(&mut self.report.log, end.saturating_sub(ramp) / 1_000_000, part);
        }
        self.hand_over(end, end);
        // A latency_target search that never settled: its seconds are the job's.
        self.release_held(false);
        let result = result.and_then(|_| self.read_back().map_err(|e| e.in_stage(Stage::Verify)));
        let result = result.and_then(|_| self.clean_up().map_err(|e| e.in_stage(Stage::Cleanup)));
        self.done(end, CpuTimes::thread().since(cpu0), result.err())
    }

    /// The measured loop, pass by pass where the job reads each pass back
    /// before the next (fio's do_verify inside keep_running's loop): the
    /// generator stops at a pass's end, the pass is verified, its reads
    /// counted, and the generator says whether another follows.
    ///
    /// As in fio, the read-back is not the writes' runtime: the time it
    /// took is kept apart (`WorkerDone::between_passes_ns`) and the rate
    /// schedule moves on by it; a read-back that fails, or finds data
    /// wrong, ends the job there (fio stops on the error do_verify sets)
    /// in the verify stage.
    fn run_passes(&mut self, clock: &Clock) -> Result<Option<u64>, Failed> {
        loop {
            let end = self.run_loop(clock).map_err(|e| WorkerError::from(e).in_stage(Stage::Measure))?;
            if end.is_some() || !self.gen.pass_ended() || self.link.control.stopping() || self.target_ended {
                return Ok(end);
            }
            let (t0, failed0) = (clock.now(), self.verify.as_ref().map_or(0, |v| v.tally.failures_total()));
            let until = self.k.end_ns.map(|end| (clock, end));
            let read = self.read_pass(until).map_err(|e| e.in_stage(Stage::Verify))?;
            let paused = clock.now().saturating_sub(t0);
            self.between_passes_ns += paused;
            if let Some(s) = self.schedule.as_mut() {
                s.pause(paused);
            }
            self.pass_judged(failed0).map_err(|e| e.in_stage(Stage::Verify))?;
            self.gen.count_read(read);
            if !self.gen.next_pass() {
                self.passes_verified = true;
                return Ok(None);
            }
        }
    }

    /// After a pass's read-back: a failure it found (`failed0` were found
    /// before it) ends the job, as in fio, whether or not `verify_fatal`
    /// asked to stop at the first (it asks that within a pass).
    fn pass_judged(&mut self, failed0: u64) -> Result<(), WorkerError> {
        let Some(v) = self.verify.as_mut() else { return Ok(()) };
        if let Some(m) = v.fatal.take() {
            return Err(WorkerError::Storage(format!("{m}; no pass after it was written, as in fio")));
        }
        let found = v.tally.failures_total() - failed0;
        if found == 0 {
            return Ok(());
        }
        let first = v.tally.failures.get(failed0 as usize).map(|f| format!(", the first at {} offset {}: {}", f.target, f.offset, f.what));
        let first = first.unwrap_or_default();
        Err(WorkerError::Storage(format!(
            "verify failed reading a pass back ({found} failures{first}); no pass after it was written, as in fio"
        )))
    }

    /// fio `end_fsync`: each file flushed once the I/O is done, inside the
    /// job's time but not among its operations (as in fio); a failure is the
    /// worker's error.
    fn end_fsync(&self) -> Result<(), WorkerError> {
        if !(self.share.spec.end_fsync && self.share.spec.writes()) {
            return Ok(());
        }
        for (f, t) in self.files.iter().zip(self.share.targets.files_of(self.worker)) {
            f.sync_all().map_err(|e| WorkerError::System(format!("end_fsync of {}: {e}", t.path.display())))?;
        }
        Ok(())
    }

    /// How long after the group's start this job begins (fio `startdelay`).
    pub fn start_delay(&self) -> std::time::Duration {
        self.share.spec.start_delay
    }

    /// A job that waited for another (fio `wait_for`) starts now: fio sets
    /// it up only then, so its `invalidate` drops what the job it waited
    /// for left in the page cache (the files were opened, and their cache
    /// dropped, before that job ran).
    pub fn waited(&self) {
        if self.k.invalidate {
            self.drop_caches();
        }
    }

    /// Stopped before the start: nothing measured, but what set-up wrote
    /// (a prefill) is still removed.
    pub fn cancelled(mut self) -> WorkerDone {
        let cpu0 = CpuTimes::thread();
        let result = self.clean_up().map_err(|e| e.in_stage(Stage::Cleanup));
        self.done(0, CpuTimes::thread().since(cpu0), result.err())
    }

    fn done(&self, end_ns: u64, cpu: CpuTimes, failed: Option<Failed>) -> WorkerDone {
        let (error, failure) = failed.map(|f| f.reported()).unzip();
        let last_seq = self.seq.checked_sub(1);
        let verify = self.verify.as_ref().map(|v| Box::new(v.tally.clone()));
        let kind = self.gen.tally().map(|t| Box::new(KindTally::of(t, self.lag.as_deref())));
        WorkerDone {
            job: self.share.job,
            worker: self.worker,
            last_seq,
            end_ns,
            start_ns: 0,
            cpu,
            error,
            failure,
            objects_left: self.gen.objects_left(),
            verify,
            pass: self.pass.clone(),
            kind,
            cut_off: self.cut_off,
            between_passes_ns: self.between_passes_ns,
            latency_depth: self.latency.as_ref().map(|l| l.qd),
            measured_from_ns: (self.k.ramp_ns != self.share.ramp_ns).then_some(self.k.ramp_ns),
        }
    }
}

/// fio's `prio`/`prioclass`: the calling thread's I/O priority, set with
/// ioprio_set (IOPRIO_WHO_PROCESS with 0 is the calling thread), before the
/// worker does any I/O; 0 leaves it as it is.
fn set_thread_ioprio(value: u16) -> Result<(), String> {
    if value == 0 {
        return Ok(());
    }
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    // SAFETY: a plain system call with integer arguments.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, libc::c_int::from(value)) };
    if rc != 0 {
        let (class, level) = storbench_workload::prio::parts(value);
        return Err(format!(
            "ioprio_set(class {class}, level {level}) failed: {} (the real-time class needs CAP_SYS_ADMIN or CAP_SYS_NICE)",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// How fio's iolog names a worker's targets: its files' paths, or the
/// store's label for engines that bring their own target.
fn target_names(share: &JobShare, worker: u32) -> Vec<String> {
    let files = share.targets.files_of(worker);
    match files.is_empty() {
        true => share.targets.labels(),
        false => files.iter().map(|f| f.path.display().to_string()).collect(),
    }
}

/// The job's region, moved along by `offset_increment` for each worker of
/// its volume before this one (the plan made sure the last one fits).
fn worker_region(share: &JobShare, worker: u32) -> storbench_workload::gen::Region {
    let mut r = share.region;
    r.start += share.spec.place_in_volume(worker) as u64 * share.spec.offset_increment;
    r
}

/// Open one of the worker's files; with `invalidate` (the default, as in fio)
/// its page cache is dropped first, so a buffered job does not start warm
/// from the layout or from the job before it; then the access pattern is
/// told to the kernel as fio does (`fadvise_hint`).
fn open_file(t: &storbench_engine::TargetFile, spec: &JobSpec) -> Result<File, WorkerError> {
    let f = files::open(t, spec.writes(), spec.direct, spec.open_sync)?;
    if spec.invalidate && !spec.direct {
        files::drop_cache(&f, &t.path)?;
    }
    match spec.fadvise {
        Fadvise::Off => {}
        Fadvise::Pattern => files::advise(&f, spec.rw.is_random()),
        Fadvise::Random => files::advise(&f, true),
        Fadvise::Sequential => files::advise(&f, false),
    }
    Ok(f)
}

/// Tell the coordinator a worker begins unmeasured work that takes time.
fn announce(link: &WorkerLink, share: &JobShare, worker: u32, stage: Stage) {
    let _ = link.tx.send(FromAgent::Stage { id: WorkerId { job: share.job, worker }, stage });
}

/// An empty interval report for this worker, with its job's size classes.
/// The service time is kept apart in fixed-rate runs and where the engine
/// submits apart (fio's clat, from the submission).
fn new_report(share: &JobShare, worker: u32, sent_apart: bool) -> IntervalReport {
    let classes = share.spec.objects.as_ref().map_or(0, |o| o.sizes.classes().len());
    IntervalReport::new(share.job, worker, share.paced() || sent_apart).with_classes(classes).with_prios(share.prio_values().len())
}
