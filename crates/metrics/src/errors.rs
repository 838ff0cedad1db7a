//! Per-operation failures: a backend-independent kind (not found, timeout...)
//! with the engine's own detail (errno, HTTP status) beside it, and tallies of
//! them recorded without allocating.
//!
//! The kind is what lines up across engines: a missing object is `ENOENT` on
//! RADOS and `HTTP 404` on S3, and both are [`ErrorKind::NotFound`]. The detail
//! keeps what the storage actually said.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What went wrong, whatever the storage behind it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The object, file or bucket is not there.
    NotFound,
    /// Something of that name exists already.
    AlreadyExists,
    /// Credentials refused or access denied.
    Permission,
    /// No answer in time.
    Timeout,
    /// The connection could not be made or broke.
    Connection,
    /// The storage is overloaded or throttling (HTTP 429/503, EAGAIN, EBUSY).
    Busy,
    /// Out of space or quota, or too large to store.
    NoSpace,
    /// The storage failed the operation (EIO, HTTP 5xx, a short transfer).
    Io,
    /// Anything else.
    Other,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::NotFound,
        ErrorKind::AlreadyExists,
        ErrorKind::Permission,
        ErrorKind::Timeout,
        ErrorKind::Connection,
        ErrorKind::Busy,
        ErrorKind::NoSpace,
        ErrorKind::Io,
        ErrorKind::Other,
    ];

    /// Words for people: "not found".
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not found",
            ErrorKind::AlreadyExists => "already exists",
            ErrorKind::Permission => "permission",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Busy => "busy",
            ErrorKind::NoSpace => "no space",
            ErrorKind::Io => "I/O",
            ErrorKind::Other => "other",
        }
    }

    /// The kind of an OS (or librados/librbd) error number.
    pub fn of_errno(errno: i32) -> ErrorKind {
        match errno {
            libc::ENOENT | libc::ENXIO | libc::ENODEV => ErrorKind::NotFound,
            libc::EEXIST => ErrorKind::AlreadyExists,
            libc::EACCES | libc::EPERM | libc::EROFS | libc::EKEYREJECTED => ErrorKind::Permission,
            libc::ETIMEDOUT => ErrorKind::Timeout,
            libc::ECONNREFUSED
            | libc::ECONNRESET
            | libc::ECONNABORTED
            | libc::EPIPE
            | libc::EHOSTUNREACH
            | libc::ENETUNREACH
            | libc::ENETDOWN
            | libc::ENOTCONN
            | libc::EPROTO => ErrorKind::Connection,
            libc::EAGAIN | libc::EBUSY => ErrorKind::Busy,
            libc::ENOSPC | libc::EDQUOT | libc::EFBIG => ErrorKind::NoSpace,
            // EBADMSG: an answer without what the protocol promises (an ETag, an upload id).
            libc::EIO | libc::EBADMSG => ErrorKind::Io,
            _ => ErrorKind::Other,
        }
    }

    /// The kind of an HTTP failure status.
    pub fn of_http(status: u16) -> ErrorKind {
        match status {
            404 | 410 => ErrorKind::NotFound,
            409 | 412 => ErrorKind::AlreadyExists,
            401 | 403 => ErrorKind::Permission,
            408 | 504 => ErrorKind::Timeout,
            429 | 503 => ErrorKind::Busy,
            413 | 507 => ErrorKind::NoSpace,
            500..=599 => ErrorKind::Io,
            _ => ErrorKind::Other,
        }
    }
}

/// What the storage itself said.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// An OS or Ceph library error number (positive).
    Errno(i32),
    /// An HTTP status.
    Http(u16),
    /// Fewer bytes moved than asked.
    ShortIo,
}

impl Detail {
    /// A readable name: "ENOENT (No such file or directory)", "HTTP 404", "short I/O".
    pub fn name(self) -> String {
        match self {
            Detail::Errno(e) => errno_name(e),
            Detail::Http(s) => format!("HTTP {s}"),
            Detail::ShortIo => "short I/O".into(),
        }
    }
}

/// One failed operation: its kind and the storage's own detail.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IoFailure {
    pub kind: ErrorKind,
    pub detail: Detail,
}

impl IoFailure {
    #[inline]
    pub fn errno(errno: i32) -> IoFailure {
        IoFailure { kind: ErrorKind::of_errno(errno), detail: Detail::Errno(errno) }
    }
    #[inline]
    pub fn http(status: u16) -> IoFailure {
        IoFailure { kind: ErrorKind::of_http(status), detail: Detail::Http(status) }
    }
    pub const SHORT_IO: IoFailure = IoFailure { kind: ErrorKind::Io, detail: Detail::ShortIo };

    /// The errno, for failures that have one.
    pub fn errno_value(self) -> Option<i32> {
        match self.detail {
            Detail::Errno(e) => Some(e),
            _ => None,
        }
    }
}

impl std::fmt::Display for IoFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.detail.name(), self.kind.name())
    }
}

const SLOTS: usize = 8;

/// Counts of failures: exactly per kind, and per detail for the first eight
/// distinct details (any further ones are counted together as "other").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorTally {
    kinds: [u64; ErrorKind::ALL.len()],
    details: [(Option<Detail>, u64); SLOTS],
    used: usize,
    other: u64,
}

impl ErrorTally {
    #[inline]
    pub fn record(&mut self, f: IoFailure) {
        self.add(f, 1);
    }

    pub fn add(&mut self, f: IoFailure, n: u64) {
        self.kinds[f.kind as usize] += n;
        self.add_detail(f.detail, n);
    }

    fn add_detail(&mut self, d: Detail, n: u64) {
        if let Some(s) = self.details[..self.used].iter_mut().find(|s| s.0 == Some(d)) {
            s.1 += n;
        } else if self.used < SLOTS {
            self.details[self.used] = (Some(d), n);
            self.used += 1;
        } else {
            self.other += n;
        }
    }

    pub fn total(&self) -> u64 {
        self.kinds.iter().sum()
    }

    pub fn merge(&mut self, other: &ErrorTally) {
        for (k, n) in self.kinds.iter_mut().zip(other.kinds) {
            *k += n;
        }
        for (d, n) in &other.details[..other.used] {
            self.add_detail(d.expect("used slots hold a detail"), *n);
        }
        self.other += other.other;
    }

    pub fn reset(&mut self) {
        *self = ErrorTally::default();
    }

    /// Detail name -> count, e.g. {"EIO (Input/output error)": 3, "HTTP 404": 1}.
    pub fn by_detail(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (d, n) in &self.details[..self.used] {
            *m.entry(d.expect("used slots hold a detail").name()).or_insert(0) += n;
        }
        if self.other > 0 {
            m.insert("other".into(), self.other);
        }
        m
    }

    /// Kind -> count, for the kinds that occurred.
    pub fn by_kind(&self) -> BTreeMap<ErrorKind, u64> {
        ErrorKind::ALL.iter().zip(self.kinds).filter(|(_, n)| *n > 0).map(|(k, n)| (*k, n)).collect()
    }
}

/// A readable name for an OS error code: "ENOENT (No such file or directory)".
pub fn errno_name(code: i32) -> String {
    let name = match code {
        libc::EIO => "EIO",
        libc::ENOSPC => "ENOSPC",
        libc::EINVAL => "EINVAL",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EAGAIN => "EAGAIN",
        libc::EBUSY => "EBUSY",
        libc::EROFS => "EROFS",
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::ENXIO => "ENXIO",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EDQUOT => "EDQUOT",
        libc::EFBIG => "EFBIG",
        libc::ENOMEM => "ENOMEM",
        libc::ECANCELED => "ECANCELED",
        libc::ENOENT => "ENOENT",
        libc::EEXIST => "EEXIST",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNRESET => "ECONNRESET",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::EPIPE => "EPIPE",
        libc::EPROTO => "EPROTO",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EBADMSG => "EBADMSG",
        _ => "",
    };
    let text = std::io::Error::from_raw_os_error(code).to_string();
    let text = text.split(" (os error").next().unwrap_or("").to_string();
    if name.is_empty() {
        format!("errno {code} ({text})")
    } else {
        format!("{name} ({text})")
    }
}

/// On the wire (agent reports): the kind counts, the detail slots and the
/// overflow, so that a merge on the other side is exact.
#[derive(Serialize, Deserialize)]
struct Wire {
    kinds: Vec<(ErrorKind, u64)>,
    details: Vec<(Detail, u64)>,
    other: u64,
}

impl Serialize for ErrorTally {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let details = self.details[..self.used].iter().map(|(d, n)| (d.expect("used slots hold a detail"), *n)).collect();
        Wire { kinds: self.by_kind().into_iter().collect(), details, other: self.other }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ErrorTally {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        let mut t = ErrorTally::default();
        for (k, n) in w.kinds {
            t.kinds[k as usize] += n;
        }
        for (d, n) in w.details {
            t.add_detail(d, n);
        }
        t.other += w.other;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_exactly_and_by_detail_up_to_eight() {
        let mut t = ErrorTally::default();
        t.record(IoFailure::errno(libc::EIO));
        t.record(IoFailure::errno(libc::EIO));
        t.record(IoFailure::SHORT_IO);
        for status in 500..510 {
            t.record(IoFailure::http(status));
        }
        assert_eq!(t.total(), 13);
        let d = t.by_detail();
        assert_eq!(d["EIO (Input/output error)"], 2);
        assert_eq!(d["short I/O"], 1);
        assert_eq!(d["other"], 4);
        // 503 is busy, 504 a timeout, 507 out of space; the other 5xx are I/O failures.
        assert_eq!(t.by_kind()[&ErrorKind::Io], 10);
        assert_eq!(t.by_kind()[&ErrorKind::Busy], 1);
    }

    #[test]
    fn a_missing_object_is_the_same_kind_on_every_backend() {
        assert_eq!(IoFailure::errno(libc::ENOENT).kind, IoFailure::http(404).kind);
        assert_eq!(IoFailure::errno(libc::ETIMEDOUT).kind, IoFailure::http(504).kind);
        assert_eq!(IoFailure::errno(libc::EACCES).kind, IoFailure::http(403).kind);
        assert_eq!(IoFailure::errno(libc::ENOSPC).kind, IoFailure::http(507).kind);
        assert_eq!(IoFailure::http(503).kind, ErrorKind::Busy);
    }

    #[test]
    fn tallies_merge_exactly_through_the_wire_form() {
        let mut a = ErrorTally::default();
        a.record(IoFailure::errno(libc::ENOENT));
        a.record(IoFailure::http(404));
        let back: ErrorTally = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back, a);
        let mut m = a.clone();
        m.merge(&back);
        assert_eq!(m.by_kind()[&ErrorKind::NotFound], 4);
        assert_eq!(m.by_detail()["HTTP 404"], 2);
    }
}
