//! One run from job specs to a results directory: plan (nothing touched on
//! bad input), prepare, run, clean up, write every format. Every command that
//! runs jobs goes through here; each call is its own run, with its own
//! Ctrl-C scope.

use crate::error::*;
use crate::journal::RunJournal;
use crate::output;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storbench_engine::files::diskstats::DiskSnapshot;
use storbench_fleet::prometheus::Registry;
use storbench_model::telemetry::NetworkBaseline;
use storbench_model::{RunResult, RunSet, Warning};
use storbench_runner::agent::Tapped;
use storbench_runner::interrupt::Scope;
use storbench_runner::{build_plan, local_agent, Observer};
use storbench_workload::JobSpec;

/// What a run is, besides its jobs.
#[derive(Default)]
pub struct RunSetup {
    /// Notes about how the jobs were read (printed first, kept in the summary).
    pub notes: Vec<String>,
    /// Where the results go (default: a new storbench-results/<time>).
    pub results_dir: Option<PathBuf>,
    /// What produced the run (a compatibility tool's arguments, a ramp step).
    pub parameters: BTreeMap<String, String>,
    /// Run on these agents instead of this machine.
    pub fleet: Option<std::rc::Rc<crate::fleet::FleetSetup>>,
    /// Live figures for Prometheus (`--prometheus`), for every run of the command.
    pub metrics: Option<std::rc::Rc<storbench_fleet::prometheus::Endpoint>>,
    /// Replace the results of an earlier run in `results_dir` (`--force`).
    pub replace: bool,
    /// fio's log files are written where fio writes them (the drop-in), not
    /// in the results directory, so their prefixes may lead anywhere.
    pub logs_outside: bool,
    /// Leave the hosts unsampled (`--no-telemetry`).
    pub no_telemetry: bool,
    /// Hosts that only measure themselves during each run (`--watch`).
    pub watch: Option<std::rc::Rc<crate::watch::WatchSetup>>,
    /// Faults to inject and the storage cluster to watch (`--fault`, `--watch-ceph`).
    pub disrupt: Option<std::rc::Rc<crate::disrupt::DisruptSetup>>,
    /// Jobs may run programs (`--allow-exec`: fio's exec engine).
    pub allow_exec: bool,
    /// What `baseline --network` measured, each client NIC judged by it.
    pub network: Option<std::rc::Rc<storbench_model::telemetry::NetworkBaseline>>,
}

impl RunSetup {
    /// The fleet and metrics endpoint a command's job source asks for (one
    /// each for all its runs), with the rest left to fill in.
    pub fn from_source(source: &crate::cli::JobSource) -> Result<RunSetup, CliError> {
        let fleet = source.fleet.setup()?.map(std::rc::Rc::new);
        let watch = crate::watch::WatchSetup::of(&source.fleet, source.no_telemetry)?.map(std::rc::Rc::new);
        let disrupt = crate::disrupt::DisruptSetup::of(source)?.map(std::rc::Rc::new);
        crate::watch::check_hosts(watch.as_deref(), disrupt.as_deref())?;
        let metrics = match source.prometheus {
            Some(addr) => {
                let e = storbench_fleet::prometheus::serve(addr).map_err(CliError::usage)?;
                say!("storbench: live figures for Prometheus on http://{}/metrics", e.address);
                Some(std::rc::Rc::new(e))
            }
            None => None,
        };
        let network = network_baseline(source)?.map(std::rc::Rc::new);
        Ok(RunSetup {
            fleet,
            metrics,
            network,
            results_dir: source.results_dir.clone(),
            replace: source.force,
            no_telemetry: source.no_telemetry,
            watch,
            disrupt,
            allow_exec: source.allow_exec,
            ..RunSetup::default()
        })
    }
}

/// `--network-baseline DIR`: a `storbench baseline` run that measured the
/// network, read with the flags (exit 2 naming what is wrong).
fn network_baseline(source: &crate::cli::JobSource) -> Result<Option<NetworkBaseline>, CliError> {
    let Some(dir) = &source.network_baseline else { return Ok(None) };
    if source.no_telemetry {
        return Err(CliError::usage("--network-baseline and --no-telemetry: the NICs are judged by the run's telemetry; drop one of them"));
    }
    let run = crate::commands::efficiency::baseline_run(dir, "--network-baseline")?;
    let b = NetworkBaseline::from_run(&run);
    if b.links.is_empty() {
        return Err(CliError::usage(format!(
            "--network-baseline {}: that baseline measured no network; measure it with `storbench baseline --network AGENT,...`",
            dir.display()
        )));
    }
    Ok(Some(b))
}

/// What watches a run besides its workers: live figures for Prometheus,
/// and whether the hosts are sampled.
pub struct Watching {
    pub metrics: Option<Arc<Registry>>,
    pub telemetry: bool,
    /// Hosts that only measure themselves (`--watch`).
    pub watch: Option<std::rc::Rc<crate::watch::WatchSetup>>,
    /// Faults and the cluster watched beside the run.
    pub disrupt: Option<std::rc::Rc<crate::disrupt::DisruptSetup>>,
}

impl Watching {
    /// The watched hosts reached and greeted, each process fault checked
    /// against its host's monitor (exit 2 naming the fix), before anything
    /// is prepared.
    pub fn connect(&self, scope: &Scope) -> Result<Option<storbench_fleet::watch::Watchers>, CliError> {
        let Some(w) = self.watch.as_deref() else { return Ok(None) };
        let watchers = w.connect(scope)?;
        for f in self.disrupt.iter().flat_map(|d| &d.faults) {
            watchers
                .check_fault(&f.action)
                .map_err(|e| CliError::usage(format!("--fault {}s:{}: {e}", f.at.as_secs_f64(), f.action.words())))?;
        }
        Ok(Some(watchers))
    }
}

/// A job that runs a program (fio's exec engine) runs one only with
/// `--allow-exec`, and only on this machine: a job file is not a licence to
/// start programs, and an agent runs no commands for whoever holds the token.
fn check_programs(specs: &[JobSpec], setup: &RunSetup) -> Result<(), CliError> {
    let runs = |s: &JobSpec| storbench_engine::find(&s.ioengine).is_some_and(|f| f.name() == storbench_engine::exec::NAME);
    let Some((job, e)) = specs.iter().filter(|s| runs(s)).find_map(|s| s.kind.program().map(|e| (&s.name, e))) else { return Ok(()) };
    if setup.fleet.is_some() {
        return Err(CliError::usage(format!(
            "job '{job}' runs a program (ioengine=exec), which agents do not do; run it without --agents"
        )));
    }
    if !setup.allow_exec {
        return Err(CliError::usage(format!(
            "job '{job}' runs {} on this machine (ioengine=exec); pass --allow-exec to let it",
            storbench_workload::shown(&e.program)
        )));
    }
    Ok(())
}

/// Plan, prepare, run and clean up. Bad input is reported before anything
/// is touched; the results directory is written by [`finish`].
pub fn execute(mut specs: Vec<JobSpec>, setup: RunSetup, observer: &mut dyn Observer) -> Result<(RunResult, PathBuf), CliError> {
    let dir = setup.results_dir.clone().unwrap_or_else(output::default_dir);
    place_unit_logs(&mut specs, &setup, &dir)?;
    check_programs(&specs, &setup)?;
    let plan = build_plan(specs.clone())?;
    crate::disrupt::check(setup.disrupt.as_deref(), &specs)?;
    output::check_writable(&dir, setup.replace)?;
    if !setup.logs_outside {
        output::check_log_prefixes(&specs)?;
    }
    for n in &setup.notes {
        say!("storbench: {n}");
    }
    // From here on, Ctrl-C stops this run (and only this run) gracefully.
    let scope = Scope::begin();
    // The results directory exists before any target is touched, and the
    // journal of what the run may make is in it before anything is made.
    let made = output::create(&dir)?;
    let planned = if setup.fleet.is_some() { Vec::new() } else { storbench_runner::journal::planned(&plan) };
    let mut journal = match RunJournal::begin(&dir, planned) {
        Ok(j) => j,
        Err(e) => {
            output::remove_if_empty(&dir, made);
            return Err(e);
        }
    };
    // The series is written as the run goes: whatever happens later, the
    // seconds measured so far are on disk.
    let mut tee = SeriesTee::open(&dir, observer);
    let watching = Watching {
        metrics: setup.metrics.as_ref().map(|m| m.registry.clone()),
        telemetry: !setup.no_telemetry,
        watch: setup.watch.clone(),
        disrupt: setup.disrupt.clone(),
    };
    let ran = match &setup.fleet {
        Some(fleet) => crate::fleet::run(fleet, &specs, plan, &mut tee, &scope, watching, &mut journal),
        None => run_here(plan, &mut tee, &scope, watching, &mut journal),
    };
    let mut result = match ran {
        Ok(r) => r,
        Err(e) => {
            drop(tee);
            let _ = std::fs::remove_file(dir.join("series.csv"));
            // A refused run writes nothing; one that made something before
            // it failed keeps its journal, and says so.
            if !journal.abandon() {
                say!(
                    "storbench: what the run made before it failed is listed in {}: `storbench cleanup {}` removes it",
                    journal.path().display(),
                    dir.display()
                );
            }
            output::remove_if_empty(&dir, made);
            return Err(e);
        }
    };
    if !journal.doc().clean() {
        result.notes.push(format!(
            "what this run made and did not remove is listed in {}: `storbench cleanup {}` removes it",
            journal.path().display(),
            dir.display()
        ));
    }
    if let (Some(b), Some(t)) = (&setup.network, &result.telemetry) {
        result.warnings.extend(storbench_runner::telemetry::rules::against_network(t, b));
    }
    // The set-up's notes first, then what the run itself noted.
    result.notes = setup.notes.into_iter().chain(std::mem::take(&mut result.notes)).collect();
    result.parameters = setup.parameters;
    result.command = crate::words::redacted(&crate::words::command_line());
    Ok((result, dir))
}

/// Where the workers stream fio's per-I/O logs (`log_avg_msec=0`): the
/// results directory, or for the drop-in the current directory as fio does;
/// each job's first file number counts the workers of the jobs before it.
/// Agents on other machines cannot write here, so a fleet is refused.
fn place_unit_logs(specs: &mut [JobSpec], setup: &RunSetup, dir: &Path) -> Result<(), CliError> {
    let base = match setup.logs_outside {
        true => std::env::current_dir().map_err(|e| CliError::system(format!("the current directory: {e}")))?,
        false => std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
    };
    let mut first = 1u32;
    for s in specs.iter_mut() {
        if s.logs.per_io() {
            if setup.fleet.is_some() {
                return Err(CliError::usage(format!(
                    "job '{}': per-I/O logs (write_*_log with log_avg_msec=0) are written on this machine only; give log_avg_msec=N (ms per line) to run on agents",
                    s.name
                )));
            }
            s.logs.unit = Some(storbench_workload::UnitLogs { dir: base.clone(), first });
        }
        // Every worker of the job has its file: numjobs on each of its volumes.
        first = first.saturating_add(s.workers());
    }
    Ok(())
}

/// Prepare the targets on this machine, run, clean up; the journal hears
/// of each job's targets as they are made, and of what cleaning up left.
fn run_here(
    plan: storbench_runner::Plan,
    observer: &mut dyn Observer,
    scope: &Scope,
    watching: Watching,
    journal: &mut RunJournal,
) -> Result<RunResult, CliError> {
    let dir = journal.path().parent().map(Path::to_path_buf).unwrap_or_default();
    // A watched host that cannot be used stops the run before anything is made.
    let mut watchers = watching.connect(scope)?;
    let mut on_ready = |j: &storbench_runner::ReadyJob| journal.set(j.share.job as usize, storbench_runner::journal::prepared(j));
    let mut prepared = plan.prepare(&|| scope.interrupted(), &mut on_ready)?;
    prepared.telemetry = watching.telemetry;
    say_held_targets(&prepared);
    let disks = DiskSnapshot::take(file_paths(&prepared));
    let configs = prepared.jobs.iter().map(|j| &*j.config);
    let cluster = match crate::disrupt::cluster(watching.disrupt.as_deref(), watching.telemetry, configs) {
        Ok(c) => c,
        Err(e) => {
            // Nothing ran: what was made for the run goes before the error.
            let cleaned = prepared.cleanup(&|_| Some(0), &|| scope.level() >= 2, Some(&dir));
            journal.finish(&|i| cleaned.left.get(i).copied().unwrap_or(false));
            return Err(e);
        }
    };
    let mut link = local_agent(&prepared);
    let tap = watching.metrics.clone().map(|r| r as Arc<dyn storbench_runner::agent::Tap>);
    let mut result = match watching.metrics {
        Some(registry) => {
            registry.run_starts(prepared.jobs.iter().map(|j| (j.share.job, j.name())));
            let mut tapped = Tapped { inner: &mut link, tap: &*registry, agent: Some("local".into()) };
            crate::watch::run(&mut tapped, watchers.as_mut(), cluster, tap, &prepared, observer, scope)
        }
        None => crate::watch::run(&mut link, watchers.as_mut(), cluster, None, &prepared, observer, scope),
    };
    // The workers are joined before their targets are cleaned up (except
    // workers abandoned stuck in their engine after a second Ctrl-C).
    drop(link);
    result.disk_util = disks.since();
    let left = |name: &str| {
        let jobs = || result.jobs.iter().filter(|j| j.name == name);
        let abandoned = jobs().any(|j| j.warnings.iter().any(|w| matches!(w, Warning::WorkersAbandoned { .. })));
        (!abandoned).then(|| jobs().map(|j| j.objects_left).sum())
    };
    // Tearing down (a bucket storbench made) is skipped after a second
    // Ctrl-C, and cut short by one that comes meanwhile.
    let begun = scope.level();
    let cleaned = prepared.cleanup(&left, &|| scope.level() >= 2 || scope.level() > begun, Some(&dir));
    journal.finish(&|i| cleaned.left.get(i).copied().unwrap_or(false));
    for message in cleaned.notes {
        result.warnings.push(Warning::Cleanup { message });
    }
    result.notes.extend(target_notes(&prepared));
    Ok(result)
}

/// What engines said about how they drive their targets, once per note.
fn target_notes(prepared: &storbench_runner::Prepared) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in prepared.jobs.iter().flat_map(|j| j.share.targets.notes()) {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

/// Every file the run's jobs work on (for the disks under them).
fn file_paths(prepared: &storbench_runner::Prepared) -> impl Iterator<Item = &Path> {
    prepared.jobs.iter().flat_map(|j| match &j.share.targets {
        storbench_model::Targets::Files(per_worker) => per_worker.iter().flatten().map(|t| t.path.as_path()).collect::<Vec<_>>(),
        _ => Vec::new(),
    })
}

/// A target another client holds a lock on can stall the first operations
/// for half a minute: said before the run starts, so the wait is explained
/// while it happens (the results flag it too, if it happened).
fn say_held_targets(prepared: &storbench_runner::Prepared) {
    for j in &prepared.jobs {
        if let storbench_model::Targets::Store(storbench_model::StoreTarget { held_by: Some(h), .. }) = &j.share.targets {
            say!("storbench: warning: job '{}': {h}", j.name());
        }
    }
}

/// `format` (if any) to standard output, then the results directory. The
/// summary comes first, so a results directory that cannot be written (a
/// full disk) loses no result: the error says what did reach it.
pub fn finish(dir: &Path, r: &RunResult, format: Option<&str>) -> Result<i32, CliError> {
    if let Some(e) = format.and_then(storbench_report::find) {
        // A closed pipe must not turn a finished run into a failure: the
        // results directory has everything. Another failure (a full disk)
        // ends the command with exit 3 once the directory is written.
        crate::streams::checked(crate::streams::Stream::Stdout, output::to_stdout(e, &RunSet::one(r.clone())));
    }
    output::write_all(dir, r)?;
    say!("storbench: results in {}", dir.display());
    Ok(exit_code(r))
}

/// Passes every point on to the run's observer and appends it to
/// series.csv as it comes. A write that fails stops the streaming quietly:
/// the full results are written (and their failure reported) at the end.
struct SeriesTee<'a> {
    file: Option<std::io::BufWriter<std::fs::File>>,
    inner: &'a mut dyn Observer,
}

impl<'a> SeriesTee<'a> {
    fn open(dir: &Path, inner: &'a mut dyn Observer) -> SeriesTee<'a> {
        let file = output::create_new(&dir.join("series.csv")).ok().map(std::io::BufWriter::new);
        let mut tee = SeriesTee { file, inner };
        tee.write(|w| writeln!(w, "{}", storbench_report::csv::HEADER));
        tee
    }

    fn write(&mut self, f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>) {
        use std::io::Write;
        if let Some(w) = self.file.as_mut() {
            if f(w).and_then(|_| w.flush()).is_err() {
                self.file = None;
            }
        }
    }
}

impl Observer for SeriesTee<'_> {
    fn job_started(&mut self, job: &storbench_model::protocol::JobShare) {
        self.inner.job_started(job);
    }
    fn stage(&mut self, job: &str, stage: storbench_model::protocol::Stage) {
        self.inner.stage(job, stage);
    }
    fn interrupted(&mut self, level: u32) {
        self.inner.interrupted(level);
    }
    fn second(&mut self, p: &storbench_runner::Progress) {
        self.write(|w| storbench_report::csv::point_rows(p.job, p.point, w));
        self.inner.second(p);
    }
    fn group_finished(&mut self) {
        self.inner.group_finished();
    }
}

pub fn exit_code(r: &RunResult) -> i32 {
    if r.interrupted {
        return EXIT_INTERRUPTED;
    }
    let failed = r.jobs.iter().any(|j| {
        j.total_errors() > 0 || !j.failures.is_empty() || j.cut_off > 0 || j.verify.as_ref().is_some_and(|v| v.tally.failures_total() > 0)
    });
    if failed {
        EXIT_IO_ERRORS
    } else {
        0
    }
}
