//! Input that cannot hurt: files that never end (`/dev/zero`, FIFOs) and
//! traces too large for the machine are refused before they are read,
//! quickly and in bounded memory; a job name of any length never panics a
//! renderer; `agent --init` keeps its credentials private under any umask.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// storbench under a 4 GB address-space limit and killed after 20 s (so a
/// build that reads without a bound, or waits on a FIFO, fails here instead
/// of taking the machine or the test run), and how long it took.
fn bounded(dir: &Path, args: &[&str]) -> (Run, Duration) {
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000; exec timeout -s KILL 20 \"$0\" \"$@\"")
        .arg(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    (run, started.elapsed())
}

fn refused_fast(dir: &Path, args: &[&str], says: &[&str]) {
    refused_fast_with(2, dir, args, says)
}

/// As [`refused_fast`], with `code` (`storbench fio` exits as fio: 1).
fn refused_fast_with(code: i32, dir: &Path, args: &[&str], says: &[&str]) {
    let before = listing(dir);
    let (r, took) = bounded(dir, args);
    assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    for s in says {
        assert!(r.stderr.contains(s), "{args:?} does not say '{s}': {}", r.stderr);
    }
    assert!(took < Duration::from_secs(5), "{args:?} took {took:?}: refused before reading, not after allocating");
    assert_eq!(listing(dir), before, "{args:?} wrote nothing");
}

/// `include /dev/zero` and `replay /dev/zero` read until allocation failed
/// (8 s and 2 GB under a 3 GB limit; without one, the machine's memory).
#[test]
fn dev_zero_as_an_include_a_job_file_or_a_trace_is_refused_at_once() {
    let d = scratch();
    std::fs::write(d.path().join("z.fio"), "[a]\nioengine=null\nsize=1m\ninclude /dev/zero\n").unwrap();
    refused_fast(d.path(), &["run", "--fio", "z.fio"], &["z.fio line 4: cannot include /dev/zero: it is a character device"]);
    refused_fast(d.path(), &["run", "--fio", "/dev/zero"], &["cannot read fio job file /dev/zero: it is a character device"]);
    refused_fast_with(1, d.path(), &["fio", "/dev/zero"], &["unable to open '/dev/zero' job file: it is a character device"]);
    refused_fast_with(1, d.path(), &["fio", "z.fio"], &["cannot include /dev/zero"]);
    refused_fast(
        d.path(),
        &["replay", "/dev/zero", "--ioengine", "psync", "--filename", "r.dat", "--size", "1m"],
        &["/dev/zero: it is a character device, not a regular file (a trace is read from a file)"],
    );
}

/// A FIFO never ends either, and opening one for reading waits for a writer:
/// it is refused without being opened.
#[test]
fn fifos_are_refused_without_waiting_for_a_writer() {
    let d = scratch();
    assert!(Command::new("mkfifo").arg(d.path().join("pipe")).status().unwrap().success());
    std::fs::write(d.path().join("p.fio"), "[a]\nioengine=null\nsize=1m\ninclude pipe\n").unwrap();
    refused_fast(d.path(), &["run", "--fio", "pipe"], &["cannot read fio job file pipe: it is a FIFO, not a regular file"]);
    refused_fast(d.path(), &["run", "--fio", "p.fio"], &["p.fio line 4: cannot include pipe: it is a FIFO"]);
    refused_fast(d.path(), &["run", "pipe"], &["cannot read job file pipe: it is a FIFO"]);
    refused_fast(d.path(), &["replay", "pipe", "--ioengine", "null", "--size", "1m"], &["pipe: it is a FIFO"]);
}

/// A job file is at most 4 MiB (the largest real ones are a few hundred KiB).
#[test]
fn a_job_file_larger_than_any_is_refused_by_its_size() {
    let d = scratch();
    let mut text = String::from("[a]\nioengine=null\nsize=1m\n");
    text += &"; padding\n".repeat(500_000);
    std::fs::write(d.path().join("big.fio"), &text).unwrap();
    refused_fast(
        d.path(),
        &["run", "--fio", "big.fio"],
        &["cannot read fio job file big.fio: it holds 4.8 MiB, more than a fio job file can"],
    );
}

/// A trace's memory is estimated from its size before it is read: a 1 TiB
/// (sparse) iolog is refused at once with the figures.
#[test]
fn a_trace_larger_than_the_memory_is_refused_with_the_figures() {
    let d = scratch();
    let path = d.path().join("huge.log");
    let f = std::fs::File::create(&path).unwrap();
    let head: String =
        "fio version 3 iolog\n".to_string() + &(0..20_000).map(|i| format!("{i} /dev/sdb read {} 4096\n", i * 4096)).collect::<String>();
    std::io::Write::write_all(&mut &f, head.as_bytes()).unwrap();
    f.set_len(1 << 40).unwrap();
    refused_fast(
        d.path(),
        &["replay", "huge.log", "--ioengine", "null", "--size", "1m"],
        &["huge.log: this trace needs about", "to load,", "is available (50% of the", "MemAvailable); replay a part of it"],
    );
}

/// A name of 65,536 characters or more panicked the summary after the run
/// ("Formatting argument out of range"): the summary and result.json were
/// lost. Names are now at most 4096 bytes, and every renderer takes any
/// length (a results directory may come from elsewhere).
#[test]
fn long_job_names_are_refused_up_front_and_render_at_any_length() {
    let d = scratch();
    let long = "n".repeat(70_000);
    refused_fast(d.path(), &["run", "--name", &long, "--ioengine", "null", "--size", "1m"], &["(70000 bytes)': option 'name'"]);
    // The longest name a run takes: everything written, every format shown.
    let name = "m".repeat(4096);
    let r = storbench(d.path(), &["run", "--name", &name, "--ioengine", "null", "--size", "1m", "--results-dir", "r", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(&name), "the summary names the job");
    for f in ["summary.txt", "result.json", "fio.json", "series.csv"] {
        assert!(d.path().join("r").join(f).exists(), "{f} written");
    }
    // The same run with a 70,000-character name, as an older or edited result.
    let text = std::fs::read_to_string(d.path().join("r/result.json")).unwrap();
    std::fs::create_dir(d.path().join("r70")).unwrap();
    std::fs::write(d.path().join("r70/result.json"), text.replace(&name, &long)).unwrap();
    for format in ["text", "json", "fio-json", "fio-json+", "fio-terse", "fio-normal", "csv"] {
        let r = storbench(d.path(), &["show", "r70", "--format", format]);
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        assert!(r.stdout.contains(&long), "{format} shows the whole name");
    }
    for args in [
        &["compare", "r70", "r70"][..],
        &["report", "r70", "-o", "r70.html"],
        &["efficiency", "r70", "--devices", "1", "--device-read-iops", "1000"],
    ] {
        let r = storbench(d.path(), args);
        assert!(r.code == 0 && !r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
}

/// `agent --init` under umask 000 made its directory 0777: anyone could
/// replace ca.pem or the token.
#[test]
fn agent_init_keeps_its_directory_private_whatever_the_umask() {
    let d = scratch();
    let init = |dir: &str| {
        let out = Command::new("sh")
            .arg("-c")
            .arg("umask 000; exec \"$0\" agent --init \"$1\"")
            .arg(bin())
            .arg(dir)
            .current_dir(d.path())
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let (code, err) = init("fleet/new");
    assert_eq!(code, 0, "{err}");
    let dir = d.path().join("fleet/new");
    assert_eq!(mode(&dir), 0o700, "the directory");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let want = if p.extension().is_some_and(|x| x == "pem") { 0o644 } else { 0o600 };
        assert_eq!(mode(&p), want, "{}", p.display());
    }
    // A directory others can write is refused, and nothing is put in it.
    std::fs::create_dir(d.path().join("open")).unwrap();
    std::fs::set_permissions(d.path().join("open"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, err) = init("open");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("open can be written by others (mode 777)") && err.contains("chmod 700 open"), "{err}");
    assert!(listing(&d.path().join("open")).is_empty());
}

/// A reader that goes away (`storbench engines | head -1`) ends a listing
/// quietly: `println!` panicked on the closed pipe (exit 101 and a
/// backtrace).
#[test]
fn listings_into_a_closed_pipe_end_quietly() {
    let d = scratch();
    for args in [&["engines"][..], &["help", "options"], &["help"]] {
        let r = into_closed_pipe(d.path(), args);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    }
}

/// `storbench compare --format json A B > FILE` on a full disk: the output
/// is cut short, so the command says so in one line and exits 3 (it exited
/// 0 with a truncated file). A run's results directory is still written.
#[test]
fn output_to_a_full_disk_is_a_failure_not_a_truncated_success() {
    let d = scratch();
    let r = storbench(d.path(), &["run", "--ioengine", "null", "--size", "1m", "--runtime", "1", "--results-dir", "a", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for args in [&["compare", "--format", "json", "a", "a"][..], &["compare", "a", "a"], &["show", "a"], &["export", "a"], &["engines"]] {
        let r = into_full_disk(d.path(), args);
        assert_eq!(r.code, 3, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: one line: {}", r.stderr);
        assert!(r.stderr.contains("standard output could not be written (No space left on device"), "{args:?}: {}", r.stderr);
    }
    let run = into_full_disk(d.path(), &["run", "--ioengine", "null", "--size", "1m", "--runtime", "1", "--results-dir", "b", "--quiet"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("standard output could not be written"), "{}", run.stderr);
    assert!(d.path().join("b/result.json").exists(), "the measured run is kept");
}

/// `storbench run ... 2>&1 | head -1`: progress and warnings go to a reader
/// that has gone; the run ends normally with its results (the first line
/// after the reader left panicked: exit 101).
#[test]
fn a_run_whose_output_reader_goes_away_ends_normally() {
    let d = scratch();
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let err = writer.try_clone().expect("pipe");
    let out = Command::new(bin())
        .args(["run", "--ioengine", "null", "--size", "1m", "--runtime", "1", "--results-dir", "r"])
        .current_dir(d.path())
        .stdout(writer)
        .stderr(err)
        .status()
        .expect("run storbench");
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(d.path().join("r/result.json").exists());
}
