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
    let (b, c) = (run_result(&d.path().join("base")), run_result(&d.path().join("cl")));
    let iops = |r: &storbench_model::RunResult, op| r.jobs[0].op(op).unwrap().iops;
    use storbench_workload::OpKind::{Read, Write};
    // The simulated device's figures, as a data sheet would give them (a
    // run that is not `storbench baseline` is refused as a baseline).
    let (dev_read, dev_write) = (format!("{}", iops(&b, Read)), format!("{}", iops(&b, Write)));
    let r = storbench(
        d.path(),
        &["efficiency", "cl", "--device-read-iops", &dev_read, "--device-write-iops", &dev_write, "--devices", "3", "--replicas", "3"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("3 devices, 3 replicas (writes x3.00)"), "{}", r.stdout);
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

/// A store's run as the devices' ceiling makes every figure nonsense: only
/// a `storbench baseline` run is one, and anything else is named.
#[test]
fn a_baseline_is_a_baseline_run_and_anything_else_is_refused_saying_what_it_is() {
    let d = scratch();
    let objects = ["run", "--name", "obj", "--ioengine", "null", "--objects", "100", "--rw", "randrw", "--runtime", "1", "--quiet"];
    assert_eq!(storbench(d.path(), &[&objects[..], &["--results-dir", "obj"]].concat()).code, 0);
    let block = ["run", "--name", "blk", "--ioengine", "null", "--rw", "randrw", "--size", "1m", "--runtime", "1", "--quiet"];
    assert_eq!(storbench(d.path(), &[&block[..], &["--results-dir", "blk"]].concat()).code, 0);
    for (baseline, what) in [("obj", "a run of 1 object job(s) on null"), ("blk", "a run of 1 block job(s) on null")] {
        let r = storbench(d.path(), &["efficiency", "blk", "--devices", "3", "--baseline", baseline]);
        assert_eq!(r.code, 2, "{}", r.stdout);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(&format!("--baseline {baseline}: it is not a `storbench baseline` run but {what}")), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "nothing judged: {}", r.stdout);
    }
    // A directory of several runs is not one baseline either.
    std::fs::create_dir(d.path().join("two")).unwrap();
    for n in ["a", "b"] {
        std::fs::rename(d.path().join(if n == "a" { "obj" } else { "blk" }), d.path().join("two").join(n)).unwrap();
    }
    let r = storbench(d.path(), &["efficiency", "two/b", "--devices", "3", "--baseline", "two"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("it holds 2 runs, not one baseline"), "{}", r.stderr);
}

/// NaN, infinities, zero, negative and absurd device figures are refused
/// by flag: they printed "NaNM" and "infM" ceilings.
#[test]
fn nonsense_device_figures_are_refused_by_flag() {
    let d = scratch();
    let run = ["run", "--name", "blk", "--ioengine", "null", "--rw", "randrw", "--size", "1m", "--runtime", "1", "--quiet"];
    assert_eq!(storbench(d.path(), &[&run[..], &["--results-dir", "blk"]].concat()).code, 0);
    for flag in ["--device-read-iops", "--device-write-iops", "--device-read-mibs", "--device-write-mibs"] {
        for v in ["nan", "NaN", "inf", "-inf", "1e308", "0", "-1"] {
            let r = storbench(d.path(), &["efficiency", "blk", "--devices", "3", &format!("{flag}={v}")]);
            assert_eq!(r.code, 2, "{flag}={v}: {}", r.stdout);
            assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
            assert!(r.stderr.contains(flag) && r.stderr.contains(&format!("'{v}'")), "{flag}={v}: {}", r.stderr);
            assert!(r.stdout.is_empty());
        }
    }
}

/// A sweep is judged point by point, each point named by its directory (it
/// was judged as its last point, unnamed); so is an SLO search's probes.
#[test]
fn a_sweep_is_judged_point_by_point_each_named() {
    let d = scratch();
    let sim = ["--ioengine", "null", "--service_time", "100us", "--rw", "randread", "--runtime", "1", "--quiet"];
    let sweep = storbench(d.path(), &[&["sweep", "--name", "s", "--results-dir", "sw", "--sweep", "iodepth=1,4"][..], &sim].concat());
    assert_eq!(sweep.code, 0, "{}", sweep.stderr);
    let r = storbench(d.path(), &["efficiency", "sw", "--devices", "1", "--device-read-iops", "10000"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The ceiling's line, the header, then a row per point.
    let rows: Vec<&str> = r.stdout.lines().skip(2).collect();
    assert_eq!(rows.len(), 2, "{}", r.stdout);
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("point"), "{}", r.stdout);
    let set = storbench_model::RunSet::load(&d.path().join("sw")).unwrap();
    for (row, run) in rows.iter().zip(&set.runs) {
        let dir = run.dir.as_ref().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        assert!(row.starts_with(&dir), "{row} names {dir}");
        // Each point against its own figures: one device of 10,000 IOPS.
        let iops = run.result.jobs[0].op(storbench_workload::OpKind::Read).unwrap().iops;
        let pct = row.split_whitespace().find(|w| w.ends_with('%')).unwrap().trim_end_matches('%').parse::<f64>().unwrap();
        assert!((pct - iops / 100.0).abs() < 0.1 + pct * 0.002, "{row}: {iops} IOPS");
    }
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

/// `baseline --network` against a real agent in a network namespace whose
/// link is shaped (tbf: 200 Mbit/s towards the agent, 100 Mbit/s back):
/// the figures are the link's, and efficiency takes them as the ceiling.
#[test]
fn a_network_baseline_measures_a_shaped_link_both_ways_and_bounds_efficiency() {
    use common::fleet::{can_use_namespaces, fleet_dir, ip, Namespaces};
    if !can_use_namespaces() {
        return;
    }
    let d = scratch();
    let fleet = fleet_dir(d.path(), "fleet");
    let ns = Namespaces::new("sbnb", 41, 1);
    let tc = |args: &[&str]| assert!(std::process::Command::new("tc").args(args).status().unwrap().success(), "tc {args:?}");
    tc(&["qdisc", "add", "dev", "sbnbv1", "root", "tbf", "rate", "200mbit", "burst", "64kb", "latency", "50ms"]);
    ip(&[
        "netns",
        "exec",
        &ns.name(1),
        "tc",
        "qdisc",
        "add",
        "dev",
        "eth0",
        "root",
        "tbf",
        "rate",
        "100mbit",
        "burst",
        "64kb",
        "latency",
        "50ms",
    ]);
    let _agents = ns.agents(&fleet, d.path(), |_| Vec::new());
    let target = format!("{}:7451", ns.address(1));
    let r = storbench(
        d.path(),
        &["baseline", "--network", &target, "--fleet-dir", fleet.to_str().unwrap(), "--runtime", "3", "--results-dir", "nb", "--quiet"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = run_result(&d.path().join("nb"));
    let mib = |job: &str, op: storbench_workload::OpKind| {
        res.jobs.iter().find(|j| j.name == job).and_then(|j| j.op(op)).map(|o| o.bytes_per_sec / 1_048_576.0).unwrap()
    };
    use storbench_workload::OpKind::{Read, Write};
    let (send, receive) = (mib("net-send", Write), mib("net-receive", Read));
    // 200 Mbit/s = 23.8 MiB/s, 100 Mbit/s = 11.9 MiB/s (TCP and framing take a little).
    assert!((14.0..26.0).contains(&send), "send {send:.1} MiB/s over a 200 Mbit/s link");
    assert!((7.0..13.0).contains(&receive), "receive {receive:.1} MiB/s over a 100 Mbit/s link");
    let rtt = res.jobs.iter().find(|j| j.name == "net-rtt").and_then(|j| j.op(Read)).unwrap();
    assert!(rtt.ios > 100 && rtt.latency.at(50.0) > 0, "round trips measured");
    // The network jobs carry the token's proof, never the token.
    let token = std::fs::read_to_string(fleet.join("token")).unwrap();
    let text = std::fs::read_to_string(d.path().join("nb/result.json")).unwrap();
    assert!(!text.contains(token.trim()));
    let e = storbench(d.path(), &["efficiency", "nb", "--baseline", "nb", "--devices", "1"]);
    assert_eq!(e.code, 0, "{}", e.stderr);
    assert!(e.stdout.contains("client network:"), "{}", e.stdout);
    let row = e.stdout.lines().find(|l| l.starts_with("net-receive")).unwrap();
    assert!(row.contains("100.0%") && row.ends_with("network"), "a link against itself: {row}");
    // A run sending over the same link with the baseline named: its NIC is
    // the limit (a veth has no speed of its own to judge it by), out only.
    let job = format!(
        "[[job]]\nname = \"s\"\nioengine = \"tcp\"\nhostname = \"{}\"\nport = 7451\ntcp_mode = \"send\"\nfleet_dir = \"{}\"\n\
         rw = \"write\"\nbs = \"1m\"\nnumjobs = 4\nruntime = \"4s\"\ntime_based = 1\n",
        ns.address(1),
        fleet.display()
    );
    std::fs::write(d.path().join("send.toml"), job).unwrap();
    let send = ["run", "send.toml", "--network-baseline", "nb", "--results-dir", "sent", "--quiet"];
    let r = storbench(d.path(), &send);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = run_result(&d.path().join("sent"));
    let at_baseline: Vec<&storbench_model::Warning> =
        sent.warnings.iter().filter(|w| matches!(w, storbench_model::Warning::NetworkAtBaseline { .. })).collect();
    assert!(
        matches!(&at_baseline[..], [storbench_model::Warning::NetworkAtBaseline { nic, direction, seconds, .. }] if nic == "sbnbv1" && direction == "out" && *seconds >= 2),
        "{:?}",
        sent.warnings
    );
    assert_valid(&result_json(&d.path().join("sent")));
    let bad = storbench(d.path(), &["run", "--name", "x", "--ioengine", "null", "--runtime", "1", "--network-baseline", "sent", "--quiet"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--network-baseline sent: it is not a `storbench baseline` run"), "{}", bad.stderr);
    // A wrong token is refused before anything runs, by name.
    let other = fleet_dir(d.path(), "other");
    let bad = storbench(d.path(), &["baseline", "--network", &target, "--fleet-dir", other.to_str().unwrap(), "--runtime", "1", "--quiet"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("refused the fleet token"), "{}", bad.stderr);
}

/// A preallocated, never-written file answers reads with zeros from no
/// medium (858k 4 KiB reads a second on a disk that does 78k): `baseline`
/// refuses it by name, writing nothing, and a run reading it says so.
#[test]
fn never_written_files_are_refused_as_a_baseline_and_flagged_in_any_run() {
    let d = scratch();
    let f = d.path().join("pre.img");
    let made = std::process::Command::new("fallocate").args(["-l", "64M"]).arg(&f).status();
    if !made.is_ok_and(|s| s.success()) {
        return eprintln!("SKIP: fallocate cannot preallocate here");
    }
    let b = storbench(d.path(), &["baseline", "pre.img", "--runtime", "1s", "--results-dir", "bl", "--quiet"]);
    assert_eq!(b.code, 2, "{}", b.stderr);
    assert!(b.stderr.contains("never written") && b.stderr.contains("pre.img"), "{}", b.stderr);
    assert!(!d.path().join("bl").exists(), "nothing written before refusing");
    let read = |out: &str, file: &str| {
        let args = [
            "run",
            "--name",
            "r",
            "--filename",
            file,
            "--size",
            "64m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--direct",
            "1",
            "--runtime",
            "1",
            "--time_based",
            "1",
            "--results-dir",
            out,
            "--quiet",
        ];
        let r = storbench(d.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc = result_json(&d.path().join(out));
        doc["jobs"][0]["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert!(read("pre", "pre.img").iter().any(|k| k == "never_written_reads"), "reads of a preallocated file are flagged");
    assert!(!read("new", "new.img").iter().any(|k| k == "never_written_reads"), "a file storbench laid out was written in full");
}

/// A baseline flagged for reads that never reached the medium (an older
/// storbench's, or one whose disks counted too few reads) is no ceiling:
/// `efficiency` refuses it by name instead of dividing by it.
#[test]
fn efficiency_refuses_a_baseline_whose_reads_never_reached_the_medium() {
    let d = scratch();
    let w = storbench(
        d.path(),
        &[
            "run",
            "--name",
            "w",
            "--filename",
            "disk.img",
            "--size",
            "16m",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--results-dir",
            "run",
            "--quiet",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    let b = storbench(d.path(), &["baseline", "disk.img", "--runtime", "1s", "--results-dir", "bl", "--quiet"]);
    assert_eq!(b.code, 0, "a file written in full is measured: {}", b.stderr);
    let path = d.path().join("bl/result.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let flag = serde_json::json!({"kind": "reads_not_on_disk", "issued": 100000, "disk_reads": 12});
    doc["warnings"].as_array_mut().unwrap().push(flag);
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let e = storbench(d.path(), &["efficiency", "run", "--baseline", "bl", "--devices", "1"]);
    assert_eq!(e.code, 2, "{}", e.stderr);
    assert!(e.stderr.contains("did not reach the medium"), "{}", e.stderr);
}
