//! Which agents a fleet run uses, and what each one runs.
//!
//! `--agents HOST[:PORT],...` or `--agents-file FILE`, one agent a line:
//!
//! ```text
//! # address        name (optional)   job options for this agent only
//! 10.0.0.11:7450   name=rack1-a      rbdname=bench-a
//! 10.0.0.12        name=rack1-b      rbdname=bench-b  directory=/mnt/b
//! ```
//!
//! Every agent runs every job with the job's `numjobs` (as fio's
//! client/server does), unless `--share-numjobs` shares each job's
//! `numjobs` out among the agents. Object jobs get a prefix per agent (the
//! job's prefix + `a<N>.`), so no two agents ever touch one object.

use std::collections::HashSet;
use storbench_workload::JobSpec;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentSpec {
    pub name: String,
    /// host:port
    pub address: String,
    /// Job options that apply on this agent only.
    pub options: Vec<(String, String)>,
}

impl AgentSpec {
    /// Whether `host` names it: its name in the run, its address, or the
    /// address's host without the port (`proc-stop:ceph-osd@HOST`).
    pub fn answers_to(&self, host: &str) -> bool {
        let bare = self.address.rsplit_once(':').map_or(self.address.as_str(), |(h, _)| h);
        [self.name.as_str(), self.address.as_str(), bare.trim_matches(['[', ']'])].contains(&host)
    }
}

/// `HOST[:PORT],...`
pub fn parse_list(list: &str) -> Result<Vec<AgentSpec>, String> {
    let agents: Vec<AgentSpec> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(agent).collect::<Result<_, _>>()?;
    check(agents)
}

/// An agents file (see the module's documentation).
pub fn parse_file(text: &str, path: &str) -> Result<Vec<AgentSpec>, String> {
    let mut agents = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let Some(address) = words.next() else { continue };
        let mut a = agent(address).map_err(|e| format!("{path} line {}: {e}", n + 1))?;
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                return Err(format!("{path} line {}: '{w}' is not option=value", n + 1));
            };
            if k == "name" {
                a.name = v.to_string();
            } else {
                a.options.push((k.to_string(), v.to_string()));
            }
        }
        agents.push(a);
    }
    check(agents).map_err(|e| format!("{path}: {e}"))
}

fn agent(address: &str) -> Result<AgentSpec, String> {
    let has_port = match address.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') && (!host.contains(':') || host.ends_with(']')) => {
            port.parse::<u16>().map_err(|_| format!("'{address}': the port must be a number"))?;
            true
        }
        _ => false,
    };
    if address.starts_with(':') || address.contains('/') {
        return Err(format!("'{address}' is not HOST or HOST:PORT"));
    }
    let address = if has_port { address.to_string() } else { format!("{address}:{}", crate::DEFAULT_PORT) };
    Ok(AgentSpec { name: address.clone(), address, options: Vec::new() })
}

fn check(agents: Vec<AgentSpec>) -> Result<Vec<AgentSpec>, String> {
    if agents.is_empty() {
        return Err("no agents given".into());
    }
    let mut names = HashSet::new();
    for a in &agents {
        if !names.insert(a.name.as_str()) {
            return Err(format!("agent {} is given twice; give each agent its own name=", a.name));
        }
    }
    Ok(agents)
}

/// The jobs agent `index` of `count` runs: the run's jobs with this
/// agent's options applied, its own object prefix, and (`share`) its part
/// of each job's numjobs.
pub fn jobs_for(specs: &[JobSpec], agent: &AgentSpec, index: usize, count: usize, share: bool) -> Result<Vec<JobSpec>, String> {
    let mut out = Vec::new();
    for spec in specs {
        let mut s = spec.clone();
        for (k, v) in &agent.options {
            storbench_workload::options::apply_option(&mut s, k, v).map_err(|e| format!("agent {}: {k}={v}: {e}", agent.name))?;
        }
        if let Some(o) = s.objects.as_mut() {
            o.prefix = Some(format!("{}a{index}.", o.prefix_for(&spec.name)));
        }
        if share || spec.ranks_over_fleet {
            spread(&mut s, spec, index, count)?;
        }
        out.push(s);
    }
    Ok(out)
}

/// Agent `index`'s part of a job's workers, as ranks of the one job: worker
/// k of the job over the fleet starts at `offset + k * offset_increment`
/// (fio's stripes, not each agent's from its own first), and a job of
/// ranks (a checkpoint) names its files and counts its objects as its
/// agent's part, so agents on a shared directory do not write one file.
fn spread(s: &mut JobSpec, spec: &JobSpec, index: usize, count: usize) -> Result<(), String> {
    let part = shared(spec.numjobs, index, count).ok_or_else(|| match spec.ranks_over_fleet {
        true => format!(
            "job '{}': its {} ranks cannot be divided over {count} agents (each needs at least one); \
             give more with --accelerators, or run it on fewer agents",
            spec.name, spec.numjobs
        ),
        false => format!(
            "job '{}': numjobs={} cannot be shared out among {count} agents (each needs at least one worker); \
             raise numjobs or drop --share-numjobs",
            spec.name, spec.numjobs
        ),
    })?;
    let first: u32 = (0..index).filter_map(|i| shared(spec.numjobs, i, count)).sum();
    s.numjobs = part;
    s.offset = s.offset.saturating_add(first as u64 * s.offset_increment);
    s.stripes_after = spec.numjobs - first - part;
    if spec.ranks_over_fleet {
        if s.filenames.is_empty() {
            s.file_stem = Some(format!("{}.a{index}", spec.file_stem.as_deref().unwrap_or(&spec.name)));
        }
        if let Some(o) = s.objects.as_mut() {
            // The agent's part of the objects, as its ranks' part of the ranks.
            let n = spec.numjobs.max(1) as u64;
            o.count = o.count * (first + part) as u64 / n - o.count * first as u64 / n;
        }
    }
    Ok(())
}

/// Agent `index`'s part of `total` workers (the first ones take the remainder).
fn shared(total: u32, index: usize, count: usize) -> Option<u32> {
    let (count, index) = (count as u32, index as u32);
    let part = total / count + u32::from(index < total % count);
    (part > 0).then_some(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_get_the_default_port_and_names() {
        let a = parse_list("10.0.0.1, node2:7999,[fd00::1]:7450").unwrap();
        assert_eq!(a[0].address, "10.0.0.1:7450");
        assert_eq!(a[1].address, "node2:7999");
        assert_eq!(a[2].address, "[fd00::1]:7450");
        assert!(parse_list("h:port").unwrap_err().contains("port must be a number"));
        assert!(parse_list("a,a").unwrap_err().contains("given twice"));
        assert!(parse_list(" , ").unwrap_err().contains("no agents"));
    }

    #[test]
    fn an_agents_file_names_agents_and_gives_them_their_own_options() {
        let text = "# fleet\n10.0.0.11 name=a rbdname=img-a\n\n10.0.0.12:7451 name=b rbdname=img-b # second\n";
        let a = parse_file(text, "agents.txt").unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!((a[1].name.as_str(), a[1].address.as_str()), ("b", "10.0.0.12:7451"));
        assert_eq!(a[1].options, vec![("rbdname".to_string(), "img-b".to_string())]);
        let e = parse_file("10.0.0.1 oops\n", "agents.txt").unwrap_err();
        assert!(e.contains("agents.txt line 1") && e.contains("option=value"), "{e}");
    }

    #[test]
    fn shared_numjobs_cover_the_total_and_each_agent_gets_one() {
        let parts: Vec<u32> = (0..3).map(|i| shared(8, i, 3).unwrap()).collect();
        assert_eq!(parts, vec![3, 3, 2]);
        assert_eq!(shared(2, 2, 3), None);
    }

    #[test]
    fn a_job_of_ranks_is_divided_over_the_agents_each_rank_at_its_place() {
        // A checkpoint of 8 ranks of 2 MiB stripes over 3 agents: 3, 3 and 2
        // ranks, the second agent's first rank is rank 3 (its stripe 6 MiB
        // after the job's offset), files of each agent's own.
        let spec = JobSpec {
            name: "ck-write-1".into(),
            numjobs: 8,
            offset: 1 << 30,
            offset_increment: 2 << 20,
            file_stem: Some("ck-1".into()),
            ranks_over_fleet: true,
            ..JobSpec::default()
        };
        let agent = |i: usize| jobs_for(std::slice::from_ref(&spec), &AgentSpec::default(), i, 3, false).unwrap().remove(0);
        let parts: Vec<(u32, u64, u32, Option<String>)> =
            (0..3).map(agent).map(|j| (j.numjobs, j.offset, j.stripes_after, j.file_stem)).collect();
        // Each also says how many ranks come after its own, so the first
        // agent (which makes a shared image) makes room for them.
        assert_eq!(
            parts,
            vec![
                (3, 1 << 30, 5, Some("ck-1.a0".into())),
                (3, (1 << 30) + (6 << 20), 2, Some("ck-1.a1".into())),
                (2, (1 << 30) + (12 << 20), 0, Some("ck-1.a2".into()))
            ]
        );
        // Objects: a rank's one each, under the agent's own prefix.
        let mut objects = spec.clone();
        storbench_workload::options::apply_option(&mut objects, "objects", "8").unwrap();
        let counts: Vec<u64> = (0..3)
            .map(|i| {
                jobs_for(std::slice::from_ref(&objects), &AgentSpec::default(), i, 3, false).unwrap()[0].objects.as_ref().unwrap().count
            })
            .collect();
        assert_eq!(counts, vec![3, 3, 2]);
        let e = jobs_for(&[JobSpec { numjobs: 2, ..spec.clone() }], &AgentSpec::default(), 2, 3, false).unwrap_err();
        assert!(e.contains("2 ranks cannot be divided over 3 agents") && e.contains("--accelerators"), "{e}");
        // Shared numjobs keep fio's stripes over the fleet too (each agent's
        // own files, as before).
        let plain = JobSpec { ranks_over_fleet: false, ..spec };
        let second = jobs_for(&[plain], &AgentSpec::default(), 1, 3, true).unwrap().remove(0);
        assert_eq!((second.offset, second.file_stem.as_deref()), ((1 << 30) + (6 << 20), Some("ck-1")));
    }

    #[test]
    fn each_agent_gets_its_own_object_prefix_and_options() {
        let mut spec = JobSpec { name: "w".into(), numjobs: 5, ..JobSpec::default() };
        storbench_workload::options::apply_option(&mut spec, "objects", "100").unwrap();
        let agent = AgentSpec { name: "b".into(), address: "b:1".into(), options: vec![("iodepth".into(), "8".into())] };
        let jobs = jobs_for(std::slice::from_ref(&spec), &agent, 1, 2, true).unwrap();
        assert_eq!(jobs[0].iodepth, 8);
        assert_eq!(jobs[0].numjobs, 2);
        assert_eq!(jobs[0].objects.as_ref().unwrap().prefix.as_deref(), Some("storbench.w.a1."));
        let bad = AgentSpec { options: vec![("iodepth".into(), "x".into())], ..agent };
        assert!(jobs_for(&[spec], &bad, 0, 2, false).unwrap_err().contains("agent b: iodepth=x"));
    }
}
