//! The one option table: TOML keys, CLI flags and fio job-file lines all land here.
//!
//! Names follow fio's (`iodepth`, `rwmixread`, `ramp_time`...); dashes and
//! underscores are interchangeable. Options the core does not know are kept for
//! the engine to validate ([`JobSpec::engine_options`]); the plan step rejects any
//! that no one claims, with the nearest known name as a suggestion.

use crate::objects::{ObjectSizes, ObjectSpec};
use crate::spec::*;
use crate::units::*;
use std::time::Duration;

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

/// The options the core understands, with a one-line help each.
pub const CORE_OPTIONS: &[(&str, &str)] = &[
    ("name", "job name"),
    ("rw", "read|write|randread|randwrite|readwrite|randrw (alias: readwrite)"),
    ("rwmixread", "percentage of reads in a mixed job (default 50)"),
    ("rwmixwrite", "percentage of writes in a mixed job"),
    ("bs", "block size, or read,write sizes (e.g. 4k or 4k,64k)"),
    ("bssplit", "weighted block sizes, e.g. 4k/50:64k/50 (reads,writes may differ)"),
    ("iodepth", "I/Os kept in flight per worker"),
    ("numjobs", "number of workers (threads)"),
    ("size", "bytes of each file or device to use"),
    ("offset", "start of the region used"),
    ("io_size", "stop after this many bytes per worker (alias: io_limit)"),
    ("filename", "file(s) or block device(s), colon-separated"),
    ("directory", "directory in which to create per-worker files"),
    ("ioengine", "psync|io_uring|null"),
    ("direct", "1 to bypass the page cache (O_DIRECT)"),
    ("buffered", "0 to bypass the page cache (inverse of direct)"),
    ("runtime", "run time (seconds, or 30s/5m)"),
    ("ramp_time", "warm-up excluded from the results"),
    ("time_based", "run for runtime even when size has been covered"),
    ("rate", "fixed rate per worker: bytes/s (e.g. 100m) or IOPS with an 'iops' suffix"),
    ("rate_iops", "fixed rate per worker in IOPS"),
    ("rate_process", "linear|poisson arrivals in fixed-rate mode"),
    ("random_distribution", "uniform|zipf:θ|pareto:h|normal:dev%|zoned:a/s:...|hotset:access/size"),
    ("fsync", "fsync after every N writes"),
    ("fdatasync", "fdatasync after every N writes"),
    ("thinktime", "pause after I/O (microseconds unless suffixed)"),
    ("thinktime_blocks", "I/Os issued between think times"),
    ("zero_buffers", "write zeros (compressible: only on purpose)"),
    ("buffer_compress_percentage", "percentage of each written block that compresses away"),
    ("dedupe_percentage", "percentage of writes that repeat an earlier block"),
    ("rados_bench_data", "write rados bench's object contents (so rados bench seq/rand can verify them)"),
    ("allow_overwrite", "write to an existing file or device storbench did not create"),
    ("unlink", "remove the files this job created when it ends"),
    ("stonewall", "wait for the jobs before this one (alias: wait_for_previous)"),
    ("randseed", "seed for the job's random numbers"),
    ("number_ios", "stop after this many operations per worker"),
    ("objects", "object jobs: number of objects in the key space (default 1024)"),
    ("object_size", "object size: 4m, classes 4k/70:1m/30, or a range 4k-1m"),
    ("object_prefix", "object name prefix (default storbench.<job>.)"),
    ("object_ops", "operation weights, e.g. read:70,create:10,update:10,delete:5,stat:5 (also write, list)"),
    ("object_op_size", "length range of partial reads/writes, e.g. 4k-64k (default: whole objects)"),
    ("prefill", "write every object before the measured phase"),
    ("initial_objects", "write this many objects before the measured phase (the rest of the key space is for creates)"),
    ("objects_exist", "the objects exist already (left by an earlier run)"),
    ("cleanup", "remove the objects when the run ends (default 1, or 0 with objects_exist=1)"),
];

/// Normalise an option name: lower case, dashes to underscores, aliases resolved.
pub fn canonical_name(key: &str) -> String {
    let k = key.trim().trim_start_matches("--").to_ascii_lowercase().replace('-', "_");
    match k.as_str() {
        "readwrite" => "rw".into(),
        "blocksize" => "bs".into(),
        "io_limit" => "io_size".into(),
        "wait_for_previous" => "stonewall".into(),
        "filesize" => "size".into(),
        _ => k,
    }
}

fn bad(option: &str, e: impl std::fmt::Display) -> OptionError {
    OptionError { option: option.to_string(), message: e.to_string() }
}

/// Apply one `key = value` to a spec. Unknown keys go to `engine_options`.
pub fn apply_option(spec: &mut JobSpec, key: &str, value: &str) -> Result<(), OptionError> {
    let name = canonical_name(key);
    let v = value.trim();
    let e = |err: UnitError| bad(&name, err);
    match name.as_str() {
        "name" => spec.name = nonempty(&name, v)?.to_string(),
        "rw" => {
            spec.rw = RwMode::parse(&v.to_ascii_lowercase())
                .ok_or_else(|| bad(&name, format!("'{v}' is not one of read, write, randread, randwrite, readwrite, randrw")))?
        }
        "rwmixread" => spec.rwmixread = parse_percent(v).map_err(e)?,
        "rwmixwrite" => spec.rwmixread = 100.0 - parse_percent(v).map_err(e)?,
        "bs" => spec.bs = parse_bs(&name, v)?,
        "bssplit" => spec.bs = parse_bssplit(&name, v)?,
        "iodepth" => spec.iodepth = positive_u32(&name, v)?,
        "numjobs" => spec.numjobs = positive_u32(&name, v)?,
        "size" => spec.size = Some(nonzero_size(&name, v)?),
        "offset" => spec.offset = parse_size(v).map_err(e)?,
        "io_size" => spec.io_size = Some(nonzero_size(&name, v)?),
        "filename" => spec.filenames = v.split(':').filter(|s| !s.is_empty()).map(String::from).collect(),
        "directory" => spec.directory = Some(nonempty(&name, v)?.to_string()),
        "ioengine" => spec.ioengine = nonempty(&name, v)?.to_ascii_lowercase(),
        "direct" => spec.direct = parse_bool(v).map_err(e)?,
        "buffered" => spec.direct = !parse_bool(v).map_err(e)?,
        "runtime" => spec.runtime = Some(parse_duration(v, Duration::from_secs(1)).map_err(e)?),
        "ramp_time" => spec.ramp_time = parse_duration(v, Duration::from_secs(1)).map_err(e)?,
        "time_based" => spec.time_based = parse_bool(v).map_err(e)?,
        "rate" => spec.rate = Some(parse_rate(&name, v)?),
        "rate_iops" => spec.rate = Some(RateLimit::Iops(positive_f64(&name, v)?)),
        "rate_process" => spec.rate_process = parse_arrival(&name, v)?,
        "random_distribution" => spec.distribution = parse_distribution(&name, v)?,
        "fsync" => spec.sync = sync_every(&name, v, false)?,
        "fdatasync" => spec.sync = sync_every(&name, v, true)?,
        "thinktime" => spec.thinktime = parse_duration(v, Duration::from_micros(1)).map_err(e)?,
        "thinktime_blocks" => spec.thinktime_blocks = positive_u32(&name, v)?,
        "zero_buffers" => spec.data.zeros = parse_bool(v).map_err(e)?,
        "buffer_compress_percentage" => spec.data.compress_pct = parse_percent(v).map_err(e)?,
        "dedupe_percentage" => spec.data.dedupe_pct = parse_percent(v).map_err(e)?,
        "rados_bench_data" => spec.data.rados_bench = parse_bool(v).map_err(e)?,
        "allow_overwrite" => spec.allow_overwrite = parse_bool(v).map_err(e)?,
        "unlink" => spec.unlink = parse_bool(v).map_err(e)?,
        "stonewall" => spec.stonewall = parse_bool(v).map_err(e)?,
        "randseed" => spec.seed = parse_count(v).map_err(e)?,
        "number_ios" => spec.number_ios = Some(parse_count(v).map_err(e)?).filter(|n| *n > 0),
        "objects" => obj(spec).count = positive_count(&name, v)?,
        "object_size" => obj(spec).sizes = parse_object_sizes(&name, v)?,
        "object_prefix" => obj(spec).prefix = Some(nonempty(&name, v)?.to_string()),
        "object_ops" => obj(spec).mix = parse_mix(&name, v)?,
        "object_op_size" => obj(spec).op_len = Some(parse_range(&name, v)?),
        "prefill" => obj(spec).prefill = parse_bool(v).map_err(e)?,
        "initial_objects" => {
            let n = parse_count(v).map_err(e)?;
            let o = obj(spec);
            o.initial = Some(n);
            o.prefill = n > 0;
        }
        "objects_exist" => obj(spec).exist = parse_bool(v).map_err(e)?,
        "cleanup" => obj(spec).cleanup = Some(parse_bool(v).map_err(e)?),
        _ => {
            spec.engine_options.insert(name, v.to_string());
        }
    }
    Ok(())
}

fn obj(spec: &mut JobSpec) -> &mut ObjectSpec {
    spec.objects.get_or_insert_with(ObjectSpec::default)
}

fn positive_count(name: &str, v: &str) -> Result<u64, OptionError> {
    match parse_count(v) {
        Ok(n) if n > 0 && n <= u32::MAX as u64 => Ok(n),
        Ok(_) => Err(bad(name, format!("'{v}' must be between 1 and {}", u32::MAX))),
        Err(e) => Err(bad(name, e)),
    }
}

/// `4k-1m`: an inclusive range of sizes.
fn parse_range(name: &str, v: &str) -> Result<(u64, u64), OptionError> {
    let (a, b) = v.split_once('-').unwrap_or((v, v));
    let (min, max) = (nonzero_size(name, a)?, nonzero_size(name, b)?);
    if min > max {
        return Err(bad(name, format!("'{v}': the first size is larger than the second (form: 4k-64k)")));
    }
    if max > u32::MAX as u64 {
        return Err(bad(name, format!("'{v}': sizes above 4 GiB are not supported")));
    }
    Ok((min, max))
}

fn parse_object_sizes(name: &str, v: &str) -> Result<ObjectSizes, OptionError> {
    if v.contains('-') {
        // Objects may be empty (ssbench's zero-byte class); ranges of I/O may not.
        let (a, b) = v.split_once('-').unwrap_or((v, v));
        let (min, max) = (parse_size(a).map_err(|e| bad(name, e))?, parse_size(b).map_err(|e| bad(name, e))?);
        if min > max || max > u32::MAX as u64 {
            return Err(bad(name, format!("'{v}' is not a range of sizes from small to large, below 4 GiB (form: 4k-1m)")));
        }
        return Ok(ObjectSizes::Range { min, max });
    }
    if parse_size(v).ok() == Some(0) {
        return Ok(ObjectSizes::Range { min: 0, max: 0 });
    }
    let split = parse_split(name, v)?;
    if split.max() > u32::MAX as u64 {
        return Err(bad(name, format!("'{v}': objects above 4 GiB are not supported")));
    }
    Ok(ObjectSizes::Classes { split })
}

/// `read:70,create:20,delete:10`: operation weights.
fn parse_mix(name: &str, v: &str) -> Result<Vec<(OpKind, u32)>, OptionError> {
    const OPS: &str = "create, read, update, write, stat, delete, list";
    let mut mix: Vec<(OpKind, u32)> = Vec::new();
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (op, w) = item.split_once(':').unwrap_or((item, "1"));
        let op = OpKind::parse(&op.trim().to_ascii_lowercase())
            .filter(|o| *o != OpKind::Sync)
            .ok_or_else(|| bad(name, format!("'{op}' is not an object operation; use {OPS}")))?;
        let w: u32 = w
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| bad(name, format!("weight '{w}' of {} is not a whole number (form: read:70,create:30)", op.name())))?;
        if mix.iter().any(|m| m.0 == op) {
            return Err(bad(name, format!("{} is listed twice", op.name())));
        }
        if w > 0 {
            mix.push((op, w));
        }
    }
    if mix.is_empty() {
        return Err(bad(name, format!("'{v}' gives no operation a weight above zero (form: read:70,create:30; operations: {OPS})")));
    }
    Ok(mix)
}

fn nonempty<'a>(name: &str, v: &'a str) -> Result<&'a str, OptionError> {
    if v.is_empty() {
        return Err(bad(name, "needs a value"));
    }
    Ok(v)
}

fn positive_u32(name: &str, v: &str) -> Result<u32, OptionError> {
    let n = parse_count(v).map_err(|e| bad(name, e))?;
    if n == 0 || n > 65536 {
        return Err(bad(name, format!("'{v}' must be between 1 and 65536")));
    }
    Ok(n as u32)
}

fn positive_f64(name: &str, v: &str) -> Result<f64, OptionError> {
    let n = parse_count(v).map(|n| n as f64).or_else(|_| v.parse::<f64>()).map_err(|_| bad(name, format!("'{v}' is not a number")))?;
    if !(n > 0.0 && n.is_finite()) {
        return Err(bad(name, format!("'{v}' must be above zero")));
    }
    Ok(n)
}

fn nonzero_size(name: &str, v: &str) -> Result<u64, OptionError> {
    let n = parse_size(v).map_err(|e| bad(name, e))?;
    if n == 0 {
        return Err(bad(name, "must be above zero"));
    }
    Ok(n)
}

fn sync_every(name: &str, v: &str, data_only: bool) -> Result<Option<SyncEvery>, OptionError> {
    let n = parse_count(v).map_err(|e| bad(name, e))?;
    Ok((n > 0).then_some(SyncEvery { every: n.min(u32::MAX as u64) as u32, data_only }))
}

fn parse_bs(name: &str, v: &str) -> Result<BlockSizes, OptionError> {
    let mut parts = v.split(',');
    let read = nonzero_size(name, parts.next().unwrap_or(""))?;
    let write = match parts.next() {
        Some(w) if !w.trim().is_empty() => nonzero_size(name, w)?,
        _ => read,
    };
    Ok(BlockSizes { read: SizeSplit::fixed(read), write: SizeSplit::fixed(write) })
}

fn parse_split(name: &str, v: &str) -> Result<SizeSplit, OptionError> {
    let mut entries = Vec::new();
    for item in v.split(':').filter(|s| !s.trim().is_empty()) {
        let (size, weight) = match item.split_once('/') {
            Some((s, w)) => (s, w),
            None => (item, "100"),
        };
        let size = nonzero_size(name, size)?;
        let weight: u32 = weight
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| bad(name, format!("weight '{weight}' in '{item}' is not a whole number (form: 4k/50:64k/50)")))?;
        if weight > 0 {
            entries.push((size, weight));
        }
    }
    if entries.is_empty() {
        return Err(bad(name, format!("'{v}' has no block size with a weight above zero (form: 4k/50:64k/50)")));
    }
    Ok(SizeSplit(entries))
}

fn parse_bssplit(name: &str, v: &str) -> Result<BlockSizes, OptionError> {
    let mut parts = v.split(',');
    let read = parse_split(name, parts.next().unwrap_or(""))?;
    let write = match parts.next() {
        Some(w) if !w.trim().is_empty() => parse_split(name, w)?,
        _ => read.clone(),
    };
    Ok(BlockSizes { read, write })
}

fn parse_rate(name: &str, v: &str) -> Result<RateLimit, OptionError> {
    let lower = v.to_ascii_lowercase();
    if let Some(n) = lower.strip_suffix("iops") {
        return Ok(RateLimit::Iops(positive_f64(name, n.trim())?));
    }
    let bytes = nonzero_size(name, lower.trim_end_matches("/s"))?;
    Ok(RateLimit::Bytes(bytes as f64))
}

fn parse_arrival(name: &str, v: &str) -> Result<Arrival, OptionError> {
    match v.to_ascii_lowercase().as_str() {
        "linear" | "uniform" => Ok(Arrival::Linear),
        "poisson" => Ok(Arrival::Poisson),
        _ => Err(bad(name, format!("'{v}' is not linear or poisson"))),
    }
}

/// `uniform`, `zipf:1.2`, `pareto:0.2`, `normal:10`, `zoned:60/10:30/20:10/70`,
/// `hotset:90/10` (90% of I/O to a hot 10% of the space).
pub fn parse_distribution(name: &str, v: &str) -> Result<Distribution, OptionError> {
    let lower = v.to_ascii_lowercase();
    let (kind, arg) = lower.split_once(':').unwrap_or((lower.as_str(), ""));
    let num = |what: &str| -> Result<f64, OptionError> {
        arg.parse::<f64>().map_err(|_| bad(name, format!("{kind} needs {what}, e.g. {kind}:{}", example(kind))))
    };
    let d = match kind {
        "uniform" | "random" => Distribution::Uniform,
        "zipf" => {
            let theta = num("a theta")?;
            if !(theta > 0.0) || theta == 1.0 {
                return Err(bad(name, "zipf theta must be above 0 and not 1 (e.g. zipf:1.2)"));
            }
            Distribution::Zipf { theta }
        }
        "pareto" => {
            let h = num("an h")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(bad(name, "pareto h must be between 0 and 1 (e.g. pareto:0.2 for 80/20)"));
            }
            Distribution::Pareto { h }
        }
        "normal" | "gauss" => {
            let dev_pct = num("a deviation in percent")?;
            if !(dev_pct > 0.0 && dev_pct <= 100.0) {
                return Err(bad(name, "normal deviation must be a percentage above 0 (e.g. normal:10)"));
            }
            Distribution::Normal { dev_pct }
        }
        "zoned" => Distribution::Zoned { zones: parse_zones(name, arg)? },
        "hotset" => hotset(name, arg)?,
        _ => {
            return Err(bad(
                name,
                format!("'{v}' is not uniform, zipf:θ, pareto:h, normal:dev%, zoned:access/size:... or hotset:access/size"),
            ))
        }
    };
    Ok(d)
}

fn example(kind: &str) -> &'static str {
    match kind {
        "zipf" => "1.2",
        "pareto" => "0.2",
        "normal" | "gauss" => "10",
        _ => "...",
    }
}

fn parse_zones(name: &str, arg: &str) -> Result<Vec<Zone>, OptionError> {
    let mut zones = Vec::new();
    for z in arg.split(':').filter(|s| !s.is_empty()) {
        let (a, s) = z.split_once('/').ok_or_else(|| bad(name, format!("zone '{z}' is not access%/size%")))?;
        let access_pct = parse_percent(a).map_err(|e| bad(name, e))?;
        let size_pct = parse_percent(s).map_err(|e| bad(name, e))?;
        zones.push(Zone { access_pct, size_pct });
    }
    let access: f64 = zones.iter().map(|z| z.access_pct).sum();
    let size: f64 = zones.iter().map(|z| z.size_pct).sum();
    if zones.is_empty() || (access - 100.0).abs() > 0.01 || (size - 100.0).abs() > 0.01 {
        return Err(bad(
            name,
            format!("zones must each be access%/size% and both must add up to 100 (got {access}% of I/O over {size}% of space), e.g. zoned:60/10:30/20:10/70"),
        ));
    }
    Ok(zones)
}

fn hotset(name: &str, arg: &str) -> Result<Distribution, OptionError> {
    let (a, s) =
        arg.split_once('/').ok_or_else(|| bad(name, "hotset needs access%/size%, e.g. hotset:90/10 (90% of I/O to 10% of the space)"))?;
    let access = parse_percent(a).map_err(|e| bad(name, e))?;
    let size = parse_percent(s).map_err(|e| bad(name, e))?;
    if size <= 0.0 || size >= 100.0 {
        return Err(bad(name, "hotset size must be between 0 and 100 percent, exclusive"));
    }
    Ok(Distribution::Zoned {
        zones: vec![Zone { access_pct: access, size_pct: size }, Zone { access_pct: 100.0 - access, size_pct: 100.0 - size }],
    })
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

    fn spec_with(pairs: &[(&str, &str)]) -> Result<JobSpec, OptionError> {
        let mut s = JobSpec::default();
        for (k, v) in pairs {
            apply_option(&mut s, k, v)?;
        }
        Ok(s)
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
        assert_eq!(s.bs.read.0, vec![(4096, 50), (8192, 30), (65536, 20)]);
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
    fn suggestions() {
        let names = CORE_OPTIONS.iter().map(|o| o.0);
        assert_eq!(suggest("iodpeth", names.clone()), Some("iodepth"));
        assert_eq!(suggest("rwmixrad", names.clone()), Some("rwmixread"));
        assert_eq!(suggest("completelydifferent", names), None);
    }
}
