//! The TLS port's connections: each is peeked at, shaken hands with on its
//! own task (a slow client never holds up the others), and handed to tonic
//! once TLS is up. What fails is logged in plain words:
//!
//! * a client that aborts the handshake sends an alert, whose usual cause is
//!   logged ([`alert_meaning`]);
//! * a client whose first bytes are not a TLS record (0x16) but plain HTTP/2
//!   (`PRI * HTTP/2.0`) or HTTP/1 gets an answer it can show: an HTTP/2
//!   GOAWAY (INADEQUATE_SECURITY) or an HTTP/1 `400`, both saying
//!   [`PLAIN_CLIENT_ANSWER`] on the gRPC port; on the web view's port
//!   ([`web_incoming`]) a browser's plain `GET` is redirected to the same
//!   address over `https://` and anything else gets a `400` saying
//!   [`PLAIN_BROWSER_ANSWER`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use rustls::AlertDescription;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;

use super::ServerTls;

/// What a plain-text client on the TLS port is told.
pub const PLAIN_CLIENT_ANSWER: &str = "this port speaks TLS: use https:// and --ca";

/// What a plain-HTTP client of the web view's TLS port is told.
pub const PLAIN_BROWSER_ANSWER: &str =
    "this address serves the web view over TLS only: use https://";

/// How long a client has from its connection to the end of the handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection with TLS up.
pub type Stream = TlsStream<TcpStream>;

/// Connections with TLS up, for `serve_with_incoming_shutdown`.
pub type Incoming = ReceiverStream<Result<Stream, Infallible>>;

/// Which service a TLS port carries, which decides its ALPN and what a
/// plain-text client is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Port {
    /// gRPC (ALPN `h2`).
    Grpc,
    /// The web view (ALPN `http/1.1`).
    Web,
}

/// The gRPC port's connections: accepts on `listener` until the returned
/// stream is dropped (tonic drops it when the server stops).
pub fn incoming(listener: TcpListener, tls: &ServerTls) -> Incoming {
    accept_loop(listener, TlsAcceptor::from(tls.config.clone()), Port::Grpc)
}

/// The web view's connections, with the same certificate as the gRPC port:
/// accepts on `listener` until the returned stream is dropped.
pub fn web_incoming(listener: TcpListener, tls: &ServerTls) -> Incoming {
    accept_loop(listener, TlsAcceptor::from(tls.web.clone()), Port::Web)
}

fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, port: Port) -> Incoming {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = tx.closed() => return,
            };
            match accepted {
                Ok((tcp, peer)) => {
                    let (acceptor, tx) = (acceptor.clone(), tx.clone());
                    tokio::spawn(async move {
                        let shaken = tokio::time::timeout(
                            HANDSHAKE_TIMEOUT,
                            handshake(tcp, peer, &acceptor, port),
                        )
                        .await;
                        match shaken {
                            Ok(Some(stream)) => {
                                let _ = tx.send(Ok(stream)).await;
                            }
                            Ok(None) => {}
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        }
                    });
                }
                // Out of file descriptors and the like: the listener stays.
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    ReceiverStream::new(rx)
}

/// What a client's first bytes say it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// A TLS record (a ClientHello starts with content type 0x16).
    Tls,
    /// The HTTP/2 connection preface of a client without TLS (h2c).
    Http2,
    /// An HTTP/1 request line.
    Http1,
    /// Anything else.
    Other,
}

/// Classifies a connection by its first bytes (at least one).
pub fn opening(first: &[u8]) -> Opening {
    const METHODS: [&[u8]; 9] = [
        b"GET ",
        b"POST ",
        b"HEAD ",
        b"PUT ",
        b"DELETE ",
        b"OPTIONS ",
        b"PATCH ",
        b"CONNECT ",
        b"TRACE ",
    ];
    let prefix_of = |full: &[u8]| {
        let n = first.len().min(full.len());
        n > 0 && first[..n] == full[..n]
    };
    match first.first() {
        Some(0x16) => Opening::Tls,
        _ if prefix_of(b"PRI * HTTP/2.0") => Opening::Http2,
        _ if METHODS.iter().any(|m| prefix_of(m)) => Opening::Http1,
        _ => Opening::Other,
    }
}

async fn handshake(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: &TlsAcceptor,
    port: Port,
) -> Option<TlsStream<TcpStream>> {
    let mut first = [0u8; 16];
    let n = match tcp.peek(&mut first).await {
        Ok(0) | Err(_) => return None,
        Ok(n) => n,
    };
    match opening(&first[..n]) {
        Opening::Tls => match acceptor.accept(tcp).await {
            Ok(stream) => Some(stream),
            Err(e) => {
                log_failed_handshake(peer, &e);
                None
            }
        },
        Opening::Http2 => {
            tracing::warn!(
                %peer,
                "a client spoke plain HTTP/2 to this TLS port (a worker or client given \
                 http:// instead of https://); answered with a GOAWAY saying: {PLAIN_CLIENT_ANSWER}"
            );
            answer_plain(tcp, holds_request, |_| goaway(PLAIN_CLIENT_ANSWER)).await;
            None
        }
        Opening::Http1 if port == Port::Web => {
            tracing::info!(
                %peer,
                "a browser spoke plain HTTP to the web view's TLS port; answered with https://"
            );
            answer_plain(tcp, request_head_complete, web_refusal).await;
            None
        }
        Opening::Http1 => {
            tracing::warn!(
                %peer,
                "a client spoke plain HTTP/1 to this TLS port; answered 400: {PLAIN_CLIENT_ANSWER}"
            );
            answer_plain(tcp, request_head_complete, |_| {
                http1_refusal(PLAIN_CLIENT_ANSWER)
            })
            .await;
            None
        }
        Opening::Other => {
            tracing::warn!(%peer, "a client sent something other than TLS to this TLS port; closed it");
            None
        }
    }
}

/// Reads what the client sends until `complete` says its request is in
/// (for at most a second), writes the `answer` to what it read, and closes
/// after the client has had a moment to read it. Answering before the
/// request is in would fail the request as a closed connection, without the
/// answer; closing with unread input would reset the connection, and the
/// answer with it.
async fn answer_plain(
    mut tcp: TcpStream,
    complete: fn(&[u8]) -> bool,
    answer: impl FnOnce(&[u8]) -> Vec<u8>,
) {
    let mut sink = [0u8; 4096];
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while seen.len() < 1 << 16 && !complete(&seen) {
            match tcp.read(&mut sink).await {
                Ok(n) if n > 0 => seen.extend(&sink[..n]),
                _ => return,
            }
        }
    })
    .await;
    if tcp.write_all(&answer(&seen)).await.is_err() {
        return;
    }
    let _ = tcp.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while matches!(tcp.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// Whether `bytes` hold an HTTP/1 request's head (up to its blank line).
fn request_head_complete(bytes: &[u8]) -> bool {
    bytes.windows(4).any(|w| w == b"\r\n\r\n")
}

/// Whether `bytes`, an HTTP/2 client's first bytes, hold its connection
/// preface and a HEADERS frame (a request): the GOAWAY then refuses that
/// request, and its caller sees the GOAWAY's message.
pub fn holds_request(bytes: &[u8]) -> bool {
    const PREFACE: usize = 24;
    let mut at = PREFACE;
    while let Some(header) = bytes.get(at..at + 9) {
        if header[3] == 0x1 {
            return true;
        }
        let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
        at += 9 + len;
    }
    false
}

/// An HTTP/2 server preface (empty SETTINGS) and a GOAWAY with error code
/// INADEQUATE_SECURITY (0xc) and `message` as its debug data, which h2
/// clients show in their error.
pub fn goaway(message: &str) -> Vec<u8> {
    let frame = |kind: u8, payload: &[u8]| {
        let len = payload.len() as u32;
        let mut f = len.to_be_bytes()[1..].to_vec();
        f.extend([kind, 0, 0, 0, 0, 0]);
        f.extend(payload);
        f
    };
    let mut payload = vec![0, 0, 0, 0, 0, 0, 0, 0x0c];
    payload.extend(message.as_bytes());
    let mut bytes = frame(0x4, &[]);
    bytes.extend(frame(0x7, &payload));
    bytes
}

/// A `400 Bad Request` with `message` as its text body.
fn http1_refusal(message: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{message}\n",
        message.len() + 1
    )
    .into_bytes()
}

/// The web port's answer to a plain HTTP/1 request `head`: a `GET` or
/// `HEAD` with a plain `Host` is sent to the same host, port and path over
/// `https://` (`301`); anything else (a form's `POST`, whose body has
/// already crossed in clear, or an odd request) is a `400` saying
/// [`PLAIN_BROWSER_ANSWER`].
pub fn web_refusal(head: &[u8]) -> Vec<u8> {
    match https_location(head) {
        Some(location) => {
            let body = format!("{PLAIN_BROWSER_ANSWER} ({location})\n");
            format!(
                "HTTP/1.1 301 Moved Permanently\r\nlocation: {location}\r\n\
                 content-type: text/plain\r\nconnection: close\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
        None => http1_refusal(PLAIN_BROWSER_ANSWER),
    }
}

/// `https://{host}{path}` for a `GET` or `HEAD` request head whose Host and
/// path hold only the characters of a plain host name or address and path.
fn https_location(head: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut request = lines.next()?.split(' ');
    let (method, path) = (request.next()?, request.next()?);
    if !matches!(method, "GET" | "HEAD") || !path.starts_with('/') || path.starts_with("//") {
        return None;
    }
    let host = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("host").then(|| value.trim())
    })?;
    let plain_host = |c: char| c.is_ascii_alphanumeric() || ".-:[]".contains(c);
    let plain_path = |c: char| c.is_ascii_graphic() && !"\"<>\\^`{|}".contains(c);
    (!host.is_empty() && host.chars().all(plain_host) && path.chars().all(plain_path))
        .then(|| format!("https://{host}{path}"))
}

fn log_failed_handshake(peer: SocketAddr, error: &std::io::Error) {
    let inner = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::AlertReceived(alert)) => tracing::warn!(
            %peer,
            alert = ?alert,
            "a client aborted the TLS handshake: {}",
            alert_meaning(*alert)
        ),
        Some(e) => tracing::warn!(%peer, error = %e, "TLS handshake failed"),
        None => tracing::debug!(%peer, error = %error, "TLS handshake failed"),
    }
}

/// What a client's alert during the handshake usually means here.
pub fn alert_meaning(alert: AlertDescription) -> &'static str {
    match alert {
        AlertDescription::BadCertificate => {
            "it refused this certificate, usually because the host it dialled is not among \
             the certificate's names (make one for that name with `xq-coordinator cert \
             --name HOST` or --ip ADDR, or dial a name it has)"
        }
        AlertDescription::UnknownCA => {
            "it does not trust the CA that signed this certificate: its --ca is another \
             CA's file; give it the ca.pem this certificate was made with"
        }
        AlertDescription::CertificateExpired => {
            "it finds this certificate expired or not yet valid: check the clocks of both \
             machines"
        }
        AlertDescription::CertificateUnknown => {
            "it refused this certificate for a reason of its own (a CA certificate served \
             as the server's gives this)"
        }
        AlertDescription::DecryptError => {
            "the certificate's signature does not verify with the client's CA: its --ca is \
             another CA of the same name; give it the ca.pem this certificate was made with"
        }
        AlertDescription::NoApplicationProtocol => {
            "it does not speak HTTP/2 (ALPN h2): it is not a gRPC client"
        }
        AlertDescription::ProtocolVersion | AlertDescription::HandshakeFailure => {
            "it shares no TLS version or cipher suite with this server (TLS 1.2 or 1.3 is needed)"
        }
        _ => "see the alert's name",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_tell_tls_from_plain_http() {
        assert_eq!(opening(&[0x16, 0x03, 0x01]), Opening::Tls);
        assert_eq!(opening(b"PRI * HTTP/2.0\r\n\r\nSM"), Opening::Http2);
        assert_eq!(opening(b"PR"), Opening::Http2, "a short read");
        assert_eq!(opening(b"GET / HTTP/1.1\r\n"), Opening::Http1);
        assert_eq!(opening(b"POST /x"), Opening::Http1);
        assert_eq!(opening(b"\x00\x01"), Opening::Other);
        assert_eq!(opening(b"PRX"), Opening::Other);
    }

    #[test]
    fn the_goaway_is_a_settings_frame_and_a_goaway_with_the_message() {
        let bytes = goaway("use https");
        assert_eq!(bytes[..9], [0, 0, 0, 4, 0, 0, 0, 0, 0], "empty SETTINGS");
        let goaway = &bytes[9..];
        assert_eq!(goaway[..3], [0, 0, 17], "length: 8 + 9 bytes of debug data");
        assert_eq!(goaway[3], 7, "GOAWAY");
        assert_eq!(goaway[5..9], [0; 4], "stream 0");
        assert_eq!(goaway[9..13], [0; 4], "last stream 0");
        assert_eq!(goaway[13..17], [0, 0, 0, 0x0c], "INADEQUATE_SECURITY");
        assert_eq!(&goaway[17..], b"use https");
    }

    #[test]
    fn a_request_is_found_after_the_preface_and_settings() {
        let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        assert!(!holds_request(&bytes));
        bytes.extend([0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0]);
        assert!(!holds_request(&bytes), "SETTINGS only");
        bytes.extend([0, 0, 4, 0x8, 0, 0, 0, 0, 0]);
        assert!(
            !holds_request(&bytes),
            "a WINDOW_UPDATE header without its payload"
        );
        bytes.extend([0, 0, 0, 1, 0, 0, 3, 0x1, 0x4, 0, 0, 0, 1]);
        assert!(holds_request(&bytes), "HEADERS on stream 1");
    }

    #[test]
    fn a_browser_get_is_sent_to_https_and_a_post_is_refused() {
        let get = b"GET /runs/3?x=1 HTTP/1.1\r\nHost: cluster.example:8080\r\n\r\n";
        let text = String::from_utf8(web_refusal(get)).unwrap();
        assert!(text.starts_with("HTTP/1.1 301 "), "{text}");
        assert!(
            text.contains("\r\nlocation: https://cluster.example:8080/runs/3?x=1\r\n"),
            "{text}"
        );
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        assert!(text.contains(&format!("content-length: {}\r\n", body.len())));
        let post = b"POST /sign-in HTTP/1.1\r\nHost: h:1\r\n\r\n";
        let text = String::from_utf8(web_refusal(post)).unwrap();
        assert!(text.starts_with("HTTP/1.1 400 "), "{text}");
        assert!(
            text.ends_with(&format!("{PLAIN_BROWSER_ANSWER}\n")),
            "{text}"
        );
        for odd in [
            &b"GET / HTTP/1.1\r\n\r\n"[..],
            b"GET //evil.example/ HTTP/1.1\r\nHost: h\r\n\r\n",
            b"GET /\"x HTTP/1.1\r\nHost: h\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h/x@y\r\n\r\n",
        ] {
            let text = String::from_utf8(web_refusal(odd)).unwrap();
            let lossy = String::from_utf8_lossy(odd);
            assert!(text.starts_with("HTTP/1.1 400 "), "{lossy}: {text}");
        }
    }

    #[test]
    fn the_http1_answer_is_a_complete_response() {
        let text = String::from_utf8(http1_refusal("use https")).unwrap();
        assert!(text.starts_with("HTTP/1.1 400 "));
        assert!(text.ends_with("\r\n\r\nuse https\n"));
        assert!(text.contains("content-length: 10\r\n"));
    }
}
