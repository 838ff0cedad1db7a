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
//!
//! Loading is bounded ([`Trace::load`]): only a regular file is read, its
//! memory is estimated from its size and its first MiB before anything is
//! kept (refused over the caller's budget), and reading stops if the records
//! outgrow the budget anyway. Block traces are parsed a line at a time from
//! the file (about 36 bytes a record, the text never held whole); object
//! logs are read whole (an ops log's JSON may span lines), and cost more.

pub mod blkparse;
pub mod iolog;
pub mod objlog;
mod replay;

pub use replay::ReplayGen;

use crate::spec::OpKind;
use crate::units::format_amount;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Read as _;
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

/// One recorded operation (32 bytes: a trace is held as these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// ns since the trace's first operation.
    pub t_ns: u64,
    pub op: OpKind,
    /// For syncs: fdatasync (fio's `datasync`).
    pub data_only: bool,
    /// Index into [`Trace::files`].
    pub file: u32,
    /// Block operations: the offset. Object requests have none, and keep
    /// the object's size here ([`Record::object_size`]).
    pub offset: u64,
    pub len: u32,
    /// An object read of the whole object (else of its first `len` bytes).
    pub whole: bool,
}

impl Record {
    /// Object requests: the object's size when the log gives it (0: not
    /// given), so an object read before the log writes it is made whole.
    pub fn object_size(&self) -> u64 {
        self.offset
    }
}

/// A trace format read a line at a time.
pub(crate) trait LineParser {
    /// Line `n` (from 0) of the trace.
    fn line(&mut self, n: usize, raw: &str) -> Result<(), String>;
    /// Records so far (what loading bounds).
    fn records(&self) -> usize;
    fn finish(self: Box<Self>) -> Result<Trace, String>;
}

/// Why a trace was not loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read, or is not a trace.
    Bad(String),
    /// Loading it would take more memory than the budget (`stopped_at`:
    /// the line where reading stopped, when the estimate was too low).
    TooLarge { needs: u64, budget: u64, stopped_at: Option<usize> },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Bad(m) => write!(f, "{m}"),
            LoadError::TooLarge { needs, budget, stopped_at: None } => {
                write!(f, "this trace needs about {} to load, {} is available", format_amount(*needs), format_amount(*budget))
            }
            LoadError::TooLarge { needs, budget, stopped_at: Some(line) } => write!(
                f,
                "this trace needs more than {} to load (reading stopped at line {line}), {} is available",
                format_amount(*needs),
                format_amount(*budget)
            ),
        }
    }
}

/// Bytes a record costs loaded: itself, and its index in a worker's share.
pub const RECORD_BYTES: u64 = std::mem::size_of::<Record>() as u64 + 4;

/// What the format is told from, and the sample the estimate counts lines in.
const HEAD: usize = 1 << 20;

/// A longer line is not a trace's (a file of one endless line is refused
/// before it is held).
const MAX_LINE: usize = 1 << 20;

/// Records a trace may hold: shares index them with u32.
const MAX_RECORDS: usize = u32::MAX as usize;

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
    fn new(format: Format, files: Vec<String>, mut records: Vec<Record>, skipped: u64) -> Trace {
        records.shrink_to_fit();
        Trace { format, files, records, skipped, split: Default::default() }
    }

    /// The format of a trace that starts with `head`.
    fn detect(head: &str) -> Result<Format, String> {
        let first = head.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        match first.trim() {
            "fio version 2 iolog" => Ok(Format::IologV2),
            "fio version 3 iolog" => Ok(Format::IologV3),
            l if l.starts_with("fio version") => {
                Err(format!("'{l}': only fio iolog versions 2 and 3 can be replayed; write the log again with a current fio"))
            }
            _ if objlog::looks_like_rgw(head) => Ok(Format::RgwOpsLog),
            _ if objlog::looks_like_s3(head) => Ok(Format::S3AccessLog),
            _ if blkparse::looks_like(head) => Ok(Format::Blkparse),
            _ if objlog::looks_like_swift(head) => Ok(Format::SwiftProxyLog),
            _ => Err("not a trace storbench reads: a fio iolog starts with 'fio version 2 iolog' or 'fio version 3 iolog'; \
                 blkparse output has lines like '8,0 1 1 0.000000000 1234 Q W 2048 + 8 [fio]' (blktrace's binary files: \
                 run `blkparse -i TRACE -o trace.txt` first); RGW's ops log has a JSON object per request; Swift's proxy \
                 log and S3 server access logs have their own line formats"
                .into()),
        }
    }

    /// The line parser of a block format (object logs are parsed whole).
    fn line_parser(format: Format) -> Option<Box<dyn LineParser>> {
        match format {
            Format::IologV2 | Format::IologV3 => Some(Box::new(iolog::Parser::new(format))),
            Format::Blkparse => Some(Box::<blkparse::Parser>::default()),
            _ => None,
        }
    }

    /// Parse a trace, telling the format from its first line.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let format = Trace::detect(text)?;
        match Trace::line_parser(format) {
            Some(mut p) => {
                for (n, line) in text.lines().enumerate() {
                    p.line(n, line)?;
                }
                p.finish()
            }
            None => Trace::parse_whole(format, text),
        }
    }

    fn parse_whole(format: Format, text: &str) -> Result<Trace, String> {
        match format {
            Format::RgwOpsLog => objlog::parse_rgw(text),
            Format::S3AccessLog => objlog::parse_s3(text),
            Format::SwiftProxyLog => objlog::parse_swift(text),
            _ => Trace::parse(text),
        }
    }

    /// The trace at `path`, parsed once per process while any job holds it,
    /// if loading it takes at most `budget` bytes of memory.
    pub fn load(path: &Path, budget: u64) -> Result<Arc<Trace>, LoadError> {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Weak<Trace>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let poisoned = || LoadError::Bad("trace cache poisoned".into());
        if let Some(t) = cache.lock().map_err(|_| poisoned())?.get(&key).and_then(Weak::upgrade) {
            return Ok(t);
        }
        let named = |e: LoadError| match e {
            LoadError::Bad(m) => LoadError::Bad(format!("{}: {m}", path.display())),
            other => other,
        };
        let trace = Arc::new(read(path, budget).map_err(named)?);
        if trace.records.is_empty() {
            return Err(named(LoadError::Bad("the trace holds no operation to replay (failed requests are left out)".into())));
        }
        let mut c = cache.lock().map_err(|_| poisoned())?;
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

/// Read and parse the trace at `path` within `budget` bytes: a regular
/// file only, its memory estimated before anything is kept.
fn read(path: &Path, budget: u64) -> Result<Trace, LoadError> {
    let bad = |m: String| LoadError::Bad(m);
    let (mut file, size) = crate::input::open_regular(path).map_err(|e| bad(format!("{e} (a trace is read from a file)")))?;
    let mut head = Vec::with_capacity(HEAD.min(size as usize));
    (&mut file).take(HEAD as u64).read_to_end(&mut head).map_err(|e| bad(e.to_string()))?;
    let format = Trace::detect(&String::from_utf8_lossy(&head)).map_err(bad)?;
    let needs = estimate(format, size, &head);
    if needs > budget {
        return Err(LoadError::TooLarge { needs, budget, stopped_at: None });
    }
    match Trace::line_parser(format) {
        Some(p) => stream(p, head, file, budget),
        None => {
            // Within the budget: the estimate counted the text whole.
            file.take(budget).read_to_end(&mut head).map_err(|e| bad(e.to_string()))?;
            Trace::parse_whole(format, &String::from_utf8_lossy(&head)).map_err(bad)
        }
    }
}

/// Bytes loading a trace of `size` bytes takes, from the lines in its
/// first MiB: a record per line for block formats (read a line at a time);
/// object logs are held whole while parsed, and each request's key is kept
/// twice more (the request, the table of names).
pub fn estimate(format: Format, size: u64, head: &[u8]) -> u64 {
    let lines = head.iter().filter(|b| **b == b'\n').count().max(1) as u64;
    let per_line = (head.len() as u64).max(1) as f64 / lines as f64;
    let records = (size as f64 / per_line).ceil() as u64;
    let records_bytes = records.saturating_mul(RECORD_BYTES);
    match format.objects() {
        true => size.saturating_mul(3).saturating_add(records_bytes),
        false => records_bytes,
    }
}

/// Feed `p` the lines of `head` and then of the rest of `file`, a chunk at
/// a time, stopping once its records outgrow `budget`.
fn stream(mut p: Box<dyn LineParser>, head: Vec<u8>, mut file: std::fs::File, budget: u64) -> Result<Trace, LoadError> {
    let bad = |m: String| LoadError::Bad(m);
    let mut buf = head;
    let mut n = 0usize;
    let mut eof = false;
    loop {
        // Whole lines only; the last piece of the buffer waits for its end.
        let end = match eof {
            true => buf.len(),
            false => buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1),
        };
        for line in String::from_utf8_lossy(&buf[..end]).lines() {
            p.line(n, line).map_err(bad)?;
            n += 1;
        }
        let held = p.records();
        if held as u64 * RECORD_BYTES > budget || held > MAX_RECORDS {
            return Err(LoadError::TooLarge { needs: held as u64 * RECORD_BYTES, budget, stopped_at: Some(n) });
        }
        buf.drain(..end);
        if eof {
            break;
        }
        if buf.len() > MAX_LINE {
            return Err(bad(format!("line {} is longer than {}: this is not a trace", n + 1, format_amount(MAX_LINE as u64))));
        }
        let before = buf.len();
        (&mut file).take(HEAD as u64).read_to_end(&mut buf).map_err(|e| bad(e.to_string()))?;
        eof = buf.len() == before;
    }
    p.finish().map_err(bad)
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

    /// An iolog of `ops` operations, after `pad` add lines with long names.
    fn iolog(ops: usize, pad: usize) -> String {
        let mut s = String::from("fio version 3 iolog\n");
        for i in 0..pad {
            s += &format!("0 /dev/{}{i} add\n", "x".repeat(200));
        }
        for i in 0..ops {
            s += &format!("{i} /f {} {} 4096\n", ["read", "write"][i % 2], (i * 7919 % 100_000) * 4096);
        }
        s
    }

    #[test]
    fn loading_streams_block_traces_and_stops_at_the_budget() {
        let d = std::env::temp_dir().join(format!("sb-trace-load-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("t.log");
        // 3.5 MiB: several chunks, lines cut at every chunk boundary.
        let text = iolog(120_000, 0);
        std::fs::write(&path, &text).unwrap();
        let t = Trace::load(&path, u64::MAX).unwrap();
        assert_eq!(t.records, Trace::parse(&text).unwrap().records, "streamed as parsed whole");
        assert_eq!(std::mem::size_of::<Record>(), 32);
        drop(t); // else the next load is the cache's
        let needs = estimate(Format::IologV3, text.len() as u64, &text.as_bytes()[..HEAD]);
        assert!((needs as f64 / (120_000.0 * RECORD_BYTES as f64) - 1.0).abs() < 0.05, "estimate {needs}");
        match Trace::load(&d.join("t.log"), needs / 2).map(|_| ()) {
            Err(LoadError::TooLarge { stopped_at: None, .. }) => {}
            other => panic!("refused before reading: {other:?}"),
        }
        // A first MiB of long lines makes the estimate low: reading stops at the budget.
        let padded = d.join("padded.log");
        std::fs::write(&padded, iolog(120_000, 6000)).unwrap();
        match Trace::load(&padded, 1 << 20).map(|_| ()) {
            // Checked after each MiB of text: at most a MiB's records past the budget.
            Err(LoadError::TooLarge { stopped_at: Some(line), .. }) => assert!(line > 6000 && line < 80_000, "{line}"),
            other => panic!("stopped while reading: {other:?}"),
        }
        let e = Trace::load(Path::new("/dev/zero"), u64::MAX).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: it is a character device, not a regular file (a trace is read from a file)");
        let endless = d.join("endless.log");
        std::fs::write(&endless, format!("fio version 2 iolog\n{}", "x".repeat(3 << 20))).unwrap();
        let e = Trace::load(&endless, u64::MAX).unwrap_err().to_string();
        assert!(e.contains("line 2 is longer than 1.0 MiB"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
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
