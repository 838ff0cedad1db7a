//! Launching agents over SSH (`--ssh user@host,...`).
//!
//! For one command (a run, or every point of a sweep) the coordinator makes a
//! fleet of its own: fresh credentials in a private local directory (a new
//! CA, certificates and a one-time token), then on each host, through the
//! system's `ssh` (so the user's keys, agent and ssh_config apply), a
//! private directory with the storbench binary (or one already there,
//! `--ssh-binary`) and the agent's part of the credentials, and an agent
//! started in the foreground of that SSH session on a port the kernel
//! picks. The coordinator reads the port from the agent's first line and
//! connects to it directly. The session has a terminal (`ssh -tt`), so when
//! the coordinator ends it (or dies), the agent gets a hang-up, stops as on
//! SIGTERM (a run in progress is wound down and cleaned up) and removes its
//! own directory (`--remove-on-exit`); the coordinator removes it too, and
//! the local one. The local one-time directory keeps no CA key.

use crate::agents::AgentSpec;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How to reach the hosts.
#[derive(Clone, Debug)]
pub struct SshOptions {
    /// `user@host` or `host`, one agent each.
    pub hosts: Vec<String>,
    /// The ssh command and its options (e.g. `ssh -i key -p 2222`).
    pub command: Vec<String>,
    /// A storbench already on the hosts (otherwise this binary is copied).
    pub binary: Option<String>,
    /// The agents' own timeout for a silent coordinator.
    pub timeout: Duration,
}

/// Agents started over SSH; stopped and removed when dropped.
pub struct Launched {
    /// The one-time fleet directory (coordinator side).
    pub dir: PathBuf,
    pub agents: Vec<AgentSpec>,
    remote: Vec<Remote>,
    opts: SshOptions,
}

struct Remote {
    host: String,
    dir: String,
    /// The SSH session the agent runs in, once started.
    session: Option<Child>,
}

/// How long an agent may take to start (copying a binary included).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Start one agent on every host; on any failure, what was started is stopped
/// and removed again.
pub fn launch(opts: &SshOptions) -> Result<Launched, String> {
    let dir = std::env::temp_dir().join(format!("storbench-fleet-{}-{}", std::process::id(), crate::creds::random_hex(6)));
    let hostnames: Vec<String> = opts.hosts.iter().map(|h| host_part(h).to_string()).collect();
    crate::creds::init(&dir, &hostnames)?;
    // Nothing here signs certificates later: the CA's key goes at once.
    let _ = std::fs::remove_file(dir.join("ca.key"));
    let mut launched = Launched { dir, agents: Vec::new(), remote: Vec::new(), opts: opts.clone() };
    for (host, name) in opts.hosts.iter().zip(&hostnames) {
        let port = launched.start(host).map_err(|e| format!("ssh {host}: {e}"))?;
        let address = if name.contains(':') { format!("[{name}]:{port}") } else { format!("{name}:{port}") };
        launched.agents.push(AgentSpec { name: host.clone(), address, options: Vec::new() });
    }
    Ok(launched)
}

impl Launched {
    /// Copy what the agent needs to `host` and start it; its port.
    fn start(&mut self, host: &str) -> Result<u16, String> {
        let remote = format!("/tmp/storbench-agent.{}", crate::creds::random_hex(6));
        // Recorded first, so it is removed even if making it seems to fail.
        self.remote.push(Remote { host: host.into(), dir: remote.clone(), session: None });
        self.ssh(host, &format!("umask 077 && mkdir {remote} {remote}/fleet"), None)?;
        let binary = match &self.opts.binary {
            Some(b) => b.clone(),
            None => {
                let me = std::env::current_exe().map_err(|e| format!("cannot find this binary to copy: {e}"))?;
                self.ssh(host, &format!("cat > {remote}/storbench && chmod 700 {remote}/storbench"), Some(&me))?;
                format!("{remote}/storbench")
            }
        };
        for f in ["ca.pem", "agent.pem", "agent.key", "token"] {
            self.ssh(host, &format!("cat > {remote}/fleet/{f}"), Some(&self.dir.join(f)))?;
        }
        let agent = format!(
            "exec {binary} agent --listen 0.0.0.0:0 --fleet-dir {remote}/fleet --name {} --timeout {}s --remove-on-exit {remote}",
            shell_word(host),
            self.opts.timeout.as_secs().max(1)
        );
        let mut session = self
            .command(host)
            .arg("-tt")
            .arg(agent)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not run {}: {e}", self.opts.command[0]))?;
        let port = listening_port(&mut session);
        if let Some(r) = self.remote.last_mut() {
            r.session = Some(session);
        }
        port
    }

    fn command(&self, host: &str) -> Command {
        use std::os::unix::process::CommandExt as _;
        let mut c = Command::new(&self.opts.command[0]);
        c.args(&self.opts.command[1..]).args(["-o", "BatchMode=yes"]).arg(host);
        // Out of the terminal's process group: a Ctrl-C meant for the
        // coordinator must not end the sessions (ssh would hang up the agents
        // before the coordinator stops them in order and they clean up).
        c.process_group(0);
        c
    }

    /// Run `script` on `host`, with `input` as its standard input.
    fn ssh(&self, host: &str, script: &str, input: Option<&Path>) -> Result<(), String> {
        let mut c = self.command(host);
        c.arg(script).stdout(Stdio::null()).stderr(Stdio::piped());
        c.stdin(match input {
            Some(p) => Stdio::from(std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?),
            None => Stdio::null(),
        });
        let out = c.output().map_err(|e| format!("could not run {}: {e}", self.opts.command[0]))?;
        if out.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&out.stderr).trim().replace('\n', "; ");
        Err(format!("'{script}' failed ({}): {err}", out.status))
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        for r in &mut self.remote {
            // Ending the session hangs up the agent's terminal: the agent stops.
            if let Some(s) = r.session.as_mut() {
                let _ = s.kill();
                let _ = s.wait();
            }
        }
        let remote = std::mem::take(&mut self.remote);
        for r in remote {
            // The agent may need a moment to exit; removing its directory does not wait for it.
            let _ = self.ssh(&r.host, &format!("rm -rf {}", r.dir), None);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Read the agent's output until it says where it listens; keep draining
/// it afterwards (a full pipe would block the agent).
fn listening_port(session: &mut Child) -> Result<u16, String> {
    let out = session.stdout.take().ok_or("no output from ssh")?;
    let err = session.stderr.take().ok_or("no output from ssh")?;
    let (tx, rx) = mpsc::channel::<String>();
    for stream in [Box::new(out) as Box<dyn std::io::Read + Send>, Box::new(err)] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line.trim_end_matches('\r').to_string());
            }
        });
    }
    drop(tx);
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    let mut said = Vec::new();
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(port) = port_in(&line) {
                    // Keep reading in the background: the agent logs every run.
                    std::thread::spawn(move || while rx.recv().is_ok() {});
                    return Ok(port);
                }
                said.push(line);
            }
            Err(_) => break,
        }
    }
    let _ = session.kill();
    Err(format!("the agent did not start: {}", said.join("; ")))
}

/// The port of "... listening on 0.0.0.0:PORT (...)".
fn port_in(line: &str) -> Option<u16> {
    let rest = line.split("listening on ").nth(1)?;
    let addr = rest.split_whitespace().next()?;
    addr.rsplit(':').next()?.parse().ok()
}

/// `host` of `user@host`.
fn host_part(h: &str) -> &str {
    h.rsplit('@').next().unwrap_or(h)
}

fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_comes_from_the_agents_first_line() {
        assert_eq!(port_in("storbench agent: h listening on 0.0.0.0:40123 (TLS and the fleet token, protocol 2)"), Some(40123));
        assert_eq!(port_in("Warning: Permanently added '10.0.0.1' to the list of known hosts."), None);
        assert_eq!(host_part("root@10.0.0.1"), "10.0.0.1");
    }
}
