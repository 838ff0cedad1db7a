//! The names commands take for engines are the registry's
//! (`storbench_engine::registry()`): the fio reader accepts exactly what the
//! engines declare and refuses the rest with a reason. The registry is
//! iterated, so a new engine is judged by what it declares, and a name
//! accepted or refused by a hand-written list anywhere else fails here.

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
