//! The in-process agent: starts one group's workers and forwards their messages.
//!
//! [`AgentMsg`] is the whole protocol between agents and the coordinator (it is
//! plain serde data, versioned through [`IntervalReport::VERSION`]); a remote
//! agent would carry the same messages over a connection.

use crate::plan::JobPlan;
use crate::worker::{Worker, WorkerParams};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Barrier, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_metrics::{CpuTimes, IntervalReport};

/// A worker's final word.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerDone {
    pub job: u32,
    pub worker: u32,
    /// Sequence number of its last interval report.
    pub last_seq: u64,
    /// When it stopped, in ns since the group started.
    pub end_ns: u64,
    pub cpu: CpuTimes,
    /// Set up or engine failure that ended the worker early.
    pub error: Option<String>,
}

/// Everything an agent tells the coordinator.
#[derive(Debug, Serialize, Deserialize)]
pub enum AgentMsg {
    Interval(Box<IntervalReport>),
    Done(WorkerDone),
}

pub struct LocalAgent {
    rx: Receiver<AgentMsg>,
    returns: HashMap<(u32, u32), Sender<Box<IntervalReport>>>,
    handles: Vec<JoinHandle<()>>,
    start: Arc<OnceLock<Instant>>,
}

impl LocalAgent {
    /// Spawn every worker of these jobs; they start together once all are set up.
    pub fn start(jobs: &[&JobPlan]) -> LocalAgent {
        let total: usize = jobs.iter().map(|j| j.spec.numjobs as usize).sum();
        let (tx, rx) = mpsc::sync_channel::<AgentMsg>(256 + total * 4);
        let barrier = Arc::new(Barrier::new(total));
        let start = Arc::new(OnceLock::new());
        let mut returns = HashMap::new();
        let mut handles = Vec::new();
        for job in jobs {
            let spec = Arc::new(job.spec.clone());
            for w in 0..job.spec.numjobs {
                let (ret_tx, ret_rx) = mpsc::channel();
                returns.insert((job.id, w), ret_tx);
                let params = WorkerParams {
                    job: job.id,
                    worker: w,
                    spec: spec.clone(),
                    engine: job.engine,
                    targets: job.prepared.get(w as usize).cloned().unwrap_or_default(),
                    region: job.region,
                    io_limit: job.io_limit,
                    queue_depth: job.queue_depth,
                    ramp_ns: job.ramp_ns,
                    end_ns: job.end_ns,
                    ops_per_sec: job.ops_per_sec,
                    object_prefix: job.object_prefix.clone(),
                };
                let (tx, barrier, start) = (tx.clone(), barrier.clone(), start.clone());
                let name = format!("sb-{}-{}", job.spec.name.chars().take(8).collect::<String>(), w);
                let h = std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker_main(params, tx, ret_rx, &barrier, &start))
                    .expect("spawning a worker thread");
                handles.push(h);
            }
        }
        LocalAgent { rx, returns, handles, start }
    }

    pub fn recv(&self, timeout: Duration) -> Option<AgentMsg> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Give an emptied report back to its worker for reuse.
    pub fn recycle(&self, report: Box<IntervalReport>) {
        if let Some(tx) = self.returns.get(&(report.job, report.worker)) {
            let _ = tx.send(report);
        }
    }

    /// When the workers started (after all were set up).
    pub fn started(&self) -> Option<Instant> {
        self.start.get().copied()
    }

    pub fn join(self) {
        for h in self.handles {
            let _ = h.join();
        }
    }
}

fn worker_main(
    p: WorkerParams,
    tx: SyncSender<AgentMsg>,
    spare: Receiver<Box<IntervalReport>>,
    barrier: &Barrier,
    start: &OnceLock<Instant>,
) {
    let (job, worker) = (p.job, p.worker);
    let ready = Worker::set_up(p, tx.clone(), spare);
    // Every worker waits, set up or not, so that none waits forever.
    if barrier.wait().is_leader() {
        let _ = start.set(Instant::now());
    }
    barrier.wait();
    let clock = crate::clock::Clock::at(*start.get().expect("set by the barrier leader"));
    let done = match ready {
        Ok(w) => w.run(clock),
        Err(error) => WorkerDone { job, worker, last_seq: 0, end_ns: 0, cpu: CpuTimes::default(), error: Some(error) },
    };
    let _ = tx.send(AgentMsg::Done(done));
}
