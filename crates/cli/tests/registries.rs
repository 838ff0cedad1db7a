//! The names commands take for engines and formats are the registries'
//! (`storbench_engine::registry()`, `storbench_report::EXPORTERS`): the fio
//! reader, `--output-format`, `show --format` and the fio drop-in's
//! `--output-format` accept exactly what the engines and exporters declare
//! and refuse the rest with their one-line messages. Each registry is
//! iterated, so a new engine or format is judged by what it declares, and a
//! name accepted or refused by a hand-written list anywhere else fails here.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// Every engine fio 3.33 has (the `ioengine_ops` names in its engines/*.c),
/// then later and external ones the fio reader names.
#[rustfmt::skip]
const FIO_ENGINES: &[&str] = &[
    "cpuio", "dev-dax", "dfs", "e4defrag", "exec", "falloc", "filecreate", "filedelete", "filestat", "ftruncate", "gfapi",
    "gfapi_async", "http", "ime_aio", "ime_psync", "ime_psyncv", "io_uring", "io_uring_cmd", "libaio", "libcufile", "libhdfs",
    "libiscsi", "libpmem", "librpma_apm_client", "librpma_apm_server", "librpma_gpspm_client", "librpma_gpspm_server", "libzbc",
    "mmap", "mtd", "nbd", "net", "netsplice", "nfs", "null", "pmemblk", "posixaio", "psync", "pvsync", "pvsync2", "rados", "rbd",
    "rdma", "sg", "solarisaio", "splice", "sync", "vsync", "windowsaio", "xnvme",
    // Later fio releases, and engines fio loads from outside.
    "dircreate", "dirstat", "dirdelete", "libblkio", "bsg", "libhipfile", "spdk",
];

/// fio's engines the reader translates itself rather than naming one
/// engine: `http` is s3 or swift by `http_mode` (sources/fio/http.rs).
const TRANSLATED: &[&str] = &["http"];

#[derive(Debug, PartialEq)]
enum Verdict {
    /// Taken: the job is planned (or refused for something else than its engine).
    Taken,
    /// Refused with the reason.
    Refused(String),
    /// Refused as a name storbench does not know.
    Unknown,
}

/// What the fio reader makes of `ioengine=NAME` (the drop-in's
/// --parse-only plans the job, touching nothing).
fn verdict(dir: &Path, name: &str) -> Verdict {
    std::fs::write(dir.join("j.fio"), format!("[j]\nioengine={name}\nrw=read\nbs=4k\nsize=1m\nfilename=f.dat\n")).unwrap();
    let r = storbench(dir, &["fio", "--parse-only", "j.fio"]);
    if let Some(at) = r.stderr.find("'ioengine' (") {
        assert!(r.code == 1 && r.stderr.trim().lines().count() == 1, "{name}: {}", r.stderr);
        let reason = &r.stderr[at + "'ioengine' (".len()..];
        return Verdict::Refused(reason[..reason.find(')').unwrap_or(reason.len())].to_string());
    }
    match r.stderr.contains("unknown ioengine") {
        true => Verdict::Unknown,
        false => Verdict::Taken,
    }
}

/// fio's engines on this machine's fio (`fio --enghelp`), if it has one.
fn installed_fio_engines() -> Vec<String> {
    let Ok(out) = std::process::Command::new("fio").arg("--enghelp").output() else { return vec![] };
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with('\t')).map(|l| l.trim().to_string()).collect()
}

/// Issue 29: a fio job file's `ioengine=` takes exactly the fio names the
/// engines declare (and `http`, which the reader turns into s3 or swift);
/// every other engine fio has is refused with the reason, none is left to
/// "unknown ioengine". A fio name declared by an engine is one fio has.
#[test]
fn the_fio_reader_takes_exactly_the_engines_fio_names_and_refuses_the_rest_with_a_reason() {
    let d = scratch();
    let declared: BTreeSet<&str> = storbench_engine::registry().iter().flat_map(|f| f.fio_names().iter().map(|n| n.name)).collect();
    let mut probes: BTreeSet<String> = FIO_ENGINES.iter().map(|s| s.to_string()).collect();
    probes.extend(declared.iter().map(|s| s.to_string()));
    probes.extend(installed_fio_engines());
    for name in &probes {
        let v = verdict(d.path(), name);
        match declared.contains(name.as_str()) || TRANSLATED.contains(&name.as_str()) {
            true => assert_eq!(v, Verdict::Taken, "ioengine={name} is an engine's fio name"),
            false => assert!(matches!(&v, Verdict::Refused(why) if why.len() > 10), "ioengine={name}: {v:?}; refuse it with the reason"),
        }
    }
    for name in &declared {
        assert!(FIO_ENGINES.contains(name), "{name} is declared as fio's, and fio has no such engine");
    }
    // storbench's own names (s3, swift, tcp, uring...) are taken too: a job
    // file run by storbench may use its engines.
    for f in storbench_engine::registry() {
        for name in std::iter::once(f.name()).chain(f.aliases().iter().copied()) {
            if !FIO_ENGINES.contains(&name) {
                assert_eq!(verdict(d.path(), name), Verdict::Taken, "ioengine={name}");
            }
        }
    }
    assert_eq!(verdict(d.path(), "nosuch"), Verdict::Unknown);
    assert_eq!(listing(d.path()), ["j.fio"], "nothing written");
}

/// A null job's `storbench run` with `--output-format NAME`.
fn run_with(dir: &Path, name: &str) -> Run {
    let _ = std::fs::remove_dir_all(dir.join("out"));
    storbench(
        dir,
        &[
            "run",
            "--name",
            "a",
            "--ioengine",
            "null",
            "--size",
            "64k",
            "--bs",
            "4k",
            "--results-dir",
            "out",
            "--quiet",
            "--output-format",
            name,
        ],
    )
}

/// Names a format goes by in storbench: its own and its aliases.
fn names(e: &dyn storbench_report::Exporter) -> Vec<&'static str> {
    std::iter::once(e.name()).chain(e.aliases().iter().copied()).collect()
}

/// Issue 29: `run --output-format` prints exactly the formats that declare
/// a name for standard output (by any of their names, dashes or
/// underscores), and refuses the others with the list of those names;
/// `show --format` takes every format's names.
#[test]
fn output_format_and_show_take_exactly_the_exporters_names() {
    let d = scratch();
    let stdout: Vec<&str> = storbench_report::EXPORTERS.iter().filter_map(|e| e.stdout_name()).collect();
    for e in storbench_report::EXPORTERS {
        for name in names(*e) {
            for spelled in BTreeSet::from([name.to_string(), name.replace('-', "_")]) {
                let r = run_with(d.path(), &spelled);
                if e.stdout_name().is_some() {
                    assert_eq!(r.code, 0, "--output-format {spelled}: {}", r.stderr);
                    assert!(!r.stdout.trim().is_empty(), "--output-format {spelled} printed nothing");
                } else {
                    assert_eq!(r.code, 2, "--output-format {spelled}: {}", r.stderr);
                    let says = format!("'{spelled}' is not one of {}", stdout.join(", "));
                    assert!(r.stderr.contains(&says) && r.stderr.trim().lines().count() == 1, "{says}: {}", r.stderr);
                    assert!(!d.path().join("out").exists(), "--output-format {spelled} wrote results");
                }
            }
        }
    }
    let r = run_with(d.path(), "xml");
    assert!(r.code == 2 && r.stderr.contains(&format!("'xml' is not one of {}", stdout.join(", "))), "{}", r.stderr);
    assert_eq!(run_with(d.path(), "json").code, 0);
    let all: Vec<&str> = storbench_report::EXPORTERS.iter().map(|e| e.name()).collect();
    for e in storbench_report::EXPORTERS {
        for name in names(*e) {
            let r = storbench(d.path(), &["show", "out", "--format", name]);
            assert!(!r.stderr.contains("is not one of"), "show --format {name}: {}", r.stderr);
        }
    }
    let r = storbench(d.path(), &["show", "out", "--format", "xml"]);
    assert!(r.code == 2 && r.stderr.contains(&format!("'xml' is not one of {}", all.join(", "))), "{}", r.stderr);
}

/// Issue 29: the fio drop-in's `--output-format` takes exactly fio's names
/// the exporters declare (json, json+, terse and its minimal and csv,
/// normal), alone or in a comma list, and refuses storbench's own names.
#[test]
fn the_fio_drop_in_takes_exactly_the_exporters_fio_names() {
    let d = scratch();
    let fio_names: Vec<&str> = storbench_report::EXPORTERS.iter().filter_map(|e| e.fio_names().first().copied()).collect();
    let drop_in = |format: &str| {
        let arg = format!("--output-format={format}");
        storbench(d.path(), &["fio", "--name=t", "--ioengine=null", "--size=64k", "--bs=4k", "--rw=read", &arg])
    };
    let taken: Vec<&str> = storbench_report::EXPORTERS.iter().flat_map(|e| e.fio_names().iter().copied()).collect();
    for e in storbench_report::EXPORTERS {
        for name in e.fio_names() {
            let r = drop_in(name);
            assert_eq!(r.code, 0, "--output-format={name}: {}", r.stderr);
            assert!(!r.stdout.trim().is_empty(), "--output-format={name} printed nothing");
        }
        for name in names(*e).into_iter().filter(|n| !taken.contains(n)) {
            let r = drop_in(name);
            let says = format!("'{name}' is not one of {}", fio_names.join(", "));
            assert!(r.code == 1 && r.stderr.contains(&says) && r.stderr.trim().lines().count() == 1, "{says}: {}", r.stderr);
        }
    }
    assert_eq!(drop_in(&taken.join(",")).code, 0, "every fio name at once");
    assert_eq!(listing(d.path()), Vec::<String>::new(), "the drop-in keeps no results directory without --results-dir");
}
