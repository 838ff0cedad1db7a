//! Bad input gets one clear error, exit code 2, and nothing written.

mod common;
use common::*;

fn assert_rejected(args: &[&str], expect: &[&str]) {
    let d = scratch();
    let r = storbench(d.path(), args);
    assert_eq!(r.code, 2, "args {args:?}\nstderr: {}", r.stderr);
    for e in expect {
        assert!(r.stderr.contains(e), "stderr for {args:?} lacks '{e}':\n{}", r.stderr);
    }
    assert_eq!(r.stderr.lines().count(), 1, "one error line:\n{}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
    assert!(listing(d.path()).is_empty(), "nothing may be written: {:?}", listing(d.path()));
}

#[test]
fn unknown_option_suggests_the_nearest() {
    assert_rejected(&["run", "--name", "a", "--rw", "read", "--size", "1m", "--iodpeth", "4"], &["iodpeth", "did you mean 'iodepth'"]);
    assert_rejected(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--fixedbuf", "1"], &["fixedbuf"]);
}

#[test]
fn bad_units_name_the_option_and_the_form() {
    assert_rejected(&["run", "--name", "a", "--bs", "4q"], &["option 'bs'", "'4q' is not a size"]);
    assert_rejected(&["run", "--name", "a", "--runtime", "soon"], &["runtime", "duration"]);
    assert_rejected(&["run", "--name", "a", "--rwmixread", "120"], &["rwmixread", "percentage"]);
    assert_rejected(&["run", "--name", "a", "--random_distribution", "zipf"], &["zipf needs a theta"]);
}

#[test]
fn impossible_combinations() {
    assert_rejected(&["run", "--name", "a", "--ioengine", "null", "--time_based"], &["time_based needs a runtime"]);
    assert_rejected(&["run", "--name", "a", "--ioengine", "null"], &["set runtime or size"]);
    assert_rejected(&["run", "--name", "a", "--ioengine", "nul", "--size", "1m"], &["unknown ioengine 'nul'", "Did you mean 'null'"]);
    assert_rejected(&["run", "--name", "a", "--size", "4k", "--bs", "8k"], &["larger than size"]);
    assert_rejected(&["run", "--name", "a", "--size", "1m", "--direct", "1", "--bs", "1000"], &["multiple of 512"]);
    assert_rejected(&["run", "--name", "a", "--name", "a", "--ioengine", "null", "--size", "1m"], &["two jobs have this name"]);
    assert_rejected(&["run", "--output-format", "xml"], &["normal, json, fio-json"]);
    assert_rejected(&["frobnicate"], &["unknown command"]);
    assert_rejected(&["run", "--name", "new", "--rw", "write"], &["no size was given"]);
}

#[test]
fn malformed_job_files() {
    let d = scratch();
    std::fs::write(d.path().join("bad.toml"), "[global\nrw = \"read\"\n").unwrap();
    std::fs::write(d.path().join("typo.toml"), "[[job]]\nname = \"a\"\nrwmixrd = 70\n").unwrap();
    std::fs::write(d.path().join("unsupported.fio"), "[a]\nrw=read\nzonemode=zbd\nsize=1m\n").unwrap();
    for (file, flag, expect) in [
        ("bad.toml", None, "not valid TOML"),
        ("typo.toml", None, "did you mean 'rwmixread'"),
        ("unsupported.fio", Some("--fio"), "zonemode"),
    ] {
        let mut args = vec!["run"];
        args.extend(flag);
        args.push(file);
        let r = storbench(d.path(), &args);
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{file}: {}", r.stderr);
        assert!(!d.path().join("storbench-results").exists(), "{file}: nothing written");
    }
}
