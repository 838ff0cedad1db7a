//! The coordinator's side: every host's seconds gathered onto the run's
//! time axis, whose second 0 is the first group's start.

use storbench_model::telemetry::{HostSample, SourceKind, Telemetry};

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

    /// Until when (Unix ns) the samplers' reading of the whole second that
    /// ended last, `now` being in the last group, is worth waiting for: its
    /// boundary plus `grace`, if it has not come yet. The last group's
    /// workers end on the boundary a sampler ticks on, so that reading may
    /// still be on its way when the group is over.
    pub fn awaited(&self, now_unix_ns: u64, grace_ns: u64) -> Option<u64> {
        let (&first, &last) = (self.starts.first()?, self.starts.last()?);
        let whole = now_unix_ns.checked_sub(last)? / 1_000_000_000;
        let boundary = last + whole * 1_000_000_000;
        let deadline = boundary + grace_ns;
        if !self.on || whole == 0 || now_unix_ns >= deadline {
            return None;
        }
        let t = round_us((boundary - first) as f64 / 1e9);
        // The load's hosts' readings are the ones waited for, every one of
        // them: a watched host's (a fleet's coordinator reads itself first),
        // a cluster's or an exporter's says nothing of whether theirs came.
        let clients: Vec<_> = self.telemetry.sources.iter().filter(|s| s.kind == SourceKind::Client).collect();
        let seen = !clients.is_empty() && clients.iter().all(|s| s.t.last().is_some_and(|end| *end >= t));
        (!seen).then_some(deadline)
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

    /// At a run's end the reading of the boundary just passed is waited for
    /// (until 300 ms past it), not once it came, nor for a boundary long past.
    #[test]
    fn the_last_boundarys_reading_is_awaited_until_it_comes() {
        let s = 1_000_000_000;
        let grace = 300_000_000;
        let mut c = Collector::new(true);
        c.started(10 * s);
        c.sample(HostSample { source: "a".into(), t: 1.0, duration: 1.0, ..HostSample::default() });
        c.sample(HostSample { source: "a".into(), t: 2.0, duration: 1.0, ..HostSample::default() });
        assert_eq!(c.awaited(13 * s + 5_000_000, grace), Some(13 * s + grace), "second 3 not come yet");
        assert_eq!(c.awaited(13 * s + grace, grace), None, "given up at the grace");
        assert_eq!(c.awaited(12 * s + 5_000_000, grace), None, "second 2 came");
        assert_eq!(c.awaited(10 * s + 500_000_000, grace), None, "no whole second yet");
        // Another agent's second 3 still on its way; a watched host's (a coordinator's) does not count.
        c.sample(HostSample { source: "b".into(), t: 2.0, duration: 1.0, ..HostSample::default() });
        c.sample(HostSample { source: "a".into(), t: 3.0, duration: 1.0, ..HostSample::default() });
        let watched =
            HostSample { source: "coordinator".into(), kind: SourceKind::Watched, t: 3.0, duration: 1.0, ..HostSample::default() };
        c.sample(watched);
        assert_eq!(c.awaited(13 * s + 5_000_000, grace), Some(13 * s + grace), "agent b's second 3 not come yet");
        c.sample(HostSample { source: "b".into(), t: 3.0, duration: 1.0, ..HostSample::default() });
        assert_eq!(c.awaited(13 * s + 5_000_000, grace), None, "second 3 came from every client");
        assert_eq!(Collector::new(false).awaited(13 * s, grace), None, "telemetry off");
    }
}
