//! The command tree and every command's own flags, parsed by clap; help and
//! usage are generated from these definitions. fio-style job options
//! (`--rw`, `--bs`, `--iodepth`...) are not clap flags: they come from the one
//! option table (`storbench_workload::options`), and [`crate::words`] sets
//! them apart before clap sees the rest.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "storbench",
    version,
    about = "Storage benchmarking for files, block devices, Ceph RBD and RADOS, S3 and Swift",
    long_about = "Storage benchmarking for files, block devices, Ceph RBD and RADOS, S3 and Swift: one workload model, \
                  full latency histograms, per-second series, its own CPU cost. With no command, runs the quick suite \
                  on a scratch file in this directory.",
    disable_help_subcommand = true,
    after_help = "Job options (fio's names: --rw --bs --iodepth ...): `storbench help options`.\n\
                  Exit codes: 0 ok, 1 I/O errors, 2 bad input, 3 system failure, 4 a compare gate failed, 130 interrupted (results still written)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run jobs: the quick suite, a TOML or fio job file, an ssbench scenario, or jobs from flags
    Run(RunFlags),
    /// Replay a trace at its recorded times: a block trace (fio iolog v2/v3, blkparse output) onto files, devices, RBD or NBD, or an object-store log (RGW ops log, Swift proxy log, S3 access log) onto s3, swift or rados
    Replay(ReplayFlags),
    /// Run the same jobs over a grid of option values, stopping each curve at its knee
    Sweep(SweepFlags),
    /// A whole experiment as one command: a study file's questions (sweeps, SLO searches, baselines, ramps, tools) over its configurations, one report
    Study(StudyArgs),
    /// The highest fixed rate whose latency percentile stays under a bound (open loop)
    Slo(SloFlags),
    /// Compare results (runs, repeats or sweeps) with confidence intervals
    Compare(CompareArgs),
    /// A run's figures against the ceiling of the devices under the store (replicas or erasure coding counted)
    Efficiency(EfficiencyArgs),
    /// What raw devices can do (read-only unless --allow-writes), kept as a run for `efficiency --baseline`
    Baseline(BaselineArgs),
    /// One self-contained HTML report of a run, a sweep, an SLO search, or a comparison of several
    Report(ReportArgs),
    /// Print a results directory again, in any format
    Show(ShowArgs),
    /// Runs, sweeps, SLO searches and studies as one table: a row per point and job, every swept value a column (CSV or JSON)
    Export(ExportArgs),
    /// Remove what a run left behind (from its results directory's journal), or storbench's objects under a prefix
    Cleanup(CleanupArgs),
    /// rbd's benchmark (rbd bench), with latency percentiles
    Rbd {
        #[command(subcommand)]
        command: RbdCommand,
    },
    /// rados' benchmark tools (bench, cleanup, load-gen), with latency percentiles
    Rados(RadosArgs),
    /// swift-bench's PUT, GET and DELETE phases, with latency percentiles
    SwiftBench(SwiftBenchArgs),
    /// fio's command line and outputs (also when this binary is called as `fio`)
    Fio(FioFlags),
    /// Help: on a command, or `options` for every job option
    Help {
        /// A command, or `options` (`options --markdown`: the README's list)
        #[arg(allow_hyphen_values = true, trailing_var_arg = true)]
        topic: Vec<String>,
    },
    /// Serve runs for a coordinator on another machine (a fleet agent), or make a fleet's credentials (--init)
    Agent(AgentArgs),
    /// Launch helpers for fleets: Kubernetes manifests
    Fleet {
        #[command(subcommand)]
        command: FleetCommand,
    },
    /// Engines and their own options
    Engines,
    /// The version
    Version,
}

/// Where the jobs of `run`, `sweep` and `slo` come from, and where results go.
#[derive(Args, Clone, Debug, Default)]
pub struct JobSource {
    /// A TOML job file ([global] and [[job]] tables)
    #[arg(value_name = "JOBS.toml")]
    pub job_file: Option<PathBuf>,
    /// A TOML job file (as the positional argument)
    #[arg(long = "job", visible_alias = "jobfile", value_name = "JOBS.toml", conflicts_with = "job_file")]
    pub job: Option<PathBuf>,
    /// Where results go (default storbench-results/<time>)
    #[arg(long = "results-dir", visible_aliases = ["output", "output-dir"], value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Replace the results of an earlier run in --results-dir (else refused)
    #[arg(long)]
    pub force: bool,
    /// Do not sample the hosts' CPU, disks, network, memory and pressure once a second
    #[arg(long)]
    pub no_telemetry: bool,
    /// Jobs from a fio job file
    #[arg(long, value_name = "JOB.fio")]
    pub fio: Option<PathBuf>,
    /// Drop fio options storbench does not support, with a note
    #[arg(long = "fio-allow-unsupported")]
    pub fio_allow_unsupported: bool,
    /// The built-in suite (flags after it override its options)
    #[arg(long, value_name = "quick", value_parser = parse_suite)]
    pub suite: Option<String>,
    /// No live progress
    #[arg(long)]
    pub quiet: bool,
    /// Serve the live figures for Prometheus at http://ADDR/metrics (by job, operation and agent; the hosts' telemetry and the faults too)
    #[arg(long, value_name = "ADDR:PORT")]
    pub prometheus: Option<std::net::SocketAddr>,
    /// Inject a fault at a time of the run: osd-out:N, osd-in:N, osd-down:N (through the Ceph monitors), net-loss:NIC:PCT, net-cut:NIC (nftables), net-delay:NIC:MS (netem), net-restore:NIC, on this machine's NIC, exec:COMMAND, proc-stop:PROCESS[@HOST], proc-cont:PROCESS[@HOST] (SIGSTOP/SIGCONT, here or on a --watch host whose monitor allows it; these three with --allow-exec); repeat for a schedule
    #[arg(long = "fault", value_name = "TIME:ACTION[:ARG]")]
    pub faults: Vec<String>,
    /// Let --fault run shell commands (exec:COMMAND) and stop processes (proc-stop), and ioengine=exec jobs run their programs
    #[arg(long = "allow-exec")]
    pub allow_exec: bool,
    /// Read the Ceph cluster's own counters once a second (pg stat, osd perf, osd stat): the cluster of the run's rados or rbd jobs, or the one CEPH.conf names (a file not named *.conf: --watch-ceph=PATH)
    #[arg(long = "watch-ceph", value_name = "CEPH.conf", num_args = 0..=1, default_missing_value = "")]
    pub watch_ceph: Option<String>,
    /// Read an exporter's Prometheus endpoint once a second and keep its series with the run (Ceph's mgr prometheus module, node_exporter; counters as rates per second); repeat for several
    #[arg(long = "scrape", value_name = "URL")]
    pub scrape: Vec<String>,
    /// The metric names --scrape keeps (* matches any run of characters); default: every series, up to 2,000 an endpoint
    #[arg(long = "scrape-keep", value_name = "NAME,...", value_delimiter = ',')]
    pub scrape_keep: Vec<String>,
    /// A `storbench baseline --network` run: name a client NIC that carried 90% of what it measured over its link as the run's limit
    #[arg(long = "network-baseline", value_name = "DIR")]
    pub network_baseline: Option<PathBuf>,
    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// Running the jobs on agents (`storbench agent`) instead of this machine.
#[derive(Args, Clone, Debug, Default)]
pub struct FleetArgs {
    /// Run on these agents (HOST[:PORT],...) as one run, histograms merged exactly
    #[arg(long, value_name = "HOST[:PORT],...", conflicts_with = "agents_file")]
    pub agents: Option<String>,
    /// Run on the agents of this file: one a line, `ADDRESS [name=NAME] [option=value ...]`
    #[arg(long = "agents-file", value_name = "FILE")]
    pub agents_file: Option<PathBuf>,
    /// The fleet directory made by `storbench agent --init` (default $STORBENCH_FLEET_DIR or ~/.config/storbench/fleet)
    #[arg(long = "fleet-dir", value_name = "DIR")]
    pub fleet_dir: Option<PathBuf>,
    /// When an agent is lost mid-run: continue with the others, or abort (stop them); the run is partial either way
    #[arg(long = "on-lost", value_name = "continue|abort", default_value = "continue", value_parser = ["continue", "abort"])]
    pub on_lost: String,
    /// An agent silent this long is lost
    #[arg(long = "agent-timeout", value_name = "TIME", default_value = "10s", value_parser = seconds)]
    pub agent_timeout: std::time::Duration,
    /// Each job's numjobs is the total, shared out among the agents (default: numjobs on every agent)
    #[arg(long = "share-numjobs")]
    pub share_numjobs: bool,
    /// Start an agent on each of these hosts over SSH for this command (fresh credentials), remove it afterwards
    #[arg(long, value_name = "[USER@]HOST,...", conflicts_with_all = ["agents", "agents_file", "fleet_dir"])]
    pub ssh: Option<String>,
    /// Also watch these hosts (HOST[:PORT],..., each running `storbench agent --monitor`): their CPU, disks and network per second, on the run's axis
    #[arg(long, value_name = "HOST[:PORT],...")]
    pub watch: Option<String>,
    /// The ssh command and its options, e.g. "ssh -i ~/.ssh/bench -p 2222"
    #[arg(long = "ssh-command", value_name = "CMD", default_value = "ssh", requires = "ssh")]
    pub ssh_command: String,
    /// A storbench already on the hosts (default: this binary is copied for the command)
    #[arg(long = "ssh-binary", value_name = "PATH", requires = "ssh")]
    pub ssh_binary: Option<String>,
}

/// `storbench fleet`: ways to start a fleet's agents (and its coordinator).
#[derive(Subcommand, Debug)]
pub enum FleetCommand {
    /// A Kubernetes manifest for `kubectl apply -f`: agents as an Indexed Job, a coordinator Job for a job file
    K8s(crate::k8s::K8sArgs),
}

/// `storbench study`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  storbench study my-study.toml --results-dir s1 --set dir=/mnt/test\n  storbench study my-study.toml --dry-run\n  storbench study --builtin sheepdog --set dir=/mnt/test --scale 0.1\n  storbench study --resume s1"
)]
pub struct StudyArgs {
    /// The study file (TOML: [study], [vars], [configs.NAME], [[question]])
    #[arg(value_name = "STUDY.toml", conflicts_with = "builtin")]
    pub file: Option<PathBuf>,
    /// A built-in study reproducing a field report
    #[arg(long, value_name = "NAME")]
    pub builtin: Option<String>,
    /// Go on with a stopped study: finished steps are kept
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// A variable's value (${NAME} in the study's words); repeat for more
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Multiply the run times, sizes and counts the study's [study] scale names
    #[arg(long, value_name = "X", value_parser = crate::numbers::study_scale)]
    pub scale: Option<f64>,
    /// Where results go (default storbench-results/<time>)
    #[arg(long = "results-dir", visible_aliases = ["output", "output-dir"], value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Print every step's command and the time it should take; run nothing
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// No live progress
    #[arg(long)]
    pub quiet: bool,
}

/// `storbench baseline`.
#[derive(Args, Debug)]
#[command(after_help = "Runs 4 KiB random reads at QD32 and 1 MiB sequential reads at QD8 (with --allow-writes also the \
writes) on each device, direct, io_uring, one after another.")]
pub struct BaselineArgs {
    /// Block devices (or files) under the store
    #[arg(value_name = "DEVICE", required_unless_present = "network")]
    pub devices: Vec<String>,
    /// The network to these agents (their --net-port service): round trips, and throughput each way
    #[arg(long, value_delimiter = ',', value_name = "HOST[:PORT],...")]
    pub network: Vec<String>,
    /// TCP streams each way per agent
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub streams: u32,
    /// The fleet directory whose token the agents check (default $STORBENCH_FLEET_DIR or ~/.config/storbench/fleet)
    #[arg(long = "fleet-dir", value_name = "DIR")]
    pub fleet_dir: Option<PathBuf>,
    /// Also measure writes: DESTROYS the data on the devices
    #[arg(long = "allow-writes")]
    pub allow_writes: bool,
    /// Measured time per job (after 2 s of warm-up)
    #[arg(long, value_name = "TIME", default_value = "20s", value_parser = seconds)]
    pub runtime: std::time::Duration,
    /// Where results go (default storbench-results/<time>)
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Replace the results of an earlier run in --results-dir (else refused)
    #[arg(long)]
    pub force: bool,
    /// No live progress
    #[arg(long)]
    pub quiet: bool,
}

/// `storbench efficiency`.
#[derive(Args, Debug)]
#[command(after_help = "Example: storbench efficiency cluster-run/ --baseline one-ssd-run/ --devices 28 --replicas 3")]
pub struct EfficiencyArgs {
    /// The run to judge (a results directory; a sweep, an SLO search or a directory of runs: each run, by its directory)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// A `storbench baseline` run on one raw device of the store: its best read and write figures are one device's
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// Devices the store's data lives on
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub devices: u32,
    /// Copies of every write (replicated pools, mirrors)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100), conflicts_with = "ec")]
    pub replicas: u32,
    /// Erasure coding K+M instead of replicas
    #[arg(long, value_name = "K+M")]
    pub ec: Option<String>,
    /// One device's read IOPS (instead of, or over, the baseline's)
    #[arg(long = "device-read-iops", value_name = "IOPS", value_parser = crate::numbers::device_iops)]
    pub device_read_iops: Option<f64>,
    /// One device's write IOPS
    #[arg(long = "device-write-iops", value_name = "IOPS", value_parser = crate::numbers::device_iops)]
    pub device_write_iops: Option<f64>,
    /// One device's read bandwidth, MiB/s
    #[arg(long = "device-read-mibs", value_name = "MIB/S", value_parser = crate::numbers::device_mibs)]
    pub device_read_mibs: Option<f64>,
    /// One device's write bandwidth, MiB/s
    #[arg(long = "device-write-mibs", value_name = "MIB/S", value_parser = crate::numbers::device_mibs)]
    pub device_write_mibs: Option<f64>,
}

/// `storbench agent`.
#[derive(Args, Debug)]
#[command(after_help = "Make the fleet's credentials once (`storbench agent --init DIR`), copy DIR to every agent and the \
coordinator, start `storbench agent --fleet-dir DIR` on each client machine, then `storbench run --agents HOST,... --fleet-dir DIR`.")]
pub struct AgentArgs {
    /// Make a fleet directory (CA, agent and coordinator certificates, token) and exit
    #[arg(long, value_name = "DIR")]
    pub init: Option<PathBuf>,
    /// With --init: more names or addresses for the agents' certificate
    #[arg(long, value_delimiter = ',', value_name = "HOST,...", requires = "init")]
    pub host: Vec<String>,
    /// Address to listen on
    #[arg(long, default_value = "0.0.0.0:7450", value_name = "ADDR:PORT")]
    pub listen: std::net::SocketAddr,
    /// The fleet directory (default $STORBENCH_FLEET_DIR or ~/.config/storbench/fleet)
    #[arg(long = "fleet-dir", value_name = "DIR")]
    pub fleet_dir: Option<PathBuf>,
    /// Ask coordinators for a client certificate of the fleet's CA instead of the token
    #[arg(long)]
    pub mtls: bool,
    /// This agent's name in logs and results (default: the host name)
    #[arg(long)]
    pub name: Option<String>,
    /// A coordinator silent this long is gone: its run is stopped and cleaned up
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = seconds)]
    pub timeout: std::time::Duration,
    /// Serve one run, then exit
    #[arg(long)]
    pub once: bool,
    /// Only watch this host for runs that list it under --watch (a storage server): no jobs, its CPU, disks and network per second
    #[arg(long, conflicts_with = "init")]
    pub monitor: bool,
    /// With --monitor: let runs stop and continue this host's processes of these command names (--fault 10s:proc-stop:NAME@HOST); none unless named
    #[arg(long = "allow-signal", value_delimiter = ',', value_name = "NAME,...", requires = "monitor")]
    pub allow_signal: Vec<String>,
    /// Port of the network service beside the agent (storbench baseline --network); 0: none [default: --listen's port + 1]
    #[arg(long = "net-port", value_name = "PORT")]
    pub net_port: Option<u16>,
    /// Claim another run protocol version (tests of the refusal)
    #[arg(long = "protocol-version", hide = true)]
    pub protocol_version: Option<u32>,
    /// Pretend the clock is off by this many ms (tests of clock skew)
    #[arg(long = "clock-skew-ms", hide = true, allow_hyphen_values = true)]
    pub clock_skew_ms: Option<i64>,
    /// Say this host has this much memory (tests of --rules mlperf on a fleet)
    #[arg(long = "memory-bytes", hide = true)]
    pub memory_bytes: Option<u64>,
    /// Remove this directory when the agent exits (agents launched over SSH)
    #[arg(long = "remove-on-exit", hide = true, value_name = "DIR")]
    pub remove_on_exit: Option<PathBuf>,
}

/// `storbench run`'s own flags. Job options (fio's names) may be mixed in:
/// `--name` starts a job, options before the first `--name` apply to all.
#[derive(Args, Debug, Default)]
#[command(after_help = "Job options (fio's names, e.g. --name a --rw randread --bs 4k --iodepth 32): `storbench help options`.")]
pub struct RunFlags {
    #[command(flatten)]
    pub source: JobSource,
    #[arg(long = "output-format", value_name = "FORMAT", value_parser = parse_stdout_format, help = stdout_help())]
    pub format: Option<String>,
    /// An ssbench scenario, run as it is
    #[arg(long, value_name = "SCENARIO.json")]
    pub ssbench: Option<PathBuf>,
    /// Repeat the ssbench scenario with these user counts until throughput falls
    #[arg(long, value_name = "4,8,16", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    pub users: Vec<u32>,
    /// First write every block target twice over in 128 KiB sequential writes (SNIA's workload-independent preconditioning)
    #[arg(long)]
    pub precondition: bool,
    /// First fill every target to this share (80% or 0.8): blocks in 1 MiB writes, pools of their capacity, buckets of the job's objects; the store's accounting is checked
    #[arg(long, value_name = "PCT", value_parser = crate::numbers::fraction, conflicts_with = "precondition")]
    pub fill: Option<f64>,
    /// An AI workload: train:MODEL[:ACCELERATOR] (unet3d, resnet50, cosmoflow, retinanet, flux, dlrm on h100, a100, b200, mi355 where MLPerf Storage defines them; emulated accelerators; samples/s and utilization) or checkpoint:llama3-8b|llama3-70b|llama3-405b|llama3-1t, or kvcache:option1|option2|option3|MODEL (an LLM's KV-cache tier on the file or device: tokens/s, request latency), or vectordb:1m|10m|1m-512 (MLPerf Storage's VectorDB collections as a DiskANN index under query processes: queries/s, request latency)
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// The share of the preset to keep, to fit this machine: of training's samples (sample size and compute kept), of a checkpoint's bytes, of a KV-cache run's users, of a vector collection's vectors (its segments kept)
    #[arg(long, value_name = "SHARE", default_value_t = 1.0, requires = "preset", value_parser = crate::numbers::scale)]
    pub scale: f64,
    /// Emulated accelerators (training), ranks (checkpoint), clients (KV cache) or query processes (vectordb) on this machine (default: 1, or the checkpoint's ranks)
    #[arg(long, value_name = "N", requires = "preset", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub accelerators: Option<u32>,
    /// Vector search (vectordb presets): queries a request, searched at once (the reference's --batch-size; default 1)
    #[arg(long = "query-batch", value_name = "N", requires = "preset", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub query_batch: Option<u32>,
    /// Training epochs (default: the preset's)
    #[arg(long, value_name = "N", requires = "preset", value_parser = clap::value_parser!(u32).range(1..))]
    pub epochs: Option<u32>,
    /// Training: find the most accelerators whose run still reaches the preset's utilization floor (doubling, then halving the gap)
    #[arg(long = "find-accelerators", requires = "preset", conflicts_with = "accelerators")]
    pub find_accelerators: bool,
    /// KV cache: find the most users a client serves with that share of requests within the bound (p95=2s: 95% of requests served within 2 s of their arrival; one that waited past it by the end missed it), doubling, then halving the gap; a probe lasts the job's --runtime
    #[arg(long = "find-users", value_name = "pNN=TIME", requires = "preset", conflicts_with_all = ["find_accelerators", "rules"])]
    pub find_users: Option<String>,
    /// Training under a benchmark's run rules: mlperf (MLPerf Storage: one warm-up and five measured runs, the dataset at least 5x the clients' memory and 500 steps an epoch, AU above the floor in every run; a verdict naming each rule; with --find-accelerators, the most accelerators that keep the floor)
    #[arg(long, value_name = "RULES", requires = "preset", value_parser = ["mlperf"])]
    pub rules: Option<String>,
    /// --rules: each client's memory the dataset is sized against (mlpstorage's --client-host-memory-in-gb; default: this host's MemTotal, on a fleet each agent's, summed)
    #[arg(long = "client-memory", value_name = "SIZE", requires = "rules", value_parser = crate::numbers::memory)]
    pub client_memory: Option<u64>,
    /// --rules: run even where the rules' parameters are not met (mlpstorage's flag): the verdict says invalid
    #[arg(long = "allow-invalid-params", requires = "rules")]
    pub allow_invalid_params: bool,
}

/// `storbench replay`'s own flags; job options (--filename, --ioengine,
/// --iodepth...) say where and how the trace is replayed.
#[derive(Args, Debug, Default)]
#[command(after_help = "Example: storbench replay trace.log --filename /tmp/scratch --size 1g --time-scale 2\n\
                  The trace's own files and devices are never opened: its files land on the job's (--filename, or files \
                  of its own), offsets past --size wrap. Defaults: io_uring at iodepth 32 where the kernel allows it.")]
pub struct ReplayFlags {
    /// The trace: a fio iolog (version 2, or 3 with times; fio's write_iolog), blkparse's text output, an RGW ops log, a Swift proxy log or S3 server access logs
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Pace against the trace's: 2 replays twice as fast, 0.5 at half speed
    #[arg(long = "time-scale", default_value_t = 1.0, value_name = "X", value_parser = crate::numbers::time_scale)]
    pub time_scale: f64,
    /// Issue as fast as the queue depth allows, ignoring the trace's times
    #[arg(long = "no-stall")]
    pub no_stall: bool,
    #[arg(long = "output-format", value_name = "FORMAT", value_parser = parse_stdout_format, help = stdout_help())]
    pub format: Option<String>,
    /// Where results go (default storbench-results/<time>)
    #[arg(long = "results-dir", visible_aliases = ["output", "output-dir"], value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Replace the results of an earlier run in --results-dir (else refused)
    #[arg(long)]
    pub force: bool,
    /// No live progress
    #[arg(long)]
    pub quiet: bool,
}

/// `storbench sweep`'s own flags: a job source as `run` takes it, and the
/// dimensions.
#[derive(Args, Debug, Default)]
#[command(after_help = "Example: storbench sweep --name r --rw randread --filename f --size 1g --ioengine io_uring --direct 1 \
                  --runtime 10 --sweep numjobs=1,2,4 --sweep iodepth=1..256x2")]
pub struct SweepFlags {
    #[command(flatten)]
    pub source: JobSource,
    /// A swept option and its values: a list (1,2,4), a range with a geometric step (1..256x2) or a linear one (4k..64k+4k); repeat for a grid
    #[arg(long = "sweep", value_name = "OPTION=VALUES")]
    pub sweep: Vec<String>,
    /// Vary one dimension at a time from the first value of each, instead of every combination
    #[arg(long = "one-at-a-time")]
    pub one_at_a_time: bool,
    /// Run every point this many times (tables show the median)
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Run the points in random order (spreads drift over the grid; knees are then not searched)
    #[arg(long)]
    pub shuffle: bool,
    /// Seed of --shuffle (default: from the clock; kept in sweep.json)
    #[arg(long, value_name = "N", requires = "shuffle")]
    pub seed: Option<u64>,
    /// A curve stops once a step gains less than this percentage of IOPS while mean latency grows as much
    #[arg(long = "knee-gain", default_value_t = 5.0, value_name = "PCT", value_parser = crate::numbers::knee_gain)]
    pub knee_gain: f64,
    /// Run every point (no knee search)
    #[arg(long = "no-knee")]
    pub no_knee: bool,
    /// A ceiling on the hosts (cpu, core, iowait or disk over PERCENT, a host's mean over the run): a point over it is the last of its curve; repeat for several
    #[arg(long = "stop-if", value_name = "RESOURCE>PCT", value_parser = storbench_model::ceiling::Ceiling::parse)]
    pub stop_if: Vec<storbench_model::ceiling::Ceiling>,
    /// First write every block target twice over in 128 KiB sequential writes, once before the points (as run --precondition)
    #[arg(long)]
    pub precondition: bool,
    /// First fill every target to this share (80% or 0.8), once before the points (as run --fill)
    #[arg(long, value_name = "PCT", value_parser = crate::numbers::fraction, conflicts_with = "precondition")]
    pub fill: Option<f64>,
    /// With --precondition or --fill: before every point instead of once (a pool's or bucket's fill needs it: it is removed after its run)
    #[arg(long = "each-point")]
    pub each_point: bool,
    /// Continue an interrupted sweep in DIR (its command line is in DIR/sweep.json)
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
}

/// `storbench slo`'s own flags: a job source as `run` takes it, and the bound.
#[derive(Args, Debug, Default)]
#[command(after_help = "Example: storbench slo --latency p99=2ms --name r --rw randread --bs 8k --filename f --size 1g \
                  --ioengine io_uring --direct 1 --iodepth 64")]
pub struct SloFlags {
    #[command(flatten)]
    pub source: JobSource,
    /// The bound: PERCENTILE=TIME (p99=2ms, p99.9=500us) or mean=TIME, of latency from each operation's intended start
    #[arg(long, value_name = "pNN=TIME|mean=TIME", required_unless_present = "resume")]
    pub latency: Option<String>,
    /// Go on with an interrupted or killed search: its finished probes are kept, the rest run
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Seconds per probe (longer when the percentile needs more operations)
    #[arg(long = "probe-time", default_value = "5", value_name = "SECONDS", value_parser = seconds)]
    pub probe_time: std::time::Duration,
    /// At most this many probes (the closed-loop one included; 3 to 1000: one measures capacity, two bisect)
    #[arg(long = "max-probes", default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(3..=1000))]
    pub max_probes: u32,
    /// Stop bisecting once the pass/fail interval is this narrow (percent of the rate)
    #[arg(long, default_value_t = 2.0, value_name = "PCT", value_parser = crate::numbers::precision)]
    pub precision: f64,
    /// Search the queue depth instead, closed loop (fio's latency_target question; latency from each I/O's issue)
    #[arg(long = "closed-loop")]
    pub closed_loop: bool,
    /// With --closed-loop: the deepest queue tried
    #[arg(long = "max-iodepth", default_value_t = 256, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_iodepth: u32,
    /// A ceiling on the hosts (cpu, core, iowait or disk over PERCENT, a host's mean over the probe): a probe over it fails, as one over the bound; repeat for several
    #[arg(long = "stop-if", value_name = "RESOURCE>PCT", value_parser = storbench_model::ceiling::Ceiling::parse)]
    pub stop_if: Vec<storbench_model::ceiling::Ceiling>,
}

fn seconds(v: &str) -> Result<std::time::Duration, String> {
    storbench_workload::units::parse_duration(v, std::time::Duration::from_secs(1)).map_err(|e| e.to_string()).and_then(|d| {
        if d.is_zero() {
            Err("must be above 0".into())
        } else {
            Ok(d)
        }
    })
}

fn parse_suite(v: &str) -> Result<String, String> {
    match v {
        "quick" => Ok(v.into()),
        other => Err(format!("'{other}' is not a suite; the built-in suite is 'quick'")),
    }
}

/// The formats a run can print on standard output, as the exporters declare.
fn stdout_help() -> String {
    format!("What goes to standard output: {}", storbench_report::stdout_names().join(", "))
}

fn parse_stdout_format(v: &str) -> Result<String, String> {
    match storbench_report::find_stdout(v) {
        Some(e) => Ok(e.name().into()),
        None => Err(format!("'{v}' is not one of {}", storbench_report::stdout_names().join(", "))),
    }
}

/// fio's own flags (`storbench fio`, or this binary called as `fio`). Job
/// options are fio's, given as `--name=job --rw=randread ...` or in job files.
#[derive(Args, Debug, Default)]
#[command(
    override_usage = "fio [options] [job options] [job file(s)]",
    after_help = "Job options before the first --name apply to every job; each --name starts a job. Exit codes as fio's:                   0 ok, the number of jobs with errors, 1 bad input. Without --results-dir no results directory is kept."
)]
pub struct FioFlags {
    /// Job files
    #[arg(value_name = "JOB.fio")]
    pub job_files: Vec<PathBuf>,
    /// Write the report to FILE instead of standard output
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[arg(long = "output-format", value_name = "FORMAT", value_parser = fio_formats, help = fio_formats_help())]
    pub output_format: Option<FioFormats>,
    /// Terse output only (as --output-format=terse)
    #[arg(long)]
    pub minimal: bool,
    /// Terse format version (3 only)
    #[arg(long = "terse-version", value_name = "3", value_parser = clap::value_parser!(u32).range(3..=3))]
    pub terse_version: Option<u32>,
    /// Print fio's version (the fio release whose outputs these are)
    #[arg(long)]
    pub version: bool,
    /// Run only this job section (repeatable)
    #[arg(long, value_name = "NAME")]
    pub section: Vec<String>,
    /// Check the jobs and exit
    #[arg(long = "parse-only")]
    pub parse_only: bool,
    /// always: live progress on standard error; never/auto: none
    #[arg(long, value_name = "WHEN")]
    pub eta: Option<String>,
    #[arg(long = "eta-newline", value_name = "TIME", hide = true)]
    pub eta_newline: Option<String>,
    #[arg(long = "eta-interval", value_name = "TIME", hide = true)]
    pub eta_interval: Option<String>,
    /// Drop fio options storbench does not support, with a note each (results marked approximate)
    #[arg(long = "fio-allow-unsupported")]
    pub allow_unsupported: bool,
    /// Let ioengine=exec jobs run their programs on this machine
    #[arg(long = "allow-exec")]
    pub allow_exec: bool,
    /// Also keep storbench's results directory here
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
}

/// fio's output formats, in the order given: the exporters' names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FioFormats(pub Vec<&'static str>);

fn fio_formats_help() -> String {
    format!("{} (comma-separated for several)", storbench_report::fio_names().join(", "))
}

/// fio's output formats, a comma list as fio takes it, by the names fio
/// gives them (the exporters' fio names).
fn fio_formats(v: &str) -> Result<FioFormats, String> {
    v.split(',')
        .map(|f| match storbench_report::find_fio(f.trim()) {
            Some(e) => Ok(e.name()),
            None => Err(format!("'{}' is not one of {}", f.trim(), storbench_report::fio_names().join(", "))),
        })
        .collect::<Result<_, _>>()
        .map(FioFormats)
}

/// `storbench cleanup`'s own flags: a results directory, or job options
/// (the engine, the object prefix, and the engine's options that say
/// where); and --force.
#[derive(Args, Debug)]
#[command(
    override_usage = "storbench cleanup RESULTS_DIR [--force]\n       \
                      storbench cleanup --ioengine ENGINE [--pool P | --bucket B | --container C ...] --object_prefix PREFIX [--force]\n       \
                      storbench cleanup --ioengine rbd --pool P --rbdname IMAGE[:IMAGE...]",
    after_help = "With RESULTS_DIR (a run's, or a sweep's with its runs below): removes what the run's journal says it made and \
                  left, even if it was killed: files it laid out, its objects (a fleet's agents' too), and the buckets, containers \
                  and images it created. With --object_prefix: removes storbench's objects whose names start with PREFIX from \
                  the pool, buckets or containers the engine options name, and a bucket or container storbench created once it \
                  is empty. With --ioengine rbd and --rbdname: removes the named images storbench created. Objects and images \
                  storbench did not write (they lack its mark) are kept and counted. Credentials come from the \
                  same environment and files as a run's."
)]
pub struct CleanupArgs {
    /// A run's results directory (or a sweep's): remove what its journal lists
    #[arg(value_name = "RESULTS_DIR")]
    pub dir: Option<PathBuf>,
    /// Also remove objects under the prefix that storbench did not write (they lack its mark)
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
#[command(after_help = "Exit codes: 0, 2 bad input, 4 a --fail-if gate failed.")]
pub struct CompareArgs {
    /// Results directories: the baseline first; a directory of runs counts as repeats; sweeps compare point by point
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// text, markdown or json
    #[arg(long, short = 'f', default_value = "text", value_parser = ["text", "markdown", "json"])]
    pub format: String,
    /// A difference smaller than this percentage is no difference (noise between runs exceeds noise within one)
    #[arg(long = "min-effect", default_value_t = 2.0, value_name = "PCT", value_parser = crate::numbers::percent)]
    pub min_effect: f64,
    /// Exit 4 when IOPS or MiB/s is lower by more than PCT percent (and the difference is real)
    #[arg(long = "fail-if-slower", value_name = "PCT", value_parser = crate::numbers::percent)]
    pub fail_if_slower: Option<f64>,
    /// Exit 4 when p99 latency is higher by more than PCT percent (and the difference is real)
    #[arg(long = "fail-if-p99-worse", value_name = "PCT", value_parser = crate::numbers::growth_percent)]
    pub fail_if_p99_worse: Option<f64>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results directory, a sweep, SLO search or study directory; several: a comparison (the first is the baseline)
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// The HTML file (default: DIR/report.html, or report.html for a comparison)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write every chart as SVG and PNG files in this directory
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
    /// Replace an existing -o FILE that is not a storbench report
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A results directory, or a directory of them (a ramp, swift-bench's phases)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[arg(long, short = 'f', default_value = "text", value_parser = parse_any_format, help = show_help())]
    pub format: String,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Run, sweep, SLO search or study results directories, or directories of them (one table: the columns are the union)
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// csv, or json (an array of rows)
    #[arg(long, short = 'f', value_enum, default_value = "csv")]
    pub format: TidyFormat,
    /// Write the table to FILE (default: standard output)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing -o FILE
    #[arg(long)]
    pub force: bool,
    /// Every run's timeline instead, a row per source, second and figure: each job's seconds, each host's, the cluster's and the exporters', and each fault, on the run's axis
    #[arg(long)]
    pub series: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TidyFormat {
    Csv,
    Json,
}

fn show_help() -> String {
    format!("{} (text is summary.txt)", storbench_report::names().join(", "))
}

fn parse_any_format(v: &str) -> Result<String, String> {
    match storbench_report::find(v) {
        Some(e) => Ok(e.name().into()),
        None => Err(format!("'{v}' is not one of {}", storbench_report::names().join(", "))),
    }
}

#[derive(Subcommand, Debug)]
pub enum RbdCommand {
    /// rbd bench: I/O against an image, its per-second lines and summary
    Bench(RbdBenchArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoType {
    Read,
    Write,
    #[value(alias = "rw")]
    Readwrite,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoPattern {
    #[value(alias = "sequential")]
    Seq,
    #[value(alias = "random")]
    Rand,
}

/// Connection flags of the Ceph tools.
#[derive(Args, Debug, Clone, Default)]
pub struct CephConn {
    /// Pool
    #[arg(short = 'p', long, global = true)]
    pub pool: Option<String>,
    /// ceph.conf (default: $CEPH_CONF)
    #[arg(short = 'c', long, global = true, value_name = "FILE")]
    pub conf: Option<String>,
    /// Keyring
    #[arg(short = 'k', long, global = true, value_name = "FILE")]
    pub keyring: Option<String>,
    /// cephx client id (without "client.")
    #[arg(long, global = true)]
    pub id: Option<String>,
    /// cephx client name (client.ID)
    #[arg(short = 'n', long, global = true)]
    pub name: Option<String>,
    /// RADOS namespace
    #[arg(short = 'N', long, global = true)]
    pub namespace: Option<String>,
    /// Where results go (default storbench-results/<time>)
    #[arg(long = "results-dir", global = true, value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
}

impl CephConn {
    /// As engine options.
    pub fn options(&self) -> Vec<(String, String)> {
        let client = self.name.as_ref().map(|n| n.trim_start_matches("client.").to_string()).or_else(|| self.id.clone());
        [("pool", self.pool.clone()), ("conf", self.conf.clone()), ("keyring", self.keyring.clone()), ("clientname", client)]
            .into_iter()
            .chain([("namespace", self.namespace.clone())])
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect()
    }
}

#[derive(Args, Debug)]
pub struct RbdBenchArgs {
    /// The image: [POOL/]IMAGE
    #[arg(value_name = "[POOL/]IMAGE")]
    pub image_spec: Option<String>,
    #[arg(long = "io-type", value_enum)]
    pub io_type: IoType,
    #[arg(long = "io-size", default_value = "4K", value_parser = size)]
    pub io_size: u64,
    #[arg(long = "io-threads", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub io_threads: u32,
    #[arg(long = "io-total", default_value = "1G", value_parser = size)]
    pub io_total: u64,
    #[arg(long = "io-pattern", value_enum, default_value = "seq")]
    pub io_pattern: IoPattern,
    /// Percentage of reads with --io-type readwrite
    #[arg(long = "rw-mix-read", default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rw_mix_read: u32,
    /// The image (instead of [POOL/]IMAGE)
    #[arg(long)]
    pub image: Option<String>,
    /// Write to an image storbench did not create (its data is destroyed)
    #[arg(long = "allow-overwrite", alias = "allow_overwrite")]
    pub allow_overwrite: bool,
    /// librbd's writeback cache (default 0: measure the cluster)
    #[arg(long = "rbd-cache", alias = "rbd_cache", value_name = "0|1")]
    pub rbd_cache: Option<String>,
    #[command(flatten)]
    pub conn: CephConn,
}

#[derive(Args, Debug)]
pub struct RadosArgs {
    #[command(flatten)]
    pub conn: CephConn,
    #[command(subcommand)]
    pub command: RadosCommand,
}

#[derive(Subcommand, Debug)]
pub enum RadosCommand {
    /// rados bench SECONDS write|seq|rand: whole objects, its table and summary
    Bench(RadosBenchArgs),
    /// Remove benchmark objects (rados cleanup)
    Cleanup(RadosCleanupArgs),
    /// Mixed load on a set of objects (rados load-gen)
    LoadGen(LoadGenArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchMode {
    Write,
    Seq,
    Rand,
}

#[derive(Args, Debug)]
pub struct RadosBenchArgs {
    /// How long (0: until --max-objects, or every object for seq)
    pub seconds: u64,
    #[arg(value_enum)]
    pub mode: BenchMode,
    /// Operation (and object) size
    #[arg(short = 'b', default_value = "4M", value_parser = size)]
    pub op_size: u64,
    /// Object size (must equal the operation size)
    #[arg(short = 'O', long = "object-size", value_parser = size)]
    pub object_size: Option<u64>,
    /// Operations in flight
    #[arg(short = 't', default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub threads: u64,
    /// Keep the objects (and write the metadata object seq/rand read)
    #[arg(long = "no-cleanup")]
    pub no_cleanup: bool,
    /// The metadata object's name (default benchmark_last_metadata)
    #[arg(long = "run-name")]
    pub run_name: Option<String>,
    /// Stop after writing this many objects
    #[arg(long = "max-objects", default_value_t = 0)]
    pub max_objects: u64,
    /// Accepted for rados bench's command lines (storbench does not verify reads)
    #[arg(long = "no-verify")]
    pub no_verify: bool,
    /// Accepted for rados bench's command lines
    #[arg(long = "no-hints")]
    pub no_hints: bool,
    /// Not supported
    #[arg(long = "reuse-bench", hide = true)]
    pub reuse_bench: bool,
    /// Accepted for rados bench's command lines
    #[arg(long = "show-time")]
    pub show_time: bool,
}

#[derive(Args, Debug)]
pub struct RadosCleanupArgs {
    /// The metadata object of the run to remove (default benchmark_last_metadata)
    #[arg(long = "run-name")]
    pub run_name: Option<String>,
    /// Remove the objects with this prefix (it must start with benchmark_data)
    #[arg(long)]
    pub prefix: Option<String>,
}

#[derive(Args, Debug)]
pub struct LoadGenArgs {
    #[arg(long = "num-objects", default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    pub num_objects: u64,
    #[arg(long = "min-object-size", default_value = "1K", value_parser = size)]
    pub min_object_size: u64,
    #[arg(long = "max-object-size", default_value = "4M", value_parser = size)]
    pub max_object_size: u64,
    #[arg(long = "min-op-len", default_value = "1K", value_parser = size)]
    pub min_op_len: u64,
    #[arg(long = "max-op-len", default_value = "2M", value_parser = size)]
    pub max_op_len: u64,
    /// Operations in flight
    #[arg(long = "max-ops", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_ops: u32,
    /// Not used: in-flight work is bounded by --max-ops
    #[arg(long = "max-backlog")]
    pub max_backlog: Option<String>,
    #[arg(long = "read-percent", visible_alias = "percent", default_value_t = 80, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub read_percent: u64,
    /// Bytes per second in all
    #[arg(long = "target-throughput")]
    pub target_throughput: Option<String>,
    /// Seconds
    #[arg(long = "run-length", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub run_length: u64,
    /// Not used: operation offsets are byte-granular
    #[arg(long = "offset-align")]
    pub offset_align: Option<String>,
}

/// swift-bench's flags; any other `--option value` is an engine option
/// (`--bucket`, `--endpoint`, `--container`...).
#[derive(Args, Debug)]
pub struct SwiftBenchArgs {
    #[arg(short = 'c', long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub concurrency: u64,
    #[arg(short = 's', long = "object-size", default_value = "1", value_parser = size)]
    pub object_size: u64,
    #[arg(short = 'n', long = "num-objects", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub num_objects: u64,
    #[arg(short = 'g', long = "num-gets", default_value_t = 10000)]
    pub num_gets: u64,
    #[arg(short = 'C', long = "num-containers", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub num_containers: u64,
    /// Keep the objects (no DELETE phase)
    #[arg(short = 'x', long = "no-delete")]
    pub no_delete: bool,
    /// Auth URL
    #[arg(short = 'A', long)]
    pub auth: Option<String>,
    #[arg(short = 'U', long)]
    pub user: Option<String>,
    #[arg(short = 'K', long)]
    pub key: Option<String>,
    /// swift, or s3
    #[arg(long, default_value = "swift", value_parser = ["swift", "s3"])]
    pub ioengine: String,
    /// Where results go (one directory per phase below it)
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
}

fn size(v: &str) -> Result<u64, String> {
    storbench_workload::units::parse_size(v).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_tree_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn rados_flags_go_before_or_after_the_subcommand() {
        let a = Cli::try_parse_from(["storbench", "rados", "-p", "p1", "bench", "10", "write", "-b", "64K", "-t", "4"]).unwrap();
        let b = Cli::try_parse_from(["storbench", "rados", "bench", "10", "write", "-p", "p1", "-b", "64K", "-t", "4"]).unwrap();
        for cli in [a, b] {
            let Some(Command::Rados(r)) = cli.command else { panic!("rados") };
            assert_eq!(r.conn.pool.as_deref(), Some("p1"));
            let RadosCommand::Bench(b) = r.command else { panic!("bench") };
            assert_eq!((b.seconds, b.mode, b.op_size, b.threads), (10, BenchMode::Write, 65536, 4));
        }
    }
}
