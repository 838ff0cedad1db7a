//! Network faults on this machine's NICs (`--fault 5s:net-cut:eth1`,
//! `net-loss`, `net-delay`, `net-restore`), carried out with the kernel's
//! own tools, run directly (never through a shell):
//!
//! - a cut or a loss is an nftables table of storbench's own per NIC
//!   (`inet storbench_<nic>`), dropping every packet (or that share of them)
//!   that goes out of or comes in through the NIC, forwarded ones too: no
//!   FIN, no RST, as when a cable is pulled. Its own table touches no rule
//!   of anyone else's, and works on kernels built without netem;
//! - a delay is netem, the kernel's network emulator, as the NIC's root
//!   qdisc (`tc`): it delays what the machine sends out of the NIC. A NIC
//!   whose root qdisc is someone's own configuration (htb, tbf, a netem not
//!   this run's) is refused, since the delay would replace it; a kernel
//!   without netem is said as such.
//!
//! On a fleet the NIC is the link toward an agent: its veth, the bridge it
//! hangs on, or the NIC its traffic leaves by. A restore removes what the
//! run set on the NIC, so it is as it was.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};
use storbench_model::disruption::FaultAction;

/// Root qdiscs the kernel (or systemd's default) sets up by itself.
const DEFAULTS: [&str; 6] = ["noqueue", "pfifo_fast", "fq_codel", "mq", "fq", "pfifo"];

/// Carry out a network fault; `ours` holds the NICs this run shaped (a
/// restore needs one of them).
pub fn apply(action: &FaultAction, ours: &mut BTreeSet<String>) -> Result<String, String> {
    let Some(nic) = action.nic() else { return Err("not a network fault".into()) };
    let done = match action {
        FaultAction::NetRestore(_) => return restore(nic, ours),
        FaultAction::NetDelay { ms, .. } => delay(nic, *ms, ours.contains(nic))?,
        FaultAction::NetLoss { pct, .. } => drop_share(nic, Some(*pct))?,
        _ => drop_share(nic, None)?,
    };
    ours.insert(nic.to_string());
    Ok(done)
}

/// Remove what the run set on `nic`: its table, its netem.
pub fn restore(nic: &str, ours: &mut BTreeSet<String>) -> Result<String, String> {
    if !ours.contains(nic) {
        return Err(format!("{nic} was not shaped by this run: nothing to restore"));
    }
    let mut done = Vec::new();
    let table = table(nic);
    // Removed by someone else meanwhile: nothing left to undo.
    if run("nft", &["list", "table", "inet", &table], None).is_ok() {
        run("nft", &["delete", "table", "inet", &table], None)?;
        done.push(format!("nft delete table inet {table}"));
    }
    if root_qdisc(nic)? == "netem" {
        run("tc", &["qdisc", "del", "dev", nic, "root"], None)?;
        done.push(format!("tc qdisc del dev {nic} root"));
    }
    ours.remove(nic);
    Ok(if done.is_empty() { "nothing was left to undo".into() } else { done.join("; ") })
}

/// Drop every packet through `nic`, or `pct` percent of them, replacing
/// what the run set there before.
fn drop_share(nic: &str, pct: Option<f64>) -> Result<String, String> {
    let table = table(nic);
    // A share in tenths of a percent: numgen draws 0..999 per packet.
    let cond = pct.map_or(String::new(), |p| format!("numgen random mod 1000 < {} ", (p * 10.0).round() as u32));
    let rules = |hook: &str, dir: &str| {
        format!("chain {hook} {{ type filter hook {hook} priority -10; policy accept; {dir} \"{nic}\" {cond}drop; }}")
    };
    // The first line makes the table if it is not there, so the delete never
    // fails: the new rules replace the old ones in one transaction.
    let script = format!(
        "table inet {table}\ndelete table inet {table}\ntable inet {table} {{\n{}\n{}\nchain forward {{ type filter hook forward priority -10; policy accept; oifname \"{nic}\" {cond}drop; iifname \"{nic}\" {cond}drop; }}\n}}\n",
        rules("output", "oifname"),
        rules("input", "iifname"),
    );
    run("nft", &["-f", "-"], Some(&script))?;
    Ok(match pct {
        Some(p) => format!("nft: {p}% of the packets through {nic} dropped (table inet {table})"),
        None => format!("nft: every packet through {nic} dropped (table inet {table})"),
    })
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
    let args = ["qdisc", "replace", "dev", nic, "root", "netem", "delay", &ms];
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

/// The run's nftables table for a NIC (nft names are letters, digits and `_`).
fn table(nic: &str) -> String {
    let safe: String = nic.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("storbench_{safe}")
}

/// Run a tool with `args` (and `input` on its stdin): its output, or its
/// own words on failure.
fn run(tool: &str, args: &[&str], input: Option<&str>) -> Result<String, String> {
    let mut c = Command::new(tool);
    c.args(args).stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{tool} not found: install {}", if tool == "nft" { "nftables" } else { "iproute2" }),
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

/// Whether the NIC exists here (checked with the flags, before anything runs).
pub fn exists(nic: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(nic).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nic_not_shaped_by_the_run_is_not_restored_and_tables_are_named_safely() {
        let mut ours = BTreeSet::new();
        let e = restore("lo", &mut ours).unwrap_err();
        assert!(e.contains("not shaped by this run"), "{e}");
        assert!(!exists("sb-no-such-nic") && exists("lo"));
        assert_eq!(table("veth-a.1"), "storbench_veth_a_1");
        assert!(ours.is_empty());
    }
}
