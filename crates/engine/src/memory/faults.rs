//! What the memory engine is told to do wrong: how long each kind of
//! operation takes (`op_latency`), which operations fail and how (`fail_every`,
//! `fail_rate`, `fail_kind`, `fail_ops`), and which writes are corrupted
//! once stored (`corrupt_every`). Counted per job, over all its workers, so
//! "every Nth operation" means the job's Nth, whatever worker issues it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use storbench_metrics::IoFailure;
use storbench_workload::rng::Rng;
use storbench_workload::OpKind;

/// How long one operation takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Delay {
    /// Always this many ns.
    Fixed(u64),
    /// Exponentially distributed with this mean (ns).
    Exp(f64),
    /// Uniform between the two (ns).
    Uniform(u64, u64),
}

impl Delay {
    /// `200us` (fixed), `exp:200us` (exponential, that mean) or
    /// `100us..300us` (uniform); a bare number is in microseconds.
    fn parse(text: &str) -> Result<Delay, String> {
        let ns = |t: &str| {
            storbench_workload::units::parse_duration(t, Duration::from_micros(1))
                .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
                .map_err(|e| e.to_string())
        };
        if let Some(mean) = text.strip_prefix("exp:") {
            return Ok(Delay::Exp(ns(mean)? as f64));
        }
        match text.split_once("..") {
            Some((lo, hi)) => match (ns(lo)?, ns(hi)?) {
                (lo, hi) if lo <= hi => Ok(Delay::Uniform(lo, hi)),
                _ => Err(format!("'{text}': the low end of a range comes first (e.g. 100us..300us)")),
            },
            None => ns(text).map(Delay::Fixed),
        }
    }

    fn draw(self, rng: &mut Rng) -> u64 {
        match self {
            Delay::Fixed(ns) => ns,
            Delay::Exp(mean) => rng.exponential(mean) as u64,
            Delay::Uniform(lo, hi) => lo + rng.below(hi - lo + 1),
        }
    }
}

/// The delay of each kind of operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency([Delay; OpKind::COUNT]);

/// An operation kind by its name (`read`, `create`...).
pub fn op_named(name: &str) -> Option<OpKind> {
    OpKind::ALL.into_iter().find(|o| o.name() == name)
}

fn op_names() -> String {
    OpKind::ALL.map(|o| o.name()).join(", ")
}

impl Latency {
    pub const NONE: Latency = Latency([Delay::Fixed(0); OpKind::COUNT]);

    /// Comma-separated delays, each for every operation or, after `OP:`, for
    /// one kind: `200us`, `read:100us,write:exp:1ms`, `1ms,stat:0`.
    pub fn parse(text: &str) -> Result<Latency, String> {
        let (mut all, mut each) = (Delay::Fixed(0), [None; OpKind::COUNT]);
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match entry.split_once(':') {
                None | Some(("exp", _)) => all = Delay::parse(entry)?,
                Some((head, rest)) => {
                    let op = op_named(head).ok_or_else(|| format!("'{entry}': no operation is called '{head}' ({})", op_names()))?;
                    each[op.index()] = Some(Delay::parse(rest)?);
                }
            }
        }
        Ok(Latency(each.map(|d| d.unwrap_or(all))))
    }

    pub fn is_zero(&self) -> bool {
        *self == Latency::NONE
    }

    /// How long this operation takes, in ns.
    pub fn draw(&self, op: OpKind, rng: &mut Rng) -> u64 {
        self.0[op.index()].draw(rng)
    }
}

/// The failure an injected fault reports.
pub const FAIL_KINDS: &[&str] = &["io", "timeout", "not_found", "refused", "no_space"];

/// The errno a failure kind is reported with (its kind follows from it,
/// as for a real engine's errno).
fn errno_of(kind: &str) -> Option<i32> {
    Some(match kind {
        "io" => libc::EIO,
        "timeout" => libc::ETIMEDOUT,
        "not_found" => libc::ENOENT,
        "refused" => libc::ECONNREFUSED,
        "no_space" => libc::ENOSPC,
        _ => return None,
    })
}

/// The job's injected failures and corruptions.
#[derive(Debug)]
pub struct Faults {
    /// Every Nth operation of `ops` fails (0: none by count).
    pub every: u64,
    /// Each operation of `ops` fails with this probability.
    pub rate: f64,
    pub failure: IoFailure,
    /// Which kinds of operation may fail.
    pub ops: [bool; OpKind::COUNT],
    /// Every Nth write is corrupted once stored (0: none).
    pub corrupt_every: u64,
    seen: AtomicU64,
    writes: AtomicU64,
}

impl Faults {
    pub fn new(every: u64, rate: f64, kind: &str, ops: [bool; OpKind::COUNT], corrupt_every: u64) -> Result<Faults, String> {
        let errno = errno_of(kind).ok_or_else(|| format!("'{kind}' is not a failure kind ({})", FAIL_KINDS.join(", ")))?;
        Ok(Faults { every, rate, failure: IoFailure::errno(errno), ops, corrupt_every, seen: AtomicU64::new(0), writes: AtomicU64::new(0) })
    }

    /// Which kinds of operation `fail_ops` names (empty: all).
    pub fn parse_ops(text: &str) -> Result<[bool; OpKind::COUNT], String> {
        let names: Vec<&str> = text.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
        let mut ops = [names.is_empty(); OpKind::COUNT];
        for n in names {
            let op = op_named(n).ok_or_else(|| format!("'{n}' is not an operation ({})", op_names()))?;
            ops[op.index()] = true;
        }
        Ok(ops)
    }

    /// Whether this operation fails, and how.
    pub fn fails(&self, op: OpKind, rng: &mut Rng) -> Option<IoFailure> {
        if !self.ops[op.index()] || (self.every == 0 && self.rate == 0.0) {
            return None;
        }
        let n = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        let by_count = self.every > 0 && n.is_multiple_of(self.every);
        let by_chance = self.rate > 0.0 && rng.unit() < self.rate;
        (by_count || by_chance).then_some(self.failure)
    }

    /// Whether this (stored) write is one to corrupt.
    pub fn corrupts(&self) -> bool {
        self.corrupt_every > 0 && (self.writes.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(self.corrupt_every)
    }
}
