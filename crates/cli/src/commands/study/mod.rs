//! `storbench study FILE`: a field report's whole experiment as one command.
//! A study file (TOML, [`file`]) asks questions; each question runs as
//! storbench commands ([`steps`]: a sweep, an SLO search, a baseline, a run,
//! an ssbench ramp or a compatibility tool's command), one per configuration
//! and line, each into its own directory under the study's. The index
//! (`study.json`) is written before the first step and after every step, so
//! a study stopped by Ctrl-C or killed goes on with `--resume DIR`: finished
//! steps are kept, a sweep or search goes on from its own index (its finished
//! points kept), any other unfinished step runs again (its partial directory
//! kept beside, renamed). One ETA for the whole study; `--dry-run` prints the
//! plan and its duration and touches nothing.

pub mod builtin;
mod file;
mod steps;

use crate::cli::StudyArgs;
use crate::error::*;
use std::path::{Path, PathBuf};
use std::time::Instant;
use storbench_model::study::*;
use storbench_report::fmt;

pub fn run(args: &StudyArgs) -> Result<i32, CliError> {
    if let Some(dir) = &args.resume {
        return resume(dir, args);
    }
    let (text, origin) = source(args)?;
    let file = file::parse(&text, &args.set, args.scale).map_err(|e| CliError::usage(format!("{origin}: {e}")))?;
    let planned = steps::plan(&file)?;
    if args.dry_run {
        print_plan(&file, &planned);
        return Ok(0);
    }
    let dir = args.results_dir.clone().unwrap_or_else(crate::output::default_dir);
    if dir.join(STUDY_INDEX).exists() {
        return Err(CliError::usage(format!(
            "{} holds a study already: `storbench study --resume {}` goes on with it, or give another --results-dir",
            dir.display(),
            dir.display()
        )));
    }
    std::fs::create_dir_all(&dir).map_err(|e| CliError::system(format!("cannot create {}: {e}", dir.display())))?;
    crate::output::write_text(&dir, STUDY_FILE, &text)?;
    let index = new_index(&file, &planned, args.scale);
    Study { dir, index, words: planned.into_iter().map(|p| p.words).collect(), quiet: args.quiet }.go()
}

/// The study's text and what to call it in errors: a file, or a built-in.
fn source(args: &StudyArgs) -> Result<(String, String), CliError> {
    match (&args.file, &args.builtin) {
        (Some(f), None) => Ok((crate::sources::read_job_file(f, "study file")?, f.display().to_string())),
        (None, Some(name)) => builtin::text(name).map(|t| (t.to_string(), format!("built-in study {name}"))),
        _ => Err(CliError::usage("give a study file, --builtin NAME or --resume DIR")),
    }
}

fn new_index(file: &file::StudyFile, planned: &[steps::Planned], scale: Option<f64>) -> StudyIndex {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let words: Vec<String> = std::env::args().skip(1).collect();
    StudyIndex {
        version: STUDY_VERSION,
        title: file.title.clone(),
        about: file.about.clone(),
        command: crate::words::redacted(&words),
        vars: file.vars.clone(),
        set: file.set.clone(),
        scale,
        configs: file.configs.iter().map(|c| ConfigInfo { key: c.key.clone(), label: c.label.clone() }).collect(),
        questions: file
            .questions
            .iter()
            .map(|q| QuestionInfo {
                id: q.raw.id.clone(),
                title: q.raw.title.clone(),
                ask: q.ask,
                chart: q.chart,
                metrics: q.metrics.clone(),
                configs: q.configs.clone(),
                lines: steps::lines(q).into_iter().map(|(name, _)| name).collect(),
                of: q.raw.of.clone(),
                sweep: q.raw.sweep.clone(),
            })
            .collect(),
        steps: planned.iter().map(|p| p.step.clone()).collect(),
        started_unix: now,
    }
}

/// `--dry-run`: every step's command and the time it should take.
fn print_plan(file: &file::StudyFile, planned: &[steps::Planned]) {
    out!("study: {} ({} questions, {} steps)", file.title, file.questions.len(), planned.len());
    for (i, p) in planned.iter().enumerate() {
        out!("  {:>3}. {:<40} about {:>8}  storbench {}", i + 1, p.step.dir, fmt::duration(p.step.estimate), p.step.command.join(" "));
    }
    for q in file.questions.iter().filter(|q| q.ask == Ask::Compare) {
        out!("       {:<40} (compares the configurations of {})", q.raw.id, q.raw.of.as_deref().unwrap_or(""));
    }
    let total: f64 = planned.iter().map(|p| p.step.estimate).sum();
    out!("study: about {} in all (estimates from each step's run times; --dry-run ran nothing)", fmt::duration(total));
}

/// `--resume DIR`: the study file kept in DIR, with the variables the study
/// started with; finished steps kept.
fn resume(dir: &Path, args: &StudyArgs) -> Result<i32, CliError> {
    if args.file.is_some() || args.builtin.is_some() || !args.set.is_empty() || args.scale.is_some() || args.results_dir.is_some() {
        return Err(CliError::usage(
            "--resume DIR goes on with the study as it started (its file and variables are in DIR): give only --resume DIR (and --quiet)",
        ));
    }
    let mut index = StudyIndex::load(dir).map_err(CliError::usage)?;
    let text = crate::sources::read_job_file(&dir.join(STUDY_FILE), "study file")?;
    let set: Vec<String> = index.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let file = file::parse(&text, &set, index.scale).map_err(|e| CliError::usage(format!("{}: {e}", dir.join(STUDY_FILE).display())))?;
    let planned = steps::plan(&file)?;
    if planned.len() != index.steps.len() || planned.iter().zip(&index.steps).any(|(p, s)| p.step.dir != s.dir) {
        return Err(CliError::usage(format!("{}: its study.toml and study.json no longer match (was either edited?)", dir.display())));
    }
    let left = index.steps.iter().filter(|s| s.state != StepState::Done).count();
    say!("storbench: resuming the study in {}: {left} of {} steps left", dir.display(), index.steps.len());
    // Estimates again from the words (the file may carry better ones now).
    for (s, p) in index.steps.iter_mut().zip(&planned) {
        s.estimate = p.step.estimate;
    }
    Study { dir: dir.to_path_buf(), index, words: planned.into_iter().map(|p| p.words).collect(), quiet: args.quiet }.go()
}

struct Study {
    dir: PathBuf,
    index: StudyIndex,
    /// Each step's real words (the index keeps them redacted).
    words: Vec<Vec<String>>,
    quiet: bool,
}

impl Study {
    fn go(mut self) -> Result<i32, CliError> {
        self.save()?;
        let scope = storbench_runner::interrupt::Scope::begin();
        let started = Instant::now();
        let (mut took, mut expected) = (0.0, 0.0);
        for n in 0..self.index.steps.len() {
            if self.index.steps[n].state == StepState::Done {
                continue;
            }
            // A Ctrl-C between steps (while the table was written, or
            // before the next command began listening) stops here, not
            // after the whole next step.
            if scope.interrupted() {
                self.points();
                say!(
                    "storbench: study interrupted before {}; `storbench study --resume {}` runs the steps left",
                    self.index.steps[n].dir,
                    self.dir.display()
                );
                return Ok(EXIT_INTERRUPTED);
            }
            let t = Instant::now();
            let interrupted = self.run_step(n)?;
            let secs = t.elapsed().as_secs_f64();
            self.index.steps[n].seconds += secs;
            self.save()?;
            if interrupted || scope.interrupted() {
                self.points();
                say!(
                    "storbench: study interrupted at {}; `storbench study --resume {}` runs the steps left",
                    self.index.steps[n].dir,
                    self.dir.display()
                );
                return Ok(EXIT_INTERRUPTED);
            }
            self.points();
            took += secs;
            expected += self.index.steps[n].estimate;
            self.eta(n, took, expected);
        }
        self.finish(started.elapsed().as_secs_f64())
    }

    fn save(&self) -> Result<(), CliError> {
        self.index.save(&self.dir).map_err(|e| CliError::system(format!("cannot write {}: {e}", self.dir.join(STUDY_INDEX).display())))
    }

    /// One step: its command run in this process, into its directory.
    /// Returns whether it was interrupted.
    fn run_step(&mut self, n: usize) -> Result<bool, CliError> {
        let step = &self.index.steps[n];
        let at = self.dir.join(&step.dir);
        let words = self.words_for(n, &at)?;
        if !self.quiet {
            say!(
                "study: step {}/{} {} ({}, about {}): storbench {}",
                n + 1,
                self.index.steps.len(),
                step.dir,
                self.index.question(&step.question).map_or("", |q| q.ask.name()),
                fmt::duration(step.estimate),
                step.command.join(" ")
            );
        }
        // What the step prints (its tables) under a heading of its own.
        out!("== study step {}/{}: {} ==", n + 1, self.index.steps.len(), step.dir);
        crate::words::set_step_command(Some(words.clone()));
        let result = crate::dispatch(&words);
        crate::words::set_step_command(None);
        let state = match result {
            Ok(0) => StepState::Done,
            Ok(EXIT_INTERRUPTED) => StepState::Interrupted,
            Ok(code) => StepState::Failed { code, message: failure(code, &at) },
            Err(e) if e.code == EXIT_INTERRUPTED => {
                say!("storbench: {}: {}", step.dir, e.message);
                StepState::Interrupted
            }
            Err(e) => {
                let line = e.message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
                say!("storbench: error: {}: {line}", step.dir);
                StepState::Failed { code: e.code, message: line }
            }
        };
        let interrupted = state == StepState::Interrupted;
        self.index.steps[n].state = state;
        Ok(interrupted)
    }

    /// The step's words with its directory placed; an unfinished step goes
    /// on from its own index (sweep, slo) or runs again with what it left
    /// renamed beside it.
    fn words_for(&self, n: usize, at: &Path) -> Result<Vec<String>, CliError> {
        let step = &self.index.steps[n];
        let ask = self.index.question(&step.question).map(|q| q.ask);
        let own_index = match ask {
            Some(Ask::Sweep) => Some(storbench_model::sweep::INDEX_FILE),
            Some(Ask::Slo) => Some(storbench_model::slo::SLO_FILE),
            _ => None,
        };
        // A failed sweep or search starts afresh (its failure may have been its words).
        if own_index.is_some_and(|f| at.join(f).exists()) && !matches!(step.state, StepState::Failed { .. }) {
            let cmd = if ask == Some(Ask::Sweep) { "sweep" } else { "slo" };
            return Ok(vec![cmd.into(), "--resume".into(), at.display().to_string(), "--quiet".into()]);
        }
        if at.exists() {
            let kept = set_aside(at)?;
            say!("storbench: {} was left unfinished: kept as {}, the step runs again", step.dir, kept.display());
        }
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::system(format!("cannot create {}: {e}", parent.display())))?;
        }
        Ok(steps::place(&self.words[n], &self.dir))
    }

    fn eta(&self, n: usize, took: f64, expected: f64) {
        if self.quiet {
            return;
        }
        let left: f64 = self.index.steps[n + 1..].iter().filter(|s| s.state != StepState::Done).map(|s| s.estimate).sum();
        let pace = if expected > 0.0 { took / expected } else { 1.0 };
        let steps_left = self.index.steps[n + 1..].iter().filter(|s| s.state != StepState::Done).count();
        let rest = match steps_left {
            0 => "no step left".to_string(),
            1 => format!("1 step left, about {}", fmt::duration(left * pace)),
            k => format!("{k} steps left, about {}", fmt::duration(left * pace)),
        };
        say!("study: {} took {}; {rest}", self.index.steps[n].dir, fmt::duration(self.index.steps[n].seconds));
    }

    /// The tidy table of every point so far (points.csv, points.json),
    /// rewritten after each step so a stopped study still has it.
    fn points(&self) {
        if let Err(e) = storbench_report::tidy::write_points(&self.dir) {
            say!("storbench: warning: the study's points table: {e}");
        }
    }

    /// The study's end: what ran, what failed, where the report is.
    fn finish(&self, secs: f64) -> Result<i32, CliError> {
        self.points();
        // The report is the study's answer; a study whose report cannot be
        // written still has every step's results and its table.
        match crate::commands::report::study_page(&self.dir) {
            Ok(page) => say!("study: report in {}", page.display()),
            Err(e) => say!("storbench: warning: the study's report: {}", e.message),
        }
        let failed: Vec<&Step> = self.index.steps.iter().filter(|s| matches!(s.state, StepState::Failed { .. })).collect();
        let done = self.index.steps.iter().filter(|s| s.state == StepState::Done).count();
        say!(
            "study: {} of {} steps done in {}{}; results in {}",
            done,
            self.index.steps.len(),
            fmt::duration(secs),
            if failed.is_empty() { String::new() } else { format!(", {} failed", failed.len()) },
            self.dir.display()
        );
        for s in &failed {
            if let StepState::Failed { message, .. } = &s.state {
                say!("study: failed: {}: {message}", s.dir);
            }
        }
        Ok(if failed.is_empty() { 0 } else { EXIT_IO_ERRORS })
    }
}

/// Why a step that ended by itself failed: a sweep's or search's failed
/// point says, else what the exit code means.
fn failure(code: i32, at: &Path) -> String {
    let point = storbench_model::sweep::SweepIndex::load(at).ok().and_then(|s| {
        s.points.iter().find_map(|p| match &p.state {
            storbench_model::sweep::PointState::Failed { message } => Some(format!("{}: {message}", p.dir)),
            _ => None,
        })
    });
    point.unwrap_or_else(|| format!("exit {code}{}", exit_meaning(code)))
}

fn exit_meaning(code: i32) -> &'static str {
    match code {
        EXIT_IO_ERRORS => " (I/O errors or failed workers; its results are written)",
        EXIT_USAGE => " (bad input)",
        EXIT_SYSTEM => " (the system failed before the run)",
        4 => " (a compare gate failed)",
        _ => "",
    }
}

/// A directory left by an unfinished step, renamed `DIR.interrupted-N`.
fn set_aside(at: &Path) -> Result<PathBuf, CliError> {
    let mut n = 1;
    loop {
        let kept = PathBuf::from(format!("{}.interrupted-{n}", at.display()));
        if !kept.exists() {
            std::fs::rename(at, &kept).map_err(|e| CliError::system(format!("cannot rename {}: {e}", at.display())))?;
            return Ok(kept);
        }
        n += 1;
    }
}
