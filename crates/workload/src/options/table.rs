//! The core job options, one entry each: name, kind of value, default, help
//! and how it sets the job. `storbench help options`, the command-line
//! parser (which options may be given bare) and the README's list all come
//! from here.

use super::values::*;
use super::{CoreOption, Kind, OptionInfo};
use crate::objects::ObjectSpec;
use crate::spec::{Fadvise, JobSpec, RateLimit};
use crate::verify::{parse_pattern, Checksum, MIN_UNIT};
use std::time::Duration;

const SECOND: Duration = Duration::from_secs(1);

const fn info(name: &'static str, kind: Kind, default: &'static str, help: &'static str) -> OptionInfo {
    OptionInfo { name, kind, default, help }
}

fn ss(spec: &mut JobSpec) -> &mut crate::steady::SteadyState {
    spec.steady.get_or_insert_with(Default::default)
}

/// A duration in whole seconds (steady state is judged on the per-second figures).
fn whole_seconds(v: &str) -> Result<std::time::Duration, String> {
    let d = duration(v, SECOND)?;
    if d.subsec_nanos() != 0 {
        return Err(format!("{v}: give whole seconds (the figures are per second)"));
    }
    Ok(d)
}

fn vfy(spec: &mut JobSpec) -> &mut crate::verify::VerifySpec {
    spec.verify.get_or_insert_with(Default::default)
}

/// Replay options given before read_iolog keep a placeholder path until it comes.
/// Set a replay option (nothing on a job that does no I/O, see `JobKind::replay_mut`).
fn rpl(spec: &mut JobSpec, set: impl FnOnce(&mut crate::trace::ReplaySpec)) -> Result<(), String> {
    if let Some(r) = spec.kind.replay_mut()? {
        set(r);
    }
    Ok(())
}

fn burn(spec: &mut JobSpec) -> Result<&mut crate::burn::CpuBurn, String> {
    spec.kind.burn_mut()
}

fn exe(spec: &mut JobSpec) -> Result<&mut crate::exec::ExecSpec, String> {
    spec.kind.program_mut()
}

fn prio(spec: &mut JobSpec) -> &mut crate::prio::Priorities {
    spec.prio.get_or_insert_with(Default::default)
}

/// A whole number from 0 to `max`.
fn up_to(v: &str, max: u8) -> Result<u8, String> {
    match count(v.trim())? {
        n if n <= u64::from(max) => Ok(n as u8),
        _ => Err(format!("'{v}' must be between 0 and {max}")),
    }
}

/// fio's per-direction numbers: `20` for reads and writes, or `20,30`.
fn per_dir(v: &str, lo: u8, max: u8) -> Result<[u8; 2], String> {
    let (r, w) = v.split_once(',').map_or((v, v), |(r, w)| (r, w.split(',').next().unwrap_or(w)));
    let one = |x: &str| -> Result<u8, String> {
        let n = up_to(x, max).map_err(|_| format!("'{v}' must be between {lo} and {max} (or reads,writes: {lo},{max})"))?;
        if n < lo {
            return Err(format!("'{v}' must be between {lo} and {max} (or reads,writes: {lo},{max})"));
        }
        Ok(n)
    };
    Ok([one(r)?, if w.trim().is_empty() { one(r)? } else { one(w)? }])
}

fn place(spec: &mut JobSpec) -> &mut crate::placement::Placement {
    spec.placement.get_or_insert_with(Default::default)
}

fn obj(spec: &mut JobSpec) -> &mut ObjectSpec {
    spec.objects.get_or_insert_with(ObjectSpec::default)
}

/// rwmixread and rwmixwrite both given must add up to 100: `reads` is what
/// the option being set (`name`) says, the spec holds what the other said.
fn mix_agrees(s: &JobSpec, name: &str, reads: f64) -> Result<(), String> {
    let other = if name == "rwmixread" { "rwmixwrite" } else { "rwmixread" };
    if s.given.has(other) && (s.rwmixread - reads).abs() > 1e-9 {
        let (r, w) = if name == "rwmixread" { (reads, 100.0 - s.rwmixread) } else { (s.rwmixread, 100.0 - reads) };
        return Err(format!("rwmixread {r} and rwmixwrite {w} do not add up to 100; give one of them"));
    }
    Ok(())
}

const RW: &[&str] = &["read", "write", "randread", "randwrite", "readwrite", "randrw"];

/// Every core option, in the order help lists them.
pub static CORE: &[CoreOption] = &[
    CoreOption {
        info: info("name", Kind::Text, "job<N>", "job name"),
        aliases: &[],
        set: |s, v| {
            crate::spec::check_name(v)?;
            s.name = v.to_string();
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "rw",
            Kind::Choice(RW),
            "read",
            "I/O pattern (rw is an alias of readwrite); fio's :skip or :count suffix too (read:-8k, randread:8)",
        ),
        aliases: &["readwrite"],
        set: |s, v| {
            let (mode, modifier) = match v.split_once(':') {
                Some((m, x)) => (m, Some(x.trim())),
                None => (v, None),
            };
            s.rw = rw(mode)?;
            (s.seq_skip, s.rand_run) = match modifier {
                Some(m) => rw_modifier(s.rw, m)?,
                None => (0, 1),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("rwmixread", Kind::Percent, "50", "percentage of reads in a mixed job"),
        aliases: &[],
        set: |s, v| {
            let r = percent(v)?;
            mix_agrees(s, "rwmixread", r)?;
            s.rwmixread = r;
            Ok(())
        },
    },
    CoreOption {
        info: info("rwmixwrite", Kind::Percent, "50", "percentage of writes in a mixed job"),
        aliases: &[],
        set: |s, v| {
            let r = 100.0 - percent(v)?;
            mix_agrees(s, "rwmixwrite", r)?;
            s.rwmixread = r;
            Ok(())
        },
    },
    CoreOption {
        info: info("bs", Kind::Size, "4k", "block size, or read,write sizes (e.g. 4k or 4k,64k)"),
        aliases: &["blocksize"],
        set: |s, v| {
            s.bs = bs(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("bssplit", Kind::Text, "", "weighted block sizes, e.g. 4k/50:64k/50 (reads,writes may differ)"),
        aliases: &[],
        set: |s, v| {
            s.bs = bssplit(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("iodepth", Kind::Count, "1", "I/Os kept in flight per worker"),
        aliases: &[],
        set: |s, v| {
            s.iodepth = positive_u32(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "iodepth_batch_complete_min",
            Kind::Count,
            "1",
            "completions a full queue waits for before one is put back (libaio, io_uring; fio's; 0 without a max: one I/O in flight)",
        ),
        aliases: &["iodepth_batch_complete"],
        set: |s, v| {
            s.iodepth_batch_complete_min = Some(depth_u32(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "iodepth_batch_complete_max",
            Kind::Count,
            "min",
            "the most completions taken at once (libaio, io_uring; fio's default: iodepth_batch_complete_min)",
        ),
        aliases: &[],
        set: |s, v| {
            s.iodepth_batch_complete_max = Some(depth_u32(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("iodepth_low", Kind::Count, "iodepth", "a full queue is drained to this depth before it is filled again (fio's)"),
        aliases: &[],
        set: |s, v| {
            s.iodepth_low = Some(depth_u32(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("numjobs", Kind::Count, "1", "number of workers (threads)"),
        aliases: &[],
        set: |s, v| {
            s.numjobs = positive_u32(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "volumes",
            Kind::Count,
            "1",
            "volumes the job drives, each at its own iodepth and numjobs: one file, RBD image or object prefix per volume (1-4096)",
        ),
        aliases: &[],
        set: |s, v| {
            s.volumes = match count(v)? {
                n @ 1..=4096 => n as u32,
                _ => return Err(format!("'{v}' must be between 1 and 4096")),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("flow", Kind::Count, "0", "weight in fio's flow control: jobs of one flow_id issue in proportion to their weights (1-1000)"),
        aliases: &[],
        set: |s, v| {
            s.flow.get_or_insert_with(Default::default).weight = match count(v)? {
                n if n <= 1000 => n as u32,
                _ => return Err(format!("'{v}' must be between 0 and 1000 (fio's largest weight)")),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("flow_id", Kind::Count, "0", "the flow a flow weight belongs to"),
        aliases: &[],
        set: |s, v| {
            s.flow.get_or_insert_with(Default::default).id = u32::try_from(count(v)?).map_err(|_| format!("'{v}' is too large"))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("flow_sleep", Kind::Duration, "0", "how long a worker held by flow control waits (microseconds unless suffixed)"),
        aliases: &[],
        set: |s, v| {
            s.flow.get_or_insert_with(Default::default).sleep = duration(v, Duration::from_micros(1))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cpuload", Kind::Percent, "", "ioengine=cpuio: percent of one CPU each worker keeps busy (1-100); the job does no I/O"),
        aliases: &[],
        set: |s, v| {
            burn(s)?.load = crate::burn::parse_load(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cpuchunks", Kind::Duration, "50000", "ioengine=cpuio: length of each busy part (microseconds unless suffixed)"),
        aliases: &[],
        set: |s, v| {
            let d = duration(v, Duration::from_micros(1))?;
            if d.is_zero() || d > Duration::from_secs(10) {
                return Err(format!("'{v}' must be above 0 and at most 10 s (the busy part of each cycle)"));
            }
            burn(s)?.chunk = d;
            Ok(())
        },
    },
    CoreOption {
        info: info("cpumode", Kind::Choice(&["noop", "qsort"]), "noop", "ioengine=cpuio: spin (noop) or sort numbers (qsort) while busy"),
        aliases: &[],
        set: |s, v| {
            burn(s)?.mode = crate::burn::BurnMode::parse(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("exit_on_io_done", Kind::Flag, "0", "ioengine=cpuio: end when the jobs doing I/O beside it have ended"),
        aliases: &[],
        set: |s, v| {
            burn(s)?.exit_on_io_done = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("program", Kind::Text, "", "ioengine=exec: the program to run for the job's time (needs --allow-exec); the job does no I/O"),
        aliases: &[],
        set: |s, v| {
            if v.trim().is_empty() {
                return Err("give the program to run (a path, or a name in PATH)".into());
            }
            exe(s)?.program = v.trim().into();
            Ok(())
        },
    },
    CoreOption {
        info: info("arguments", Kind::Text, "", "ioengine=exec: its arguments, split on spaces; %r is the runtime in seconds, %n the job's name"),
        aliases: &[],
        set: |s, v| {
            exe(s)?.arguments = v.into();
            Ok(())
        },
    },
    CoreOption {
        info: info("grace_time", Kind::Duration, "1", "ioengine=exec: time between SIGTERM and SIGKILL at the job's end (seconds unless suffixed)"),
        aliases: &[],
        set: |s, v| {
            let d = duration(v, Duration::from_secs(1))?;
            if d > Duration::from_secs(3600) {
                return Err(format!("'{v}' is more than an hour between SIGTERM and SIGKILL"));
            }
            exe(s)?.grace = d;
            Ok(())
        },
    },
    CoreOption {
        info: info("std_redirect", Kind::Flag, "1", "ioengine=exec: its output into JOB.stdout and JOB.stderr (0: onto storbench's standard error)"),
        aliases: &[],
        set: |s, v| {
            exe(s)?.std_redirect = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cpus_allowed", Kind::Text, "", "CPUs the workers run on: 0,2-3 (fio's list)"),
        aliases: &[],
        set: |s, v| {
            place(s).cpus = Some(crate::placement::parse_list(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("cpumask", Kind::Text, "", "CPUs the workers run on, as a mask: 0x3 is CPUs 0 and 1"),
        aliases: &[],
        set: |s, v| {
            place(s).cpus = Some(crate::placement::parse_mask(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "cpus_allowed_policy",
            Kind::Choice(&["shared", "split"]),
            "shared",
            "shared: every worker on the whole CPU set; split: each worker on one CPU of it, in turn",
        ),
        aliases: &[],
        set: |s, v| {
            place(s).split = match v {
                "shared" => false,
                "split" => true,
                _ => return Err(format!("'{v}' is not shared or split")),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("numa_cpu_nodes", Kind::Text, "", "NUMA nodes whose CPUs the workers run on: 0 or 0-1"),
        aliases: &[],
        set: |s, v| {
            place(s).cpu_nodes = Some(crate::placement::parse_list(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("numa_mem_policy", Kind::Text, "", "workers' memory: default, local, prefer:N, bind:NODES or interleave:NODES"),
        aliases: &[],
        set: |s, v| {
            place(s).mem = Some(crate::placement::parse_mem_policy(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("size", Kind::Size, "whole file", "bytes of each file or device to use, or N% of an existing one's size (fio's size=20%)"),
        aliases: &["filesize"],
        set: |s, v| {
            (s.size, s.size_pct) = match v.trim().strip_suffix('%') {
                Some(p) => (None, Some(size_percent(p)?)),
                None => (Some(nonzero_size(v)?), None),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("offset", Kind::Size, "0", "start of the region used"),
        aliases: &[],
        set: |s, v| {
            s.offset = size(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("offset_increment", Kind::Size, "0", "worker k starts at offset + k * offset_increment (stripes of one file or device)"),
        aliases: &[],
        set: |s, v| {
            s.offset_increment = size(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("blockalign", Kind::Size, "bs", "random offsets are multiples of this (default: the smallest block size)"),
        aliases: &["ba"],
        set: |s, v| {
            s.blockalign = Some(nonzero_size(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("io_size", Kind::Size, "size", "stop after this many bytes per worker (alias: io_limit)"),
        aliases: &["io_limit"],
        set: |s, v| {
            s.io_size = Some(nonzero_size(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("filename", Kind::Text, "<name>.<worker>.0", "file(s) or block device(s), colon-separated"),
        aliases: &[],
        set: |s, v| {
            s.filenames = v.split(':').filter(|s| !s.is_empty()).map(String::from).collect();
            if s.filenames.is_empty() {
                return Err("names no file (give a path, or leave filename out for files named after the job)".into());
            }
            Ok(())
        },
    },
    CoreOption {
        info: info("nrfiles", Kind::Count, "1", "files per worker when filename is not given (<name>.<worker>.<n>); size is per file"),
        aliases: &["nr_files"],
        set: |s, v| {
            let n = count(v)?;
            if n == 0 || n > 65536 {
                return Err(format!("'{v}' must be between 1 and 65536"));
            }
            s.nrfiles = n as u32;
            Ok(())
        },
    },
    CoreOption {
        info: info("directory", Kind::Text, ".", "directory in which to create per-worker files"),
        aliases: &[],
        set: |s, v| {
            s.directory = Some(nonempty(v)?.to_string());
            Ok(())
        },
    },
    CoreOption {
        info: info("ioengine", Kind::Text, "psync", "engine (see `storbench engines`)"),
        aliases: &[],
        set: |s, v| {
            s.ioengine = nonempty(v)?.to_ascii_lowercase();
            Ok(())
        },
    },
    CoreOption {
        info: info("direct", Kind::Flag, "0", "1 to bypass the page cache (O_DIRECT)"),
        aliases: &[],
        set: |s, v| {
            s.direct = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("buffered", Kind::Flag, "1", "0 to bypass the page cache (inverse of direct)"),
        aliases: &[],
        set: |s, v| {
            s.direct = !boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("invalidate", Kind::Flag, "1", "drop the page cache of the job's files before it starts (0 keeps it warm)"),
        aliases: &[],
        set: |s, v| {
            s.invalidate = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "fadvise_hint",
            Kind::Choice(&["0", "1", "sequential", "random"]),
            "1",
            "tell the kernel the access pattern (1: the job's own; random turns readahead off)",
        ),
        aliases: &[],
        set: |s, v| {
            s.fadvise = match v {
                "sequential" => Fadvise::Sequential,
                "random" => Fadvise::Random,
                _ if boolean(v)? => Fadvise::Pattern,
                _ => Fadvise::Off,
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("runtime", Kind::Duration, "", "run time (seconds, or 30s/5m)"),
        aliases: &[],
        set: |s, v| {
            s.runtime = Some(duration(v, SECOND)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("ramp_time", Kind::Duration, "0", "warm-up excluded from the results"),
        aliases: &[],
        set: |s, v| {
            s.ramp_time = duration(v, SECOND)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("time_based", Kind::Flag, "0", "run for runtime even when size has been covered"),
        aliases: &[],
        set: |s, v| {
            s.time_based = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "startdelay",
            Kind::Duration,
            "0",
            "wait this long after the group starts before the job begins (runtime counts from then)",
        ),
        aliases: &[],
        set: |s, v| {
            s.start_delay = duration(v, SECOND)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("wait_for", Kind::Text, "", "start when the earlier job of this name has finished (fio's wait_for)"),
        aliases: &[],
        set: |s, v| {
            s.wait_for = Some(nonempty(v.trim())?.to_string());
            Ok(())
        },
    },
    CoreOption {
        info: info("prio", Kind::Count, "", "the job's I/O priority level, 0 (highest) to 7 (ioprio_set; every I/O of io_uring and libaio)"),
        aliases: &[],
        set: |s, v| {
            prio(s).level = Some(up_to(v, 7)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("prioclass", Kind::Count, "", "the job's I/O priority class: 1 real time, 2 best effort, 3 idle (0: best effort)"),
        aliases: &[],
        set: |s, v| {
            prio(s).class = Some(up_to(v, 3)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("cmdprio_percentage", Kind::Text, "0", "percent of reads,writes given cmdprio_class/cmdprio (io_uring, libaio)"),
        aliases: &[],
        set: |s, v| {
            prio(s).percentage = per_dir(v, 0, 100)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cmdprio_class", Kind::Text, "1", "priority class of the I/Os cmdprio_percentage or cmdprio_bssplit picks (1-3, reads,writes)"),
        aliases: &[],
        set: |s, v| {
            prio(s).cmd_class = per_dir(v, 1, 3)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cmdprio", Kind::Text, "0", "priority level of the I/Os cmdprio_percentage or cmdprio_bssplit picks (0-7, reads,writes)"),
        aliases: &[],
        set: |s, v| {
            prio(s).cmd_level = per_dir(v, 0, 7)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cmdprio_bssplit", Kind::Text, "", "per block size, percent of I/Os with a priority: 64k/25:1m/0 or 64k/25/1/1 (class, level); reads,writes"),
        aliases: &[],
        set: |s, v| {
            let (r, w) = v.split_once(',').map_or((v, v), |(r, w)| (r, w.split(',').next().unwrap_or(w)));
            let read = crate::prio::parse_split(r, size)?;
            let write = if w.trim().is_empty() { read.clone() } else { crate::prio::parse_split(w, size)? };
            prio(s).bssplit = Some([read, write]);
            Ok(())
        },
    },
    CoreOption {
        info: info("rate", Kind::Text, "", "fixed rate per worker: bytes/s (e.g. 100m) or IOPS with an 'iops' suffix"),
        aliases: &[],
        set: |s, v| {
            s.rate = Some(rate(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("rate_iops", Kind::Number, "", "fixed rate per worker in IOPS"),
        aliases: &[],
        set: |s, v| {
            s.rate = Some(RateLimit::Iops(iops(v)?));
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "rate_min",
            Kind::Text,
            "",
            "least rate per worker each second, bytes/s or N iops: below it the worker ends with an error",
        ),
        aliases: &["ratemin"],
        set: |s, v| {
            s.rate_min = Some(rate(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("rate_iops_min", Kind::Number, "", "least IOPS per worker each second: below it the worker ends with an error"),
        aliases: &[],
        set: |s, v| {
            s.rate_min = Some(RateLimit::Iops(iops(v)?));
            Ok(())
        },
    },
    CoreOption {
        info: info("rate_process", Kind::Choice(&["linear", "poisson"]), "linear", "arrivals in fixed-rate mode"),
        aliases: &[],
        set: |s, v| {
            s.rate_process = arrival(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("random_distribution", Kind::Text, "uniform", "uniform|zipf:θ|pareto:h|normal:dev%|zoned:a/s:...|hotset:access/size|sequence:i,j,..."),
        aliases: &[],
        set: |s, v| {
            s.distribution = distribution(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("fsync", Kind::Count, "0", "fsync after every N writes"),
        aliases: &[],
        set: |s, v| {
            s.sync = sync_every(v, false)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("fdatasync", Kind::Count, "0", "fdatasync after every N writes"),
        aliases: &[],
        set: |s, v| {
            s.sync = sync_every(v, true)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("sync", Kind::Text, "none", "open files for synchronous writes: sync (O_SYNC, also 1), dsync (O_DSYNC), none (also 0)"),
        aliases: &[],
        set: |s, v| {
            s.open_sync = match v.trim() {
                "0" | "none" => crate::spec::OpenSync::None,
                "1" | "sync" => crate::spec::OpenSync::Sync,
                "dsync" => crate::spec::OpenSync::Dsync,
                _ => return Err(format!("'{v}' is not none, sync or dsync")),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("end_fsync", Kind::Flag, "0", "fsync each file when the job's I/O ends (counted in its time)"),
        aliases: &[],
        set: |s, v| {
            s.end_fsync = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("thinktime", Kind::Duration, "0", "pause after I/O (microseconds unless suffixed)"),
        aliases: &[],
        set: |s, v| {
            s.thinktime = duration(v, Duration::from_micros(1))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("thinktime_blocks", Kind::Count, "1", "I/Os issued between think times"),
        aliases: &[],
        set: |s, v| {
            s.thinktime_blocks = positive_u32(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("zero_buffers", Kind::Flag, "0", "write zeros (compressible: only on purpose)"),
        aliases: &[],
        set: |s, v| {
            s.data.zeros = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("buffer_compress_percentage", Kind::Percent, "0", "percentage of each written block that compresses away"),
        aliases: &[],
        set: |s, v| {
            s.data.compress_pct = percent(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("dedupe_percentage", Kind::Percent, "0", "percentage of writes that repeat an earlier block"),
        aliases: &[],
        set: |s, v| {
            s.data.dedupe_pct = percent(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("rados_bench_data", Kind::Flag, "0", "write rados bench's object contents (so rados bench seq/rand can verify them)"),
        aliases: &[],
        set: |s, v| {
            s.data.rados_bench = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("allow_overwrite", Kind::Flag, "0", "write to an existing file or device storbench did not create"),
        aliases: &[],
        set: |s, v| {
            s.allow_overwrite = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "overwrite",
            Kind::Flag,
            "0",
            "a job that only writes lays its new files out with data first (0: only allocates them, as fio, so its writes fill them)",
        ),
        aliases: &[],
        set: |s, v| {
            s.overwrite = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "fallocate",
            Kind::Text,
            "native",
            "how a new file a job does not lay out gets its room: native (fallocate, unwritten extents), posix, keep (allocated, size kept), truncate (sparse) or none (fio's)",
        ),
        aliases: &[],
        set: |s, v| {
            s.fallocate = crate::Fallocate::parse(v).ok_or_else(|| format!("'{v}': give none, native, posix, keep or truncate"))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("unlink", Kind::Flag, "0", "remove the files this job created when it ends"),
        aliases: &[],
        set: |s, v| {
            s.unlink = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "dataset_exists",
            Kind::Flag,
            "0",
            "a train or vectordb preset's dataset is on the engine's own target already (an RBD image or NBD export an earlier run wrote): read it as it is",
        ),
        aliases: &[],
        set: |s, v| {
            s.dataset_exists = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("stonewall", Kind::Flag, "0", "wait for the jobs before this one (alias: wait_for_previous)"),
        aliases: &["wait_for_previous"],
        set: |s, v| {
            s.stonewall = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("exitall", Kind::Flag, "0", "when this job ends, end the other jobs running with it (its group)"),
        aliases: &[],
        set: |s, v| {
            s.exitall = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "group_reporting",
            Kind::Flag,
            "0",
            "fio's outputs (fio-json, terse, normal) show the job's numjobs workers as one entry; 0 lists each as its own job, as fio",
        ),
        aliases: &[],
        set: |s, v| {
            s.group_reporting = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "new_group",
            Kind::Flag,
            "0",
            "fio's outputs: this job begins a new reporting group (as stonewall does) but runs with the jobs before it",
        ),
        aliases: &[],
        set: |s, v| {
            s.new_group = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "steadystate",
            Kind::Text,
            "",
            "end the job at steady state: iops:10%, bw_slope:1%, lat:, p99: (several: all must hold)",
        ),
        aliases: &["ss", "steady_state"],
        set: |s, v| {
            if let Some(round) = v.strip_prefix("snia") {
                let round = match round.strip_prefix(':') {
                    Some(r) => whole_seconds(r)?,
                    None if round.is_empty() => std::time::Duration::from_secs(60),
                    None => return Err(format!("'{v}': give snia or snia:ROUND (a round's length, e.g. snia:60s)")),
                };
                if round.is_zero() {
                    return Err("a SNIA round lasts at least 1s".into());
                }
                s.steady = Some(crate::steady::SteadyState::snia(round));
                return Ok(());
            }
            ss(s).criteria = crate::steady::parse(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("ss_dur", Kind::Duration, "0", "steady state: the rolling window judged (0: not judged)"),
        aliases: &["steadystate_duration"],
        set: |s, v| {
            ss(s).dur = whole_seconds(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("ss_ramp", Kind::Duration, "0", "steady state: measured time before the window starts"),
        aliases: &["steadystate_ramp_time"],
        set: |s, v| {
            ss(s).ramp = duration(v, SECOND)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("ss_interval", Kind::Duration, "1", "steady state: seconds per sample of the window"),
        aliases: &["steadystate_check_interval"],
        set: |s, v| {
            let d = whole_seconds(v)?;
            if d.is_zero() {
                return Err("must be at least 1s".into());
            }
            ss(s).interval = d;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "verify",
            Kind::Choice(&["crc32c", "xxhash", "sha256", "meta", "0"]),
            "0",
            "check what is read against what was acknowledged: every written block carries a header with this checksum (meta: of the header alone, as fio's; 0: off)",
        ),
        aliases: &[],
        set: |s, v| {
            vfy(s).checksum = match v {
                "0" | "none" => None,
                _ => Some(Checksum::parse(v)?),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("verify_interval", Kind::Size, "bs", "verify: bytes per header (the job's smallest block size unless given)"),
        aliases: &[],
        set: |s, v| {
            let n = size(v)?;
            if n < MIN_UNIT as u64 || n % 512 != 0 || n > u32::MAX as u64 {
                return Err(format!("{v}: give a multiple of 512 bytes, at least {MIN_UNIT}"));
            }
            vfy(s).interval = Some(n as u32);
            Ok(())
        },
    },
    CoreOption {
        info: info("do_verify", Kind::Flag, "1", "verify: read everything written back after the measured phase"),
        aliases: &[],
        set: |s, v| {
            vfy(s).after = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "verify_backlog",
            Kind::Count,
            "0",
            "verify: read back the blocks of every N acknowledged writes during the run (0: only after it)",
        ),
        aliases: &[],
        set: |s, v| {
            vfy(s).backlog = u32::try_from(count(v)?).map_err(|_| format!("{v}: too many"))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("verify_fatal", Kind::Flag, "0", "verify: end the worker at the first failure (else count them all)"),
        aliases: &[],
        set: |s, v| {
            vfy(s).fatal = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "verify_pattern",
            Kind::Text,
            "seeded",
            "verify: the data after each header, a hex number (0xdeadbeef) or a quoted string",
        ),
        aliases: &[],
        set: |s, v| {
            vfy(s).pattern = Some(parse_pattern(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "verify_only",
            Kind::Flag,
            "0",
            "verify: do not run the workload, only check what an earlier run left (its table with verify_state; else each block by its header)",
        ),
        aliases: &[],
        set: |s, v| {
            vfy(s).only = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "verify_state",
            Kind::Text,
            "none",
            "verify: a directory where the table of acknowledged writes is kept, so a later run (after a crash too) checks exactly that",
        ),
        aliases: &[],
        set: |s, v| {
            vfy(s).state = Some(std::path::PathBuf::from(nonempty(v)?));
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "read_iolog",
            Kind::Text,
            "none",
            "replay a trace instead of generating I/O: a fio iolog (v2, or v3 with times) or blkparse text output; its files land on the job's",
        ),
        aliases: &["replay"],
        set: |s, v| {
            // Options given before it keep their values.
            let path = std::path::PathBuf::from(nonempty(v)?);
            rpl(s, |r| r.path = path)
        },
    },
    CoreOption {
        info: info("replay_time_scale", Kind::Count, "100", "replay: pace in percent of the trace's (200 = twice as fast)"),
        aliases: &[],
        set: |s, v| {
            let pct = positive_f64(v)?;
            let value = pct / 100.0;
            rpl(s, |r| r.speed = value)
        },
    },
    CoreOption {
        info: info("replay_no_stall", Kind::Flag, "0", "replay: issue as fast as the queue depth allows, ignoring the trace's times"),
        aliases: &[],
        set: |s, v| {
            let value = boolean(v)?;
            rpl(s, |r| r.no_stall = value)
        },
    },
    CoreOption {
        info: info("replay_scale", Kind::Count, "1", "replay: divide the trace's offsets by this"),
        aliases: &[],
        set: |s, v| {
            let value = positive_count(v)?;
            rpl(s, |r| r.scale = value)
        },
    },
    CoreOption {
        info: info("replay_align", Kind::Size, "0", "replay: round the trace's offsets down to a multiple of this"),
        aliases: &[],
        set: |s, v| {
            let value = size(v)?;
            rpl(s, |r| r.align = value)
        },
    },
    CoreOption {
        info: info("replay_redirect", Kind::Text, "none", "replay: every trace file lands on this file or device (as filename=)"),
        aliases: &[],
        set: |s, v| {
            s.filenames = vec![nonempty(v)?.to_string()];
            Ok(())
        },
    },
    CoreOption {
        info: info("write_iolog", Kind::Text, "none", "write what each worker issues as a fio v3 iolog (FILE, or FILE.N per worker)"),
        aliases: &[],
        set: |s, v| {
            s.write_iolog = Some(std::path::PathBuf::from(nonempty(v)?));
            Ok(())
        },
    },
    CoreOption {
        info: info("randseed", Kind::Count, "fixed", "seed for the job's random numbers"),
        aliases: &[],
        set: |s, v| {
            s.seed = count(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("randrepeat", Kind::Flag, "1", "1: each run, and each pass of a run, draws the same offsets; 0 seeds each run differently (unless randseed is given)"),
        aliases: &[],
        set: |s, v| {
            s.randrepeat = boolean(v)?;
            if !s.randrepeat && !s.given.has("randseed") {
                s.seed = fresh_seed();
            }
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "random_sequence_stride",
            Kind::Flag,
            "0",
            "1: each round of random_distribution=sequence moves on by the sequence's length (a strided block group)",
        ),
        aliases: &[],
        set: |s, v| {
            s.sequence_stride = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("norandommap", Kind::Flag, "0", "1 lets random offsets repeat before every block was visited once"),
        aliases: &[],
        set: |s, v| {
            s.randommap = !boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("write_bw_log", Kind::Text, "", "write fio's bandwidth log PREFIX_bw.N.log (KiB/s per log_avg_msec window, or per I/O)"),
        aliases: &[],
        set: |s, v| {
            s.logs.bw = Some(log_prefix(v));
            Ok(())
        },
    },
    CoreOption {
        info: info("write_iops_log", Kind::Text, "", "write fio's IOPS log PREFIX_iops.N.log"),
        aliases: &[],
        set: |s, v| {
            s.logs.iops = Some(log_prefix(v));
            Ok(())
        },
    },
    CoreOption {
        info: info("write_lat_log", Kind::Text, "", "write fio's latency logs PREFIX_lat/clat/slat.N.log (mean ns per window, or per I/O)"),
        aliases: &[],
        set: |s, v| {
            s.logs.lat = Some(log_prefix(v));
            Ok(())
        },
    },
    CoreOption {
        info: info("log_avg_msec", Kind::Count, "0", "window of fio's log files, in ms (0: a line per I/O, written as the run goes)"),
        aliases: &[],
        set: |s, v| {
            s.logs.avg_msec = u32::try_from(count(v)?).map_err(|_| format!("'{v}' is too large"))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("log_offset", Kind::Flag, "0", "1 adds each I/O's offset to the per-I/O log lines (fio's log_offset)"),
        aliases: &[],
        set: |s, v| {
            s.logs.offset = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("log_prio", Kind::Flag, "0", "1 writes the I/O priority column in hex, as fio's log_prio"),
        aliases: &[],
        set: |s, v| {
            s.logs.prio = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("log_max_value", Kind::Flag, "0", "fio's log_max_value (a window's maximum); only with per-I/O logs, where it changes nothing"),
        aliases: &[],
        set: |s, v| {
            s.logs.max_value = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("write_hist_log", Kind::Text, "", "write fio's latency histogram log PREFIX_clat_hist.N.log (every log_hist_msec ms)"),
        aliases: &[],
        set: |s, v| {
            s.logs.hist = Some(log_prefix(v));
            Ok(())
        },
    },
    CoreOption {
        info: info("log_hist_msec", Kind::Count, "0", "window of the histogram log, in ms (0: the file stays empty, as in fio)"),
        aliases: &[],
        set: |s, v| {
            s.logs.hist_msec = u32::try_from(count(v)?).map_err(|_| format!("'{v}' is too large"))?;
            Ok(())
        },
    },
    CoreOption {
        info: info("log_hist_coarseness", Kind::Count, "0", "merge 2^N of fio's latency buckets per column of the histogram log (0-6)"),
        aliases: &[],
        set: |s, v| {
            s.logs.hist_coarseness = match count(v)? {
                n @ 0..=6 => n as u8,
                _ => return Err(format!("'{v}' is not 0 to 6")),
            };
            Ok(())
        },
    },
    CoreOption {
        info: info("number_ios", Kind::Count, "", "stop after this many operations per worker"),
        aliases: &[],
        set: |s, v| {
            s.number_ios = Some(count(v)?).filter(|n| *n > 0);
            Ok(())
        },
    },
    CoreOption {
        info: info("objects", Kind::Count, "1024", "object jobs: number of objects in the key space"),
        aliases: &[],
        set: |s, v| {
            obj(s).count = positive_count(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("object_size", Kind::Text, "4m", "object size: 4m, classes 4k/70:1m/30, or a range 4k-1m"),
        aliases: &[],
        set: |s, v| {
            obj(s).sizes = object_sizes(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("object_prefix", Kind::Text, "storbench.<job>.", "object name prefix"),
        aliases: &[],
        set: |s, v| {
            obj(s).prefix = Some(nonempty(v)?.to_string());
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "object_ops",
            Kind::Text,
            "from rw",
            "operation weights, e.g. read:70,create:10,update:10,delete:5,stat:5 (also write, list)",
        ),
        aliases: &[],
        set: |s, v| {
            obj(s).mix = mix(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("object_op_size", Kind::Text, "whole objects", "length range of partial reads/writes, e.g. 4k-64k"),
        aliases: &[],
        set: |s, v| {
            obj(s).op_len = Some(range(v)?);
            Ok(())
        },
    },
    CoreOption {
        info: info("prefill", Kind::Flag, "0", "write every object before the measured phase"),
        aliases: &[],
        set: |s, v| {
            obj(s).prefill = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info(
            "initial_objects",
            Kind::Count,
            "",
            "write this many objects before the measured phase (the rest of the key space is for creates)",
        ),
        aliases: &[],
        set: |s, v| {
            let n = count(v)?;
            let o = obj(s);
            o.initial = Some(n);
            o.prefill = n > 0;
            Ok(())
        },
    },
    CoreOption {
        info: info("objects_exist", Kind::Flag, "0", "the objects exist already (left by an earlier run)"),
        aliases: &[],
        set: |s, v| {
            obj(s).exist = boolean(v)?;
            Ok(())
        },
    },
    CoreOption {
        info: info("cleanup", Kind::Flag, "1", "remove the objects when the run ends (default 0 with objects_exist=1)"),
        aliases: &[],
        set: |s, v| {
            obj(s).cleanup = Some(boolean(v)?);
            Ok(())
        },
    },
];
