//! The journal of what a run creates (`journal.json` in its results
//! directory), written before the run creates anything and updated as it
//! prepares and cleans up, so `storbench cleanup RESULTS_DIR` removes
//! exactly what a run left, even one killed with SIGKILL: files it laid out,
//! objects under its prefixes (a fleet's per agent), buckets, containers and
//! images it made. Plain data; no secret is ever in it (an engine's
//! credentials come from the same environment or files as the run's).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The journal's file name in a results directory.
pub const FILE: &str = "journal.json";

/// What a run has made, as far as it knows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// The process that runs (or ran) it, to tell a run still going from one
    /// that was killed.
    pub process: Process,
    /// The run ended: what it left is what the entries say.
    pub finished: bool,
    pub entries: Vec<Entry>,
}

/// A process, told apart from a later one with the same pid.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    pub host: String,
    pub pid: u32,
    /// The kernel's boot id and the process's start time in clock ticks
    /// since boot (/proc/PID/stat), which a reused pid does not share.
    pub boot_id: String,
    pub start_ticks: u64,
}

/// One thing a run makes, and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub job: String,
    /// The fleet agent that works on it (none: this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub made: Made,
    pub state: State,
}

/// What is made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Made {
    /// A file the run lays out (it was not there before the run).
    File { path: PathBuf },
    /// An engine's own target: the objects the run writes under `prefix`,
    /// and what preparing the target created (`None` until it is prepared).
    Store {
        engine: String,
        /// The job's engine options, secrets left out.
        options: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        created: Option<Vec<String>>,
    },
}

/// Where an entry stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Written before the run made it: it may or may not exist.
    Preparing,
    /// Made, and not (all) removed: a file kept, objects left or kept, an
    /// image kept for later runs.
    Left,
    /// Nothing of it remains.
    Done,
}

impl Journal {
    /// Entries with something left to remove.
    pub fn left(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.state != State::Done)
    }

    /// Whether nothing made remains.
    pub fn clean(&self) -> bool {
        self.left().next().is_none()
    }
}

impl Entry {
    /// In words, for messages: `file /x`, `objects 'p*' in rados pool=p`.
    pub fn describe(&self) -> String {
        let what = match &self.made {
            Made::File { path } => format!("file {}", path.display()),
            Made::Store { engine, options, prefix, created } => {
                let mut parts = Vec::new();
                if let Some(p) = prefix {
                    parts.push(format!("objects '{p}*'"));
                }
                parts.extend(created.iter().flatten().cloned());
                if parts.is_empty() {
                    parts.push("its target".into());
                }
                let place: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{} ({engine} {})", parts.join(", "), place.join(" "))
            }
        };
        match &self.agent {
            Some(a) => format!("job '{}' on agent {a}: {what}", self.job),
            None => format!("job '{}': {what}", self.job),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_round_trips_and_says_what_is_left() {
        let store = Made::Store {
            engine: "s3".into(),
            options: BTreeMap::from([("bucket".into(), "b".into())]),
            prefix: Some("storbench.w.a0.".into()),
            created: Some(vec!["bucket 'b'".into()]),
        };
        let j = Journal {
            process: Process { host: "h".into(), pid: 7, boot_id: "x".into(), start_ticks: 9 },
            finished: false,
            entries: vec![
                Entry { job: "w".into(), agent: Some("a0".into()), made: store, state: State::Left },
                Entry { job: "f".into(), agent: None, made: Made::File { path: "/t/f".into() }, state: State::Done },
            ],
        };
        let text = serde_json::to_string(&j).unwrap();
        assert_eq!(serde_json::from_str::<Journal>(&text).unwrap(), j);
        assert!(text.contains(r#""kind":"store""#) && text.contains(r#""state":"left""#), "{text}");
        assert_eq!(j.left().count(), 1);
        assert!(!j.clean());
        assert_eq!(j.entries[0].describe(), "job 'w' on agent a0: objects 'storbench.w.a0.*', bucket 'b' (s3 bucket=b)");
    }
}
