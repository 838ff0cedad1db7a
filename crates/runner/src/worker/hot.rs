//! The measured loop: prep -> submit -> reap. It reads the clock once per
//! batch, takes no lock, allocates nothing and formats nothing; it hands its
//! interval report over once per second and takes an empty one back. Pacing
//! (fixed rate, think time, flow control, a trace's schedule) decides when a
//! free slot is filled; each completion is counted once, in its interval.

use super::latency::Step;
use super::outcome::{rw_dir, settled, too_slow, Outcome};
use super::{new_report, Worker, DRAIN_GRACE_NS, HELD_SECONDS, INTERVAL_NS, WAIT_SLICE, WAIT_SLICE_NS};
use crate::clock::{sleep_until, Clock, SPIN_NS};
use crate::verify::Checker;
use storbench_engine::files;
use storbench_engine::{Completion, IoRequest};
use storbench_metrics::interval::depth_level;
use storbench_metrics::IoFailure;
use storbench_model::protocol::FromAgent;
use storbench_workload::kinds::{Generator, When};
use storbench_workload::{NextIo, OpKind};

/// Where the loop stands, apart from the slots.
#[derive(Default)]
pub(super) struct LoopState {
    /// The byte budget is spent.
    pub(super) exhausted: bool,
    /// Time is up or a stop was requested: drain in-flight I/O and finish.
    pub(super) stopping: bool,
    /// fio's latency_target search settled: the figures start over once
    /// what is in flight has completed.
    pub(super) restart: bool,
    /// fio's think time: after `thinktime_blocks` I/Os have completed, pause
    /// until `think_until`.
    pub(super) since_think: u32,
    pub(super) think_armed: bool,
    pub(super) think_until: u64,
    /// Held by flow control: wait for what is in flight, then flow_sleep.
    pub(super) flow_armed: bool,
    /// The queue filled up and is being drained to `iodepth_low` before it
    /// is filled again (fio's wait_for_completions).
    pub(super) draining: bool,
    /// Held by flow control with nothing in flight and no flow_sleep: the
    /// worker sleeps [`crate::flow::RETRY_NS`] rather than spin.
    pub(super) flow_retry: bool,
    /// When the measured phase ended (the planned end, or when a stop came):
    /// completions after it still count, time waited past it for operations
    /// that never complete does not.
    pub(super) ended_at: u64,
}

impl LoopState {
    pub(super) fn may_issue(&self, now: u64) -> bool {
        !self.stopping && !self.exhausted && !self.think_armed && !self.flow_armed && !self.draining && now >= self.think_until
    }
}

/// When an operation starts, for its latency.
#[derive(Clone, Copy)]
pub(super) enum Start {
    /// When it is handed to the engine (nothing paces it).
    Issue,
    /// At a time a schedule set (a fixed-rate arrival, a trace's record):
    /// counted from then however late it goes out.
    At(u64),
}

/// Per-slot bookkeeping of in-flight I/O.
pub(super) struct Slots {
    pub(super) free: Vec<u32>,
    pub(super) scheduled: Vec<u64>,
    pub(super) issued: Vec<u64>,
    /// When the kernel took it: after `queue` for engines that submit
    /// there (fio's issue_time), else its issue.
    pub(super) sent: Vec<u64>,
    pub(super) op: Vec<OpKind>,
    pub(super) len: Vec<u32>,
    pub(super) file: Vec<u32>,
    pub(super) offset: Vec<u64>,
    pub(super) class: Vec<u8>,
    /// Index of the I/O's priority in the job's list (`PrioPicker::values`).
    pub(super) prio: Vec<u8>,
}

impl Slots {
    pub(super) fn new(qd: usize) -> Slots {
        Slots {
            free: (0..qd as u32).rev().collect(),
            scheduled: vec![0; qd],
            issued: vec![0; qd],
            sent: vec![0; qd],
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
    /// The measured loop. `Some(end)` when operations still in flight at
    /// its end were abandoned: the phase's end, which the time spent waiting
    /// for them does not move.
    pub(super) fn run_loop(&mut self, clock: &Clock) -> Result<Option<u64>, storbench_engine::EngineError> {
        let qd = self.share.queue_depth as usize;
        let control = self.link.control.clone();
        let mut slots = Slots::new(qd);
        let mut done: Vec<Completion> = Vec::with_capacity(qd * 2);
        let mut st = LoopState::default();
        let mut now = clock.now();
        let mut boundary = match self.boundary {
            0 => self.next_boundary(now),
            b => b,
        };
        // The seconds a pass's read-back took (see `Worker::run_passes`),
        // each handed over empty, so a report's seq stays its second.
        while now >= boundary {
            self.hand_over(boundary, now);
            boundary = self.next_boundary(boundary);
        }
        let mut last_done = 0;
        loop {
            // Once the phase has ended, what completes in the grace goes into
            // its last interval, which ends where the phase did.
            if now >= boundary && !st.stopping {
                self.hand_over(boundary, now);
                boundary = self.next_boundary(now);
            }
            let job_stopped = self.link.job_stop.load(std::sync::atomic::Ordering::Relaxed);
            // A restart pending moves the runtime's end (fio resets its epoch).
            let time_up = self.k.end_ns.is_some_and(|e| now >= e) && !st.restart;
            if !st.stopping && (control.stopping() || job_stopped || time_up || self.below_min.is_some()) {
                st.stopping = true;
                st.ended_at = self.k.end_ns.map_or(now, |e| e.min(now));
            }
            // fio's latency_target settled: once quiesced, its figures start
            // over (fio quiesces in place; a stop meanwhile keeps them whole).
            if st.restart && slots.free.len() == qd {
                st.restart = false;
                if !st.stopping {
                    self.restart_figures(now);
                    boundary = self.next_boundary(now);
                }
            }
            if st.may_issue(now) {
                self.fill(&mut slots, &mut st, now, clock)?;
                st.draining = self.drains(qd - slots.free.len(), qd);
            }
            // A worker draining to iodepth_low issues nothing: no pace to wake for.
            let can_issue = !slots.free.is_empty() && !st.exhausted && !st.think_armed && !st.flow_armed && !st.stopping && !st.draining;
            let (pace, housekeeping) = self.next_events(can_issue, now, st.think_until, boundary);
            if slots.free.len() == qd {
                if st.stopping || st.exhausted {
                    self.boundary = boundary;
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
                self.boundary = boundary;
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
            st.exhausted |= self.target_ended;
            // As fio, no window is judged during the ramp, nor while the
            // figures wait to start over (fio quiesces in place).
            if let Some(l) = self.latency.as_mut().filter(|_| now >= self.k.ramp_ns && !st.restart) {
                match l.check(now) {
                    Step::Go => {}
                    // Seconds already sent (a search past HELD_SECONDS) cannot be taken back.
                    Step::Reset => st.restart = self.held.is_some(),
                    Step::Done => st.exhausted = true,
                }
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
    /// allow (polling: one I/O, as fio's loop waits after each). `now` was
    /// read before the batch: each operation after the first reads the
    /// clock again (see [`Worker::issue`]).
    #[inline]
    pub(super) fn fill(
        &mut self,
        slots: &mut Slots,
        st: &mut LoopState,
        now: u64,
        clock: &Clock,
    ) -> Result<(), storbench_engine::EngineError> {
        let thinks = self.k.think_ns > 0;
        let free = slots.free.len();
        let filled = self.fill_slots(slots, st, now, clock, thinks);
        // fio's io_u_mark_depth, once per batch: the batch's I/Os at the depth in flight with them.
        let issued = free - slots.free.len();
        if issued > 0 {
            self.report.depths[depth_level(slots.scheduled.len() - slots.free.len())] += issued as u64;
        }
        filled
    }

    #[inline]
    fn fill_slots(
        &mut self,
        slots: &mut Slots,
        st: &mut LoopState,
        now: u64,
        clock: &Clock,
        thinks: bool,
    ) -> Result<(), storbench_engine::EngineError> {
        let mut batch_now = Some(now);
        while let Some(&slot) = slots.free.last() {
            if self.flow_held(slots, st, now) {
                break;
            }
            if let Some(l) = self.latency.as_mut() {
                if st.restart || l.holds(slots.scheduled.len() - slots.free.len()) {
                    break;
                }
            }
            let Some(start) = self.take_start(now) else { break };
            let next = match self.verify.as_mut().and_then(Checker::backlog_next) {
                Some(io) => {
                    // fio counts them in the bytes that decide whether another pass follows.
                    self.gen.count_read(u64::from(io.len));
                    Some(io)
                }
                None => self.gen.next(),
            };
            let Some(io) = next else {
                st.exhausted = true;
                break;
            };
            if self.k.invalidate && self.gen.take_wrapped() {
                self.drop_caches();
                // Dropping the cache is the tool's time too (fio drops it
                // while choosing the offset, before the issue time).
                batch_now = None;
            }
            slots.free.pop();
            self.issue(slots, slot, io, start, batch_now.take(), clock)?;
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
    pub(super) fn flow_held(&mut self, slots: &Slots, st: &mut LoopState, now: u64) -> bool {
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
    pub(super) fn take_start(&mut self, now: u64) -> Option<Start> {
        match self.gen.start(now) {
            When::Job => {}
            When::Issue => return Some(Start::Issue),
            When::At(t) => return Some(Start::At(t)),
            When::NotYet => return None,
        }
        match (self.schedule.as_mut(), &self.cap) {
            (Some(s), _) if s.peek() > now => None,
            (Some(s), _) => Some(Start::At(s.advance(self.gen.rng()))),
            (None, Some(c)) if c.next_at() > now => None,
            (None, _) => Some(Start::Issue),
        }
    }

    /// When a pass over the files ended, drop their page cache as fio does
    /// (best effort, as in fio: the pass goes on either way).
    #[cold]
    pub(super) fn drop_caches(&self) {
        for f in &self.files {
            let _ = files::drop_cache(f, std::path::Path::new(""));
        }
    }

    /// Submit and collect completions: block until `want` arrive, the next
    /// housekeeping time, or shortly before the next paced start, which is then
    /// awaited by polling so it is not issued late.
    #[inline]
    pub(super) fn wait(
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
    pub(super) fn next_events(&self, can_issue: bool, now: u64, think_until: u64, boundary: u64) -> (u64, u64) {
        let housekeeping = self.k.end_ns.map_or(boundary, |e| e.min(boundary));
        if !can_issue {
            return (u64::MAX, housekeeping);
        }
        let arrival = match self.gen.arrival(now) {
            Some(at) => at,
            None => match (&self.schedule, &self.cap) {
                (Some(s), _) => s.peek(),
                (None, Some(c)) => c.next_at(),
                (None, None) => now,
            },
        };
        let pace = arrival.max(think_until);
        // Nothing paces an unthrottled worker with a free slot: it issues at once.
        (if pace <= now { u64::MAX } else { pace }, housekeeping)
    }

    /// Hand one operation to the engine. It is timed from here, as fio
    /// takes an I/O's issue time: after its data was made (a verified
    /// write's stamps and checksums, a refreshed buffer) and after what the
    /// worker did since `batch_now` was read (judging the reads that came
    /// back, handing over the operations before it in this batch): that is
    /// the tool's time, not the storage's. A read opening a batch with
    /// nothing judged keeps `batch_now`, so the plain read loop still reads
    /// the clock once per batch.
    #[inline]
    pub(super) fn issue(
        &mut self,
        s: &mut Slots,
        slot: u32,
        io: NextIo,
        start: Start,
        batch_now: Option<u64>,
        clock: &Clock,
    ) -> Result<(), storbench_engine::EngineError> {
        if io.op.writes_data() {
            let buf = self.buffers.slot_mut(slot);
            match self.verify.as_mut() {
                Some(v) => v.stamp(buf, &io, slot, self.gen.rng()),
                None => self.filler.refresh(buf, io.len as usize, io.file, self.gen.rng()),
            }
        }
        let now = match batch_now {
            Some(t) if !io.op.writes_data() && self.verify.is_none() => t,
            _ => clock.now(),
        };
        let scheduled = match start {
            Start::Issue => now,
            Start::At(t) => t,
        };
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
        let told = self.gen.issued(slot, &io, scheduled, now);
        let data_only = told.data_only.unwrap_or(self.k.data_only);
        if let (Some(lag), Some(h)) = (told.lag, self.lag.as_mut()) {
            h.record(lag);
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
        // One more clock read per I/O, as fio's libaio takes after io_submit.
        s.sent[i] = if self.k.sent_apart { clock.now() } else { now };
        if let (Err(_), Some(v)) = (&queued, self.verify.as_mut()) {
            // Never went out: its units are not left in flight.
            v.completed(&io, slot, self.buffers.slot_mut(slot), Err(IoFailure::errno(libc::EIO)));
        }
        queued
    }

    #[inline]
    pub(super) fn complete(&mut self, s: &mut Slots, c: Completion, now: u64) {
        let i = c.slot as usize;
        let op = s.op[i];
        if c.ended {
            // Nothing happened, and nothing more will: not counted.
            s.free.push(c.slot);
            self.gen.abandoned(c.slot, op, s.file[i]);
            self.target_ended = true;
            return;
        }
        let mut outcome = Outcome::of(&c, op, s.len[i], now.saturating_sub(s.scheduled[i]), now.saturating_sub(s.issued[i]));
        if self.k.sent_apart {
            outcome.sent_apart(now.saturating_sub(s.sent[i]), s.sent[i].saturating_sub(s.issued[i]));
        }
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
        // Judged from its issue (a rate's lag is not the storage's), and
        // not in the ramp, which fio does not account.
        if let (Some(l), Ok(_), Some(_), true) = (self.latency.as_mut(), outcome.result, rw_dir(op), now >= self.k.ramp_ns) {
            if let (Err(e), None) = (l.completed(outcome.service, now), &self.below_min) {
                self.below_min = Some(e);
            }
        }
        if let (Some(max), Ok(_), Some(dir)) = (self.k.max_latency, outcome.result, rw_dir(op)) {
            if max[dir] > 0 && outcome.service > max[dir] && now >= self.k.ramp_ns && self.below_min.is_none() {
                self.below_min = Some(too_slow(outcome.service, max[dir]));
            }
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
        self.gen.completed(c.slot, op, s.file[i], || settled(outcome.result), now);
    }

    /// The engine gave up on what was in flight: each slot is free again,
    /// and the generator and the checker learn that the operation may or
    /// may not have happened (an object it created is still removed).
    #[cold]
    pub(super) fn forget_in_flight(&mut self, s: &mut Slots) {
        let qd = self.share.queue_depth;
        let busy: Vec<u32> = (0..qd).filter(|slot| !s.free.contains(slot)).collect();
        for slot in busy {
            let i = slot as usize;
            let (op, file) = (s.op[i], s.file[i]);
            if let Some(v) = self.verify.as_mut() {
                let io = NextIo { op, file, offset: s.offset[i], len: s.len[i], whole: false, class: 0 };
                v.completed(&io, slot, self.buffers.slot_mut(slot), Err(IoFailure::errno(libc::ETIMEDOUT)));
            }
            self.gen.abandoned(slot, op, file);
            s.free.push(slot);
            self.cut_off += 1;
        }
    }

    pub(super) fn next_boundary(&self, t: u64) -> u64 {
        let ramp = self.k.ramp_ns;
        if t < ramp {
            return ramp.min((t / INTERVAL_NS + 1) * INTERVAL_NS);
        }
        ramp + ((t - ramp) / INTERVAL_NS + 1) * INTERVAL_NS
    }

    /// fio's final run of a latency_target job (reset_all_stats): the
    /// seconds so far were the search, its warm-up; the job's figures,
    /// and a time-based job's runtime, start over from `now`.
    #[cold]
    fn restart_figures(&mut self, now: u64) {
        let runtime = self.k.end_ns.map(|e| e.saturating_sub(self.k.ramp_ns));
        self.k.ramp_ns = now;
        self.k.end_ns = runtime.map(|r| now + r);
        // Read-backs before it are not the final run's.
        self.between_passes_ns = 0;
        if let Some(l) = self.latency.as_mut() {
            l.new_window(now);
        }
        self.hand_over(now, now);
        self.release_held(true);
    }

    /// Send the seconds a latency_target search kept back, as its warm-up
    /// once it settled, or as the job's own when it never did.
    pub(super) fn release_held(&mut self, warmup: bool) {
        for mut r in self.held.take().unwrap_or_default() {
            r.warmup |= warmup;
            let _ = self.link.tx.send(FromAgent::Interval(r));
        }
    }

    /// Send the current interval and start a fresh one (recycled when possible).
    pub(super) fn hand_over(&mut self, boundary: u64, now: u64) {
        let fresh = self.link.spare.try_recv().unwrap_or_else(|_| Box::new(new_report(&self.share, self.worker, self.k.sent_apart)));
        let mut r = std::mem::replace(&mut self.report, fresh);
        r.seq = self.seq;
        r.start_ns = self.interval_start;
        r.end_ns = boundary.min(now).max(self.interval_start);
        r.warmup = r.end_ns <= self.k.ramp_ns && self.k.ramp_ns > 0;
        r.behind_ns = self.schedule.as_ref().map(|s| now.saturating_sub(s.peek())).unwrap_or(0);
        self.seq += 1;
        self.interval_start = r.end_ns;
        self.report.reset();
        if let Some(held) = self.held.as_mut() {
            held.push(r);
            if held.len() >= HELD_SECONDS {
                self.release_held(false);
            }
            return;
        }
        // The coordinator outlives the workers; a failed send only means it gave up.
        let _ = self.link.tx.send(FromAgent::Interval(r));
    }
}
