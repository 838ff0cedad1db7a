//! fio's file-system metadata engines (filecreate, filestat, filedelete,
//! ftruncate) in fio's own examples, scaled down: the operations counted,
//! the direction fio's output puts them in and the files left afterwards
//! are fio's, checked against fio itself when it is installed; deleting
//! files storbench did not lay out follows the overwrite rule.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// fio's JSON for `job` run in `dir`, or `None` (and why) without fio.
fn run_fio(dir: &Path, job: &str) -> Option<Value> {
    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh must install it");
        eprintln!("SKIP (the comparison with fio): fio is not installed");
        return None;
    }
    let out = Command::new("fio").args(["--output-format=json", job]).current_dir(dir).output().expect("run fio");
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("fio's JSON"))
}

/// One job file (DIR standing for a fresh data directory) run by storbench
/// and, where installed, by fio: both data directories, storbench's
/// result.json and fio-json, and fio's JSON.
struct Both {
    _scratch: tempfile::TempDir,
    ours: std::path::PathBuf,
    theirs: std::path::PathBuf,
    result: Value,
    fio_json: Value,
    fio: Option<Value>,
}

fn run_both(job: &str) -> Both {
    let d = scratch();
    let (ours, theirs) = (d.path().join("sb"), d.path().join("fio"));
    for (data, name) in [(&ours, "sb.fio"), (&theirs, "fio.fio")] {
        std::fs::create_dir(data).unwrap();
        std::fs::write(d.path().join(name), job.replace("DIR", data.to_str().unwrap())).unwrap();
    }
    let r = storbench(d.path(), &["run", "--fio", "sb.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let result = result_json(&d.path().join("out"));
    assert_valid(&result);
    let shown = storbench(d.path(), &["show", "out", "--format", "fio-json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let fio_json: Value = serde_json::from_str(&shown.stdout).expect("storbench's fio-json");
    let fio = run_fio(d.path(), "fio.fio");
    Both { _scratch: d, ours, theirs, result, fio_json, fio }
}

/// (total_ios, io_bytes, clat samples, lat samples) of one of fio's directions.
fn dir_counts(doc: &Value, job: usize, dir: &str) -> (u64, u64, u64, u64) {
    let d = &doc["jobs"][job][dir];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    (n(&d["total_ios"]), n(&d["io_bytes"]), n(&d["clat_ns"]["N"]), n(&d["lat_ns"]["N"]))
}

/// Both tools' fio outputs count the same operations in the same direction.
fn same_counts_as_fio(b: &Both, jobs: usize, dir: &str) {
    let Some(fio) = &b.fio else { return };
    for j in 0..jobs {
        assert_eq!(dir_counts(&b.fio_json, j, dir), dir_counts(fio, j, dir), "job {j}, {dir}");
    }
}

/// Each file's name and size in a directory.
fn files(dir: &Path) -> Vec<(String, u64)> {
    listing(dir).into_iter().map(|n| (n.clone(), std::fs::metadata(dir.join(&n)).unwrap().len())).collect()
}

/// filecreate-ioengine.fio, 2 jobs of 50 files: 50 creates each, in fio's
/// read direction; the files are left, empty, under fio's names.
#[test]
fn filecreate_example_creates_each_file_once_and_leaves_them() {
    let job = "[global]\ncreate_on_open=1\nnrfiles=50\nioengine=filecreate\nfallocate=none\nfilesize=4k\nopenfiles=1\ndirectory=DIR\n[t0]\n[t1]\n";
    let b = run_both(job);
    assert_eq!((ios(&b.result, 0, "create"), ios(&b.result, 1, "create")), (50, 50));
    assert_eq!(b.result["jobs"][0]["ops"].as_array().unwrap().len(), 1, "only creates: {}", b.result["jobs"][0]["ops"]);
    let left = files(&b.ours);
    assert_eq!(left.len(), 100);
    assert!(left.iter().all(|(_, size)| *size == 0), "{left:?}");
    assert_eq!(dir_counts(&b.fio_json, 0, "read"), (50, 50 * 4096, 50, 0));
    same_counts_as_fio(&b, 2, "read");
    if b.fio.is_some() {
        assert_eq!(left, files(&b.theirs));
    }
}

/// With fio's unlink=1 the files a filecreate job made go when it ends; the
/// journal promises no cleanup of files storbench did not mark (its
/// cleanup would keep them).
#[test]
fn filecreate_files_go_with_unlink_and_are_not_journaled() {
    let d = scratch();
    std::fs::create_dir(d.path().join("m")).unwrap();
    let job = "[global]\nioengine=filecreate\nfilesize=4k\nnrfiles=20\ndirectory=m\n[kept]\n[gone]\nunlink=1\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let left = listing(&d.path().join("m"));
    assert_eq!(left.len(), 20);
    assert!(left.iter().all(|n| n.starts_with("kept.")), "{left:?}");
    assert!(!(r.stdout.clone() + &r.stderr).contains("journal.json"), "{}{}", r.stdout, r.stderr);
    let c = storbench(d.path(), &["cleanup", "out"]);
    assert_eq!((c.code, c.stderr.contains("kept")), (0, false), "{}", c.stderr);
}

/// filestat-ioengine.fio with fio's three stat calls: one stat per laid-out
/// file, the files kept.
#[test]
fn filestat_example_stats_each_file_once() {
    let job = "[global]\nioengine=filestat\nnumjobs=1\nfilesize=4k\nnrfiles=40\nthread\ndirectory=DIR\n[t0]\n[t1]\nstat_type=lstat\n[t2]\nstat_type=statx\n";
    let b = run_both(job);
    for j in 0..3 {
        assert_eq!(ios(&b.result, j, "stat"), 40, "job {j}");
    }
    let left = files(&b.ours);
    assert_eq!(left.len(), 120);
    assert!(left.iter().all(|(_, size)| *size == 4096), "{left:?}");
    same_counts_as_fio(&b, 3, "read");
    if b.fio.is_some() {
        assert_eq!(left, files(&b.theirs));
    }
}

/// A job over in less than a millisecond shows fio's runtime: its whole
/// microseconds rounded up to milliseconds (backend.c's update_runtime), so
/// at least 1 ms and an IOPS figure from it, never 0 ms and 0 IOPS.
#[test]
fn a_job_shorter_than_a_millisecond_shows_fios_runtime() {
    let b = run_both("[global]\nioengine=filestat\nfilesize=4k\nnrfiles=20\ndirectory=DIR\n[stat]\n");
    let us = b.result["jobs"][0]["runtime_ns"].as_u64().unwrap() / 1000;
    let read = &b.fio_json["jobs"][0]["read"];
    let (ms, ios) = (read["runtime"].as_u64().unwrap(), read["total_ios"].as_u64().unwrap());
    assert_eq!((ms, ios), (us.div_ceil(1000), 20), "{us} us measured");
    // fio prints its IOPS with six decimals ("%f"): 20 in 3 ms is 6666.666667.
    let iops: f64 = format!("{:.6}", 1000.0 * ios as f64 / ms as f64).parse().unwrap();
    assert_eq!(read["iops"].as_f64().unwrap(), iops);
    if let Some(fio) = &b.fio {
        assert!(fio["jobs"][0]["read"]["runtime"].as_u64().unwrap() >= 1, "fio's runtime is at least 1 ms");
    }
}

/// filedelete-ioengine.fio: the files are laid out, then each is unlinked
/// once; none is left. With rw=write fio counts them as writes.
#[test]
fn filedelete_example_deletes_every_file_it_laid_out() {
    let job = "[global]\nioengine=filedelete\nfilesize=4k\nnrfiles=40\nunlink=0\ndirectory=DIR\n[t0]\n[t1]\nrw=write\n";
    let b = run_both(job);
    assert_eq!((ios(&b.result, 0, "delete"), ios(&b.result, 1, "delete")), (40, 40));
    assert_eq!(files(&b.ours), []);
    assert_eq!(dir_counts(&b.fio_json, 1, "write").0, 40);
    same_counts_as_fio(&b, 1, "read");
    same_counts_as_fio(&b, 2, "write");
    if b.fio.is_some() {
        assert_eq!(files(&b.theirs), []);
    }
}

/// A `size` beyond nrfiles x filesize (as a scaled example's size=64m over
/// 200 files of 4k): fio caps the job's size at its files' total
/// (filesetup.c), so it is one pass and filedelete deletes each file once;
/// storbench refused it as a second pass.
#[test]
fn filedelete_with_size_beyond_its_files_deletes_each_once() {
    let job = "[global]\nsize=64m\nioengine=filedelete\nfilesize=4k\nnrfiles=30\nunlink=0\ndirectory=DIR\n[t0]\n[t1]\n";
    let b = run_both(job);
    assert_eq!((ios(&b.result, 0, "delete"), ios(&b.result, 1, "delete")), (30, 30));
    assert_eq!(files(&b.ours), []);
    same_counts_as_fio(&b, 2, "read");
}

/// ftruncate.fio's two jobs (a growing and a random truncate), run to
/// their size: a truncate per block, as fio's writes.
#[test]
fn ftruncate_example_truncates_once_per_block() {
    let job = "[global]\nioengine=ftruncate\ndirectory=DIR\nsize=64k\nstonewall\nfilename=truncate\ndirect=1\nbs=4k\n\
               [grow-truncate]\nrw=write\n[rand-truncate]\nrw=randwrite\nnorandommap\n";
    let b = run_both(job);
    assert_eq!((ios(&b.result, 0, "truncate"), ios(&b.result, 1, "truncate")), (16, 16));
    assert_eq!(ios(&b.result, 0, "write"), 0);
    same_counts_as_fio(&b, 2, "write");
    let size = std::fs::metadata(b.ours.join("truncate")).unwrap().len();
    assert!(size < 64 << 10 && size.is_multiple_of(4096), "the last truncate left {size} bytes");
}

/// The same engines from the command line.
#[test]
fn metadata_engines_run_from_flags_too() {
    let d = scratch();
    std::fs::create_dir(d.path().join("m")).unwrap();
    for (engine, op) in [("filecreate", "create"), ("filestat", "stat"), ("filedelete", "delete")] {
        let out = format!("out-{engine}");
        let r = storbench(
            d.path(),
            &[
                "run",
                "--name",
                "m",
                "--ioengine",
                engine,
                "--size",
                "4k",
                "--nrfiles",
                "25",
                "--directory",
                "m",
                "--results-dir",
                &out,
                "--quiet",
            ],
        );
        assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
        assert_eq!(ios(&result_json(&d.path().join(&out)), 0, op), 25, "{engine}");
    }
    assert_eq!(listing(&d.path().join("m")), Vec::<String>::new());
}

/// Deleting is destroying: files storbench did not lay out are deleted only
/// with --allow_overwrite 1, as they would be overwritten only with it.
#[test]
fn filedelete_keeps_files_storbench_did_not_lay_out() {
    let d = scratch();
    std::fs::create_dir(d.path().join("m")).unwrap();
    for n in 0..3 {
        std::fs::write(d.path().join(format!("m/t0.0.{n}")), "precious\n").unwrap();
    }
    std::fs::write(d.path().join("j.fio"), "[t0]\nioengine=filedelete\nfilesize=4k\nnrfiles=3\ndirectory=m\n").unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("m/t0.0.0") && r.stderr.contains("--allow_overwrite=1"), "{}", r.stderr);
    assert_eq!(listing(d.path()), ["j.fio", "m"]);
    assert_eq!(std::fs::read_to_string(d.path().join("m/t0.0.2")).unwrap(), "precious\n");
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet", "--allow_overwrite", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(listing(&d.path().join("m")), Vec::<String>::new());
}

/// A create of a file that exists is an open: refused before anything runs.
#[test]
fn filecreate_refuses_files_that_exist() {
    let d = scratch();
    std::fs::create_dir(d.path().join("m")).unwrap();
    std::fs::write(d.path().join("m/t0.0.1"), "x").unwrap();
    std::fs::write(d.path().join("j.fio"), "[t0]\nioengine=filecreate\nfilesize=4k\nnrfiles=3\ndirectory=m\n").unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("m/t0.0.1 exists already"), "{}", r.stderr);
    assert_eq!(listing(&d.path().join("m")), ["t0.0.1"]);
    assert_eq!(listing(d.path()), ["j.fio", "m"]);
}
