//! Network faults on this machine's NICs (`--fault 5s:net-cut:eth1`,
//! `net-loss`, `net-delay`, `net-restore`), carried out with the kernel's
//! own tools, run directly (never through a shell):
//!
//! - a cut or a loss is an nftables table of storbench's own per NIC
//!   (`storbench_<nic>`), dropping every packet (or that share of them)
//!   that goes out of or comes in through the NIC, forwarded ones too: no
//!   FIN, no RST, as when a cable is pulled. For a bridge's port (a veth
//!   toward an agent's namespace) the table is of the `bridge` family,
//!   whose hooks see the port; otherwise `inet`, whose hooks see the NIC
//!   the packet is routed through. Its own table touches no rule of
//!   anyone else's, and works on kernels built without netem;
//! - a delay is netem, the kernel's network emulator, as the NIC's root
//!   qdisc (`tc`): it delays what the machine sends out of the NIC. A NIC
//!   whose root qdisc is someone's own configuration (htb, tbf, a netem not
//!   this run's) is refused, since the delay would replace it; a kernel
//!   without netem is said as such.
//!
//! What the run set on each NIC is kept ([`Shaped`]), so a restore removes
//! that and nothing else.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use storbench_model::disruption::FaultAction;

/// Root qdiscs the kernel (or systemd's default) sets up by itself.
const DEFAULTS: [&str; 6] = ["noqueue", "pfifo_fast", "fq_codel", "mq", "fq", "pfifo"];
/// netem's queue, in packets: its default (1,000) turns a delay on a busy
/// link into loss (100 ms at 10 Gb/s is some 80,000 packets in flight).
const NETEM_LIMIT: &str = "1000000";

/// What the run set on one NIC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Set {
    /// Its nftables table (`true` for a bridge port's `bridge` table).
    pub table: Option<bool>,
    /// Its netem root qdisc.
    pub netem: bool,
}

/// The NICs the run shaped and has not restored.
pub type Shaped = BTreeMap<String, Set>;

/// Before the run: whether this machine can carry out the network faults
/// of a schedule (the NIC there, the tool installed, root).
pub fn check(action: &FaultAction) -> Result<(), String> {
    let Some(nic) = action.nic() else { return Ok(()) };
    if !std::path::Path::new("/sys/class/net").join(nic).exists() {
        return Err(format!("no network interface '{nic}' on this machine (`ip link` lists them)"));
    }
    let tools: &[&str] = match action {
        FaultAction::NetDelay { .. } => &["tc"],
        FaultAction::NetRestore(_) => &["tc", "nft"],
        _ => &["nft"],
    };
    if let Some(t) = tools.iter().find(|t| !installed(t)) {
        return Err(format!("{} needs {t}, which is not installed (apt-get install {})", action.words(), package(t)));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!("{} changes a NIC's filtering or queueing: run as root (CAP_NET_ADMIN)", action.words()));
    }
    Ok(())
}

/// Carry out a network fault, noting in `shaped` what it set.
pub fn apply(action: &FaultAction, shaped: &mut Shaped) -> Result<String, String> {
    let Some(nic) = action.nic() else { return Err("not a network fault".into()) };
    let set = shaped.get(nic).copied().unwrap_or_default();
    let (done, now) = match action {
        FaultAction::NetRestore(_) => return restore(nic, shaped),
        FaultAction::NetDelay { ms, .. } => (delay(nic, *ms, set.netem)?, Set { netem: true, ..set }),
        FaultAction::NetLoss { pct, .. } => drop_share(nic, Some(*pct), set)?,
        _ => drop_share(nic, None, set)?,
    };
    shaped.insert(nic.to_string(), now);
    Ok(done)
}

/// Remove what the run set on `nic`, and only that.
pub fn restore(nic: &str, shaped: &mut Shaped) -> Result<String, String> {
    let Some(set) = shaped.get(nic).copied() else { return Err(format!("{nic} was not shaped by this run: nothing to restore")) };
    let mut done = Vec::new();
    if let Some(bridge) = set.table {
        let (family, table) = (family(bridge), table(nic));
        // Removed by someone else meanwhile: nothing left to undo.
        if run("nft", &["list", "table", family, &table], None).is_ok() {
            run("nft", &["delete", "table", family, &table], None)?;
            done.push(format!("nft delete table {family} {table}"));
        }
        shaped.insert(nic.to_string(), Set { table: None, ..set });
    }
    if set.netem && root_qdisc(nic)? == "netem" {
        run("tc", &["qdisc", "del", "dev", nic, "root"], None)?;
        done.push(format!("tc qdisc del dev {nic} root"));
    }
    shaped.remove(nic);
    Ok(if done.is_empty() { "nothing was left to undo".into() } else { done.join("; ") })
}

/// What is left to do by hand when a restore failed.
pub fn undo_hint(nic: &str, set: Set) -> String {
    let mut steps = Vec::new();
    if let Some(bridge) = set.table {
        steps.push(format!("nft delete table {} {}", family(bridge), table(nic)));
    }
    if set.netem {
        steps.push(format!("tc qdisc del dev {nic} root"));
    }
    format!("run `{}`", steps.join("; "))
}

/// Drop every packet through `nic`, or `pct` percent of them, replacing
/// what the run set there before.
fn drop_share(nic: &str, pct: Option<f64>, set: Set) -> Result<(String, Set), String> {
    let bridge = set.table.unwrap_or_else(|| is_bridge_port(nic));
    let (family, table) = (family(bridge), table(nic));
    // A share in thousandths of a percent: numgen draws 0..99,999 per packet.
    let cond = pct.map_or(String::new(), |p| format!("numgen random mod 100000 < {} ", (p * 1000.0).round() as u64));
    let chain = |hook: &str, matches: &[&str]| {
        // Counted, so `nft list table` shows what the fault dropped.
        let rules: Vec<String> = matches.iter().map(|m| format!("{m} \"{nic}\" {cond}counter drop;")).collect();
        format!("chain {hook} {{ type filter hook {hook} priority -10; policy accept; {} }}", rules.join(" "))
    };
    // The first line makes the table if it is not there, so the delete never
    // fails: the new rules replace the old ones in one transaction.
    let script = format!(
        "table {family} {table}\ndelete table {family} {table}\ntable {family} {table} {{\n{}\n{}\n{}\n}}\n",
        chain("output", &["oifname"]),
        chain("input", &["iifname"]),
        chain("forward", &["oifname", "iifname"]),
    );
    run("nft", &["-f", "-"], Some(&script))?;
    let what = pct.map_or("every packet".to_string(), |p| format!("{p}% of the packets each way"));
    Ok((format!("nft: {what} through {nic} dropped (table {family} {table})"), Set { table: Some(bridge), ..set }))
}

/// Delay what leaves `nic` by `ms` (netem as its root qdisc).
fn delay(nic: &str, ms: f64, ours: bool) -> Result<String, String> {
    let root = root_qdisc(nic)?;
    // The kernel's own, or the netem this run set: anything else is someone's configuration.
    let replaceable = DEFAULTS.contains(&root.as_str()) || (ours && root == "netem");
    if !replaceable {
        return Err(format!(
            "{nic} has a root qdisc of its own ({root}): a delay would replace it; remove it first (tc qdisc del dev {nic} root) or give another NIC"
        ));
    }
    let ms = format!("{ms}ms");
    let args = ["qdisc", "replace", "dev", nic, "root", "netem", "delay", &ms, "limit", NETEM_LIMIT];
    run("tc", &args, None).map_err(|e| match e.contains("qdisc kind is unknown") {
        true => format!(
            "this kernel has no netem (CONFIG_NET_SCH_NETEM), so a delay cannot be injected; net-loss and net-cut need no netem ({e})"
        ),
        false => e,
    })?;
    Ok(format!("tc {}", args.join(" ")))
}

/// The kind of a NIC's root qdisc (`tc -j qdisc show dev NIC root`).
fn root_qdisc(nic: &str) -> Result<String, String> {
    let out = run("tc", &["-j", "qdisc", "show", "dev", nic, "root"], None)?;
    let doc: serde_json::Value = serde_json::from_str(&out).map_err(|e| format!("tc's answer for {nic} is not JSON: {e}"))?;
    let kind = doc.as_array().and_then(|a| a.first()).and_then(|q| q["kind"].as_str());
    Ok(kind.unwrap_or("noqueue").to_string())
}

/// A bridge's port: its packets pass the bridge family's hooks by its name.
fn is_bridge_port(nic: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(nic).join("brport").exists()
}

fn family(bridge: bool) -> &'static str {
    if bridge {
        "bridge"
    } else {
        "inet"
    }
}

/// The run's nftables table for a NIC (nft names are letters, digits and `_`).
fn table(nic: &str) -> String {
    let safe: String = nic.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("storbench_{safe}")
}

fn installed(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain(["/usr/sbin".into(), "/sbin".into()]).any(|d| d.join(tool).is_file())
}

fn package(tool: &str) -> &'static str {
    if tool == "nft" {
        "nftables"
    } else {
        "iproute2"
    }
}

/// Run a tool with `args` (and `input` on its stdin): its output, or its
/// own words on failure.
fn run(tool: &str, args: &[&str], input: Option<&str>) -> Result<String, String> {
    let mut c = Command::new(tool);
    c.args(args).stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{tool} not found: install {}", package(tool)),
        _ => format!("{tool}: {e}"),
    })?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).map_err(|e| format!("{tool}: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("{tool}: {e}"))?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(format!("{tool} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nic_not_shaped_by_the_run_is_not_restored_and_tables_are_named_safely() {
        let mut shaped = Shaped::new();
        let e = restore("lo", &mut shaped).unwrap_err();
        assert!(e.contains("not shaped by this run"), "{e}");
        assert_eq!(table("veth-a.1"), "storbench_veth_a_1");
        let hint = undo_hint("br0", Set { table: Some(true), netem: true });
        assert_eq!(hint, "run `nft delete table bridge storbench_br0; tc qdisc del dev br0 root`");
        assert!(check(&FaultAction::NetCut("sb-no-such-nic".into())).unwrap_err().contains("no network interface 'sb-no-such-nic'"));
        assert!(check(&FaultAction::OsdOut(1)).is_ok(), "not a network fault");
    }
}
