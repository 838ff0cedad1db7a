//! The built-in quick suite `storbench run` runs with no arguments: the classic
//! small-block and large-block tests against a scratch file in the current
//! directory, sized for the free space and removed afterwards.

use crate::error::CliError;
use crate::sources::Pairs;
use std::path::Path;
use storbench_workload::JobSpec;

const MIB: u64 = 1 << 20;

/// (name, rw, bs, iodepth, extra options)
type SuiteJob = (&'static str, &'static str, &'static str, u32, &'static [(&'static str, &'static str)]);

const JOBS: &[SuiteJob] = &[
    ("4k-randread-qd1", "randread", "4k", 1, &[]),
    ("4k-randread-qd32", "randread", "4k", 32, &[]),
    ("4k-randwrite-qd32", "randwrite", "4k", 32, &[]),
    ("8k-oltp-70/30-qd16", "randrw", "8k", 16, &[("rwmixread", "70")]),
    ("1m-seqread-qd8", "read", "1m", 8, &[]),
    ("1m-seqwrite-qd8", "write", "1m", 8, &[]),
];

/// The suite's jobs; `overrides` (from the command line) apply to every job.
pub fn quick(dir: &Path, overrides: &Pairs) -> Result<(Vec<JobSpec>, Vec<String>), CliError> {
    let mut notes = Vec::new();
    let size = scratch_size(dir)?;
    let engine = if storbench_engine::uring::available() { "io_uring" } else { "psync" };
    let direct = storbench_engine::files::direct_io_works(dir);
    if !direct {
        notes.push(format!("{} does not support direct I/O: the quick suite runs buffered", dir.display()));
    }
    let file = dir.join(format!("storbench-quick-{}.dat", std::process::id()));
    let mut specs = Vec::new();
    for (name, rw, bs, qd, extra) in JOBS {
        let mut s = JobSpec::default();
        let mut set = |k: &str, v: &str| storbench_workload::apply_option(&mut s, k, v).map_err(|e| CliError::usage(e.to_string()));
        for (k, v) in [
            ("name", *name),
            ("rw", *rw),
            ("bs", *bs),
            ("ioengine", engine),
            ("filename", &file.to_string_lossy()),
            ("size", &size.to_string()),
            ("direct", if direct { "1" } else { "0" }),
            ("runtime", "8s"),
            ("ramp_time", "1s"),
            ("time_based", "1"),
            ("unlink", "1"),
            ("stonewall", "1"),
        ] {
            set(k, v)?;
        }
        set("iodepth", &qd.to_string())?;
        for (k, v) in extra.iter() {
            set(k, v)?;
        }
        for (k, v) in overrides {
            set(k, v)?;
        }
        specs.push(s);
    }
    notes.push(format!("quick suite: {} scratch file {} on {engine}", storbench_workload::units::format_size(size), file.display()));
    Ok((specs, notes))
}

/// A tenth of the free space, between 64 MiB and 1 GiB.
fn scratch_size(dir: &Path) -> Result<u64, CliError> {
    let free = free_bytes(dir).map_err(|e| CliError::system(format!("cannot read free space of {}: {e}", dir.display())))?;
    if free < 256 * MIB {
        return Err(CliError::system(format!(
            "{} has only {} MiB free; the quick suite needs 256 MiB (run it from another directory)",
            dir.display(),
            free / MIB
        )));
    }
    Ok((free / 10).clamp(64 * MIB, 1024 * MIB) / MIB * MIB)
}

fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: statvfs fills the zeroed struct we pass for a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}
