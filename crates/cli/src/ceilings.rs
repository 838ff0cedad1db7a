//! `--stop-if` in sweeps and SLO searches: each run's hosts judged against
//! the ceilings (the model's `ceiling`), and a ceiling no host can report
//! said once, not after every run.

use crate::cli::JobSource;
use crate::error::CliError;
use std::collections::BTreeSet;
use storbench_model::ceiling::{first_over, Ceiling};
use storbench_model::RunResult;

/// Ceilings need the hosts' telemetry.
pub fn check(ceilings: &[Ceiling], source: &JobSource) -> Result<(), CliError> {
    if !ceilings.is_empty() && source.no_telemetry {
        return Err(CliError::usage("--stop-if judges the hosts' CPU and disks, which --no-telemetry turns off: give one or the other"));
    }
    Ok(())
}

/// The ceilings of one sweep or search, and what was said about them.
#[derive(Debug, Default)]
pub struct Watch {
    ceilings: Vec<Ceiling>,
    said: BTreeSet<String>,
}

impl Watch {
    pub fn new(ceilings: Vec<Ceiling>) -> Watch {
        Watch { ceilings, said: BTreeSet::new() }
    }

    /// The first ceiling the run went over (said, with what follows from
    /// it), or none.
    pub fn judge(&mut self, r: &RunResult, then: &str) -> Option<String> {
        let (over, unmeasured) = first_over(&self.ceilings, r.telemetry.as_ref());
        for why in unmeasured {
            if self.said.insert(why.clone()) {
                say!("storbench: --stop-if not judged: {why}");
            }
        }
        if let Some(why) = &over {
            say!("storbench: over --stop-if {why}: {then}");
        }
        over
    }
}
