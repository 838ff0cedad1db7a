//! A vector database's disk index under queries, as MLPerf Storage's
//! VectorDB benchmark loads and queries it (mlcommons/storage,
//! `vdb_benchmark/`: Milvus with a DiskANN index, its `--processes` each
//! sending search requests of `--batch-size` queries, one after another).
//!
//! The index on storage is DiskANN's: a 4 KiB sector of metadata, then each
//! vector's node, its full-precision vector (dimension x 4 bytes of
//! float32) and its neighbours (a count and `max_degree` ids of 4 bytes),
//! in 4 KiB sectors: several nodes a sector when they fit, else each node
//! over as many whole sectors as it needs. Milvus keeps a segment's rows
//! in one index and searches every segment for each query, so a
//! collection of S segments is S indexes, one after another in the
//! worker's region.
//!
//! A query is DiskANN's beam search in every segment: each expands
//! `search_list` nodes, `beam_width` at a time, an expansion being a read
//! of its node's sectors (direct I/O in DiskANN), and a round's reads all
//! done before the next round goes out (the next nodes are among the
//! neighbours just read). A request is a batch of queries searched at once;
//! a worker is one query process, sending its next request when the last
//! one ended (closed loop). A request's latency runs from its start to its
//! last search's end.
//!
//! Left out of the reference: the vectors themselves, distances and recall
//! (a search's nodes are drawn uniformly over its segment: near each other
//! in the graph, not on the disk); Milvus's cache of the nodes nearest the
//! entry point (10% of the vectors' bytes: here every expansion reads
//! storage, so figures are those of a cold cache); the compressed vectors
//! in memory and the CPU time of the distances; the load phase's inserts,
//! flushes and index build (the index is written once, sequentially,
//! before the queries).

use crate::gen::{NextIo, Region};
use crate::rng::Rng;
use crate::spec::OpKind;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// DiskANN's sector, the unit of its index file and of its reads.
pub const SECTOR: u64 = 4096;

/// A vector index under queries (`--preset vectordb:CONFIG`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VdbSpec {
    /// The reference config it follows ("1m", "10m").
    pub config: String,
    /// The index type (DiskANN's layout is the one emulated).
    pub index: String,
    pub vectors: u64,
    pub dimension: u32,
    /// Neighbours a node keeps at most (the index's `max_degree`).
    pub max_degree: u32,
    /// Indexes the vectors are divided over (Milvus's sealed segments),
    /// each searched by every query.
    pub segments: u32,
    /// Nodes a search expands in each segment (`search_list`).
    pub search_list: u32,
    /// Reads a search has in flight at once (`beamwidth`).
    pub beam_width: u32,
    /// Queries a request.
    pub batch: u32,
    /// On an engine's own target (an RBD image, an NBD export) the index
    /// is there from an earlier run and is read as it is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub index_written: bool,
}

impl VdbSpec {
    /// A node's bytes: its vector, its neighbour count and ids.
    pub fn node_bytes(&self) -> u64 {
        u64::from(self.dimension) * 4 + (u64::from(self.max_degree) + 1) * 4
    }

    /// Nodes a sector holds (0: a node takes several sectors).
    pub fn nodes_per_sector(&self) -> u64 {
        SECTOR / self.node_bytes()
    }

    /// Bytes an expansion reads: its node's sector, or its sectors.
    pub fn read_bytes(&self) -> u64 {
        self.node_bytes().div_ceil(SECTOR) * SECTOR
    }

    /// Nodes in the largest segment (the vectors spread evenly).
    pub fn segment_nodes(&self) -> u64 {
        self.vectors.div_ceil(u64::from(self.segments.max(1)))
    }

    /// One segment's index: its metadata sector and its nodes' sectors.
    pub fn segment_bytes(&self) -> u64 {
        let nodes = self.segment_nodes();
        let sectors = match self.nodes_per_sector() {
            0 => nodes * (self.read_bytes() / SECTOR),
            per => nodes.div_ceil(per),
        };
        SECTOR + sectors * SECTOR
    }

    /// Every segment's index, one after another.
    pub fn index_bytes(&self) -> u64 {
        self.segment_bytes() * u64::from(self.segments.max(1))
    }

    /// Where node `node` starts in its segment's index (its sector's start).
    pub fn node_within(&self, node: u64) -> u64 {
        SECTOR
            + match self.nodes_per_sector() {
                0 => node * self.read_bytes(),
                per => node / per * SECTOR,
            }
    }

    /// Where node `node` of segment `segment` starts in the index.
    pub fn node_offset(&self, segment: u32, node: u64) -> u64 {
        u64::from(segment) * self.segment_bytes() + self.node_within(node)
    }

    /// Reads a query makes: every segment's expansions.
    pub fn reads_per_query(&self) -> u64 {
        u64::from(self.search_list) * u64::from(self.segments.max(1))
    }
}

/// What one query process did, for the job's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VdbTally {
    /// Requests ended within the measured phase, and their queries.
    pub requests: u64,
    pub queries: u64,
    /// The ended requests' node reads.
    pub reads: u64,
    /// Requests under way when the measured phase ended.
    pub pending: u64,
    /// Each ended request's latency, ns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latencies_ns: Vec<u64>,
}

impl VdbTally {
    pub fn merge(&mut self, o: &VdbTally) {
        self.requests += o.requests;
        self.queries += o.queries;
        self.reads += o.reads;
        self.pending += o.pending;
        self.latencies_ns.extend_from_slice(&o.latencies_ns);
    }
}

/// One segment's search of one query: expansions still to issue, those
/// of its round still to issue, its reads in flight, and the nodes it
/// read (DiskANN expands a node once).
#[derive(Clone, Debug)]
struct Search {
    segment: u32,
    left: u32,
    round: u32,
    in_flight: u32,
    visited: Vec<u64>,
}

/// A request that ended: when, and its reads (it is left out of the
/// figures if that was after the measured phase).
#[derive(Clone, Copy, Debug)]
struct Ended {
    started: u64,
    at: u64,
    reads: u64,
}

/// One query process: its request under way, search by search.
pub struct VdbGen {
    spec: VdbSpec,
    base: u64,
    rng: Rng,
    /// Nodes of a segment that fit the region (all, when it holds the
    /// index), the bytes from one segment's index to the next, and the
    /// index's bytes in the region.
    nodes: u64,
    stride: u64,
    bytes: u64,
    read: u32,
    searches: Vec<Search>,
    /// Searches with reads of their round still to issue, first come first.
    ready: VecDeque<usize>,
    /// Searches not done yet.
    unfinished: usize,
    started_at: u64,
    /// Reads of the request under way done so far.
    reads: u64,
    /// Which search each slot's read belongs to (by slot).
    slots: Vec<Option<usize>>,
    handed: Option<usize>,
    ended: Vec<Ended>,
    /// This worker's share of the index's writes: writer `.0` of `.1`.
    writer: (u32, u32),
    pub tally: VdbTally,
}

impl VdbGen {
    /// A query process reading the index in `region`.
    pub fn new(spec: &VdbSpec, region: Region, seed: u64) -> VdbGen {
        // A region shorter than the index (a device smaller than it) holds
        // each segment's first nodes only, in an even share of it: reads
        // stay inside it (the plan refuses a region without room for one).
        let (mut nodes, mut stride) = (spec.segment_nodes(), spec.segment_bytes());
        if region.len < spec.index_bytes() {
            stride = region.len / u64::from(spec.segments.max(1)) / SECTOR * SECTOR;
            let room = stride.saturating_sub(SECTOR);
            let fit = match spec.nodes_per_sector() {
                0 => room / spec.read_bytes(),
                per => room / SECTOR * per,
            };
            nodes = fit.min(nodes);
        }
        VdbGen {
            spec: spec.clone(),
            base: region.start,
            rng: Rng::new(seed),
            nodes,
            stride,
            bytes: spec.index_bytes().min(region.len),
            read: spec.read_bytes().min(u32::MAX as u64) as u32,
            searches: Vec::new(),
            ready: VecDeque::new(),
            unfinished: 0,
            started_at: 0,
            reads: 0,
            slots: Vec::new(),
            handed: None,
            ended: Vec::new(),
            writer: (0, 1),
            tally: VdbTally::default(),
        }
    }

    /// This worker writes every `writers`-th chunk of the index from its
    /// `writer`-th (the job's workers write it together).
    pub fn writing_as(mut self, writer: u32, writers: u32) -> VdbGen {
        self.writer = (writer, writers.max(1));
        self
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// A search expands at most the nodes its segment holds.
    fn expansions(&self) -> u32 {
        (self.spec.search_list.max(1) as u64).min(self.nodes) as u32
    }

    /// A request starts at `now`: a search of every segment for each query.
    fn start(&mut self, now: u64) {
        let (segments, l, w) = (self.spec.segments.max(1), self.expansions(), self.spec.beam_width.max(1));
        self.searches.clear();
        self.ready.clear();
        for _ in 0..self.spec.batch.max(1) {
            for segment in 0..segments {
                let round = l.min(w);
                if round > 0 {
                    self.ready.push_back(self.searches.len());
                }
                self.searches.push(Search { segment, left: l - round, round, in_flight: 0, visited: Vec::new() });
            }
        }
        self.unfinished = self.ready.len();
        self.started_at = now;
        self.reads = 0;
    }

    /// Whether a read is ready to issue at `now` (the first request
    /// starts at the first call).
    pub fn advance(&mut self, now: u64) -> bool {
        if self.searches.is_empty() {
            self.start(now);
        }
        !self.ready.is_empty()
    }

    /// The next read (after [`VdbGen::advance`] said one is ready): a node
    /// of the search's segment it has not read yet.
    pub fn next_io(&mut self) -> Option<NextIo> {
        let i = *self.ready.front()?;
        let nodes = self.nodes;
        let s = &mut self.searches[i];
        s.round -= 1;
        s.in_flight += 1;
        if s.round == 0 {
            self.ready.pop_front();
        }
        let node = loop {
            let n = self.rng.below(nodes);
            if !s.visited.contains(&n) {
                break n;
            }
        };
        s.visited.push(node);
        let segment = s.segment;
        self.handed = Some(i);
        let offset = self.base + u64::from(segment) * self.stride + self.spec.node_within(node);
        Some(NextIo { op: OpKind::Read, file: 0, offset, len: self.read, whole: false, class: 0 })
    }

    /// The read `next_io` gave went out in `slot`.
    pub fn issued(&mut self, slot: u32) {
        if let Some(i) = self.handed.take() {
            let at = slot as usize;
            if self.slots.len() <= at {
                self.slots.resize(at + 1, None);
            }
            self.slots[at] = Some(i);
        }
    }

    fn take_slot(&mut self, slot: u32) -> Option<usize> {
        self.slots.get_mut(slot as usize).and_then(Option::take)
    }

    /// The read in `slot` ended at `now`: its search's round may be over
    /// (the next goes out), its request too (the next starts now).
    pub fn completed(&mut self, slot: u32, now: u64) {
        let Some(i) = self.take_slot(slot) else { return };
        self.reads += 1;
        self.settle(i);
        // A read completed, so the request had searches: all are done.
        if self.unfinished == 0 {
            self.ended.push(Ended { started: self.started_at, at: now, reads: self.reads });
            self.start(now);
        }
    }

    /// A read of search `i` is no longer in flight: when its round's are
    /// all done, the next round is ready, or the search is.
    fn settle(&mut self, i: usize) {
        let w = self.spec.beam_width.max(1);
        let s = &mut self.searches[i];
        s.in_flight = s.in_flight.saturating_sub(1);
        if s.in_flight > 0 || s.round > 0 {
            return;
        }
        if s.left > 0 {
            s.round = s.left.min(w);
            s.left -= s.round;
            self.ready.push_back(i);
        } else {
            self.unfinished -= 1;
        }
    }

    /// The engine gave up on the read in `slot` (the run's end).
    pub fn abandoned(&mut self, slot: u32) {
        if let Some(i) = self.take_slot(slot) {
            self.settle(i);
        }
    }

    /// The measured phase ended at `at`: the requests that ended by then
    /// are the figures; one under way then (ended later or not) is pending.
    pub fn ended(&mut self, at: u64) {
        let (inside, after): (Vec<Ended>, Vec<Ended>) = self.ended.iter().partition(|e| e.at <= at);
        let t = &mut self.tally;
        t.requests = inside.len() as u64;
        t.queries = t.requests * u64::from(self.spec.batch.max(1));
        t.reads = inside.iter().map(|e| e.reads).sum();
        t.latencies_ns = inside.iter().map(|e| e.at - e.started).collect();
        // Begun: one of its searches issued a read.
        let begun = self.searches.iter().any(|s| !s.visited.is_empty());
        let current = begun && self.started_at <= at;
        t.pending = u64::from(after.iter().any(|e| e.started <= at) || current);
    }

    /// This worker's writes of the index, `chunk` bytes each at most.
    pub fn index_writes(&self, chunk: u64) -> Vec<NextIo> {
        let (bytes, chunk) = (self.bytes, chunk.clamp(SECTOR, u32::MAX as u64) / SECTOR * SECTOR);
        let (writer, writers) = self.writer;
        (0..bytes.div_ceil(chunk))
            .skip(writer as usize)
            .step_by(writers as usize)
            .map(|k| {
                let at = k * chunk;
                let len = chunk.min(bytes - at) as u32;
                NextIo { op: OpKind::Write, file: 0, offset: self.base + at, len, whole: false, class: 0 }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mlcommons/storage vdb_benchmark/vdbbench/configs/1m_diskann.yaml:
    /// 1,000,000 vectors of 1536 dimensions, max_degree 64.
    fn spec() -> VdbSpec {
        VdbSpec {
            config: "1m".into(),
            index: "diskann".into(),
            vectors: 1_000_000,
            dimension: 1536,
            max_degree: 64,
            segments: 3,
            search_list: 200,
            beam_width: 16,
            batch: 10,
            index_written: false,
        }
    }

    #[test]
    fn a_node_of_1536_dimensions_takes_two_sectors_and_small_ones_share_a_sector() {
        let s = spec();
        // 1536 x 4 + 65 x 4 = 6404 bytes: two sectors a node.
        assert_eq!(s.node_bytes(), 6404);
        assert_eq!((s.nodes_per_sector(), s.read_bytes()), (0, 8192));
        // 333,334 nodes of the largest segment, 8 KiB each, after a metadata sector.
        assert_eq!(s.segment_bytes(), 4096 + 333_334 * 8192);
        assert_eq!(s.index_bytes(), 3 * s.segment_bytes());
        assert_eq!(s.node_offset(1, 2), s.segment_bytes() + 4096 + 2 * 8192);
        // 128 dimensions, degree 32: 512 + 132 = 644 bytes, 6 a sector.
        let small = VdbSpec { dimension: 128, max_degree: 32, vectors: 13, segments: 1, ..spec() };
        assert_eq!((small.node_bytes(), small.nodes_per_sector(), small.read_bytes()), (644, 6, 4096));
        assert_eq!(small.segment_bytes(), 4096 + 3 * 4096);
        assert_eq!((small.node_offset(0, 5), small.node_offset(0, 6)), (4096, 8192));
        assert_eq!(s.reads_per_query(), 600);
    }

    fn region(len: u64) -> Region {
        Region { files: 1, start: 1 << 20, len, end: 0 }
    }

    /// Drive one process with every read completing `step` ns after it
    /// went out, at most `depth` in flight, until `requests` ended; the
    /// most reads in flight a search had, and the reads.
    fn drive(s: &VdbSpec, depth: u32, requests: u64) -> (VdbGen, Vec<NextIo>, u32) {
        let mut g = VdbGen::new(s, region(s.index_bytes()), 7);
        let (mut now, mut flying, mut reads, mut most) = (0u64, Vec::<u32>::new(), Vec::new(), 0);
        let mut free: Vec<u32> = (0..depth).rev().collect();
        while (g.ended.len() as u64) < requests {
            while !free.is_empty() && g.advance(now) {
                let io = g.next_io().unwrap();
                let slot = free.pop().unwrap();
                g.issued(slot);
                flying.push(slot);
                reads.push(io);
                most = most.max(g.searches.iter().map(|s| s.in_flight).max().unwrap());
            }
            now += 1000;
            let slot = flying.remove(0);
            g.completed(slot, now);
            free.push(slot);
        }
        g.ended(now);
        (g, reads, most)
    }

    #[test]
    fn each_query_reads_search_list_nodes_of_every_segment_a_beam_at_a_time() {
        let s = VdbSpec { vectors: 3000, batch: 2, ..spec() };
        let (g, reads, most) = drive(&s, 1000, 3);
        let t = &g.tally;
        assert_eq!((t.requests, t.queries), (3, 6));
        // 2 queries x 3 segments x 200 expansions a request.
        assert_eq!(t.reads, 3 * 2 * 600);
        assert_eq!(most, 16, "a search has its beam in flight, no more");
        // Every read is a whole node inside its segment's index.
        let seg = s.segment_bytes();
        for io in &reads {
            let at = io.offset - (1 << 20);
            assert_eq!((io.len, at % 4096), (8192, 0), "{io:?}");
            assert!(at % seg >= 4096 && at % seg + 8192 <= seg, "{at}");
        }
        // Each request's latency is its rounds one after another: 200 / 16 = 13 rounds.
        assert_eq!(t.latencies_ns.len(), 3);
        assert!(t.latencies_ns.iter().all(|&ns| ns >= 13 * 1000), "{:?}", t.latencies_ns);
    }

    #[test]
    fn a_round_waits_for_its_beam_and_a_shallow_queue_spreads_the_searches_out() {
        // One search of 5 expansions, beam 2: rounds of 2, 2, 1.
        let s = VdbSpec { vectors: 10, segments: 1, search_list: 5, beam_width: 2, batch: 1, ..spec() };
        let mut g = VdbGen::new(&s, region(s.index_bytes()), 1);
        assert!(g.advance(0));
        for slot in 0..2 {
            g.next_io().unwrap();
            g.issued(slot);
        }
        assert!(!g.advance(0), "the round's reads are out: nothing until they end");
        g.completed(0, 10);
        assert!(!g.advance(10), "half a round done is not a round");
        g.completed(1, 20);
        assert!(g.advance(20));
        // A queue of 1 serves the same reads, one at a time.
        let (g1, reads1, most) = drive(&VdbSpec { batch: 4, ..s.clone() }, 1, 2);
        assert_eq!((g1.tally.reads, reads1.len(), most), (2 * 4 * 5, 40, 1));
    }

    #[test]
    fn the_index_is_written_once_over_the_writers_and_reads_stay_in_a_short_region() {
        let s = VdbSpec { vectors: 100, ..spec() };
        let whole: u64 = VdbGen::new(&s, region(s.index_bytes()), 1).index_writes(1 << 20).iter().map(|w| w.len as u64).sum();
        assert_eq!(whole, s.index_bytes());
        let parts: Vec<Vec<NextIo>> =
            (0..3).map(|w| VdbGen::new(&s, region(s.index_bytes()), 1).writing_as(w, 3).index_writes(64 << 10)).collect();
        let mut offsets: Vec<u64> = parts.iter().flatten().map(|w| w.offset).collect();
        offsets.sort();
        offsets.dedup();
        assert_eq!(offsets.len(), s.index_bytes().div_ceil(64 << 10) as usize, "each chunk written by one writer");
        // A region a third of the index: every read inside it.
        let short = s.index_bytes() / 3;
        let mut g = VdbGen::new(&s, region(short), 3);
        for slot in 0..500 {
            if !g.advance(0) {
                break;
            }
            let io = g.next_io().unwrap();
            g.issued(slot);
            assert!(io.offset - (1 << 20) + io.len as u64 <= short, "{io:?}");
        }
    }

    #[test]
    fn a_search_reads_each_node_once_and_requests_ended_after_the_phase_are_not_figures() {
        // 20 nodes a segment, a search list of 20: every node once.
        let s = VdbSpec { vectors: 20, segments: 1, search_list: 20, beam_width: 4, batch: 1, ..spec() };
        let (g, reads, _) = drive(&s, 64, 2);
        let first: std::collections::HashSet<u64> = reads[..20].iter().map(|io| io.offset).collect();
        assert_eq!(first.len(), 20, "no node read twice by one search");
        assert_eq!(g.tally.reads, 40);
        // The same run judged at the first request's end: the second, under
        // way then and ended after, is pending, not a figure.
        let (mut g, _, _) = drive(&s, 64, 2);
        let first_end = g.ended[0].at;
        g.ended(first_end);
        assert_eq!((g.tally.requests, g.tally.queries, g.tally.reads, g.tally.pending), (1, 1, 20, 1));
        assert_eq!(g.tally.latencies_ns.len(), 1);
        // A segment of fewer nodes than the search list: each read once.
        let small = VdbSpec { vectors: 5, ..s };
        let (g, _, _) = drive(&small, 64, 1);
        assert_eq!(g.tally.reads, 5);
    }

    #[test]
    fn a_request_cut_short_is_pending_and_tallies_merge() {
        let s = VdbSpec { vectors: 30, batch: 1, ..spec() };
        let mut g = VdbGen::new(&s, region(s.index_bytes()), 1);
        assert!(g.advance(0));
        g.next_io().unwrap();
        g.issued(0);
        g.abandoned(0);
        g.ended(0);
        assert_eq!(g.tally.pending, 1);
        let mut a = VdbTally { requests: 1, queries: 10, reads: 600, pending: 0, latencies_ns: vec![5] };
        a.merge(&g.tally);
        assert_eq!((a.requests, a.reads, a.pending, a.latencies_ns.len()), (1, 600, 1, 1));
    }
}
