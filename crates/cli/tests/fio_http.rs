//! fio's http engine on RGW (scripts/testenv/ceph): fio job files with
//! ioengine=http, http_mode=s3 or swift, run by `storbench fio`. Objects
//! carry fio's names (`<file>_<offset>_<bs>`) and stay after the run, reads
//! find what an earlier job wrote, trims delete in offset order; the store's
//! own listing (radosgw-admin, Swift's container GET) is the judge. Debian's
//! fio is built without libcurl, so there is no fio to compare against here.

mod common;
use common::*;
use std::process::Command;

fn tag(t: &str) -> String {
    format!("sbt{}{t}", std::process::id())
}

/// `storbench fio JOB --output-format=json` with `env`; the parsed JSON and
/// everything the run printed.
fn fio_json(dir: &std::path::Path, job: &str, env: &[(&str, String)]) -> (serde_json::Value, String) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let run = storbench_env(dir, env, &["fio", "job.fio", "--output-format=json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    (doc, format!("{}{}", run.stdout, run.stderr))
}

/// Per job: (name, error, read ios, write ios, trim ios).
fn counts(doc: &serde_json::Value) -> Vec<(String, u64, u64, u64, u64)> {
    let n = |j: &serde_json::Value, d: &str| j[d]["total_ios"].as_u64().unwrap();
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["jobname"].as_str().unwrap().to_string(), j["error"].as_u64().unwrap(), n(j, "read"), n(j, "write"), n(j, "trim")))
        .collect()
}

fn rgw_bucket_names(bucket: &str) -> Vec<String> {
    let out = Command::new("radosgw-admin").args(["bucket", "list", "--bucket", bucket]).output().expect("radosgw-admin");
    assert!(out.status.success(), "radosgw-admin: {}", String::from_utf8_lossy(&out.stderr));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut names: Vec<String> = list.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect();
    names.retain(|n| !n.starts_with(".storbench"));
    names.sort();
    names
}

fn remove_bucket(bucket: &str) {
    let _ = Command::new("radosgw-admin").args(["bucket", "rm", "--bucket", bucket, "--purge-objects"]).output();
}

#[test]
fn an_s3_job_file_writes_reads_and_trims_objects_named_as_fio_names_them() {
    let Some(env) = s3_env() else { return };
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let (endpoint, secret) = (get("AWS_ENDPOINT_URL"), get("AWS_SECRET_ACCESS_KEY"));
    let host = endpoint.trim_start_matches("http://");
    let bucket = tag("fios3");
    let d = scratch();
    // Credentials through ${VAR}, as fio's own example passes them.
    let job = format!(
        "[global]\nioengine=http\nhttp_mode=s3\nhttp_host={host}\nhttp_s3_keyid=${{FIO_S3_ID}}\nhttp_s3_key=${{FIO_S3_KEY}}\n\
         filename=/{bucket}/k/e.y\nbs=4k\nsize=64k\ndirect=1\n\
         [create]\nrw=write\n[read]\nstonewall\nrw=randread\nio_size=32k\n[trim]\nstonewall\nrw=trim\nio_size=32k\n"
    );
    let vars = [("FIO_S3_ID", get("AWS_ACCESS_KEY_ID")), ("FIO_S3_KEY", secret.clone()), ("AWS_ACCESS_KEY_ID", String::new())];
    let (doc, printed) = fio_json(d.path(), &job, &vars);
    let left = rgw_bucket_names(&bucket);
    remove_bucket(&bucket);
    assert_eq!(
        counts(&doc),
        vec![("create".into(), 0, 0, 16, 0), ("read".into(), 0, 8, 0, 0), ("trim".into(), 0, 0, 0, 8)],
        "16 PUTs, 8 GETs of what they wrote, 8 DELETEs"
    );
    let expected: Vec<String> = {
        let mut v: Vec<String> = (8..16).map(|b| format!("k/e.y_{}_4096", b * 4096)).collect();
        v.sort();
        v
    };
    assert_eq!(left, expected, "the first 8 blocks trimmed in order, the rest kept as fio keeps them");
    assert!(doc["jobs"][0]["write"]["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap() > 0);
    assert!(!printed.contains(&secret), "the S3 secret was printed");
}

#[test]
fn a_swift_job_file_with_a_token_and_one_file_per_job() {
    let Some(env) = swift_env("rgw") else { return };
    let (storage_url, token) = swift_session(&env);
    let (host, path) = storage_url.trim_start_matches("http://").split_once('/').unwrap();
    let container = tag("fioswift");
    let d = scratch();
    // fio's examples/http-swift.fio, on this server: name=test in [global]
    // (two jobs named alike), $jobnum in the object name, direct=1, and
    // the writes verified before the later group trims.
    let job = format!(
        "[global]\nioengine=http\nname=test\ndirect=1\nhttp_verbose=0\nhttp_mode=swift\nhttp_host={host}\n\
         filename_format=/{path}/{container}/bucket.$jobnum\ngroup_reporting\nbs=64k\nsize=1M\nhttp_swift_auth_token=${{SWIFT_id}}\n\
         [create]\nnumjobs=2\nrw=randwrite\nio_size=256k\nverify=sha256\n[trim]\nstonewall\nnumjobs=1\nrw=trim\nio_size=64k\n"
    );
    let (doc, printed) = fio_json(d.path(), &job, &[("SWIFT_id", token.clone())]);
    let list = Command::new("curl")
        .args(["-sf", "-H", &format!("X-Auth-Token: {token}"), &format!("{storage_url}/{container}")])
        .output()
        .unwrap();
    let mut names: Vec<String> = String::from_utf8_lossy(&list.stdout).lines().map(String::from).collect();
    names.sort();
    for n in &names {
        let _ = Command::new("curl")
            .args(["-sf", "-X", "DELETE", "-H", &format!("X-Auth-Token: {token}"), &format!("{storage_url}/{container}/{n}")])
            .output();
    }
    let _ = Command::new("curl")
        .args(["-sf", "-X", "DELETE", "-H", &format!("X-Auth-Token: {token}"), &format!("{storage_url}/{container}")])
        .output();
    // fio counts a verified write job's read-back among its reads (update_runtime).
    assert_eq!(counts(&doc), vec![("test".into(), 0, 8, 8, 0), ("test.2".into(), 0, 0, 0, 1)], "2 jobs x 4 PUTs read back, then 1 DELETE");
    names.retain(|n| !n.starts_with(".storbench"));
    let written: Vec<String> = [
        "bucket.0_65536_65536",
        "bucket.0_131072_65536",
        "bucket.0_196608_65536",
        "bucket.1_0_65536",
        "bucket.1_65536_65536",
        "bucket.1_131072_65536",
        "bucket.1_196608_65536",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut written = written;
    written.sort();
    assert_eq!(names, written, "each job's own file of 64k blocks, the first block of job 0 trimmed");
    assert!(!printed.contains(&token), "the token was printed");
}

/// fio's examples/http-s3.fio as fio has it: `create` writes and verifies
/// (verify=sha256 reads the object back), then a later group trims it.
/// The trim runs after the check, so it is no unverified writer of what
/// `create` verifies: the file runs (it was refused) and the bucket ends
/// with no object.
#[test]
fn http_s3_fio_writes_verifies_then_trims_in_a_later_group() {
    let Some(env) = s3_env() else { return };
    let get = |k: &str| env.iter().find(|e| e.0 == k).unwrap().1.clone();
    let endpoint = get("AWS_ENDPOINT_URL");
    let host = endpoint.trim_start_matches("http://");
    let bucket = tag("fios3v");
    let d = scratch();
    let job = format!(
        "[global]\nioengine=http\nname=test\ndirect=1\nfilename=/{bucket}/object\nhttp_verbose=0\nhttps=off\nhttp_mode=s3\n\
         http_s3_key=${{S3_KEY}}\nhttp_s3_keyid=${{S3_ID}}\nhttp_host={host}\nhttp_s3_region=us-east-1\ngroup_reporting\n\
         [create]\nrw=write\nbs=4k\nsize=64k\nio_size=4k\nverify=sha256\n\
         [trim]\nstonewall\nrw=trim\nbs=4k\nsize=64k\nio_size=4k\n"
    );
    std::fs::write(d.path().join("job.fio"), job).unwrap();
    let vars = [("S3_ID", get("AWS_ACCESS_KEY_ID")), ("S3_KEY", get("AWS_SECRET_ACCESS_KEY"))];
    let run = storbench_env(d.path(), &vars, &["fio", "job.fio", "--output-format=json", "--results-dir", "out"]);
    let left = rgw_bucket_names(&bucket);
    remove_bucket(&bucket);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(counts(&doc), vec![("test".into(), 0, 1, 1, 0), ("test.2".into(), 0, 0, 0, 1)], "a PUT read back, then its DELETE");
    let verified = &result_json(&d.path().join("out"))["jobs"][0]["verify"];
    assert_eq!((verified["checked"].as_u64(), verified["failed"][0].as_u64()), (Some(1), Some(0)), "{verified}");
    assert!(left.is_empty(), "the object was trimmed: {left:?}");
}
