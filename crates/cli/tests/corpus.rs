//! The bad-input corpus: flags, TOML and fio job files, ssbench scenarios,
//! engine options, paths and huge values a careless or hostile user might
//! give. Every one must end in exit code 2, one line on stderr naming the
//! culprit, no panic, nothing written (the directory is the same after),
//! within seconds, and without the text of a file it was not meant to show.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// One bad input: the words, the files it needs, what its one error line
/// must say, and what it must not (a file's content).
struct Case {
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    says: &'static [&'static str],
    hides: &'static [&'static str],
}

const fn case(args: &'static [&'static str], says: &'static [&'static str]) -> Case {
    Case { args, files: &[], says, hides: &[] }
}

const fn with(args: &'static [&'static str], files: &'static [(&'static str, &'static str)], says: &'static [&'static str]) -> Case {
    Case { args, files, says, hides: &[] }
}

const fn hiding(
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    says: &'static [&'static str],
    hides: &'static [&'static str],
) -> Case {
    Case { args, files, says, hides }
}

/// A file that is not a job file, with a secret in it (an include must not show it).
const SHADOW: &str = "root:$6$salt$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n";

/// Cases whose words are too long to write out: a job name past the limit
/// (4097 bytes) and one of 70,000 characters (it once panicked after the run).
fn generated() -> Vec<Case> {
    [4097, 70_000]
        .map(|n| {
            let name: &'static str = Box::leak("n".repeat(n).into_boxed_str());
            let args: &'static [&'static str] = Box::leak(Box::new(["run", "--name", name, "--ioengine", "null", "--size", "1m"]));
            let says: &'static [&'static str] = Box::leak(Box::new([" bytes)': option 'name'", "too long: at most 4096"]));
            Case { args, files: &[], says, hides: &[] }
        })
        .into()
}

const SCENARIO: &str = r#"{"name": "s", "sizes": [{"name": "tiny", "size_min": 4096, "size_max": 4096}],
  "initial_files": {"tiny": 10}, "operation_count": 10, "crud_profile": [1, 1, 1, 1], "user_count": 2}"#;

#[rustfmt::skip]
const CASES: &[Case] = &[
    // Options and their values.
    case(&["run", "--name", "a", "--iodpeth", "4", "--size", "1m"], &["iodpeth", "did you mean 'iodepth'"]),
    case(&["run", "--name", "a", "--bs", "4q"], &["option 'bs'", "'4q' is not a size"]),
    case(&["run", "--name", "a", "--bs", "0"], &["option 'bs'", "above zero"]),
    case(&["run", "--name", "a", "--runtime", "soon"], &["option 'runtime'", "duration"]),
    case(&["run", "--name", "a", "--runtime", "1000000000"], &["runtime", "at most 10 years"]),
    case(&["run", "--name", "a", "--ramp_time", "-3"], &["ramp_time", "duration"]),
    case(&["run", "--name", "a", "--rwmixread", "120"], &["rwmixread", "percentage"]),
    case(&["run", "--name", "a", "--rwmixread", "70", "--rwmixwrite", "70"], &["do not add up to 100"]),
    case(&["run", "--name", "a", "--rwmixwrite", "20", "--rwmixread", "30"], &["do not add up to 100"]),
    case(&["run", "--name", "a", "--random_distribution", "zipf"], &["zipf needs a theta"]),
    case(&["run", "--name", "a", "--random_distribution", "zipf:1"], &["zipf theta"]),
    case(&["run", "--name", "a", "--random_distribution", "pareto:2"], &["pareto h"]),
    case(&["run", "--name", "a", "--random_distribution", "sequence:1,-2"], &["'-2' is not a block index"]),
    case(&["run", "--name", "a", "--size", "64k", "--rw", "randread", "--random_distribution", "sequence:16"], &["block 16 is past the region's 16 blocks"]),
    case(
        &["run", "--name", "a", "--size", "64k", "--rw", "randrw", "--bs", "4k,8k", "--random_distribution", "sequence:10"],
        &["block 10 is past the region's 8 blocks of 8192 bytes"],
    ),
    case(&["run", "--name", "a", "--random_distribution", "normal:0"], &["normal deviation"]),
    case(&["run", "--name", "a", "--random_distribution", "zoned:50/10:40/90"], &["add up to 100"]),
    case(&["run", "--name", "a", "--random_distribution", "zoned:50"], &["zone '50'"]),
    case(&["run", "--name", "a", "--random_distribution", "hotset:90"], &["hotset needs"]),
    case(&["run", "--name", "a", "--random_distribution", "hotset:90/100"], &["hotset size"]),
    case(&["run", "--name", "a", "--random_distribution", "bogus"], &["is not uniform"]),
    case(&["run", "--name", "a", "--bssplit", "4k/50:64k/40"], &["bssplit", "add up to 90, not 100"]),
    case(&["run", "--name", "a", "--bssplit", "4k/80:64k/40"], &["bssplit", "more than 100"]),
    case(&["run", "--name", "a", "--bssplit", "4k/x"], &["bssplit", "percentage"]),
    case(&["run", "--name", "a", "--bssplit", "4k/0"], &["bssplit", "above zero"]),
    case(&["run", "--name", "a", "--filename", ""], &["filename", "names no file"]),
    case(&["run", "--name", "a", "--direct", "2"], &["--direct is a flag", "'2'"]),
    case(&["run", "--name", "a", "--time_based", "7", "--runtime", "1"], &["--time_based is a flag"]),
    case(&["run", "--name", "a", "--iodepth", "0"], &["iodepth", "between 1 and 65536"]),
    case(&["run", "--name", "a", "--iodepth", "70000"], &["iodepth", "between 1 and 65536"]),
    case(&["run", "--name", "a", "--numjobs", "0"], &["numjobs", "between 1 and 65536"]),
    case(&["run", "--name", "a", "--numjobs", "lots"], &["numjobs", "lots"]),
    case(&["run", "--name", "a", "--volumes", "0"], &["volumes", "between 1 and 4096"]),
    case(&["cleanup", "--ioengine", "rbd", "--pool", "rbd"], &["rbdname", "name the images to remove"]),
    case(&["sweep", "--name", "a", "--ioengine", "null", "--size", "1m", "--sweep", "agents=1,2"], &["agents=1", "needs a fleet", "--agents"]),
    case(&["sweep", "--agents", "127.0.0.1:1,127.0.0.1:2", "--name", "a", "--ioengine", "null", "--size", "1m", "--sweep", "agents=1,3"], &["agents=3", "the fleet has 2 agents"]),
    case(&["run", "--name", "a", "--ioengine", "nbd", "--uri", "nbd://127.0.0.1:1/x", "--volumes", "2"], &["volumes", "drives one target"]),
    case(&["run", "--name", "a", "--filename", "x:y:z", "--volumes", "2", "--size", "1m"], &["volumes=2 with 3 files", "one file per volume"]),
    case(&["run", "--name", "a", "--rw", "write", "--verify", "crc32c", "--volumes", "2", "--size", "1m"], &["volumes=2", "verify", "volumes=1"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", "v", "--images", "2", "--volumes", "2", "--size", "1m"], &["volumes=2 or images=N, not both"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--pool", "rbd", "--rbdname", "a:b:c", "--volumes", "2", "--size", "1m"], &["volumes=2 with 3 images", "one image per volume"]),
    case(&["run", "--name", "a", "--rate_iops", "0"], &["rate_iops", "above zero"]),
    case(&["run", "--name", "a", "--rate", "10x"], &["option 'rate'", "'10x'"]),
    case(&["run", "--name", "a", "--rate_process", "burst"], &["rate_process", "linear or poisson"]),
    case(&["run", "--name", "a", "--rw", "sideways"], &["option 'rw'", "sideways"]),
    case(&["run", "--name", "a", "--offset", "1q"], &["option 'offset'", "1q"]),
    case(&["run", "--name", "a", "--io_size", "0"], &["io_size", "above zero"]),
    case(&["run", "--name", "a", "--thinktime", "forever"], &["thinktime", "duration"]),
    case(&["run", "--name", "a", "--thinktime_blocks", "0"], &["thinktime_blocks", "between 1"]),
    case(&["run", "--name", "a", "--fsync", "many"], &["option 'fsync'", "many"]),
    case(&["run", "--name", "a", "--buffer_compress_percentage", "150"], &["buffer_compress_percentage", "percentage"]),
    case(&["run", "--name", "a", "--dedupe_percentage", "-1"], &["dedupe_percentage"]),
    case(&["run", "--name", "a", "--randseed", "x"], &["randseed"]),
    case(&["run", "--name", "a", "--number_ios", "1.5"], &["number_ios"]),
    case(&["run", "--name", "", "--size", "1m"], &["option 'name'", "needs a value"]),
    case(&["run", "--name", "a", "--ioengine", ""], &["option 'ioengine'", "needs a value"]),
    case(&["run", "--name", "a", "--bs"], &["--bs needs a value"]),
    // Combinations.
    case(&["run", "--name", "a", "--ioengine", "null", "--time_based"], &["time_based needs a runtime"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--runtime", "0", "--time_based"], &["runtime above 0"]),
    case(&["run", "--name", "a", "--ioengine", "null"], &["set runtime or size"]),
    // CPU burners (fio's cpuio).
    case(&["run", "--name", "a", "--ioengine", "cpuio", "--cpuload", "0", "--runtime", "1"], &["option 'cpuload'", "from 1 to 100"]),
    case(&["run", "--name", "a", "--ioengine", "cpuio", "--cpuload", "101", "--runtime", "1"], &["option 'cpuload'", "from 1 to 100"]),
    case(&["run", "--name", "a", "--ioengine", "cpuio", "--cpuload", "50", "--cpumode", "spin", "--runtime", "1"], &["cpumode", "spin"]),
    case(&["run", "--name", "a", "--ioengine", "cpuio", "--cpuload", "50", "--cpuchunks", "0", "--runtime", "1"], &["option 'cpuchunks'", "above 0"]),
    case(&["run", "--name", "a", "--ioengine", "cpuio", "--runtime", "1"], &["ioengine=cpuio needs cpuload="]),
    case(&["run", "--name", "a", "--ioengine", "null", "--cpuload", "50", "--runtime", "1"], &["cpuload applies to ioengine=cpuio"]),
    case(&["run", "--name", "a", "--ioengine", "cpuio", "--cpuload", "50"], &["give runtime", "exit_on_io_done=1"]),
    with(&["run", "--fio", "cpu.fio"], &[("cpu.fio", "[burn]\nioengine=cpuio\ncpuload=150\nruntime=1\n")], &["option 'cpuload'", "'150'"]),
    // One job, one kind: a replay cannot also be training, nor a program a burner.
    with(
        &["run", "--preset", "train:unet3d", "--scale", "0.05", "--read_iolog", "t.log"],
        &[("t.log", "fio version 2 iolog\n")],
        &["a training run", "a replayed trace", "one kind"],
    ),
    case(
        &["run", "--name", "a", "--ioengine", "exec", "--program", "true", "--cpuload", "50", "--runtime", "1", "--allow-exec"],
        &["option 'cpuload'", "a program", "a CPU burner"],
    ),
    case(&["run", "--name", "a", "--ioengine", "nul", "--size", "1m"], &["unknown ioengine 'nul'", "Did you mean 'null'"]),
    case(&["run", "--name", "a", "--ioengine", "fancy", "--size", "1m"], &["unknown ioengine 'fancy'"]),
    case(&["run", "--name", "a", "--size", "4k", "--bs", "8k"], &["larger than size"]),
    case(&["run", "--name", "a", "--size", "1m", "--direct", "1", "--bs", "1000"], &["multiple of 512"]),
    case(&["run", "--name", "a", "--size", "1m", "--direct", "1", "--offset", "100"], &["multiple of 512"]),
    case(&["run", "--name", "a", "--name", "a", "--ioengine", "null", "--size", "1m"], &["two jobs have this name"]),
    case(&["run", "--name", "a", "--zero_buffers", "--buffer_compress_percentage", "50", "--size", "1m"], &["zero_buffers conflicts"]),
    case(&["run", "--name", "new", "--rw", "write"], &["no size was given"]),
    case(&["run", "--name", "a", "--ioengine", "io_uring", "--size", "1m", "--iodepth", "65536", "--filename", "x.dat"], &["at most 32768"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "64g", "--bs", "1g", "--iodepth", "1024"], &["of memory", "lower bs, iodepth or numjobs"]),
    case(&["run", "--name", "a", "--size", "1p", "--filename", "huge.dat", "--rw", "write"], &["huge.dat", "free; lower size"]),
    case(&["run", "--name", "a", "--size", "3g", "--bs", "3g"], &["block size above 2 GiB"]),
    case(&["run", "--name", "a", "--filename", "/proc/version", "--rw", "read"], &["/proc/version"]),
    case(&["run", "--name", "a", "--filename", "/dev/null", "--rw", "read", "--size", "1m"], &["/dev/null", "return nothing", "read /dev/zero"]),
    case(&["run", "--name", "a", "--filename", "/dev/zero", "--rw", "read"], &["/dev/zero", "character device and has no size", "set size"]),
    case(&["run", "--name", "a", "--filename", "/dev/full", "--rw", "write", "--size", "1m"], &["/dev/full", "ENOSPC"]),
    case(&["run", "--name", "a", "--filename", "/dev/tty", "--rw", "read", "--size", "1m"], &["/dev/tty", "character device other than /dev/null"]),
    // fio's per-I/O logs: what is not built is refused by name (issue 27).
    with(&["run", "--fio", "p.fio"], &[("p.fio", "[a]\nioengine=null\nsize=1m\nwrite_bw_log=a\nper_job_logs=0\n")], &["per_job_logs=0", "PREFIX_TYPE.N.log"]),
    with(&["run", "--fio", "c.fio"], &[("c.fio", "[a]\nioengine=null\nsize=1m\nwrite_bw_log=a\nlog_store_compressed=1\n")], &["log_store_compressed", "plain log files"]),
    case(&["run", "--agents", "127.0.0.1", "--name", "a", "--ioengine", "null", "--size", "1m", "--write_bw_log", "a"], &["per-I/O logs", "on this machine only", "log_avg_msec=N"]),
    // Watched hosts (--watch, issue 30): the list is checked before any host is reached.
    case(&["run", "--watch", ",", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--watch ','", "no hosts given", "storbench agent --monitor"]),
    case(&["run", "--watch", "10.0.0.1:http", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--watch", "'10.0.0.1:http'", "port must be a number"]),
    case(&["sweep", "--watch", "10.0.0.1/24", "--name", "a", "--ioengine", "null", "--size", "1m", "--sweep", "bs=4k,8k"], &["--watch", "'10.0.0.1/24' is not HOST or HOST:PORT"]),
    case(&["run", "--watch", "127.0.0.1", "--no-telemetry", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--watch and --no-telemetry", "drop one"]),
    case(&["run", "--agents", "127.0.0.1", "--watch", "127.0.0.1:7450", "--name", "a", "--ioengine", "null", "--size", "1m"], &["127.0.0.1:7450 is under both --agents and --watch", "list it once"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--write_bw_log", "a", "--log_avg_msec", "500", "--log_max_value", "1"], &["log_max_value=1 with log_avg_msec", "log_avg_msec=0"]),
    case(&["run", "--name", "a", "--directory", "/nonexistent/dir", "--size", "1m", "--rw", "write"], &["/nonexistent/dir"]),
    case(&["run", "--name", "a", "--ioengine", "psync", "--size", "1m", "--results-dir", "/proc/nope"], &["/proc"]),
    // What a run keeps, and where (issue 26: never overwritten, never outside the results directory).
    case(&["run", "--name", "a", "--ioengine", "null", "--runtime", "1", "--write_bw_log", "../../x", "--log_avg_msec", "500"], &["log prefix '../../x'", "leads out of the results directory"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--runtime", "1", "--write_lat_log", "/etc/x", "--log_avg_msec", "500"], &["log prefix '/etc/x'"]),
    with(&["run", "--name", "a", "--size", "1m", "--rw", "write", "--write_iolog", "io.log"], &[("io.log", "mine")], &["write_iolog", "io.log exists", "--allow_overwrite"]),
    case(&["run", "--name", "a", "--size", "1m", "--rw", "write", "--write_iolog", "nodir/io.log"], &["write_iolog", "nodir does not exist"]),
    with(&["run", "--name", "a", "--ioengine", "null", "--runtime", "1", "--results-dir", "out"], &[("out/result.json", "{}")], &["holds an earlier run's results", "--force"]),
    with(&["run", "--name", "a", "--size", "1m", "--rw", "write", "--verify", "crc32c", "--verify_state", "f/state"], &[("f", "x")], &["verify_state f/state", "not a directory"]),
    with(&["run", "--name", "a", "--filename", "st.dat", "--size", "1m", "--rw", "write", "--verify", "crc32c", "--verify_state", "vs"], &[("vs/st.dat.vstate", "junk")], &["vs/st.dat.vstate", "not a verify state"]),
    with(&["report", "out", "-o", "mine.html"], &[("mine.html", "mine"), ("out/result.json", "{}")], &["mine.html exists and is not a storbench report", "--force"]),
    case(&["slo", "--resume", "nowhere"], &["nowhere/slo.json"]),
    with(&["report", "st"], &[("st/study.json", "{\"version\": 1}")], &["st/study.json", "not a study index"]),
    case(&["run", "--name", "a", "--size", "1m", "--rw", "write", "--destroy_device_in_use", "1"], &["option 'destroy_device_in_use' is gone", "umount"]),
    // The object model.
    case(&["run", "--name", "a", "--ioengine", "null", "--objects", "0", "--runtime", "1"], &["option 'objects'", "between 1 and"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_size", "1m-4k", "--runtime", "1"], &["object_size", "small to large"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_size", "4k/60:1m/60", "--runtime", "1"], &["object_size", "more than 100"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_ops", "read:x", "--runtime", "1"], &["object_ops", "weight 'x'"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_ops", "bogus", "--runtime", "1"], &["object_ops", "not an object operation"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_ops", "read:1,read:2", "--runtime", "1"], &["read is listed twice"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_ops", "read:0", "--runtime", "1"], &["no operation a weight"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_ops", "sync", "--runtime", "1"], &["not an object operation"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_op_size", "64k-4k", "--runtime", "1"], &["object_op_size", "first size is larger"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_ops", "read", "--runtime", "1"], &["nothing writes first"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--objects_exist", "1", "--object_size", "4k-8k", "--runtime", "1"], &["varying object sizes"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--object_size", "4m", "--object_op_size", "8m", "--rw", "read", "--prefill", "1", "--runtime", "1"], &["larger than object_size"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--objects", "10", "--direct", "1", "--runtime", "1"], &["direct=1 has no meaning"]),
    case(&["run", "--name", "a", "--ioengine", "psync", "--objects", "10", "--size", "1m"], &["need an object engine"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--objects", "4294967295", "--prefill", "1", "--object_size", "1-2", "--runtime", "1"], &["of memory"]),
    // Engine options.
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--fixedbuf", "1"], &["fixedbuf"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--qwertyuiop", "1"], &["unknown option 'qwertyuiop'"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--bucket", "b"], &["option 'bucket' belongs to engine s3, not null"]),
    case(&["run", "--name", "a", "--ioengine", "io_uring", "--size", "1m", "--iodepth_batch_submit", "0", "--filename", "x.dat"], &["iodepth_batch_submit", "at least 1"]),
    case(&["run", "--name", "a", "--ioengine", "io_uring", "--size", "1m", "--registerfiles", "2"], &["--registerfiles is a flag"]),
    case(&["run", "--name", "a", "--ioengine", "libaio", "--size", "1m", "--iodepth_low", "70000", "--filename", "x.dat"], &["option 'iodepth_low'", "between 0 and 65536"]),
    case(&["run", "--name", "a", "--ioengine", "libaio", "--size", "1m", "--iodepth_batch_complete_max", "-1", "--filename", "x.dat"], &["option 'iodepth_batch_complete_max'", "-1"]),
    case(&["run", "--name", "a", "--ioengine", "rados", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["option 'pool'", "is required"]),
    case(&["run", "--name", "a", "--ioengine", "rados", "--pool", "p", "--object_ops", "list", "--runtime", "1"], &["cannot list"]),
    case(&["run", "--name", "a", "--ioengine", "rados", "--pool", "p", "--op_timeout", "soon", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["op_timeout", "not a number of seconds"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--rbdname", "x:x", "--size", "1m"], &["rbdname", "listed twice"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--rbdname", "::", "--size", "1m"], &["rbdname", "names no image"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--rbd_cache", "maybe", "--size", "1m"], &["rbd_cache"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--conf", "/missing.conf", "--size", "1m", "--rw", "randread"], &["conf", "'/missing.conf' does not exist"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--keyring", "/missing.keyring", "--size", "1m", "--rw", "randread"], &["keyring", "/missing.keyring"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--rbdname", "x", "--size", "1m", "--rw", "randread"], &["option 'pool'", "is required", "fio's rbd engine"]),
    with(&["run", "--fio", "rbd.fio"], &[("rbd.fio", "[a]\nioengine=rbd\nrbdname=x\nsize=1m\nrw=read\n")], &["option 'pool'", "is required"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--rw", "write", "--runtime", "1"], &["memory", "needs a size", "--size"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--op_latency", "reed:1ms"], &["option 'op_latency'", "no operation is called 'reed'"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--op_latency", "3ms..1ms"], &["option 'op_latency'", "low end"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--fail_rate", "2"], &["option 'fail_rate'", "probability from 0 to 1"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--fail_every", "1", "--fail_kind", "boom"], &["'boom' is not a failure kind"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--fail_ops", "sync,bogus"], &["option 'fail_ops'", "'bogus' is not an operation"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--capacity", "0"], &["option 'capacity'", "holds nothing"]),
    case(&["run", "--name", "a", "--ioengine", "memory", "--size", "1m", "--store", "a/b"], &["option 'store'", "not a store name"]),
    case(&["cleanup", "."], &["no journal.json in it or below", "--object_prefix"]),
    case(&["cleanup", "missing"], &["no such results directory"]),
    case(&["cleanup", "--ioengine", "psync", "--object_prefix", "x"], &["give an object engine (rados, s3, swift, memory)"]),
    with(&["cleanup", "."], &[("journal.json", "{ not json")], &["journal.json is not a storbench journal"]),
    case(&["cleanup", ".", "--ioengine", "rados", "--pool", "p", "--object_prefix", "x"], &["not both"]),
    case(&["cleanup", "--force"], &["cleanup needs a results directory, or --object_prefix"]),
    case(&["sweep", "--sweep", "bs=4k,4096", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--sweep bs=4k,4096", "4k and 4096 are the same value"]),
    // Study files: each mistake named with where it is, before any step runs.
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"swep\"\n")], &["question q", "ask = \"swep\"", "give one of sweep"]),
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\ncolour = 1\n")], &["s.toml", "unknown field `colour`"]),
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\n")], &["asks no question"]),
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"run\"\nargs = [\"--filename=${nope}\"]\n")], &["no variable nope", "--set nope=VALUE"]),
    with(&["study", "s.toml", "--set", "s3_secret_key=x"], &[("s.toml", "[study]\ntitle = \"t\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"run\"\n")], &["looks like a secret", "environment"]),
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"run\"\nargs = [\"--results-dir=x\"]\n")], &["a study places every step's results itself"]),
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"compare\"\nof = \"r\"\n")], &["question q", "no question r before this one"]),
    with(&["study", "s.toml"], &[("s.toml", "[study]\ntitle = \"t\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"run\"\nchart = \"surfaces\"\n")], &["chart = \"surfaces\" does not answer ask = \"run\""]),
    with(&["study", "s.toml", "--set", "s3=SECRETVALUE"], &[("s.toml", "[study]\ntitle = \"t\"\n[vars]\ns3 = \"\"\n[[question]]\nid = \"q\"\ntitle = \"q\"\nask = \"run\"\nargs = [\"--ioengine=s3\", \"--secret_key=${s3}\"]\n")], &["a secret's value cannot come from a study variable"]),
    case(&["study", "--builtin", "nosuch"], &["--builtin nosuch: no such built-in study"]),
    case(&["study", "--resume", "nowhere"], &["nowhere/study.json", "not a study's results directory"]),
    case(&["study"], &["give a study file, --builtin NAME or --resume DIR"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--addressing", "dns", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["addressing", "path or virtual"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--payload", "maybe", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["payload", "unsigned, signed or streaming"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--chunk_size", "1k", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["chunk_size", "at least 8k"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--retries", "11", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["retries", "0 to 10"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--connect_to", "nothost", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["connect_to", "not an IP address"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--buckets", "0", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["buckets", "count from 1"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--op_timeout", "-1", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["op_timeout"]),
    case(&["run", "--name", "a", "--ioengine", "nbd", "--uri", "nbd://127.0.0.1:1/x", "--op_timeout", "nan", "--rw", "read", "--number_ios", "1"], &["option 'op_timeout'", "'nan' is not a number of seconds"]),
    case(&["run", "--name", "a", "--ioengine", "nbd", "--uri", "nbd://127.0.0.1:1/x", "--op_timeout", "0", "--rw", "read", "--number_ios", "1"], &["option 'op_timeout'", "above 0"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--bucket", "a/b", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["bucket", "'a/b'"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--endpoint", "ftp://x", "--access_key", "k", "--secret_key", "s", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["endpoint", "http:// or https://"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--ca_cert", "/nonexistent/ca.pem", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["ca_cert"]),
    case(&["run", "--name", "a", "--ioengine", "swift", "--containers", "0", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["containers", "count from 1"]),
    case(&["run", "--name", "a", "--ioengine", "swift", "--segment_size", "0", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["segment_size", "above 0"]),
    // Command lines.
    case(&["run", "--output-format", "xml"], &["normal, json, fio-json"]),
    case(&["run", "--output-format", "rados-bench"], &["'rados-bench' is not one of normal, json, fio-json", "csv"]),
    case(&["run", "--suite", "slow"], &["'slow' is not a suite"]),
    case(&["run", "--suite", "quick", "--name", "a"], &["cannot be combined with --suite"]),
    case(&["run", "--users", "4"], &["--users ramps an ssbench scenario"]),
    case(&["run", "--users", "0", "--ssbench", "s.json"], &["--users"]),
    case(&["run", "--ssbench", "builtin:nope"], &["builtin:nope", "no such scenario", "builtin:swift-medium"]),
    case(&["run", "--quiet", "maybe", "--name", "a"], &["maybe"]),
    case(&["frobnicate"], &["unknown command 'frobnicate'"]),
    case(&["runn"], &["unknown command 'runn'", "Did you mean 'run'"]),
    case(&["help", "nosuch"], &["no help on 'nosuch'"]),
    case(&["show", "nowhere"], &["nowhere"]),
    case(&["show", ".", "--format", "xml"], &["'xml' is not one of"]),
    case(&["export", "nowhere"], &["nowhere: no such directory", "run, sweep, SLO search or study"]),
    with(&["export", "f.csv"], &[("f.csv", "a,b\n")], &["f.csv: not a directory"]),
    with(&["export", "empty"], &[("empty/notes.txt", "mine")], &["empty: not a run, sweep, SLO search or study directory", "result.json"]),
    with(&["export", "out", "-f", "xml"], &[("out/result.json", "{}")], &["xml"]),
    with(&["export", "out", "-o", "mine.csv"], &[("mine.csv", "mine"), ("out/result.json", "{}")], &["-o mine.csv exists", "--force"]),
    with(&["export", "out", "-o", "no/such/t.csv"], &[("out/result.json", "{}")], &["no directory no/such"]),
    with(&["export", "out"], &[("out/result.json", "{}")], &["out/result.json is not a storbench result"]),
    with(&["export", "sw"], &[("sw/sweep.json", "{\"version\": 1}")], &["sw/sweep.json is not a storbench sweep index"]),
    case(&["rados", "bench", "10", "write"], &["name the pool with -p POOL"]),
    case(&["rados", "bench", "10", "sideways", "-p", "p"], &["sideways"]),
    case(&["rados", "bench", "10", "write", "-p", "p", "-b", "4x"], &["4x"]),
    case(&["rados", "bench", "10", "write", "-p", "p", "-t", "0"], &["-t"]),
    case(&["rados", "bench", "10", "write", "-p", "p", "-b", "4M", "-O", "8M"], &["different from the op size"]),
    case(&["rados", "bench", "10", "write", "-p", "p", "--reuse-bench"], &["--reuse-bench is not supported"]),
    case(&["rados", "bench", "-p", "p"], &["SECONDS"]),
    case(&["rados", "load-gen", "-p", "p", "--read-percent", "150"], &["--read-percent"]),
    case(&["rados", "load-gen", "-p", "p", "--target-throughput", "fast"], &["--target-throughput", "bytes per second"]),
    case(&["rados", "mkpool"], &["mkpool"]),
    case(&["rbd", "bench", "--io-type", "write"], &["name the image"]),
    case(&["rbd", "bench", "img"], &["--io-type"]),
    case(&["rbd", "bench", "--io-type", "sideways", "img"], &["sideways"]),
    case(&["rbd", "bench", "--io-type", "write", "--io-pattern", "zigzag", "img"], &["zigzag"]),
    case(&["rbd", "bench", "--io-type", "write", "--io-size", "4q", "img"], &["4q"]),
    case(&["swift-bench", "-c", "0"], &["-c"]),
    case(&["swift-bench", "--ioengine", "rados"], &["rados"]),
    case(&["swift-bench", "--name", "x"], &["not --name jobs"]),
    case(&["swift-bench", "-s", "big"], &["big"]),
    // Job files.
    with(&["run", "bad.toml"], &[("bad.toml", "[global\nrw = \"read\"\n")], &["not valid TOML"]),
    with(&["run", "typo.toml"], &[("typo.toml", "[[job]]\nname = \"a\"\nrwmixrd = 70\n")], &["did you mean 'rwmixread'"]),
    with(&["run", "top.toml"], &[("top.toml", "[globl]\n[[job]]\nname = \"a\"\n")], &["did you mean 'global'"]),
    with(&["run", "nojobs.toml"], &[("nojobs.toml", "[global]\nrw = \"read\"\n")], &["no [[job]]"]),
    with(&["run", "mode.toml"], &[("mode.toml", "run = \"sideways\"\n[[job]]\nname = \"a\"\n")], &["\"sequential\" or \"parallel\""]),
    with(&["run", "table.toml"], &[("table.toml", "[[job]]\nname = \"a\"\nbs = { x = 1 }\n")], &["option 'bs'", "not a string, number"]),
    with(&["run", "value.toml"], &[("value.toml", "[[job]]\nname = \"a\"\niodepth = \"many\"\n")], &["iodepth", "many"]),
    with(&["run", "dup.toml"], &[("dup.toml", "[[job]]\nname = \"a\"\nioengine = \"null\"\nsize = \"1m\"\n[[job]]\nname = \"a\"\nioengine = \"null\"\nsize = \"1m\"\n")], &["two jobs have this name"]),
    case(&["run", "missing.toml"], &["cannot read job file missing.toml"]),
    with(&["run", "--fio", "u.fio"], &[("u.fio", "[a]\nrw=read\nzonemode=zbd\nsize=1m\n")], &["zonemode"]),
    with(&["run", "--fio", "cpus.fio"], &[("cpus.fio", "[a]\nioengine=null\nsize=1m\ncpus_allowed=0,1000\n")], &["cpus_allowed names CPU 1000", "does not have online"]),
    with(&["run", "--fio", "cpul.fio"], &[("cpul.fio", "[a]\nioengine=null\nsize=1m\ncpus_allowed=1-0\n")], &["option 'cpus_allowed'", "'1-0' is not a number or a low-high range"]),
    with(&["run", "--fio", "mask.fio"], &[("mask.fio", "[a]\nioengine=null\nsize=1m\ncpumask=0\n")], &["option 'cpumask'", "allows no CPU"]),
    with(&["run", "--fio", "pol.fio"], &[("pol.fio", "[a]\nioengine=null\nsize=1m\ncpus_allowed_policy=even\n")], &["cpus_allowed_policy", "even"]),
    with(&["run", "--fio", "node.fio"], &[("node.fio", "[a]\nioengine=null\nsize=1m\nnuma_cpu_nodes=0,999\n")], &["numa_cpu_nodes names node 999"]),
    with(&["run", "--fio", "mpol.fio"], &[("mpol.fio", "[a]\nioengine=null\nsize=1m\nnuma_mem_policy=spread:0\n")], &["option 'numa_mem_policy'", "'spread' is not a memory policy"]),
    with(&["run", "--fio", "mpol2.fio"], &[("mpol2.fio", "[a]\nioengine=null\nsize=1m\nnuma_mem_policy=prefer:0-1\n")], &["prefer takes one node"]),
    with(&["run", "--fio", "tw.fio"], &[("tw.fio", "[a]\nioengine=psync\nsize=1m\nrw=trimwrite\n")], &["rw=trimwrite", "only trim and randtrim"]),
    with(&["run", "--fio", "tv.fio"], &[("tv.fio", "[a]\nioengine=psync\nsize=1m\nrw=randtrim\nverify=crc32c\n")], &["a trim job writes no blocks to verify"]),
    with(&["run", "--fio", "fv.fio"], &[("fv.fio", "[a]\nioengine=falloc\nsize=1m\nrw=write\nverify=crc32c\n")], &["falloc engine", "nothing to verify"]),
    with(&["run", "--fio", "st.fio"], &[("st.fio", "[a]\nioengine=filestat\nfilesize=4k\nstat_type=fstat\n")], &["stat_type", "'fstat' is not a stat call"]),
    with(&["run", "--fio", "nosize.fio"], &[("nosize.fio", "[a]\nioengine=filedelete\nnrfiles=4\n")], &["engine filedelete needs each file's size", "filesize"]),
    with(&["run", "--fio", "ftr.fio"], &[("ftr.fio", "[a]\nioengine=ftruncate\nfilename=t\nsize=64k\nrw=randread\n")], &["engine ftruncate truncates on writes only"]),
    with(&["run", "--fio", "fsv.fio"], &[("fsv.fio", "[a]\nioengine=filestat\nfilesize=4k\nverify=crc32c\nrw=write\n")], &["filestat engine's operations (stat)", "nothing to verify"]),
    with(&["run", "--fio", "tbd.fio"], &[("tbd.fio", "[a]\nioengine=filedelete\nfilesize=4k\nnrfiles=4\ntime_based\nruntime=1\n")], &["engine filedelete deletes each file once", "time_based"]),
    with(&["run", "--fio", "lpc.fio"], &[("lpc.fio", "[a]\nioengine=filecreate\nfilesize=4k\nnrfiles=4\nloops=2\n")], &["engine filecreate creates each file once", "loops"]),
    with(&["run", "--fio", "dc.fio"], &[("dc.fio", "[a]\nioengine=dircreate\nfilesize=4k\n")], &["dircreate", "newer than fio 3.33"]),
    with(&["run", "--fio", "v.fio"], &[("v.fio", "[a]\nioengine=vsync\nsize=1m\n")], &["'ioengine'", "vsync", "psync, sync or pvsync"]),
    with(&["run", "--fio", "w.fio"], &[("w.fio", "[a]\nioengine=windowsaio\nsize=1m\n")], &["'ioengine'", "on Linux use libaio or io_uring"]),
    with(&["run", "--fio", "r.fio"], &[("r.fio", "[a]\nioengine=librpma_gpspm_client\nsize=1m\n")], &["'ioengine'", "librpma"]),
    with(&["run", "--fio", "lt.fio"], &[("lt.fio", "[a]\nioengine=null\nsize=1m\nlatency_target=2ms\n")], &["latency_percentile=100", "below 100"]),
    // latency_window=0 is fio's default (every check judges what completed since the last).
    with(&["run", "--fio", "lw.fio"], &[("lw.fio", "[a]\nioengine=null\nsize=1m\nlatency_target=2ms\nlatency_percentile=99\nlatency_window=soon\n")], &["latency_window=soon", "give a time"]),
    with(&["run", "--fio", "ml.fio"], &[("ml.fio", "[a]\nioengine=null\nsize=1m\nmax_latency=2ms,soon\n")], &["max_latency=soon", "give a time"]),
    with(&["run", "--fio", "lp.fio"], &[("lp.fio", "[a]\nioengine=null\nsize=1m\nlatency_target=2ms\nlatency_percentile=101\n")], &["latency_percentile=101"]),
    with(&["run", "--fio", "lr.fio"], &[("lr.fio", "[a]\nioengine=null\nsize=1m\nlatency_target=2ms\nlatency_run=1\n")], &["latency_run"]),
    with(&["run", "--fio", "fl.fio"], &[("fl.fio", "[a]\nioengine=null\nsize=1m\nflow=1001\n")], &["option 'flow'", "between 0 and 1000"]),
    with(&["run", "--fio", "fa.fio"], &[("fa.fio", "[a]\nsize=1m\nrw=write\nfallocate=sparse\n")], &["fallocate", "'sparse'", "none, native, posix, keep or truncate"]),
    with(&["run", "--fio", "ow.fio"], &[("ow.fio", "[a]\nsize=1m\nrw=write\noverwrite=2\n")], &["overwrite", "'2'", "a boolean"]),
    with(&["run", "--fio", "wf.fio"], &[("wf.fio", "[a]\nioengine=null\nsize=1m\n[b]\nioengine=null\nsize=1m\nwait_for=c\n[c]\nioengine=null\nsize=1m\n")], &["wait_for=c", "no earlier job has this name"]),
    with(&["run", "--fio", "p1.fio"], &[("p1.fio", "[a]\nioengine=null\nsize=1m\nprio=8\n")], &["option 'prio'", "between 0 and 7"]),
    with(&["run", "--fio", "p2.fio"], &[("p2.fio", "[a]\nioengine=null\nsize=1m\nprioclass=4\n")], &["option 'prioclass'", "between 0 and 3"]),
    with(&["run", "--fio", "p3.fio"], &[("p3.fio", "[a]\nioengine=io_uring\nsize=1m\ncmdprio_class=0\n")], &["option 'cmdprio_class'", "between 1 and 3"]),
    with(&["run", "--fio", "p4.fio"], &[("p4.fio", "[a]\nioengine=io_uring\nsize=1m\ncmdprio_percentage=101\n")], &["option 'cmdprio_percentage'", "between 0 and 100"]),
    with(&["run", "--fio", "p5.fio"], &[("p5.fio", "[a]\nioengine=io_uring\nsize=1m\ncmdprio_bssplit=64k/60:64k/50\n")], &["cmdprio_bssplit", "more than 100"]),
    with(&["run", "--fio", "p6.fio"], &[("p6.fio", "[a]\nioengine=io_uring\nsize=1m\ncmdprio_bssplit=64k/25/4/1\n")], &["cmdprio_bssplit", "the class '4'"]),
    with(&["run", "--fio", "p7.fio"], &[("p7.fio", "[a]\nioengine=psync\nsize=1m\ncmdprio_percentage=10\n")], &["psync cannot carry", "ioengine=io_uring or libaio"]),
    with(&["run", "--fio", "p8.fio"], &[("p8.fio", "[a]\nioengine=libaio\nsize=1m\ncmdprio_percentage=10\ncmdprio_bssplit=64k/10\n")], &["cmdprio_percentage and cmdprio_bssplit cannot both be given"]),
    with(&["run", "--fio", "wb.fio"], &[("wb.fio", "[b]\nioengine=cpuio\ncpuload=50\nexit_on_io_done=1\n[w]\nioengine=psync\nsize=1m\nrw=write\nwait_for=b\n")], &["wait_for=b", "would wait forever"]),
    with(&["run", "--fio", "ws.fio"], &[("ws.fio", "[a]\nioengine=null\nsize=1m\nwait_for=a\n")], &["wait_for=a", "cannot wait for itself"]),
    with(&["run", "--fio", "sub.fio"], &[("sub.fio", "[a]\nioengine=null\nsize=1m\nio_submit_mode=later\n")], &["io_submit_mode takes inline or offload"]),
    with(&["run", "--fio", "r.fio"], &[("r.fio", "[a]\nrw=randrw\nsize=1m\nrate=,300\n")], &["rate=,300", "one direction only"]),
    with(&["run", "--fio", "r.fio"], &[("r.fio", "[a]\nrw=read\nsize=1m\nrate_iops=10,x\n")], &["rate_iops", "'x' is not a number"]),
    with(&["run", "--fio", "r.fio"], &[("r.fio", "[a]\nrw=randrw\nsize=1m\nrate_min=1k,2k\n")], &["rate_min=1k,2k", "different minimums"]),
    with(&["run", "--fio", "b.fio"], &[("b.fio", "[a]\nrw=randrw\nsize=1m\nba=8k,4k\n")], &["blockalign=8k,4k", "give one value"]),
    case(&["run", "--name", "a", "--size", "1m", "--blockalign", "0"], &["option 'blockalign'", "must be above zero"]),
    case(&["run", "--name", "a", "--size", "0%"], &["option 'size'", "'0%'", "above 0 and at most 100"]),
    case(&["run", "--name", "a", "--size", "150%"], &["option 'size'", "'150%'", "above 0 and at most 100"]),
    case(&["run", "--name", "a", "--size", "1m", "--bs", "8k", "--blockalign", "2k", "--verify", "crc32c"], &["blockalign 2048 is not a multiple"]),
    with(&["run", "--fio", "e.fio"], &[("e.fio", "[a]\nrw=write\nsize=1m\ncontinue_on_error=sometimes\n")], &["continue_on_error=sometimes", "give none, read"]),
    with(&["run", "--fio", "e.fio"], &[("e.fio", "[a]\nrw=write\nsize=1m\ncontinue_on_error=1\nignore_error=,ENOSPACE\n")], &["'ENOSPACE' is not one of fio's errno names"]),
    with(&["run", "--fio", "z.fio"], &[("z.fio", "[a]\nrw=read\nsize=1m\nzonemode=stripy\nzonesize=64k\n")], &["zonemode=stripy", "give none, strided or zbd"]),
    with(&["run", "--fio", "z.fio"], &[("z.fio", "[a]\nrw=read\nsize=1m\nzonemode=strided\n")], &["zonemode=strided needs zonesize="]),
    with(&["run", "--fio", "z.fio"], &[("z.fio", "[a]\nrw=read\nsize=1m\nbs=64k\nzonesize=4k\n")], &["zonerange 4096 is smaller than the largest block"]),
    with(&["run", "--fio", "d.fio"], &[("d.fio", "[a]\nrw=write\nsize=1m\ndedupe_percentage=50\ndedupe_mode=sometimes\n")], &["dedupe_mode=sometimes", "give repeat or working_set"]),
    with(&["run", "--fio", "d.fio"], &[("d.fio", "[a]\nrw=write\nsize=1m\ndedupe_percentage=60\ndedupe_mode=working_set\ndedupe_working_set_percentage=50\n")], &["add up to more than 100"]),
    with(&["run", "--fio", "d.fio"], &[("d.fio", "[a]\nrw=write\nsize=1m\nnrfiles=2\ndedupe_percentage=50\ndedupe_mode=working_set\n")], &["one file per job, not 2"]),
    with(&["run", "--fio", "d.fio"], &[("d.fio", "[a]\nrw=write\nsize=1m\ndedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=x\n")], &["dedupe_working_set_percentage=x", "give 0 to 100"]),
    with(&["run", "--fio", "early.fio"], &[("early.fio", "rw=read\n[a]\nsize=1m\n")], &["comes before any [section]"]),
    with(&["run", "--fio", "global.fio"], &[("global.fio", "[global]\nrw=read\n")], &["no job sections"]),
    with(&["run", "--fio", "rados.fio"], &[("rados.fio", "[a]\nioengine=rados\npool=p\nrw=write\n")], &["ioengine=rados needs size="]),
    with(&["run", "--fio", "badval.fio"], &[("badval.fio", "[a]\nbs=4q\nsize=1m\n")], &["option 'bs'", "4q"]),
    with(&["run", "--fio", "f.fio", "--name", "b"], &[("f.fio", "[a]\nsize=1m\n")], &["cannot be combined with --fio"]),
    with(&["run", "j.toml", "--name", "b"], &[("j.toml", "[[job]]\nname = \"a\"\n")], &["cannot be combined with a job file"]),
    with(&["run", "j.toml", "--fio", "f.fio"], &[("j.toml", "[[job]]\nname = \"a\"\n"), ("f.fio", "[a]\nsize=1m\n")], &["give one of"]),
    case(&["run", "--fio", "missing.fio"], &["cannot read fio job file missing.fio"]),
    // ssbench scenarios.
    with(&["run", "--ssbench", "s.json"], &[("s.json", "{ not json")], &["not JSON"]),
    with(&["run", "--ssbench", "s.json"], &[("s.json", r#"{"name": "s", "colour": "blue"}"#)], &["colour", "unknown field"]),
    with(&["run", "--ssbench", "s.json"], &[("s.json", r#"{"name": "s", "sizes": []}"#)], &["crud_profile"]),
    with(&["run", "--ssbench", "s.json", "--users", "4,2"], &[("s.json", SCENARIO)], &["must grow"]),
    with(&["run", "--ssbench", "s.json", "--name", "a"], &[("s.json", SCENARIO)], &["runs a scenario on its own"]),
    case(&["run", "--ssbench", "missing.json"], &["cannot read ssbench scenario missing.json"]),
    // Files that never end, or are not files, are refused before they are read.
    case(&["run", "--fio", "/dev/zero"], &["cannot read fio job file /dev/zero", "a character device, not a regular file"]),
    case(&["run", "/dev/zero"], &["cannot read job file /dev/zero", "character device"]),
    case(&["run", "--ssbench", "/dev/urandom"], &["cannot read ssbench scenario /dev/urandom", "character device"]),
    case(&["run", "--agents-file", "/dev/zero", "--name", "a", "--ioengine", "null", "--size", "1m"], &["cannot read agents file /dev/zero"]),
    case(&["run", "--fio", "/tmp"], &["cannot read fio job file /tmp", "a directory"]),
    case(&["replay", "/dev/zero", "--ioengine", "psync", "--filename", "r.dat", "--size", "1m"], &["/dev/zero", "a trace is read from a file"]),
    with(&["run", "--fio", "z.fio"], &[("z.fio", "[a]\nioengine=null\nsize=1m\ninclude /dev/zero\n")], &["z.fio line 4", "cannot include /dev/zero", "character device"]),
    with(&["run", "--fio", "u.fio"], &[("u.fio", "[a]\ninclude /dev/urandom\n")], &["u.fio line 2", "cannot include /dev/urandom"]),
    // An include that is not a job file is named, never shown (nor kept as a note).
    hiding(&["run", "--fio", "j.fio", "--fio-allow-unsupported"], &[("j.fio", "[a]\nioengine=null\nsize=1m\ninclude shadow\n"), ("shadow", SHADOW)],
        &["j.fio line 4", "shadow is not a fio job file (its line 1", "nothing of it is shown"], &["SECRETHASH", "root", "daemon"]),
    hiding(&["run", "--fio", "j.fio"], &[("j.fio", "[a]\nioengine=null\nsize=1m\n[b]\ninclude shadow\n"), ("shadow", SHADOW)],
        &["j.fio line 5", "not a fio job file"], &["SECRETHASH", "root"]),
    // An unset ${VAR} is named: fio would write filename=${DIR}/f.dat at /f.dat.
    with(&["run", "--fio", "v.fio"], &[("v.fio", "[a]\nrw=write\nsize=1m\nfilename=${STORBENCH_CORPUS_UNSET}/f.dat\n")],
        &["v.fio line 4", "${STORBENCH_CORPUS_UNSET} is not set", "/f.dat"]),
    with(&["run", "--fio", "v.fio"], &[("v.fio", "[global]\ndirectory=${STORBENCH_CORPUS_UNSET}\n[a]\nrw=write\nsize=1m\n")],
        &["v.fio line 2", "${STORBENCH_CORPUS_UNSET} is not set"]),
    // NaN, infinities and absurd figures, in options and in every command's numeric flags.
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--rate_iops", "1e308"], &["rate_iops", "at most 1000000000"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--rate_iops", "1e-300"], &["rate_iops", "at least 0.001"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--rate_iops_min", "inf"], &["rate_iops_min", "'inf'"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--rate", "1e308iops"], &["option 'rate'", "at most 1000000000"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--replay_time_scale", "1e308"], &["replay_time_scale", "at most"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--random_distribution", "zipf:inf"], &["zipf theta", "at most 100"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--size", "1m", "--random_distribution", "zipf:1e308"], &["zipf theta"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--runtime", "2", "--steadystate", "iops:1e308"], &["steadystate", "more than any figure"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--runtime", "2", "--steadystate", "iops:200%"], &["steadystate", "at most 100%"]),
    case(&["run", "--name", "a", "--ioengine", "null", "--runtime", "2", "--steadystate", "bw:nan"], &["steadystate", "above 0"]),
    case(&["run", "--name", "a", "--ioengine", "s3", "--op_timeout", "1e308", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["op_timeout", "at most 86400"]),
    case(&["run", "--name", "a", "--ioengine", "swift", "--connect_timeout", "inf", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["connect_timeout", "at most 86400"]),
    case(&["run", "--name", "a", "--ioengine", "rados", "--pool", "p", "--connect_timeout", "1e308", "--objects", "1", "--rw", "write", "--number_ios", "1"], &["connect_timeout", "up to 86400"]),
    case(&["run", "--name", "a", "--ioengine", "rbd", "--pool", "p", "--connect_timeout", "0", "--size", "1m", "--rw", "read"], &["connect_timeout", "'0'", "above 0"]),
    case(&["slo", "--precision", "NaN", "--latency", "p99=2ms", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--precision", "'NaN'", "above 0 and at most 100"]),
    case(&["slo", "--precision", "1e308", "--latency", "p99=2ms", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--precision", "'1e308'"]),
    case(&["slo", "--precision=-1", "--latency", "p99=2ms", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--precision", "'-1'"]),
    case(&["slo", "--max-probes", "4294967295", "--latency", "p99=2ms", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--max-probes", "3..=1000"]),
    case(&["slo", "--latency", "mean=0", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--latency mean=0", "mean=BOUND"]),
    case(&["slo", "--latency", "median<1ms", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--latency median<1ms", "PERCENTILE=BOUND"]),
    case(&["sweep", "--knee-gain", "inf", "--name", "a", "--ioengine", "null", "--size", "1m", "--sweep", "iodepth=1,2"], &["--knee-gain", "'inf'"]),
    case(&["sweep", "--repeat", "4294967295", "--name", "a", "--ioengine", "null", "--size", "1m", "--sweep", "iodepth=1,2"], &["--repeat", "1..=1000"]),
    case(&["sweep", "--each-point", "--name", "a", "--ioengine", "null", "--size", "1m", "--sweep", "iodepth=1,2"], &["--each-point goes with --precondition or --fill"]),
    case(&["compare", "--min-effect", "nan", "a", "b"], &["--min-effect", "'nan'"]),
    case(&["compare", "--fail-if-slower", "1e308", "a", "b"], &["--fail-if-slower", "from 0 to 100"]),
    case(&["compare", "--fail-if-p99-worse=-inf", "a", "b"], &["--fail-if-p99-worse", "'-inf'"]),
    case(&["efficiency", "d", "--devices", "3", "--device-read-iops", "nan"], &["--device-read-iops", "'nan'"]),
    case(&["efficiency", "d", "--devices", "3", "--device-write-iops", "1e308"], &["--device-write-iops", "at most 1000000000"]),
    case(&["efficiency", "d", "--devices", "3", "--device-read-mibs", "0"], &["--device-read-mibs", "above 0"]),
    case(&["efficiency", "d", "--devices", "3", "--device-write-mibs=-1"], &["--device-write-mibs", "'-1'"]),
    case(&["efficiency", "d", "--devices", "0", "--device-read-iops", "1000"], &["--devices"]),
    case(&["efficiency", "d", "--devices", "3", "--ec", "4294967295+1", "--device-read-iops", "1000"], &["--ec", "K from 1 to 256"]),
    case(&["replay", "t.log", "--time-scale", "1e308"], &["--time-scale", "at most 1000000"]),
    case(&["replay", "t.log", "--time-scale", "nan"], &["--time-scale", "'nan'"]),
    case(&["run", "--preset", "train:unet3d", "--scale", "nan"], &["--scale", "'nan'"]),
    case(&["run", "--preset", "train:unet3d", "--scale", "1e308"], &["--scale", "'1e308'", "at most 1"]),
    case(&["run", "--preset", "train:unet3d:mi355"], &["no preset 'train:unet3d:mi355'", "train:unet3d:b200"]),
    case(&["run", "--preset", "checkpoint:llama3-8b:subset"], &["llama3-8b has no subset mode", "run checkpoint:llama3-8b"]),
    // 20 row groups hold 7 batches but give 7 accelerators 2 groups each: no step.
    case(&["run", "--preset", "train:dlrm", "--scale", "0.000025", "--accelerators", "7"], &["20 row groups", "at most 6 accelerators"]),
    // MLPerf's rules: a dataset under 5x this host's memory, a checkpoint, no memory.
    case(&["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--rules", "mlperf"], &["5x the client's memory", "--client-memory"]),
    case(&["run", "--preset", "checkpoint:llama3-8b", "--rules", "mlperf"], &["judges a training preset", "checkpoint:llama3-8b"]),
    case(
        &["run", "--preset", "checkpoint:llama3-70b:subset", "--agents", "127.0.0.1:1,127.0.0.2:1"],
        &["checkpoint:llama3-70b:subset is one host of 8 ranks", "2 agents", "checkpoint:llama3-70b to divide"],
    ),
    case(
        &["run", "--preset", "train:cosmoflow", "--rules", "mlperf", "--find-accelerators", "--agents", "127.0.0.1:1"],
        &["--find-accelerators searches on this client alone", "--accelerators N"],
    ),
    case(&["run", "--preset", "train:cosmoflow", "--rules", "mlperf", "--client-memory", "0"], &["--client-memory", "a size above 0"]),
    case(
        &["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--rules", "mlperf", "--client-memory", "64m", "--epochs", "1"],
        &["neither division allows", "drop --epochs"],
    ),
    // The options the rules allow: no storage measured, O_DIRECT outside unet3d, a block size.
    case(
        &["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--rules", "mlperf", "--client-memory", "64m", "--ioengine", "null"],
        &["no storage is measured", "here null", "give an engine that stores the dataset"],
    ),
    case(
        &["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--rules", "mlperf", "--client-memory", "64m", "--direct", "1"],
        &["unet3d only", "here --direct 1", "drop --direct"],
    ),
    case(
        &["run", "--preset", "train:cosmoflow", "--scale", "0.001", "--rules", "mlperf", "--client-memory", "64m", "--rate", "10m"],
        &["not a parameter the closed or open division", "here --rate 10m", "drop the option"],
    ),
    // The search under the rules: a dataset that holds 500 steps for no accelerator.
    case(
        &["run", "--preset", "train:cosmoflow", "--scale", "0.0009", "--rules", "mlperf", "--client-memory", "64m", "--find-accelerators"],
        &["500 steps an epoch", "raise --scale"],
    ),
    case(&["run", "--fill", "nan%", "--name", "a", "--ioengine", "null", "--size", "1m"], &["--fill", "'nan%'"]),
    case(&["baseline", "--streams", "0", "--network", "127.0.0.1"], &["--streams"]),
];

/// Every file below `dir`, with its length (what "nothing written" compares).
fn snapshot(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push((p.strip_prefix(dir).unwrap().display().to_string(), e.metadata().map(|m| m.len()).unwrap_or(0)));
        }
    }
    out.sort();
    out
}

#[test]
fn every_bad_input_gets_one_clear_error_and_writes_nothing() {
    let generated = generated();
    let cases: Vec<&Case> = CASES.iter().chain(&generated).collect();
    assert!(cases.len() >= 100, "the corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    for c in cases.iter().copied() {
        let d = scratch();
        for (name, text) in c.files {
            let path = d.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let before = snapshot(d.path());
        let started = std::time::Instant::now();
        // No credentials or cluster from the environment: the input alone is judged.
        let out = Command::new(bin())
            .args(c.args)
            .current_dir(d.path())
            .env("HOME", d.path())
            .env_remove("CEPH_CONF")
            .envs(["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "ST_AUTH", "OS_AUTH_URL"].map(|k| (k, "")))
            .output()
            .unwrap();
        let (code, stderr) = (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned());
        let mut wrong = Vec::new();
        if code != 2 {
            wrong.push(format!("exit {code}, not 2"));
        }
        if stderr.lines().count() != 1 {
            wrong.push("not one line".into());
        }
        if stderr.contains("panicked") {
            wrong.push("a panic".into());
        }
        // Refusals come before anything is read at length or run.
        if started.elapsed() > std::time::Duration::from_secs(10) {
            wrong.push(format!("took {:?}", started.elapsed()));
        }
        wrong.extend(c.says.iter().filter(|s| !stderr.contains(**s)).map(|s| format!("does not say '{s}'")));
        wrong.extend(
            c.hides
                .iter()
                .filter(|s| stderr.contains(**s) || String::from_utf8_lossy(&out.stdout).contains(**s))
                .map(|s| format!("shows '{s}'")),
        );
        if snapshot(d.path()) != before {
            wrong.push(format!("wrote {:?}", snapshot(d.path())));
        }
        if !wrong.is_empty() {
            let args: Vec<String> = c.args.iter().map(|a| storbench_workload::shown(a).into_owned()).collect();
            let stderr: String = stderr.trim_end().chars().take(600).collect();
            failures.push(format!("{args:?}: {}\n    stderr: {stderr}", wrong.join(", ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} bad inputs handled wrongly:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
