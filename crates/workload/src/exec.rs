//! fio's exec engine as a kind of job: a program run for the job's time
//! (a monitor such as turbostat or iostat beside the load, fio's
//! examples/exec.fio), then stopped with SIGTERM and, `grace` later,
//! SIGKILL. Its arguments take fio's `%r` (the runtime in seconds) and
//! `%n` (the job's name) and are split on spaces, as fio splits them (no
//! shell, no quoting). With `std_redirect` its output goes to JOB.stdout
//! and JOB.stderr, as fio's does. It does no I/O. A run only starts one with
//! `--allow-exec`. This module holds what the job is; the runner runs it.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// fio's `grace_time` default: a second between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(1);

/// A program job's settings (fio's `program`, `arguments`, `grace_time`,
/// `std_redirect`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecSpec {
    /// The program (a path, or a name looked up in PATH); empty until given.
    pub program: String,
    pub arguments: String,
    #[serde(with = "crate::spec::duration_ns")]
    pub grace: Duration,
    /// Its output into JOB.stdout and JOB.stderr (else onto storbench's
    /// standard error, so a report on standard output stays whole).
    pub std_redirect: bool,
}

impl Default for ExecSpec {
    fn default() -> ExecSpec {
        ExecSpec { program: String::new(), arguments: String::new(), grace: DEFAULT_GRACE, std_redirect: true }
    }
}

impl ExecSpec {
    /// The command line, fio's way: `%r` and `%n` expanded, then the program
    /// and its arguments split on spaces.
    pub fn argv(&self, job: &str, runtime: Option<Duration>) -> Vec<String> {
        let r = runtime.map_or(0, |r| r.as_secs()).to_string();
        let args = self.arguments.replace("%r", &r).replace("%n", job);
        std::iter::once(self.program.as_str()).chain(args.split(' ')).filter(|a| !a.is_empty()).map(String::from).collect()
    }

    /// The files worker `worker` of `workers` sends its output to: fio's
    /// JOB.stdout and JOB.stderr, in the working directory; JOB.N.stdout
    /// for several workers (fio's would share, and overwrite, one).
    pub fn output_files(&self, job: &str, worker: u32, workers: u32) -> Option<[String; 2]> {
        let base = match workers {
            1 => job.to_string(),
            _ => format!("{job}.{worker}"),
        };
        self.std_redirect.then(|| [format!("{base}.stdout"), format!("{base}.stderr")])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_expand_and_split_as_fio_s_do() {
        let e = ExecSpec { program: "/bin/sleep".into(), arguments: "%r  --tag=%n-%r".into(), ..ExecSpec::default() };
        assert_eq!(e.argv("idle", Some(Duration::from_millis(10_900))), ["/bin/sleep", "10", "--tag=idle-10"]);
        assert_eq!(ExecSpec { program: "true".into(), ..ExecSpec::default() }.argv("j", None), ["true"]);
        assert_eq!(e.output_files("m", 0, 1).unwrap(), ["m.stdout", "m.stderr"]);
        assert_eq!(e.output_files("m", 1, 2).unwrap(), ["m.1.stdout", "m.1.stderr"]);
        assert_eq!(ExecSpec { std_redirect: false, ..e }.output_files("m", 0, 1), None);
    }
}
