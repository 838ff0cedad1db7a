//! The KV-cache tier of LLM inference as MLPerf Storage's KV-cache
//! benchmark models it (mlcommons/storage, `kv_cache_benchmark/kv_cache/`):
//! users in conversation with a model; each request reads the KV cache of
//! the conversation's earlier turns, writes its own (prefill: context tokens
//! x the model's KV bytes a token, then an fsync) and reads it back while it
//! decodes (1 + generated tokens / 32 times, for contexts under 10,000
//! tokens). Entries live in tiers, fastest first: the accelerator's memory,
//! the host's, then storage (this worker's region of the job's file or
//! device). Upper tiers are kept under 80% of their size by moving their
//! least recently used entry one tier down (written there: to storage, a
//! write and an fsync); storage, when full, drops its least recently used
//! entries. Only storage costs I/O: the memory tiers are counted, not
//! copied.
//!
//! Each worker is one client (an MLPerf rank) serving its share of the
//! users. Users arrive open-loop (each after a think time, whether or not
//! its last request was served); at most the worker's queue depth of
//! requests are served at once (the benchmark's `--max-concurrent-allocs`),
//! each one operation at a time (a request's reads and writes are
//! sequential, as its np.load and np.save are), the others wait in order of
//! arrival. A request's latency runs from its arrival to its end, queueing
//! included.
//!
//! Left out of the reference: its prefix cache (its lookups of a key never
//! written always miss), the QoS priority classes (served in arrival
//! order), RAG and trace replay; entries are byte ranges of one region, not
//! a file each (no create or unlink), and their data is the job's pattern.

use crate::gen::{NextIo, Region};
use crate::rng::Rng;
use crate::spec::OpKind;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A KV-cache workload (`--preset kvcache:MODEL`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KvSpec {
    pub model: String,
    /// KV-cache bytes a token (layers x KV heads x head size x 2 (K and V) x
    /// 2 bytes of fp16), over the tensor-parallel degree.
    pub bytes_per_token: u64,
    /// The job's users, shared out over its workers.
    pub users: u32,
    /// The accelerator's and the host's memory tiers, bytes a worker.
    pub gpu_bytes: u64,
    pub cpu_bytes: u64,
    /// Emulated generation time a generated token, ns (the reference's
    /// `none` 0, `fast` 2 ms, `realistic` 30 ms).
    pub generation_ns: u64,
    /// Later turns read the conversation's earlier turns' entries.
    pub multi_turn: bool,
}

/// The users' kinds (chatbot, coding, document), as the reference draws
/// them (uniformly): the ranges of a user's context and generated tokens,
/// and of its think time in ms.
const USERS: [UserKind; 3] = [
    UserKind { context: (512, 4096), generated: (50, 200), think_ms: (100, 500) },
    UserKind { context: (4096, 25_000), generated: (100, 500), think_ms: (200, 1000) },
    UserKind { context: (4096, 16_384), generated: (200, 800), think_ms: (300, 1500) },
];
/// Entries are whole 4 KiB blocks (direct I/O's alignment).
const BLOCK: u64 = 4096;

/// Contexts from here on are not decoded (the reference's threshold).
const DECODE_BELOW: u64 = 10_000;
/// Generated tokens a decode read of the entry covers.
const TOKENS_A_READ: u64 = 32;
/// The chance a request continues its user's conversation.
const CONTINUE: f64 = 0.8;
/// Turns a conversation has at most; the next starts a new one.
const MAX_TURNS: usize = 50;
/// Upper tiers are kept under this share of their size.
const HIGH_WATER: f64 = 0.8;
/// An entry larger than this share of a tier skips it.
const FITS: f64 = 0.95;

#[derive(Clone, Copy, Debug)]
struct UserKind {
    context: (u64, u64),
    generated: (u64, u64),
    think_ms: (u64, u64),
}

/// What one worker did, for the job's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KvTally {
    pub arrived: u64,
    pub served: u64,
    pub context_tokens: u64,
    pub generated_tokens: u64,
    /// Entries read (earlier turns and decode), by the tier that held them.
    pub hits: [u64; 3],
    /// Earlier turns' entries no tier held any more.
    pub misses: u64,
    /// Entries written to storage: a request's own, and moved down to it.
    pub stored: u64,
    pub demoted: u64,
    /// Entries storage dropped to make room, and ones no tier could take.
    pub evicted: u64,
    pub uncached: u64,
    /// Requests waiting or being served when the run ended.
    pub pending: u64,
    /// Each served request's latency (arrival to end), ns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latencies_ns: Vec<u64>,
    /// Each pending request's wait so far (its arrival to the model's last
    /// moment), ns: a request over a latency bound before the run ended
    /// has missed it, served or not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting_ns: Vec<u64>,
}

impl KvTally {
    pub fn merge(&mut self, o: &KvTally) {
        self.arrived += o.arrived;
        self.served += o.served;
        self.context_tokens += o.context_tokens;
        self.generated_tokens += o.generated_tokens;
        for (a, b) in self.hits.iter_mut().zip(o.hits) {
            *a += b;
        }
        self.misses += o.misses;
        self.stored += o.stored;
        self.demoted += o.demoted;
        self.evicted += o.evicted;
        self.uncached += o.uncached;
        self.pending += o.pending;
        self.latencies_ns.extend_from_slice(&o.latencies_ns);
        self.waiting_ns.extend_from_slice(&o.waiting_ns);
    }
}

/// The tiers, fastest first.
const GPU: usize = 0;
const CPU: usize = 1;
const STORAGE: usize = 2;

/// One cached entry: where it is and, on storage, its byte ranges.
#[derive(Clone, Debug)]
struct Entry {
    bytes: u64,
    tier: usize,
    extents: Vec<(u64, u64)>,
    /// Its place in its tier's LRU order.
    stamp: u64,
    /// Written (on storage: its writes and fsync done); until then a read
    /// of it is a miss, as the reference's index has it only then.
    ready: bool,
    /// Requests writing or reading its ranges: it is not dropped (its
    /// ranges not given to another entry) while they do.
    pins: u32,
}

/// The tiers' contents and storage's free space.
#[derive(Debug)]
struct Tiers {
    limit: [u64; 3],
    used: [u64; 3],
    lru: [BTreeMap<u64, u64>; 3],
    entries: HashMap<u64, Entry>,
    /// Storage's free byte ranges (offsets within the region), by start.
    free: BTreeMap<u64, u64>,
    free_bytes: u64,
    stamp: u64,
}

impl Tiers {
    fn new(gpu: u64, cpu: u64, storage: u64) -> Tiers {
        let free = if storage > 0 { BTreeMap::from([(0, storage)]) } else { BTreeMap::new() };
        let mut limit = [0; 3];
        (limit[GPU], limit[CPU], limit[STORAGE]) = (gpu, cpu, storage);
        Tiers { limit, used: [0; 3], lru: Default::default(), entries: HashMap::new(), free, free_bytes: storage, stamp: 0 }
    }

    /// The entry read now: its tier, made most recently used (reads never
    /// move an entry up, as the reference's).
    fn touch(&mut self, id: u64) -> Option<&Entry> {
        self.stamp += 1;
        let e = self.entries.get_mut(&id).filter(|e| e.ready)?;
        self.lru[e.tier].remove(&e.stamp);
        e.stamp = self.stamp;
        self.lru[e.tier].insert(e.stamp, id);
        Some(e)
    }

    /// Place a new entry in the fastest tier from `from` that takes it,
    /// moving entries down to make room; each entry written to storage on
    /// the way (its own included) is pushed onto `writes`.
    fn place(&mut self, id: u64, bytes: u64, from: usize, t: &mut KvTally, writes: &mut Vec<u64>) {
        for tier in from..3 {
            let limit = self.limit[tier];
            if limit == 0 || bytes as f64 > limit as f64 * FITS {
                continue;
            }
            let room = match tier {
                STORAGE => self.room_on_storage(bytes, t),
                _ => self.room_in_memory(tier, bytes, t, writes),
            };
            if !room {
                continue;
            }
            self.stamp += 1;
            let on_storage = tier == STORAGE;
            let extents = if on_storage { self.allocate(bytes) } else { Vec::new() };
            self.used[tier] += bytes;
            self.lru[tier].insert(self.stamp, id);
            // On storage it is pinned by the request writing it until written.
            let (ready, pins) = (!on_storage, u32::from(on_storage));
            self.entries.insert(id, Entry { bytes, tier, extents, stamp: self.stamp, ready, pins });
            if on_storage {
                writes.push(id);
            }
            return;
        }
        t.uncached += 1;
    }

    /// Room in a memory tier, its least recently used entries moved down
    /// until the new one leaves it under the high-water mark.
    fn room_in_memory(&mut self, tier: usize, bytes: u64, t: &mut KvTally, writes: &mut Vec<u64>) -> bool {
        let mark = (self.limit[tier] as f64 * HIGH_WATER) as u64;
        while self.used[tier] + bytes > mark {
            let Some((_, victim)) = self.lru[tier].pop_first() else { break };
            let Some(e) = self.entries.remove(&victim) else { continue };
            self.used[tier] -= e.bytes;
            t.demoted += 1;
            self.place(victim, e.bytes, tier + 1, t, writes);
        }
        self.used[tier] + bytes <= self.limit[tier]
    }

    /// Room on storage, its least recently used entries dropped for it
    /// (not those a request is writing or reading: none, no room).
    fn room_on_storage(&mut self, bytes: u64, t: &mut KvTally) -> bool {
        while self.free_bytes < bytes {
            let idle = self.lru[STORAGE].iter().find(|(_, id)| self.entries.get(id).is_none_or(|e| e.pins == 0));
            let Some((&stamp, &victim)) = idle else { return false };
            self.lru[STORAGE].remove(&stamp);
            if let Some(e) = self.entries.remove(&victim) {
                self.used[STORAGE] -= e.bytes;
                self.release(&e.extents);
                t.evicted += 1;
            }
        }
        true
    }

    /// A request is done with an entry's ranges (written: it is ready).
    fn unpin(&mut self, id: u64, written: bool) {
        if let Some(e) = self.entries.get_mut(&id) {
            e.pins = e.pins.saturating_sub(1);
            e.ready |= written;
        }
    }

    /// Take `bytes` of free storage, first ranges first (as many as it
    /// takes: a long-lived region fragments).
    fn allocate(&mut self, mut bytes: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        while bytes > 0 {
            let Some((&start, &len)) = self.free.iter().next() else { break };
            self.free.remove(&start);
            let take = len.min(bytes);
            if take < len {
                self.free.insert(start + take, len - take);
            }
            out.push((start, take));
            self.free_bytes -= take;
            bytes -= take;
        }
        out
    }

    /// Give ranges back, joined to free neighbours.
    fn release(&mut self, extents: &[(u64, u64)]) {
        for &(mut start, mut len) in extents {
            self.free_bytes += len;
            if let Some((&s, &l)) = self.free.range(..start).next_back() {
                if s + l == start {
                    self.free.remove(&s);
                    start = s;
                    len += l;
                }
            }
            if let Some(&l) = self.free.get(&(start + len)) {
                self.free.remove(&(start + len));
                len += l;
            }
            self.free.insert(start, len);
        }
    }
}

/// Where a request being served stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Reading the conversation's earlier turns (the next one's index).
    Turns(usize),
    Prefill,
    /// Decode reads still to do.
    Decode(u64),
    /// Generating until then (ns).
    Generate(u64),
    Done,
}

/// A request, from its arrival to its end.
#[derive(Clone, Debug)]
struct Request {
    arrived: u64,
    entry: u64,
    context: u64,
    generated: u64,
    /// The entries of the conversation's earlier turns.
    turns: Vec<u64>,
}

/// A request being served: its operations still to issue in this phase,
/// and the entries whose ranges they use (pinned until they are done).
#[derive(Debug)]
struct Serving {
    req: Request,
    phase: Phase,
    ops: VecDeque<NextIo>,
    in_flight: bool,
    writing: Vec<u64>,
    reading: Option<u64>,
}

/// A user: its context and generated tokens (a request takes a quarter
/// to all of each), when it next asks, and its conversation.
#[derive(Clone, Debug)]
struct User {
    context: u64,
    generated: u64,
    think_ms: (u64, u64),
    next_at: u64,
    conversation: Vec<u64>,
}

/// One worker's users, queue, requests being served and tiers.
pub struct KvGen {
    spec: KvSpec,
    region: Region,
    chunk: u64,
    rng: Rng,
    users: Vec<User>,
    /// The earliest of the users' next asks (so a call with nothing due
    /// does not look at every user: `advance` runs before each operation).
    next_arrival: u64,
    queue: VecDeque<Request>,
    /// A place per request served at once (`None`: free), so a slot's
    /// request keeps its index while others end.
    serving: Vec<Option<Serving>>,
    /// Which request each slot's operation belongs to.
    slots: HashMap<u32, usize>,
    /// The request whose operation `next` gave last.
    handed: Option<usize>,
    tiers: Tiers,
    next_entry: u64,
    /// The latest moment the model was brought to.
    latest: u64,
    pub tally: KvTally,
}

impl KvGen {
    /// Worker `worker` of `workers`: its share of the users, storage in
    /// `region`, `chunk` bytes an I/O at most, `servers` requests at once.
    pub fn new(spec: &KvSpec, region: Region, chunk: u64, servers: u32, worker: u32, workers: u32, seed: u64) -> KvGen {
        let mut rng = Rng::new(seed);
        let share = spec.users / workers.max(1) + u32::from(worker < spec.users % workers.max(1));
        let uniform = |rng: &mut Rng, (lo, hi): (u64, u64)| lo + rng.below(hi - lo + 1);
        let users: Vec<User> = (0..share)
            .map(|_| {
                let kind = USERS[rng.below(USERS.len() as u64) as usize];
                let (context, generated) = (uniform(&mut rng, kind.context), uniform(&mut rng, kind.generated));
                // The first asks spread over one think time.
                let next_at = rng.below(kind.think_ms.1 * 1_000_000);
                User { context, generated, think_ms: kind.think_ms, next_at, conversation: Vec::new() }
            })
            .collect();
        KvGen {
            spec: spec.clone(),
            region,
            chunk: chunk.max(4096),
            rng,
            next_arrival: users.iter().map(|u| u.next_at).min().unwrap_or(u64::MAX),
            users,
            queue: VecDeque::new(),
            serving: (0..servers.max(1)).map(|_| None).collect(),
            slots: HashMap::new(),
            handed: None,
            // Whole blocks only, so every range is aligned for direct I/O.
            tiers: Tiers::new(spec.gpu_bytes, spec.cpu_bytes, region.len / BLOCK * BLOCK),
            next_entry: 0,
            latest: 0,
            tally: KvTally::default(),
        }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Bring the model to `now`: requests that arrived are queued, served
    /// as servers free up, and each served one taken to its next operation
    /// (or its end). Whether an operation is ready to issue.
    pub fn advance(&mut self, now: u64) -> bool {
        self.latest = self.latest.max(now);
        self.arrivals(now);
        loop {
            for place in self.serving.iter_mut().filter(|p| p.is_none()) {
                let Some(req) = self.queue.pop_front() else { break };
                let phase = if req.turns.is_empty() { Phase::Prefill } else { Phase::Turns(0) };
                *place = Some(Serving { req, phase, ops: VecDeque::new(), in_flight: false, writing: Vec::new(), reading: None });
            }
            // Requests served without I/O (their entries in memory) free
            // their places at once: the queue moves up.
            if !self.step_all(now) || self.queue.is_empty() {
                break;
            }
        }
        self.ready().is_some()
    }

    /// Every request served moved on; whether one ended (its place freed).
    fn step_all(&mut self, now: u64) -> bool {
        let mut ended = false;
        for i in 0..self.serving.len() {
            if self.serving[i].is_some() && self.step(i, now) {
                self.serving[i] = None;
                ended = true;
            }
        }
        ended
    }

    /// A request not waiting on an operation moved on until it has one to
    /// issue, waits for its generation time, or ends (true).
    fn step(&mut self, i: usize, now: u64) -> bool {
        loop {
            let Some(s) = &self.serving[i] else { return false };
            if s.in_flight || !s.ops.is_empty() {
                return false;
            }
            if !s.writing.is_empty() || s.reading.is_some() {
                self.done_with_entries(i);
            }
            let Some(s) = &self.serving[i] else { return false };
            let next = match s.phase {
                Phase::Turns(k) if k < s.req.turns.len() => {
                    let id = s.req.turns[k];
                    self.read_entry(i, id, true);
                    Phase::Turns(k + 1)
                }
                Phase::Turns(_) => Phase::Prefill,
                Phase::Prefill => {
                    self.prefill(i);
                    let r = &self.serving(i).req;
                    match r.context < DECODE_BELOW {
                        true => Phase::Decode(1 + r.generated.div_ceil(TOKENS_A_READ)),
                        false => Phase::Generate(now + r.generated * self.spec.generation_ns),
                    }
                }
                Phase::Decode(0) => Phase::Generate(now + s.req.generated * self.spec.generation_ns),
                Phase::Decode(k) => {
                    let id = s.req.entry;
                    self.read_entry(i, id, false);
                    Phase::Decode(k - 1)
                }
                Phase::Generate(until) if until > now => return false,
                Phase::Generate(_) => {
                    self.finish(i, now);
                    Phase::Done
                }
                Phase::Done => return true,
            };
            self.serving_mut(i).phase = next;
        }
    }

    /// The operations of a phase are done: the entries they used are
    /// unpinned, and those written are ready to be read.
    fn done_with_entries(&mut self, i: usize) {
        let s = self.serving_mut(i);
        let (writing, reading) = (std::mem::take(&mut s.writing), s.reading.take());
        for id in writing {
            self.tiers.unpin(id, true);
        }
        if let Some(id) = reading {
            self.tiers.unpin(id, false);
        }
    }

    fn serving(&self, i: usize) -> &Serving {
        self.serving[i].as_ref().expect("a request served there")
    }

    fn serving_mut(&mut self, i: usize) -> &mut Serving {
        self.serving[i].as_mut().expect("a request served there")
    }

    /// Read an entry: from storage, its ranges; from memory, nothing.
    fn read_entry(&mut self, i: usize, id: u64, earlier_turn: bool) {
        let (base, chunk) = (self.region.start, self.chunk);
        match self.tiers.touch(id) {
            Some(e) => {
                self.tally.hits[e.tier] += 1;
                if e.tier == STORAGE {
                    let ops = chunks(&e.extents, base, chunk).map(|(offset, len)| NextIo {
                        op: OpKind::Read,
                        file: 0,
                        offset,
                        len,
                        whole: false,
                        class: 0,
                    });
                    let ops: Vec<NextIo> = ops.collect();
                    if let Some(e) = self.tiers.entries.get_mut(&id) {
                        e.pins += 1;
                    }
                    let s = self.serving_mut(i);
                    s.ops.extend(ops);
                    s.reading = Some(id);
                }
            }
            None if earlier_turn => self.tally.misses += 1,
            // Its own entry went to no tier (or its writes were cut short):
            // the decode reads nothing.
            None => {}
        }
    }

    /// Write the request's own entry where the tiers place it, and the
    /// entries moved to storage to make room, each followed by an fsync.
    fn prefill(&mut self, i: usize) {
        let r = &self.serving(i).req;
        let (id, bytes) = (r.entry, (r.context * self.spec.bytes_per_token).div_ceil(BLOCK) * BLOCK);
        let mut writes = Vec::new();
        self.tiers.place(id, bytes, GPU, &mut self.tally, &mut writes);
        let (base, chunk) = (self.region.start, self.chunk);
        let mut ops = VecDeque::new();
        let mut writing = Vec::new();
        for w in writes {
            // Moved down, then dropped again by a later move in the same
            // placement: nothing of it is written.
            let Some(e) = self.tiers.entries.get(&w) else { continue };
            self.tally.stored += 1;
            writing.push(w);
            ops.extend(chunks(&e.extents, base, chunk).map(|(offset, len)| NextIo {
                op: OpKind::Write,
                file: 0,
                offset,
                len,
                whole: false,
                class: 0,
            }));
            ops.push_back(NextIo { op: OpKind::Sync, file: 0, offset: 0, len: 0, whole: false, class: 0 });
        }
        let s = self.serving_mut(i);
        (s.ops, s.writing) = (ops, writing);
    }

    fn finish(&mut self, i: usize, now: u64) {
        let r = &self.serving[i].as_ref().expect("a request served there").req;
        let t = &mut self.tally;
        t.served += 1;
        t.context_tokens += r.context;
        t.generated_tokens += r.generated;
        t.latencies_ns.push(now.saturating_sub(r.arrived));
    }

    /// Every user whose think time ended by `now` asks: a request of its
    /// conversation's next turn, or of a new conversation.
    fn arrivals(&mut self, now: u64) {
        if now < self.next_arrival {
            return;
        }
        for u in 0..self.users.len() {
            while self.users[u].next_at <= now {
                let req = self.ask(u);
                self.queue.push_back(req);
            }
        }
        self.next_arrival = self.users.iter().map(|u| u.next_at).min().unwrap_or(u64::MAX);
    }

    fn ask(&mut self, u: usize) -> Request {
        let user = &self.users[u];
        let (arrived, (lo, hi)) = (user.next_at, user.think_ms);
        // A quarter to all of the user's tokens (the reference's randint(n/4, n)).
        let quarter_to_all = |rng: &mut Rng, n: u64| (n / 4).max(1) + rng.below(n - (n / 4).max(1) + 1);
        let (context, generated) = (user.context, user.generated);
        let context = quarter_to_all(&mut self.rng, context);
        let generated = quarter_to_all(&mut self.rng, generated);
        let goes_on = self.spec.multi_turn && self.rng.unit() < CONTINUE && self.users[u].conversation.len() < MAX_TURNS;
        if !goes_on {
            self.users[u].conversation.clear();
        }
        let turns = self.users[u].conversation.clone();
        let entry = self.next_entry;
        self.next_entry += 1;
        self.users[u].conversation.push(entry);
        // The next ask after a think time of 0.8 to 1.2 times the drawn one.
        let think = (lo + self.rng.below(hi - lo + 1)) as f64 * 1e6 * (0.8 + 0.4 * self.rng.unit());
        self.users[u].next_at = arrived + (think as u64).max(1);
        self.tally.arrived += 1;
        Request { arrived, entry, context, generated, turns }
    }

    /// The first request with an operation to issue now.
    fn ready(&self) -> Option<usize> {
        self.serving.iter().position(|s| s.as_ref().is_some_and(|s| !s.in_flight && !s.ops.is_empty()))
    }

    /// The next operation (after [`KvGen::advance`] said one is ready).
    pub fn next_io(&mut self) -> Option<NextIo> {
        let i = self.ready()?;
        self.handed = Some(i);
        self.serving_mut(i).ops.pop_front()
    }

    /// The operation `next` gave went out in `slot`.
    pub fn issued(&mut self, slot: u32) {
        if let Some(i) = self.handed.take() {
            self.serving_mut(i).in_flight = true;
            self.slots.insert(slot, i);
        }
    }

    /// The engine gave up on the operation in `slot` (the run's end): its
    /// request is not waiting on it any more.
    pub fn abandoned(&mut self, slot: u32) {
        if let Some(i) = self.slots.remove(&slot) {
            if let Some(s) = self.serving[i].as_mut() {
                s.in_flight = false;
            }
        }
    }

    /// The operation in `slot` ended: its request goes on (and, ended,
    /// frees its place for the queue's next at the next `advance`).
    pub fn completed(&mut self, slot: u32, now: u64) {
        self.latest = self.latest.max(now);
        if let Some(i) = self.slots.remove(&slot) {
            if let Some(s) = self.serving[i].as_mut() {
                s.in_flight = false;
            }
        }
        self.step_all(now);
    }

    /// When the model next needs the worker without a completion: the next
    /// arrival or the end of a generation time (`u64::MAX`: a completion).
    pub fn wake(&self) -> u64 {
        let arrival = self.next_arrival;
        let generating = self.serving.iter().flatten().filter_map(|s| match s.phase {
            Phase::Generate(t) => Some(t),
            _ => None,
        });
        generating.fold(arrival, u64::min)
    }

    /// The run ended at `at`: users' asks up to then are queued (not
    /// served), so the tally's waits run to the end.
    pub fn ended(&mut self, at: u64) {
        self.latest = self.latest.max(at);
        self.arrivals(at);
    }

    /// This worker's figures, with what was still waiting or being served.
    pub fn tally(&self) -> KvTally {
        let pending = self.queue.iter().chain(self.serving.iter().flatten().map(|s| &s.req));
        let waiting_ns: Vec<u64> = pending.map(|r| self.latest.saturating_sub(r.arrived)).collect();
        KvTally { pending: waiting_ns.len() as u64, waiting_ns, ..self.tally.clone() }
    }
}

/// A run of ranges cut into operations of at most `chunk` bytes, at
/// `base` in the file.
fn chunks(extents: &[(u64, u64)], base: u64, chunk: u64) -> impl Iterator<Item = (u64, u32)> + '_ {
    extents.iter().flat_map(move |&(start, len)| {
        (0..len.div_ceil(chunk)).map(move |k| {
            let off = k * chunk;
            (base + start + off, (len - off).min(chunk) as u32)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn spec(users: u32, gpu: u64, cpu: u64) -> KvSpec {
        KvSpec {
            model: "llama3.1-8b".into(),
            bytes_per_token: 131_072,
            users,
            gpu_bytes: gpu,
            cpu_bytes: cpu,
            generation_ns: 0,
            multi_turn: true,
        }
    }

    fn region(len: u64) -> Region {
        Region { files: 1, start: 4096, len, end: 0 }
    }

    #[test]
    fn storage_drops_its_least_recently_used_entries_and_joins_what_they_free() {
        let mut t = Tiers::new(0, 0, 10 * MIB);
        let (mut tally, mut w) = (KvTally::default(), Vec::new());
        // Written as soon as placed (a request's writes done).
        let mut put = |t: &mut Tiers, id, bytes, tally: &mut KvTally| {
            t.place(id, bytes, GPU, tally, &mut w);
            t.unpin(id, true);
        };
        for id in 0..3 {
            put(&mut t, id, 4 * MIB, &mut tally);
        }
        // The third needed room: the oldest went.
        assert_eq!(tally.evicted, 1);
        assert!(!t.entries.contains_key(&0) && t.entries.contains_key(&2));
        // Read 1, so 2 is the oldest now.
        assert!(t.touch(1).is_some());
        put(&mut t, 3, 4 * MIB, &mut tally);
        assert!(t.entries.contains_key(&1) && !t.entries.contains_key(&2), "{:?}", t.entries.keys());
        // Too big for storage (over 95% of it): no tier takes it.
        put(&mut t, 4, 10 * MIB, &mut tally);
        assert_eq!(tally.uncached, 1);
        // One a request uses (pinned) is never dropped for room: 3 goes, not 1, the older.
        t.entries.get_mut(&1).unwrap().pins = 1;
        t.place(5, 4 * MIB, GPU, &mut tally, &mut w);
        assert!(t.touch(5).is_none(), "not readable before it is written");
        assert!(t.entries.contains_key(&1) && !t.entries.contains_key(&3) && t.entries.contains_key(&5), "{:?}", t.entries.keys());
        assert_eq!(w, [0, 1, 2, 3, 5], "each stored entry written");
        t.place(6, 4 * MIB, GPU, &mut tally, &mut w);
        assert_eq!(tally.uncached, 2, "every entry on storage in use: no room");
        for id in [1, 5] {
            let e = t.entries.remove(&id).unwrap();
            t.release(&e.extents);
        }
        assert_eq!((t.free_bytes, t.free.len()), (10 * MIB, 1), "every range joined again: {:?}", t.free);
    }

    #[test]
    fn a_full_memory_tier_moves_its_oldest_entry_down_to_storage() {
        let mut t = Tiers::new(0, 10 * MIB, 100 * MIB);
        let (mut tally, mut w) = (KvTally::default(), Vec::new());
        t.place(0, 4 * MIB, GPU, &mut tally, &mut w);
        t.place(1, 4 * MIB, GPU, &mut tally, &mut w);
        assert!(w.is_empty() && t.entries[&1].tier == CPU, "8 MiB of 10: under the high-water mark");
        t.place(2, 4 * MIB, GPU, &mut tally, &mut w);
        // 12 MiB would pass 80% of 10: the oldest goes down, and is written there.
        assert_eq!((tally.demoted, w.len()), (1, 1));
        assert_eq!(w, [0]);
        assert_eq!((t.entries[&0].tier, t.entries[&2].tier), (STORAGE, CPU));
    }

    /// The model driven as a worker drives it: every operation completes
    /// 1 ms after it is issued, one slot per request served.
    fn drive(gen: &mut KvGen, until: u64) -> Vec<NextIo> {
        let mut now = 0;
        let mut ops = Vec::new();
        let mut in_flight: Vec<(u64, u32)> = Vec::new();
        let mut free: Vec<u32> = (0..4).collect();
        while now < until {
            while !free.is_empty() && gen.advance(now) {
                let io = gen.next_io().expect("advance said one is ready");
                let slot = free.pop().unwrap();
                gen.issued(slot);
                in_flight.push((now + 1_000_000, slot));
                ops.push(io);
            }
            let wake = in_flight.iter().map(|f| f.0).min().unwrap_or(u64::MAX).min(gen.wake()).max(now + 1);
            now = wake;
            in_flight.retain(|&(at, slot)| {
                if at <= now {
                    gen.completed(slot, now);
                    free.push(slot);
                    false
                } else {
                    true
                }
            });
        }
        ops
    }

    #[test]
    fn each_request_writes_its_entry_with_an_fsync_and_reads_it_back_while_it_decodes() {
        let mut gen = KvGen::new(&spec(3, 0, 0), region(64 << 30), MIB, 4, 0, 1, 7);
        let ops = drive(&mut gen, 20_000_000_000);
        let t = gen.tally();
        assert!(t.served > 10 && t.arrived >= t.served, "{t:?}");
        let syncs = ops.iter().filter(|o| o.op == OpKind::Sync).count() as u64;
        assert_eq!(syncs, t.stored, "an fsync after each entry written");
        let written: u64 = ops.iter().filter(|o| o.op == OpKind::Write).map(|o| u64::from(o.len)).sum();
        assert!(written >= t.context_tokens * 131_072, "every served request's entry written: {written}");
        assert!(ops.iter().all(|o| o.op == OpKind::Sync || (o.offset >= 4096 && o.len as u64 <= MIB && o.offset % 4096 == 0)));
        // Decoding reads, and later turns read earlier ones: every entry read from storage.
        assert!(t.hits[STORAGE] > t.served, "{t:?}");
        assert_eq!((t.hits[GPU], t.hits[CPU]), (0, 0), "no memory tiers");
        assert_eq!(t.latencies_ns.len() as u64, t.served);
        assert!(t.latencies_ns.iter().all(|l| *l >= 1_000_000), "each took an operation at least");
    }

    #[test]
    fn entries_in_memory_cost_no_io_and_users_are_shared_out() {
        let mut gen = KvGen::new(&spec(2, 0, 1 << 40), region(1 << 30), MIB, 4, 0, 1, 3);
        let ops = drive(&mut gen, 5_000_000_000);
        let t = gen.tally();
        assert!(ops.is_empty() && t.served > 0 && t.hits[CPU] > 0, "{t:?}");
        assert!(t.latencies_ns.iter().all(|l| *l == 0));
        let share = |w| KvGen::new(&spec(5, 0, 0), region(MIB), MIB, 1, w, 2, 1).users.len();
        assert_eq!((share(0), share(1)), (3, 2));
    }
}
