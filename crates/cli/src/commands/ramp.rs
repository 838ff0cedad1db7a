//! `storbench run --ssbench scenario.json [--users 1,2,4,8]`: an ssbench
//! scenario, once or over a users ramp that stops when throughput falls.
//!
//! Each step runs exactly its user count (shared out among the size classes
//! by `sources::ssbench::share_users`) into `users-N`. A step below the peak
//! so far is run once more (`users-N-r2`): the ramp stops only when the
//! repeat is below the peak too, so one noisy step does not end it. The
//! ramp's directory carries a sweep index over `users` (`sweep.json`, a
//! point per step run), so `storbench report`, `show` and `compare` read it
//! as the curve it is; `show DIR --format ssbench-ramp` prints ssbench's table.

use crate::cli::RunFlags;
use crate::error::*;
use crate::session::{execute, finish, RunSetup};
use crate::sources::ssbench;
use crate::words::JobArgs;
use crate::{output, progress};
use std::path::{Path, PathBuf};
use storbench_model::sweep::{Dimension, PointFigures, PointState, SweepIndex, SweepMode, SweepPoint, SWEEP_VERSION};
use storbench_model::{RunResult, RunSet};
use storbench_report::compat::ssbench as table;
use storbench_workload::JobSpec;

pub fn run(flags: &RunFlags, jobs: &JobArgs, path: &Path, use_suite: bool) -> Result<i32, CliError> {
    if use_suite || flags.source.fio.is_some() || flags.source.job_file.is_some() || flags.source.job.is_some() || !jobs.jobs.is_empty() {
        return Err(CliError::usage("--ssbench runs a scenario on its own: no job file, --fio, --suite or --name jobs with it"));
    }
    if flags.users.windows(2).any(|w| w[1] <= w[0]) {
        let list: Vec<String> = flags.users.iter().map(u32::to_string).collect();
        return Err(CliError::usage(format!("--users '{}' must grow from one step to the next", list.join(","))));
    }
    let sc = ssbench::load(path)?;
    let steps = if flags.users.is_empty() { vec![sc.user_count] } else { flags.users.clone() };
    let mut ramp = Ramp {
        flags,
        global: &jobs.global,
        sc: &sc,
        // The fleet (`--agents`) and metrics endpoint, one for every step.
        shared: RunSetup::from_source(&flags.source)?,
        base: flags.source.results_dir.clone().unwrap_or_else(output::default_dir),
        runs: RunSet::default(),
        index: (steps.len() > 1).then(|| new_index(path, &steps)),
        code: 0,
    };
    ramp.go(&steps)?;
    if steps.len() > 1 {
        out_part!("{}", table::render(&ramp.runs).unwrap_or_default());
    }
    Ok(ramp.code)
}

/// The ramp's index: one dimension, `users`, a point per step run.
fn new_index(path: &Path, steps: &[u32]) -> SweepIndex {
    SweepIndex {
        version: SWEEP_VERSION,
        command: vec!["run".into(), "--ssbench".into(), path.display().to_string()],
        dims: vec![Dimension { option: "users".into(), values: steps.iter().map(u32::to_string).collect() }],
        mode: SweepMode::Grid,
        repeat: 1,
        shuffle: None,
        knee_gain_pct: None,
        points: Vec::new(),
        knees: Vec::new(),
    }
}

struct Ramp<'a> {
    flags: &'a RunFlags,
    global: &'a crate::sources::Pairs,
    sc: &'a ssbench::Scenario,
    shared: RunSetup,
    base: PathBuf,
    runs: RunSet,
    index: Option<SweepIndex>,
    code: i32,
}

impl Ramp<'_> {
    fn go(&mut self, steps: &[u32]) -> Result<(), CliError> {
        // A Ctrl-C between two steps (while one writes its results) ends the ramp too.
        let scope = storbench_runner::interrupt::Scope::begin();
        let mut peak = 0f64;
        for (step, &users) in steps.iter().enumerate() {
            let Some(ops) = self.step(step, users, 1, &scope)? else { return Ok(()) };
            if ops >= peak || step == 0 {
                peak = peak.max(ops);
                continue;
            }
            say!("storbench: throughput fell from {peak:.1} to {ops:.1} ops/s at {users} users: running the step again to confirm");
            let Some(again) = self.step(step, users, 2, &scope)? else { return Ok(()) };
            if again < peak {
                say!("storbench: {users} users again: {again:.1} ops/s, below the peak of {peak:.1}: the fall is confirmed; stopping the ramp");
                return Ok(());
            }
            say!("storbench: {users} users again: {again:.1} ops/s: the fall was not confirmed; the ramp goes on");
            peak = peak.max(again);
        }
        Ok(())
    }

    /// Run one step (`repeat` 2: its confirmation); its ops/s, or `None`
    /// when the ramp must end (interrupted).
    fn step(&mut self, step: usize, users: u32, repeat: u32, scope: &storbench_runner::interrupt::Scope) -> Result<Option<f64>, CliError> {
        if scope.interrupted() {
            say!("storbench: interrupted: stopping the ramp");
            self.code = self.code.max(EXIT_INTERRUPTED);
            return Ok(None);
        }
        let (specs, notes) = ssbench::specs(self.sc, users, &JobSpec::default(), self.global)?;
        let name = if repeat > 1 { format!("users-{users}-r{repeat}") } else { format!("users-{users}") };
        let dir = if self.index.is_some() { self.base.join(&name) } else { self.base.clone() };
        if self.index.is_some() {
            say!("storbench: ssbench '{}' with {users} users", self.sc.name);
        }
        let mut observer = progress::Live::new(self.flags.source.quiet);
        let setup = RunSetup {
            notes,
            results_dir: Some(dir),
            parameters: table::parameters(&self.sc.name, users, step),
            fleet: self.shared.fleet.clone(),
            metrics: self.shared.metrics.clone(),
            replace: self.shared.replace,
            logs_outside: false,
            no_telemetry: self.shared.no_telemetry,
            watch: self.shared.watch.clone(),
            disrupt: self.shared.disrupt.clone(),
            allow_exec: self.shared.allow_exec,
            network: self.shared.network.clone(),
        };
        let t0 = std::time::Instant::now();
        let (result, dir) = execute(specs, setup, &mut observer)?;
        self.code = self.code.max(finish(&dir, &result, Some(self.flags.format.as_deref().unwrap_or("normal")))?);
        let ops = table::ops_per_sec(&result);
        let interrupted = result.interrupted;
        self.record(step, users, repeat, name, &result, t0.elapsed().as_secs_f64())?;
        self.runs.push(result, Some(dir));
        Ok((!interrupted).then_some(ops))
    }

    /// The step's point onto the ramp's index (written whole: a ramp has a
    /// handful of points).
    fn record(&mut self, step: usize, users: u32, repeat: u32, dir: String, result: &RunResult, seconds: f64) -> Result<(), CliError> {
        let Some(index) = self.index.as_mut() else { return Ok(()) };
        let state = if result.interrupted { PointState::Interrupted } else { PointState::Done };
        let figures = Some(PointFigures::of(result));
        index.points.push(SweepPoint { index: step, repeat, values: vec![users.to_string()], dir, state, figures, seconds, ceiling: None });
        index.repeat = index.repeat.max(repeat);
        index.save(&self.base).map_err(|e| CliError::system(format!("cannot write {}: {e}", self.base.display())))
    }
}
