//! The coordinator's cost of merging a big fleet's per-second histograms.
//!
//! `merge_load serve ADDR FLEET_DIR` is a simulated agent service: every
//! stream that connects is one agent with one worker, which after `Start`
//! sends a prepared interval report (a realistic latency histogram) every
//! second and then `Done`. `merge_load coordinate ADDR FLEET_DIR AGENTS
//! SECONDS` is the real coordinator (Fleet, FleetLink, the runner's own
//! merge) connected AGENTS times to that service; it prints its own CPU
//! time per second of run and its peak memory. bench/fleet_merge.py runs both.

use std::time::{Duration, Instant};
use storbench_fleet::agents::AgentSpec;
use storbench_fleet::client::Fleet;
use storbench_fleet::link::{FleetLink, OnLost};
use storbench_fleet::rpc::agent_server::{Agent, AgentServer};
use storbench_metrics::IntervalReport;
use storbench_model::protocol::{FromAgent, Hello, JobShare, ToAgent, WorkerDone, WorkerId};
use storbench_model::Targets;
use storbench_runner::interrupt::Scope;
use storbench_runner::{build_plan, run_plan_on, Silent};
use storbench_workload::gen::Region;
use storbench_workload::{JobSpec, OpKind};
use tokio::sync::mpsc::Sender;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

/// Operations in each simulated interval report.
const IOS_PER_REPORT: u64 = 20_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("serve") => serve(&args[2], &args[3]),
        Some("coordinate") => coordinate(&args[2], &args[3], args[4].parse().unwrap(), args[5].parse().unwrap()),
        _ => eprintln!("usage: merge_load serve ADDR FLEET_DIR | coordinate ADDR FLEET_DIR AGENTS SECONDS"),
    }
}

/// One second of one worker: 20,000 reads, latencies spread over 50 us..5 ms.
fn report() -> IntervalReport {
    let mut r = IntervalReport::new(0, 0, false);
    let op = r.op(OpKind::Read);
    for i in 0..IOS_PER_REPORT {
        let spread = (i.wrapping_mul(7919) % 1000) as f64 / 10.0;
        op.record(4096, (50_000.0 * (1.0 + spread)) as u64, 0);
    }
    r
}

struct Sim;

#[tonic::async_trait]
impl Agent for Sim {
    type RunStream = ReceiverStream<Result<FromAgent, Status>>;

    async fn run(&self, request: Request<Streaming<ToAgent>>) -> Result<Response<Self::RunStream>, Status> {
        let (out, rx) = tokio::sync::mpsc::channel(64);
        let mut incoming = request.into_inner();
        tokio::spawn(async move {
            let mut seconds = 0u64;
            while let Ok(Some(msg)) = incoming.message().await {
                let reply = match msg {
                    ToAgent::Hello(_) => Some(FromAgent::Hello(Hello::ours("sim"))),
                    ToAgent::Ping { sent_unix_ns } => {
                        Some(FromAgent::Pong { sent_unix_ns, agent_unix_ns: storbench_model::protocol::unix_now_ns() })
                    }
                    ToAgent::Prepare(p) => {
                        let spec = p.jobs.into_iter().next().unwrap();
                        seconds = spec.runtime.unwrap().as_secs();
                        Some(FromAgent::Prepared(vec![share(spec)]))
                    }
                    ToAgent::Assign(_) => Some(FromAgent::Ready(WorkerId { job: 0, worker: 0 })),
                    ToAgent::Start { .. } => {
                        tokio::spawn(intervals(out.clone(), seconds));
                        None
                    }
                    ToAgent::Finish { .. } => Some(FromAgent::Finished { notes: Vec::new() }),
                    ToAgent::Stop | ToAgent::Abort | ToAgent::StopJob { .. } | ToAgent::Signal { .. } => None,
                };
                if let Some(r) = reply {
                    if out.send(Ok(r)).await.is_err() {
                        break;
                    }
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

fn share(spec: JobSpec) -> JobShare {
    JobShare {
        job: 0,
        workers: 1,
        rank_base: 0,
        ranks: 0,
        queue_depth: 1,
        region: Region { files: 1, start: 0, len: 1 << 30, end: 0 },
        io_limit: None,
        ramp_ns: 0,
        end_ns: spec.runtime.map(|d| d.as_nanos() as u64),
        ops_per_sec: None,
        object_prefix: None,
        targets: Targets::None,
        spec,
    }
}

/// One report a second, then Done.
async fn intervals(out: Sender<Result<FromAgent, Status>>, seconds: u64) {
    let template = report();
    for seq in 0..seconds {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut r = template.clone();
        (r.seq, r.start_ns, r.end_ns) = (seq, seq * 1_000_000_000, (seq + 1) * 1_000_000_000);
        if out.send(Ok(FromAgent::Interval(Box::new(r)))).await.is_err() {
            return;
        }
    }
    let done = WorkerDone {
        last_seq: Some(seconds - 1),
        end_ns: seconds * 1_000_000_000,
        error: None,
        ..WorkerDone::failed(WorkerId { job: 0, worker: 0 }, "")
    };
    let _ = out.send(Ok(FromAgent::Done(done))).await;
}

fn serve(addr: &str, dir: &str) {
    let creds = storbench_fleet::creds::agent(std::path::Path::new(dir), false).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let server = AgentServer::new(Sim).max_decoding_message_size(256 << 20).max_encoding_message_size(256 << 20);
        tonic::transport::Server::builder()
            .tls_config(creds.tls)
            .unwrap()
            .http2_keepalive_interval(Some(Duration::from_secs(1)))
            .add_service(server)
            .serve(addr.parse().unwrap())
            .await
            .unwrap();
    });
}

fn cpu_ns() -> u64 {
    // SAFETY: getrusage writes into the struct we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    t(u.ru_utime) + t(u.ru_stime)
}

fn max_rss_mib() -> f64 {
    // SAFETY: as above.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    u.ru_maxrss as f64 / 1024.0
}

fn coordinate(addr: &str, dir: &str, agents: usize, seconds: u64) {
    if std::env::var_os("MERGE_LOAD_NO_MMAP").is_some() {
        // SAFETY: mallopt only changes allocator parameters.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        }
    }
    let creds = storbench_fleet::creds::coordinator(std::path::Path::new(dir)).unwrap();
    let specs: Vec<AgentSpec> = (0..agents).map(|i| AgentSpec { name: format!("sim{i}"), address: addr.into(), options: vec![] }).collect();
    let t0 = Instant::now();
    let mut fleet = Fleet::connect(specs, creds, Duration::from_secs(60), &|| false).unwrap();
    let connect_s = t0.elapsed().as_secs_f64();
    let mut spec = JobSpec { name: "sim".into(), ioengine: "null".into(), ..JobSpec::default() };
    spec.runtime = Some(Duration::from_secs(seconds));
    let plan = build_plan(vec![spec.clone()]).unwrap();
    let shares = fleet.prepare((0..agents).map(|_| vec![spec.clone()]).collect(), &|| false).unwrap();
    let workers = FleetLink::total_workers(&shares);
    let prepared = plan.prepared_elsewhere(shares[0].clone(), &workers).unwrap();
    let mut link = FleetLink::new(&mut fleet, shares, OnLost::Continue);
    let (cpu0, wall0) = (cpu_ns(), Instant::now());
    let result = run_plan_on(&mut link, &prepared, &mut Silent, &Scope::begin());
    let (cpu, wall) = (cpu_ns() - cpu0, wall0.elapsed().as_secs_f64());
    let ios = result.jobs[0].op(OpKind::Read).map_or(0, |o| o.ios);
    assert_eq!(ios, agents as u64 * seconds * IOS_PER_REPORT, "every report merged");
    println!(
        "agents {agents} seconds {seconds} connect_s {connect_s:.2} wall_s {wall:.2} cpu_s {:.3} cpu_pct {:.1} us_per_agent_second {:.1} max_rss_mib {:.0} points {}",
        cpu as f64 / 1e9,
        cpu as f64 / 1e9 / wall * 100.0,
        cpu as f64 / 1e3 / (agents as f64 * seconds as f64),
        max_rss_mib(),
        result.jobs[0].series.len()
    );
}
