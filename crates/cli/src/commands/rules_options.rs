//! The command line's job options under MLPerf Storage's rules: each
//! option given is judged as mlpstorage's checker judges an overridden
//! parameter (mlcommons/storage, mlpstorage/rules.py at caa90c9,
//! `check_allowed_params` and `check_odirect_supported_model`).
//!
//! The closed division lets a submission change where the data is and how
//! it is read (`dataset.data_folder`, `storage.storage_type`,
//! `storage.storage_root`, `reader.read_threads`, `reader.odirect`...), the
//! open one its format (`dataset.format`, `num_samples_per_file`,
//! `framework`, `reader.data_loader`); anything else makes the result
//! invalid. `reader.odirect` is unet3d's alone. An engine that stores
//! nothing (null, storbench's own memory) measures no storage: invalid.

use super::rules::{issue, Division, Issue};
use storbench_workload::options::canonical_name;

/// Engines under which no storage is measured.
const NO_STORAGE: &[&str] = &["null", "memory"];

/// Core options that say where the dataset is (closed: `dataset.data_folder`).
const DATA_FOLDER: &[&str] = &["directory", "filename", "filename_format", "opendir", "object_prefix"];

/// Core options that say whether the data is there already and what is done
/// with it after the runs, not how it is measured (closed: mlpstorage's
/// data folder is the submitter's, and `datagen` is a step of its own).
const HOUSEKEEPING: &[&str] = &["unlink", "cleanup", "objects_exist", "dataset_exists"];

/// The engine's canonical name (`ioengine` as given, its aliases resolved).
fn engine_name(ioengine: &str) -> &str {
    storbench_engine::find(ioengine).map_or(ioengine, |f| f.name())
}

/// One issue per option given on the command line (`global`: job options
/// before the preset's own), for a run of `model` on `ioengine`.
pub fn option_issues(model: &str, ioengine: &str, global: &[(String, String)]) -> Vec<Issue> {
    let engine = engine_name(ioengine);
    let stores = !NO_STORAGE.contains(&engine);
    let mut out = Vec::new();
    if !stores {
        out.push(issue(
            false,
            Division::Invalid,
            "storage.storage_type",
            "the engine stores nothing: no storage is measured",
            "an engine that stores the dataset (files, a block device, s3, swift, rados...)".into(),
            engine.into(),
        ));
    }
    for (key, value) in global {
        if let Some(i) = judge(model, stores, &canonical_name(key), value) {
            out.push(i);
        }
    }
    out
}

/// An option as the rules see it; None: nothing to judge (the engine, named
/// above; `direct=0`, the default).
fn judge(model: &str, stores: bool, name: &str, value: &str) -> Option<Issue> {
    let given = format!("--{name} {value}");
    let closed = |parameter: &str, message: &str| Some(issue(true, Division::Closed, parameter, message, "any".into(), given.clone()));
    match name {
        "ioengine" => {
            stores.then(|| issue(true, Division::Closed, "storage.storage_type", "the storage may be chosen", "any".into(), given.clone()))
        }
        "direct" if !storbench_workload::units::parse_bool(value).unwrap_or(true) => None,
        "direct" => Some(issue(
            model == "unet3d",
            Division::Invalid,
            "reader.odirect",
            "O_DIRECT reads: allowed for unet3d only",
            "off".into(),
            given,
        )),
        n if DATA_FOLDER.contains(&n) => closed("dataset.data_folder", "where the dataset is may be chosen"),
        n if HOUSEKEEPING.contains(&n) => {
            closed("storage.storage_root", "what is made before and kept after the runs does not change them")
        }
        n if storbench_workload::options::core(n).is_none() && stores => {
            closed("storage.storage_root", "how the storage is reached (the engine's own option) may be chosen")
        }
        _ => Some(issue(
            false,
            Division::Invalid,
            name,
            "not a parameter the closed or open division lets a submission change",
            "unset".into(),
            given,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn divisions(issues: &[Issue]) -> Vec<(&str, Division)> {
        issues.iter().map(|i| (i.parameter.as_str(), i.validation)).collect()
    }

    #[test]
    fn where_the_data_is_and_how_the_storage_is_reached_are_closed() {
        let given = pairs(&[("ioengine", "s3"), ("bucket", "b"), ("object_prefix", "x."), ("cleanup", "0"), ("objects_exist", "1")]);
        let i = option_issues("cosmoflow", "s3", &given);
        assert!(i.iter().all(|i| i.validation == Division::Closed), "{i:?}");
        assert_eq!(i[0].parameter, "storage.storage_type");
        let files = option_issues("unet3d", "io_uring", &pairs(&[("directory", "/mnt/x"), ("unlink", "1")]));
        assert_eq!(divisions(&files), vec![("dataset.data_folder", Division::Closed), ("storage.storage_root", Division::Closed)]);
    }

    #[test]
    fn odirect_is_unet3d_s_alone() {
        // rules.py: check_odirect_supported_model.
        let d = pairs(&[("direct", "1")]);
        assert_eq!(divisions(&option_issues("unet3d", "psync", &d)), vec![("reader.odirect", Division::Closed)]);
        assert_eq!(divisions(&option_issues("cosmoflow", "psync", &d)), vec![("reader.odirect", Division::Invalid)]);
        assert!(option_issues("cosmoflow", "psync", &pairs(&[("direct", "0")])).is_empty(), "the default is no change");
    }

    #[test]
    fn no_storage_and_other_options_are_invalid() {
        let null = option_issues("cosmoflow", "null", &pairs(&[("ioengine", "null"), ("service_time", "10ms")]));
        assert_eq!(divisions(&null), vec![("storage.storage_type", Division::Invalid), ("service_time", Division::Invalid)]);
        assert_eq!(option_issues("cosmoflow", "memory", &[])[0].validation, Division::Invalid);
        // A rate cap or a block size is no parameter the rules let change.
        let other = option_issues("cosmoflow", "psync", &pairs(&[("rate", "10m"), ("bs", "4k")]));
        assert_eq!(divisions(&other), vec![("rate", Division::Invalid), ("bs", Division::Invalid)]);
        assert!(other[0].actual == "--rate 10m", "{other:?}");
    }
}
