//! The normalised job description every front end (TOML, flags, fio files) builds.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The kind of one operation. Engines carry them out; metrics count them.
/// Block engines use the first three; object engines the whole set.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// Read a block, or an object (whole or a range).
    Read,
    /// Write a block, or part of an existing object at an offset.
    Write,
    /// fsync or fdatasync, whichever the job asked for.
    Sync,
    /// Write a whole new object (RADOS write_full, HTTP PUT).
    Create,
    /// Replace a whole existing object.
    Update,
    /// Ask for an object's size (RADOS stat, HTTP HEAD).
    Stat,
    /// Remove an object.
    Delete,
    /// List a bucket or container (one page).
    List,
    /// Discard a block range (TRIM/UNMAP: a hole punched in a file,
    /// BLKDISCARD on a device, NBD_CMD_TRIM, rbd discard). Appended last so
    /// the indexes of the others stay what stored results say.
    Trim,
    /// Set a file's length (fio's ftruncate engine: the offset is the new
    /// length). Appended after Trim for the same reason.
    Truncate,
}

impl OpKind {
    pub const ALL: [OpKind; 10] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::Sync,
        OpKind::Create,
        OpKind::Update,
        OpKind::Stat,
        OpKind::Delete,
        OpKind::List,
        OpKind::Trim,
        OpKind::Truncate,
    ];
    pub const COUNT: usize = 10;

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Sync => "sync",
            OpKind::Create => "create",
            OpKind::Update => "update",
            OpKind::Stat => "stat",
            OpKind::Delete => "delete",
            OpKind::List => "list",
            OpKind::Trim => "trim",
            OpKind::Truncate => "truncate",
        }
    }

    pub fn parse(s: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Sends data to storage (buffers must hold fresh data).
    #[inline]
    pub fn writes_data(self) -> bool {
        matches!(self, OpKind::Write | OpKind::Create | OpKind::Update)
    }

    /// Moves `len` bytes; a shorter result is a short I/O.
    #[inline]
    pub fn moves_data(self) -> bool {
        matches!(self, OpKind::Read | OpKind::Write | OpKind::Create | OpKind::Update | OpKind::Trim)
    }

    /// Changes what the target holds (a write, or a discard that zeroes it):
    /// what the safety checks guard.
    #[inline]
    pub fn changes_data(self) -> bool {
        !matches!(self, OpKind::Read | OpKind::Sync | OpKind::Stat | OpKind::List)
    }
}

/// fio's `rw=` patterns.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed (fio `readwrite` / `rw`).
    ReadWrite,
    RandRw,
}

impl RwMode {
    pub fn parse(s: &str) -> Option<RwMode> {
        Some(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "readwrite" | "rw" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "readwrite",
            RwMode::RandRw => "randrw",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }
    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::ReadWrite | RwMode::RandRw)
    }
    /// Percentage of reads before `rwmixread` is applied.
    pub fn read_percent(self, rwmixread: f64) -> f64 {
        match self {
            RwMode::Read | RwMode::RandRead => 100.0,
            RwMode::Write | RwMode::RandWrite => 0.0,
            RwMode::ReadWrite | RwMode::RandRw => rwmixread,
        }
    }
    pub fn writes(self, rwmixread: f64) -> bool {
        self.read_percent(rwmixread) < 100.0
    }
}

/// Weighted block sizes (fio `bs` / `bssplit`); one entry means a fixed size.
/// Weights are relative (the option parser gives hundredths of a percent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeSplit(pub Vec<(u64, u32)>);

impl SizeSplit {
    pub fn fixed(bs: u64) -> SizeSplit {
        SizeSplit(vec![(bs, 1)])
    }
    pub fn max(&self) -> u64 {
        self.0.iter().map(|e| e.0).max().unwrap_or(0)
    }
    pub fn min(&self) -> u64 {
        self.0.iter().map(|e| e.0).min().unwrap_or(0)
    }
    pub fn describe(&self) -> String {
        if self.0.len() == 1 {
            return crate::units::format_size(self.0[0].0);
        }
        let total: u64 = self.0.iter().map(|e| e.1 as u64).sum::<u64>().max(1);
        self.0
            .iter()
            .map(|(s, w)| format!("{}/{}", crate::units::format_size(*s), (*w as f64 * 10_000.0 / total as f64).round() / 100.0))
            .collect::<Vec<_>>()
            .join(":")
    }
}

/// Block sizes for reads and writes (fio allows `bs=4k,64k`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSizes {
    pub read: SizeSplit,
    pub write: SizeSplit,
}

impl BlockSizes {
    pub fn max(&self) -> u64 {
        self.read.max().max(self.write.max())
    }
    pub fn min(&self) -> u64 {
        self.read.min().min(self.write.min())
    }
    pub fn describe(&self) -> String {
        if self.read == self.write {
            self.read.describe()
        } else {
            format!("{},{}", self.read.describe(), self.write.describe())
        }
    }
}

/// One zone of a zoned distribution: `access_pct` of I/O goes to `size_pct` of the space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub access_pct: f64,
    pub size_pct: f64,
}

/// Where random offsets land (fio `random_distribution`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    Zipf {
        theta: f64,
    },
    Pareto {
        h: f64,
    },
    /// Gaussian around the middle of the region; `dev_pct` is the standard
    /// deviation as a percentage of the region.
    Normal {
        dev_pct: f64,
    },
    /// Contiguous zones from the start of the region; also the form taken by a
    /// hot-set ("90% of I/O to 10% of the space") cache study.
    Zoned {
        zones: Vec<Zone>,
    },
    /// fio's `sequence:2,0,1`: these block indices (in units of the
    /// smallest block) in this order, over and over; with
    /// `random_sequence_stride` each round moves on by the sequence's length.
    Sequence {
        blocks: Vec<u64>,
    },
}

impl Distribution {
    pub fn describe(&self) -> String {
        match self {
            Distribution::Uniform => "uniform".into(),
            Distribution::Zipf { theta } => format!("zipf:{theta}"),
            Distribution::Pareto { h } => format!("pareto:{h}"),
            Distribution::Normal { dev_pct } => format!("normal:{dev_pct}"),
            Distribution::Zoned { zones } => {
                format!("zoned:{}", zones.iter().map(|z| format!("{}/{}", z.access_pct, z.size_pct)).collect::<Vec<_>>().join(":"))
            }
            Distribution::Sequence { blocks } => {
                format!("sequence:{}", blocks.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(","))
            }
        }
    }
}

/// A fixed-rate (open-loop) target, per worker as in fio.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "unit", content = "value", rename_all = "lowercase")]
pub enum RateLimit {
    Iops(f64),
    Bytes(f64),
}

/// How scheduled arrivals are spaced (fio `rate_process`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    Linear,
    Poisson,
}

/// fio's strided zones: `size` bytes of I/O inside a zone of `range` bytes,
/// then the next zone, `skip` bytes past the end of this one (wrapping to
/// the start of the region at its end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

/// The errors (errno names, as results key them) reads and writes may hit
/// without failing their job: fio's non-fatal errors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToleratedErrors {
    pub read: Vec<String>,
    pub write: Vec<String>,
}

/// What written buffers contain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataPattern {
    /// All zeros (fio `zero_buffers`): flatters compressing storage, on purpose only.
    pub zeros: bool,
    /// Percentage of each 4 KiB chunk that compresses away (zero-filled).
    pub compress_pct: f64,
    /// Percentage of writes that repeat an earlier block exactly (dedupable).
    pub dedupe_pct: f64,
    /// rados bench's object contents ("I'm the N th op!" then 'z's), so that
    /// `rados bench seq|rand` verifies objects storbench wrote.
    #[serde(default)]
    pub rados_bench: bool,
    /// fio's `dedupe_mode=working_set`: dedupable writes repeat one of the
    /// working set's blocks, which are the first unique writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set: Option<WorkingSet>,
}

/// fio's dedupe working set: `blocks` blocks, the first unique writes of
/// the workers that share it. With `dedupe_global` the set is shared by
/// `workers` workers of all jobs (this job's worker k contributes slice
/// `first` + k of it, as fio spreads the set evenly between jobs); without,
/// each worker has a set of its own (`first` tells the jobs apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingSet {
    pub blocks: u64,
    pub global: bool,
    pub first: u32,
    pub workers: u32,
}

impl Default for DataPattern {
    fn default() -> Self {
        DataPattern { zeros: false, compress_pct: 0.0, dedupe_pct: 0.0, rados_bench: false, working_set: None }
    }
}

impl DataPattern {
    pub fn describe(&self) -> String {
        if self.zeros {
            return "zeros".into();
        }
        if self.rados_bench {
            return "rados bench's".into();
        }
        let mut s = "random".to_string();
        if self.compress_pct > 0.0 {
            s += &format!(", {}% compressible", self.compress_pct);
        }
        if self.dedupe_pct > 0.0 {
            s += &format!(", {}% dedupable", self.dedupe_pct);
        }
        if let Some(ws) = self.working_set {
            s += &format!(" (from a working set of {} blocks)", ws.blocks);
        }
        s
    }
}

/// How files are opened for writing (fio `sync`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenSync {
    #[default]
    None,
    /// O_SYNC: each write returns once data and metadata are stable.
    Sync,
    /// O_DSYNC: once the data (and what is needed to read it) is stable.
    Dsync,
}

/// How fio makes room for a file it does not lay out with data (fio
/// `fallocate`; Linux's default is `native`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallocate {
    /// Nothing: the file starts empty and writes extend it.
    None,
    /// fallocate(2), mode 0: the extents allocated, unwritten.
    #[default]
    Native,
    /// posix_fallocate(3).
    Posix,
    /// fallocate(FALLOC_FL_KEEP_SIZE): allocated, the size left as it was.
    Keep,
    /// ftruncate(2): the size set, nothing allocated (sparse).
    Truncate,
}

impl Fallocate {
    /// fio's values (`0` is none, `1` posix, as fio still takes them).
    pub fn parse(v: &str) -> Option<Fallocate> {
        Some(match v {
            "none" | "0" => Fallocate::None,
            "native" => Fallocate::Native,
            "posix" | "1" => Fallocate::Posix,
            "keep" => Fallocate::Keep,
            "truncate" => Fallocate::Truncate,
            _ => return None,
        })
    }
}

/// fio's log files: each is named by its prefix (the job's name when the
/// option is given without one), averaged over `avg_msec` windows, or with
/// `avg_msec` 0 (fio's default) one line per I/O, streamed by the worker.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FioLogs {
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    /// fio `log_avg_msec`: 0 asks for one line per I/O (see [`UnitLogs`]).
    pub avg_msec: u32,
    /// fio `log_offset`: each per-I/O line also says the I/O's offset.
    #[serde(default)]
    pub offset: bool,
    /// fio `log_prio`: the last column is the I/O's priority in hex (the
    /// kernel's ioprio value; without it, 1 for a real-time I/O, else 0).
    #[serde(default)]
    pub prio: bool,
    /// fio `log_max_value`: a window's largest value instead of its mean
    /// (nothing to choose in per-I/O logs).
    #[serde(default)]
    pub max_value: bool,
    /// Where the per-I/O logs go, set by the command before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<UnitLogs>,
    /// fio `write_hist_log`: latency histograms every `hist_msec` ms
    /// (`log_hist_msec`; 0 writes an empty file, as fio does), buckets
    /// merged 2^`hist_coarseness` at a time (`log_hist_coarseness`).
    #[serde(default)]
    pub hist: Option<String>,
    #[serde(default)]
    pub hist_msec: u32,
    #[serde(default)]
    pub hist_coarseness: u8,
}

impl FioLogs {
    /// No averaged log (bw, iops, lat) was asked for.
    pub fn is_empty(&self) -> bool {
        self.bw.is_none() && self.iops.is_none() && self.lat.is_none()
    }

    /// Lines are written per I/O (fio's `log_avg_msec=0`, its default).
    pub fn per_io(&self) -> bool {
        !self.is_empty() && self.avg_msec == 0
    }

    /// Every prefix a log file is named from.
    pub fn prefixes(&self) -> impl Iterator<Item = &str> {
        [&self.bw, &self.iops, &self.lat, &self.hist].into_iter().flatten().map(String::as_str)
    }

    /// The histogram log's window in ms, when lines are to be written.
    pub fn hist_window_ms(&self) -> Option<u64> {
        self.hist.as_ref().filter(|_| self.hist_msec > 0).map(|_| self.hist_msec as u64)
    }
}

/// Where a job's per-I/O log files are written: prefixes are relative to
/// `dir` (the results directory, or the current directory for the fio
/// drop-in), and worker w's files are numbered `first + w`, counting every
/// worker of every job of the run from 1 as fio does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitLogs {
    pub dir: std::path::PathBuf,
    pub first: u32,
}

/// What the kernel is told of the job's access pattern (fio `fadvise_hint`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    /// Nothing: the kernel's own readahead.
    Off,
    /// Random for random jobs, sequential for sequential ones (fio's default).
    #[default]
    Pattern,
    Sequential,
    Random,
}

/// Flush writes with fsync or fdatasync every N writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncEvery {
    pub every: u32,
    pub data_only: bool,
}

/// fio's completion batching, resolved ([`JobSpec::reaping`]): a worker
/// whose queue is full waits for `min` completions (at least one), takes
/// at most `max` per call (at least what it waits for), and goes on
/// collecting until no more than `low` are in flight before it fills the
/// queue again. fio's defaults (1, 1, iodepth) take one completion per call
/// and put a new I/O in its place at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reaping {
    pub min: u32,
    pub max: u32,
    pub low: u32,
    /// fio's `io_in_polling` (min and max both 0): after each I/O it issues
    /// the worker waits for a completion and takes one (fio's
    /// wait_for_completions raises a min of 0 to 1), so no more than one
    /// I/O is in flight whatever the iodepth. Its HOWTO calls this "always
    /// check for completed events before queuing more I/O".
    pub polls: bool,
}

/// One job, fully resolved from whatever front end described it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    pub rw: RwMode,
    /// Sequential patterns: bytes added to each next offset (fio `rw=write:4k`
    /// leaves holes; negative walks backwards).
    #[serde(default)]
    pub seq_skip: i64,
    /// Random patterns: I/Os in a row from one random offset (fio
    /// `rw=randread:8`); 1 is a new offset every I/O.
    #[serde(default = "one")]
    pub rand_run: u32,
    /// Random patterns: offsets are multiples of this (fio `blockalign`);
    /// None: of the smallest block size.
    #[serde(default)]
    pub blockalign: Option<u64>,
    /// fio's `zonemode=strided`: I/O in one zone at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<StridedZones>,
    pub rwmixread: f64,
    pub bs: BlockSizes,
    pub iodepth: u32,
    /// fio's `iodepth_batch_complete_min`: completions a full queue waits
    /// for (`None`: fio's 1). See [`JobSpec::reaping`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth_batch_complete_min: Option<u32>,
    /// fio's `iodepth_batch_complete_max`: the most completions taken at
    /// once (`None`: fio's default, the min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth_batch_complete_max: Option<u32>,
    /// fio's `iodepth_low`: a full queue is drained to this depth before it
    /// is filled again (`None`: fio's default, iodepth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth_low: Option<u32>,
    pub numjobs: u32,
    /// Volumes the job drives, each with `numjobs` workers at `iodepth` of
    /// its own (one file, RBD image or object prefix per volume): volumes=4
    /// at iodepth=4 keeps 16 operations in flight. See [`JobSpec::workers`].
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub volumes: u32,
    /// Bytes of the target each worker works on (per file); `None`: the whole
    /// file or device.
    pub size: Option<u64>,
    /// fio's `size=N%`: this percentage of each existing file's or device's
    /// whole size instead (`size` is then `None`); settled when the target
    /// is opened and its size known.
    pub size_pct: Option<f64>,
    pub offset: u64,
    /// Worker k of the job starts at `offset + k * offset_increment` (fio
    /// `offset_increment`: numjobs workers on stripes of one file or device).
    #[serde(default)]
    pub offset_increment: u64,
    /// Stop after this many bytes per worker (fio `io_size`); defaults to `size`
    /// unless the job is time based.
    pub io_size: Option<u64>,
    /// Passes over the whole region when nothing else bounds the job
    /// (`--precondition` writes its targets twice over).
    #[serde(default = "one_pass", skip_serializing_if = "is_one_pass")]
    pub passes: u32,
    /// A job that preconditions its target (`--precondition`): its figures
    /// are kept, but not judged (too few samples is expected).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub precondition: bool,
    /// A job that fills its target to this fraction (`run --fill`): it writes
    /// that share of the region once, and the store's allocation is checked after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<f64>,
    pub filenames: Vec<String>,
    /// Files per worker when none are named (fio `nrfiles`): `<name>.<worker>.<n>`.
    #[serde(default = "one")]
    pub nrfiles: u32,
    pub directory: Option<String>,
    pub ioengine: String,
    pub direct: bool,
    /// Drop the page cache of the job's files before it starts (fio
    /// `invalidate`, on by default as in fio): buffered reads then start cold.
    #[serde(default = "yes")]
    pub invalidate: bool,
    /// The access pattern told to the kernel for the job's files (fio
    /// `fadvise_hint`): random disables readahead, sequential widens it.
    #[serde(default)]
    pub fadvise: Fadvise,
    #[serde(with = "opt_duration_ns")]
    pub runtime: Option<Duration>,
    #[serde(with = "duration_ns")]
    pub ramp_time: Duration,
    pub time_based: bool,
    /// Wait this long after the group starts before the job begins (fio
    /// `startdelay`); its runtime counts from then.
    #[serde(default, with = "duration_ns")]
    pub start_delay: Duration,
    pub rate: Option<RateLimit>,
    /// A cap on each worker's bytes per second, operations counted by their
    /// own length, latency from the issue ([`crate::rate::ByteCap`]; rados
    /// load-gen's `--target-throughput`). Not a fio option: set by the
    /// front end that means it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_cap: Option<f64>,
    /// The least a worker must do each second (fio `rate_min` /
    /// `rate_iops_min`): below it the worker ends with an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_min: Option<RateLimit>,
    pub rate_process: Arrival,
    pub distribution: Distribution,
    pub sync: Option<SyncEvery>,
    /// Files opened for synchronous writes (fio `sync=1|sync|dsync`).
    #[serde(default)]
    pub open_sync: OpenSync,
    /// fsync every file when the worker's I/O ends, inside the measured
    /// time (fio `end_fsync`).
    #[serde(default)]
    pub end_fsync: bool,
    #[serde(with = "duration_ns")]
    pub thinktime: Duration,
    pub thinktime_blocks: u32,
    pub data: DataPattern,
    /// Write to an existing file or device storbench did not create.
    pub allow_overwrite: bool,
    /// A job that only writes lays its new files out with data first (fio
    /// `overwrite`); without it they are only allocated, as fio does.
    #[serde(default)]
    pub overwrite: bool,
    /// How the room of a new file a job does not lay out is made (fio
    /// `fallocate`, `native` by default).
    #[serde(default)]
    pub fallocate: Fallocate,
    /// Remove the files this job created when it ends (fio `unlink`).
    pub unlink: bool,
    /// A preset's training dataset or vector index is on the engine's own
    /// target already (an RBD image or NBD export an earlier run wrote):
    /// read as it is, not written first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dataset_exists: bool,
    /// Start a new group: wait for the jobs before this one to finish.
    pub stonewall: bool,
    /// When this job ends, end the other jobs of its group (fio `exitall`).
    #[serde(default)]
    pub exitall: bool,
    /// fio's outputs show the job's workers (numjobs clones) as one entry
    /// (fio `group_reporting`); without it each clone is an entry of its own.
    #[serde(default)]
    pub group_reporting: bool,
    /// Start a new reporting group without waiting (fio `new_group`): fio's
    /// outputs merge a `group_reporting` job only with the jobs of its own
    /// reporting group, which `stonewall` and this begin.
    #[serde(default)]
    pub new_group: bool,
    /// End the job once its figures are steady (fio `steadystate`, `ss_dur`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::steady::SteadyState>,
    /// Written blocks carry headers and are checked when read (fio `verify`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifySpec>,
    /// What the job's workers do: generated I/O (the default), a replayed
    /// trace, training, a CPU burner, a program, metadata calls (see
    /// [`JobKind`](crate::kind::JobKind)). Written out as each kind's own field.
    #[serde(flatten)]
    pub kind: crate::kind::JobKind,
    /// Write what each worker issues as a fio version 3 iolog (fio `write_iolog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iolog: Option<std::path::PathBuf>,
    /// Name files after this job instead of this one (`<stem>.<worker>.<n>`),
    /// so a later job reads what an earlier one wrote (a checkpoint's read-back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_stem: Option<String>,
    /// On a fleet, its workers are the ranks of one job divided over the
    /// agents (a checkpoint's: the rules fix the ranks in all, not per
    /// host), each at its rank's place: its stripe of a shared target
    /// (`offset_increment` by the rank), files and objects of its agent's own.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ranks_over_fleet: bool,
    /// Workers of the job on other agents after this share's (a job
    /// divided over a fleet): a target this share makes has room for
    /// their stripes too, as the first agent makes it for all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stripes_after: u32,
    pub seed: u64,
    /// Random offsets visit every block once before any repeats (fio's
    /// random map, on unless `norandommap`); uniform, fixed block size only.
    #[serde(default = "yes")]
    pub randommap: bool,
    /// fio's `random_sequence_stride`: a `sequence` distribution's rounds
    /// move on by its length (block group k reads k*len + each element).
    #[serde(default)]
    pub sequence_stride: bool,
    /// Each pass draws what the first drew (fio's `randrepeat`, on by
    /// default: its clear_io_state reseeds every generator at each loop).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub randrepeat: bool,
    /// Stop after this many operations per worker (fio `number_ios`).
    pub number_ios: Option<u64>,
    /// fio's averaged log files asked for (`write_bw_log` and friends).
    #[serde(default, skip_serializing_if = "FioLogs::is_empty")]
    pub logs: FioLogs,
    /// I/O errors counted without failing the job (fio's `continue_on_error`
    /// with `ignore_error`'s lists); None: every error fails it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerated_errors: Option<ToleratedErrors>,
    /// Present for object jobs (rados, s3, swift): the object model.
    pub objects: Option<crate::objects::ObjectSpec>,
    /// fio's `latency_target` question asked of this job: the deepest queue
    /// whose percentile stays under the target (answered by `storbench slo
    /// --closed-loop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTarget>,
    /// fio's `max_latency`, reads' and writes' (ns, 0: none): a read or
    /// write slower than this from its issue, once the ramp is over, fails
    /// the job (fio's ETIMEDOUT, "max latency exceeded").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<[u64; 2]>,
    /// fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// The pattern's writes are trims (fio `rw=trim`, `rw=randtrim`).
    #[serde(default)]
    pub trims: bool,
    /// Where the workers run and allocate (fio `cpus_allowed`, `numa_mem_policy`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::Placement>,
    /// fio's `wait_for`: the job starts when the job of this name (an
    /// earlier one of the file, in its group) has finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// fio's I/O priorities (`prio`, `prioclass`, the `cmdprio` options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio: Option<crate::prio::Priorities>,
    /// Core options a front end set, to check the ones that must agree.
    #[serde(skip)]
    pub given: Given,
    /// Options the core does not know, left for the engine to validate.
    /// Secrets among them are written out as "<redacted>".
    #[serde(serialize_with = "redacted")]
    pub engine_options: BTreeMap<String, String>,
}

/// fio's flow control: this job's weight in flow `id`, and how long a held
/// worker sleeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub weight: u32,
    pub id: u32,
    #[serde(with = "duration_ns")]
    pub sleep: Duration,
}

/// fio's `latency_target`, `latency_window`, `latency_percentile` and
/// `latency_run`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    pub target_ns: u64,
    /// How long each depth is judged (fio's window; None: fio's 0 in a
    /// job, slo's own default for its probes).
    pub window_ns: Option<u64>,
    pub percentile: f64,
    /// fio's `latency_run`: the job keeps adjusting its depth to the end
    /// instead of settling, starting its figures over and ending there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_adjusting: bool,
}

/// The seed every run starts from unless told otherwise (fio's `randrepeat=1`):
/// the same job repeats the same offsets.
pub const DEFAULT_SEED: u64 = 0x5eed_5707_be9c;

/// A job name is at most this many bytes: it names the job's files,
/// objects, results rows and charts (a file name is at most 255 bytes, a
/// path 4096), and a name of 65,536 characters once overflowed a report's
/// column formatting after the run.
pub const MAX_NAME: usize = 4096;

/// `name` as a job's name, or why not (its length, not its text).
pub fn check_name(name: &str) -> Result<(), String> {
    match name.len() {
        0 => Err("needs a value".into()),
        n if n > MAX_NAME => Err(format!("a name of {n} bytes is too long: at most {MAX_NAME}")),
        _ => Ok(()),
    }
}

/// A name or value as an error message shows it: whole up to 80
/// characters, else its start and its length (one readable line).
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    const SHOWN: usize = 80;
    match text.char_indices().nth(SHOWN) {
        None => text.into(),
        Some(_) => {
            let cut = text.char_indices().nth(SHOWN - 20).map_or(text.len(), |(i, _)| i);
            format!("{}... ({} bytes)", &text[..cut], text.len()).into()
        }
    }
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "job".into(),
            rw: RwMode::Read,
            seq_skip: 0,
            rand_run: 1,
            blockalign: None,
            zones: None,
            rwmixread: 50.0,
            bs: BlockSizes { read: SizeSplit::fixed(4096), write: SizeSplit::fixed(4096) },
            iodepth: 1,
            iodepth_batch_complete_min: None,
            iodepth_batch_complete_max: None,
            iodepth_low: None,
            numjobs: 1,
            volumes: 1,
            size: None,
            size_pct: None,
            offset: 0,
            offset_increment: 0,
            io_size: None,
            passes: 1,
            precondition: false,
            filenames: Vec::new(),
            nrfiles: 1,
            directory: None,
            ioengine: "psync".into(),
            direct: false,
            invalidate: true,
            fadvise: Fadvise::Pattern,
            runtime: None,
            ramp_time: Duration::ZERO,
            time_based: false,
            start_delay: Duration::ZERO,
            rate: None,
            byte_cap: None,
            rate_min: None,
            rate_process: Arrival::Linear,
            distribution: Distribution::Uniform,
            sync: None,
            open_sync: OpenSync::None,
            end_fsync: false,
            thinktime: Duration::ZERO,
            thinktime_blocks: 1,
            data: DataPattern::default(),
            allow_overwrite: false,
            overwrite: false,
            unlink: false,
            dataset_exists: false,
            stonewall: false,
            exitall: false,
            group_reporting: false,
            new_group: false,
            steady: None,
            verify: None,
            kind: crate::kind::JobKind::Io,
            write_iolog: None,
            file_stem: None,
            ranks_over_fleet: false,
            stripes_after: 0,
            fill: None,
            seed: DEFAULT_SEED,
            randommap: true,
            sequence_stride: false,
            randrepeat: true,
            number_ios: None,
            logs: FioLogs::default(),
            tolerated_errors: None,
            objects: None,
            placement: None,
            wait_for: None,
            prio: None,
            trims: false,
            fallocate: Fallocate::default(),
            flow: None,
            latency_target: None,
            max_latency_ns: None,
            given: Given::default(),
            engine_options: BTreeMap::new(),
        }
    }
}

impl JobSpec {
    /// How the files this job creates are made: `None`, laid out with data
    /// ([`JobSpec::lays_out`]); else only the room `fallocate` makes.
    pub fn room_only(&self) -> Option<Fallocate> {
        (!self.lays_out()).then_some(self.fallocate)
    }

    /// New files are written whole before the job runs (fio's layout,
    /// filesetup.c `extend_file`: for jobs that read, or with `overwrite`);
    /// a job that only writes has them allocated (fallocate) and writes
    /// them itself. A fill lays out as before: it measures what writing
    /// allocates.
    pub fn lays_out(&self) -> bool {
        // fio's overwrite is about writes: a trim-only job is never laid out.
        !self.writes() || self.read_percent() > 0.0 || (self.overwrite && !self.trims) || self.fill.is_some()
    }

    pub fn read_percent(&self) -> f64 {
        self.rw.read_percent(self.rwmixread)
    }
    pub fn writes(&self) -> bool {
        match &self.objects {
            Some(o) => {
                o.prefill
                    || o.cleans_up()
                    || o.effective_mix(self.read_percent()).iter().any(|m| !matches!(m.0, OpKind::Read | OpKind::Stat | OpKind::List))
            }
            // Deleting a file destroys it as surely as overwriting it: the same checks.
            None => self.rw.writes(self.rwmixread) || self.kind.meta() == Some(OpKind::Delete) || self.writes_dataset(),
        }
    }
    /// A training job (or a vector index's) on an engine's own target (an
    /// RBD image, an NBD export: no files) writes its dataset before it
    /// reads, every run (an image storbench made is gone after its run)
    /// unless an earlier one wrote it (`TrainSpec::dataset_written`,
    /// `VdbSpec::index_written`, or the user's `dataset_exists`). Files are
    /// laid out before the run, as for any job that reads them.
    pub fn writes_dataset(&self) -> bool {
        let unwritten = match &self.kind {
            crate::JobKind::Train(t) => !t.dataset_written,
            crate::JobKind::VectorDb(v) => !v.index_written,
            _ => false,
        };
        self.objects.is_none() && self.filenames.is_empty() && unwritten && !self.dataset_exists
    }
    /// How a worker with a full queue collects completions, as fio's
    /// do_io does (init.c fixes the defaults): `iodepth_batch_complete_min`
    /// (1), `_max` (the min when unset or below it), `iodepth_low` (iodepth
    /// when unset, 0 or above it).
    pub fn reaping(&self, queue_depth: u32) -> Reaping {
        let min = self.iodepth_batch_complete_min.unwrap_or(1);
        let max = self.iodepth_batch_complete_max.unwrap_or(0).max(min);
        let polls = max == 0;
        Reaping {
            min,
            max,
            // Polling drains to nothing after each I/O.
            low: if polls { 0 } else { self.iodepth_low.filter(|&l| l > 0 && l <= queue_depth).unwrap_or(queue_depth) },
            polls,
        }
    }
    /// Workers in all: `numjobs` for each volume.
    pub fn workers(&self) -> u32 {
        self.numjobs.saturating_mul(self.volumes.max(1))
    }
    /// The volume worker `w` drives (workers take the volumes in turn, so on
    /// a fleet, where each agent's workers are numbered on from the last
    /// agent's, every agent drives every volume).
    pub fn volume_of(&self, worker: u32) -> u32 {
        worker % self.volumes.max(1)
    }
    /// Worker `w`'s place among its volume's `numjobs` workers: what shares
    /// a volume out (offset_increment stripes, object keys) as in a job of one.
    pub fn place_in_volume(&self, worker: u32) -> u32 {
        worker / self.volumes.max(1)
    }
    /// Bytes a worker's buffer slot needs: metadata operations move no data.
    pub fn buffer_len(&self) -> u64 {
        match self.kind.meta() {
            Some(_) => 4096,
            None => self.max_transfer().max(self.dataset_write_len()),
        }
    }
    /// Bytes a write of a vector index takes where the job writes it
    /// first (an image, an export): its reads are a node's few KiB, and
    /// the index, tens of GiB, goes out in larger writes, up to 1 MiB
    /// while the worker's slots stay within 64 MiB in all.
    pub fn dataset_write_len(&self) -> u64 {
        let bs = self.bs.max();
        if self.kind.vectordb().is_none() || !self.writes_dataset() {
            return bs;
        }
        ((64 << 20) / u64::from(self.iodepth.max(1))).clamp(bs, 1 << 20) / 4096 * 4096
    }
    /// Largest transfer of one operation (the size of a buffer slot).
    pub fn max_transfer(&self) -> u64 {
        match &self.objects {
            Some(o) => o.max_transfer(self.read_percent()),
            None => self.bs.max(),
        }
    }
    /// A job without storage (a CPU burner, a program): it does no I/O by design.
    pub fn does_no_io(&self) -> bool {
        self.kind.does_no_io()
    }

    /// One line a person reads: "randrw 70/30 8KiB qd16 x1".
    pub fn describe(&self) -> String {
        if let Some(b) = self.kind.cpu_burn() {
            return format!("{} x{}", b.describe(), self.numjobs);
        }
        if let Some(e) = self.kind.program() {
            return format!("program {} x{}", e.program, self.numjobs);
        }
        let mix = if self.rw.is_mixed() { format!(" {}/{}", self.rwmixread, 100.0 - self.rwmixread) } else { String::new() };
        if let Some(o) = &self.objects {
            let order = if self.rw.is_random() { "" } else { " in order" };
            return format!(
                "objects {} x {} {}{order} qd{} x{}{} {}",
                o.count,
                o.sizes.describe(),
                o.describe_mix(self.read_percent()),
                self.iodepth,
                self.numjobs,
                self.describe_volumes(),
                self.ioengine
            );
        }
        match self.kind.meta() {
            Some(op @ (OpKind::Create | OpKind::Stat | OpKind::Delete)) => {
                let size = self.size.map(crate::units::format_size).unwrap_or_default();
                return format!("{} {} files of {size} x{} {}", op.name(), self.nrfiles, self.numjobs, self.ioengine);
            }
            Some(_) => return format!("{} as truncates x{} {}", self.rw.name(), self.numjobs, self.ioengine),
            None => {}
        }
        let rw = match (self.trims, self.rw.is_random()) {
            (true, true) => "randtrim",
            (true, false) => "trim",
            (false, _) => self.rw.name(),
        };
        format!("{}{} {} qd{} x{}{} {}", rw, mix, self.bs.describe(), self.iodepth, self.numjobs, self.describe_volumes(), self.ioengine)
    }
    /// " x4 volumes" when there are several.
    fn describe_volumes(&self) -> String {
        if self.volumes > 1 {
            format!(" x{} volumes", self.volumes)
        } else {
            String::new()
        }
    }
}

/// Names of the core options set on a spec. Not part of what a job is: any
/// two are equal, and it is not serialized.
#[derive(Clone, Debug, Default)]
pub struct Given(pub Vec<&'static str>);

impl Given {
    pub fn has(&self, name: &str) -> bool {
        self.0.contains(&name)
    }
}

impl PartialEq for Given {
    fn eq(&self, _: &Given) -> bool {
        true
    }
}

/// Engine options whose values are secrets: never written to results or logs.
pub const SECRET_OPTIONS: &[&str] = &["secret_key", "session_token", "key", "password", "keyring_key", "token"];

fn redacted<S: serde::Serializer>(opts: &BTreeMap<String, String>, s: S) -> Result<S::Ok, S::Error> {
    let shown: BTreeMap<&str, &str> =
        opts.iter().map(|(k, v)| (k.as_str(), if SECRET_OPTIONS.contains(&k.as_str()) { "<redacted>" } else { v.as_str() })).collect();
    shown.serialize(s)
}

/// Durations serialize as whole nanoseconds (`runtime_ns`-style), not as structs.
pub(crate) mod duration_ns {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_nanos() as u64)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_nanos(u64::deserialize(d)?))
    }
}

mod opt_duration_ns {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_nanos() as u64)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_nanos))
    }
}

fn one_pass() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_one_pass(n: &u32) -> bool {
    *n == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_engine_options_are_never_serialized() {
        let mut s = JobSpec::default();
        s.engine_options.insert("secret_key".into(), "s3cr3t-value".into());
        s.engine_options.insert("key".into(), "swift-pass".into());
        s.engine_options.insert("bucket".into(), "b1".into());
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains("s3cr3t-value") && !json.contains("swift-pass"), "{json}");
        assert!(json.contains("\"bucket\":\"b1\"") && json.contains("<redacted>"));
    }
}
