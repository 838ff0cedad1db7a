//! Swift authentication: v1 (user and key in headers; tempauth, swauth, RGW)
//! and Keystone v3 (password, project-scoped token; Swift's endpoint from the
//! token's service catalog). Either gives a storage URL and a token. Errors
//! name the user, project and URL, never the key or password.

use super::creds::{Keystone, SwiftAccess, SwiftAuth};
use super::{fetch_or_why, Body, Client, Failure};
use crate::EngineError;
use bytes::Bytes;
use std::time::Duration;
use storbench_metrics::ErrorKind;

const NAME: &str = "swift";

/// Storage URL and token from the last authentication.
pub struct Session {
    pub storage_url: String,
    pub token: String,
}

pub async fn authenticate(client: &Client, a: &SwiftAccess, limit: Duration) -> Result<Session, EngineError> {
    let mut s = match &a.auth {
        SwiftAuth::V1 { user, key } => v1(client, a, user, key, limit).await?,
        SwiftAuth::V3(k) => v3(client, a, k, limit).await?,
        SwiftAuth::Token(token) => Session { storage_url: String::new(), token: token.clone() },
    };
    if let Some(u) = &a.storage_url {
        s.storage_url = u.clone();
    }
    s.storage_url = s.storage_url.trim_end_matches('/').to_string();
    Ok(s)
}

pub fn unreachable_err(url: &str, f: Failure) -> EngineError {
    f.unreachable(NAME, &format!("{url}: cannot reach the server"))
}

/// The answer of an auth request, or the error its status means.
async fn send(
    client: &Client,
    a: &SwiftAccess,
    req: ::http::Request<Body>,
    limit: Duration,
) -> Result<(::http::response::Parts, Bytes), EngineError> {
    let (parts, body) = fetch_or_why(client, req, limit).await.map_err(|f| unreachable_err(&a.auth_url, f))?;
    match parts.status.as_u16() {
        200..=299 => Ok((parts, body)),
        s @ (401 | 403) => Err(EngineError::Rejected {
            engine: NAME,
            message: format!("authentication as {} at {} was refused (HTTP {s}): check the credentials", a.who(), a.auth_url),
            kind: ErrorKind::Permission,
        }),
        s => Err(EngineError::Rejected {
            engine: NAME,
            message: format!("authentication at {} answered HTTP {s}", a.auth_url),
            kind: ErrorKind::of_http(s),
        }),
    }
}

fn bad_url(a: &SwiftAccess, e: impl std::fmt::Display) -> EngineError {
    EngineError::BadOption { engine: NAME, option: "auth".into(), message: format!("'{}': {e}", a.auth_url) }
}

async fn v1(client: &Client, a: &SwiftAccess, user: &str, key: &str, limit: Duration) -> Result<Session, EngineError> {
    let req = ::http::Request::builder()
        .uri(&a.auth_url)
        .header("x-auth-user", user)
        .header("x-auth-key", key)
        .body(Body::new(Bytes::new()))
        .map_err(|e| bad_url(a, e))?;
    let (parts, _) = send(client, a, req, limit).await?;
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    match (header("x-storage-url"), header("x-auth-token")) {
        (Some(storage_url), Some(token)) => Ok(Session { storage_url, token }),
        _ => Err(EngineError::Rejected {
            engine: NAME,
            message: format!("{} did not return X-Storage-Url and X-Auth-Token", a.auth_url),
            kind: ErrorKind::Other,
        }),
    }
}

/// POST {auth}/auth/tokens with a password and a project scope; the token
/// comes back in X-Subject-Token, Swift's URL in the catalog.
async fn v3(client: &Client, a: &SwiftAccess, k: &Keystone, limit: Duration) -> Result<Session, EngineError> {
    let base = a.auth_url.trim_end_matches('/');
    let url = if base.ends_with("/v3") { format!("{base}/auth/tokens") } else { format!("{base}/v3/auth/tokens") };
    let body = serde_json::json!({ "auth": {
        "identity": { "methods": ["password"], "password": { "user": {
            "name": k.user, "domain": { "name": k.user_domain }, "password": k.password } } },
        "scope": { "project": { "name": k.project, "domain": { "name": k.project_domain } } } } });
    let body = Bytes::from(serde_json::to_vec(&body).expect("JSON of strings"));
    let req = ::http::Request::builder()
        .method("POST")
        .uri(&url)
        .header(::http::header::CONTENT_TYPE, "application/json")
        .header(::http::header::CONTENT_LENGTH, body.len())
        .body(Body::new(body))
        .map_err(|e| bad_url(a, e))?;
    let (parts, body) = send(client, a, req, limit).await?;
    let token = parts.headers.get("x-subject-token").and_then(|v| v.to_str().ok()).map(str::to_string);
    let token = token.ok_or_else(|| EngineError::Rejected {
        engine: NAME,
        message: format!("{url} returned no X-Subject-Token"),
        kind: ErrorKind::Other,
    })?;
    let doc: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let storage_url = match &a.storage_url {
        Some(u) => u.clone(),
        None => catalog_url(&doc["token"]["catalog"], k).map_err(|message| EngineError::Rejected {
            engine: NAME,
            message,
            kind: ErrorKind::NotFound,
        })?,
    };
    Ok(Session { storage_url, token })
}

/// The object-store endpoint for the interface (and region, when given).
fn catalog_url(catalog: &serde_json::Value, k: &Keystone) -> Result<String, String> {
    let services = catalog.as_array().map(Vec::as_slice).unwrap_or_default();
    let swift = services.iter().find(|s| s["type"] == "object-store").ok_or_else(|| {
        let types: Vec<&str> = services.iter().filter_map(|s| s["type"].as_str()).collect();
        format!("Keystone's catalog has no object-store service (it has: {}); pass --storage_url", types.join(", "))
    })?;
    let endpoints = swift["endpoints"].as_array().map(Vec::as_slice).unwrap_or_default();
    let in_region = |e: &&serde_json::Value| k.region.as_deref().is_none_or(|r| e["region_id"] == r || e["region"] == r);
    endpoints
        .iter()
        .filter(in_region)
        .find(|e| e["interface"] == k.interface.as_str())
        .and_then(|e| e["url"].as_str())
        .map(str::to_string)
        .ok_or_else(|| {
            let have: Vec<String> = endpoints
                .iter()
                .map(|e| format!("{} in {}", e["interface"].as_str().unwrap_or("?"), e["region_id"].as_str().unwrap_or("?")))
                .collect();
            let region = k.region.as_deref().map(|r| format!(" in region {r}")).unwrap_or_default();
            format!("no {} object-store endpoint{region} in Keystone's catalog (it has: {})", k.interface, have.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ks(region: Option<&str>, interface: &str) -> Keystone {
        Keystone {
            user: "u".into(),
            password: "p".into(),
            user_domain: "Default".into(),
            project: "p".into(),
            project_domain: "Default".into(),
            region: region.map(str::to_string),
            interface: interface.into(),
        }
    }

    #[test]
    fn the_catalog_gives_swift_for_the_interface_and_region() {
        let catalog = serde_json::json!([
            { "type": "identity", "endpoints": [{ "interface": "public", "region_id": "R1", "url": "http://k/v3" }] },
            { "type": "object-store", "endpoints": [
                { "interface": "internal", "region_id": "R1", "url": "http://int1/v1/AUTH_p" },
                { "interface": "public", "region_id": "R1", "url": "http://pub1/v1/AUTH_p" },
                { "interface": "public", "region_id": "R2", "url": "http://pub2/v1/AUTH_p" } ] }
        ]);
        assert_eq!(catalog_url(&catalog, &ks(None, "public")).unwrap(), "http://pub1/v1/AUTH_p");
        assert_eq!(catalog_url(&catalog, &ks(Some("R2"), "public")).unwrap(), "http://pub2/v1/AUTH_p");
        assert_eq!(catalog_url(&catalog, &ks(None, "internal")).unwrap(), "http://int1/v1/AUTH_p");
        let e = catalog_url(&catalog, &ks(Some("R2"), "admin")).unwrap_err();
        assert!(e.contains("no admin object-store endpoint in region R2") && e.contains("public in R2"), "{e}");
        let e = catalog_url(&serde_json::json!([{ "type": "identity", "endpoints": [] }]), &ks(None, "public")).unwrap_err();
        assert!(e.contains("no object-store service (it has: identity)"), "{e}");
    }
}
