//! Unmeasured operations at full queue depth (prefill, reading back,
//! cleanup): failures handled by policy, a store that stops answering given
//! up on after a while, what could not be done reported; hooks let a
//! verifying job stamp and check what goes through.

use super::outcome::Outcome;
use super::WAIT_SLICE;
use crate::buffers::AlignedBuffers;
use crate::verify::Checker;
use std::time::{Duration, Instant};
use storbench_engine::{Completion, Engine, IoRequest};
use storbench_metrics::{ErrorKind, IoFailure, OpStats};
use storbench_workload::{NextIo, OpKind};

/// The same after a Ctrl-C during unmeasured work (a cleanup cut short).
pub(super) const CUT_GRACE: Duration = Duration::from_millis(250);

/// Unmeasured work (prefill, cleanup, reading back) in which no operation
/// succeeds for this long gives up: the store stopped answering. What is
/// left is then reported, with the command that removes it.
pub const STALL: Duration = Duration::from_secs(10);

/// How [`unmeasured`] treats a failed operation.
#[derive(Clone, Copy)]
pub(super) enum OnFailure {
    /// Stop at the first: a prefill with holes would make the measured reads
    /// fail for a reason not measured.
    Stop,
    /// Go on (a cleanup removes what it can), but give up after this many
    /// failures in a row: the store is gone, and every further try would fail.
    GoOn { in_a_row: u32 },
}

/// What [`unmeasured`] tells the caller about each operation, beside
/// carrying it out (reading back checks what each read found).
pub(super) trait Hooks {
    fn issued(&mut self, _io: &NextIo, _slot: u32) {}
    fn done(&mut self, _io: &NextIo, _slot: u32, _c: &Completion) {}
}

pub(super) struct NoHooks;

impl Hooks for NoHooks {}

/// Unmeasured operations of a verified job (the read-back pass, an object
/// job's prefill and cleanup): writes stamped, each completion told to the
/// checker, the reads' bytes counted.
pub(super) struct Tracked<'a> {
    pub(super) v: &'a mut Checker,
    pub(super) buffers: &'a mut AlignedBuffers,
    pub(super) rng: storbench_workload::rng::Rng,
    /// Reads the store answered with "no such object".
    pub(super) not_found: u64,
    /// The verify pass's reads, timed (the pass only).
    pub(super) timed: Option<Timed>,
}

/// The verify pass's reads timed per I/O, as the measured phase's are:
/// from the queueing of each to its completion.
pub(super) struct Timed {
    issued: Vec<Instant>,
    pub(super) reads: OpStats,
}

impl Timed {
    pub(super) fn new(qd: u32) -> Timed {
        Timed { issued: vec![Instant::now(); qd as usize], reads: OpStats::new(false) }
    }
}

impl Hooks for Tracked<'_> {
    fn issued(&mut self, io: &NextIo, slot: u32) {
        if io.op.writes_data() {
            self.v.stamp(self.buffers.slot_mut(slot), io, slot, &mut self.rng);
        }
        self.v.issued(io, slot);
        if let Some(t) = self.timed.as_mut() {
            t.issued[slot as usize] = Instant::now();
        }
    }
    fn done(&mut self, io: &NextIo, slot: u32, c: &Completion) {
        if let (Some(t), OpKind::Read) = (self.timed.as_mut(), io.op) {
            let ns = t.issued[slot as usize].elapsed().as_nanos() as u64;
            // A whole object's read asks for up to its largest size: shorter is no short I/O.
            let len = if io.whole { 0 } else { io.len };
            Outcome::of(c, io.op, len, ns, ns).add_to(&mut t.reads);
        }
        self.v.completed(io, slot, self.buffers.slot_mut(slot), c.result);
        if io.op == OpKind::Read {
            self.v.tally.pass_bytes += c.result.unwrap_or(0);
            self.not_found += u64::from(matches!(c.result, Err(f) if f.kind == ErrorKind::NotFound));
        }
    }
}

/// The hooks for a worker's unmeasured operations: tracked when it verifies.
pub(super) fn hooks<'a>(v: Option<&'a mut Checker>, buffers: &'a mut AlignedBuffers, seed: u64) -> Box<dyn Hooks + 'a> {
    match v {
        Some(v) => Box::new(Tracked { v, buffers, rng: storbench_workload::rng::Rng::new(seed), not_found: 0, timed: None }),
        None => Box::new(NoHooks),
    }
}

/// Cleanup gives up after this many failed deletes in a row.
pub(super) const CLEANUP_GIVES_UP_AFTER: u32 = 64;

/// What [`unmeasured`] could not do.
#[derive(Default)]
pub(super) struct Unfinished {
    /// Keys (as in `NextIo::file`) of the failed operations.
    pub(super) failed: Vec<u32>,
    pub(super) first: Option<(OpKind, IoFailure)>,
    /// The engine itself failed (nothing more could be issued).
    pub(super) engine: Option<String>,
    /// Nothing succeeded for [`STALL`]: given up, these many abandoned in flight.
    pub(super) stalled: Option<usize>,
}

impl Unfinished {
    pub(super) fn error(&self, tried: u64) -> Option<String> {
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
pub(super) fn unmeasured(
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
