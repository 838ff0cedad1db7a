//! fio's special-purpose engines in fio job files, shaped as fio's examples
//! write them (falloc.fio), with what fio's meaning implies checked on the
//! target afterwards: fallocate as the I/O, holes punched by trims.

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
