//! fio's data, layout and log options with fio's meaning, each checked on
//! what that meaning implies (the bytes written, the offsets issued, the log
//! lines, the pace): per-direction rates, `blockalign`, `rate_min` as fio
//! judges it, dedupe working sets, strided zones, per-I/O logs.

mod common;
use common::*;
use std::path::Path;

/// `storbench fio JOB` in `dir` with the job file's text; fio's JSON back.
fn fio_job(dir: &Path, text: &str) -> (Run, serde_json::Value) {
    std::fs::write(dir.join("j.fio"), text).unwrap();
    let r = storbench(dir, &["fio", "--output-format=json", "j.fio"]);
    let doc = serde_json::from_str(&r.stdout).unwrap_or(serde_json::Value::Null);
    (r, doc)
}

fn total_ios(doc: &serde_json::Value, job: usize, dir: &str) -> u64 {
    doc["jobs"][job][dir]["total_ios"].as_u64().unwrap_or(0)
}

/// fio's `rate=r,w` (exitwhat.fio's `rate=300,300,300`) limits reads and
/// writes each to its own rate: the mix follows the rates, not rwmixread.
#[test]
fn a_rate_per_direction_paces_reads_and_writes_each() {
    let d = scratch();
    let job = "[j]\nfilename=r.dat\nsize=4m\nbs=4k\nrw=randrw\nrwmixread=80\nrate=400k,400k,400k\nruntime=3\ntime_based\n";
    let (r, doc) = fio_job(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (reads, writes) = (total_ios(&doc, 0, "read"), total_ios(&doc, 0, "write"));
    // 100 reads and 100 writes a second for three seconds.
    for (what, n) in [("reads", reads), ("writes", writes)] {
        assert!((240..=330).contains(&n), "{what}: {n} (reads {reads}, writes {writes})");
    }
}

/// jesd219.fio: `blockalign=4k` with blocks from 512 bytes: every offset a
/// multiple of 4 KiB, blocks of every size.
#[test]
fn blockalign_aligns_offsets_of_smaller_blocks() {
    let d = scratch();
    let job = "[j]\nfilename=a.dat\nsize=8m\nrw=randrw\nnorandommap\nbssplit=512/40:1536/20:4k/30:8k/10\nblockalign=4k\n\
               number_ios=2000\nwrite_iolog=io.log\n";
    let (r, _) = fio_job(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = std::fs::read_to_string(d.path().join("io.log")).unwrap();
    let ios: Vec<(u64, u64)> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && matches!(f[2], "read" | "write")).then(|| (f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect();
    assert_eq!(ios.len(), 2000, "{log:.300}");
    assert!(ios.iter().all(|(off, _)| off % 4096 == 0), "an offset off 4 KiB: {:?}", ios.iter().find(|(o, _)| o % 4096 != 0));
    assert!(ios.iter().any(|(_, len)| *len == 512) && ios.iter().any(|(_, len)| *len == 1536), "small blocks issued");
    assert!(ios.iter().map(|(o, _)| o).collect::<std::collections::HashSet<_>>().len() > 1000, "spread over the file");
}

/// 1mbs_clients.fio: a reader paced below one I/O a second (`rate=2500`
/// with 4 KiB blocks) keeps `rate_min=2048` as fio judges it, over the gap
/// between its I/Os; fio exits 0.
#[test]
fn rate_min_is_judged_between_completions_as_fio_does() {
    let d = scratch();
    let (r, doc) = fio_job(d.path(), "[j]\nfilename=c.dat\nsize=1m\nrw=read\nrate=2500\nratemin=2048\nruntime=6\ntime_based\n");
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    assert_eq!(doc["jobs"][0]["error"], 0);
    assert!(total_ios(&doc, 0, "read") >= 3, "{}", r.stdout);
}

/// enospc-pressure.fio's `continue_on_error=write` with
/// `ignore_error=,ENOSPC`: writes that find the file system full are
/// counted and the job goes on without failing (fio exits 0); without the
/// two options the same errors fail the job (exit 1, one job in error).
#[test]
fn ignored_errors_are_counted_and_do_not_fail_the_job() {
    if !is_root() {
        eprintln!("SKIP: mounting a small tmpfs needs root");
        return;
    }
    let d = scratch();
    let small = small_tmpfs(d.path(), "1m");
    let run = |extra: &str| {
        // A sparse 4 MiB file on 1 MiB: writes past the first MiB find no space.
        let f = std::fs::File::create(small.join("f")).unwrap();
        f.set_len(4 << 20).unwrap();
        drop(f);
        let job = format!("[w]\nfilename=small/f\nsize=4m\nbs=64k\nrw=write\n{extra}");
        std::fs::write(d.path().join("j.fio"), job).unwrap();
        let r = storbench(d.path(), &["fio", "--output-format=json", "--results-dir", "out", "j.fio"]);
        // Read without panicking: the tmpfs is unmounted before judging.
        let doc: Option<serde_json::Value> =
            std::fs::read(d.path().join("out/result.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
        let _ = std::fs::remove_dir_all(d.path().join("out"));
        (r, doc.unwrap_or_default())
    };
    let (tolerant, tdoc) = run("continue_on_error=write\nignore_error=,ENOSPC\n");
    let (strict, _) = run("");
    let (other, _) = run("continue_on_error=write\n");
    let _ = std::process::Command::new("umount").arg(&small).status();
    assert_eq!(tolerant.code, 0, "{}", tolerant.stderr);
    let errors = &tdoc["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["op"] == "write").unwrap()["errors"];
    let nospc = errors.as_object().unwrap().iter().find(|(k, _)| k.starts_with("ENOSPC")).map(|(_, n)| n.as_u64().unwrap());
    assert!(nospc.is_some_and(|n| n >= 40), "most of 64 writes found no space, counted: {errors}");
    assert_eq!(strict.code, 1, "without the options the errors fail the job: {}", strict.stderr);
    assert_eq!(other.code, 1, "ENOSPC is not among fio's default non-fatal errors (EIO, EILSEQ)");
}

/// The I/Os of a write_iolog: (action, offset, length).
fn iolog_ios(path: &Path) -> Vec<(String, u64, u64)> {
    let log = std::fs::read_to_string(path).unwrap();
    log.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && matches!(f[2], "read" | "write")).then(|| (f[2].to_string(), f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect()
}

/// disk-zone-profile.fio on a plain file: `zonemode=strided` reads
/// `zonesize` bytes of each zone, `zoneskip` apart, round the file until
/// the job's size is read (fio 3.33 issues the same offsets in the same
/// order); random I/O stays inside the zone too.
#[test]
fn strided_zones_read_each_zone_then_skip_on_plain_files() {
    let d = scratch();
    std::fs::write(d.path().join("z.dat"), vec![7u8; 16 << 20]).unwrap();
    let job = "[global]\nfilename=z.dat\nsize=16m\nbs=64k\nzonemode=strided\nzonesize=256k\nzoneskip=2m\nzonerange=512k\n\
               [seq]\nrw=read\nwrite_iolog=seq.log\n[rand]\nstonewall\nrw=randread\nwrite_iolog=rand.log\nio_size=4m\n";
    let (r, _) = fio_job(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Zones start every 2.5 MiB: 0, 2.5m, ... 15m, then 0 again.
    let zone_of = |i: usize| (i / 4 % 7) as u64 * (5 << 19);
    let seq = iolog_ios(&d.path().join("seq.log"));
    assert_eq!(seq.len(), 256, "16 MiB in 64 KiB reads");
    for (i, (_, off, _)) in seq.iter().enumerate() {
        assert_eq!(*off, zone_of(i) + (i as u64 % 4) * 65536, "read {i}");
    }
    let rand = iolog_ios(&d.path().join("rand.log"));
    assert_eq!(rand.len(), 64);
    for (i, (_, off, _)) in rand.iter().enumerate() {
        let z = zone_of(i);
        assert!((z..z + (512 << 10)).contains(off) && off % 65536 == 0, "random read {i} at {off} outside zone {z}");
    }
}

/// The 4 KiB blocks of a file.
fn blocks(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path).unwrap().chunks(4096).map(|c| c.to_vec()).collect()
}

/// dedupe-global.fio: two jobs, half their writes dedupable, repeating a
/// working set of half the size (`dedupe_mode=working_set`) that both
/// jobs share (`dedupe_global`). fio 3.33 on 2 x 16 MiB leaves 4103
/// distinct blocks of 8192, 1264 of them in both files.
#[test]
fn a_global_dedupe_working_set_is_shared_by_the_jobs_as_in_fio() {
    let d = scratch();
    let job = "[global]\nioengine=libaio\niodepth=16\nsize=16m\ndedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\n\
               blocksize=4k\nrw=write\nbuffer_compress_percentage=50\ndedupe_working_set_percentage=50\n[a]\n[b]\n";
    let (r, _) = fio_job(d.path(), job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (a, b) = (blocks(&d.path().join("a.0.0")), blocks(&d.path().join("b.0.0")));
    let (sa, sb): (std::collections::HashSet<_>, std::collections::HashSet<_>) = (a.iter().collect(), b.iter().collect());
    let combined = sa.union(&sb).count();
    let both = sa.intersection(&sb).count();
    // Half the 8192 writes unique (2048 of them the set), half repeats of the set.
    assert!((3800..4400).contains(&combined), "{combined} distinct blocks of 8192");
    assert!((1000..1600).contains(&both), "{both} blocks in both files (the shared set)");
    // Half of each block compresses away (zeros), as buffer_compress_percentage says.
    let zeros = a[0].iter().filter(|x| **x == 0).count();
    assert!((1900..2200).contains(&zeros), "{zeros} zero bytes in a 4 KiB block");
}

/// Two jobs draw from the same seeded random streams: their writes must
/// still be their own (on main two jobs' files were byte for byte alike,
/// all dedupable), as fio's are.
#[test]
fn two_jobs_write_blocks_of_their_own() {
    let d = scratch();
    let (r, _) = fio_job(d.path(), "[global]\nrw=write\nsize=4m\nbs=4k\n[a]\n[b]\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (a, b) = (blocks(&d.path().join("a.0.0")), blocks(&d.path().join("b.0.0")));
    let sa: std::collections::HashSet<_> = a.iter().collect();
    assert_eq!(sa.len(), 1024);
    assert_eq!(b.iter().filter(|x| sa.contains(x)).count(), 0, "no block of b is one of a's");
}

/// fio's `size=N%`: that share of an existing file's or device's whole size
/// (fio's HOWTO: "size=20% ... 20% of the full size of the given files or
/// devices"), checked by the bytes read; a file that does not exist has no
/// size to take a share of, and is refused without being made.
#[test]
fn size_as_a_percentage_of_the_file_or_device() {
    let d = scratch();
    let read = |target: &str, size: &str, out: &str| {
        storbench(
            d.path(),
            &[
                "run",
                "--quiet",
                "--results-dir",
                out,
                "--name",
                "a",
                "--ioengine",
                "psync",
                "--filename",
                target,
                "--rw",
                "read",
                "--bs",
                "64k",
                "--size",
                size,
            ],
        )
    };
    let file = d.path().join("f.dat");
    std::fs::write(&file, vec![1u8; 8 << 20]).unwrap();
    let r = read(file.to_str().unwrap(), "25%", "file");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("file")), 0, "read"), 32, "2 MiB of the 8 MiB file in 64 KiB reads");
    // A fio job file means the same (fio's size is a total over the files,
    // but a percentage is of each file's own size).
    let (r, doc) = fio_job(d.path(), &format!("[a]\nioengine=psync\nfilename={}\nrw=read\nbs=64k\nsize=25%\n", file.display()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(doc["jobs"][0]["read"]["io_bytes"], 2 << 20, "{}", r.stdout);

    let missing = d.path().join("missing.dat");
    let r = read(missing.to_str().unwrap(), "50%", "missing");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("size=50% is a share of an existing file or device") && !missing.exists(), "{}", r.stderr);

    let backing = d.path().join("dev.img");
    std::fs::write(&backing, vec![0u8; 16 << 20]).unwrap();
    if let Some(lo) = Loop::new(&backing, 512) {
        let r = read(&lo.dev, "50%", "dev");
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(ios(&result_json(&d.path().join("dev")), 0, "read"), 128, "8 MiB of the 16 MiB device");
    }
}
