//! Traces replayed as they were recorded: block traces (fio iologs, version
//! 2 and the timestamped version 3, and blkparse's text output) and
//! object-store access logs (RGW's ops log, Swift's proxy log, S3 server
//! access logs), parsed once per process into [`Trace`] records and handed
//! out to workers by [`ReplayGen`] at the recorded times.
//!
//! The trace's own file and device names are never opened: trace file k
//! lands on the job's file k (modulo the files the job has), and offsets
//! beyond the job's size wrap around it (counted as remapped), so a trace
//! from a production device can be replayed onto a scratch file. Object
//! keys are numbered in order of first use and become the run's own keys,
//! under its prefix, in its bucket or container.

pub mod blkparse;
pub mod iolog;
pub mod objlog;
mod replay;

pub use replay::ReplayGen;

use crate::spec::OpKind;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// How a job replays a trace (fio's `read_iolog` and `replay_*` options).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub path: PathBuf,
    /// Pace against the trace's: 2.0 replays twice as fast (fio's
    /// `replay_time_scale=200`).
    pub speed: f64,
    /// Issue as fast as the queue allows, ignoring the recorded times.
    pub no_stall: bool,
    /// Offsets are divided by this (fio `replay_scale`).
    pub scale: u64,
    /// Offsets are rounded down to a multiple of this (fio `replay_align`).
    pub align: u64,
}

impl ReplaySpec {
    pub fn new(path: PathBuf) -> ReplaySpec {
        ReplaySpec { path, speed: 1.0, no_stall: false, scale: 1, align: 0 }
    }

    /// Where a recorded offset lands before wrapping into the target.
    #[inline]
    pub fn place(&self, offset: u64) -> u64 {
        let o = offset / self.scale.max(1);
        match self.align {
            0 | 1 => o,
            a => o - o % a,
        }
    }
}

/// The formats storbench reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `fio version 2 iolog`: no times; `wait` lines pause.
    IologV2,
    /// `fio version 3 iolog`: every line starts with microseconds since the start.
    IologV3,
    /// blkparse's default text output (queue events, 512-byte sectors).
    Blkparse,
    /// RGW's ops log: a JSON object per request.
    RgwOpsLog,
    /// Swift's proxy-server log (proxy-logging's line).
    SwiftProxyLog,
    /// S3 server access logs (AWS's format, times to the second).
    S3AccessLog,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::IologV2 => "fio iolog v2",
            Format::IologV3 => "fio iolog v3",
            Format::Blkparse => "blkparse",
            Format::RgwOpsLog => "rgw ops log",
            Format::SwiftProxyLog => "swift proxy log",
            Format::S3AccessLog => "s3 access log",
        }
    }

    /// A log of object requests (else of block operations).
    pub fn objects(self) -> bool {
        matches!(self, Format::RgwOpsLog | Format::SwiftProxyLog | Format::S3AccessLog)
    }
}

/// One recorded operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// ns since the trace's first operation.
    pub t_ns: u64,
    pub op: OpKind,
    /// For syncs: fdatasync (fio's `datasync`).
    pub data_only: bool,
    /// Index into [`Trace::files`].
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// An object read of the whole object (else of its first `len` bytes).
    pub whole: bool,
    /// Object requests: the object's size when the log gives it (0: not
    /// given), so an object read before the log writes it is made whole.
    pub object_size: u64,
}

/// A parsed trace, shared by every worker of a process.
#[derive(Debug)]
pub struct Trace {
    pub format: Format,
    /// The trace's own file or device names, in order of first use.
    pub files: Vec<String>,
    pub records: Vec<Record>,
    /// Lines that hold no operation storbench replays (file actions,
    /// blkparse events other than queueing, failed requests...).
    pub skipped: u64,
    /// The last split between workers (see `replay::shares`): computed by
    /// the first worker, taken by the others.
    pub(crate) split: replay::SplitCache,
}

/// What a trace does, for sizing a job and describing it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceSummary {
    /// Operations by [`OpKind::index`].
    pub ops: [u64; OpKind::COUNT],
    /// Highest end (offset + len) per trace file, after `ReplaySpec::place`.
    pub extent: Vec<u64>,
    /// Transfer sizes by how often they occur, most frequent first.
    pub sizes: Vec<(u32, u64)>,
    pub duration_ns: u64,
}

impl Trace {
    /// Parse a trace, telling the format from its first line.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        match first.trim() {
            "fio version 2 iolog" => iolog::parse(text, Format::IologV2),
            "fio version 3 iolog" => iolog::parse(text, Format::IologV3),
            l if l.starts_with("fio version") => {
                Err(format!("'{l}': only fio iolog versions 2 and 3 can be replayed; write the log again with a current fio"))
            }
            _ if objlog::looks_like_rgw(text) => objlog::parse_rgw(text),
            _ if objlog::looks_like_s3(text) => objlog::parse_s3(text),
            _ if blkparse::looks_like(text) => blkparse::parse(text),
            _ if objlog::looks_like_swift(text) => objlog::parse_swift(text),
            _ => Err("not a trace storbench reads: a fio iolog starts with 'fio version 2 iolog' or 'fio version 3 iolog'; \
                 blkparse output has lines like '8,0 1 1 0.000000000 1234 Q W 2048 + 8 [fio]' (blktrace's binary files: \
                 run `blkparse -i TRACE -o trace.txt` first); RGW's ops log has a JSON object per request; Swift's proxy \
                 log and S3 server access logs have their own line formats"
                .into()),
        }
    }

    /// The trace at `path`, parsed once per process while any job holds it.
    pub fn load(path: &Path) -> Result<Arc<Trace>, String> {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Weak<Trace>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(t) = cache.lock().map_err(|_| "trace cache poisoned")?.get(&key).and_then(Weak::upgrade) {
            return Ok(t);
        }
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let text = String::from_utf8_lossy(&text);
        let trace = Arc::new(Trace::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?);
        if trace.records.is_empty() {
            return Err(format!("{}: the trace holds no operation to replay (failed requests are left out)", path.display()));
        }
        let mut c = cache.lock().map_err(|_| "trace cache poisoned")?;
        c.retain(|_, w| w.strong_count() > 0);
        c.insert(key, Arc::downgrade(&trace));
        Ok(trace)
    }

    pub fn summary(&self, spec: &ReplaySpec) -> TraceSummary {
        let mut s = TraceSummary { extent: vec![0; self.files.len()], ..Default::default() };
        let mut sizes: HashMap<u32, u64> = HashMap::new();
        for r in &self.records {
            s.ops[r.op.index()] += 1;
            if r.op.moves_data() && !self.format.objects() {
                let e = &mut s.extent[r.file as usize];
                *e = (*e).max(spec.place(r.offset).saturating_add(r.len as u64));
                // A discard moves no buffer: it does not size the job's transfers.
                if r.op != OpKind::Trim {
                    *sizes.entry(r.len).or_default() += 1;
                }
            } else if r.len > 0 && r.op != OpKind::Trim {
                *sizes.entry(r.len).or_default() += 1;
            }
        }
        s.sizes = sizes.into_iter().collect();
        s.sizes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        s.duration_ns = self.records.last().map_or(0, |r| r.t_ns);
        s
    }
}

/// The digits after a decimal point of seconds, as ns ("5" is 500 ms;
/// digits past the ninth are dropped).
pub(crate) fn fraction_ns(digits: &str) -> Option<u64> {
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let d = &digits[..digits.len().min(9)];
    Some(d.parse::<u64>().unwrap_or(0) * 10u64.pow(9 - d.len() as u32))
}

/// Names seen in a trace, numbered in order of first use.
#[derive(Default)]
pub(crate) struct FileNames {
    pub names: Vec<String>,
    index: HashMap<String, u32>,
}

impl FileNames {
    pub fn of(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }
}

/// A transfer length as the trace gives it, bounded to what one operation
/// can carry.
pub(crate) fn length(v: u64, line: usize) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("line {line}: a transfer of {v} bytes is larger than storbench issues (4 GiB)"))
}

/// Discards are split into pieces of at most this (fstrim's reach whole
/// devices; a discard moves no buffer, so its size is only the range's).
pub(crate) const TRIM_PIECE: u64 = 1 << 30;

/// A block operation of `len` bytes at `offset`: one record, or a discard's
/// pieces. Offsets and lengths that overflow are the line's error.
pub(crate) fn push_block(records: &mut Vec<Record>, r: Record, len: u64, line: usize) -> Result<(), String> {
    let end = r.offset.checked_add(len).ok_or_else(|| format!("line {line}: offset {} + {len} bytes is past any device", r.offset))?;
    if r.op != OpKind::Trim {
        records.push(Record { len: if r.op.moves_data() { length(len, line)? } else { 0 }, ..r });
        return Ok(());
    }
    let mut at = r.offset;
    while at < end {
        let piece = (end - at).min(TRIM_PIECE);
        records.push(Record { offset: at, len: piece as u32, ..r });
        at += piece;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_is_told_from_the_first_line() {
        assert_eq!(Trace::parse("fio version 2 iolog\n/f add\n/f read 0 4096\n").unwrap().format, Format::IologV2);
        assert_eq!(Trace::parse("fio version 3 iolog\n1 /f read 0 4096\n").unwrap().format, Format::IologV3);
        let b = "  8,0    1        1     0.000000000  4162  Q   W 2048 + 8 [fio]\n";
        assert_eq!(Trace::parse(b).unwrap().format, Format::Blkparse);
        let e = Trace::parse("fio version 1 iolog\n").unwrap_err();
        assert!(e.contains("versions 2 and 3"), "{e}");
        let e = Trace::parse("hello\n").unwrap_err();
        assert!(e.contains("blkparse -i"), "{e}");
    }

    #[test]
    fn summary_counts_and_sizes_the_trace() {
        let t = Trace::parse("fio version 3 iolog\n0 /a read 8192 4096\n5 /b write 0 65536\n9 /a trim 0 4096\n12 /a sync 0 0\n").unwrap();
        let mut spec = ReplaySpec::new("x".into());
        let s = t.summary(&spec);
        let n = |op: OpKind| s.ops[op.index()];
        assert_eq!((n(OpKind::Read), n(OpKind::Write), n(OpKind::Trim), n(OpKind::Sync)), (1, 1, 1, 1));
        assert_eq!(s.extent, vec![12288, 65536]);
        assert_eq!(s.sizes[0], (4096, 1), "the read; the trim sizes no buffer");
        assert_eq!(s.duration_ns, 12_000);
        spec.scale = 2;
        spec.align = 4096;
        assert_eq!(t.summary(&spec).extent, vec![4096 + 4096, 65536], "8192/2 aligned down stays 4096");
    }
}
