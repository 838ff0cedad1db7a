//! storbench's own JSON result (schema: `schema/result-v1.json`).
//!
//! Written straight to its destination: a long run's series is not built up
//! as one string first.

use std::io::Write;
use storbench_runner::RunResult;

pub fn write(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, r).map_err(std::io::Error::other)?;
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
