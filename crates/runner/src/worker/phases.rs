//! The unmeasured phases around the measured loop: an object job's prefill
//! (and the objects a trace or a training run needs in place), reading back
//! to verify (fio's `do_verify`), and removing what the job created.

use super::unmeasured::{hooks, unmeasured, OnFailure, Timed, Tracked, CLEANUP_GIVES_UP_AFTER};
use super::{announce, Failed, Worker, WorkerError};
use crate::verify::Checker;
use storbench_engine::EngineConfig;
use storbench_metrics::CpuTimes;
use storbench_model::protocol::{Stage, WorkerDone};
use storbench_workload::kinds::Generator;
use storbench_workload::{NextIo, OpKind};

impl Worker {
    /// For object jobs that ask for it, write the objects the measured phase
    /// uses (a Stop ends that early). A failure is the worker's end: see
    /// [`Worker::abandoned`].
    pub fn prefill(&mut self) -> Result<(), WorkerError> {
        let Some(work) = self.gen.before().map_err(WorkerError::Input)? else { return Ok(()) };
        announce(&self.link, &self.share, self.worker, Stage::Prefill);
        let control = self.link.control.clone();
        let gen = &mut self.gen;
        let verify = self.verify.as_mut().filter(|_| work.checked);
        let (tried, left) = unmeasured(
            self.engine.as_mut(),
            self.share.queue_depth,
            || gen.before_next(),
            || control.stopping(),
            OnFailure::Stop,
            hooks(verify, &mut self.buffers, self.share.spec.seed).as_mut(),
        );
        // Named once it stopped: a count it gives is of then.
        let what = self.gen.before_stopped(work);
        left.error(tried).map_or(Ok(()), |e| Err(WorkerError::Storage(format!("{what}: {e}"))))
    }

    /// Set-up failed after writing objects (a prefill the store refused
    /// halfway): remove what was written, and report the failure.
    pub fn abandoned(mut self, error: Failed) -> WorkerDone {
        let cpu0 = CpuTimes::thread();
        let error = match self.clean_up() {
            Ok(()) => error,
            Err(e) => error.and(e),
        };
        self.done(0, CpuTimes::thread().since(cpu0), Some(error))
    }

    /// fio's `do_verify` (and `verify_only`): once every writer of the job
    /// is done, read back and check what the job wrote, measured apart from
    /// the measured phase (its reads timed, kept in `pass`). A stop
    /// skips it (the verify state, if kept, still allows it later).
    pub(super) fn read_back(&mut self) -> Result<(), WorkerError> {
        let Some(v) = self.verify.as_mut() else { return Ok(()) };
        v.writes_done();
        let control = self.link.control.clone();
        if !(v.spec.only || (v.spec.after && self.share.spec.writes())) || control.stopping() {
            return v.fatal.take().map_or(Ok(()), |m| Err(WorkerError::Storage(m)));
        }
        while !v.writers_done() && !control.stopping() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if !self.passes_verified {
            announce(&self.link, &self.share, self.worker, Stage::Verify);
            self.read_pass(None)?;
        }
        let Some(v) = self.verify.as_mut() else { return Ok(()) };
        // One listing per job: the first worker's (every writer is done).
        let numbered = self.share.spec.objects.as_ref().is_some_and(|o| o.naming == storbench_workload::Naming::Numbered);
        if let (true, 0, Some(prefix)) = (v.objects() && numbered, self.worker, self.share.object_prefix.as_deref()) {
            check_listing(v, self.config.as_ref(), prefix)?;
        }
        v.fatal.take().map_or(Ok(()), |m| Err(WorkerError::Storage(m)))
    }

    /// Read back and judge what the worker wrote, timed as fio's verify
    /// phase; a job verifying each pass adds each pass's reads and time to
    /// the last's; a time-based job's stops at its runtime (`until`: the
    /// clock and the phase's end), as fio's do_verify looks at it. The
    /// bytes read.
    pub(super) fn read_pass(&mut self, until: Option<(&crate::clock::Clock, u64)>) -> Result<u64, WorkerError> {
        let Some(v) = self.verify.as_mut() else { return Ok(0) };
        let control = self.link.control.clone();
        // verify_only with no table to say what was written: what the job's
        // writes would cover, drawn from its workload (fio's do_dry_run).
        let dry = v.spec.only && v.spec.by_header && !v.objects();
        let reads = if dry { Vec::new() } else { v.pass(&self.share, self.worker, self.buffers.slot_len() as u64) };
        let listed: u64 = reads.iter().map(|io| u64::from(io.len)).sum();
        let drawn = std::cell::Cell::new(0u64);
        let t0 = std::time::Instant::now();
        if self.k.invalidate {
            // As fio's verify phase begins (within its time): each file
            // flushed and its cache dropped, so the pass reads the disk.
            for f in &self.files {
                let _ = f.sync_all();
                let _ = storbench_engine::files::drop_cache(f, std::path::Path::new(""));
            }
        }
        let mut reads = reads.into_iter();
        let gen = &mut self.gen;
        let mut next = || match dry {
            true => written_next(gen).inspect(|io| drawn.set(drawn.get() + u64::from(io.len))),
            false => reads.next(),
        };
        let rng = storbench_workload::rng::Rng::new(self.share.spec.seed);
        let timed = Some(Timed::new(self.share.queue_depth));
        let mut hooks = Tracked { v: &mut *v, buffers: &mut self.buffers, rng, not_found: 0, timed };
        // A missing object is a finding (counted by the checker), not a reason to stop reading.
        let policy = OnFailure::GoOn { in_a_row: CLEANUP_GIVES_UP_AFTER };
        let stop = || control.stopping() || until.is_some_and(|(clock, end)| clock.now() >= end);
        let (tried, left) = unmeasured(self.engine.as_mut(), self.share.queue_depth, &mut next, stop, policy, &mut hooks);
        let bytes = listed + drawn.get();
        let (not_found, timed) = (hooks.not_found, hooks.timed.take());
        v.tally.pass_ns += t0.elapsed().as_nanos() as u64;
        // Measured as fio measures its verify phase, kept apart from the writes' figures.
        if let Some(t) = timed {
            match self.pass.as_mut() {
                Some(p) => p.merge(&t.reads),
                None => self.pass = Some(Box::new(t.reads)),
            }
        }
        if left.engine.is_some() || left.failed.len() as u64 > not_found {
            return Err(WorkerError::Storage(format!("reading back to verify: {}", left.error(tried).unwrap_or_default())));
        }
        Ok(bytes)
    }

    /// Remove the objects this worker wrote, when the job asks for it. Not
    /// measured. A Stop that ended the measured phase (or the prefill) lets
    /// it run, so a stopped run leaves nothing; a stop asked for while it
    /// runs (a Ctrl-C during cleanup, or a second one) cuts it short, and
    /// what is left is reported in [`WorkerDone::objects_left`].
    pub(super) fn clean_up(&mut self) -> Result<(), WorkerError> {
        let Some(work) = self.gen.after().map_err(WorkerError::Input)? else { return Ok(()) };
        let control = self.link.control.clone();
        let begun = control.level();
        let cut = || control.aborting() || control.level() > begun;
        if cut() {
            return Ok(());
        }
        announce(&self.link, &self.share, self.worker, Stage::Cleanup);
        let policy = OnFailure::GoOn { in_a_row: CLEANUP_GIVES_UP_AFTER };
        let gen = &mut self.gen;
        let verify = self.verify.as_mut().filter(|_| work.checked);
        let (tried, unfinished) = unmeasured(
            self.engine.as_mut(),
            self.share.queue_depth,
            || gen.after_next(),
            cut,
            policy,
            hooks(verify, &mut self.buffers, 0).as_mut(),
        );
        // Objects whose delete failed are still there: counted as left.
        for key in &unfinished.failed {
            self.gen.after_failed(*key);
        }
        unfinished.error(tried).map_or(Ok(()), |e| Err(WorkerError::Storage(format!("{}: {e}", work.what))))
    }
}

/// An object job's listing against what the run believes exists. Listings
/// may lag (Swift updates its container listings after the fact), so what
/// looks wrong is looked at again 2 s later, and only what still is counts.
pub(super) fn check_listing(v: &mut Checker, config: &dyn EngineConfig, prefix: &str) -> Result<(), WorkerError> {
    let list = || config.list_names(prefix).map_err(|e| WorkerError::Storage(format!("listing to verify: {e}")));
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

/// The next write a job's workload would issue in its first pass, as a read
/// of the same bytes (nothing is written: the workload is only drawn).
fn written_next(gen: &mut impl Generator) -> Option<NextIo> {
    loop {
        match gen.next()? {
            io if io.op.writes_data() => return Some(NextIo { op: OpKind::Read, whole: false, ..io }),
            _ => continue,
        }
    }
}
