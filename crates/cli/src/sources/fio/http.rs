//! fio's `http` engine on storbench's s3 and swift engines.
//!
//! fio treats an object store as a file: each `bs` block at offset O of a
//! file (fio's `filename`, or `filename_format` with `$jobnum` for one file
//! per job) is an object named `<file>_<O>_<bs>`; a read is a GET, a write
//! a PUT, a trim a DELETE, and nothing is removed at the end. Here that
//! becomes an object job over `size / bs` objects of `bs` bytes with fio's
//! names, objects kept (cleanup=0), and reads and trims on objects that
//! exist (written by an earlier job or an earlier run).

use storbench_workload::objects::Naming;
use storbench_workload::{apply_option, JobSpec};

/// The `fio:` options of one job, last one wins.
pub type Get<'a> = dyn Fn(&str) -> Option<&'a str> + 'a;

/// Rewrite `spec` (built from the job's other options) as fio's http job.
pub fn apply(spec: &mut JobSpec, get: &Get, notes: &mut Vec<String>) -> Result<(), String> {
    let scheme = match get("https").unwrap_or("off") {
        "off" | "0" => "http",
        "on" | "1" => "https",
        "insecure" => {
            set(spec, "insecure", "1")?;
            "https"
        }
        v => return Err(format!("https={v}: fio takes on, off or insecure")),
    };
    let host = get("http_host").unwrap_or("localhost");
    let file = file_name(spec, get)?;
    match get("http_mode").unwrap_or("webdav") {
        "s3" => s3(spec, get, scheme, host, &file.path)?,
        "swift" => swift(spec, get, scheme, host, &file.path)?,
        "webdav" => {
            return Err(
                "http_mode=webdav (fio's default): WebDAV is not supported; storbench speaks http_mode=s3 and http_mode=swift".into()
            )
        }
        m => return Err(format!("http_mode={m}: fio takes webdav, s3 or swift")),
    }
    if get("http_object_mode").is_some_and(|m| m != "block") {
        return Err("http_object_mode=range (one object per file, ranged reads) is not supported; the default, block, is".into());
    }
    objects(spec, get, &file)?;
    // There is no page cache between fio's http engine and the store:
    // direct=1 (common in its examples) changes nothing there.
    spec.direct = false;
    notes_for(spec, notes);
    Ok(())
}

/// The file an http job's objects are named after, split at `$jobnum`.
struct FileName {
    /// Before `$jobnum` (or all of it), without the leading '/'.
    path: String,
    /// After `$jobnum`, when the name has one (one file per worker).
    jobnum_tail: Option<String>,
}

/// fio's `filename_format` (`$jobname`, `$jobnum`, `$filenum`) or
/// `filename`; fio puts it after the host as it is, so it starts with '/'.
fn file_name(spec: &mut JobSpec, get: &Get) -> Result<FileName, String> {
    let name = match get("filename_format") {
        Some(f) => f.replace("$jobname", &spec.name).replace("$filenum", "0"),
        None => match spec.filenames.as_slice() {
            [one] => one.clone(),
            [] => {
                return Err(
                    "ioengine=http names its objects after filename= (/bucket/key for S3, /v1/account/container/object for Swift)".into()
                )
            }
            _ => return Err("ioengine=http: give one filename (storbench's object jobs have one object name per block)".into()),
        },
    };
    spec.filenames.clear();
    let Some(path) = name.strip_prefix('/') else {
        return Err(format!("ioengine=http: the object name '{name}' must start with '/' (fio puts it right after http_host)"));
    };
    Ok(match path.split_once("$jobnum") {
        Some((head, tail)) => FileName { path: head.into(), jobnum_tail: Some(tail.into()) },
        None => FileName { path: path.into(), jobnum_tail: None },
    })
}

fn set(spec: &mut JobSpec, key: &str, value: &str) -> Result<(), String> {
    apply_option(spec, key, value).map_err(|e| e.to_string())
}

/// S3: virtual-hosted (`bucket.s3.region.amazonaws.com` and a key) or path
/// style (`/bucket/key` on any other host).
fn s3(spec: &mut JobSpec, get: &Get, scheme: &str, host: &str, path: &str) -> Result<(), String> {
    set(spec, "ioengine", "s3")?;
    let (endpoint, bucket, key) = match host.split_once('.') {
        Some((bucket, rest)) if rest.starts_with("s3.") || rest.starts_with("s3-") => {
            set(spec, "addressing", "virtual")?;
            (format!("{scheme}://{rest}"), bucket.to_string(), path.to_string())
        }
        _ => match path.split_once('/') {
            Some((bucket, key)) if !bucket.is_empty() => (format!("{scheme}://{host}"), bucket.to_string(), key.to_string()),
            _ => return Err(format!("http_mode=s3 with http_host={host}: filename must be /bucket/key (path-style requests)")),
        },
    };
    set(spec, "endpoint", &endpoint)?;
    set(spec, "bucket", &bucket)?;
    set(spec, "object_prefix", &key)?;
    set(spec, "region", get("http_s3_region").unwrap_or("us-east-1"))?;
    for (fio, ours) in [("http_s3_keyid", "access_key"), ("http_s3_key", "secret_key"), ("http_s3_security_token", "session_token")] {
        if let Some(v) = get(fio) {
            set(spec, ours, v)?;
        }
    }
    // fio signs the payload's SHA-256.
    set(spec, "payload", "signed")
}

/// Swift: `/[prefix/]v1/[AUTH_account/]container/object` under the host,
/// with the token fio is given (it cannot authenticate by itself).
fn swift(spec: &mut JobSpec, get: &Get, scheme: &str, host: &str, path: &str) -> Result<(), String> {
    set(spec, "ioengine", "swift")?;
    let token = get("http_swift_auth_token").ok_or("http_mode=swift needs http_swift_auth_token (fio does not authenticate by itself)")?;
    let parts: Vec<&str> = path.split('/').collect();
    let v1 = parts
        .iter()
        .position(|p| *p == "v1")
        .ok_or_else(|| format!("http_mode=swift: '/{path}' has no /v1/ (fio's filename is the object's path on the proxy)"))?;
    let account = parts.get(v1 + 1).is_some_and(|a| a.starts_with("AUTH_")) as usize;
    let c = v1 + 1 + account;
    let (Some(container), true) = (parts.get(c), parts.len() > c + 1) else {
        return Err(format!("http_mode=swift: '/{path}' needs a container and an object name after /v1/"));
    };
    set(spec, "storage_url", &format!("{scheme}://{host}/{}", parts[..c].join("/")))?;
    set(spec, "token", token)?;
    set(spec, "container", container)?;
    set(spec, "object_prefix", &parts[c + 1..].join("/"))
}

/// One object per block: the key space, sizes, fio's names, the operation
/// the job's rw means, and what ends a job that is not time based.
fn objects(spec: &mut JobSpec, get: &Get, file: &FileName) -> Result<(), String> {
    let bs = spec.bs.read.0.iter().chain(&spec.bs.write.0).map(|e| e.0).max().unwrap_or(4096);
    if spec.bs.read.0.len() > 1 || spec.bs.write.0.len() > 1 || spec.bs.min() != bs {
        return Err("ioengine=http takes one block size (each block is an object of that size)".into());
    }
    let size = spec.size.ok_or("ioengine=http needs size= (the file's size: size/bs objects)")?;
    let blocks = (size / bs).max(1);
    let workers = spec.numjobs.max(1);
    let count = if file.jobnum_tail.is_some() { blocks * workers as u64 } else { blocks };
    let rw = get("rw").unwrap_or_else(|| spec.rw.name());
    let (mix, existing) = match rw.split(':').next().unwrap_or(rw) {
        "read" | "randread" => ("read:100".to_string(), true),
        "write" | "randwrite" => ("create:100".to_string(), false),
        "rw" | "readwrite" | "randrw" => {
            (format!("read:{r},create:{w}", r = spec.rwmixread.round(), w = 100.0 - spec.rwmixread.round()), true)
        }
        t @ ("trim" | "randtrim") => {
            // Deletes walk the keys in order, or at random, as the trims would.
            set(spec, "rw", if t == "trim" { "read" } else { "randread" })?;
            ("delete:100".to_string(), true)
        }
        t => return Err(format!("rw={t}: fio's http engine reads, writes and trims; {t} is not one of those")),
    };
    for (k, v) in [
        ("objects", count.to_string()),
        ("object_size", bs.to_string()),
        ("object_ops", mix),
        ("objects_exist", (existing as u8).to_string()),
        ("cleanup", "0".into()),
    ] {
        set(spec, k, &v)?;
    }
    let o = spec.objects.as_mut().expect("object options were just set");
    o.naming = Naming::FioBlocks { block: bs, workers, jobnum: file.jobnum_tail.clone() };
    spec.size = None;
    if !spec.time_based {
        // fio's budget is io_size (default: size) per job, in blocks; a
        // delete moves no bytes, so trims count operations.
        let budget = spec.io_size.unwrap_or(size);
        match rw.contains("trim") {
            true => (spec.number_ios, spec.io_size) = (Some((budget / bs).max(1)), None),
            false => spec.io_size = Some(budget),
        }
    }
    Ok(())
}

fn notes_for(spec: &JobSpec, notes: &mut Vec<String>) {
    let note = format!(
        "ioengine=http runs on storbench's {} engine: one object per block, named as fio names them, kept at the end; \
         the workers of a job share its objects out instead of each addressing all of them",
        spec.ioengine
    );
    super::add_note(notes, note);
}
