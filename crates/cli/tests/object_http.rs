//! The s3 and swift engines against real servers: RGW (S3 and Swift APIs) from
//! scripts/testenv/ceph and the Swift all-in-one from scripts/testenv/swift.
//! Without them these tests skip and say why; under CI they fail.

mod common;
use common::*;

fn tag(t: &str) -> String {
    format!("sbt{}{t}", std::process::id())
}

fn op_ios(doc: &serde_json::Value, name: &str) -> (u64, u64, serde_json::Value) {
    let ops = doc["jobs"][0]["ops"].as_array().unwrap();
    match ops.iter().find(|o| o["op"] == name) {
        Some(o) => (o["ios"].as_u64().unwrap(), o["bytes"].as_u64().unwrap(), o["errors"].clone()),
        None => (0, 0, serde_json::json!({})),
    }
}

/// A full mix on a fresh bucket/container: every op counted, no errors, and
/// the bucket/container storbench created is gone afterwards.
fn mix(env: &[(&'static str, String)], engine: &str, place: (&str, &str)) {
    let d = scratch();
    let r = storbench_env(
        d.path(),
        env,
        &[
            "run",
            "--name",
            "mix",
            "--ioengine",
            engine,
            place.0,
            place.1,
            "--objects",
            "300",
            "--object_size",
            "4k/80:64k/20",
            "--object_ops",
            "read:50,create:10,update:10,stat:10,delete:10,list:10",
            "--rw",
            "randrw",
            "--prefill",
            "1",
            "--iodepth",
            "8",
            "--number_ios",
            "800",
            "--results-dir",
            "out",
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    let mut total = 0;
    for name in ["read", "create", "update", "stat", "delete", "list"] {
        let (ios, _, errors) = op_ios(&doc, name);
        assert_eq!(errors, serde_json::json!({}), "{engine} {name} errors");
        total += ios;
    }
    assert_eq!(total, 800, "{engine}: every operation counted once");
    assert!(op_ios(&doc, "read").0 > 200 && op_ios(&doc, "list").0 > 20, "{engine}");
    assert!(doc["warnings"].as_array().unwrap().iter().all(|w| w["kind"] != "cleanup"), "{engine}: {}", doc["warnings"]);
}

#[test]
fn s3_on_rgw_runs_the_object_mix_and_removes_its_bucket() {
    let Some(env) = s3_env() else { return };
    mix(&env, "s3", ("--bucket", &tag("mix")));
    let d = scratch();
    let again = storbench_env(
        d.path(),
        &env,
        &["run", "--name", "r", "--ioengine", "s3", "--bucket", &tag("mix"), "--objects_exist", "1", "--rw", "randread", "--runtime", "1"],
    );
    assert_eq!(again.code, 2, "the bucket was removed: {}", again.stderr);
    assert!(again.stderr.contains("does not exist"), "{}", again.stderr);
}

#[test]
fn swift_on_rgw_and_on_the_all_in_one_run_the_object_mix() {
    if let Some(env) = swift_env("rgw") {
        mix(&env, "swift", ("--container", &tag("rgw")));
    }
    if let Some(env) = swift_env("aio") {
        mix(&env, "swift", ("--container", &tag("aio")));
    }
}

/// Virtual-host addressing on RGW (rgw dns name = localhost): a bucket is
/// the host bucket.localhost, reached through connect_to without DNS. What
/// a virtual-host run writes, a path-style run finds in the same bucket.
#[test]
fn virtual_host_buckets_hold_what_path_style_reads() {
    let Some(mut env) = s3_env() else { return };
    for (k, v) in env.iter_mut() {
        if *k == "AWS_ENDPOINT_URL" {
            *v = v.replace("127.0.0.1", "localhost");
        }
    }
    let d = scratch();
    let bucket = tag("vh");
    let run = |name: &str, extra: &[&str]| {
        let mut a = vec!["run", "--name", name, "--ioengine", "s3", "--bucket", &bucket, "--objects", "40", "--object_size", "4k"];
        a.extend(extra);
        a.extend(["--results-dir", name, "--quiet"]);
        storbench_env(d.path(), &env, &a)
    };
    let vh = ["--addressing", "virtual", "--connect_to", "127.0.0.1"];
    let w = run("w", &[&vh[..], &["--rw", "write", "--number_ios", "40", "--cleanup", "0", "--object_prefix", "vh."]].concat());
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(ios(&result_json(&d.path().join("w")), 0, "create"), 40);
    let r = run("r", &["--objects_exist", "1", "--object_prefix", "vh.", "--rw", "read", "--number_ios", "40", "--cleanup", "1"]);
    assert_eq!(r.code, 0, "path-style finds the objects: {}", r.stderr);
    let doc = result_json(&d.path().join("r"));
    assert_eq!((ios(&doc, 0, "read"), doc["jobs"][0]["ops"][0]["bytes"].as_u64().unwrap()), (40, 40 * 4096));
    // Without connect_to the bucket's host name does not resolve here.
    let n = run("n", &["--addressing", "virtual", "--rw", "write", "--number_ios", "1"]);
    assert_eq!(n.code, 2, "{}", n.stderr);
    assert!(n.stderr.contains(&format!("{bucket}.localhost")) && n.stderr.contains("dns error"), "{}", n.stderr);
}

/// buckets=N: key k lives in bucket <bucket>-00000(k % N) (RGW's own listing
/// says so), every bucket is created, and removed once the run cleans up.
#[test]
fn s3_spreads_objects_over_buckets() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    let base = tag("spread");
    let run = |name: &str, extra: &[&str]| {
        let mut a = vec!["run", "--name", name, "--ioengine", "s3", "--bucket", &base, "--buckets", "3", "--objects", "9"];
        a.extend(["--object_size", "4k", "--object_prefix", "sp.", "--number_ios", "9", "--results-dir", name, "--quiet"]);
        a.extend(extra);
        storbench_env(d.path(), &env, &a)
    };
    let listing = |bucket: &str| -> Option<Vec<String>> {
        let out = std::process::Command::new("radosgw-admin").args(["bucket", "list", "--bucket", bucket]).output().unwrap();
        let names: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).ok()?;
        let mut names: Vec<String> =
            names.iter().map(|o| o["name"].as_str().unwrap().to_string()).filter(|n| n.starts_with("sp.")).collect();
        names.sort();
        out.status.success().then_some(names)
    };
    let w = run("w", &["--rw", "write", "--cleanup", "0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    for i in 0..3 {
        let want: Vec<String> = (0..3).map(|j| format!("sp.{}", i + 3 * j)).collect();
        assert_eq!(listing(&format!("{base}-{i:06}")), Some(want), "bucket {i}");
    }
    let r = run("r", &["--rw", "randread", "--objects_exist", "1", "--cleanup", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ios(&result_json(&d.path().join("r")), 0, "read"), 9);
    assert!((0..3).all(|i| listing(&format!("{base}-{i:06}")).is_none()), "the buckets storbench made are gone");
}

#[test]
fn swift_through_keystone_v3_runs_the_object_mix() {
    let Some(env) = keystone_env() else { return };
    mix(&env, "swift", ("--container", &tag("ks")));
}

/// OS_CLOUD: the same Keystone credentials from a clouds.yaml entry (and the
/// password from secure.yaml beside it), with no OS_* variables for them.
#[test]
fn swift_through_keystone_with_a_clouds_yaml_entry() {
    let Some(env) = keystone_env() else { return };
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let d = scratch();
    let yaml = format!(
        "clouds:\n  sbtest:\n    auth:\n      auth_url: {}\n      username: {}\n      project_name: {}\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n    identity_api_version: 3\n",
        get("OS_AUTH_URL"),
        get("OS_USERNAME"),
        get("OS_PROJECT_NAME")
    );
    std::fs::write(d.path().join("clouds.yaml"), yaml).unwrap();
    std::fs::write(d.path().join("secure.yaml"), format!("clouds:\n  sbtest:\n    auth:\n      password: {}\n", get("OS_PASSWORD")))
        .unwrap();
    let args = ["run", "--name", "c", "--ioengine", "swift", "--container", &tag("cloud"), "--objects", "20", "--object_size", "4k"];
    let args = [&args[..], &["--object_ops", "create:1,read:1", "--prefill", "1", "--number_ios", "40", "--results-dir", "out", "--quiet"]]
        .concat();
    let r = storbench_env(d.path(), &[("OS_CLOUD", "sbtest".to_string())], &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("out"));
    assert_eq!(["create", "update", "read"].iter().map(|o| ios(&doc, 0, o)).sum::<u64>(), 40);
    assert!(doc["jobs"][0]["targets"][0].as_str().unwrap().contains(":8081/v1/AUTH_"), "{}", doc["jobs"][0]["targets"]);
}

#[test]
fn keystone_failures_are_clear_errors_without_the_password() {
    let Some(env) = keystone_env() else { return };
    let d = scratch();
    let run = |env: &[(&'static str, String)], extra: &[&str]| {
        let mut a = vec!["run", "--name", "k", "--ioengine", "swift", "--container", "sbks", "--rw", "write", "--number_ios", "1"];
        a.extend(extra);
        storbench_env(d.path(), env, &a)
    };
    let mut wrong = env.clone();
    wrong.retain(|(k, _)| *k != "OS_PASSWORD");
    wrong.push(("OS_PASSWORD", "not-the-Password-42".into()));
    let r = run(&wrong, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("refused (HTTP 401)") && r.stderr.contains("in project"), "{}", r.stderr);
    assert!(!r.stderr.contains("not-the-Password-42") && !r.stdout.contains("not-the-Password-42"));
    let r = run(&env, &["--region", "Nowhere"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("no public object-store endpoint in region Nowhere") && r.stderr.contains("public in RegionOne"),
        "{}",
        r.stderr
    );
    let r = run(&env, &["--auth_version", "2"]);
    assert!(r.code == 2 && r.stderr.contains("v2.0 is not supported"), "{}", r.stderr);
}

#[test]
fn s3_over_https_trusts_the_ca_it_is_given_and_refuses_others() {
    let Some((env, ca)) = s3_tls_env() else { return };
    let mut trusted = env.clone();
    trusted.push(("AWS_CA_BUNDLE", ca.clone()));
    mix(&trusted, "s3", ("--bucket", &tag("tls")));
    let d = scratch();
    let run = |env: &[(&'static str, String)], extra: &[&str]| {
        let mut a = vec![
            "run",
            "--name",
            "t",
            "--ioengine",
            "s3",
            "--bucket",
            "sbtls",
            "--rw",
            "write",
            "--object_size",
            "4k",
            "--number_ios",
            "4",
        ];
        a.extend(extra);
        a.extend(["--results-dir", "out", "--quiet"]);
        storbench_env(d.path(), env, &a)
    };
    let r = run(&env, &[]);
    assert_eq!(r.code, 2, "an unknown CA must be refused: {}", r.stderr);
    assert!(r.stderr.contains("TLS failed") && r.stderr.contains("UnknownIssuer") && r.stderr.contains("--ca_cert"), "{}", r.stderr);
    let r = run(&env, &["--insecure", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let summary = std::fs::read_to_string(d.path().join("out/summary.txt")).unwrap();
    assert!(summary.contains("(TLS certificate NOT verified)"), "{summary}");
    assert_eq!(ios(&result_json(&d.path().join("out")), 0, "create"), 4, "{summary}");
    let r = run(&env, &["--ca_cert", "/nonexistent/ca.pem"]);
    assert!(r.code == 2 && r.stderr.contains("ca_cert") && r.stderr.contains("/nonexistent/ca.pem"), "{}", r.stderr);
}

#[test]
fn swift_over_https_on_rgw() {
    let (Some(mut env), Some((_, ca))) = (swift_env("rgw"), s3_tls_env()) else { return };
    let tls = std::env::var("STORBENCH_S3_TLS_ENDPOINT").unwrap();
    for (k, v) in env.iter_mut() {
        if *k == "ST_AUTH" {
            *v = format!("{tls}/auth/1.0");
        }
    }
    env.push(("OS_CACERT", ca));
    mix(&env, "swift", ("--container", &tag("swtls")));
}

#[test]
fn large_objects_go_up_in_parts_and_read_back_whole() {
    let d = scratch();
    let check = |env: &[(&'static str, String)], engine: &str, args: &[&str]| {
        // A run's results are never replaced: each check has a directory of its own.
        let _ = std::fs::remove_dir_all(d.path().join(engine));
        let mut a = vec![
            "run",
            "--name",
            "big",
            "--ioengine",
            engine,
            "--objects",
            "3",
            "--object_size",
            "12m",
            "--rw",
            "read",
            "--prefill",
            "1",
            "--iodepth",
            "2",
            "--number_ios",
            "3",
            "--results-dir",
            engine,
            "--quiet",
        ];
        a.extend(args);
        let r = storbench_env(d.path(), env, &a);
        assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
        let (ios, bytes, errors) = op_ios(&result_json(&d.path().join(engine)), "read");
        assert_eq!((ios, bytes, errors), (3, 3 * (12 << 20), serde_json::json!({})), "{engine}: whole 12 MiB objects read back");
    };
    if let Some(env) = s3_env() {
        check(&env, "s3", &["--bucket", &tag("mp"), "--multipart_threshold", "5m", "--part_size", "5m"]);
        // The parts again, each an aws-chunked body with signed chunks.
        check(&env, "s3", &["--bucket", &tag("mps"), "--multipart_threshold", "5m", "--part_size", "5m", "--payload", "streaming"]);
    }
    if let Some(env) = swift_env("aio") {
        check(&env, "swift", &["--container", &tag("slo"), "--slo_threshold", "4m", "--segment_size", "4m"]);
    }
}

#[test]
fn bad_credentials_wrong_endpoint_and_missing_bucket_are_clear_errors() {
    let d = scratch();
    if let Some(mut env) = s3_env() {
        let secret = "not-the-secret-but-looks-like-one";
        env.retain(|e| e.0 != "AWS_SECRET_ACCESS_KEY");
        env.push(("AWS_SECRET_ACCESS_KEY", secret.to_string()));
        let r = storbench_env(
            d.path(),
            &env,
            &["run", "--name", "a", "--ioengine", "s3", "--bucket", &tag("auth"), "--rw", "write", "--number_ios", "1"],
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("HTTP 403") && r.stderr.contains("check the access key"), "{}", r.stderr);
        assert!(!r.stderr.contains(secret) && !r.stdout.contains(secret), "the secret is never printed");
        let r = storbench_env(
            d.path(),
            &env,
            &["run", "--name", "e", "--ioengine", "s3", "--endpoint", "http://127.0.0.1:9", "--rw", "write", "--number_ios", "1"],
        );
        assert_ne!(r.code, 0);
        assert!(r.stderr.contains("cannot reach the endpoint") && r.stderr.contains("refused"), "{}", r.stderr);
    }
    if let Some(s3) = s3_env() {
        let r = storbench_env(
            d.path(),
            &s3,
            &[
                "run",
                "--name",
                "m",
                "--ioengine",
                "s3",
                "--bucket",
                &tag("none"),
                "--objects_exist",
                "1",
                "--rw",
                "randread",
                "--runtime",
                "1",
            ],
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(&format!("bucket '{}' does not exist", tag("none"))), "{}", r.stderr);
    }
    if let Some(mut env) = swift_env("aio") {
        env.retain(|e| e.0 != "ST_KEY");
        env.push(("ST_KEY", "wrong-key".into()));
        let r = storbench_env(d.path(), &env, &["run", "--name", "a", "--ioengine", "swift", "--rw", "write", "--number_ios", "1"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("refused (HTTP 401)") && !r.stderr.contains("wrong-key"), "{}", r.stderr);
    }
    let r = storbench_env(
        d.path(),
        &[],
        &["run", "--name", "n", "--ioengine", "s3", "--endpoint", "http://127.0.0.1:9", "--rw", "write", "--number_ios", "1"],
    );
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("no S3 credentials"), "{}", r.stderr);
    }
}

#[test]
fn objects_not_ours_are_refused_and_results_report_http_failures() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    let bucket = tag("keep");
    let base = ["--ioengine", "s3", "--bucket", &bucket, "--objects", "10", "--object_size", "4k", "--results-dir"];
    let run = |out: &str, extra: &[&str]| {
        let mut a = vec!["run", "--name", "k"];
        a.extend(base);
        a.push(out);
        a.extend(extra);
        a.push("--quiet");
        storbench_env(d.path(), &env, &a)
    };
    let w = run("w", &["--rw", "write", "--number_ios", "10", "--cleanup", "0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let again = run("again", &["--rw", "write", "--number_ios", "10"]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("already exists") && again.stderr.contains("objects_exist=1"), "{}", again.stderr);
    // One object removed behind storbench's back: its read fails as HTTP 404,
    // the others succeed, the run reports it and exits 1.
    let env_of = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let url = format!("{}/{bucket}/storbench.k.5", env_of("AWS_ENDPOINT_URL"));
    let user = format!("{}:{}", env_of("AWS_ACCESS_KEY_ID"), env_of("AWS_SECRET_ACCESS_KEY"));
    let del = std::process::Command::new("curl")
        .args([
            "-sf",
            "-X",
            "DELETE",
            "-H",
            "x-amz-content-sha256: UNSIGNED-PAYLOAD",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "--user",
            &user,
            &url,
        ])
        .output()
        .unwrap();
    assert!(del.status.success(), "curl DELETE: {}", String::from_utf8_lossy(&del.stderr));
    let reads = run("reads", &["--objects_exist", "1", "--rw", "read", "--number_ios", "10", "--cleanup", "0"]);
    assert_eq!(reads.code, 1, "{}", reads.stderr);
    let (ios, _, errors) = op_ios(&result_json(&d.path().join("reads")), "read");
    assert_eq!((ios, errors), (9, serde_json::json!({"HTTP 404": 1})));
    // Clean up: cleanup=1 removes the keys and then the bucket storbench made.
    let c = run("c", &["--objects_exist", "1", "--object_ops", "stat", "--rw", "read", "--number_ios", "1", "--cleanup", "1"]);
    assert!(c.code == 0 || c.code == 1, "{}", c.stderr);
    let gone = run("gone", &["--objects_exist", "1", "--rw", "read", "--number_ios", "1"]);
    assert_eq!(gone.code, 2, "bucket removed: {}", gone.stderr);
}

#[test]
/// Also the signed-payload mode (every body's SHA-256 in the signature).
fn keys_given_as_options_never_reach_the_results() {
    let Some(env) = s3_env() else { return };
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let (endpoint, access, secret) = (get("AWS_ENDPOINT_URL"), get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"));
    let d = scratch();
    let r = storbench_env(
        d.path(),
        &[],
        &[
            "run",
            "--name",
            "o",
            "--ioengine",
            "s3",
            "--endpoint",
            &endpoint,
            "--access_key",
            &access,
            "--secret_key",
            &secret,
            "--payload",
            "signed",
            "--bucket",
            &tag("opt"),
            "--objects",
            "5",
            "--object_size",
            "4k",
            "--rw",
            "write",
            "--number_ios",
            "5",
            "--results-dir",
            "out",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains(&secret) && !r.stderr.contains(&secret));
    for f in std::fs::read_dir(d.path().join("out")).unwrap() {
        let path = f.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&secret), "{} holds the secret key", path.display());
    }
}

/// payload=streaming: RGW checks every chunk's signature and stores only the
/// decoded data (whole reads return exactly each size class's length); a
/// wrong secret is refused at the first PUT.
#[test]
fn streaming_signed_uploads_are_accepted_and_read_back_whole() {
    let Some(env) = s3_env() else { return };
    let d = scratch();
    let run = |env: &[(&'static str, String)], out: &str| {
        let args = [
            "run",
            "--name",
            "st",
            "--ioengine",
            "s3",
            "--bucket",
            &tag("stream"),
            "--payload",
            "streaming",
            "--chunk_size",
            "64k",
            "--objects",
            "24",
            "--object_size",
            "1k/30:100k/40:1m/30",
            "--prefill",
            "1",
            "--rw",
            "read",
            "--number_ios",
            "48",
            "--results-dir",
            out,
            "--quiet",
        ];
        storbench_env(d.path(), env, &args)
    };
    let r = run(&env, "ok");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = result_json(&d.path().join("ok"));
    for c in doc["jobs"][0]["size_classes"].as_array().unwrap() {
        let read = &c["ops"][0];
        assert_eq!(read["bytes"].as_u64().unwrap(), read["ios"].as_u64().unwrap() * c["size"].as_u64().unwrap(), "{c}");
    }
    assert_eq!(ios(&doc, 0, "read"), 48);
    let mut wrong = env.clone();
    wrong.retain(|(k, _)| *k != "AWS_SECRET_ACCESS_KEY");
    wrong.push(("AWS_SECRET_ACCESS_KEY", "wrong-secret-000000000000000000000000000".into()));
    let r = run(&wrong, "bad");
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("403") && !r.stderr.contains("wrong-secret"), "{}", r.stderr);
}

/// LIST walks the pages: lists of 2500 objects return pages of 1000, 1000
/// and 500 names (1500: 1000 and 500), not the first page again and again.
#[test]
fn list_operations_walk_the_pages() {
    let d = scratch();
    let check = |env: &[(&'static str, String)], engine: &str, place: &[&str], objects: u64| {
        let n = objects.to_string();
        let lists = objects.div_ceil(1000);
        let run = |out: &str, lists: &str, fill: bool| {
            let mut a = vec!["run", "--name", "l", "--ioengine", engine];
            a.extend(place);
            a.extend(["--objects", &n, "--object_size", "1", "--number_ios", lists, "--results-dir", out, "--quiet"]);
            if fill {
                a.extend(["--object_ops", "stat", "--prefill", "1", "--cleanup", "0", "--iodepth", "16"]);
            } else {
                a.extend(["--object_ops", "list", "--objects_exist", "1", "--iodepth", "1"]);
            }
            let r = storbench_env(d.path(), env, &a);
            assert_eq!(r.code, 0, "{engine}: {}", r.stderr);
            op_ios(&result_json(&d.path().join(out)), "list").1
        };
        run(&format!("{engine}-fill"), "1", true);
        let one = run(&format!("{engine}-one"), "1", false) as f64;
        let all = run(&format!("{engine}-all"), &lists.to_string(), false) as f64;
        let pages = objects as f64 / 1000.0;
        assert!((all / one - pages).abs() < 0.2, "{engine}: one page {one} bytes, {lists} lists {all} bytes, want {pages} pages' worth");
        let mut a = vec!["run", "--name", "l", "--ioengine", engine];
        a.extend(place);
        a.extend([
            "--objects",
            &n,
            "--object_size",
            "1",
            "--object_ops",
            "stat",
            "--objects_exist",
            "1",
            "--cleanup",
            "1",
            "--number_ios",
            "1",
            "--iodepth",
            "16",
        ]);
        assert_eq!(storbench_env(d.path(), env, &a).code, 0);
    };
    if let Some(env) = s3_env() {
        check(&env, "s3", &["--bucket", &tag("pages")], 2500);
    }
    if let Some(env) = swift_env("aio") {
        check(&env, "swift", &["--container", &tag("pages")], 1500);
    }
}
