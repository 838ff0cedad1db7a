//! Object stores over HTTP (S3, Swift): what the two engines share.
//!
//! Each worker owns a single-threaded tokio runtime and a pooled hyper client
//! (keep-alive, TCP_NODELAY). `queue` spawns one task per operation; tasks run
//! only while the worker waits in `submit_and_reap`, which drives the runtime
//! until enough completions arrived. So a worker stays one thread, as with the
//! other engines, and its queue depth is the number of requests in flight.
//!
//! Request bodies are the worker's own buffer slots, lent to hyper without a
//! copy ([`SlotBody`]); an operation completes only once hyper has let go of
//! its body, so a slot is never rewritten while a request still reads it.
//! HTTP failures are counted by status ("HTTP 503"), transport failures by
//! errno; nothing is retried unless the engine says so.
//!
//! A server that stops answering holds nothing up for long: each operation
//! ends at `op_timeout` (ETIMEDOUT), what is in flight when the run gives
//! up on it is abandoned by dropping the worker's runtime with every task
//! and connection in it ([`Io::abandon`], which also releases the lent
//! slots), and set-up and tear-down requests end within a tick of a Ctrl-C
//! ([`Io::block_or_stop`]).

mod body;
mod chunked;
pub mod creds;
mod resolve;
pub mod s3;
pub mod scrape;
pub mod swift;
mod swift_auth;
pub mod tls;

use crate::{Completion, EngineError};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storbench_metrics::IoFailure;
use tokio::sync::{mpsc, oneshot};

pub use body::Body;
pub type Connector = hyper_rustls::HttpsConnector<HttpConnector<resolve::Resolver>>;
pub type Client = hyper_util::client::legacy::Client<Connector, Body>;

/// A client with keep-alive and TCP_NODELAY (small requests otherwise wait
/// for Nagle's algorithm), for http and https URLs.
pub fn client(common: &Common, tls: &rustls::ClientConfig) -> Client {
    let mut c = HttpConnector::new_with_resolver(resolve::Resolver::new(common.connect_to));
    c.set_nodelay(true);
    c.set_connect_timeout(Some(common.connect_timeout));
    c.enforce_http(false);
    let c = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls.clone()).https_or_http().enable_http1().wrap_connector(c);
    hyper_util::client::legacy::Client::builder(TokioExecutor::new()).pool_max_idle_per_host(usize::MAX).build(c)
}

/// One worker's async machinery: runtime, client, completion channel.
pub struct Io {
    rt: tokio::runtime::Runtime,
    pub client: Client,
    tx: mpsc::UnboundedSender<Completion>,
    rx: mpsc::UnboundedReceiver<Completion>,
    backoff: Arc<Backoff>,
    /// What it was made from (to make it afresh when abandoning).
    engine: &'static str,
    common: Common,
}

/// How often a set-up request's wait looks at the stop request.
const TICK: Duration = Duration::from_millis(50);

/// Connection failures in a row, shared by a worker's operations. While the
/// server refuses connections (a proxy down), each failed operation waits
/// before it completes, so its slot is not refilled at once: without this a
/// worker sends tens of thousands of doomed requests a second. The failures
/// are still counted, one per operation; the wait is in no latency.
#[derive(Default)]
struct Backoff(AtomicU32);

/// The longest wait after a connection failure (a stop still ends the run
/// within a second).
pub const BACKOFF_MAX: Duration = Duration::from_millis(500);

impl Backoff {
    /// How long an operation that ended with `result` waits before completing.
    fn after(&self, result: &Result<u64, IoFailure>) -> Option<Duration> {
        match result {
            Err(f) if f.kind == storbench_metrics::ErrorKind::Connection => {
                let n = self.0.fetch_add(1, Ordering::Relaxed).min(6);
                Some((Duration::from_millis(10) * (1 << n)).min(BACKOFF_MAX))
            }
            _ => {
                self.0.store(0, Ordering::Relaxed);
                None
            }
        }
    }
}

impl Io {
    pub fn new(engine: &'static str, common: &Common) -> Result<Io, EngineError> {
        let tls = tls::client_config(engine, &common.tls)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| EngineError::os(engine, "tokio runtime", e.raw_os_error().unwrap_or(libc::EIO)))?;
        // The client's pool lives in the runtime it is first used in.
        let client = {
            let _g = rt.enter();
            client(common, &tls)
        };
        let (tx, rx) = mpsc::unbounded_channel();
        Ok(Io { rt, client, tx, rx, backoff: Arc::default(), engine, common: common.clone() })
    }

    /// Give up on every operation in flight: the runtime is dropped with
    /// its tasks and connections (so every lent slot is released and no
    /// completion of them ever arrives), and a fresh one takes its place.
    /// False if no fresh one could be made.
    pub fn abandon(&mut self) -> bool {
        let Ok(fresh) = Io::new(self.engine, &self.common) else { return false };
        let old = std::mem::replace(self, fresh);
        // Without waiting for blocking threads (a name lookup that hangs).
        old.rt.shutdown_background();
        true
    }

    /// Run a set-up or tear-down future; a Ctrl-C (`stop`) gives it up
    /// within a tick (the future is dropped, its requests cancelled): an
    /// [`EngineError::Interrupted`] naming `what`.
    pub fn block_or_stop<T>(
        &self,
        what: &str,
        stop: &dyn Fn() -> bool,
        f: impl Future<Output = Result<T, EngineError>>,
    ) -> Result<T, EngineError> {
        let engine = self.engine;
        self.rt.block_on(async {
            let mut f = std::pin::pin!(f);
            loop {
                if let Ok(out) = tokio::time::timeout(TICK, &mut f).await {
                    return out;
                }
                if stop() {
                    return Err(EngineError::Interrupted { engine, what: what.to_string() });
                }
            }
        })
    }

    /// Run an operation; its completion arrives through `reap`.
    pub fn spawn(&self, slot: u32, op: impl Future<Output = Outcome> + Send + 'static) {
        let (tx, backoff) = (self.tx.clone(), self.backoff.clone());
        self.rt.spawn(async move {
            let o = op.await;
            if let Some(wait) = backoff.after(&o.result) {
                tokio::time::sleep(wait).await;
            }
            let _ = tx.send(Completion { slot, result: o.result, tail_ns: o.tail_ns, retries: o.retries, ended: false });
        });
    }

    /// Drive the runtime until `min` completions arrived or `timeout` passed.
    pub fn reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) {
        let (rx, min) = (&mut self.rx, min as usize);
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        self.rt.block_on(async {
            // Nothing to wait for: still give ready tasks one turn (otherwise
            // awaiting a completion below is what runs them).
            if min == 0 {
                tokio::task::yield_now().await;
            }
            let mut got = 0;
            loop {
                while let Ok(c) = rx.try_recv() {
                    out.push(c);
                    got += 1;
                }
                if got >= min {
                    return;
                }
                let next = match deadline {
                    Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                    None => rx.recv().await,
                };
                match next {
                    Some(c) => {
                        out.push(c);
                        got += 1;
                    }
                    None => return,
                }
            }
        });
    }

    /// Run a future to completion (set-up and tear-down, not measured).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }
}

/// A buffer slot lent to hyper as a request body. It tells the operation when
/// hyper drops it, so the slot is not reused while a request may read it.
pub struct SlotBody {
    ptr: *const u8,
    len: usize,
    released: Option<oneshot::Sender<()>>,
}

// SAFETY: the worker does not touch the slot until `released` fires (the
// operation completes only after that), and the buffers outlive the engine.
unsafe impl Send for SlotBody {}
unsafe impl Sync for SlotBody {}

impl AsRef<[u8]> for SlotBody {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see the Send impl: ptr..ptr+len is a live, unchanging slot.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for SlotBody {
    fn drop(&mut self) {
        if let Some(tx) = self.released.take() {
            let _ = tx.send(());
        }
    }
}

/// The slot's first `len` bytes as a body, and the signal of its release.
///
/// # Safety
/// `ptr..ptr+len` must stay valid and unchanged until the receiver fires.
pub unsafe fn lend(ptr: *const u8, len: usize) -> (Bytes, oneshot::Receiver<()>) {
    let (tx, rx) = oneshot::channel();
    (Bytes::from_owner(SlotBody { ptr, len, released: Some(tx) }), rx)
}

/// What a finished exchange means for the runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A request that sent `n` body bytes: success counts them.
    Sent(u64),
    /// A response whose body bytes are the data moved.
    Received,
    /// As `Received`, the body also copied into the `cap` bytes at `base`
    /// (a worker's slot, which outlives the operation; beyond `cap` is counted, not kept).
    Into { base: usize, cap: usize },
}

impl Expect {
    /// A GET's expectation: the body kept in the slot when the worker asked.
    pub fn read_into(keep: bool, buffers: &crate::Buffers, slot: u32) -> Expect {
        match keep {
            true => Expect::Into { base: buffers.slot(slot) as usize, cap: buffers.slot_len },
            false => Expect::Received,
        }
    }
}

/// What an operation reports: result, body tail time, retries.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    pub result: Result<u64, IoFailure>,
    pub tail_ns: u64,
    pub retries: u32,
}

impl Outcome {
    pub fn of(result: Result<u64, IoFailure>) -> Outcome {
        Outcome { result, tail_ns: 0, retries: 0 }
    }
}

/// A request storbench could not even build (a bad URL): a bug or bad input,
/// reported per operation as EINVAL.
pub const UNBUILDABLE: IoFailure =
    IoFailure { kind: storbench_metrics::ErrorKind::Other, detail: storbench_metrics::Detail::Errno(libc::EINVAL) };

/// Failures worth sending again when retries are asked for: the connection
/// broke or timed out, or the server said it is overloaded or failing.
pub fn retryable(result: &Result<u64, IoFailure>) -> bool {
    use storbench_metrics::Detail;
    match result {
        Err(IoFailure { detail: Detail::Errno(e), .. }) => [libc::ECONNREFUSED, libc::ECONNRESET, libc::ETIMEDOUT, libc::EPIPE].contains(e),
        Err(IoFailure { detail: Detail::Http(s), .. }) => [500, 502, 503, 504].contains(s),
        _ => false,
    }
}

/// [`exchange`], sending the request built by `make` again up to `retries`
/// times after a retryable failure (10 ms, 20 ms, 40 ms... apart). The count
/// of resends goes into the results, so a retry is never hidden.
pub async fn exchange_retrying(
    client: &Client,
    make: &(dyn Fn() -> Option<::http::Request<Body>> + Send + Sync),
    expect: Expect,
    limit: Duration,
    retries: u32,
) -> (Reply, u32) {
    let mut attempt = 0;
    loop {
        let Some(req) = make() else { return (Reply::failed(UNBUILDABLE), attempt) };
        let reply = exchange(client, req, expect, limit).await;
        if attempt >= retries || !retryable(&reply.result) {
            return (reply, attempt);
        }
        tokio::time::sleep(Duration::from_millis(10 << attempt.min(6))).await;
        attempt += 1;
    }
}

/// How an exchange ended.
pub struct Reply {
    /// Bytes moved, or the HTTP status or transport failure (ETIMEDOUT after
    /// the time limit).
    pub result: Result<u64, IoFailure>,
    pub head: Option<::http::Response<()>>,
    /// From the first body byte to the last (0 without a body).
    pub tail_ns: u64,
}

impl Reply {
    pub fn failed(f: IoFailure) -> Reply {
        Reply { result: Err(f), head: None, tail_ns: 0 }
    }
}

/// Send a request and read the whole response (the body is discarded, so the
/// connection can be reused), timing its first and last body bytes.
pub async fn exchange(client: &Client, req: ::http::Request<Body>, expect: Expect, limit: Duration) -> Reply {
    match tokio::time::timeout(limit, exchange_inner(client, req, expect)).await {
        Ok(r) => r,
        Err(_) => Reply::failed(IoFailure::errno(libc::ETIMEDOUT)),
    }
}

async fn exchange_inner(client: &Client, req: ::http::Request<Body>, expect: Expect) -> Reply {
    let resp = match client.request(req).await {
        Ok(r) => r,
        Err(e) => return Reply::failed(IoFailure::errno(client_errno(&e))),
    };
    let (parts, mut body) = resp.into_parts();
    let mut received = 0u64;
    let mut first: Option<Instant> = None;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => {
                let n = f.data_ref().map_or(0, |d| d.len() as u64);
                if n > 0 && first.is_none() {
                    first = Some(Instant::now());
                }
                if let (Expect::Into { base, cap }, Some(d)) = (expect, f.data_ref()) {
                    keep(base, cap, received as usize, d);
                }
                received += n;
            }
            Err(_) => return Reply::failed(IoFailure::errno(libc::ECONNRESET)),
        }
    }
    let tail_ns = first.map_or(0, |f| f.elapsed().as_nanos() as u64);
    let head = ::http::Response::from_parts(parts, ());
    let status = head.status();
    if !status.is_success() {
        return Reply { result: Err(IoFailure::http(status.as_u16())), head: Some(head), tail_ns: 0 };
    }
    let moved = match expect {
        Expect::Sent(n) => n,
        Expect::Received | Expect::Into { .. } => received,
    };
    Reply { result: Ok(moved), head: Some(head), tail_ns }
}

/// Copy a body frame to `at` bytes into the slot at `base` (what does not fit is dropped).
fn keep(base: usize, cap: usize, at: usize, data: &[u8]) {
    let n = data.len().min(cap.saturating_sub(at));
    if n > 0 {
        // SAFETY: the slot (`cap` bytes at `base`) belongs to this operation until
        // it completes, and `at + n <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), (base as *mut u8).add(at), n) };
    }
}

/// Why a bucket or container storbench created is kept after a run: the
/// objects in it, told apart by the run's prefix (the run's own, which
/// `storbench cleanup` removes, or objects this run did not write).
pub fn kept_note(what: &str, first: &str, prefix: Option<&str>) -> String {
    match prefix.filter(|p| first.starts_with(*p)) {
        Some(p) => format!(
            "{what} (created by storbench) left in place: it still holds objects of this run (names starting '{p}', such as '{first}'); \
             `storbench cleanup` with the job's engine options and --object_prefix {p} removes them"
        ),
        None => format!("{what} (created by storbench) left in place: it holds objects this run did not write (such as '{first}')"),
    }
}

/// How many deletes a cleanup keeps in flight.
pub const REMOVE_WIDTH: usize = 32;

/// Run `op` on every item, [`REMOVE_WIDTH`] at a time, until done, `stop`
/// or too many failures in a row; tallied into `into` (cleanup).
pub async fn remove_each<F, Fut>(items: Vec<String>, stop: &dyn Fn() -> bool, op: F, into: &mut crate::Removed)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<crate::Removal, String>> + Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    let mut items = items.into_iter();
    loop {
        while set.len() < REMOVE_WIDTH && !into.stopped {
            if stop() || into.given_up() {
                into.stopped = true;
                break;
            }
            match items.next() {
                Some(item) => {
                    set.spawn(op(item));
                }
                None => break,
            }
        }
        match set.join_next().await {
            None => return,
            Some(Ok(Ok(crate::Removal::Removed | crate::Removal::Absent))) => into.removed(),
            Some(Ok(Ok(crate::Removal::Unmarked))) => into.kept += 1,
            Some(Ok(Err(why))) => into.failed(why),
            Some(Err(e)) => into.failed(e.to_string()),
        }
    }
}

/// Like [`exchange`], also returning the response body (small control
/// requests: listings, auth, multipart bookkeeping).
pub async fn fetch(client: &Client, req: ::http::Request<Body>, limit: Duration) -> Result<(::http::response::Parts, Bytes), IoFailure> {
    fetch_or_why(client, req, limit).await.map_err(|f| f.failure())
}

/// Why a request got no whole response.
pub enum Failure {
    Client(hyper_util::client::legacy::Error),
    /// The connection broke while the body came in.
    Body,
    TimedOut,
}

impl Failure {
    /// As the failure of an operation.
    pub fn failure(&self) -> IoFailure {
        IoFailure::errno(match self {
            Failure::Client(e) => client_errno(e),
            Failure::Body => libc::ECONNRESET,
            Failure::TimedOut => libc::ETIMEDOUT,
        })
    }

    /// A set-up request to `url` got no answer: an error naming the URL and
    /// the client's own words, keeping the client's error as its source.
    pub fn unreachable(self, engine: &'static str, what: &str) -> EngineError {
        let message = format!("{what}: {}", self.describe());
        let source = match self {
            Failure::Client(e) => Some(Box::new(e) as crate::Source),
            _ => None,
        };
        EngineError::Unreachable { engine, message, source }
    }

    /// In words, for set-up errors: the client's own (dns error, tcp connect
    /// error, TLS), and what to do about a certificate.
    pub fn describe(&self) -> String {
        let Failure::Client(e) = self else {
            return std::io::Error::from_raw_os_error(self.failure().errno_value().unwrap_or(libc::EIO)).to_string();
        };
        if let Some(t) = sources(e).find_map(|s| s.downcast_ref::<std::io::Error>().and_then(tls_failure)) {
            return format!(
                "TLS failed: {t} (trust the server's CA with --ca_cert FILE, AWS_CA_BUNDLE or OS_CACERT; --insecure 1 skips the check)"
            );
        }
        sources(e).map(|s| s.to_string()).collect::<Vec<_>>().join(": ")
    }
}

/// [`fetch`] keeping the reason of a failure (set-up requests).
pub async fn fetch_or_why(
    client: &Client,
    req: ::http::Request<Body>,
    limit: Duration,
) -> Result<(::http::response::Parts, Bytes), Failure> {
    let run = async {
        let resp = client.request(req).await.map_err(Failure::Client)?;
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await.map_err(|_| Failure::Body)?.to_bytes();
        Ok((parts, bytes))
    };
    tokio::time::timeout(limit, run).await.unwrap_or(Err(Failure::TimedOut))
}

/// The chain of errors under a client error, outermost first.
fn sources(e: &hyper_util::client::legacy::Error) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    std::iter::successors(std::error::Error::source(e), |s| s.source())
}

/// The TLS error inside an I/O error (connectors wrap it in one or more).
fn tls_failure(mut io: &std::io::Error) -> Option<&rustls::Error> {
    loop {
        let inner = io.get_ref()?;
        if let Some(t) = inner.downcast_ref::<rustls::Error>() {
            return Some(t);
        }
        io = inner.downcast_ref::<std::io::Error>()?;
    }
}

/// The errno behind a client error, as far as it can be told (TLS: EPROTO).
fn client_errno(e: &hyper_util::client::legacy::Error) -> i32 {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        // The server closed the connection under the request: a reset.
        if s.downcast_ref::<hyper::Error>().is_some_and(|h| h.is_incomplete_message() || h.is_closed() || h.is_canceled()) {
            return libc::ECONNRESET;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if tls_failure(io).is_some() {
                return libc::EPROTO;
            }
            if let Some(n) = io.raw_os_error() {
                return n;
            }
            if io.kind() == std::io::ErrorKind::TimedOut {
                return libc::ETIMEDOUT;
            }
        }
        src = s.source();
    }
    if e.is_connect() {
        libc::ECONNREFUSED
    } else {
        libc::EIO
    }
}

/// Percent-encode an object key for a URL path (RFC 3986 unreserved kept).
pub fn encode_key(key: &str, out: &mut String) {
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Percent-encode a query-string value (everything but RFC 3986 unreserved).
pub fn encode_query(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Where a worker's listing stands: the next page's token or marker (None:
/// start again from the first page). List operations walk the pages in turn.
pub type ListCursor = std::sync::Arc<std::sync::Mutex<Option<String>>>;

/// What both object-store engines are: queued, object-only, and without
/// per-object ordering (so the object model keeps operations on one object apart).
pub const CAPABILITIES: crate::Capabilities =
    crate::Capabilities { queued: true, direct_io: false, needs_files: false, does_io: true, blocks: false, objects: true, ordered: false };

/// Object-store engines do whole-object and ranged operations, not partial writes.
pub fn supports(op: storbench_workload::OpKind) -> bool {
    !matches!(op, storbench_workload::OpKind::Write | storbench_workload::OpKind::Sync | storbench_workload::OpKind::Trim)
}

/// Options every HTTP engine takes (see [`Common`]).
pub const COMMON_OPTIONS: &[crate::OptionInfo] = &[
    crate::OptionInfo { name: "op_timeout", kind: crate::Kind::Duration, default: "", help: "seconds before an operation fails with ETIMEDOUT (default 30)" },
    crate::OptionInfo { name: "connect_timeout", kind: crate::Kind::Duration, default: "", help: "seconds to wait for a connection (default 10)" },
    crate::OptionInfo { name: "retries", kind: crate::Kind::Count, default: "", help: "resend an operation after a broken connection or HTTP 500/502/503/504, up to N times (default 0; counted in the results)",
    },
    crate::OptionInfo { name: "ca_cert", kind: crate::Kind::Text, default: "", help: "PEM file of CA certificates to trust for https, besides the system's (default: $AWS_CA_BUNDLE for s3, $OS_CACERT for swift)",
    },
    crate::OptionInfo { name: "insecure", kind: crate::Kind::Flag, default: "", help: "1: accept any https certificate (self-signed test servers; default 0)" },
    crate::OptionInfo { name: "connect_to", kind: crate::Kind::Text, default: "", help: "connect to this IP address whatever host name a URL has (Host header, signature and TLS name unchanged), like curl --connect-to",
    },
];

/// An engine's own options followed by [`COMMON_OPTIONS`], built once.
pub fn with_common(
    own: &'static [crate::OptionInfo],
    cell: &'static std::sync::OnceLock<Vec<crate::OptionInfo>>,
) -> &'static [crate::OptionInfo] {
    cell.get_or_init(|| own.iter().chain(COMMON_OPTIONS).copied().collect())
}

/// The settings of [`COMMON_OPTIONS`].
#[derive(Clone, Debug)]
pub struct Common {
    pub op_timeout: Duration,
    pub connect_timeout: Duration,
    pub retries: u32,
    pub tls: tls::TlsOptions,
    /// Where to connect instead of resolving host names.
    pub connect_to: Option<std::net::IpAddr>,
}

impl Common {
    pub fn from_options(engine: &'static str, o: &crate::EngineOptions) -> Result<Common, EngineError> {
        let retries = match o.get("retries") {
            None => 0,
            Some(v) => v.parse::<u32>().ok().filter(|n| *n <= 10).ok_or_else(|| EngineError::BadOption {
                engine,
                option: "retries".into(),
                message: format!("'{v}' is not a count from 0 to 10"),
            })?,
        };
        let insecure = match o.get("insecure").map(String::as_str) {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => return Err(EngineError::BadOption { engine, option: "insecure".into(), message: format!("'{v}': use 0 or 1") }),
        };
        let ca_var = if engine == "s3" { "AWS_CA_BUNDLE" } else { "OS_CACERT" };
        let ca_cert = o.get("ca_cert").cloned().or_else(|| std::env::var(ca_var).ok()).filter(|s| !s.is_empty());
        if let Some(f) = ca_cert.as_deref().filter(|f| !std::path::Path::new(f).exists()) {
            let from = if o.contains_key("ca_cert") { "ca_cert".to_string() } else { ca_var.to_string() };
            return Err(EngineError::BadOption { engine, option: from, message: format!("'{f}' does not exist") });
        }
        let connect_to = match o.get("connect_to") {
            None => None,
            Some(v) => Some(v.parse().map_err(|_| EngineError::BadOption {
                engine,
                option: "connect_to".into(),
                message: format!("'{v}' is not an IP address"),
            })?),
        };
        Ok(Common {
            connect_to,
            op_timeout: secs(engine, o, "op_timeout", 30.0)?,
            connect_timeout: secs(engine, o, "connect_timeout", 10.0)?,
            retries,
            tls: tls::TlsOptions { ca_cert, insecure },
        })
    }

    /// Said after the target's label when certificates go unchecked.
    pub fn tls_note(&self) -> &'static str {
        if self.tls.insecure {
            " (TLS certificate NOT verified)"
        } else {
            ""
        }
    }
}

fn secs(engine: &'static str, opts: &crate::EngineOptions, key: &str, default: f64) -> Result<Duration, EngineError> {
    match opts.get(key) {
        None => Ok(Duration::from_secs_f64(default)),
        // Above a day is a typo (and 1e308 overflowed the Duration: a panic).
        Some(v) => {
            v.parse::<f64>().ok().filter(|s| *s > 0.0 && *s <= crate::MAX_TIMEOUT_SECS).map(Duration::from_secs_f64).ok_or_else(|| {
                EngineError::BadOption {
                    engine,
                    option: key.into(),
                    message: format!("'{v}' is not a number of seconds above 0 and at most 86400 (a day)"),
                }
            })
        }
    }
}

/// A size option (`8m`); `nonzero` refuses 0.
pub fn size_option(engine: &'static str, o: &crate::EngineOptions, key: &str, default: u64, nonzero: bool) -> Result<u64, EngineError> {
    let bad = |message: String| EngineError::BadOption { engine, option: key.into(), message };
    let n = o.get(key).map_or(Ok(default), |v| storbench_workload::units::parse_size(v).map_err(|e| bad(e.to_string())))?;
    if nonzero && n == 0 {
        return Err(bad("must be above 0".into()));
    }
    Ok(n)
}

/// The buckets or containers a job's objects are spread over: the named one,
/// or with a count above 1, `<name><sep>000000`... with object key k in
/// number k % count (ssbench's container_count, warp's multiple buckets).
#[derive(Clone, Debug)]
pub struct Places {
    pub base: String,
    pub count: u32,
    sep: char,
}

impl Places {
    /// From the options `name_key` (default "storbench") and `count_key`.
    pub fn from_options(
        engine: &'static str,
        o: &crate::EngineOptions,
        name_key: &str,
        count_key: &str,
        sep: char,
    ) -> Result<Places, EngineError> {
        let count = match o.get(count_key) {
            None => 1,
            Some(v) => v.parse::<u32>().ok().filter(|n| (1..=1_000_000).contains(n)).ok_or_else(|| EngineError::BadOption {
                engine,
                option: count_key.into(),
                message: format!("'{v}' is not a count from 1 to 1000000"),
            })?,
        };
        Ok(Places { base: place_option(engine, o, name_key)?, count, sep })
    }

    /// Where object key `key` lives.
    pub fn of(&self, key: u32) -> String {
        if self.count == 1 {
            return self.base.clone();
        }
        format!("{}{}{:06}", self.base, self.sep, key % self.count)
    }

    pub fn all(&self) -> Vec<String> {
        (0..self.count).map(|i| self.of(i)).collect()
    }

    /// For labels: `name`, or `name-000000..name-000003`.
    pub fn describe(&self) -> String {
        match self.count {
            1 => self.base.clone(),
            n => format!("{}..{}", self.of(0), self.of(n - 1)),
        }
    }
}

/// A bucket or container name option (default "storbench").
pub fn place_option(engine: &'static str, o: &crate::EngineOptions, key: &str) -> Result<String, EngineError> {
    let name = o.get(key).cloned().unwrap_or_else(|| "storbench".into());
    if name.is_empty() || name.contains('/') {
        return Err(EngineError::BadOption { engine, option: key.into(), message: format!("'{name}' is not a {key} name") });
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_in_a_row_wait_longer_up_to_the_cap_and_a_success_resets() {
        let b = Backoff::default();
        let refused = Err(IoFailure::errno(libc::ECONNREFUSED));
        let waits: Vec<u128> = (0..8).map(|_| b.after(&refused).unwrap().as_millis()).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 500, 500]);
        assert_eq!(b.after(&Err(IoFailure::http(404))), None, "a server that answers is no reason to wait");
        assert_eq!(b.after(&refused).unwrap().as_millis(), 10, "an answer resets the count");
        assert_eq!(b.after(&Ok(4096)), None);
    }

    #[test]
    fn keys_are_percent_encoded_except_unreserved() {
        let mut s = String::new();
        encode_key("a b/ç~x.1", &mut s);
        assert_eq!(s, "a%20b/%C3%A7~x.1");
    }

    #[test]
    fn retries_follow_broken_connections_and_overloaded_servers_only() {
        assert!(retryable(&Err(IoFailure::errno(libc::ECONNRESET))));
        assert!(retryable(&Err(IoFailure::http(503))));
        assert!(!retryable(&Err(IoFailure::http(404))));
        assert!(!retryable(&Err(IoFailure::errno(libc::EPROTO))), "TLS failures are not retried");
        assert!(!retryable(&Ok(4096)));
    }
}
