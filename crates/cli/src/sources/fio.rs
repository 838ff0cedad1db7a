//! fio job files (`--fio job.fio`): `[global]` and job sections of `key=value`
//! lines, mapped through the same option table as everything else.
//!
//! fio runs the jobs of a file together unless `stonewall` separates them, and
//! so does storbench. Options that only shape fio's own reporting are accepted
//! and ignored; anything storbench does not support is named in one error
//! (or, with `--fio-allow-unsupported`, in warnings, and dropped).

use crate::error::CliError;
use crate::sources::{self as specs, Pairs};
use std::path::Path;
use storbench_workload::options::core;
use storbench_workload::JobSpec;

/// fio options that change only fio's own reporting or bookkeeping.
const IGNORED: &[&str] = &[
    "group_reporting",
    "thread",
    "description",
    "invalidate",
    "randrepeat",
    "norandommap",
    "gtod_reduce",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "per_job_logs",
    "new_group",
    "refill_buffers",
    "scramble_buffers",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "create_on_open",
    "fallocate",
    "allrandrepeat",
    "percentile_list",
    "log_avg_msec",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    // fio's rados engine: polling style and empty-object creation at set-up.
    "busy_poll",
    "touch_objects",
];

/// A parsed fio file: options per section, and notes for the user.
pub struct FioJobs {
    pub specs: Vec<JobSpec>,
    pub notes: Vec<String>,
}

pub fn load(path: &Path, base: &JobSpec, cli_global: &Pairs, allow_unsupported: bool) -> Result<FioJobs, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::usage(format!("cannot read fio job file {}: {e}", path.display())))?;
    parse(&text, base, cli_global, allow_unsupported).map_err(|e| CliError::usage(format!("{}: {}", path.display(), e.message)))
}

pub fn parse(text: &str, base: &JobSpec, cli_global: &Pairs, allow_unsupported: bool) -> Result<FioJobs, CliError> {
    let mut global = Pairs::new();
    let mut jobs: Vec<Pairs> = Vec::new();
    let mut in_global = false;
    let mut unsupported = Vec::new();
    let mut notes = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split(['#', ';']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_global = name.trim() == "global";
            if !in_global {
                jobs.push(vec![("name".into(), name.trim().to_string())]);
            }
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (line.to_string(), "1".to_string()),
        };
        let canon = storbench_workload::options::canonical_name(&key);
        let Some(pair) = translate(&canon, &value, &mut notes) else {
            continue;
        };
        if !known(&pair.0) {
            unsupported.push(format!("line {}: {key}", n + 1));
            continue;
        }
        match (in_global, jobs.last_mut()) {
            (false, Some(job)) => job.push(pair),
            (true, _) => global.push(pair),
            (false, None) => return Err(CliError::usage(format!("line {}: '{key}' comes before any [section]", n + 1))),
        }
    }
    if !unsupported.is_empty() {
        let list = unsupported.join(", ");
        if !allow_unsupported {
            return Err(CliError::usage(format!(
                "fio options storbench does not support: {list}. Remove them, or pass --fio-allow-unsupported to run without them"
            )));
        }
        notes.push(format!("ignored unsupported fio options: {list}"));
    }
    if jobs.is_empty() {
        return Err(CliError::usage("no job sections (only [global]); add a [jobname] section"));
    }
    global.extend(cli_global.iter().cloned());
    let mut specs = specs::build(base, &global, &jobs)?;
    for s in specs.iter_mut().filter(|s| s.ioengine == "rados" && s.objects.is_none()) {
        rados_objects(s)?;
        let note = "ioengine=rados: each job works on one object per worker of `size` bytes, in `bs` pieces (as fio does); reads are preceded by an unmeasured prefill".to_string();
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Ok(FioJobs { specs, notes })
}

/// fio's rados engine in the object model: one object of `size` bytes per
/// worker, read or written in `bs` pieces, `size` bytes per worker in all.
fn rados_objects(s: &mut JobSpec) -> Result<(), CliError> {
    let size = s.size.ok_or_else(|| CliError::usage(format!("job '{}': ioengine=rados needs size= (the size of each object)", s.name)))?;
    let bs = s.bs.max().min(size);
    let reads = s.read_percent().round() as u32;
    let mix = [("read", reads), ("write", 100 - reads.min(100))]
        .iter()
        .filter(|m| m.1 > 0)
        .map(|(o, w)| format!("{o}:{w}"))
        .collect::<Vec<_>>()
        .join(",");
    let opts = [
        ("objects", s.numjobs.to_string()),
        ("object_size", size.to_string()),
        ("object_op_size", format!("{bs}-{bs}")),
        ("object_ops", mix),
        ("object_prefix", format!("{}.", s.name)),
        ("prefill", ((reads > 0) as u8).to_string()),
    ];
    for (k, v) in opts {
        storbench_workload::apply_option(s, k, &v).map_err(|e| CliError::usage(format!("job '{}': {e}", s.name)))?;
    }
    if !s.time_based && s.io_size.is_none() {
        s.io_size = Some(size);
    }
    s.size = None;
    Ok(())
}

/// fio spellings storbench takes differently; `None` drops the line.
fn translate(key: &str, value: &str, notes: &mut Vec<String>) -> Option<(String, String)> {
    if IGNORED.contains(&key) {
        return None;
    }
    if key == "ioengine" && matches!(value, "libaio" | "posixaio") {
        let note = format!("ioengine={value} runs on io_uring (same queue-depth semantics)");
        if !notes.contains(&note) {
            notes.push(note);
        }
        return Some((key.into(), "io_uring".into()));
    }
    if key == "iodepth_batch" {
        return Some(("iodepth_batch_submit".into(), value.to_string()));
    }
    if key == "iodepth_batch_complete" || key == "iodepth_batch_complete_max" {
        return None; // storbench always reaps every completion it can see
    }
    Some((key.to_string(), value.to_string()))
}

fn known(key: &str) -> bool {
    core(key).is_some() || storbench_engine::all_option_names().contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIO: &str = "
; classic fio job file
[global]
ioengine=libaio
direct=1
size=1g
group_reporting
[rr]
rw=randread
bs=4k
iodepth=32
[mix]
stonewall
rw=randrw
rwmixread=70
bs=8k
";

    #[test]
    fn reads_sections_and_maps_engines() {
        let f = parse(FIO, &JobSpec::default(), &vec![], false).unwrap();
        assert_eq!(f.specs.len(), 2);
        assert_eq!(f.specs[0].ioengine, "io_uring");
        assert_eq!(f.specs[0].iodepth, 32);
        assert!(f.specs[1].stonewall && !f.specs[0].stonewall);
        assert_eq!(f.specs[1].rwmixread, 70.0);
        assert!(f.notes.iter().any(|n| n.contains("libaio")));
    }

    #[test]
    fn unsupported_options_are_all_named_or_dropped_when_allowed() {
        let text = "[a]\nrw=read\nverify=md5\nzonemode=zbd\n";
        let e = parse(text, &JobSpec::default(), &vec![], false).err().unwrap();
        assert!(e.message.contains("verify") && e.message.contains("zonemode"), "{}", e.message);
        let f = parse(text, &JobSpec::default(), &vec![], true).unwrap();
        assert!(f.notes[0].contains("verify"));
    }
}
