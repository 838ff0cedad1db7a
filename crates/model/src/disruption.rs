//! Runs through failure: the faults a run injects at times on its axis
//! (`--fault 5s:osd-out:2`), what came of each, and what they did to the
//! clients and to the cluster, as `RunResult::disruption` holds them.
//!
//! (`fault.rs` is another thing: whose fault an error is.)

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use storbench_metrics::ErrorKind;

/// What a scheduled fault does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "action", content = "target")]
pub enum FaultAction {
    /// `ceph osd out N`: the OSD stays up, its data moves elsewhere.
    OsdOut(u32),
    /// `ceph osd in N`.
    OsdIn(u32),
    /// `ceph osd down N`: marked down (a running OSD marks itself up again).
    OsdDown(u32),
    /// A shell command (only with `--allow-exec`).
    Exec(String),
    /// Every packet this machine sends out of the NIC delayed (netem).
    NetDelay { nic: String, ms: f64 },
    /// That share of the packets through the NIC dropped, each way (nftables).
    NetLoss { nic: String, pct: f64 },
    /// All of them dropped: the link cut, without a FIN or a RST (nftables).
    NetCut(String),
    /// The NIC as it was before the run's first network fault on it.
    NetRestore(String),
    /// A process frozen (SIGSTOP: a hung daemon), by id or command name,
    /// on this machine or on a watched host (`host`, a `--watch` entry
    /// whose monitor allows it): only with `--allow-exec`.
    ProcStop {
        process: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// ... and thawed (SIGCONT).
    ProcCont {
        process: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
}

impl FaultAction {
    /// As written after the time: `osd-out:2`, `exec:CMD`.
    pub fn words(&self) -> String {
        match self {
            FaultAction::OsdOut(n) => format!("osd-out:{n}"),
            FaultAction::OsdIn(n) => format!("osd-in:{n}"),
            FaultAction::OsdDown(n) => format!("osd-down:{n}"),
            FaultAction::Exec(c) => format!("exec:{c}"),
            FaultAction::NetDelay { nic, ms } => format!("net-delay:{nic}:{ms}ms"),
            FaultAction::NetLoss { nic, pct } => format!("net-loss:{nic}:{pct}%"),
            FaultAction::NetCut(nic) => format!("net-cut:{nic}"),
            FaultAction::NetRestore(nic) => format!("net-restore:{nic}"),
            FaultAction::ProcStop { process, host } => format!("proc-stop:{process}{}", at_host(host)),
            FaultAction::ProcCont { process, host } => format!("proc-cont:{process}{}", at_host(host)),
        }
    }

    /// Whether it goes through the storage cluster's management interface.
    pub fn on_cluster(&self) -> bool {
        matches!(self, FaultAction::OsdOut(_) | FaultAction::OsdIn(_) | FaultAction::OsdDown(_))
    }

    /// The process a process fault signals (an id or a command name).
    pub fn process(&self) -> Option<&str> {
        match self {
            FaultAction::ProcStop { process, .. } | FaultAction::ProcCont { process, .. } => Some(process),
            _ => None,
        }
    }

    /// The watched host a process fault goes to (`None`: this machine).
    pub fn host(&self) -> Option<&str> {
        match self {
            FaultAction::ProcStop { host, .. } | FaultAction::ProcCont { host, .. } => host.as_deref(),
            _ => None,
        }
    }

    /// Whether it acts on this machine beyond storbench's own (a command,
    /// a process): only with `--allow-exec`.
    pub fn needs_exec_consent(&self) -> bool {
        matches!(self, FaultAction::Exec(_) | FaultAction::ProcStop { .. } | FaultAction::ProcCont { .. })
    }

    /// The NIC a network fault shapes.
    pub fn nic(&self) -> Option<&str> {
        match self {
            FaultAction::NetDelay { nic, .. } | FaultAction::NetLoss { nic, .. } => Some(nic),
            FaultAction::NetCut(nic) | FaultAction::NetRestore(nic) => Some(nic),
            _ => None,
        }
    }
}

/// One fault of the schedule: an action at a time after the run's start
/// (second 0 of its axis, the first group's start).
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledFault {
    pub at: Duration,
    pub action: FaultAction,
}

impl ScheduledFault {
    /// `TIME:ACTION[:ARG]`: `5s:osd-out:2`, `1500ms:osd-in:2`,
    /// `30s:exec:systemctl restart ceph-osd@2`. The error says what is wrong
    /// and how to write it.
    pub fn parse(text: &str) -> Result<ScheduledFault, String> {
        let usage = "write TIME:ACTION[:ARG], e.g. 5s:osd-out:2 (actions: osd-out:N, osd-in:N, osd-down:N, exec:COMMAND, \
                     net-delay:NIC:MS, net-loss:NIC:PCT, net-cut:NIC, net-restore:NIC, proc-stop:PROCESS[@HOST], proc-cont:PROCESS[@HOST])";
        let (at, rest) = text.split_once(':').ok_or_else(|| format!("--fault '{text}': {usage}"))?;
        let at = parse_time(at).ok_or_else(|| format!("--fault '{text}': '{at}' is not a time (5s, 1500ms, 2m)"))?;
        let (name, arg) = rest.split_once(':').unwrap_or((rest, ""));
        let osd = || arg.trim().parse::<u32>().map_err(|_| format!("--fault '{text}': {name} needs an OSD number ({name}:2)"));
        let action = match name {
            "osd-out" => FaultAction::OsdOut(osd()?),
            "osd-in" => FaultAction::OsdIn(osd()?),
            "osd-down" => FaultAction::OsdDown(osd()?),
            "exec" if !arg.trim().is_empty() => FaultAction::Exec(arg.to_string()),
            "exec" => return Err(format!("--fault '{text}': exec needs a command (exec:COMMAND)")),
            "net-delay" | "net-loss" | "net-cut" | "net-restore" => net(text, name, arg)?,
            "proc-stop" | "proc-cont" => proc(text, name, arg)?,
            _ => return Err(format!("--fault '{text}': unknown action '{name}'; {usage}")),
        };
        Ok(ScheduledFault { at, action })
    }
}

/// A process fault's target: `PROCESS` on this machine or
/// `PROCESS@HOST` on a watched host (`ceph-osd@node1`, `4242@10.0.0.5`).
fn proc(text: &str, name: &str, arg: &str) -> Result<FaultAction, String> {
    let (process, host) = match arg.split_once('@') {
        Some((p, h)) => (p.trim(), Some(h.trim())),
        None => (arg.trim(), None),
    };
    // A command name as /proc/PID/comm gives it: no slash, no blank.
    if process.is_empty() || process.contains(['/', ' ']) {
        return Err(format!(
            "--fault '{text}': {name} needs a process id or command name ({name}:ceph-osd, {name}:4242, {name}:ceph-osd@HOST)"
        ));
    }
    if host.is_some_and(|h| h.is_empty() || h.contains([' ', '@'])) {
        return Err(format!(
            "--fault '{text}': after @ goes a watched host's name or address, as --watch lists it ({name}:ceph-osd@10.0.0.5)"
        ));
    }
    let (process, host) = (process.to_string(), host.map(str::to_string));
    Ok(match name {
        "proc-stop" => FaultAction::ProcStop { process, host },
        _ => FaultAction::ProcCont { process, host },
    })
}

/// `@HOST` after a process on a watched host, nothing for this machine's.
fn at_host(host: &Option<String>) -> String {
    host.as_ref().map_or_else(String::new, |h| format!("@{h}"))
}

/// A network fault's NIC and figure: `net-delay:eth1:100ms` (up to a
/// minute), `net-loss:eth1:5%` (above 0, up to 100), `net-cut:eth1`.
fn net(text: &str, name: &str, arg: &str) -> Result<FaultAction, String> {
    let (nic, figure) = arg.split_once(':').map_or((arg, None), |(n, f)| (n, Some(f.trim())));
    let nic = nic.trim().to_string();
    // A NIC's name as the kernel allows it (IFNAMSIZ, no slash or blank).
    if nic.is_empty() || nic.len() > 15 || nic.contains(['/', ' ', ':']) {
        return Err(format!("--fault '{text}': {name} needs a network interface's name ({name}:eth1...)"));
    }
    let bad = |what: &str| format!("--fault '{text}': {what}");
    match (name, figure) {
        ("net-delay", Some(f)) => {
            // A bare number is milliseconds here (net-delay:NIC:MS), not seconds.
            let f = if f.parse::<f64>().is_ok() { format!("{f}ms") } else { f.to_string() };
            let ms = parse_time(&f).filter(|d| !d.is_zero() && *d <= Duration::from_secs(60));
            let ms = ms.ok_or_else(|| bad("the delay is a time above 0 and up to 60s (100ms, 1.5s)"))?;
            Ok(FaultAction::NetDelay { nic, ms: ms.as_secs_f64() * 1e3 })
        }
        ("net-loss", Some(f)) => {
            // Drawn per packet in thousandths of a percent.
            let pct = f.strip_suffix('%').unwrap_or(f).trim().parse::<f64>().ok().filter(|p| *p >= 0.001 && *p <= 100.0);
            Ok(FaultAction::NetLoss { nic, pct: pct.ok_or_else(|| bad("the loss is a percentage from 0.001 to 100 (5%)"))? })
        }
        ("net-delay", None) => Err(bad("net-delay needs the delay (net-delay:NIC:100ms)")),
        ("net-loss", None) => Err(bad("net-loss needs the share lost (net-loss:NIC:5%)")),
        ("net-cut", None) => Ok(FaultAction::NetCut(nic)),
        ("net-restore", None) => Ok(FaultAction::NetRestore(nic)),
        _ => Err(bad(&format!("{name} takes only the NIC ({name}:NIC)"))),
    }
}

/// `5s`, `1500ms`, `2m`, `0.5s`; a bare number is seconds.
fn parse_time(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0 && v * scale <= 86_400.0).then(|| Duration::from_secs_f64(v * scale))
}

/// What the run did with one fault.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultEvent {
    /// When it was due and when it was done, in s on the run's axis.
    pub at_s: f64,
    pub done_s: f64,
    #[serde(flatten)]
    pub action: FaultAction,
    /// What the cluster (or the command) answered; the error if it failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Not carried out: the run ended (or never started) before it was due.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// Not in the schedule: done at the run's end to undo what the run did
    /// to the cluster (an OSD it took out and did not put back in).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restores: bool,
}

impl FaultEvent {
    /// What the run did at `at_s` to undo its own fault (not in the
    /// schedule): its answer, or the error saying what is left to do.
    pub fn undo(at_s: f64, action: FaultAction, done: Result<String, String>) -> FaultEvent {
        let (answer, error) = match done {
            Ok(a) => (a, None),
            Err(e) => (String::new(), Some(e)),
        };
        FaultEvent { at_s, done_s: at_s, action, answer, error, skipped: false, restores: true }
    }

    /// How it ended, as one word: `done`, `failed`, `not_reached` (the run
    /// ended first), `undone` or `undo_failed` (undoing the run's own fault
    /// at its end).
    pub fn outcome(&self) -> &'static str {
        match (self.skipped, self.restores, self.error.is_some()) {
            (true, _, _) => "not_reached",
            (false, true, false) => "undone",
            (false, true, true) => "undo_failed",
            (false, false, false) => "done",
            (false, false, true) => "failed",
        }
    }
}

/// The clients' figures over a stretch of the run's axis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stretch {
    pub from_s: f64,
    pub to_s: f64,
    /// Operations per second, every job's together.
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    /// From the seconds' coarse latency buckets (four to an octave, each
    /// 19% wide): the upper edge of the bucket holding the 99th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    pub errors: u64,
    /// The errors by kind (connection, timeout...): what a fault broke.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_kinds: BTreeMap<ErrorKind, u64>,
}

impl Stretch {
    /// `3 errors (connection 2, timeout 1)`, the commonest kind first, or `0 errors`.
    pub fn errors_words(&self) -> String {
        let mut kinds: Vec<(&ErrorKind, &u64)> = self.error_kinds.iter().collect();
        kinds.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{} {n}", k.name())).collect();
        match kinds.is_empty() {
            true => format!("{} errors", self.errors),
            false => format!("{} errors ({})", self.errors, kinds.join(", ")),
        }
    }
}

/// The faults of a run and what they did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Disruption {
    pub events: Vec<FaultEvent>,
    /// Before the first fault, from it to the last fault's second, after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Stretch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during: Option<Stretch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Stretch>,
    /// Seconds from the last fault until the clients' operations per second
    /// are back within 5% of before's, for three seconds running; `None`:
    /// not within the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_after_s: Option<f64>,
    /// The cluster's own recovery by its counters: the first and last
    /// second (on the run's axis) with degraded or misplaced objects or
    /// recovery traffic; `None`: none seen, or no cluster watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_recovery_s: Option<[f64; 2]>,
    /// The cluster's last reading still showed recovery: its period above
    /// ends with the run, not with the recovery.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cluster_recovering_at_end: bool,
}

/// Seconds within this fraction of before's throughput are recovered.
const RECOVERED: f64 = 0.95;
/// For this many seconds running.
const RECOVERED_FOR: usize = 3;
/// The cluster's counters that are not zero while it recovers.
const RECOVERING: [&str; 4] =
    ["cluster_degraded_objects", "cluster_misplaced_objects", "cluster_recovery_objects_per_s", "cluster_pgs_not_active_clean"];

/// Every job's figures of one second of the run's axis, together.
#[derive(Default)]
struct Second {
    /// How long the second was (a run's last one may be short).
    secs: f64,
    ops: f64,
    bytes: f64,
    errors: u64,
    kinds: BTreeMap<ErrorKind, u64>,
    buckets: BTreeMap<u16, u64>,
}

impl Disruption {
    /// What the faults did, from the run's own figures: the clients' seconds
    /// (every job's, placed on the run's axis by its group's start) and,
    /// when the cluster was watched, its counters.
    pub fn assess(result: &crate::RunResult, events: Vec<FaultEvent>) -> Disruption {
        // From the first fault's time to when the last one was done: one
        // carried out late (after a slow one before it) still counts whole.
        let tried = || events.iter().filter(|e| !e.skipped && !e.restores);
        let Some(first) = tried().map(|e| e.at_s).reduce(f64::min) else { return Disruption { events, ..Disruption::default() } };
        let last = tried().map(|e| e.done_s.max(e.at_s)).fold(first, f64::max);
        let seconds = client_seconds(result);
        let stretch = |from: f64, to: f64| stretch(&seconds, from, to);
        let end = seconds.keys().last().map_or(last, |k| *k as f64);
        let before = stretch(0.0, first);
        let recovered_after_s = before.as_ref().and_then(|b| recovered(&seconds, last, b.ops_per_s));
        let recovery = cluster_recovery(result, first);
        Disruption {
            before,
            during: stretch(first, last + 1.0),
            after: stretch(last + 1.0, end),
            recovered_after_s,
            cluster_recovery_s: recovery.map(|(period, _)| period),
            cluster_recovering_at_end: recovery.is_some_and(|(_, at_end)| at_end),
            events,
        }
    }
}

/// Every job's operations per second together, by the second (on the run's
/// axis) each ends on: the line the faults are drawn against.
pub fn clients_per_second(result: &crate::RunResult) -> Vec<(f64, f64)> {
    client_seconds(result).into_iter().map(|(k, s)| (k as f64, s.ops)).collect()
}

/// The clients' seconds by the whole second they end on.
fn client_seconds(result: &crate::RunResult) -> BTreeMap<i64, Second> {
    let starts = result.telemetry.as_ref().map(|t| t.group_starts.clone()).unwrap_or_default();
    let mut out: BTreeMap<i64, Second> = BTreeMap::new();
    for j in &result.jobs {
        let offset = starts.get(j.group as usize).copied().unwrap_or(0.0);
        for p in j.series.iter().filter(|p| !p.warmup) {
            // A series point ends at `t`: a short last one (t = 20.3) is a
            // second of its own (21), not added onto second 20.
            let s = out.entry((offset + p.t - 1e-6).ceil() as i64).or_default();
            s.secs = s.secs.max(p.duration);
            for o in &p.ops {
                s.ops += o.iops * p.duration;
                s.bytes += o.bytes_per_sec * p.duration;
                s.errors += o.errors;
                add(&mut s.kinds, &o.error_kinds);
                for (b, n) in &o.buckets {
                    *s.buckets.entry(*b).or_default() += n;
                }
            }
        }
    }
    out
}

/// The seconds ending in `(from, to]`, together; `None` if there are none.
fn stretch(seconds: &BTreeMap<i64, Second>, from: f64, to: f64) -> Option<Stretch> {
    let inside: Vec<&Second> = seconds.iter().filter(|(k, _)| (**k as f64) > from && (**k as f64) <= to).map(|(_, s)| s).collect();
    if inside.is_empty() {
        return None;
    }
    let secs: f64 = inside.iter().map(|s| s.secs).sum();
    let n = if secs > 0.0 { secs } else { inside.len() as f64 };
    let (mut buckets, mut error_kinds) = (BTreeMap::new(), BTreeMap::new());
    for s in &inside {
        add(&mut buckets, &s.buckets);
        add(&mut error_kinds, &s.kinds);
    }
    Some(Stretch {
        from_s: from,
        to_s: to,
        ops_per_s: inside.iter().map(|s| s.ops).sum::<f64>() / n,
        bytes_per_s: inside.iter().map(|s| s.bytes).sum::<f64>() / n,
        p99_ns: p99_of(&buckets),
        errors: inside.iter().map(|s| s.errors).sum(),
        error_kinds,
    })
}

/// `from`'s counts added into `into`.
fn add<K: Ord + Copy>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, n) in from {
        *into.entry(*k).or_default() += n;
    }
}

/// The upper edge of the bucket holding the 99th percentile.
fn p99_of(buckets: &BTreeMap<u16, u64>) -> Option<u64> {
    let total: u64 = buckets.values().sum();
    let want = (total as f64 * 0.99).ceil() as u64;
    let mut seen = 0;
    for (b, n) in buckets {
        seen += n;
        if seen >= want && total > 0 {
            return Some(storbench_metrics::hist::log_bucket_low(b + 1) as u64);
        }
    }
    None
}

/// Seconds from `last` until the clients stayed back: the start of the
/// window of [`RECOVERED_FOR`] seconds after the last one whose rate fell
/// under [`RECOVERED`] of `before` (windows, not single seconds: one noisy
/// second does not undo a recovery, and a dip a few seconds after the last
/// fault, as a Ceph client's while PGs peer, is not missed by a recovery
/// seen before it). `None` when the last window of the run is still under.
fn recovered(seconds: &BTreeMap<i64, Second>, last: f64, before: f64) -> Option<f64> {
    if before <= 0.0 {
        return None;
    }
    let after: Vec<(i64, &Second)> = seconds.iter().filter(|(k, _)| (**k as f64) > last).map(|(k, s)| (*k, s)).collect();
    let windows: Vec<(i64, bool)> = after
        .windows(RECOVERED_FOR)
        .filter(|w| w[RECOVERED_FOR - 1].0 - w[0].0 == RECOVERED_FOR as i64 - 1)
        .map(|w| {
            let secs: f64 = w.iter().map(|(_, s)| if s.secs > 0.0 { s.secs } else { 1.0 }).sum();
            let rate = w.iter().map(|(_, s)| s.ops).sum::<f64>() / secs;
            (w[0].0, rate >= RECOVERED * before)
        })
        .collect();
    let back_from = match windows.iter().rposition(|(_, good)| !good) {
        None => windows.first()?.0,
        Some(i) => windows.get(i + 1)?.0,
    };
    Some(((back_from - 1) as f64 - last).max(0.0))
}

/// The first and last second from the first fault on at which a watched
/// cluster's counters said it was recovering, and whether its last reading
/// still did.
fn cluster_recovery(result: &crate::RunResult, first: f64) -> Option<([f64; 2], bool)> {
    let t = result.telemetry.as_ref()?;
    let mut seen: Option<[f64; 2]> = None;
    let mut last_read = f64::MIN;
    for src in t.sources.iter().filter(|s| s.kind == crate::telemetry::SourceKind::Cluster) {
        for (i, at) in src.t.iter().enumerate() {
            let busy = src
                .series
                .iter()
                .filter(|s| RECOVERING.contains(&s.metric.as_str()))
                .any(|s| s.values.get(i).copied().flatten().is_some_and(|v| v > 0.0));
            if busy && *at > first {
                seen = Some(seen.map_or([*at, *at], |[a, _]| [a, *at]));
            }
            last_read = last_read.max(*at);
        }
    }
    seen.map(|p| (p, p[1] >= last_read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_is_read_as_written_and_bad_ones_say_how_to_write_them() {
        let f = ScheduledFault::parse("5s:osd-out:2").unwrap();
        assert_eq!((f.at, f.action), (Duration::from_secs(5), FaultAction::OsdOut(2)));
        assert_eq!(ScheduledFault::parse("1500ms:osd-in:0").unwrap().at, Duration::from_millis(1500));
        let exec = ScheduledFault::parse("2m:exec:kill -STOP 1234").unwrap();
        assert_eq!((exec.at, exec.action.words()), (Duration::from_secs(120), "exec:kill -STOP 1234".to_string()));
        let stop = ScheduledFault::parse("10s:proc-stop:ceph-osd").unwrap();
        assert_eq!(stop.action, FaultAction::ProcStop { process: "ceph-osd".into(), host: None });
        assert_eq!(ScheduledFault::parse(&format!("1s:{}", stop.action.words())).unwrap().action, stop.action, "words read back");
        assert!(stop.action.needs_exec_consent() && stop.action.process() == Some("ceph-osd") && !stop.action.on_cluster());
        assert_eq!(
            ScheduledFault::parse("20s:proc-cont:4242").unwrap().action,
            FaultAction::ProcCont { process: "4242".into(), host: None }
        );
        let there = ScheduledFault::parse("3s:proc-stop:ceph-osd@10.0.0.5:7450").unwrap().action;
        assert_eq!((there.process(), there.host()), (Some("ceph-osd"), Some("10.0.0.5:7450")));
        assert_eq!(there.words(), "proc-stop:ceph-osd@10.0.0.5:7450");
        assert_eq!(ScheduledFault::parse(&format!("1s:{}", there.words())).unwrap().action, there, "words read back");
        for (bad, says) in [
            ("osd-out:2", "not a time"),
            ("5s:osd-out", "needs an OSD number"),
            ("5s:osd-out:x", "needs an OSD number"),
            ("5s:reboot", "unknown action 'reboot'"),
            ("5s:exec:", "exec needs a command"),
            ("-1s:osd-in:1", "not a time"),
            ("5s", "TIME:ACTION"),
            ("5s:net-delay:eth1", "needs the delay"),
            ("5s:net-delay:eth1:0ms", "above 0 and up to 60s"),
            ("5s:net-loss:eth1:150%", "from 0.001 to 100"),
            ("5s:net-loss:eth1:0.0001%", "from 0.001 to 100"),
            ("5s:net-cut:", "network interface's name"),
            ("5s:net-cut:eth1:5", "takes only the NIC"),
            ("5s:proc-stop:", "needs a process id or command name"),
            ("5s:proc-cont:/usr/bin/x", "needs a process id or command name"),
            ("5s:proc-stop:@node1", "needs a process id or command name"),
            ("5s:proc-stop:ceph-osd@", "a watched host's name or address"),
        ] {
            let e = ScheduledFault::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn network_faults_name_their_nic_and_figure_and_read_back_as_written() {
        for (text, action) in [
            ("2s:net-delay:sbnv1:200ms", FaultAction::NetDelay { nic: "sbnv1".into(), ms: 200.0 }),
            ("2s:net-delay:eth0:1.5s", FaultAction::NetDelay { nic: "eth0".into(), ms: 1500.0 }),
            ("2s:net-delay:eth0:50", FaultAction::NetDelay { nic: "eth0".into(), ms: 50.0 }),
            ("2s:net-loss:eth0:5%", FaultAction::NetLoss { nic: "eth0".into(), pct: 5.0 }),
            ("2s:net-cut:eth0", FaultAction::NetCut("eth0".into())),
            ("2s:net-restore:eth0", FaultAction::NetRestore("eth0".into())),
        ] {
            let f = ScheduledFault::parse(text).unwrap();
            assert_eq!(f.action, action, "{text}");
            assert!(!f.action.on_cluster() && f.action.nic().is_some());
            assert_eq!(ScheduledFault::parse(&format!("2s:{}", f.action.words())).unwrap().action, action, "words read back");
            let json = serde_json::to_string(&f.action).unwrap();
            assert_eq!(serde_json::from_str::<FaultAction>(&json).unwrap(), action, "{json}");
        }
    }

    /// Ten seconds at 1,000/s, a dip to 200/s after a fault at 4 s, back at
    /// second 8: before 1,000, during the dip, recovered 3 s after the fault.
    #[test]
    fn stretches_and_recovery_from_the_clients_seconds() {
        let mut seconds = BTreeMap::new();
        for k in 1..=12i64 {
            let ops = if (5..=7).contains(&k) { 200.0 } else { 1000.0 };
            let lat = if ops < 1000.0 { 40 } else { 20 };
            let buckets = [(lat, 99u64), (lat + 8, 1)].into_iter().collect();
            let kinds: BTreeMap<ErrorKind, u64> = match k {
                5 => [(ErrorKind::Connection, 1)].into(),
                6 => [(ErrorKind::Connection, 2), (ErrorKind::Timeout, 1)].into(),
                _ => BTreeMap::new(),
            };
            let errors = kinds.values().sum();
            seconds.insert(k, Second { secs: 1.0, ops, bytes: ops * 4096.0, errors, kinds, buckets });
        }
        let before = stretch(&seconds, 0.0, 4.0).unwrap();
        assert_eq!((before.ops_per_s, before.errors), (1000.0, 0));
        assert_eq!(before.p99_ns, Some(storbench_metrics::hist::log_bucket_low(21) as u64), "the 99th of 100 in the lower bucket");
        let during = stretch(&seconds, 4.0, 6.0).unwrap();
        assert_eq!((during.ops_per_s, during.errors), (200.0, 4));
        assert_eq!(during.error_kinds, [(ErrorKind::Connection, 3), (ErrorKind::Timeout, 1)].into());
        assert_eq!(during.errors_words(), "4 errors (connection 3, timeout 1)");
        assert_eq!(before.errors_words(), "0 errors");
        let json = serde_json::to_value(&during).unwrap();
        assert_eq!(json["error_kinds"], serde_json::json!({"connection": 3, "timeout": 1}));
        assert_eq!(recovered(&seconds, 4.0, 1000.0), Some(3.0), "seconds 8, 9, 10 are back: from 7 s, 3 s after the fault");
        assert_eq!(recovered(&seconds, 4.0, 2000.0), None, "never back to twice the rate");
        assert_eq!(recovered(&seconds, 1.0, 1000.0), Some(6.0), "a dip 4 s after the fault is not missed by the good seconds before it");
        // One noisy second (900 between 1,000s) does not undo the recovery.
        seconds.get_mut(&11).unwrap().ops = 900.0;
        assert_eq!(recovered(&seconds, 4.0, 1000.0), Some(3.0));
        // A short last second is a rate over its own length.
        seconds.insert(13, Second { secs: 0.25, ops: 250.0, ..Second::default() });
        let after = stretch(&seconds, 12.0, 13.0).unwrap();
        assert_eq!(after.ops_per_s, 1000.0);
        assert!(stretch(&seconds, 20.0, 30.0).is_none());
    }

    #[test]
    fn an_event_is_written_with_its_action_flat() {
        let e = FaultEvent {
            at_s: 5.0,
            done_s: 5.02,
            action: FaultAction::OsdOut(2),
            answer: "marked out osd.2.".into(),
            error: None,
            skipped: false,
            restores: false,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!((v["action"].as_str(), v["target"].as_u64()), (Some("osd_out"), Some(2)), "{v}");
        assert_eq!(serde_json::from_value::<FaultEvent>(v).unwrap(), e);
    }
}
