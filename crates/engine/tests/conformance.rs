//! One conformance suite for every engine in `registry()`: the test walks
//! the registry, and each engine either runs the suite (`conformance/suite.rs`)
//! against a target it can reach, or its line in [`line`] says why the
//! suite does not apply, in a way its capabilities confirm. A registry
//! entry without a line fails the test, so a new engine cannot be left out.
//!
//! Targets: files in a scratch directory (psync, io_uring, libaio), memory
//! and null in-process, nbdkit's memory plugin (started here) for nbd, and
//! the test servers for rbd, rados, s3 and swift (`source
//! /tmp/storbench-ceph/env` and `/tmp/storbench-swift/env`; without them
//! those engines are skipped with the reason printed, and under CI they fail).

#[path = "conformance/suite.rs"]
mod suite;
#[path = "conformance/targets.rs"]
mod targets;

use storbench_engine::*;
use storbench_workload::OpKind;
use targets::Target;

/// How the suite meets one engine.
enum Line {
    /// It runs the suite on the target this makes (`None`: not reachable
    /// here, and why was printed).
    Runs(fn(&dyn EngineFactory) -> Option<Target>),
    /// The suite does not apply, for this reason, which `holds` checks
    /// against what the engine declares.
    NotApplicable { why: &'static str, holds: fn(&dyn EngineFactory) -> bool },
}

/// The line of every engine the registry has.
fn line(name: &str) -> Option<Line> {
    Some(match name {
        "psync" | "io_uring" | "libaio" => Line::Runs(targets::file),
        "null" | "memory" => Line::Runs(targets::in_process),
        "nbd" => Line::Runs(targets::nbd),
        "rbd" => Line::Runs(targets::rbd),
        "rados" => Line::Runs(targets::rados),
        "s3" => Line::Runs(targets::s3),
        "swift" => Line::Runs(targets::swift),
        "falloc" => Line::NotApplicable {
            why: "fallocate is its operation: a write allocates and a read preallocates, no bytes move to read back (fio_engines.rs runs falloc.fio against fio)",
            holds: |f| f.capabilities().needs_files && !f.capabilities().queued && f.options().is_empty(),
        },
        "cpuio" | "exec" => Line::NotApplicable {
            why: "a CPU burner or a program carries out no operation at all",
            holds: |f| !f.capabilities().blocks && !f.capabilities().objects && !OpKind::ALL.iter().any(|o| f.supports(*o)),
        },
        "net" => Line::NotApplicable {
            why: "a byte stream to another job or machine: what it sends is the other end's, not kept to read back (fio_net.rs runs it against itself and fio)",
            holds: |f| f.streams() && !f.capabilities().objects,
        },
        "filecreate" | "filestat" | "filedelete" | "ftruncate" => Line::NotApplicable {
            why: "one metadata call per file is its operation, not bytes at offsets (fio_meta tests it against fio)",
            holds: |f| f.file_ops().is_some(),
        },
        "tcp" => Line::NotApplicable {
            why: "the network to a storbench agent: it keeps nothing it sends, and needs an agent's token (fleet.rs and baseline --network run it)",
            holds: |f| f.streams() && f.options().iter().any(|o| o.name == "fleet_dir") && !f.capabilities().objects,
        },
        _ => return None,
    })
}

/// Every engine, whatever its line, types a bad option as one.
fn refuses_unknown_options(f: &dyn EngineFactory) {
    let options: EngineOptions = [("no_such_option".to_string(), "1".to_string())].into();
    match f.configure(&options) {
        Err(e @ EngineError::BadOption { .. }) => assert!(e.to_string().contains("no_such_option"), "{}: {e}", f.name()),
        Err(e) => panic!("{}: an unknown option is not a BadOption: {e}", f.name()),
        Ok(_) => panic!("{}: an unknown option was accepted", f.name()),
    }
}

/// The suite on one engine's target.
fn run_suite(f: &dyn EngineFactory, t: &Target) {
    let caps = f.capabilities();
    let keeps = caps.does_io;
    let config = f.configure(&t.options).unwrap_or_else(|e| panic!("{}: configuring: {e}", f.name()));
    if caps.blocks {
        let b = t.block_target(f, config.as_ref());
        let mut h = suite::Harness::open(f, config.as_ref(), &b.fds, None);
        suite::blocks(f, &mut h, b.size, keeps);
        drop(h);
        t.finish_blocks(f, config.as_ref(), b);
    }
    if caps.objects {
        suite::objects(f, config.as_ref(), &t.prefix(f), keeps);
    }
}

#[test]
fn every_registered_engine_meets_the_suite() {
    let mut missing = Vec::new();
    for f in registry() {
        refuses_unknown_options(*f);
        match line(f.name()) {
            None => missing.push(f.name()),
            Some(Line::NotApplicable { why, holds }) => {
                assert!(holds(*f), "{}: its line says the suite does not apply ({why}), but its capabilities no longer say so", f.name());
                eprintln!("{}: does not apply: {why}", f.name());
            }
            Some(Line::Runs(make)) => match make(*f) {
                Some(t) => {
                    run_suite(*f, &t);
                    eprintln!("{}: conforms", f.name());
                }
                None => eprintln!("{}: SKIPPED (said why above)", f.name()),
            },
        }
    }
    assert!(missing.is_empty(), "engines without a line in the conformance suite's table (tests/conformance.rs `line`): {missing:?}");
}
