//! Per-operation error tallies by kind, recorded without allocating.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Error code for an I/O that transferred fewer bytes than asked.
pub const SHORT_IO: i32 = -1;
/// HTTP failures are counted as `HTTP_STATUS_BASE + status`, above any errno.
pub const HTTP_STATUS_BASE: i32 = 100_000;
const SLOTS: usize = 8;

/// Counts of errors by OS error code; the first eight distinct codes are kept
/// apart, any further ones are counted together as "other".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorTally {
    slots: [(i32, u64); SLOTS],
    used: usize,
    other: u64,
}

impl ErrorTally {
    #[inline]
    pub fn record(&mut self, code: i32) {
        self.add(code, 1);
    }

    pub fn add(&mut self, code: i32, n: u64) {
        if let Some(s) = self.slots[..self.used].iter_mut().find(|s| s.0 == code) {
            s.1 += n;
        } else if self.used < SLOTS {
            self.slots[self.used] = (code, n);
            self.used += 1;
        } else {
            self.other += n;
        }
    }

    pub fn total(&self) -> u64 {
        self.slots[..self.used].iter().map(|s| s.1).sum::<u64>() + self.other
    }

    pub fn merge(&mut self, other: &ErrorTally) {
        for (code, n) in &other.slots[..other.used] {
            self.add(*code, *n);
        }
        self.other += other.other;
    }

    pub fn reset(&mut self) {
        *self = ErrorTally::default();
    }

    /// Error name -> count, e.g. {"EIO (Input/output error)": 3}.
    pub fn by_name(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (code, n) in &self.slots[..self.used] {
            *m.entry(error_name(*code)).or_insert(0) += n;
        }
        if self.other > 0 {
            m.insert("other".into(), self.other);
        }
        m
    }
}

/// A readable name for an OS error code.
pub fn error_name(code: i32) -> String {
    if code == SHORT_IO {
        return "short I/O".into();
    }
    if (HTTP_STATUS_BASE + 100..HTTP_STATUS_BASE + 600).contains(&code) {
        return format!("HTTP {}", code - HTTP_STATUS_BASE);
    }
    let name = match code {
        libc::EIO => "EIO",
        libc::ENOSPC => "ENOSPC",
        libc::EINVAL => "EINVAL",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EAGAIN => "EAGAIN",
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
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNRESET => "ECONNRESET",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::EPIPE => "EPIPE",
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

impl Serialize for ErrorTally {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let codes: Vec<(i32, u64)> = self.slots[..self.used].to_vec();
        (codes, self.other).serialize(s)
    }
}

impl<'de> Deserialize<'de> for ErrorTally {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (codes, other): (Vec<(i32, u64)>, u64) = Deserialize::deserialize(d)?;
        let mut t = ErrorTally::default();
        for (c, n) in codes {
            t.add(c, n);
        }
        t.other += other;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_overflows_into_other() {
        let mut t = ErrorTally::default();
        t.record(libc::EIO);
        t.record(libc::EIO);
        t.record(SHORT_IO);
        for code in 100..110 {
            t.record(code);
        }
        assert_eq!(t.total(), 13);
        let m = t.by_name();
        assert_eq!(m["EIO (Input/output error)"], 2);
        assert_eq!(m["short I/O"], 1);
        assert_eq!(m["other"], 4);
    }
}
