//! The run protocol: what a coordinator and its agents say to each other.
//!
//! It goes both ways and is versioned. Each side opens with a [`Hello`]
//! carrying [`PROTOCOL_VERSION`] and checks the other's: a mismatch is a clear
//! error on both sides, never a garbled run. Then, per group of jobs run
//! together:
//!
//! ```text
//! coordinator                         agent
//!   Assign(jobs, workers)  ------>      sets up every worker (files, engine, prefill)
//!                          <------    Ready (per worker) or Done with its error
//!   Start { at }           ------>      workers start together at `at`
//!                          <------    Interval (once a second per worker: histograms)
//!   Stop | Abort           ------>      (Ctrl-C, or the coordinator giving up)
//!                          <------    Done (per worker: CPU, end, failure)
//! ```
//!
//! `Stop` ends the measured phase and still lets workers remove what the run
//! wrote; `Abort` also cuts short set-up and clean-up work (prefill,
//! removing objects). Both apply to the current run only.
//!
//! Every message is plain serde data; the in-process agent passes them over
//! channels, a remote agent will add only serialization and a transport.
//! [`PROTOCOL_VERSION`] covers every message type here and the types they
//! carry ([`IntervalReport`], [`JobShare`]): change any, bump it.

use crate::target::Targets;
use crate::Fault;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use storbench_metrics::{CpuTimes, IntervalReport, OpStats, VerifyTally};
use storbench_workload::gen::Region;
use storbench_workload::JobSpec;

/// Version of every message in this module. 1: the first two-way protocol
/// (before it, interval reports went one way with a version never checked).
/// 2: remote agents (Ping, Prepare, Finish and their answers). 3: empty
/// histograms left out of interval reports. 4: StopJob. 5: verify tallies in
/// WorkerDone. 6: operations cut off at the end (`WorkerDone::cut_off`).
/// 7: jobs of volumes, priorities, waits and CPU burners (`JobSpec` fields an
/// older agent would drop without a word), per-priority interval figures,
/// each worker's start. 8: fio's completion batching (`JobSpec`'s
/// `iodepth_batch_complete_min`/`_max` and `iodepth_low`). 9: host
/// telemetry (`Start::telemetry`, `FromAgent::Host`), a worker's kind
/// tally in one section (`WorkerDone::kind`, was `replay` and `train`), and
/// what came between 8 and it: the depths each interval measured
/// (`IntervalReport::depths`), fio's reporting groups (`JobSpec::new_group`),
/// Parquet-like training reads (`TrainSpec::parquet`), fio's loops as
/// passes (`JobSpec::passes`) with the time read back between them
/// (`WorkerDone::between_passes_ns`) and drawing what the first drew
/// (`JobSpec::randrepeat`), the set-up stage of a failure (`Stage::SetUp`)
/// and watched hosts (`Hello::monitor`: an agent that only samples its
/// host from each `Start`), each a field or variant an agent of 8 would
/// drop or refuse: one version, as no release shipped between them.
/// (`WorkerDone::failure` came without a bump: optional both ways, its
/// absence loses nothing an older side knew; `Stage::SetUp` travels in it.)
/// 10: libaio's submission timed apart (`OpStats::submit`, and `service`
/// from the submission), fio's `max_latency` (`JobSpec::max_latency_ns`) and
/// the latency target's seconds held back (`WorkerDone::measured_from_ns`,
/// `latency_depth`): an agent of 9 would drop the bound, or give a clat
/// that means something else, without a word.
/// 11: `random_distribution=sequence` (`Distribution::Sequence`,
/// `JobSpec::sequence_stride`) and io_uring's `submit_each` (the fio
/// reader sets it): an agent of 10 would fail on the one or refuse the
/// other as an unknown option, and drop the stride without a word.
/// 12: process faults on watched hosts (`ToAgent::Signal`,
/// `FromAgent::Signalled`, `Hello::signals`) and the KV-cache kind
/// (`JobSpec`'s `kvcache`, `KindTally::KvCache`): an agent of 11 would fail
/// on the message, and run a KV-cache job as generated I/O.
/// 13: ranks over a fleet (`JobShare::rank_base`, `ranks`) and a KV tier's
/// pending requests' waits (`KvTally::waiting_ns`): an agent of 12 would
/// read the same training shards as every other agent, and send no waits.
/// 14: an agent's memory in its Hello (`Hello::memory_bytes`), which
/// `--rules mlperf` sizes a fleet's dataset by: an agent of 13 would leave
/// the sum short without a word.
/// 15: the vector index kind (`JobSpec`'s `vectordb`, `KindTally::VectorDb`):
/// an agent of 14 would run it as generated I/O.
pub const PROTOCOL_VERSION: u32 = 15;

/// The first message each side sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// The storbench version of the sender, for the error message.
    pub storbench: String,
    /// Who is speaking: "coordinator", or the agent's name.
    pub name: String,
    /// The agent only watches its host (`storbench agent --monitor`): it
    /// takes no jobs, only `Start`s to sample from (protocol 9).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub monitor: bool,
    /// The command names a monitor lets a run stop and continue
    /// (`--allow-signal`; protocol 12), so a fault it would refuse is
    /// refused before the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<String>,
    /// The agent's host memory (MemTotal, bytes; protocol 14): what MLPerf's
    /// rules size a dataset by. None from a coordinator, or where
    /// /proc/meminfo cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

/// The two sides speak different protocol versions.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{peer} speaks run protocol version {theirs} (storbench {their_version}), this side version {ours} \
     (storbench {our_version}): run the same storbench version on the coordinator and every agent"
)]
pub struct VersionMismatch {
    pub peer: String,
    pub theirs: u32,
    pub their_version: String,
    pub ours: u32,
    pub our_version: String,
}

impl Hello {
    /// This side's greeting.
    pub fn ours(name: impl Into<String>) -> Hello {
        Hello {
            protocol: PROTOCOL_VERSION,
            storbench: env!("CARGO_PKG_VERSION").into(),
            name: name.into(),
            monitor: false,
            signals: Vec::new(),
            memory_bytes: None,
        }
    }

    /// Accept the other side's greeting, or say why not.
    pub fn check(&self) -> Result<(), VersionMismatch> {
        if self.protocol == PROTOCOL_VERSION {
            return Ok(());
        }
        Err(VersionMismatch {
            peer: self.name.clone(),
            theirs: self.protocol,
            their_version: self.storbench.clone(),
            ours: PROTOCOL_VERSION,
            our_version: env!("CARGO_PKG_VERSION").into(),
        })
    }
}

/// One job, resolved and prepared: everything a worker needs, as plain data.
/// How an agent gets a live engine for it (the coordinator's own, or one
/// configured from `spec`) is the agent's business.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobShare {
    pub job: u32,
    pub spec: JobSpec,
    /// Workers of the job in all (an agent may run only some of them).
    pub workers: u32,
    /// Its workers as ranks of a job spread over a fleet: the first one's
    /// rank, and the ranks in all (0: this share's workers are all). A
    /// kind whose workers divide one thing between them (a training
    /// dataset's samples) divides it over every rank, so agents do not
    /// each take the same part.
    #[serde(default)]
    pub rank_base: u32,
    #[serde(default)]
    pub ranks: u32,
    /// Operations in flight per worker (the job's iodepth, or 1 for
    /// synchronous engines).
    pub queue_depth: u32,
    /// Where block I/O goes: files per worker and the byte range in each.
    pub region: Region,
    /// Byte budget per worker; `None` when the job is bounded otherwise.
    pub io_limit: Option<u64>,
    pub ramp_ns: u64,
    /// End of the run (ramp included), if time bound.
    pub end_ns: Option<u64>,
    /// Fixed-rate arrivals per second, per worker.
    pub ops_per_sec: Option<f64>,
    /// Object jobs: the prefix of every object name.
    pub object_prefix: Option<String>,
    pub targets: Targets,
}

/// A job issues on a schedule: a fixed rate, or a trace's recorded times
/// (see [`JobShare::paced`]; the plan asks it before there is a share).
pub fn paced(ops_per_sec: Option<f64>, spec: &JobSpec) -> bool {
    ops_per_sec.is_some() || spec.kind.replay().is_some_and(|r| !r.no_stall)
}

impl JobShare {
    /// Worker `worker`'s rank and the ranks in all (see `rank_base`).
    pub fn rank(&self, worker: u32) -> (u32, u32) {
        (self.rank_base + worker, self.ranks.max(self.rank_base + self.workers))
    }

    /// Operations are issued on a schedule (a fixed rate, or a trace's
    /// recorded times): latency counts from the scheduled start, and the
    /// service time (issue to completion) is kept apart.
    pub fn paced(&self) -> bool {
        paced(self.ops_per_sec, &self.spec)
    }

    /// The I/O priorities the job's results are kept apart for (fio's
    /// cmdprio options: the job's own first), as the kernel's values.
    pub fn prio_values(&self) -> Vec<u16> {
        match &self.spec.prio {
            Some(p) if p.per_io() => storbench_workload::prio::PrioPicker::new(p, 0).values,
            _ => Vec::new(),
        }
    }

    /// Size classes the job's results are kept apart for (weighted object sizes).
    pub fn size_classes(&self) -> Vec<u64> {
        self.spec.objects.as_ref().map(|o| o.sizes.classes()).unwrap_or_default()
    }
}

/// One worker of one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorkerId {
    pub job: u32,
    pub worker: u32,
}

/// The jobs of one group and the workers this agent runs of them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Assignment {
    pub jobs: Vec<JobShare>,
    pub workers: Vec<WorkerId>,
}

impl Assignment {
    /// Every worker of every job (the in-process agent runs them all).
    pub fn all(jobs: Vec<JobShare>) -> Assignment {
        let workers = jobs.iter().flat_map(|j| (0..j.workers).map(move |w| WorkerId { job: j.job, worker: w })).collect();
        Assignment { jobs, workers }
    }
}

/// Secret engine options (keys, passwords, tokens) of one job, sent to a
/// remote agent apart from its spec (whose serialization redacts them):
/// they travel only inside the authenticated, encrypted channel and never
/// show in `Debug` output or logs.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secrets(pub BTreeMap<String, String>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys().map(|k| format!("{k}=<redacted>"))).finish()
    }
}

impl Secrets {
    /// The secret options among a spec's engine options.
    pub fn of(spec: &JobSpec) -> Secrets {
        let secret = |k: &String| storbench_workload::spec::SECRET_OPTIONS.contains(&k.as_str());
        Secrets(spec.engine_options.iter().filter(|(k, _)| secret(k)).map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    /// Put them back into a spec that came over the wire.
    pub fn restore(self, spec: &mut JobSpec) {
        spec.engine_options.extend(self.0);
    }
}

/// The run's jobs for a remote agent to plan and prepare on its own machine
/// (its files, its view of the store), with the secrets its specs lack.
#[derive(Clone, Serialize, Deserialize)]
pub struct PrepareJobs {
    pub jobs: Vec<JobSpec>,
    /// Per job, in the same order.
    pub secrets: Vec<Secrets>,
}

/// Job names and which secrets travel, never their values (a spec's own
/// `Debug` shows its engine options as they are).
impl std::fmt::Debug for PrepareJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrepareJobs")
            .field("jobs", &self.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>())
            .field("secrets", &self.secrets)
            .finish()
    }
}

/// Coordinator -> agent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToAgent {
    Hello(Hello),
    /// Remote agents: answer with `Pong` at once (clock offset and delay).
    Ping {
        sent_unix_ns: u64,
    },
    /// Remote agents: plan and prepare these jobs; answer `Prepared` or `Failed`.
    Prepare(PrepareJobs),
    /// Remote agents: the run is over; clean up what the preparation made
    /// (`objects_left` per job: objects its cleanup did not remove) and
    /// answer `Finished`.
    Finish {
        objects_left: Vec<u64>,
    },
    Assign(Assignment),
    /// Start the measured phase at this wall-clock time (ns since the Unix
    /// epoch), so workers on every agent begin together.
    Start {
        at_unix_ns: u64,
        /// Measure the host once a second from then on (`FromAgent::Host`).
        #[serde(default)]
        telemetry: bool,
    },
    /// End the measured phase now; clean-up still runs.
    Stop,
    /// End one job's measured phase (it reached steady state); the other
    /// jobs of the group go on.
    StopJob {
        job: u32,
    },
    /// End everything now, set-up and clean-up work included.
    Abort,
    /// Monitors: stop (SIGSTOP) or continue (SIGCONT) a process of the
    /// watched host, by id or command name, if its `--allow-signal` lets
    /// the run; answer `Signalled` with the same `id`.
    Signal {
        id: u64,
        process: String,
        stop: bool,
    },
}

/// A worker's final word.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerDone {
    pub job: u32,
    pub worker: u32,
    /// Sequence number of its last interval report (none sent: `None`).
    pub last_seq: Option<u64>,
    /// When it stopped, in ns since its own start.
    pub end_ns: u64,
    /// When it started, ns after the group did (`startdelay`, `wait_for`).
    #[serde(default)]
    pub start_ns: u64,
    pub cpu: CpuTimes,
    /// The set-up or engine failure that ended the worker early.
    pub error: Option<String>,
    /// Whose fault `error` is and the stage it came in. Optional on the
    /// wire both ways (no version bump): an agent of an earlier build
    /// sends none, and an earlier coordinator ignores it and reads `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Objects this worker wrote and did not remove (its cleanup was cut
    /// short or failed): the run lists them with the command that removes them.
    #[serde(default)]
    pub objects_left: u64,
    /// What checking the data it read back found (jobs that verify; boxed,
    /// so the many messages of other kinds stay small).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Box<VerifyTally>>,
    /// Its verify pass's reads, timed per I/O as the measured phase's are
    /// (jobs that read back what they wrote; boxed as `verify` is); how
    /// long the pass took is `verify`'s `pass_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<Box<OpStats>>,
    /// Its kind's own tally (a replayed trace's share, an accelerator's
    /// training), for kinds that keep one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Box<storbench_metrics::KindTally>>,
    /// Operations in flight when its measured phase ended that got no
    /// answer in time: abandoned, not counted (a server that stopped answering).
    #[serde(default)]
    pub cut_off: u64,
    /// How long its measured phase stood still while it read each pass
    /// back before the next (fio's do_verify between loops): not the
    /// writes' runtime, which fio counts without it.
    #[serde(default)]
    pub between_passes_ns: u64,
    /// A job with fio's `latency_target`: the queue depth its search
    /// settled on (or stood at when the job ended), and, once it settled,
    /// when the figures started over at it (fio's final run): its runtime
    /// counts from there, not from the job's ramp. Absent from earlier agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_from_ns: Option<u64>,
}

impl WorkerDone {
    /// A worker that ended before measuring anything, and why.
    pub fn failed(id: WorkerId, error: impl Into<String>) -> WorkerDone {
        WorkerDone {
            job: id.job,
            worker: id.worker,
            last_seq: None,
            end_ns: 0,
            start_ns: 0,
            cpu: CpuTimes::default(),
            error: Some(error.into()),
            failure: None,
            objects_left: 0,
            verify: None,
            pass: None,
            kind: None,
            cut_off: 0,
            between_passes_ns: 0,
            latency_depth: None,
            measured_from_ns: None,
        }
    }

    /// Where its measured phase ended, less the time it stood still
    /// reading passes back: the end its runtime counts to.
    pub fn measured_end(&self) -> u64 {
        self.end_ns.saturating_sub(self.between_passes_ns)
    }

    /// [`WorkerDone::failed`], saying whose fault it was and where.
    pub fn failed_in(id: WorkerId, error: impl Into<String>, failure: Failure) -> WorkerDone {
        WorkerDone { failure: Some(failure), ..WorkerDone::failed(id, error) }
    }
}

/// What kind of failure ended a worker, and in which of its stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub fault: Fault,
    /// `None`: the coordinator ended it without hearing from it (its agent
    /// lost, or stuck in its storage after the second interrupt), or a bug.
    pub stage: Option<Stage>,
}

/// Agent -> coordinator.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromAgent {
    Hello(Hello),
    /// A worker is set up and waits for `Start`.
    Ready(WorkerId),
    Interval(Box<IntervalReport>),
    /// A worker begins set-up or tear-down work that takes time (so the
    /// coordinator can say what a run is doing before and after measuring).
    Stage {
        id: WorkerId,
        stage: Stage,
    },
    Done(WorkerDone),
    /// The agent as a whole cannot go on (its workers send no more).
    Failed {
        message: String,
    },
    /// The answer to `Ping`, with the agent's clock when it answered.
    Pong {
        sent_unix_ns: u64,
        agent_unix_ns: u64,
    },
    /// Every job planned and its targets ready on the agent's machine.
    Prepared(Vec<JobShare>),
    /// Clean-up done; what went wrong or was left, one line each.
    Finished {
        notes: Vec<String>,
    },
    /// One second of the agent's host (CPU, disks, network, memory, pressure).
    Host(Box<crate::telemetry::HostSample>),
    /// What a `Signal` did (`id` its), or, with no id, a process the run
    /// stopped that the monitor continued as the run ended.
    Signalled {
        id: Option<u64>,
        process: String,
        answer: String,
        error: Option<String>,
    },
}

/// Unmeasured work a worker does around the measured phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stage {
    /// Opening its files and engine, its buffers and logs (never announced:
    /// said only of a failure, in [`WorkerDone::failure`]).
    SetUp,
    /// Writing the objects the measured phase reads (prefill=1).
    Prefill,
    /// The measured phase (said by the coordinator as it starts a group).
    Measure,
    /// Reading back and checking what the job wrote (verify, do_verify).
    Verify,
    /// Removing the objects the job wrote.
    Cleanup,
}

/// Unix time now, in ns (the clock `Start` is given in).
pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_of_another_protocol_version_is_refused_by_name() {
        assert!(Hello::ours("agent").check().is_ok());
        let old = Hello { protocol: PROTOCOL_VERSION + 1, storbench: "9.9.9".into(), ..Hello::ours("agent 10.0.0.7") };
        let e = old.check().unwrap_err().to_string();
        assert!(e.contains("agent 10.0.0.7") && e.contains("9.9.9") && e.contains("same storbench version"), "{e}");
    }

    #[test]
    fn secrets_travel_apart_and_never_show_in_debug_output() {
        let mut spec = JobSpec { ioengine: "s3".into(), ..JobSpec::default() };
        spec.engine_options.insert("bucket".into(), "b1".into());
        spec.engine_options.insert("secret_key".into(), "s3cr3t".into());
        let secrets = Secrets::of(&spec);
        let msg = ToAgent::Prepare(PrepareJobs { jobs: vec![spec], secrets: vec![secrets] });
        assert!(!format!("{msg:?}").contains("s3cr3t"), "{msg:?}");
        let wire = serde_json::to_string(&msg).unwrap();
        let ToAgent::Prepare(mut back) = serde_json::from_str(&wire).unwrap() else { panic!("not a Prepare") };
        assert_eq!(back.jobs[0].engine_options["secret_key"], "<redacted>", "the spec alone redacts it");
        let (mut spec, secrets) = (back.jobs.remove(0), back.secrets.remove(0));
        secrets.restore(&mut spec);
        assert_eq!(spec.engine_options["secret_key"], "s3cr3t");
        assert_eq!(spec.engine_options["bucket"], "b1");
    }

    #[test]
    fn messages_are_plain_data_both_ways() {
        let msg = ToAgent::Start { at_unix_ns: 42, telemetry: true };
        let back: ToAgent = serde_json::from_str(&serde_json::to_string(&msg).unwrap()).unwrap();
        assert!(matches!(back, ToAgent::Start { at_unix_ns: 42, telemetry: true }));
        let done = FromAgent::Done(WorkerDone {
            job: 1,
            worker: 2,
            last_seq: Some(3),
            end_ns: 4,
            start_ns: 0,
            cpu: CpuTimes::default(),
            error: Some("boom".into()),
            failure: Some(Failure { fault: Fault::Storage, stage: Some(Stage::Cleanup) }),
            objects_left: 5,
            verify: Default::default(),
            pass: None,
            kind: None,
            cut_off: 6,
            between_passes_ns: 7,
            latency_depth: Some(8),
            measured_from_ns: Some(9),
        });
        let back: FromAgent = serde_json::from_str(&serde_json::to_string(&done).unwrap()).unwrap();
        assert!(matches!(
            back,
            FromAgent::Done(WorkerDone {
                worker: 2,
                last_seq: Some(3),
                objects_left: 5,
                cut_off: 6,
                between_passes_ns: 7,
                latency_depth: Some(8),
                measured_from_ns: Some(9),
                ..
            })
        ));
        let FromAgent::Done(back) = back else { unreachable!() };
        assert_eq!(back.failure, Some(Failure { fault: Fault::Storage, stage: Some(Stage::Cleanup) }));
    }

    /// A WorkerDone as protocol version 8 had it before `failure` (the
    /// fields an agent or coordinator of that build reads and writes).
    #[derive(Serialize, Deserialize)]
    struct Version8Done {
        job: u32,
        worker: u32,
        last_seq: Option<u64>,
        end_ns: u64,
        #[serde(default)]
        start_ns: u64,
        cpu: CpuTimes,
        error: Option<String>,
        #[serde(default)]
        objects_left: u64,
        #[serde(default)]
        cut_off: u64,
    }

    /// Both ways with a build before `failure`: its Done reads here with no
    /// kind and the same words; ours reads there, its `failure` skipped.
    #[test]
    fn a_failure_kind_crosses_to_and_from_a_build_without_one() {
        let id = WorkerId { job: 1, worker: 3 };
        let ours = FromAgent::Done(WorkerDone::failed_in(id, "open: ENOENT", Failure { fault: Fault::Input, stage: Some(Stage::SetUp) }));
        let wire = serde_json::to_string(&ours).unwrap();
        let old: BTreeMap<String, Version8Done> = serde_json::from_str(&wire).unwrap();
        assert_eq!((old["Done"].worker, old["Done"].error.as_deref()), (3, Some("open: ENOENT")));
        let theirs = Version8Done {
            job: 1,
            worker: 3,
            last_seq: None,
            end_ns: 7,
            start_ns: 0,
            cpu: CpuTimes::default(),
            error: Some("boom".into()),
            objects_left: 0,
            cut_off: 0,
        };
        let wire = serde_json::to_string(&BTreeMap::from([("Done", theirs)])).unwrap();
        let FromAgent::Done(back) = serde_json::from_str(&wire).unwrap() else { panic!("not a Done: {wire}") };
        assert_eq!((back.error.as_deref(), back.failure, back.end_ns), (Some("boom"), None, 7));
        let none = serde_json::to_string(&FromAgent::Done(WorkerDone { error: None, ..WorkerDone::failed(id, "") })).unwrap();
        assert!(!none.contains("failure"), "a worker that did not fail sends no kind: {none}");
    }
}
