//! A fleet: many client machines as one run.
//!
//! `storbench agent` serves the run protocol (`storbench_model::protocol`)
//! over gRPC with TLS and a fleet token ([`server`]); a coordinator connects
//! to every agent ([`client`]), has each plan and prepare the jobs on its own
//! machine, and runs the plan over a [`link::FleetLink`]: one `AgentLink`
//! that fans the protocol out to the agents and merges their workers into
//! one run (worker numbers made global; histograms merged by the
//! coordinator exactly as for local workers). Watched hosts
//! (`storbench agent --monitor`, [`monitor`]) only sample themselves from
//! the run's start; the coordinator's [`watch::WatchedLink`] gives them
//! the starts and keeps their seconds, for a local run or a fleet's.

pub mod agents;
pub mod client;
pub mod codec;
pub mod creds;
mod gate;
pub mod link;
pub mod monitor;
pub mod prometheus;
pub mod server;
mod session;
pub mod ssh;
pub mod watch;

/// The generated gRPC client and server (see build.rs).
pub mod rpc {
    include!(concat!(env!("OUT_DIR"), "/storbench.fleet.Agent.rs"));
}

/// The name every agent certificate carries and every coordinator checks:
/// trust comes from the fleet's own CA, not from host names, so agents can
/// be reached by any address (an IP, a tunnel, a pod).
pub const AGENT_SERVER_NAME: &str = "storbench-agent";

/// The port an agent listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 7450;
