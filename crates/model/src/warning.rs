//! Typed warnings about the measurement itself, each saying how to fix the run.
//! Which ones apply is decided in the runner (`runner::warnings`), where the
//! plan and the results meet; here they are plain data and their words.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// A synchronous engine cannot keep more than one I/O in flight.
    QueueDepthCapped { engine: String, asked: u32 },
    /// A fixed-rate job fell short of its rate.
    RateNotMet { job: String, asked_iops: f64, achieved_iops: f64 },
    /// Buffered reads faster than any medium: the page cache answered them.
    PageCacheReads { job: String, p50_ns: u64 },
    /// Too few operations for the tail percentiles to mean much.
    FewSamples { job: String, op: String, ios: u64 },
    /// storbench itself used most of the machine's CPU.
    ClientCpuBound { cpu_percent: f64 },
    /// The run was stopped early.
    Interrupted,
    /// Operations could not reach the server (refused, reset, unreachable).
    ConnectionFailures { job: String, failures: u64, backoff_ms: Option<u64> },
    /// The first operations waited for a lock another client held.
    FirstOpsWaited { job: String, waited_ns: u64, held_by: String },
    /// A job read files whose bytes were partly never written (holes,
    /// preallocated extents): those reads never reached the medium.
    NeverWrittenReads { job: String, files: String, never_written: u64, size: u64 },
    /// A baseline's disks counted far fewer reads than it issued: the page
    /// cache (or never-written extents) answered them.
    ReadsNotOnDisk { issued: u64, disk_reads: u64 },
    /// Several workers wrote to one RBD image with the exclusive-lock
    /// feature: the lock moves between their handles.
    SharedExclusiveLock { job: String, workers: u32, images: String },
    /// Something could not be cleaned up.
    Cleanup { message: String },
    /// The engine says how its settings shape the figures.
    Engine { job: String, engine: String, message: String },
    /// A fleet agent stopped answering (or failed) during the run.
    AgentLost { agent: String, reason: String },
    /// An agent's clock is further from the coordinator's than one interval.
    ClockSkew { agent: String, offset_ms: f64 },
    /// A job asked for steady state and ran to its end without it.
    SteadyStateNotAttained { job: String, criteria: String },
    /// Data read back was not what was acknowledged.
    VerifyFailed { job: String, counts: String, first: String },
    /// A job asked for verification and nothing it read could be judged.
    NothingVerified { job: String },
    /// An object listing disagreed with what the run acknowledged.
    ListingDiffers { job: String, stale: u64, missing: u64, first: String },
    /// A fill wrote more than the store allocated (thin provisioning,
    /// deduplication or compression kept less than was written).
    FillNotAllocated { job: String, target: String, written: u64, allocated: u64 },
    /// A job's measured phase ended without one completed operation.
    NoOperations { job: String, seconds: f64 },
    /// Operations in flight when the measured phase ended got no answer
    /// within the grace (a server that stopped answering): abandoned.
    CutOff { job: String, ops: u64, grace_ms: u64 },
    /// Workers stuck inside an engine call were abandoned after the second
    /// interrupt, so the run could end with its results.
    WorkersAbandoned { job: String, workers: u32 },
    /// One core of a client host was saturated, the only one, while the
    /// run itself used about one core (`run_cores`, its process's CPU): the
    /// load was limited by one core (seconds on the run's axis).
    CoreSaturated {
        host: String,
        core: u32,
        seconds: u32,
        from_s: f64,
        to_s: f64,
        busy_pct: f64,
        host_busy_pct: f64,
        #[serde(default)]
        run_cores: f64,
    },
    /// A disk could take no more: a rotational one busy (nearly) all the
    /// time, or a parallel one whose longer queue (`queue`, aqu-sz) only
    /// raised its await. The figures are the disk's.
    DiskSaturated {
        host: String,
        disk: String,
        seconds: u32,
        from_s: f64,
        to_s: f64,
        util_pct: f64,
        await_ms: f64,
        #[serde(default)]
        queue: f64,
        #[serde(default)]
        rotational: bool,
    },
    /// A host's CPUs as a whole were busy (nearly) all the time: on a
    /// client, with the run itself using most of them; on a watched host
    /// (a server), whoever used them. Seconds on the run's axis.
    HostCpuSaturated {
        host: String,
        /// A watched host (`--watch`), not one that ran the load.
        watched: bool,
        seconds: u32,
        from_s: f64,
        to_s: f64,
        busy_pct: f64,
        cpus: u32,
        /// The run's own CPU over those seconds, in cores (0 on a watched host).
        run_cores: f64,
    },
    /// A NIC carried (nearly) as much as its link's speed in one direction.
    NicSaturated { host: String, nic: String, seconds: u32, from_s: f64, to_s: f64, mbit_per_s: f64, link_mbit_per_s: f64 },
    /// A client's NIC carried (nearly) as much as `storbench baseline
    /// --network` measured over its link, one way (`out` or `in`).
    NetworkAtBaseline {
        host: String,
        nic: String,
        direction: String,
        seconds: u32,
        from_s: f64,
        to_s: f64,
        mbit_per_s: f64,
        baseline_mbit_per_s: f64,
    },
    /// The storage cluster was recovering (objects degraded, misplaced or
    /// being recovered, by its own counters) during the run: the clients
    /// shared it with recovery traffic in those seconds.
    ClusterRecovering { cluster: String, seconds: u32, from_s: f64, to_s: f64, recovery_mib_per_s: f64, degraded_max: f64 },
    /// The measuring process was stopped (Ctrl-Z) `after_s` into the run.
    Stopped { after_s: f64, seconds: f64 },
    /// A time-based job on a synchronous engine asked for verification:
    /// as in fio, its writes take the whole runtime and nothing is read back.
    VerifyNeverRead { job: String, engine: String },
    /// A watched host (`--watch`) stopped answering during the run: its
    /// seconds end there; the run's own figures are whole.
    WatchedHostLost { host: String, reason: String },
}

impl Warning {
    pub fn message(&self) -> String {
        match self {
            Warning::QueueDepthCapped { engine, asked } => format!(
                "engine {engine} is synchronous: iodepth {asked} was capped at 1 per worker; \
                 use ioengine=io_uring for queue depth, or numjobs for more workers"
            ),
            Warning::RateNotMet { job, asked_iops, achieved_iops } => format!(
                "job {job}: the target could not keep up with the fixed rate ({achieved_iops:.0} of {asked_iops:.0} IOPS); \
                 latency counts from each I/O's intended start and includes the queueing; lower the rate or raise iodepth"
            ),
            Warning::PageCacheReads { job, p50_ns } => format!(
                "job {job}: median read latency {:.1} us is below what storage media do: the page cache served the reads; \
                 use direct=1 or a working set larger than RAM to measure the storage",
                *p50_ns as f64 / 1000.0
            ),
            Warning::NoOperations { job, seconds } => format!(
                "job {job}: no operation completed in its {seconds:.1} s, so it has no figures: its workers may not have been \
                 scheduled in time (more busy workers than CPU cores) or every operation outlasted the run; \
                 use fewer jobs or workers, or a longer runtime"
            ),
            Warning::FewSamples { job, op, ios } => {
                format!("job {job}: only {ios} {op} operations: p99.9 and above need 1000+ samples; run longer")
            }
            Warning::ClientCpuBound { cpu_percent } => format!(
                "storbench used {cpu_percent:.0}% of the machine's CPU: the client may be the bottleneck; \
                 use fewer workers or more client machines"
            ),
            Warning::Interrupted => "the run was interrupted: results cover the elapsed time only".into(),
            Warning::VerifyNeverRead { job, engine } => format!(
                "job {job}: verify was asked for, but a time-based job on {engine}, a synchronous engine, reads nothing back: its \
                 writes take the whole runtime, as in fio ('verification read phase will never start'); an engine that queues \
                 (libaio, io_uring) reads back every size written, or give the job a size to write instead of time_based"
            ),
            Warning::Stopped { after_s, seconds } => format!(
                "the run was stopped (Ctrl-Z) for {seconds:.1} s, {after_s:.1} s after it began: nothing was issued then, so those \
                 seconds show no I/O and operations in flight count the stop as latency (a fleet's agents went on without \
                 this coordinator, and one silent past --agent-timeout is lost); run again unstopped for the storage's figures"
            ),
            Warning::CoreSaturated { host, core, seconds, from_s, to_s, busy_pct, host_busy_pct, run_cores } => {
                // An earlier build's result has no run_cores (0): its rule
                // checked neither the other cores nor the run's own CPU.
                let whose = match *run_cores > 0.0 {
                    true => format!(", the only saturated core, while the run used {run_cores:.2} cores and"),
                    false => " while".to_string(),
                };
                format!(
                    "host {host}: core {core} was {busy_pct:.0}% busy for {seconds} s between {from_s:.0} s and {to_s:.0} s{whose} \
                     the host as a whole was {host_busy_pct:.0}% busy: the client was limited by one saturated core; spread the load \
                     over more cores (more workers, a wider cpus_allowed or cpus_allowed_policy=split)"
                )
            }
            Warning::DiskSaturated { host, disk, seconds, from_s, to_s, util_pct, await_ms, queue, rotational } => {
                let how = if *rotational || *queue == 0.0 {
                    format!("was {util_pct:.0}% busy")
                } else {
                    format!("queued {queue:.1} I/Os on average, its await rising with the queue,")
                };
                format!(
                    "host {host}: disk {disk} {how} for {seconds} s between {from_s:.0} s and {to_s:.0} s \
                     (await {await_ms:.2} ms): the disk was the bottleneck, so more queue depth or workers only queue longer; \
                     spread the load over more disks or measure a faster one"
                )
            }
            Warning::HostCpuSaturated { host, watched: false, seconds, from_s, to_s, busy_pct, cpus, run_cores } => format!(
                "host {host}: its {cpus} CPUs were {busy_pct:.0}% busy for {seconds} s between {from_s:.0} s and {to_s:.0} s, \
                 {run_cores:.2} cores of it the run's own: the client's CPU was the limit, not the storage; run from more \
                 clients (--agents) or spend less CPU an operation (larger blocks, io_uring, fewer workers at a deeper queue)"
            ),
            Warning::HostCpuSaturated { host, watched: true, seconds, from_s, to_s, busy_pct, cpus, .. } => format!(
                "watched host {host}: its {cpus} CPUs were {busy_pct:.0}% busy for {seconds} s between {from_s:.0} s and \
                 {to_s:.0} s: that host's CPU was the limit (a server's daemons, a fleet coordinator's merging, or something \
                 else on it), so more load only queues longer; see what used it (top, perf) or spread the work over more hosts"
            ),
            Warning::NicSaturated { host, nic, seconds, from_s, to_s, mbit_per_s, link_mbit_per_s } => format!(
                "host {host}: NIC {nic} carried {mbit_per_s:.0} Mb/s for {seconds} s between {from_s:.0} s and {to_s:.0} s, \
                 its link being {link_mbit_per_s:.0} Mb/s: the network was the limit; run from more clients or measure over a \
                 faster link"
            ),
            Warning::NetworkAtBaseline { host, nic, direction, seconds, from_s, to_s, mbit_per_s, baseline_mbit_per_s } => format!(
                "host {host}: NIC {nic} carried {mbit_per_s:.0} Mb/s {direction} for {seconds} s between {from_s:.0} s and \
                 {to_s:.0} s, at least 90% of the {baseline_mbit_per_s:.0} Mb/s `storbench baseline --network` measured over \
                 that link: the network was the limit; run from more clients, or over a faster path"
            ),
            Warning::ClusterRecovering { cluster, seconds, from_s, to_s, recovery_mib_per_s, degraded_max } => format!(
                "cluster {cluster}: it was recovering for {seconds} s between {from_s:.0} s and {to_s:.0} s (up to \
                 {degraded_max:.0} objects degraded or misplaced, {recovery_mib_per_s:.1} MiB/s of recovery on average): the \
                 clients shared the cluster with its recovery then, after a fault of the run's or one before it; to measure \
                 the cluster at rest, start when every PG is active+clean"
            ),
            Warning::ConnectionFailures { job, failures, backoff_ms } => {
                let waited = match backoff_ms {
                    Some(ms) => format!(
                        "; while it refused them each worker waited after every failure (up to {ms} ms) rather than flood it, \
                         so the count of failures is not a request rate"
                    ),
                    None => String::new(),
                };
                format!("job {job}: {failures} operations could not connect to the server (counted as errors, in no latency){waited}")
            }
            Warning::FirstOpsWaited { job, waited_ns, held_by } => format!(
                "job {job}: the first operations waited up to {:.1} s: {held_by}. The figures include that wait; clear the lock and run again",
                *waited_ns as f64 / 1e9
            ),
            Warning::NeverWrittenReads { job, files, never_written, size } => format!(
                "job {job}: {:.0}% of {files} ({never_written} of {size} bytes) had never been written when the run began \
                 (holes or preallocated extents): reads there return zeros without reaching the medium, so these figures are \
                 not the storage's; write the file first (a sequential write job over it) or read one written in full",
                *never_written as f64 * 100.0 / (*size).max(1) as f64
            ),
            Warning::ReadsNotOnDisk { issued, disk_reads } => format!(
                "the disks under the baseline counted {disk_reads} reads for the {issued} it issued: the reads did not reach \
                 the medium (page cache, never-written extents), so these figures are not the disks' ceiling; measure the \
                 device itself, or a file written in full"
            ),
            Warning::SharedExclusiveLock { job, workers, images } => format!(
                "job {job}: {workers} workers wrote to RBD image {images}, which has the exclusive-lock feature: the lock moves between \
                 their handles and each hand-over stalls the writes in flight (4 KiB random writes on the one-node test \
                 cluster: 4 workers at iodepth 4 did 115-148 IOPS, one worker at iodepth 16 1,062-1,364). Use one worker with \
                 a deeper queue, an image per worker, or on a scratch image \
                 `rbd feature disable POOL/IMAGE fast-diff object-map exclusive-lock`"
            ),
            Warning::Cleanup { message } => message.clone(),
            Warning::Engine { job, engine, message } => format!("job {job} ({engine}): {message}"),
            Warning::AgentLost { agent, reason } => format!(
                "agent {agent} was lost ({reason}): the run is partial; its figures end at its last interval \
                 (the other agents ran on, or stopped with --on-lost abort)"
            ),
            Warning::SteadyStateNotAttained { job, criteria } => format!(
                "job {job}: steady state ({criteria}) was NOT attained: its figures were still moving when it ended; \
                 run longer, or judge a longer window (ss_dur)"
            ),
            Warning::VerifyFailed { job, counts, first } => format!(
                "job {job}: VERIFY FAILED: {counts}; the first: {first}. The storage returned data other than what was \
                 written to it; the results list each failure with its target and offset"
            ),
            Warning::NothingVerified { job } => format!(
                "job {job}: verify was asked for but nothing read could be judged (no unit read had a write acknowledged \
                 by this run); read what a write job of the same run wrote, or give verify_state to check an earlier run's writes"
            ),
            Warning::ListingDiffers { job, stale, missing, first } => format!(
                "job {job}: the store's listing disagreed with what the run acknowledged, still 2 s after a first look: \
                 {stale} deleted objects listed, {missing} written objects not listed (the first: {first}); \
                 eventually consistent listings (Swift's container updates) catch up later, on a strongly consistent store this is a fault"
            ),
            Warning::FillNotAllocated { job, target, written, allocated } => format!(
                "job {job}: the fill wrote {written} bytes to {target} but the store holds only {allocated}: thin provisioning, \
                 deduplication or compression kept less than was written, so the store is emptier than asked; \
                 check the store's settings (or fill with incompressible data, storbench's default)"
            ),
            Warning::CutOff { job, ops, grace_ms } => format!(
                "job {job}: {ops} operations still in flight when the measured phase ended got no answer within its {grace_ms} ms \
                 grace (less after a second interrupt) and were cut off: they are not counted, and the time waited for them is \
                 not measured (a server that stops answering does not stretch the phase)"
            ),
            Warning::WorkersAbandoned { job, workers } => format!(
                "job {job}: {workers} workers were stuck in a call to the storage after the second interrupt and were abandoned, \
                 so the run could end: their figures end with their last per-second report"
            ),
            Warning::WatchedHostLost { host, reason } => format!(
                "watched host {host} was lost ({reason}): its seconds end there; the run's own figures are whole \
                 (a watched host takes no share of the load)"
            ),
            Warning::ClockSkew { agent, offset_ms } => format!(
                "agent {agent}'s clock is {offset_ms:+.0} ms from the coordinator's: starts were corrected for it, but \
                 timestamps in its logs are off by as much; synchronize the clocks (chrony, NTP)"
            ),
        }
    }
}

/// Warnings said once for every job they name: "job a: X" and "job b: X"
/// become "jobs a, b: X" (the first few names and how many), so a run of a
/// thousand jobs with one problem has one line, not a thousand. Each line
/// comes with the job it is about, if any, so names are never parsed out of
/// the text; a line that does not begin "job NAME: " passes as it is. Order
/// is kept by first appearance.
pub fn fold<'a>(lines: impl IntoIterator<Item = (Option<&'a str>, String)>) -> Vec<String> {
    const NAMED: usize = 5;
    let mut groups: Vec<(String, Vec<&'a str>)> = Vec::new();
    for (job, line) in lines {
        let (job, rest) = match job.and_then(|j| line.strip_prefix(&format!("job {j}: ")).map(|r| (j, r.to_string()))) {
            Some((j, rest)) => (Some(j), rest),
            None => (None, line),
        };
        match groups.iter_mut().find(|g| g.0 == rest && job.is_some() != g.1.is_empty()) {
            Some(g) => g.1.extend(job.filter(|j| !g.1.contains(j))),
            None => groups.push((rest, job.into_iter().collect())),
        }
    }
    groups
        .into_iter()
        .map(|(rest, jobs)| match jobs.len() {
            0 => rest,
            1 => format!("job {}: {rest}", jobs[0]),
            n if n <= NAMED => format!("jobs {}: {rest}", jobs.join(", ")),
            n => format!("{n} jobs ({}, ...): {rest}", jobs[..NAMED].join(", ")),
        })
        .collect()
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_about_many_jobs_fold_into_one_line() {
        let j = |job: &'static str, text: &str| (Some(job), format!("job {job}: {text}"));
        let lines = vec![j("a", "slow"), j("b", "slow"), (None, "storbench used 95%".to_string()), j("a", "few"), j("b", "slow")];
        assert_eq!(fold(lines), ["jobs a, b: slow", "storbench used 95%", "job a: few"]);
        let names: Vec<String> = (0..7).map(|i| format!("j{i}")).collect();
        let many = names.iter().map(|n| (Some(n.as_str()), format!("job {n}: idle")));
        assert_eq!(fold(many), ["7 jobs (j0, j1, j2, j3, j4, ...): idle"]);
        // Names are taken from the job, never parsed: a name with ": " in it.
        let odd = vec![j("x: y", "slow"), j("z: y", "slow")];
        assert_eq!(fold(odd), ["jobs x: y, z: y: slow"]);
        // A line about a job that does not start with its name stays whole.
        assert_eq!(fold(vec![(Some("a"), "job a (psync): no O_DIRECT".to_string())]), ["job a (psync): no O_DIRECT"]);
    }

    /// A result of an earlier build (no `run_cores`) keeps what its rule
    /// knew: it never said the core was the only one, nor the run's CPU.
    #[test]
    fn an_earlier_core_saturated_warning_claims_no_more_than_its_rule_checked() {
        let text = r#"{"kind":"core_saturated","host":"h","core":1,"seconds":3,"from_s":1,"to_s":4,"busy_pct":99,"host_busy_pct":60}"#;
        let old: Warning = serde_json::from_str(text).unwrap();
        let m = old.message();
        assert!(m.contains("core 1 was 99% busy") && !m.contains("only saturated") && !m.contains("0.00 cores"), "{m}");
        let Warning::CoreSaturated { host, core, seconds, from_s, to_s, busy_pct, host_busy_pct, .. } = old else { unreachable!() };
        let new = Warning::CoreSaturated { host, core, seconds, from_s, to_s, busy_pct, host_busy_pct, run_cores: 0.97 };
        assert!(new.message().contains("the only saturated core, while the run used 0.97 cores"), "{}", new.message());
    }
}
