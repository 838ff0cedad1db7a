//! TOML job files: `[global]` defaults plus `[[job]]` entries, run one after
//! another (`run = "sequential"`, the default) or together (`run = "parallel"`).
//!
//! ```toml
//! run = "sequential"
//! [global]
//! ioengine = "io_uring"
//! runtime = "10s"
//! [[job]]
//! name = "4k-randread"
//! rw = "randread"
//! iodepth = 32
//! ```
//!
//! A `[sweep]` table makes it a sweep's file (`storbench sweep FILE`): each
//! key an option, each value a list (`iodepth = [1, 4, 16]`) or a range as
//! `--sweep` takes it (`numjobs = "1..16x2"`).

use crate::error::CliError;
use crate::sources::{self as specs, Pairs};
use std::path::Path;
use storbench_workload::JobSpec;

pub fn load(path: &Path, base: &JobSpec, cli_global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let text = specs::read_job_file(path, "job file")?;
    parse(&text, base, cli_global).map_err(|e| CliError::usage(format!("{}: {}", path.display(), e.message)))
}

pub fn parse(text: &str, base: &JobSpec, cli_global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| not_toml(text, &e))?;
    let mut parallel = false;
    let mut global = Pairs::new();
    let mut jobs = Vec::new();
    for (key, value) in &doc {
        match key.as_str() {
            "run" => parallel = run_mode(value)?,
            // Read by `storbench sweep` (see [`sweep_dimensions`]).
            "sweep" => {}
            "global" => global = pairs(value, "[global]")?,
            "job" => {
                let list = value.as_array().ok_or_else(|| CliError::usage("'job' must be [[job]] tables"))?;
                for (i, j) in list.iter().enumerate() {
                    jobs.push(pairs(j, &format!("[[job]] #{}", i + 1))?);
                }
            }
            other => {
                let hint = storbench_workload::options::suggest(other, ["run", "global", "job", "sweep"])
                    .map(|s| format!("; did you mean '{s}'?"))
                    .unwrap_or_default();
                return Err(CliError::usage(format!("unknown top-level key '{other}' (expected run, [global] and [[job]] tables){hint}")));
            }
        }
    }
    if jobs.is_empty() {
        return Err(CliError::usage("no [[job]] tables: add at least one job"));
    }
    global.extend(cli_global.iter().cloned());
    let mut specs = specs::build(base, &global, &jobs)?;
    if !parallel {
        for s in &mut specs {
            s.stonewall = true;
        }
    }
    Ok(specs)
}

/// TOML's complaint, and where the text reads as a fio job file (an
/// unquoted word after `option=`, which TOML refuses) the way to run it.
fn not_toml(text: &str, e: &toml::de::Error) -> CliError {
    let fio_like = text.lines().any(|l| {
        let Some((key, value)) = l.trim().split_once('=') else { return false };
        let value = value.trim();
        key.trim().chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && value.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
            && !matches!(value, "true" | "false")
    });
    let hint = if fio_like { " (if this is a fio job file, run it with `storbench run --fio FILE` or `storbench fio FILE`)" } else { "" };
    CliError::usage(format!("not valid TOML: {}{hint}", e.message().trim()))
}

/// The `[sweep]` table as `--sweep` arguments (`option=values`), in the
/// file's order; empty when the file has none.
pub fn sweep_dimensions(path: &Path) -> Result<Vec<String>, CliError> {
    let text = specs::read_job_file(path, "job file")?;
    let doc: toml::Table =
        text.parse().map_err(|e: toml::de::Error| CliError::usage(format!("{}: {}", path.display(), not_toml(&text, &e).message)))?;
    let Some(table) = doc.get("sweep") else { return Ok(Vec::new()) };
    let table =
        table.as_table().ok_or_else(|| CliError::usage(format!("{}: [sweep] must be a table of option = values", path.display())))?;
    table
        .iter()
        .map(|(k, v)| {
            let values = match v {
                toml::Value::Array(a) => a.iter().map(scalar).collect::<Result<Vec<_>, _>>().map(|v| v.join(",")),
                other => scalar(other),
            };
            values.map(|v| format!("{k}={v}")).map_err(|m| CliError::usage(format!("{}: [sweep] {k}: {m}", path.display())))
        })
        .collect()
}

fn run_mode(v: &toml::Value) -> Result<bool, CliError> {
    match v.as_str() {
        Some("sequential") => Ok(false),
        Some("parallel") => Ok(true),
        _ => Err(CliError::usage(format!("run = {v} must be \"sequential\" or \"parallel\""))),
    }
}

fn pairs(v: &toml::Value, context: &str) -> Result<Pairs, CliError> {
    let table = v.as_table().ok_or_else(|| CliError::usage(format!("{context} must be a table of options")))?;
    table.iter().map(|(k, v)| Ok((k.clone(), scalar(v).map_err(|m| CliError::usage(format!("{context}: option '{k}': {m}")))?))).collect()
}

fn scalar(v: &toml::Value) -> Result<String, String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => (if *b { "1" } else { "0" }).into(),
        toml::Value::Array(a) => a.iter().map(scalar).collect::<Result<Vec<_>, _>>()?.join(":"),
        _ => return Err(format!("{v} is not a string, number, boolean or list")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_defaults_jobs_and_sequential_groups() {
        let text = r#"
[global]
ioengine = "null"
runtime = "2s"
size = "1g"
[[job]]
name = "a"
rw = "randread"
iodepth = 32
[[job]]
name = "b"
rw = "randrw"
rwmixread = 70
filename = ["x", "y"]
direct = true
"#;
        let specs = parse(text, &JobSpec::default(), &vec![]).unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].iodepth, 32);
        assert_eq!(specs[1].ioengine, "null");
        assert_eq!(specs[1].filenames, vec!["x", "y"]);
        assert!(specs[1].direct && specs.iter().all(|s| s.stonewall));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse("[[job]]\nname = \"a\"\niodepth = \"many\"\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(e.message.contains("iodepth") && e.message.contains("many"), "{}", e.message);
        let e = parse("[global\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(e.message.contains("TOML") && !e.message.contains("--fio"), "{}", e.message);
        // A fio job file given where TOML is read says how to run it.
        let e = parse("[global]\nioengine=libaio\n[job1]\nbs=4k\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(e.message.contains("not valid TOML") && e.message.contains("storbench run --fio FILE"), "{}", e.message);
        let e = parse("[global]\ndirect = true\nrw = read-ish\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(e.message.contains("--fio"), "{}", e.message);
        let e = parse("[global]\ndirect = true\nbroken = \"x\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(!e.message.contains("--fio"), "{}", e.message);
        let e = parse("[globl]\n[[job]]\nname=\"a\"\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(e.message.contains("did you mean 'global'"), "{}", e.message);
        let e = parse("[global]\nrw=\"read\"\n", &JobSpec::default(), &vec![]).unwrap_err();
        assert!(e.message.contains("no [[job]]"), "{}", e.message);
    }

    #[test]
    fn parallel_keeps_jobs_together() {
        let text = "run = \"parallel\"\n[[job]]\nname=\"a\"\n[[job]]\nname=\"b\"\n";
        let specs = parse(text, &JobSpec::default(), &vec![]).unwrap();
        assert!(specs.iter().all(|s| !s.stonewall));
    }
}
