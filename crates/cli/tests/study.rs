//! `storbench study`: a study file's questions run as steps (real sweeps and
//! runs on files), one index, `--dry-run` touching nothing, a failed step
//! recorded while the others go on, and a study stopped by Ctrl-C resumed
//! without redoing what finished.

mod common;
use common::*;
use std::path::Path;
use std::time::Duration;
use storbench_model::study::{Ask, StepState, StudyIndex};

/// Two configurations (page cache, direct), a sweep with two lines, a
/// comparison and a run on one configuration. `extra` goes into the sweep's
/// words (a time-based run for the interrupt test).
fn study_file(dir: &Path, runtime: &str, extra: &str) -> String {
    format!(
        r#"
[study]
title = "files two ways"
scale = {{ runtime = "time" }}
[vars]
dir = "{dir}"
runtime = "{runtime}"
[configs.buffered]
label = "page cache"
vars = {{ direct = "0" }}
[configs.direct]
label = "direct I/O"
vars = {{ direct = "1" }}
[[question]]
id = "bs"
title = "IOPS against block size"
ask = "sweep"
args = ["--name=r", "--rw=randread", "--filename=${{dir}}/f.dat", "--size=8m", "--runtime=${{runtime}}", "--direct=${{direct}}"{extra}]
sweep = ["bs=4k,64k"]
metrics = ["iops", "p99"]
[[question.line]]
name = "sync"
args = ["--ioengine=psync"]
[[question.line]]
name = "qd8"
args = ["--ioengine=io_uring", "--iodepth=8"]
[[question]]
id = "versus"
title = "direct against the page cache"
ask = "compare"
of = "bs"
[[question]]
id = "one"
title = "a write run"
ask = "run"
configs = ["direct"]
args = ["--name=w", "--rw=randwrite", "--filename=${{dir}}/f.dat", "--size=8m", "--runtime=${{runtime}}", "--direct=1", "--bs=4k"]
"#,
        dir = dir.display()
    )
}

#[test]
fn a_study_runs_every_step_into_its_own_directory() {
    let work = scratch();
    std::fs::write(work.path().join("s.toml"), study_file(work.path(), "1", "")).unwrap();
    let r = storbench(work.path(), &["study", "s.toml", "--results-dir", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = work.path().join("out");
    let index = StudyIndex::load(&out).unwrap();
    let dirs: Vec<&str> = index.steps.iter().map(|s| s.dir.as_str()).collect();
    assert_eq!(dirs, ["bs/buffered/sync", "bs/buffered/qd8", "bs/direct/sync", "bs/direct/qd8", "one/direct/all"]);
    assert!(index.steps.iter().all(|s| s.state == StepState::Done), "{:?}", index.steps);
    // Each sweep step is a real sweep with its two points, each a real run.
    for s in &index.steps[..4] {
        let sweep = storbench_model::sweep::SweepIndex::load(&out.join(&s.dir)).unwrap();
        assert_eq!(sweep.points.len(), 2, "{}", s.dir);
        for p in &sweep.points {
            let run = run_result(&out.join(&s.dir).join(&p.dir));
            assert!(run.jobs[0].ops.iter().any(|o| o.ios > 0), "{} {}: measured", s.dir, p.dir);
        }
    }
    // The configuration's variables reached the jobs.
    let direct = storbench_model::sweep::SweepIndex::load(&out.join("bs/direct/qd8")).unwrap();
    let run = run_result(&out.join("bs/direct/qd8").join(&direct.points[0].dir));
    assert!(run.command.iter().any(|w| w == "--direct=1"), "a step's run records the step's command: {:?}", run.command);
    assert_eq!(run.command[..2], ["storbench", "sweep"]);
    assert_eq!(index.question("versus").unwrap().ask, Ask::Compare);
    assert_eq!(index.config_label("buffered"), "page cache");
    assert_eq!(index.vars["runtime"], "1");
    assert!(out.join("study.toml").exists());
    assert!(r.stdout.contains("== study step 5/5: one/direct/all =="), "{}", r.stdout);
    // The tidy table: one row per sweep point (bs as a column) and the run.
    let csv = std::fs::read_to_string(out.join("points.csv")).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert!(head.contains(&"bs") && head.contains(&"question") && head.contains(&"config"), "{head:?}");
    let bs = head.iter().position(|c| *c == "bs").unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 9, "8 sweep points and the run: {csv}");
    let swept: Vec<&str> = rows.iter().map(|r| r[bs]).filter(|v| !v.is_empty()).collect();
    assert_eq!(swept.iter().filter(|v| **v == "4096").count(), 4, "4 sweeps x 1 point at 4k: {csv}");
    assert_eq!(swept.iter().filter(|v| **v == "65536").count(), 4, "{csv}");
    assert!(out.join("points.json").exists());
    let page = std::fs::read_to_string(out.join("report.html")).expect("the study writes its report");
    assert!(page.contains("IOPS against block size") && page.contains("<svg"), "the questions and their charts");
}

#[test]
fn a_dry_run_prints_the_plan_and_touches_nothing() {
    let work = scratch();
    std::fs::write(work.path().join("s.toml"), study_file(work.path(), "10", "")).unwrap();
    let before = listing(work.path());
    let r = storbench(work.path(), &["study", "s.toml", "--results-dir", "out", "--dry-run", "--scale", "0.5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(listing(work.path()), before, "nothing written");
    assert!(r.stdout.contains("(3 questions, 5 steps)"), "{}", r.stdout);
    // --scale 0.5 made the runtime 5 s: 4 sweeps of 2 points and a run.
    assert!(r.stdout.contains("--runtime=5s"), "{}", r.stdout);
    let total = format!("about {} in all", storbench_report::fmt::duration(63.0));
    assert!(r.stdout.contains(&total), "{total}: {}", r.stdout);
}

#[test]
fn a_failed_step_is_recorded_and_the_others_run() {
    let work = scratch();
    let text = study_file(work.path(), "1", "").replace("\"--ioengine=psync\"", "\"--ioengine=nosuch\"");
    std::fs::write(work.path().join("s.toml"), text).unwrap();
    let r = storbench(work.path(), &["study", "s.toml", "--results-dir", "out"]);
    assert_eq!(r.code, 1, "a failed step fails the study: {}", r.stderr);
    let index = StudyIndex::load(&work.path().join("out")).unwrap();
    let failed: Vec<&str> = index.steps.iter().filter(|s| matches!(s.state, StepState::Failed { .. })).map(|s| s.dir.as_str()).collect();
    assert_eq!(failed, ["bs/buffered/sync", "bs/direct/sync"]);
    assert_eq!(index.steps.iter().filter(|s| s.state == StepState::Done).count(), 3);
    match &index.steps[0].state {
        StepState::Failed { code, message } => assert!(*code == 2 && message.contains("nosuch"), "{code} {message}"),
        s => panic!("{s:?}"),
    }
    assert!(r.stderr.contains("study: failed: bs/buffered/sync"), "{}", r.stderr);
}

#[test]
fn an_interrupted_study_resumes_without_redoing_finished_points() {
    let work = scratch();
    std::fs::write(work.path().join("s.toml"), study_file(work.path(), "2", ", \"--time_based\"")).unwrap();
    // Ctrl-C half a second after the second step's first point is done (its second point running).
    let stage = "results in out/bs/buffered/qd8/001_bs-4k";
    let (r, _) =
        signalled(work.path(), &[], &["study", "s.toml", "--results-dir", "out"], &[(stage, Duration::from_millis(500), libc::SIGINT)]);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(r.stderr.contains("storbench study --resume out"), "{}", r.stderr);
    let out = work.path().join("out");
    let index = StudyIndex::load(&out).unwrap();
    let states: Vec<&StepState> = index.steps.iter().map(|s| &s.state).collect();
    assert_eq!(states[0], &StepState::Done);
    assert_eq!(states[1], &StepState::Interrupted);
    assert!(states[2..].iter().all(|s| **s == StepState::Pending), "{states:?}");
    let first = out.join("bs/buffered/sync/001_bs-4k/result.json");
    let stamp = std::fs::metadata(&first).unwrap().modified().unwrap();
    // The interrupted step's finished point, kept by its sweep's resume.
    let point = out.join("bs/buffered/qd8/001_bs-4k/result.json");
    let point_stamp = std::fs::metadata(&point).unwrap().modified().unwrap();

    let r = storbench(work.path(), &["study", "--resume", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("4 of 5 steps left"), "{}", r.stderr);
    assert!(r.stderr.contains("resuming the sweep in"), "the interrupted sweep goes on from its index: {}", r.stderr);
    let index = StudyIndex::load(&out).unwrap();
    assert!(index.steps.iter().all(|s| s.state == StepState::Done), "{:?}", index.steps);
    assert_eq!(std::fs::metadata(&first).unwrap().modified().unwrap(), stamp, "a finished step is not run again");
    assert_eq!(
        std::fs::metadata(&point).unwrap().modified().unwrap(),
        point_stamp,
        "a finished point of the interrupted step is not run again"
    );
    let second = storbench_model::sweep::SweepIndex::load(&out.join("bs/buffered/qd8")).unwrap();
    assert_eq!(second.points.len(), 2);
    assert!(second.points.iter().all(|p| p.state == storbench_model::sweep::PointState::Done));
}

#[test]
fn a_study_directory_is_not_started_twice() {
    let work = scratch();
    std::fs::write(work.path().join("s.toml"), study_file(work.path(), "1", "")).unwrap();
    let text = std::fs::read_to_string(work.path().join("s.toml")).unwrap();
    let only_run = text
        .split("[[question]]")
        .last()
        .map(|q| {
            format!(
                "[study]\ntitle = \"w\"\n[vars]\ndir = \"{}\"\nruntime = \"1\"\n[configs.direct]\n[[question]]{q}",
                work.path().display()
            )
        })
        .unwrap();
    std::fs::write(work.path().join("w.toml"), only_run).unwrap();
    assert_eq!(storbench(work.path(), &["study", "w.toml", "--results-dir", "out"]).code, 0);
    let r = storbench(work.path(), &["study", "w.toml", "--results-dir", "out"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("holds a study already") && r.stderr.contains("--resume out"), "{}", r.stderr);
}
