//! How a client reaches the coordinator: a channel (plain or TLS) and the
//! `authorization: Bearer <token>` metadata every call carries.

use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

/// Why a connection could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("invalid coordinator address {0:?}: {1}")]
    Address(String, String),
    #[error("invalid token: {0}")]
    Token(String),
    #[error(
        "{0} is https:// but no CA was given: add --ca with the cluster's ca.pem (from \
         `xq-coordinator cert`); the system's roots are not used"
    )]
    HttpsWithoutCa(String),
    #[error("--ca was given but {0} is not https://: use https:// for TLS, or drop --ca")]
    CaWithoutHttps(String),
}

/// Adds `authorization: Bearer <token>` to every call. The header is
/// marked sensitive, so `Debug` and HTTP/2 header compression skip it.
#[derive(Debug, Clone, Default)]
pub struct Auth {
    header: Option<MetadataValue<Ascii>>,
}

impl Auth {
    /// `None`: send no header.
    pub fn new(token: Option<&str>) -> Result<Self, ConnectError> {
        let header = token
            .map(|t| {
                let mut value: MetadataValue<Ascii> = format!("Bearer {t}")
                    .parse()
                    .map_err(|_| ConnectError::Token("not printable ASCII".to_owned()))?;
                value.set_sensitive(true);
                Ok::<_, ConnectError>(value)
            })
            .transpose()?;
        Ok(Auth { header })
    }
}

impl Interceptor for Auth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(h) = &self.header {
            request.metadata_mut().insert("authorization", h.clone());
        }
        Ok(request)
    }
}

/// The metadata key of the delay, in milliseconds, after which a refused
/// call may be tried again (gRPC's retry design, A6): the coordinator sets
/// it on a result refused for load, and workers wait that long.
pub const RETRY_PUSHBACK: &str = "grpc-retry-pushback-ms";

/// The delay `status` asks for before a retry ([`RETRY_PUSHBACK`]), if it
/// names a valid one.
pub fn retry_pushback(status: &tonic::Status) -> Option<Duration> {
    let ms: u64 = status
        .metadata()
        .get(RETRY_PUSHBACK)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_millis(ms))
}

/// How often the client pings the coordinator over HTTP/2 ...
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// ... and how long it waits for the answer before it drops the connection.
/// A connection that died without a reset (a NAT or firewall that forgot
/// it, a partition) would otherwise hold every call on it forever.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A lazily connecting channel to `url` (it reconnects by itself after a
/// coordinator restart, or after [`KEEPALIVE_TIMEOUT`] without an answer to
/// a ping). With `ca_pem`, the connection uses TLS and the server's
/// certificate must chain to it and name the URL's host; TLS goes with an
/// `https://` URL and plain HTTP/2 with `http://`, and a mix is refused.
/// A connection that fails for good says why through
/// [`crate::connect_failure::ConnectFailure`].
pub fn channel(url: &str, ca_pem: Option<&[u8]>) -> Result<Channel, ConnectError> {
    let mut endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|e| ConnectError::Address(url.to_owned(), e.to_string()))?;
    let https = endpoint.uri().scheme_str() == Some("https");
    match (https, ca_pem.is_some()) {
        (true, false) => return Err(ConnectError::HttpsWithoutCa(url.to_owned())),
        (false, true) => return Err(ConnectError::CaWithoutHttps(url.to_owned())),
        _ => {}
    }
    if let Some(pem) = ca_pem {
        let tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem));
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|e| ConnectError::Address(url.to_owned(), e.to_string()))?;
    }
    Ok(endpoint
        .connect_timeout(Duration::from_secs(5))
        .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true)
        .connect_lazy())
}
