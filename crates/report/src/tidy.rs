//! The tidy table ([`storbench_model::tidy`]) as CSV or as a JSON array of
//! flat objects in the same column order, and a study's `points.csv` and
//! `points.json`. Numbers are written whole (the shortest text that reads
//! back as the same number), without units, so spreadsheets and notebooks
//! take them as numbers.

use std::io::Write;
use std::path::Path;
use storbench_model::tidy::{self, Cell, DirKind, TidyTable};

/// A study's tidy export, beside its index.
pub const POINTS_CSV: &str = "points.csv";
pub const POINTS_JSON: &str = "points.json";

/// The table as CSV: a header, then one line per row.
pub fn write_csv(t: &TidyTable, out: &mut dyn Write) -> std::io::Result<()> {
    let header: Vec<String> = t.columns().iter().map(|c| crate::csv::quote(c)).collect();
    writeln!(out, "{}", header.join(","))?;
    for r in &t.rows {
        let cells: Vec<String> = t.cells(r).iter().map(csv_cell).collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}

fn csv_cell(c: &Cell) -> String {
    match c {
        Cell::Text(s) => crate::csv::quote(s),
        Cell::Int(n) => n.to_string(),
        Cell::Float(x) if x.is_finite() => x.to_string(),
        Cell::Float(_) | Cell::Empty => String::new(),
    }
}

/// The table as a JSON array, one object per row, keys in column order; a
/// value a row was not swept over is null.
pub fn write_json(t: &TidyTable, out: &mut dyn Write) -> std::io::Result<()> {
    let keys: Vec<String> = t.columns().iter().map(|c| json_text(c)).collect();
    write!(out, "[")?;
    for (n, r) in t.rows.iter().enumerate() {
        let fields: Vec<String> = keys.iter().zip(t.cells(r)).map(|(k, c)| format!("{k}: {}", json_cell(&c))).collect();
        write!(out, "{}\n  {{{}}}", if n == 0 { "" } else { "," }, fields.join(", "))?;
    }
    writeln!(out, "{}]", if t.rows.is_empty() { "" } else { "\n" })
}

fn json_cell(c: &Cell) -> String {
    match c {
        Cell::Text(s) => json_text(s),
        Cell::Int(n) => n.to_string(),
        Cell::Float(x) => serde_json::Number::from_f64(*x).map_or_else(|| "null".into(), |n| n.to_string()),
        Cell::Empty => "null".into(),
    }
}

fn json_text(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Why a study's points were not written.
#[derive(Debug, thiserror::Error)]
pub enum PointsError {
    #[error("{0}: not a study's results directory (no study.json)")]
    NotStudy(std::path::PathBuf),
    #[error(transparent)]
    Rows(#[from] tidy::TidyError),
    #[error("{path} was not written: {source}")]
    Write { path: std::path::PathBuf, source: std::io::Error },
}

/// Write `points.csv` and `points.json` of the study in `study_dir`: every
/// step's rows so far. Each file is written whole to a temporary file and
/// renamed over the old one, so a kill leaves the previous table, never
/// half of one.
pub fn write_points(study_dir: &Path) -> Result<(), PointsError> {
    if tidy::kind_of(study_dir) != Some(DirKind::Study) {
        return Err(PointsError::NotStudy(study_dir.to_path_buf()));
    }
    let table = TidyTable::new(tidy::load(study_dir)?);
    replace(&study_dir.join(POINTS_CSV), |w| write_csv(&table, w))?;
    replace(&study_dir.join(POINTS_JSON), |w| write_json(&table, w))
}

fn replace(path: &Path, body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), PointsError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        // A name of our own, never an existing file or a link planted there.
        let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        let mut w = std::io::BufWriter::new(f);
        body(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_data()?;
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        PointsError::Write { path: path.to_path_buf(), source }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;
    use storbench_model::slo::{Probe, SloIndex};
    use storbench_model::sweep::*;
    use storbench_model::tidy::{run_rows, slo_rows, sweep_rows, TidyRow};
    use storbench_workload::OpKind;

    fn csv(t: &TidyTable) -> String {
        let mut v = Vec::new();
        write_csv(t, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    fn scope<'a>(rows: &'a [TidyRow], s: &str) -> &'a TidyRow {
        rows.iter().find(|r| r.scope == s).unwrap_or_else(|| panic!("no row {s}: {rows:?}"))
    }

    #[test]
    fn a_run_of_two_groups_has_its_sequence_rate_never_the_sum_of_the_groups() {
        // Group 0 (rr, rr2) did 4000 reads in 2 s, group 1 (wsync) 504
        // operations in 1 s after it: 4504 in 3 s, not 2000 + 504 IO/s.
        let r = sample::run();
        let rows = run_rows(&r, &PointFigures::of(&r));
        let scopes: Vec<&str> = rows.iter().map(|r| r.scope.as_str()).collect();
        assert_eq!(scopes, ["all", "group 0", "group 1", "rr", "rr2", "wsync"]);
        let (all, g0, g1) = (scope(&rows, "all"), scope(&rows, "group 0"), scope(&rows, "group 1"));
        assert!((all.iops - 4504.0 / 3.0).abs() < 1e-6, "{}", all.iops);
        assert!((g0.iops - 2000.0).abs() < 1e-6 && (g1.iops - 504.0).abs() < 1e-6, "{} {}", g0.iops, g1.iops);
        assert!((all.iops - (g0.iops + g1.iops)).abs() > 1000.0);
        // rr's 40 us reads, wsync's 2 ms writes and 5 ms syncs (to the
        // histograms' three digits).
        let near = |a: f64, b: f64| (a - b).abs() <= b * 1e-3;
        assert!(scope(&rows, "rr").iops == 500.0 && near(scope(&rows, "rr").p50_us, 40.0), "{rows:?}");
        assert!(near(scope(&rows, "wsync").p999_us, 5000.0), "{rows:?}");
        assert_eq!((scope(&rows, "wsync").errors, all.errors), (2, 2));
    }

    fn point(index: usize, repeat: u32, values: &[&str], state: PointState, iops: f64) -> SweepPoint {
        let figures = (state != PointState::Pending && !matches!(state, PointState::Skipped { .. })).then(|| PointFigures {
            iops,
            bytes_per_sec: iops * 4096.0,
            mean_ns: 1500.0,
            p50_ns: 1000,
            p99_ns: 9000,
            ..Default::default()
        });
        SweepPoint {
            index,
            repeat,
            values: values.iter().map(|v| v.to_string()).collect(),
            dir: format!("{:03}_{}", index + 1, values.join("-")),
            state,
            figures,
            seconds: 1.0,
            ceiling: None,
        }
    }

    #[test]
    fn a_sweep_of_two_dimensions_has_a_row_per_point_and_repeat_with_each_value_a_column() {
        let dims = vec![
            Dimension { option: "bs".into(), values: vec!["4k".into(), "1m".into()] },
            Dimension { option: "iodepth".into(), values: vec!["1".into(), "16".into()] },
        ];
        let skipped = PointState::Skipped { reason: "past the knee".into() };
        let index = SweepIndex {
            version: SWEEP_VERSION,
            command: vec![],
            dims,
            mode: SweepMode::Grid,
            repeat: 2,
            shuffle: None,
            knee_gain_pct: Some(5.0),
            points: vec![
                point(0, 1, &["4k", "1"], PointState::Done, 100.0),
                point(0, 2, &["4k", "1"], PointState::Done, 110.0),
                point(1, 1, &["4k", "16"], PointState::Done, 800.0),
                point(2, 1, &["1m", "1"], PointState::Interrupted, 50.0),
                point(3, 1, &["1m", "16"], skipped, 0.0),
            ],
            knees: vec![Knee { option: "iodepth".into(), values: vec!["4k".into(), "16".into()], rule: "r".into() }],
        };
        // Point 2's run has two jobs: its all row and one per job.
        let two = || {
            let op = sample::op(OpKind::Read, &[(50_000, 100)], 4096, 1_000_000_000);
            RunResultWith::jobs(vec![
                sample::job("a", 0, &[], 1_000_000_000, vec![op.clone()]),
                sample::job("b", 0, &[], 1_000_000_000, vec![op]),
            ])
        };
        let rows = sweep_rows(&index, |d| d.starts_with("002").then(two));
        let t = TidyTable::new(rows);
        assert_eq!(t.swept, ["bs", "iodepth"]);
        let text = csv(&t);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "study,question,config,line,ask,dir,bs,iodepth,repeat,scope,iops,mib_s,mean_us,p50_us,p99_us,p999_us,errors,mark"
        );
        assert_eq!(lines[1], ",,,,sweep,001_4k-1,4096,1,1,all,100,0.390625,1.5,1,9,0,0,");
        assert_eq!(lines[2], ",,,,sweep,001_4k-1,4096,1,2,all,110,0.4296875,1.5,1,9,0,0,");
        // The point's own figures for `all` (the index's), then its jobs.
        assert!(lines[3].starts_with(",,,,sweep,002_4k-16,4096,16,1,all,800,") && lines[3].ends_with(",knee"), "{}", lines[3]);
        assert!(lines[4].starts_with(",,,,sweep,002_4k-16,4096,16,1,a,100,") && lines[5].contains(",b,100,"), "{text}");
        assert!(lines[6].starts_with(",,,,sweep,003_1m-1,1048576,1,1,all,50,") && lines[6].ends_with(",interrupted"), "{}", lines[6]);
        assert_eq!(lines.len(), 7, "the point skipped past the knee has no figures and no row: {text}");
    }

    /// A run of these jobs (the sample run's other fields).
    struct RunResultWith;
    impl RunResultWith {
        fn jobs(jobs: Vec<storbench_model::JobResult>) -> storbench_model::RunResult {
            storbench_model::RunResult { jobs, ..sample::run() }
        }
    }

    fn probe(rate: Option<f64>, pass: bool, dir: &str) -> Probe {
        Probe {
            rate,
            iodepth: None,
            dir: dir.into(),
            achieved_iops: 0.0,
            value_ns: 0,
            samples: 0,
            seconds: 1.0,
            pass,
            note: String::new(),
            group: None,
        }
    }

    #[test]
    fn an_slo_search_has_a_row_per_probe_with_its_rate_and_the_answer_marked() {
        let index = SloIndex {
            version: 1,
            command: vec![],
            percentile: 99.0,
            bound_ns: 1_000_000,
            mean: false,
            probes: vec![
                probe(None, true, "00_capacity"),
                probe(Some(1000.0), true, "01_rate-1000"),
                probe(Some(2000.0), false, "02_rate-2000"),
                probe(Some(1500.0), true, "03_rate-1500"),
                probe(Some(1500.0), true, "04_rate-1500"),
            ],
            answer: Some(1500.0),
            answer_iodepth: None,
            confirmed: true,
            closed_loop: false,
            agents: None,
            stopped: None,
            stop_if: vec![],
        };
        let one = || {
            let op = sample::op(OpKind::Read, &[(50_000, 100)], 4096, 1_000_000_000);
            RunResultWith::jobs(vec![sample::job("a", 0, &[], 1_000_000_000, vec![op])])
        };
        let t = TidyTable::new(slo_rows(&index, |_| Some(one())));
        assert_eq!(t.swept, ["rate"]);
        let text = csv(&t);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "one row per probe (one job each): {text}");
        assert!(lines[1].starts_with(",,,,slo,00_capacity,,1,all,100,") && lines[1].ends_with(",pass"), "{}", lines[1]);
        assert!(lines[3].starts_with(",,,,slo,02_rate-2000,2000,1,all,") && lines[3].ends_with(",fail"), "{}", lines[3]);
        assert!(lines[4].starts_with(",,,,slo,03_rate-1500,1500,1,") && lines[4].ends_with(",pass answer"), "{}", lines[4]);
        assert!(lines[5].starts_with(",,,,slo,04_rate-1500,1500,2,") && lines[5].ends_with(",pass answer"), "{}", lines[5]);
        // JSON: the same rows, keys in column order, an unswept value null.
        let mut v = Vec::new();
        write_json(&t, &mut v).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(json.as_array().unwrap().len(), 5);
        assert_eq!(
            (json[0]["rate"].clone(), json[3]["rate"].clone(), json[3]["mark"].clone()),
            (serde_json::Value::Null, 1500.into(), "pass answer".into())
        );
        let text = String::from_utf8(v).unwrap();
        assert!(
            text.find("\"dir\"").unwrap() < text.find("\"rate\"").unwrap()
                && text.find("\"rate\"").unwrap() < text.find("\"repeat\"").unwrap()
        );
    }

    #[test]
    fn text_with_commas_and_quotes_is_quoted() {
        let row = TidyRow { study: "a, \"b\"".into(), scope: "all".into(), ..TidyRow::default() };
        let text = csv(&TidyTable::new(vec![row]));
        assert!(text.lines().nth(1).unwrap().starts_with("\"a, \"\"b\"\"\","), "{text}");
    }
}
