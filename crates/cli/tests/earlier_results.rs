//! Results directories written by an earlier build (storbench's main
//! before the workload kinds became one seam: `earlier_results/`, a block
//! job that verifies, an object mix, a replayed fio iolog and a training
//! preset) still load: `show` reprints each summary as it was written, and
//! `show -f json` keeps every job's kind section (replay, train, verify) as
//! the file has it.

mod common;
use common::*;
use std::path::Path;

const KINDS: [(&str, &str); 4] = [("blocks", "verify"), ("objs", "ops"), ("replay", "replay"), ("train", "train")];

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/earlier_results").join(name)
}

/// Each fixture copied into a scratch directory (`show` may write beside it).
fn copied(d: &Path, name: &str) -> std::path::PathBuf {
    let to = d.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for f in ["result.json", "summary.txt", "journal.json"] {
        std::fs::copy(fixture(name).join(f), to.join(f)).unwrap();
    }
    to
}

#[test]
fn show_reprints_what_an_earlier_build_wrote() {
    let d = scratch();
    for (name, _) in KINDS {
        let dir = copied(d.path(), name);
        let r = storbench(d.path(), &["show", dir.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let written = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
        assert_eq!(r.stdout, written, "{name}: show prints the summary the earlier build wrote");
    }
}

#[test]
fn every_kind_section_of_an_earlier_result_survives_loading() {
    let d = scratch();
    for (name, section) in KINDS {
        let dir = copied(d.path(), name);
        let r = storbench(d.path(), &["show", "-f", "json", dir.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let shown: serde_json::Value = serde_json::from_str(&r.stdout).expect("show -f json prints JSON");
        let file = result_json(&dir);
        assert!(!file["jobs"][0][section].is_null(), "{name}: the fixture has its {section} section");
        assert_eq!(shown["jobs"][0][section], file["jobs"][0][section], "{name}: {section} as written");
        // Every option the earlier build wrote reads back as written; options
        // added since (fio's new_group) come with their defaults.
        let written = file["jobs"][0]["spec"].as_object().expect("the fixture's spec");
        for (option, value) in written {
            assert_eq!(&shown["jobs"][0]["spec"][option], value, "{name}: the job's {option} as written");
        }
        let back: storbench_model::RunResult = serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
        assert_eq!(back.jobs.len(), 1, "{name}: loads as a RunResult");
    }
}
