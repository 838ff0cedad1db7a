//! storbench's own JSON result (schema: `schema/result-v1.json`).
//!
//! Written straight to its destination: a long run's series is not built up
//! as one string first.

use std::io::Write;
use storbench_model::RunResult;

pub fn write(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, r).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

pub fn render(r: &RunResult) -> String {
    let mut v = Vec::new();
    write(r, &mut v).expect("writing to memory cannot fail");
    String::from_utf8(v).expect("serde_json writes UTF-8")
}

pub fn parse(text: &str) -> Result<RunResult, serde_json::Error> {
    serde_json::from_str(text)
}

/// storbench's own JSON as a format.
pub struct Json;

impl crate::Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn stdout_name(&self) -> Option<&'static str> {
        Some("json")
    }
    fn describe(&self) -> &'static str {
        "the full result with encoded histograms (as result.json)"
    }
    fn file_name(&self) -> Option<&'static str> {
        Some("result.json")
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, mut out| write(r, &mut out))
    }
}
