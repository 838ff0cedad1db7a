//! The `s3` engine: objects in a bucket through the S3 API, SigV4-signed
//! (UNSIGNED-PAYLOAD unless `payload=signed`, or aws-chunked with every chunk
//! signed for `payload=streaming`), path-style or virtual-host
//! addressing. Create/update are PUTs (multipart above `multipart_threshold`,
//! in `part_size` parts), reads are GETs (ranged for partial reads), stat is HEAD, delete is
//! DELETE, list is one page of ListObjectsV2 under the job's prefix.
//!
//! Before anything is written: credentials and endpoint are resolved (options,
//! then AWS_* variables, then ~/.aws files), the bucket is checked and created
//! when missing (then marked with an object, and removed at the end if the run
//! cleaned up), and objects the job would create must not exist already.
//! Every object written carries the user metadata [`MARK_HEADER`] (one
//! header, signed with the rest); a cleanup by prefix HEADs each object and
//! removes only those with it (S3 listings carry no metadata).

use super::chunked;
use super::creds::{self, S3Access};
use super::{exchange, exchange_retrying, fetch, lend, Body, Expect, Io, Outcome};
use crate::*;
use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, UriPathNormalizationMode,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use bytes::Bytes;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use storbench_metrics::IoFailure;
use storbench_workload::ObjectNames;

pub struct S3Factory;

const NAME: &str = "s3";
/// Marks a bucket storbench created (and may therefore remove).
const BUCKET_MARKER: &str = ".storbench-created-this-bucket";
/// User metadata every object storbench writes carries (a HEAD shows it):
/// `storbench cleanup` removes only objects with it, unless --force.
pub const MARK_HEADER: &str = "x-amz-meta-storbench";
const MARK_VALUE: &str = "written";

const OPTIONS: &[OptionInfo] = &[
    OptionInfo { name: "endpoint", kind: Kind::Text, default: "", help: "http://host:port (default: $AWS_ENDPOINT_URL)" },
    OptionInfo { name: "region", kind: Kind::Text, default: "", help: "signing region (default: $AWS_REGION or us-east-1)" },
    OptionInfo { name: "bucket", kind: Kind::Text, default: "", help: "bucket (default storbench; created when missing)" },
    OptionInfo {
        name: "buckets",
        kind: Kind::Count,
        default: "",
        help: "spread objects over this many buckets <bucket>-000000.. (default 1: just <bucket>)",
    },
    OptionInfo {
        name: "access_key",
        kind: Kind::Text,
        default: "",
        help: "access key id (default: $AWS_ACCESS_KEY_ID or ~/.aws/credentials)",
    },
    OptionInfo {
        name: "secret_key",
        kind: Kind::Text,
        default: "",
        help: "secret key (default: $AWS_SECRET_ACCESS_KEY or ~/.aws/credentials)",
    },
    OptionInfo { name: "session_token", kind: Kind::Text, default: "", help: "session token (default: $AWS_SESSION_TOKEN)" },
    OptionInfo { name: "profile", kind: Kind::Text, default: "", help: "profile in ~/.aws/credentials (default: $AWS_PROFILE or default)" },
    OptionInfo { name: "addressing", kind: Kind::Text, default: "", help: "path (default) or virtual (bucket.host)" },
    OptionInfo {
        name: "payload",
        kind: Kind::Text,
        default: "",
        help:
            "unsigned (default, UNSIGNED-PAYLOAD), signed (SHA-256 of every body) or streaming (aws-chunked PUT bodies, each chunk signed)",
    },
    OptionInfo { name: "chunk_size", kind: Kind::Size, default: "", help: "chunk size of payload=streaming (default 64k, at least 8k)" },
    OptionInfo {
        name: "multipart_threshold",
        kind: Kind::Size,
        default: "",
        help: "objects this large or larger go up in parts (default 0: never)",
    },
    OptionInfo {
        name: "part_size",
        kind: Kind::Size,
        default: "",
        help: "multipart part size (default 8m; S3's minimum is 5m except the last)",
    },
];

impl EngineFactory for S3Factory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "S3 API over HTTP (hyper, keep-alive, TCP_NODELAY), SigV4"
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
        Ok(Arc::new(S3Config(Arc::new(S3::new(options)?))))
    }
}

/// Settings and credentials, resolved once for the run and shared by its
/// workers.
struct S3Config(Arc<S3>);

impl EngineConfig for S3Config {
    fn prepare_target(&self, t: &TargetRequest) -> Result<Option<StoreTarget>, EngineError> {
        let (_, prefix) = crate::objects::object_target(NAME, t)?;
        let s3 = &self.0;
        let io = Io::new(NAME, &s3.settings.common)?;
        let mut created = Vec::new();
        for b in s3.settings.buckets.all() {
            if io.block_or_stop(&format!("checking bucket '{b}'"), t.stop, s3.prepare_bucket(&io.client, &b, t.writes))? {
                created.push(format!("bucket '{b}'"));
            }
        }
        let bucket = |k: u64| s3.settings.buckets.of(k as u32);
        let place = |k: u64| format!("bucket '{}'", bucket(k));
        crate::objects::check_names(NAME, t, &place, &mut |k, name| {
            Ok(io.block_or_stop("checking object names", t.stop, s3.head(&io.client, &bucket(k), Some(name)))? == 200)
        })?;
        let label = format!("s3:{}/{}/{prefix}*{}", s3.access.endpoint, s3.settings.buckets.describe(), s3.settings.common.tls_note());
        Ok(Some(StoreTarget { created, ..StoreTarget::new(0, 1, label) }))
    }
    fn finish_target(&self, t: &TargetRequest, cleaned_up: bool) -> Result<Option<String>, EngineError> {
        if !cleaned_up {
            return Ok(None);
        }
        let s3 = &self.0;
        let io = Io::new(NAME, &s3.settings.common)?;
        let mut notes = Vec::new();
        for b in s3.settings.buckets.all() {
            notes.extend(io.block_or_stop(
                &format!("removing bucket '{b}'"),
                t.stop,
                s3.remove_bucket_if_ours(&io.client, &b, t.object_prefix),
            )?);
        }
        Ok((!notes.is_empty()).then(|| notes.join("; ")))
    }
    fn remove_objects(&self, prefix: &str, which: Which, stop: &dyn Fn() -> bool) -> Result<Removed, EngineError> {
        let io = Io::new(NAME, &self.0.settings.common)?;
        let mut tally = Removed::default();
        for b in self.0.settings.buckets.all() {
            match io.block_or_stop("removing objects", stop, remove_prefixed(&self.0, &io.client, &b, prefix, which, stop, &mut tally)) {
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
        let io = Io::new(NAME, &self.0.settings.common)?;
        let mut total = 0;
        for b in self.0.settings.buckets.all() {
            // Only RGW says (in a HEAD of the bucket); other S3 stores cannot be asked this way.
            let Some(stats) = self.0.rgw_stats(&io, &b)? else { return Ok(None) };
            total += stats.used;
        }
        Ok(Some(total))
    }
    /// RGW's quotas (bucket and user, from a HEAD of each existing bucket);
    /// objects spread evenly over the buckets, so the tightest bucket sets
    /// what all of them can take. A bucket not made yet says nothing.
    fn room(&self) -> Result<Option<Room>, EngineError> {
        let io = Io::new(NAME, &self.0.settings.common)?;
        let buckets = self.0.settings.buckets.all();
        let mut stats = Vec::new();
        for b in &buckets {
            if let Some(s) = self.0.rgw_stats(&io, b)? {
                stats.push((b.clone(), s));
            }
        }
        Ok(rgw_room(&stats, buckets.len() as u64))
    }
    fn list_names(&self, prefix: &str) -> Result<Option<Vec<String>>, EngineError> {
        let io = Io::new(NAME, &self.0.settings.common)?;
        let mut all = Vec::new();
        for b in self.0.settings.buckets.all() {
            all.extend(io.block_on(list_all(&self.0, &io.client, &b, prefix))?);
        }
        Ok(Some(all))
    }
    fn open(&self, setup: &WorkerSetup) -> Result<Box<dyn Engine>, EngineError> {
        let s3 = self.0.clone();
        let io = Io::new(NAME, &s3.settings.common)?;
        let names = setup.object_names.cloned().unwrap_or_else(|| ObjectNames::new("", None));
        let keep_reads = setup.keep_reads;
        Ok(Box::new(S3Engine { s3, io, names, buffers: setup.buffers, refused: Vec::new(), cursor: Default::default(), keep_reads }))
    }
}

/// Options other than credentials.
#[derive(Clone, Debug)]
struct Settings {
    buckets: super::Places,
    virtual_host: bool,
    payload: Payload,
    chunk_size: u64,
    multipart_threshold: u64,
    part_size: u64,
    common: super::Common,
}

impl Settings {
    fn from_options(o: &EngineOptions) -> Result<Settings, EngineError> {
        let bad = |option: &str, message: String| EngineError::BadOption { engine: NAME, option: option.into(), message };
        let virtual_host = match o.get("addressing").map(String::as_str) {
            None | Some("path") => false,
            Some("virtual") => true,
            Some(v) => return Err(bad("addressing", format!("'{v}' is not path or virtual"))),
        };
        let payload = match o.get("payload").map(String::as_str) {
            None | Some("unsigned") => Payload::Unsigned,
            Some("signed") => Payload::Signed,
            Some("streaming") => Payload::Streaming,
            Some(v) => return Err(bad("payload", format!("'{v}' is not unsigned, signed or streaming"))),
        };
        let chunk_size = super::size_option(NAME, o, "chunk_size", 64 << 10, true)?;
        if chunk_size < 8 << 10 {
            return Err(bad("chunk_size", "S3 needs chunks of at least 8k (all but the last)".into()));
        }
        Ok(Settings {
            buckets: super::Places::from_options(NAME, o, "bucket", "buckets", '-')?,
            virtual_host,
            payload,
            chunk_size,
            multipart_threshold: super::size_option(NAME, o, "multipart_threshold", 0, false)?,
            part_size: super::size_option(NAME, o, "part_size", 8 << 20, true)?,
            common: super::Common::from_options(NAME, o)?,
        })
    }
}

/// How request bodies are covered by the signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    Unsigned,
    /// SHA-256 of the whole body in the signed headers.
    Signed,
    /// aws-chunked PUT bodies, every chunk signed (other bodies as Signed).
    Streaming,
}

/// Everything needed to build and sign requests; shared by a worker's tasks.
struct S3 {
    access: S3Access,
    identity: Identity,
    settings: Settings,
    /// scheme://host[:port] and any path prefix of the endpoint.
    scheme: String,
    authority: String,
    base_path: String,
}

impl S3 {
    fn new(opts: &EngineOptions) -> Result<S3, EngineError> {
        let settings = Settings::from_options(opts)?;
        let access = creds::s3(NAME, opts)?;
        let uri: ::http::Uri = access.endpoint.parse().map_err(|_| EngineError::BadOption {
            engine: NAME,
            option: "endpoint".into(),
            message: format!("'{}' is not a URL", access.endpoint),
        })?;
        let identity =
            aws_credential_types::Credentials::new(&access.access_key, &access.secret_key, access.session_token.clone(), None, "storbench")
                .into();
        Ok(S3 {
            scheme: uri.scheme_str().unwrap_or("http").to_string(),
            authority: uri.authority().map(|a| a.to_string()).unwrap_or_default(),
            base_path: uri.path().trim_end_matches('/').to_string(),
            access,
            identity,
            settings,
        })
    }

    /// URL of a bucket (key `None`) or an object in it, with a query string.
    fn url(&self, bucket: &str, key: Option<&str>, query: &str) -> String {
        let mut u = if self.settings.virtual_host {
            format!("{}://{bucket}.{}{}/", self.scheme, self.authority, self.base_path)
        } else {
            format!("{}://{}{}/{bucket}", self.scheme, self.authority, self.base_path)
        };
        if let Some(k) = key {
            if !self.settings.virtual_host {
                u.push('/');
            }
            super::encode_key(k, &mut u);
        }
        if !query.is_empty() {
            u.push('?');
            u.push_str(query);
        }
        u
    }

    /// A signed request.
    fn request(&self, method: &str, url: &str, headers: &[(&str, String)], body: Bytes) -> Result<::http::Request<Body>, EngineError> {
        self.build(method, url, headers, false, body)
    }

    /// A signed request that writes an object (a PUT, or a multipart
    /// upload's start): it carries storbench's mark, signed with the rest.
    fn marked(&self, method: &str, url: &str, body: Bytes) -> Result<::http::Request<Body>, EngineError> {
        self.build(method, url, &[], true, body)
    }

    fn build(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        mark: bool,
        body: Bytes,
    ) -> Result<::http::Request<Body>, EngineError> {
        let mut b = ::http::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            b = b.header(*k, v.as_str());
        }
        if mark {
            b = b.header(MARK_HEADER, MARK_VALUE);
        }
        let len = body.len();
        let streaming = self.settings.payload == Payload::Streaming && method == "PUT" && len > 0;
        if streaming {
            b = b
                .header(::http::header::CONTENT_LENGTH, chunked::encoded_len(len as u64, self.settings.chunk_size))
                .header(::http::header::CONTENT_ENCODING, "aws-chunked")
                .header("x-amz-decoded-content-length", len);
        } else if method == "PUT" || method == "POST" {
            b = b.header(::http::header::CONTENT_LENGTH, len);
        }
        let bad_url = |e: ::http::Error| EngineError::failed(NAME, format!("bad request URL {url}"), e);
        let time = SystemTime::now();
        if streaming {
            let mut req = b.body(Body::new(Bytes::new())).map_err(bad_url)?;
            let seed = self.sign(&mut req, SignableBody::Precomputed(chunked::STREAMING.into()), time)?;
            let signer = chunked::Signer { secret: &self.access.secret_key, region: &self.access.region, time };
            *req.body_mut() = Body::from_pieces(chunked::encode(&body, self.settings.chunk_size as usize, &seed, &signer));
            return Ok(req);
        }
        let signed = (self.settings.payload != Payload::Unsigned).then(|| body.clone());
        let mut req = b.body(Body::new(body)).map_err(bad_url)?;
        self.sign(&mut req, signed.as_deref().map_or(SignableBody::UnsignedPayload, SignableBody::Bytes), time)?;
        Ok(req)
    }

    /// Sign `req` (headers as they are) for `body`; returns the signature.
    fn sign(&self, req: &mut ::http::Request<Body>, body: SignableBody, time: SystemTime) -> Result<String, EngineError> {
        let fail = |e: &dyn std::fmt::Display| EngineError::failed(NAME, "signing a request", e.to_string());
        let mut settings = SigningSettings::default();
        settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
        settings.percent_encoding_mode = PercentEncodingMode::Single;
        settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
        let params = v4::SigningParams::builder()
            .identity(&self.identity)
            .region(&self.access.region)
            .name("s3")
            .time(time)
            .settings(settings)
            .build()
            .map_err(|e| fail(&e))?
            .into();
        let uri = req.uri().to_string();
        let headers = req.headers().iter().filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)));
        let signable = SignableRequest::new(req.method().as_str(), uri, headers, body).map_err(|e| fail(&e))?;
        let (instructions, signature) = sign(signable, &params).map_err(|e| fail(&e))?.into_parts();
        instructions.apply_to_request_http1x(req);
        Ok(signature)
    }

    fn get(&self, url: &str) -> Result<::http::Request<Body>, EngineError> {
        self.request("GET", url, &[], Bytes::new())
    }

    /// Status of a HEAD on the bucket or an object (transport errors as Err).
    async fn head(&self, client: &super::Client, bucket: &str, key: Option<&str>) -> Result<u16, EngineError> {
        let req = self.request("HEAD", &self.url(bucket, key, ""), &[], Bytes::new())?;
        self.status(client, req, "HEAD").await
    }

    async fn status(&self, client: &super::Client, req: ::http::Request<Body>, what: &str) -> Result<u16, EngineError> {
        self.answer(client, req, what).await.map(|a| a.0)
    }

    /// RGW's statistics and quotas for `bucket`; `None` when the store does
    /// not say (not RGW, or no such bucket yet).
    fn rgw_stats(&self, io: &Io, bucket: &str) -> Result<Option<RgwStats>, EngineError> {
        // RGW answers with its bucket statistics only when asked (read-stats).
        let req = self.request("HEAD", &self.url(bucket, None, "read-stats=true"), &[], Bytes::new())?;
        Ok(match io.block_on(super::fetch_or_why(&io.client, req, self.settings.common.op_timeout)) {
            Ok((p, _)) if p.status.is_success() => RgwStats::from_headers(&p.headers),
            _ => None,
        })
    }

    /// The status of a set-up request and, for a failure, the server's own
    /// reason (" (InvalidBucketName: The specified bucket is not valid.)").
    async fn answer(&self, client: &super::Client, req: ::http::Request<Body>, what: &str) -> Result<(u16, String), EngineError> {
        let url = req.uri().to_string();
        match super::fetch_or_why(client, req, self.settings.common.op_timeout).await {
            Ok((parts, body)) => Ok((parts.status.as_u16(), reason(&body))),
            Err(f) => Err(f.unreachable(NAME, &format!("{what} {url}: cannot reach the endpoint"))),
        }
    }

    /// The bucket is there (created when the job writes) and reachable;
    /// true if this call created it.
    async fn prepare_bucket(&self, client: &super::Client, bucket: &str, writes: bool) -> Result<bool, EngineError> {
        match self.head(client, bucket, None).await? {
            200 => Ok(false),
            404 if writes => self.create_bucket(client, bucket).await.map(|_| true),
            404 => {
                Err(EngineError::BadOption { engine: NAME, option: "bucket".into(), message: format!("bucket '{bucket}' does not exist") })
            }
            403 => Err(denied(bucket)),
            s => Err(rejected(format!("HEAD bucket '{bucket}' answered HTTP {s}"), s)),
        }
    }

    async fn create_bucket(&self, client: &super::Client, bucket: &str) -> Result<(), EngineError> {
        let req = self.request("PUT", &self.url(bucket, None, ""), &[], Bytes::new())?;
        match self.answer(client, req, "PUT bucket").await? {
            (200 | 201, _) => {}
            (403, _) => return Err(denied(bucket)),
            (s, why) => return Err(rejected(format!("creating bucket '{bucket}' answered HTTP {s}{why}"), s)),
        }
        let req = self.request("PUT", &self.url(bucket, Some(BUCKET_MARKER), ""), &[], Bytes::from_static(b"storbench"))?;
        match self.status(client, req, "PUT").await? {
            200 | 201 => Ok(()),
            s => Err(rejected(format!("marking bucket '{bucket}' as storbench's answered HTTP {s}"), s)),
        }
    }

    /// Remove the bucket if storbench created it and it holds nothing else.
    async fn remove_bucket_if_ours(
        &self,
        client: &super::Client,
        bucket: &str,
        prefix: Option<&str>,
    ) -> Result<Option<String>, EngineError> {
        if self.head(client, bucket, Some(BUCKET_MARKER)).await? != 200 {
            return Ok(None);
        }
        let list = self.get(&self.url(bucket, None, "list-type=2&max-keys=2"))?;
        let keys = match fetch(client, list, self.settings.common.op_timeout).await {
            Ok((p, body)) if p.status.is_success() => all_between(&body, "<Key>", "</Key>"),
            _ => return Ok(Some(format!("bucket '{bucket}' left in place: listing it failed"))),
        };
        if let Some(first) = keys.iter().find(|k| *k != BUCKET_MARKER) {
            return Ok(Some(super::kept_note(&format!("bucket '{bucket}'"), first, prefix)));
        }
        let del = self.request("DELETE", &self.url(bucket, Some(BUCKET_MARKER), ""), &[], Bytes::new())?;
        self.status(client, del, "DELETE").await?;
        let del = self.request("DELETE", &self.url(bucket, None, ""), &[], Bytes::new())?;
        match self.status(client, del, "DELETE bucket").await? {
            200 | 204 => Ok(None),
            s => Ok(Some(format!("removing bucket '{bucket}' answered HTTP {s}"))),
        }
    }
}

/// Remove the objects of `bucket` whose names start with `prefix`, a
/// listing page at a time (a bucket that is not there holds none).
async fn remove_prefixed(
    s3: &Arc<S3>,
    client: &super::Client,
    bucket: &str,
    prefix: &str,
    which: Which,
    stop: &dyn Fn() -> bool,
    tally: &mut Removed,
) -> Result<(), EngineError> {
    let mut token: Option<String> = None;
    while !tally.stopped {
        let Some((keys, next)) = list_page(s3, client, bucket, prefix, token.as_deref()).await? else { return Ok(()) };
        let urls: Vec<String> = keys.iter().map(|k| s3.url(bucket, Some(k), "")).collect();
        let (s3c, c) = (s3.clone(), client.clone());
        let delete = move |url: String| {
            let (s3, client) = (s3c.clone(), c.clone());
            async move {
                if which == Which::Marked {
                    match is_marked(&s3, &client, &url).await? {
                        Some(true) => {}
                        Some(false) => return Ok(Removal::Unmarked),
                        None => return Ok(Removal::Absent),
                    }
                }
                let req = s3.request("DELETE", &url, &[], Bytes::new()).map_err(|e| e.to_string())?;
                match fetch(&client, req, s3.settings.common.op_timeout).await {
                    Ok((p, _)) if p.status.is_success() || p.status == 404 => Ok(Removal::Removed),
                    Ok((p, body)) => Err(format!("DELETE {url} answered HTTP {}{}", p.status.as_u16(), reason(&body))),
                    Err(f) => Err(format!("DELETE {url}: {f}")),
                }
            }
        };
        super::remove_each(urls, stop, delete, tally).await;
        token = next;
        if token.is_none() {
            return Ok(());
        }
    }
    Ok(())
}

/// What RGW says of a bucket in a HEAD with `read-stats=true`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RgwStats {
    used: u64,
    objects: u64,
    /// Quotas (RGW says -1 for none).
    bucket_size: Option<u64>,
    bucket_objects: Option<u64>,
    user_size: Option<u64>,
    user_objects: Option<u64>,
}

impl RgwStats {
    fn from_headers(h: &::http::HeaderMap) -> Option<RgwStats> {
        let num = |k: &str| h.get(k).and_then(|v| v.to_str().ok()?.trim().parse::<i64>().ok());
        let quota = |k: &str| num(k).filter(|v| *v >= 0).map(|v| v as u64);
        Some(RgwStats {
            used: num("x-rgw-bytes-used")?.max(0) as u64,
            objects: num("x-rgw-object-count").unwrap_or(0).max(0) as u64,
            bucket_size: quota("x-rgw-quota-bucket-size"),
            bucket_objects: quota("x-rgw-quota-bucket-objects"),
            user_size: quota("x-rgw-quota-user-size"),
            user_objects: quota("x-rgw-quota-user-objects"),
        })
    }
}

/// The room RGW's quotas leave across `spread` buckets (`stats`: the ones
/// that exist): per-bucket quotas times the buckets (objects spread evenly),
/// or the user's quota less what these buckets use (an upper bound: the
/// user's other buckets count too), whichever is less.
fn rgw_room(stats: &[(String, RgwStats)], spread: u64) -> Option<Room> {
    let mut bytes: Option<(u64, String)> = None;
    let mut objects: Option<u64> = None;
    let mut take = |b: Option<u64>, o: Option<u64>, source: String| {
        if let Some(b) = b.filter(|b| bytes.as_ref().is_none_or(|(least, _)| b < least)) {
            bytes = Some((b, source));
        }
        if let Some(o) = o {
            objects = Some(objects.map_or(o, |least| least.min(o)));
        }
    };
    for (name, s) in stats {
        let left = |quota: Option<u64>, used: u64| quota.map(|q| q.saturating_sub(used).saturating_mul(spread));
        take(left(s.bucket_size, s.used), left(s.bucket_objects, s.objects), format!("bucket '{name}''s quota"));
    }
    let used: u64 = stats.iter().map(|(_, s)| s.used).sum();
    let count: u64 = stats.iter().map(|(_, s)| s.objects).sum();
    if let Some((_, s)) = stats.first() {
        take(s.user_size.map(|q| q.saturating_sub(used)), s.user_objects.map(|q| q.saturating_sub(count)), "the user's quota".into());
    }
    match (bytes, objects) {
        (None, None) => None,
        (b, objects) => {
            let source = b.as_ref().map_or_else(|| "the object-count quota".to_string(), |(_, s)| s.clone());
            Some(Room { bytes: b.map(|(n, _)| n), objects, source })
        }
    }
}

/// Whether the object at `url` carries storbench's mark (a HEAD); `None`
/// when it is gone.
async fn is_marked(s3: &S3, client: &super::Client, url: &str) -> Result<Option<bool>, String> {
    let req = s3.request("HEAD", url, &[], Bytes::new()).map_err(|e| e.to_string())?;
    match fetch(client, req, s3.settings.common.op_timeout).await {
        Ok((p, _)) if p.status.is_success() => Ok(Some(p.headers.get(MARK_HEADER).is_some_and(|v| v == MARK_VALUE))),
        Ok((p, _)) if p.status == 404 => Ok(None),
        Ok((p, _)) => Err(format!("HEAD {url} answered HTTP {}", p.status.as_u16())),
        Err(f) => Err(format!("HEAD {url}: {f}")),
    }
}

/// Every key in `bucket` starting with `prefix`.
async fn list_all(s3: &Arc<S3>, client: &super::Client, bucket: &str, prefix: &str) -> Result<Vec<String>, EngineError> {
    let (mut all, mut token) = (Vec::new(), None);
    while let Some((keys, next)) = list_page(s3, client, bucket, prefix, token.as_deref()).await? {
        all.extend(keys);
        token = next;
        if token.is_none() {
            break;
        }
    }
    Ok(all)
}

/// One page (1000 keys) of `bucket` under `prefix`, and the token of the
/// next; `None` when the bucket does not exist.
async fn list_page(
    s3: &Arc<S3>,
    client: &super::Client,
    bucket: &str,
    prefix: &str,
    token: Option<&str>,
) -> Result<Option<(Vec<String>, Option<String>)>, EngineError> {
    let mut q = format!("list-type=2&max-keys=1000&prefix={}", super::encode_query(prefix));
    if let Some(t) = token {
        q.push_str("&continuation-token=");
        q.push_str(&super::encode_query(t));
    }
    let (status, body) = match super::fetch_or_why(client, s3.get(&s3.url(bucket, None, &q))?, s3.settings.common.op_timeout).await {
        Ok((p, body)) => (p.status.as_u16(), body),
        Err(f) => return Err(f.unreachable(NAME, &format!("listing bucket '{bucket}': cannot reach the endpoint"))),
    };
    match status {
        200 => {}
        404 => return Ok(None),
        s => return Err(rejected(format!("listing bucket '{bucket}' answered HTTP {s}{}", reason(&body)), s)),
    }
    let keys = all_between(&body, "<Key>", "</Key>").into_iter().filter(|k| k.starts_with(prefix) && k != BUCKET_MARKER).collect();
    Ok(Some((keys, between(&body, "<NextContinuationToken>", "</NextContinuationToken>"))))
}

fn denied(bucket: &str) -> EngineError {
    rejected(format!("access to bucket '{bucket}' denied (HTTP 403): check the access key, secret key and the bucket's owner"), 403)
}

/// The store answered a set-up request with this status.
fn rejected(message: String, status: u16) -> EngineError {
    EngineError::Rejected { engine: NAME, message, kind: storbench_metrics::ErrorKind::of_http(status) }
}

/// Per-worker engine.
struct S3Engine {
    s3: Arc<S3>,
    io: Io,
    names: ObjectNames,
    buffers: Buffers,
    refused: Vec<Completion>,
    cursor: super::ListCursor,
    /// GET bodies go into the slot (verification), not only counted.
    keep_reads: bool,
}

impl S3Engine {
    fn key(&self, n: u32) -> String {
        self.names.name(n as u64)
    }

    fn spawn_put(&mut self, slot: u32, url: String, len: u32) {
        let (s3, client) = (self.s3.clone(), self.io.client.clone());
        let base = self.buffers.slot(slot);
        if s3.settings.multipart_threshold > 0 && len as u64 >= s3.settings.multipart_threshold {
            let base_addr = base as usize;
            self.io.spawn(slot, async move { Outcome::of(multipart(&s3, &client, &url, base_addr, len as u64).await) });
            return;
        }
        // SAFETY: the slot is not reused before this operation completes, and
        // it completes only after `released` fires (every clone dropped).
        let (body, released) = unsafe { lend(base, len as usize) };
        self.io.spawn(slot, async move {
            let (reply, retries) = {
                let make = || s3.marked("PUT", &url, body.clone()).ok();
                exchange_retrying(&client, &make, Expect::Sent(len as u64), s3.settings.common.op_timeout, s3.settings.common.retries).await
            };
            drop(body);
            let _ = released.await;
            Outcome { result: reply.result, tail_ns: 0, retries }
        });
    }

    /// One page of ListObjectsV2 under the job's prefix, continuing where the
    /// previous page of this worker ended (from the start after the last).
    fn spawn_list(&mut self, slot: u32, bucket: String) {
        let (s3, client, cursor) = (self.s3.clone(), self.io.client.clone(), self.cursor.clone());
        let prefix = super::encode_query(&self.names.prefix);
        self.io.spawn(slot, async move {
            let token = cursor.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let mut q = format!("list-type=2&max-keys=1000&prefix={prefix}");
            if let Some(t) = token {
                q.push_str("&continuation-token=");
                q.push_str(&super::encode_query(&t));
            }
            let Ok(req) = s3.get(&s3.url(&bucket, None, &q)) else { return Outcome::of(Err(super::UNBUILDABLE)) };
            match fetch(&client, req, s3.settings.common.op_timeout).await {
                Ok((p, body)) if p.status.is_success() => {
                    *cursor.lock().unwrap_or_else(|e| e.into_inner()) =
                        between(&body, "<NextContinuationToken>", "</NextContinuationToken>");
                    Outcome::of(Ok(body.len() as u64))
                }
                Ok((p, _)) => Outcome::of(Err(IoFailure::http(p.status.as_u16()))),
                Err(f) => Outcome::of(Err(f)),
            }
        });
    }

    /// GET, HEAD, DELETE: no body; signed afresh for every attempt.
    fn spawn_simple(&mut self, slot: u32, method: &'static str, url: String, headers: Vec<(&'static str, String)>, expect: Expect) {
        let (s3, client) = (self.s3.clone(), self.io.client.clone());
        self.io.spawn(slot, async move {
            let make = || s3.request(method, &url, &headers, Bytes::new()).ok();
            let (r, retries) = exchange_retrying(&client, &make, expect, s3.settings.common.op_timeout, s3.settings.common.retries).await;
            Outcome { result: r.result, tail_ns: r.tail_ns, retries }
        });
    }
}

impl Engine for S3Engine {
    fn abandon(&mut self) -> bool {
        self.refused.clear();
        self.io.abandon()
    }

    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let s3 = self.s3.clone();
        let bucket = s3.settings.buckets.of(req.file);
        let url = || s3.url(&bucket, Some(&self.key(req.file)), "");
        match req.op {
            OpKind::Create | OpKind::Update => self.spawn_put(req.slot, url(), req.len),
            OpKind::Read => {
                // Whole objects are read without a byte range, as clients do.
                let range: Vec<(&str, String)> = (!req.whole && req.len > 0)
                    .then(|| ("range", format!("bytes={}-{}", req.offset, req.offset + req.len as u64 - 1)))
                    .into_iter()
                    .collect();
                let expect = Expect::read_into(self.keep_reads, &self.buffers, req.slot);
                self.spawn_simple(req.slot, "GET", url(), range, expect);
            }
            OpKind::Stat => self.spawn_simple(req.slot, "HEAD", url(), Vec::new(), Expect::Received),
            OpKind::Delete => self.spawn_simple(req.slot, "DELETE", url(), Vec::new(), Expect::Received),
            OpKind::List => self.spawn_list(req.slot, bucket),
            OpKind::Write | OpKind::Sync | OpKind::Trim | OpKind::Truncate => {
                self.refused.push(Completion::new(req.slot, Err(IoFailure::errno(libc::EOPNOTSUPP))))
            }
        }
        Ok(())
    }

    fn submit_and_reap(&mut self, min: u32, timeout: Option<Duration>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let got = self.refused.len() as u32;
        out.append(&mut self.refused);
        self.io.reap(min.saturating_sub(got), timeout, out);
        Ok(())
    }
}

/// A multipart upload of `len` bytes from `base`: initiate, parts one after
/// another, complete; aborted on any failure (the failure is the result).
/// `base` is the slot's address (an integer keeps the future Send).
async fn multipart(s3: &S3, client: &super::Client, url: &str, base: usize, len: u64) -> Result<u64, IoFailure> {
    let limit = s3.settings.common.op_timeout;
    let init = s3.marked("POST", &format!("{url}?uploads"), Bytes::new()).map_err(|_| super::UNBUILDABLE)?;
    let upload = match fetch(client, init, limit).await? {
        (p, body) if p.status.is_success() => between(&body, "<UploadId>", "</UploadId>").ok_or(IoFailure::errno(libc::EBADMSG))?,
        (p, _) => return Err(IoFailure::http(p.status.as_u16())),
    };
    let mut complete = String::from("<CompleteMultipartUpload>");
    let mut off = 0u64;
    let mut part = 1;
    while off < len {
        let n = s3.settings.part_size.min(len - off);
        // SAFETY: inside the slot, which is not reused before this operation completes.
        let (body, released) = unsafe { lend((base + off as usize) as *const u8, n as usize) };
        let q = format!("{url}?partNumber={part}&uploadId={upload}");
        let req = s3.request("PUT", &q, &[], body).map_err(|_| super::UNBUILDABLE)?;
        let super::Reply { result, head, .. } = exchange(client, req, Expect::Sent(n), limit).await;
        let _ = released.await;
        let etag = head.as_ref().and_then(|h| h.headers().get("etag")).and_then(|v| v.to_str().ok()).map(str::to_string);
        match (result, etag) {
            (Ok(_), Some(e)) => complete.push_str(&format!("<Part><PartNumber>{part}</PartNumber><ETag>{e}</ETag></Part>")),
            (r, _) => {
                abort(s3, client, url, &upload).await;
                return Err(r.err().unwrap_or(IoFailure::errno(libc::EBADMSG)));
            }
        }
        off += n;
        part += 1;
    }
    complete.push_str("</CompleteMultipartUpload>");
    let req = s3.request("POST", &format!("{url}?uploadId={upload}"), &[], Bytes::from(complete)).map_err(|_| super::UNBUILDABLE)?;
    match fetch(client, req, limit).await? {
        // S3 may answer 200 with an error document.
        (p, body) if p.status.is_success() && !String::from_utf8_lossy(&body).contains("<Error>") => Ok(len),
        (p, _) if !p.status.is_success() => Err(IoFailure::http(p.status.as_u16())),
        _ => Err(IoFailure::errno(libc::EIO)),
    }
}

async fn abort(s3: &S3, client: &super::Client, url: &str, upload: &str) {
    if let Ok(req) = s3.request("DELETE", &format!("{url}?uploadId={upload}"), &[], Bytes::new()) {
        let _ = fetch(client, req, s3.settings.common.op_timeout).await;
    }
}

/// An S3 error document's code and message, as " (Code: Message)"; "" when
/// the body has none.
fn reason(body: &[u8]) -> String {
    match (between(body, "<Code>", "</Code>"), between(body, "<Message>", "</Message>")) {
        (Some(c), Some(m)) => format!(" ({c}: {m})"),
        (Some(c), None) => format!(" ({c})"),
        _ => String::new(),
    }
}

fn between(body: &[u8], start: &str, end: &str) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(text[from..to].to_string())
}

/// Every text between `start` and `end`, XML entities decoded (the keys
/// of a listing).
fn all_between(body: &[u8], start: &str, end: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    let mut rest = &text[..];
    while let Some(from) = rest.find(start) {
        rest = &rest[from + start.len()..];
        let Some(to) = rest.find(end) else { break };
        out.push(unescape_xml(&rest[..to]));
        rest = &rest[to + end.len()..];
    }
    out
}

fn unescape_xml(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(extra: &[(&str, &str)]) -> S3 {
        let mut o: BTreeMap<String, String> =
            [("endpoint", "http://127.0.0.1:7480"), ("access_key", "AK"), ("secret_key", "SK"), ("bucket", "b")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        o.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        S3::new(&o).unwrap()
    }

    #[test]
    fn path_and_virtual_host_urls() {
        assert_eq!(s3(&[]).url("b", Some("p.1"), ""), "http://127.0.0.1:7480/b/p.1");
        assert_eq!(s3(&[]).url("b", None, "list-type=2"), "http://127.0.0.1:7480/b?list-type=2");
        assert_eq!(s3(&[("addressing", "virtual")]).url("b", Some("k"), ""), "http://b.127.0.0.1:7480/k");
        let spread = s3(&[("buckets", "3")]);
        assert_eq!((spread.settings.buckets.of(4), spread.settings.buckets.describe()), ("b-000001".into(), "b-000000..b-000002".into()));
    }

    #[test]
    fn requests_are_signed_without_the_secret_in_them() {
        let r = s3(&[]).request("GET", "http://127.0.0.1:7480/b/k", &[], Bytes::new()).unwrap();
        let auth = r.headers()["authorization"].to_str().unwrap();
        assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AK/") && auth.contains("/us-east-1/s3/aws4_request"), "{auth}");
        assert_eq!(r.headers()["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
        assert!(!format!("{:?}", r.headers()).contains("SK"));
    }

    #[test]
    fn streaming_puts_are_aws_chunked_with_a_signature_per_chunk() {
        let s = s3(&[("payload", "streaming"), ("chunk_size", "8k")]);
        let data = Bytes::from(vec![7u8; 20_000]);
        let r = s.request("PUT", "http://127.0.0.1:7480/b/k", &[], data).unwrap();
        let h = r.headers();
        assert_eq!(h["x-amz-content-sha256"], chunked::STREAMING);
        assert_eq!(
            (h["content-encoding"].to_str().unwrap(), h["x-amz-decoded-content-length"].to_str().unwrap()),
            ("aws-chunked", "20000")
        );
        let signed_headers = h["authorization"].to_str().unwrap();
        assert!(signed_headers.contains("x-amz-decoded-content-length"), "{signed_headers}");
        let len: u64 = h["content-length"].to_str().unwrap().parse().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let body = rt.block_on(http_body_util::BodyExt::collect(r.into_body())).unwrap().to_bytes();
        assert_eq!(body.len() as u64, len);
        let text = String::from_utf8_lossy(&body);
        // 8k + 8k + 3616 + the final empty chunk, each with its own signature.
        let heads: Vec<&str> = text.split("\r\n").filter(|l| l.contains(";chunk-signature=")).collect();
        assert_eq!(heads.iter().map(|l| l.split(';').next().unwrap()).collect::<Vec<_>>(), ["2000", "2000", "e20", "0"]);
        let sigs: std::collections::HashSet<&str> = heads.iter().map(|l| &l[l.len() - 64..]).collect();
        assert_eq!(sigs.len(), 4);
        // Other requests and bodies are not chunked.
        let get = s.request("GET", "http://127.0.0.1:7480/b/k", &[], Bytes::new()).unwrap();
        assert!(get.headers().get("content-encoding").is_none());
    }

    #[test]
    fn rgw_quotas_leave_the_least_room_of_bucket_and_user() {
        let mut h = ::http::HeaderMap::new();
        for (k, v) in [
            ("x-rgw-bytes-used", "100"),
            ("x-rgw-object-count", "2"),
            ("x-rgw-quota-bucket-size", "-1"),
            ("x-rgw-quota-bucket-objects", "-1"),
            ("x-rgw-quota-user-size", "-1"),
            ("x-rgw-quota-user-objects", "-1"),
        ] {
            h.insert(k, v.parse().unwrap());
        }
        let none = RgwStats::from_headers(&h).unwrap();
        assert_eq!(rgw_room(&[("b".into(), none)], 1), None, "no quota: RGW sets no limit");
        let bucket = RgwStats { bucket_size: Some(1000), bucket_objects: Some(10), ..none };
        let room = rgw_room(&[("b".into(), bucket)], 2).unwrap();
        assert_eq!((room.bytes, room.objects), (Some(1800), Some(16)), "the tightest bucket, times the buckets");
        assert!(room.source.contains("bucket 'b'"), "{}", room.source);
        let user = RgwStats { user_size: Some(500), ..bucket };
        let room = rgw_room(&[("b".into(), user)], 2).unwrap();
        assert_eq!(room.bytes, Some(400));
        assert!(room.source.contains("user"), "{}", room.source);
        assert_eq!(RgwStats::from_headers(&::http::HeaderMap::new()), None, "not RGW");
    }

    #[test]
    fn error_documents_give_the_servers_reason() {
        let body = b"<?xml version=\"1.0\"?><Error><Code>InvalidBucketName</Code><Message>bad name</Message></Error>";
        assert_eq!(reason(body), " (InvalidBucketName: bad name)");
        assert_eq!(reason(b""), "");
    }

    #[test]
    fn bad_settings_name_the_option() {
        let e = Settings::from_options(&BTreeMap::from([("addressing".to_string(), "dns".to_string())])).unwrap_err();
        assert!(e.to_string().contains("addressing") && e.to_string().contains("path or virtual"));
    }
}
