//! One worker: a workload generator, an engine and an interval recorder on one
//! thread. The loop is prep -> submit -> reap: it reads the clock once per
//! batch, takes no lock, allocates nothing and formats nothing; it hands its
//! interval report over once per second and takes an empty one back.

use crate::agent::RunControl;
use crate::buffers::AlignedBuffers;
use crate::clock::{precise_timers, sleep_until, Clock, SPIN_NS};
use crate::iolog::IologWriter;
use crate::unit_log::UnitLogWriter;
use crate::verify::Checker;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storbench_engine::files;
use storbench_engine::{Completion, Engine, EngineConfig, EngineFactory, IoRequest, WorkerSetup};
use storbench_metrics::ReplayTally;
use storbench_metrics::{CpuTimes, ErrorKind, IntervalReport, IoFailure, LogSample, OpStats, PlatWindow};
use storbench_model::protocol::{FromAgent, JobShare, Stage, WorkerDone, WorkerId};
use storbench_workload::data::Filler;
use storbench_workload::gen::stream;
use storbench_workload::prio::PrioPicker;
use storbench_workload::rate::{ByteCap, Schedule};
use storbench_workload::trace::ReplayGen;
use storbench_workload::train::TrainGen;
use storbench_workload::ObjectNames;
use storbench_workload::{Fadvise, IoGen, JobSpec, NextIo, ObjGen, OpKind, RateLimit, Reaping, Settled};

const INTERVAL_NS: u64 = 1_000_000_000;

/// How long operations still in flight when the measured phase ends may
/// take to complete (they are counted); then they are abandoned, counted as
/// cut off, and the time waited for them is not measured: a server that
/// stops answering neither stretches the phase nor holds up a Ctrl-C.
pub const DRAIN_GRACE_NS: u64 = 1_000_000_000;
/// The same after a Ctrl-C during unmeasured work (a cleanup cut short).
const CUT_GRACE: Duration = Duration::from_millis(250);
/// Unmeasured work (prefill, cleanup, reading back) in which no operation
/// succeeds for this long gives up: the store stopped answering. What is
/// left is then reported, with the command that removes it.
pub const STALL: Duration = Duration::from_secs(10);
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

/// Blocks of files and devices, named objects, or a recorded trace.
enum Gen {
    Blocks(IoGen),
    Objects(ObjGen),
    Replay(Box<Replaying>),
    Train(Box<TrainGen>),
}

/// A worker's share of a trace and how late it is being issued.
struct Replaying {
    gen: ReplayGen,
    /// For the data written (the trace decides everything else).
    rng: storbench_workload::rng::Rng,
    tally: ReplayTally,
}

impl Gen {
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        match self {
            Gen::Blocks(g) => g.next(),
            Gen::Objects(g) => g.next(),
            Gen::Replay(r) => r.gen.next(),
            Gen::Train(t) => t.next(),
        }
    }
    #[inline]
    fn take_wrapped(&mut self) -> bool {
        match self {
            Gen::Blocks(g) => g.take_wrapped(),
            Gen::Objects(_) | Gen::Replay(_) | Gen::Train(_) => false,
        }
    }
    #[inline]
    fn rng(&mut self) -> &mut storbench_workload::rng::Rng {
        match self {
            Gen::Blocks(g) => g.rng(),
            Gen::Objects(g) => g.rng(),
            Gen::Replay(r) => &mut r.rng,
            Gen::Train(t) => t.rng(),
        }
    }
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
    gen: Gen,
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
    /// The job's engine configuration (a verified object job's listing).
    config: Arc<dyn EngineConfig>,
    /// fio's write_iolog, when asked for.
    iolog: Option<IologWriter>,
    /// fio's per-I/O logs (`log_avg_msec=0`), when asked for.
    unit_log: Option<UnitLogWriter>,
    /// Operations in flight when the measured phase ended that did not
    /// complete within [`DRAIN_GRACE_NS`]: abandoned, not counted.
    cut_off: u64,
    /// fio's flow control, when the job has a flow weight.
    flow: Option<crate::flow::Gate>,
    /// Which priority each read and write carries (jobs with `prio`,
    /// `prioclass` or the cmdprio options).
    prio: Option<PrioPicker>,
}

/// Where the loop stands, apart from the slots.
#[derive(Default)]
struct LoopState {
    /// The byte budget is spent.
    exhausted: bool,
    /// Time is up or a stop was requested: drain in-flight I/O and finish.
    stopping: bool,
    /// fio's think time: after `thinktime_blocks` I/Os have completed, pause
    /// until `think_until`.
    since_think: u32,
    think_armed: bool,
    think_until: u64,
    /// Held by flow control: wait for what is in flight, then flow_sleep.
    flow_armed: bool,
    /// The queue filled up and is being drained to `iodepth_low` before it
    /// is filled again (fio's wait_for_completions).
    draining: bool,
    /// Held by flow control with nothing in flight and no flow_sleep: the
    /// worker sleeps [`crate::flow::RETRY_NS`] rather than spin.
    flow_retry: bool,
    /// When the measured phase ended (the planned end, or when a stop came):
    /// completions after it still count, time waited past it for operations
    /// that never complete does not.
    ended_at: u64,
}

impl LoopState {
    fn may_issue(&self, now: u64) -> bool {
        !self.stopping && !self.exhausted && !self.think_armed && !self.flow_armed && !self.draining && now >= self.think_until
    }
}

/// Per-slot bookkeeping of in-flight I/O.
struct Slots {
    free: Vec<u32>,
    scheduled: Vec<u64>,
    issued: Vec<u64>,
    op: Vec<OpKind>,
    len: Vec<u32>,
    file: Vec<u32>,
    offset: Vec<u64>,
    class: Vec<u8>,
    /// Index of the I/O's priority in the job's list (`PrioPicker::values`).
    prio: Vec<u8>,
}

impl Slots {
    fn new(qd: usize) -> Slots {
        Slots {
            free: (0..qd as u32).rev().collect(),
            scheduled: vec![0; qd],
            issued: vec![0; qd],
            op: vec![OpKind::Read; qd],
            len: vec![0; qd],
            file: vec![0; qd],
            offset: vec![0; qd],
            class: vec![0; qd],
            prio: vec![0; qd],
        }
    }
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
    ) -> Result<Worker, String> {
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
        let mut buffers = AlignedBuffers::new(qd, (slot_len as usize).max(1))?;
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
        };
        let mut engine = config.open(&setup).map_err(|e| e.to_string())?;
        if let Some(first_unit) = crate::volumes::first_unit(&share, worker).filter(|u| *u > 0) {
            engine = Box::new(crate::volumes::OnVolume { inner: engine, first_unit });
        }
        let verify = Checker::new(&share, worker, &link.verify, qd, buffers.slot_len() as u64)?;
        let gen = match (&spec.train, &spec.replay, &spec.objects) {
            (Some(t), _, _) => {
                let region = match spec.objects {
                    Some(_) => storbench_workload::gen::Region { files: 0, start: 0, len: t.file_bytes() },
                    None => worker_region(&share, worker),
                };
                Gen::Train(Box::new(TrainGen::new(t, region, worker, share.workers, spec.seed ^ worker as u64)))
            }
            (None, Some(r), _) => Gen::Replay(Box::new(Replaying {
                gen: ReplayGen::new(
                    crate::replay::load(&r.path)?,
                    r,
                    worker_region(&share, worker),
                    worker,
                    share.workers,
                    share.queue_depth,
                ),
                rng: storbench_workload::rng::Rng::new(spec.seed ^ worker as u64),
                tally: ReplayTally::default(),
            })),
            (None, None, Some(_)) => {
                // Each volume's keys are shared out as in a job of one volume.
                let mut g = ObjGen::new(spec, spec.place_in_volume(worker), share.io_limit, spec.number_ios);
                g.exclusive(!factory.capabilities().ordered);
                Gen::Objects(g)
            }
            (None, None, None) => Gen::Blocks(IoGen::new(spec, worker_region(&share, worker), stream(share.job, worker), share.io_limit)),
        };
        let iolog = IologWriter::create(spec, worker, target_names(&share, worker))?;
        let unit_log = UnitLogWriter::create(spec, worker)?;
        let report = Box::new(new_report(&share, worker));
        let schedule = share.ops_per_sec.map(|r| Schedule::new(r, spec.rate_process, 0));
        let cap = spec.byte_cap.map(|b| ByteCap::new(b / f64::from(spec.numjobs.max(1))));
        let k = Consts::of(&share);
        let flow = spec.flow.filter(|f| f.weight > 0).map(|f| link.control.flows.join(f.id, f.weight, f.sleep.as_nanos() as u64));
        let prio = spec.prio.as_ref().map(|p| PrioPicker::new(p, spec.seed ^ stream(share.job, worker)));
        set_thread_ioprio(spec.prio.as_ref().map_or(0, |p| p.job_value()))?;
        Ok(Worker {
            share,
            worker,
            k,
            files,
            buffers,
            engine,
            gen,
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
            config,
            iolog,
            unit_log,
            cut_off: 0,
            flow,
            prio,
        })
    }

    /// For object jobs that ask for it, write the objects the measured phase
    /// uses (a Stop ends that early). A failure is the worker's end: see
    /// [`Worker::abandoned`].
    pub fn prefill(&mut self) -> Result<(), String> {
        if let Gen::Replay(r) = &self.gen {
            let before = r.gen.objects_before();
            return self.write_unmeasured(before, "objects the trace found in place");
        }
        if let (Gen::Train(_), Some(_)) = (&self.gen, &self.share.spec.objects) {
            let files = dataset_share(&self.share, self.worker)?.map(|file| NextIo { op: OpKind::Create, whole: true, ..file });
            return self.write_unmeasured(files.collect(), "the training dataset");
        }
        let (Gen::Objects(g), Some(o)) = (&mut self.gen, &self.share.spec.objects) else {
            return Ok(());
        };
        if !o.prefill {
            return Ok(());
        }
        let what = format!("prefill of {} objects", g.live());
        announce(&self.link, &self.share, self.worker, Stage::Prefill);
        let control = self.link.control.clone();
        let (tried, left) = unmeasured(
            self.engine.as_mut(),
            self.share.queue_depth,
            || g.prefill_next(),
            || control.stopping(),
            OnFailure::Stop,
            hooks(self.verify.as_mut(), &mut self.buffers, self.share.spec.seed).as_mut(),
        );
        left.error(tried).map_or(Ok(()), |e| Err(format!("{what}: {e}")))
    }

    /// Objects a replayed log read before writing them, written first (a
    /// Stop ends that early).
    fn write_unmeasured(&mut self, ios: Vec<NextIo>, what: &str) -> Result<(), String> {
        if ios.is_empty() {
            return Ok(());
        }
        let what = format!("{what} ({} objects)", ios.len());
        announce(&self.link, &self.share, self.worker, Stage::Prefill);
        let control = self.link.control.clone();
        let mut it = ios.into_iter();
        let (tried, left) =
            unmeasured(self.engine.as_mut(), self.share.queue_depth, || it.next(), || control.stopping(), OnFailure::Stop, &mut NoHooks);
        left.error(tried).map_or(Ok(()), |e| Err(format!("{what}: {e}")))
    }

    /// Set-up failed after writing objects (a prefill the store refused
    /// halfway): remove what was written, and report the failure.
    pub fn abandoned(mut self, error: String) -> WorkerDone {
        let cpu0 = CpuTimes::thread();
        let error = match self.clean_up() {
            Ok(()) => error,
            Err(e) => format!("{error}; {e}"),
        };
        self.done(0, CpuTimes::thread().since(cpu0), Some(error))
    }

    /// Run to the end (time, byte budget or stop request) and report.
    pub fn run(mut self, clock: Clock) -> WorkerDone {
        precise_timers();
        let cpu0 = CpuTimes::thread();
        let only = self.verify.as_ref().is_some_and(|v| v.spec.only);
        if let Some(v) = self.verify.as_mut() {
            v.measuring = true;
        }
        let result = match self.share.spec.cpu_burn {
            _ if only => Ok(None),
            Some(b) => Ok(Some(self.burn(&clock, b))),
            None => self.run_loop(&clock).map_err(|e| e.to_string()),
        };
        // Operations abandoned at the end: the phase ended then, not when they were given up on.
        let measured_end = result.as_ref().ok().copied().flatten();
        let result = result.map(|_| ());
        // The last batches' compute: the accelerator is busy until it ends.
        if let (Gen::Train(t), Ok(())) = (&self.gen, &result) {
            if !self.link.control.stopping() {
                sleep_until(&clock, t.tally.end_ns);
            }
        }
        if let Some(v) = self.verify.as_mut() {
            v.measuring = false;
        }
        let result = result.and_then(|_| self.below_min.take().map_or(Ok(()), Err));
        let result = result.and_then(|_| self.end_fsync());
        let end = measured_end.unwrap_or_else(|| clock.now());
        // The log is written out whatever became of the run: it is what
        // shows how far a failed run got.
        let result = match (self.iolog.take().map(|log| log.finish(end)), result) {
            (Some(Err(log)), Err(e)) => Err(format!("{e}; {log}")),
            (Some(Err(log)), Ok(())) => Err(log),
            (_, result) => result,
        };
        let result = match (self.unit_log.take().map(UnitLogWriter::finish), result) {
            (Some(Err(log)), Err(e)) => Err(format!("{e}; {log}")),
            (Some(Err(log)), Ok(())) => Err(log),
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
        let result = result.and_then(|_| self.read_back());
        let result = result.and_then(|_| self.clean_up());
        self.done(end, CpuTimes::thread().since(cpu0), result.err())
    }

    /// fio `end_fsync`: each file flushed once the I/O is done, inside the
    /// job's time but not among its operations (as in fio); a failure is the
    /// worker's error.
    fn end_fsync(&self) -> Result<(), String> {
        if !(self.share.spec.end_fsync && self.share.spec.writes()) {
            return Ok(());
        }
        for (f, t) in self.files.iter().zip(self.share.targets.files_of(self.worker)) {
            f.sync_all().map_err(|e| format!("end_fsync of {}: {e}", t.path.display()))?;
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
        let result = self.clean_up();
        self.done(0, CpuTimes::thread().since(cpu0), result.err())
    }

    fn done(&self, end_ns: u64, cpu: CpuTimes, error: Option<String>) -> WorkerDone {
        let last_seq = self.seq.checked_sub(1);
        let objects_left = match (&self.gen, &self.share.spec.objects) {
            (Gen::Objects(g), Some(o)) if o.cleans_up() => g.left(),
            _ => 0,
        };
        let verify = self.verify.as_ref().map(|v| Box::new(v.tally.clone()));
        let replay = match &self.gen {
            Gen::Replay(r) => {
                let mut t = r.tally.clone();
                (t.remapped, t.left) = (r.gen.remapped, r.gen.left() as u64);
                Some(Box::new(t))
            }
            _ => None,
        };
        let train = match &self.gen {
            Gen::Train(t) => Some(Box::new(t.tally.clone())),
            _ => None,
        };
        WorkerDone {
            job: self.share.job,
            worker: self.worker,
            last_seq,
            end_ns,
            start_ns: 0,
            cpu,
            error,
            objects_left,
            verify,
            replay,
            train,
            cut_off: self.cut_off,
        }
    }

    /// fio's `do_verify` (and `verify_only`): once every writer of the job
    /// is done, read back and check what the job wrote, not measured. A
    /// stop skips it (the verify state, if kept, still allows it later).
    fn read_back(&mut self) -> Result<(), String> {
        let Some(v) = self.verify.as_mut() else { return Ok(()) };
        v.writes_done();
        let control = self.link.control.clone();
        if !(v.spec.only || (v.spec.after && self.share.spec.writes())) || control.stopping() {
            return v.fatal.take().map_or(Ok(()), Err);
        }
        while !v.writers_done() && !control.stopping() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        announce(&self.link, &self.share, self.worker, Stage::Verify);
        let reads = v.pass(&self.share, self.worker, self.buffers.slot_len() as u64);
        let t0 = std::time::Instant::now();
        let mut reads = reads.into_iter();
        let rng = storbench_workload::rng::Rng::new(self.share.spec.seed);
        let mut hooks = Tracked { v: &mut *v, buffers: &mut self.buffers, rng, not_found: 0 };
        // A missing object is a finding (counted by the checker), not a reason to stop reading.
        let policy = OnFailure::GoOn { in_a_row: CLEANUP_GIVES_UP_AFTER };
        let (tried, left) =
            unmeasured(self.engine.as_mut(), self.share.queue_depth, || reads.next(), || control.stopping(), policy, &mut hooks);
        let not_found = hooks.not_found;
        v.tally.pass_ns = t0.elapsed().as_nanos() as u64;
        if left.engine.is_some() || left.failed.len() as u64 > not_found {
            return Err(format!("reading back to verify: {}", left.error(tried).unwrap_or_default()));
        }
        // One listing per job: the first worker's (every writer is done).
        let numbered = self.share.spec.objects.as_ref().is_some_and(|o| o.naming == storbench_workload::Naming::Numbered);
        if let (true, 0, Some(prefix)) = (v.objects() && numbered, self.worker, self.share.object_prefix.as_deref()) {
            check_listing(v, self.config.as_ref(), prefix)?;
        }
        v.fatal.take().map_or(Ok(()), Err)
    }

    /// Remove the objects this worker wrote, when the job asks for it. Not
    /// measured. A Stop that ended the measured phase (or the prefill) lets
    /// it run, so a stopped run leaves nothing; a stop asked for while it
    /// runs (a Ctrl-C during cleanup, or a second one) cuts it short, and
    /// what is left is reported in [`WorkerDone::objects_left`].
    fn clean_up(&mut self) -> Result<(), String> {
        if let (Gen::Train(_), Some(o)) = (&self.gen, &self.share.spec.objects) {
            let keys = dataset_share(&self.share, self.worker)?.map(|io| io.file).collect();
            return if o.cleans_up() { self.remove_replayed(keys) } else { Ok(()) };
        }
        if let (Gen::Replay(r), Some(o)) = (&self.gen, &self.share.spec.objects) {
            return match o.cleans_up() {
                true => self.remove_replayed(r.gen.keys()),
                false => Ok(()),
            };
        }
        let (Gen::Objects(g), Some(o)) = (&mut self.gen, &self.share.spec.objects) else {
            return Ok(());
        };
        if !o.cleans_up() || g.left() == 0 {
            return Ok(());
        }
        let left = g.left();
        let control = self.link.control.clone();
        let begun = control.level();
        let cut = || control.aborting() || control.level() > begun;
        if cut() {
            return Ok(());
        }
        announce(&self.link, &self.share, self.worker, Stage::Cleanup);
        let policy = OnFailure::GoOn { in_a_row: CLEANUP_GIVES_UP_AFTER };
        let (tried, unfinished) = unmeasured(
            self.engine.as_mut(),
            self.share.queue_depth,
            || g.cleanup_next(),
            cut,
            policy,
            hooks(self.verify.as_mut(), &mut self.buffers, 0).as_mut(),
        );
        // Objects whose delete failed are still there: counted as left.
        for key in &unfinished.failed {
            g.delete_failed(*key);
        }
        unfinished.error(tried).map_or(Ok(()), |e| Err(format!("cleanup of {left} objects: {e}")))
    }

    /// Remove every object a replayed log touched (those already gone
    /// count as removed), unless a second stop cuts it short.
    fn remove_replayed(&mut self, keys: Vec<u32>) -> Result<(), String> {
        let control = self.link.control.clone();
        let begun = control.level();
        let cut = || control.aborting() || control.level() > begun;
        if keys.is_empty() || cut() {
            return Ok(());
        }
        announce(&self.link, &self.share, self.worker, Stage::Cleanup);
        let n = keys.len();
        let mut it = keys.into_iter().map(|file| NextIo { op: OpKind::Delete, file, offset: 0, len: 0, whole: false, class: 0 });
        let policy = OnFailure::GoOn { in_a_row: CLEANUP_GIVES_UP_AFTER };
        let (tried, unfinished) = unmeasured(self.engine.as_mut(), self.share.queue_depth, || it.next(), cut, policy, &mut NoHooks);
        unfinished.error(tried).map_or(Ok(()), |e| Err(format!("cleanup of {n} replayed objects: {e}")))
    }

    /// A CPU burner's measured phase instead of the I/O loop (see
    /// `crate::burn`): it ends at the job's end, a stop, or a stop of its
    /// job alone (fio's `exit_on_io_done`, sent when the group's I/O jobs
    /// are done). Returns the phase's end.
    fn burn(&mut self, clock: &Clock, spec: storbench_workload::burn::CpuBurn) -> u64 {
        let mut burner = crate::burn::Burner::new(spec);
        let (control, job_stop) = (self.link.control.clone(), self.link.job_stop.clone());
        let stopped = || control.stopping() || job_stop.load(std::sync::atomic::Ordering::Relaxed);
        let mut boundary = self.next_boundary(clock.now());
        let end_ns = self.k.end_ns;
        crate::burn::run(&mut burner, clock, end_ns, &stopped, &mut |now| {
            if now >= boundary {
                self.hand_over(boundary, now);
                boundary = self.next_boundary(now);
            }
        })
    }

    /// The measured loop. `Some(end)` when operations still in flight at
    /// its end were abandoned: the phase's end, which the time spent waiting
    /// for them does not move.
    fn run_loop(&mut self, clock: &Clock) -> Result<Option<u64>, storbench_engine::EngineError> {
        let qd = self.share.queue_depth as usize;
        let control = self.link.control.clone();
        let mut slots = Slots::new(qd);
        let mut done: Vec<Completion> = Vec::with_capacity(qd * 2);
        let mut st = LoopState::default();
        let mut now = clock.now();
        let mut boundary = self.next_boundary(now);
        let mut last_done = 0;
        loop {
            // Once the phase has ended, what completes in the grace goes into
            // its last interval, which ends where the phase did.
            if now >= boundary && !st.stopping {
                self.hand_over(boundary, now);
                boundary = self.next_boundary(now);
            }
            let job_stopped = self.link.job_stop.load(std::sync::atomic::Ordering::Relaxed);
            if !st.stopping && (control.stopping() || job_stopped || self.k.end_ns.is_some_and(|e| now >= e) || self.below_min.is_some()) {
                st.stopping = true;
                st.ended_at = self.k.end_ns.map_or(now, |e| e.min(now));
            }
            if st.may_issue(now) {
                self.fill(&mut slots, &mut st, now)?;
                st.draining = self.drains(qd - slots.free.len(), qd);
            }
            // A worker draining to iodepth_low issues nothing: no pace to wake for.
            let can_issue = !slots.free.is_empty() && !st.exhausted && !st.think_armed && !st.flow_armed && !st.stopping && !st.draining;
            let (pace, housekeeping) = self.next_events(can_issue, now, st.think_until, boundary);
            if slots.free.len() == qd {
                if st.stopping || st.exhausted {
                    return Ok(None);
                }
                if std::mem::take(&mut st.flow_retry) {
                    // The worker waits for the other jobs of its flow to
                    // issue, so it gives up the CPU: spun, it took the time
                    // they needed wherever they shared a CPU (the workers
                    // of one process share its scheduling group).
                    std::thread::sleep(std::time::Duration::from_nanos(crate::flow::RETRY_NS));
                } else {
                    sleep_until(clock, pace.min(housekeeping));
                }
                now = clock.now();
                continue;
            }
            let grace_over = now >= st.ended_at + DRAIN_GRACE_NS || control.aborting();
            if st.stopping && grace_over && self.engine.abandon() {
                self.forget_in_flight(&mut slots);
                return Ok(Some(st.ended_at.max(last_done)));
            }
            // A full queue waits for iodepth_batch_complete_min of what is in flight (at least one).
            let in_flight = (qd - slots.free.len()) as u32;
            let want = match slots.free.is_empty() || st.draining {
                true => self.k.reap.min.min(in_flight).max(1),
                false => 1,
            };
            self.wait(&mut done, want, st.stopping, now, pace, housekeeping)?;
            now = clock.now();
            if !done.is_empty() {
                last_done = now;
            }
            for c in done.drain(..) {
                self.complete(&mut slots, c, now);
            }
            st.draining &= qd - slots.free.len() > self.k.reap.low as usize;
            if st.think_armed && slots.free.len() == qd {
                st.think_armed = false;
                st.think_until = now + self.k.think_ns;
            }
            if st.flow_armed && slots.free.len() == qd {
                st.flow_armed = false;
                st.think_until = now + self.flow.as_ref().map_or(0, |f| f.sleep_ns);
            }
        }
    }

    /// Whether the worker, `in_flight` of `qd` after filling, collects
    /// completions before it issues again: a full queue drained to
    /// iodepth_low, or, polling (fio's iodepth_batch_complete_min=0 without
    /// a max), any I/O in flight.
    #[inline]
    fn drains(&self, in_flight: usize, qd: usize) -> bool {
        match self.k.reap.polls {
            true => in_flight > 0,
            false => in_flight == qd && (self.k.reap.low as usize) < qd,
        }
    }

    /// Issue into every free slot, as far as the schedule and think time
    /// allow (polling: one I/O, as fio's loop waits after each).
    #[inline]
    fn fill(&mut self, slots: &mut Slots, st: &mut LoopState, now: u64) -> Result<(), storbench_engine::EngineError> {
        let thinks = self.k.think_ns > 0;
        while let Some(&slot) = slots.free.last() {
            if self.flow_held(slots, st, now) {
                break;
            }
            let Some(scheduled) = self.take_start(now) else { break };
            let next = match self.verify.as_mut().and_then(Checker::backlog_next) {
                Some(io) => Some(io),
                None => self.gen.next(),
            };
            let Some(io) = next else {
                st.exhausted = true;
                break;
            };
            if self.k.invalidate && self.gen.take_wrapped() {
                self.drop_caches();
            }
            slots.free.pop();
            self.issue(slots, slot, io, scheduled, now)?;
            if thinks {
                st.since_think += 1;
                if st.since_think >= self.k.think_blocks {
                    st.since_think = 0;
                    st.think_armed = true;
                    break;
                }
            }
            if self.k.reap.polls {
                break;
            }
        }
        Ok(())
    }

    /// fio's flow control: held, the worker waits as fio's does (with
    /// flow_sleep: for what is in flight, then that long; without: for the
    /// next completion, or [`crate::flow::RETRY_NS`] when none is in flight).
    #[inline]
    fn flow_held(&mut self, slots: &Slots, st: &mut LoopState, now: u64) -> bool {
        let Some(f) = self.flow.as_mut() else { return false };
        if !f.held() {
            return false;
        }
        let idle = slots.free.len() == slots.scheduled.len();
        match (f.sleep_ns, idle) {
            (0, true) => {
                st.think_until = now + crate::flow::RETRY_NS;
                st.flow_retry = true;
            }
            (0, false) => {}
            (sleep, true) => st.think_until = now + sleep,
            (_, false) => st.flow_armed = true,
        }
        true
    }

    /// When the next operation is to start: `None` if not yet (a fixed-rate
    /// arrival or a trace's record still ahead, a replayed operation that
    /// must wait for one in flight on its blocks, or reads a training run's
    /// accelerator is not ready for).
    #[inline]
    fn take_start(&mut self, now: u64) -> Option<u64> {
        if let Gen::Train(t) = &self.gen {
            return match t.wait(now) {
                None => Some(now),
                // Every read issued: the generator says so next.
                Some(u64::MAX) if t.finished() => Some(now),
                Some(_) => None,
            };
        }
        if let Gen::Replay(r) = &self.gen {
            return match r.gen.due() {
                _ if r.gen.blocked() => None,
                Some(t) if t > now => None,
                // Without stalls nothing is scheduled: latency from the issue.
                Some(_) if r.gen.unpaced() => Some(now),
                Some(t) => Some(t),
                // The end: the generator says so next.
                None => Some(now),
            };
        }
        match (self.schedule.as_mut(), &self.cap) {
            (Some(s), _) if s.peek() > now => None,
            (Some(s), _) => Some(s.advance(self.gen.rng())),
            (None, Some(c)) if c.next_at() > now => None,
            (None, _) => Some(now),
        }
    }

    /// When a pass over the files ended, drop their page cache as fio does
    /// (best effort, as in fio: the pass goes on either way).
    #[cold]
    fn drop_caches(&self) {
        for f in &self.files {
            let _ = files::drop_cache(f, std::path::Path::new(""));
        }
    }

    /// Submit and collect completions: block until `want` arrive, the next
    /// housekeeping time, or shortly before the next paced start, which is then
    /// awaited by polling so it is not issued late.
    #[inline]
    fn wait(
        &mut self,
        done: &mut Vec<Completion>,
        want: u32,
        stopping: bool,
        now: u64,
        pace: u64,
        housekeeping: u64,
    ) -> Result<(), storbench_engine::EngineError> {
        if stopping {
            return self.engine.submit_and_reap(1, Some(WAIT_SLICE), done);
        }
        if pace.saturating_sub(now) <= SPIN_NS {
            return self.engine.submit_and_reap(0, None, done);
        }
        // Woken at least every slice, so a stop is seen while a server is silent.
        let wake = (pace - SPIN_NS).min(housekeeping).min(now + WAIT_SLICE_NS).max(now + 1);
        self.engine.submit_and_reap(want, Some(std::time::Duration::from_nanos(wake - now)), done)
    }

    /// When the loop must act other than on a completion: the next paced start
    /// it could act on (a fixed-rate arrival or the end of a think time, only
    /// while a slot is free; `u64::MAX` if none), and the next interval boundary
    /// or end of the run.
    fn next_events(&self, can_issue: bool, now: u64, think_until: u64, boundary: u64) -> (u64, u64) {
        let housekeeping = self.k.end_ns.map_or(boundary, |e| e.min(boundary));
        if !can_issue {
            return (u64::MAX, housekeeping);
        }
        let arrival = match &self.gen {
            Gen::Replay(r) if r.gen.blocked() => u64::MAX,
            Gen::Replay(r) => r.gen.due().unwrap_or(now),
            Gen::Train(t) => t.wait(now).unwrap_or(now),
            _ => match (&self.schedule, &self.cap) {
                (Some(s), _) => s.peek(),
                (None, Some(c)) => c.next_at(),
                (None, None) => now,
            },
        };
        let pace = arrival.max(think_until);
        // Nothing paces an unthrottled worker with a free slot: it issues at once.
        (if pace <= now { u64::MAX } else { pace }, housekeeping)
    }

    #[inline]
    fn issue(&mut self, s: &mut Slots, slot: u32, io: NextIo, scheduled: u64, now: u64) -> Result<(), storbench_engine::EngineError> {
        if io.op.writes_data() {
            let buf = self.buffers.slot_mut(slot);
            match self.verify.as_mut() {
                Some(v) => v.stamp(buf, &io, slot, self.gen.rng()),
                None => self.filler.refresh(buf, io.len as usize, io.file, self.gen.rng()),
            }
        }
        if let Some(v) = self.verify.as_mut() {
            v.issued(&io, slot);
        }
        if let Some(c) = self.cap.as_mut() {
            c.started(io.len);
        }
        let i = slot as usize;
        s.scheduled[i] = scheduled;
        s.issued[i] = now;
        s.op[i] = io.op;
        s.len[i] = io.len;
        s.file[i] = io.file;
        s.offset[i] = io.offset;
        s.class[i] = io.class;
        let (prio, ioprio) = match self.prio.as_mut() {
            Some(p) => {
                let k = p.pick(rw_dir(io.op), io.len);
                (k, p.values[k as usize])
            }
            None => (0, 0),
        };
        s.prio[i] = prio;
        let mut data_only = self.k.data_only;
        if let Gen::Replay(r) = &mut self.gen {
            data_only = r.gen.last_data_only();
            r.gen.issued(slot, &io);
            r.tally.issued += 1;
            if !r.gen.unpaced() {
                r.tally.lag.record(now.saturating_sub(scheduled));
            }
        }
        if let Some(log) = self.iolog.as_mut() {
            log.issued(now, io.op, data_only, io.file, io.offset, io.len);
        }
        let queued = self.engine.queue(IoRequest {
            op: io.op,
            data_only,
            file: io.file,
            whole: io.whole,
            offset: io.offset,
            len: io.len,
            slot,
            ioprio,
        });
        if let (Err(_), Some(v)) = (&queued, self.verify.as_mut()) {
            // Never went out: its units are not left in flight.
            v.completed(&io, slot, self.buffers.slot_mut(slot), Err(IoFailure::errno(libc::EIO)));
        }
        queued
    }

    #[inline]
    fn complete(&mut self, s: &mut Slots, c: Completion, now: u64) {
        let i = c.slot as usize;
        let op = s.op[i];
        let outcome = Outcome::of(&c, op, s.len[i], now.saturating_sub(s.scheduled[i]), now.saturating_sub(s.issued[i]));
        outcome.add_to(self.report.op(op));
        if let Some(stats) = self.report.class_op(s.class[i], op) {
            outcome.add_to(stats);
        }
        // The priority the I/O carried is `self.prio`'s `values[s.prio[i]]`
        // (the kernel's ioprio value): what a per-I/O log's prio column prints.
        if let (Some(_), Some(stats)) = (rw_dir(op), self.report.prio_op(s.prio[i], op)) {
            outcome.add_to(stats);
        }
        if self.k.log_window_ns > 0 {
            self.log_completion(op, &outcome, now);
        }
        if self.unit_log.is_some() {
            let ioprio = self.prio.as_ref().map_or(0, |p| p.values[s.prio[i] as usize]);
            self.unit_log_completion(op, &outcome, now, s.offset[i], ioprio);
        }
        if self.k.hist_window_ms > 0 {
            self.hist_completion(op, &outcome, now);
        }
        if let (Some(m), Ok(bytes), Some(dir)) = (self.min_rate.as_mut(), outcome.result, rw_dir(op)) {
            if self.below_min.is_none() {
                self.below_min = m.completed(dir, bytes, now);
            }
        }
        s.free.push(c.slot);
        if let Some(v) = self.verify.as_mut() {
            let io = NextIo { op, file: s.file[i], offset: s.offset[i], len: s.len[i], whole: false, class: 0 };
            v.completed(&io, c.slot, self.buffers.slot_mut(c.slot), outcome.result);
            if v.fatal.is_some() && self.below_min.is_none() {
                self.below_min = v.fatal.clone();
            }
        }
        // The generator learns how it ended (object state, replay order,
        // the accelerator's timeline); block jobs need nothing.
        match &mut self.gen {
            Gen::Blocks(_) => {}
            Gen::Replay(r) => r.gen.completed(c.slot),
            Gen::Train(t) => t.completed(now),
            Gen::Objects(g) => {
                let settled = match outcome.result {
                    Ok(_) => Settled::Done,
                    Err(f) if f.kind == ErrorKind::NotFound => Settled::NotFound,
                    Err(f) if maybe_done(f) => Settled::Unknown,
                    Err(_) => Settled::Failed,
                };
                g.completed(op, s.file[i], settled);
            }
        }
    }

    /// The engine gave up on what was in flight: each slot is free again,
    /// and the generator and the checker learn that the operation may or
    /// may not have happened (an object it created is still removed).
    #[cold]
    fn forget_in_flight(&mut self, s: &mut Slots) {
        let qd = self.share.queue_depth;
        let busy: Vec<u32> = (0..qd).filter(|slot| !s.free.contains(slot)).collect();
        for slot in busy {
            let i = slot as usize;
            let (op, file) = (s.op[i], s.file[i]);
            if let Some(v) = self.verify.as_mut() {
                let io = NextIo { op, file, offset: s.offset[i], len: s.len[i], whole: false, class: 0 };
                v.completed(&io, slot, self.buffers.slot_mut(slot), Err(IoFailure::errno(libc::ETIMEDOUT)));
            }
            match &mut self.gen {
                Gen::Objects(g) => g.completed(op, file, Settled::Unknown),
                Gen::Replay(r) => r.gen.completed(slot),
                Gen::Blocks(_) | Gen::Train(_) => {}
            }
            s.free.push(slot);
            self.cut_off += 1;
        }
    }

    /// Add a completion to the current window of fio's logs, first closing
    /// the windows that ended before it (measured phase only, reads and
    /// writes that succeeded, as fio logs them).
    fn log_completion(&mut self, op: OpKind, outcome: &Outcome, now: u64) {
        let dir = match op {
            OpKind::Read => 0,
            OpKind::Write => 1,
            _ => return,
        };
        let (ramp, window) = (self.k.ramp_ns, self.k.log_window_ns);
        if now < ramp {
            return;
        }
        if self.log.end == 0 {
            self.log.end = ramp + window;
        }
        while now >= self.log.end {
            self.log.close(&mut self.report.log, (self.log.end - ramp) / 1_000_000, window / 1_000_000);
            self.log.end += window;
        }
        if let Ok(bytes) = outcome.result {
            let acc = &mut self.log.acc[dir];
            acc.ios += 1;
            acc.bytes += bytes;
            acc.lat_sum_ns += outcome.latency;
        }
    }

    /// A line for each per-I/O log (measured phase, reads and writes that
    /// succeeded, as fio logs them).
    fn unit_log_completion(&mut self, op: OpKind, outcome: &Outcome, now: u64, offset: u64, ioprio: u16) {
        let dir = match op {
            OpKind::Read => 0,
            OpKind::Write => 1,
            _ => return,
        };
        let (Ok(bytes), true, Some(log)) = (outcome.result, now >= self.k.ramp_ns, self.unit_log.as_mut()) else {
            return;
        };
        let t_ms = (now - self.k.ramp_ns) / 1_000_000;
        log.completed(&crate::unit_log::Sample { t_ms, dir, bytes, lat_ns: outcome.latency, clat_ns: outcome.service, offset, ioprio });
    }

    /// Count a completion in fio's histogram log (measured phase, reads and
    /// writes that succeeded), writing a line when its direction's window
    /// has passed.
    fn hist_completion(&mut self, op: OpKind, outcome: &Outcome, now: u64) {
        let dir = match op {
            OpKind::Read => 0,
            OpKind::Write => 1,
            _ => return,
        };
        let (Ok(bytes), true) = (outcome.result, now >= self.k.ramp_ns) else {
            return;
        };
        let t_ms = (now - self.k.ramp_ns) / 1_000_000;
        let windows = self.hist.get_or_insert_with(Default::default);
        if let Some(line) = windows[dir].record(outcome.latency, t_ms, self.k.hist_window_ms, dir as u8, bytes) {
            self.report.hist_log.push(line);
        }
    }

    fn next_boundary(&self, t: u64) -> u64 {
        let ramp = self.k.ramp_ns;
        if t < ramp {
            return ramp.min((t / INTERVAL_NS + 1) * INTERVAL_NS);
        }
        ramp + ((t - ramp) / INTERVAL_NS + 1) * INTERVAL_NS
    }

    /// Send the current interval and start a fresh one (recycled when possible).
    fn hand_over(&mut self, boundary: u64, now: u64) {
        let fresh = self.link.spare.try_recv().unwrap_or_else(|_| Box::new(new_report(&self.share, self.worker)));
        let mut r = std::mem::replace(&mut self.report, fresh);
        r.seq = self.seq;
        r.start_ns = self.interval_start;
        r.end_ns = boundary.min(now).max(self.interval_start);
        r.warmup = r.end_ns <= self.k.ramp_ns && self.k.ramp_ns > 0;
        r.behind_ns = self.schedule.as_ref().map(|s| now.saturating_sub(s.peek())).unwrap_or(0);
        self.seq += 1;
        self.interval_start = r.end_ns;
        self.report.reset();
        // The coordinator outlives the workers; a failed send only means it gave up.
        let _ = self.link.tx.send(FromAgent::Interval(r));
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

/// Reads are direction 0 and writes 1 in fio's per-direction figures.
fn rw_dir(op: OpKind) -> Option<usize> {
    match op {
        OpKind::Read => Some(0),
        OpKind::Write => Some(1),
        _ => None,
    }
}

/// The open window of fio's averaged logs, per direction.
#[derive(Default)]
struct LogWindow {
    /// When the window ends (ns since the job's start); 0 before the first.
    end: u64,
    acc: [LogSample; 2],
}

impl LogWindow {
    /// Hand over each direction that saw I/O in the window, and start afresh.
    fn close(&mut self, out: &mut Vec<LogSample>, t_ms: u64, window_ms: u64) {
        for (dir, acc) in self.acc.iter_mut().enumerate() {
            if acc.ios > 0 {
                out.push(LogSample { t_ms, dir: dir as u8, window_ms, ..*acc });
            }
            *acc = LogSample::default();
        }
    }
}

/// What one completion adds to the stats of its operation.
struct Outcome {
    /// Bytes moved, or the failure (a short transfer included).
    result: Result<u64, IoFailure>,
    retries: u64,
    latency: u64,
    service: u64,
    first_byte: Option<u64>,
}

impl Outcome {
    #[inline]
    fn of(c: &Completion, op: OpKind, len: u32, latency: u64, service: u64) -> Outcome {
        let result = if let Ok(n) = c.result {
            if n < len as u64 && op.moves_data() {
                Err(IoFailure::SHORT_IO)
            } else {
                Ok(n)
            }
        } else {
            c.result
        };
        Outcome {
            result,
            retries: c.retries as u64,
            latency,
            service,
            first_byte: (c.tail_ns > 0).then(|| latency.saturating_sub(c.tail_ns)),
        }
    }

    #[inline]
    fn add_to(&self, stats: &mut OpStats) {
        stats.retries += self.retries;
        match self.result {
            Ok(bytes) => {
                stats.record(bytes, self.latency, self.service);
                if let Some(fb) = self.first_byte {
                    stats.first_byte.record(fb);
                }
            }
            Err(f) => failed(stats, f),
        }
    }
}

/// Failures are the rare path: kept out of the loop's instruction stream.
#[cold]
#[inline(never)]
fn failed(stats: &mut OpStats, f: IoFailure) {
    stats.errors.record(f);
}

/// A failure after which the store may still have carried the operation
/// out: the connection broke or the answer did not come in time (a refused
/// connection sent nothing).
fn maybe_done(f: IoFailure) -> bool {
    use storbench_metrics::Detail;
    matches!(f.kind, ErrorKind::Connection | ErrorKind::Timeout) && f.detail != Detail::Errno(libc::ECONNREFUSED)
}

/// The dataset's objects a worker writes before a training run (and
/// removes after it): every `workers`-th, so each is written once.
fn dataset_share(share: &JobShare, worker: u32) -> Result<impl Iterator<Item = NextIo>, String> {
    let t = share.spec.train.clone().ok_or("not a training job")?;
    let len = u32::try_from(t.file_bytes())
        .map_err(|_| format!("training files of {} bytes: objects above 4 GiB are not supported", t.file_bytes()))?;
    Ok((worker as u64..t.files).step_by(share.workers.max(1) as usize).map(move |k| NextIo {
        op: OpKind::Read,
        file: k as u32,
        offset: 0,
        len,
        whole: true,
        class: 0,
    }))
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
fn open_file(t: &storbench_engine::TargetFile, spec: &JobSpec) -> Result<File, String> {
    let f = files::open(t, spec.writes(), spec.direct, spec.open_sync).map_err(|e| e.to_string())?;
    if spec.invalidate && !spec.direct {
        files::drop_cache(&f, &t.path).map_err(|e| e.to_string())?;
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
fn new_report(share: &JobShare, worker: u32) -> IntervalReport {
    let classes = share.spec.objects.as_ref().map_or(0, |o| o.sizes.classes().len());
    IntervalReport::new(share.job, worker, share.paced()).with_classes(classes).with_prios(share.prio_values().len())
}

/// How [`unmeasured`] treats a failed operation.
#[derive(Clone, Copy)]
enum OnFailure {
    /// Stop at the first: a prefill with holes would make the measured reads
    /// fail for a reason not measured.
    Stop,
    /// Go on (a cleanup removes what it can), but give up after this many
    /// failures in a row: the store is gone, and every further try would fail.
    GoOn { in_a_row: u32 },
}

/// What [`unmeasured`] tells the caller about each operation, beside
/// carrying it out (reading back checks what each read found).
trait Hooks {
    fn issued(&mut self, _io: &NextIo, _slot: u32) {}
    fn done(&mut self, _io: &NextIo, _slot: u32, _c: &Completion) {}
}

struct NoHooks;
impl Hooks for NoHooks {}

/// An object job's listing against what the run believes exists. Listings
/// may lag (Swift updates its container listings after the fact), so what
/// looks wrong is looked at again 2 s later, and only what still is counts.
fn check_listing(v: &mut Checker, config: &dyn EngineConfig, prefix: &str) -> Result<(), String> {
    let list = || config.list_names(prefix).map_err(|e| format!("listing to verify: {e}"));
    let before = v.words();
    let Some(names) = list()? else { return Ok(()) };
    let (first, judged) = v.listing(&before, &names, prefix);
    if first.is_empty() {
        v.listed(first, judged);
        return Ok(());
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    let names = list()?.unwrap_or_default();
    let (again, _) = v.listing(&before, &names, prefix);
    let held: Vec<_> = again.into_iter().filter(|f| first.iter().any(|g| g.0 == f.0)).collect();
    v.listed(held, judged);
    Ok(())
}

/// Unmeasured operations of a verified job (the read-back pass, an object
/// job's prefill and cleanup): writes stamped, each completion told to the
/// checker, the reads' bytes counted.
struct Tracked<'a> {
    v: &'a mut Checker,
    buffers: &'a mut AlignedBuffers,
    rng: storbench_workload::rng::Rng,
    /// Reads the store answered with "no such object".
    not_found: u64,
}

impl Hooks for Tracked<'_> {
    fn issued(&mut self, io: &NextIo, slot: u32) {
        if io.op.writes_data() {
            self.v.stamp(self.buffers.slot_mut(slot), io, slot, &mut self.rng);
        }
        self.v.issued(io, slot);
    }
    fn done(&mut self, io: &NextIo, slot: u32, c: &Completion) {
        self.v.completed(io, slot, self.buffers.slot_mut(slot), c.result);
        if io.op == OpKind::Read {
            self.v.tally.pass_bytes += c.result.unwrap_or(0);
            self.not_found += u64::from(matches!(c.result, Err(f) if f.kind == ErrorKind::NotFound));
        }
    }
}

/// The hooks for a worker's unmeasured operations: tracked when it verifies.
fn hooks<'a>(v: Option<&'a mut Checker>, buffers: &'a mut AlignedBuffers, seed: u64) -> Box<dyn Hooks + 'a> {
    match v {
        Some(v) => Box::new(Tracked { v, buffers, rng: storbench_workload::rng::Rng::new(seed), not_found: 0 }),
        None => Box::new(NoHooks),
    }
}

/// Cleanup gives up after this many failed deletes in a row.
const CLEANUP_GIVES_UP_AFTER: u32 = 64;

/// What [`unmeasured`] could not do.
#[derive(Default)]
struct Unfinished {
    /// Keys (as in `NextIo::file`) of the failed operations.
    failed: Vec<u32>,
    first: Option<(OpKind, IoFailure)>,
    /// The engine itself failed (nothing more could be issued).
    engine: Option<String>,
    /// Nothing succeeded for [`STALL`]: given up, these many abandoned in flight.
    stalled: Option<usize>,
}

impl Unfinished {
    fn error(&self, tried: u64) -> Option<String> {
        if let Some(e) = &self.engine {
            return Some(e.clone());
        }
        if let Some(n) = self.stalled {
            return Some(format!(
                "no operation succeeded for {} s, so the store is taken to have stopped answering: given up \
                 ({n} abandoned in flight, {} failed or not done)",
                STALL.as_secs(),
                self.failed.len()
            ));
        }
        let (op, f) = self.first?;
        Some(match self.failed.len() {
            1 => format!("{} failed: {f}", op.name()),
            n => format!("{n} of {tried} {}s failed (the first: {f})", op.name()),
        })
    }
}

/// Carry out set-up or tear-down operations (prefill, cleanup) at full queue
/// depth, outside the measurement, until `next` has no more, `stop` says
/// so or failures end it (see [`OnFailure`]). A store that stops answering
/// holds it up for [`STALL`] at most, a stop for [`CUT_GRACE`]: then what
/// is in flight is abandoned (where the engine can) and counted as failed.
/// Returns how many were issued and what failed.
fn unmeasured(
    engine: &mut dyn Engine,
    qd: u32,
    mut next: impl FnMut() -> Option<NextIo>,
    stop: impl Fn() -> bool,
    policy: OnFailure,
    hooks: &mut dyn Hooks,
) -> (u64, Unfinished) {
    let mut free: Vec<u32> = (0..qd).collect();
    let mut done = Vec::with_capacity(qd as usize);
    let mut more = true;
    let mut out = Unfinished::default();
    let mut in_a_row = 0u32;
    let mut issued = 0u64;
    let none = NextIo { op: OpKind::Read, file: 0, offset: 0, len: 0, whole: false, class: 0 };
    let mut slots = vec![none; qd as usize];
    let mut progress = Instant::now();
    let mut stopped: Option<Instant> = None;
    while more || free.len() < qd as usize {
        if stop() || out.engine.is_some() {
            more = false;
            stopped.get_or_insert_with(Instant::now);
        }
        while more && !free.is_empty() {
            let Some(io) = next() else {
                more = false;
                break;
            };
            let slot = free.pop().expect("checked non-empty");
            slots[slot as usize] = io;
            hooks.issued(&io, slot);
            let req =
                IoRequest { op: io.op, data_only: false, file: io.file, whole: io.whole, offset: io.offset, len: io.len, slot, ioprio: 0 };
            issued += 1;
            if let Err(e) = engine.queue(req) {
                hooks.done(&io, slot, &Completion::new(slot, Err(IoFailure::errno(libc::EIO))));
                out.engine = Some(e.to_string());
                out.failed.push(io.file);
                more = false;
            }
        }
        if free.len() == qd as usize || out.engine.is_some() {
            break;
        }
        let stalled = progress.elapsed() >= STALL;
        if stalled || stopped.is_some_and(|t| t.elapsed() >= CUT_GRACE) {
            // Stop issuing; give up on what is in flight if the engine can
            // (else it completes, or times out, in its own time).
            more = false;
            if engine.abandon() {
                let busy: Vec<u32> = (0..qd).filter(|s| !free.contains(s)).collect();
                for slot in &busy {
                    let io = slots[*slot as usize];
                    hooks.done(&io, *slot, &Completion::new(*slot, Err(IoFailure::errno(libc::ETIMEDOUT))));
                    out.failed.push(io.file);
                }
                out.stalled = stalled.then_some(busy.len());
                break;
            }
        }
        if let Err(e) = engine.submit_and_reap(1, Some(WAIT_SLICE), &mut done) {
            out.engine = Some(e.to_string());
            break;
        }
        for c in done.drain(..) {
            let io = slots[c.slot as usize];
            let (op, key) = (io.op, io.file);
            hooks.done(&io, c.slot, &c);
            free.push(c.slot);
            // A delete of an object that is already gone leaves what cleanup wants.
            let gone = matches!(c.result, Err(f) if f.kind == ErrorKind::NotFound) && op == OpKind::Delete;
            if c.result.is_ok() || gone {
                progress = Instant::now();
            }
            match c.result {
                Err(f) if !gone => {
                    out.first.get_or_insert((op, f));
                    out.failed.push(key);
                    in_a_row += 1;
                    more &= match policy {
                        OnFailure::Stop => false,
                        OnFailure::GoOn { in_a_row: limit } => in_a_row < limit,
                    };
                }
                _ => in_a_row = 0,
            }
        }
    }
    (issued, out)
}
