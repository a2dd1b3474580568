//! Why a coordinator cannot be worked with, in plain words, when no retry
//! would mend it: a certificate clients refuse, TLS on one side only, a
//! token the coordinator does not take. [`ConnectFailure::of_status`] finds
//! these in a failed call's error chain (tonic connects lazily, so a
//! connection's failure reaches the caller as the `Status` of its first
//! call); a coordinator that is down, restarting or overloaded is not one of
//! them.
//!
//! The chain is read by type: rustls's [`CertificateError`] (and webpki's
//! error inside its `Other`), `std::io::Error`'s inner error, h2's error;
//! text is matched only for what has no type to read (the h2 GOAWAY's debug
//! data, tonic's private "HTTP/2 was not negotiated").

use std::error::Error as StdError;

use rustls::CertificateError;
use tonic::{Code, Status};

/// The debug data of the coordinator's GOAWAY to a plain-HTTP/2 client on
/// its TLS port (`xq_coordinator::tls::accept::PLAIN_CLIENT_ANSWER`).
pub const PLAIN_CLIENT_ANSWER: &str = "this port speaks TLS";

/// Where a client connects: named in the messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dialed {
    /// The coordinator's URL.
    pub url: String,
    /// The CA file given with `--ca`, if any.
    pub ca_file: Option<String>,
}

impl Dialed {
    pub fn new(url: impl Into<String>, ca_file: Option<&std::path::Path>) -> Self {
        Dialed {
            url: url.into(),
            ca_file: ca_file.map(|p| p.display().to_string()),
        }
    }

    fn tls(&self) -> bool {
        self.url.starts_with("https://")
    }

    fn ca(&self) -> String {
        match &self.ca_file {
            Some(f) => format!("--ca {f}"),
            None => "--ca".to_owned(),
        }
    }
}

/// A mistake no retry mends, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectFailure {
    #[error(
        "the coordinator at {url} presents a CA certificate (what the one-line \
         `openssl req -x509` makes), which cannot be a server's certificate: make a cluster CA \
         and a server certificate with `xq-coordinator cert --dir DIR --name HOST`, serve \
         DIR/coordinator.pem and DIR/coordinator-key.pem, and give clients DIR/ca.pem (--ca)"
    )]
    CaCertificate { url: String },
    #[error(
        "the coordinator's certificate is for {names}, not for {host} in {url}: dial one of \
         those names, or make a certificate that names {host} (`xq-coordinator cert --name` \
         or --ip)"
    )]
    WrongName {
        url: String,
        host: String,
        names: String,
    },
    #[error(
        "the coordinator's certificate at {url} expired{on}: make a new one from the cluster \
         CA (`xq-coordinator cert --force`), or check this machine's clock"
    )]
    Expired { url: String, on: String },
    #[error(
        "the coordinator's certificate at {url} is not valid yet{from}: check this machine's \
         clock (and the coordinator's)"
    )]
    NotYetValid { url: String, from: String },
    #[error(
        "the coordinator's certificate at {url} is not signed by the CA in {ca}: give the \
         ca.pem that `xq-coordinator cert` made with the coordinator's certificate"
    )]
    UnknownCa { url: String, ca: String },
    #[error("the coordinator's certificate at {url} is refused: {reason}")]
    BadCertificate { url: String, reason: String },
    #[error("the coordinator at {url} speaks TLS: use https:// and --ca (the cluster's ca.pem)")]
    SpeaksTls { url: String },
    #[error("the coordinator at {url} does not speak TLS: use http:// (and no --ca)")]
    NoTls { url: String },
    #[error(
        "the server at {url} speaks TLS but not gRPC over HTTP/2: is it the coordinator's \
         gRPC port (not its web view or a proxy)?"
    )]
    NotGrpc { url: String },
    #[error(
        "the coordinator at {url} does not accept this token ({message}): give a token from \
         `xq-coordinator token add` (--token or XQ_TOKEN)"
    )]
    TokenRefused { url: String, message: String },
    #[error("the coordinator at {url} does not let this token do that: {message}")]
    NotAllowed { url: String, message: String },
}

impl ConnectFailure {
    /// A token the coordinator refuses (UNAUTHENTICATED) or that may not
    /// make the call (PERMISSION_DENIED): an answer, not a connection's
    /// failure.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ConnectFailure::TokenRefused { .. } | ConnectFailure::NotAllowed { .. }
        )
    }

    /// The failure behind a call's `status`, if it is one no retry mends;
    /// `None` for the rest (refusals of the request itself, a coordinator
    /// that is down or restarting).
    pub fn of_status(status: &Status, dialed: &Dialed) -> Option<Self> {
        let url = dialed.url.clone();
        match status.code() {
            Code::Unauthenticated => Some(ConnectFailure::TokenRefused {
                url,
                message: crate::bounded(status.message().to_owned()),
            }),
            Code::PermissionDenied if transport(status).is_none() => {
                Some(ConnectFailure::NotAllowed {
                    url,
                    message: crate::bounded(status.message().to_owned()),
                })
            }
            _ => of_connection(status, dialed),
        }
    }

    /// The failure behind a connection's `error` (a transport error, a
    /// `Status` whose source chain holds one), if it is one no retry mends.
    /// Token refusals are not read here: they come as answers, not errors.
    pub fn of_error(error: &(dyn StdError + 'static), dialed: &Dialed) -> Option<Self> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(found) = one(e, dialed) {
                return Some(found);
            }
            next = e.source();
        }
        None
    }
}

/// The transport error under a status tonic made from one (its source).
fn transport(status: &Status) -> Option<&(dyn StdError + 'static)> {
    StdError::source(status)
}

fn of_connection(status: &Status, dialed: &Dialed) -> Option<ConnectFailure> {
    if !matches!(
        status.code(),
        Code::Unavailable | Code::Unknown | Code::Internal | Code::PermissionDenied
    ) {
        return None;
    }
    if let Some(found) = transport(status).and_then(|e| ConnectFailure::of_error(e, dialed)) {
        return Some(found);
    }
    // A status without its source (a copy): only its text is left.
    from_text(status.message(), dialed)
}

/// What one error of a chain says, if it names a failure.
fn one(e: &(dyn StdError + 'static), dialed: &Dialed) -> Option<ConnectFailure> {
    if let Some(rustls) = e.downcast_ref::<rustls::Error>() {
        return from_rustls(rustls, dialed);
    }
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        // `io::Error::source` skips its inner error: read it here.
        return io.get_ref().and_then(|inner| {
            one(inner, dialed).or_else(|| ConnectFailure::of_error(inner, dialed))
        });
    }
    if let Some(h2) = e.downcast_ref::<h2::Error>() {
        return from_h2(h2, dialed);
    }
    from_text(&e.to_string(), dialed).filter(|f| matches!(f, ConnectFailure::NotGrpc { .. }))
}

fn from_rustls(e: &rustls::Error, dialed: &Dialed) -> Option<ConnectFailure> {
    let url = dialed.url.clone();
    let cert = match e {
        rustls::Error::InvalidCertificate(cert) => cert,
        // The server answered a ClientHello with something that is not TLS.
        rustls::Error::InvalidMessage(_) => return Some(ConnectFailure::NoTls { url }),
        rustls::Error::NoApplicationProtocol => return Some(ConnectFailure::NotGrpc { url }),
        _ => return None,
    };
    Some(match cert {
        CertificateError::Other(other) => {
            let inner = &other.0;
            let ca = inner
                .downcast_ref::<webpki::Error>()
                .map(|w| matches!(w, webpki::Error::CaUsedAsEndEntity))
                .unwrap_or_else(|| format!("{inner:?}").contains("CaUsedAsEndEntity"));
            if ca {
                ConnectFailure::CaCertificate { url }
            } else {
                ConnectFailure::BadCertificate {
                    url,
                    reason: inner.to_string(),
                }
            }
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => ConnectFailure::WrongName {
            url,
            host: expected.to_str().into_owned(),
            names: presented
                .iter()
                .map(|p| presented_name(p))
                .collect::<Vec<_>>()
                .join(", "),
        },
        CertificateError::NotValidForName => ConnectFailure::WrongName {
            url,
            host: host_of(&dialed.url),
            names: "other names".to_owned(),
        },
        CertificateError::ExpiredContext { not_after, .. } => ConnectFailure::Expired {
            url,
            on: format!(" on {}", date(not_after.as_secs())),
        },
        CertificateError::Expired => ConnectFailure::Expired {
            url,
            on: String::new(),
        },
        CertificateError::NotValidYetContext { not_before, .. } => ConnectFailure::NotYetValid {
            url,
            from: format!(" (from {})", date(not_before.as_secs())),
        },
        CertificateError::NotValidYet => ConnectFailure::NotYetValid {
            url,
            from: String::new(),
        },
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            ConnectFailure::UnknownCa {
                url,
                ca: dialed.ca(),
            }
        }
        other => ConnectFailure::BadCertificate {
            url,
            reason: other.to_string(),
        },
    })
}

fn from_h2(e: &h2::Error, dialed: &Dialed) -> Option<ConnectFailure> {
    let url = dialed.url.clone();
    if e.to_string().contains(PLAIN_CLIENT_ANSWER) {
        return Some(ConnectFailure::SpeaksTls { url });
    }
    // A TLS record read as an HTTP/2 frame header: its length bytes make a
    // frame far larger than allowed.
    if !dialed.tls() && e.is_library() && e.reason() == Some(h2::Reason::FRAME_SIZE_ERROR) {
        return Some(ConnectFailure::SpeaksTls { url });
    }
    None
}

/// The last resort, for errors with no type left to read.
fn from_text(text: &str, dialed: &Dialed) -> Option<ConnectFailure> {
    let url = dialed.url.clone();
    if text.contains(PLAIN_CLIENT_ANSWER)
        || (!dialed.tls() && text.contains("frame with invalid size"))
    {
        Some(ConnectFailure::SpeaksTls { url })
    } else if text.contains("HTTP/2 was not negotiated") {
        Some(ConnectFailure::NotGrpc { url })
    } else if text.contains("CaUsedAsEndEntity") {
        Some(ConnectFailure::CaCertificate { url })
    } else {
        None
    }
}

/// `DnsName("a.b")` and `IpAddress(1.2.3.4)`, as webpki lists a
/// certificate's names, without the wrapping.
fn presented_name(p: &str) -> String {
    p.strip_prefix("DnsName(\"")
        .and_then(|s| s.strip_suffix("\")"))
        .or_else(|| {
            p.strip_prefix("IpAddress(")
                .and_then(|s| s.strip_suffix(')'))
        })
        .unwrap_or(p)
        .to_owned()
}

/// The host of `url` (`https://HOST:PORT/…`), for messages.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_owned(),
        _ => authority.to_owned(),
    }
}

/// `YYYY-MM-DD` of Unix time `secs` (UTC).
fn date(secs: u64) -> String {
    let (y, m, d) = crate::utc::civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use rustls::OtherError;
    use rustls::pki_types::{ServerName, UnixTime};

    fn dialed() -> Dialed {
        Dialed::new("https://coord.example:50051", Some("ca.pem".as_ref()))
    }

    /// A status as tonic makes one from a failed connection: the rustls
    /// error inside an `io::Error` inside the status's source.
    fn failed(e: rustls::Error) -> Status {
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        let mut status = Status::unavailable(format!("connection error: {io}"));
        status.set_source(Arc::new(io));
        status
    }

    fn cert(e: CertificateError) -> Option<ConnectFailure> {
        ConnectFailure::of_status(&failed(rustls::Error::InvalidCertificate(e)), &dialed())
    }

    #[test]
    fn a_ca_certificate_is_named_with_what_to_do() {
        let other = OtherError(Arc::new(webpki::Error::CaUsedAsEndEntity));
        let found = cert(CertificateError::Other(other)).unwrap();
        assert!(matches!(found, ConnectFailure::CaCertificate { .. }));
        let text = found.to_string();
        assert!(text.contains("CA certificate"), "{text}");
        assert!(text.contains("xq-coordinator cert"), "{text}");
    }

    #[test]
    fn names_dates_and_the_ca_are_named() {
        let found = cert(CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("coord.example").unwrap().to_owned(),
            presented: vec![
                "DnsName(\"other.example\")".to_owned(),
                "IpAddress(10.0.0.1)".to_owned(),
            ],
        })
        .unwrap();
        assert_eq!(
            found,
            ConnectFailure::WrongName {
                url: dialed().url,
                host: "coord.example".to_owned(),
                names: "other.example, 10.0.0.1".to_owned(),
            }
        );
        let found = cert(CertificateError::ExpiredContext {
            time: UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_800_000_000)),
            not_after: UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_767_225_600)),
        })
        .unwrap();
        assert!(
            found.to_string().contains("expired on 2026-01-01"),
            "{found}"
        );
        let found = cert(CertificateError::UnknownIssuer).unwrap();
        assert!(found.to_string().contains("--ca ca.pem"), "{found}");
        assert!(matches!(
            cert(CertificateError::NotValidYet),
            Some(ConnectFailure::NotYetValid { .. })
        ));
    }

    #[test]
    fn protocol_mismatches_are_named() {
        let not_tls = failed(rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType,
        ));
        assert!(matches!(
            ConnectFailure::of_status(&not_tls, &dialed()),
            Some(ConnectFailure::NoTls { .. })
        ));
        let plain = Dialed::new("http://coord.example:50051", None);
        let goaway = Status::internal(
            "h2 protocol error: connection error received: unspecific protocol error detected \
             (b\"this port speaks TLS: use https:// and --ca\")",
        );
        assert!(matches!(
            ConnectFailure::of_status(&goaway, &plain),
            Some(ConnectFailure::SpeaksTls { .. })
        ));
        let old_server = Status::internal("h2 protocol error: frame with invalid size");
        assert!(matches!(
            ConnectFailure::of_status(&old_server, &plain),
            Some(ConnectFailure::SpeaksTls { .. })
        ));
    }

    #[test]
    fn a_refused_token_is_permanent_and_a_coordinator_down_is_not() {
        let plain = Dialed::new("http://coord.example:50051", None);
        let refused = Status::unauthenticated("unknown token");
        let found = ConnectFailure::of_status(&refused, &plain).unwrap();
        assert!(
            found.to_string().contains("does not accept this token"),
            "{found}"
        );
        let down = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let mut status = Status::unavailable("tcp connect error");
        status.set_source(Arc::new(down));
        assert_eq!(ConnectFailure::of_status(&status, &plain), None);
        assert_eq!(
            ConnectFailure::of_status(&Status::invalid_argument("x"), &plain),
            None
        );
    }

    #[test]
    fn hosts_and_presented_names_are_read() {
        assert_eq!(host_of("https://a.b:1/x"), "a.b");
        assert_eq!(host_of("https://a.b"), "a.b");
        assert_eq!(host_of("https://[::1]:5"), "[::1]");
        assert_eq!(presented_name("DnsName(\"x\")"), "x");
        assert_eq!(presented_name("Unsupported(0x01)"), "Unsupported(0x01)");
    }
}
