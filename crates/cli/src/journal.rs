//! The run's journal file (`journal.json`, `storbench_model::journal`) in its
//! results directory: written before any target is touched, rewritten
//! (temporary file, rename) as each job's targets are made and once the run
//! has cleaned up, so a run killed at any point leaves a journal that says
//! what it may have made. `storbench cleanup RESULTS_DIR` reads it.

use crate::error::CliError;
use std::path::{Path, PathBuf};
use storbench_model::journal::{Entry, Journal, Made, Process, State, FILE};

/// A run's journal, kept in step with its file.
pub struct RunJournal {
    path: PathBuf,
    process: Process,
    /// Entries by part (a job, or a fleet agent's job), rewritten whole.
    parts: Vec<Vec<Entry>>,
    finished: bool,
    /// A rewrite failed once (said once; the run goes on).
    failed: bool,
}

impl RunJournal {
    /// Write the journal of a run about to make `parts` into `dir`.
    pub fn begin(dir: &Path, parts: Vec<Vec<Entry>>) -> Result<RunJournal, CliError> {
        let j = RunJournal { path: dir.join(FILE), process: this_process(), parts, finished: false, failed: false };
        j.write().map_err(|e| CliError::system(format!("cannot write the run's journal {}: {e}", j.path.display())))?;
        Ok(j)
    }

    /// Add parts (a fleet's agents' jobs); returns the index of the first.
    pub fn add(&mut self, parts: Vec<Vec<Entry>>) -> usize {
        let first = self.parts.len();
        self.parts.extend(parts);
        self.save();
        first
    }

    /// Replace part `i`'s entries (its targets were made, or cleaned up).
    pub fn set(&mut self, i: usize, entries: Vec<Entry>) {
        if let Some(p) = self.parts.get_mut(i) {
            *p = entries;
        }
        self.save();
    }

    /// Part `i`'s entries.
    pub fn part(&self, i: usize) -> &[Entry] {
        self.parts.get(i).map_or(&[], Vec::as_slice)
    }

    /// After the run's own cleanup: files are left if they are still there;
    /// part `i`'s store entries are left if `store_left(i)` says so.
    pub fn finish(&mut self, store_left: &dyn Fn(usize) -> bool) {
        for (i, part) in self.parts.iter_mut().enumerate() {
            for e in part.iter_mut().filter(|e| e.state != State::Done) {
                let left = match &e.made {
                    Made::File { path } => std::fs::symlink_metadata(path).is_ok(),
                    Made::Store { prefix, created, .. } => {
                        store_left(i) && (prefix.is_some() || created.as_ref().is_none_or(|c| !c.is_empty()))
                    }
                };
                e.state = if left { State::Left } else { State::Done };
            }
        }
        self.finished = true;
        self.save();
    }

    /// Preparing failed: nothing was measured. Files it began are gone
    /// again, the failing part made nothing; if nothing is left, the journal
    /// goes too (a refused run writes nothing) and true is returned.
    pub fn abandon(&mut self) -> bool {
        let made: Vec<bool> = (0..self.parts.len()).map(|i| self.parts_made(i)).collect();
        self.finish(&|i| made[i]);
        if self.doc().clean() {
            let _ = std::fs::remove_file(&self.path);
            return true;
        }
        false
    }

    /// Whether part `i` was prepared (its store entry knows what it created).
    fn parts_made(&self, i: usize) -> bool {
        self.parts[i].iter().any(|e| matches!(&e.made, Made::Store { created: Some(c), .. } if !c.is_empty()))
    }

    pub fn doc(&self) -> Journal {
        Journal { process: self.process.clone(), finished: self.finished, entries: self.parts.iter().flatten().cloned().collect() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&mut self) {
        if let Err(e) = self.write() {
            if !self.failed {
                say!("storbench: warning: cannot update the run's journal {}: {e}", self.path.display());
            }
            self.failed = true;
        }
    }

    fn write(&self) -> std::io::Result<()> {
        write(&self.path, &self.doc())
    }
}

/// Write a journal to `path` whole: a temporary file beside it, then a rename.
pub fn write(path: &Path, doc: &Journal) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)?;
    let written = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path));
    if written.is_err() {
        // A full disk: no empty or cut temporary file left beside the journal.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Read the journal at `path`.
pub fn read(path: &Path) -> Result<Journal, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| CliError::usage(format!("{} is not a storbench journal: {e}", path.display())))
}

/// This process, as a journal names it.
pub fn this_process() -> Process {
    let pid = std::process::id();
    Process { host: storbench_runner::hostname(), pid, boot_id: boot_id(), start_ticks: start_ticks(pid).unwrap_or(0) }
}

/// Whether the process a journal names is still running (on this machine:
/// same boot, same pid, same start time).
pub fn is_running(p: &Process) -> bool {
    p.host == storbench_runner::hostname() && p.boot_id == boot_id() && start_ticks(p.pid).is_some_and(|t| t == p.start_ticks)
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Field 22 of /proc/PID/stat (after the command name, which may hold spaces).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_running_and_a_changed_start_is_not() {
        let me = this_process();
        assert!(me.start_ticks > 0 && !me.boot_id.is_empty());
        assert!(is_running(&me));
        assert!(!is_running(&Process { start_ticks: me.start_ticks + 1, ..me.clone() }), "a reused pid is another process");
    }
}
