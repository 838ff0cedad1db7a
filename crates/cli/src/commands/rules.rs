//! `run --preset train:MODEL --rules mlperf`: a training preset run as
//! MLPerf Storage's rules ask (mlcommons/storage, training/README.md at
//! 3a1e063, and its checker, mlpstorage/rules/): the dataset sized against
//! the client's memory (5x) and for 500 steps an epoch, one warm-up run and
//! five measured ones (the result their mean), AU at or above the floor in
//! every measured run, and only the parameters a division allows changed.
//! The verdict names each rule as mlpstorage's checker does (an issue: its
//! division, parameter, expected and actual values) and the result's
//! division is the lowest of them: closed, open or invalid. `mlperf.json`
//! in the results directory keeps it; each run has its own directory.
//! The job options given are judged in `rules_options.rs`, the accelerator
//! search under the rules is `rules_search.rs`; on an object store the
//! dataset is written once and read by every run ([`Setup::share_dataset`]).

use super::cleanup::{self, Tell};
use crate::cli::RunFlags;
use crate::error::*;
use crate::session::{execute, RunSetup};
use crate::sources::preset::{self, Sizing};
use crate::words::JobArgs;
use crate::{output, progress};
use serde::Serialize;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use storbench_engine::Which;
use storbench_model::{RunResult, TrainResult};
use storbench_workload::options::canonical_name;
use storbench_workload::train::TrainSpec;
use storbench_workload::units::parse_bool;
use storbench_workload::JobSpec;

/// Measured runs a result is the mean of ("a benchmark result is the mean
/// of 5 run results, executed consecutively").
pub const MEASURED_RUNS: usize = 5;
/// The dataset is at least this many times the clients' memory.
pub const MEMORY_MULTIPLIER: u64 = 5;
/// Steps an epoch the dataset must hold, at the least, for every accelerator.
pub const MIN_STEPS: u64 = 500;

/// Which division a rule's outcome allows, lowest first (mlpstorage's
/// PARAM_VALIDATION): a result is in the lowest of its rules'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Division {
    Invalid,
    Open,
    Closed,
}

/// One rule as it went, in the shape of mlpstorage's `Issue`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Issue {
    pub validation: Division,
    pub parameter: String,
    pub message: String,
    pub expected: String,
    pub actual: String,
}

pub fn issue(ok: bool, fail: Division, parameter: &str, message: &str, expected: String, actual: String) -> Issue {
    let validation = if ok { Division::Closed } else { fail };
    Issue { validation, parameter: parameter.into(), message: message.into(), expected, actual }
}

/// What the dataset rules are judged on.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub files: u64,
    pub samples_per_file: u64,
    pub file_bytes: u64,
    pub batch: u32,
    pub accelerators: u32,
    /// The clients' memory, bytes.
    pub memory: u64,
}

impl Dataset {
    pub fn of(t: &TrainSpec, accelerators: u32, memory: u64) -> Dataset {
        Dataset { files: t.files, samples_per_file: t.samples_per_file, file_bytes: t.file_bytes(), batch: t.batch, accelerators, memory }
    }

    /// Files the memory rule needs (mlpstorage: 5 x memory // a file's bytes).
    pub fn files_for_memory(&self) -> u64 {
        (MEMORY_MULTIPLIER as u128 * self.memory as u128 / self.file_bytes.max(1) as u128) as u64
    }

    /// Files the step rule needs (500 x accelerators x batch // samples a file).
    pub fn files_for_steps(&self) -> u64 {
        MIN_STEPS * self.accelerators as u64 * self.batch as u64 / self.samples_per_file.max(1)
    }

    /// The most accelerators the files hold 500 steps an epoch for: the
    /// largest count whose `files_for_steps` (rounded down) is no more
    /// than the files.
    pub fn most_accelerators(&self) -> u64 {
        let step = MIN_STEPS as u128 * self.batch.max(1) as u128;
        (((self.files as u128 + 1) * self.samples_per_file.max(1) as u128 - 1) / step) as u64
    }
}

fn gib(bytes: f64) -> String {
    format!("{:.2} GiB", bytes / (1u64 << 30) as f64)
}

/// The dataset's two rules.
pub fn dataset_issues(d: &Dataset) -> Vec<Issue> {
    let (mem, steps) = (d.files_for_memory(), d.files_for_steps());
    let actual = format!("{} files ({})", d.files, gib((d.files * d.file_bytes) as f64));
    vec![
        issue(
            d.files >= mem,
            Division::Invalid,
            "dataset.num_files_train",
            "the dataset is at least 5x the client's memory",
            format!(">= {mem} files ({}: 5 x {} of memory)", gib((mem * d.file_bytes) as f64), gib(d.memory as f64)),
            actual.clone(),
        ),
        issue(
            d.files >= steps,
            Division::Invalid,
            "dataset.num_files_train",
            "the dataset holds 500 steps an epoch for every accelerator",
            format!(">= {steps} files (500 steps of {} samples on {} accelerators)", d.batch, d.accelerators),
            actual,
        ),
    ]
}

/// What was changed from the reference config, judged as the checker does:
/// the file count is a closed-division parameter, the samples in a file an
/// open-division one, the epochs neither's.
pub fn parameter_issues(reference: &preset::Model, run: &TrainSpec, epochs_given: bool) -> Vec<Issue> {
    let mut out = Vec::new();
    if run.files != reference.files {
        let expected = format!("{} (the config's; any count in the closed division)", reference.files);
        out.push(issue(
            true,
            Division::Closed,
            "dataset.num_files_train",
            "the file count may be changed",
            expected,
            run.files.to_string(),
        ));
    }
    if run.samples_per_file != reference.samples_per_file {
        out.push(issue(
            false,
            Division::Open,
            "dataset.num_samples_per_file",
            "--scale shrank each file's samples: an open-division parameter",
            reference.samples_per_file.to_string(),
            run.samples_per_file.to_string(),
        ));
    }
    if epochs_given && run.epochs != reference.epochs {
        out.push(issue(
            false,
            Division::Invalid,
            "train.epochs",
            "--epochs changed the epochs: neither division allows it",
            reference.epochs.to_string(),
            run.epochs.to_string(),
        ));
    }
    out
}

/// A measured (or warm-up) run: its figures, and whether it ran whole.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunFigures {
    pub run: String,
    pub complete: bool,
    pub train: Option<TrainResult>,
}

/// The runs' rules: a whole warm-up, five whole measured runs, and AU at or
/// above the floor in each of them.
pub fn run_issues(warmup: Option<&RunFigures>, runs: &[RunFigures], floor: f64) -> Vec<Issue> {
    let whole = runs.iter().filter(|r| r.complete).count();
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let mut out = vec![
        issue(
            warmup.is_some_and(|w| w.complete),
            Division::Invalid,
            "warmup",
            "one warm-up run before the measured ones",
            "1".into(),
            warmup.map_or("0".into(), |w| if w.complete { "1".into() } else { "0 (not whole)".into() }),
        ),
        issue(
            whole == MEASURED_RUNS,
            Division::Invalid,
            "num_runs",
            "five measured runs, each whole",
            MEASURED_RUNS.to_string(),
            whole.to_string(),
        ),
    ];
    for r in runs {
        let au = r.train.as_ref().map_or(0.0, |t| t.au);
        out.push(issue(
            r.complete && au >= floor,
            Division::Invalid,
            &format!("{}.au", r.run),
            "AU at or above the floor",
            format!(">= {}", pct(floor)),
            pct(au),
        ));
    }
    out
}

/// The lowest division of the rules (closed when there are none).
pub fn division(issues: &[Issue]) -> Division {
    issues.iter().map(|i| i.validation).min().unwrap_or(Division::Closed)
}

/// The benchmark result: the mean of the measured runs' samples/s and AU.
pub fn means(runs: &[RunFigures]) -> (f64, f64) {
    let t: Vec<&TrainResult> = runs.iter().filter_map(|r| r.train.as_ref()).collect();
    match t.len() {
        0 => (0.0, 0.0),
        n => (t.iter().map(|t| t.samples_per_sec).sum::<f64>() / n as f64, t.iter().map(|t| t.au).sum::<f64>() / n as f64),
    }
}

/// `mlperf.json`.
#[derive(Debug, Serialize)]
pub struct Report {
    pub rules: &'static str,
    pub preset: String,
    /// Over every client (each agent's workers, summed).
    pub accelerators: u32,
    /// The client machines the accelerators are emulated on (agents, or
    /// this one).
    pub clients: u32,
    /// The AU every measured run must reach (the config's `metric.au`).
    pub au_floor: f64,
    /// The lowest division of the issues; `valid` unless it is invalid.
    pub division: Division,
    pub valid: bool,
    pub client_memory_bytes: u64,
    /// `MemTotal` (this host's /proc/meminfo; on a fleet every agent's, as
    /// its Hello said, summed) or `--client-memory` (each client's).
    pub client_memory_source: String,
    pub dataset_files: u64,
    pub dataset_bytes: u64,
    /// Object stores: where the dataset is, and whether it is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset_objects: Option<String>,
    /// The measured runs' mean samples/s: the benchmark result.
    pub samples_per_sec: f64,
    pub au_mean: f64,
    /// `--find-accelerators`: the probes and how the count was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<super::rules_search::Search>,
    pub warmup: Option<RunFigures>,
    pub runs: Vec<RunFigures>,
    pub issues: Vec<Issue>,
}

/// This host's memory, from /proc/meminfo's MemTotal (kB).
fn mem_total() -> Result<u64, CliError> {
    let text = std::fs::read_to_string("/proc/meminfo").map_err(|e| CliError::system(format!("/proc/meminfo: {e}")))?;
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| CliError::system("/proc/meminfo has no MemTotal: give the client's memory with --client-memory"))
}

/// How to get past a rule that fails before anything runs.
fn remedy(i: &Issue) -> &'static str {
    match (i.parameter.as_str(), i.message.contains("500 steps")) {
        ("train.epochs", _) => "drop --epochs",
        ("storage.storage_type", _) => "give an engine that stores the dataset",
        ("reader.odirect", _) => "drop --direct",
        (p, false) if !p.contains('.') => "drop the option",
        (_, true) => "raise --scale, or use fewer --accelerators",
        _ => "raise --scale, or give the clients' memory with --client-memory SIZE",
    }
}

/// What every run of a rules sequence shares.
pub struct Setup<'a> {
    pub flags: &'a RunFlags,
    pub jobs: &'a JobArgs,
    pub name: &'a str,
    pub model: &'static preset::Model,
    pub sizing: Sizing,
    /// The clients' memory, bytes, and where the figure came from.
    pub memory: u64,
    pub memory_source: String,
    /// The agents the runs go to (None: this client alone).
    pub fleet: Option<crate::fleet::FleetSetup>,
    pub base: PathBuf,
    /// Object stores and RBD images: the run that writes the dataset, once,
    /// whose journal removes it at the end.
    pub data: RefCell<Option<PathBuf>>,
    /// An RBD image or NBD export holds the dataset an earlier run wrote.
    pub image_written: std::cell::Cell<bool>,
}

impl Setup<'_> {
    /// Object stores (s3, swift, rados): MLPerf generates the dataset once
    /// (`datagen`, then `run`), so the first run writes it (its prefill,
    /// not measured) and keeps it, and every later run reads what is there
    /// (`objects_exist`). The first run's journal records the objects;
    /// [`Setup::finish_dataset`] removes them at the end. Nothing to do for
    /// files (a run lays out only what is missing) or when the dataset was
    /// left by an earlier run (`--objects_exist 1`: not ours, kept).
    fn share_dataset(&self, specs: &mut [JobSpec], dir: &Path) {
        if specs.first().is_some_and(JobSpec::writes_dataset) {
            return self.share_image(&mut specs[0], dir);
        }
        let Some(o) = specs.first_mut().and_then(|s| s.objects.as_mut()) else { return };
        if o.exist {
            return;
        }
        o.cleanup = Some(false);
        let mut writer = self.data.borrow_mut();
        match &*writer {
            Some(_) => o.exist = true,
            None => *writer = Some(dir.to_path_buf()),
        }
    }

    /// An RBD image or NBD export: the first run writes the dataset (its
    /// unmeasured prelude) and keeps an image it made (`keep_image=1`), the
    /// later ones read what is there (`TrainSpec::dataset_written`: no
    /// writes, so no write guard either), and [`Setup::finish_dataset`]
    /// removes the image through the first run's journal unless the command
    /// line kept it. Written six times, a dataset of 5x the clients' memory
    /// would cost five needless writes of it.
    fn share_image(&self, spec: &mut JobSpec, dir: &Path) {
        if self.image_written.replace(true) {
            if let Some(t) = spec.kind.train_mut() {
                t.dataset_written = true;
            }
            return;
        }
        // An export is the server's: nothing of it to keep or remove.
        if spec.ioengine == "rbd" {
            *self.data.borrow_mut() = Some(dir.to_path_buf());
            spec.engine_options.entry("keep_image".into()).or_insert_with(|| "1".into());
        }
    }

    /// Whether the command line said to keep the dataset (`--cleanup 0`).
    fn keeps_dataset(&self) -> bool {
        let said = |k: &str, v: &str| match canonical_name(k).as_ref() {
            "cleanup" => parse_bool(v) == Ok(false),
            "keep_image" => parse_bool(v) == Ok(true),
            _ => false,
        };
        self.jobs.global.iter().any(|(k, v)| said(k, v))
    }

    /// Where an object dataset is and what becomes of it, for the verdict.
    fn dataset_note(&self, spec: &JobSpec) -> Option<String> {
        if spec.writes_dataset() {
            return Some(self.image_note(spec));
        }
        let (o, t) = (spec.objects.as_ref()?, spec.kind.train()?);
        let prefix = o.prefix_for(&spec.name);
        let place = options_named(spec, &["bucket", "container", "pool"], " in");
        let fate = match (o.exist, self.keeps_dataset()) {
            (true, _) => "left by an earlier run (objects_exist): read by every run, and kept",
            (false, true) => "written once, before the first run measured, read by every run, and kept (--cleanup 0): `storbench cleanup` on the first run's directory removes it",
            (false, false) => "written once, before the first run measured, read by every run, and removed at the end",
        };
        let last = t.files.saturating_sub(1);
        // A fleet's agents each write and read their own copy, under their own prefix.
        let names = match self.clients() {
            1 => format!("{} objects '{prefix}0'..'{prefix}{last}'", t.files),
            n => format!("{} objects on each of {n} agents ('{prefix}aN.0'..'{prefix}aN.{last}', N from 0)", t.files),
        };
        Some(format!("{names} on {}{place}: {fate}", spec.ioengine))
    }

    /// Where an image's or export's dataset is and what becomes of it.
    fn image_note(&self, spec: &JobSpec) -> String {
        let files = spec.kind.train().map_or(0, |t| t.files);
        let place = options_named(spec, &["pool", "rbdname", "uri"], "");
        let fate = match (spec.ioengine.as_str(), self.keeps_dataset()) {
            ("rbd", false) => ", and an image storbench made is removed at the end",
            ("rbd", true) => ", and kept",
            _ => "",
        };
        format!(
            "{files} files one after another on {}{place}: written once, by the warm-up before it measured, read by every run{fate}",
            spec.ioengine
        )
    }

    /// The end of a sequence on an object store: the dataset the first run
    /// wrote is removed through that run's journal (only storbench's
    /// objects, and the bucket or container it made), or said to be kept.
    /// An exit code for what could not be removed.
    pub fn finish_dataset(&self) -> i32 {
        let Some(dir) = self.data.borrow_mut().take() else { return 0 };
        let tell = match self.flags.format.as_deref().unwrap_or("normal") {
            "normal" => Tell::Stdout,
            _ => Tell::Stderr,
        };
        if self.keeps_dataset() {
            say!("storbench: the dataset is kept (--cleanup 0): storbench cleanup {} removes it", dir.display());
            return 0;
        }
        match cleanup::results_dir(&dir, Which::Marked, tell) {
            Ok(code) => code,
            Err(e) => {
                say!("storbench: the dataset was not removed: {}: storbench cleanup {} removes it", e.message, dir.display());
                e.code
            }
        }
    }

    /// The jobs for `n` accelerators (None: --accelerators or one) and the
    /// rules judged before anything runs; one of them invalid refuses the
    /// run (exit 2, nothing written) unless --allow-invalid-params.
    pub fn checked(&self, n: Option<u32>) -> Result<(Vec<JobSpec>, Vec<Issue>), CliError> {
        let sizing = Sizing { workers: n.or(self.sizing.workers), ..self.sizing.clone() };
        let specs = preset::specs(self.name, &sizing, &self.jobs.global)?;
        let t = training(&specs)?;
        let mut before = dataset_issues(&Dataset::of(t, self.accelerators(&specs)?, self.memory));
        before.extend(parameter_issues(self.model, t, self.flags.epochs.is_some()));
        before.extend(super::rules_options::option_issues(self.model.model, &specs[0].ioengine, &self.jobs.global));
        if let Some(i) = before.iter().find(|i| i.validation == Division::Invalid).filter(|_| !self.flags.allow_invalid_params) {
            return Err(CliError::usage(format!(
                "--rules mlperf: {}: {} ({}), here {}: {}, or run anyway with --allow-invalid-params (the verdict says invalid)",
                self.name,
                i.message,
                i.expected,
                i.actual,
                remedy(i)
            )));
        }
        Ok((specs, before))
    }

    /// The accelerators the jobs emulate on every client: a job's workers
    /// on each agent (its share with --share-numjobs), or this client's.
    pub fn accelerators(&self, specs: &[JobSpec]) -> Result<u32, CliError> {
        match &self.fleet {
            Some(f) => Ok(f.workers(&specs[..1])?.1[0]),
            None => Ok(specs[0].numjobs.max(1)),
        }
    }

    /// The client machines: the agents, or this one.
    fn clients(&self) -> u32 {
        self.fleet.as_ref().map_or(1, |f| f.workers(&[]).map_or(1, |w| w.0 as u32))
    }

    /// An empty report for the jobs `specs`.
    pub fn report(&self, specs: &[JobSpec]) -> Result<Report, CliError> {
        let t = training(specs)?;
        Ok(Report {
            rules: "MLPerf Storage training (mlcommons/storage training/README.md)",
            preset: self.name.into(),
            accelerators: self.accelerators(specs)?,
            clients: self.clients(),
            au_floor: t.au_floor,
            division: Division::Closed,
            valid: true,
            client_memory_bytes: self.memory,
            client_memory_source: self.memory_source.clone(),
            dataset_files: t.files,
            dataset_bytes: t.files * t.file_bytes(),
            dataset_objects: self.dataset_note(&specs[0]),
            samples_per_sec: 0.0,
            au_mean: 0.0,
            search: None,
            warmup: None,
            runs: Vec::new(),
            issues: Vec::new(),
        })
    }
}

/// The engine options of `keys` the job has, as ` LEAD key 'value'` each:
/// where a dataset is, for the verdict.
fn options_named(spec: &JobSpec, keys: &[&str], lead: &str) -> String {
    keys.iter().filter_map(|k| spec.engine_options.get(*k).map(|v| format!("{lead} {k} '{v}'"))).collect()
}

/// The training a preset's jobs carry.
pub fn training(specs: &[JobSpec]) -> Result<&TrainSpec, CliError> {
    specs.first().and_then(|s| s.kind.train()).ok_or_else(|| CliError::system("a training preset without its training"))
}

pub fn run(flags: &RunFlags, jobs: &JobArgs, name: &str, sizing: Sizing) -> Result<i32, CliError> {
    let model = name
        .strip_prefix("train:")
        .and_then(preset::find_train)
        .ok_or_else(|| CliError::usage(format!("--rules mlperf judges a training preset (train:MODEL[:ACCELERATOR]), not '{name}'")))?;
    let fleet = flags.source.fleet.setup()?;
    if fleet.is_some() && flags.find_accelerators {
        return Err(CliError::usage(
            "--find-accelerators searches on this client alone: on a fleet give --accelerators N (each agent's), \
             found on one client first",
        ));
    }
    let (memory, memory_source) = clients_memory(flags, fleet.as_ref())?;
    let base = flags.source.results_dir.clone().unwrap_or_else(output::default_dir);
    let (data, image_written) = (RefCell::new(None), Default::default());
    let setup = Setup { flags, jobs, name, model, sizing, memory, memory_source, fleet, base, data, image_written };
    let code = match flags.find_accelerators {
        true => super::rules_search::search(&setup),
        false => sequence(&setup),
    };
    // The dataset goes whatever the outcome (a run failed, Ctrl-C).
    let cleaned = setup.finish_dataset();
    code.map(|c| c.max(cleaned))
}

/// The clients' memory the dataset is sized by, and where it came from:
/// this host's MemTotal, or on a fleet every agent's (as its Hello said),
/// summed as mlpstorage's datasize does (hosts x each host's memory);
/// `--client-memory` is each client's.
fn clients_memory(flags: &RunFlags, fleet: Option<&crate::fleet::FleetSetup>) -> Result<(u64, String), CliError> {
    let Some(fleet) = fleet else {
        return Ok(match flags.client_memory {
            Some(m) => (m, format!("--client-memory (this host's MemTotal: {})", gib(mem_total().unwrap_or(0) as f64))),
            None => (mem_total()?, "MemTotal".to_string()),
        });
    };
    let n = fleet.workers(&[])?.0 as u64;
    if let Some(m) = flags.client_memory {
        return Ok((m * n, format!("--client-memory {} x {n} clients", gib(m as f64))));
    }
    let mut each = Vec::new();
    for (agent, memory) in fleet.memories()? {
        let m = memory.ok_or_else(|| {
            CliError::usage(format!(
                "agent {agent} did not say its memory (no /proc/meminfo there): give each client's memory with --client-memory SIZE"
            ))
        })?;
        each.push((agent, m));
    }
    let sum = each.iter().map(|(_, m)| m).sum();
    let list: Vec<String> = each.iter().map(|(a, m)| format!("{a} {}", gib(*m as f64))).collect();
    Ok((sum, format!("MemTotal of {} agents: {}", each.len(), list.join(", "))))
}

/// A warm-up and five measured runs, judged.
fn sequence(setup: &Setup) -> Result<i32, CliError> {
    let (specs, before) = setup.checked(None)?;
    let mut report = setup.report(&specs)?;
    let outcome = runs(setup, &specs, &setup.base, &mut report);
    let outcome = match (outcome, report.warmup.is_none()) {
        // Nothing ran (refused or failed before measuring): nothing to judge.
        (Err(e), true) => return Err(e),
        (o, _) => o,
    };
    judge(&mut report, before);
    emit(setup.flags, &setup.base, &report)?;
    outcome?;
    Ok(if report.valid { 0 } else { EXIT_IO_ERRORS })
}

/// The verdict: the rules judged before the runs, then the runs' own, the
/// mean of the measured runs and the lowest division.
pub fn judge(report: &mut Report, mut issues: Vec<Issue>) {
    issues.extend(run_issues(report.warmup.as_ref(), &report.runs, report.au_floor));
    (report.samples_per_sec, report.au_mean) = means(&report.runs);
    report.division = division(&issues);
    report.valid = report.division != Division::Invalid;
    report.issues = issues;
}

/// The verdict printed (a machine-readable standard output gets the
/// verdict's JSON, or nothing of it; the table then goes to standard
/// error) and kept in `mlperf.json`.
pub fn emit(flags: &RunFlags, base: &Path, report: &Report) -> Result<(), CliError> {
    let mut text = report.search.as_ref().map_or(String::new(), |s| super::rules_search::table(s, report.au_floor));
    text.push_str(&table(report));
    let json = serde_json::to_string_pretty(report).unwrap_or_default();
    match flags.format.as_deref().unwrap_or("normal") {
        "normal" => out_part!("{text}"),
        format => {
            say_part!("{text}");
            if format == "json" {
                out!("{json}");
            }
        }
    }
    std::fs::create_dir_all(base).map_err(|e| CliError::system(format!("{}: {e}", base.display())))?;
    output::write_text(base, "mlperf.json", &json)
}

/// The warm-up, then the measured runs, each in a directory of its own;
/// an interrupted run ends the sequence (what ran is judged).
pub fn runs(setup: &Setup, specs: &[JobSpec], base: &Path, report: &mut Report) -> Result<(), CliError> {
    for n in 0..=MEASURED_RUNS {
        let label = if n == 0 { "warmup".to_string() } else { format!("run-{n}") };
        let (result, figures) = one(setup, specs, &base.join(&label), &label)?;
        match n {
            0 => report.warmup = Some(figures),
            _ => report.runs.push(figures),
        }
        if result.interrupted {
            return Err(CliError {
                message: format!("interrupted in {label}: the rules' verdict covers the runs before it"),
                code: EXIT_INTERRUPTED,
            });
        }
    }
    Ok(())
}

/// One run of the sequence (or a probe) in `dir`.
pub fn one(s: &Setup, specs: &[JobSpec], dir: &Path, label: &str) -> Result<(RunResult, RunFigures), CliError> {
    let mut observer = progress::Live::new(s.flags.source.quiet);
    let mut setup = RunSetup { results_dir: Some(dir.to_path_buf()), ..RunSetup::from_source(&s.flags.source)? };
    // The fleet whose memory was read (agents started over ssh once, not a run each).
    setup.fleet = s.fleet.clone().map(std::rc::Rc::new);
    setup.parameters.insert("mlperf_run".into(), label.into());
    let mut specs = specs.to_vec();
    s.share_dataset(&mut specs, dir);
    let (result, dir) = execute(specs, setup, &mut observer)?;
    output::write_all(&dir, &result)?;
    let job = result.jobs.first();
    let train = job.and_then(|j| j.train().cloned());
    let complete = !result.interrupted
        && job.is_some_and(|j| !j.interrupted && j.failures.is_empty() && j.total_errors() == 0)
        && train.as_ref().is_some_and(|t| t.steps > 0);
    if let Some(t) = &train {
        say!(
            "storbench: {label}: AU {:.1}%, {:.1} samples/s{}",
            t.au * 100.0,
            t.samples_per_sec,
            if complete { "" } else { " (not whole)" }
        );
    }
    Ok((result, RunFigures { run: label.into(), complete, train }))
}

/// The printed verdict: each run, then each rule, then the result.
fn table(r: &Report) -> String {
    let floor = r.au_floor;
    let mut out = format!(
        "{} under MLPerf Storage's rules: {} accelerators{}, dataset {} files ({}), client memory {} ({})\n",
        r.preset,
        r.accelerators,
        if r.clients > 1 { format!(" on {} clients", r.clients) } else { String::new() },
        r.dataset_files,
        gib(r.dataset_bytes as f64),
        gib(r.client_memory_bytes as f64),
        r.client_memory_source
    );
    if let Some(d) = &r.dataset_objects {
        out.push_str(&format!("  dataset: {d}\n"));
    }
    out.push_str(&format!("  {:<8} {:>14} {:>7} {:>7}\n", "run", "samples/s", "AU", "floor"));
    for f in r.warmup.iter().chain(&r.runs) {
        let (sps, au) = f.train.as_ref().map_or((0.0, 0.0), |t| (t.samples_per_sec, t.au));
        out.push_str(&format!("  {:<8} {:>14.1} {:>6.1}% {:>6.1}%\n", f.run, sps, au * 100.0, floor * 100.0));
    }
    out.push_str(&format!("  {:<9} {:<28} {:<64} {}\n", "division", "parameter", "expected", "actual"));
    for i in &r.issues {
        let v = format!("{:?}", i.validation).to_lowercase();
        out.push_str(&format!("  {:<9} {:<28} {:<64} {}  ({})\n", v, i.parameter, i.expected, i.actual, i.message));
    }
    let verdict = match r.division {
        Division::Closed => "VALID (closed division)",
        Division::Open => "VALID (open division)",
        Division::Invalid => "INVALID",
    };
    out.push_str(&format!(
        "{}: {verdict}: {:.1} samples/s, AU {:.1}%, the mean of {} measured runs\n",
        r.preset,
        r.samples_per_sec,
        r.au_mean * 100.0,
        r.runs.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn train(au: f64, sps: f64) -> TrainResult {
        TrainResult {
            model: "dlrm:b200".into(),
            accelerators: 1,
            epochs: 1,
            samples: 1,
            steps: 1,
            runtime_ns: 1,
            samples_per_sec: sps,
            bytes_per_sec: 0.0,
            au,
            au_floor: 0.7,
            passed: au >= 0.7,
            stall_ns: 0,
            ranks: None,
        }
    }

    fn figures(run: &str, au: f64, sps: f64) -> RunFigures {
        RunFigures { run: run.into(), complete: true, train: Some(train(au, sps)) }
    }

    #[test]
    fn the_dataset_rules_by_hand() {
        // unet3d:b200 files of 146,600,628 bytes; 24 GiB of memory x 5 =
        // 128,849,018,880 bytes: 878 files (878.9, rounded down as
        // mlpstorage does). 500 steps of 7 on 4 accelerators: 14,000 files.
        let d = Dataset { files: 14_000, samples_per_file: 1, file_bytes: 146_600_628, batch: 7, accelerators: 4, memory: 24 << 30 };
        assert_eq!((d.files_for_memory(), d.files_for_steps()), (878, 14_000));
        assert_eq!(d.most_accelerators(), 4, "14,000 files are 500 steps of 7 for 4 accelerators");
        assert!(dataset_issues(&d).iter().all(|i| i.validation == Division::Closed));
        let short = Dataset { files: 13_999, ..d.clone() };
        let i = dataset_issues(&short);
        assert_eq!((i[0].validation, i[1].validation), (Division::Closed, Division::Invalid));
        assert!(i[1].expected.starts_with(">= 14000 files"), "{:?}", i[1]);
        assert_eq!(short.most_accelerators(), 3, "13,999 files: 3 accelerators (10,500 files)");
        // dlrm: 1,344 row groups of 6,144 rows (42 files of 32) hold 504
        // steps of 16,384; 5 x 1 GiB needs 5 GiB / (32 x 6,144 x 761 bytes) = 35 files.
        let dlrm =
            Dataset { files: 42, samples_per_file: 32 * 6144, file_bytes: 32 * 6144 * 761, batch: 16384, accelerators: 1, memory: 1 << 30 };
        assert_eq!((dlrm.files_for_memory(), dlrm.files_for_steps()), (35, 41));
        // 2 accelerators need 83 files (500 x 32,768 rows / 196,608 a file).
        assert_eq!(dlrm.most_accelerators(), 1);
        let small = Dataset { memory: 24 << 30, ..dlrm };
        assert_eq!(small.files_for_memory(), 861, "24 GiB x 5 / 149,618,688 bytes");
        assert_eq!(dataset_issues(&small)[0].validation, Division::Invalid);
    }

    #[test]
    fn every_measured_run_must_reach_the_floor_and_five_must_run() {
        let w = figures("warmup", 0.5, 1.0);
        let five: Vec<RunFigures> = (1..=5).map(|n| figures(&format!("run-{n}"), 0.9, n as f64)).collect();
        let ok = run_issues(Some(&w), &five, 0.7);
        assert_eq!(ok.len(), 7, "warm-up, run count, an AU a run");
        assert_eq!(division(&ok), Division::Closed, "the warm-up's AU is not judged: {ok:?}");
        assert_eq!(means(&five), (3.0, 0.9), "the mean of 1..5 samples/s");
        let mut low = five.clone();
        low[3] = figures("run-4", 0.69, 4.0);
        let i = run_issues(Some(&w), &low, 0.7);
        assert_eq!(division(&i), Division::Invalid);
        let failed: Vec<&str> = i.iter().filter(|i| i.validation == Division::Invalid).map(|i| i.parameter.as_str()).collect();
        assert_eq!(failed, vec!["run-4.au"]);
        assert_eq!(i[5].actual, "69.0%");
        // Four runs, or one cut short: too few.
        let i = run_issues(Some(&w), &five[..4], 0.7);
        assert_eq!((i[1].validation, i[1].actual.as_str()), (Division::Invalid, "4"));
        let mut cut = five.clone();
        cut[4].complete = false;
        assert_eq!(run_issues(Some(&w), &cut, 0.7)[1].actual, "4");
        assert_eq!(run_issues(None, &five, 0.7)[0].validation, Division::Invalid, "no warm-up");
    }

    #[test]
    fn a_result_is_in_the_lowest_division_of_its_rules() {
        let m = preset::find_train("dlrm:b200").unwrap();
        let spec =
            preset::specs("train:dlrm", &Sizing { scale: 0.0017, workers: None, epochs: None, users: None, batch: None }, &Vec::new())
                .unwrap();
        let t = spec[0].kind.train().cloned().unwrap();
        let p = parameter_issues(m, &t, false);
        let divisions: Vec<(&str, Division)> = p.iter().map(|i| (i.parameter.as_str(), i.validation)).collect();
        assert_eq!(divisions, vec![("dataset.num_files_train", Division::Closed), ("dataset.num_samples_per_file", Division::Open)]);
        assert_eq!(division(&p), Division::Open);
        let e =
            preset::specs("train:dlrm", &Sizing { scale: 0.0017, workers: None, epochs: Some(2), users: None, batch: None }, &Vec::new())
                .unwrap();
        let p = parameter_issues(m, e[0].kind.train().unwrap(), true);
        assert_eq!(division(&p), Division::Invalid, "{p:?}");
        // cosmoflow keeps one sample a file at any scale: closed.
        let c =
            preset::specs("train:cosmoflow", &Sizing { scale: 0.001, workers: None, epochs: None, users: None, batch: None }, &Vec::new())
                .unwrap();
        assert_eq!(
            division(&parameter_issues(preset::find_train("cosmoflow").unwrap(), c[0].kind.train().unwrap(), false)),
            Division::Closed
        );
        assert_eq!(division(&[]), Division::Closed);
    }
}
