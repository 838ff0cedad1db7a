//! TLS for https endpoints: rustls (ring provider) trusting the system's CA
//! store, plus a CA file when given (`ca_cert`, or AWS_CA_BUNDLE / OS_CACERT);
//! `insecure=1` skips certificate checks (self-signed test servers), and the
//! target's label says so. Plain http endpoints go through the same
//! connector untouched.

use crate::EngineError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::sync::{Arc, Mutex};

/// What to trust.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM file of extra CA certificates.
    pub ca_cert: Option<String>,
    /// Accept any certificate.
    pub insecure: bool,
}

/// The client configuration for `t`, built once per process and reused by
/// every worker (loading the system store takes milliseconds).
pub fn client_config(engine: &'static str, t: &TlsOptions) -> Result<Arc<ClientConfig>, EngineError> {
    static BUILT: Mutex<Vec<(TlsOptions, Arc<ClientConfig>)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = built.iter().find(|(o, _)| o == t) {
        return Ok(c.clone());
    }
    let c = Arc::new(build(engine, t)?);
    built.push((t.clone(), c.clone()));
    Ok(c)
}

fn build(engine: &'static str, t: &TlsOptions) -> Result<ClientConfig, EngineError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| EngineError::failed(engine, "TLS set-up", e))?;
    if t.insecure {
        return Ok(builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate(provider))).with_no_client_auth());
    }
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = &t.ca_cert {
        let bad = |message: String| EngineError::BadOption { engine, option: "ca_cert".into(), message };
        // Read with a bound (a path to /dev/zero would otherwise be read forever).
        let limit = storbench_workload::input::CREDENTIALS_LIMIT;
        let pem =
            storbench_workload::input::read_bytes(path.as_ref(), "certificate file", limit).map_err(|e| bad(format!("'{path}': {e}")))?;
        let certs: Vec<CertificateDer> =
            CertificateDer::pem_slice_iter(&pem).collect::<Result<_, _>>().map_err(|e| bad(format!("'{path}': {e}")))?;
        if certs.is_empty() {
            return Err(bad(format!("'{path}' holds no PEM certificate")));
        }
        for c in certs {
            roots.add(c).map_err(|e| bad(format!("'{path}': {e}")))?;
        }
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

/// Accepts every certificate but still checks the handshake signatures.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
