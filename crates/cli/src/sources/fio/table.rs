//! What each fio option becomes: a storbench option (renamed or rewritten
//! where fio spells or means it differently), nothing (it shapes only fio's
//! own reporting), a note (dropped, and storbench's behaviour said), or a
//! refusal with the reason. Options that need the whole job (fio's `size`
//! over several files, `loops`, `blockalign`) are passed on under a `fio:`
//! name and settled once the job is built.

/// What one `key=value` of a fio job file becomes.
#[derive(Debug, PartialEq)]
pub enum Action {
    Keep(String, String),
    Ignore,
    Note(String),
    Refuse(&'static str),
}

/// Options that change only fio's own output or bookkeeping.
const IGNORED: &[&str] = &[
    "description",
    "thread",
    // fio 3.33 takes `threads` as its tiobench profile's thread count: nothing without profile=tiobench.
    "threads",
    // Deprecated in fio, which accepts it and does nothing with it.
    "flow_watermark",
    "gtod_reduce",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "significant_figures",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "disable_bw",
    "create_on_open",
    "create_serialize",
    "allow_file_create",
    "allrandrepeat",
    "stats",
    "unified_rw_reporting",
    "kb_base",
    "unit_base",
    "error_dump",
    // fio compresses its logs in memory only: the files are the same; storbench streams them.
    "log_compression",
    "log_compression_cpus",
    "log_unix_epoch",
    "refill_buffers",
    "scramble_buffers",
    // fio's rados engine: polling style and empty-object creation at set-up.
    "busy_poll",
    "touch_objects",
    // How fio schedules its checking; storbench checks every read as it completes.
    "verifysort",
    "verify_async",
    "verify_async_cpus",
    "verify_backlog_batch",
    "verify_dump",
    "verify_write_sequence",
    "verify_header_seed",
];

/// Families refused by name, with the reason (and what to do instead).
const REFUSED: &[(&[&str], &str)] = &[
    (
        &["experimental_verify", "trim_verify_zero", "verify_offset", "verify_state_save", "verify_state_load"],
        "this form of verification is not supported; storbench keeps what was acknowledged with verify_state=DIR",
    ),
    (
        &[
            "zonecapacity",
            "max_open_zones",
            "job_max_open_zones",
            "ignore_zone_limits",
            "read_beyond_wp",
            "zone_reset_threshold",
            "zone_reset_frequency",
        ],
        "zoned block devices (zonemode=zbd) are not supported; zonemode=strided is",
    ),
    (&["exec_prerun", "exec_postrun"], "running commands before or after a job is not supported"),
    (&["ratecycle"], "rate_min is checked over each second"),
    (&["exitall_on_error"], "ending the other jobs when one fails is not supported yet; exitall ends them when one ends"),
    (&["offset_align"], "offsets are aligned to the smallest block size"),
    (&["unlink_each_loop", "fill_device", "fill_fs"], "not supported: files are sized by size/filesize and kept"),
    (
        &["http_s3_sse_customer_key", "http_s3_sse_customer_algorithm", "http_s3_storage_class"],
        "S3 server-side encryption with customer keys and storage classes are not supported",
    ),
    (&["fsync_on_close"], "an fsync at every close is not supported; end_fsync=1 flushes each file once at the end"),
    (&["buffer_pattern", "sprandom", "rw_sequencer", "lockmem"], "not supported"),
];

/// What fio's offload mode is for (submissions on time whatever the device
/// does) is how storbench's fixed-rate workers always submit.
const OFFLOAD: &str = "io_submit_mode=offload: storbench's fixed-rate workers always submit on schedule, whatever the completions, \
and count latency from each I/O's scheduled time (fio's offload); without a rate it changes nothing";

/// fio's verify= checksums as storbench's: the check is the same (a header
/// with a checksum per block), only its CPU cost differs; meta checks the
/// header alone in both.
fn checksum(fio: &str) -> &str {
    match fio {
        "0" | "null" | "none" => "0",
        "xxhash" => "xxhash",
        "meta" => "meta",
        "sha256" | "sha512" | "sha1" | "md5" => "sha256",
        v if v.starts_with("sha3") => "sha256",
        // crc7..crc64, pattern (the data is verify_pattern's), and anything else fio checks by a crc.
        _ => "crc32c",
    }
}

/// What `key` (already in fio's canonical spelling) with `value` becomes.
pub fn action(key: &str, value: &str) -> Action {
    if IGNORED.contains(&key) {
        return Action::Ignore;
    }
    if let Some((_, why)) = REFUSED.iter().find(|(keys, _)| keys.contains(&key)) {
        return Action::Refuse(why);
    }
    // fio's http engine and trims are settled once the job is built (see http.rs).
    if key == "http_verbose" {
        return Action::Ignore;
    }
    if key.starts_with("http_") || matches!(key, "https" | "filename_format") || (key == "ioengine" && value == "http") {
        return Action::Keep(format!("fio:{key}"), value.into());
    }
    if key == "rw" && value.contains("trim") {
        return Action::Keep("fio:rw".into(), value.into());
    }
    let keep = |k: &str| Action::Keep(k.into(), value.into());
    match key {
        "ioengine" => engine(value),
        "verify" => Action::Keep("verify".into(), checksum(value).into()),
        "timeout" => keep("runtime"),
        "fileoffset" => keep("offset"),
        "iodepth_batch" => keep("iodepth_batch_submit"),
        "size" => keep("fio:size"),
        "filesize" => keep("size"),
        "loops" => keep("fio:loops"),
        "blockalign" | "ba" => keep("fio:blockalign"),
        "proto" => keep("protocol"),
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" | "max_latency" => keep(&format!("fio:{key}")),
        "rate" | "rate_iops" | "rate_min" | "rate_iops_min" => Action::Keep(format!("fio:{key}"), value.into()),
        "bsrange" | "blocksize_range" => bsrange(value),
        "random_generator" => Action::Note(
            "random_generator: storbench draws offsets with its own generator; as with fio's random map, every block is visited once per pass".into(),
        ),
        "exit_what" if matches!(value, "group" | "stonewall" | "all") => Action::Ignore,
        "exit_what" => Action::Refuse("exit_what takes group, stonewall or all (the jobs running together; the same here)"),
        "continue_on_error" | "ignore_error" => Action::Keep(format!("fio:{key}"), value.into()),
        "zonemode" if value == "zbd" => Action::Refuse("zoned block devices (zonemode=zbd) are not supported; zonemode=strided is"),
        "zonemode" | "zonesize" | "zonerange" | "zoneskip" => Action::Keep(format!("fio:{key}"), value.into()),
        "dedupe_mode" | "dedupe_working_set_percentage" | "dedupe_global" => Action::Keep(format!("fio:{key}"), value.into()),
        "openfiles" => Action::Note("openfiles: storbench keeps every file of a job open (filecreate, filestat and filedelete keep none)".into()),
        "io_submit_mode" if value == "inline" => Action::Ignore,
        "io_submit_mode" if value == "offload" => Action::Note(OFFLOAD.into()),
        "io_submit_mode" => Action::Refuse("io_submit_mode takes inline or offload"),
        "file_service_type" if value.split(':').next() == Some("roundrobin") => Action::Ignore,
        "file_service_type" => Action::Refuse("only file_service_type=roundrobin (each I/O to the next file) is supported"),
        "per_job_logs" if truthy(value) => Action::Ignore,
        "per_job_logs" => Action::Refuse("per_job_logs=0 (one log file shared by all workers) is not supported; each worker writes PREFIX_TYPE.N.log"),
        "log_store_compressed" if truthy(value) => Action::Refuse("log_store_compressed (fio's compressed .fz log files) is not supported; drop it for plain log files"),
        "log_store_compressed" => Action::Ignore,
        "mem" | "iomem" if value == "malloc" => Action::Ignore,
        "mem" | "iomem" => Action::Refuse("I/O buffers are always ordinary (mem=malloc) memory"),
        _ => keep(key),
    }
}

/// A fio boolean's value: anything but 0 (or false, no, off) is true; given
/// bare, it is true.
fn truthy(value: &str) -> bool {
    !matches!(value.trim(), "0" | "false" | "no" | "off")
}

/// fio engines storbench does not have, and why (their own options are
/// then not listed one by one). The ones it has are the engines' own
/// declarations (`EngineFactory::fio_names`); between the two, every engine
/// fio 3.33 has is named (crates/cli/tests/registries.rs checks it).
const ENGINES_REFUSED: &[(&[&str], &str)] = &[
    (
        &["vsync", "pvsync2"],
        "vsync (queued I/Os merged into one readv/writev) and pvsync2 (preadv2/pwritev2 with hipri, nowait or uncached) are not supported; psync, sync or pvsync make one call per I/O",
    ),
    (&["solarisaio", "windowsaio"], "another system's asynchronous I/O; on Linux use libaio or io_uring"),
    (
        &["io_uring_cmd", "xnvme", "spdk", "libblkio"],
        "NVMe passthrough and user-space drivers are not supported; use io_uring or libaio on the block device",
    ),
    (&["sg", "bsg"], "SCSI generic commands are not supported"),
    (
        &["netsplice", "rdma"],
        "netsplice (the net engine through splice) and rdma are not supported; ioengine=net moves the same stream with send and recv",
    ),
    (
        &["librpma_apm_client", "librpma_apm_server", "librpma_gpspm_client", "librpma_gpspm_server"],
        "persistent memory over RDMA (librpma) is not supported",
    ),
    (&["libcufile", "libhipfile"], "GPU I/O is not supported"),
    (&["dev-dax", "libpmem", "pmemblk", "mmap"], "memory-mapped and persistent-memory I/O is not supported"),
    (&["mtd", "libzbc"], "raw flash and zoned devices are not supported"),
    (
        &["libhdfs", "libiscsi", "nfs", "gfapi", "gfapi_async", "dfs", "ime_psync", "ime_psyncv", "ime_aio"],
        "this network file system's client library is not supported",
    ),
    (
        &["dircreate", "dirstat", "dirdelete"],
        "directory metadata engines (dircreate, dirstat, dirdelete: newer than fio 3.33) are not supported; filecreate, filestat and filedelete measure files",
    ),
    (&["e4defrag", "splice"], "special-purpose engines (e4defrag, splice) are not supported"),
];

/// Said when a line names a refused engine (fio's "external:" engines too).
pub fn refused_engine(value: &str) -> Option<&'static str> {
    if value.starts_with("external") {
        return Some("external engines are not supported");
    }
    ENGINES_REFUSED.iter().find(|(names, _)| names.contains(&value)).map(|(_, why)| *why)
}

fn engine(value: &str) -> Action {
    match refused_engine(value) {
        Some(why) => Action::Refuse(why),
        None => Action::Keep("ioengine".into(), value.into()),
    }
}

/// fio's `bsrange=4k-16k` (reads[,writes]): sizes drawn evenly from the
/// multiples of the smallest within the range, as a storbench bssplit.
fn bsrange(value: &str) -> Action {
    let split = |range: &str| -> Option<String> {
        let (lo, hi) = range.split_once('-')?;
        let (lo, hi) = (storbench_workload::units::parse_size(lo).ok()?, storbench_workload::units::parse_size(hi).ok()?);
        if lo == 0 || hi < lo || hi / lo > 256 {
            return None;
        }
        // Equal shares in hundredths of a percent, the rest on the last size.
        let n = hi / lo;
        let share = 10_000 / n;
        let pct = |k: u64| if k == n { 10_000 - share * (n - 1) } else { share } as f64 / 100.0;
        Some((1..=n).map(|k| format!("{}/{}", k * lo, pct(k))).collect::<Vec<_>>().join(":"))
    };
    let parts: Option<Vec<String>> = value.split(',').take(2).map(split).collect();
    match parts {
        Some(p) => Action::Keep("bssplit".into(), p.join(",")),
        None => Action::Refuse("bsrange must be min-max sizes (e.g. 4k-64k) with at most 256 multiples of the minimum"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_rewrites_and_refusals() {
        assert_eq!(action("timeout", "30"), Action::Keep("runtime".into(), "30".into()));
        assert_eq!(action("bsrange", "4k-12k"), Action::Keep("bssplit".into(), "4096/33.33:8192/33.33:12288/33.34".into()));
        assert_eq!(action("group_reporting", "1"), Action::Keep("group_reporting".into(), "1".into()));
        assert_eq!(action("verify_backlog", "8"), Action::Keep("verify_backlog".into(), "8".into()));
        assert_eq!(action("verify", "md5"), Action::Keep("verify".into(), "sha256".into()));
        assert_eq!(action("verify", "crc32c-intel"), Action::Keep("verify".into(), "crc32c".into()));
        assert!(matches!(action("verify_state_save", "1"), Action::Refuse(r) if r.contains("verify_state=DIR")));
        assert_eq!(action("http_mode", "s3"), Action::Keep("fio:http_mode".into(), "s3".into()));
        assert!(matches!(action("http_s3_storage_class", "GLACIER"), Action::Refuse(_)));
        assert!(matches!(action("io_submit_mode", "offload"), Action::Note(_)));
        assert!(matches!(action("io_submit_mode", "later"), Action::Refuse(_)));
        assert_eq!((action("per_job_logs", "1"), action("log_store_compressed", "0")), (Action::Ignore, Action::Ignore));
        assert!(matches!(action("per_job_logs", "0"), Action::Refuse(r) if r.contains("per_job_logs=0")));
        assert!(matches!(action("log_store_compressed", ""), Action::Refuse(_)));
        assert_eq!(action("log_offset", "1"), Action::Keep("log_offset".into(), "1".into()));
        assert_eq!(action("threads", "1"), Action::Ignore);
        assert_eq!(action("ioengine", "nbd"), Action::Keep("ioengine".into(), "nbd".into()));
        assert_eq!(action("io_submit_mode", "inline"), Action::Ignore);
        assert_eq!(action("write_bw_log", "x"), Action::Keep("write_bw_log".into(), "x".into()));
        assert!(matches!(action("bsrange", "4k-4m"), Action::Refuse(_)));
    }

    /// A fio engine is either an engine's fio name or refused, never both.
    #[test]
    fn no_refused_engine_is_an_engines_name() {
        for n in ENGINES_REFUSED.iter().flat_map(|(names, _)| names.iter()) {
            assert!(storbench_engine::find(n).is_none(), "ioengine={n} is refused, and an engine declares it");
        }
    }
}
