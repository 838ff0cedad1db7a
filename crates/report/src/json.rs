//! storbench's own JSON result (schema: `schema/result-v1.json`).

use storbench_runner::RunResult;

pub fn render(r: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("results are plain data");
    s.push('\n');
    s
}

pub fn parse(text: &str) -> Result<RunResult, serde_json::Error> {
    serde_json::from_str(text)
}
