//! fio job files whose meaning is in how fio numbers its jobs, checked
//! against fio itself on real files: the random offsets two jobs of one file
//! draw (fio seeds each job and clone by its thread number), and the entries
//! fio's outputs list for numjobs clones (one each, unless group_reporting).
//! Needs Debian's fio; scripts/install-deps.sh installs it.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// fio is here (in CI it must be).
fn have_fio() -> bool {
    if !have("fio") {
        assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/install-deps.sh installs it");
        eprintln!("SKIP: fio is not installed (scripts/install-deps.sh installs it)");
        return false;
    }
    true
}

/// `tool` (fio, or storbench's drop-in) run with `args` in `dir`: its standard output.
fn run_tool(dir: &Path, tool: &str, args: &[&str]) -> String {
    if tool == "fio" {
        let o = Command::new("fio").args(args).current_dir(dir).output().unwrap();
        assert!(o.status.success(), "fio: {}", String::from_utf8_lossy(&o.stderr));
        return String::from_utf8_lossy(&o.stdout).into_owned();
    }
    let o = storbench(dir, &[&["fio"], args].concat());
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.stdout
}

/// The offsets of the reads in a fio v3 iolog (`time file action offset len`), in order.
fn read_offsets(log: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && f[2] == "read")
        .map(|f| f[3].parse().unwrap())
        .collect()
}

/// Two jobs of one file on one data file, each logging its offsets; the
/// offsets of job a and job b after one run of `tool`.
fn two_jobs(dir: &Path, tool: &str) -> (Vec<u64>, Vec<u64>) {
    let job = "[global]\nfilename=s.dat\nsize=4m\nioengine=psync\nrw=randread\nbs=4k\nnumber_ios=64\n\
               [a]\nwrite_iolog=a.log\n[b]\nwrite_iolog=b.log\n";
    std::fs::write(dir.join("job.fio"), job).unwrap();
    for log in ["a.log", "b.log"] {
        let _ = std::fs::remove_file(dir.join(log));
    }
    run_tool(dir, tool, &["--output-format=json", "job.fio"]);
    (read_offsets(&dir.join("a.log")), read_offsets(&dir.join("b.log")))
}

/// fio seeds every job by its thread number: two jobs of a file never share
/// their offsets, and a second run of the file repeats the first
/// (randrepeat=1 repeats a run, it does not make jobs alike).
#[test]
fn two_jobs_of_one_seed_draw_their_own_offsets_and_a_run_repeats_itself() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    std::fs::write(d.path().join("s.dat"), random_bytes(4 << 20, 7)).unwrap();
    for tool in ["fio", "storbench"] {
        let (a, b) = two_jobs(d.path(), tool);
        assert_eq!((a.len(), b.len()), (64, 64), "{tool}: 64 reads each");
        let shared = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(shared < 8, "{tool}: jobs a and b read the same offset at {shared} of 64 places");
        let again = two_jobs(d.path(), tool);
        assert_eq!(again, (a, b), "{tool}: a second run repeats the first");
    }
}

/// The jobs fio's output lists for `job` (from either tool): each entry's
/// name and what it read (I/Os; KiB in terse).
fn entries(dir: &Path, tool: &str, format: &str, job: &str) -> Vec<(String, u64)> {
    let out = run_tool(dir, tool, &[&format!("--output-format={format}"), job]);
    if format == "terse" {
        // fio's terse line: version;fio-x;jobname;groupid;error;read_kb;...
        return out.lines().map(|l| l.split(';').collect::<Vec<_>>()).map(|f| (f[2].to_string(), f[5].parse().unwrap())).collect();
    }
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{tool}: {e}: {out}"));
    let jobs = doc["jobs"].as_array().unwrap();
    jobs.iter().map(|j| (j["jobname"].as_str().unwrap().to_string(), j["read"]["total_ios"].as_u64().unwrap())).collect()
}

/// numjobs makes clones, and fio lists every clone as a job of its own (its
/// own reads, the job's name) unless the job asks for group_reporting.
#[test]
fn numjobs_clones_are_listed_as_fio_lists_them() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    std::fs::write(d.path().join("s.dat"), random_bytes(4 << 20, 9)).unwrap();
    let global = "[global]\nfilename=s.dat\nsize=4m\nioengine=psync\nrw=randread\nbs=4k\nnumber_ios=64\n";
    std::fs::write(d.path().join("clones.fio"), format!("{global}[a]\nnumjobs=3\n[b]\n")).unwrap();
    std::fs::write(d.path().join("merged.fio"), format!("{global}group_reporting\n[a]\nnumjobs=3\n")).unwrap();
    for format in ["json", "json+", "terse"] {
        let fio = entries(d.path(), "fio", format, "clones.fio");
        let sb = entries(d.path(), "storbench", format, "clones.fio");
        assert_eq!(sb, fio, "{format}: storbench's entries (name, reads) against fio's");
    }
    let fio = entries(d.path(), "fio", "json", "merged.fio");
    assert_eq!(fio, [("a".to_string(), 192)], "fio merges the clones under group_reporting");
    assert_eq!(entries(d.path(), "storbench", "json", "merged.fio"), fio, "group_reporting: one entry of all the clones' reads");
    // fio's normal output: one block per clone, each `jobs=1`.
    let normal = storbench(d.path(), &["fio", "clones.fio"]);
    assert_eq!(normal.stdout.matches("a: (groupid=0, jobs=1)").count(), 3, "{}", normal.stdout);
}

/// An entry's name, reporting group and I/Os (reads, writes).
type Entry = (String, u64, u64, u64);

/// Each entry in fio's JSON, and its `(groupid=G, jobs=N)` in fio's normal output.
fn groups(dir: &Path, tool: &str, job: &str) -> (Vec<Entry>, Vec<String>) {
    let out = run_tool(dir, tool, &["--output-format=json", job]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{tool}: {e}: {out}"));
    let io = |j: &serde_json::Value, d: &str| j[d]["total_ios"].as_u64().unwrap();
    let entry =
        |j: &serde_json::Value| (j["jobname"].as_str().unwrap().to_string(), j["groupid"].as_u64().unwrap(), io(j, "read"), io(j, "write"));
    let json = doc["jobs"].as_array().unwrap().iter().map(entry).collect();
    let normal = run_tool(dir, tool, &[job]);
    let heads = normal.lines().filter(|l| l.contains("(groupid=")).map(|l| l[..l.find("): err").unwrap() + 1].to_string()).collect();
    (json, heads)
}

/// group_reporting merges every job of a reporting group into one entry,
/// named after its first job, not only a job's own clones: a group begins
/// at `stonewall` or at `new_group` (exitwhat.fio's three entries of five jobs).
#[test]
fn group_reporting_merges_the_jobs_of_each_reporting_group() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    std::fs::write(d.path().join("s.dat"), random_bytes(1 << 20, 11)).unwrap();
    let job = "[global]\ngroup_reporting\nfilename=s.dat\nsize=1m\nbs=4k\nioengine=psync\nnumber_ios=32\n\
               [a]\nrw=read\n[b]\nrw=randread\nnumjobs=2\n[c]\nnew_group\nrw=read\n\
               [d]\nstonewall\nrw=write\n[e]\nrw=randwrite\n";
    std::fs::write(d.path().join("groups.fio"), job).unwrap();
    let fio = groups(d.path(), "fio", "groups.fio");
    let e = |n: &str, g, r, w| (n.to_string(), g, r, w);
    assert_eq!(fio.0, [e("a", 0, 96, 0), e("c", 1, 32, 0), e("d", 2, 0, 64)], "fio's entries");
    assert_eq!(fio.1, ["a: (groupid=0, jobs=3)", "c: (groupid=1, jobs=1)", "d: (groupid=2, jobs=2)"]);
    assert_eq!(groups(d.path(), "storbench", "groups.fio"), fio, "storbench's entries against fio's");
}

/// `iodepth_level` is the depth measured when each I/O is issued, as fio's
/// io_u_map counts it, not the configured one: a job paced well below what
/// the target does (rate_iops on the null engine) has one I/O in flight at a
/// time whatever its iodepth (flow.fio showed ">=64: 100%" where fio shows 1-16).
/// Depth 1 for most, not 90%: at load 9 a late thread catches up in a burst
/// (74% at depth 1 once).
#[test]
fn iodepth_level_is_the_depth_measured_at_issue() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    let job = "[p]\nioengine=null\nsize=64m\nbs=4k\nrw=randread\niodepth=16\nrate_iops=200\nruntime=1\ntime_based\n";
    std::fs::write(d.path().join("paced.fio"), job).unwrap();
    for tool in ["fio", "storbench"] {
        let out = run_tool(d.path(), tool, &["--output-format=json", "paced.fio"]);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{tool}: {e}: {out}"));
        let level = &doc["jobs"][0]["iodepth_level"];
        let at = |k: &str| level[k].as_f64().unwrap();
        assert!(at("1") >= 50.0 && at("16") == 0.0, "{tool}: {level}");
    }
}

/// The (writes, reads) of `job` as `tool` counts them in its JSON output,
/// run on a file the job itself lays out (removed first).
fn passes(dir: &Path, tool: &str, job: &str) -> (u64, u64) {
    std::fs::write(dir.join("loop.fio"), job).unwrap();
    let _ = std::fs::remove_file(dir.join("p.dat"));
    let out = run_tool(dir, tool, &["--output-format=json", "loop.fio"]);
    // fio writes its warnings to standard output before the document.
    let doc: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap_or(0)..]).unwrap_or_else(|e| panic!("{tool}: {e}: {out}"));
    let n = |dir: &str| doc["jobs"][0][dir]["total_ios"].as_u64().unwrap();
    (n("write"), n("read"))
}

/// fio's keep_running (backend.c): `loops` passes first, then more only
/// while the bytes done (verify reads too) fall short of io_size by a
/// largest block; a pass ends where the file ends, holes and all; a
/// verifying job reads each pass back before the next (do_verify inside
/// the loop). storbench counted a byte budget of io_size x loops and
/// verified once at the end: fio's cross-stripe-verify.fio scaled was 512
/// writes and 512 reads against fio's 128 and 128; loops=3 with verify 48
/// writes and 16 reads against 48 and 48; io_size=2.5 x size with verify
/// 40 writes and 16 reads against 32 and 32; a holed pass from an offset
/// 64 writes against 8.
#[test]
fn passes_loops_io_size_and_verify_count_as_fios_keep_running() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    let cases = [
        // cross-stripe-verify.fio, scaled: 16k every 128k from 120k.
        "[global]\nbs=16k\nrw=write:112k\nverify=crc32c\nfilename=p.dat\nsize=4m\nverify_backlog=1\noffset=120k\nio_size=4m\nloops=2\n[write-verify]\n",
        "[j]\nfilename=p.dat\nsize=1m\nbs=64k\nrw=write\nverify=crc32c\nloops=3\n",
        "[j]\nfilename=p.dat\nsize=1m\nio_size=2560k\nbs=64k\nrw=write\n",
        "[j]\nfilename=p.dat\nsize=1m\nio_size=2560k\nbs=64k\nrw=randwrite\nverify=crc32c\n",
        "[j]\nfilename=p.dat\nsize=1m\noffset=120k\nbs=16k\nrw=write:112k\n",
        "[j]\nfilename=p.dat\nsize=1m\noffset=120k\nbs=16k\nrw=write:112k\nverify=crc32c\nloops=2\n",
        "[j]\nfilename=p.dat\nsize=1m\nbs=64k\nrw=randwrite\nverify=crc32c\nnumjobs=2\noffset_increment=1m\nloops=2\ngroup_reporting\n",
    ];
    for job in cases {
        let fio = passes(d.path(), "fio", job);
        assert!(fio.0 > 0, "fio wrote nothing: {job:?}");
        assert_eq!(passes(d.path(), "storbench", job), fio, "(writes, reads) against fio's for {job:?}");
    }
}

/// fio counts a loop's read-back (do_verify) as the verify reads' time,
/// never the writes': with loops=3 the write runtime is its three passes'
/// writes, and a rate's schedule resumes after each read-back. storbench
/// counted w1+v1+w2+v2+w3 (rw=write verify loops=3: write IOPS ~3/5 of
/// fio's) and took the read-back as the next pass's first writes' latency.
/// On the memory engine reads take 20 ms, so the two read-backs between
/// passes take 640 ms of the 960 the three take; the writes, 48 at 200
/// IOPS, about 240 ms.
#[test]
fn a_loops_read_back_is_not_the_writes_runtime_nor_their_latency() {
    let d = scratch();
    let job = "[p]\nioengine=memory\nsize=256k\nbs=16k\nrw=write\nverify=crc32c\nloops=3\nop_latency=read:20ms\nrate_iops=200\n";
    std::fs::write(d.path().join("h1.fio"), job).unwrap();
    let out = run_tool(d.path(), "storbench", &["--output-format=json", "h1.fio"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let (w, r) = (&doc["jobs"][0]["write"], &doc["jobs"][0]["read"]);
    assert_eq!((w["total_ios"].as_u64(), r["total_ios"].as_u64()), (Some(48), Some(48)), "{out}");
    let (wt, rt) = (w["runtime"].as_u64().unwrap(), r["runtime"].as_u64().unwrap());
    assert!(rt >= 960 && wt * 3 < rt * 2, "write runtime {wt} ms holds no read-back ({rt} ms of reads, 2/3 between passes)");
    let max_ms = w["lat_ns"]["max"].as_u64().unwrap() / 1_000_000;
    assert!(max_ms < 160, "the longest write took {max_ms} ms: a 320 ms read-back counted in its latency");
}

/// The 4 KiB blocks of each of `dir`'s files named `j.*` that hold data
/// (a file laid out by fallocate reads as zeros where nothing was written).
fn blocks_written(dir: &Path) -> Vec<(String, usize)> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.retain(|n| n.starts_with("j."));
    names.sort();
    let count = |n: &String| std::fs::read(dir.join(n)).unwrap().chunks(4096).filter(|b| b.iter().any(|x| *x != 0)).count();
    names.iter().map(|n| (n.clone(), count(n))).collect()
}

/// Several files and sizes that differ: fio ends a pass when every file
/// is done (a done file skipped till then, io_u.c set_io_u_file) and
/// draws a size that fits what is left of a file (get_next_buflen), so
/// loops=1 writes each file whole. storbench ended the pass at the first
/// file to wrap: nrfiles=3 bsrange=4k-64k left 251, 249 and 224 of each
/// file's 256 blocks written (rw=write), 221, 244 and 256 (rw=randwrite).
#[test]
fn a_pass_over_several_files_ends_when_every_file_is_done() {
    if !have_fio() {
        return;
    }
    for rw in ["write", "randwrite"] {
        let job = format!("[j]\ndirectory=.\nnrfiles=3\nsize=3m\nbsrange=4k-64k\nrw={rw}\nioengine=psync\nloops=1\n");
        let mut by_tool = Vec::new();
        for tool in ["fio", "storbench"] {
            let d = scratch();
            std::fs::write(d.path().join("m7.fio"), &job).unwrap();
            run_tool(d.path(), tool, &["--output-format=json", "m7.fio"]);
            by_tool.push(blocks_written(d.path()));
        }
        let whole: Vec<(String, usize)> = ["j.0.0", "j.0.1", "j.0.2"].iter().map(|n| (n.to_string(), 256)).collect();
        assert_eq!(by_tool[0], whole, "{rw}: fio writes every file whole");
        assert_eq!(by_tool[1], by_tool[0], "{rw}: storbench's blocks written per file against fio's");
    }
}

/// fio's randrepeat (on by default) reseeds every generator at each loop
/// (clear_io_state, td_fill_rand_seeds): a randread job's second pass reads
/// the offsets of its first, in the same order; randrepeat=0 draws on.
/// storbench drew a new order for every pass.
#[test]
fn randrepeat_makes_every_pass_draw_the_first_passs_offsets() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    std::fs::write(d.path().join("rr.dat"), random_bytes(1 << 20, 5)).unwrap();
    for repeat in ["1", "0"] {
        let job = format!(
            "[j]\nfilename=rr.dat\nsize=1m\nbs=4k\nrw=randread\nioengine=psync\nloops=2\nrandrepeat={repeat}\nwrite_iolog=rr.log\n"
        );
        std::fs::write(d.path().join("rr.fio"), job).unwrap();
        for tool in ["fio", "storbench"] {
            let _ = std::fs::remove_file(d.path().join("rr.log"));
            run_tool(d.path(), tool, &["rr.fio"]);
            let offsets = read_offsets(&d.path().join("rr.log"));
            assert_eq!(offsets.len(), 512, "{tool}: two passes of 256 reads");
            let (first, second) = offsets.split_at(256);
            let mut blocks = first.to_vec();
            blocks.sort_unstable();
            blocks.dedup();
            assert_eq!(blocks.len(), 256, "{tool}: a pass reads every block once");
            assert_eq!(first == second, repeat == "1", "{tool}: randrepeat={repeat}: the second pass's offsets against the first's");
        }
    }
}

/// A time-based write job that verifies, as fio 3.33 runs it (backend.c):
/// do_io leaves for do_verify once the bytes issued reach the job's size,
/// counting only what the engine queued, and the pass the runtime cuts
/// short is never read back. psync's I/O completes in the call, so it never
/// reads back; libaio and io_uring read back every size (256 blocks here).
/// storbench read back once at the end whatever the engine: psync 21,668
/// writes and 256 reads where fio does 20,481 and 0; libaio 27,681 and 256
/// where fio does 17,888 and 17,664.
#[test]
fn a_time_based_verify_reads_back_as_fio_does_per_engine() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    for engine in ["psync", "libaio"] {
        let job =
            format!("[j]\nfilename=p.dat\nsize=1m\nbs=4k\nrw=write\nioengine={engine}\niodepth=4\nverify=crc32c\ntime_based\nruntime=1\n");
        for tool in ["fio", "storbench"] {
            let (writes, reads) = passes(d.path(), tool, &job);
            assert!(writes > 256, "{tool} {engine}: {writes} writes");
            match engine {
                "psync" => assert_eq!(reads, 0, "{tool} {engine}: a synchronous engine never reads back ({writes} writes)"),
                _ => assert!(
                    reads >= 256 && reads <= writes && writes - reads < 256 + 4,
                    "{tool} {engine}: every whole pass of 256 writes read back, the last cut short not: {writes} writes, {reads} reads"
                ),
            }
        }
    }
    // fio warns that psync's read phase never starts; storbench says so too
    // (not that nothing read could be judged).
    let r = storbench(d.path(), &["fio", "--results-dir", "r", "loop.fio"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let never = |w: &&storbench_model::Warning| matches!(w, storbench_model::Warning::VerifyNeverRead { engine, .. } if engine == "psync");
    let psync = std::fs::read_to_string(d.path().join("loop.fio")).unwrap().replace("ioengine=libaio", "ioengine=psync");
    std::fs::write(d.path().join("loop.fio"), psync).unwrap();
    let r = storbench(d.path(), &["fio", "--results-dir", "s", "loop.fio"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let warnings = &run_result(&d.path().join("s")).jobs[0].warnings;
    assert!(warnings.iter().any(|w| never(&w)), "{warnings:?}");
    assert!(!run_result(&d.path().join("r")).jobs[0].warnings.iter().any(|w| never(&w)), "libaio reads back: no such warning");
}
