//! fio's I/O priorities (engines/cmdprio.c): the job's own priority
//! (`prio`, `prioclass`: ioprio_set on its threads, and every read or write
//! of the asynchronous engines), and the share of reads and writes that
//! carry another one instead (`cmdprio_percentage` with `cmdprio_class` and
//! `cmdprio`, or per block size with `cmdprio_bssplit`). A priority is the
//! kernel's ioprio value, class << 13 | level.

use serde::{Deserialize, Serialize};

/// The kernel's priority classes: real time, best effort, idle.
pub const CLASS_RT: u8 = 1;
pub const CLASS_BE: u8 = 2;
pub const CLASS_IDLE: u8 = 3;

/// The kernel's ioprio value (fio's `ioprio_value`: no class is best effort).
pub fn value(class: u8, level: u8) -> u16 {
    let class = if class == 0 { CLASS_BE } else { class };
    (u16::from(class) << 13) | u16::from(level)
}

/// The class and level of an ioprio value.
pub fn parts(ioprio: u16) -> (u8, u8) {
    ((ioprio >> 13) as u8, (ioprio & 7) as u8)
}

/// A job's priorities as fio's options give them; reads first, then writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Priorities {
    /// `prio` (0-7), when given.
    pub level: Option<u8>,
    /// `prioclass` (0-3), when given.
    pub class: Option<u8>,
    /// `cmdprio_percentage`: the share of I/Os that carry the other priority.
    pub percentage: [u8; 2],
    /// `cmdprio_class` (1-3; 0: not given, real time as in fio).
    pub cmd_class: [u8; 2],
    /// `cmdprio` (0-7).
    pub cmd_level: [u8; 2],
    /// `cmdprio_bssplit`, per direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<[Vec<PrioSplit>; 2]>,
}

/// One `cmdprio_bssplit` entry: I/Os of `bs` bytes, `perc` percent of which
/// carry `prio` (class, level), or `cmdprio_class`/`cmdprio` when not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrioSplit {
    pub bs: u64,
    pub perc: u8,
    pub prio: Option<(u8, u8)>,
}

impl Priorities {
    /// The job's own priority (0: none set, the thread's as it is).
    pub fn job_value(&self) -> u16 {
        match (self.class, self.level) {
            (None, None) => 0,
            (c, l) => value(c.unwrap_or(0), l.unwrap_or(0)),
        }
    }

    /// Some I/Os carry a priority of their own (fio's cmdprio options).
    pub fn per_io(&self) -> bool {
        self.bssplit.is_some() || self.percentage.iter().any(|p| *p > 0)
    }

    /// The cmdprio value of direction `dir` (fio defaults the class to RT).
    fn cmd_value(&self, dir: usize) -> u16 {
        let class = if self.cmd_class[dir] == 0 { CLASS_RT } else { self.cmd_class[dir] };
        value(class, self.cmd_level[dir])
    }

    /// fio's check: both forms of choosing cannot be given.
    pub fn check(&self) -> Result<(), String> {
        if self.bssplit.is_some() && self.percentage.iter().any(|p| *p > 0) {
            return Err("cmdprio_percentage and cmdprio_bssplit cannot both be given (fio refuses them together); give one".into());
        }
        Ok(())
    }
}

/// One block size's cumulative shares (percent) and the priority index each
/// ends at, of `cmdprio_bssplit`.
type SizeShares = (u64, Vec<(u8, u8)>);

/// Which priority each read or write of one worker carries, drawn as fio
/// draws it: a number from 0 to 99 against the share (fio's `prio_state`,
/// a generator of its own so the job's offsets are what they would be
/// without priorities).
#[derive(Clone, Debug)]
pub struct PrioPicker {
    /// Every priority the job's I/Os may carry, the job's own first.
    pub values: Vec<u16>,
    /// Per direction: (share, index) in percentage mode.
    perc: [(u8, u8); 2],
    /// Per direction and block size: the cumulative shares and their indexes.
    split: [Vec<SizeShares>; 2],
    rng: crate::rng::Rng,
}

impl PrioPicker {
    pub fn new(p: &Priorities, seed: u64) -> PrioPicker {
        let mut values = vec![p.job_value()];
        let mut index = |v: u16| match values.iter().position(|x| *x == v) {
            Some(i) => i as u8,
            None => {
                values.push(v);
                (values.len() - 1) as u8
            }
        };
        let mut perc = [(0, 0); 2];
        let mut split: [Vec<SizeShares>; 2] = Default::default();
        for dir in 0..2 {
            match &p.bssplit {
                Some(s) => {
                    for e in s[dir].iter().filter(|e| e.perc > 0) {
                        let v = e.prio.map_or_else(|| p.cmd_value(dir), |(c, l)| value(c, l));
                        let i = index(v);
                        let at = match split[dir].iter().position(|(bs, _)| *bs == e.bs) {
                            Some(at) => at,
                            None => {
                                split[dir].push((e.bs, Vec::new()));
                                split[dir].len() - 1
                            }
                        };
                        let list = &mut split[dir][at].1;
                        let before = list.last().map_or(0, |x| x.0);
                        list.push((before.saturating_add(e.perc).min(100), i));
                    }
                }
                None if p.percentage[dir] > 0 => perc[dir] = (p.percentage[dir], index(p.cmd_value(dir))),
                None => {}
            }
        }
        PrioPicker { values, perc, split, rng: crate::rng::Rng::new(seed ^ 0x7072_696f_7374_6174) }
    }

    /// The index (into `values`) of the priority a read (`dir` 0) or write
    /// (1) of `len` bytes carries; other operations carry the job's own.
    #[inline]
    pub fn pick(&mut self, dir: Option<usize>, len: u32) -> u8 {
        let Some(dir) = dir else { return 0 };
        let (p, _) = self.perc[dir];
        if p > 0 {
            return if (self.rng.below(100) as u8) < p { self.perc[dir].1 } else { 0 };
        }
        let Some((_, list)) = self.split[dir].iter().find(|(bs, _)| *bs == u64::from(len)) else { return 0 };
        let r = self.rng.below(100) as u8;
        list.iter().find(|(cum, _)| r < *cum).map_or(0, |(_, i)| *i)
    }
}

/// `cmdprio_bssplit`'s value for one direction: `bs/perc[/class/level]`
/// entries separated by ':' (fio's `split_parse_prio_ddir`).
pub fn parse_split(v: &str, size: impl Fn(&str) -> Result<u64, String>) -> Result<Vec<PrioSplit>, String> {
    let mut out: Vec<PrioSplit> = Vec::new();
    for item in v.split(':').map(str::trim).filter(|s| !s.is_empty()) {
        let parts: Vec<&str> = item.split('/').collect();
        let num = |s: &str, max: u32, what: &str| -> Result<u8, String> {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n <= max)
                .map(|n| n as u8)
                .ok_or_else(|| format!("'{item}': the {what} '{s}' is not a number from 0 to {max} (form: 64k/25 or 64k/25/1/1)"))
        };
        let (perc, prio) = match parts.as_slice() {
            [_] => (0, None),
            [_, ""] => (0, None),
            [_, p] => (num(p, 100, "percentage")?, None),
            [_, p, c, l] => (num(p, 100, "percentage")?, Some((num(c, 3, "class")?, num(l, 7, "level")?))),
            _ => return Err(format!("'{item}' is not bs/percentage or bs/percentage/class/level (e.g. 64k/25/1/1)")),
        };
        let bs = size(parts[0])?;
        out.push(PrioSplit { bs, perc, prio });
    }
    for bs in out.iter().map(|e| e.bs) {
        let total: u32 = out.iter().filter(|e| e.bs == bs).map(|e| u32::from(e.perc)).sum();
        if total > 100 {
            return Err(format!("'{v}': the percentages of {bs}-byte I/Os add up to {total}, more than 100"));
        }
    }
    out.retain(|e| e.perc > 0);
    // fio sorts the entries by block size, keeping the given order within one.
    out.sort_by_key(|e| e.bs);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Result<u64, String> {
        crate::units::parse_size(s).map_err(|e| e.to_string())
    }

    #[test]
    fn values_are_the_kernels() {
        assert_eq!(value(1, 0), 1 << 13);
        assert_eq!(value(0, 7), (2 << 13) | 7, "no class is best effort");
        assert_eq!(parts(value(3, 2)), (3, 2));
    }

    #[test]
    fn a_percentage_picks_about_that_share() {
        let p = Priorities { class: Some(3), percentage: [20, 20], ..Default::default() };
        let mut k = PrioPicker::new(&p, 1);
        assert_eq!(k.values, [value(3, 0), value(1, 0)]);
        let high = (0..10_000).filter(|_| k.pick(Some(0), 4096) == 1).count();
        assert!((1800..2200).contains(&high), "{high}");
        assert_eq!(k.pick(None, 4096), 0, "syncs carry the job's own");
    }

    #[test]
    fn a_split_picks_by_size_and_share_with_each_entrys_priority() {
        let s = parse_split("64k/25/1/1:64k/75/3/2:1024k/0", size).unwrap();
        assert_eq!(s.len(), 2, "zero shares are dropped");
        let p = Priorities { bssplit: Some([s, Vec::new()]), ..Default::default() };
        let mut k = PrioPicker::new(&p, 7);
        assert_eq!(k.values, [0, value(1, 1), value(3, 2)]);
        let picks: Vec<u8> = (0..8000).map(|_| k.pick(Some(0), 65536)).collect();
        let rt = picks.iter().filter(|i| **i == 1).count();
        assert!((1700..2300).contains(&rt), "{rt}");
        assert!(!picks.contains(&0), "every 64k read carries one");
        assert_eq!(k.pick(Some(0), 1 << 20), 0);
        assert_eq!(k.pick(Some(1), 65536), 0, "writes have none");
    }

    #[test]
    fn bad_splits_are_refused() {
        assert!(parse_split("64k/60:64k/50", size).unwrap_err().contains("more than 100"));
        assert!(parse_split("64k/25/4/1", size).unwrap_err().contains("class"));
        assert!(parse_split("64k/25/1", size).unwrap_err().contains("bs/percentage"));
        assert!(parse_split("64k/x", size).unwrap_err().contains("percentage"));
    }
}
