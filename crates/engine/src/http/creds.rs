//! Where the object engines find endpoints and secrets: engine options first,
//! then the standard environment variables, then the usual files. Secrets are
//! held here and in request signatures only; they are never formatted into an
//! error, a report or a log.

use crate::EngineError;
use std::collections::BTreeMap;

/// S3 access: endpoint, region and keys.
#[derive(Clone)]
pub struct S3Access {
    pub endpoint: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for S3Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S3Access {{ endpoint: {}, region: {}, keys: <redacted> }}", self.endpoint, self.region)
    }
}

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn pick(opts: &BTreeMap<String, String>, key: &str, env: Env, vars: &[&str]) -> Option<String> {
    opts.get(key).cloned().or_else(|| vars.iter().find_map(|v| env(v))).filter(|s| !s.is_empty())
}

/// The `[profile]` section of an AWS-style ini file, as key -> value.
fn ini_section(text: &str, profile: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    let wanted = [profile.to_string(), format!("profile {profile}")];
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = wanted.iter().any(|w| w == name.trim());
        } else if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
    }
    out
}

/// A credentials or configuration file, read whole with a bound (a missing
/// or unreadable one is as if absent, as for the clients these follow).
fn read_file(path: &str) -> Option<String> {
    storbench_workload::input::read_text(path.as_ref(), "credentials file", storbench_workload::input::CREDENTIALS_LIMIT).ok()
}

pub fn s3(engine: &'static str, opts: &BTreeMap<String, String>) -> Result<S3Access, EngineError> {
    s3_from(engine, opts, &|k| std::env::var(k).ok(), &read_file)
}

pub fn s3_from(
    engine: &'static str,
    opts: &BTreeMap<String, String>,
    env: Env,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<S3Access, EngineError> {
    let profile = pick(opts, "profile", env, &["AWS_PROFILE"]).unwrap_or_else(|| "default".into());
    let home = env("HOME").unwrap_or_default();
    let creds_path = env("AWS_SHARED_CREDENTIALS_FILE").unwrap_or_else(|| format!("{home}/.aws/credentials"));
    let config_path = env("AWS_CONFIG_FILE").unwrap_or_else(|| format!("{home}/.aws/config"));
    let file = read(&creds_path).map(|t| ini_section(&t, &profile)).unwrap_or_default();
    let config = read(&config_path).map(|t| ini_section(&t, &profile)).unwrap_or_default();
    let access_key = pick(opts, "access_key", env, &["AWS_ACCESS_KEY_ID"]).or_else(|| file.get("aws_access_key_id").cloned());
    let secret_key = pick(opts, "secret_key", env, &["AWS_SECRET_ACCESS_KEY"]).or_else(|| file.get("aws_secret_access_key").cloned());
    let (Some(access_key), Some(secret_key)) = (access_key, secret_key) else {
        return Err(EngineError::BadOption {
            engine,
            option: "access_key".into(),
            message: format!(
                "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put profile '{profile}' in {creds_path}, \
                 or pass --access_key and --secret_key"
            ),
        });
    };
    let endpoint = pick(opts, "endpoint", env, &["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"])
        .or_else(|| config.get("endpoint_url").cloned())
        .ok_or_else(|| EngineError::BadOption {
            engine,
            option: "endpoint".into(),
            message: "no S3 endpoint: pass --endpoint http://host:port or set AWS_ENDPOINT_URL".into(),
        })?;
    check_endpoint(engine, "endpoint", &endpoint)?;
    let region = pick(opts, "region", env, &["AWS_REGION", "AWS_DEFAULT_REGION"])
        .or_else(|| config.get("region").cloned())
        .unwrap_or_else(|| "us-east-1".into());
    let session_token = pick(opts, "session_token", env, &["AWS_SESSION_TOKEN"]).or_else(|| file.get("aws_session_token").cloned());
    Ok(S3Access { endpoint: endpoint.trim_end_matches('/').to_string(), region, access_key, secret_key, session_token })
}

/// What the job's options, this machine's environment and its credential
/// files resolve to for `engine` (s3 or swift), written as the engine's own
/// options. A fleet's coordinator sends them to its agents (secrets apart
/// from the spec, inside the fleet's TLS channel), so the agents reach the
/// same store as the same user without credentials of their own. Empty when
/// nothing resolves here or the engine is not an object store over HTTP:
/// each agent then looks on its own machine, as before. Paths (a CA file)
/// are not sent: they name files on this machine.
pub fn resolved_options(engine: &str, opts: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    resolved_from(engine, opts, &|k| std::env::var(k).ok(), &read_file)
}

fn resolved_from(
    engine: &str,
    opts: &BTreeMap<String, String>,
    env: Env,
    read: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let pairs: Vec<(&str, Option<String>)> = match engine {
        "s3" => match s3_from("s3", opts, env, read) {
            Ok(a) => vec![
                ("endpoint", Some(a.endpoint)),
                ("region", Some(a.region)),
                ("access_key", Some(a.access_key)),
                ("secret_key", Some(a.secret_key)),
                ("session_token", a.session_token),
            ],
            Err(_) => vec![],
        },
        "swift" => match swift_from("swift", opts, env, read) {
            Ok(a) => swift_options(a),
            Err(_) => vec![],
        },
        _ => vec![],
    };
    pairs.into_iter().filter_map(|(k, v)| Some((k.to_string(), v?))).collect()
}

/// Swift access as the options that give it on another machine.
fn swift_options(a: SwiftAccess) -> Vec<(&'static str, Option<String>)> {
    let mut out = vec![("storage_url", a.storage_url)];
    match a.auth {
        SwiftAuth::Token(t) => out.push(("token", Some(t))),
        SwiftAuth::V1 { user, key } => {
            out.extend([("auth", Some(a.auth_url)), ("auth_version", Some("1".into())), ("user", Some(user)), ("key", Some(key))])
        }
        SwiftAuth::V3(k) => out.extend([
            ("auth", Some(a.auth_url)),
            ("auth_version", Some("3".into())),
            ("user", Some(k.user)),
            ("key", Some(k.password)),
            ("user_domain", Some(k.user_domain)),
            ("project", Some(k.project)),
            ("project_domain", Some(k.project_domain)),
            ("region", k.region),
            ("interface", Some(k.interface)),
        ]),
    }
    out
}

/// An http:// or https:// URL with a host.
pub fn check_endpoint(engine: &'static str, option: &str, url: &str) -> Result<(), EngineError> {
    let bad = |message: String| EngineError::BadOption { engine, option: option.into(), message };
    let uri: ::http::Uri = url.parse().map_err(|_| bad(format!("'{url}' is not a URL (form: http://host:port)")))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(_)) => Ok(()),
        (Some("http" | "https"), None) => Err(bad(format!("'{url}' names no host"))),
        _ => Err(bad(format!("'{url}' needs an http:// or https:// scheme"))),
    }
}

/// How the swift engine authenticates.
#[derive(Clone)]
pub enum SwiftAuth {
    /// v1 (tempauth, swauth, RGW): user and key in headers.
    V1 { user: String, key: String },
    /// Keystone v3 password authentication, scoped to a project.
    V3(Keystone),
    /// A token issued beforehand (fio's `http_swift_auth_token`), used as
    /// it is with the storage URL given: no authentication request.
    Token(String),
}

/// Keystone v3 password credentials and where to find Swift in the catalog.
#[derive(Clone)]
pub struct Keystone {
    pub user: String,
    pub password: String,
    pub user_domain: String,
    pub project: String,
    pub project_domain: String,
    /// Catalog region (any, when unset) and interface (public, internal, admin).
    pub region: Option<String>,
    pub interface: String,
}

/// Swift access: the auth URL, credentials, and optionally a storage URL that
/// overrides the one authentication returns.
#[derive(Clone)]
pub struct SwiftAccess {
    pub auth_url: String,
    pub auth: SwiftAuth,
    pub storage_url: Option<String>,
}

impl SwiftAccess {
    /// Who authenticates, for messages (never the key or password).
    pub fn who(&self) -> String {
        match &self.auth {
            SwiftAuth::V1 { user, .. } => format!("'{user}'"),
            SwiftAuth::Token(_) => "a token issued beforehand".into(),
            SwiftAuth::V3(k) => {
                format!("'{}' (domain '{}') in project '{}' (domain '{}')", k.user, k.user_domain, k.project, k.project_domain)
            }
        }
    }
}

impl std::fmt::Debug for SwiftAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let version = match self.auth {
            SwiftAuth::V1 { .. } => "v1",
            SwiftAuth::V3(_) => "v3",
            SwiftAuth::Token(_) => "token",
        };
        write!(f, "SwiftAccess {{ auth_url: {}, {version} as {}, secret: <redacted> }}", self.auth_url, self.who())
    }
}

pub fn swift(engine: &'static str, opts: &BTreeMap<String, String>) -> Result<SwiftAccess, EngineError> {
    swift_from(engine, opts, &|k| std::env::var(k).ok(), &read_file)
}

/// Options first, then ST_* (v1, as the swift client reads them), then OS_*
/// (Keystone, as OpenStack clients read them), then the clouds.yaml entry
/// `cloud` or OS_CLOUD names. The version is `auth_version`, else 3 for an
/// OS_AUTH_URL or a URL ending in /v3, else 1.
pub fn swift_from(
    engine: &'static str,
    opts: &BTreeMap<String, String>,
    env: Env,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<SwiftAccess, EngineError> {
    let cloud = cloud_vars(engine, opts, env, read)?;
    let with_cloud = |k: &str| env(k).or_else(|| cloud.get(k).cloned());
    swift_with(engine, opts, &with_cloud)
}

fn swift_with(engine: &'static str, opts: &BTreeMap<String, String>, env: Env) -> Result<SwiftAccess, EngineError> {
    let bad = |option: &str, message: String| EngineError::BadOption { engine, option: option.into(), message };
    if let Some(token) = opts.get("token") {
        let storage_url = pick(opts, "storage_url", env, &["OS_STORAGE_URL"]).ok_or_else(|| {
            bad(
                "storage_url",
                "a token given with token= needs the storage URL it is for: pass --storage_url http://host:port/v1/AUTH_account".into(),
            )
        })?;
        check_endpoint(engine, "storage_url", &storage_url)?;
        return Ok(SwiftAccess { auth_url: storage_url.clone(), auth: SwiftAuth::Token(token.clone()), storage_url: Some(storage_url) });
    }
    let from_os = pick(opts, "auth", env, &["ST_AUTH"]).is_none();
    let auth_url = pick(opts, "auth", env, &["ST_AUTH", "OS_AUTH_URL"]).ok_or_else(|| {
        bad(
            "auth",
            "no Swift auth URL: pass --auth http://host:port/auth/v1.0 (or a Keystone .../v3), or set ST_AUTH or OS_AUTH_URL".into(),
        )
    })?;
    check_endpoint(engine, "auth", &auth_url)?;
    let storage_url = pick(opts, "storage_url", env, &["OS_STORAGE_URL"]);
    if let Some(u) = &storage_url {
        check_endpoint(engine, "storage_url", u)?;
    }
    let inferred = if from_os || auth_url.trim_end_matches('/').ends_with("/v3") { "3" } else { "1" };
    let version = pick(opts, "auth_version", env, &["ST_AUTH_VERSION", "OS_IDENTITY_API_VERSION"]).unwrap_or_else(|| inferred.into());
    let auth = match version.trim_start_matches('v') {
        "1" | "1.0" => {
            let user = pick(opts, "user", env, &["ST_USER"])
                .ok_or_else(|| bad("user", "no Swift user: pass --user account:user or set ST_USER".into()))?;
            let key = pick(opts, "key", env, &["ST_KEY"]).ok_or_else(|| bad("key", "no Swift key: set ST_KEY (or pass --key)".into()))?;
            SwiftAuth::V1 { user, key }
        }
        "3" => SwiftAuth::V3(keystone_from(opts, env, &bad)?),
        v => {
            return Err(bad(
                "auth_version",
                format!("'{v}': storbench speaks v1 (tempauth, swauth, RGW) and Keystone v3; Keystone v2.0 is not supported"),
            ))
        }
    };
    Ok(SwiftAccess { auth_url, auth, storage_url })
}

fn keystone_from(opts: &BTreeMap<String, String>, env: Env, bad: &dyn Fn(&str, String) -> EngineError) -> Result<Keystone, EngineError> {
    let user = pick(opts, "user", env, &["OS_USERNAME", "ST_USER"])
        .ok_or_else(|| bad("user", "no Keystone user: pass --user NAME or set OS_USERNAME".into()))?;
    let password = pick(opts, "key", env, &["OS_PASSWORD", "ST_KEY"])
        .ok_or_else(|| bad("key", "no Keystone password: set OS_PASSWORD (or pass --key)".into()))?;
    let project = pick(opts, "project", env, &["OS_PROJECT_NAME", "OS_TENANT_NAME"])
        .ok_or_else(|| bad("project", "no Keystone project: pass --project NAME or set OS_PROJECT_NAME".into()))?;
    let domain = |opt: &str, var: &str| pick(opts, opt, env, &[var]).unwrap_or_else(|| "Default".into());
    let interface = pick(opts, "interface", env, &["OS_INTERFACE", "OS_ENDPOINT_TYPE"]).unwrap_or_else(|| "public".into());
    let interface = interface.trim_end_matches("URL").to_ascii_lowercase();
    if !matches!(interface.as_str(), "public" | "internal" | "admin") {
        return Err(bad("interface", format!("'{interface}': use public, internal or admin")));
    }
    Ok(Keystone {
        user,
        password,
        user_domain: domain("user_domain", "OS_USER_DOMAIN_NAME"),
        project,
        project_domain: domain("project_domain", "OS_PROJECT_DOMAIN_NAME"),
        region: pick(opts, "region", env, &["OS_REGION_NAME"]),
        interface,
    })
}

/// Where OpenStack clients look for clouds.yaml and secure.yaml, in order.
fn cloud_files(env: Env, name: &str) -> Vec<String> {
    let home = env("HOME").unwrap_or_default();
    vec![format!("./{name}"), format!("{home}/.config/openstack/{name}"), format!("/etc/openstack/{name}")]
}

/// The cloud `cloud` (option) or OS_CLOUD names, from clouds.yaml merged with
/// secure.yaml, as the OS_* variables its settings stand for. Empty when no
/// cloud is named.
fn cloud_vars(
    engine: &'static str,
    opts: &BTreeMap<String, String>,
    env: Env,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<&'static str, String>, EngineError> {
    let Some(name) = pick(opts, "cloud", env, &["OS_CLOUD"]) else { return Ok(BTreeMap::new()) };
    let bad = |message: String| EngineError::BadOption { engine, option: "cloud".into(), message };
    let candidates = env("OS_CLIENT_CONFIG_FILE").map_or_else(|| cloud_files(env, "clouds.yaml"), |f| vec![f]);
    let (path, text) = candidates
        .iter()
        .find_map(|p| read(p).map(|t| (p.clone(), t)))
        .ok_or_else(|| bad(format!("cloud '{name}': no clouds.yaml (looked in {})", candidates.join(", "))))?;
    let docs = |text: &str, path: &str| {
        yaml_rust2::YamlLoader::load_from_str(text)
            .map_err(|e| bad(format!("{path}: {e}")))
            .map(|d| d.into_iter().next().unwrap_or(Yaml::Null))
    };
    use yaml_rust2::Yaml;
    let clouds = docs(&text, &path)?;
    let entry = &clouds["clouds"][name.as_str()];
    if entry.is_badvalue() {
        let have: Vec<&str> = clouds["clouds"].as_hash().map(|h| h.keys().filter_map(Yaml::as_str).collect()).unwrap_or_default();
        return Err(bad(format!("no cloud '{name}' in {path} (it has: {})", have.join(", "))));
    }
    let secure = cloud_files(env, "secure.yaml").iter().find_map(|p| read(p).map(|t| (p.clone(), t)));
    let secure = match secure {
        Some((p, t)) => docs(&t, &p)?,
        None => Yaml::Null,
    };
    let secret = &secure["clouds"][name.as_str()];
    let get = |path: &[&str]| {
        let walk = |mut y: &Yaml| {
            for k in path {
                y = &y[*k];
            }
            match y {
                Yaml::String(s) => Some(s.clone()),
                Yaml::Integer(i) => Some(i.to_string()),
                Yaml::Real(r) => Some(r.clone()),
                _ => None,
            }
        };
        walk(secret).or_else(|| walk(entry))
    };
    if let Some(t) = get(&["auth_type"]).filter(|t| !matches!(t.as_str(), "password" | "v3password")) {
        return Err(EngineError::Unavailable {
            engine,
            message: format!("cloud '{name}' in {path}: auth_type '{t}' (storbench does password auth)"),
        });
    }
    let map: [(&'static str, &[&str]); 10] = [
        ("OS_AUTH_URL", &["auth", "auth_url"]),
        ("OS_USERNAME", &["auth", "username"]),
        ("OS_PASSWORD", &["auth", "password"]),
        ("OS_PROJECT_NAME", &["auth", "project_name"]),
        ("OS_USER_DOMAIN_NAME", &["auth", "user_domain_name"]),
        ("OS_PROJECT_DOMAIN_NAME", &["auth", "project_domain_name"]),
        ("OS_REGION_NAME", &["region_name"]),
        ("OS_INTERFACE", &["interface"]),
        ("OS_IDENTITY_API_VERSION", &["identity_api_version"]),
        ("OS_STORAGE_URL", &["object_store_endpoint_override"]),
    ];
    let mut vars: BTreeMap<&'static str, String> = map.iter().filter_map(|(var, path)| Some((*var, get(path)?))).collect();
    // A domain_name stands for both domains when they are not given apart.
    if let Some(d) = get(&["auth", "domain_name"]) {
        vars.entry("OS_USER_DOMAIN_NAME").or_insert_with(|| d.clone());
        vars.entry("OS_PROJECT_DOMAIN_NAME").or_insert(d);
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
    }

    #[test]
    fn s3_keys_from_options_env_or_profile_file_and_never_in_debug_output() {
        let none = |_: &str| None;
        let env = env_of(&[("HOME", "/h"), ("AWS_ENDPOINT_URL", "http://127.0.0.1:7480"), ("AWS_PROFILE", "bench")]);
        let file = |p: &str| {
            (p == "/h/.aws/credentials").then(|| "[default]\naws_access_key_id = A\naws_secret_access_key = S\n[bench]\naws_access_key_id = AK2\naws_secret_access_key = SECRET2\n".to_string())
        };
        let a = s3_from("s3", &BTreeMap::new(), &env, &file).unwrap();
        assert_eq!((a.access_key.as_str(), a.secret_key.as_str(), a.region.as_str()), ("AK2", "SECRET2", "us-east-1"));
        assert!(!format!("{a:?}").contains("SECRET2"));
        let opts = BTreeMap::from([("access_key".to_string(), "X".to_string()), ("secret_key".to_string(), "Y".to_string())]);
        assert_eq!(s3_from("s3", &opts, &env, &none).unwrap().access_key, "X");
        let e = s3_from("s3", &BTreeMap::new(), &env_of(&[("AWS_ENDPOINT_URL", "http://x:1")]), &none).unwrap_err().to_string();
        assert!(e.contains("no S3 credentials") && e.contains("AWS_ACCESS_KEY_ID"), "{e}");
        let https = BTreeMap::from([("endpoint".to_string(), "https://s3.example.com".to_string())]);
        assert_eq!(s3_from("s3", &https, &env, &file).unwrap().endpoint, "https://s3.example.com");
        let ftp = BTreeMap::from([("endpoint".to_string(), "ftp://s3.example.com".to_string())]);
        let e = s3_from("s3", &ftp, &env, &file).unwrap_err().to_string();
        assert!(e.contains("needs an http:// or https:// scheme"), "{e}");
    }

    #[test]
    fn a_token_given_beforehand_needs_its_storage_url_and_is_never_shown() {
        let opts = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>();
        let a = swift_from("swift", &opts(&[("token", "AUTH_tk123"), ("storage_url", "http://h:7480/swift/v1")]), &|_| None, &|_| None)
            .unwrap();
        assert!(matches!(&a.auth, SwiftAuth::Token(t) if t == "AUTH_tk123"));
        assert_eq!(a.storage_url.as_deref(), Some("http://h:7480/swift/v1"));
        assert!(!format!("{a:?}").contains("tk123"));
        let e = swift_from("swift", &opts(&[("token", "AUTH_tk123")]), &|_| None, &|_| None).unwrap_err().to_string();
        assert!(e.contains("storage_url") && !e.contains("tk123"), "{e}");
    }

    /// The options sent to an agent give, on a machine with no variables
    /// and no files, the same access as here.
    #[test]
    fn resolved_options_reach_the_same_store_with_nothing_on_the_other_machine() {
        let none = |_: &str| None;
        let s3_env =
            env_of(&[("AWS_ENDPOINT_URL", "http://127.0.0.1:7480/"), ("AWS_ACCESS_KEY_ID", "AK"), ("AWS_SECRET_ACCESS_KEY", "SK")]);
        let sent = resolved_from("s3", &BTreeMap::new(), &s3_env, &none);
        let there = s3_from("s3", &sent, &none, &none).unwrap();
        assert_eq!((there.endpoint.as_str(), there.access_key.as_str(), there.secret_key.as_str()), ("http://127.0.0.1:7480", "AK", "SK"));
        let v1 = env_of(&[("ST_AUTH", "http://127.0.0.1:8080/auth/v1.0"), ("ST_USER", "test:tester"), ("ST_KEY", "testing")]);
        let there = swift_from("swift", &resolved_from("swift", &BTreeMap::new(), &v1, &none), &none, &none).unwrap();
        assert!(matches!(&there.auth, SwiftAuth::V1 { user, key } if user == "test:tester" && key == "testing"));
        let v3 = env_of(&[
            ("OS_AUTH_URL", "http://127.0.0.1:5000/v3"),
            ("OS_USERNAME", "u"),
            ("OS_PASSWORD", "pw"),
            ("OS_PROJECT_NAME", "p"),
            ("OS_USER_DOMAIN_NAME", "ud"),
            ("OS_INTERFACE", "internal"),
        ]);
        let there = swift_from("swift", &resolved_from("swift", &BTreeMap::new(), &v3, &none), &none, &none).unwrap();
        let SwiftAuth::V3(k) = there.auth else { panic!("keystone v3 expected") };
        assert_eq!((k.user.as_str(), k.password.as_str(), k.user_domain.as_str(), k.interface.as_str()), ("u", "pw", "ud", "internal"));
        assert!(resolved_from("s3", &BTreeMap::new(), &none, &none).is_empty(), "nothing resolves: the agent looks itself");
        assert!(resolved_from("rbd", &BTreeMap::new(), &s3_env, &none).is_empty());
    }

    #[test]
    fn swift_v1_from_st_variables() {
        let env = env_of(&[("ST_AUTH", "http://127.0.0.1:8080/auth/v1.0"), ("ST_USER", "test:tester"), ("ST_KEY", "testing")]);
        let a = swift_from("swift", &BTreeMap::new(), &env, &|_| None).unwrap();
        assert!(matches!(&a.auth, SwiftAuth::V1 { user, .. } if user == "test:tester"));
        assert!(!format!("{a:?}").contains("testing"));
    }

    #[test]
    fn keystone_v3_from_os_variables_or_options() {
        let env = env_of(&[
            ("OS_AUTH_URL", "http://k:5000/v3"),
            ("OS_USERNAME", "alice"),
            ("OS_PASSWORD", "s3cret"),
            ("OS_PROJECT_NAME", "bench"),
            ("OS_USER_DOMAIN_NAME", "ldap"),
            ("OS_INTERFACE", "internalURL"),
        ]);
        let a = swift_from("swift", &BTreeMap::new(), &env, &|_| None).unwrap();
        let SwiftAuth::V3(k) = &a.auth else { panic!("{a:?}") };
        assert_eq!((k.user.as_str(), k.project.as_str(), k.user_domain.as_str()), ("alice", "bench", "ldap"));
        assert_eq!((k.project_domain.as_str(), k.interface.as_str(), k.region.as_deref()), ("Default", "internal", None));
        assert!(!format!("{a:?}").contains("s3cret"));
        // Options name a v3 URL: v3 without OS_* variables for the URL.
        let opts: BTreeMap<String, String> = [("auth", "http://k:5000/v3/"), ("user", "bob"), ("key", "pw"), ("project", "p")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert!(matches!(swift_from("swift", &opts, &|_| None, &|_| None).unwrap().auth, SwiftAuth::V3(_)));
        let no_project = env_of(&[("OS_AUTH_URL", "http://k:5000/v3"), ("OS_USERNAME", "a"), ("OS_PASSWORD", "b")]);
        let e = swift_from("swift", &BTreeMap::new(), &no_project, &|_| None).unwrap_err().to_string();
        assert!(e.contains("OS_PROJECT_NAME"), "{e}");
        let v2 = env_of(&[("OS_AUTH_URL", "http://k:5000/v2.0"), ("OS_IDENTITY_API_VERSION", "2")]);
        let e = swift_from("swift", &BTreeMap::new(), &v2, &|_| None).unwrap_err().to_string();
        assert!(e.contains("v2.0 is not supported"), "{e}");
    }

    #[test]
    fn keystone_from_a_clouds_yaml_entry_with_secure_yaml_merged() {
        let env = env_of(&[("HOME", "/h"), ("OS_CLOUD", "lab")]);
        let clouds = "clouds:\n  lab:\n    auth:\n      auth_url: http://k:5000/v3\n      username: alice\n      project_name: bench\n      domain_name: ldap\n    region_name: R2\n    identity_api_version: 3\n  other: {}\n";
        let secure = "clouds:\n  lab:\n    auth:\n      password: from-secure\n";
        let files = |p: &str| match p {
            "/h/.config/openstack/clouds.yaml" => Some(clouds.to_string()),
            "/etc/openstack/secure.yaml" => Some(secure.to_string()),
            _ => None,
        };
        let a = swift_from("swift", &BTreeMap::new(), &env, &files).unwrap();
        assert_eq!(a.auth_url, "http://k:5000/v3");
        let SwiftAuth::V3(k) = &a.auth else { panic!("{a:?}") };
        assert_eq!((k.user.as_str(), k.password.as_str(), k.project.as_str()), ("alice", "from-secure", "bench"));
        assert_eq!((k.user_domain.as_str(), k.project_domain.as_str(), k.region.as_deref()), ("ldap", "ldap", Some("R2")));
        // The environment wins over the file.
        let env2 = env_of(&[("HOME", "/h"), ("OS_CLOUD", "lab"), ("OS_USERNAME", "bob")]);
        let SwiftAuth::V3(k) = swift_from("swift", &BTreeMap::new(), &env2, &files).unwrap().auth else { panic!() };
        assert_eq!(k.user, "bob");
        let missing = env_of(&[("HOME", "/h"), ("OS_CLOUD", "nope")]);
        let e = swift_from("swift", &BTreeMap::new(), &missing, &files).unwrap_err().to_string();
        assert!(e.contains("no cloud 'nope'") && e.contains("lab, other"), "{e}");
        let e = swift_from("swift", &BTreeMap::new(), &missing, &|_| None).unwrap_err().to_string();
        assert!(e.contains("no clouds.yaml (looked in ./clouds.yaml, /h/.config/openstack/clouds.yaml"), "{e}");
    }
}
