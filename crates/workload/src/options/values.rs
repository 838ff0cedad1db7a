//! Parsers for the values of job options, as fio users write them. Each
//! returns the message of what is wrong; the option table adds the option's
//! name.

use crate::objects::ObjectSizes;
use crate::spec::*;
use crate::units::*;

pub type Parsed<T> = Result<T, String>;

pub fn nonempty(v: &str) -> Parsed<&str> {
    if v.is_empty() {
        return Err("needs a value".into());
    }
    Ok(v)
}

pub fn boolean(v: &str) -> Parsed<bool> {
    parse_bool(v).map_err(|e| e.to_string())
}

pub fn percent(v: &str) -> Parsed<f64> {
    parse_percent(v).map_err(|e| e.to_string())
}

pub fn count(v: &str) -> Parsed<u64> {
    parse_count(v).map_err(|e| e.to_string())
}

pub fn size(v: &str) -> Parsed<u64> {
    parse_size(v).map_err(|e| e.to_string())
}

pub fn duration(v: &str, unit: std::time::Duration) -> Parsed<std::time::Duration> {
    parse_duration(v, unit).map_err(|e| e.to_string())
}

/// A count from 1 to 65536 (workers, queue depth).
pub fn positive_u32(v: &str) -> Parsed<u32> {
    let n = count(v)?;
    if n == 0 || n > 65536 {
        return Err(format!("'{v}' must be between 1 and 65536"));
    }
    Ok(n as u32)
}

/// A depth from 0 to 65536 (fio's batching options, where 0 means the default or none).
pub fn depth_u32(v: &str) -> Parsed<u32> {
    let n = count(v)?;
    if n > 65536 {
        return Err(format!("'{v}' must be between 0 and 65536"));
    }
    Ok(n as u32)
}

/// A count from 1 to u32::MAX (objects in a key space).
pub fn positive_count(v: &str) -> Parsed<u64> {
    match count(v)? {
        n if n > 0 && n <= u32::MAX as u64 => Ok(n),
        _ => Err(format!("'{v}' must be between 1 and {}", u32::MAX)),
    }
}

/// The largest figure a rate or scale may be: a billion (IOPS per worker,
/// percent of a trace's pace); beyond it a figure is a typo or an attack
/// (`1e308` once passed as "no limit").
pub const MAX_FIGURE: f64 = 1e9;

pub fn positive_f64(v: &str) -> Parsed<f64> {
    let n = parse_count(v).map(|n| n as f64).or_else(|_| v.parse::<f64>()).map_err(|_| format!("'{v}' is not a number"))?;
    if !(n > 0.0 && n.is_finite()) {
        return Err(format!("'{v}' must be above zero"));
    }
    if n > MAX_FIGURE {
        return Err(format!("'{v}' is more than any rate or scale storbench takes (at most 1000000000)"));
    }
    Ok(n)
}

/// The slowest fixed rate: one operation in 1000 s (slower is a typo: a
/// run that never issues).
pub const MIN_IOPS: f64 = 0.001;

/// A rate in IOPS per worker.
pub fn iops(v: &str) -> Parsed<f64> {
    match positive_f64(v)? {
        n if n < MIN_IOPS => Err(format!("'{v}' IOPS is less than one operation in 1000 s (at least 0.001)")),
        n => Ok(n),
    }
}

pub fn nonzero_size(v: &str) -> Parsed<u64> {
    let n = size(v)?;
    if n == 0 {
        return Err("must be above zero".into());
    }
    Ok(n)
}

/// fio's `size=N%`: a percentage above 0 and at most 100.
pub fn size_percent(v: &str) -> Parsed<f64> {
    match v.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("'{v}%' is not a share of the file: give a percentage above 0 and at most 100 (size=20%), or a size (4g)")),
    }
}

pub fn sync_every(v: &str, data_only: bool) -> Parsed<Option<SyncEvery>> {
    let n = count(v)?;
    Ok((n > 0).then_some(SyncEvery { every: n.min(u32::MAX as u64) as u32, data_only }))
}

pub fn rw(v: &str) -> Parsed<RwMode> {
    RwMode::parse(&v.to_ascii_lowercase()).ok_or_else(|| format!("'{v}' is not one of read, write, randread, randwrite, readwrite, randrw"))
}

/// fio's offset modifier after `rw=...:`: for sequential patterns a size
/// added to each offset (negative walks backwards: `read:-8k`), for random
/// ones the number of I/Os in a row before a new random offset (`randread:8`).
pub fn rw_modifier(mode: RwMode, m: &str) -> Parsed<(i64, u32)> {
    if mode.is_random() {
        let n = count(m)?;
        if n == 0 || n > u32::MAX as u64 {
            return Err(format!("'{m}' after ':' must be a count of I/Os of at least 1 (e.g. randread:8)"));
        }
        return Ok((0, n as u32));
    }
    let (neg, size) = match m.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, m),
    };
    let bytes = parse_size(size).map_err(|e| format!("'{m}' after ':' is not a size to skip (e.g. write:4k or read:-8k): {e}"))? as i64;
    Ok((if neg { -bytes } else { bytes }, 1))
}

/// `4k` or `4k,64k` (reads, writes).
pub fn bs(v: &str) -> Parsed<BlockSizes> {
    let mut parts = v.split(',');
    let read = nonzero_size(parts.next().unwrap_or(""))?;
    let write = match parts.next() {
        Some(w) if !w.trim().is_empty() => nonzero_size(w)?,
        _ => read,
    };
    Ok(BlockSizes { read: SizeSplit::fixed(read), write: SizeSplit::fixed(write) })
}

/// `4k/50:64k/50`: sizes with percentages, as fio takes them: sizes given
/// without one share what the others leave of 100; percentages that are all
/// given must add up to 100 (fio would give a shortfall to the last size,
/// silently: here it is an error).
pub fn split(v: &str) -> Parsed<SizeSplit> {
    let mut given: Vec<(u64, Option<f64>)> = Vec::new();
    for item in v.split(':').filter(|s| !s.trim().is_empty()) {
        let (size, pct) = match item.split_once('/') {
            Some((s, p)) => (s, Some(p)),
            None => (item, None),
        };
        let size = nonzero_size(size)?;
        let pct = pct
            .map(|p| p.trim().trim_end_matches('%').parse::<f64>().ok().filter(|x| (0.0..=100.0).contains(x)))
            .map(|p| p.ok_or_else(|| format!("the percentage in '{item}' is not a number from 0 to 100 (form: 4k/50:64k/50)")))
            .transpose()?;
        given.push((size, pct));
    }
    let total: f64 = given.iter().filter_map(|g| g.1).sum();
    let missing = given.iter().filter(|g| g.1.is_none()).count();
    if total > 100.0 + 1e-9 {
        return Err(format!("'{v}': the percentages add up to {total}, more than 100"));
    }
    if missing == 0 && (total - 100.0).abs() > 1e-9 && given.len() > 1 {
        return Err(format!("'{v}': the percentages add up to {total}, not 100; make them add up to 100"));
    }
    let share = if missing > 0 { (100.0 - total) / missing as f64 } else { 0.0 };
    // Weights in hundredths of a percent keep fractional shares exact enough.
    let entries: Vec<(u64, u32)> =
        given.iter().map(|(s, p)| (*s, (p.unwrap_or(share) * 100.0).round() as u32)).filter(|e| e.1 > 0).collect();
    if entries.is_empty() {
        return Err(format!("'{v}' has no size with a percentage above zero (form: 4k/50:64k/50)"));
    }
    Ok(SizeSplit(entries))
}

/// `4k/50:64k/50` or `reads,writes`.
pub fn bssplit(v: &str) -> Parsed<BlockSizes> {
    let mut parts = v.split(',');
    let read = split(parts.next().unwrap_or(""))?;
    let write = match parts.next() {
        Some(w) if !w.trim().is_empty() => split(w)?,
        _ => read.clone(),
    };
    Ok(BlockSizes { read, write })
}

/// `100m` (bytes/s) or `500iops`.
pub fn rate(v: &str) -> Parsed<RateLimit> {
    let lower = v.to_ascii_lowercase();
    if let Some(n) = lower.strip_suffix("iops") {
        return Ok(RateLimit::Iops(iops(n.trim())?));
    }
    Ok(RateLimit::Bytes(nonzero_size(lower.trim_end_matches("/s"))? as f64))
}

pub fn arrival(v: &str) -> Parsed<Arrival> {
    match v.to_ascii_lowercase().as_str() {
        "linear" | "uniform" => Ok(Arrival::Linear),
        "poisson" => Ok(Arrival::Poisson),
        _ => Err(format!("'{v}' is not linear or poisson")),
    }
}

/// `uniform`, `zipf:1.2`, `pareto:0.2`, `normal:10`, `zoned:60/10:30/20:10/70`,
/// `hotset:90/10` (90% of I/O to a hot 10% of the space).
pub fn distribution(v: &str) -> Parsed<Distribution> {
    let lower = v.to_ascii_lowercase();
    let (kind, arg) = lower.split_once(':').unwrap_or((lower.as_str(), ""));
    let num = |what: &str| -> Parsed<f64> { arg.parse::<f64>().map_err(|_| format!("{kind} needs {what}, e.g. {kind}:{}", example(kind))) };
    Ok(match kind {
        "uniform" | "random" => Distribution::Uniform,
        "zipf" => {
            let theta = num("a theta")?;
            if !(theta > 0.0 && theta <= 100.0) || theta == 1.0 {
                return Err("zipf theta must be above 0, not 1, and at most 100 (e.g. zipf:1.2)".into());
            }
            Distribution::Zipf { theta }
        }
        "pareto" => {
            let h = num("an h")?;
            if !(h > 0.0 && h < 1.0) {
                return Err("pareto h must be between 0 and 1 (e.g. pareto:0.2 for 80/20)".into());
            }
            Distribution::Pareto { h }
        }
        "normal" | "gauss" => {
            let dev_pct = num("a deviation in percent")?;
            if !(dev_pct > 0.0 && dev_pct <= 100.0) {
                return Err("normal deviation must be a percentage above 0 (e.g. normal:10)".into());
            }
            Distribution::Normal { dev_pct }
        }
        "zoned" => Distribution::Zoned { zones: zones(arg)? },
        "sequence" => Distribution::Sequence { blocks: sequence(arg)? },
        "hotset" => hotset(arg)?,
        _ => {
            return Err(format!(
                "'{v}' is not uniform, zipf:θ, pareto:h, normal:dev%, zoned:access/size:..., hotset:access/size or sequence:i,j,..."
            ))
        }
    })
}

/// fio's most elements in a `sequence` distribution (FIO_SEQ_MAX).
const SEQUENCE_MAX: usize = 64;

/// `2,0,1`: block indices, whole numbers, at most 64 of them (fio's
/// parse_sequence_distribution).
fn sequence(arg: &str) -> Parsed<Vec<u64>> {
    if arg.trim().is_empty() {
        return Err("sequence needs block indices, e.g. sequence:2,0,1".into());
    }
    let blocks = arg
        .split(',')
        .map(|e| {
            let e = e.trim();
            match e.bytes().all(|b| b.is_ascii_digit()) && !e.is_empty() {
                true => e.parse::<u64>().map_err(|_| format!("sequence element '{e}' is too large")),
                false => Err(format!("sequence element '{e}' is not a block index (a whole number of 0 or more)")),
            }
        })
        .collect::<Parsed<Vec<u64>>>()?;
    if blocks.len() > SEQUENCE_MAX {
        return Err(format!("sequence has {} elements; at most {SEQUENCE_MAX} (as fio)", blocks.len()));
    }
    Ok(blocks)
}

fn example(kind: &str) -> &'static str {
    match kind {
        "zipf" => "1.2",
        "pareto" => "0.2",
        "normal" | "gauss" => "10",
        _ => "...",
    }
}

fn zones(arg: &str) -> Parsed<Vec<Zone>> {
    let mut zones = Vec::new();
    let parts: Vec<&str> = arg.split(':').filter(|s| !s.is_empty()).collect();
    for (i, z) in parts.iter().enumerate() {
        let (a, s) = z.split_once('/').ok_or_else(|| format!("zone '{z}' is not access%/size%"))?;
        // As in fio, the last zone may leave its size out: the rest of the space.
        let size_pct = match s {
            "" if i + 1 == parts.len() => {
                let rest = 100.0 - zones.iter().map(|z: &Zone| z.size_pct).sum::<f64>();
                if rest <= 0.0 {
                    return Err(format!("the last zone '{z}' takes the rest of the space, but the zones before it already cover 100%"));
                }
                rest
            }
            _ => percent(s)?,
        };
        zones.push(Zone { access_pct: percent(a)?, size_pct });
    }
    let access: f64 = zones.iter().map(|z| z.access_pct).sum();
    let size: f64 = zones.iter().map(|z| z.size_pct).sum();
    if zones.is_empty() || (access - 100.0).abs() > 0.01 || (size - 100.0).abs() > 0.01 {
        return Err(format!(
            "zones must each be access%/size% and both must add up to 100 (got {access}% of I/O over {size}% of space), e.g. zoned:60/10:30/20:10/70"
        ));
    }
    Ok(zones)
}

fn hotset(arg: &str) -> Parsed<Distribution> {
    let (a, s) = arg.split_once('/').ok_or("hotset needs access%/size%, e.g. hotset:90/10 (90% of I/O to 10% of the space)")?;
    let (access, size) = (percent(a)?, percent(s)?);
    if size <= 0.0 || size >= 100.0 {
        return Err("hotset size must be between 0 and 100 percent, exclusive".into());
    }
    Ok(Distribution::Zoned {
        zones: vec![Zone { access_pct: access, size_pct: size }, Zone { access_pct: 100.0 - access, size_pct: 100.0 - size }],
    })
}

/// `4k-1m`: an inclusive range of sizes.
pub fn range(v: &str) -> Parsed<(u64, u64)> {
    let (a, b) = v.split_once('-').unwrap_or((v, v));
    let (min, max) = (nonzero_size(a)?, nonzero_size(b)?);
    if min > max {
        return Err(format!("'{v}': the first size is larger than the second (form: 4k-64k)"));
    }
    if max > u32::MAX as u64 {
        return Err(format!("'{v}': sizes above 4 GiB are not supported"));
    }
    Ok((min, max))
}

/// `4m`, classes `4k/70:1m/30`, or a range `4k-1m` (objects may be empty).
pub fn object_sizes(v: &str) -> Parsed<ObjectSizes> {
    if v.contains('-') {
        let (a, b) = v.split_once('-').unwrap_or((v, v));
        let (min, max) = (size(a)?, size(b)?);
        if min > max || max > u32::MAX as u64 {
            return Err(format!("'{v}' is not a range of sizes from small to large, below 4 GiB (form: 4k-1m)"));
        }
        return Ok(ObjectSizes::Range { min, max });
    }
    if parse_size(v).ok() == Some(0) {
        return Ok(ObjectSizes::Range { min: 0, max: 0 });
    }
    let split = split(v)?;
    if split.max() > u32::MAX as u64 {
        return Err(format!("'{v}': objects above 4 GiB are not supported"));
    }
    // The model keeps a byte per object naming its size.
    if split.0.len() > 255 {
        return Err(format!("'{v}': at most 255 object sizes; give a range (4k-1m) for more"));
    }
    Ok(ObjectSizes::Classes { split })
}

/// `read:70,create:20,delete:10`: operation weights.
pub fn mix(v: &str) -> Parsed<Vec<(OpKind, u32)>> {
    const OPS: &str = "create, read, update, write, stat, delete, list";
    let mut mix: Vec<(OpKind, u32)> = Vec::new();
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (op, w) = item.split_once(':').unwrap_or((item, "1"));
        let op = OpKind::parse(&op.trim().to_ascii_lowercase())
            .filter(|o| *o != OpKind::Sync)
            .ok_or_else(|| format!("'{op}' is not an object operation; use {OPS}"))?;
        let w: u32 = w
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("weight '{w}' of {} is not a whole number (form: read:70,create:30)", op.name()))?;
        if mix.iter().any(|m| m.0 == op) {
            return Err(format!("{} is listed twice", op.name()));
        }
        if w > 0 {
            mix.push((op, w));
        }
    }
    if mix.is_empty() {
        return Err(format!("'{v}' gives no operation a weight above zero (form: read:70,create:30; operations: {OPS})"));
    }
    Ok(mix)
}

/// A seed that differs from run to run (fio `randrepeat=0`).
pub fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (t.as_nanos() as u64) ^ ((std::process::id() as u64) << 32) ^ DEFAULT_SEED
}

/// A log option's prefix; given bare (`write_bw_log` alone, or 1) it is
/// empty, and the job's name is used, as in fio.
pub fn log_prefix(v: &str) -> String {
    match v.trim() {
        "" | "1" => String::new(),
        p => p.to_string(),
    }
}
