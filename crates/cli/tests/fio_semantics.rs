//! fio's loop and cache semantics, checked against fio itself on real files:
//! how often the page cache is dropped (strace counts fadvise DONTNEED) on
//! buffered jobs of mixed block sizes, and where non-uniform distributions
//! put their reads (fio's write_iolog and storbench's give the offsets).
//! Needs Debian's fio and strace; scripts/install-deps.sh installs both.

mod common;
use common::*;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Both tools are here (in CI they must be).
fn tools(names: &[&str]) -> bool {
    for name in names {
        if !have(name) {
            assert!(std::env::var_os("CI").is_none(), "{name} is missing in CI: scripts/install-deps.sh installs it");
            eprintln!("SKIP: {name} is not installed (scripts/install-deps.sh installs it)");
            return false;
        }
    }
    true
}

/// A file of `mib` MiB of random bytes, laid out before either tool runs
/// (so neither lays it out, and neither drops its cache for a layout).
fn data_file(dir: &Path, name: &str, mib: usize) {
    std::fs::write(dir.join(name), random_bytes(mib << 20, 27)).unwrap();
}

/// How many times `cmd` (fio or storbench's drop-in) dropped a file's page
/// cache: posix_fadvise(DONTNEED) calls in its strace record.
fn drops(dir: &Path, tool: &str, job: &str) -> usize {
    let mut args = vec!["-f", "-qq", "-e", "trace=fadvise64", "-o", "trace.txt"];
    match tool {
        "fio" => args.push("fio"),
        _ => args.extend([bin(), "fio"]),
    }
    args.extend(["--output-format=json", job]);
    let out = Command::new("strace").args(&args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    let trace = std::fs::read_to_string(dir.join("trace.txt")).unwrap();
    trace.lines().filter(|l| l.contains("POSIX_FADV_DONTNEED")).count()
}

/// fio drops the cache when it opens the file for each loop, and, within a
/// loop, when its random map is full; with mixed sizes the map marks every
/// block an I/O covers, so a loop is exactly the file's bytes.
fn same_drops_as_fio(body: &str) {
    if !tools(&["fio", "strace"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 16);
    let job = format!("[global]\nfilename=d.dat\nsize=16m\nloops=3\nioengine=libaio\niodepth=8\n[j]\n{body}");
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    let fio = drops(d.path(), "fio", "job.fio");
    let sb = drops(d.path(), "storbench", "job.fio");
    assert!(fio >= 3, "fio drops the cache once per loop at least: {fio}");
    assert_eq!(sb, fio, "page cache drops: storbench {sb}, fio {fio}");
}

#[test]
fn a_buffered_bssplit_job_drops_the_cache_as_often_as_fio() {
    same_drops_as_fio("rw=randread\nbssplit=4k/50:64k/30:1m/20\n");
}

#[test]
fn a_buffered_mixed_randrw_job_drops_the_cache_as_often_as_fio() {
    same_drops_as_fio("rw=randrw\nrwmixread=60\nbssplit=4k/50:64k/30:1m/20\n");
}

/// The share of reads on the hottest 1% of blocks, and how many distinct
/// blocks were read, from a fio v3 iolog.
fn popularity(log: &Path, blocks: usize) -> (f64, usize) {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    let text = std::fs::read_to_string(log).unwrap();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 5 && f[2] == "read" {
            *counts.entry(f[3].parse::<u64>().unwrap() / 4096).or_default() += 1;
        }
    }
    let mut c: Vec<u64> = counts.values().copied().collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let reads: u64 = c.iter().sum();
    let hot: u64 = c.iter().take(blocks / 100).sum();
    (hot as f64 / reads as f64, c.len())
}

/// The same distribution puts reads where fio puts them: fio draws a rank
/// and hashes it onto the blocks, and its `normal` is its own (the mean of
/// twelve uniform draws, moved by a uniform deviation), not a Gaussian of
/// that standard deviation.
#[test]
fn non_uniform_distributions_read_the_blocks_fio_reads() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "z.dat", 16);
    for dist in ["zipf:1.2", "normal:5"] {
        let job = format!(
            "[global]\nfilename=z.dat\nsize=16m\nio_size=64m\nioengine=psync\n[j]\nrw=randread\nbs=4k\nrandom_distribution={dist}\n"
        );
        std::fs::write(d.path().join("job.fio"), job).unwrap();
        // A log of the same name from the last distribution goes first.
        for log in ["fio.log", "sb.log"] {
            let _ = std::fs::remove_file(d.path().join(log));
        }
        let fio = Command::new("fio").args(["--write_iolog=fio.log", "job.fio"]).current_dir(d.path()).output().unwrap();
        assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
        let sb = storbench(d.path(), &["fio", "--write_iolog=sb.log", "job.fio"]);
        assert_eq!(sb.code, 0, "{}", sb.stderr);
        let (fio_hot, fio_distinct) = popularity(&d.path().join("fio.log"), 4096);
        let (sb_hot, sb_distinct) = popularity(&d.path().join("sb.log"), 4096);
        assert!((fio_hot - sb_hot).abs() <= 0.02, "{dist}: hottest 1% of blocks take {sb_hot:.3} of reads, in fio {fio_hot:.3}");
        let off = sb_distinct.abs_diff(fio_distinct) as f64 / fio_distinct as f64;
        assert!(off <= 0.10, "{dist}: {sb_distinct} distinct blocks read, fio {fio_distinct}");
    }
}

/// A new file after `tool` ran `job` on it: its length and how many of its
/// bytes hold data (FIEMAP: holes and unwritten extents do not).
fn made(tool: &str, job: &str) -> (u64, u64) {
    let d = scratch();
    std::fs::write(d.path().join("j.fio"), format!("[j]\nfilename=m.dat\nsize=8m\nbs=4k\ndirect=1\nioengine=psync\n{job}")).unwrap();
    let mut cmd = match tool {
        "fio" => Command::new("fio"),
        _ => {
            let mut c = Command::new(bin());
            c.arg("fio");
            c
        }
    };
    let out = cmd.args(["--output-format=json", "j.fio"]).current_dir(d.path()).output().unwrap();
    assert!(out.status.success(), "{tool} {job}: {}", String::from_utf8_lossy(&out.stderr));
    let path = d.path().join("m.dat");
    let len = std::fs::metadata(&path).unwrap().len();
    let never = storbench_engine::files::extents::never_written(&path, len).expect("FIEMAP on the scratch file system");
    (len, len - never)
}

/// fio lays a new file out with data only for a job that reads or sets
/// `overwrite`; one that only writes gets the room its `fallocate` makes
/// and writes into it (storbench wrote the whole file first: its first
/// pass overwrote allocated blocks where fio's converts unwritten extents).
#[test]
fn a_new_file_is_laid_out_as_fio_lays_it_out() {
    if !tools(&["fio"]) {
        return;
    }
    for job in [
        "rw=randwrite\nnumber_ios=4\n",
        "rw=randwrite\nnumber_ios=4\nfallocate=truncate\n",
        "rw=write\nnumber_ios=4\nfallocate=none\n",
        "rw=randwrite\nnumber_ios=4\noverwrite=1\n",
        "rw=randread\nnumber_ios=4\n",
    ] {
        let (fio, sb) = (made("fio", job), made("storbench", job));
        assert_eq!(sb, fio, "(length, bytes holding data) after {job:?}: storbench {sb:?}, fio {fio:?}");
    }
}

/// `tool`'s (fio or storbench's drop-in) JSON output for `job`, run after
/// `wrap` (a command it runs under, or nothing), bounded at 60 s.
fn fio_json(dir: &Path, wrap: &[&str], tool: &str, job: &str) -> serde_json::Value {
    let (ok, doc, stderr) = fio_run(dir, wrap, tool, job);
    assert!(ok, "{tool}: {stderr}");
    doc
}

/// A run of `job` by `tool` under `wrap`, bounded at 60 s: its exit
/// status, JSON document (fio writes one even when it fails) and stderr.
fn fio_run(dir: &Path, wrap: &[&str], tool: &str, job: &str) -> (bool, serde_json::Value, String) {
    let mut args = vec!["60"];
    args.extend(wrap);
    match tool {
        "fio" => args.push("fio"),
        _ => args.extend([bin(), "fio"]),
    }
    args.extend(["--output-format=json", job]);
    let out = Command::new("timeout").args(&args).current_dir(dir).output().unwrap();
    let (text, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr).into_owned());
    let doc = serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).unwrap_or_else(|e| panic!("{tool}: {e}: {text} {stderr}"));
    (out.status.success(), doc, stderr)
}

/// The I/Os, read and write, of every job in a fio-shaped JSON document.
fn ios_of(doc: &serde_json::Value) -> u64 {
    let jobs = doc["jobs"].as_array().unwrap();
    jobs.iter().map(|j| j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap()).sum()
}

/// System calls named `calls` in `tool`'s strace record of `job`, and the
/// I/Os its JSON output counts.
fn syscalls(dir: &Path, tool: &str, job: &str, calls: &str) -> (usize, u64) {
    let trace = format!("trace={calls}");
    let doc = fio_json(dir, &["strace", "-f", "-qq", "-e", &trace, "-o", "calls.txt"], tool, job);
    let n = std::fs::read_to_string(dir.join("calls.txt")).unwrap().lines().filter(|l| l.contains(&format!("{calls}("))).count();
    (n, ios_of(&doc))
}

/// fio's defaults take one completion per io_getevents
/// (iodepth_batch_complete_min and _max 1) and put a new I/O in its place
/// before the next: on buffered libaio, where every I/O has completed
/// inside io_submit, fio makes one io_getevents per I/O. storbench took
/// all 16 at once and then submitted 16 one by one (one call per 16 I/Os);
/// on a direct randwrite that left the device idle: 26-33k IOPS against
/// fio's 45-63k.
#[test]
fn libaio_takes_completions_one_at_a_time_as_fio() {
    if !tools(&["fio", "strace"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    let job = "[global]\nfilename=d.dat\nsize=4m\nioengine=libaio\niodepth=16\nbs=4k\n[j]\nrw=randread\n";
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    let (fio, fio_ios) = syscalls(d.path(), "fio", "job.fio", "io_getevents");
    let (sb, sb_ios) = syscalls(d.path(), "storbench", "job.fio", "io_getevents");
    assert_eq!((fio_ios, sb_ios), (1024, 1024), "each tool reads the 4 MiB file once");
    let (fio_per, sb_per) = (fio as f64 / fio_ios as f64, sb as f64 / sb_ios as f64);
    assert!(fio_per > 0.9, "fio: {fio} io_getevents for {fio_ios} I/Os");
    assert!((sb_per - fio_per).abs() < 0.1, "io_getevents per I/O: storbench {sb_per:.3} ({sb}), fio {fio_per:.3} ({fio})");
}

/// A read job's latency parts in `tool`'s fio JSON: slat, clat and lat.
struct Split {
    slat_n: f64,
    slat: f64,
    clat_n: f64,
    clat: f64,
    clat_p50: f64,
    lat: f64,
}

impl Split {
    fn of(dir: &Path, tool: &str, job: &str) -> Split {
        let doc = fio_json(dir, &[], tool, job);
        let r = &doc["jobs"][0]["read"];
        let f = |k: &str, v: &str| r[k][v].as_f64().unwrap();
        let clat_p50 = r["clat_ns"]["percentile"]["50.000000"].as_f64().unwrap_or(0.0);
        Split {
            slat_n: f("slat_ns", "N"),
            slat: f("slat_ns", "mean"),
            clat_n: f("clat_ns", "N"),
            clat: f("clat_ns", "mean"),
            clat_p50,
            lat: f("lat_ns", "mean"),
        }
    }

    /// Every I/O has a slat, and slat and clat are parts of the latency.
    fn assert_apart(&self, what: &str) {
        assert_eq!(self.slat_n, self.clat_n, "{what} {self}: every I/O has a slat");
        assert!(self.clat + self.slat <= self.lat * 1.05, "{what} {self}: slat and clat are parts of the latency");
    }
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Split { slat_n, slat, clat_n, clat, clat_p50, lat } = self;
        write!(f, "slat N {slat_n} mean {slat:.0} ns, clat N {clat_n} mean {clat:.0} p50 {clat_p50}, lat mean {lat:.0}")
    }
}

/// fio's libaio stamps an I/O's issue time after io_submit returns: its
/// slat is the submission, its clat what follows. Buffered libaio reads are
/// carried out inside io_submit, so both tools' clat is a few microseconds
/// and the slat most of the latency; psync has no slat in either (fio's
/// clat is the whole call). storbench kept no slat and gave the whole
/// latency as clat (on a direct QD1 read: clat p50 94 us, fio's 64).
#[test]
fn libaio_keeps_the_submission_apart_as_fio_and_psync_does_not() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    for engine in ["libaio", "psync"] {
        let job = format!("[global]\nfilename=d.dat\nsize=4m\nioengine={engine}\nbs=4k\n[j]\nrw=randread\n");
        std::fs::write(d.path().join("job.fio"), job).unwrap();
        for tool in ["fio", "storbench"] {
            let split = Split::of(d.path(), tool, "job.fio");
            match engine {
                "libaio" => {
                    split.assert_apart(&format!("{tool} {engine}"));
                    // The median, not the mean: one preemption before the reap would move a mean of microseconds.
                    assert!(split.clat_p50 < split.slat, "{tool} {engine} {split}: a buffered read is done by the time io_submit returns");
                }
                _ => assert_eq!(split.slat_n, 0.0, "{tool} {engine} {split}: no slat on a synchronous engine"),
            }
        }
    }
}

/// fio's io_uring commits each I/O in an io_uring_enter of its own and
/// stamps its issue after it: slat is that call, clat what follows.
/// storbench's own io_uring sends the newest entry in with the wait (one
/// call fewer per round), so it had no slat and its clat was fio's lat
/// (direct 4k randwrite QD16: clat p50 1.06-1.11x fio's); the drop-in now
/// makes fio's calls (`submit_each`), while `storbench run` keeps its own.
#[test]
fn io_uring_submits_each_io_apart_as_fio() {
    if !tools(&["fio", "strace"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    let job = "[global]\nfilename=d.dat\nsize=4m\nioengine=io_uring\niodepth=4\nbs=4k\n[j]\nrw=randread\n";
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    let (fio, fio_ios) = syscalls(d.path(), "fio", "job.fio", "io_uring_enter");
    let (sb, sb_ios) = syscalls(d.path(), "storbench", "job.fio", "io_uring_enter");
    assert_eq!((fio_ios, sb_ios), (1024, 1024), "each tool reads the 4 MiB file once");
    let (fio_per, sb_per) = (fio as f64 / fio_ios as f64, sb as f64 / sb_ios as f64);
    assert!(fio_per >= 1.0, "fio: {fio} io_uring_enter for {fio_ios} I/Os: one per submission at least");
    assert!((sb_per - fio_per).abs() < 0.15 * fio_per, "io_uring_enter per I/O: storbench {sb_per:.3} ({sb}), fio {fio_per:.3} ({fio})");
    for tool in ["fio", "storbench"] {
        Split::of(d.path(), tool, "job.fio").assert_apart(tool);
    }
}

/// With fio's batching options the same job takes up to 8 at once (and
/// waits for 8 when the queue is full): both tools make about one
/// io_getevents per 8 I/Os.
#[test]
fn libaio_takes_completions_in_batches_when_asked_as_fio() {
    if !tools(&["fio", "strace"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    let job = "[global]\nfilename=d.dat\nsize=4m\nioengine=libaio\niodepth=16\nbs=4k\n\
               iodepth_batch_complete_min=8\niodepth_batch_complete_max=8\n[j]\nrw=randread\n";
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    let (fio, fio_ios) = syscalls(d.path(), "fio", "job.fio", "io_getevents");
    let (sb, sb_ios) = syscalls(d.path(), "storbench", "job.fio", "io_getevents");
    assert_eq!((fio_ios, sb_ios), (1024, 1024), "each tool reads the 4 MiB file once");
    let (fio_per, sb_per) = (fio as f64 / fio_ios as f64, sb as f64 / sb_ios as f64);
    assert!(fio_per < 0.2, "fio: {fio} io_getevents for {fio_ios} I/Os");
    assert!((sb_per - fio_per).abs() < 0.05, "io_getevents per I/O: storbench {sb_per:.3} ({sb}), fio {fio_per:.3} ({fio})");
}

/// loops=N with an io_size beyond the file: fio ends each pass where the
/// file ends and passes again, after the loops, only until io_size is done
/// (io_size=8m over 4m: 8m with loops=2, 12m with loops=3); without the
/// random map each loop is io_size. storbench did io_size N times over
/// (16m and 24m: twice fio's I/Os for loops=2).
#[test]
fn loops_over_an_io_size_beyond_the_file_do_the_ios_fio_does() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    for body in ["rw=read\nloops=2", "rw=randread\nloops=3", "rw=randread\nnorandommap\nloops=2"] {
        let job = format!("[j]\nfilename=d.dat\nsize=4m\nio_size=8m\nbs=64k\nioengine=psync\n{body}\n");
        std::fs::write(d.path().join("job.fio"), &job).unwrap();
        let ios = |tool| ios_of(&fio_json(d.path(), &[], tool, "job.fio"));
        let (fio, sb) = (ios("fio"), ios("storbench"));
        assert_eq!(sb, fio, "I/Os of {body:?}: storbench {sb}, fio {fio}");
    }
}

/// Offset modifiers on size-bound jobs (fio's backwards-read.fio and
/// butterfly.fio): a wrap past either end of the file stays in the pass,
/// so the job does its size in I/Os as fio does. storbench took the first
/// wrap for the pass's end and read one block (1 I/O against fio's 1024).
#[test]
fn offset_modifiers_do_the_ios_fio_does() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    let jobs = [
        "[j]\nrw=read:-8k\n",
        "[j]\nrw=write:4k\n",
        // Two files, the [global]'s and the job's (fio adds both), 2046 KiB each.
        "[j]\nrw=write:4k\nfilename=e.dat\nsize=4092k\n",
        // Past the region, inside the file (4 MiB, size=2m): the pass ends there.
        "[j]\nrw=write:4k\nsize=2m\n",
        "[forward]\nrw=read\nflow=2\n[backward]\nrw=read:-8k\nflow=2\n",
    ];
    for body in jobs {
        let job = format!("[global]\nfilename=d.dat\nsize=4m\nbs=4k\nioengine=psync\n{body}");
        std::fs::write(d.path().join("job.fio"), &job).unwrap();
        let ios = |tool| ios_of(&fio_json(d.path(), &[], tool, "job.fio"));
        let (fio, sb) = (ios("fio"), ios("storbench"));
        assert!(fio >= 256, "fio does at least a holed walk over 2 MiB for {body:?}: {fio}");
        assert_eq!(sb, fio, "I/Os of {body:?}: storbench {sb}, fio {fio}");
    }
}

/// From `tool`'s strace record of `job`'s io_submit and io_getevents calls,
/// in order: the most I/Os ever submitted and not yet reaped, the calls of
/// each kind, and the I/Os its JSON output counts.
fn in_flight(dir: &Path, tool: &str, job: &str) -> (i64, usize, usize, u64) {
    let (_, ios) = syscalls(dir, tool, job, "io_submit,io_getevents");
    let text = std::fs::read_to_string(dir.join("calls.txt")).unwrap();
    let (mut now, mut most, mut submits, mut reaps) = (0i64, 0i64, 0, 0);
    for line in text.lines().filter(|l| !l.contains("<unfinished")) {
        let Some(n) = line.rsplit_once(" = ").and_then(|(_, r)| r.split_whitespace().next()?.parse::<i64>().ok()) else { continue };
        if line.contains("io_submit") && n > 0 {
            (now, submits) = (now + n, submits + 1);
        } else if line.contains("io_getevents") && n >= 0 {
            (now, reaps) = (now - n, reaps + 1);
        }
        most = most.max(now);
    }
    (most, submits, reaps, ios)
}

/// `iodepth_batch_complete_min=0` without a max is fio's polling
/// (backend.c's io_in_polling): after each I/O it issues fio waits for a
/// completion (wait_for_completions raises the 0 to 1) and takes one, so
/// one I/O is in flight whatever the iodepth, one io_getevents per I/O.
/// storbench filled the queue to its iodepth (16 in flight) and waited only
/// when it was full. With a max (fio's HOWTO's second example) it is the
/// ordinary full-queue wait.
#[test]
fn iodepth_batch_complete_min_0_polls_one_io_at_a_time_as_fio() {
    if !tools(&["fio", "strace"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    for (extra, want) in [("iodepth_batch_complete_min=0\n", 1), ("iodepth_batch_complete_min=0\niodepth_batch_complete_max=16\n", 16)] {
        let job = format!("[global]\nfilename=d.dat\nsize=4m\nioengine=libaio\niodepth=16\nbs=4k\n{extra}[j]\nrw=randread\n");
        std::fs::write(d.path().join("job.fio"), job).unwrap();
        let fio = in_flight(d.path(), "fio", "job.fio");
        let sb = in_flight(d.path(), "storbench", "job.fio");
        eprintln!("{extra:?}: (most in flight, io_submit, io_getevents, I/Os): fio {fio:?}, storbench {sb:?}");
        assert_eq!((fio.3, sb.3), (1024, 1024), "each tool reads the 4 MiB file once");
        assert_eq!(fio.0, want, "fio's most in flight with {extra:?}");
        assert_eq!(sb.0, fio.0, "storbench's most in flight with {extra:?}: {sb:?}, fio {fio:?}");
        let (fio_per, sb_per) = (fio.2 as f64 / 1024.0, sb.2 as f64 / 1024.0);
        assert!((sb_per - fio_per).abs() < 0.1, "io_getevents per I/O: storbench {sb_per:.3}, fio {fio_per:.3}");
    }
}

/// fio's latency_target ramps the depth inside the job (io_u.c
/// lat_target_*): 1, 2, 4, 8, 16 a window each while the windows pass,
/// then, settled at 16, its figures start over (fio's final run) and the
/// job ends when it settles again, one window later, long before its
/// 5-s runtime. storbench ran slo's search instead: separate probes of
/// every depth, 6.7 times fio's IOPS on fio's latency-profile.fio.
#[test]
fn latency_target_ramps_the_depth_inside_the_job_as_fio() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 16);
    let job = "[j]\nfilename=d.dat\nsize=16m\nbs=4k\nrw=randread\nioengine=libaio\niodepth=16\nlatency_target=500ms\n\
               latency_window=100ms\nlatency_percentile=99\ntime_based\nruntime=5\n";
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    for tool in ["fio", "storbench"] {
        let (ok, doc, _) = fio_run(d.path(), &[], tool, "job.fio");
        let j = &doc["jobs"][0];
        assert!(ok, "{tool}: {j}");
        assert_eq!(j["latency_depth"].as_u64(), Some(16), "{tool} settles at its iodepth");
        let runtime = j["read"]["runtime"].as_u64().unwrap();
        assert!((90..1000).contains(&runtime), "{tool}: the final run is one window, not the search or the runtime: {runtime} ms");
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "{tool}: {j}");
    }
}

/// With fio's default latency_percentile=100 one I/O over the target at
/// depth 1 ends the job with an error (fio: "max latency exceeded");
/// storbench refused the percentile.
#[test]
fn latency_target_at_percentile_100_fails_the_job_at_depth_1_as_fio() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    let job = "[j]\nfilename=d.dat\nsize=4m\nbs=4k\nrw=randread\nioengine=libaio\niodepth=8\nlatency_target=1ns\n";
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    for tool in ["fio", "storbench"] {
        let (ok, doc, _) = fio_run(d.path(), &[], tool, "job.fio");
        let j = &doc["jobs"][0];
        assert!(!ok && j["error"].as_u64() == Some(110), "{tool} fails the job with fio's ETIMEDOUT: {j}");
        assert_eq!((j["read"]["total_ios"].as_u64(), j["latency_depth"].as_u64()), (Some(1), Some(1)), "{tool}: {j}");
    }
}

/// fio's max_latency: a read slower than the bound (1 ns: every one) fails
/// the job on the first, as fio's lat_fatal, with ETIMEDOUT; 10 s lets it
/// read the file. storbench refused the option.
#[test]
fn max_latency_fails_the_job_on_the_first_slower_io_as_fio() {
    if !tools(&["fio"]) {
        return;
    }
    let d = scratch();
    data_file(d.path(), "d.dat", 4);
    for (bound, fails) in [("1ns", true), ("10s", false)] {
        let job = format!("[j]\nfilename=d.dat\nsize=4m\nbs=4k\nrw=randread\nioengine=psync\nmax_latency={bound}\n");
        std::fs::write(d.path().join("job.fio"), job).unwrap();
        for tool in ["fio", "storbench"] {
            let (ok, doc, stderr) = fio_run(d.path(), &[], tool, "job.fio");
            let (j, ios) = (&doc["jobs"][0], ios_of(&doc));
            match fails {
                // ETIMEDOUT, fio's error for it.
                true => assert!(!ok && j["error"].as_u64() == Some(110) && ios == 1, "{tool} max_latency={bound}: {ios} I/Os {stderr} {j}"),
                false => assert!(ok && ios == 1024, "{tool} max_latency={bound}: {ios} I/Os {stderr}"),
            }
        }
    }
}
