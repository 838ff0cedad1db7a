//! What checking data read back found: counts by outcome, the failures
//! themselves (the first few, each naming where and what), and what the
//! checking cost.

use serde::{Deserialize, Serialize};

/// Failures kept per worker interval, and per job in the results: enough to
/// find the pattern, bounded however badly a store fails.
pub const KEPT_FAILURES: usize = 100;

/// How a unit read back was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyKind {
    /// The bytes are not what any write put there (checksum, header, or a
    /// header written for another place).
    Corrupt,
    /// An intact unit of an older generation than the newest acknowledged
    /// write: the store acknowledged a write it then lost.
    LostWrite,
    /// An object's older version after a newer one was acknowledged (a read
    /// the store served from a stale copy).
    Stale,
    /// Nothing where something was written: zeros in a block, or no object.
    Missing,
}

impl VerifyKind {
    pub const ALL: [VerifyKind; 4] = [VerifyKind::Corrupt, VerifyKind::LostWrite, VerifyKind::Stale, VerifyKind::Missing];

    pub fn name(self) -> &'static str {
        match self {
            VerifyKind::Corrupt => "corrupt",
            VerifyKind::LostWrite => "lost write",
            VerifyKind::Stale => "stale read",
            VerifyKind::Missing => "missing",
        }
    }
}

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyFailure {
    pub kind: VerifyKind,
    /// The file, device, image or object.
    pub target: String,
    /// Byte offset of the unit in its target.
    pub offset: u64,
    /// The generations that were right (oldest and newest acknowledged
    /// write that may be there: concurrent writes may land in either order).
    pub expected: [u64; 2],
    /// The generation the unit holds, when it has a readable header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<u64>,
    /// The first wrong byte within the unit, when it can be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte: Option<u32>,
    /// What was seen, in words.
    pub what: String,
}

/// Counts of a job's (or one worker interval's) checks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyTally {
    /// Units judged, and their bytes.
    pub checked: u64,
    pub checked_bytes: u64,
    /// Failures by kind, in [`VerifyKind::ALL`]'s order.
    pub failed: [u64; 4],
    /// Units read but not judged: a write to them was in flight, or one was
    /// issued while the read was (either content is right then).
    pub in_flight: u64,
    /// Units whose last write failed or whose run crashed with it in flight:
    /// what they hold is not known (nor, without a table, what a ranged
    /// read of an object shows: not its version's header).
    pub unknown: u64,
    /// Units read that no write of this run (or its saved state) reached.
    pub unwritten: u64,
    /// Of the units checked: those judged by their own header alone (a read
    /// run without a table of acknowledged writes, i.e. without
    /// `verify_state`): checksum and offset checked, an older intact
    /// generation (a lost write) cannot be told from the right one.
    #[serde(default)]
    pub by_header: u64,
    /// Of the corrupt: units holding an intact header written for another
    /// offset, or objects holding another key's intact version (a
    /// misdirected write or read).
    #[serde(default)]
    pub misplaced: u64,
    /// Units judged by header that storbench could not check as read: fio's
    /// with a checksum type it does not compute, or pieces of a unit larger
    /// than the read that held its header. Not judged.
    #[serde(default)]
    pub foreign: u64,
    /// The first such unit and why it was not checked, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_first: Option<String>,
    /// Time spent stamping writes and checking reads (the checking's own
    /// CPU, apart from the I/O).
    pub cpu_ns: u64,
    /// Bytes of writes stamped with headers.
    #[serde(default)]
    pub stamped_bytes: u64,
    /// Objects whose presence in a listing was checked (object jobs).
    #[serde(default)]
    pub listed: u64,
    /// Of those: deleted objects the listing still showed, and objects it
    /// did not show that were written (on a second look 2 s later). Listings
    /// may be eventually consistent, so these are warnings, not failures.
    #[serde(default)]
    pub listing_stale: u64,
    #[serde(default)]
    pub listing_missing: u64,
    /// The first few such objects, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listing_examples: Vec<String>,
    /// The read-back pass after the measured phase: bytes and time.
    pub pass_bytes: u64,
    pub pass_ns: u64,
    /// The first failures (at most [`KEPT_FAILURES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<VerifyFailure>,
}

impl VerifyTally {
    pub fn failures_total(&self) -> u64 {
        self.failed.iter().sum()
    }

    pub fn count(&self, kind: VerifyKind) -> u64 {
        self.failed[kind as usize]
    }

    /// The failures by kind in words: "2 corrupt, 1 lost write".
    pub fn counts_text(&self) -> String {
        let kinds: Vec<String> =
            VerifyKind::ALL.iter().filter(|k| self.count(**k) > 0).map(|k| format!("{} {}", self.count(*k), k.name())).collect();
        kinds.join(", ")
    }

    /// Count a failure, keeping its details while there is room.
    #[cold]
    pub fn fail(&mut self, f: VerifyFailure) {
        self.failed[f.kind as usize] += 1;
        if self.failures.len() < KEPT_FAILURES {
            self.failures.push(f);
        }
    }

    pub fn merge(&mut self, o: &VerifyTally) {
        self.checked += o.checked;
        self.checked_bytes += o.checked_bytes;
        for (a, b) in self.failed.iter_mut().zip(o.failed) {
            *a += b;
        }
        self.in_flight += o.in_flight;
        self.unknown += o.unknown;
        self.unwritten += o.unwritten;
        self.by_header += o.by_header;
        self.misplaced += o.misplaced;
        self.foreign += o.foreign;
        if self.foreign_first.is_none() {
            self.foreign_first.clone_from(&o.foreign_first);
        }
        self.cpu_ns += o.cpu_ns;
        self.stamped_bytes += o.stamped_bytes;
        self.listed += o.listed;
        self.listing_stale += o.listing_stale;
        self.listing_missing += o.listing_missing;
        let room = 10usize.saturating_sub(self.listing_examples.len());
        self.listing_examples.extend(o.listing_examples.iter().take(room).cloned());
        self.pass_bytes += o.pass_bytes;
        self.pass_ns = self.pass_ns.max(o.pass_ns);
        let room = KEPT_FAILURES.saturating_sub(self.failures.len());
        self.failures.extend(o.failures.iter().take(room).cloned());
    }

    pub fn is_empty(&self) -> bool {
        *self == VerifyTally::default()
    }

    /// The checking's CPU in ms per GiB stamped or checked.
    pub fn cpu_ms_per_gib(&self) -> Option<f64> {
        let bytes = self.stamped_bytes + self.checked_bytes;
        (bytes > 0).then(|| self.cpu_ns as f64 / 1e6 / (bytes as f64 / (1u64 << 30) as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(kind: VerifyKind, offset: u64) -> VerifyFailure {
        VerifyFailure { kind, target: "t".into(), offset, expected: [3, 3], found: Some(2), byte: None, what: "x".into() }
    }

    #[test]
    fn merging_adds_counts_and_keeps_a_bounded_list() {
        let mut a = VerifyTally::default();
        let mut b = VerifyTally { checked: 5, pass_ns: 7, ..Default::default() };
        for i in 0..(KEPT_FAILURES as u64 + 10) {
            b.fail(failure(VerifyKind::LostWrite, i));
        }
        a.fail(failure(VerifyKind::Corrupt, 0));
        a.merge(&b);
        assert_eq!(a.checked, 5);
        assert_eq!(a.count(VerifyKind::LostWrite), KEPT_FAILURES as u64 + 10);
        assert_eq!(a.count(VerifyKind::Corrupt), 1);
        assert_eq!(a.failures.len(), KEPT_FAILURES);
        assert_eq!(a.failures[0].kind, VerifyKind::Corrupt);
        assert_eq!(a.pass_ns, 7);
    }
}
