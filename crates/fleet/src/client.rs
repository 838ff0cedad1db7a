//! The coordinator's connections to its agents.
//!
//! [`Fleet::connect`] reaches every agent (TLS, the fleet token), checks
//! its protocol version and measures its clock against ours; [`Fleet::prepare`]
//! has each agent plan and prepare the jobs on its own machine (the first
//! agent alone first, so a target every agent shares, an image or a bucket,
//! is created once); [`Fleet::finish`] has them clean up (the first agent
//! last). Each agent's messages arrive on one channel, tagged with its index.
//!
//! Every wait is bounded by the agent timeout (`--agent-timeout`): TCP
//! connect, then the TLS and HTTP/2 handshake, then the answer to the run
//! request, each failing with an error naming the agent and what did not
//! answer; and a Ctrl-C (`stop`) ends any of them within a tick.

use crate::agents::AgentSpec;
use crate::creds::CoordinatorCreds;
use crate::rpc::agent_client::AgentClient;
use crate::server::MAX_MESSAGE;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use storbench_model::protocol::{self, FromAgent, Hello, JobShare, PrepareJobs, Secrets, ToAgent};
use storbench_model::AgentInfo;
use storbench_workload::JobSpec;
use tokio::sync::mpsc::UnboundedSender;
use tonic::transport::{Channel, Endpoint};

/// What an agent's stream brings.
pub enum Event {
    Msg(FromAgent),
    /// A Pong, stamped with our clock when it arrived (not when it was
    /// handled: with many agents, handling waits its turn).
    Pong {
        sent_unix_ns: u64,
        agent_unix_ns: u64,
        back_unix_ns: u64,
    },
    /// The stream ended or broke: why.
    Lost(String),
}

/// One connected agent.
pub struct Connection {
    pub spec: AgentSpec,
    pub info: AgentInfo,
    /// The command names a monitor lets a run stop and continue (its Hello).
    pub signals: Vec<String>,
    tx: UnboundedSender<ToAgent>,
}

impl Connection {
    /// Send a message (false once the agent is gone).
    pub fn send(&self, msg: ToAgent) -> bool {
        self.tx.send(msg).is_ok()
    }

    /// A way to send it messages from another thread.
    pub fn sender(&self) -> UnboundedSender<ToAgent> {
        self.tx.clone()
    }
}

/// What the machines of a [`Fleet`] are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Agents that run the jobs (`--agents`).
    Load,
    /// Hosts that only sample themselves (`--watch`; `storbench agent --monitor`).
    Watch,
}

impl Role {
    /// How errors name one of them.
    pub fn noun(self) -> &'static str {
        match self {
            Role::Load => "agent",
            Role::Watch => "watched host",
        }
    }

    /// Whether an agent that greeted with `hello` can serve in this role:
    /// a monitor takes no jobs, and an agent that runs load is no watcher.
    fn accepts(self, hello: &Hello) -> Result<(), String> {
        match (self, hello.monitor) {
            (Role::Load, true) => Err("this agent only watches (--monitor): list it under --watch, not --agents".into()),
            (Role::Watch, false) => Err("this agent runs load (it was started without --monitor): start it with \
                 `storbench agent --monitor` to watch its host, or list it under --agents"
                .into()),
            _ => Ok(()),
        }
    }
}

/// Every agent of a run, connected and greeted.
pub struct Fleet {
    pub agents: Vec<Connection>,
    /// What they are for (how errors name them).
    pub role: Role,
    pub events: Receiver<(usize, Event)>,
    /// How long an agent may stay silent before it is lost.
    pub timeout: Duration,
    /// Each agent's connection, once it ended (its Lost event has gone by,
    /// whoever was waiting then): why. Nothing more comes from it, and the
    /// clean-up at the end does not wait for it.
    gone: std::sync::Mutex<Vec<Option<String>>>,
    /// Every connection ended: no event can come any more.
    closed: std::sync::atomic::AtomicBool,
    /// Keeps the connections' tasks running.
    _rt: tokio::runtime::Runtime,
}

/// Pings per agent for the clock offset (the one with the least delay counts).
const PINGS: usize = 5;
/// How often a wait for the agents looks at the stop request.
const TICK: Duration = Duration::from_millis(50);
/// After a second interrupt, how long agents may take to confirm their
/// (cut short) clean-up before the coordinator writes its results without.
const FINISH_AFTER_ABORT: Duration = Duration::from_millis(500);

#[cfg(test)]
impl Fleet {
    /// A fleet of no agents, for the link's own tests.
    pub(crate) fn none() -> Fleet {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        let (gone, closed) = (Default::default(), Default::default());
        Fleet {
            agents: Vec::new(),
            role: Role::Load,
            events: std::sync::mpsc::channel().1,
            timeout: Duration::from_secs(1),
            gone,
            closed,
            _rt: rt,
        }
    }
}

impl Fleet {
    /// Connect to every agent, greet it and measure its clock; one error
    /// naming every agent that could not be used. `stop` (a Ctrl-C) ends the
    /// waiting at once.
    pub fn connect(specs: Vec<AgentSpec>, creds: CoordinatorCreds, timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Fleet, String> {
        Fleet::connect_as(specs, creds, timeout, Role::Load, stop)
    }

    /// [`Fleet::connect`], for machines of this role: each must greet as
    /// one (a monitor is refused as an agent, an agent as a watched host).
    pub fn connect_as(
        specs: Vec<AgentSpec>,
        creds: CoordinatorCreds,
        timeout: Duration,
        role: Role,
        stop: &dyn Fn() -> bool,
    ) -> Result<Fleet, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("could not start the coordinator's runtime: {e}"))?;
        let (events_tx, events) = std::sync::mpsc::channel();
        let opened = rt.block_on(async {
            let tasks: Vec<_> = specs
                .iter()
                .enumerate()
                .map(|(i, s)| tokio::spawn(open(i, s.address.clone(), creds.clone(), timeout, events_tx.clone())))
                .collect();
            let all = async {
                let mut out = Vec::new();
                for t in tasks {
                    out.push(t.await.unwrap_or_else(|e| Err(format!("connection task failed: {e}"))));
                }
                out
            };
            let mut all = std::pin::pin!(all);
            loop {
                if let Ok(out) = tokio::time::timeout(TICK, &mut all).await {
                    return Ok(out);
                }
                if stop() {
                    return Err(format!("interrupted while connecting to the {}s", role.noun()));
                }
            }
        })?;
        let mut agents = Vec::new();
        let mut errors = Vec::new();
        for (spec, r) in specs.into_iter().zip(opened) {
            match r {
                Ok(tx) => {
                    let info = AgentInfo { name: spec.name.clone(), address: spec.address.clone(), ..AgentInfo::default() };
                    agents.push(Connection { spec, info, signals: Vec::new(), tx });
                }
                Err(e) => errors.push(format!("{} {}: {e}", role.noun(), who(&spec))),
            }
        }
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        let (gone, closed) = (std::sync::Mutex::new(vec![None; agents.len()]), Default::default());
        let mut fleet = Fleet { agents, role, events, timeout, gone, closed, _rt: rt };
        fleet.greet(stop)?;
        fleet.measure_clocks(stop)?;
        Ok(fleet)
    }

    /// Hello both ways; every agent must speak our protocol version.
    fn greet(&mut self, stop: &dyn Fn() -> bool) -> Result<(), String> {
        for a in &self.agents {
            a.send(ToAgent::Hello(Hello::ours("coordinator")));
        }
        let answers = self.collect(|e| matches!(e, Event::Msg(FromAgent::Hello(_))), self.timeout, stop)?;
        let mut errors = Vec::new();
        for (a, e) in self.agents.iter_mut().zip(answers) {
            if let Event::Msg(FromAgent::Hello(h)) = e {
                match h.check().map_err(|e| e.to_string()).and_then(|()| self.role.accepts(&h)) {
                    Ok(()) => {
                        a.info.hostname = h.name.clone();
                        a.info.storbench_version = h.storbench.clone();
                        a.info.memory_bytes = h.memory_bytes;
                        a.signals = h.signals.clone();
                    }
                    Err(e) => errors.push(format!("{} {}: {e}", self.role.noun(), a.spec.name)),
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// NTP's estimate per agent: offset = agent clock - the midpoint of the
    /// round trip, from the round trip with the least delay.
    fn measure_clocks(&mut self, stop: &dyn Fn() -> bool) -> Result<(), String> {
        let mut best: Vec<Option<(u64, i64)>> = vec![None; self.agents.len()];
        for _ in 0..PINGS {
            let sent = protocol::unix_now_ns();
            for a in &self.agents {
                a.send(ToAgent::Ping { sent_unix_ns: sent });
            }
            let pongs = self.collect(|e| matches!(e, Event::Pong { .. }), self.timeout, stop)?;
            for (b, e) in best.iter_mut().zip(pongs) {
                if let Event::Pong { sent_unix_ns, agent_unix_ns, back_unix_ns: back } = e {
                    let rtt = back.saturating_sub(sent_unix_ns);
                    let offset = agent_unix_ns as i128 - (sent_unix_ns as i128 + back as i128) / 2;
                    if b.is_none_or(|(r, _)| rtt < r) {
                        *b = Some((rtt, offset as i64));
                    }
                }
            }
        }
        for (a, b) in self.agents.iter_mut().zip(best) {
            (a.info.rtt_ns, a.info.clock_offset_ns) = b.unwrap_or_default();
        }
        Ok(())
    }

    /// Have every agent plan and prepare its jobs (`jobs[i]` for agent i):
    /// the first agent alone, then the others together. Each agent's shares.
    pub fn prepare(&mut self, jobs: Vec<Vec<JobSpec>>, stop: &dyn Fn() -> bool) -> Result<Vec<Vec<JobShare>>, String> {
        let mut shares: Vec<Vec<JobShare>> = vec![Vec::new(); self.agents.len()];
        let mut jobs = jobs.into_iter().map(Some).collect::<Vec<_>>();
        let n = self.agents.len();
        for wave in [0..1.min(n), 1.min(n)..n] {
            for i in wave.clone() {
                let specs = jobs[i].take().unwrap_or_default();
                let secrets = specs.iter().map(Secrets::of).collect();
                self.agents[i].send(ToAgent::Prepare(PrepareJobs { jobs: specs, secrets }));
            }
            let mut waiting: Vec<usize> = wave.collect();
            while !waiting.is_empty() {
                if stop() {
                    return Err("stopped while the agents prepared their targets".into());
                }
                let Some((i, ev)) = self.next(Duration::from_millis(200)) else { continue };
                let name = &self.agents[i].spec.name;
                match ev {
                    Event::Msg(FromAgent::Prepared(s)) => {
                        shares[i] = s;
                        waiting.retain(|w| *w != i);
                    }
                    Event::Msg(FromAgent::Failed { message }) => return Err(format!("agent {name}: {message}")),
                    Event::Lost(why) => return Err(format!("agent {name} was lost while preparing: {why}")),
                    Event::Msg(_) | Event::Pong { .. } => {}
                }
            }
        }
        Ok(shares)
    }

    /// The run is over: every agent cleans up (the first one last); notes
    /// of what went wrong or was left, each naming its agent. `objects_left`
    /// per agent, per job. Once `aborted` (a second Ctrl-C) the agents have
    /// a moment to confirm, then are named as unconfirmed.
    pub fn finish(&mut self, objects_left: &[Vec<u64>], live: &[bool], aborted: &dyn Fn() -> bool) -> Vec<String> {
        let n = self.agents.len();
        let mut notes = Vec::new();
        for wave in [1.min(n)..n, 0..1.min(n)] {
            let mut waiting = Vec::new();
            for i in wave.filter(|i| live[*i]) {
                // An agent whose connection already ended (its session
                // failed, say, while another was being waited for) cleaned
                // up on its own or not at all: its word cannot come.
                if let Some(why) = self.gone(i) {
                    let name = &self.agents[i].spec.name;
                    notes.push(format!("agent {name} was lost before it cleaned up ({why}): check its targets"));
                } else if self.agents[i].send(ToAgent::Finish { objects_left: objects_left[i].clone() }) {
                    waiting.push(i);
                }
            }
            let deadline = Instant::now() + Duration::from_secs(600);
            let mut cut: Option<Instant> = None;
            while !waiting.is_empty() && Instant::now() < deadline {
                if aborted() && Instant::now() >= *cut.get_or_insert_with(|| Instant::now() + FINISH_AFTER_ABORT) {
                    for i in std::mem::take(&mut waiting) {
                        let name = &self.agents[i].spec.name;
                        notes.push(format!(
                            "agent {name} did not confirm its clean-up before the second interrupt ended the run: check its targets"
                        ));
                    }
                    break;
                }
                if self.closed.load(std::sync::atomic::Ordering::Relaxed) {
                    for i in std::mem::take(&mut waiting) {
                        let why = self.gone(i).unwrap_or_else(|| "its connection ended".into());
                        notes.push(format!("agent {} was lost before it cleaned up ({why}): check its targets", self.agents[i].spec.name));
                    }
                    break;
                }
                let Some((i, ev)) = self.next(Duration::from_millis(200)) else { continue };
                let name = self.agents[i].spec.name.clone();
                match ev {
                    Event::Msg(FromAgent::Finished { notes: n }) => {
                        notes.extend(n.into_iter().map(|m| format!("agent {name}: {m}")));
                        waiting.retain(|w| *w != i);
                    }
                    Event::Lost(why) if waiting.contains(&i) => {
                        notes.push(format!("agent {name} was lost before it cleaned up ({why}): check its targets"));
                        waiting.retain(|w| *w != i);
                    }
                    _ => {}
                }
            }
        }
        notes
    }

    /// The next event from any agent, if one comes within `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<(usize, Event)> {
        match self.events.recv_timeout(timeout) {
            Ok((i, e)) => {
                if let Event::Lost(why) = &e {
                    if let Some(g) = self.gone.lock().unwrap_or_else(|p| p.into_inner()).get_mut(i) {
                        *g = Some(why.clone());
                    }
                }
                Some((i, e))
            }
            Err(RecvTimeoutError::Timeout) => None,
            // Every sender lives in a connection task: all of them ended,
            // and nothing more can come. The wait is kept (a caller's loop
            // would otherwise spin until its deadline).
            Err(RecvTimeoutError::Disconnected) => {
                self.closed.store(true, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(timeout);
                None
            }
        }
    }

    /// Why agent `i`'s connection ended, if it did.
    fn gone(&self, i: usize) -> Option<String> {
        self.gone.lock().unwrap_or_else(|p| p.into_inner()).get(i).cloned().flatten()
    }

    /// One message of a kind from every agent (in agent order), or the
    /// first failure among them.
    fn collect(&self, wanted: impl Fn(&Event) -> bool, timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Vec<Event>, String> {
        let mut got: Vec<Option<Event>> = (0..self.agents.len()).map(|_| None).collect();
        let deadline = Instant::now() + timeout;
        while got.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(Instant::now());
            let silent = || {
                let names: Vec<&str> =
                    got.iter().zip(&self.agents).filter(|(g, _)| g.is_none()).map(|(_, a)| a.spec.name.as_str()).collect();
                format!("no answer within {} s from {} {}", timeout.as_secs(), self.role.noun(), names.join(", "))
            };
            if left.is_zero() {
                return Err(silent());
            }
            if stop() {
                return Err("interrupted while greeting the agents".into());
            }
            let Some((i, ev)) = self.next(left.min(TICK)) else { continue };
            let (noun, name) = (self.role.noun(), &self.agents[i].spec.name);
            match ev {
                Event::Msg(FromAgent::Failed { message }) => return Err(format!("{noun} {name}: {message}")),
                Event::Lost(why) => return Err(format!("{noun} {name}: {why}")),
                e if wanted(&e) => got[i] = Some(e),
                _ => {}
            }
        }
        Ok(got.into_iter().flatten().collect())
    }
}

/// An agent as errors name it: its name, and its address when that differs.
fn who(spec: &AgentSpec) -> String {
    if spec.name == spec.address {
        spec.name.clone()
    } else {
        format!("{} ({})", spec.name, spec.address)
    }
}

/// Open the run stream to one agent; its messages go to `events`.
async fn open(
    index: usize,
    address: String,
    creds: CoordinatorCreds,
    timeout: Duration,
    events: Sender<(usize, Event)>,
) -> Result<UnboundedSender<ToAgent>, String> {
    let channel = channel(&address, &creds, timeout).await?;
    let token = format!("Bearer {}", creds.token);
    let bearer: tonic::metadata::MetadataValue<_> = token.parse().map_err(|_| "the fleet token is not valid text".to_string())?;
    // tonic's interceptor signature returns its Status by value.
    #[allow(clippy::result_large_err)]
    let send_token = move |mut req: tonic::Request<()>| -> Result<tonic::Request<()>, tonic::Status> {
        req.metadata_mut().insert("authorization", bearer.clone());
        Ok(req)
    };
    let mut client =
        AgentClient::with_interceptor(channel, send_token).max_decoding_message_size(MAX_MESSAGE).max_encoding_message_size(MAX_MESSAGE);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let run = client.run(tokio_stream::wrappers::UnboundedReceiverStream::new(rx));
    let response = tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| {
            format!("the agent completed the TLS handshake but did not answer the run request within {} s", timeout.as_secs_f64())
        })?
        .map_err(|s| refusal(&s))?;
    let mut stream = response.into_inner();
    tokio::spawn(async move {
        let why = loop {
            match stream.message().await {
                Ok(Some(m)) => {
                    let ev = match m {
                        FromAgent::Pong { sent_unix_ns, agent_unix_ns } => {
                            Event::Pong { sent_unix_ns, agent_unix_ns, back_unix_ns: protocol::unix_now_ns() }
                        }
                        m => Event::Msg(m),
                    };
                    if events.send((index, ev)).is_err() {
                        return;
                    }
                }
                Ok(None) => break "the agent closed the connection".to_string(),
                Err(s) => break refusal(&s),
            }
        };
        let _ = events.send((index, Event::Lost(why)));
    });
    Ok(tx)
}

/// Beyond the agent timeout, before a silent handshake is told from a TCP
/// connect that timed out (which fails at the timeout itself).
const HANDSHAKE_MARGIN: Duration = Duration::from_millis(100);

async fn channel(address: &str, creds: &CoordinatorCreds, timeout: Duration) -> Result<Channel, String> {
    let endpoint = Endpoint::from_shared(format!("https://{address}"))
        .map_err(|e| format!("not an address: {e}"))?
        .tls_config(creds.tls.clone())
        .map_err(|e| format!("TLS set-up: {}", chain(&e)))?
        .connect_timeout(timeout)
        .http2_keep_alive_interval(Duration::from_secs(1))
        .keep_alive_timeout(timeout)
        .keep_alive_while_idle(true);
    // The TCP connect fails first at `timeout` (its own limit); the rest of
    // the limit's margin is the TLS and HTTP/2 handshake's.
    let limit = timeout + HANDSHAKE_MARGIN;
    let connected = tokio::time::timeout(limit, endpoint.connect()).await.map_err(|_| {
        format!(
            "the port accepts connections but no TLS and HTTP/2 handshake came within {} s (not a storbench agent, or one that is stuck)",
            timeout.as_secs_f64()
        )
    })?;
    connected.map_err(|e| {
        let why = chain(&e);
        let hint = if why.contains("certificate") {
            ": the agent's certificate is not from this fleet's CA; use the fleet directory the agent was started with"
        } else {
            ""
        };
        format!("could not connect: {why}{hint}")
    })
}

/// A gRPC status as one sentence.
fn refusal(s: &tonic::Status) -> String {
    use std::error::Error as _;
    let mut m = s.message().to_string();
    if m.is_empty() {
        m = format!("{:?}", s.code());
    }
    if let Some(src) = s.source() {
        m.push_str(&format!(": {}", chain(src)));
    }
    m
}

/// An error and its causes, "a: b: c" (TLS failures say what was wrong only in a cause).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(c) = cur {
        let s = c.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = c.source();
    }
    parts.join(": ")
}
