//! A tiny object store a test runs on 127.0.0.1: S3 (path-style buckets)
//! and Swift (v1 auth, JSON listings) over HTTP/1.1 keep-alive, objects
//! kept as sizes in memory. It answers as a store does until told to
//! [`Store::hang`]: from then on it accepts connections and reads requests
//! but never answers, holding every connection open (a server that stops
//! answering, which a killed one does not show).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Swift's account path, as its auth answer gives it.
const ACCOUNT: &str = "/v1/AUTH_test";

#[derive(Default)]
struct State {
    /// Containers (buckets) and their metadata headers.
    containers: BTreeMap<String, Vec<(String, String)>>,
    /// "container/key" -> size.
    objects: BTreeMap<String, usize>,
}

pub struct Store {
    pub port: u16,
    hung: Arc<AtomicBool>,
    state: Arc<Mutex<State>>,
}

/// One request: method, path (decoded enough for our names), query, headers.
struct Request {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    headers: BTreeMap<String, String>,
}

impl Store {
    pub fn start() -> Store {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let (hung, state) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(State::default())));
        let (h, s) = (hung.clone(), state.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().map_while(Result::ok) {
                let (h, s) = (h.clone(), s.clone());
                std::thread::spawn(move || serve(conn, &h, &s));
            }
        });
        Store { port, hung, state }
    }

    /// Stop answering, for good.
    pub fn hang(&self) {
        self.hung.store(true, Ordering::Relaxed);
    }

    /// Names of the objects in `container` starting with `prefix`.
    pub fn objects(&self, container: &str, prefix: &str) -> Vec<String> {
        let st = self.state.lock().unwrap();
        let head = format!("{container}/{prefix}");
        st.objects.keys().filter(|k| k.starts_with(&head)).map(|k| k[container.len() + 1..].to_string()).collect()
    }

    /// The S3 engine's settings for this store.
    pub fn s3_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port)),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "testsecret".into()),
        ]
    }

    /// The Swift engine's settings for this store.
    pub fn swift_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("ST_AUTH", format!("http://127.0.0.1:{}/auth/v1.0", self.port)),
            ("ST_USER", "test:tester".into()),
            ("ST_KEY", "testing".into()),
        ]
    }
}

/// Answer one connection's requests until it closes (or, hung, read and drop them).
fn serve(conn: TcpStream, hung: &AtomicBool, state: &Mutex<State>) {
    let port = conn.local_addr().map(|a| a.port()).unwrap_or(0);
    let mut out = conn.try_clone().expect("clone");
    let mut r = BufReader::new(conn);
    while let Some(req) = read_request(&mut r) {
        if hung.load(Ordering::Relaxed) {
            continue;
        }
        let (status, headers, body) = answer(&req, port, &mut state.lock().unwrap());
        let mut head = format!("HTTP/1.1 {status} X\r\n");
        for (k, v) in &headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let len = headers.iter().find(|h| h.0 == "content-length").map_or(body.len(), |h| h.1.parse().unwrap());
        if !headers.iter().any(|h| h.0 == "content-length") {
            head.push_str(&format!("content-length: {len}\r\n"));
        }
        head.push_str("\r\n");
        let body = if req.method == "HEAD" { Vec::new() } else { body };
        if out.write_all(head.as_bytes()).and_then(|_| out.write_all(&body)).is_err() {
            return;
        }
    }
}

/// The next request (its body read and dropped); None when the connection ends.
fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let (method, target) = (words.next()?.to_string(), words.next()?.to_string());
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: u64 = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    std::io::copy(&mut r.by_ref().take(len), &mut std::io::sink()).ok()?;
    let (path, q) = target.split_once('?').unwrap_or((&target, ""));
    let query = q.split('&').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), unescape(v))).collect();
    Some(Request { method, path: unescape(path), query, headers })
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

type Answer = (u16, Vec<(String, String)>, Vec<u8>);

fn answer(req: &Request, port: u16, st: &mut State) -> Answer {
    if req.path == "/auth/v1.0" {
        let h = vec![
            ("x-storage-url".to_string(), format!("http://127.0.0.1:{port}{ACCOUNT}")),
            ("x-auth-token".to_string(), "AUTH_tk".to_string()),
        ];
        return (200, h, Vec::new());
    }
    let swift = req.path.starts_with(ACCOUNT);
    let rest = req.path.strip_prefix(ACCOUNT).unwrap_or(&req.path).trim_start_matches('/');
    let (container, key) = match rest.split_once('/') {
        Some((c, k)) if !k.is_empty() => (c.to_string(), Some(k.to_string())),
        _ => (rest.trim_end_matches('/').to_string(), None),
    };
    match key {
        None => container_op(req, swift, &container, st),
        Some(k) => object_op(req, swift, &format!("{container}/{k}"), st),
    }
}

fn container_op(req: &Request, swift: bool, c: &str, st: &mut State) -> Answer {
    let count = st.objects.keys().filter(|k| k.starts_with(&format!("{c}/"))).count();
    match (req.method.as_str(), st.containers.contains_key(c)) {
        ("HEAD", true) => {
            let mut h = st.containers[c].clone();
            h.push(("x-container-object-count".into(), count.to_string()));
            (if swift { 204 } else { 200 }, h, Vec::new())
        }
        ("HEAD", false) | ("GET", false) | ("DELETE", false) => (404, Vec::new(), Vec::new()),
        ("PUT", _) => {
            let meta = req.headers.iter().filter(|(k, _)| k.starts_with("x-container-meta-")).map(|(k, v)| (k.clone(), v.clone()));
            st.containers.insert(c.to_string(), meta.collect());
            (if swift { 201 } else { 200 }, Vec::new(), Vec::new())
        }
        ("DELETE", true) if count > 0 => (409, Vec::new(), Vec::new()),
        ("DELETE", true) => {
            st.containers.remove(c);
            (204, Vec::new(), Vec::new())
        }
        ("GET", true) => listing(req, swift, c, st),
        _ => (405, Vec::new(), Vec::new()),
    }
}

/// One page of names under `prefix` (everything fits on one here).
fn listing(req: &Request, swift: bool, c: &str, st: &State) -> Answer {
    let prefix = req.query.get("prefix").cloned().unwrap_or_default();
    let names: BTreeSet<&str> =
        st.objects.keys().filter_map(|k| k.strip_prefix(&format!("{c}/"))).filter(|n| n.starts_with(&prefix)).collect();
    let after = req.query.get("marker").cloned().unwrap_or_default();
    let names: Vec<&str> = names.into_iter().filter(|n| *n > after.as_str()).collect();
    if swift {
        let json: Vec<String> = names.iter().map(|n| format!("{{\"name\":\"{n}\",\"bytes\":0}}")).collect();
        return (200, vec![("content-type".into(), "application/json".into())], format!("[{}]", json.join(",")).into_bytes());
    }
    let keys: String = names.iter().map(|n| format!("<Contents><Key>{n}</Key><Size>0</Size></Contents>")).collect();
    let body = format!("<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>false</IsTruncated>{keys}</ListBucketResult>");
    (200, vec![("content-type".into(), "application/xml".into())], body.into_bytes())
}

fn object_op(req: &Request, swift: bool, name: &str, st: &mut State) -> Answer {
    let size = st.objects.get(name).copied();
    match (req.method.as_str(), size) {
        ("PUT", _) => {
            let len = req.headers.get("x-amz-decoded-content-length").or(req.headers.get("content-length"));
            st.objects.insert(name.to_string(), len.and_then(|l| l.parse().ok()).unwrap_or(0));
            (if swift { 201 } else { 200 }, vec![("etag".into(), "\"0\"".into())], Vec::new())
        }
        ("GET", Some(n)) => (200, Vec::new(), vec![0u8; n]),
        ("HEAD", Some(n)) => (200, vec![("content-length".into(), n.to_string())], Vec::new()),
        ("DELETE", Some(_)) => {
            st.objects.remove(name);
            (204, Vec::new(), Vec::new())
        }
        _ => (404, Vec::new(), Vec::new()),
    }
}
