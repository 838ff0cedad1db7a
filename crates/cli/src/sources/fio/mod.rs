//! fio job files (`storbench run --fio job.fio`, `storbench fio job.fio`):
//! `[global]` and job sections of `key=value` lines, read as fio reads them
//! (`include`, `${VAR}`, a `[global]` applies to the jobs below it) and
//! mapped through the same option table as every other front end.
//!
//! fio runs the jobs of a file together unless `stonewall` separates them,
//! and so does storbench. Where fio means something storbench spells
//! differently, [`table`] says what it becomes; options that only shape
//! fio's own reporting are ignored; anything storbench does not do is
//! refused by name with the reason (or, with `--fio-allow-unsupported`,
//! dropped with a note each, and the results marked approximate).

mod dedupe;
mod errors;
mod http;
mod rates;
mod table;
pub mod text;
mod zones;

use crate::error::CliError;
use crate::sources::Pairs;
use std::path::Path;
use storbench_workload::options::core;
use storbench_workload::units::parse_size;
use storbench_workload::{apply_option, JobSpec};
use table::Action;
pub use text::Line;

/// A parsed fio file: options per section, and notes for the user.
pub struct FioJobs {
    pub specs: Vec<JobSpec>,
    pub notes: Vec<String>,
}

/// How a fio job file is read.
pub struct Reading<'a> {
    pub base: &'a JobSpec,
    /// Options from storbench's command line, applied to every job.
    pub cli_global: &'a Pairs,
    pub allow_unsupported: bool,
    /// fio's own precedence: a file's `[global]` wins over command-line
    /// options (`storbench fio`). `storbench run --fio` lets the command
    /// line win, to override a file's runtime or target.
    pub file_wins: bool,
    /// Run only these sections (fio `--section`); empty: all.
    pub sections: &'a [String],
}

impl<'a> Reading<'a> {
    pub fn new(base: &'a JobSpec, cli_global: &'a Pairs, allow_unsupported: bool) -> Reading<'a> {
        Reading { base, cli_global, allow_unsupported, file_wins: false, sections: &[] }
    }
}

/// A marker line between two job files: fio starts each file from fresh
/// defaults and a new group.
pub const NEXT_FILE: &str = "\u{0}next file";

pub fn load(path: &Path, reading: &Reading) -> Result<FioJobs, CliError> {
    let text = crate::sources::read_job_file(path, "fio job file")?;
    let name = path.display().to_string();
    // Every error names the file (line errors already do).
    parse(text::lines(&text, path)?, reading).map_err(|e| {
        if e.message.contains(&name) {
            e
        } else {
            CliError::usage(format!("{name}: {}", e.message))
        }
    })
}

/// One job section: the `[global]` options above it, then its own.
struct Section {
    name: String,
    globals: Pairs,
    own: Pairs,
    /// First job of a job file after the first (fio puts a stonewall there).
    new_file: bool,
}

/// Options refused (or dropped, when allowed), with where and why.
#[derive(Default)]
struct Refusals(Vec<String>);

const UNKNOWN: &str = "not an option storbench knows";

impl Refusals {
    /// One list. When an engine is refused, options storbench does not know
    /// are most likely that engine's: counted, not listed one by one.
    fn list(&self) -> String {
        let engine_refused = self.0.iter().any(|r| r.contains("'ioengine'"));
        let (unknown, named): (Vec<&String>, Vec<&String>) = self.0.iter().partition(|r| engine_refused && r.contains(UNKNOWN));
        let mut list = named.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ");
        if !unknown.is_empty() {
            list += &format!(" (and {} options of that engine)", unknown.len());
        }
        list
    }
}

pub fn parse(lines: Vec<Line>, reading: &Reading) -> Result<FioJobs, CliError> {
    let mut globals = Pairs::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut in_global = false;
    let mut new_file = false;
    let mut refused = Refusals::default();
    let mut notes = Vec::new();
    // Each job file starts from the command line's global options; the
    // second and later files start a new group (fio puts a stonewall there).
    let mut cli_globals: Option<Pairs> = None;
    let mut files = 0;
    for line in &lines {
        if line.text == NEXT_FILE {
            globals = cli_globals.get_or_insert_with(|| globals.clone()).clone();
            files += 1;
            new_file = files > 1;
            in_global = false;
            continue;
        }
        if let Some(name) = line.text.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_global = name.trim() == "global";
            if !in_global {
                sections.push(Section { name: name.trim().into(), globals: globals.clone(), own: Pairs::new(), new_file });
                new_file = false;
            }
            continue;
        }
        let (key, value) = match line.text.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (line.text.clone(), "1".to_string()),
        };
        // storbench's `size` is per file, so fio's `filesize` is an alias of
        // it there; here fio's `size` (the job's total) must stay apart.
        let canon = match storbench_workload::options::canonical_name(&key) {
            c if c == "size" && key.eq_ignore_ascii_case("filesize") => "filesize".to_string(),
            c => c,
        };
        let pair = match table::action(&canon, &value) {
            Action::Keep(k, v) if known(&k) => (k, v),
            Action::Keep(..) => {
                refused.0.push(format!("{} '{key}' ({UNKNOWN}; `storbench help options`)", line.at));
                continue;
            }
            Action::Ignore => continue,
            Action::Note(n) => {
                add_note(&mut notes, n);
                continue;
            }
            Action::Refuse(why) => {
                refused.0.push(format!("{} '{key}' ({why})", line.at));
                continue;
            }
        };
        match (in_global, sections.last_mut()) {
            (true, _) => globals.push(pair),
            (false, Some(s)) => s.own.push(pair),
            (false, None) => return Err(CliError::usage(format!("{}: '{key}' comes before any [section]", line.at))),
        }
    }
    if !refused.0.is_empty() {
        let list = refused.list();
        if !reading.allow_unsupported {
            return Err(CliError::usage(format!(
                "fio options storbench does not support: {list}. Remove them, or pass --fio-allow-unsupported to run without them (results marked approximate)"
            )));
        }
        notes.push(format!("results are APPROXIMATE: fio options dropped (--fio-allow-unsupported): {list}"));
    }
    if !reading.sections.is_empty() {
        sections.retain(|s| reading.sections.contains(&s.name));
        if sections.is_empty() {
            return Err(CliError::usage(format!("no job section named {} in the job file(s)", reading.sections.join(", "))));
        }
    }
    if sections.is_empty() {
        return Err(CliError::usage("no job sections (only [global]); add a [jobname] section"));
    }
    let mut specs = Vec::with_capacity(sections.len());
    for s in &sections {
        specs.push(build_job(s, reading, &mut notes)?);
    }
    unique_names(&mut specs, &mut notes);
    dedupe::share(&mut specs);
    Ok(FioJobs { specs, notes })
}

/// fio lets jobs share a name (`name=` in `[global]`); storbench's results
/// are kept by job name, so a repeated name gets its section's name added.
fn unique_names(specs: &mut [JobSpec], notes: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    let mut renamed = Vec::new();
    for spec in specs.iter_mut() {
        if !seen.insert(spec.name.clone()) {
            let name = (2..).map(|n| format!("{}.{n}", spec.name)).find(|n| !seen.contains(n)).expect("a free name");
            renamed.push(format!("{} -> {name}", spec.name));
            spec.name = name.clone();
            seen.insert(name);
        }
    }
    if !renamed.is_empty() {
        add_note(notes, format!("jobs renamed to keep their results apart (fio allows one name for several jobs): {}", renamed.join(", ")));
    }
}

fn add_note(notes: &mut Vec<String>, note: String) {
    if !notes.contains(&note) {
        notes.push(note);
    }
}

fn known(key: &str) -> bool {
    key.starts_with("fio:") || core(key).is_some() || storbench_engine::all_option_names().contains(&key)
}

/// One section into a job: the options in fio's precedence, then what needs
/// the whole job (fio's size over several files, loops, blockalign, the
/// rados and rbd engines' fio defaults).
fn build_job(s: &Section, reading: &Reading, notes: &mut Vec<String>) -> Result<JobSpec, CliError> {
    let mut spec = reading.base.clone();
    spec.name = s.name.clone();
    let ordered: Vec<&(String, String)> = if reading.file_wins {
        reading.cli_global.iter().chain(&s.globals).chain(&s.own).collect()
    } else {
        s.globals.iter().chain(reading.cli_global).chain(&s.own).collect()
    };
    let mut later: Vec<(&str, &str)> = Vec::new();
    let context = |e: String| CliError::usage(format!("job '{}': {e}", storbench_workload::shown(&s.name)));
    for (k, v) in ordered.iter().copied() {
        match k.strip_prefix("fio:") {
            Some(k) => later.push((k, v)),
            None => {
                // A later engine or pattern replaces fio's http engine or a trim.
                if matches!(k.as_str(), "ioengine" | "rw") {
                    later.retain(|(l, _)| l != k);
                }
                apply_option(&mut spec, k, v).map_err(|e| context(e.to_string()))?
            }
        }
    }
    fio_filenames(&mut spec, &ordered, reading).map_err(|e| context(e.to_string()))?;
    if s.new_file {
        spec.stonewall = true;
    }
    let get = |name: &str| later.iter().rev().find(|(k, _)| *k == name).map(|(_, v)| *v);
    // `storbench run --fio f --size X`: the command line's (per file) size wins.
    let cli_size = !reading.file_wins && reading.cli_global.iter().any(|(k, _)| storbench_workload::options::canonical_name(k) == "size");
    if let Some(size) = get("size").filter(|_| !cli_size) {
        fio_size(&mut spec, size).map_err(context)?;
    }
    if let Some(loops) = get("loops") {
        fio_loops(&mut spec, loops).map_err(context)?;
    }
    if let Some(ba) = get("blockalign") {
        fio_blockalign(&mut spec, ba).map_err(context)?;
    }
    if let Some(target) = get("latency_target") {
        let mut t = latency_target(target, get("latency_window"), get("latency_percentile")).map_err(context)?;
        t.keep_adjusting = get("latency_run").is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no" | "off"));
        spec.latency_target = Some(t);
    }
    if let Some(v) = get("max_latency") {
        spec.max_latency_ns = max_latency(v).map_err(context)?;
    }
    // As with size, a rate on storbench's command line (its own meaning) wins.
    let cli_has =
        |key: &str| !reading.file_wins && reading.cli_global.iter().any(|(k, _)| storbench_workload::options::canonical_name(k) == key);
    for key in ["rate", "rate_iops", "rate_min", "rate_iops_min"] {
        if let Some(v) = get(key).filter(|_| !cli_has(key)) {
            rates::apply(&mut spec, key, v, get("rw").is_some_and(|rw| rw.contains("trim"))).map_err(context)?;
        }
    }
    let files = files_per_worker(&spec);
    zones::apply(&mut spec, &get, files).map_err(context)?;
    dedupe::apply(&mut spec, &get, files).map_err(context)?;
    spec.tolerated_errors = errors::tolerated(get("continue_on_error"), get("ignore_error")).map_err(context)?;
    if get("ioengine") == Some("http") {
        http::apply(&mut spec, &get, notes).map_err(context)?;
    } else if let Some(rw) = get("rw") {
        fio_trims(&mut spec, rw).map_err(context)?;
    } else if let Some(f) = get("filename_format").filter(|f| *f != "$jobname.$jobnum.$filenum") {
        return Err(context(format!(
            "filename_format={f}: files are named <job>.<worker>.<n> (fio's default format); give filename= instead"
        )));
    }
    engine_defaults(&mut spec, notes)?;
    Ok(spec)
}

/// fio adds every `filename=` to the job's files (options.c
/// str_filename_cb: a [global]'s, the command line's and the job's own
/// all count, a name given twice is two files), where storbench's option
/// replaces the files named before. storbench's own command line
/// (`run --fio F --filename X`) points every job at its files instead, as
/// its size and rate win over the file's.
fn fio_filenames(spec: &mut JobSpec, ordered: &[&(String, String)], reading: &Reading) -> Result<(), storbench_workload::OptionError> {
    let is_filename = |k: &str| storbench_workload::options::canonical_name(k) == "filename";
    if let Some((_, v)) = reading.cli_global.iter().rev().find(|(k, _)| is_filename(k) && !reading.file_wins) {
        return apply_option(spec, "filename", v);
    }
    let named: Vec<&str> = ordered.iter().filter(|(k, _)| is_filename(k)).map(|(_, v)| v.as_str()).collect();
    if named.len() > 1 {
        apply_option(spec, "filename", &named.join(":"))?;
    }
    Ok(())
}

fn size_value(v: &str) -> Result<u64, String> {
    parse_size(v).map_err(|e| format!("size '{v}': {e}"))
}

/// A time of fio's latency options, in ns (microseconds unless suffixed, as in fio).
fn fio_usec(name: &str, v: &str) -> Result<u64, String> {
    storbench_workload::units::parse_duration(v.trim(), std::time::Duration::from_micros(1))
        .map(|d| d.as_nanos() as u64)
        .map_err(|_| format!("{name}={v}: give a time (microseconds unless suffixed: 500ms)"))
}

/// fio's `max_latency=R[,W[,T]]`: one value for every direction, as fio's
/// blocksize-style lists; 0 or an empty field: no bound. None: none at all.
fn max_latency(v: &str) -> Result<Option<[u64; 2]>, String> {
    let fields: Vec<&str> = v.split(',').collect();
    let at = |i: usize| match fields.get(i).or(fields.first()).map(|f| f.trim()) {
        Some("") | None => Ok(0),
        Some(f) => fio_usec("max_latency", f),
    };
    let bounds = [at(0)?, at(1)?];
    Ok((bounds != [0, 0]).then_some(bounds))
}

/// fio's latency profile (microseconds unless suffixed, as in fio).
fn latency_target(target: &str, window: Option<&str>, percentile: Option<&str>) -> Result<storbench_workload::LatencyTarget, String> {
    let time = |name: &str, v: &str| match fio_usec(name, v) {
        Ok(ns) if ns > 0 => Ok(ns),
        _ => Err(format!("{name}={v}: give a time above 0 (microseconds unless suffixed: 500ms)")),
    };
    let percentile = match percentile {
        None => 100.0,
        Some(p) => p
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| format!("latency_percentile={p}: give a percentage above 0, at most 100"))?,
    };
    Ok(storbench_workload::LatencyTarget {
        target_ns: time("latency_target", target)?,
        // fio's default, 0: every check judges what completed since the last.
        window_ns: window.map(|w| fio_usec("latency_window", w)).transpose()?.filter(|w| *w > 0),
        percentile,
        keep_adjusting: false,
    })
}

/// fio's `rw=trim` and `rw=randtrim` on block engines: the sequential or
/// random pattern, every operation a trim (checked against the engine when
/// planned). fio's trim-and-write mixes are not built.
fn fio_trims(spec: &mut JobSpec, rw: &str) -> Result<(), String> {
    let (mode, modifier) = match rw.split_once(':') {
        Some((m, x)) => (m, format!(":{x}")),
        None => (rw, String::new()),
    };
    let pattern = match mode {
        "trim" => "write",
        "randtrim" => "randwrite",
        _ => return Err(format!("rw={rw}: of fio's trim patterns only trim and randtrim are supported (not trimwrite or randtrimwrite)")),
    };
    apply_option(spec, "rw", &format!("{pattern}{modifier}")).map_err(|e| e.to_string())?;
    spec.trims = true;
    Ok(())
}

/// fio's `size` is the job's total over its files; storbench's is per file
/// (fio's `filesize`). With `filesize` given, `size` bounds the I/O instead,
/// and one beyond the files' total is capped at it (fio's setup_files), so
/// it is one pass, not several (`io_size` asks for more passes).
/// `size=20%` is a share of each file's own size, not divided among them.
fn fio_size(spec: &mut JobSpec, v: &str) -> Result<(), String> {
    if v.trim().ends_with('%') {
        if spec.given.has("size") {
            return Err(format!("size={v} with filesize: give the I/O's size in bytes (or io_size)"));
        }
        return apply_option(spec, "size", v).map_err(|e| e.to_string());
    }
    let total = size_value(v)?;
    let files = files_per_worker(spec);
    if spec.given.has("size") {
        let files_total = spec.size.map(|each| each.saturating_mul(files.max(1)));
        if spec.io_size.is_none() && !spec.time_based && files_total.is_none_or(|t| total < t) {
            spec.io_size = Some(total);
        }
        return Ok(());
    }
    let per_file = total / files.max(1);
    if per_file == 0 {
        return Err(format!("size {v} over {files} files leaves nothing per file"));
    }
    apply_option(spec, "size", &per_file.to_string()).map_err(|e| e.to_string())
}

/// The files each worker of the job opens: those named, or `nrfiles`.
fn files_per_worker(spec: &JobSpec) -> u64 {
    if spec.filenames.is_empty() {
        spec.nrfiles as u64
    } else {
        spec.filenames.len() as u64
    }
}

/// fio `loops=N`: N passes over the job's files (each starts cold, as the
/// page cache is dropped between passes), then more only while io_size is
/// not done: the generator counts them as fio's keep_running does
/// (`JobSpec::passes`; io_size=8m over a 4m file is 8m with loops=2 and
/// 12m with loops=3). Without the random map a random pass has no end and
/// each loop is io_size.
fn fio_loops(spec: &mut JobSpec, v: &str) -> Result<(), String> {
    let n = storbench_workload::units::parse_count(v).map_err(|e| format!("loops '{v}': {e}"))?;
    if n <= 1 || spec.time_based {
        return Ok(());
    }
    if spec.io_size.is_none() && spec.size.is_none() {
        return Err("loops needs size (or io_size) to know what one loop is".into());
    }
    spec.passes = u32::try_from(n).map_err(|_| format!("loops '{v}': at most {}", u32::MAX))?;
    Ok(())
}

/// fio `blockalign=read[,write]`: random offsets are multiples of it (fio's
/// default is the smallest block size, storbench's too); one alignment for
/// both directions of a mixed job.
fn fio_blockalign(spec: &mut JobSpec, v: &str) -> Result<(), String> {
    let p = rates::parts(v);
    let part = match (spec.read_percent() > 0.0, spec.read_percent() < 100.0) {
        (true, false) => p.read,
        (false, true) => p.write,
        _ if p.read == p.write => p.read,
        _ => return Err(format!("blockalign={v}: one alignment for reads and writes is supported; give one value")),
    };
    if part.is_empty() {
        return Ok(());
    }
    apply_option(spec, "blockalign", part).map_err(|e| e.to_string())
}

/// What fio's engines do by default where storbench's differ: the note an
/// engine declares for the fio name the job used, and the rbd and rados
/// engines' fio defaults.
fn engine_defaults(spec: &mut JobSpec, notes: &mut Vec<String>) -> Result<(), CliError> {
    if let Some((_, storbench_engine::FioName { note: Some(note), .. })) = storbench_engine::find_fio(&spec.ioengine) {
        add_note(notes, note.into());
    }
    let engine = storbench_engine::find(&spec.ioengine);
    let name = engine.map(|f| f.name());
    if name == Some("rbd") && !spec.engine_options.contains_key("rbd_cache") {
        // fio's rbd engine: direct=1 turns librbd's cache off; otherwise the
        // Ceph configuration decides (on by default).
        let cache = if spec.direct { "0" } else { "conf" };
        spec.engine_options.insert("rbd_cache".into(), cache.into());
        if !spec.direct {
            add_note(notes, "ioengine=rbd: the librbd cache follows the Ceph configuration, as in fio (direct=1 or rbd_cache=0 measures the cluster without it)".into());
        }
    }
    // fio's iodepth_batch is the engine option of the engines that batch
    // their submissions; the others submit each I/O as it is queued.
    let batches = engine.is_some_and(|f| f.options().iter().any(|o| o.name == "iodepth_batch_submit"));
    if !batches && spec.engine_options.remove("iodepth_batch_submit").is_some() {
        add_note(notes, format!("iodepth_batch: ioengine={} submits each I/O as it is queued", spec.ioengine));
    }
    if name == Some("io_uring") {
        // fio's io_uring commits each I/O in an io_uring_enter of its own
        // and stamps its issue after it: the same calls, and the same
        // slat/clat split (a larger iodepth_batch or sqthread_poll leaves
        // the batching as it is). Its files and buffers are registered only
        // when the job asks (fio's defaults; storbench's own are on).
        for (option, fio_default) in [("submit_each", "1"), ("registerfiles", "0"), ("fixedbufs", "0")] {
            spec.engine_options.entry(option.into()).or_insert_with(|| fio_default.into());
        }
    }
    if name == Some("net") && !spec.engine_options.contains_key("hostname") && spec.filenames.len() == 1 {
        // fio's net engine takes its host (or a unix socket's path) as filename too.
        let host = spec.filenames.remove(0);
        spec.engine_options.insert("hostname".into(), host);
    }
    if name == Some("rados") && spec.objects.is_none() {
        rados_objects(spec)?;
        add_note(notes, "ioengine=rados: each job works on one object per worker of `size` bytes, in `bs` pieces (as fio does); reads are preceded by an unmeasured prefill".into());
    }
    Ok(())
}

/// fio's rados engine in the object model: one object of `size` bytes per
/// worker, read or written in `bs` pieces, `size` bytes per worker in all.
fn rados_objects(s: &mut JobSpec) -> Result<(), CliError> {
    let size = s.size.ok_or_else(|| {
        CliError::usage(format!("job '{}': ioengine=rados needs size= (the size of each object)", storbench_workload::shown(&s.name)))
    })?;
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
        apply_option(s, k, &v).map_err(|e| CliError::usage(format!("job '{}': {e}", storbench_workload::shown(&s.name))))?;
    }
    if !s.time_based && s.io_size.is_none() {
        s.io_size = Some(size);
    }
    s.size = None;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, allow: bool) -> Result<FioJobs, CliError> {
        let base = JobSpec::default();
        let none = Pairs::new();
        parse(text::lines(text, Path::new("t.fio"))?, &Reading::new(&base, &none, allow))
    }

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
    fn reads_sections_and_engines() {
        let f = read(FIO, false).unwrap();
        assert_eq!(f.specs.len(), 2);
        assert_eq!(f.specs[0].ioengine, "libaio");
        assert_eq!(f.specs[0].iodepth, 32);
        assert!(f.specs[1].stonewall && !f.specs[0].stonewall);
        assert_eq!(f.specs[1].rwmixread, 70.0);
    }

    /// fio 3.33 writes both files of `[global] filename=a` and a job's
    /// `filename=b` (each 512 KiB of a 1 MiB size): every filename= adds.
    #[test]
    fn every_filename_adds_files_as_in_fio() {
        let f = read("[global]\nfilename=a\nsize=1m\n[j]\nfilename=b:c\n[k]\nrw=read\n", false).unwrap();
        assert_eq!(f.specs[0].filenames, ["a", "b", "c"]);
        assert_eq!(f.specs[1].filenames, ["a"]);
    }

    /// fio's max_latency takes one time for every direction or a list
    /// (microseconds unless suffixed); latency_window=0 is fio's default.
    #[test]
    fn max_latency_and_a_zero_latency_window_read_as_fio() {
        let f = read("[a]\nrw=randrw\nmax_latency=250\n[b]\nrw=randrw\nmax_latency=,2ms\n[c]\nrw=read\nmax_latency=0\n", false).unwrap();
        assert_eq!(f.specs[0].max_latency_ns, Some([250_000, 250_000]));
        assert_eq!(f.specs[1].max_latency_ns, Some([0, 2_000_000]));
        assert_eq!(f.specs[2].max_latency_ns, None);
        assert!(read("[a]\nrw=read\nmax_latency=soon\n", false).err().unwrap().message.contains("max_latency=soon"));
        let f = read("[a]\nrw=read\nlatency_target=1ms\nlatency_window=0\n", false).unwrap();
        assert_eq!(f.specs[0].latency_target.map(|t| (t.target_ns, t.window_ns)), Some((1_000_000, None)));
    }

    #[test]
    fn unsupported_options_are_named_with_reasons_or_dropped_and_marked_when_allowed() {
        let text = "[a]\nrw=read\nverify_state_save=1\nzonemode=zbd\nbogus=1\n";
        let e = read(text, false).err().unwrap();
        for part in ["t.fio line 3 'verify_state_save' (this form of verification", "'zonemode' (zoned", "'bogus' (not an option"] {
            assert!(e.message.contains(part), "{part}: {}", e.message);
        }
        let f = read(text, true).unwrap();
        assert!(f.notes.iter().any(|n| n.starts_with("results are APPROXIMATE") && n.contains("verify_state_save")), "{:?}", f.notes);
    }

    #[test]
    fn a_global_section_applies_to_the_jobs_below_it() {
        let f = read("[a]\nrw=read\n[global]\nbs=8k\n[b]\nrw=write\n", false).unwrap();
        assert_eq!((f.specs[0].bs.max(), f.specs[1].bs.max()), (4096, 8192));
    }

    #[test]
    fn size_is_the_total_over_a_jobs_files_and_loops_repeat_it() {
        let f = read("[a]\nnrfiles=4\nsize=16m\nloops=3\n[b]\nfilename=x:y\nsize=1m\nfilesize=1m\n", false).unwrap();
        assert_eq!((f.specs[0].size, f.specs[0].nrfiles, f.specs[0].io_size, f.specs[0].passes), (Some(4 << 20), 4, None, 3));
        assert_eq!((f.specs[1].size, f.specs[1].io_size), (Some(1 << 20), Some(1 << 20)));
        // Beyond the files' total fio caps size at it: one pass (fio 3.33 reads x and y once).
        let f = read("[b]\nfilename=x:y\nsize=8m\nfilesize=1m\n", false).unwrap();
        assert_eq!((f.specs[0].size, f.specs[0].io_size), (Some(1 << 20), None));
    }

    #[test]
    fn loops_over_an_io_size_beyond_the_file_pass_it_until_io_size_is_done() {
        let f = read("[a]\nsize=4m\nio_size=8m\nloops=2\n[b]\nsize=4m\nio_size=8m\nloops=3\n[c]\nrw=randread\nnorandommap\nsize=4m\nio_size=8m\nloops=2\n", false).unwrap();
        let io: Vec<_> = f.specs.iter().map(|s| (s.io_size, s.passes)).collect();
        assert_eq!(io, vec![(Some(8 << 20), 2), (Some(8 << 20), 3), (Some(8 << 20), 2)]);
    }

    #[test]
    fn fio_spellings_and_values_from_its_examples() {
        let f = read("[a]\nrw=read:-8k\ntimeout=5\nrandom_distribution=zoned:50/5:30/15:20/\nbsrange=4k-8k\nba=4k\n", false).unwrap();
        let s = &f.specs[0];
        assert_eq!((s.seq_skip, s.runtime), (-8192, Some(std::time::Duration::from_secs(5))));
        assert_eq!(s.distribution.describe(), "zoned:50/5:30/15:20/80");
        assert_eq!(s.bs.read.0.iter().map(|e| e.0).collect::<Vec<_>>(), vec![4096, 8192]);
        assert_eq!(s.bs.read.0[0].1, s.bs.read.0[1].1, "sizes equally likely");
        assert_eq!(s.blockalign, Some(4096));
        let e = read("[a]\nrw=randrw\nbs=4k\nba=8k,4k\n", false).err().unwrap();
        assert!(e.message.contains("blockalign=8k,4k"), "{}", e.message);
    }

    #[test]
    fn fio_http_jobs_become_object_jobs_with_fios_names() {
        let text = "[global]\nioengine=http\nhttp_mode=s3\nhttp_host=127.0.0.1:7480\nhttp_s3_keyid=AK\nhttp_s3_key=SK\nfilename=/bkt/k/e.y\nbs=4k\nsize=64k\n\
                    [create]\nrw=write\nio_size=8k\n[trim]\nstonewall\nrw=trim\nio_size=8k\n";
        let f = read(text, false).unwrap();
        let (w, t) = (&f.specs[0], &f.specs[1]);
        assert_eq!(w.ioengine, "s3");
        let opt = |s: &JobSpec, k: &str| s.engine_options.get(k).cloned().unwrap_or_default();
        assert_eq!(
            (opt(w, "endpoint"), opt(w, "bucket"), opt(w, "access_key")),
            ("http://127.0.0.1:7480".into(), "bkt".into(), "AK".into())
        );
        let o = w.objects.as_ref().unwrap();
        assert_eq!((o.count, o.sizes.fixed(), o.exist, o.cleans_up(), w.io_size), (16, Some(4096), false, false, Some(8192)));
        let names = storbench_workload::ObjectNames::new(&o.prefix_for("x"), Some(o));
        assert_eq!(names.name(2), "k/e.y_8192_4096");
        let to = t.objects.as_ref().unwrap();
        assert!(to.exist && to.mix == vec![(storbench_workload::OpKind::Delete, 100)]);
        assert_eq!((t.number_ios, t.io_size), (Some(2), None));
        assert!(t.filenames.is_empty());

        let swift =
            "[j]\nioengine=http\nhttp_mode=swift\nhttps=insecure\nhttp_host=h:8081\nfilename_format=/swift/v1/fio-test/bucket.$jobnum\n\
                     http_swift_auth_token=TOK\nbs=64k\nsize=1m\nnumjobs=2\nrw=randwrite\n";
        let s = &read(swift, false).unwrap().specs[0];
        assert_eq!(
            (opt(s, "storage_url"), opt(s, "container"), opt(s, "token"), opt(s, "insecure")),
            ("https://h:8081/swift/v1".into(), "fio-test".into(), "TOK".into(), "1".into())
        );
        let o = s.objects.as_ref().unwrap();
        assert_eq!(o.count, 32, "16 blocks per worker's own file");
        let names = storbench_workload::ObjectNames::new(&o.prefix_for("j"), Some(o));
        assert_eq!((names.name(1), names.name(2)), ("bucket.1_0_65536".into(), "bucket.0_65536_65536".into()));

        for (bad, why) in [
            ("[j]\nioengine=http\nfilename=/b/k\nsize=1m\n", "webdav"),
            ("[j]\nioengine=http\nhttp_mode=s3\nfilename=b/k\nsize=1m\n", "start with '/'"),
            ("[j]\nioengine=http\nhttp_mode=swift\nfilename=/v1/c/o\nsize=1m\n", "http_swift_auth_token"),
            ("[j]\nrw=trimwrite\nsize=1m\n", "only trim and randtrim"),
        ] {
            let e = read(bad, false).err().unwrap();
            assert!(e.message.contains(why), "{why}: {}", e.message);
        }
    }

    #[test]
    fn rbd_jobs_follow_the_ceph_configuration_for_the_cache_as_fio_does() {
        let f = read("[a]\nioengine=rbd\nrbdname=img\n[b]\nioengine=rbd\nrbd_cache=1\n[c]\nioengine=rbd\ndirect=1\n", false).unwrap();
        let cache = |i: usize| f.specs[i].engine_options.get("rbd_cache").cloned();
        assert_eq!((cache(0), cache(1), cache(2)), (Some("conf".into()), Some("1".into()), Some("0".into())));
    }
}
