//! Fleet test helpers: agents in network namespaces of their own (each with
//! its own address on a bridge), started as real `storbench agent`
//! processes, all removed again when the test ends.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Run `ip` (or fail the test with its words).
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// Namespaces `<tag>1..n` with addresses 10.77.<subnet>.11.. on a bridge
/// whose own address (the coordinator's side) is 10.77.<subnet>.1.
pub struct Namespaces {
    tag: String,
    subnet: u8,
    pub count: usize,
}

impl Namespaces {
    pub fn new(tag: &str, subnet: u8, count: usize) -> Namespaces {
        let ns = Namespaces { tag: tag.into(), subnet, count };
        ns.remove();
        let br = ns.bridge();
        ip(&["link", "add", &br, "type", "bridge"]);
        ip(&["addr", "add", &format!("10.77.{subnet}.1/24"), "dev", &br]);
        ip(&["link", "set", &br, "up"]);
        for i in 1..=count {
            let (name, veth) = (ns.name(i), ns.veth(i));
            ip(&["netns", "add", &name]);
            ip(&["link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &name]);
            ip(&["link", "set", &veth, "master", &br, "up"]);
            ip(&["-n", &name, "addr", "add", &format!("{}/24", ns.address(i)), "dev", "eth0"]);
            ip(&["-n", &name, "link", "set", "eth0", "up"]);
            ip(&["-n", &name, "link", "set", "lo", "up"]);
        }
        ns
    }

    pub fn bridge(&self) -> String {
        format!("{}br", self.tag)
    }
    pub fn name(&self, i: usize) -> String {
        format!("{}{i}", self.tag)
    }
    pub fn veth(&self, i: usize) -> String {
        format!("{}v{i}", self.tag)
    }
    pub fn address(&self, i: usize) -> String {
        format!("10.77.{}.{}", self.subnet, 10 + i)
    }

    /// One agent in each namespace on port 7450, logging to `dir/agent<i>.log`,
    /// with `extra(i)` on its command line.
    pub fn agents(&self, fleet: &Path, dir: &Path, extra: impl Fn(usize) -> Vec<String>) -> Vec<Agent> {
        (1..=self.count)
            .map(|i| {
                let words = extra(i);
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let log = dir.join(format!("agent{i}.log"));
                Agent::start(Some(&self.name(i)), &format!("{}:7450", self.address(i)), fleet, log, &words)
            })
            .collect()
    }

    /// Cut agent i off (its link down on the bridge side): no FIN, no RST.
    pub fn cut(&self, i: usize) {
        ip(&["link", "set", &self.veth(i), "down"]);
    }

    fn remove(&self) {
        for i in 1..=self.count {
            let _ = Command::new("ip").args(["netns", "del", &self.name(i)]).output();
            let _ = Command::new("ip").args(["link", "del", &self.veth(i)]).output();
        }
        let _ = Command::new("ip").args(["link", "del", &self.bridge()]).output();
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        self.remove();
    }
}

/// A `storbench agent` process; killed when dropped.
pub struct Agent {
    child: Child,
    pub log: PathBuf,
    pub address: String,
}

impl Agent {
    /// Start an agent listening on `address` (in namespace `netns`, if
    /// given) with the fleet directory `fleet`, and wait until it listens.
    pub fn start(netns: Option<&str>, address: &str, fleet: &Path, log: PathBuf, extra: &[&str]) -> Agent {
        Self::start_with_env(netns, address, fleet, log, extra, &[])
    }

    /// As [`Agent::start`], with these variables in the agent's environment
    /// (a store's credentials, which each agent finds on its own machine).
    pub fn start_with_env(netns: Option<&str>, address: &str, fleet: &Path, log: PathBuf, extra: &[&str], env: &[(&str, String)]) -> Agent {
        let mut c = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, super::bin()]);
                c
            }
            None => Command::new(super::bin()),
        };
        // A store's credentials reach the agent only as the test gives them:
        // none from the test's own environment.
        let store_vars = std::env::vars().map(|(k, _)| k).filter(|k| ["AWS_", "ST_", "OS_"].iter().any(|p| k.starts_with(p)));
        for k in store_vars {
            c.env_remove(k);
        }
        c.args(["agent", "--listen", address, "--fleet-dir"]).arg(fleet).args(extra).envs(env.iter().map(|(k, v)| (*k, v)));
        let file = std::fs::File::create(&log).expect("agent log");
        let child = c.stdout(Stdio::null()).stderr(file).spawn().expect("start the agent");
        let agent = Agent { child, log, address: address.into() };
        agent.wait_for("listening on", Duration::from_secs(20));
        agent
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Wait until the agent's log says `what` (or fail, with the log).
    pub fn wait_for(&self, what: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.log_text().contains(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("agent {} never said '{what}' within {within:?}:\n{}", self.address, self.log_text());
    }

    /// Kill the agent now (its connections are reset, as when a machine's
    /// storbench dies).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The process has exited on its own within `within`.
    pub fn exits_within(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A new fleet directory (`storbench agent --init`).
pub fn fleet_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    let r = super::storbench(parent, &["agent", "--init", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "agent --init: {}", r.stderr);
    dir
}

/// Whether network namespaces can be made here (root); under CI they must.
pub fn can_use_namespaces() -> bool {
    if super::is_root() && super::have("ip") {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "fleet tests need root and iproute2 in CI");
    eprintln!("SKIP: fleet tests with network namespaces need root and iproute2");
    false
}
