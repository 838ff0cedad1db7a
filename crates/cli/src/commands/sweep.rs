//! `storbench sweep`: the same jobs over a grid of option values, one run
//! per point, under one directory with an index (`sweep.json`) written after
//! every point. A curve (the last dimension varied, the others fixed) stops
//! at its knee: once a step gains less than `--knee-gain` percent of IOPS
//! while mean latency grows as much, the rest of that curve is skipped. An
//! interrupted or killed sweep resumes with `--resume DIR`, redoing only
//! the points that did not finish. `--precondition` and `--fill` write the
//! targets once before the points (a run of their own, `000_precondition`
//! or `000_fill`, not run again on resume once done), or before every point
//! with `--each-point`.

use crate::cli::SweepFlags;
use crate::commands::run::resolve;
use crate::error::*;
use crate::session::{execute, finish, RunSetup};
use crate::words::{self, JobArgs};
use crate::{output, progress};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use storbench_model::sweep::*;
use storbench_workload::{apply_option, JobSpec};

mod dims;
mod knee;
mod table;

pub fn run(words: &[String]) -> Result<i32, CliError> {
    let (flags, jobs): (SweepFlags, JobArgs) = match crate::parse_with_jobs("sweep", words)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    match &flags.resume {
        Some(dir) => resume(dir, &flags, words),
        None => {
            let dir = flags.source.results_dir.clone().unwrap_or_else(output::default_dir);
            if dir.join(INDEX_FILE).exists() {
                return Err(CliError::usage(format!(
                    "{} holds a sweep already: `storbench sweep --resume {}` goes on with it, or give another --results-dir",
                    dir.display(),
                    dir.display()
                )));
            }
            let index = new_index(&flags, words)?;
            Sweep::prepare(&flags, &jobs, dir, index)?.go()
        }
    }
}

/// One `--sweep OPTION=VALUES` word as a dimension (a study's estimate
/// counts its points).
pub fn dimension(arg: &str) -> Result<Dimension, CliError> {
    dims::parse(arg)
}

/// The index of a new sweep: dimensions, points, mode, seed.
fn new_index(flags: &SweepFlags, words: &[String]) -> Result<SweepIndex, CliError> {
    let mut args = match flags.source.job_file.as_ref().or(flags.source.job.as_ref()) {
        Some(f) => crate::sources::toml::sweep_dimensions(f)?,
        None => Vec::new(),
    };
    args.extend(flags.sweep.iter().cloned());
    if args.is_empty() {
        return Err(CliError::usage("give at least one --sweep OPTION=VALUES (e.g. --sweep iodepth=1,2,4,8 or --sweep numjobs=1..16x2), or a [sweep] table in the job file"));
    }
    let dims: Vec<Dimension> = args.iter().map(|s| dims::parse(s)).collect::<Result<_, _>>()?;
    if let Some(d) = dims.iter().enumerate().find(|(i, d)| dims[..*i].iter().any(|e| e.option == d.option)) {
        return Err(CliError::usage(format!("{} is swept twice (the job file's [sweep] table and --sweep, or two --sweep)", d.1.option)));
    }
    let mode = if flags.one_at_a_time { SweepMode::OneAtATime } else { SweepMode::Grid };
    let grid = grid(&dims, mode);
    let shuffle = flags.shuffle.then(|| flags.seed.unwrap_or_else(seed_from_time));
    let mut order: Vec<usize> = (0..grid.len()).collect();
    if let Some(seed) = shuffle {
        dims::shuffle(&mut order, seed);
    }
    let width = (grid.len() * flags.repeat as usize).to_string().len().max(3);
    let mut points = Vec::new();
    for &i in &order {
        for rep in 1..=flags.repeat {
            let step = points.len() + 1;
            let dir = dims::dir_name(step, width, &dims, &grid[i], flags.repeat, rep);
            points.push(SweepPoint {
                index: i,
                repeat: rep,
                values: grid[i].clone(),
                dir,
                state: PointState::Pending,
                figures: None,
                seconds: 0.0,
                ceiling: None,
            });
        }
    }
    let knee_gain_pct = (!flags.no_knee && !flags.shuffle).then_some(flags.knee_gain);
    let command = words::redacted(words);
    Ok(SweepIndex { version: SWEEP_VERSION, command, dims, mode, repeat: flags.repeat, shuffle, knee_gain_pct, points, knees: Vec::new() })
}

fn seed_from_time() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// `--resume DIR`: the saved command line again, the finished points kept.
fn resume(dir: &Path, flags: &SweepFlags, words: &[String]) -> Result<i32, CliError> {
    let extra: Vec<&String> =
        words.iter().filter(|w| !matches!(w.as_str(), "--quiet" | "--resume") && !w.starts_with("--resume=")).collect();
    if extra.len() > 1 || extra.first().is_some_and(|w| Path::new(w.as_str()) != dir) {
        return Err(CliError::usage(
            "--resume DIR takes the sweep's own command line from DIR/sweep.json: give only --resume DIR (and --quiet)",
        ));
    }
    let index = SweepIndex::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    if index.command.iter().any(|w| w.contains(words::REDACTED)) {
        return Err(CliError::usage(
            "this sweep had secrets on its command line, which the index does not keep: give them through the environment \
             (AWS_SECRET_ACCESS_KEY, ST_KEY, OS_PASSWORD...) and start the sweep again",
        ));
    }
    let (mut saved, jobs): (SweepFlags, JobArgs) = match crate::parse_with_jobs("sweep", &index.command)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    saved.source.quiet |= flags.source.quiet;
    let left = index.points.iter().filter(|p| !matches!(p.state, PointState::Done | PointState::Skipped { .. })).count();
    say!("storbench: resuming the sweep in {}: {left} of {} runs left", dir.display(), index.points.len());
    Sweep::prepare(&saved, &jobs, dir.to_path_buf(), index)?.go()
}

/// A sweep ready to run: every point's jobs built (so bad input fails before
/// anything is touched), the directory and index in place.
struct Sweep<'a> {
    flags: &'a SweepFlags,
    dir: PathBuf,
    index: SweepIndex,
    specs: Vec<Vec<JobSpec>>,
    /// Each point's fleet (the first N agents, when `agents` is swept).
    fleets: Vec<Option<std::rc::Rc<crate::fleet::FleetSetup>>>,
    notes: Vec<String>,
    /// Fleet and metrics endpoint, one for every point.
    shared: RunSetup,
    /// The run that writes the targets first, once.
    before: Option<BeforeRun>,
    /// `--stop-if`: each point's hosts judged against them.
    ceilings: crate::ceilings::Watch,
}

/// The run that writes a sweep's targets once before its points: its
/// directory's name and its jobs.
type BeforeRun = (String, Vec<JobSpec>);

impl<'a> Sweep<'a> {
    fn prepare(flags: &'a SweepFlags, jobs: &JobArgs, dir: PathBuf, index: SweepIndex) -> Result<Sweep<'a>, CliError> {
        let no_source =
            flags.source.job_file.is_none() && flags.source.job.is_none() && flags.source.fio.is_none() && flags.source.suite.is_none();
        if no_source && jobs.jobs.is_empty() && jobs.global.is_empty() {
            return Err(CliError::usage("give the jobs to sweep: a job file, --fio FILE, --suite quick, or options and --name jobs"));
        }
        crate::ceilings::check(&flags.stop_if, &flags.source)?;
        let (base, notes) = resolve(&flags.source, jobs, flags.source.suite.is_some(), true)?;
        let shared = RunSetup::from_source(&flags.source)?;
        let grid = index.grid();
        let specs: Vec<Vec<JobSpec>> = grid.iter().map(|values| point_specs(&base, &index.dims, values)).collect::<Result<_, _>>()?;
        let (specs, before) = before_points(flags, specs)?;
        let fleets = grid.iter().map(|values| point_fleet(&shared, &index.dims, values)).collect::<Result<_, _>>()?;
        output::check_writable(&dir, flags.source.force)?;
        output::create(&dir)?;
        index.save(&dir).map_err(|e| CliError::system(format!("cannot write {}: {e}", dir.join(INDEX_FILE).display())))?;
        let ceilings = crate::ceilings::Watch::new(flags.stop_if.clone());
        Ok(Sweep { flags, dir, index, specs, fleets, notes, shared, before, ceilings })
    }

    fn go(mut self) -> Result<i32, CliError> {
        let scope = storbench_runner::interrupt::Scope::begin();
        let started = Instant::now();
        let mut code = 0;
        let total = self.index.points.len();
        if let Some(why) = knee::none_sought(&self.index) {
            say!("storbench: {why}");
        }
        if let Some(stop) = self.run_before()? {
            say!(
                "storbench: the sweep did not start: its targets were not written first; `storbench sweep --resume {}` tries again",
                self.dir.display()
            );
            return Ok(stop);
        }
        for n in 0..total {
            if !matches!(self.index.points[n].state, PointState::Pending | PointState::Interrupted | PointState::Failed { .. }) {
                continue;
            }
            if scope.interrupted() {
                code = code.max(EXIT_INTERRUPTED);
                break;
            }
            if let Some(reason) = knee::past(&self.index, n) {
                self.index.points[n].state = PointState::Skipped { reason };
                self.record(n, None)?;
                continue;
            }
            self.announce(n, started);
            let (point_code, interrupted) = self.run_point(n)?;
            code = code.max(point_code);
            let knee = knee::found(&self.index, n);
            if let Some(k) = &knee {
                say!("storbench: knee of {}: {} ({})", k.option, self.index.label(&k.values), k.rule);
                self.index.knees.push(k.clone());
            }
            self.record(n, knee.as_ref())?;
            if interrupted {
                code = code.max(EXIT_INTERRUPTED);
                break;
            }
        }
        self.save()?;
        out_part!("{}", table::render(&self.index));
        if code == EXIT_INTERRUPTED {
            say!("storbench: sweep interrupted; `storbench sweep --resume {}` runs the points left", self.dir.display());
        }
        say!("storbench: sweep results in {} ({INDEX_FILE})", self.dir.display());
        Ok(code)
    }

    /// Point `n` (and a knee it revealed) onto the sweep's log.
    fn record(&self, n: usize, knee: Option<&Knee>) -> Result<(), CliError> {
        let fail = |e: std::io::Error| CliError::system(format!("cannot write {}: {e}", self.dir.join(LOG_FILE).display()));
        self.index.record_point(&self.dir, n).map_err(fail)?;
        knee.map_or(Ok(()), |k| self.index.record_knee(&self.dir, k).map_err(fail))
    }

    fn save(&self) -> Result<(), CliError> {
        self.index.save(&self.dir).map_err(|e| CliError::system(format!("cannot write {}: {e}", self.dir.join(INDEX_FILE).display())))
    }

    /// One line per run: which, and when the sweep should end.
    fn announce(&self, n: usize, started: Instant) {
        let p = &self.index.points[n];
        let done: Vec<&SweepPoint> = self.index.points.iter().filter(|p| p.state == PointState::Done).collect();
        let left = self
            .index
            .points
            .iter()
            .filter(|p| matches!(p.state, PointState::Pending | PointState::Interrupted | PointState::Failed { .. }))
            .count();
        let eta = match done.len() {
            0 => String::new(),
            d => {
                let per = done.iter().map(|p| p.seconds).sum::<f64>() / d as f64;
                format!(", about {} left", storbench_report::fmt::duration(per * left as f64))
            }
        };
        let rep = if self.index.repeat > 1 { format!(" (repeat {}/{})", p.repeat, self.index.repeat) } else { String::new() };
        say!(
            "storbench: sweep run {}/{}: {}{rep}; {} so far{eta}",
            n + 1,
            self.index.points.len(),
            self.index.label(&p.values),
            storbench_report::fmt::duration(started.elapsed().as_secs_f64())
        );
    }

    /// The precondition or fill run before the points, unless an earlier
    /// start of this sweep finished it. Some(exit code) when it did not
    /// finish (the points then do not run on unwritten targets).
    fn run_before(&self) -> Result<Option<i32>, CliError> {
        let Some((name, specs)) = &self.before else { return Ok(None) };
        let dir = self.dir.join(name);
        if dir.join("result.json").exists() {
            say!("storbench: {name} finished before: the targets are not written again");
            return Ok(None);
        }
        output::set_aside(&dir)?;
        say!("storbench: sweep: {name}, once before the points");
        let setup = RunSetup {
            notes: self.notes.clone(),
            results_dir: Some(dir),
            parameters: BTreeMap::from([("sweep.before".to_string(), name.clone())]),
            fleet: self.shared.fleet.clone(),
            metrics: self.shared.metrics.clone(),
            replace: false,
            logs_outside: false,
            no_telemetry: self.shared.no_telemetry,
            watch: self.shared.watch.clone(),
            disrupt: None,
            allow_exec: self.shared.allow_exec,
            network: None,
        };
        let mut observer = progress::Live::new(self.flags.source.quiet);
        let (result, dir) = execute(specs.clone(), setup, &mut observer)?;
        let code = finish(&dir, &result, None)?;
        Ok(match (result.interrupted, code) {
            (true, _) => Some(EXIT_INTERRUPTED),
            (false, 0) => None,
            (false, c) => Some(c),
        })
    }

    /// Run point `n`; its state and figures go into the index. Returns its
    /// exit code and whether it was interrupted.
    fn run_point(&mut self, n: usize) -> Result<(i32, bool), CliError> {
        let p = self.index.points[n].clone();
        let dir = self.dir.join(&p.dir);
        output::set_aside(&dir)?;
        let mut params = BTreeMap::from([("step".to_string(), (n + 1).to_string()), ("repeat".into(), p.repeat.to_string())]);
        for (d, v) in self.index.dims.iter().zip(&p.values) {
            params.insert(format!("sweep.{}", d.option), v.clone());
        }
        let setup = RunSetup {
            notes: self.notes.clone(),
            results_dir: Some(dir.clone()),
            parameters: params,
            fleet: self.fleets[p.index].clone(),
            metrics: self.shared.metrics.clone(),
            replace: false,
            logs_outside: false,
            no_telemetry: self.shared.no_telemetry,
            watch: self.shared.watch.clone(),
            disrupt: self.shared.disrupt.clone(),
            allow_exec: self.shared.allow_exec,
            network: self.shared.network.clone(),
        };
        let mut observer = progress::Live::new(self.flags.source.quiet);
        let t0 = Instant::now();
        let outcome = execute(self.specs[p.index].clone(), setup, &mut observer);
        let point = &mut self.index.points[n];
        point.seconds = t0.elapsed().as_secs_f64();
        match outcome {
            Ok((result, dir)) => {
                let code = finish(&dir, &result, None)?;
                point.figures = Some(PointFigures::of(&result));
                point.ceiling = self.ceilings.judge(&result, "the rest of its curve is skipped");
                point.state = if result.interrupted { PointState::Interrupted } else { PointState::Done };
                Ok((code, result.interrupted))
            }
            Err(e) if e.code == EXIT_INTERRUPTED => {
                point.state = PointState::Interrupted;
                Ok((e.code, true))
            }
            Err(e) if e.code == EXIT_USAGE || e.code == EXIT_SYSTEM => {
                say!("storbench: sweep run {} failed: {}", n + 1, e.message);
                point.state = PointState::Failed { message: e.message.clone() };
                Ok((e.code, false))
            }
            Err(e) => Err(e),
        }
    }
}

/// `--precondition` / `--fill`: jobs that write the targets before every
/// point (`--each-point`), or the one run that writes each distinct target
/// of every point once, before them all. A pool's or bucket's fill is
/// removed after its own run, so it can only come before every point.
fn before_points(flags: &SweepFlags, specs: Vec<Vec<JobSpec>>) -> Result<(Vec<Vec<JobSpec>>, Option<BeforeRun>), CliError> {
    use crate::precondition::{jobs_before, prepend_with, Before};
    let before = match (flags.precondition, flags.fill) {
        (true, _) => Before::Precondition,
        (false, Some(f)) => Before::Fill(f),
        (false, None) if flags.each_point => {
            return Err(CliError::usage("--each-point goes with --precondition or --fill: it says to write the targets before every point"))
        }
        (false, None) => return Ok((specs, None)),
    };
    if flags.each_point {
        return Ok((specs.into_iter().map(|s| prepend_with(s, before)).collect::<Result<_, _>>()?, None));
    }
    let all: Vec<JobSpec> = specs.iter().flatten().cloned().collect();
    let pre = jobs_before(&all, before)?;
    if pre.iter().any(|p| p.objects.is_some()) {
        return Err(CliError::usage(format!(
            "{}: a pool's, bucket's or container's fill is removed after its run: add --each-point to fill it before every point",
            before.flag()
        )));
    }
    let name = if flags.precondition { "000_precondition" } else { "000_fill" };
    Ok((specs, Some((name.to_string(), pre.into_iter().map(keep_images).collect()))))
}

/// An RBD image the run before the points creates is kept for them (a run
/// removes the images it made when it ends); the run's journal names it, so
/// `storbench cleanup DIR/000_precondition` removes it afterwards.
fn keep_images(mut spec: JobSpec) -> JobSpec {
    if storbench_engine::find(&spec.ioengine).map(|f| f.name()) == Some("rbd") {
        spec.engine_options.entry("keep_image".into()).or_insert_with(|| "1".into());
    }
    spec
}

/// A point's jobs: the source's, with the point's values on top (a swept
/// option overrides the same option wherever the jobs set it).
fn point_specs(base: &[JobSpec], dims: &[Dimension], values: &[String]) -> Result<Vec<JobSpec>, CliError> {
    base.iter()
        .map(|spec| {
            let mut s = spec.clone();
            for (d, v) in dims.iter().zip(values).filter(|(d, _)| d.is_job_option()) {
                apply_option(&mut s, &d.option, v).map_err(|e| CliError::usage(format!("--sweep {}={v}: {e}", d.option)))?;
            }
            Ok(s)
        })
        .collect()
}

/// A point's fleet: the command's, or with `agents` swept its first N
/// agents (refused before anything runs when there is no fleet or too few).
fn point_fleet(
    shared: &RunSetup,
    dims: &[Dimension],
    values: &[String],
) -> Result<Option<std::rc::Rc<crate::fleet::FleetSetup>>, CliError> {
    let Some((_, n)) = dims.iter().zip(values).find(|(d, _)| !d.is_job_option()) else { return Ok(shared.fleet.clone()) };
    let bad = |why: String| CliError::usage(format!("--sweep {AGENTS}={n}: {why}"));
    let fleet = shared.fleet.as_ref().ok_or_else(|| bad("a sweep over agents needs a fleet: give --agents or --agents-file".into()))?;
    let n: usize = n.parse().map_err(|_| bad("give counts of agents (e.g. agents=1,2,4)".into()))?;
    fleet.first(n).map(|f| Some(std::rc::Rc::new(f))).map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_on_the_command_line_are_not_kept() {
        let w: Vec<String> =
            ["--sweep", "iodepth=1,2", "--secret_key", "S3CR3T", "--key=K2", "--bucket", "b"].iter().map(|s| s.to_string()).collect();
        let r = words::redacted(&w);
        assert!(!r.iter().any(|x| x.contains("S3CR3T") || x.contains("K2")), "{r:?}");
        assert_eq!(r[5..], ["--bucket".to_string(), "b".to_string()]);
    }
}
