//! Resource limits, checked before anything starts: the memory a group of
//! jobs needs at once (I/O buffers, histograms, the object model's key
//! bitmaps) against what the machine has available, and the threads it
//! needs against what the system allows. A plan that would take the
//! machine down (the OOM killer, an abort on a failed allocation) is refused
//! with the figure, the limit and what to lower.

use crate::plan::{JobPlan, PlanError};
use storbench_workload::units::{format_amount, format_size};

/// One latency histogram's counts (1 ns..1 h at 3 significant digits).
const HISTOGRAM_BYTES: u64 = 256 << 10;
/// Histograms per operation kind a worker holds at once: its current
/// interval, one on its way to the coordinator, one coming back.
const HISTOGRAMS_PER_KIND: u64 = 3;
/// Room left for everything else (the page cache, the cluster the machine
/// may also run): a plan may use at most this share of the available memory.
pub const MEMORY_SHARE: f64 = 0.5;

/// Bytes one job needs while it runs.
pub fn job_memory(job: &JobPlan) -> u64 {
    let spec = &job.spec;
    let workers = spec.workers() as u64;
    // A verified job reads back in larger pieces than its blocks (its slots are that large).
    let transfer = crate::verify::read_back_len(spec).unwrap_or(spec.buffer_len());
    let slot = transfer.max(1).div_ceil(4096) * 4096;
    let buffers = slot.saturating_mul(job.queue_depth as u64);
    let kinds = match &spec.objects {
        Some(o) => o.effective_mix(spec.read_percent()).len() as u64,
        None => 1 + u64::from(spec.writes() && spec.read_percent() > 0.0) + u64::from(spec.sync.is_some()),
    };
    // The latency, and the service time where it is kept apart (fixed
    // rate, or a submission timed apart, which has its own too).
    let paced = storbench_model::protocol::paced(job.ops_per_sec, &job.spec);
    let apart = job.config.submits_in_queue();
    let services = 1 + u64::from(paced || apart) + u64::from(apart);
    // The coordinator keeps one more per worker for a job whose clones fio lists apart.
    let held = HISTOGRAMS_PER_KIND + u64::from(storbench_model::JobResult::keeps_clones(spec, spec.workers()));
    let histograms = HISTOGRAM_BYTES * held * kinds * services;
    // The object model: one bit per key, and the size of each object when sizes vary.
    let model = spec.objects.as_ref().map_or(0, |o| o.count / 8 + if o.sizes.fixed().is_none() { o.count * 4 } else { 0 });
    workers.saturating_mul(buffers.saturating_add(histograms)).saturating_add(model)
}

/// Refuse groups that need more memory or threads than the machine has.
pub fn check(jobs: &[JobPlan], groups: &[Vec<usize>]) -> Result<(), PlanError> {
    let available = available_memory();
    let threads = thread_room();
    for group in groups {
        let members: Vec<&JobPlan> = group.iter().map(|i| &jobs[*i]).collect();
        let memory: u64 = members.iter().map(|j| job_memory(j)).fold(0, u64::saturating_add);
        let first = &members[0].spec.name;
        if let Some(avail) = available.filter(|a| memory as f64 > *a as f64 * MEMORY_SHARE) {
            let biggest = members.iter().max_by_key(|j| job_memory(j)).expect("a group has jobs");
            let s = &biggest.spec;
            return Err(refused(
                &biggest.spec.name,
                format!(
                    "the jobs running together need about {} of memory ({} per buffer x iodepth {} x {} workers for this job, \
                     plus histograms and the object model), more than {:.0}% of the {} available; lower bs, iodepth or numjobs",
                    format_amount(memory),
                    format_size(s.buffer_len()),
                    biggest.queue_depth,
                    s.workers(),
                    MEMORY_SHARE * 100.0,
                    format_amount(avail)
                ),
            ));
        }
        let workers: u64 = members.iter().map(|j| j.spec.workers() as u64).sum();
        if let Some(room) = threads.filter(|r| workers > *r) {
            return Err(refused(
                first,
                format!(
                    "the jobs running together need {workers} worker threads, and this system allows about {room} more \
                     (ulimit -u, kernel.threads-max); lower numjobs"
                ),
            ));
        }
    }
    Ok(())
}

/// A fill of objects whose count was settled when its store was prepared
/// (from the pool's capacity, after [`check`] sized the job's own count):
/// its object model judged again, on its own, against what is available.
pub fn check_settled_fill(job: &JobPlan) -> Result<(), PlanError> {
    settled_fill_fits(job, available_memory())
}

fn settled_fill_fits(job: &JobPlan, available: Option<u64>) -> Result<(), PlanError> {
    let need = job_memory(job);
    let Some(avail) = available.filter(|a| need as f64 > *a as f64 * MEMORY_SHARE) else { return Ok(()) };
    let count = job.spec.objects.as_ref().map_or(0, |o| o.count);
    Err(refused(
        &job.spec.name,
        format!(
            "the fill needs {count} objects to reach its share of the store, and keeping track of them takes about {} of memory, \
             more than {:.0}% of the {} available; give a larger or fixed object_size, or a smaller fill",
            format_amount(need),
            MEMORY_SHARE * 100.0,
            format_amount(avail)
        ),
    ))
}

fn refused(job: &str, message: String) -> PlanError {
    PlanError::Input { job: job.into(), message }
}

/// MemAvailable, in bytes.
pub fn available_memory() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// MemTotal, in bytes: the host's memory, as MLPerf's rules size a
/// dataset by (an agent tells its coordinator in its Hello).
pub fn total_memory() -> Option<u64> {
    meminfo("MemTotal:")
}

/// A /proc/meminfo line's figure (kB), in bytes.
fn meminfo(key: &str) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// How many more threads this process may start: the smaller of the
/// per-user limit and the system's, less those that run now.
fn thread_room() -> Option<u64> {
    let mut limits = Vec::new();
    // SAFETY: getrlimit fills the struct we pass.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0 && rl.rlim_cur != libc::RLIM_INFINITY {
        limits.push(rl.rlim_cur);
    }
    if let Some(max) = std::fs::read_to_string("/proc/sys/kernel/threads-max").ok().and_then(|s| s.trim().parse().ok()) {
        limits.push(max);
    }
    let limit = limits.into_iter().min()?;
    // Threads that exist already (all of the system's, a safe over-count for the per-user limit).
    let running = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
        let field = s.split_whitespace().nth(3)?;
        field.split_once('/')?.1.parse::<u64>().ok()
    });
    Some(limit.saturating_sub(running.unwrap_or(0)).saturating_sub(64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build_plan;
    use storbench_workload::JobSpec;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        storbench_workload::options::spec_from(opts.iter().copied()).unwrap()
    }

    #[test]
    fn buffers_histograms_and_key_bitmaps_are_counted() {
        let job = |o: &[(&str, &str)]| crate::plan::build_plan(vec![spec(o)]).map(|p| job_memory(&p.jobs[0]));
        let small = job(&[("name", "s"), ("ioengine", "null"), ("size", "1m"), ("bs", "4k"), ("iodepth", "2")]).unwrap();
        assert_eq!(small, 2 * 4096 + HISTOGRAM_BYTES * HISTOGRAMS_PER_KIND);
        let objects = job(&[
            ("name", "o"),
            ("ioengine", "null"),
            ("objects", "8000"),
            ("object_size", "1k-2k"),
            ("rw", "write"),
            ("number_ios", "1"),
        ])
        .unwrap();
        assert!(objects >= 8000 / 8 + 8000 * 4 + 2048, "{objects}");
    }

    /// A fill's count comes from the store's capacity at prepare time: the
    /// model of that many keys is judged then.
    #[test]
    fn a_fill_settled_to_more_objects_than_memory_tracks_is_refused() {
        let mut plan = build_plan(vec![spec(&[
            ("name", "f"),
            ("ioengine", "null"),
            ("objects", "1000"),
            ("object_size", "1k-2k"),
            ("rw", "write"),
            ("number_ios", "1000"),
        ])])
        .unwrap();
        let job = &mut plan.jobs[0];
        assert!(settled_fill_fits(job, Some(64 << 20)).is_ok(), "1,000 keys fit in 64 MiB");
        job.spec.objects.as_mut().unwrap().count = 100_000_000;
        let e = settled_fill_fits(job, Some(64 << 20)).unwrap_err();
        assert!(e.message().contains("100000000 objects") && e.message().contains("object_size"), "{}", e.message());
    }

    #[test]
    fn a_terabyte_of_buffers_is_refused_before_anything_starts() {
        let e = build_plan(vec![spec(&[("name", "huge"), ("ioengine", "null"), ("size", "64g"), ("bs", "1g"), ("iodepth", "1024")])])
            .err()
            .expect("1 TiB of buffers");
        assert!(e.message().contains("of memory") && e.message().contains("lower bs, iodepth or numjobs"), "{}", e.message());
    }
}
