//! AI presets: training runs report samples/s and accelerator utilization
//! (on files and on RGW), the accelerator search finds a count that passes
//! with one more that fails (on the simulated store, where the answer is
//! known), and a checkpoint writes ten, syncs and reads the ten back, every
//! rank its shard (on files, in subset mode, and on one RBD image); a KV
//! tier serves its users, and a vector collection's index is searched (on
//! files and on one RBD image).

mod common;
use common::*;

fn train(doc: &serde_json::Value) -> &serde_json::Value {
    &doc["jobs"][0]["train"]
}

/// The figures of a training run hang together: steps of whole batches,
/// samples/s from them, AU within (0, 1], bytes read that the samples explain.
fn check_training(doc: &serde_json::Value, batch: u64, record: u64) {
    let t = train(doc);
    let (samples, steps) = (t["samples"].as_u64().unwrap(), t["steps"].as_u64().unwrap());
    assert!(steps > 0 && samples == steps * batch, "{t}");
    let secs = t["runtime_ns"].as_f64().unwrap() / 1e9;
    assert!((t["samples_per_sec"].as_f64().unwrap() - samples as f64 / secs).abs() < 1e-6 * samples as f64, "{t}");
    let au = t["au"].as_f64().unwrap();
    assert!(au > 0.0 && au <= 1.0, "{t}");
    assert_eq!(t["passed"].as_bool().unwrap(), au >= t["au_floor"].as_f64().unwrap(), "{t}");
    let read = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap()["bytes"].as_u64().unwrap();
    assert_eq!(read, samples * record, "every sample read once, measured: {t}");
}

#[test]
fn training_presets_report_samples_and_utilization_on_files() {
    let d = scratch();
    for (preset, scale, batch, record) in [("train:unet3d", "0.042", 7, 146_600_628), ("train:resnet50", "0.0004", 400, 114_660)] {
        let r = storbench(
            d.path(),
            &["run", "--preset", preset, "--scale", scale, "--epochs", "1", "--unlink", "1", "--results-dir", preset, "--quiet"],
        );
        assert_eq!(r.code, 0, "{preset}: {}", r.stderr);
        let doc = result_json(&d.path().join(preset));
        check_training(&doc, batch, record);
        assert!(r.stdout.contains("samples/s") && r.stdout.contains("AU "), "{}", r.stdout);
        let html = d.path().join(format!("report-{}.html", &preset[6..]));
        let h = storbench(d.path(), &["report", preset, "-o", html.to_str().unwrap()]);
        assert_eq!(h.code, 0, "{}", h.stderr);
        assert!(std::fs::read_to_string(&html).unwrap().contains("Accelerator utilization"), "the HTML report has the training figures");
    }
    assert!(listing(d.path()).iter().all(|f| !f.starts_with("unet3d.") && !f.starts_with("resnet50.")), "the datasets were removed");
}

/// Every preset the configs added (other accelerators, newer workloads),
/// scaled down, on files: whole batches, AU, every sample read once.
#[test]
fn every_accelerator_and_newer_workload_trains_on_files() {
    let d = scratch();
    let presets = [
        ("train:unet3d:a100", "0.042", 7, 146_600_628),
        ("train:unet3d:b200", "0.001", 7, 146_600_628),
        ("train:resnet50:a100", "0.0004", 400, 114_660),
        ("train:cosmoflow:a100", "0.0001", 1, 2_828_486),
        ("train:retinanet:b200", "0.0001", 24, 322_957),
        ("train:retinanet:mi355", "0.0001", 32, 322_957),
        ("train:flux:b200", "0.0001", 48, 2_164_832),
        ("train:flux:mi355", "0.0001", 72, 2_164_832),
    ];
    for (preset, scale, batch, record) in presets {
        let dir = preset.replace(':', "-");
        let r = storbench(
            d.path(),
            &["run", "--preset", preset, "--scale", scale, "--epochs", "1", "--unlink", "1", "--results-dir", &dir, "--quiet"],
        );
        assert_eq!(r.code, 0, "{preset}: {}", r.stderr);
        let doc = result_json(&d.path().join(&dir));
        check_training(&doc, batch, record);
        assert_eq!(train(&doc)["model"], preset[6..], "{preset}: the accelerator is named");
    }
    assert!(
        listing(d.path()).iter().all(|f| !f.contains(".npz") && !f.contains(".jpeg") && !f.contains(".parquet")),
        "the datasets were removed"
    );
}

/// dlrm's files are Parquet-like: 3 files of 2 row groups of 6144 rows
/// at --scale 0.00001, of which each row group's 40 selected columns (160
/// of 761 bytes a row) are read, one ranged read each, and nothing else.
#[test]
fn dlrm_reads_only_the_selected_columns_of_its_row_groups() {
    let d = scratch();
    for (preset, batch) in [("train:dlrm:b200", 16384), ("train:dlrm:mi355", 18432)] {
        let dir = preset.replace(':', "-");
        let r = storbench(d.path(), &["run", "--preset", preset, "--scale", "0.00001", "--results-dir", &dir, "--quiet"]);
        assert_eq!(r.code, 0, "{preset}: {}", r.stderr);
        let doc = result_json(&d.path().join(&dir));
        let t = train(&doc);
        // 36864 rows: 2 whole batches, for which all 6 row groups are read.
        assert_eq!((t["steps"].as_u64(), t["samples"].as_u64()), (Some(2), Some(2 * batch)), "{t}");
        let read = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap().clone();
        assert_eq!(read["ios"].as_u64(), Some(6 * 40), "40 column reads a row group: {read}");
        assert_eq!(read["bytes"].as_u64(), Some(6 * 160 * 6144), "only the selected columns: {read}");
        for f in 0..3 {
            let len = std::fs::metadata(d.path().join(format!("dlrm.{f}.parquet"))).unwrap().len();
            assert_eq!(len, 2 * 6144 * 761, "a file holds every column of its row groups");
        }
    }
}

#[test]
fn training_presets_read_their_dataset_from_rgw() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    for (preset, scale, batch, record) in [("train:unet3d", "0.042", 7, 146_600_628), ("train:resnet50", "0.0004", 400, 114_660)] {
        let bucket = format!("sbtrain{}{}", std::process::id(), &preset[6..9]);
        let r = storbench_env(
            d.path(),
            &env,
            &[
                "run",
                "--ioengine",
                "s3",
                "--bucket",
                &bucket,
                "--preset",
                preset,
                "--scale",
                scale,
                "--epochs",
                "1",
                "--results-dir",
                preset,
                "--quiet",
            ],
        );
        assert_eq!(r.code, 0, "{preset}: {}", r.stderr);
        check_training(&result_json(&d.path().join(preset)), batch, record);
    }
}

/// The newer workloads from RGW: retinanet's small samples as whole
/// objects, dlrm's selected columns as ranged reads of each row group.
#[test]
fn newer_workloads_read_their_dataset_from_rgw() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    for (preset, scale) in [("train:retinanet:b200", "0.0001"), ("train:dlrm:b200", "0.00001")] {
        let bucket = format!("sbtrain{}{}", std::process::id(), &preset[6..10]);
        let args = ["run", "--ioengine", "s3", "--bucket", &bucket, "--preset", preset, "--scale", scale, "--epochs", "1"];
        let r = storbench_env(d.path(), &env, &args.into_iter().chain(["--results-dir", preset, "--quiet"]).collect::<Vec<_>>());
        assert_eq!(r.code, 0, "{preset}: {}", r.stderr);
        let doc = result_json(&d.path().join(preset));
        match preset {
            "train:retinanet:b200" => check_training(&doc, 24, 322_957),
            _ => {
                assert_eq!(ios(&doc, 0, "read"), 6 * 40, "40 ranged reads a row group");
                let read = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap()["bytes"].as_u64();
                assert_eq!(read, Some(6 * 160 * 6144), "only the selected columns");
            }
        }
    }
}

#[test]
fn the_accelerator_search_finds_the_most_that_pass() {
    // A store of 2 servers at 2.22 ms an operation serves 900 reads/s;
    // cosmoflow's accelerator reads a sample every 3.5 ms (286/s) and must
    // compute 70% of the time: 4 pass (AU about 0.79), 5 do not (0.63).
    let d = scratch();
    let r = storbench(
        d.path(),
        &["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--epochs", "1", "--ioengine", "null", "--service_time", "2220us"]
            .into_iter()
            .chain(["--servers", "2", "--find-accelerators", "--results-dir", "search", "--quiet"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("search/search.json")).unwrap()).unwrap();
    let best = s["max_passing"].as_u64().unwrap();
    // 4 by the arithmetic; a loaded machine may cost one either side.
    assert!((3..=5).contains(&best), "{s}");
    assert_eq!(s["first_failing"].as_u64(), Some(best + 1));
    let probe = |n: u64| s["probes"].as_array().unwrap().iter().find(|p| p["accelerators"] == n).cloned().unwrap();
    assert_eq!(probe(best)["passed"], true);
    assert_eq!(probe(best + 1)["passed"], false);
    let run = result_json(&d.path().join(format!("search/accelerators-{best}")));
    assert_eq!(train(&run)["accelerators"], best, "each probe keeps its run");
    assert!(r.stdout.contains(&format!("at most {best} accelerators")), "{}", r.stdout);
}

#[test]
fn the_search_stops_where_the_dataset_does_and_says_so() {
    // 500 resnet50 samples hold one batch of 400: one accelerator at most.
    let d = scratch();
    let r = storbench(
        d.path(),
        &["run", "--preset", "train:resnet50", "--scale", "0.0004", "--epochs", "1", "--ioengine", "null", "--find-accelerators"]
            .into_iter()
            .chain(["--results-dir", "s", "--quiet"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("s/search.json")).unwrap()).unwrap();
    assert_eq!((s["max_passing"].as_u64(), s["dataset_limit"].as_u64()), (Some(1), Some(1)), "{s}");
    assert!(s["first_failing"].is_null());
    assert!(r.stdout.contains("raise --scale"), "{}", r.stdout);
}

/// The rules' figures in checkpoint.json: ten durations a phase, each its
/// job's (the slowest rank's) time, and the slowest rank's throughput.
fn check_checkpoint_figures(results: &std::path::Path, ranks: u64, shard: u64, mode: &str) {
    let doc = result_json(results);
    let f: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(results.join("checkpoint.json")).unwrap()).unwrap();
    assert_eq!(f["valid"], true, "{f}");
    assert_eq!((f["ranks"].as_u64(), f["rank_bytes"].as_u64(), f["mode"].as_str()), (Some(ranks), Some(shard), Some(mode)), "{f}");
    for (phase, first) in [("write", 0), ("read", 10)] {
        let d: Vec<f64> = f[phase]["durations_s"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(d.len(), 10, "{phase}: ten checkpoints");
        assert!(f[phase]["incomplete"].is_null(), "every checkpoint whole: {f}");
        for (n, s) in d.iter().enumerate() {
            assert_eq!(*s, doc["jobs"][first + n]["runtime_ns"].as_f64().unwrap() / 1e9, "{phase} {n}: the job's time");
        }
        let mean = d.iter().sum::<f64>() / 10.0;
        let rank = f[phase]["rank_bytes_per_sec"].as_f64().unwrap();
        assert!((rank - shard as f64 / mean).abs() < 1e-6 * rank, "{phase}: a rank's bytes over the mean time: {f}");
    }
}

#[test]
fn a_checkpoint_writes_ten_syncs_and_reads_the_ten_back() {
    let d = scratch();
    let r = storbench(d.path(), &["run", "--preset", "checkpoint:llama3-8b", "--scale", "0.0001", "--results-dir", "ck", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("ck"));
    // 105 GiB x 0.0001 / 8 ranks = 1.34 MiB: 2 in whole MiB.
    let shard = 2u64 << 20;
    let bytes = |job: usize, op: &str| {
        doc["jobs"][job]["ops"].as_array().unwrap().iter().find(|o| o["op"] == op).map_or(0, |o| o["bytes"].as_u64().unwrap())
    };
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 20, "10 written, then 10 read");
    for n in 0..10 {
        assert_eq!(doc["jobs"][n]["workers"], 8, "llama3-8b: 8 ranks");
        assert_eq!(bytes(n, "write"), 8 * shard, "checkpoint {n}");
        assert_eq!(bytes(n + 10, "read"), 8 * shard, "checkpoint {n} read back");
        assert_eq!(doc["jobs"][n]["spec"]["end_fsync"], true, "fsync on every checkpoint");
        assert_eq!(doc["jobs"][n + 10]["spec"]["invalidate"], true, "the page cache dropped before reading");
        for w in 0..8 {
            let f = d.path().join(format!("checkpoint-llama3-8b-{}.{w}.0", n + 1));
            assert_eq!(std::fs::metadata(&f).map(|m| m.len()).ok(), Some(shard), "{}", f.display());
        }
    }
    check_checkpoint_figures(&d.path().join("ck"), 8, shard, "default");
    assert!(r.stdout.contains("checkpoint:llama3-8b write: 10 checkpoints of 16.0 MiB on 8 ranks"), "{}", r.stdout);
}

/// A run interrupted in its third checkpoint (8 ranks at 4 MiB/s each:
/// half a second a checkpoint): the one cut short moved half its bytes in
/// half the time, so counted whole it once inflated the mean throughput;
/// now only whole checkpoints are in the figures, the rest are named, and
/// the result is marked invalid.
#[test]
fn an_interrupted_checkpoint_is_left_out_of_the_figures_and_the_result_is_invalid() {
    let d = scratch();
    let r = interrupted(
        d.path(),
        // 8 ranks of 2 MiB at 1 MiB/s: a checkpoint takes 2 s, so 3 s in is
        // the middle of the second (at 4 MiB/s and 1.3 s, 3 runs in 10 fell
        // between two checkpoints and none was cut short).
        &["run", "--rate", "1m", "--preset", "checkpoint:llama3-8b", "--scale", "0.0001", "--results-dir", "ck", "--quiet"],
        std::time::Duration::from_millis(3000),
    );
    assert_eq!(r.code, 130, "{}", r.stderr);
    let doc = result_json(&d.path().join("ck"));
    let f: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("ck/checkpoint.json")).unwrap()).unwrap();
    assert_eq!(f["valid"], false, "{f}");
    let jobs = doc["jobs"].as_array().unwrap();
    let whole: Vec<&serde_json::Value> = jobs.iter().filter(|j| j["interrupted"] == false).collect();
    let durations: Vec<f64> = f["write"]["durations_s"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(durations.len(), whole.len(), "only whole checkpoints: {f}");
    assert!(jobs.len() > whole.len(), "one was cut short: {doc}");
    let seconds: f64 = durations.iter().sum();
    let bytes = 16u64 << 20;
    if seconds > 0.0 {
        let rate = f["write"]["bytes_per_sec"].as_f64().unwrap();
        assert!((rate - (whole.len() as u64 * bytes) as f64 / seconds).abs() < 1e-6 * rate, "the whole ones' bytes over their time: {f}");
    }
    let incomplete: Vec<&str> = f["write"]["incomplete"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(incomplete.iter().any(|i| i.ends_with("interrupted")) && incomplete.iter().any(|i| i.ends_with("not run")), "{f}");
    assert_eq!(f["read"]["durations_s"].as_array().unwrap().len(), 0, "{f}");
    assert!(r.stdout.contains("INVALID under the rules"), "{}", r.stdout);
}

#[test]
fn a_subset_checkpoint_is_one_host_of_eight_writing_their_share() {
    let d = scratch();
    let r = storbench(
        d.path(),
        &["run", "--preset", "checkpoint:llama3-405b:subset", "--scale", "0.0001", "--unlink", "1", "--results-dir", "ck", "--quiet"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // 94 GiB (the first 8 of 512 ranks) x 0.0001 / 8 = 1.2 MiB: 2.
    check_checkpoint_figures(&d.path().join("ck"), 8, 2 << 20, "subset");
    let r = storbench(d.path(), &["run", "--preset", "checkpoint:llama3-8b:subset"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no subset mode"), "{}", r.stderr);
}

#[test]
fn a_checkpoint_on_one_rbd_image_gives_each_checkpoint_its_span() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let img = format!("sbck-{}", std::process::id());
    let r = storbench(
        d.path(),
        &["run", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--preset", "checkpoint:llama3-8b", "--scale", "0.0001"]
            .into_iter()
            .chain(["--results-dir", "ck", "--quiet"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("ck"));
    for n in 0..10 {
        assert_eq!(ios(&doc, n, "write"), 16, "8 ranks x 2 MiB in 1 MiB writes");
        assert_eq!(ios(&doc, n, "sync"), 8, "a flush after each rank's last write");
        assert_eq!(ios(&doc, n + 10, "read"), 16);
        assert_eq!(doc["jobs"][n]["spec"]["offset"].as_u64(), Some(((9 - n as u64) * 16) << 20), "checkpoint {n}'s own span");
    }
    check_checkpoint_figures(&d.path().join("ck"), 8, 2 << 20, "default");
    let left = std::process::Command::new("rbd").args(["ls", "rbd"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&left.stdout).lines().any(|l| l == img), "the image it made is removed");
}

/// On one RBD image a training dataset is its files one after another,
/// written by the job before it reads them: all 46 files of resnet50 at
/// this scale are on the image when the run ends (before, every file was
/// read from the image's first 6.4 MB, which no one had written: zeros that
/// never reached an OSD, and the run said so in a warning).
#[test]
fn a_training_preset_on_one_rbd_image_writes_its_dataset_first() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let img = format!("sbtr-{}", std::process::id());
    let rbd = |args: &[&str]| std::process::Command::new("rbd").args(args).output().unwrap();
    // 46 files of 56 samples of 114,660 bytes.
    let dataset: u64 = 46 * 56 * 114_660;
    assert!(rbd(&["create", "--size", "300M", &format!("rbd/{img}")]).status.success());
    let r = storbench(
        d.path(),
        &["run", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--allow_overwrite", "1", "--preset", "train:resnet50"]
            .into_iter()
            .chain(["--scale", "0.002", "--epochs", "1", "--results-dir", "tr", "--quiet"])
            .collect::<Vec<_>>(),
    );
    let written = rbd_written(&format!("rbd/{img}"));
    rbd(&["rm", "--no-progress", &format!("rbd/{img}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(written >= dataset && written <= 300 << 20, "every file of the dataset written: {written} of {dataset} bytes");
    let doc = result_json(&d.path().join("tr"));
    assert_eq!(train(&doc)["samples"].as_u64(), Some(2400), "a step of 400 for each of 6 batches");
    let warnings = doc["warnings"].to_string();
    assert!(!warnings.contains("never_written_reads"), "{warnings}");
}

#[test]
fn bad_presets_are_refused_before_anything_runs() {
    let d = scratch();
    let r = storbench(d.path(), &["run", "--preset", "train:gpt9"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("train:unet3d"), "{}", r.stderr);
    let r = storbench(d.path(), &["run", "--preset", "checkpoint:llama3-8b", "--find-accelerators"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = storbench(d.path(), &["run", "--preset", "train:unet3d", "--scale", "0.001"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("raise --scale"), "{}", r.stderr);
    assert!(listing(d.path()).is_empty(), "nothing written: {:?}", listing(d.path()));
}

/// A vector collection on files: one index laid out for every query
/// process, each query reading its search list of whole nodes in every
/// segment (measured: the engine's reads of 8 KiB, and the requests that
/// ended, hang together), requests of the batch given, figures in the text
/// and JSON (schema-valid), and the index left for the next run to reuse.
#[test]
fn a_vectordb_preset_searches_every_segment_of_its_index_on_files() {
    let d = scratch();
    let args = ["run", "--preset", "vectordb:1m", "--scale", "0.002", "--accelerators", "2", "--query-batch", "2", "--runtime", "2"];
    let r = storbench(d.path(), &[&args[..], &["--results-dir", "out", "--quiet"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("vectordb vectordb-1m (1m diskann, 2000 vectors of 1536 dimensions in 3 segment(s)"), "{}", r.stdout);
    assert!(r.stdout.contains("2 process(es), 2 queries a request") && r.stdout.contains("queries/s"), "{}", r.stdout);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let v = &doc["jobs"][0]["vectordb"];
    let n = |f: &str| v[f].as_u64().unwrap_or_else(|| panic!("{f} in {v}"));
    // 667 nodes of 8 KiB a segment, after its metadata sector.
    assert_eq!((n("segments"), n("node_bytes"), n("index_bytes")), (3, 8192, 3 * (4096 + 667 * 8192)), "{v}");
    assert!(n("requests") > 0 && n("queries") == 2 * n("requests"), "{v}");
    assert_eq!(v["reads_per_query"].as_f64(), Some(600.0), "200 nodes of each of 3 segments: {v}");
    assert_eq!(v["latency"]["count"].as_u64(), Some(n("requests")));
    let read = doc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read").unwrap().clone();
    let (ios, bytes) = (read["ios"].as_u64().unwrap(), read["bytes"].as_u64().unwrap());
    assert_eq!(bytes, ios * 8192, "a read is a whole node");
    // The engine's reads: the ended requests', plus at most a request a process cut short.
    assert!(ios >= n("queries") * 600 && ios <= (n("queries") + 2 * 2) * 600, "{ios} reads, {v}");
    let secs = n("runtime_ns") as f64 / 1e9;
    assert!((v["queries_per_sec"].as_f64().unwrap() - n("queries") as f64 / secs).abs() < 1e-6 * n("queries") as f64 + 1e-9, "{v}");
    let index = d.path().join("vectordb-1m.index");
    assert_eq!(std::fs::metadata(&index).map(|m| m.len()).ok(), Some(n("index_bytes")), "one index, laid out once");
    let warnings = doc["jobs"][0]["warnings"].to_string() + &doc["warnings"].to_string();
    assert!(!warnings.contains("never_written_reads"), "{warnings}");
    for (args, says) in [
        (&["--preset", "vectordb:100b"][..], "no preset 'vectordb:100b'"),
        (&["--preset", "vectordb:1m", "--ioengine", "s3", "--bucket", "b"][..], "read in place"),
        (&["--preset", "train:unet3d", "--query-batch", "4"][..], "--query-batch"),
        (&["--preset", "vectordb:10m", "--scale", "0.0001"][..], "fewer than the search list"),
        (&["--preset", "vectordb:1m", "--dataset_exists", "1"][..], "dataset_exists is for an RBD image or NBD export"),
        (
            &["--name", "j", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", "x", "--dataset_exists", "1", "--size", "1m"][..],
            "this job has none",
        ),
    ] {
        let r = storbench(d.path(), &[&["run"], args, &["--results-dir", "no"]].concat());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!d.path().join("no").exists());
    }
}

/// On an RBD image the index is written first (nothing lays an image out),
/// by the query processes together, then searched: the image holds the
/// whole index and no read was of never-written blocks. With
/// `--dataset_exists 1` a later run reads it as it is, and on a blank
/// image writes nothing and warns of the reads.
#[test]
fn a_vectordb_preset_on_an_rbd_image_writes_its_index_first() {
    if !ceph_cluster() {
        return;
    }
    let d = scratch();
    let img = format!("sbvd-{}", std::process::id());
    let rbd = |args: &[&str]| std::process::Command::new("rbd").args(args).output().unwrap();
    assert!(rbd(&["create", "--size", "64M", &format!("rbd/{img}")]).status.success());
    let r = storbench(
        d.path(),
        &["run", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", &img, "--allow_overwrite", "1", "--preset", "vectordb:1m-512"]
            .into_iter()
            .chain(["--scale", "0.01", "--accelerators", "2", "--runtime", "2", "--results-dir", "vd", "--quiet"])
            .collect::<Vec<_>>(),
    );
    let written = rbd_written(&format!("rbd/{img}"));
    // --dataset_exists: the index is read as the first run left it, and on
    // an image nothing wrote, nothing is written and the reads are warned of.
    let again = |image: &str, out: &str| {
        storbench(
            d.path(),
            &["run", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", image, "--dataset_exists", "1", "--preset", "vectordb:1m-512"]
                .into_iter()
                .chain(["--scale", "0.01", "--runtime", "1", "--results-dir", out, "--quiet"])
                .collect::<Vec<_>>(),
        )
    };
    let reused = again(&img, "reused");
    let fresh = format!("{img}-new");
    assert!(rbd(&["create", "--size", "64M", &format!("rbd/{fresh}")]).status.success());
    let unwritten = again(&fresh, "unwritten");
    let fresh_written = rbd_written(&format!("rbd/{fresh}"));
    rbd(&["rm", "--no-progress", &format!("rbd/{img}")]);
    rbd(&["rm", "--no-progress", &format!("rbd/{fresh}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!((reused.code, unwritten.code), (0, 0), "{}\n{}", reused.stderr, unwritten.stderr);
    let warned = |out: &str| {
        let doc = result_json(&d.path().join(out));
        doc["warnings"].to_string() + &doc["jobs"][0]["warnings"].to_string()
    };
    assert!(!warned("reused").contains("never_written_reads"), "the first run's index: {}", warned("reused"));
    assert_eq!(fresh_written, 0, "nothing written with --dataset_exists");
    assert!(warned("unwritten").contains("never_written_reads"), "reads of a blank image are warned of: {}", warned("unwritten"));
    // 10,000 nodes of 2,180 bytes, one a sector, after the metadata sector.
    let index: u64 = 4096 + 10_000 * 4096;
    assert!(written >= index && written <= 64 << 20, "the whole index written: {written} of {index} bytes");
    let doc = result_json(&d.path().join("vd"));
    let v = &doc["jobs"][0]["vectordb"];
    assert_eq!((v["index_bytes"].as_u64(), v["node_bytes"].as_u64(), v["segments"].as_u64()), (Some(index), Some(4096), Some(1)), "{v}");
    assert!(v["queries"].as_u64().unwrap() > 0 && v["reads_per_query"].as_f64() == Some(100.0), "{v}");
    let warnings = doc["warnings"].to_string() + &doc["jobs"][0]["warnings"].to_string();
    assert!(!warnings.contains("never_written_reads"), "{warnings}");
}

/// A KV-cache tier on files: two clients serve their users, each request
/// writing its entry with an fsync and reading it back while it decodes;
/// the figures hang together (every arrival served or still waiting, an
/// fsync for each entry stored, tokens/s from the run's time), a small
/// tier drops entries, and the files are removed.
#[test]
fn a_kvcache_preset_serves_its_users_on_files() {
    let d = scratch();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--preset",
            "kvcache:tiny-1b",
            "--scale",
            "0.02",
            "--accelerators",
            "2",
            "--size",
            "256m",
            "--runtime",
            "4",
            "--unlink",
            "1",
            "--results-dir",
            "out",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("kvcache kvcache-tiny-1b (tiny-1b): 2 client(s), 8 users") && r.stdout.contains("tokens/s"), "{}", r.stdout);
    let doc = result_json(&d.path().join("out"));
    assert_valid(&doc);
    let k = &doc["jobs"][0]["kvcache"];
    let n = |f: &str| k[f].as_u64().unwrap_or_else(|| panic!("{f} in {k}"));
    assert!(n("served") > 0 && n("arrived") == n("served") + n("pending"), "{k}");
    assert!(n("stored") > 0 && n("hits_storage") > 0, "{k}");
    assert!(n("evicted") + n("uncached") > 0, "256 MiB a client holds few entries: {k}");
    let ops = doc["jobs"][0]["ops"].as_array().unwrap();
    let ios = |op: &str| ops.iter().find(|o| o["op"] == op).map_or(0, |o| o["ios"].as_u64().unwrap());
    // An entry's writes cut by the end of the run may miss their fsync (16 at once a client).
    assert!(ios("sync") <= n("stored") && ios("sync") + 32 >= n("stored"), "{} fsyncs, {k}", ios("sync"));
    assert!(ios("read") > 0 && ios("write") > 0);
    let secs = n("runtime_ns") as f64 / 1e9;
    assert!(
        (k["tokens_per_sec"].as_f64().unwrap() - n("generated_tokens") as f64 / secs).abs() < 1e-6 * n("generated_tokens") as f64 + 1e-9
    );
    assert_eq!(k["latency"]["count"].as_u64().unwrap(), n("served"));
    let warnings = doc["jobs"][0]["warnings"].to_string() + &doc["warnings"].to_string();
    assert!(!warnings.contains("never_written_reads"), "it reads only what it wrote: {warnings}");
    assert!(listing(d.path()).iter().all(|f| !f.starts_with("kvcache-")), "the files were removed");
    for (args, says) in [
        (&["--preset", "kvcache:gpt-9"][..], "no preset 'kvcache:gpt-9'"),
        (&["--preset", "kvcache:option1", "--ioengine", "s3", "--bucket", "b"][..], "runs on blocks"),
    ] {
        let r = storbench(d.path(), &[&["run"], args, &["--results-dir", "no"]].concat());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!d.path().join("no").exists());
    }
}

/// `--find-users`: each count of users a client is a run of its own (in
/// `users-N`), judged by the share of requests that ended within the bound
/// (a request still waiting past it at the end counts against it), doubled
/// until one fails, then the gap halved: the count found passed and the
/// one above it failed. On the simulated store (the null engine, 5 ms per
/// 16 MiB operation: a known server, so one user a client is served well
/// within the bound, p90 about 0.6 s here, and more users must queue).
#[test]
fn a_kvcache_search_finds_the_most_users_within_a_latency_bound() {
    let d = scratch();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--preset",
            "kvcache:tiny-1b",
            "--accelerators",
            "2",
            "--ioengine",
            "null",
            "--service_time",
            "5ms",
            "--bs",
            "16m",
            "--size",
            "1g",
            "--runtime",
            "5",
            "--find-users",
            "p90=3s",
            "--results-dir",
            "out",
            "--quiet",
        ],
    );
    let search: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("out/search.json")).unwrap()).unwrap();
    let pass = search["max_users_per_client"].as_u64().unwrap();
    let fail = search["first_failing"].as_u64().expect("more users queue until one count fails");
    assert!(pass >= 1 && r.code == 0, "one user a client is served within the bound: {search}\n{}", r.stderr);
    assert_eq!(fail, pass + 1, "the gap halved to one: {search}");
    let probes = search["probes"].as_array().unwrap();
    let tried: Vec<u64> = probes.iter().map(|p| p["users"].as_u64().unwrap()).collect();
    assert!(tried.starts_with(&[1]) && tried.contains(&fail), "{tried:?}");
    for p in probes {
        let (users, met, judged) = (p["users"].as_u64().unwrap(), p["met"].as_u64().unwrap(), p["judged"].as_u64().unwrap());
        let passed = p["passed"].as_bool().unwrap();
        assert_eq!(passed, judged > 0 && met as f64 >= 0.9 * judged as f64, "{p}");
        assert_eq!(passed, users <= pass, "every count tried up to the answer passed, every one above failed: {p}");
        let dir = d.path().join("out").join(p["run"].as_str().unwrap());
        assert_valid(&result_json(&dir));
        let result = run_result(&dir);
        let k = result.jobs[0].kvcache().expect("the probe's KV figures");
        assert_eq!(k.users as u64, 2 * users, "users a client x 2 clients");
        assert_eq!(k.waiting_histogram.count(), k.pending, "each pending request's wait is kept");
        assert_eq!(k.within(3_000_000_000), (met, judged));
        assert!(judged >= k.served && met <= k.served, "{p}");
    }
    let text = std::fs::read_to_string(d.path().join("out/search.txt")).unwrap();
    assert!(text.contains(&format!("at most {pass} users a client keep 90% of requests within 3000 ms")), "{text}");
    // A training preset, or a mean, is refused before anything runs.
    let r = storbench(d.path(), &["run", "--preset", "train:unet3d", "--find-users", "p95=1s", "--results-dir", "t"]);
    assert!(r.code == 2 && r.stderr.contains("--find-users searches a KV-cache preset"), "{}", r.stderr);
    let r =
        storbench(d.path(), &["run", "--preset", "kvcache:tiny-1b", "--ioengine", "null", "--find-users", "mean=1s", "--results-dir", "m"]);
    assert!(r.code == 2 && r.stderr.contains("not a mean"), "{}", r.stderr);
    assert!(!d.path().join("t").exists() && !d.path().join("m").exists());
}
