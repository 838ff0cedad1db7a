//! The README's lists are generated, not written by hand: this keeps them equal.

mod common;
use common::*;

#[test]
fn the_readme_lists_every_job_option_as_help_generates_it() {
    let d = scratch();
    let r = storbench(d.path(), &["help", "options", "--markdown"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let start = readme.find("<!-- options:").expect("README has the options marker");
    let body = &readme[readme[start..].find('\n').unwrap() + start + 1..];
    let listed = &body[..body.find("<!-- /options -->").expect("README closes the options list")];
    assert_eq!(listed, r.stdout, "README's option list differs: paste `storbench help options --markdown` between the markers");
    for name in ["--iodepth", "--object_ops", "--cleanup"] {
        assert!(listed.contains(name), "{name}");
    }
}

#[test]
fn help_is_generated_for_every_command() {
    let d = scratch();
    for cmd in [
        &["help"][..],
        &["run", "--help"],
        &["rados", "bench", "--help"],
        &["rbd", "bench", "--help"],
        &["swift-bench", "--help"],
        &["help", "show"],
    ] {
        let r = storbench(d.path(), cmd);
        assert_eq!(r.code, 0, "{cmd:?}: {}", r.stderr);
        assert!(r.stdout.contains("Usage: storbench"), "{cmd:?}:\n{}", r.stdout);
    }
    let r = storbench(d.path(), &["rbd", "bench", "--help"]);
    for flag in ["--pool", "--image", "--keyring", "--allow-overwrite", "--results-dir", "--io-type"] {
        assert!(r.stdout.contains(flag), "rbd bench help lacks {flag}:\n{}", r.stdout);
    }
    let r = storbench(d.path(), &["help", "options"]);
    assert!(r.stdout.contains("--iodepth") && r.stdout.contains("engine s3 options:"), "{}", r.stdout);
}
