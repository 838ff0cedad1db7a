//! A job's placement on this machine: its CPUs and NUMA nodes checked
//! against the ones the kernel has online (before anything runs), and each
//! worker thread bound to them as it starts, before it allocates its
//! buffers (sched_setaffinity and set_mempolicy on the calling thread, as
//! fio does for its threads).

use storbench_workload::placement::{parse_list, MemPolicy, NodeList, Placement};

const CPUS_ONLINE: &str = "/sys/devices/system/cpu/online";
const NODES_ONLINE: &str = "/sys/devices/system/node/online";

/// A kernel list file (`0-1,4`), or an empty list if it cannot be read.
fn online(path: &str) -> Vec<u32> {
    std::fs::read_to_string(path).ok().and_then(|s| parse_list(s.trim()).ok()).unwrap_or_default()
}

/// `0-3,6` from ascending numbers.
fn show(list: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let mut j = i;
        while j + 1 < list.len() && list[j + 1] == list[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { list[i].to_string() } else { format!("{}-{}", list[i], list[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// The names in `asked` that `have` lacks, or why they are refused.
fn missing(option: &str, what: &str, asked: &[u32], have: &[u32]) -> Result<(), String> {
    let absent: Vec<u32> = asked.iter().copied().filter(|c| !have.contains(c)).collect();
    if absent.is_empty() {
        return Ok(());
    }
    let s = |n: usize| if n == 1 { "" } else { "s" };
    Err(format!(
        "{option} names {what}{} {} that this machine does not have online (it has {what}{} {}); name only those",
        s(absent.len()),
        show(&absent),
        s(have.len()),
        show(have)
    ))
}

/// Every CPU and node the placement names exists here.
pub fn check(p: &Placement) -> Result<(), String> {
    let cpus = online(CPUS_ONLINE);
    if let Some(set) = &p.cpus {
        missing("cpus_allowed", "CPU", set, &cpus)?;
    }
    let nodes = online(NODES_ONLINE);
    if let Some(n) = &p.cpu_nodes {
        missing("numa_cpu_nodes", "node", n, &nodes)?;
    }
    match &p.mem {
        Some(MemPolicy::Prefer(n)) => missing("numa_mem_policy", "node", &[*n], &nodes),
        Some(MemPolicy::Bind(NodeList::Nodes(n)) | MemPolicy::Interleave(NodeList::Nodes(n))) => {
            missing("numa_mem_policy", "node", n, &nodes)
        }
        _ => Ok(()),
    }
}

/// The CPUs of NUMA nodes, from sysfs.
fn node_cpus(nodes: &[u32]) -> Vec<u32> {
    let mut cpus: Vec<u32> = nodes.iter().flat_map(|n| online(&format!("/sys/devices/system/node/node{n}/cpulist"))).collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Bind the calling thread (worker `k` of the job) to its CPUs and memory policy.
pub fn bind(p: &Placement, k: u32) -> Result<(), String> {
    // As in fio, the nodes' CPUs are applied after the CPU set, so they win.
    let cpus = match &p.cpu_nodes {
        Some(nodes) => Some(node_cpus(nodes)),
        None => p.cpus_of(k),
    };
    if let Some(cpus) = cpus {
        set_affinity(&cpus).map_err(|e| format!("could not bind the worker to CPUs {} ({e})", show(&cpus)))?;
    }
    if let Some(mem) = &p.mem {
        set_mempolicy(mem).map_err(|e| format!("could not set the worker's memory policy ({e})"))?;
    }
    Ok(())
}

fn set_affinity(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set, CPU_SET
    // stays inside it (the numbers are below CPU_SETSIZE, checked when
    // parsed), and pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn set_mempolicy(mem: &MemPolicy) -> std::io::Result<()> {
    const DEFAULT: i32 = 0;
    const PREFERRED: i32 = 1;
    const BIND: i32 = 2;
    const INTERLEAVE: i32 = 3;
    const LOCAL: i32 = 4;
    let all = || online(NODES_ONLINE);
    let (mode, nodes) = match mem {
        MemPolicy::Default => (DEFAULT, vec![]),
        MemPolicy::Local => (LOCAL, vec![]),
        MemPolicy::Prefer(n) => (PREFERRED, vec![*n]),
        MemPolicy::Bind(NodeList::All) => (BIND, all()),
        MemPolicy::Interleave(NodeList::All) => (INTERLEAVE, all()),
        MemPolicy::Bind(NodeList::Nodes(n)) => (BIND, n.clone()),
        MemPolicy::Interleave(NodeList::Nodes(n)) => (INTERLEAVE, n.clone()),
    };
    let mut mask = [0u64; storbench_workload::placement::MAX_CPUS as usize / 64];
    for n in &nodes {
        mask[*n as usize / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() { (std::ptr::null(), 0) } else { (mask.as_ptr(), mask.len() * 64) };
    // SAFETY: set_mempolicy reads maxnode bits from the mask, which holds them.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_shown_as_ranges() {
        assert_eq!(show(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(show(&[]), "");
    }

    #[test]
    fn a_cpu_the_machine_lacks_is_named() {
        let e = missing("cpus_allowed", "CPU", &[0, 900], &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 900 that this machine") && e.contains("CPUs 0-1"), "{e}");
    }
}
