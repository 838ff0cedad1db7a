//! What a job works on, once prepared: files and block devices the runner
//! opens, or a target an engine brings itself (an RBD image, a pool, a bucket).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    File,
    BlockDevice,
    /// A memory character device (/dev/null, /dev/zero...): as big as the job says.
    CharDevice,
}

/// A file or block device, checked, created or laid out, ready to open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetFile {
    pub path: PathBuf,
    pub kind: FileKind,
    /// Usable size in bytes.
    pub size: u64,
    /// Created by this run (and so removed by it when asked to clean up).
    pub created: bool,
    /// What checking it found worth saying (a device's blank check: how
    /// much of it was read), for the run's notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Bytes of it never written when the job began (holes, preallocated
    /// extents): reads there never reach the medium. `None`: the file
    /// system cannot tell (and a device is not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never_written: Option<u64>,
    /// The whole file or device, when the job uses less of it (`size`):
    /// fio's offset modifiers wrap at the file's end, not the job's size.
    /// 0 (an older agent's): the same as `size`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub whole: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TargetFile {
    /// The whole file or device in bytes (see `whole`).
    pub fn whole_size(&self) -> u64 {
        self.whole.max(self.size)
    }
}

/// An engine's own target, ready: its usable size and how to name it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreTarget {
    /// Usable bytes (the smallest volume's, when there are several); 0 for
    /// object stores.
    pub size: u64,
    /// Volumes the job spreads over (an I/O's `file` is below this).
    pub units: u32,
    pub label: String,
    /// What the engine found that the first operations may wait for (an
    /// exclusive lock another client holds), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<String>,
    /// How the engine drives this target, where that can differ from one
    /// build or machine to another (rados: whether writes are copied), for
    /// the run's notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What preparing it created (buckets, containers, images), in the
    /// engine's words, for the run's journal: `storbench cleanup
    /// RESULTS_DIR` removes these, and nothing that was there before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Volumes whose writers take turns holding a lock (RBD images with the
    /// exclusive-lock feature), named: workers sharing one hand it back and
    /// forth on every write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusive_lock: Vec<String>,
    /// Bytes of its volumes never written when the run began, for a job
    /// that reads what no job of the run writes first (RBD: unallocated
    /// extents, asked only where the image's fast-diff makes it cheap).
    /// `None`: not asked, or it cannot tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never_written: Option<u64>,
}

impl StoreTarget {
    /// A target with nothing more to say than its size, volumes and name;
    /// engines add what they found with struct update syntax.
    pub fn new(size: u64, units: u32, label: String) -> StoreTarget {
        StoreTarget { size, units, label, held_by: None, note: None, created: Vec::new(), exclusive_lock: Vec::new(), never_written: None }
    }
}

/// Everything one job works on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Targets {
    /// The files each worker opens, per worker.
    Files(Vec<Vec<TargetFile>>),
    /// The engine's own target, shared by every worker.
    Store(StoreTarget),
    /// Nothing (the null engine).
    None,
}

impl Targets {
    /// What the engine said about how it drives its own target, or what
    /// checking the files found worth saying.
    pub fn notes(&self) -> Vec<&str> {
        match self {
            Targets::Store(StoreTarget { note, .. }) => note.as_deref().into_iter().collect(),
            Targets::Files(per_worker) => per_worker.iter().flatten().filter_map(|t| t.note.as_deref()).collect(),
            Targets::None => Vec::new(),
        }
    }

    /// The files worker `w` opens (none for a store).
    pub fn files_of(&self, w: u32) -> &[TargetFile] {
        match self {
            Targets::Files(per_worker) => per_worker.get(w as usize).map_or(&[], Vec::as_slice),
            Targets::Store(_) | Targets::None => &[],
        }
    }

    /// How the results name the targets: each path once, or the store's label.
    pub fn labels(&self) -> Vec<String> {
        match self {
            Targets::Store(s) => vec![s.label.clone()],
            Targets::None => Vec::new(),
            Targets::Files(per_worker) => {
                let mut t: Vec<String> = per_worker.iter().flatten().map(|p| p.path.display().to_string()).collect();
                t.dedup();
                t
            }
        }
    }
}
