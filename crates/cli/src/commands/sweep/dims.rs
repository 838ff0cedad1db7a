//! Dimensions from `--sweep OPTION=VALUES`: lists (`1,2,4`), ranges with a
//! geometric (`1..256x2`) or linear (`4k..64k+4k`) step; the order and
//! directory names of the points (the grid itself is `model::sweep::grid`).

use crate::error::CliError;
use storbench_engine::Kind;
use storbench_model::sweep::{Dimension, AGENTS};
use storbench_workload::units::parse_size;

/// At most this many values per dimension (a typo like `1..1000000+1`).
const MAX_VALUES: usize = 1000;

/// A value given twice, perhaps spelt two ways (`4k` and `4096`): the same
/// point would run twice and its curve turn back on itself.
fn twice(kind: Kind, values: &[String]) -> Option<(String, String)> {
    use storbench_workload::options::axis::magnitude;
    let mut seen: std::collections::HashMap<String, &String> = std::collections::HashMap::new();
    for v in values {
        let key = magnitude(kind, v).map_or_else(|| v.clone(), |m| format!("={}", m.to_bits()));
        if let Some(first) = seen.insert(key, v) {
            return Some((first.clone(), v.clone()));
        }
    }
    None
}

pub fn parse(arg: &str) -> Result<Dimension, CliError> {
    let bad = |why: String| CliError::usage(format!("--sweep {arg}: {why}"));
    let (option, spec) = arg.split_once('=').ok_or_else(|| bad("give OPTION=VALUES, e.g. iodepth=1,2,4 or numjobs=1..16x2".into()))?;
    let option = storbench_workload::options::canonical_name(option.trim());
    let known = storbench_workload::options::core(&option).is_some()
        || storbench_engine::all_option_names().contains(&option.as_str())
        || option == AGENTS;
    if !known {
        return Err(bad(format!("'{option}' is not a job or engine option (`storbench help options`), nor agents")));
    }
    let kind = option_kind(&option);
    let mut values = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once("..") {
            Some((from, rest)) => values.extend(range(from, rest, kind).map_err(bad)?),
            None => values.push(part.to_string()),
        }
    }
    if values.is_empty() {
        return Err(bad("no values".into()));
    }
    // A curve runs in the order of the values' meaning (512 < 4k < 256k),
    // whatever order they were typed in; `--shuffle` is for run order.
    storbench_workload::options::axis::sort_values(kind, &mut values);
    if let Some((a, b)) = twice(kind, &values) {
        return Err(bad(format!("{a} and {b} are the same value: give each once")));
    }
    if values.len() > MAX_VALUES {
        return Err(bad(format!("{} values; at most {MAX_VALUES} per dimension", values.len())));
    }
    Ok(Dimension { option, values })
}

/// What kind of value an option takes (for ranges).
pub fn option_kind(option: &str) -> Kind {
    if option == AGENTS {
        return Kind::Count;
    }
    match storbench_workload::options::core(option) {
        Some(o) => o.info.kind,
        None => storbench_engine::registry().iter().flat_map(|f| f.options()).find(|o| o.name == option).map_or(Kind::Text, |o| o.kind),
    }
}

/// `a..b`, `a..bxK` (times K) or `a..b+K` (plus K); b is included when a
/// step lands on it. Sizes keep their units' meaning (`4k..64kx2`: 1024s);
/// counts and rates take k and m as thousands and millions; other kinds
/// (durations, words) are given as lists.
fn range(from: &str, rest: &str, kind: Kind) -> Result<Vec<String>, String> {
    let parse: fn(&str) -> Result<u64, storbench_workload::units::UnitError> = match kind {
        Kind::Size => parse_size,
        Kind::Count | Kind::Number => storbench_workload::units::parse_count,
        _ => return Err("ranges are for sizes and counts; give this option's values as a list (a,b,c)".into()),
    };
    let num = |v: &str| parse(v.trim()).map_err(|e| format!("'{v}': {e}"));
    let (to, step) = match (rest.split_once('x'), rest.split_once('+')) {
        (Some((to, k)), _) => (to, Step::Times(num(k)?)),
        (_, Some((to, k))) => (to, Step::Plus(num(k)?)),
        _ => (rest, Step::Plus(1)),
    };
    let (from, to) = (num(from)?, num(to)?);
    match step {
        Step::Times(k) if k < 2 || from == 0 => return Err("a geometric step needs a factor of 2 or more and a start above 0".into()),
        Step::Plus(0) => return Err("a step of 0 never ends".into()),
        _ if to < from => return Err(format!("the range runs down ({from} to {to})")),
        _ => {}
    }
    let mut out = Vec::new();
    let mut v = from;
    while v <= to {
        out.push(v.to_string());
        if out.len() > MAX_VALUES {
            break;
        }
        v = match step {
            Step::Times(k) => v.saturating_mul(k),
            Step::Plus(k) => v.saturating_add(k),
        };
        if v == u64::MAX {
            break;
        }
    }
    Ok(out)
}

enum Step {
    Times(u64),
    Plus(u64),
}

/// A seeded Fisher-Yates shuffle (the seed is kept in the index).
pub fn shuffle(order: &mut [usize], seed: u64) {
    let mut rng = storbench_workload::rng::Rng::new(seed);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
}

/// `007_iodepth-8_numjobs-2[_r2]`: the run's number, then its values, in a
/// name any file system takes.
pub fn dir_name(step: usize, width: usize, dims: &[Dimension], values: &[String], repeats: u32, rep: u32) -> String {
    let clean = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') { c } else { '_' }).collect::<String>();
    let mut name = format!("{step:0width$}");
    for (d, v) in dims.iter().zip(values) {
        name += &format!("_{}-{}", clean(&d.option), clean(v));
    }
    if repeats > 1 {
        name += &format!("_r{rep}");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse("iodepth=1..16x2").unwrap().values, ["1", "2", "4", "8", "16"]);
        assert_eq!(parse("bs=4k..16k+4k").unwrap().values, ["4096", "8192", "12288", "16384"]);
        assert_eq!(parse("numjobs=1,3..5").unwrap().values, ["1", "3", "4", "5"]);
        assert_eq!(parse("rw=read,randread").unwrap().values, ["read", "randread"]);
        assert_eq!(parse("agents=1..4x2").unwrap().values, ["1", "2", "4"]);
        assert_eq!(parse("rate_iops=1k..4kx2").unwrap().values, ["1000", "2000", "4000"], "rates count in thousands");
        assert_eq!(parse("bs=256k,4096,32k,512").unwrap().values, ["512", "4096", "32k", "256k"], "by size, not spelling");
        assert_eq!(parse("iodepth=16,1,4").unwrap().values, ["1", "4", "16"]);
        for (twice, says) in
            [("bs=4k,4096", "4k and 4096 are the same value"), ("rw=read,write,read", "read and read"), ("iodepth=1..4x2,2", "2 and 2")]
        {
            let e = parse(twice).unwrap_err().message;
            assert!(e.contains(says), "{twice}: {e}");
        }
        for bad in ["iodepth", "bogus=1", "iodepth=0..8x2", "iodepth=8..1", "iodepth=1..2+0", "iodepth=1..100000", "runtime=1..5"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shuffles_keep_every_point_and_names_carry_the_values() {
        let d = |o: &str, v: &[&str]| Dimension { option: o.into(), values: v.iter().map(|s| s.to_string()).collect() };
        let dims = [d("numjobs", &["1", "2"]), d("iodepth", &["1", "4", "16"])];
        let mut order: Vec<usize> = (0..10).collect();
        shuffle(&mut order, 7);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_ne!(order, sorted);
        assert_eq!(dir_name(7, 3, &dims, &["2".into(), "16".into()], 2, 1), "007_numjobs-2_iodepth-16_r1");
    }
}
