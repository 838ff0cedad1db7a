//! The engine against a scripted peer on a socketpair (replies in every
//! shape, cut into pieces), and against real servers (nbdkit, qemu-nbd)
//! for what the command line cannot reach: trims, flushes and per-request
//! errors. Tests that need a server skip, saying why, when it is missing.

use super::*;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};

/// Slot buffers for a test worker.
struct Slots {
    mem: Vec<u8>,
    slot_len: usize,
}

impl Slots {
    fn new(slots: usize, slot_len: usize) -> Slots {
        Slots { mem: vec![0xee; slots * slot_len], slot_len }
    }
    fn buffers(&mut self) -> Buffers {
        Buffers { base: self.mem.as_mut_ptr(), slot_len: self.slot_len, slots: self.mem.len() / self.slot_len }
    }
    fn slot(&mut self, i: usize) -> &mut [u8] {
        &mut self.mem[i * self.slot_len..(i + 1) * self.slot_len]
    }
}

fn simple(error: u32, cookie: u64) -> Vec<u8> {
    [&proto::SIMPLE_REPLY_MAGIC.to_be_bytes()[..], &error.to_be_bytes(), &cookie.to_be_bytes()].concat()
}

fn chunk(flags: u16, kind: u16, cookie: u64, payload: &[u8]) -> Vec<u8> {
    [
        &proto::STRUCTURED_REPLY_MAGIC.to_be_bytes()[..],
        &flags.to_be_bytes(),
        &kind.to_be_bytes(),
        &cookie.to_be_bytes(),
        &(payload.len() as u32).to_be_bytes(),
        payload,
    ]
    .concat()
}

/// A connection over a socketpair; the other end plays the server.
fn pair(structured: bool, slots: &mut Slots) -> (Conn, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    (Conn::new(a.into(), structured, slots.buffers(), 4), b)
}

/// Feed `bytes` to the connection `piece` bytes at a time, collecting completions.
fn feed(conn: &mut Conn, server: &mut UnixStream, bytes: &[u8], piece: usize) -> Result<Vec<Completion>, String> {
    let mut out = Vec::new();
    for p in bytes.chunks(piece) {
        server.write_all(p).unwrap();
        conn.receive(&mut out)?;
    }
    Ok(out)
}

#[test]
fn simple_replies_in_any_pieces_land_in_their_slots() {
    for piece in [1, 3, 7, 16, 4096, 1 << 20] {
        let mut s = Slots::new(4, 4096);
        let (mut c, mut server) = pair(false, &mut s);
        let mut out = Vec::new();
        c.queue(proto::CMD_READ, 2, 8192, 4096, &mut out).unwrap();
        c.queue(proto::CMD_WRITE, 1, 0, 512, &mut out).unwrap();
        c.queue(proto::CMD_FLUSH, 3, 0, 0, &mut out).unwrap();
        c.send(&mut out);
        assert!(out.is_empty());
        let mut sent = vec![0u8; 3 * proto::REQUEST_LEN + 512];
        server.read_exact(&mut sent).unwrap();
        assert_eq!(&sent[..proto::REQUEST_LEN], &proto::request(proto::CMD_READ, 0, 2, 8192, 4096));
        // Out of order: the flush, the write, then the read with its data.
        let data: Vec<u8> = (0..4096).map(|i| (i % 251) as u8).collect();
        let replies = [simple(0, 3), simple(0, 1), simple(0, 2), data.clone()].concat();
        let done = feed(&mut c, &mut server, &replies, piece).unwrap();
        let got: Vec<(u32, Result<u64, IoFailure>)> = done.iter().map(|d| (d.slot, d.result)).collect();
        assert_eq!(got, [(3, Ok(0)), (1, Ok(512)), (2, Ok(4096))], "piece {piece}");
        assert_eq!(s.slot(2), &data[..], "piece {piece}");
        assert_eq!(c.in_flight(), 0);
    }
}

#[test]
fn structured_reads_fill_data_and_holes_and_report_errors() {
    for piece in [1, 5, 20, 1 << 16] {
        let mut s = Slots::new(4, 4096);
        let (mut c, mut server) = pair(true, &mut s);
        let mut out = Vec::new();
        c.queue(proto::CMD_READ, 0, 4096, 4096, &mut out).unwrap();
        c.queue(proto::CMD_READ, 1, 0, 1024, &mut out).unwrap();
        c.queue(proto::CMD_WRITE, 2, 0, 512, &mut out).unwrap();
        c.send(&mut out);
        let data = [&(4096u64 + 1024).to_be_bytes()[..], &[7u8; 3072]].concat();
        let hole = [&4096u64.to_be_bytes()[..], &1024u32.to_be_bytes()].concat();
        let err = [&5u32.to_be_bytes()[..], &4u16.to_be_bytes(), b"oops"].concat();
        let err_off = [&28u32.to_be_bytes()[..], &0u16.to_be_bytes(), &0u64.to_be_bytes()].concat();
        let replies = [
            chunk(0, proto::REPLY_TYPE_OFFSET_DATA, 0, &data),
            chunk(0, proto::REPLY_TYPE_ERROR, 1, &err),
            chunk(0, proto::REPLY_TYPE_OFFSET_HOLE, 0, &hole),
            chunk(proto::REPLY_FLAG_DONE, proto::REPLY_TYPE_NONE, 1, &[]),
            chunk(proto::REPLY_FLAG_DONE, proto::REPLY_TYPE_NONE, 0, &[]),
            chunk(proto::REPLY_FLAG_DONE, proto::REPLY_TYPE_ERROR_OFFSET, 2, &err_off),
        ]
        .concat();
        let done = feed(&mut c, &mut server, &replies, piece).unwrap();
        let got: Vec<(u32, Result<u64, IoFailure>)> = done.iter().map(|d| (d.slot, d.result)).collect();
        assert_eq!(got, [(1, Err(IoFailure::errno(libc::EIO))), (0, Ok(4096)), (2, Err(IoFailure::errno(libc::ENOSPC)))]);
        assert!(s.slot(0)[..1024].iter().all(|b| *b == 0), "the hole reads as zeros");
        assert!(s.slot(0)[1024..].iter().all(|b| *b == 7));
    }
}

#[test]
fn malformed_replies_are_errors_that_say_what_was_wrong() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        ([&0xdead_beefu32.to_be_bytes()[..], &[0u8; 12]].concat(), "bad magic"),
        (simple(0, 9), "not in flight"),
        (chunk(proto::REPLY_FLAG_DONE, proto::REPLY_TYPE_NONE, 0, &[]), "read of 4096 bytes answered with 0"),
        (chunk(0, proto::REPLY_TYPE_OFFSET_DATA, 0, &[&0u64.to_be_bytes()[..], &[1u8; 8]].concat()), "outside the request"),
        (chunk(0, proto::REPLY_TYPE_OFFSET_HOLE, 0, &[0u8; 11]), "OFFSET_HOLE chunk of 11"),
        (chunk(0, 77, 0, &[]), "unknown type 77"),
        (chunk(0, proto::REPLY_TYPE_OFFSET_DATA, 0, &[0u8; 8]), "at least 9"),
    ];
    for (bytes, why) in cases {
        let mut s = Slots::new(4, 4096);
        let (mut c, mut server) = pair(true, &mut s);
        let mut out = Vec::new();
        c.queue(proto::CMD_READ, 0, 4096, 4096, &mut out).unwrap();
        c.send(&mut out);
        let e = feed(&mut c, &mut server, &bytes, 1 << 16).unwrap_err();
        assert!(e.contains(why), "wanted '{why}': {e}");
        // Abandoning fails what was in flight, and later requests at once.
        assert_eq!(c.abandon(&mut out), 1);
        c.queue(proto::CMD_READ, 1, 0, 4096, &mut out).unwrap();
        assert_eq!(out.iter().map(|d| d.result).collect::<Vec<_>>(), [Err(IoFailure::errno(libc::EPROTO)); 2]);
    }
    // A structured reply that was not negotiated.
    let mut s = Slots::new(4, 4096);
    let (mut c, mut server) = pair(false, &mut s);
    c.queue(proto::CMD_WRITE, 0, 0, 16, &mut Vec::new()).unwrap();
    let e = feed(&mut c, &mut server, &chunk(1, 0, 0, &[]), 64).unwrap_err();
    assert!(e.contains("not negotiated"), "{e}");
}

#[test]
fn a_server_that_hangs_up_fails_what_is_in_flight() {
    let mut s = Slots::new(4, 4096);
    let (mut c, server) = pair(false, &mut s);
    let mut out = Vec::new();
    c.queue(proto::CMD_READ, 0, 0, 4096, &mut out).unwrap();
    c.queue(proto::CMD_READ, 3, 0, 4096, &mut out).unwrap();
    c.send(&mut out);
    drop(server);
    // Another test's fork may hold the socket for a moment before its exec closes it.
    let end = Instant::now() + Duration::from_secs(5);
    while !c.is_dead() && Instant::now() < end {
        c.receive(&mut out).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|d| d.result == Err(IoFailure::errno(libc::ECONNRESET))));
    assert!(c.is_dead());
}

// ---- real servers -----------------------------------------------------------

fn have(cmd: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {cmd}")).output().is_ok_and(|o| o.status.success())
}

/// A server process listening on a Unix socket in a temporary directory,
/// killed on drop.
struct Server {
    child: Child,
    dir: std::path::PathBuf,
    socket: std::path::PathBuf,
}

impl Server {
    /// nbdkit with `args` (plugin and its parameters), on a fresh socket.
    fn nbdkit(args: &[&str]) -> Option<Server> {
        if !have("nbdkit") {
            assert!(std::env::var_os("CI").is_none(), "nbd tests must run in CI: scripts/install-deps.sh installs nbdkit and qemu-utils");
            eprintln!("SKIP: nbdkit is not installed (scripts/install-deps.sh installs it)");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("sb-nbd-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("s.sock");
        let child = Command::new("nbdkit")
            .args(["--exit-with-parent", "-f", "-U"])
            .arg(&socket)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nbdkit");
        let s = Server { child, dir, socket };
        s.wait_ready();
        Some(s)
    }

    /// qemu-nbd serving `file` (raw) as export `name`, discards passed on to the file.
    fn qemu(file: &std::path::Path, name: &str) -> Option<Server> {
        if !have("qemu-nbd") {
            assert!(std::env::var_os("CI").is_none(), "nbd tests must run in CI: scripts/install-deps.sh installs nbdkit and qemu-utils");
            eprintln!("SKIP: qemu-nbd is not installed (scripts/install-deps.sh installs it)");
            return None;
        }
        let dir = file.parent().unwrap().to_path_buf();
        let socket = dir.join("q.sock");
        let child = Command::new("qemu-nbd")
            .args(["-t", "-e", "4", "-f", "raw", "--discard=unmap", "-x", name, "-k"])
            .arg(&socket)
            .arg(file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start qemu-nbd");
        let s = Server { child, dir, socket };
        s.wait_ready();
        Some(s)
    }

    fn wait_ready(&self) {
        let end = Instant::now() + Duration::from_secs(10);
        while UnixStream::connect(&self.socket).is_err() {
            assert!(Instant::now() < end, "the server never listened on {}", self.socket.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.socket.display())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn config(uri: &str, more: &[(&str, &str)]) -> Arc<dyn EngineConfig> {
    let mut o: EngineOptions = more.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    o.insert("uri".into(), uri.into());
    NbdFactory.configure(&o).unwrap()
}

fn engine(cfg: &Arc<dyn EngineConfig>, s: &mut Slots) -> Box<dyn Engine> {
    let setup = WorkerSetup {
        fds: &[],
        paths: &[],
        buffers: s.buffers(),
        queue_depth: 4,
        reap_max: 4,
        direct: false,
        object_names: None,
        keep_reads: true,
        stop: &|| false,
        worker: 0,
    };
    cfg.open(&setup).unwrap()
}

/// Carry out one request and wait for it.
fn one(e: &mut dyn Engine, op: OpKind, slot: u32, offset: u64, len: u32) -> Result<u64, IoFailure> {
    e.queue(IoRequest { op, data_only: false, file: 0, whole: false, offset, len, slot, ioprio: 0 }).unwrap();
    let mut out = Vec::new();
    e.submit_and_reap(1, Some(Duration::from_secs(10)), &mut out).unwrap();
    assert_eq!(out.len(), 1, "one completion");
    assert_eq!(out[0].slot, slot);
    out[0].result
}

#[test]
fn trim_zeroes_a_range_and_flush_is_sent() {
    for structured in ["1", "0"] {
        let Some(srv) = Server::nbdkit(&["memory", "8M"]) else { return };
        let cfg = config(&srv.uri(), &[("structured_replies", structured)]);
        let mut s = Slots::new(4, 65536);
        let mut e = engine(&cfg, &mut s);
        s.slot(0).fill(0x5a);
        assert_eq!(one(e.as_mut(), OpKind::Write, 0, 1 << 20, 65536), Ok(65536));
        assert_eq!(one(e.as_mut(), OpKind::Sync, 1, 0, 0), Ok(0), "nbdkit offers flush");
        assert_eq!(one(e.as_mut(), OpKind::Trim, 2, (1 << 20) + 4096, 8192), Ok(8192));
        assert_eq!(one(e.as_mut(), OpKind::Read, 3, 1 << 20, 65536), Ok(65536));
        let back = s.slot(3).to_vec();
        assert!(back[..4096].iter().all(|b| *b == 0x5a), "structured={structured}");
        assert!(back[4096..12288].iter().all(|b| *b == 0), "the trimmed range reads as zeros (structured={structured})");
        assert!(back[12288..].iter().all(|b| *b == 0x5a));
    }
}

#[test]
fn a_server_without_trim_or_flush_answers_here() {
    // A read-only eval server offers neither trim nor flush.
    let Some(srv) = Server::nbdkit(&["eval", "get_size=echo 1048576", "pread=head -c $3 /dev/zero"]) else { return };
    let cfg = config(&srv.uri(), &[]);
    let mut s = Slots::new(4, 4096);
    let mut e = engine(&cfg, &mut s);
    assert_eq!(one(e.as_mut(), OpKind::Trim, 0, 0, 4096), Err(IoFailure::errno(libc::ENOTSUP)));
    assert_eq!(one(e.as_mut(), OpKind::Sync, 1, 0, 0), Ok(0), "nothing to flush");
    assert_eq!(one(e.as_mut(), OpKind::Write, 2, 0, 4096), Err(IoFailure::errno(libc::EPERM)), "read-only: the server refuses");
    let req = TargetRequest {
        size: None,
        writes: true,
        allow_overwrite: true,
        objects: None,
        object_prefix: None,
        written_before: false,
        verifies: false,
        transfers: None,
        stop: &|| false,
    };
    let e = cfg.prepare_target(&req).unwrap_err();
    assert!(matches!(e, EngineError::Refused { .. }) && e.to_string().contains("read-only"), "{e}");
}

#[test]
fn server_errors_become_errnos_with_both_reply_kinds() {
    for structured in ["1", "0"] {
        let args = ["--filter=error", "memory", "8M", "error-pwrite=ENOSPC", "error-pwrite-rate=100%"];
        let Some(srv) = Server::nbdkit(&args) else { return };
        let cfg = config(&srv.uri(), &[("structured_replies", structured)]);
        let mut s = Slots::new(4, 4096);
        let mut e = engine(&cfg, &mut s);
        assert_eq!(one(e.as_mut(), OpKind::Write, 0, 0, 4096), Err(IoFailure::errno(libc::ENOSPC)), "structured={structured}");
        assert_eq!(one(e.as_mut(), OpKind::Read, 1, 0, 4096), Ok(4096), "the connection goes on");
        assert_eq!(one(e.as_mut(), OpKind::Read, 2, 8 << 20, 4096), Err(IoFailure::errno(libc::EINVAL)), "beyond the end");
    }
}

#[test]
fn the_safety_check_sees_data_by_block_status_and_by_sampling() {
    let Some(srv) = Server::nbdkit(&["memory", "64M"]) else { return };
    let req = TargetRequest {
        size: None,
        writes: true,
        allow_overwrite: false,
        objects: None,
        object_prefix: None,
        written_before: false,
        verifies: false,
        transfers: None,
        stop: &|| false,
    };
    for structured in ["1", "0"] {
        let t = config(&srv.uri(), &[("structured_replies", structured)]).prepare_target(&req).unwrap().unwrap();
        assert_eq!((t.size, t.units), (64 << 20, 1));
    }
    // One byte in the last MiB (sampling reads it) and one beyond a sample.
    let cfg = config(&srv.uri(), &[]);
    let mut s = Slots::new(4, 4096);
    let mut e = engine(&cfg, &mut s);
    s.slot(0).fill(0);
    s.slot(0)[100] = 1;
    assert_eq!(one(e.as_mut(), OpKind::Write, 0, (64 << 20) - 8192, 4096), Ok(4096));
    for structured in ["1", "0"] {
        let e = config(&srv.uri(), &[("structured_replies", structured)]).prepare_target(&req).unwrap_err();
        let at = (64 << 20) - 8192 + 100;
        assert!(e.to_string().contains(&format!("non-zero byte at offset {at}")), "structured={structured}: {e}");
        assert!(e.to_string().contains("--allow_overwrite=1"), "{e}");
    }
    let ok = TargetRequest { allow_overwrite: true, ..req };
    assert!(config(&srv.uri(), &[]).prepare_target(&ok).is_ok());
    let big = TargetRequest { size: Some(65 << 20), ..ok };
    let e = config(&srv.uri(), &[]).prepare_target(&big).unwrap_err();
    assert!(e.to_string().contains("holds 67108864 bytes"), "{e}");
}

#[test]
fn a_trim_through_qemu_nbd_zeroes_the_backing_file() {
    let dir = std::env::temp_dir().join(format!("sb-nbd-q-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("disk.img");
    std::fs::File::create(&file).unwrap().set_len(8 << 20).unwrap();
    let Some(srv) = Server::qemu(&file, "disk") else { return };
    let cfg = config(&format!("nbd+unix:///disk?socket={}", srv.socket.display()), &[]);
    let mut s = Slots::new(4, 65536);
    let mut e = engine(&cfg, &mut s);
    s.slot(0).fill(0xa5);
    assert_eq!(one(e.as_mut(), OpKind::Write, 0, 65536, 65536), Ok(65536));
    assert_eq!(one(e.as_mut(), OpKind::Sync, 1, 0, 0), Ok(0));
    assert_eq!(std::fs::read(&file).unwrap()[65536..131072], [0xa5; 65536][..], "the write is in the file");
    assert_eq!(one(e.as_mut(), OpKind::Trim, 2, 65536 + 16384, 32768), Ok(32768));
    assert_eq!(one(e.as_mut(), OpKind::Sync, 3, 0, 0), Ok(0));
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes[65536..65536 + 16384].iter().all(|b| *b == 0xa5));
    assert!(bytes[65536 + 16384..65536 + 49152].iter().all(|b| *b == 0), "the trimmed range is zeros in the file");
    assert!(bytes[65536 + 49152..131072].iter().all(|b| *b == 0xa5));
    drop(e);
    drop(srv);
}

/// A block job's transfers: `sizes` for reads and writes alike, reading only.
fn transfers(bs: &storbench_workload::spec::BlockSizes) -> Transfers<'_> {
    Transfers { sizes: bs, reads: true, writes: false, read_back: None, offset: 0, offset_increment: 0, seq_skip: 0, replay: false }
}

fn sizes(read: &[u64], write: &[u64]) -> storbench_workload::spec::BlockSizes {
    let split = |s: &[u64]| storbench_workload::spec::SizeSplit(s.iter().map(|s| (*s, 1)).collect());
    storbench_workload::spec::BlockSizes { read: split(read), write: split(write) }
}

fn block_request(t: Transfers<'_>) -> TargetRequest<'_> {
    TargetRequest {
        size: None,
        writes: t.writes,
        allow_overwrite: true,
        objects: None,
        object_prefix: None,
        written_before: false,
        verifies: t.read_back.is_some(),
        transfers: Some(t),
        stop: &|| false,
    }
}

#[test]
fn transfers_the_export_cannot_take_are_refused_before_the_run() {
    // nbdkit's blocksize-policy filter advertises 4 KiB..64 KiB and fails
    // what falls outside (EINVAL on every I/O: a run would measure errors).
    let args =
        ["--filter=blocksize-policy", "memory", "8M", "blocksize-minimum=4096", "blocksize-maximum=65536", "blocksize-error-policy=error"];
    let Some(srv) = Server::nbdkit(&args) else { return };
    let cfg = config(&srv.uri(), &[]);
    let check = |t: Transfers| cfg.prepare_target(&block_request(t)).map(|_| ()).map_err(|e| e.to_string());
    let (ok, small, odd, big) =
        (sizes(&[4096, 65536], &[4096]), sizes(&[512], &[512]), sizes(&[4096, 6144], &[4096]), sizes(&[4096, 1 << 20], &[4096]));
    assert_eq!(check(Transfers { offset: 8192, offset_increment: 4096, seq_skip: -8192, ..transfers(&ok) }), Ok(()));
    let e = check(transfers(&small)).unwrap_err();
    assert!(e.contains("a block size of 512 bytes is not a multiple of the export's minimum block size 4096 (NBD_INFO_BLOCK_SIZE: 4096..65536 bytes); use a bs that is"), "{e}");
    let e = check(transfers(&odd)).unwrap_err();
    assert!(e.contains("6144"), "{e}");
    let e = check(transfers(&big)).unwrap_err();
    assert!(e.contains("1048576") && e.contains("largest request of 65536 bytes") && e.contains("use a bs of at most 65536"), "{e}");
    let e = check(Transfers { replay: true, ..transfers(&big) }).unwrap_err();
    assert!(e.contains("the trace has a block size of 1048576 bytes, above") && e.contains("replay it onto"), "{e}");
    for (t, says) in [
        (Transfers { offset: 1000, ..transfers(&ok) }, "offset 1000"),
        (Transfers { offset_increment: 1000, ..transfers(&ok) }, "offset_increment 1000"),
        (Transfers { seq_skip: -1000, ..transfers(&ok) }, "skip (rw=...:N) 1000"),
        (Transfers { writes: true, read_back: Some(256 << 10), ..transfers(&ok) }, "pieces of 262144 bytes"),
    ] {
        let e = check(t).unwrap_err();
        assert!(e.contains(says), "{says}: {e}");
    }
    // Only the sizes the job uses count: a reading job's write size does not.
    let mixed = sizes(&[4096], &[1 << 20]);
    assert_eq!(check(transfers(&mixed)), Ok(()));
    assert!(check(Transfers { writes: true, ..transfers(&mixed) }).unwrap_err().contains("1048576"));
    // A server without limits takes any size.
    let Some(plain) = Server::nbdkit(&["memory", "8M"]) else { return };
    let t = Transfers { offset: 100, read_back: Some(1 << 30), ..transfers(&small) };
    assert!(config(&plain.uri(), &[]).prepare_target(&block_request(t)).is_ok());
}
