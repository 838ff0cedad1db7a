//! Object-store access logs as traces: RGW's ops log (JSON, one request a
//! line or an array of them), Swift's proxy-server log (proxy-logging's
//! line, syslog prefix or not) and S3 server access logs (AWS's format).
//!
//! Every request on an object becomes a read (GET; whole when it sent the
//! whole object, else a range of what it sent), a write of a whole object
//! (PUT), a stat (HEAD) or a delete; a GET of a bucket or container is a
//! listing. Keys are numbered in order of first use ("bucket/key"), so
//! replay puts them under the run's own prefix and bucket. Requests that
//! failed (status 400 and above), account and bucket administration,
//! multipart parts and a proxy's own subrequests are not replayed.

use super::{length, FileNames, Format, Record, Trace};
use crate::spec::OpKind;
use crate::units::days_from_civil;

/// One request, before times are made relative.
struct Request {
    start_ns: u64,
    op: OpKind,
    key: Option<String>,
    len: u64,
    whole: bool,
    /// The object's size, when the log says (0: it does not).
    size: u64,
}

/// Build a trace from requests in log order.
fn trace(format: Format, mut reqs: Vec<Request>, skipped: u64) -> Result<Trace, String> {
    // Logs are written as requests end; replay issues them as they began.
    reqs.sort_by_key(|r| r.start_ns);
    let base = reqs.first().map_or(0, |r| r.start_ns);
    let mut names = FileNames::default();
    let mut records = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.into_iter().enumerate() {
        let file = r.key.as_deref().map_or(0, |k| names.of(k));
        let len = length(r.len, i + 1)?;
        // An object request has no offset: the field keeps the object's size.
        records.push(Record { t_ns: r.start_ns - base, op: r.op, data_only: false, file, offset: r.size, len, whole: r.whole });
    }
    Ok(Trace::new(format, names.names, records, skipped))
}

/// The operation of a request on `key` (None: on a bucket or container).
fn op_of(method: &str, has_key: bool) -> Option<OpKind> {
    Some(match (method, has_key) {
        ("GET", true) => OpKind::Read,
        ("GET", false) => OpKind::List,
        ("PUT", true) => OpKind::Create,
        ("HEAD", true) => OpKind::Stat,
        ("DELETE", true) => OpKind::Delete,
        _ => return None,
    })
}

// ---- RGW ops log ----

pub fn looks_like_rgw(text: &str) -> bool {
    let t = text.trim_start().trim_start_matches('[').trim_start();
    t.starts_with('{') && t.contains("\"operation\"") && t.contains("\"uri\"")
}

pub fn parse_rgw(text: &str) -> Result<Trace, String> {
    let mut reqs = Vec::new();
    let mut skipped = 0;
    for (n, obj) in json_objects(text).enumerate() {
        let v: serde_json::Value = serde_json::from_str(obj).map_err(|e| format!("entry {}: not JSON: {e}", n + 1))?;
        match rgw_request(&v) {
            Ok(Some(r)) => reqs.push(r),
            Ok(None) => skipped += 1,
            Err(e) => return Err(format!("entry {}: {e}", n + 1)),
        }
    }
    trace(Format::RgwOpsLog, reqs, skipped)
}

fn rgw_request(v: &serde_json::Value) -> Result<Option<Request>, String> {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("");
    let n = |k: &str| v.get(k).and_then(|x| x.as_u64().or_else(|| x.as_str().and_then(|s| s.parse().ok()))).unwrap_or(0);
    let status: u64 = n("http_status");
    let uri = s("uri");
    let method = uri.split_whitespace().next().unwrap_or("");
    let bucket = s("bucket");
    if status >= 400 || bucket.is_empty() || uri.contains("uploadId=") {
        return Ok(None);
    }
    // Newer gateways name the object; Pacific's entries only have the URI.
    let key = match s("object") {
        "" => key_in_uri(uri, bucket),
        k => k.to_string(),
    };
    let Some(op) = op_of(method, !key.is_empty()) else { return Ok(None) };
    let time = s("time");
    let start_ns = rfc3339_ns(time).ok_or_else(|| format!("time '{time}' is not a date and time"))?;
    let (size, sent) = (n("object_size"), n("bytes_sent"));
    let (len, whole) = match op {
        OpKind::Create => (n("bytes_received").max(size), true),
        OpKind::Read => (sent, size == 0 || sent >= size),
        _ => (0, false),
    };
    // RGW stamps an entry with the time the request arrived.
    Ok(Some(Request { start_ns, op, key: key_of(op, bucket, &key), len, whole, size }))
}

/// The object key of "GET /bucket/key?query HTTP/1.1" (path style), or of
/// "GET /key" (the bucket in the host name); empty for the bucket itself.
fn key_in_uri(uri: &str, bucket: &str) -> String {
    let path = uri.split_whitespace().nth(1).unwrap_or("").split('?').next().unwrap_or("");
    let path = path.trim_start_matches('/');
    let key = match path.strip_prefix(bucket) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => path,
    };
    unquote(key)
}

/// Top-level `{...}` objects of a text (one a line, or in a JSON array).
fn json_objects(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let (mut depth, mut start, mut in_str, mut esc) = (0usize, 0usize, false, false);
    let mut out = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match (in_str, b) {
            (true, _) if esc => esc = false,
            (true, b'\\') => esc = true,
            (true, b'"') => in_str = false,
            (true, _) => {}
            (false, b'"') => in_str = true,
            (false, b'{') => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            (false, b'}') if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    out.into_iter()
}

fn key_of(op: OpKind, bucket: &str, key: &str) -> Option<String> {
    (op != OpKind::List).then(|| format!("{bucket}/{key}"))
}

// ---- Swift proxy-server log ----

pub fn looks_like_swift(text: &str) -> bool {
    text.lines().take(50).any(|l| swift_fields(l).is_some())
}

/// The fields from client_ip on: proxy-logging's line has its date as
/// `23/Nov/2026/04/10/07` in third place.
fn swift_fields(line: &str) -> Option<Vec<&str>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let at = f.iter().position(|w| is_swift_date(w))?;
    (at >= 2 && f.len() >= at - 2 + 21).then(|| f[at - 2..].to_vec())
}

fn is_swift_date(w: &str) -> bool {
    let p: Vec<&str> = w.split('/').collect();
    p.len() == 6 && p[1].len() == 3 && p.iter().enumerate().all(|(i, x)| i == 1 || x.bytes().all(|b| b.is_ascii_digit()))
}

pub fn parse_swift(text: &str) -> Result<Trace, String> {
    let mut reqs = Vec::new();
    let mut skipped = 0;
    for (n, line) in text.lines().enumerate() {
        let Some(f) = swift_fields(line) else {
            skipped += !line.trim().is_empty() as u64;
            continue;
        };
        match swift_request(&f).map_err(|e| format!("line {}: {e}", n + 1))? {
            Some(r) => reqs.push(r),
            None => skipped += 1,
        }
    }
    trace(Format::SwiftProxyLog, reqs, skipped)
}

/// client_ip remote_addr datetime method path protocol status referer
/// user_agent auth_token bytes_recvd bytes_sent etag txn headers
/// request_time source log_info start_time end_time policy_index
fn swift_request(f: &[&str]) -> Result<Option<Request>, String> {
    let (method, path, status, source) = (f[3], f[4], f[6], f[16]);
    let num = |s: &str| if s == "-" { Ok(0) } else { s.parse::<u64>().map_err(|_| format!("'{s}' is not a byte count")) };
    if status.parse::<u64>().unwrap_or(999) >= 400 || source != "-" {
        return Ok(None);
    }
    let path = unquote(path.split('?').next().unwrap_or(""));
    let mut parts = path.trim_start_matches('/').splitn(4, '/');
    let (_v1, _account, container, object) = (parts.next(), parts.next(), parts.next(), parts.next());
    let Some(container) = container.filter(|c| !c.is_empty()) else { return Ok(None) };
    let object = object.unwrap_or("");
    let Some(op) = op_of(method, !object.is_empty()) else { return Ok(None) };
    let start: f64 = f[18].parse().map_err(|_| format!("start_time '{}' is not seconds since the epoch", f[18]))?;
    let (recvd, sent) = (num(f[10])?, num(f[11])?);
    let (len, whole) = match op {
        OpKind::Create => (recvd, true),
        OpKind::Read => (sent, true),
        _ => (0, false),
    };
    Ok(Some(Request { start_ns: (start * 1e9) as u64, op, key: key_of(op, container, object), len, whole, size: 0 }))
}

/// proxy-logging quotes paths (%2F, %3F...); a malformed escape is kept as written.
fn unquote(s: &str) -> String {
    crate::units::percent_decode(s).unwrap_or_else(|| s.to_string())
}

// ---- S3 server access log (AWS) ----

pub fn looks_like_s3(text: &str) -> bool {
    text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| {
        let f = s3_fields(l);
        f.len() >= 15 && f[2].starts_with('[') && f[6].starts_with("REST.")
    })
}

/// Fields, with `[...]` and `"..."` each kept as one.
fn s3_fields(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let close = match b[i] {
            b'[' => Some(b']'),
            b'"' => Some(b'"'),
            _ => None,
        };
        let start = i;
        i += 1;
        match close {
            Some(c) => {
                while i < b.len() && b[i] != c {
                    i += 1;
                }
                i = (i + 1).min(b.len());
            }
            None => {
                while i < b.len() && b[i] != b' ' {
                    i += 1;
                }
            }
        }
        out.push(&line[start..i]);
    }
    out
}

pub fn parse_s3(text: &str) -> Result<Trace, String> {
    let mut parsed: Vec<(u64, u64, Request)> = Vec::new();
    let mut skipped = 0;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f = s3_fields(line);
        if f.len() < 15 {
            return Err(format!("line {}: an S3 access log line has at least 15 fields", n + 1));
        }
        let num = |s: &str| if s == "-" { 0 } else { s.parse::<u64>().unwrap_or(0) };
        let method = match f[6].split('.').nth(1) {
            Some(m) if f[6].ends_with(".OBJECT") || f[6] == "REST.GET.BUCKET" => m,
            _ => {
                skipped += 1;
                continue;
            }
        };
        let key = if f[7] == "-" { "" } else { f[7] };
        let Some(op) = op_of(method, !key.is_empty()).filter(|_| num(f[9]) < 400 && !f[8].contains("uploadId=")) else {
            skipped += 1;
            continue;
        };
        let secs = s3_time(f[2]).ok_or_else(|| format!("line {}: '{}' is not a time", n + 1, f[2]))?;
        let (sent, size) = (num(f[11]), num(f[12]));
        let (len, whole) = match op {
            OpKind::Create => (size, true),
            OpKind::Read => (sent, size == 0 || sent >= size),
            _ => (0, false),
        };
        parsed.push((secs, num(f[13]), Request { start_ns: 0, op, key: key_of(op, f[1], key), len, whole, size }));
    }
    spread_seconds(&mut parsed);
    trace(Format::S3AccessLog, parsed.into_iter().map(|p| p.2).collect(), skipped)
}

/// S3 logs stamp requests to the second. Within a second, requests are
/// taken to end evenly spaced in log order (logs are written as requests
/// end), and each to start its total time (ms) earlier, kept inside the
/// second it was stamped with.
fn spread_seconds(reqs: &mut [(u64, u64, Request)]) {
    let mut i = 0;
    while i < reqs.len() {
        let sec = reqs[i].0;
        let n = reqs[i..].iter().take_while(|r| r.0 == sec).count();
        for (k, r) in reqs[i..i + n].iter_mut().enumerate() {
            let end = sec * 1_000_000_000 + (k as u64 * 2 + 1) * 1_000_000_000 / (2 * n as u64);
            let start = end.saturating_sub(r.1 * 1_000_000);
            r.2.start_ns = start.clamp(sec * 1_000_000_000, end);
        }
        i += n;
    }
}

/// `[06/Feb/2019:00:00:38 +0000]` as seconds since the epoch.
fn s3_time(s: &str) -> Option<u64> {
    let s = s.trim_start_matches('[').trim_end_matches(']');
    let (dt, zone) = s.split_once(' ').unwrap_or((s, "+0000"));
    let (date, time) = dt.split_once(':')?;
    let d: Vec<&str> = date.split('/').collect();
    let name = *d.get(1)?;
    let month = MONTHS.iter().position(|m| *m == name)? as u64 + 1;
    let t: Vec<u64> = time.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let days = days_from_civil(d.get(2)?.parse().ok()?, month, d.first()?.parse().ok()?);
    let local = days as i64 * 86_400 + (*t.first()? * 3600 + *t.get(1)? * 60 + *t.get(2)?) as i64;
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let z: i64 = zone.trim_start_matches(['+', '-']).parse().ok()?;
    Some((local - sign * ((z / 100) * 3600 + (z % 100) * 60)) as u64)
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `2026-11-23T04:10:07.123456Z` (or with a space) as ns since the epoch.
fn rfc3339_ns(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' '])?;
    let d: Vec<u64> = date.split('-').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<u64> = hms.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let days = days_from_civil(*d.first()? as i64, *d.get(1)?, *d.get(2)?);
    let secs = days * 86_400 + t.first()? * 3600 + t.get(1)? * 60 + t.get(2)?;
    Some(secs * 1_000_000_000 + super::fraction_ns(frac)?)
}

#[cfg(test)]
mod tests {
    use super::super::Trace;
    use super::*;

    #[test]
    fn rgw_ops_log_lines_become_object_operations() {
        let text = r#"{"bucket":"b","time":"2026-11-23T04:10:07.500000Z","remote_addr":"127.0.0.1","user":"u","operation":"put_obj","uri":"PUT /b/k1 HTTP/1.1","http_status":"200","error_code":"","bytes_sent":0,"bytes_received":4096,"object_size":4096,"total_time":2,"user_agent":"x","referrer":"","object":"k1"}
{"bucket":"b","time":"2026-11-23T04:10:07.600000Z","operation":"get_obj","uri":"GET /b/k1 HTTP/1.1","http_status":"200","bytes_sent":4096,"object_size":4096,"total_time":1}
{"bucket":"b","time":"2026-11-23T04:10:07.700000Z","operation":"get_obj","uri":"GET /k2?versionId=x HTTP/1.1","http_status":"206","bytes_sent":100,"object_size":8192,"total_time":1}
{"bucket":"b","time":"2026-11-23T04:10:07.800000Z","operation":"list_bucket","uri":"GET /b?prefix=x HTTP/1.1","http_status":"200","bytes_sent":300,"object_size":0,"total_time":1}
{"bucket":"b","time":"2026-11-23T04:10:07.900000Z","operation":"get_obj","uri":"GET /b/nope HTTP/1.1","http_status":"404","object":"nope"}
{"bucket":"b","time":"2026-11-23T04:10:08.000000Z","operation":"delete_obj","uri":"DELETE /b/k1 HTTP/1.1","http_status":"204","total_time":1,"object":"k1"}
"#;
        let t = Trace::parse(text).unwrap();
        assert_eq!(t.format, Format::RgwOpsLog);
        let got: Vec<(u64, OpKind, u32, u32, bool)> =
            t.records.iter().map(|r| (r.t_ns / 1_000_000, r.op, r.file, r.len, r.whole)).collect();
        assert_eq!(
            got,
            vec![
                (0, OpKind::Create, 0, 4096, true),
                (100, OpKind::Read, 0, 4096, true),
                (200, OpKind::Read, 1, 100, false),
                (300, OpKind::List, 0, 0, false),
                (500, OpKind::Delete, 0, 0, false),
            ]
        );
        assert_eq!(t.files, vec!["b/k1", "b/k2"]);
        assert_eq!(t.skipped, 1, "the 404");
        let arr = format!("[{}]", text.lines().collect::<Vec<_>>().join(","));
        assert_eq!(Trace::parse(&arr).unwrap().records.len(), 5, "an array of entries reads the same");
    }

    #[test]
    fn swift_proxy_lines_become_object_operations() {
        let text = "\
proxy-server: 127.0.0.1 127.0.0.1 23/Nov/2026/03/54/27 PUT /v1/AUTH_test/c/a%20b HTTP/1.0 201 - - AUTH_tk3f... 65536 - - tx1 - 0.0100 - - 1795406067.700000000 1795406067.710000000 0
proxy-server: 127.0.0.1 127.0.0.1 23/Nov/2026/03/54/27 GET /v1/AUTH_test/c/a%20b HTTP/1.0 200 - - AUTH_tk3f... - 65536 - tx2 - 0.0050 - - 1795406067.720000000 1795406067.725000000 0
proxy-server: 127.0.0.1 127.0.0.1 23/Nov/2026/03/54/27 GET /v1/AUTH_test/c%3Fformat%3Djson HTTP/1.0 200 - - AUTH_tk3f... - 99 - tx3 - 0.0050 - - 1795406067.730000000 1795406067.735000000 0
proxy-server: 127.0.0.1 127.0.0.1 23/Nov/2026/03/54/27 HEAD /v1/AUTH_test/c/a%20b HTTP/1.0 200 - - AUTH_tk3f... - - - tx4 - 0.0050 - - 1795406067.740000000 1795406067.745000000 0
proxy-server: 127.0.0.1 127.0.0.1 23/Nov/2026/03/54/27 GET /v1/AUTH_test/c/seg HTTP/1.0 200 - - AUTH_tk3f... - 10 - tx5 - 0.0050 SLO - 1795406067.741000000 1795406067.745000000 0
proxy-server: 127.0.0.1 127.0.0.1 23/Nov/2026/03/54/27 DELETE /v1/AUTH_test/c HTTP/1.0 204 - - AUTH_tk3f... - - - tx6 - 0.0271 - - 1795406067.750000000 1795406067.770000000 -
proxy-server: SIGTERM received (13241)
";
        let t = Trace::parse(text).unwrap();
        assert_eq!(t.format, Format::SwiftProxyLog);
        let got: Vec<(u64, OpKind, u32)> = t.records.iter().map(|r| (r.t_ns / 1_000_000, r.op, r.len)).collect();
        assert_eq!(got, vec![(0, OpKind::Create, 65536), (20, OpKind::Read, 65536), (30, OpKind::List, 0), (40, OpKind::Stat, 0)]);
        assert_eq!(t.files, vec!["c/a b"]);
        assert_eq!(t.skipped, 3, "the SLO subrequest, the container delete, the non-request line");
    }

    #[test]
    fn s3_access_log_seconds_are_spread_by_total_time() {
        let line = |op: &str, key: &str, sent: &str, size: &str, total: &str, sec: &str| {
            format!(
                "owner bkt [06/Feb/2019:00:00:{sec} +0000] 192.0.2.3 req ID {op} {key} \"GET /bkt/{key} HTTP/1.1\" 200 - {sent} {size} {total} 1 \"-\" \"ua\" - id SigV4 ECDHE AuthHeader host TLSv1.2\n"
            )
        };
        let text = [
            line("REST.PUT.OBJECT", "k", "-", "1000", "400", "38"),
            line("REST.GET.OBJECT", "k", "1000", "1000", "10", "38"),
            line("REST.GET.VERSIONING", "-", "113", "-", "7", "38"),
            line("REST.GET.OBJECT", "k", "10", "1000", "10", "39"),
        ]
        .concat();
        let t = Trace::parse(&text).unwrap();
        assert_eq!(t.format, Format::S3AccessLog);
        let r = &t.records;
        assert_eq!((r[0].op, r[0].len, r[0].whole), (OpKind::Create, 1000, true));
        assert_eq!((r[1].op, r[1].whole), (OpKind::Read, true));
        assert_eq!((r[2].len, r[2].whole), (10, false), "a range: it sent part of the object");
        // Two requests in second 38 end at 250 and 750 ms; the PUT took 400 ms.
        assert_eq!(r[1].t_ns - r[0].t_ns, 740_000_000, "PUT from 0 (250-400 kept in the second), GET from 740 ms");
        assert_eq!(r[2].t_ns, 1_490_000_000);
        assert_eq!(t.skipped, 1);
        assert_eq!(s3_time("[06/Feb/2019:00:00:38 +0000]"), Some(1_549_411_238));
        assert_eq!(s3_time("[06/Feb/2019:01:00:38 +0100]"), Some(1_549_411_238));
        assert_eq!(rfc3339_ns("1970-01-02T00:00:01.5Z"), Some(86_401_500_000_000));
    }
}
