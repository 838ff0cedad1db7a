//! `storbench agent`: serves the run protocol to one coordinator at a time.
//!
//! gRPC over TLS (the fleet's certificate); a coordinator must send the
//! fleet token, or with `--mtls` show a client certificate of the fleet's
//! CA. Refusals are logged with the peer's address and the reason, never
//! with what it sent. HTTP/2 keepalive finds a coordinator that vanished
//! without closing its connection (a cut link, a killed machine) within the
//! timeout; its run is then wound down and cleaned up. Connections that
//! have not shown the token are bounded in number and in time (`gate.rs`),
//! so idle ones cannot use up the agent's descriptors.

use crate::creds;
use crate::gate::Gate;
use crate::rpc::agent_server::{Agent, AgentServer};
use crate::session::Session;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use storbench_model::protocol::{FromAgent, ToAgent};
use storbench_runner::interrupt::Scope;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

/// How an agent serves.
#[derive(Clone, Debug)]
pub struct AgentOptions {
    pub listen: SocketAddr,
    /// The fleet directory (certificates and token).
    pub dir: PathBuf,
    /// Ask coordinators for a client certificate of the fleet's CA instead of the token.
    pub mtls: bool,
    pub name: String,
    /// A coordinator silent this long (keepalive unanswered) is gone.
    pub timeout: Duration,
    /// Serve one run, then exit.
    pub once: bool,
    /// The protocol version it claims (tests: an agent of another version).
    pub protocol: u32,
    /// Pretend this machine's clock is off by this much (tests of skew).
    pub clock_skew_ns: i64,
    /// The host memory its Hello says (MemTotal, unless a test says otherwise).
    pub memory: Option<u64>,
    /// A directory to remove when the agent exits (its own, when launched over SSH).
    pub remove_on_exit: Option<PathBuf>,
    /// The network service's port (`storbench baseline --network`); `None`: off.
    pub net_port: Option<u16>,
    /// Only watch this host (`--monitor`): no jobs, its seconds for a run's `--watch`.
    pub monitor: bool,
    /// With `monitor`: the command names a run may stop and continue here
    /// (`--allow-signal`); none unless named.
    pub allow_signal: Vec<String>,
}

/// Largest message either side accepts (a Prepare with many jobs, an
/// interval with many histograms).
pub const MAX_MESSAGE: usize = 256 << 20;

struct Service {
    opts: AgentOptions,
    token: Option<String>,
    /// The coordinator being served, if any.
    busy: Arc<Mutex<Option<String>>>,
    /// Sessions still running (joined before the agent exits).
    sessions: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>,
    finished: Arc<tokio::sync::Notify>,
    /// Connections not yet authenticated.
    gate: Arc<Gate>,
}

/// One line in the agent's log (standard error).
pub fn log(line: &str) {
    // Never panics on a closed stderr (an agent started with `2>&1 | head`).
    let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("storbench agent: {line}\n"));
}

#[tonic::async_trait]
impl Agent for Service {
    type RunStream = ReceiverStream<Result<FromAgent, Status>>;

    async fn run(&self, request: Request<Streaming<ToAgent>>) -> Result<Response<Self::RunStream>, Status> {
        let addr = request.remote_addr();
        let peer = addr.map_or_else(|| "an unknown address".to_string(), |a| a.to_string());
        if let Some(expected) = &self.token {
            let given = request.metadata().get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
            if !given.is_some_and(|g| creds::token_matches(expected, g)) {
                let why = if given.is_none() { "no fleet token" } else { "a wrong fleet token" };
                log(&format!("refused a coordinator from {peer}: {why}"));
                return Err(Status::unauthenticated(format!(
                    "the agent refused {why}: use the token of the fleet directory the agent was started with"
                )));
            }
        }
        // With --mtls, the TLS handshake checked the certificate already.
        if let Some(a) = addr {
            self.gate.authenticated(a);
        }
        self.claim(&peer).await?;
        log(&format!("coordinator {peer} connected"));
        Ok(Response::new(self.start(peer, request.into_inner())))
    }
}

impl Service {
    /// Take the one run slot. A run that just ended may still be saying
    /// goodbye (a sweep's next point connects at once), so wait a little.
    async fn claim(&self, peer: &str) -> Result<(), Status> {
        for _ in 0..40 {
            {
                let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
                if busy.is_none() {
                    *busy = Some(peer.to_string());
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let other = self.busy.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
        log(&format!("refused a coordinator from {peer}: busy with the run from {other}"));
        Err(Status::unavailable(format!("the agent is busy with a run from {other}; an agent runs one run at a time")))
    }

    /// Read the coordinator's messages into a session thread; its answers
    /// come back through the returned stream.
    fn start(&self, peer: String, mut incoming: Streaming<ToAgent>) -> ReceiverStream<Result<FromAgent, Status>> {
        let (out, out_rx) = tokio::sync::mpsc::channel(4096);
        let (to_session, inbox) = std::sync::mpsc::channel();
        let gone = Arc::new(AtomicBool::new(false));
        let gone_reader = gone.clone();
        tokio::spawn(async move {
            while let Ok(Some(m)) = incoming.message().await {
                if to_session.send(m).is_err() {
                    break;
                }
            }
            gone_reader.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let session = Session {
            name: self.opts.name.clone(),
            protocol: self.opts.protocol,
            clock_skew_ns: self.opts.clock_skew_ns,
            memory: self.opts.memory,
            inbox,
            out,
            gone,
            scope: Scope::begin(),
            signals: self.opts.allow_signal.clone(),
        };
        let monitor = self.opts.monitor;
        let (busy, finished, once) = (self.busy.clone(), self.finished.clone(), self.opts.once);
        let thread = std::thread::Builder::new().name("sb-session".into()).spawn(move || {
            let outcome = if monitor { session.watch() } else { session.run() };
            log(&format!("coordinator {peer}: {outcome}"));
            *busy.lock().unwrap_or_else(|e| e.into_inner()) = None;
            if once {
                finished.notify_one();
            }
        });
        match thread {
            Ok(t) => self.sessions.lock().unwrap_or_else(|e| e.into_inner()).push(t),
            Err(e) => {
                log(&format!("could not start a session thread: {e}"));
                *self.busy.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
        }
        ReceiverStream::new(out_rx)
    }
}

/// Serve until a signal (or, with `once`, until the first run ends).
pub fn serve(opts: AgentOptions) -> Result<(), String> {
    let opts_exit = opts.remove_on_exit.clone();
    let creds = creds::agent(&opts.dir, opts.mtls)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("could not start the agent's runtime: {e}"))?;
    let scope = Scope::begin();
    let net_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let net = opts.net_port.and_then(|port| net_service(SocketAddr::new(opts.listen.ip(), port), creds.token.clone(), net_stop.clone()));
    let finished = Arc::new(tokio::sync::Notify::new());
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let gate = Gate::new(opts.timeout);
    let service = Service {
        gate: gate.clone(),
        token: (!opts.mtls).then_some(creds.token),
        busy: Arc::default(),
        sessions: sessions.clone(),
        finished: finished.clone(),
        opts: opts.clone(),
    };
    let result = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(opts.listen).await.map_err(|e| format!("could not listen on {}: {e}", opts.listen))?;
        let addr = listener.local_addr().map_or_else(|_| opts.listen.to_string(), |a| a.to_string());
        let auth = if opts.mtls { "mutual TLS" } else { "TLS and the fleet token" };
        let role = match (opts.monitor, opts.allow_signal.is_empty()) {
            (false, _) => String::new(),
            (true, true) => ", watching this host only: --monitor".to_string(),
            (true, false) => format!(", watching this host only: --monitor; runs may stop and continue {}", opts.allow_signal.join(", ")),
        };
        log(&format!("{} listening on {addr} ({auth}, protocol {}{role})", opts.name, opts.protocol));
        let server = AgentServer::new(service).max_decoding_message_size(MAX_MESSAGE).max_encoding_message_size(MAX_MESSAGE);
        let reaper = gate.clone();
        let stop = async move {
            loop {
                tokio::select! {
                    _ = finished.notified() => return,
                    _ = tokio::time::sleep(Duration::from_millis(200)) => if scope.interrupted() { return },
                }
                reaper.reap();
            }
        };
        let incoming = TcpListenerStream::new(listener).map(move |c| c.map(|s| gate.admit(s)));
        tonic::transport::Server::builder()
            .tls_config(creds.tls)
            .map_err(|e| format!("the fleet's TLS set-up failed: {e}"))?
            .http2_keepalive_interval(Some(Duration::from_secs(1)))
            .http2_keepalive_timeout(Some(opts.timeout))
            .add_service(server)
            .serve_with_incoming_shutdown(incoming, stop)
            .await
            .map_err(|e| format!("the agent's server failed: {e}"))
    });
    // A run in progress winds down (workers stopped, targets cleaned up) before the agent exits.
    let threads = std::mem::take(&mut *sessions.lock().unwrap_or_else(|e| e.into_inner()));
    for t in threads {
        let _ = t.join();
    }
    net_stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(t) = net {
        let _ = t.join();
    }
    if let Some(dir) = &opts_exit {
        let _ = std::fs::remove_dir_all(dir);
    }
    log("stopped");
    result
}

/// The network service beside the agent (throughput and round trips for
/// `storbench baseline --network`), on a thread of its own; one that cannot
/// listen is said and left out, the agent serves runs all the same.
fn net_service(addr: SocketAddr, token: String, stop: Arc<std::sync::atomic::AtomicBool>) -> Option<std::thread::JoinHandle<()>> {
    let listener = match std::net::TcpListener::bind(addr) {
        Ok(l) => l,
        Err(e) => {
            log(&format!("no network service: could not listen on {addr}: {e}"));
            return None;
        }
    };
    log(&format!("network service on {addr} (storbench baseline --network)"));
    std::thread::Builder::new().name("sb-net-accept".into()).spawn(move || storbench_engine::tcp::serve(listener, token, stop, log)).ok()
}
