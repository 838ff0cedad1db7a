//! NBD URIs, as fio's nbd engine and libnbd take them (the subset that
//! needs no TLS): `nbd://HOST[:PORT][/EXPORT]` and
//! `nbd+unix:///[EXPORT]?socket=PATH`.

use std::path::PathBuf;

/// The port of an NBD server unless the URI gives one (IANA's).
pub const DEFAULT_PORT: u16 = 10809;

/// The forms accepted, for error messages.
pub const FORMS: &str = "nbd://HOST[:PORT][/EXPORT] (port 10809 unless given) or nbd+unix:///[EXPORT]?socket=PATH";

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addr {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// A parsed URI: the server and the export's name (empty: the default export).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NbdUri {
    pub addr: Addr,
    pub export: String,
}

impl NbdUri {
    /// The URI again, normalised, with nothing but the address, port,
    /// export and socket (user names and other query parameters, which
    /// may carry secrets such as TLS key files, never get this far).
    pub fn display(&self) -> String {
        match &self.addr {
            Addr::Tcp { host, port } if host.contains(':') => format!("nbd://[{host}]:{port}/{}", self.export),
            Addr::Tcp { host, port } => format!("nbd://{host}:{port}/{}", self.export),
            Addr::Unix(p) => format!("nbd+unix:///{}?socket={}", self.export, p.display()),
        }
    }
}

/// Parse a URI; the error says what is wrong and which forms are accepted.
pub fn parse(uri: &str) -> Result<NbdUri, String> {
    let shown = redact(uri);
    let bad = |why: &str| format!("'{shown}': {why}; give {FORMS}");
    let (scheme, rest) = uri.split_once("://").ok_or_else(|| bad("not a URI"))?;
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let export = storbench_workload::units::percent_decode(path).ok_or_else(|| bad("the export name has a bad %-escape"))?;
    let socket = socket_param(query).map_err(|e| bad(&e))?;
    match scheme {
        "nbd" => {
            if socket.is_some() {
                return Err(bad("socket= belongs to nbd+unix:// URIs"));
            }
            let (host, port) = host_port(authority).map_err(|e| bad(&e))?;
            Ok(NbdUri { addr: Addr::Tcp { host, port }, export })
        }
        "nbd+unix" => {
            if !authority.is_empty() {
                return Err(bad("an nbd+unix URI names no host (nbd+unix:///EXPORT?socket=PATH)"));
            }
            let path = socket.ok_or_else(|| bad("nbd+unix needs ?socket=PATH"))?;
            Ok(NbdUri { addr: Addr::Unix(PathBuf::from(path)), export })
        }
        "nbds" | "nbds+unix" => Err(bad("TLS (nbds) is not supported")),
        _ => Err(bad(&format!("unknown scheme '{scheme}'"))),
    }
}

/// The URI with any user information (which may hold a password) and
/// query values other than the socket path hidden, for error messages.
fn redact(uri: &str) -> String {
    let (head, query) = uri.split_once('?').map_or((uri, None), |(h, q)| (h, Some(q)));
    let head = match head.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            match rest[..end].rfind('@') {
                Some(at) => format!("{scheme}://***{}", &rest[at..]),
                None => head.to_string(),
            }
        }
        None => head.to_string(),
    };
    let Some(query) = query else { return head };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some(("socket", v)) => format!("socket={v}"),
            Some((k, _)) => format!("{k}=***"),
            None => p.to_string(),
        })
        .collect();
    format!("{head}?{}", params.join("&"))
}

/// The `socket=` parameter; any other parameter is refused rather than
/// silently ignored (libnbd's tls-* parameters would change the meaning).
fn socket_param(query: Option<&str>) -> Result<Option<String>, String> {
    let mut socket = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "socket" if !v.is_empty() => {
                socket = Some(storbench_workload::units::percent_decode(v).ok_or("the socket path has a bad %-escape")?)
            }
            "socket" => return Err("socket= is empty".into()),
            _ => return Err(format!("query parameter '{k}' is not supported (only socket=)")),
        }
    }
    Ok(socket)
}

/// HOST[:PORT], HOST an IPv6 address in brackets or a name or IPv4 address.
fn host_port(authority: &str) -> Result<(String, u16), String> {
    if authority.contains('@') {
        return Err("user names are not supported".into());
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (h, after) = rest.split_once(']').ok_or("an IPv6 address lacks its ']'")?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("'{p}' is not a port number"))?,
    };
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: &str, port: u16, export: &str) -> NbdUri {
        NbdUri { addr: Addr::Tcp { host: host.into(), port }, export: export.into() }
    }

    #[test]
    fn tcp_forms() {
        assert_eq!(parse("nbd://localhost").unwrap(), tcp("localhost", 10809, ""));
        assert_eq!(parse("nbd://127.0.0.1:1234/").unwrap(), tcp("127.0.0.1", 1234, ""));
        assert_eq!(parse("nbd://h:1/disk%20one").unwrap(), tcp("h", 1, "disk one"));
        assert_eq!(parse("nbd://h/a/b").unwrap(), tcp("h", 10809, "a/b"));
        assert_eq!(parse("nbd://[::1]:99/x").unwrap(), tcp("::1", 99, "x"));
        assert_eq!(parse("nbd://[::1]/x").unwrap().display(), "nbd://[::1]:10809/x");
    }

    #[test]
    fn unix_forms() {
        let u = parse("nbd+unix:///exp?socket=/tmp/s.sock").unwrap();
        assert_eq!(u, NbdUri { addr: Addr::Unix("/tmp/s.sock".into()), export: "exp".into() });
        assert_eq!(u.display(), "nbd+unix:///exp?socket=/tmp/s.sock");
        assert_eq!(parse("nbd+unix:///?socket=/s").unwrap().export, "");
        assert_eq!(parse("nbd+unix://?socket=/s").unwrap().export, "");
    }

    #[test]
    fn bad_uris_name_the_forms() {
        for bad in [
            "localhost:10809",
            "http://h/x",
            "nbd://",
            "nbd://h:0",
            "nbd://h:99999",
            "nbd://h:port",
            "nbd://u:pw@h/x",
            "nbd+unix:///x",
            "nbd+unix://host/x?socket=/s",
            "nbd+unix:///x?socket=",
            "nbd://h/x?socket=/s",
            "nbd://h/x?tls-psk-file=/k",
            "nbds://h/x",
            "nbd://h/%zz",
            "nbd://[::1/x",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("nbd://HOST[:PORT][/EXPORT]") && e.contains("nbd+unix:///[EXPORT]?socket=PATH"), "{bad}: {e}");
        }
        assert!(parse("nbds://h/x").unwrap_err().contains("TLS"));
        for secret in ["nbd://u:secret@h/x", "nbd://h/x?tls-psk-file=secret"] {
            assert!(!parse(secret).unwrap_err().contains("secret"), "{secret}");
        }
    }
}
