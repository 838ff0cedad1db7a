//! One worker's share of a trace, issued at the recorded times.
//!
//! The trace is split between workers by where it lands (file and MiB of
//! the target), so every operation on one block goes to one worker, which
//! issues them in the recorded order; an operation that would overlap one
//! still in flight where either changes data waits for it (storage may
//! complete overlapping requests in any order, and the recorded order is
//! what the trace says happened).

use super::{ReplaySpec, Trace};
use crate::gen::{NextIo, Region};
use crate::spec::OpKind;
use std::sync::Arc;

/// Operations on one MiB of one file go to one worker.
const SPLIT_SHIFT: u32 = 20;

#[derive(Clone, Copy, Debug)]
struct Busy {
    file: u32,
    start: u64,
    end: u64,
    changes: bool,
}

impl Busy {
    fn conflicts(&self, other: &Busy) -> bool {
        (self.changes || other.changes) && self.file == other.file && self.start < other.end && other.start < self.end
    }
}

/// Hands out one worker's records of a shared [`Trace`].
#[derive(Debug)]
pub struct ReplayGen {
    trace: Arc<Trace>,
    spec: ReplaySpec,
    mine: Vec<u32>,
    pos: usize,
    region: Region,
    /// What each slot has in flight (ordering is kept against these).
    busy: Vec<Option<Busy>>,
    /// The next record, placed on the target (None at the end).
    next: Option<(NextIo, Busy)>,
    next_data_only: bool,
    last_data_only: bool,
    /// Operations whose offset wrapped because the target is smaller.
    pub remapped: u64,
}

impl ReplayGen {
    /// `worker` of `workers` (job-wide), with `slots` operations in flight.
    pub fn new(trace: Arc<Trace>, spec: &ReplaySpec, region: Region, worker: u32, workers: u32, slots: u32) -> ReplayGen {
        let mine = share_of(&trace, spec, &region, worker, workers.max(1));
        let mut g = ReplayGen {
            trace,
            spec: spec.clone(),
            mine,
            pos: 0,
            region,
            busy: vec![None; slots as usize],
            next: None,
            next_data_only: false,
            last_data_only: false,
            remapped: 0,
        };
        g.load();
        g
    }

    /// When the next operation is due (ns since the job started; 0 when
    /// replaying without stalls), `None` once the share is done.
    #[inline]
    pub fn due(&self) -> Option<u64> {
        self.next.as_ref()?;
        let r = &self.trace.records[self.mine[self.pos] as usize];
        Some(if self.spec.no_stall { 0 } else { (r.t_ns as f64 / self.spec.speed) as u64 })
    }

    /// The next operation overlaps one in flight that it must not pass.
    #[inline]
    pub fn blocked(&self) -> bool {
        let Some((_, b)) = &self.next else { return false };
        b.op_moves() && self.busy.iter().flatten().any(|x| x.conflicts(b))
    }

    /// A sync that was taken last asked for fdatasync.
    pub fn last_data_only(&self) -> bool {
        self.last_data_only
    }

    pub fn issued(&mut self, slot: u32, io: &NextIo) {
        if io.op.moves_data() {
            let b = Busy { file: io.file, start: io.offset, end: io.offset + io.len as u64, changes: io.op.changes_data() };
            self.busy[slot as usize] = Some(b);
        }
    }

    pub fn completed(&mut self, slot: u32) {
        self.busy[slot as usize] = None;
    }

    /// Records of this worker's share not yet issued.
    pub fn left(&self) -> usize {
        self.mine.len() - self.pos
    }

    fn load(&mut self) {
        self.next = self.mine.get(self.pos).map(|&i| {
            let r = self.trace.records[i as usize];
            self.next_data_only = r.data_only;
            let (file, offset, wrapped) = place(&self.spec, &self.region, r.file, r.offset, r.len);
            self.remapped += wrapped as u64;
            let io = NextIo { op: r.op, file, offset, len: r.len, whole: false, class: 0 };
            (io, Busy { file, start: offset, end: offset + r.len as u64, changes: r.op.changes_data() })
        });
    }
}

/// Takes the next operation (check [`ReplayGen::due`] and
/// [`ReplayGen::blocked`] first).
impl Iterator for ReplayGen {
    type Item = NextIo;

    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        let (io, _) = self.next?;
        self.last_data_only = self.next_data_only;
        self.pos += 1;
        self.load();
        Some(io)
    }
}

impl Busy {
    fn op_moves(&self) -> bool {
        self.end > self.start
    }
}

/// Where a record lands: the job's file, and an offset inside the region
/// (wrapped, keeping 4 KiB alignment when it had it, if it would run past
/// the end), and whether it wrapped.
fn place(spec: &ReplaySpec, region: &Region, file: u32, offset: u64, len: u32) -> (u32, u64, bool) {
    let file = file % region.files.max(1);
    let o = spec.place(offset);
    let len = len as u64;
    if o + len <= region.len {
        return (file, region.start + o, false);
    }
    let span = region.len.saturating_sub(len);
    let mut w = o % (span + 1);
    let grain = if o.is_multiple_of(4096) { 4096 } else { 512 };
    w -= w % grain;
    (file, region.start + w, true)
}

/// Indexes of the records `worker` issues. A sync goes with the last
/// operation on its file before it, so it follows the writes it flushes.
fn share_of(trace: &Trace, spec: &ReplaySpec, region: &Region, worker: u32, workers: u32) -> Vec<u32> {
    if workers == 1 {
        return (0..trace.records.len() as u32).collect();
    }
    let mut last_owner = vec![0u32; trace.files.len()];
    let mut mine = Vec::with_capacity(trace.records.len() / workers as usize + 1);
    for (i, r) in trace.records.iter().enumerate() {
        let owner = match r.op {
            OpKind::Sync => last_owner[r.file as usize],
            _ => {
                let (file, offset, _) = place(spec, region, r.file, r.offset, r.len);
                let key = ((file as u64) << 44) ^ (offset >> SPLIT_SHIFT);
                let o = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32 % workers;
                last_owner[r.file as usize] = o;
                o
            }
        };
        if owner == worker {
            mine.push(i as u32);
        }
    }
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(text: &str) -> Arc<Trace> {
        Arc::new(Trace::parse(text).unwrap())
    }

    fn region(len: u64) -> Region {
        Region { files: 1, start: 0, len }
    }

    #[test]
    fn times_follow_the_trace_and_the_speed() {
        let t = trace("fio version 3 iolog\n100 /f read 0 4096\n1100 /f read 4096 4096\n3100 /f write 8192 4096\n");
        let mut spec = ReplaySpec::new("t".into());
        let mut g = ReplayGen::new(t.clone(), &spec, region(1 << 20), 0, 1, 4);
        let mut due = Vec::new();
        while let Some(d) = g.due() {
            due.push(d);
            g.next().unwrap();
        }
        assert_eq!(due, vec![0, 1_000_000, 3_000_000]);
        spec.speed = 2.0;
        let g = ReplayGen::new(t.clone(), &spec, region(1 << 20), 0, 1, 4);
        let mut g2 = g;
        g2.next();
        assert_eq!(g2.due(), Some(500_000), "twice as fast: half the time");
        spec.no_stall = true;
        let g = ReplayGen::new(t, &spec, region(1 << 20), 0, 1, 4);
        assert_eq!(g.due(), Some(0));
    }

    #[test]
    fn an_overlapping_write_waits_for_the_one_in_flight() {
        let t = trace("fio version 2 iolog\n/f write 0 8192\n/f read 4096 4096\n/f read 65536 4096\n");
        let mut g = ReplayGen::new(t, &ReplaySpec::new("t".into()), region(1 << 20), 0, 1, 4);
        let w = g.next().unwrap();
        g.issued(0, &w);
        assert!(g.blocked(), "the read of a block being written waits");
        g.completed(0);
        assert!(!g.blocked());
        let r = g.next().unwrap();
        g.issued(1, &r);
        assert!(!g.blocked(), "reads pass reads");
        assert_eq!(g.next().unwrap().offset, 65536);
        assert_eq!(g.due(), None);
    }

    #[test]
    fn offsets_past_the_target_wrap_inside_it() {
        let t = trace("fio version 2 iolog\n/a write 1048576 4096\n/b read 12288 4096\n/a read 1044480 8192\n");
        let mut spec = ReplaySpec::new("t".into());
        let mut g = ReplayGen::new(t.clone(), &spec, Region { files: 1, start: 4096, len: 1 << 20 }, 0, 1, 1);
        let a = g.next().unwrap();
        assert!(a.offset >= 4096 && a.offset + 4096 <= 4096 + (1 << 20) && a.offset.is_multiple_of(4096), "{a:?}");
        let b = g.next().unwrap();
        assert_eq!((b.file, b.offset), (0, 4096 + 12288), "one file: every trace file lands on it");
        let c = g.next().unwrap();
        assert!(c.offset + 8192 <= 4096 + (1 << 20));
        assert_eq!(g.remapped, 2);
        spec.scale = 2;
        let mut g = ReplayGen::new(t, &spec, region(1 << 20), 0, 1, 1);
        assert_eq!(g.next().unwrap().offset, 524288, "replay_scale divides offsets");
        assert_eq!(g.remapped, 0);
    }

    #[test]
    fn workers_split_the_trace_by_block_and_keep_its_order() {
        let mut text = String::from("fio version 3 iolog\n");
        for i in 0..4000u64 {
            let block = (i * 7919) % 64;
            text.push_str(&format!("{i} /f {} {} 4096\n", if i % 3 == 0 { "write" } else { "read" }, block << 20));
        }
        text.push_str("4000 /f sync 0 0\n");
        let t = trace(&text);
        let spec = ReplaySpec::new("t".into());
        let shares: Vec<Vec<u32>> = (0..4).map(|w| share_of(&t, &spec, &region(64 << 20), w, 4)).collect();
        let total: usize = shares.iter().map(Vec::len).sum();
        assert_eq!(total, t.records.len(), "every record once");
        assert!(shares.iter().all(|s| s.len() > 500), "spread: {:?}", shares.iter().map(Vec::len).collect::<Vec<_>>());
        for s in &shares {
            assert!(s.windows(2).all(|w| w[0] < w[1]), "recorded order within a worker");
        }
        let owner =
            |off: u64| shares.iter().position(|s| s.iter().any(|&i| t.records[i as usize].offset == off && t.records[i as usize].len > 0));
        let block5 = owner(5 << 20).unwrap();
        assert!(
            shares.iter().enumerate().all(|(w, s)| w == block5 || !s.iter().any(|&i| t.records[i as usize].offset == 5 << 20)),
            "one block, one worker"
        );
    }
}
