//! Knees: along a curve (the last dimension of a grid that loads the store,
//! or each such dimension of a one-at-a-time sweep), the point after which a
//! step gains less than the threshold of IOPS while mean latency grows by at
//! least as much. The run that shows it is the last of its curve; the rest
//! of the curve is skipped. Only dimensions that offer more load (queue
//! depth, workers, volumes, agents, rates: `options::axis`) have knees:
//! along a block size fewer IOPS is the workload changing, not saturation.

use storbench_model::sweep::*;

/// Whether dimension `d` steps the load offered to the store.
fn loads(index: &SweepIndex, d: usize) -> bool {
    let option = &index.dims[d].option;
    storbench_workload::options::axis::loads_the_store(option, super::dims::option_kind(option))
}

/// Why no knee is sought in this sweep, when none is: no dimension loads
/// the store.
pub fn none_sought(index: &SweepIndex) -> Option<String> {
    index.knee_gain_pct?;
    if (0..index.dims.len()).any(|d| loads(index, d)) {
        return None;
    }
    let swept: Vec<&str> = index.dims.iter().map(|d| d.option.as_str()).collect();
    Some(format!(
        "no knee is sought: {} does not step the load (knees are sought along iodepth, numjobs, rates, images, volumes, agents); every point runs",
        swept.join(", ")
    ))
}

/// Where a point lies: the dimension its curve varies and its position there.
/// A grid's curves run along its last dimension that loads the store; the
/// base point of a one-at-a-time sweep starts every curve (`None`), and a
/// dimension that does not load has no curve to cut short.
fn place(index: &SweepIndex, values: &[String]) -> Option<(usize, usize)> {
    let pos = |d: usize| index.dims[d].values.iter().position(|v| *v == values[d]).unwrap_or(0);
    match index.mode {
        SweepMode::Grid => (0..index.dims.len()).rev().find(|&d| loads(index, d)).map(|d| (d, pos(d))),
        SweepMode::OneAtATime => (0..index.dims.len()).find(|&d| pos(d) != 0).filter(|&d| loads(index, d)).map(|d| (d, pos(d))),
    }
}

/// The same curve's point at position `pos` of dimension `dim`.
fn on_curve(values: &[String], index: &SweepIndex, dim: usize, pos: usize) -> Vec<String> {
    let mut v = values.to_vec();
    v[dim] = index.dims[dim].values[pos].clone();
    v
}

/// Whether a knee was found on this curve before (the point that showed it
/// is at the knee's position + 1).
fn knee_on<'a>(index: &'a SweepIndex, values: &[String], dim: usize) -> Option<(usize, &'a Knee)> {
    index.knees.iter().filter(|k| k.option == index.dims[dim].option).find_map(|k| {
        let same_curve = (0..values.len()).all(|d| d == dim || k.values[d] == values[d] || index.mode == SweepMode::OneAtATime);
        let pos = index.dims[dim].values.iter().position(|v| *v == k.values[dim])?;
        same_curve.then_some((pos, k))
    })
}

/// Why run `n` is skipped: its curve's knee lies more than one step before it.
pub fn past(index: &SweepIndex, n: usize) -> Option<String> {
    let values = &index.points[n].values;
    let (dim, pos) = place(index, values)?;
    if let Some(why) = ceiling_before(index, values, dim, pos) {
        return Some(why);
    }
    index.knee_gain_pct?;
    let (knee_pos, k) = knee_on(index, values, dim)?;
    (pos > knee_pos + 1).then(|| format!("past the knee of {} at {}", k.option, index.dims[dim].values[knee_pos]))
}

/// Why a point is skipped for a `--stop-if` ceiling: an earlier point of
/// its curve (the base point of a one-at-a-time sweep starts every curve)
/// went over it, so more load would only go further over.
fn ceiling_before(index: &SweepIndex, values: &[String], dim: usize, pos: usize) -> Option<String> {
    let option = &index.dims[dim].option;
    index.points.iter().find_map(|q| {
        let why = q.ceiling.as_ref()?;
        let same_curve = (0..values.len()).all(|d| d == dim || q.values[d] == values[d]);
        let at = index.dims[dim].values.iter().position(|v| *v == q.values[dim])?;
        (same_curve && at < pos).then(|| format!("over --stop-if at {option}={} ({why})", q.values[dim]))
    })
}

/// After run `n`: the knee its grid point reveals, once every repeat of the
/// point and of the one before it on the curve is done.
pub fn found(index: &SweepIndex, n: usize) -> Option<Knee> {
    let gain_pct = index.knee_gain_pct?;
    let p = &index.points[n];
    let (dim, pos) = place(index, &p.values)?;
    if pos == 0 || knee_on(index, &p.values, dim).is_some() {
        return None;
    }
    let prev_values = on_curve(&p.values, index, dim, pos - 1);
    let prev = index.index_of(&prev_values)?;
    let all_done = |i: usize| index.points.iter().filter(|q| q.index == i).all(|q| q.state == PointState::Done);
    if !all_done(p.index) || !all_done(prev) {
        return None;
    }
    let (now, before) = (index.figures(p.index)?, index.figures(prev)?);
    let option = &index.dims[dim].option;
    let step = format!("from {option}={} to {}", index.dims[dim].values[pos - 1], index.dims[dim].values[pos]);
    // Groups ran one after another: each is its own curve, and the step is
    // a knee only when every group shows one.
    let pairs: Vec<(String, &PointFigures, &PointFigures)> = if !now.groups.is_empty() && now.groups.len() == before.groups.len() {
        now.groups.iter().zip(&before.groups).map(|(n, b)| (format!("{}: ", n.label()), &n.figures, &b.figures)).collect()
    } else {
        vec![(String::new(), &now, &before)]
    };
    let rules: Vec<String> =
        pairs.iter().map(|(label, n, b)| knee_rule(n, b, gain_pct, &step).map(|r| format!("{label}{r}"))).collect::<Option<_>>()?;
    Some(Knee { option: option.clone(), values: prev_values, rule: rules.join("; ") })
}

/// The rule's words when the step from `before` to `now` gains less than
/// `gain_pct` of IOPS while mean latency grows at least as much.
fn knee_rule(now: &PointFigures, before: &PointFigures, gain_pct: f64, step: &str) -> Option<String> {
    if before.iops <= 0.0 || before.mean_ns <= 0.0 {
        return None;
    }
    let gain = (now.iops / before.iops - 1.0) * 100.0;
    let slower = (now.mean_ns / before.mean_ns - 1.0) * 100.0;
    (gain < gain_pct && slower >= gain_pct).then(|| format!("IOPS {gain:+.1}% (< {gain_pct}%) {step} while mean latency {slower:+.0}%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(mode: SweepMode, dims: &[(&str, &[&str])]) -> SweepIndex {
        let dims: Vec<Dimension> =
            dims.iter().map(|(o, v)| Dimension { option: o.to_string(), values: v.iter().map(|s| s.to_string()).collect() }).collect();
        let points = grid(&dims, mode)
            .into_iter()
            .enumerate()
            .map(|(i, values)| SweepPoint {
                index: i,
                repeat: 1,
                values,
                dir: String::new(),
                state: PointState::Pending,
                figures: None,
                seconds: 0.0,
                ceiling: None,
            })
            .collect();
        SweepIndex { version: 1, command: vec![], dims, mode, repeat: 1, shuffle: None, knee_gain_pct: Some(5.0), points, knees: vec![] }
    }

    fn finish(ix: &mut SweepIndex, n: usize, iops: f64, mean_ns: f64) -> Option<Knee> {
        ix.points[n].state = PointState::Done;
        ix.points[n].figures = Some(PointFigures { iops, mean_ns, ..Default::default() });
        let k = found(ix, n);
        ix.knees.extend(k.clone());
        k
    }

    #[test]
    fn a_flat_step_with_growing_latency_is_the_knee_and_the_rest_of_its_curve_is_skipped() {
        let mut ix = index(SweepMode::Grid, &[("numjobs", &["1", "2"]), ("iodepth", &["1", "2", "4", "8"])]);
        assert_eq!(finish(&mut ix, 0, 1000.0, 1e6), None);
        assert_eq!(finish(&mut ix, 1, 1900.0, 1.05e6), None, "still gaining");
        let k = finish(&mut ix, 2, 1950.0, 2e6).expect("+2.6% while latency doubles");
        assert_eq!((k.option.as_str(), k.values.clone()), ("iodepth", vec!["1".to_string(), "2".into()]));
        assert!(k.rule.contains("from iodepth=2 to 4"), "{}", k.rule);
        assert!(past(&ix, 3).is_some(), "iodepth=8 of this curve is skipped");
        assert!(past(&ix, 4).is_none() && past(&ix, 7).is_none(), "the numjobs=2 curve runs");
        assert_eq!(finish(&mut ix, 4, 2000.0, 1e6), None);
        assert_eq!(finish(&mut ix, 5, 2020.0, 1.0e6), None, "no gain but no latency growth either: not a knee");
    }

    #[test]
    fn one_at_a_time_curves_start_at_the_base_point() {
        let mut ix = index(SweepMode::OneAtATime, &[("numjobs", &["1", "2", "4"]), ("iodepth", &["1", "2", "4"])]);
        // Points: base, numjobs=2, numjobs=4, iodepth=2, iodepth=4.
        finish(&mut ix, 0, 1000.0, 1e6);
        assert!(finish(&mut ix, 1, 1010.0, 2e6).is_some());
        assert!(past(&ix, 2).is_some() && past(&ix, 4).is_none());
    }

    #[test]
    fn a_point_over_a_ceiling_ends_its_curve_even_without_a_knee_search() {
        let mut ix = index(SweepMode::Grid, &[("numjobs", &["1", "2"]), ("iodepth", &["1", "2", "4", "8"])]);
        ix.knee_gain_pct = None;
        finish(&mut ix, 0, 1000.0, 1e6);
        finish(&mut ix, 1, 2000.0, 1e6);
        ix.points[1].ceiling = Some("cpu>80%: cpu 85% mean on host local".into());
        let why = past(&ix, 2).expect("iodepth=4 of numjobs=1 is past it");
        assert_eq!(why, "over --stop-if at iodepth=2 (cpu>80%: cpu 85% mean on host local)");
        assert!(past(&ix, 3).is_some());
        assert!(past(&ix, 5).is_none() && past(&ix, 6).is_none(), "the numjobs=2 curve runs");
        // One at a time: the base point over it starts every curve over it.
        let mut ix = index(SweepMode::OneAtATime, &[("numjobs", &["1", "2"]), ("iodepth", &["1", "2"])]);
        ix.points[0].ceiling = Some("core>95%: core 99% mean on host local".into());
        assert!(past(&ix, 1).is_some() && past(&ix, 2).is_some());
    }

    #[test]
    fn no_knee_along_a_block_size_and_a_grid_seeks_it_along_its_load() {
        let mut ix = index(SweepMode::Grid, &[("bs", &["512", "4096", "65536"])]);
        assert!(none_sought(&ix).is_some());
        finish(&mut ix, 0, 1000.0, 1e6);
        assert_eq!(finish(&mut ix, 1, 500.0, 2e6), None, "fewer IOPS at a larger block is not a knee");
        assert!(past(&ix, 2).is_none());
        // iodepth first, bs last: the curves still run along iodepth.
        let mut ix = index(SweepMode::Grid, &[("iodepth", &["1", "2", "4"]), ("bs", &["4096", "65536"])]);
        assert!(none_sought(&ix).is_none());
        finish(&mut ix, 0, 1000.0, 1e6);
        finish(&mut ix, 1, 400.0, 3e6);
        finish(&mut ix, 2, 1900.0, 1.05e6);
        let k = finish(&mut ix, 3, 401.0, 6e6).expect("bs=64k's iodepth curve is flat");
        assert_eq!((k.option.as_str(), k.values.clone()), ("iodepth", vec!["1".to_string(), "65536".into()]));
        assert!(past(&ix, 5).is_some() && past(&ix, 4).is_none(), "iodepth=4 at 64k skipped, at 4k run");
    }
}
