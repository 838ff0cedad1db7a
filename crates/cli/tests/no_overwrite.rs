//! Nothing the user has is overwritten without being asked, and nothing a
//! run was asked to keep is found unwritable only at its end (issue 26,
//! "Next" list): an earlier run's results directory, a results directory
//! through a symbolic link, `report -o FILE` over a file of the user's, a
//! `write_iolog` over an existing file, log prefixes leading out of the
//! results directory, and verify_state or `--charts` directories that cannot
//! be written.

mod common;
use common::*;

fn null_run(d: &std::path::Path, extra: &[&str]) -> Run {
    let mut a = vec!["run", "--name", "a", "--ioengine", "null", "--runtime", "1", "--quiet"];
    a.extend_from_slice(extra);
    storbench(d, &a)
}

#[test]
fn an_earlier_runs_results_are_replaced_only_with_force() {
    let d = scratch();
    assert_eq!(null_run(d.path(), &["--results-dir", "out"]).code, 0);
    let first = std::fs::read(d.path().join("out/result.json")).unwrap();
    let again = null_run(d.path(), &["--results-dir", "out"]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("holds an earlier run's results") && again.stderr.contains("--force"), "{}", again.stderr);
    assert_eq!(std::fs::read(d.path().join("out/result.json")).unwrap(), first, "untouched");
    let forced = null_run(d.path(), &["--results-dir", "out", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_ne!(std::fs::read(d.path().join("out/result.json")).unwrap(), first, "replaced when asked");
    // The same for baseline's and replay's --results-dir.
    std::fs::write(d.path().join("t.log"), "fio version 2 iolog\nx add\nx open\nx read 0 4096\nx close\n").unwrap();
    for cmd in [&["baseline", "nothing-here", "--runtime", "1"][..], &["replay", "t.log", "--filename", "f.dat", "--size", "1m"]] {
        let r = storbench(d.path(), &[cmd, &["--results-dir", "out"]].concat());
        assert!(r.code == 2 && r.stderr.contains("holds an earlier run's results"), "{cmd:?}: {}", r.stderr);
    }
}

#[test]
fn results_are_not_written_through_a_symbolic_link() {
    let d = scratch();
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, d.path().join("link")).unwrap();
    let r = null_run(d.path(), &["--results-dir", "link"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert!(listing(&elsewhere).is_empty(), "nothing written where the link points");
}

#[test]
fn a_report_replaces_only_a_report_unless_forced() {
    let d = scratch();
    assert_eq!(null_run(d.path(), &["--results-dir", "out"]).code, 0);
    std::fs::write(d.path().join("notes.html"), "my notes").unwrap();
    let r = storbench(d.path(), &["report", "out", "-o", "notes.html"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a storbench report") && r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(d.path().join("notes.html")).unwrap(), "my notes");
    // A report over a report is regenerated; --force replaces anything.
    for args in
        [&["report", "out", "-o", "r.html"][..], &["report", "out", "-o", "r.html"], &["report", "out", "-o", "notes.html", "--force"]]
    {
        let r = storbench(d.path(), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    }
    assert!(std::fs::read_to_string(d.path().join("notes.html")).unwrap().contains("<html"));
}

#[test]
fn charts_that_cannot_be_written_are_found_before_the_report_is() {
    let d = scratch();
    assert_eq!(null_run(d.path(), &["--results-dir", "out"]).code, 0);
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let r = storbench(d.path(), &["report", "out", "--charts", "afile/charts"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--charts"), "{}", r.stderr);
    assert!(!d.path().join("out/report.html").exists(), "the report waits for its charts' directory");
}

#[test]
fn write_iolog_does_not_replace_an_existing_file() {
    let d = scratch();
    std::fs::write(d.path().join("io.log"), "keep me").unwrap();
    let args = ["run", "--name", "a", "--filename", "f.dat", "--size", "1m", "--rw", "randwrite", "--runtime", "1", "--quiet"];
    let r = storbench(d.path(), &[&args[..], &["--write_iolog", "io.log"]].concat());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("write_iolog") && r.stderr.contains("io.log exists"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(d.path().join("io.log")).unwrap(), "keep me");
    assert!(!d.path().join("f.dat").exists(), "refused before the layout");
    let gone = storbench(d.path(), &[&args[..], &["--write_iolog", "no/such/dir/io.log"]].concat());
    assert!(gone.code == 2 && gone.stderr.contains("does not exist"), "{}", gone.stderr);
}

#[test]
fn log_prefixes_stay_inside_the_results_directory() {
    let d = scratch();
    std::fs::create_dir(d.path().join("inner")).unwrap();
    for prefix in ["../../x", "/tmp/storbench-escaped", "a/../../x"] {
        let r = storbench(
            d.path().join("inner").as_path(),
            &["run", "--name", "a", "--ioengine", "null", "--runtime", "1", "--write_bw_log", prefix, "--log_avg_msec", "500", "--quiet"],
        );
        assert_eq!(r.code, 2, "{prefix}: {}", r.stderr);
        assert!(r.stderr.contains("leads out of the results directory"), "{}", r.stderr);
    }
    assert_eq!(listing(d.path()), ["inner"], "nothing written beside it");
    let ok = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "a",
            "--ioengine",
            "null",
            "--runtime",
            "1",
            "--write_bw_log",
            "logs/a",
            "--log_avg_msec",
            "500",
            "--quiet",
            "--results-dir",
            "out",
        ],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(d.path().join("out/logs/a_bw.1.log").exists(), "{:?}", listing(&d.path().join("out")));
}

#[test]
fn a_verify_state_directory_that_cannot_be_made_fails_before_the_layout() {
    let d = scratch();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let r = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "a",
            "--filename",
            "f.dat",
            "--size",
            "4m",
            "--rw",
            "randwrite",
            "--verify",
            "crc32c",
            "--verify_state",
            "afile/state",
            "--runtime",
            "1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("verify_state"), "{}", r.stderr);
    assert!(!d.path().join("f.dat").exists(), "nothing laid out");
}
