use super::*;
use storbench_engine::EngineError;
use storbench_model::Fault;

fn spec(opts: &[(&str, &str)]) -> JobSpec {
    storbench_workload::options::spec_from(opts.iter().copied()).unwrap()
}

/// An engine's refusal stays the engine's error (its source, its
/// fault), with the words it had when it was a string.
#[test]
fn an_engine_error_keeps_its_type_and_says_whose_fault_it_is() {
    let e = build_plan(vec![spec(&[("name", "a"), ("ioengine", "memory"), ("capacity", "0")])]).err().expect("refused");
    assert_eq!(e.to_string(), "job 'a': memory: option 'capacity': a store of 0 bytes holds nothing; give a size (e.g. 256m)");
    assert_eq!((e.job(), e.fault()), ("a", Fault::Input));
    let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<EngineError>());
    assert!(matches!(source, Some(EngineError::BadOption { option, .. }) if option == "capacity"), "{source:?}");
    let mine = build_plan(vec![spec(&[("name", "a"), ("ioengine", "null"), ("bs", "3g")])]).err().expect("refused");
    assert!(matches!(mine, PlanError::Input { .. }) && std::error::Error::source(&mine).is_none(), "{mine:?}");
}

#[test]
fn snia_mode_runs_at_most_25_rounds_unless_the_job_says_how_long() {
    let plan = build_plan(vec![spec(&[("name", "a"), ("ioengine", "null"), ("ss", "snia:2s")])]).unwrap();
    assert_eq!(plan.jobs[0].end_ns, Some(50_000_000_000));
    assert!(plan.jobs[0].spec.time_based);
    let given = build_plan(vec![spec(&[("name", "a"), ("ioengine", "null"), ("ss", "snia:2s"), ("runtime", "7")])]).unwrap();
    assert_eq!(given.jobs[0].end_ns, Some(7_000_000_000));
}

#[test]
fn small_key_spaces_on_unordered_stores_are_warned_about() {
    let base = [
        ("ioengine", "s3"),
        ("endpoint", "http://127.0.0.1:1"),
        ("access_key", "a"),
        ("secret_key", "s"),
        ("object_size", "4k"),
        ("rw", "write"),
        ("iodepth", "8"),
        ("number_ios", "10"),
    ];
    let small = spec(&[&base[..], &[("name", "small"), ("objects", "20")]].concat());
    let large = spec(&[&base[..], &[("name", "large"), ("objects", "5000")]].concat());
    let rados = spec(&[
        ("name", "r"),
        ("ioengine", "rados"),
        ("pool", "p"),
        ("objects", "20"),
        ("iodepth", "8"),
        ("rw", "write"),
        ("number_ios", "1"),
    ]);
    let plan = build_plan(vec![small, large, rados]).unwrap();
    let warned = |i: usize| plan.jobs[i].warnings.iter().any(|w| w.message().contains("objects per worker"));
    assert!(warned(0), "20 objects for 8 in flight on s3");
    assert!(!warned(1), "5000 objects are plenty");
    assert!(!warned(2), "RADOS keeps the order of operations on one object");
}

#[test]
fn byte_rates_become_arrivals_by_mean_size() {
    let s = spec(&[("rw", "randrw"), ("rwmixread", "75"), ("bs", "4k,12k")]);
    // mean = 0.75 * 4 KiB + 0.25 * 12 KiB = 6 KiB
    let ops = ops_per_sec(&s, RateLimit::Bytes(6144.0 * 1000.0));
    assert!((ops - 1000.0).abs() < 1e-6, "{ops}");
}

#[test]
fn stonewall_starts_groups_and_sync_engines_cap_queue_depth() {
    let a = spec(&[("name", "a"), ("ioengine", "null"), ("size", "1m")]);
    let b = spec(&[("name", "b"), ("ioengine", "null"), ("size", "1m")]);
    let c = spec(&[("name", "c"), ("ioengine", "psync"), ("size", "1m"), ("iodepth", "8"), ("stonewall", "1")]);
    let plan = build_plan(vec![a, b, c]).unwrap();
    assert_eq!(plan.groups, vec![vec![0, 1], vec![2]]);
    assert_eq!(plan.jobs[2].queue_depth, 1);
    assert!(matches!(plan.jobs[2].warnings[0], Warning::QueueDepthCapped { asked: 8, .. }));
}

#[test]
fn a_verifying_read_judges_by_header_only_when_nothing_of_the_run_wrote_its_target_before_or_beside_it() {
    let job = |name: &str, rw: &str, more: &[(&'static str, &'static str)]| {
        let mut o = vec![("name", name), ("filename", "hdr.dat"), ("size", "1m"), ("rw", rw), ("stonewall", "1")];
        o.extend_from_slice(more);
        spec(&o)
    };
    let by_header = |specs: Vec<JobSpec>| -> Vec<bool> {
        build_plan(specs).unwrap().jobs.iter().map(|j| j.spec.verify.as_ref().is_some_and(|v| v.by_header)).collect()
    };
    let verified = [("verify", "crc32c")];
    assert_eq!(by_header(vec![job("r", "read", &verified)]), [true]);
    assert_eq!(by_header(vec![job("w", "write", &verified)]), [false], "it writes itself");
    assert_eq!(by_header(vec![job("w", "write", &[]), job("r", "read", &verified)]), [false, false], "an earlier unverified write");
    assert_eq!(by_header(vec![job("r", "read", &verified), job("w", "write", &verified)]), [true, false], "a later write");
    assert_eq!(by_header(vec![job("r", "read", &[("verify", "crc32c"), ("verify_state", "/tmp")])]), [false], "a table kept");
    let only = [("verify", "crc32c"), ("verify_only", "1")];
    assert_eq!(by_header(vec![job("v", "write", &only)]), [true], "verify_only writes nothing: its headers judge it");
}

#[test]
fn a_fleets_link_refuses_what_its_agents_cannot_do_together_and_a_local_one_takes_it() {
    let verified = spec(&[("name", "v"), ("filename", "f.dat"), ("size", "1m"), ("rw", "write"), ("verify", "crc32c")]);
    let plain = spec(&[("name", "p"), ("filename", "f.dat"), ("size", "1m"), ("rw", "write")]);
    let refused = check_link(&[plain.clone(), verified.clone()], LinkCaps::FLEET).unwrap_err();
    assert_eq!(refused.fault(), storbench_model::Fault::Input);
    assert!(refused.to_string().starts_with("job 'v': verify is not built for fleet runs"), "{refused}");
    assert!(check_link(std::slice::from_ref(&plain), LinkCaps::FLEET).is_ok());
    assert!(check_link(&[plain, verified], LinkCaps::LOCAL).is_ok());
}
