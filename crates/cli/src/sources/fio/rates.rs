//! fio's rates per direction: `rate`, `rate_iops`, `rate_min` and
//! `rate_iops_min` take `read[,write[,trim]]` as `bs` does. One value
//! limits each direction on its own (`rate=1m` on a mixed job is 1 MB/s of
//! reads and 1 MB/s of writes), `r,w` sets them apart and an empty part
//! leaves that direction unlimited; `r,` is `r` (fio drops a trailing comma).
//!
//! storbench paces a worker's I/O as one stream with one mix, so a mixed job
//! limited in both directions becomes the sum of the two rates, with its mix
//! at their proportion (each direction then does its own rate, as in fio
//! when the storage keeps up). Trims are only fio's http DELETEs, which are
//! not paced per direction.

use storbench_workload::spec::RateLimit;
use storbench_workload::units::parse_size;
use storbench_workload::{apply_option, JobSpec};

/// The parts of a `read,write,trim` value as fio stores them (`bs` and
/// `blockalign` too).
pub(super) struct Parts<'a> {
    pub read: &'a str,
    pub write: &'a str,
    pub trim: &'a str,
}

pub(super) fn parts(v: &str) -> Parts<'_> {
    let v = v.strip_suffix(',').unwrap_or(v);
    let p: Vec<&str> = v.split(',').map(str::trim).collect();
    match p.as_slice() {
        [one] => Parts { read: one, write: one, trim: one },
        [r, w] => Parts { read: r, write: w, trim: w },
        [r, w, t, ..] => Parts { read: r, write: w, trim: t },
        [] => Parts { read: "", write: "", trim: "" },
    }
}

/// One part as a rate of the option's kind; empty or 0: no limit.
fn limit(key: &str, part: &str) -> Result<Option<RateLimit>, String> {
    if part.is_empty() {
        return Ok(None);
    }
    let iops = key.contains("iops");
    let n = if iops {
        part.parse::<f64>().map_err(|_| format!("{key}: '{part}' is not a number of I/Os per second"))?
    } else {
        parse_size(part).map_err(|e| format!("{key}: '{part}' {e}"))? as f64
    };
    if !n.is_finite() || n < 0.0 {
        return Err(format!("{key}: '{part}' is not a rate"));
    }
    Ok((n > 0.0).then_some(if iops { RateLimit::Iops(n) } else { RateLimit::Bytes(n) }))
}

fn amount(r: RateLimit) -> f64 {
    match r {
        RateLimit::Iops(n) | RateLimit::Bytes(n) => n,
    }
}

fn mean(s: &storbench_workload::SizeSplit) -> f64 {
    let w: u64 = s.0.iter().map(|e| e.1 as u64).sum();
    s.0.iter().map(|e| e.0 as f64 * e.1 as f64).sum::<f64>() / w.max(1) as f64
}

/// Apply fio's `key=value` (one of the four rate options) to the built job.
pub fn apply(spec: &mut JobSpec, key: &str, value: &str, trims: bool) -> Result<(), String> {
    let p = parts(value);
    let (read, write) = (limit(key, p.read)?, limit(key, p.write)?);
    if trims && limit(key, p.trim)?.is_some() {
        return Err(format!("{key}={value}: trims (http DELETEs) are not paced; give the rate for reads and writes only"));
    }
    let (reads, writes) = (spec.read_percent() > 0.0, spec.read_percent() < 100.0);
    let limit = match (reads, writes) {
        (true, false) => read,
        (false, true) => write,
        _ => mixed(spec, key, value, read, write)?,
    };
    let Some(limit) = limit else { return Ok(()) };
    if key.ends_with("min") {
        spec.rate_min = Some(limit);
    } else {
        spec.rate = Some(limit);
    }
    Ok(())
}

/// A job that reads and writes: both directions limited (the sum, the mix
/// at their proportion), neither, or one only (refused: storbench paces
/// the job as a whole).
fn mixed(
    spec: &mut JobSpec,
    key: &str,
    value: &str,
    read: Option<RateLimit>,
    write: Option<RateLimit>,
) -> Result<Option<RateLimit>, String> {
    let (r, w) = match (read, write) {
        (None, None) => return Ok(None),
        (Some(r), Some(w)) => (r, w),
        _ => {
            return Err(format!(
            "{key}={value}: a mixed job limited in one direction only is not supported; give a rate for reads and for writes (read,write)"
        ))
        }
    };
    if key.ends_with("min") {
        // storbench judges each direction on its own against one minimum.
        if amount(r) != amount(w) {
            return Err(format!("{key}={value}: different minimums for reads and writes are not supported; give one value"));
        }
        return Ok(Some(r));
    }
    let (r_ops, w_ops) = match (r, w) {
        (RateLimit::Bytes(r), RateLimit::Bytes(w)) => (r / mean(&spec.bs.read), w / mean(&spec.bs.write)),
        (r, w) => (amount(r), amount(w)),
    };
    let mix = 100.0 * r_ops / (r_ops + w_ops);
    apply_option(spec, "rwmixread", &format!("{mix:.4}")).map_err(|e| e.to_string())?;
    Ok(Some(match r {
        RateLimit::Bytes(_) => RateLimit::Bytes(amount(r) + amount(w)),
        RateLimit::Iops(_) => RateLimit::Iops(amount(r) + amount(w)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(opts: &[(&str, &str)]) -> JobSpec {
        storbench_workload::options::spec_from(opts.iter().copied()).unwrap()
    }

    #[test]
    fn one_value_limits_each_direction_and_a_triple_sets_them_apart() {
        let mut s = job(&[("rw", "randrw"), ("rwmixread", "70"), ("bs", "4k")]);
        apply(&mut s, "rate", "300,300,300", false).unwrap();
        assert_eq!((s.rate, s.rwmixread), (Some(RateLimit::Bytes(600.0)), 50.0));
        let mut s = job(&[("rw", "randrw"), ("bs", "4k")]);
        apply(&mut s, "rate_iops", "100,300", false).unwrap();
        assert_eq!((s.rate, s.rwmixread), (Some(RateLimit::Iops(400.0)), 25.0));
        let mut s = job(&[("rw", "read")]);
        apply(&mut s, "rate", "1m,", false).unwrap();
        assert_eq!(s.rate, Some(RateLimit::Bytes(1048576.0)));
        let mut s = job(&[("rw", "write")]);
        apply(&mut s, "rate", ",2k", false).unwrap();
        assert_eq!(s.rate, Some(RateLimit::Bytes(2048.0)));
        let mut s = job(&[("rw", "randrw")]);
        apply(&mut s, "rate_min", "1k", false).unwrap();
        assert_eq!((s.rate_min, s.rate), (Some(RateLimit::Bytes(1024.0)), None));
    }

    #[test]
    fn what_cannot_be_paced_as_fio_does_is_refused() {
        for (rw, key, v, says) in [
            ("randrw", "rate", ",300", "one direction only"),
            ("randrw", "rate_min", "1k,2k", "different minimums"),
            ("read", "rate", "fast", "'fast'"),
            ("read", "rate_iops", "1,x", "'x' is not a number"),
        ] {
            let e = apply(&mut job(&[("rw", rw)]), key, v, false).unwrap_err();
            assert!(e.contains(says), "{v}: {e}");
        }
    }
}
