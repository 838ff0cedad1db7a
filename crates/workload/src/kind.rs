//! What a job's workers do, as one value: generated I/O, fio's metadata
//! calls, a replayed trace, a training run, a CPU burner or a program.
//! A job is exactly one of them, so [`JobSpec`](crate::JobSpec) carries
//! one [`JobKind`] with the kind's own spec instead of an optional field
//! per kind (where two could be set and which one ran was decided by the
//! order of `if let`s in the generator).
//!
//! Where the operations go is apart: `JobSpec::objects` describes an
//! object namespace, and generated I/O, a replay and a training run each
//! go to blocks or to objects. The generator of each kind is in
//! [`kinds`](crate::kinds).
//!
//! Serialized, a kind is the optional field it always was (`replay`,
//! `train`, `kvcache`, `vectordb`, `cpu_burn`, `exec`, `meta`; none for
//! generated I/O), so result
//! files written before it read the same, and agents exchange the same
//! JSON.

use crate::burn::CpuBurn;
use crate::exec::ExecSpec;
use crate::kvcache::KvSpec;
use crate::trace::ReplaySpec;
use crate::train::TrainSpec;
use crate::vectordb::VdbSpec;
use crate::OpKind;
use serde::{Deserialize, Serialize};

/// What a job's workers do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "KindFields", into = "KindFields")]
pub enum JobKind {
    /// Operations drawn from the job's pattern, sizes and mix.
    #[default]
    Io,
    /// Every operation of the pattern is this file-system call (fio's
    /// filecreate, filestat, filedelete and ftruncate engines): set when the
    /// job is planned, from its engine.
    Meta(OpKind),
    /// A recorded trace issued instead of generated operations (fio `read_iolog`).
    Replay(ReplaySpec),
    /// AI training emulated: accelerators reading samples in batches (`--preset train:MODEL`).
    Train(TrainSpec),
    /// LLM inference's KV-cache tier emulated: users' requests writing and
    /// reading their conversations' cache (`--preset kvcache:MODEL`).
    KvCache(KvSpec),
    /// A vector database's disk index under queries emulated: query
    /// processes' searches reading its nodes (`--preset vectordb:CONFIG`).
    VectorDb(VdbSpec),
    /// A CPU burner (fio's cpuio engine: `cpuload` and its options): no I/O,
    /// its workers keep a share of a CPU busy.
    Burn(CpuBurn),
    /// A program run for the job's time (fio's exec engine: `program` and
    /// its options): no I/O.
    Program(ExecSpec),
}

/// Each kind in a sentence ("this job is {}").
const IO: &str = "generated I/O";
const META: &str = "metadata calls (its engine's)";
const REPLAY: &str = "a replayed trace (read_iolog)";
const TRAIN: &str = "a training run (a train preset)";
const KVCACHE: &str = "a KV-cache tier (a kvcache preset)";
const VECTORDB: &str = "a vector index under queries (a vectordb preset)";
const BURN: &str = "a CPU burner (cpuload and the cpuio options)";
const PROGRAM: &str = "a program (program and the exec options)";

impl JobKind {
    /// What the kind is, in a sentence ("this job is {}").
    pub fn describe(&self) -> &'static str {
        match self {
            JobKind::Io => IO,
            JobKind::Meta(_) => META,
            JobKind::Replay(_) => REPLAY,
            JobKind::Train(_) => TRAIN,
            JobKind::KvCache(_) => KVCACHE,
            JobKind::VectorDb(_) => VECTORDB,
            JobKind::Burn(_) => BURN,
            JobKind::Program(_) => PROGRAM,
        }
    }

    pub fn replay(&self) -> Option<&ReplaySpec> {
        match self {
            JobKind::Replay(r) => Some(r),
            _ => None,
        }
    }

    pub fn train(&self) -> Option<&TrainSpec> {
        match self {
            JobKind::Train(t) => Some(t),
            _ => None,
        }
    }

    pub fn train_mut(&mut self) -> Option<&mut TrainSpec> {
        match self {
            JobKind::Train(t) => Some(t),
            _ => None,
        }
    }

    pub fn kvcache(&self) -> Option<&KvSpec> {
        match self {
            JobKind::KvCache(k) => Some(k),
            _ => None,
        }
    }

    pub fn vectordb(&self) -> Option<&VdbSpec> {
        match self {
            JobKind::VectorDb(v) => Some(v),
            _ => None,
        }
    }

    pub fn vectordb_mut(&mut self) -> Option<&mut VdbSpec> {
        match self {
            JobKind::VectorDb(v) => Some(v),
            _ => None,
        }
    }

    /// Make the job a vector index under queries (a preset's, replacing an earlier one).
    pub fn set_vectordb(&mut self, v: VdbSpec) -> Result<(), String> {
        *self = JobKind::VectorDb(v).over(self)?;
        Ok(())
    }

    /// Make the job a KV-cache tier (a preset's, replacing an earlier one).
    pub fn set_kvcache(&mut self, k: KvSpec) -> Result<(), String> {
        *self = JobKind::KvCache(k).over(self)?;
        Ok(())
    }

    pub fn cpu_burn(&self) -> Option<&CpuBurn> {
        match self {
            JobKind::Burn(b) => Some(b),
            _ => None,
        }
    }

    pub fn program(&self) -> Option<&ExecSpec> {
        match self {
            JobKind::Program(e) => Some(e),
            _ => None,
        }
    }

    pub fn meta(&self) -> Option<OpKind> {
        match self {
            JobKind::Meta(op) => Some(*op),
            _ => None,
        }
    }

    /// A job without storage (a CPU burner, a program): it does no I/O by design.
    pub fn does_no_io(&self) -> bool {
        matches!(self, JobKind::Burn(_) | JobKind::Program(_))
    }

    /// The trace's options, the job made a replay if it generated I/O
    /// (replay options given before read_iolog keep a placeholder path
    /// until it comes). None on a job that does no I/O: fio's cpuio and
    /// exec jobs ignore the I/O options a [global] section gives them, and
    /// so does storbench (the plan names them in a warning).
    pub fn replay_mut(&mut self) -> Result<Option<&mut ReplaySpec>, String> {
        if self.does_no_io() {
            return Ok(None);
        }
        if !matches!(self, JobKind::Replay(_)) {
            *self = JobKind::Replay(ReplaySpec::new(std::path::PathBuf::new())).over(self)?;
        }
        match self {
            JobKind::Replay(r) => Ok(Some(r)),
            _ => unreachable!("just made a replay"),
        }
    }

    /// The burner's options, the job made a burner if it generated I/O.
    pub fn burn_mut(&mut self) -> Result<&mut CpuBurn, String> {
        if !matches!(self, JobKind::Burn(_)) {
            *self = JobKind::Burn(CpuBurn::default()).over(self)?;
        }
        match self {
            JobKind::Burn(b) => Ok(b),
            _ => unreachable!("just made a burner"),
        }
    }

    /// The program's options, the job made a program if it generated I/O.
    pub fn program_mut(&mut self) -> Result<&mut ExecSpec, String> {
        if !matches!(self, JobKind::Program(_)) {
            *self = JobKind::Program(ExecSpec::default()).over(self)?;
        }
        match self {
            JobKind::Program(e) => Ok(e),
            _ => unreachable!("just made a program"),
        }
    }

    /// Make the job a training run (a preset's, replacing an earlier one).
    pub fn set_train(&mut self, t: TrainSpec) -> Result<(), String> {
        *self = JobKind::Train(t).over(self)?;
        Ok(())
    }

    /// Make every operation the metadata call `op` (its engine's).
    pub fn set_meta(&mut self, op: OpKind) -> Result<(), String> {
        *self = JobKind::Meta(op).over(self)?;
        Ok(())
    }

    /// This kind in place of `old`: generated I/O, or the same kind (its
    /// spec replaced), becomes it, and so does a replay's options given
    /// to a job that turns out to do no I/O (see [`JobKind::replay_mut`]);
    /// another kind is refused.
    fn over(self, old: &JobKind) -> Result<JobKind, String> {
        let ignored = matches!(old, JobKind::Replay(_)) && self.does_no_io();
        if ignored || matches!(old, JobKind::Io) || std::mem::discriminant(old) == std::mem::discriminant(&self) {
            return Ok(self);
        }
        Err(format!("this job is {}, and this makes it {}: a job is one kind; give each its own job", old.describe(), self.describe()))
    }
}

/// A kind as it is written out: the optional field of each.
#[derive(Default, Serialize, Deserialize)]
struct KindFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replay: Option<ReplaySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    train: Option<TrainSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kvcache: Option<KvSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vectordb: Option<VdbSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpu_burn: Option<CpuBurn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exec: Option<ExecSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    meta: Option<OpKind>,
}

impl From<KindFields> for JobKind {
    /// Files written when a spec could hold several fields: the one that
    /// ran (a program's or burner's phase before any I/O; of the I/O
    /// kinds, training was asked first, then replay).
    fn from(f: KindFields) -> JobKind {
        let KindFields { replay, train, kvcache, vectordb, cpu_burn, exec, meta } = f;
        exec.map(JobKind::Program)
            .or(cpu_burn.map(JobKind::Burn))
            .or(train.map(JobKind::Train))
            .or(kvcache.map(JobKind::KvCache))
            .or(vectordb.map(JobKind::VectorDb))
            .or(replay.map(JobKind::Replay))
            .or(meta.map(JobKind::Meta))
            .unwrap_or_default()
    }
}

impl From<JobKind> for KindFields {
    fn from(k: JobKind) -> KindFields {
        match k {
            JobKind::Io => KindFields::default(),
            JobKind::Meta(op) => KindFields { meta: Some(op), ..KindFields::default() },
            JobKind::Replay(r) => KindFields { replay: Some(r), ..KindFields::default() },
            JobKind::Train(t) => KindFields { train: Some(t), ..KindFields::default() },
            JobKind::KvCache(k) => KindFields { kvcache: Some(k), ..KindFields::default() },
            JobKind::VectorDb(v) => KindFields { vectordb: Some(v), ..KindFields::default() },
            JobKind::Burn(b) => KindFields { cpu_burn: Some(b), ..KindFields::default() },
            JobKind::Program(e) => KindFields { exec: Some(e), ..KindFields::default() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_written_as_its_field_and_read_back() {
        let mut spec = crate::JobSpec { name: "j".into(), ..crate::JobSpec::default() };
        spec.kind.burn_mut().unwrap().load = 40;
        let text = serde_json::to_string(&spec).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["cpu_burn"]["load"], 40, "{text}");
        for absent in ["kind", "replay", "train", "exec", "meta"] {
            assert!(doc.get(absent).is_none(), "{absent} in {text}");
        }
        let back: crate::JobSpec = serde_json::from_str(&text).unwrap();
        assert_eq!(back.kind.cpu_burn().map(|b| b.load), Some(40));
        let io: crate::JobSpec = serde_json::from_str(&serde_json::to_string(&crate::JobSpec::default()).unwrap()).unwrap();
        assert_eq!(io.kind, JobKind::Io);
    }

    #[test]
    fn one_kind_cannot_become_another() {
        let mut k = JobKind::Io;
        k.replay_mut().unwrap().unwrap().speed = 2.0;
        assert_eq!(k.replay_mut().unwrap().unwrap().speed, 2.0, "a second replay option keeps the first");
        let e = k.set_meta(OpKind::Stat).unwrap_err();
        assert!(e.contains("a replayed trace") && e.contains("metadata calls"), "{e}");
        // A burner's options win over a [global] replay's, which it ignores, in either order.
        k.burn_mut().unwrap().load = 30;
        assert!(k.replay_mut().unwrap().is_none());
        assert_eq!(k.cpu_burn().map(|b| b.load), Some(30));
        let e = k.program_mut().unwrap_err();
        assert!(e.contains("a CPU burner") && e.contains("a program"), "{e}");
        let mut m = JobKind::Io;
        m.set_meta(OpKind::Stat).unwrap();
        assert_eq!(m.meta(), Some(OpKind::Stat));
        assert!(m.program_mut().is_err());
    }
}
