//! The built-in studies (`storbench study --builtin NAME`), each the whole
//! experiment of one field report, run scaled down against the test
//! targets: files in a scratch directory, the Ceph cluster's RBD and RADOS,
//! the Swift all-in-one and RGW's Swift API, three agents on 127.0.0.x.
//! Each must finish with every step done, a tidy row per point, and leave
//! nothing of its own in the cluster. Sweeps are cut to two
//! values a dimension with `--set` (the built-in's dimensions are
//! variables), so each study stays under two minutes here.

mod common;

use common::fleet::{fleet_dir, Agent};
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};
use storbench_model::study::{StepState, StudyIndex};

/// A built-in study to its end: `study --builtin NAME --scale X --set ...`
/// into `dir/out`, with `env` added. What it printed and how long it took
/// (printed, not judged: the machine is shared).
fn study(dir: &Path, env: &[(&str, String)], name: &str, scale: &str, sets: &[(&str, String)]) -> (Run, Duration) {
    let mut args: Vec<String> = ["study", "--builtin", name, "--scale", scale, "--results-dir", "out", "--quiet"].map(String::from).into();
    for (k, v) in sets {
        args.push("--set".into());
        args.push(format!("{k}={v}"));
    }
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = Instant::now();
    let r = storbench_env(dir, env, &words);
    let took = started.elapsed();
    eprintln!("study --builtin {name} at --scale {scale}: exit {} in {:.1} s", r.code, took.as_secs_f64());
    (r, took)
}

/// Every step done (none failed, interrupted or left pending), each with
/// its results directory (a `cleanup` or `rados cleanup` step writes none),
/// and the study's points.
fn assert_finished(out: &Path, r: &Run, questions: &[&str]) -> StudyIndex {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    let index = StudyIndex::load(out).expect("study.json");
    let asked: Vec<&str> = index.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(asked, questions, "the built-in's questions, in order");
    for step in &index.steps {
        assert_eq!(step.state, StepState::Done, "{} {} {}: {:?}", step.question, step.config, step.line, step.state);
        let writes = !step.command.iter().any(|w| w == "cleanup");
        assert_eq!(out.join(&step.dir).is_dir(), writes, "{}: its results directory", step.dir);
    }
    assert_points(out, &index);
    // The study's report: every question answered, its charts drawn.
    let page = std::fs::read_to_string(out.join("report.html")).expect("the study writes report.html");
    for q in &index.questions {
        assert!(page.contains(&format!("id=\"q-{}\"", q.id)) || page.contains(&q.title), "{}: a section in the report", q.id);
    }
    let charted: Vec<&str> =
        index.questions.iter().filter(|q| q.chart != storbench_model::study::ChartKind::Table).map(|q| q.id.as_str()).collect();
    assert_eq!(page.contains("<svg"), !charted.is_empty(), "charts drawn where a question asks for one");
    // Opened in headless Chromium: every charted question has a drawn, non-empty chart.
    if common::chromium::chromium() {
        let work = out.join("chromium-check");
        std::fs::create_dir_all(&work).unwrap();
        common::chromium::check(&out.join("report.html"), &work, &charted);
        std::fs::remove_dir_all(&work).unwrap();
    }
    if let Some(at) = page.find("not run yet") {
        panic!("a finished study's step said not run: {}", &page[at.saturating_sub(600)..(at + 100).min(page.len())]);
    }
    index
}

/// points.json (and points.csv beside it): for each sweep step, a row of
/// the whole point (scope `all`) per point it ran, carrying every value it
/// swept.
fn assert_points(out: &Path, index: &StudyIndex) {
    let text = std::fs::read_to_string(out.join("points.json")).expect("points.json written");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).expect("points.json is a JSON array");
    let csv = std::fs::read_to_string(out.join("points.csv")).expect("points.csv written");
    assert_eq!(csv.lines().count(), rows.len() + 1, "points.csv: a header and the rows of points.json");
    for step in &index.steps {
        let q = index.question(&step.question).unwrap();
        if q.ask != storbench_model::study::Ask::Sweep {
            continue;
        }
        let sweep = storbench_model::sweep::SweepIndex::load(&out.join(&step.dir)).expect("the step's sweep.json");
        let ran = sweep.points.iter().filter(|p| p.state == storbench_model::sweep::PointState::Done).count();
        let mine: Vec<&serde_json::Value> = rows
            .iter()
            .filter(|r| r["question"] == step.question && r["config"] == step.config && r["line"] == step.line && r["scope"] == "all")
            .collect();
        assert_eq!(mine.len(), ran, "{}: a row per point", step.dir);
        for option in q.sweep.iter().filter_map(|s| s.split_once('=')).map(|(o, _)| o) {
            assert!(mine.iter().all(|r| !r[option].is_null()), "{}: every row carries {option}", step.dir);
        }
    }
}

/// A question's steps, as `config/line`.
fn steps_of(index: &StudyIndex, question: &str) -> Vec<String> {
    index.steps_of(question).map(|s| format!("{}/{}", s.config, s.line)).collect()
}

/// Sheepdog: files driven four ways over block size, cache off and on, and
/// iozone's size x record surface.
#[test]
fn sheepdog_runs_every_way_of_driving_the_disk_on_both_caches() {
    let dir = scratch();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let sets = [("dir", files.display().to_string()), ("bs", "4k,64k".to_string()), ("records", "16k,256k".to_string())];
    let (r, _took) = study(dir.path(), &[], "sheepdog", "0.03", &sets);
    let index = assert_finished(&dir.path().join("out"), &r, &["read-iops", "mixed-iops", "cache", "iozone"]);
    let ways = ["sync-1", "threads-10", "async-qd10", "small-file"];
    let want: Vec<String> = ["off", "on"].iter().flat_map(|c| ways.iter().map(move |w| format!("{c}/{w}"))).collect();
    assert_eq!(steps_of(&index, "read-iops"), want);
    assert_eq!(steps_of(&index, "iozone"), ["off/write", "off/read", "on/write", "on/read"]);
}

/// The Ceph RBD report: volumes x per-volume queue depth for four patterns
/// on both caches; the images written first, and removed at the end.
#[test]
fn ceph_rbd_draws_every_pattern_over_volumes_and_depth_and_removes_its_images() {
    if !ceph_cluster() {
        return;
    }
    let dir = scratch();
    let pool = std::env::var("STORBENCH_RBD_POOL").unwrap();
    let image = format!("sbstudy{}", std::process::id());
    let sets = [
        ("pool", pool.clone()),
        ("conf", std::env::var("CEPH_CONF").unwrap()),
        ("image", image.clone()),
        ("volumes", "1,2".to_string()),
        ("volumes_max", "2".to_string()),
        ("depths", "1,4".to_string()),
    ];
    let (r, _took) = study(dir.path(), &[], "ceph-rbd", "0.03", &sets);
    let index = assert_finished(&dir.path().join("out"), &r, &["fill", "surfaces", "difference", "cleanup"]);
    let patterns = ["seq-write", "rand-write", "seq-read", "rand-read"];
    let want: Vec<String> = ["cache-off", "cache-on"].iter().flat_map(|c| patterns.iter().map(move |p| format!("{c}/{p}"))).collect();
    assert_eq!(steps_of(&index, "surfaces"), want);
    let out = dir.path().join("out");
    for p in patterns {
        let set = storbench_model::RunSet::load(&out.join("surfaces/cache-off").join(p)).expect("the sweep reads back");
        assert_eq!(set.runs.len(), 4, "{p}: 2 volume counts x 2 depths");
        for run in &set.runs {
            let never = run.result.warnings.iter().any(|w| format!("{w:?}").contains("NeverWritten"));
            assert!(!never, "{p}: a point read images never written: {:?}", run.result.warnings);
        }
    }
    let images = std::process::Command::new("rbd").args(["-p", &pool, "ls"]).output().expect("rbd ls");
    let left: Vec<String> = String::from_utf8_lossy(&images.stdout).lines().filter(|l| l.starts_with(&image)).map(String::from).collect();
    assert!(left.is_empty(), "images left: {left:?}");
}

/// The Ceph tools table: disk and network baselines, rados bench, load-gen,
/// fio's rbd engine, rbd bench, fio's libaio engine; nothing left in the pool.
#[test]
fn ceph_tools_fill_one_table_from_the_disk_up() {
    if !ceph_cluster() {
        return;
    }
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let _agent = Agent::start(None, "127.0.0.124:7450", &fleet, dir.path().join("agent.log"), &[]);
    let device = dir.path().join("device.dat");
    std::fs::write(&device, random_bytes(32 << 20, 28)).unwrap();
    let pool = std::env::var("STORBENCH_CEPH_POOL").unwrap();
    let image = format!("sbtools{}", std::process::id());
    let before = rados_objects(&pool, "");
    let sets = [
        ("pool", pool.clone()),
        ("conf", std::env::var("CEPH_CONF").unwrap()),
        ("device", device.display().to_string()),
        ("agents", "127.0.0.124".to_string()),
        ("file", dir.path().join("fio.dat").display().to_string()),
        ("image", image),
    ];
    let env = [("STORBENCH_FLEET_DIR", fleet.display().to_string())];
    let (r, _took) = study(dir.path(), &env, "ceph-tools", "0.05", &sets);
    let index = assert_finished(&dir.path().join("out"), &r, &["layers"]);
    let lines: Vec<String> = index.steps_of("layers").map(|s| s.line.clone()).collect();
    let want = [
        "disk",
        "network",
        "rados-bench-write",
        "rados-bench-seq",
        "rados-bench-rand",
        "rados-cleanup",
        "load-gen-write",
        "load-gen-read",
        "fio-rbd",
        "rbd-bench-seq",
        "rbd-bench-rand",
        "image-cleanup",
        "fio-libaio",
    ];
    assert_eq!(lines, want);
    let mut after = rados_objects(&pool, "");
    // librbd's own pool metadata, made when a pool first holds an image, stays.
    after.retain(|o| !before.contains(o) && !["rbd_directory", "rbd_info", "rbd_trash"].contains(&o.as_str()));
    assert!(after.is_empty(), "objects left in {pool}: {after:?}");
}

/// The report's ssbench scenario (the built-in's default) with 2
/// containers instead of 100: each ramp step creates and removes them one
/// at a time, a minute on the all-in-one at this scale.
fn small_scenario(dir: &Path) -> String {
    let shipped = include_str!("../src/commands/study/builtin/swift.ssbench.json");
    let text = shipped.replace("\"container_count\": 100", "\"container_count\": 2");
    assert_ne!(text, shipped, "the shipped scenario has 100 containers");
    let path = dir.join("scenario.json");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Swift: the ssbench ramp and swift-bench on the Swift all-in-one (through
/// its Keystone) and on RGW's Swift API (v1), compared.
#[test]
fn swift_ramps_and_benches_both_stores_and_compares_them() {
    let (Some(rgw), Some(ks)) = (swift_env("rgw"), keystone_env()) else { return };
    let dir = scratch();
    let get = |env: &[(&'static str, String)], k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    // Keys only in the environment: RGW's v1 key as ST_KEY, Keystone's
    // password as OS_PASSWORD.
    let env = [("ST_KEY", get(&rgw, "ST_KEY")), ("OS_PASSWORD", get(&ks, "OS_PASSWORD")), ("OS_PROJECT_NAME", get(&ks, "OS_PROJECT_NAME"))];
    let sets = [
        ("scenario", small_scenario(dir.path())),
        ("swift_auth", get(&ks, "OS_AUTH_URL")),
        ("swift_user", get(&ks, "OS_USERNAME")),
        ("rgw_auth", get(&rgw, "ST_AUTH")),
        ("rgw_user", get(&rgw, "ST_USER")),
        ("users", "1,4".to_string()),
    ];
    let (r, _took) = study(dir.path(), &env, "swift", "0.02", &sets);
    let out = dir.path().join("out");
    let index = assert_finished(&out, &r, &["ramp", "swift-bench", "stores"]);
    assert_eq!(steps_of(&index, "swift-bench"), ["swift/all", "rgw/all"]);
    for config in ["swift", "rgw"] {
        for users in ["users-1", "users-4"] {
            assert!(out.join("ramp").join(config).join("all").join(users).join("result.json").is_file(), "{config}: the ramp's {users}");
        }
    }
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("Swift PUT") && page.contains("RGW Swift API DELETE") && !page.contains("Swift #1"),
        "swift-bench's phases by name"
    );
    let secrets = [get(&rgw, "ST_KEY"), get(&ks, "OS_PASSWORD")];
    for f in ["study.json", "points.csv", "report.html", "ramp/swift/all/users-1/result.json", "swift-bench/rgw/all/put/result.json"] {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(secrets.iter().all(|s| !text.contains(s.as_str())), "a secret in {f}");
    }
}

/// The SDS/HCI set on three agents: the IOPS-latency curve, the rate at a
/// mean-latency bound, scaling over 1-3 agents, QD32 writes, 8K 70/30,
/// bandwidth and the device baseline.
#[test]
fn hci_runs_the_sds_set_on_a_fleet_of_three() {
    let dir = scratch();
    let fleet = fleet_dir(dir.path(), "fleet");
    let addresses = ["127.0.0.121", "127.0.0.122", "127.0.0.123"];
    let _agents: Vec<Agent> = addresses
        .iter()
        .map(|a| Agent::start(None, &format!("{a}:7450"), &fleet, dir.path().join(format!("agent-{a}.log")), &[]))
        .collect();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let device = dir.path().join("device.dat");
    std::fs::write(&device, random_bytes(32 << 20, 4)).unwrap();
    let sets = [
        ("agents", addresses.join(",")),
        ("dir", files.display().to_string()),
        ("device", device.display().to_string()),
        ("depths", "1,8".to_string()),
        ("depths_oltp", "8".to_string()),
        ("agent_counts", "1,2,3".to_string()),
        ("probes", "4".to_string()),
    ];
    let env = [("STORBENCH_FLEET_DIR", fleet.display().to_string())];
    let (r, _took) = study(dir.path(), &env, "hci", "0.05", &sets);
    let out = dir.path().join("out");
    assert_finished(&out, &r, &["curve", "bound", "scaling", "write-qd32", "oltp", "bandwidth", "device"]);
    let set = storbench_model::RunSet::load(&out.join("scaling/default/all")).expect("the scaling sweep reads back");
    let agents: Vec<usize> = set.runs.iter().map(|run| run.result.jobs[0].per_agent.len()).collect();
    assert_eq!(agents, [1, 2, 3], "the first 1, 2 and 3 agents");
}
