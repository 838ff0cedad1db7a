//! A fleet's credentials: one directory made by `storbench agent --init`.
//!
//! ```text
//! ca.pem              the fleet's own CA: the only one agents and coordinators trust
//! ca.key              its key (to sign more certificates later; keep it off the agents)
//! agent.pem/.key      every agent's server certificate (name "storbench-agent")
//! coordinator.pem/.key  the coordinator's client certificate (agents with --mtls ask for it)
//! token               the fleet token every coordinator sends (agents without --mtls check it)
//! ```
//!
//! Keys and the token are written readable by their owner only, and never
//! printed: an agent that refuses a token says so without echoing it. The
//! directory is made 0700 and every file's mode is set after it is written
//! (0600, certificates 0644), whatever the umask: under umask 000 the
//! directory was 0777, and anyone could have replaced ca.pem or the token.
//! An existing directory that others can write is refused.

use crate::AGENT_SERVER_NAME;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

const FILES: [&str; 7] = ["ca.pem", "ca.key", "agent.pem", "agent.key", "coordinator.pem", "coordinator.key", "token"];

/// Make a fleet directory: CA, agent and coordinator certificates, token.
/// `hosts` are extra names or addresses for the agent certificate (it always
/// carries "storbench-agent", the name coordinators check). Refuses a
/// directory that already holds any of the files: credentials are never
/// overwritten (agents started with them would be locked out).
pub fn init(dir: &Path, hosts: &[String]) -> Result<Vec<PathBuf>, String> {
    if let Some(f) = FILES.iter().map(|f| dir.join(f)).find(|p| p.exists()) {
        return Err(format!("{} exists: a fleet directory is made once; choose an empty directory", f.display()));
    }
    own_dir(dir)?;
    let made = make(hosts).map_err(|e| format!("could not make the fleet's certificates: {e}"))?;
    let mut written = Vec::new();
    for (name, text, secret) in made {
        let path = dir.join(name);
        write_new(&path, text.as_bytes(), secret).map_err(|e| format!("could not write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// (file, contents, secret) for every file of a new fleet directory.
fn make(hosts: &[String]) -> Result<Vec<(&'static str, String, bool)>, rcgen::Error> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose};
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.distinguished_name.push(DnType::CommonName, "storbench fleet CA");
    let ca_cert = ca.self_signed(&ca_key)?;

    let mut names = vec![AGENT_SERVER_NAME.to_string()];
    names.extend(hosts.iter().filter(|h| !h.is_empty()).cloned());
    let agent_key = KeyPair::generate()?;
    let mut agent = CertificateParams::new(names)?;
    agent.distinguished_name.push(DnType::CommonName, AGENT_SERVER_NAME);
    agent.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let agent_cert = agent.signed_by(&agent_key, &ca_cert, &ca_key)?;

    let coord_key = KeyPair::generate()?;
    let mut coord = CertificateParams::new(vec!["storbench-coordinator".to_string()])?;
    coord.distinguished_name.push(DnType::CommonName, "storbench coordinator");
    coord.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let coord_cert = coord.signed_by(&coord_key, &ca_cert, &ca_key)?;

    Ok(vec![
        ("ca.pem", ca_cert.pem(), false),
        ("ca.key", ca_key.serialize_pem(), true),
        ("agent.pem", agent_cert.pem(), false),
        ("agent.key", agent_key.serialize_pem(), true),
        ("coordinator.pem", coord_cert.pem(), false),
        ("coordinator.key", coord_key.serialize_pem(), true),
        ("token", format!("{}\n", new_token()), true),
    ])
}

/// 32 random bytes, hex.
fn new_token() -> String {
    random_hex(32)
}

/// `n` bytes from the system's random source, as hex (tokens, names nobody else picks).
pub fn random_hex(n: usize) -> String {
    use ring::rand::SecureRandom as _;
    let mut bytes = vec![0u8; n];
    ring::rand::SystemRandom::new().fill(&mut bytes).expect("the system's random source works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `dir` made 0700 (its parents as the umask says), or an existing one
/// that only its owner can write.
fn own_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(format!("{} exists and is not a directory", dir.display())),
        Ok(m) if m.mode() & 0o022 != 0 => Err(format!(
            "{} can be written by others (mode {:o}): they could replace the fleet's certificates or token; \
             choose a directory only you can write (chmod 700 {})",
            dir.display(),
            m.mode() & 0o777,
            dir.display()
        )),
        Ok(_) => Ok(()),
        Err(_) => {
            let made = |e: std::io::Error| format!("could not create {}: {e}", dir.display());
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(made)?;
            }
            std::fs::DirBuilder::new().mode(0o700).create(dir).map_err(made)?;
            // The umask may have taken bits from 0700, never added any; set it exactly.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(made)
        }
    }
}

fn write_new(path: &Path, bytes: &[u8], secret: bool) -> std::io::Result<()> {
    let mode = if secret { 0o600 } else { 0o644 };
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path)?;
    // Exactly this mode, whatever the umask.
    f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    f.write_all(bytes)?;
    f.sync_all()
}

fn read(dir: &Path, name: &str) -> Result<String, String> {
    storbench_workload::input::read_text(&dir.join(name), "fleet file", storbench_workload::input::CREDENTIALS_LIMIT).map_err(|e| {
        format!(
            "{}: {e}; make a fleet directory with `storbench agent --init {}` and give it to every agent and coordinator",
            dir.join(name).display(),
            dir.display()
        )
    })
}

/// The fleet token (a non-secret error if it is missing or empty).
fn token(dir: &Path) -> Result<String, String> {
    let t = read(dir, "token")?.trim().to_string();
    if t.is_empty() {
        return Err(format!("{} is empty", dir.join("token").display()));
    }
    Ok(t)
}

/// What an agent serves with.
pub struct AgentCreds {
    pub tls: ServerTlsConfig,
    pub token: String,
}

/// An agent's TLS (its certificate; with `mtls`, coordinators must show a
/// certificate of the fleet's CA) and the token it checks.
pub fn agent(dir: &Path, mtls: bool) -> Result<AgentCreds, String> {
    let identity = Identity::from_pem(read(dir, "agent.pem")?, read(dir, "agent.key")?);
    let mut tls = ServerTlsConfig::new().identity(identity);
    if mtls {
        tls = tls.client_ca_root(Certificate::from_pem(read(dir, "ca.pem")?));
    }
    Ok(AgentCreds { tls, token: token(dir)? })
}

/// What a coordinator connects with.
#[derive(Clone)]
pub struct CoordinatorCreds {
    pub tls: ClientTlsConfig,
    pub token: String,
}

/// A coordinator's TLS (trusting only the fleet's CA, showing its client
/// certificate to agents that ask) and the token it sends.
pub fn coordinator(dir: &Path) -> Result<CoordinatorCreds, String> {
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(read(dir, "ca.pem")?))
        .identity(Identity::from_pem(read(dir, "coordinator.pem")?, read(dir, "coordinator.key")?))
        .domain_name(AGENT_SERVER_NAME);
    Ok(CoordinatorCreds { tls, token: token(dir)? })
}

/// Constant-time comparison, so a wrong token's timing says nothing of the right one.
pub fn token_matches(expected: &str, given: &str) -> bool {
    use subtle::ConstantTimeEq as _;
    expected.len() == given.len() && bool::from(expected.as_bytes().ct_eq(given.as_bytes()))
}

/// The default fleet directory: $STORBENCH_FLEET_DIR, else ~/.config/storbench/fleet.
pub fn default_dir() -> PathBuf {
    storbench_engine::tcp::default_fleet_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_makes_every_file_keeps_secrets_private_and_never_overwrites() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("sb-fleet-init-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = init(&dir, &["10.0.0.7".into()]).unwrap();
        assert_eq!(files.len(), FILES.len());
        for f in ["ca.key", "agent.key", "coordinator.key", "token"] {
            let mode = std::fs::metadata(dir.join(f)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{f}");
        }
        assert_eq!(token(&dir).unwrap().len(), 64);
        assert!(agent(&dir, true).is_ok() && coordinator(&dir).is_ok());
        let again = init(&dir, &[]).unwrap_err();
        assert!(again.contains("exists"), "{again}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abc", "abd") && !token_matches("abc", "ab") && !token_matches("abc", ""));
    }
}
