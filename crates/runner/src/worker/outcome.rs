//! What one completion means: the bytes or the failure it adds to its
//! operation's figures, and how it settled for the generator's model.
//! Kept apart from the loop that calls it (`hot.rs`); all of it inlined
//! there but the failures, which are the rare path.

use storbench_engine::Completion;
use storbench_metrics::{ErrorKind, IoFailure, OpStats};
use storbench_workload::{OpKind, Settled};

/// Reads are direction 0 and writes 1 in fio's per-direction figures.
#[inline]
pub(super) fn rw_dir(op: OpKind) -> Option<usize> {
    match op {
        OpKind::Read => Some(0),
        OpKind::Write => Some(1),
        _ => None,
    }
}

/// What one completion adds to the stats of its operation.
pub(super) struct Outcome {
    /// Bytes moved, or the failure (a short transfer included).
    pub(super) result: Result<u64, IoFailure>,
    pub(super) retries: u64,
    pub(super) latency: u64,
    /// From its issue (what fio's latency_target judges).
    pub(super) service: u64,
    /// From when the kernel took it (fio's clat): the service time unless
    /// the engine submits apart.
    pub(super) clat: u64,
    /// Issue to submission (fio's slat), for engines that submit apart.
    pub(super) submit: Option<u64>,
    pub(super) first_byte: Option<u64>,
}

impl Outcome {
    #[inline]
    pub(super) fn of(c: &Completion, op: OpKind, len: u32, latency: u64, service: u64) -> Outcome {
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
            clat: service,
            submit: None,
            first_byte: (c.tail_ns > 0).then(|| latency.saturating_sub(c.tail_ns)),
        }
    }

    /// The engine submitted it apart from its issue (see `Slots::sent`).
    #[inline]
    pub(super) fn sent_apart(&mut self, clat: u64, submit: u64) {
        self.clat = clat;
        self.submit = Some(submit);
    }

    #[inline]
    pub(super) fn add_to(&self, stats: &mut OpStats) {
        stats.retries += self.retries;
        match self.result {
            Ok(bytes) => {
                stats.record(bytes, self.latency, self.clat);
                if let Some(slat) = self.submit {
                    stats.submit.record(slat);
                }
                if let Some(fb) = self.first_byte {
                    stats.first_byte.record(fb);
                }
            }
            Err(f) => failed(stats, f),
        }
    }
}

/// fio's max_latency failure (its lat_fatal).
#[cold]
#[inline(never)]
pub(super) fn too_slow(latency_ns: u64, max_ns: u64) -> String {
    format!("latency of {latency_ns} ns exceeds max_latency ({max_ns} ns) {}", storbench_model::FIO_LATENCY_EXCEEDED)
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
#[inline]
fn maybe_done(f: IoFailure) -> bool {
    use storbench_metrics::Detail;
    matches!(f.kind, ErrorKind::Connection | ErrorKind::Timeout) && f.detail != Detail::Errno(libc::ECONNREFUSED)
}

/// How an operation ended, as far as its generator's model is concerned.
#[inline]
pub(super) fn settled(result: Result<u64, IoFailure>) -> Settled {
    match result {
        Ok(_) => Settled::Done,
        Err(f) if f.kind == ErrorKind::NotFound => Settled::NotFound,
        Err(f) if maybe_done(f) => Settled::Unknown,
        Err(_) => Settled::Failed,
    }
}
