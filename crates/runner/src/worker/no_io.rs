//! The measured phase of a job that does no I/O, run instead of the I/O
//! loop: a CPU burner's (`crate::burn`) or a program's (`crate::exec`).
//! Each hands its seconds over as the loop does.

use super::{Failed, Worker, WorkerError};
use crate::clock::Clock;
use storbench_model::protocol::Stage;

impl Worker {
    /// A CPU burner's measured phase instead of the I/O loop (see
    /// `crate::burn`): it ends at the job's end, a stop, or a stop of its
    /// job alone (fio's `exit_on_io_done`, sent when the group's I/O jobs
    /// are done). Returns the phase's end.
    pub(super) fn burn(&mut self, clock: &Clock, spec: storbench_workload::burn::CpuBurn) -> u64 {
        let mut burner = crate::burn::Burner::new(spec);
        let (control, job_stop) = (self.link.control.clone(), self.link.job_stop.clone());
        let stopped = || control.stopping() || job_stop.load(std::sync::atomic::Ordering::Relaxed);
        let mut boundary = self.next_boundary(clock.now());
        let end_ns = self.k.end_ns;
        crate::burn::run(&mut burner, clock, end_ns, &stopped, &mut |now| self.close_intervals(&mut boundary, now))
    }

    /// A phase without operations (a burner, a program) hands over each
    /// second that ended by `now`, as the I/O loop does.
    fn close_intervals(&mut self, boundary: &mut u64, now: u64) {
        if now >= *boundary {
            self.hand_over(*boundary, now);
            *boundary = self.next_boundary(now);
        }
    }

    /// A program job's phase instead of the I/O loop (fio's exec engine,
    /// `crate::exec`): the program runs until the job's end or a stop.
    /// Returns the phase's end.
    pub(super) fn program(&mut self, clock: &Clock, spec: storbench_workload::exec::ExecSpec) -> Result<u64, Failed> {
        let job = &self.share.spec.name;
        let argv = spec.argv(job, self.share.spec.runtime);
        let files = spec.output_files(job, self.worker, self.share.workers);
        let out = files.as_ref().map(|files| crate::exec::Output { files, replace: self.share.spec.allow_overwrite });
        let (control, job_stop) = (self.link.control.clone(), self.link.job_stop.clone());
        let stopped = || control.stopping() || job_stop.load(std::sync::atomic::Ordering::Relaxed);
        let aborted = || control.aborting();
        let ends = crate::exec::Ends { end_ns: self.k.end_ns, stopped: &stopped, aborted: &aborted };
        let mut boundary = self.next_boundary(clock.now());
        crate::exec::run(&spec, &argv, out, clock, ends, &mut |now| self.close_intervals(&mut boundary, now))
            .map_err(|e| WorkerError::Input(e).in_stage(Stage::Measure))
    }
}
