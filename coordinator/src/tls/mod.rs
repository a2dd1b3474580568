//! TLS for the gRPC port and the web view (one certificate for both), served
//! by the coordinator itself (tokio-rustls on
//! the ring provider, ALPN `h2`) rather than by tonic, so that what goes
//! wrong can be named:
//!
//! * [`ServerTls::from_pem`] refuses, in plain words, a certificate no
//!   client accepts ([`certificate::judge`]: a CA certificate, expired or not
//!   yet valid, naming no host, not for servers) and a key that is not the
//!   certificate's;
//! * [`accept`] hands tonic the connections whose handshake succeeded, logs
//!   the alert a client aborts a handshake with and what it usually means,
//!   and answers a client that speaks plain HTTP/2 or HTTP/1 to the TLS port
//!   with a message saying to use `https://` and `--ca`; [`accept::web_incoming`]
//!   does the same for the web view (ALPN `http/1.1`), whose plain-HTTP
//!   visitors are sent to `https://`;
//! * [`issue`] makes the cluster CA and the coordinator's certificate
//!   (`xq-coordinator cert`).

pub mod accept;
pub mod certificate;
pub mod issue;

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub use certificate::{CertificateInfo, CertificateProblem};

/// Why TLS cannot be served with a certificate and key.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error(
        "no certificate in the certificate file (it holds no `-----BEGIN CERTIFICATE-----` block)"
    )]
    NoCertificate,
    #[error("cannot read the certificate: {0}")]
    Certificate(String),
    #[error(
        "cannot read the private key (a PEM `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` block): {0}"
    )]
    Key(String),
    #[error(transparent)]
    Problem(#[from] CertificateProblem),
    #[error(
        "the private key is not the certificate's key: give the key made with this \
         certificate (`xq-coordinator cert` writes coordinator-key.pem beside coordinator.pem)"
    )]
    KeyMismatch,
    #[error("cannot set up TLS: {0}")]
    Rustls(rustls::Error),
}

/// A checked certificate and key, ready to serve.
#[derive(Clone)]
pub struct ServerTls {
    /// The gRPC port's (ALPN `h2`).
    config: Arc<rustls::ServerConfig>,
    /// The web view's: the same certificate and key, ALPN `http/1.1`.
    web: Arc<rustls::ServerConfig>,
    info: CertificateInfo,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("names", &self.info.names)
            .field("not_after", &self.info.not_after)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// The certificate chain (server certificate first) and private key,
    /// both PEM, checked now: [`TlsSetupError`] says why clients could not
    /// use them.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Self, TlsSetupError> {
        Self::from_pem_at(cert_pem, key_pem, unix_now())
    }

    /// [`ServerTls::from_pem`] at Unix time `now` (seconds).
    pub fn from_pem_at(cert_pem: &[u8], key_pem: &[u8], now: i64) -> Result<Self, TlsSetupError> {
        let chain = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsSetupError::Certificate(e.to_string()))?;
        let first = chain.first().ok_or(TlsSetupError::NoCertificate)?;
        let info = CertificateInfo::read(first).map_err(TlsSetupError::Certificate)?;
        certificate::judge(&info, now)?;
        let key = PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| TlsSetupError::Key(e.to_string()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(TlsSetupError::Rustls)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| match e {
                rustls::Error::InconsistentKeys(_) => TlsSetupError::KeyMismatch,
                rustls::Error::General(m) => TlsSetupError::Key(m),
                other => TlsSetupError::Rustls(other),
            })?;
        let mut web = config.clone();
        config.alpn_protocols = vec![b"h2".to_vec()];
        web.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls {
            config: Arc::new(config),
            web: Arc::new(web),
            info,
        })
    }

    /// What clients will see of the certificate.
    pub fn info(&self) -> &CertificateInfo {
        &self.info
    }
}

/// Seconds since the Unix epoch.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
