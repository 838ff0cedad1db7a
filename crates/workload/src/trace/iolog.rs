//! fio's iolog: version 2 (`FILE ACTION [OFFSET LENGTH]`, `wait` lines
//! pausing for OFFSET microseconds) and version 3 (the same after a
//! timestamp in microseconds since the job started, as fio 3.3x writes it).
//! [`line`] writes version 3, so a storbench run can be replayed by fio and
//! by storbench alike.

use super::{push_block, FileNames, Format, LineParser, Record, Trace};
use crate::spec::OpKind;
use std::fmt::Write;

/// First line of what [`line`] writes.
pub const HEADER_V3: &str = "fio version 3 iolog";

/// An iolog read a line at a time (a trace is never held whole).
pub struct Parser {
    format: Format,
    names: FileNames,
    records: Vec<Record>,
    skipped: u64,
    /// Version 2: the time `wait` lines have added up to.
    waited_us: u64,
    /// The first operation's time, which the others count from.
    base_us: Option<u64>,
}

impl Parser {
    pub fn new(format: Format) -> Parser {
        Parser { format, names: FileNames::default(), records: Vec::new(), skipped: 0, waited_us: 0, base_us: None }
    }
}

impl LineParser for Parser {
    fn line(&mut self, n: usize, raw: &str) -> Result<(), String> {
        // The first line is the header the format was told from.
        if n == 0 {
            return Ok(());
        }
        let line = n + 1;
        let timed = self.format == Format::IologV3;
        let mut f = raw.split_whitespace();
        let t_us = match (timed, f.clone().next()) {
            (_, None) => return Ok(()),
            (true, Some(t)) => {
                f.next();
                Some(t.parse::<u64>().map_err(|_| format!("line {line}: '{t}' is not a timestamp in microseconds"))?)
            }
            (false, _) => None,
        };
        let (Some(file), Some(action)) = (f.next(), f.next()) else {
            return Err(format!("line {line}: expected FILE ACTION [OFFSET LENGTH], found '{}'", raw.trim()));
        };
        let num = |v: Option<&str>, what: &str| -> Result<u64, String> {
            v.unwrap_or("0").parse::<u64>().map_err(|_| format!("line {line}: {what} '{}' is not a number", v.unwrap_or("")))
        };
        let (offset, len) = (num(f.next(), "offset")?, num(f.next(), "length")?);
        let (op, data_only) = match action {
            "read" => (OpKind::Read, false),
            "write" => (OpKind::Write, false),
            "trim" => (OpKind::Trim, false),
            "sync" => (OpKind::Sync, false),
            "datasync" => (OpKind::Sync, true),
            "wait" => {
                self.waited_us += offset;
                return Ok(());
            }
            "add" | "open" | "close" => {
                self.names.of(file);
                self.skipped += 1;
                return Ok(());
            }
            // sync_file_range and what later fio versions add: not replayed.
            _ => {
                self.skipped += 1;
                return Ok(());
            }
        };
        let at_us = t_us.unwrap_or(self.waited_us);
        let base = *self.base_us.get_or_insert(at_us);
        let t_ns = at_us
            .checked_sub(base)
            .ok_or_else(|| format!("line {line}: the timestamp goes back before the first operation's; sort the log by time"))?;
        if op.moves_data() && len == 0 {
            return Err(format!("line {line}: a {action} of 0 bytes"));
        }
        let t_ns = t_ns.checked_mul(1000).ok_or_else(|| format!("line {line}: the timestamp is too far from the first"))?;
        let r = Record { t_ns, op, data_only, file: self.names.of(file), offset, len: 0, whole: false };
        push_block(&mut self.records, r, len, line)
    }

    fn records(&self) -> usize {
        self.records.len()
    }

    fn finish(self: Box<Self>) -> Result<Trace, String> {
        check_order(&self.records)?;
        Ok(Trace::new(self.format, self.names.names, self.records, self.skipped))
    }
}

/// Replay keeps the recorded order; a log whose times go backwards was
/// edited or merged by hand, and would replay in another order than written.
fn check_order(records: &[Record]) -> Result<(), String> {
    match records.windows(2).position(|w| w[1].t_ns < w[0].t_ns) {
        Some(i) => Err(format!("operation {} is timestamped before the one written above it; sort the log by time", i + 2)),
        None => Ok(()),
    }
}

/// fio's name for an operation in an iolog.
pub fn action(op: OpKind, data_only: bool) -> &'static str {
    match op {
        OpKind::Sync if data_only => "datasync",
        OpKind::Sync => "sync",
        OpKind::Trim => "trim",
        OpKind::Read => "read",
        _ => "write",
    }
}

/// One version 3 line (`t_us FILE ACTION OFFSET LENGTH`), appended to `out`.
pub fn line(out: &mut String, t_us: u64, file: &str, action: &str, offset: u64, len: u64) {
    let _ = writeln!(out, "{t_us} {file} {action} {offset} {len}");
}

#[cfg(test)]
mod tests {
    use super::super::Trace;
    use super::*;

    #[test]
    fn version_3_keeps_times_files_and_operations() {
        let t = Trace::parse(
            "fio version 3 iolog\n28 /tmp/f add\n156 /tmp/f open\n161 /tmp/f read 61440 4096\n\
             10562 /tmp/g write 774144 8192\n10600 /tmp/f datasync 0 0\n20700 /tmp/f trim 0 65536\n30854 /tmp/f close\n",
        )
        .unwrap();
        assert_eq!(t.files, vec!["/tmp/f", "/tmp/g"]);
        assert_eq!(t.skipped, 3);
        let r = &t.records;
        assert_eq!(r.len(), 4);
        assert_eq!((r[0].t_ns, r[0].op, r[0].offset, r[0].len, r[0].file), (0, OpKind::Read, 61440, 4096, 0));
        assert_eq!((r[1].t_ns, r[1].op, r[1].file, r[1].len), (10_401_000, OpKind::Write, 1, 8192));
        assert_eq!((r[2].op, r[2].data_only, r[2].len), (OpKind::Sync, true, 0));
        assert_eq!(r[3].op, OpKind::Trim);
    }

    #[test]
    fn large_discards_are_split_and_do_not_size_transfers() {
        let t = Trace::parse("fio version 2 iolog\n/f write 0 4096\n/f trim 0 5368709120\n").unwrap();
        assert_eq!(t.records.len(), 1 + 5, "5 GiB in 1 GiB pieces");
        assert!(t.records[1..].iter().all(|r| r.op == OpKind::Trim && r.len == 1 << 30));
        assert_eq!(t.records.last().unwrap().offset, 4 << 30);
        let s = t.summary(&super::super::ReplaySpec::new("t".into()));
        assert_eq!(s.sizes, vec![(4096, 1)], "the discards size no buffer");
        assert_eq!(s.extent, vec![5 << 30]);
    }

    #[test]
    fn version_2_waits_set_the_times() {
        let t = Trace::parse("fio version 2 iolog\n/f add\n/f open\n/f write 0 4096\n/f wait 2500 0\n/f read 0 4096\n").unwrap();
        assert_eq!(t.records.iter().map(|r| r.t_ns).collect::<Vec<_>>(), vec![0, 2_500_000]);
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, says) in [
            ("fio version 3 iolog\nx /f read 0 4096\n", "line 2: 'x' is not a timestamp"),
            ("fio version 2 iolog\n/f read zero 4096\n", "offset 'zero'"),
            ("fio version 2 iolog\n/f write 0 0\n", "a write of 0 bytes"),
            ("fio version 2 iolog\n/f write 0 9999999999\n", "larger than storbench issues"),
            ("fio version 2 iolog\n/f write 18446744073709551615 4096\n", "past any device"),
            ("fio version 3 iolog\n5 /f read 0 4096\n3 /f read 0 4096\n", "sort the log by time"),
            ("fio version 2 iolog\nlonely\n", "expected FILE ACTION"),
        ] {
            let e = Trace::parse(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn what_line_writes_parses_back() {
        let mut s = format!("{HEADER_V3}\n");
        line(&mut s, 7, "/x", action(OpKind::Write, false), 4096, 512);
        line(&mut s, 9, "/x", action(OpKind::Sync, true), 0, 0);
        let t = Trace::parse(&s).unwrap();
        assert_eq!(t.records[0].op, OpKind::Write);
        assert_eq!((t.records[1].t_ns, t.records[1].data_only), (2000, true));
    }
}
