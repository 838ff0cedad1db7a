//! `storbench slo --latency p99=2ms [JOBS]`: the highest fixed rate whose
//! latency percentile stays under a bound. Open loop: each probe is a
//! fixed-rate run (Poisson arrivals unless the job says otherwise) whose
//! latency counts from each operation's intended start, so a store that
//! falls behind shows it (no coordinated omission). A closed-loop probe
//! first measures what the jobs can do at all; the search then bisects
//! between 0 and that. Every probe is kept as a run under the search's
//! directory, and `slo.json` indexes them.
//!
//! `--closed-loop` answers fio's `latency_target` question instead: the
//! deepest queue whose percentile stays under the bound, latency counted
//! from each I/O's issue (so what a fixed arrival rate would have queued at
//! the client is not in it: coordinated omission, said with the answer).

use crate::cli::SloFlags;
use crate::commands::run::resolve_specs;
use crate::error::*;
use crate::session::{execute, finish, RunSetup};
use crate::{output, progress};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use storbench_metrics::LatencyHistogram;
use storbench_model::slo::*;
use storbench_model::RunResult;
use storbench_report::fmt::{count, latency};
use storbench_workload::{apply_option, JobSpec};

/// A probe that cannot gather enough samples in this long is judged anyway.
const LONGEST_PROBE: Duration = Duration::from_secs(600);

pub fn run(words: &[String]) -> Result<i32, CliError> {
    let (flags, jobs): (SloFlags, crate::words::JobArgs) = match crate::parse_with_jobs("slo", words)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    if let Some(dir) = &flags.resume {
        return resume(dir, &flags, words);
    }
    let dir = flags.source.results_dir.clone().unwrap_or_else(output::default_dir);
    if dir.join(SLO_FILE).exists() {
        return Err(CliError::usage(format!(
            "{} holds an SLO search already: `storbench slo --resume {}` goes on with it, or give another --results-dir",
            dir.display(),
            dir.display()
        )));
    }
    let search = Search::new(&flags, &jobs, dir, crate::words::redacted(words), Vec::new())?;
    search.index.save(&search.dir).map_err(|e| CliError::system(format!("cannot write {}: {e}", search.dir.join(SLO_FILE).display())))?;
    search.run()
}

/// A fio job file's `latency_target` (`storbench run --fio`): the closed-loop
/// search over queue depth up to the job's iodepth, each depth probed for
/// latency_window, judged at latency_percentile: fio's question, answered
/// as `storbench slo --closed-loop` answers it.
pub(crate) fn latency_target(
    source: &crate::cli::JobSource,
    jobs: &crate::words::JobArgs,
    specs: &[JobSpec],
    words: &[String],
) -> Result<i32, CliError> {
    let target = same_target(specs)?;
    let flags = closed_loop_flags(source.clone(), specs, target);
    let dir = source.results_dir.clone().unwrap_or_else(output::default_dir);
    let search = Search::new(&flags, jobs, dir, crate::words::redacted(words), Vec::new())?;
    search.index.save(&search.dir).map_err(|e| CliError::system(format!("cannot write {}: {e}", search.dir.join(SLO_FILE).display())))?;
    search.run()
}

/// Every job of a file asks one latency target (one search covers them all).
fn same_target(specs: &[JobSpec]) -> Result<storbench_workload::LatencyTarget, CliError> {
    let target = specs.iter().find_map(|s| s.latency_target).ok_or_else(|| CliError::usage("no job sets latency_target"))?;
    if specs.iter().any(|s| s.latency_target != Some(target)) {
        return Err(CliError::usage(
            "latency_target: every job of the file must ask the same (target, window and percentile): one search covers them all",
        ));
    }
    // The search probes each depth for a window and judges a percentile;
    // fio's every-I/O rule and endless adjusting are the in-job ramp's.
    if target.percentile >= 100.0 || target.keep_adjusting {
        return Err(CliError::usage(
            "latency_target with latency_percentile=100 (fio's default) or latency_run is not searched: give latency_percentile \
             below 100 (e.g. 99.9), or run the file with `storbench fio`, which ramps the depth inside the job as fio does",
        ));
    }
    Ok(target)
}

/// fio's latency_target question as slo's closed-loop search: each depth
/// up to the jobs' iodepth probed for latency_window, judged at
/// latency_percentile.
fn closed_loop_flags(source: crate::cli::JobSource, specs: &[JobSpec], target: storbench_workload::LatencyTarget) -> SloFlags {
    SloFlags {
        source,
        latency: Some(format!("p{}={}ns", target.percentile, target.target_ns)),
        probe_time: target.window_ns.map_or(Duration::from_secs(5), Duration::from_nanos),
        max_probes: 20,
        precision: 2.0,
        closed_loop: true,
        max_iodepth: specs.iter().map(|s| s.iodepth).max().unwrap_or(1),
        resume: None,
        stop_if: Vec::new(),
    }
}

/// `--resume DIR`: the saved command line again; the probes that finished
/// answer for themselves (the search takes the same steps up to them), the
/// rest run.
fn resume(dir: &std::path::Path, flags: &SloFlags, words: &[String]) -> Result<i32, CliError> {
    let extra: Vec<&String> =
        words.iter().filter(|w| !matches!(w.as_str(), "--quiet" | "--resume") && !w.starts_with("--resume=")).collect();
    if extra.len() > 1 || extra.first().is_some_and(|w| std::path::Path::new(w.as_str()) != dir) {
        return Err(CliError::usage(
            "--resume DIR takes the search's own command line from DIR/slo.json: give only --resume DIR (and --quiet)",
        ));
    }
    let index = SloIndex::load(dir).map_err(CliError::usage)?;
    if index.command.is_empty() {
        return Err(CliError::usage(format!(
            "{} was written by an older storbench that did not keep its command line: start the search again",
            dir.join(SLO_FILE).display()
        )));
    }
    if index.command.iter().any(|w| w.contains(crate::words::REDACTED)) {
        return Err(CliError::usage(
            "this search had secrets on its command line, which the index does not keep: give them through the environment \
             (AWS_SECRET_ACCESS_KEY, ST_KEY, OS_PASSWORD...) and start the search again",
        ));
    }
    let (mut saved, jobs): (SloFlags, crate::words::JobArgs) = match crate::parse_with_jobs("slo", &index.command)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    saved.source.quiet |= flags.source.quiet;
    say!("storbench: resuming the SLO search in {}: {} finished probes kept", dir.display(), index.probes.len());
    Search::new(&saved, &jobs, dir.to_path_buf(), index.command, index.probes)?.run()
}

/// `p99=2ms` -> (Some(99), 2_000_000); `mean=2ms` (or `mean<2ms`) -> (None, 2_000_000).
pub(crate) fn parse_bound(flag: &str, v: &str) -> Result<(Option<f64>, u64), CliError> {
    let bad = || CliError::usage(format!("{flag} {v}: give PERCENTILE=BOUND or mean=BOUND, e.g. p99=2ms, p99.9=500us or mean=1ms"));
    let (p, b) = v.split_once(['=', '<']).ok_or_else(bad)?;
    let p = match p.trim() {
        "mean" | "avg" => None,
        p => {
            let p: f64 = p.trim_start_matches(['p', 'P']).parse().map_err(|_| bad())?;
            if !(p > 0.0 && p < 100.0) {
                return Err(bad());
            }
            Some(p)
        }
    };
    let bound = storbench_workload::units::parse_duration(b.trim(), Duration::from_millis(1)).map_err(|_| bad())?;
    if bound.is_zero() {
        return Err(bad());
    }
    Ok((p, bound.as_nanos() as u64))
}

/// What a probe runs at.
#[derive(Clone, Copy)]
enum Load {
    /// Closed loop at the jobs' own queue depth: their capacity.
    Capacity,
    /// A fixed rate (per job, shared by its workers), open loop.
    Rate(f64),
    /// Closed loop at this queue depth.
    Depth(u32),
}

impl Load {
    fn rate(self) -> Option<f64> {
        match self {
            Load::Rate(r) => Some(r),
            _ => None,
        }
    }
    fn depth(self) -> Option<u32> {
        match self {
            Load::Depth(d) => Some(d),
            _ => None,
        }
    }
}

struct Search<'a> {
    flags: &'a SloFlags,
    dir: PathBuf,
    specs: Vec<JobSpec>,
    notes: Vec<String>,
    /// Fleet and metrics endpoint, one for every probe.
    shared: RunSetup,
    index: SloIndex,
    code: i32,
    /// A closed-loop probe's runtime when --probe-time gave too few operations.
    longer: Option<Duration>,
    /// Probes an earlier attempt of this search finished, in order (`--resume`).
    done: std::collections::VecDeque<Probe>,
    /// Each job's workers over the whole fleet (on one machine, its numjobs).
    workers: Vec<u32>,
    /// `--stop-if`: each probe's hosts judged against them.
    ceilings: crate::ceilings::Watch,
}

impl<'a> Search<'a> {
    /// A search of `flags`' jobs in `dir`, with `done` the probes an earlier
    /// attempt finished (replayed in order before anything runs).
    fn new(
        flags: &'a SloFlags,
        jobs: &crate::words::JobArgs,
        dir: PathBuf,
        command: Vec<String>,
        done: Vec<Probe>,
    ) -> Result<Search<'a>, CliError> {
        if jobs.jobs.is_empty()
            && jobs.global.is_empty()
            && flags.source.job_file.is_none()
            && flags.source.job.is_none()
            && flags.source.fio.is_none()
        {
            return Err(CliError::usage("give the jobs to search: a job file, --fio FILE, or options and --name jobs"));
        }
        let (specs, notes) = resolve_specs(&flags.source, jobs, flags.source.suite.is_some())?;
        Search::of_specs(flags, specs, notes, dir, command, done)
    }

    /// A search of jobs already read (the fio drop-in's).
    fn of_specs(
        flags: &'a SloFlags,
        specs: Vec<JobSpec>,
        notes: Vec<String>,
        dir: PathBuf,
        command: Vec<String>,
        done: Vec<Probe>,
    ) -> Result<Search<'a>, CliError> {
        let (percentile, bound_ns) = parse_bound("--latency", flags.latency.as_deref().unwrap_or_default())?;
        crate::ceilings::check(&flags.stop_if, &flags.source)?;
        let shared = RunSetup::from_source(&flags.source)?;
        if done.is_empty() {
            output::check_writable(&dir, flags.source.force)?;
            output::create(&dir)?;
        }
        let index = SloIndex {
            version: SLO_VERSION,
            command,
            percentile: percentile.unwrap_or(0.0),
            bound_ns,
            mean: percentile.is_none(),
            probes: Vec::new(),
            answer: None,
            answer_iodepth: None,
            confirmed: false,
            closed_loop: flags.closed_loop,
            agents: None,
            stopped: None,
            stop_if: flags.stop_if.iter().map(|c| c.to_string()).collect(),
        };
        // A rate is the fleet's: shared by every worker of the job on every agent.
        let (agents, workers) = match &shared.fleet {
            Some(f) => f.workers(&specs).map(|(n, w)| (Some(n as u32), w))?,
            None => (None, specs.iter().map(|s| s.numjobs.max(1)).collect()),
        };
        let index = SloIndex { agents, ..index };
        let ceilings = crate::ceilings::Watch::new(flags.stop_if.clone());
        // The search answers a latency_target itself: each probe holds its
        // depth rather than ramp inside the job as fio does.
        let specs = specs.into_iter().map(|s| JobSpec { latency_target: None, ..s }).collect();
        Ok(Search { flags, dir, specs, notes, shared, index, code: 0, longer: None, done: done.into(), workers, ceilings })
    }

    fn run(self) -> Result<i32, CliError> {
        if self.flags.closed_loop {
            self.go_closed()
        } else {
            self.go()
        }
    }

    fn go(mut self) -> Result<i32, CliError> {
        let scope = storbench_runner::interrupt::Scope::begin();
        let Some(capacity) = self.probe(Load::Capacity)? else { return self.end(&scope) };
        // Each probed rate applies to each job: bisect below one job's share.
        let (mut lo, mut hi) = (0.0f64, capacity.achieved_iops / self.jobs_counted(&capacity) as f64);
        if hi <= 0.0 {
            self.index.stopped = Some("the closed-loop probe completed no operation".into());
            return self.end(&scope);
        }
        let mut rate = hi / 2.0;
        while self.index.probes.len() < self.flags.max_probes as usize && !scope.interrupted() {
            let Some(p) = self.probe(Load::Rate(rate))? else { break };
            if p.pass {
                lo = rate;
                self.index.answer = Some(lo);
            } else {
                hi = rate;
            }
            self.save()?;
            if hi - lo <= self.flags.precision / 100.0 * hi {
                break;
            }
            rate = (lo + hi) / 2.0;
        }
        self.confirm(&scope)?;
        self.end(&scope)
    }

    /// Probe the answer again: near a device's knee one run can pass and
    /// the next fail (measured on this VM's disk: p99 0.35 ms in the search,
    /// 1.1-3.2 ms in three re-runs at the same rate). While it does not
    /// hold, the answer falls to the next lower rate that passed and has not
    /// failed since; at most three confirmation probes.
    fn confirm(&mut self, scope: &storbench_runner::interrupt::Scope) -> Result<(), CliError> {
        for _ in 0..3 {
            let Some(a) = self.index.answer else { return Ok(()) };
            if scope.interrupted() {
                return Ok(());
            }
            say!("storbench: SLO: confirming {} IOPS", count(a));
            let Some(p) = self.probe(Load::Rate(a))? else { return Ok(()) };
            if p.pass {
                self.index.confirmed = true;
                return self.save();
            }
            let failed: Vec<f64> = self.index.probes.iter().filter(|x| !x.pass).filter_map(|x| x.rate).collect();
            let passed = self.index.probes.iter().filter(|x| x.pass).filter_map(|x| x.rate);
            self.index.answer =
                passed.filter(|r| *r < a && !failed.contains(r)).fold(None, |best: Option<f64>, r| Some(best.map_or(r, |b| b.max(r))));
            self.save()?;
        }
        Ok(())
    }

    /// The deepest queue (closed loop) whose percentile meets the bound:
    /// doubling from 1 up to `--max-iodepth`, then bisecting.
    fn go_closed(mut self) -> Result<i32, CliError> {
        let scope = storbench_runner::interrupt::Scope::begin();
        let (mut lo, mut hi) = (0u32, None::<u32>);
        let mut depth = 1u32;
        while self.index.probes.len() < self.flags.max_probes as usize && !scope.interrupted() {
            let Some(mut p) = self.probe(Load::Depth(depth))? else { break };
            if let Some(longer) = self.longer_for(&p) {
                // Too few operations to judge: once more, long enough.
                self.longer = Some(longer);
                let again = self.probe(Load::Depth(depth))?;
                self.longer = None;
                let Some(q) = again else { break };
                p = q;
            }
            if p.pass {
                lo = depth;
                (self.index.answer, self.index.answer_iodepth) = (Some(p.achieved_iops), Some(depth));
            } else {
                hi = Some(depth);
            }
            self.save()?;
            depth = match hi {
                None if depth >= self.flags.max_iodepth => break,
                None => (depth * 2).min(self.flags.max_iodepth),
                Some(h) if h - lo <= 1 => break,
                Some(h) => (lo + h) / 2,
            };
        }
        self.end(&scope)
    }

    /// How long a closed-loop probe that saw too few operations must run.
    fn longer_for(&self, p: &Probe) -> Option<Duration> {
        let needed = self.needed_samples();
        if p.samples >= needed || p.achieved_iops <= 0.0 || self.longer.is_some() {
            return None;
        }
        Some(Duration::from_secs_f64((needed as f64 / p.achieved_iops * 1.2).ceil()).min(LONGEST_PROBE))
    }

    fn end(mut self, scope: &storbench_runner::interrupt::Scope) -> Result<i32, CliError> {
        if scope.interrupted() {
            self.index.stopped.get_or_insert_with(|| "interrupted".into());
            self.code = self.code.max(EXIT_INTERRUPTED);
        }
        self.save()?;
        out_part!("{}", self.render());
        say!("storbench: SLO search results in {} ({SLO_FILE})", self.dir.display());
        Ok(self.code)
    }

    fn save(&self) -> Result<(), CliError> {
        self.index.save(&self.dir).map_err(|e| CliError::system(format!("cannot write {}: {e}", self.dir.join(SLO_FILE).display())))
    }

    /// One probe; `None` back when it was interrupted. A probe an earlier
    /// attempt finished at this step, with this load, is taken as it was.
    fn probe(&mut self, load: Load) -> Result<Option<Probe>, CliError> {
        if let Some(p) = self.replayed(load) {
            return Ok(Some(p));
        }
        let p = self.run_probe(load)?;
        if p.is_some() {
            self.save()?;
        }
        Ok(p)
    }

    /// The earlier attempt's probe at this step, if it ran this load (the
    /// search is deterministic, so it did unless the store answered
    /// differently than recorded: then the rest runs afresh).
    fn replayed(&mut self, load: Load) -> Option<Probe> {
        let p = self.done.front()?;
        let same = match load {
            Load::Capacity => p.rate.is_none() && p.iodepth.is_none(),
            Load::Rate(r) => p.rate == Some(r),
            Load::Depth(d) => p.iodepth == Some(d),
        };
        if !same {
            self.done.clear();
            return None;
        }
        let p = self.done.pop_front()?;
        say!("storbench: SLO probe {}: done before ({})", self.index.probes.len() + 1, p.dir);
        self.index.probes.push(p.clone());
        Some(p)
    }

    fn run_probe(&mut self, load: Load) -> Result<Option<Probe>, CliError> {
        let n = self.index.probes.len() + 1;
        let (specs, runtime) = self.probe_specs(load)?;
        // Said when the probe runs longer than --probe-time to see enough operations.
        let longer = match runtime > self.flags.probe_time {
            true => format!("{}s, for {} operations", runtime.as_secs(), self.needed_samples()),
            false => String::new(),
        };
        let (name, what) = match load {
            Load::Capacity => (format!("{n:02}_closed-loop"), "closed loop (capacity)".to_string()),
            Load::Rate(r) => (format!("{n:02}_rate-{r:.0}"), format!("{} IOPS", count(r))),
            Load::Depth(d) => (format!("{n:02}_iodepth-{d}"), format!("closed loop at iodepth {d}")),
        };
        let rate = load.rate();
        say!("storbench: SLO probe {n}: {what}{}", if longer.is_empty() { String::new() } else { format!(" ({longer})") });
        let params =
            BTreeMap::from([("step".to_string(), n.to_string()), ("slo.rate".into(), rate.map_or("closed".into(), |r| format!("{r:.0}")))]);
        output::set_aside(&self.dir.join(&name))?;
        let setup = RunSetup {
            notes: self.notes.clone(),
            results_dir: Some(self.dir.join(&name)),
            parameters: params,
            fleet: self.shared.fleet.clone(),
            metrics: self.shared.metrics.clone(),
            replace: false,
            logs_outside: false,
            no_telemetry: self.shared.no_telemetry,
            watch: self.shared.watch.clone(),
            disrupt: self.shared.disrupt.clone(),
            allow_exec: self.shared.allow_exec,
            network: self.shared.network.clone(),
        };
        let t0 = Instant::now();
        let (result, dir) = match execute(specs, setup, &mut progress::Live::new(self.flags.source.quiet)) {
            Ok(r) => r,
            Err(e) => {
                // The search stops here, its index and table still written.
                say!("storbench: SLO probe {n} could not run: {}", e.message);
                self.code = self.code.max(e.code);
                if e.code != EXIT_INTERRUPTED {
                    self.index.stopped = Some(format!("probe {n} could not run: {}", e.message));
                }
                return Ok(None);
            }
        };
        self.code = self.code.max(finish(&dir, &result, None)?.min(EXIT_IO_ERRORS));
        if result.interrupted {
            return Ok(None);
        }
        let capped = runtime >= LONGEST_PROBE;
        let mut probe = Probe { iodepth: load.depth(), ..self.judge(&result, rate, name, t0.elapsed().as_secs_f64(), longer, capped) };
        // A rate the store meets only by running the hosts over a ceiling
        // is not one the search may answer with.
        if let Some(why) = self.ceilings.judge(&result, "the probe fails") {
            if probe.pass {
                probe.pass = false;
                probe.note = format!("over {why}");
            }
        }
        say!(
            "storbench: SLO probe {n}: {} IOPS, {} {} over {} operations: {}",
            count(probe.achieved_iops),
            self.index.statistic(),
            latency(probe.value_ns),
            probe.samples,
            if probe.pass { "meets the bound".to_string() } else { format!("does not ({})", probe.note) }
        );
        self.index.probes.push(probe.clone());
        Ok(Some(probe))
    }

    /// The jobs at `rate` (each job's workers share it), time based, long
    /// enough for the percentile to rest on 100 operations beyond it.
    fn probe_specs(&self, load: Load) -> Result<(Vec<JobSpec>, Duration), CliError> {
        let rate = load.rate();
        let mut runtime = self.longer.unwrap_or(self.flags.probe_time);
        if let Some(r) = rate {
            let want = Duration::from_secs_f64((self.needed_samples() as f64 / r * 1.2).ceil()).min(LONGEST_PROBE);
            runtime = runtime.max(want);
        }
        let mut out = Vec::with_capacity(self.specs.len());
        for (s, workers) in self.specs.iter().zip(&self.workers) {
            let mut s = s.clone();
            let set =
                |s: &mut JobSpec, k: &str, v: &str| apply_option(s, k, v).map_err(|e| CliError::usage(format!("job '{}': {e}", s.name)));
            set(&mut s, "time_based", "1")?;
            set(&mut s, "runtime", &format!("{}ms", runtime.as_millis()))?;
            if let Some(r) = rate {
                let per_worker = r / f64::from(*workers);
                set(&mut s, "rate_iops", &per_worker.to_string())?;
                if !s.given.has("rate_process") {
                    set(&mut s, "rate_process", "poisson")?;
                }
            } else {
                s.rate = None;
            }
            if let Some(d) = load.depth() {
                set(&mut s, "iodepth", &d.to_string())?;
            }
            out.push(s);
        }
        Ok((out, runtime))
    }

    /// At least 100 operations beyond the percentile (10,000 for p99; 100
    /// for a mean).
    fn needed_samples(&self) -> u64 {
        (100.0 / (1.0 - self.index.percentile / 100.0)).ceil() as u64
    }

    fn judge(&self, r: &RunResult, rate: Option<f64>, dir: String, seconds: f64, longer: String, capped: bool) -> Probe {
        let mut all = LatencyHistogram::new();
        for o in r.jobs.iter().flat_map(|j| &j.ops) {
            all.add(&o.histogram);
        }
        let value_ns = self.index.value_of(&all);
        let samples = all.count();
        // Groups ran one after another: each is judged on its own jobs' rate,
        // and the figure kept is the group's that kept up least per job.
        let (achieved, group) = slowest_group(r);
        let jobs = group.as_ref().map_or(self.specs.len(), |g| g.jobs as usize);
        let wanted = rate.map(|r| r * jobs as f64);
        let (pass, note) = if samples < self.needed_samples() && !capped {
            (false, format!("only {samples} operations, {} needed to judge {}", self.needed_samples(), self.index.statistic()))
        } else if wanted.is_some_and(|w| achieved < 0.95 * w) {
            (false, format!("kept up with only {} of {} IOPS", count(achieved), count(wanted.unwrap_or(0.0))))
        } else if value_ns > self.index.bound_ns {
            (false, format!("{} {} > {}", self.index.statistic(), latency(value_ns), latency(self.index.bound_ns)))
        } else if samples < self.needed_samples() {
            (true, format!("judged on {samples} operations: the longest probe ({} s) saw no more", LONGEST_PROBE.as_secs()))
        } else {
            (true, longer)
        };
        Probe { rate, iodepth: None, dir, achieved_iops: achieved, value_ns, samples, seconds, pass, note, group }
    }

    /// The jobs a probe's IOPS figure counts: all of them, or in a run of
    /// several groups the one group it is of.
    fn jobs_counted(&self, p: &Probe) -> usize {
        p.group.as_ref().map_or(self.specs.len(), |g| g.jobs as usize).max(1)
    }

    fn render(&self) -> String {
        let stat = self.index.statistic();
        let mut out = format!("{:>12}  {:>12}  {:>10}  {:>10}  verdict\n", "rate", "IOPS", format!("{stat}"), "samples");
        for pr in &self.index.probes {
            let rate = storbench_report::fmt::probe_load(pr);
            let mut verdict = if pr.pass { "meets".to_string() } else { format!("fails: {}", pr.note) };
            if let Some(g) = &pr.group {
                verdict += &format!(" (IOPS of {}, the slowest per job of {} groups run one after another)", g.label, g.of);
            }
            out += &format!("{rate:>12}  {:>12}  {:>10}  {:>10}  {verdict}\n", count(pr.achieved_iops), latency(pr.value_ns), pr.samples);
        }
        let jobs: Vec<&str> = self.specs.iter().map(|s| s.name.as_str()).collect();
        let bound = latency(self.index.bound_ns);
        let bound = match self.index.stop_if.is_empty() {
            true => bound,
            false => format!("{bound} and no host over {}", self.index.stop_if.join(", ")),
        };
        if self.index.closed_loop {
            out += &match (self.index.answer, self.index.answer_iodepth) {
                (Some(a), Some(d)) => {
                    format!(
                        "max IOPS of {} with {stat} <= {bound}, closed loop: {}{} at iodepth {d}\n",
                        jobs.join(", "),
                        count(a),
                        self.index.per_agent(a, count)
                    )
                }
                _ => format!("no probed queue depth of {} met {stat} <= {bound}\n", jobs.join(", ")),
            };
            out += "caveat: closed loop counts latency from each I/O's issue, so the queueing a fixed arrival rate would meet is \
                    not in it (coordinated omission); without --closed-loop the search answers for a fixed rate\n";
            return out;
        }
        match self.index.answer {
            Some(a) => {
                let next = self
                    .index
                    .probes
                    .iter()
                    .filter(|x| x.rate.is_some_and(|r| r > a) && !x.pass)
                    .min_by(|x, y| x.rate.partial_cmp(&y.rate).unwrap_or(std::cmp::Ordering::Equal));
                let closed = self.index.probes.iter().find(|x| x.rate.is_none());
                let next = match (next, closed) {
                    (Some(n), _) => format!(" (next probe {}: {stat} {})", count(n.rate.unwrap_or(0.0)), latency(n.value_ns)),
                    (None, Some(c)) => format!(" (closed loop, {} IOPS: {stat} {})", count(c.achieved_iops), latency(c.value_ns)),
                    _ => String::new(),
                };
                let held = if self.index.confirmed { ", held when probed again" } else { ", NOT confirmed by a second probe" };
                let per_job = if jobs.len() > 1 { " (each job)" } else { "" };
                let agents = self.index.per_agent(a, count);
                out += &format!("max IOPS of {}{per_job} with {stat} <= {bound}: {}{agents}{held}{next}\n", jobs.join(", "), count(a));
            }
            None => out += &format!("no probed rate of {} met {stat} <= {bound}\n", jobs.join(", ")),
        }
        if let Some(s) = &self.index.stopped {
            out += &format!("search stopped early: {s}\n");
        }
        out
    }
}

/// A probe run's IOPS: every job's added up when they ran together (one
/// group); of several groups (one after another, never added up) the
/// figure of the one whose jobs kept up least, named.
fn slowest_group(r: &RunResult) -> (f64, Option<ProbeGroup>) {
    let mut ids: Vec<u32> = r.jobs.iter().map(|j| j.group).collect();
    ids.sort_unstable();
    ids.dedup();
    let iops = |g: u32| r.jobs.iter().filter(|j| j.group == g).flat_map(|j| &j.ops).map(|o| o.iops).sum::<f64>();
    let jobs = |g: u32| r.jobs.iter().filter(|j| j.group == g).count().max(1);
    if ids.len() <= 1 {
        return (r.jobs.iter().flat_map(|j| &j.ops).map(|o| o.iops).sum(), None);
    }
    let g = ids.iter().copied().min_by(|a, b| (iops(*a) / jobs(*a) as f64).total_cmp(&(iops(*b) / jobs(*b) as f64))).unwrap_or(0);
    let names: Vec<&str> = r.jobs.iter().filter(|j| j.group == g).map(|j| j.name.as_str()).collect();
    let group = ProbeGroup { label: format!("group {g} ({})", names.join(", ")), jobs: jobs(g) as u32, of: ids.len() as u32 };
    (iops(g), Some(group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_as_percentile_and_time() {
        assert_eq!(parse_bound("--latency", "p99=2ms").unwrap(), (Some(99.0), 2_000_000));
        assert_eq!(parse_bound("--latency", "p99.9=500us").unwrap(), (Some(99.9), 500_000));
        assert_eq!(parse_bound("--latency", "mean<2ms").unwrap(), (None, 2_000_000));
        assert_eq!(parse_bound("--latency", "mean=500us").unwrap(), (None, 500_000));
        for bad in ["p99", "p100=1ms", "x=1ms", "p99=0", "p99=fast", "mean=0", "means=1ms"] {
            assert!(parse_bound("--latency", bad).is_err(), "{bad}");
        }
    }
}
