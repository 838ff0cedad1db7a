//! `storbench efficiency`: a run against the ceiling of its devices.

mod common;
use common::*;

#[test]
fn a_run_is_judged_against_its_devices_with_replication_counted() {
    let d = scratch();
    let sim = ["--ioengine", "null", "--service_time", "100us", "--rw", "randrw", "--runtime", "2", "--quiet"];
    let base = storbench(d.path(), &[&["run", "--name", "dev", "--results-dir", "base", "--iodepth", "4"][..], &sim].concat());
    assert_eq!(base.code, 0, "{}", base.stderr);
    let cl =
        storbench(d.path(), &[&["run", "--name", "cl", "--results-dir", "cl", "--servers", "3", "--iodepth", "16"][..], &sim].concat());
    assert_eq!(cl.code, 0, "{}", cl.stderr);
    let r = storbench(d.path(), &["efficiency", "cl", "--baseline", "base", "--devices", "3", "--replicas", "3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("3 devices, 3 replicas (writes x3.00)"), "{}", r.stdout);
    let (b, c) = (run_result(&d.path().join("base")), run_result(&d.path().join("cl")));
    let iops = |r: &storbench_model::RunResult, op| r.jobs[0].op(op).unwrap().iops;
    use storbench_workload::OpKind::{Read, Write};
    // Reads land on one device, writes on three: the write ceiling is a third of the devices'.
    let read_eff = iops(&c, Read) / (3.0 * iops(&b, Read)) * 100.0;
    let write_eff = iops(&c, Write) * 3.0 / (3.0 * iops(&b, Write)) * 100.0;
    let line = |op: &str| r.stdout.lines().find(|l| l.split_whitespace().nth(1) == Some(op)).unwrap().to_string();
    let pct = |l: String| l.split_whitespace().find(|w| w.ends_with('%')).unwrap().trim_end_matches('%').parse::<f64>().unwrap();
    assert!((pct(line("read")) - read_eff).abs() < 0.1 + read_eff * 0.002, "{} vs {read_eff}", line("read"));
    assert!((pct(line("write")) - write_eff).abs() < 0.1 + write_eff * 0.002, "{} vs {write_eff}", line("write"));
    let bad = storbench(d.path(), &["efficiency", "cl", "--devices", "3"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--baseline"), "{}", bad.stderr);
}

#[test]
fn a_baseline_reads_the_device_without_changing_it_and_feeds_efficiency() {
    let d = scratch();
    let dev = d.path().join("dev.img");
    let data: Vec<u8> = (0..16u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(&dev, &data).unwrap();
    let r = storbench(d.path(), &["baseline", dev.to_str().unwrap(), "--runtime", "1", "--results-dir", "bl", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("bl"));
    let names: Vec<&str> = res.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["randread-4k", "read-1m"], "reads only without --allow-writes");
    assert!(res.jobs.iter().all(|j| j.spec.direct && j.total_ios() > 0));
    assert_eq!(res.parameters.get("baseline").map(String::as_str), Some(dev.to_str().unwrap()));
    assert!(std::fs::read(&dev).unwrap() == data, "the device is untouched");
    let e = storbench(d.path(), &["efficiency", "bl", "--baseline", "bl", "--devices", "1"]);
    assert_eq!(e.code, 0, "{}", e.stderr);
    assert!(e.stdout.lines().any(|l| l.starts_with("randread-4k") && l.contains("100.0%")), "a device against itself: {}", e.stdout);
}
