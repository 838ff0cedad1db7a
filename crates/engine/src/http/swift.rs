//! The `swift` engine: objects in a container through the OpenStack Swift
//! API, with v1 authentication (tempauth, swauth, RGW's Swift API) or Keystone
//! v3 (see `swift_auth`). The token is renewed when the server answers 401 and
//! the operation sent once more (its latency includes the renewal: nothing is hidden, and a token expiring
//! mid-run shows as a latency outlier, not as an error). Objects at or above
//! `slo_threshold` are uploaded as Static Large Objects: segments in
//! `<container>_segments`, then the manifest; deletes remove the segments too.
//!
//! Before anything is written: the container is checked and created when
//! missing (then marked with metadata, and removed at the end if the run
//! cleaned up), and objects the job would create must not exist already.
//! Every object written (segments and manifests too) has the content type
//! [`MARK_CONTENT_TYPE`], storbench's mark, which container listings return
//! for each object: a cleanup by prefix removes only objects with it, with
//! no request per object to find out.

use super::creds::{self, SwiftAccess};
use super::swift_auth::{authenticate, unreachable_err, Session};
use super::{exchange_retrying, fetch, lend, Body, Client, Expect, Io, Outcome};
use crate::*;
use bytes::Bytes;
use std::sync::{Arc, RwLock};
use storbench_metrics::IoFailure;
use storbench_workload::ObjectNames;

pub struct SwiftFactory;

const NAME: &str = "swift";
const MARKER_HEADER: &str = "x-container-meta-storbench-created";
/// The content type of every object storbench writes: its mark.
pub const MARK_CONTENT_TYPE: &str = "application/x-storbench";

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "auth",
        kind: Kind::Text,
        default: "",
        help: "auth URL: v1 http://host:8080/auth/v1.0, or Keystone http://host:5000/v3 (default: $ST_AUTH, then $OS_AUTH_URL)",
    },
    OptionInfo {
        name: "cloud",
        kind: Kind::Text,
        default: "",
        help: "Keystone credentials from this clouds.yaml entry (default: $OS_CLOUD; secure.yaml merged)",
    },
    OptionInfo {
        name: "auth_version",
        kind: Kind::Count,
        default: "",
        help: "1 or 3 (default: 3 for $OS_AUTH_URL or a URL ending in /v3, else 1)",
    },
    OptionInfo {
        name: "user",
        kind: Kind::Text,
        default: "",
        help: "v1 account:user (default: $ST_USER); Keystone user name (default: $OS_USERNAME)",
    },
    OptionInfo { name: "key", kind: Kind::Text, default: "", help: "v1 key or Keystone password (default: $ST_KEY / $OS_PASSWORD)" },
    OptionInfo { name: "project", kind: Kind::Text, default: "", help: "Keystone project (default: $OS_PROJECT_NAME)" },
    OptionInfo {
        name: "user_domain",
        kind: Kind::Text,
        default: "",
        help: "Keystone user domain (default: $OS_USER_DOMAIN_NAME, else Default)",
    },
    OptionInfo {
        name: "project_domain",
        kind: Kind::Text,
        default: "",
        help: "Keystone project domain (default: $OS_PROJECT_DOMAIN_NAME, else Default)",
    },
    OptionInfo {
        name: "region",
        kind: Kind::Text,
        default: "",
        help: "Keystone catalog region (default: $OS_REGION_NAME, else the first)",
    },
    OptionInfo {
        name: "interface",
        kind: Kind::Text,
        default: "",
        help: "Keystone catalog interface: public, internal, admin (default: $OS_INTERFACE, else public)",
    },
    OptionInfo {
        name: "storage_url",
        kind: Kind::Text,
        default: "",
        help: "use this storage URL instead of the one authentication returns ($OS_STORAGE_URL)",
    },
    OptionInfo {
        name: "token",
        kind: Kind::Text,
        default: "",
        help: "a token issued beforehand (openstack token issue), used with storage_url instead of authenticating",
    },
    OptionInfo { name: "container", kind: Kind::Text, default: "", help: "container (default storbench; created when missing)" },
    OptionInfo {
        name: "containers",
        kind: Kind::Count,
        default: "",
        help: "spread objects over this many containers <container>_000000.. (default 1: just <container>)",
    },
    OptionInfo {
        name: "slo_threshold",
        kind: Kind::Size,
        default: "",
        help: "objects this large or larger are uploaded as SLO segments (default 0: never)",
    },
    OptionInfo { name: "segment_size", kind: Kind::Size, default: "", help: "SLO segment size (default 8m)" },
];

impl EngineFactory for SwiftFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "OpenStack Swift API over HTTP (hyper, keep-alive, TCP_NODELAY), v1 or Keystone v3 auth"
    }
    fn capabilities(&self) -> Capabilities {
        super::CAPABILITIES
    }
    fn connection_backoff(&self) -> Option<Duration> {
        Some(super::BACKOFF_MAX)
    }
    fn options(&self) -> &'static [OptionInfo] {
        static ALL: std::sync::OnceLock<Vec<OptionInfo>> = std::sync::OnceLock::new();
        super::with_common(OPTIONS, &ALL)
    }
    fn supports(&self, op: OpKind) -> bool {
        super::supports(op)
    }
    fn configure(&self, options: &EngineOptions) -> Result<Arc<dyn EngineConfig>, EngineError> {
        check_known(NAME, self.options(), options)?;
        Ok(Arc::new(SwiftConfig { settings: Settings::from_options(options)?, access: creds::swift(NAME, options)? }))
    }
}

/// Settings and credentials, resolved once for the run; each worker
/// authenticates with them on its own connection.
struct SwiftConfig {
    settings: Settings,
    access: SwiftAccess,
}

impl SwiftConfig {
    /// A runtime and client, and a session on them (authenticating: a
    /// Ctrl-C, `stop`, ends the wait).
    fn connect(&self, stop: &dyn Fn() -> bool) -> Result<(Io, Swift), EngineError> {
        let io = Io::new(NAME, &self.settings.common)?;
        let swift = io.block_or_stop("authenticating", stop, Swift::connect(&io.client, self))?;
        Ok((io, swift))
    }
}

impl EngineConfig for SwiftConfig {
    fn prepare_target(&self, t: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        let (o, prefix) = crate::objects::object_target(NAME, t)?;
        let (io, swift) = self.connect(t.stop)?;
        let created = io.block_or_stop("checking the container", t.stop, swift.prepare(&io.client, o, t.writes))?;
        let containers = &self.settings.containers;
        let place = |k: u64| format!("container '{}'", containers.of(k as u32));
        crate::objects::check_names(NAME, t, &place, &mut |k, name| {
            let url = swift.url(&containers.of(k as u32), Some(name), "");
            Ok(io.block_or_stop("checking object names", t.stop, swift.status(&io.client, "HEAD", &url, &[]))?.0 == 200)
        })?;
        let label = format!("swift:{}/{}/{prefix}*{}", swift.storage_url(), containers.describe(), self.settings.common.tls_note());
        Ok(Some(StoreTarget { created, ..StoreTarget::new(0, 1, label) }))
    }
    fn room(&self) -> Result<Option<Room>, EngineError> {
        let (io, swift) = self.connect(&|| false)?;
        io.block_on(swift.room(&io.client))
    }
    fn finish_target(&self, t: &TargetRequest, cleaned_up: bool) -> Result<Option<String>, EngineError> {
        if !cleaned_up {
            return Ok(None);
        }
        let (io, swift) = self.connect(t.stop)?;
        io.block_or_stop("removing the container", t.stop, swift.remove_container_if_ours(&io.client, t.object_prefix))
    }
    fn remove_objects(&self, prefix: &str, which: Which, stop: &dyn Fn() -> bool) -> Result<Removed, EngineError> {
        let (io, swift) = self.connect(stop)?;
        let swift = Arc::new(swift);
        let c = &self.settings.containers;
        let mut tally = Removed::default();
        // Segments of large objects are named after their object, so the
        // prefix finds them in the segments container too.
        for name in c.all().into_iter().chain(std::iter::once(format!("{}_segments", c.base))) {
            match io.block_or_stop("removing objects", stop, remove_prefixed(&swift, &io.client, &name, prefix, which, stop, &mut tally)) {
                // Deletes in flight are cancelled: they may or may not have happened.
                Err(e) if e.is_interrupted() => tally.stopped = true,
                r => r?,
            }
            if tally.stopped {
                break;
            }
        }
        Ok(tally)
    }
    fn allocated(&self) -> Result<Option<u64>, EngineError> {
        let (io, swift) = self.connect(&|| false)?;
        let mut total = 0;
        for c in self.settings.containers.all() {
            let req = swift.request("HEAD", &swift.url(&c, None, ""), &[], Bytes::new())?;
            let used = match io.block_on(super::fetch_or_why(&io.client, req, swift.settings.common.op_timeout)) {
                Ok((p, _)) => p.headers.get("x-container-bytes-used").and_then(|v| v.to_str().ok()?.parse::<u64>().ok()),
                Err(_) => None,
            };
            let Some(used) = used else { return Ok(None) };
            total += used;
        }
        Ok(Some(total))
    }
    fn list_names(&self, prefix: &str) -> Result<Option<Vec<String>>, EngineError> {
        let (io, swift) = self.connect(&|| false)?;
        let mut all = Vec::new();
        for c in self.settings.containers.all() {
            all.extend(io.block_on(list_all(&swift, &io.client, &c, prefix))?);
        }
        Ok(Some(all))
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let (io, swift) = self.connect(setup.stop)?;
        let names = setup.object_names.cloned().unwrap_or_else(|| ObjectNames::new("", None));
        Ok(Box::new(SwiftEngine {
            swift: Arc::new(swift),
            io,
            names,
            buffers: setup.buffers,
            keep_reads: setup.keep_reads,
            refused: Vec::new(),
            cursor: Default::default(),
        }))
    }
}

#[derive(Clone, Debug)]
struct Settings {
    containers: super::Places,
    slo_threshold: u64,
    segment_size: u64,
    common: super::Common,
}

impl Settings {
    fn from_options(o: &EngineOptions) -> Result<Settings, EngineError> {
        Ok(Settings {
            containers: super::Places::from_options(NAME, o, "container", "containers", '_')?,
            slo_threshold: super::size_option(NAME, o, "slo_threshold", 0, false)?,
            segment_size: super::size_option(NAME, o, "segment_size", 8 << 20, true)?,
            common: super::Common::from_options(NAME, o)?,
        })
    }
}

/// Access to one account: settings, credentials, the current session.
struct Swift {
    access: SwiftAccess,
    settings: Settings,
    session: RwLock<Session>,
}

impl Swift {
    async fn connect(client: &Client, cfg: &SwiftConfig) -> Result<Swift, EngineError> {
        let session = authenticate(client, &cfg.access, cfg.settings.common.op_timeout).await?;
        Ok(Swift { access: cfg.access.clone(), settings: cfg.settings.clone(), session: RwLock::new(session) })
    }

    fn storage_url(&self) -> String {
        self.session.read().unwrap_or_else(|e| e.into_inner()).storage_url.clone()
    }

    fn url(&self, container: &str, key: Option<&str>, query: &str) -> String {
        let mut u = self.storage_url();
        u.push('/');
        super::encode_key(container, &mut u);
        if let Some(k) = key {
            u.push('/');
            super::encode_key(k, &mut u);
        }
        if !query.is_empty() {
            u.push('?');
            u.push_str(query);
        }
        u
    }

    fn request(&self, method: &str, url: &str, headers: &[(&str, &str)], body: Bytes) -> Result<::http::Request<Body>, EngineError> {
        let token = self.session.read().unwrap_or_else(|e| e.into_inner()).token.clone();
        let mut b = ::http::Request::builder().method(method).uri(url).header("x-auth-token", token);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        if method == "PUT" || method == "POST" {
            b = b.header(::http::header::CONTENT_LENGTH, body.len());
        }
        b.body(Body::new(body)).map_err(|e| EngineError::failed(NAME, format!("bad request URL {url}"), e))
    }

    /// Send the request `make` builds (again after retryable failures, when
    /// retries are asked for); on 401 renew the token once and resend.
    /// Returns the reply and the number of resends after failures.
    async fn send(
        &self,
        client: &Client,
        make: impl Fn(&Swift) -> Result<::http::Request<Body>, EngineError> + Send + Sync,
        expect: Expect,
    ) -> (super::Reply, u32) {
        let build = || make(self).ok();
        let (limit, retries) = (self.settings.common.op_timeout, self.settings.common.retries);
        let (reply, n) = exchange_retrying(client, &build, expect, limit, retries).await;
        if reply.result != Err(IoFailure::http(401)) {
            return (reply, n);
        }
        match authenticate(client, &self.access, limit).await {
            Ok(s) => *self.session.write().unwrap_or_else(|e| e.into_inner()) = s,
            Err(_) => return (reply, n),
        }
        let (reply, more) = exchange_retrying(client, &build, expect, limit, retries).await;
        (reply, n + more)
    }

    async fn status(
        &self,
        client: &Client,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<(u16, ::http::HeaderMap), EngineError> {
        let req = self.request(method, url, headers, Bytes::new())?;
        match super::fetch_or_why(client, req, self.settings.common.op_timeout).await {
            Ok((p, _)) => Ok((p.status.as_u16(), p.headers)),
            Err(f) => Err(unreachable_err(url, f)),
        }
    }

    /// Containers there (created when the job writes), segments container
    /// for SLO; returns those it created.
    async fn prepare(&self, client: &Client, o: &ObjectSpec, writes: bool) -> Result<Vec<String>, EngineError> {
        let mut created = Vec::new();
        for c in self.settings.containers.all() {
            match self.status(client, "HEAD", &self.url(&c, None, ""), &[]).await?.0 {
                200 | 204 => {}
                404 if writes => {
                    self.put_container(client, &c).await?;
                    created.push(format!("container '{c}'"));
                }
                404 => {
                    return Err(EngineError::BadOption {
                        engine: NAME,
                        option: "container".into(),
                        message: format!("container '{c}' does not exist"),
                    })
                }
                s => return Err(rejected(format!("HEAD container '{c}' answered HTTP {s}"), s)),
            }
        }
        let c = &self.settings.containers.base;
        if o.sizes.max() >= self.settings.slo_threshold && self.settings.slo_threshold > 0 {
            let seg = format!("{c}_segments");
            if self.status(client, "HEAD", &self.url(&seg, None, ""), &[]).await?.0 == 404 {
                self.put_container(client, &seg).await?;
                created.push(format!("container '{seg}'"));
            }
        }
        Ok(created)
    }

    /// The room the account's and the containers' quotas leave (Swift's
    /// account_quotas and container_quotas metadata; RGW's Swift API shows
    /// its user and bucket quotas the same way). Objects spread evenly over
    /// the containers, so the tightest one sets what all can take.
    async fn room(&self, client: &Client) -> Result<Option<Room>, EngineError> {
        let storage = self.storage_url();
        let (status, account) = self.status(client, "HEAD", &storage, &[]).await?;
        let mut room = Quota::default();
        if (200..300).contains(&status) {
            room.take(&account, "account", "the account's quota", 1);
        }
        let all = self.settings.containers.all();
        for c in &all {
            let (status, h) = self.status(client, "HEAD", &self.url(c, None, ""), &[]).await?;
            if (200..300).contains(&status) {
                room.take(&h, "container", &format!("container '{c}''s quota"), all.len() as u64);
            }
        }
        Ok(room.into_room())
    }

    async fn put_container(&self, client: &Client, name: &str) -> Result<(), EngineError> {
        match self.status(client, "PUT", &self.url(name, None, ""), &[(MARKER_HEADER, "1")]).await?.0 {
            201 | 202 | 204 => Ok(()),
            s => Err(rejected(format!("creating container '{name}' answered HTTP {s}"), s)),
        }
    }

    /// The first object name in container `c` (for a note), if listing works.
    async fn first_name(&self, client: &Client, c: &str) -> Option<String> {
        let req = self.request("GET", &self.url(c, None, "format=json&limit=1"), &[], Bytes::new()).ok()?;
        let (_, body) = fetch(client, req, self.settings.common.op_timeout).await.ok()?;
        let names: Vec<serde_json::Value> = serde_json::from_slice(&body).ok()?;
        names.first()?["name"].as_str().map(String::from)
    }

    /// Remove the container (and its segments container) if storbench created
    /// it and it is empty.
    async fn remove_container_if_ours(&self, client: &Client, prefix: Option<&str>) -> Result<Option<String>, EngineError> {
        let c = self.settings.containers.base.clone();
        for name in std::iter::once(format!("{c}_segments")).chain(self.settings.containers.all()) {
            let (status, headers) = self.status(client, "HEAD", &self.url(&name, None, ""), &[]).await?;
            if status == 404 || !headers.contains_key(MARKER_HEADER) {
                continue;
            }
            if headers.get("x-container-object-count").and_then(|v| v.to_str().ok()) != Some("0") {
                let first = self.first_name(client, &name).await.unwrap_or_default();
                return Ok(Some(super::kept_note(&format!("container '{name}'"), &first, prefix)));
            }
            let s = self.status(client, "DELETE", &self.url(&name, None, ""), &[]).await?.0;
            if !matches!(s, 204 | 404) {
                return Ok(Some(format!("removing container '{name}' answered HTTP {s}")));
            }
        }
        Ok(None)
    }
}

/// Per-worker engine.
struct SwiftEngine {
    swift: Arc<Swift>,
    io: Io,
    names: ObjectNames,
    buffers: Buffers,
    /// GET bodies go into the slot (verification), not only counted.
    keep_reads: bool,
    refused: Vec<Completion>,
    cursor: super::ListCursor,
}

impl SwiftEngine {
    #[allow(clippy::too_many_arguments)]
    fn spawn_op(&mut self, slot: u32, method: &'static str, c: String, key: String, query: String, range: Option<String>, expect: Expect) {
        let (swift, client) = (self.swift.clone(), self.io.client.clone());
        self.io.spawn(slot, async move {
            let make = |s: &Swift| {
                let url = s.url(&c, (!key.is_empty()).then_some(key.as_str()), &query);
                let headers: Vec<(&str, &str)> = range.as_deref().map(|r| ("range", r)).into_iter().collect();
                s.request(method, &url, &headers, Bytes::new())
            };
            let (r, retries) = swift.send(&client, make, expect).await;
            Outcome { result: r.result, tail_ns: r.tail_ns, retries }
        });
    }

    /// One page (1000 names) of the container listing under the job's prefix,
    /// continuing after the last name of this worker's previous page.
    fn spawn_list(&mut self, slot: u32, c: String) {
        const PAGE: usize = 1000;
        let (swift, client, cursor) = (self.swift.clone(), self.io.client.clone(), self.cursor.clone());
        let prefix = super::encode_query(&self.names.prefix);
        self.io.spawn(slot, async move {
            let marker = cursor.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let mut q = format!("format=json&limit={PAGE}&prefix={prefix}");
            if let Some(m) = marker {
                q.push_str("&marker=");
                q.push_str(&super::encode_query(&m));
            }
            let Ok(req) = swift.request("GET", &swift.url(&c, None, &q), &[], Bytes::new()) else {
                return Outcome::of(Err(super::UNBUILDABLE));
            };
            match fetch(&client, req, swift.settings.common.op_timeout).await {
                Ok((p, body)) if p.status.is_success() => {
                    let names: Vec<serde_json::Value> = serde_json::from_slice(&body).unwrap_or_default();
                    let last = names.last().and_then(|n| n["name"].as_str()).map(str::to_string);
                    *cursor.lock().unwrap_or_else(|e| e.into_inner()) = last.filter(|_| names.len() == PAGE);
                    Outcome::of(Ok(body.len() as u64))
                }
                Ok((p, _)) => Outcome::of(Err(IoFailure::http(p.status.as_u16()))),
                Err(f) => Outcome::of(Err(f)),
            }
        });
    }

    fn spawn_put(&mut self, slot: u32, c: String, key: String, len: u32) {
        let (swift, client) = (self.swift.clone(), self.io.client.clone());
        let base = self.buffers.slot(slot) as usize;
        self.io.spawn(slot, async move {
            if swift.settings.slo_threshold > 0 && len as u64 >= swift.settings.slo_threshold {
                return Outcome::of(slo_put(&swift, &client, &c, &key, base, len as u64).await);
            }
            let (result, _, retries) = put_part(&swift, &client, &c, &key, base, len as u64, "").await;
            Outcome { result, tail_ns: 0, retries }
        });
    }
}

/// The least room Swift's quota metadata leaves, and whose quota it is.
#[derive(Default)]
struct Quota {
    bytes: Option<(u64, String)>,
    objects: Option<u64>,
}

impl Quota {
    /// Take `X-<level>-Meta-Quota-Bytes`/`-Count` less what is used
    /// (`X-<level>-Bytes-Used`, `-Object-Count`), times `spread` (objects
    /// spread evenly over that many containers).
    fn take(&mut self, h: &::http::HeaderMap, level: &str, source: &str, spread: u64) {
        let num = |k: String| h.get(k).and_then(|v| v.to_str().ok()?.trim().parse::<i64>().ok()).filter(|v| *v >= 0).map(|v| v as u64);
        let used = num(format!("x-{level}-bytes-used")).unwrap_or(0);
        let count = num(format!("x-{level}-object-count")).unwrap_or(0);
        if let Some(q) = num(format!("x-{level}-meta-quota-bytes")) {
            let left = q.saturating_sub(used).saturating_mul(spread);
            if self.bytes.as_ref().is_none_or(|(least, _)| left < *least) {
                self.bytes = Some((left, source.to_string()));
            }
        }
        if let Some(q) = num(format!("x-{level}-meta-quota-count")) {
            let left = q.saturating_sub(count).saturating_mul(spread);
            self.objects = Some(self.objects.map_or(left, |least| least.min(left)));
        }
    }

    fn into_room(self) -> Option<Room> {
        if self.bytes.is_none() && self.objects.is_none() {
            return None;
        }
        let source = self.bytes.as_ref().map_or_else(|| "the object-count quota".to_string(), |(_, s)| s.clone());
        Some(Room { bytes: self.bytes.map(|(b, _)| b), objects: self.objects, source })
    }
}

/// The header that marks an object as storbench's.
const MARK: &[(&str, &str)] = &[("content-type", MARK_CONTENT_TYPE)];

/// PUT `len` bytes from the slot at `base`, lent rather than copied (every
/// attempt sends a clone of the same body). Returns the result, the ETag and
/// the resends.
async fn put_part(
    swift: &Swift,
    client: &Client,
    container: &str,
    key: &str,
    base: usize,
    len: u64,
    query: &str,
) -> (Result<u64, IoFailure>, Option<String>, u32) {
    // SAFETY: the slot is not reused before this operation completes, which
    // waits below until hyper has dropped every clone of the body.
    let (body, released) = unsafe { lend(base as *const u8, len as usize) };
    let (super::Reply { result, head, .. }, retries) = {
        let make = |s: &Swift| s.request("PUT", &s.url(container, Some(key), query), MARK, body.clone());
        swift.send(client, make, Expect::Sent(len)).await
    };
    drop(body);
    let _ = released.await;
    let etag = head.as_ref().and_then(|h| h.headers().get("etag")).and_then(|v| v.to_str().ok()).map(|e| e.trim_matches('"').to_string());
    (result, etag, retries)
}

/// A Static Large Object: segments one after another, then the manifest.
async fn slo_put(swift: &Swift, client: &Client, c: &str, key: &str, base: usize, len: u64) -> Result<u64, IoFailure> {
    let seg_container = format!("{}_segments", swift.settings.containers.base);
    let mut manifest = Vec::new();
    let (mut off, mut n) = (0u64, 0);
    while off < len {
        let size = swift.settings.segment_size.min(len - off);
        let seg = format!("{key}/seg/{n:08}");
        let (result, etag, _) = put_part(swift, client, &seg_container, &seg, base + off as usize, size, "").await;
        result?;
        let etag = etag.ok_or(IoFailure::errno(libc::EBADMSG))?;
        manifest.push(serde_json::json!({ "path": format!("/{seg_container}/{seg}"), "etag": etag, "size_bytes": size }));
        off += size;
        n += 1;
    }
    let body = Bytes::from(serde_json::to_vec(&manifest).unwrap_or_default());
    let make = |s: &Swift| s.request("PUT", &s.url(c, Some(key), "multipart-manifest=put"), MARK, body.clone());
    swift.send(client, make, Expect::Sent(len)).await.0.result.map(|_| len)
}

/// Remove the objects of container `c` whose names start with `prefix`, a
/// listing page at a time (a container that is not there holds none).
async fn remove_prefixed(
    swift: &Arc<Swift>,
    client: &Client,
    c: &str,
    prefix: &str,
    which: Which,
    stop: &dyn Fn() -> bool,
    tally: &mut Removed,
) -> Result<(), EngineError> {
    let mut marker: Option<String> = None;
    while !tally.stopped {
        let Some((listed, full)) = list_page(swift, client, c, prefix, marker.as_deref()).await? else { return Ok(()) };
        marker = listed.last().map(|l| l.name.clone());
        let (ours, theirs): (Vec<Listed>, Vec<Listed>) = listed.into_iter().partition(|l| which == Which::All || l.marked);
        tally.kept += theirs.len() as u64;
        let urls = ours.iter().map(|l| swift.url(c, Some(&l.name), "")).collect();
        let (sw, cl) = (swift.clone(), client.clone());
        let delete = move |url: String| {
            let (swift, client) = (sw.clone(), cl.clone());
            async move {
                let req = swift.request("DELETE", &url, &[], Bytes::new()).map_err(|e| e.to_string())?;
                match fetch(&client, req, swift.settings.common.op_timeout).await {
                    Ok((p, _)) if p.status.is_success() || p.status == 404 => Ok(Removal::Removed),
                    Ok((p, _)) => Err(format!("DELETE {url} answered HTTP {}", p.status.as_u16())),
                    Err(f) => Err(format!("DELETE {url}: {f}")),
                }
            }
        };
        super::remove_each(urls, stop, delete, tally).await;
        if !full {
            return Ok(());
        }
    }
    Ok(())
}

/// Every object in container `c` starting with `prefix`.
async fn list_all(swift: &Swift, client: &Client, c: &str, prefix: &str) -> Result<Vec<String>, EngineError> {
    let (mut all, mut marker) = (Vec::new(), None::<String>);
    while let Some((listed, full)) = list_page(swift, client, c, prefix, marker.as_deref()).await? {
        marker = listed.last().map(|l| l.name.clone());
        all.extend(listed.into_iter().map(|l| l.name));
        if !full {
            break;
        }
    }
    Ok(all)
}

/// An object in a listing, and whether it carries storbench's mark.
struct Listed {
    name: String,
    marked: bool,
}

/// One page (1000 names) of container `c` under `prefix` after `marker`,
/// and whether it was full (more may follow); `None` when there is no container.
async fn list_page(
    swift: &Swift,
    client: &Client,
    c: &str,
    prefix: &str,
    marker: Option<&str>,
) -> Result<Option<(Vec<Listed>, bool)>, EngineError> {
    const PAGE: usize = 1000;
    let mut q = format!("format=json&limit={PAGE}&prefix={}", super::encode_query(prefix));
    if let Some(m) = marker {
        q.push_str("&marker=");
        q.push_str(&super::encode_query(m));
    }
    let url = swift.url(c, None, &q);
    let (status, body) =
        match super::fetch_or_why(client, swift.request("GET", &url, &[], Bytes::new())?, swift.settings.common.op_timeout).await {
            Ok((p, body)) => (p.status.as_u16(), body),
            Err(f) => return Err(unreachable_err(&url, f)),
        };
    match status {
        200 => {}
        204 | 404 => return Ok(None),
        s => return Err(rejected(format!("listing container '{c}' answered HTTP {s}"), s)),
    }
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&body).unwrap_or_default();
    let names = listed
        .iter()
        .filter_map(|n| Some(Listed { name: n["name"].as_str()?.to_string(), marked: marked(n["content_type"].as_str()) }))
        .filter(|l| l.name.starts_with(prefix))
        .collect();
    Ok(Some((names, listed.len() == PAGE)))
}

/// Whether a listed content type is storbench's mark (a large object's may
/// carry parameters after it, `;swift_bytes=...`).
fn marked(content_type: Option<&str>) -> bool {
    content_type.and_then(|t| t.split(';').next()).is_some_and(|t| t.trim().eq_ignore_ascii_case(MARK_CONTENT_TYPE))
}

/// The store answered a set-up request with this status.
fn rejected(message: String, status: u16) -> EngineError {
    EngineError::Rejected { engine: NAME, message, kind: storbench_metrics::ErrorKind::of_http(status) }
}

impl Engine for SwiftEngine {
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let key = self.names.name(req.file as u64);
        let slo = self.swift.settings.slo_threshold > 0;
        let c = self.swift.settings.containers.of(req.file);
        match req.op {
            OpKind::Create | OpKind::Update => self.spawn_put(req.slot, c, key, req.len),
            OpKind::Read => {
                // Whole objects are read without a byte range, as clients do.
                let range = (!req.whole && req.len > 0).then(|| format!("bytes={}-{}", req.offset, req.offset + req.len as u64 - 1));
                let expect = Expect::read_into(self.keep_reads, &self.buffers, req.slot);
                self.spawn_op(req.slot, "GET", c, key, String::new(), range, expect)
            }
            OpKind::Stat => self.spawn_op(req.slot, "HEAD", c, key, String::new(), None, Expect::Received),
            // With SLO in use, a manifest's delete also removes its segments.
            OpKind::Delete => {
                let q = if slo { "multipart-manifest=delete".to_string() } else { String::new() };
                self.spawn_op(req.slot, "DELETE", c, key, q, None, Expect::Received)
            }
            OpKind::List => self.spawn_list(req.slot, c),
            OpKind::Write | OpKind::Sync | OpKind::Trim | OpKind::Truncate => {
                self.refused.push(Completion::new(req.slot, Err(IoFailure::errno(libc::EOPNOTSUPP))))
            }
        }
        Ok(())
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<std::time::Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let got = self.refused.len() as u32;
        out.append(&mut self.refused);
        self.io.reap(min.saturating_sub(got), timeout, out);
        Ok(())
    }

    fn abandon(&mut self) -> bool {
        self.refused.clear();
        self.io.abandon()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storbenchs_content_type_is_its_mark_with_or_without_parameters() {
        assert!(marked(Some("application/x-storbench")));
        assert!(marked(Some("application/x-storbench;swift_bytes=1048576")));
        assert!(!marked(Some("application/octet-stream")));
        assert!(!marked(None));
    }

    #[test]
    fn quotas_leave_the_least_room_of_account_and_containers() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = ::http::HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().unwrap());
            }
            h
        };
        let mut q = Quota::default();
        q.take(&headers(&[("x-account-bytes-used", "100")]), "account", "the account's quota", 1);
        assert!(q.bytes.is_none() && q.objects.is_none(), "no quota metadata: no limit");
        q.take(&headers(&[("x-account-bytes-used", "100"), ("x-account-meta-quota-bytes", "1000")]), "account", "the account's quota", 1);
        let c =
            headers(&[("x-container-bytes-used", "50"), ("x-container-meta-quota-bytes", "300"), ("x-container-meta-quota-count", "4")]);
        q.take(&c, "container", "container 'c''s quota", 2);
        let room = q.into_room().unwrap();
        assert_eq!((room.bytes, room.objects), (Some(500), Some(8)));
        assert!(room.source.contains("container 'c'"), "{}", room.source);
    }
}
