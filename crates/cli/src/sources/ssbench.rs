//! ssbench scenario files (`storbench run --ssbench scenario.json`), as they
//! are: name, sizes (size_min/size_max and an optional crud_profile each),
//! initial_files, operation_count or run_seconds, crud_profile, user_count,
//! container_base, container_count, container_concurrency.
//!
//! ssbench draws a size class for every operation (in proportion to
//! initial_files; classes without initial files are never benchmarked) and
//! then C/R/U/D from that class's profile. storbench runs one job per size
//! class, all at once, sharing users and operations out in the same
//! proportion, so results come per size class and per CRUD operation.
//! `--users 4,8,16` repeats the scenario with more users until throughput
//! falls (`ramp`).

use crate::error::CliError;
use crate::sources::Pairs;
use serde_json::Value;
use std::path::Path;
use storbench_workload::{apply_option, JobSpec};

#[derive(Clone, Debug)]
pub struct SizeClass {
    pub name: String,
    pub min: u64,
    pub max: u64,
    pub crud: [u64; 4],
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub sizes: Vec<SizeClass>,
    pub initial: Vec<(String, u64)>,
    pub operation_count: Option<u64>,
    pub run_seconds: Option<u64>,
    pub user_count: u32,
    pub container_base: String,
    pub container_count: u32,
    pub container_concurrency: u32,
}

fn bad(path: &str, msg: impl std::fmt::Display) -> CliError {
    CliError::usage(format!("ssbench scenario {path}: {msg}"))
}

/// Scenarios storbench carries, `--ssbench builtin:NAME`: the Swift field
/// report's (the swift built-in study's default).
const BUILTIN: &[(&str, &str)] = &[("swift-medium", include_str!("../commands/study/builtin/swift.ssbench.json"))];

pub fn load(path: &Path) -> Result<Scenario, CliError> {
    let text = match path.to_str().and_then(|p| p.strip_prefix("builtin:")) {
        Some(name) => builtin(name)?.to_string(),
        None => crate::sources::read_job_file(path, "ssbench scenario")?,
    };
    parse(&text).map_err(|e| CliError::usage(format!("{}: {}", path.display(), e.message)))
}

fn builtin(name: &str) -> Result<&'static str, CliError> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        let names: Vec<String> = BUILTIN.iter().map(|(n, _)| format!("builtin:{n}")).collect();
        CliError::usage(format!("--ssbench builtin:{name}: no such scenario (there is {})", names.join(", ")))
    })
}

fn count(v: &Value, field: &str) -> Result<u64, CliError> {
    v.as_u64().ok_or_else(|| bad(field, format!("'{v}' is not a whole number of 0 or more")))
}

fn crud(v: &Value, field: &str) -> Result<[u64; 4], CliError> {
    let a = v.as_array().filter(|a| a.len() == 4).ok_or_else(|| bad(field, "must be [create, read, update, delete] weights"))?;
    let mut out = [0; 4];
    for (i, x) in a.iter().enumerate() {
        out[i] = x
            .as_f64()
            .filter(|f| *f >= 0.0)
            .map(|f| f.round() as u64)
            .ok_or_else(|| bad(field, format!("weight '{x}' is not a number of 0 or more")))?;
    }
    if out.iter().sum::<u64>() == 0 {
        return Err(bad(field, "gives no operation a weight"));
    }
    Ok(out)
}

pub fn parse(text: &str) -> Result<Scenario, CliError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| CliError::usage(format!("not JSON: {e}")))?;
    let obj = doc.as_object().ok_or_else(|| CliError::usage("a scenario is a JSON object"))?;
    let known = [
        "name",
        "sizes",
        "initial_files",
        "operation_count",
        "run_seconds",
        "crud_profile",
        "user_count",
        "container_base",
        "container_count",
        "container_concurrency",
        "policy",
        "delete_after",
        "block_size",
    ];
    if let Some(k) = obj.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(bad(k, format!("unknown field; ssbench scenarios have {}", known.join(", "))));
    }
    for unsupported in ["policy", "delete_after", "block_size"] {
        if obj.get(unsupported).is_some_and(|v| !v.is_null()) {
            return Err(bad(unsupported, "is not supported by storbench yet; remove it to run the rest of the scenario"));
        }
    }
    let name = obj.get("name").and_then(Value::as_str).ok_or_else(|| bad("name", "missing (a string)"))?.to_string();
    let global = crud(obj.get("crud_profile").ok_or_else(|| bad("crud_profile", "missing"))?, "crud_profile")?;
    let mut sizes = Vec::new();
    for (i, s) in
        obj.get("sizes").and_then(Value::as_array).ok_or_else(|| bad("sizes", "missing (a list of size classes)"))?.iter().enumerate()
    {
        let field = |f: &str| format!("sizes[{i}].{f}");
        let cname = s.get("name").and_then(Value::as_str).ok_or_else(|| bad(&field("name"), "missing"))?.to_string();
        if cname.is_empty() || cname.contains(['/', ' ']) || sizes.iter().any(|c: &SizeClass| c.name == cname) {
            return Err(bad(&field("name"), format!("'{cname}' must be unique, without spaces or '/'")));
        }
        let min = count(s.get("size_min").ok_or_else(|| bad(&field("size_min"), "missing"))?, &field("size_min"))?;
        let max = count(s.get("size_max").ok_or_else(|| bad(&field("size_max"), "missing"))?, &field("size_max"))?;
        if min > max {
            return Err(bad(&field("size_min"), format!("{min} is above size_max {max}")));
        }
        let c = match s.get("crud_profile") {
            Some(v) => crud(v, &field("crud_profile"))?,
            None => global,
        };
        sizes.push(SizeClass { name: cname, min, max, crud: c });
    }
    if sizes.is_empty() {
        return Err(bad("sizes", "has no size class"));
    }
    let mut initial = Vec::new();
    for (k, v) in obj.get("initial_files").and_then(Value::as_object).ok_or_else(|| bad("initial_files", "missing (size name -> count)"))? {
        if !sizes.iter().any(|s| &s.name == k) {
            return Err(bad("initial_files", format!("'{k}' is not one of the sizes")));
        }
        initial.push((k.clone(), count(v, &format!("initial_files.{k}"))?));
    }
    if initial.iter().all(|(_, n)| *n == 0) {
        return Err(bad("initial_files", "no size class has initial files, and ssbench benchmarks only classes that do"));
    }
    let opt = |f: &str| obj.get(f).filter(|v| !v.is_null()).map(|v| count(v, f)).transpose();
    let (operation_count, run_seconds) = (opt("operation_count")?, opt("run_seconds")?);
    if operation_count.is_none() && run_seconds.is_none() {
        return Err(bad("operation_count", "a scenario needs operation_count or run_seconds"));
    }
    let user_count = opt("user_count")?.ok_or_else(|| bad("user_count", "missing"))?;
    if user_count == 0 {
        return Err(bad("user_count", "must be 1 or more"));
    }
    Ok(Scenario {
        name,
        sizes,
        initial,
        // run_seconds wins over operation_count, as in ssbench.
        operation_count: operation_count.filter(|_| run_seconds.is_none()),
        run_seconds,
        user_count: user_count.min(65536) as u32,
        container_base: obj.get("container_base").and_then(Value::as_str).unwrap_or("ssbench").to_string(),
        container_count: opt("container_count")?.unwrap_or(100).clamp(1, 100_000) as u32,
        container_concurrency: opt("container_concurrency")?.unwrap_or(10).max(1) as u32,
    })
}

/// One job per benchmarked size class, for `users` users in all.
pub fn specs(sc: &Scenario, users: u32, base: &JobSpec, global: &Pairs) -> Result<(Vec<JobSpec>, Vec<String>), CliError> {
    let mut notes = vec![format!(
        "ssbench scenario '{}': one job per size class, all at once; users and operations shared out by initial_files",
        sc.name
    )];
    if sc.container_count > 1 {
        notes.push(format!(
            "{} containers (buckets on s3) after '{}': created one at a time before the run (container_concurrency {} is not used)",
            sc.container_count, sc.container_base, sc.container_concurrency
        ));
    }
    let mut benchmarked = Vec::new();
    for class in &sc.sizes {
        match sc.initial.iter().find(|(n, _)| n == &class.name).filter(|(_, n)| *n > 0) {
            Some(&(_, files)) => benchmarked.push((class, files)),
            None => notes.push(format!("size class '{}' has no initial files: ssbench never benchmarks it", class.name)),
        }
    }
    let weights: Vec<u64> = benchmarked.iter().map(|c| c.1).collect();
    let per_class = share_users(users, &weights);
    let total: u64 = benchmarked.iter().zip(&per_class).filter(|(_, u)| **u > 0).map(|(c, _)| c.1).sum();
    let mut specs = Vec::new();
    for (&(class, files), &class_users) in benchmarked.iter().zip(&per_class) {
        if class_users == 0 {
            notes.push(format!(
                "{users} users for {} size classes: class '{}' gets none (users go to the largest shares of initial_files first) and does not run at this step",
                benchmarked.len(),
                class.name
            ));
            continue;
        }
        let share = files as f64 / total as f64;
        let mix: Vec<String> = ["create", "read", "update", "delete"]
            .iter()
            .zip(class.crud)
            .filter(|(_, w)| *w > 0)
            .map(|(o, w)| format!("{o}:{w}"))
            .collect();
        let creates = class.crud[0] as f64 / class.crud.iter().sum::<u64>() as f64;
        // A --runtime given with the scenario times it instead (flags
        // override a source's options, as after --suite): it was silently
        // replaced by run_seconds.
        let given = global.iter().rev().find(|(k, _)| k == "runtime").map(|(_, v)| v.clone());
        let ops = sc.operation_count.filter(|_| given.is_none()).map(|n| ((n as f64 * share).round() as u64).max(1));
        let keys = files + ops.map_or(1_000_000, |o| (o as f64 * creates).ceil() as u64 + 1);
        let mut s = base.clone();
        let mut opts: Vec<(String, String)> = vec![("name".into(), class.name.clone()), ("ioengine".into(), "swift".into())];
        opts.extend(global.iter().cloned());
        opts.extend([
            ("objects".into(), keys.min(u32::MAX as u64).to_string()),
            ("initial_objects".into(), files.to_string()),
            ("object_size".into(), format!("{}-{}", class.min, class.max)),
            ("object_ops".into(), mix.join(",")),
            ("object_prefix".into(), format!("{}_", class.name)),
            ("rw".into(), "randrw".into()),
            ("iodepth".into(), class_users.to_string()),
            ("numjobs".into(), "1".into()),
        ]);
        match (given, sc.run_seconds, ops) {
            (Some(t), _, _) => opts.extend([("runtime".into(), t), ("time_based".into(), "1".into())]),
            (None, Some(secs), _) => opts.extend([("runtime".into(), secs.to_string()), ("time_based".into(), "1".into())]),
            (None, None, Some(n)) => opts.push(("number_ios".into(), n.to_string())),
            (None, None, None) => unreachable!("parse requires one of them"),
        }
        for (k, v) in &opts {
            apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("size class '{}': {e}", class.name)))?;
        }
        place(&mut s, sc)?;
        specs.push(s);
    }
    Ok((specs, notes))
}

/// `users` shared out among classes weighted by their initial files, in
/// whole users that add up to `users` exactly (each class one first while
/// there are enough, the largest shares first; the rest by largest
/// remainder): a ramp step of 2 users runs 2, never one per class.
pub fn share_users(users: u32, weights: &[u64]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|a, b| weights[*b].cmp(&weights[*a]));
    let mut out = vec![0u32; weights.len()];
    for &i in order.iter().take(users as usize) {
        out[i] = 1;
    }
    let rest = users.saturating_sub(weights.len() as u32);
    let total: u64 = weights.iter().sum::<u64>().max(1);
    let exact: Vec<f64> = weights.iter().map(|w| rest as f64 * *w as f64 / total as f64).collect();
    for (o, e) in out.iter_mut().zip(&exact) {
        *o += e.floor() as u32;
    }
    let mut left = users - out.iter().sum::<u32>();
    let mut by_remainder = order.clone();
    by_remainder.sort_by(|a, b| (exact[*b] - exact[*b].floor()).total_cmp(&(exact[*a] - exact[*a].floor())));
    for &i in by_remainder.iter().cycle().take(weights.len() * 2) {
        if left == 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    out
}

/// Containers: swift spreads objects over container_count containers named
/// after container_base; s3 over as many buckets (named in S3's alphabet).
fn place(s: &mut JobSpec, sc: &Scenario) -> Result<(), CliError> {
    let set = |s: &mut JobSpec, k: &str, v: String| {
        if !s.engine_options.contains_key(k) {
            s.engine_options.insert(k.into(), v);
        }
    };
    match s.ioengine.as_str() {
        "swift" => {
            set(s, "container", sc.container_base.clone());
            set(s, "containers", sc.container_count.to_string());
        }
        "s3" => {
            set(s, "bucket", sc.container_base.replace('_', "-").to_ascii_lowercase());
            set(s, "buckets", sc.container_count.to_string());
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_user_count_is_shared_out_exactly() {
        let w = [30, 20, 10];
        assert_eq!(share_users(1, &w), [1, 0, 0]);
        assert_eq!(share_users(2, &w), [1, 1, 0]);
        assert_eq!(share_users(3, &w), [1, 1, 1]);
        assert_eq!(share_users(6, &w), [3, 2, 1]);
        for u in 1..50 {
            assert_eq!(share_users(u, &w).iter().sum::<u32>(), u);
        }
    }

    const SCENARIO: &str = r#"{
      "name": "Small test scenario",
      "sizes": [
        {"name": "zero", "size_min": 0, "size_max": 0, "crud_profile": [60, 15, 20, 5]},
        {"name": "tiny", "size_min": 4096, "size_max": 8192, "crud_profile": [10, 80, 9, 1]},
        {"name": "small", "size_min": 20000, "size_max": 40000}
      ],
      "initial_files": {"zero": 300, "tiny": 100, "small": 0},
      "operation_count": 800,
      "crud_profile": [10, 75, 15, 0],
      "user_count": 8,
      "container_base": "ssbench",
      "container_count": 10,
      "container_concurrency": 5
    }"#;

    #[test]
    fn every_field_maps_onto_the_object_model() {
        let sc = parse(SCENARIO).unwrap();
        assert_eq!((sc.operation_count, sc.user_count, sc.container_count, sc.container_concurrency), (Some(800), 8, 10, 5));
        assert_eq!(sc.sizes[2].crud, [10, 75, 15, 0], "classes without a profile take the scenario's");
        let (specs, notes) = specs(&sc, 8, &JobSpec::default(), &Vec::new()).unwrap();
        assert_eq!(specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), vec!["zero", "tiny"]);
        assert!(notes.iter().any(|n| n.contains("'small' has no initial files")));
        let zero = &specs[0];
        let o = zero.objects.as_ref().unwrap();
        assert_eq!((zero.iodepth, zero.number_ios, o.initial), (6, Some(600), Some(300)), "3/4 of users and operations");
        assert_eq!(o.describe_mix(zero.read_percent()), "create:60,read:15,update:20,delete:5");
        assert_eq!(o.sizes.describe(), "0B-0B");
        assert_eq!(zero.engine_options["containers"], "10");
        assert_eq!(zero.engine_options["container"], "ssbench");
        assert_eq!((specs[1].iodepth, specs[1].number_ios), (2, Some(200)));
    }

    #[test]
    fn a_runtime_flag_times_the_scenario_and_the_reports_scenario_is_built_in() {
        let sc = load(Path::new("builtin:swift-medium")).unwrap();
        assert_eq!((sc.name.as_str(), sc.run_seconds, sc.sizes.len()), ("Medium test scenario", Some(30), 3));
        let global = vec![("runtime".to_string(), "1500ms".to_string())];
        let (timed, _) = specs(&sc, 3, &JobSpec::default(), &global).unwrap();
        assert!(timed.iter().all(|s| s.time_based && s.runtime == Some(std::time::Duration::from_millis(1500))));
        let counted = parse(SCENARIO).unwrap();
        let (counted, _) = specs(&counted, 4, &JobSpec::default(), &global).unwrap();
        assert!(counted.iter().all(|s| s.time_based && s.number_ios.is_none()), "an operation count timed too");
        let e = load(Path::new("builtin:nope")).unwrap_err();
        assert!(e.message.contains("builtin:swift-medium"), "{}", e.message);
    }

    #[test]
    fn run_seconds_wins_and_bad_fields_are_named() {
        let timed = SCENARIO.replace("\"operation_count\": 800", "\"operation_count\": 800, \"run_seconds\": 30");
        let sc = parse(&timed).unwrap();
        assert_eq!((sc.operation_count, sc.run_seconds), (None, Some(30)));
        let (specs, _) = specs(&sc, 4, &JobSpec::default(), &Vec::new()).unwrap();
        assert!(specs[0].time_based && specs[0].runtime == Some(std::time::Duration::from_secs(30)));
        for (broken, field) in [
            (SCENARIO.replace("\"tiny\": 100", "\"huge\": 100"), "initial_files"),
            (SCENARIO.replace("[60, 15, 20, 5]", "[60, 15]"), "sizes[0].crud_profile"),
            (SCENARIO.replace("\"user_count\": 8", "\"user_count\": 0"), "user_count"),
            (SCENARIO.replace("\"operation_count\": 800,", ""), "operation_count"),
            (SCENARIO.replace("\"container_base\"", "\"containr_base\""), "containr_base"),
            (SCENARIO.replace("\"size_min\": 4096", "\"size_min\": 9000"), "sizes[1].size_min"),
        ] {
            let e = parse(&broken).unwrap_err().message;
            assert!(e.contains(field), "{field}: {e}");
        }
    }
}
