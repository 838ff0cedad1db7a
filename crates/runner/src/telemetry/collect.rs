//! The coordinator's side: every host's seconds gathered onto the run's
//! time axis, whose second 0 is the first group's start.

use storbench_model::telemetry::{HostSample, Telemetry};

/// The hosts' seconds as they arrive, and each group's start.
#[derive(Default)]
pub struct Collector {
    on: bool,
    /// Unix ns of each started group's `Start`, in order.
    starts: Vec<u64>,
    telemetry: Telemetry,
}

impl Collector {
    pub fn new(on: bool) -> Collector {
        Collector { on, ..Collector::default() }
    }

    /// Whether agents are asked to sample their hosts.
    pub fn on(&self) -> bool {
        self.on
    }

    /// A group starts at this Unix time.
    pub fn started(&mut self, at_unix_ns: u64) {
        self.starts.push(at_unix_ns);
    }

    /// One host's second: its start number says which group's start it
    /// counts from, placed on the run's axis by that start.
    pub fn sample(&mut self, s: HostSample) {
        let Some(&first) = self.starts.first() else { return };
        let Some(&at) = self.starts.get(s.start as usize).or(self.starts.last()) else { return };
        let t = at.saturating_sub(first) as f64 / 1e9 + s.t;
        self.telemetry.push(round_us(t), s);
    }

    /// What was gathered; None when telemetry was off or nothing started.
    pub fn finish(mut self) -> Option<Telemetry> {
        let first = *self.starts.first()?;
        if !self.on {
            return None;
        }
        self.telemetry.start_unix_ns = first;
        self.telemetry.group_starts = self.starts.iter().map(|s| round_us(s.saturating_sub(first) as f64 / 1e9)).collect();
        Some(self.telemetry)
    }
}

/// Seconds kept to the microsecond: a boundary reads as the client's `t`
/// does (whole seconds from its group's start), not as 2.0000000000000004.
fn round_us(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_groups_seconds_follow_its_start() {
        let mut c = Collector::new(true);
        c.started(10_000_000_000);
        c.sample(HostSample { source: "a".into(), t: 1.0, duration: 1.0, ..HostSample::default() });
        c.started(13_500_000_000);
        c.sample(HostSample { source: "a".into(), start: 1, t: 1.0, duration: 1.0, ..HostSample::default() });
        let t = c.finish().unwrap();
        assert_eq!(t.group_starts, vec![0.0, 3.5]);
        assert_eq!(t.sources[0].t, vec![1.0, 4.5]);
    }
}
