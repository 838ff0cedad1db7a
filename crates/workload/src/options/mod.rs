//! The one option table: TOML keys, CLI flags and fio job-file lines all land here.
//!
//! Names follow fio's (`iodepth`, `rwmixread`, `ramp_time`...); dashes and
//! underscores are interchangeable. Every core option is one entry of
//! [`CORE`] (its kind of value, default, help, and how it sets a job), which
//! also generates `storbench help options`. Options the core does not know
//! are kept for the engine to validate ([`JobSpec::engine_options`]); the plan
//! step rejects any that no one claims, with the nearest known name as a
//! suggestion.

pub mod axis;
mod table;
pub mod values;

use crate::spec::*;

pub use table::CORE;

/// A bad option: which one, what was wrong, and how to fix it.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionError {
    pub option: String,
    pub message: String,
}

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "option '{}': {}", self.option, self.message)
    }
}

impl std::error::Error for OptionError {}

/// What kind of value an option takes: for parsing command lines (a flag
/// may stand alone and means 1) and for help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 0 or 1; given alone on a command line, 1.
    Flag,
    Size,
    Count,
    Duration,
    Percent,
    Number,
    Text,
    Choice(&'static [&'static str]),
}

impl Kind {
    /// How help shows the value.
    pub fn placeholder(self) -> String {
        match self {
            Kind::Flag => "[0|1]".into(),
            Kind::Size => "SIZE".into(),
            Kind::Count => "N".into(),
            Kind::Duration => "TIME".into(),
            Kind::Percent => "PCT".into(),
            Kind::Number => "NUM".into(),
            Kind::Text => "TEXT".into(),
            Kind::Choice(_) => "CHOICE".into(),
        }
    }
}

/// One option, documented where it is defined (core or engine).
#[derive(Clone, Copy, Debug)]
pub struct OptionInfo {
    pub name: &'static str,
    pub kind: Kind,
    /// What applies when the option is not given ("" when nothing does).
    pub default: &'static str,
    pub help: &'static str,
}

/// A core option: its description and how it sets a job (the message of
/// an error names what is wrong with the value; the option's name is added).
pub struct CoreOption {
    pub info: OptionInfo,
    pub aliases: &'static [&'static str],
    pub set: fn(&mut JobSpec, &str) -> Result<(), String>,
}

/// Normalise an option name: lower case, dashes to underscores, aliases resolved.
pub fn canonical_name(key: &str) -> String {
    let k = key.trim().trim_start_matches("--").to_ascii_lowercase().replace('-', "_");
    match CORE.iter().find(|o| o.aliases.contains(&k.as_str())) {
        Some(o) => o.info.name.to_string(),
        None => k,
    }
}

/// The core option called `name` (canonical).
pub fn core(name: &str) -> Option<&'static CoreOption> {
    CORE.iter().find(|o| o.info.name == name)
}

/// Names of every core option.
pub fn core_names() -> impl Iterator<Item = &'static str> + Clone {
    CORE.iter().map(|o| o.info.name)
}

/// A job from `key = value` pairs applied in order to the defaults.
pub fn spec_from<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<JobSpec, OptionError> {
    let mut s = JobSpec::default();
    for (k, v) in pairs {
        apply_option(&mut s, k, v)?;
    }
    Ok(s)
}

/// Apply one `key = value` to a spec. Unknown keys go to `engine_options`.
pub fn apply_option(spec: &mut JobSpec, key: &str, value: &str) -> Result<(), OptionError> {
    let name = canonical_name(key);
    let v = value.trim();
    match core(&name) {
        Some(o) => {
            (o.set)(spec, v).map_err(|message| OptionError { option: name, message })?;
            spec.given.0.push(o.info.name);
            Ok(())
        }
        None => {
            spec.engine_options.insert(name, v.to_string());
            Ok(())
        }
    }
}

/// The known name closest to `unknown` (Levenshtein distance at most 3).
pub fn suggest<'a>(unknown: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (levenshtein(unknown, k), k))
        .filter(|(d, k)| *d <= 3.min(k.len() / 2 + 1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = if ca == *cb { 0 } else { 1 };
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec_with(pairs: &[(&str, &str)]) -> Result<JobSpec, OptionError> {
        spec_from(pairs.iter().copied())
    }

    #[test]
    fn fio_names_with_dashes_or_underscores() {
        let s = spec_with(&[("--ramp-time", "2"), ("rwmixread", "70"), ("rw", "randrw"), ("iodepth", "16")]).unwrap();
        assert_eq!(s.ramp_time, Duration::from_secs(2));
        assert_eq!(s.read_percent(), 70.0);
        assert_eq!(s.iodepth, 16);
        let s = spec_with(&[("rwmixwrite", "30"), ("readwrite", "randrw")]).unwrap();
        assert_eq!(s.rwmixread, 70.0);
    }

    #[test]
    fn bs_and_bssplit() {
        let s = spec_with(&[("bs", "4k,64k")]).unwrap();
        assert_eq!(s.bs.read.max(), 4096);
        assert_eq!(s.bs.write.max(), 65536);
        let s = spec_with(&[("bssplit", "4k/50:8k/30:64k/20")]).unwrap();
        assert_eq!(s.bs.read.0, vec![(4096, 5000), (8192, 3000), (65536, 2000)]);
        // fio's rule: sizes without a percentage share what is left of 100.
        assert_eq!(spec_with(&[("bssplit", "4k/50:8k:64k")]).unwrap().bs.read.0, vec![(4096, 5000), (8192, 2500), (65536, 2500)]);
        let e = spec_with(&[("bssplit", "4k/50:64k/40")]).unwrap_err();
        assert!(e.to_string().contains("add up to 90, not 100"), "{e}");
        assert!(spec_with(&[("bssplit", "4k/80:64k/40")]).unwrap_err().to_string().contains("more than 100"));
        assert_eq!(s.bs.read, s.bs.write);
        assert!(spec_with(&[("bssplit", "4k/x")]).is_err());
        assert!(spec_with(&[("bs", "0")]).is_err());
    }

    #[test]
    fn distributions_and_hotset() {
        let s = spec_with(&[("random_distribution", "hotset:90/10")]).unwrap();
        assert_eq!(
            s.distribution,
            Distribution::Zoned { zones: vec![Zone { access_pct: 90.0, size_pct: 10.0 }, Zone { access_pct: 10.0, size_pct: 90.0 }] }
        );
        assert!(spec_with(&[("random_distribution", "zipf:1")]).is_err());
        assert!(spec_with(&[("random_distribution", "zoned:50/10:40/90")]).is_err());
        assert!(matches!(spec_with(&[("random_distribution", "pareto:0.2")]).unwrap().distribution, Distribution::Pareto { .. }));
        let s = spec_with(&[("random_sequence_stride", "1"), ("random_distribution", "sequence:2, 0,1")]).unwrap();
        assert_eq!((s.distribution, s.sequence_stride), (Distribution::Sequence { blocks: vec![2, 0, 1] }, true));
        for (bad, says) in
            [("sequence:", "needs block indices"), ("sequence:1,-2", "'-2' is not a block index"), ("sequence:1,,2", "'' is not")]
        {
            let e = spec_with(&[("random_distribution", bad)]).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let many = format!("sequence:{}", vec!["1"; 65].join(","));
        assert!(spec_with(&[("random_distribution", &many)]).unwrap_err().to_string().contains("at most 64"));
    }

    #[test]
    fn rates() {
        assert_eq!(spec_with(&[("rate", "500iops")]).unwrap().rate, Some(RateLimit::Iops(500.0)));
        assert_eq!(spec_with(&[("rate", "10m")]).unwrap().rate, Some(RateLimit::Bytes(10485760.0)));
        assert_eq!(spec_with(&[("rate_iops", "2k")]).unwrap().rate, Some(RateLimit::Iops(2000.0)));
        assert!(spec_with(&[("rate_iops", "0")]).is_err());
    }

    #[test]
    fn unknown_options_go_to_the_engine_and_bad_values_name_the_option() {
        let s = spec_with(&[("fixedbufs", "1")]).unwrap();
        assert_eq!(s.engine_options.get("fixedbufs").map(String::as_str), Some("1"));
        let err = spec_with(&[("iodepth", "lots")]).unwrap_err();
        assert_eq!(err.option, "iodepth");
        assert!(err.to_string().contains("lots"));
    }

    #[test]
    fn every_table_entry_sets_the_job_and_aliases_resolve() {
        for o in CORE {
            let sample = match o.info.kind {
                Kind::Flag => "1",
                Kind::Size => "8k",
                Kind::Count => "3",
                Kind::Duration => "2s",
                Kind::Percent => "30",
                Kind::Number => "5",
                Kind::Choice(c) => c[0],
                Kind::Text => match o.info.name {
                    "bssplit" => "4k/50:8k/50",
                    "rate" | "rate_min" => "100iops",
                    "random_distribution" => "zipf:1.2",
                    "object_size" => "4k/50:8k/50",
                    "object_ops" => "read:1",
                    "object_op_size" => "1k-2k",
                    "sync" => "dsync",
                    "steadystate" => "iops:10%",
                    "verify_pattern" => "0xab",
                    "cpus_allowed" | "numa_cpu_nodes" => "0",
                    "cpumask" => "0x3",
                    "numa_mem_policy" => "bind:0",
                    "cmdprio_percentage" => "20",
                    "cmdprio_class" => "3",
                    "cmdprio" => "2",
                    "cmdprio_bssplit" => "64k/25/1/1:1m/0",
                    "fallocate" => "posix",
                    _ => "x",
                },
            };
            let mut s = JobSpec::default();
            apply_option(&mut s, o.info.name, sample).unwrap_or_else(|e| panic!("{}: {e}", o.info.name));
            assert!(s.engine_options.is_empty(), "{} is handled by the core", o.info.name);
            assert!(o.info.name == "randseed" || s != JobSpec::default() || o.info.default == sample, "{} changed nothing", o.info.name);
            for a in o.aliases {
                assert_eq!(canonical_name(a), o.info.name);
            }
        }
    }

    #[test]
    fn suggestions() {
        let names = core_names();
        assert_eq!(suggest("iodpeth", names.clone()), Some("iodepth"));
        assert_eq!(suggest("rwmixrad", names.clone()), Some("rwmixread"));
        assert_eq!(suggest("completelydifferent", names), None);
    }
}
