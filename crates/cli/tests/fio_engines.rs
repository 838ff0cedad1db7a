//! fio's special-purpose engines in fio job files, shaped as fio's examples
//! write them (falloc.fio, cpuio.fio), with what fio's meaning implies
//! checked on the target afterwards: fallocate as the I/O, holes punched by
//! trims; for the CPU burner, the CPU the process used (from the kernel,
//! not from storbench's own report) and no I/O.

mod common;
use common::*;
use std::os::unix::fs::MetadataExt;

/// falloc.fio, scaled down: a fallocating writer and two hole punchers on
/// one file together, then direct and buffered I/O timed on the result.
const FALLOC_FIO: &str = "[global]\nioengine=falloc\niodepth=1\ndirect=0\nbuffered=0\ndirectory=DIR\nnrfiles=1\nsize=8M\nfilesize=8M\n\
group_reporting\n\
[falloc-fuzzer]\nstonewall\nruntime=1\ntime_based\nbssplit=4k/10:64k/50:32k/40\nrw=randwrite\nnumjobs=1\nfilename=fragmented_file\n\
[punch hole-fuzzer]\nbs=4k\nruntime=1\ntime_based\nrw=randtrim\nnumjobs=2\nfilename=fragmented_file\n\
[sequential aio-dio write]\nstonewall\nioengine=libaio\nnumjobs=1\niodepth=128\nbuffered=0\ndirect=1\nrw=write\nbs=64k\nfilename=fragmented_file\n\
[sequential buffered read]\nstonewall\nioengine=sync\nnumjobs=1\niodepth=1\nbuffered=1\ndirect=0\nrw=read\nbs=64k\nfilename=fragmented_file\n";

#[test]
fn fio_s_falloc_example_allocates_and_punches_then_times_io_on_the_file() {
    let d = scratch();
    let job = FALLOC_FIO.replace("DIR", d.path().to_str().unwrap());
    std::fs::write(d.path().join("falloc.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "falloc.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert!(ios(&doc, 0, "write") > 0, "{}", doc["jobs"][0]["ops"]);
    assert!(ios(&doc, 1, "trim") > 0 && ios(&doc, 1, "write") == 0, "{}", doc["jobs"][1]["ops"]);
    assert_eq!(ios(&doc, 2, "write"), 128);
    assert_eq!(ios(&doc, 3, "read"), 128);
}

/// Trims through falloc punch holes (the file keeps its size, its blocks
/// go); the same job on today's main was refused.
#[test]
fn falloc_trims_punch_holes_and_keep_the_size() {
    let d = scratch();
    let job = "[global]\nioengine=falloc\nfilename=f.dat\nsize=8m\nbs=64k\n[alloc]\nrw=randwrite\nnumber_ios=16\n\
               [punch]\nstonewall\nrw=randtrim\nnumber_ios=8\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_eq!((ios(&doc, 0, "write"), ios(&doc, 1, "trim")), (16, 8));
    let m = std::fs::metadata(d.path().join("f.dat")).unwrap();
    assert_eq!(m.len(), 8 << 20);
    // Eight distinct 64 KiB blocks punched (the random map repeats none);
    // the count includes the file system's own blocks for the file (an
    // extent tree block on ext4), so allow one 64 KiB block of those.
    let allocated = m.blocks() * 512;
    assert!(allocated <= (8 << 20) - (448 << 10), "{allocated} bytes allocated");
}

#[test]
fn a_trim_job_on_an_engine_that_cannot_trim_is_refused() {
    let d = scratch();
    std::fs::write(d.path().join("j.fio"), "[a]\nioengine=libaio\nfilename=f.dat\nsize=1m\nrw=randtrim\n").unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("engine libaio cannot trim"), "{}", r.stderr);
    assert_eq!(listing(d.path()), ["j.fio"]);
}

/// fio's outputs put block trims in fio's trim direction (they were left empty).
#[test]
fn block_trims_are_fio_s_trims_in_fio_json() {
    let d = scratch();
    let job = "[a]\nioengine=falloc\nfilename=f.dat\nsize=1m\nbs=64k\nrw=randtrim\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--results-dir", "out", "--quiet", "--output-format", "fio-json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["trim"]["total_ios"], 16, "{}", doc["jobs"][0]["trim"]);
    assert_eq!(doc["jobs"][0]["write"]["total_ios"], 0);
}

/// Per thread of a running process: (on-CPU ns, ns waiting to run) from
/// /proc/PID/task/TID/schedstat. A thread's share of time wanting the CPU
/// (running or runnable) is what a burner sets, whatever the machine's
/// load: a spin that never sleeps wants it all the time.
fn schedstats(pid: u32) -> Vec<(u32, u64, u64)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        let Ok(tid) = t.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(text) = std::fs::read_to_string(t.path().join("schedstat")) else { continue };
        let v: Vec<u64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if v.len() >= 2 {
            out.push((tid, v[0], v[1]));
        }
    }
    out
}

/// Run storbench to its end, sampling its threads' schedstat meanwhile;
/// its exit code, its own CPU time (rusage from wait4: every thread), the
/// wall time, and the largest (on-CPU + waiting) of any one thread.
fn run_measured(dir: &std::path::Path, args: &[&str]) -> (i32, std::time::Duration, std::time::Duration, std::time::Duration) {
    let t0 = std::time::Instant::now();
    // Reaped by wait4 below, which gives its rusage (Child::wait does not).
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let threads_of = measuring(pid);
    let mut wanted = std::collections::HashMap::new();
    let (mut status, mut ru): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    loop {
        for (tid, run, wait) in schedstats(threads_of) {
            wanted.insert(tid, run + wait);
        }
        // SAFETY: the child is ours and not yet waited for; status and rusage are valid out-pointers.
        let rc = unsafe { libc::wait4(pid as i32, &mut status, libc::WNOHANG, &mut ru) };
        if rc == pid as i32 {
            break;
        }
        assert!(t0.elapsed() < std::time::Duration::from_secs(60), "storbench did not end within 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let tv = |t: libc::timeval| std::time::Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    let busiest = wanted.values().copied().max().unwrap_or(0);
    (code, tv(ru.ru_utime) + tv(ru.ru_stime), t0.elapsed(), std::time::Duration::from_nanos(busiest))
}

/// A cpuio job at cpuload=50 for 2 s keeps one CPU busy about half the
/// time. Its busiest thread wants the CPU (running or waiting to run) about
/// half of the 2 s: a measure the machine's load does not lower, where a
/// spin that never idles wants it all the time. The process's CPU time (the
/// kernel's count) stays well under the 2 s such a spin takes on a free
/// core; what it gets depends on the load (a 50% burner got 12% of a CPU at
/// a load average of 15 on this 2-core machine, 3% niced, and fio's 14%), so
/// its lower bound only says it ran. The results count no I/O, and the CPU
/// they report is not more than the kernel counted. On main the engine was
/// refused.
#[test]
fn a_cpuio_burner_at_half_load_uses_about_half_a_cpu_and_does_no_io() {
    let d = scratch();
    let args = ["run", "--ioengine", "cpuio", "--cpuload", "50", "--runtime", "2", "--results-dir", "out", "--quiet"];
    let (code, cpu, wall, wanted) = run_measured(d.path(), &args);
    assert_eq!(code, 0, "storbench run --ioengine cpuio --cpuload 50 failed");
    assert!(wall < std::time::Duration::from_secs(20), "{wall:?}");
    eprintln!("cpuload=50 for 2 s: {cpu:?} of CPU, the busiest thread wanted it {wanted:?}, {wall:?} in all");
    if wanted > std::time::Duration::ZERO {
        let share = wanted.as_secs_f64() / 2.0;
        assert!((0.3..0.85).contains(&share), "the burner wanted the CPU {share:.2} of its 2 s");
    } else {
        eprintln!("SKIP (the share of time wanting the CPU): no /proc/PID/task/TID/schedstat here");
    }
    // Firm: a burner that never idles would use 2 s on a free core.
    assert!(cpu < std::time::Duration::from_millis(1500), "{cpu:?} of CPU in a 2 s run at cpuload=50");
    assert!(cpu > std::time::Duration::from_millis(20), "{cpu:?} of CPU in a 2 s run at cpuload=50");
    let doc = result_json(&d.path().join("out"));
    let job = &doc["jobs"][0];
    assert_eq!(job["ops"].as_array().map(Vec::len), Some(0), "no I/O: {}", job["ops"]);
    let reported = ["user_ns", "sys_ns"].iter().map(|k| job["worker_cpu"][k].as_u64().unwrap()).sum::<u64>();
    assert!(reported > 0 && reported <= cpu.as_nanos() as u64, "reported {reported} ns, the kernel counted {cpu:?}");
    assert!(job["warnings"].as_array().unwrap().is_empty(), "{}", job["warnings"]);
    let text = show(d.path(), "out", "text");
    assert!(text.contains("cpu burner job: ") && text.contains("asked 50%"), "{text}");
}

/// fio's pairing: a burner with exit_on_io_done=1 beside a job doing I/O
/// ends when that job ends, not at its own (absent) runtime.
#[test]
fn exit_on_io_done_ends_the_burner_with_the_io_job() {
    let d = scratch();
    let job = "[burn]\nioengine=cpuio\ncpuload=20\nexit_on_io_done=1\n\
               [io]\nioengine=psync\nfilename=f.dat\nsize=2m\nbs=4k\nrw=write\nrate_iops=512\n";
    std::fs::write(d.path().join("pair.fio"), job).unwrap();
    let t0 = std::time::Instant::now();
    let r = storbench(d.path(), &["run", "--fio", "pair.fio", "--results-dir", "out", "--quiet"]);
    let took = t0.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    let doc = result_json(&d.path().join("out"));
    let runtime = |j: usize| doc["jobs"][j]["runtime_ns"].as_u64().unwrap() as f64 / 1e9;
    assert_eq!(ios(&doc, 1, "write"), 512);
    assert!(runtime(1) > 0.5, "512 writes at 512/s: {}", runtime(1));
    assert!((runtime(0) - runtime(1)).abs() < 0.5, "the burner ran {} s beside {} s of I/O", runtime(0), runtime(1));
    assert_eq!(doc["jobs"][0]["ops"].as_array().map(Vec::len), Some(0));
    assert_eq!(doc["jobs"][0]["interrupted"], false);
}

/// cpuio.fio (runtime scaled down) as fio-json: fio's shape, no I/O in
/// any direction, the CPU as fio computes it; compared with what fio
/// itself writes for the same file where fio is installed.
#[test]
fn cpuio_fio_as_fio_json_has_fio_s_shape_and_no_io() {
    let d = scratch();
    let file = "[global]\nioengine=cpuio\ntime_based\nruntime=1\n\
                [burn_2x50_noop]\ncpuload=50\nnumjobs=2\ncpumode=noop\n\
                [burn_2x50%_qsort]\nstonewall\ncpuload=50\nnumjobs=2\ncpumode=qsort\n";
    std::fs::write(d.path().join("cpuio.fio"), file).unwrap();
    let r = storbench(d.path(), &["fio", "--output-format=json", "--output=sb.json", "cpuio.fio"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(d.path().join(name)).unwrap();
        // fio prints each burner's set-up line before the document.
        serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
    };
    let sb = json("sb.json");
    let jobs = sb["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4, "one entry per clone (numjobs=2, no group_reporting), as fio lists them");
    for j in jobs {
        for dir in ["read", "write", "trim"] {
            assert_eq!((j[dir]["io_bytes"].as_u64(), j[dir]["total_ios"].as_u64()), (Some(0), Some(0)), "{dir}: {}", j[dir]);
        }
        let usr = j["usr_cpu"].as_f64().unwrap();
        assert!(usr > 0.0 && usr < 75.0, "usr_cpu {usr} per worker at cpuload=50");
        assert!(j["ctx"].as_u64().unwrap() > 0, "{}", j["ctx"]);
    }
    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh must install it");
        eprintln!("SKIP (comparison half): fio is not installed");
        return;
    }
    let out =
        std::process::Command::new("fio").args(["--output-format=json", "--output=fio.json", "cpuio.fio"]).current_dir(d.path()).output();
    assert!(out.unwrap().status.success());
    let fio = json("fio.json");
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<_>>();
    let (f, s) = (&fio["jobs"][0], &jobs[0]);
    let missing: Vec<_> = keys(f).difference(&keys(s)).cloned().collect();
    assert!(missing.is_empty(), "keys fio writes and storbench does not: {missing:?}");
    // fio's write direction has no I/O either: every direction has its keys.
    for dir in ["read", "write", "trim"] {
        assert_eq!(keys(&f["write"]), keys(&s[dir]), "{dir}");
    }
    assert_eq!(fio["jobs"].as_array().unwrap().len(), 4, "fio: one entry per clone");
    assert!(f["usr_cpu"].as_f64().unwrap() > 0.0 && f["ctx"].as_u64().unwrap() > 0);
}

/// fio's examples/exec.fio, scaled down: a monitor program beside a CPU
/// burner, then a sleep as a job of its own (its output left on standard
/// error). The monitor sees fio's %r and %n, writes into JOB.stdout, and gets
/// SIGTERM at the job's end.
const EXEC_FIO: &str = "[global]\ntime_based\nruntime=2\n\
[monitor]\nioengine=exec\nprogram=PROG\narguments=%r %n\n\
[burn]\nioengine=cpuio\ncpuload=20\nnumjobs=1\n\
[sleep]\nstonewall\nioengine=exec\nruntime=1\nprogram=/bin/sleep\narguments=%r\ngrace_time=0\nstd_redirect=0\n";

/// A monitor that says what it was given, ticks, and says when it is told to stop.
const MONITOR: &str = "#!/bin/sh\ntrap 'echo stopped by TERM; exit 0' TERM\necho \"args: $*\"\nwhile :; do echo tick; sleep 0.1; done\n";

fn exec_job(dir: &std::path::Path) -> String {
    let prog = dir.join("mon.sh");
    std::fs::write(&prog, MONITOR).unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    EXEC_FIO.replace("PROG", prog.to_str().unwrap())
}

#[test]
fn fio_s_exec_example_runs_its_programs_for_their_time_and_stops_them() {
    let d = scratch();
    std::fs::write(d.path().join("exec.fio"), exec_job(d.path())).unwrap();
    let t0 = std::time::Instant::now();
    let r = storbench(d.path(), &["fio", "--allow-exec", "exec.fio", "--output-format=json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(t0.elapsed() >= std::time::Duration::from_secs(3), "2 s, then 1 s: {:?}", t0.elapsed());
    let out = std::fs::read_to_string(d.path().join("monitor.stdout")).unwrap();
    assert!(out.starts_with("args: 2 monitor\n"), "{out}");
    assert!(out.matches("tick").count() >= 10, "it ran the 2 s: {out}");
    assert!(out.ends_with("stopped by TERM\n"), "{out}");
    assert!(d.path().join("monitor.stderr").exists() && !d.path().join("sleep.stdout").exists());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let names: Vec<&str> = doc["jobs"].as_array().unwrap().iter().map(|j| j["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["monitor", "burn", "sleep"]);
    assert!(doc["jobs"].as_array().unwrap().iter().all(|j| j["error"] == 0 && j["read"]["total_ios"] == 0));
}

#[test]
fn a_program_runs_only_with_allow_exec_and_never_over_an_existing_file() {
    let d = scratch();
    std::fs::write(d.path().join("exec.fio"), exec_job(d.path())).unwrap();
    let r = storbench(d.path(), &["fio", "exec.fio"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("mon.sh on this machine (ioengine=exec); pass --allow-exec"), "{}", r.stderr);
    assert!(!d.path().join("monitor.stdout").exists());
    std::fs::write(d.path().join("monitor.stdout"), "mine").unwrap();
    let r = storbench(d.path(), &["run", "--fio", "exec.fio", "--allow-exec", "--results-dir", "out"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("would replace monitor.stdout"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(d.path().join("monitor.stdout")).unwrap(), "mine");
}

#[test]
fn a_program_that_fails_fails_its_job_and_says_where_its_errors_are() {
    let d = scratch();
    let job = "[bad]\nioengine=exec\nprogram=/bin/sh\narguments=-c exit_7_is_not_a_command\nruntime=5\n";
    std::fs::write(d.path().join("j.fio"), job).unwrap();
    let r = storbench(d.path(), &["run", "--fio", "j.fio", "--allow-exec", "--results-dir", "out", "--quiet"]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    // The failure is in the report (standard output), as every job's is.
    assert!(r.stdout.contains("/bin/sh failed after") && r.stdout.contains("its errors are in bad.stderr"), "{}", r.stdout);
    assert!(std::fs::read_to_string(d.path().join("bad.stderr")).unwrap().contains("not found"));
}
