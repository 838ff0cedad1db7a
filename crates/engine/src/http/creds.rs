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

pub fn s3(engine: &'static str, opts: &BTreeMap<String, String>) -> Result<S3Access, EngineError> {
    s3_from(engine, opts, &|k| std::env::var(k).ok(), &|p| std::fs::read_to_string(p).ok())
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

/// Only plain HTTP is spoken (no TLS stack in this build): say so up front.
pub fn check_endpoint(engine: &'static str, option: &str, url: &str) -> Result<(), EngineError> {
    let uri: ::http::Uri = url.parse().map_err(|_| EngineError::BadOption {
        engine,
        option: option.into(),
        message: format!("'{url}' is not a URL (form: http://host:port)"),
    })?;
    match uri.scheme_str() {
        Some("http") => Ok(()),
        Some("https") => Err(EngineError::Unsupported {
            engine,
            message: format!("{option} '{url}': https is not supported yet; use an http endpoint (or a TLS-terminating proxy)"),
        }),
        _ => Err(EngineError::BadOption { engine, option: option.into(), message: format!("'{url}' needs an http:// scheme") }),
    }
}

/// Swift v1 (tempauth/swauth) access.
#[derive(Clone)]
pub struct SwiftAccess {
    pub auth_url: String,
    pub user: String,
    pub key: String,
}

impl std::fmt::Debug for SwiftAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SwiftAccess {{ auth_url: {}, user: {}, key: <redacted> }}", self.auth_url, self.user)
    }
}

pub fn swift(engine: &'static str, opts: &BTreeMap<String, String>) -> Result<SwiftAccess, EngineError> {
    swift_from(engine, opts, &|k| std::env::var(k).ok())
}

pub fn swift_from(engine: &'static str, opts: &BTreeMap<String, String>, env: Env) -> Result<SwiftAccess, EngineError> {
    if pick(opts, "auth", env, &["ST_AUTH"]).is_none() && env("OS_AUTH_URL").is_some() {
        return Err(EngineError::Unsupported {
            engine,
            message: "Keystone (OS_AUTH_URL) authentication is not supported yet; use v1 auth (ST_AUTH, ST_USER, ST_KEY)".into(),
        });
    }
    let auth_url = pick(opts, "auth", env, &["ST_AUTH"]).ok_or_else(|| EngineError::BadOption {
        engine,
        option: "auth".into(),
        message: "no Swift auth URL: pass --auth http://host:port/auth/v1.0 or set ST_AUTH".into(),
    })?;
    check_endpoint(engine, "auth", &auth_url)?;
    let user = pick(opts, "user", env, &["ST_USER"]).ok_or_else(|| EngineError::BadOption {
        engine,
        option: "user".into(),
        message: "no Swift user: pass --user account:user or set ST_USER".into(),
    })?;
    let key = pick(opts, "key", env, &["ST_KEY"]).ok_or_else(|| EngineError::BadOption {
        engine,
        option: "key".into(),
        message: "no Swift key: set ST_KEY (or pass --key)".into(),
    })?;
    Ok(SwiftAccess { auth_url, user, key })
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
        let e = s3_from("s3", &https, &env, &file).unwrap_err().to_string();
        assert!(e.contains("https is not supported"), "{e}");
    }

    #[test]
    fn swift_v1_from_st_variables() {
        let env = env_of(&[("ST_AUTH", "http://127.0.0.1:8080/auth/v1.0"), ("ST_USER", "test:tester"), ("ST_KEY", "testing")]);
        let a = swift_from("swift", &BTreeMap::new(), &env).unwrap();
        assert_eq!(a.user, "test:tester");
        assert!(!format!("{a:?}").contains("testing"));
        let e = swift_from("swift", &BTreeMap::new(), &env_of(&[("OS_AUTH_URL", "http://k:5000/v3")])).unwrap_err().to_string();
        assert!(e.contains("Keystone"), "{e}");
    }
}
