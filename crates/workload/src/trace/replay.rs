//! One worker's share of a trace, issued at the recorded times.
//!
//! The trace is split between workers by where it lands (file and MiB of
//! the target), so every operation on one block goes to one worker, which
//! issues them in the recorded order; an operation that would overlap one
//! still in flight where either changes data waits for it (storage may
//! complete overlapping requests in any order, and the recorded order is
//! what the trace says happened). Object logs are split by key, and a
//! request that changes an object (PUT, DELETE) is not sent while another
//! on the same object is in flight, nor another passed to it.

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
    /// Every worker's records (shared), and which are this one's.
    shares: Arc<Vec<Vec<u32>>>,
    worker: usize,
    pos: usize,
    region: Region,
    /// What each slot has in flight (ordering is kept against these).
    busy: Vec<Option<Busy>>,
    /// The next record, placed on the target (None at the end), and the
    /// range it holds while in flight (none for syncs and listings).
    next: Option<(NextIo, Option<Busy>)>,
    next_data_only: bool,
    next_wrapped: bool,
    last_data_only: bool,
    /// Operations whose offset wrapped because the target is smaller.
    pub remapped: u64,
}

impl ReplayGen {
    /// `worker` of `workers` (job-wide), with `slots` operations in flight.
    pub fn new(trace: Arc<Trace>, spec: &ReplaySpec, region: Region, worker: u32, workers: u32, slots: u32) -> ReplayGen {
        let shares = shares(&trace, spec, &region, workers.max(1));
        let mut g = ReplayGen {
            trace,
            spec: spec.clone(),
            shares,
            worker: worker as usize,
            pos: 0,
            region,
            busy: vec![None; slots as usize],
            next: None,
            next_data_only: false,
            next_wrapped: false,
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
        let r = &self.trace.records[self.mine()[self.pos] as usize];
        Some(if self.spec.no_stall { 0 } else { (r.t_ns as f64 / self.spec.speed) as u64 })
    }

    /// Issued as fast as the queue allows (`replay_no_stall`): no schedule.
    pub fn unpaced(&self) -> bool {
        self.spec.no_stall
    }

    /// The next operation overlaps one in flight that it must not pass.
    #[inline]
    pub fn blocked(&self) -> bool {
        let Some((_, Some(b))) = &self.next else { return false };
        self.busy.iter().flatten().any(|x| x.conflicts(b))
    }

    fn mine(&self) -> &[u32] {
        &self.shares[self.worker]
    }

    /// A sync that was taken last asked for fdatasync.
    pub fn last_data_only(&self) -> bool {
        self.last_data_only
    }

    pub fn issued(&mut self, slot: u32, io: &NextIo) {
        self.busy[slot as usize] = busy_of(self.trace.format.objects(), io);
    }

    pub fn completed(&mut self, slot: u32) {
        self.busy[slot as usize] = None;
    }

    /// Records of this worker's share not yet issued.
    pub fn left(&self) -> usize {
        self.mine().len() - self.pos
    }

    /// Objects the share reads, stats or deletes before the trace writes
    /// them: they existed before the log began, and are written first (not
    /// measured), as large as the log says they were (their size where it
    /// gives one, else the largest whole read; 0 bytes when nothing reads
    /// them before they are written again).
    pub fn objects_before(&self) -> Vec<NextIo> {
        if !self.trace.format.objects() {
            return Vec::new();
        }
        // Per key: None once the trace writes it first, else its size so far
        // and whether the trace has written it since.
        let mut keys: std::collections::HashMap<u32, Option<(u64, bool)>> = std::collections::HashMap::new();
        for &i in self.mine() {
            let r = &self.trace.records[i as usize];
            if r.op == OpKind::List {
                continue;
            }
            let seen = match r.op {
                OpKind::Read if r.whole => r.object_size().max(r.len as u64),
                _ => r.object_size(),
            };
            let e = keys.entry(r.file).or_insert((r.op != OpKind::Create).then_some((0, false)));
            match e {
                Some((_, written)) if r.op == OpKind::Create => *written = true,
                Some((size, false)) => *size = (*size).max(seen),
                _ => {}
            }
        }
        let mut before: Vec<NextIo> = keys
            .into_iter()
            .filter_map(|(key, size)| {
                size.map(|(len, _)| NextIo {
                    op: OpKind::Create,
                    file: key,
                    offset: 0,
                    len: len.min(u32::MAX as u64) as u32,
                    whole: true,
                    class: 0,
                })
            })
            .collect();
        before.sort_by_key(|io| io.file);
        before
    }

    /// Every object key of the share (what cleanup removes).
    pub fn keys(&self) -> Vec<u32> {
        let mut keys: Vec<u32> =
            self.mine().iter().map(|&i| &self.trace.records[i as usize]).filter(|r| r.op != OpKind::List).map(|r| r.file).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn load(&mut self) {
        let objects = self.trace.format.objects();
        let at = self.mine().get(self.pos).copied();
        self.next = at.map(|i| {
            let r = self.trace.records[i as usize];
            self.next_data_only = r.data_only;
            let io = match objects {
                true => NextIo { op: r.op, file: r.file, offset: 0, len: r.len, whole: r.whole, class: 0 },
                false => {
                    let (file, offset, wrapped) = place(&self.spec, &self.region, r.file, r.offset, r.len);
                    self.next_wrapped = wrapped;
                    NextIo { op: r.op, file, offset: self.region.start + offset, len: r.len, whole: false, class: 0 }
                }
            };
            (io, busy_of(objects, &io))
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
        // Counted when issued, so a stopped run counts only what it issued.
        self.remapped += self.next_wrapped as u64;
        self.pos += 1;
        self.load();
        Some(io)
    }
}

/// What an operation holds while in flight: its blocks, or its whole
/// object; nothing for syncs and listings.
fn busy_of(objects: bool, io: &NextIo) -> Option<Busy> {
    let changes = io.op.changes_data();
    match (objects, io.op) {
        (_, OpKind::Sync | OpKind::List) => None,
        (true, _) => Some(Busy { file: io.file, start: 0, end: u64::MAX, changes }),
        (false, _) if io.len > 0 => Some(Busy { file: io.file, start: io.offset, end: io.offset + io.len as u64, changes }),
        _ => None,
    }
}

/// Where a record lands: the job's file, and an offset from the region's
/// start (wrapped, keeping its alignment up to replay_align or 4 KiB, if it
/// would run past the end), and whether it wrapped. Relative, so every
/// worker (whose region may start elsewhere) places a record alike.
fn place(spec: &ReplaySpec, region: &Region, file: u32, offset: u64, len: u32) -> (u32, u64, bool) {
    let file = file % region.files.max(1);
    let o = spec.place(offset);
    let len = len as u64;
    if o.checked_add(len).is_some_and(|end| end <= region.len) {
        return (file, o, false);
    }
    let span = region.len.saturating_sub(len);
    let mut w = o % (span + 1);
    let grain = if o.is_multiple_of(4096) { 4096.max(spec.align) } else { 512 };
    w -= w % grain;
    (file, w, true)
}

/// Chunks of the target that overlapping operations join into one group
/// (union-find over (file, MiB)), so every operation on a block, even one
/// straddling a MiB boundary or a discard spanning gigabytes, has one owner.
#[derive(Default)]
struct Groups {
    parent: std::collections::HashMap<u64, u64>,
}

impl Groups {
    fn key(file: u32, chunk: u64) -> u64 {
        ((file as u64) << 44) ^ chunk
    }

    fn root(&mut self, k: u64) -> u64 {
        let mut r = k;
        while let Some(&p) = self.parent.get(&r).filter(|p| **p != r) {
            r = p;
        }
        // Path compression: what was looked up points at the root.
        let mut c = k;
        while c != r {
            let next = self.parent.get(&c).copied().unwrap_or(r);
            self.parent.insert(c, r);
            c = next;
        }
        r
    }

    fn join(&mut self, file: u32, first: u64, last: u64) {
        let a = self.root(Self::key(file, first));
        for chunk in first + 1..=last {
            let b = self.root(Self::key(file, chunk));
            if a != b {
                self.parent.insert(b, a);
            }
        }
    }
}

/// What a split was made for: workers, and how records are placed.
type SplitKey = (u32, u32, u64, u64, u64);

/// The last split of a trace, kept beside it.
pub(crate) type SplitCache = std::sync::Mutex<Option<(SplitKey, Arc<Vec<Vec<u32>>>)>>;

/// Every worker's records, worked out once per trace (grouping reads the
/// whole trace; each worker doing it again would cost workers x records).
fn shares(trace: &Trace, spec: &ReplaySpec, region: &Region, workers: u32) -> Arc<Vec<Vec<u32>>> {
    let key = (workers, region.files, region.len, spec.scale, spec.align);
    let mut cache = trace.split.lock().unwrap_or_else(|e| e.into_inner());
    match cache.as_ref() {
        Some((k, s)) if *k == key => s.clone(),
        _ => {
            let s = Arc::new(split(trace, spec, region, workers));
            *cache = Some((key, s.clone()));
            s
        }
    }
}

/// The records of each of `workers`, in the recorded order. A sync goes to
/// the worker of the last operation on its file before it (it flushes that
/// worker's writes; the other workers' writes to the file since are not
/// flushed by it, which only matters with numjobs > 1 on a shared target).
fn split(trace: &Trace, spec: &ReplaySpec, region: &Region, workers: u32) -> Vec<Vec<u32>> {
    if workers == 1 {
        return vec![(0..trace.records.len() as u32).collect()];
    }
    let chunks = |r: &super::Record| {
        let (file, offset, _) = place(spec, region, r.file, r.offset, r.len);
        (file, offset >> SPLIT_SHIFT, (offset + r.len.max(1) as u64 - 1) >> SPLIT_SHIFT)
    };
    let mut groups = Groups::default();
    if !trace.format.objects() {
        for r in trace.records.iter().filter(|r| r.op.moves_data()) {
            let (file, first, last) = chunks(r);
            groups.join(file, first, last);
        }
    }
    let mut last_owner = vec![0u32; trace.files.len()];
    let mut shares = vec![Vec::with_capacity(trace.records.len() / workers as usize + 1); workers as usize];
    let objects = trace.format.objects();
    for (i, r) in trace.records.iter().enumerate() {
        let owner = match r.op {
            OpKind::Sync => last_owner[r.file as usize],
            // Listings take turns; an object's requests stay with one worker.
            OpKind::List => i as u32 % workers,
            _ if objects => (((r.file as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 32) as u32 % workers,
            _ => {
                let (file, first, _) = chunks(r);
                let key = groups.root(Groups::key(file, first));
                let o = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32 % workers;
                last_owner[r.file as usize] = o;
                o
            }
        };
        shares[owner as usize].push(i as u32);
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share_of(trace: &Trace, spec: &ReplaySpec, region: &Region, worker: u32, workers: u32) -> Vec<u32> {
        split(trace, spec, region, workers).swap_remove(worker as usize)
    }

    fn trace(text: &str) -> Arc<Trace> {
        Arc::new(Trace::parse(text).unwrap())
    }

    fn region(len: u64) -> Region {
        Region { files: 1, start: 0, len, end: 0 }
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
        let mut g = ReplayGen::new(t.clone(), &spec, Region { files: 1, start: 4096, len: 1 << 20, end: 0 }, 0, 1, 1);
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
    fn objects_read_before_written_are_made_first_at_their_first_read_size() {
        let line = |t: u32, m: &str, key: &str, sent: u32| {
            format!(
                "{{\"bucket\":\"b\",\"time\":\"2026-01-01T00:00:00.{t:06}Z\",\"operation\":\"x\",\"uri\":\"{m} /b/{key} HTTP/1.1\",\"http_status\":\"200\",\"bytes_sent\":{sent},\"bytes_received\":{sent},\"object_size\":{sent}}}\n"
            )
        };
        let text = [
            line(1, "HEAD", "a", 0),
            line(2, "GET", "a", 100),
            line(3, "PUT", "a", 900),
            line(4, "GET", "a", 900),
            line(5, "PUT", "b", 50),
            line(6, "GET", "b", 50),
            line(7, "DELETE", "c", 0),
            // A range first: the object's size is what the log says, not the range's.
            "{\"bucket\":\"b\",\"time\":\"2026-01-01T00:00:00.000008Z\",\"operation\":\"x\",\"uri\":\"GET /b/d HTTP/1.1\",\"http_status\":\"206\",\"bytes_sent\":10,\"object_size\":5000}\n".into(),
        ]
        .concat();
        let g = ReplayGen::new(trace(&text), &ReplaySpec::new("t".into()), region(1), 0, 1, 1);
        let before: Vec<(u32, u32)> = g.objects_before().iter().map(|io| (io.file, io.len)).collect();
        assert_eq!(
            before,
            vec![(0, 100), (2, 0), (3, 5000)],
            "a at its size before the trace wrote it, b never (written first), c empty, d whole"
        );
        assert_eq!(g.keys(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn operations_straddling_a_chunk_boundary_have_one_owner() {
        // A write across the 1 MiB boundary joins chunks 0 and 1; a discard
        // over chunks 4..9 joins those: each group is one worker's.
        let t = trace(
            "fio version 2 iolog\n/f write 1044480 8192\n/f read 1048576 4096\n/f read 0 4096\n\
             /f trim 4194304 6291456\n/f write 9437184 4096\n/f write 4194304 4096\n",
        );
        let spec = ReplaySpec::new("t".into());
        for workers in 2..6 {
            let owner = |rec: usize| (0..workers).find(|w| share_of(&t, &spec, &region(16 << 20), *w, workers).contains(&(rec as u32)));
            assert_eq!(owner(0), owner(1), "{workers} workers: the write straddling 1 MiB and the read after it");
            assert_eq!(owner(0), owner(2), "chunk 0 joined with chunk 1");
            assert_eq!(owner(3), owner(4), "a discard over 4..9 MiB and a write at 9 MiB");
            assert_eq!(owner(3), owner(5));
        }
        let shifted = Region { files: 1, start: 64 << 20, len: 16 << 20, end: 0 };
        let a: Vec<Vec<u32>> = (0..3).map(|w| share_of(&t, &spec, &region(16 << 20), w, 3)).collect();
        let b: Vec<Vec<u32>> = (0..3).map(|w| share_of(&t, &spec, &shifted, w, 3)).collect();
        assert_eq!(a, b, "where a worker's region starts does not change who owns what");
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
