//! The same fio job file through fio and through `storbench run --fio` must do
//! the same work: same operations, same bytes, same mix. (Speed is compared in
//! bench/, not here.) Needs Debian's fio; scripts/test.sh installs it.

mod common;
use common::*;
use std::process::Command;

fn fio_available() -> bool {
    if have("fio") {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "fio is missing in CI: scripts/test.sh must install it");
    eprintln!("SKIP: fio is not installed (scripts/test.sh installs it)");
    false
}

const JOB: &str = "
[global]
ioengine=psync
size=8m
filename=shared.dat
[seq-read]
rw=read
bs=4k
[mixed]
stonewall
rw=randrw
rwmixread=70
bssplit=4k/50:16k/50
io_size=32m
";

#[test]
fn fio_and_storbench_do_the_same_operations_for_the_same_job_file() {
    if !fio_available() {
        return;
    }
    let d = scratch();
    std::fs::write(d.path().join("job.fio"), JOB).unwrap();
    let fio = Command::new("fio").args(["--output-format=json", "job.fio"]).current_dir(d.path()).output().unwrap();
    assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
    let fio: serde_json::Value = serde_json::from_slice(&fio.stdout).expect("fio JSON");
    std::fs::remove_file(d.path().join("shared.dat")).unwrap();

    let sb = storbench(d.path(), &["run", "--fio", "job.fio", "--output-format", "fio-json", "--results-dir", "out"]);
    assert_eq!(sb.code, 0, "{}", sb.stderr);
    let sb: serde_json::Value = serde_json::from_str(&sb.stdout).expect("storbench fio-json");

    let get = |doc: &serde_json::Value, job: usize, dir: &str, key: &str| doc["jobs"][job][dir][key].as_u64().unwrap();
    // Sequential read of the whole 8 MiB: exactly 2048 reads in both.
    assert_eq!(get(&fio, 0, "read", "total_ios"), 2048);
    assert_eq!(get(&sb, 0, "read", "total_ios"), 2048);
    assert_eq!(get(&sb, 0, "read", "io_bytes"), get(&fio, 0, "read", "io_bytes"));
    // 32 MiB of mixed I/O: byte totals agree within the last block, mix within 2 points.
    let total = |doc: &serde_json::Value| get(doc, 1, "read", "io_bytes") + get(doc, 1, "write", "io_bytes");
    let (f, s) = (total(&fio), total(&sb));
    assert!(f.abs_diff(s) <= 16384 && s <= 32 << 20, "bytes fio {f} storbench {s}");
    let share = |doc: &serde_json::Value| {
        let r = get(doc, 1, "read", "total_ios") as f64;
        r / (r + get(doc, 1, "write", "total_ios") as f64)
    };
    assert!((share(&fio) - share(&sb)).abs() < 0.02, "read share fio {} storbench {}", share(&fio), share(&sb));
}
