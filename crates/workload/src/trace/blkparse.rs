//! blkparse's default text output (`blkparse -i TRACE`): one line per event,
//! `DEV CPU SEQ SECONDS PID ACTION RWBS [SECTOR + BLOCKS] [PROCESS]`. Each
//! request is replayed once, from its queue event (`Q`), the moment the
//! application handed it to the block layer; merges, dispatches and
//! completions are the device's answer, not the workload. Sectors are 512
//! bytes; RWBS says read (R), write (W), discard (D) or flush (F).

use super::{push_block, FileNames, Format, LineParser, Record, Trace};
use crate::spec::OpKind;

const SECTOR: u64 = 512;

/// The text's first event line has blkparse's shape.
pub fn looks_like(text: &str) -> bool {
    text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| event(l).is_some())
}

/// The fields of an event line: device, seconds, action, RWBS, the rest.
fn event(line: &str) -> Option<(&str, &str, &str, &str, Vec<&str>)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 7 {
        return None;
    }
    let (maj, min) = f[0].split_once(',')?;
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let time_ok = f[3].split_once('.').is_some_and(|(s, ns)| numeric(s) && numeric(ns));
    if !(numeric(maj) && numeric(min) && numeric(f[1]) && numeric(f[2]) && time_ok) {
        return None;
    }
    Some((f[0], f[3], f[5], f[6], f[7..].to_vec()))
}

/// blkparse's text read a line at a time (a trace is never held whole).
#[derive(Default)]
pub struct Parser {
    names: FileNames,
    records: Vec<Record>,
    skipped: u64,
}

impl LineParser for Parser {
    fn line(&mut self, n: usize, raw: &str) -> Result<(), String> {
        let line = n + 1;
        // Summaries at the end ("CPU0 (8,0):", "Total (...)") and other text.
        let Some((dev, secs, action, rwbs, rest)) = event(raw) else {
            self.skipped += !raw.trim().is_empty() as u64;
            return Ok(());
        };
        if action != "Q" {
            self.skipped += 1;
            return Ok(());
        }
        let Some((op, sized)) = op_of(rwbs) else {
            self.skipped += 1;
            return Ok(());
        };
        let (offset, len) = match (sized, rest.as_slice()) {
            (true, [sector, "+", blocks, ..]) => {
                let bytes = |s: &str| {
                    s.parse::<u64>()
                        .ok()
                        .and_then(|n| n.checked_mul(SECTOR))
                        .ok_or_else(|| format!("line {line}: '{s}' is not a number of sectors"))
                };
                (bytes(sector)?, bytes(blocks)?)
            }
            (true, _) => return Err(format!("line {line}: a {rwbs} queue event without 'SECTOR + BLOCKS'")),
            (false, _) => (0, 0),
        };
        if sized && len == 0 {
            self.skipped += 1;
            return Ok(());
        }
        let t_ns = nanos(secs).ok_or_else(|| format!("line {line}: '{secs}' is not a time in seconds"))?;
        let r = Record { t_ns, op, data_only: false, file: self.names.of(dev), offset, len: 0, whole: false };
        push_block(&mut self.records, r, len, line)
    }

    fn records(&self) -> usize {
        self.records.len()
    }

    fn finish(self: Box<Self>) -> Result<Trace, String> {
        let Parser { names, mut records, skipped } = *self;
        // blkparse merges the CPUs' streams by time; a stable sort mends the
        // odd event a CPU's clock put out of place without reordering the rest,
        // and times count from the earliest event, wherever it was printed.
        records.sort_by_key(|r| r.t_ns);
        let t0 = records.first().map_or(0, |r| r.t_ns);
        for r in &mut records {
            r.t_ns -= t0;
        }
        Ok(Trace::new(Format::Blkparse, names.names, records, skipped))
    }
}

/// The operation of an RWBS field, and whether it moves a sector range.
/// A flush with data (FW: a write with preflush) is replayed as its write.
fn op_of(rwbs: &str) -> Option<(OpKind, bool)> {
    if rwbs.contains('D') {
        Some((OpKind::Trim, true))
    } else if rwbs.contains('W') {
        Some((OpKind::Write, true))
    } else if rwbs.contains('R') {
        Some((OpKind::Read, true))
    } else if rwbs.contains('F') {
        Some((OpKind::Sync, false))
    } else {
        None
    }
}

/// "12.000345678" as ns.
fn nanos(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    Some(secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)? + super::fraction_ns(frac)?)
}

#[cfg(test)]
mod tests {
    use super::super::Trace;
    use super::*;

    const SAMPLE: &str = "\
  8,0    1        1     0.000000000  4162  Q   W 2048 + 8 [fio]
  8,0    1        2     0.000001000  4162  G   W 2048 + 8 [fio]
  8,0    1        3     0.000004000  4162  D   W 2048 + 8 [fio]
  8,0    0        1     0.000350000     0  C   W 2048 + 8 [0]
  8,16   1        4     0.001500000  4162  Q  RA 4096 + 256 [fio]
  8,0    1        5     0.002000000  4162  Q  DS 0 + 2048 [fstrim]
  8,0    1        6     0.002500000   123  Q  FN [kworker/1:1H]
  8,0    1        7     0.003000000   123  Q FWS 8 + 8 [jbd2/sda1-8]
  8,0    1        8     0.003100000   123  Q   N 0 + 0 [x]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
";

    #[test]
    fn queue_events_become_operations() {
        let t = Trace::parse(SAMPLE).unwrap();
        assert_eq!(t.files, vec!["8,0", "8,16"]);
        let got: Vec<(u64, OpKind, u32, u64, u32)> = t.records.iter().map(|r| (r.t_ns, r.op, r.file, r.offset, r.len)).collect();
        assert_eq!(
            got,
            vec![
                (0, OpKind::Write, 0, 2048 * 512, 4096),
                (1_500_000, OpKind::Read, 1, 4096 * 512, 256 * 512),
                (2_000_000, OpKind::Trim, 0, 0, 2048 * 512),
                (2_500_000, OpKind::Sync, 0, 0, 0),
                (3_000_000, OpKind::Write, 0, 8 * 512, 4096),
            ]
        );
        assert!(t.skipped >= 5, "G, D, C, N and the summary lines: {}", t.skipped);
    }

    #[test]
    fn a_sized_event_without_sectors_is_named() {
        let e = Trace::parse("  8,0    1        1     0.000000000  4162  Q   W [fio]\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("SECTOR + BLOCKS"), "{e}");
    }

    #[test]
    fn times_parse_to_nanoseconds() {
        assert_eq!(nanos("12.000345678"), Some(12_000_345_678));
        assert_eq!(nanos("0.5"), Some(500_000_000));
        assert_eq!(nanos("x.1"), None);
    }
}
