//! The memory engine's own parts: option parsing, faults, the store's
//! pages and objects. What it does as an engine is the conformance suite's
//! (crates/engine/tests/conformance.rs), as for every engine.

use super::faults::{Faults, Latency};
use super::store::{self, Mark};
use super::*;
use storbench_metrics::ErrorKind;

fn opts(pairs: &[(&str, &str)]) -> EngineOptions {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn latency_is_per_kind_of_operation_with_a_default() {
    let l = Latency::parse("1ms,read:exp:200us,stat:0").unwrap();
    let mut rng = Rng::new(1);
    assert_eq!(l.draw(OpKind::Write, &mut rng), 1_000_000);
    assert_eq!(l.draw(OpKind::Stat, &mut rng), 0);
    let mean = (0..20_000).map(|_| l.draw(OpKind::Read, &mut rng)).sum::<u64>() as f64 / 20_000.0;
    assert!((180_000.0..220_000.0).contains(&mean), "exponential mean 200us, drew {mean}");
    let u = Latency::parse("write:100us..300us").unwrap();
    assert!((0..1000).map(|_| u.draw(OpKind::Write, &mut rng)).all(|ns| (100_000..=300_000).contains(&ns)));
    assert_eq!(u.draw(OpKind::Read, &mut rng), 0);
    assert!(Latency::parse("").unwrap().is_zero());
    for bad in ["reed:1ms", "3ms..1ms", "fast", "read:exp:x"] {
        assert!(Latency::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn every_nth_operation_of_the_named_kinds_fails_with_its_kind() {
    let ops = Faults::parse_ops("read").unwrap();
    let f = Faults::new(3, 0.0, "timeout", ops, 0).unwrap();
    let mut rng = Rng::new(1);
    let failed: Vec<bool> = (0..9).map(|_| f.fails(OpKind::Read, &mut rng).is_some()).collect();
    assert_eq!(failed, [false, false, true, false, false, true, false, false, true]);
    assert_eq!(f.fails(OpKind::Write, &mut rng), None, "writes are not among fail_ops");
    assert_eq!(f.fails(OpKind::Read, &mut rng).map(|_| ()), None);
    assert_eq!(Faults::new(1, 0.0, "refused", ops, 0).unwrap().failure.kind, ErrorKind::Connection);
    assert_eq!(Faults::new(1, 0.0, "not_found", ops, 0).unwrap().failure.kind, ErrorKind::NotFound);
    let half = Faults::new(0, 0.5, "io", Faults::parse_ops("").unwrap(), 0).unwrap();
    let n = (0..10_000).filter(|_| half.fails(OpKind::Stat, &mut rng).is_some()).count();
    assert!((4_500..5_500).contains(&n), "probability 0.5 over 10000: {n}");
    assert!(Faults::parse_ops("read,bogus").is_err());
}

#[test]
fn options_are_checked() {
    assert!(MemoryFactory.configure(&opts(&[("store", "t-opts"), ("op_latency", "read:1ms"), ("fail_every", "10")])).is_ok());
    for (k, v) in [("fail_rate", "2"), ("fail_kind", "boom"), ("capacity", "0"), ("store", "a/b"), ("op_latency", "x"), ("nope", "1")] {
        let e = MemoryFactory.configure(&opts(&[(k, v)])).err().unwrap_or_else(|| panic!("{k}={v} accepted"));
        assert!(matches!(e, EngineError::BadOption { .. }), "{k}={v}: {e}");
        assert!(e.to_string().contains(k), "{k}={v}: {e}");
    }
}

#[test]
fn pages_never_written_read_as_zeros_and_are_counted() {
    let s = store::named("t-pages", Some(1 << 20));
    s.write_blocks(4096 + 100, &[7; 5000]).unwrap();
    let mut buf = vec![1; 12288];
    s.read_blocks(0, &mut buf);
    assert!(buf[..4196].iter().all(|b| *b == 0) && buf[4196..9196].iter().all(|b| *b == 7) && buf[9196..].iter().all(|b| *b == 0));
    assert_eq!(s.never_written(16384), 8192, "two of four pages written");
    s.trim_blocks(4096, 4096);
    assert_eq!(s.never_written(16384), 12288);
    assert_eq!(s.used(), 4096);
    let full = store::named("t-full", Some(8192));
    assert_eq!(full.write_blocks(0, &[1; 12288]).map_err(|f| f.kind), Err(ErrorKind::NoSpace));
}

#[test]
fn objects_keep_their_mark_and_cleanup_keeps_what_is_not_storbenchs() {
    let s = store::named("t-objects", None);
    s.put("p.1", b"hello world", Mark::Set).unwrap();
    s.put("p.2", b"theirs", Mark::Unmarked).unwrap();
    s.put("p.2", b"rewritten", Mark::Keep).unwrap();
    s.put("q.1", b"other prefix", Mark::Set).unwrap();
    let mut buf = [0; 5];
    assert_eq!(s.read("p.1", false, 6, &mut buf), Ok(5));
    assert_eq!(&buf, b"world");
    assert_eq!(s.read("p.1", true, 0, &mut buf), Ok(11), "a whole read says the object's size");
    assert_eq!(s.stat("p.9").map_err(|f| f.kind), Err(ErrorKind::NotFound));
    assert_eq!(s.list_page("p.", None, 1), (4, Some("p.1".into())));
    assert_eq!(s.list_page("p.", Some("p.1"), 1000), (4, None));
    let config = MemoryFactory.configure(&opts(&[("store", "t-objects")])).unwrap();
    let r = config.remove_objects("p.", Which::Marked, &|| false).unwrap();
    assert_eq!((r.removed, r.kept), (1, 1));
    assert_eq!(s.names(""), ["p.2", "q.1"]);
}
