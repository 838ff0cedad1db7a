//! `run --preset`: an AI workload's jobs, run once, or (training with
//! `--find-accelerators`) as a search for the most accelerators one client
//! keeps above the preset's utilization floor, or (`--rules mlperf`) as
//! MLPerf Storage's run rules ask (`commands/rules.rs`).

use crate::cli::RunFlags;
use crate::error::*;
use crate::session::{execute, finish, RunSetup};
use crate::sources::preset::{self, Sizing};
use crate::words::JobArgs;
use crate::{output, progress};
use std::path::Path;
use storbench_model::{RunResult, TrainResult};

/// Most accelerators the search tries.
pub const MAX_ACCELERATORS: u32 = 256;

pub fn run(flags: &RunFlags, jobs: &JobArgs, name: &str) -> Result<i32, CliError> {
    let s = &flags.source;
    if s.job_file.is_some() || s.job.is_some() || s.fio.is_some() || s.suite.is_some() || !jobs.jobs.is_empty() {
        return Err(CliError::usage(
            "--preset makes its own jobs: no job file, --fio, --suite or --name with it (options before it set the target)",
        ));
    }
    if flags.query_batch.is_some() && !name.starts_with("vectordb:") {
        return Err(CliError::usage("--query-batch is the queries of a vector search request: give it with --preset vectordb:CONFIG"));
    }
    let sizing = Sizing { scale: flags.scale, workers: flags.accelerators, epochs: flags.epochs, users: None, batch: flags.query_batch };
    if flags.rules.is_some() {
        return super::rules::run(flags, jobs, name, sizing);
    }
    if let Some(bound) = &flags.find_users {
        if !name.starts_with("kvcache:") {
            return Err(CliError::usage("--find-users searches a KV-cache preset (kvcache:option1|option2|option3|MODEL)"));
        }
        return super::kv_search::run(flags, jobs, name, sizing, bound);
    }
    if flags.find_accelerators {
        if !name.starts_with("train:") {
            return Err(CliError::usage("--find-accelerators searches a training preset (train:MODEL)"));
        }
        return search(flags, jobs, name, sizing);
    }
    one_host_subset(flags, name)?;
    let specs = preset::specs(name, &sizing, &jobs.global)?;
    let mut observer = progress::Live::new(s.quiet);
    let (result, dir) = execute(specs, RunSetup::from_source(s)?, &mut observer)?;
    let format = flags.format.as_deref().unwrap_or("normal");
    let code = finish(&dir, &result, Some(format))?;
    if let Some(Some(Ok(plan))) = name.strip_prefix("checkpoint:").map(|m| preset::checkpoint_plan(m, &sizing)) {
        super::checkpoint::report(&dir, &result, name, &plan, format == "normal")?;
    }
    Ok(code)
}

/// A subset checkpoint is the rules' one host of 8 ranks writing its share:
/// over several agents it would be several hosts' ranks, which the rules
/// measure as the default mode, so it is refused there by name.
fn one_host_subset(flags: &RunFlags, name: &str) -> Result<(), CliError> {
    let agents = flags.source.fleet.setup()?.map_or(1, |f| f.count());
    match name.strip_suffix(":subset").and_then(|n| n.strip_prefix("checkpoint:")) {
        Some(model) if agents > 1 => Err(CliError::usage(format!(
            "{name} is one host of 8 ranks (the rules' subset mode), and {agents} agents were given: \
             run it on one agent, or checkpoint:{model} to divide the whole checkpoint's ranks over them"
        ))),
        _ => Ok(()),
    }
}

/// One training run with `n` accelerators, in `dir`.
fn probe(flags: &RunFlags, jobs: &JobArgs, name: &str, sizing: &Sizing, n: u32, dir: &Path) -> Result<(RunResult, TrainResult), CliError> {
    let specs = preset::specs(name, &Sizing { workers: Some(n), ..sizing.clone() }, &jobs.global)?;
    let mut observer = progress::Live::new(flags.source.quiet);
    let setup = RunSetup { results_dir: Some(dir.to_path_buf()), ..RunSetup::from_source(&flags.source)? };
    let (result, dir) = execute(specs, setup, &mut observer)?;
    output::write_all(&dir, &result)?;
    let t = result.jobs.first().and_then(|j| j.train().cloned()).ok_or_else(|| CliError::system("a training run without its figures"))?;
    say!("storbench: {n} accelerators: AU {:.1}% ({}), {:.1} samples/s", t.au * 100.0, verdict(&t), t.samples_per_sec);
    Ok((result, t))
}

fn verdict(t: &TrainResult) -> &'static str {
    if t.passed {
        "pass"
    } else {
        "FAIL"
    }
}

/// Double until a run fails the floor, then halve the gap between the most
/// that passed and the fewest that failed.
fn search(flags: &RunFlags, jobs: &JobArgs, name: &str, sizing: Sizing) -> Result<i32, CliError> {
    let base = flags.source.results_dir.clone().unwrap_or_else(output::default_dir);
    let mut probes: Vec<TrainResult> = Vec::new();
    let run = |n: u32, probes: &mut Vec<TrainResult>| -> Result<bool, CliError> {
        let (result, t) = probe(flags, jobs, name, &sizing, n, &base.join(format!("accelerators-{n}")))?;
        let passed = t.passed && !result.interrupted;
        probes.push(t);
        if result.interrupted {
            return Err(CliError {
                message: "interrupted: the search stopped (each probe's results are in its directory)".into(),
                code: EXIT_INTERRUPTED,
            });
        }
        Ok(passed)
    };
    // One batch an epoch each, at least: a larger count has nothing to read.
    let one = preset::specs(name, &Sizing { workers: Some(1), ..sizing.clone() }, &jobs.global)?;
    let limit = one[0].kind.train().map_or(1, preset::max_accelerators).min(MAX_ACCELERATORS as u64) as u32;
    let (pass, fail) = bisect(limit, |n| run(n, &mut probes))?;
    probes.sort_by_key(|p| p.accelerators);
    let mut text = summary(name, pass, fail, &probes);
    if fail.is_none() {
        text.push_str(&format!(
            "  every count up to {limit} passed: the dataset at --scale {} has one batch an epoch for at most {limit} accelerators; raise --scale to try more\n",
            sizing.scale
        ));
    }
    out_part!("{text}");
    crate::output::write_text(&base, "search.txt", &text)?;
    let json = serde_json::json!({ "preset": name, "max_passing": pass, "first_failing": fail, "dataset_limit": limit, "probes": probes });
    crate::output::write_text(&base, "search.json", &serde_json::to_string_pretty(&json).unwrap_or_default())?;
    Ok(if pass == 0 { 1 } else { 0 })
}

/// The most accelerators up to `limit` for which `passes` holds, and the
/// fewest above them that failed: double until a count fails, then halve
/// the gap between the most that passed and the fewest that failed. Used
/// by the plain search and by the search under the rules.
pub fn bisect(limit: u32, mut passes: impl FnMut(u32) -> Result<bool, CliError>) -> Result<(u32, Option<u32>), CliError> {
    let (mut pass, mut fail) = (0u32, None::<u32>);
    let mut n = 1;
    while fail.is_none() && n <= limit {
        match passes(n)? {
            true => pass = n,
            false => fail = Some(n),
        }
        n *= 2;
    }
    if fail.is_none() && pass < limit {
        // Doubling passed the limit: try the limit itself.
        match passes(limit)? {
            true => pass = limit,
            false => fail = Some(limit),
        }
    }
    while let Some(f) = fail.filter(|f| f - pass > 1) {
        let mid = pass + (f - pass) / 2;
        match passes(mid)? {
            true => pass = mid,
            false => fail = Some(mid),
        }
    }
    Ok((pass, fail))
}

fn summary(name: &str, pass: u32, fail: Option<u32>, probes: &[TrainResult]) -> String {
    let floor = probes.first().map_or(0.0, |p| p.au_floor * 100.0);
    let mut out = String::new();
    for p in probes {
        out.push_str(&format!(
            "  {:>4} accelerators: AU {:>5.1}% {}, {:.1} samples/s, {:.1} MiB/s read\n",
            p.accelerators,
            p.au * 100.0,
            verdict(p),
            p.samples_per_sec,
            p.bytes_per_sec / (1 << 20) as f64
        ));
    }
    let next = fail
        .and_then(|f| probes.iter().find(|p| p.accelerators == f))
        .map_or(String::new(), |p| format!(" (next: {} accelerators at AU {:.1}%)", p.accelerators, p.au * 100.0));
    out.push_str(&format!("{name}: at most {pass} accelerators on this client keep AU >= {floor:.0}%{next}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisect_finds_the_most_that_pass_with_the_fewest_probes() {
        let mut tried = Vec::new();
        let below = |k: u32| move |n: u32| -> Result<bool, CliError> { Ok(n <= k) };
        let four = below(4);
        let answer = bisect(100, |n| {
            tried.push(n);
            four(n)
        });
        assert_eq!(answer.unwrap(), (4, Some(5)));
        assert_eq!(tried, vec![1, 2, 4, 8, 6, 5], "doubling, then halving the gap");
        assert_eq!(bisect(3, below(10)).unwrap(), (3, None), "every count up to the limit passed");
        assert_eq!(bisect(100, below(0)).unwrap(), (0, Some(1)));
    }
}
