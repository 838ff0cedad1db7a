//! A worker that reads each pass back before the next (fio's loops with
//! verify), run through a local agent on the memory engine, whose failures
//! and corruptions come where they are told to: what its `WorkerDone` says.

use super::*;
use crate::agent::{AgentLink, LinkClosed};
use std::time::Instant;
use storbench_model::protocol::{Assignment, Failure, ToAgent};
use storbench_model::Fault;
use storbench_workload::OpKind;

/// Run one memory-engine job of `opts` with `passes` passes to its end:
/// its worker's Done and the writes its interval reports counted.
fn run_job(opts: &[(&str, &str)], passes: u32) -> (WorkerDone, u64) {
    let base = [("name", "p"), ("ioengine", "memory"), ("size", "256k"), ("bs", "16k"), ("rw", "write"), ("verify", "crc32c")];
    let mut spec = storbench_workload::options::spec_from(base.iter().chain(opts).copied()).unwrap();
    spec.passes = passes;
    let plan = crate::build_plan(vec![spec]).unwrap().prepare(&|| false, &mut |_| {}).unwrap();
    let mut link = crate::local_agent(&plan);
    crate::handshake(&mut link).unwrap();
    link.send(ToAgent::Assign(Assignment::all(vec![plan.jobs[0].share.clone()]))).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut writes = 0;
    loop {
        assert!(Instant::now() < deadline, "no Done within 30 s");
        match link.recv(Duration::from_millis(200)) {
            Ok(Some(FromAgent::Ready(_))) => {
                link.send(ToAgent::Start { at_unix_ns: storbench_model::protocol::unix_now_ns(), telemetry: false }).unwrap()
            }
            Ok(Some(FromAgent::Interval(r))) => writes += r.ops.get(OpKind::Write.index()).map_or(0, |o| o.ios),
            Ok(Some(FromAgent::Done(d))) => return (d, writes),
            Ok(_) => {}
            Err(LinkClosed) => panic!("the agent hung up before its worker was done"),
        }
    }
}

/// A read-back between passes that fails is the verify stage's failure
/// (it was reported as the measured phase's), and no later pass is
/// written.
#[test]
fn a_read_back_failing_between_passes_fails_in_the_verify_stage() {
    let (done, writes) = run_job(&[("store", "passes-read-fails"), ("fail_ops", "read"), ("fail_every", "3")], 2);
    assert!(done.error.as_deref().unwrap_or_default().contains("reading back to verify"), "{:?}", done.error);
    assert_eq!(done.failure, Some(Failure { fault: Fault::Storage, stage: Some(Stage::Verify) }));
    assert_eq!(writes, 16, "the first pass's 16 writes, none of the second's");
}

/// fio stops where a pass read back wrong (do_verify sets td->error): a
/// write corrupted in pass 1 ends the job after pass 1's read-back, in the
/// verify stage, with or without verify_fatal; pass 2 is never written
/// (it was, and verify_fatal's failure came only after it).
#[test]
fn a_pass_read_back_wrong_ends_the_job_before_the_next() {
    for fatal in ["0", "1"] {
        let store = format!("passes-corrupt-{fatal}");
        let (done, writes) = run_job(&[("store", &store), ("corrupt_every", "5"), ("verify_fatal", fatal)], 2);
        let error = done.error.clone().unwrap_or_default();
        assert!(error.contains("offset 65536") && error.contains("no pass after it was written"), "verify_fatal={fatal}: {error}");
        assert_eq!(done.failure, Some(Failure { fault: Fault::Storage, stage: Some(Stage::Verify) }), "verify_fatal={fatal}");
        assert_eq!(writes, 16, "verify_fatal={fatal}: pass 2 not written");
    }
}

/// The time a pass's read-back took is kept apart from the writes'
/// (fio's write runtime is its loops' do_io alone): reads that take 20 ms
/// each make 16 of them between two passes at least 320 ms.
#[test]
fn the_time_read_back_between_passes_is_kept_apart() {
    let (done, writes) = run_job(&[("store", "passes-timed"), ("op_latency", "read:20ms")], 2);
    assert_eq!((done.error.as_deref(), writes), (None, 32));
    assert!(done.between_passes_ns >= 320_000_000, "{} ns", done.between_passes_ns);
    assert!(done.measured_end() + 320_000_000 <= done.end_ns, "{} of {} ns", done.measured_end(), done.end_ns);
}

/// A time-based job's read-back between passes stops at its runtime, as
/// fio's do_verify looks at it: reads of 100 ms make a pass's read-back of
/// 16 take 1.6 s, and a 1 s job still ends near 1 s (it ran on to 1.6 s).
#[test]
fn a_time_based_read_back_stops_at_the_runtime() {
    let opts = [("store", "passes-runtime"), ("op_latency", "read:100ms"), ("time_based", "1"), ("runtime", "1")];
    let (done, writes) = run_job(&opts, 1);
    assert_eq!(done.error, None);
    assert!(writes >= 16, "a pass written before its read-back: {writes} writes");
    assert!(done.end_ns < 1_500_000_000, "the job ended {} ms in", done.end_ns / 1_000_000);
}
