//! Where a job's workers run and allocate: fio's `cpus_allowed` / `cpumask`
//! (a CPU set), `cpus_allowed_policy` (every worker on the whole set, or
//! each on one CPU of it in turn), `numa_cpu_nodes` (the CPUs of NUMA nodes)
//! and `numa_mem_policy` (the kernel's memory policy for the worker's
//! allocations). Only parsed and described here; the runner checks the
//! CPUs and nodes against the machine and binds each worker thread.

use serde::{Deserialize, Serialize};

/// The most CPUs or nodes a list may name (the kernel's CPU_SETSIZE).
pub const MAX_CPUS: u32 = 1024;

/// A job's placement; `None` fields leave the thread as it was.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// CPUs the workers may run on, ascending (`cpus_allowed`, `cpumask`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<u32>>,
    /// fio's `cpus_allowed_policy=split`: worker k runs on one CPU of the
    /// set, the ((first + k) mod count)-th, as fio numbers its threads
    /// across the whole job file.
    #[serde(default)]
    pub split: bool,
    /// Workers of the jobs before this one (set when the run is planned).
    #[serde(default)]
    pub first: u32,
    /// NUMA nodes whose CPUs the workers run on (`numa_cpu_nodes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_nodes: Option<Vec<u32>>,
    /// The memory policy of the worker threads (`numa_mem_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<MemPolicy>,
}

/// set_mempolicy(2)'s modes as fio names them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MemPolicy {
    Default,
    Local,
    Prefer(u32),
    Bind(NodeList),
    Interleave(NodeList),
}

/// A node list: numbers, or every node of the machine (`all`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum NodeList {
    All,
    Nodes(Vec<u32>),
}

/// fio's CPU and node lists: `0,2-3` (numbers and ranges, comma separated).
pub fn parse_list(v: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let num = |s: &str| s.trim().parse::<u32>().ok().filter(|n| *n < MAX_CPUS);
        match (num(lo), num(hi)) {
            (Some(lo), Some(hi)) if lo <= hi => out.extend(lo..=hi),
            _ => return Err(format!("'{part}' is not a number or a low-high range from 0 to {} (a list is like 0,2-3)", MAX_CPUS - 1)),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// fio's `cpumask`: a number whose set bits are the CPUs (0x3 is CPUs 0 and 1).
pub fn parse_mask(v: &str) -> Result<Vec<u32>, String> {
    let t = v.trim();
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| format!("'{v}' is not a CPU mask (a number whose bits are the CPUs: 3 or 0x3 is CPUs 0 and 1)"))?;
    if n == 0 {
        return Err("a mask of 0 allows no CPU".into());
    }
    Ok((0..64).filter(|i| n & (1 << i) != 0).collect())
}

/// fio's `numa_mem_policy`: `mode[:nodes]`.
pub fn parse_mem_policy(v: &str) -> Result<MemPolicy, String> {
    let (mode, nodes) = match v.split_once(':') {
        Some((m, n)) => (m.trim(), Some(n.trim())),
        None => (v.trim(), None),
    };
    let list = |n: Option<&str>| -> Result<NodeList, String> {
        match n {
            None | Some("") => Err(format!("{mode} needs nodes: {mode}:0 or {mode}:0-1 or {mode}:all")),
            Some("all") => Ok(NodeList::All),
            Some(n) => parse_list(n).map(NodeList::Nodes),
        }
    };
    match mode {
        "default" | "local" if nodes.is_some_and(|n| !n.is_empty()) => Err(format!("{mode} takes no nodes")),
        "default" => Ok(MemPolicy::Default),
        "local" => Ok(MemPolicy::Local),
        "prefer" => match list(nodes)? {
            NodeList::Nodes(n) if n.len() == 1 => Ok(MemPolicy::Prefer(n[0])),
            _ => Err("prefer takes one node (prefer:0)".into()),
        },
        "bind" => list(nodes).map(MemPolicy::Bind),
        "interleave" => list(nodes).map(MemPolicy::Interleave),
        _ => Err(format!("'{mode}' is not a memory policy: default, prefer:NODE, bind:NODES, interleave:NODES or local")),
    }
}

impl Placement {
    /// The CPU set worker `k` of the job runs on, when a CPU set was given.
    pub fn cpus_of(&self, k: u32) -> Option<Vec<u32>> {
        let set = self.cpus.as_ref()?;
        if !self.split || set.is_empty() {
            return Some(set.clone());
        }
        let i = (self.first as usize + k as usize) % set.len();
        Some(vec![set[i]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_masks_and_policies_as_fio_writes_them() {
        assert_eq!(parse_list("0,2-3, 5").unwrap(), vec![0, 2, 3, 5]);
        assert!(parse_list("3-1").is_err());
        assert!(parse_list("a").is_err());
        assert!(parse_list("0,,1").is_err());
        assert_eq!(parse_mask("0x5").unwrap(), vec![0, 2]);
        assert_eq!(parse_mask("3").unwrap(), vec![0, 1]);
        assert!(parse_mask("0").is_err());
        assert_eq!(parse_mem_policy("bind:0").unwrap(), MemPolicy::Bind(NodeList::Nodes(vec![0])));
        assert_eq!(parse_mem_policy("interleave:all").unwrap(), MemPolicy::Interleave(NodeList::All));
        assert_eq!(parse_mem_policy("local").unwrap(), MemPolicy::Local);
        assert!(parse_mem_policy("prefer:0-1").is_err());
        assert!(parse_mem_policy("bind").is_err());
        assert!(parse_mem_policy("spread:0").is_err());
    }

    #[test]
    fn split_hands_out_the_set_round_robin_from_the_job_s_first_thread() {
        let p = Placement { cpus: Some(vec![0, 1]), split: true, first: 1, ..Default::default() };
        assert_eq!(p.cpus_of(0), Some(vec![1]));
        assert_eq!(p.cpus_of(1), Some(vec![0]));
        let shared = Placement { cpus: Some(vec![0, 1]), ..Default::default() };
        assert_eq!(shared.cpus_of(3), Some(vec![0, 1]));
    }
}
