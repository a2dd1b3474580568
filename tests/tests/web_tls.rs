//! The web view over TLS with the real binaries: `xq-coordinator cert`
//! makes the cluster's CA and certificate, and one `serve --tls-cert …
//! --http …` serves both gRPC and the web view with it. A headless Chromium
//! that trusts exactly that certificate (its SPKI pinned) signs in over
//! HTTPS and gets `Secure` cookies; a plain-HTTP visit is sent to
//! `https://` and a plain-HTTP form is refused in words; five wrong
//! passwords from one address lock that address out of the name, while the
//! right password from another address signs in. The database and its
//! `-wal` and `-shm` are the owner's only. Behind a trusted proxy
//! (`--trusted-proxy`) the same holds for the clients its `X-Forwarded-For`
//! names, and nobody else's `X-Forwarded-For` is believed. `--http-plain`
//! keeps the web view in plain HTTP (for a TLS proxy) beside a TLS gRPC port.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use xq_coordinator::server::ServerConfig;
use xq_coordinator::tls::CertificateInfo;
use xq_coordinator::tls::accept::PLAIN_BROWSER_ANSWER;
use xq_tests::accounts::add_user;
use xq_tests::browser::Browser;
use xq_tests::cluster::{TempDb, TestServer, fast_config};
use xq_tests::coordinator_cli;
use xq_tests::procs::{Coordinator, TempDir};
use xq_tests::web::{self, Answer, form_csrf, set_cookie};

const PASSWORD: &str = "cy-secret-words";

/// `--ignore-certificate-errors-spki-list`'s value for the certificate in
/// `pem`: the base64 SHA-256 of its subjectPublicKeyInfo, so Chromium
/// accepts that one certificate and no other.
fn spki_pin(pem: &Path) -> String {
    let bytes = std::fs::read(pem).expect("coordinator.pem");
    let der = CertificateDer::pem_slice_iter(&bytes)
        .next()
        .expect("a certificate")
        .expect("PEM");
    let info = CertificateInfo::read(&der).expect("a certificate");
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&info.spki))
}

/// One HTTPS request to `to` from the local address `from`, trusting `ca`.
async fn https(
    ca: &Path,
    from: IpAddr,
    to: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut roots = rustls::RootCertStore::empty();
    let pem = std::fs::read(ca).expect("ca.pem");
    for cert in CertificateDer::pem_slice_iter(&pem) {
        roots.add(cert.expect("PEM")).expect("a CA certificate");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::new(from, 0))
        .expect("bind the source address");
    let tcp = socket.connect(to).await.expect("connect");
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::IpAddress(to.ip().into()), tcp)
        .await
        .expect("TLS handshake with the cluster's certificate");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .expect("http handshake");
    tokio::spawn(conn);
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", to.to_string());
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = sender
        .send_request(
            request
                .body(Full::new(Bytes::from(body.to_owned())))
                .expect("request"),
        )
        .await
        .expect("https request");
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// A sign-in as `name` with `password` from `from`: the sign-in page's CSRF
/// cookie and token, then the form.
async fn sign_in_from(
    ca: &Path,
    from: IpAddr,
    to: SocketAddr,
    name: &str,
    password: &str,
) -> Answer {
    let page = https(ca, from, to, Method::GET, "/sign-in", &[], "").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let cookie = format!("xq_csrf={}", set_cookie(&page, "xq_csrf"));
    let csrf = form_csrf(&page.body);
    https(
        ca,
        from,
        to,
        Method::POST,
        "/sign-in",
        &[
            ("cookie", &cookie),
            ("content-type", "application/x-www-form-urlencoded"),
        ],
        &format!("name={name}&password={password}&csrf={csrf}"),
    )
    .await
}

/// The browser's cookie `name`.
fn cookie(b: &mut Browser, name: &str) -> Value {
    let all = b.call("Network.getCookies", json!({}));
    all["cookies"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_view_speaks_tls_with_the_clusters_certificate_and_guessing_locks_only_the_guesser()
{
    let dir = TempDir::new("web-tls");
    let certs = dir.join("certs");
    coordinator_cli([
        "cert",
        "--dir",
        certs.to_str().expect("UTF-8 path"),
        "--name",
        "localhost",
        "--ip",
        "127.0.0.1",
    ]);
    let (ca, cert, key) = (
        certs.join("ca.pem"),
        certs.join("coordinator.pem"),
        certs.join("coordinator-key.pem"),
    );
    let db = dir.join("xq.db");
    add_user(&db, "cy", "approver", PASSWORD);
    let coordinator = Coordinator::start(
        &db,
        0,
        &[
            "--tls-cert",
            cert.to_str().expect("UTF-8 path"),
            "--tls-key",
            key.to_str().expect("UTF-8 path"),
            "--http",
            "127.0.0.1:0",
        ],
        &dir.join("coordinator.log"),
    );
    let base = coordinator
        .web
        .clone()
        .expect("the web view's address")
        .trim_end_matches('/')
        .to_owned();
    let web_addr: SocketAddr = base
        .strip_prefix("https://")
        .unwrap_or_else(|| panic!("the web view is not served over https: {base}"))
        .parse()
        .expect("an address");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for name in ["xq.db", "xq.db-wal", "xq.db-shm"] {
            let mode = std::fs::metadata(dir.join(name))
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
    }

    // Plain HTTP to the TLS port: a visit is sent to https://, a form refused.
    let plain = format!("http://{web_addr}");
    let visit = web::get(&format!("{plain}/runs/1?x=2")).await;
    assert_eq!(
        visit.status,
        StatusCode::MOVED_PERMANENTLY,
        "{}",
        visit.body
    );
    assert_eq!(
        visit.headers["location"],
        format!("https://{web_addr}/runs/1?x=2").as_str()
    );
    let form = web::post_form(&format!("{plain}/sign-in"), &[], "name=cy&password=x").await;
    assert_eq!(form.status, StatusCode::BAD_REQUEST, "{}", form.body);
    assert!(form.body.contains(PLAIN_BROWSER_ANSWER), "{}", form.body);

    // A browser that trusts exactly this certificate signs in over HTTPS,
    // sent there from the plain address it was given.
    let profile = TempDir::new("web-tls-chromium");
    let pin = format!("--ignore-certificate-errors-spki-list={}", spki_pin(&cert));
    let mut b = Browser::start_with(profile.join("profile").as_path(), (1024, 768), &[pin]);
    b.open(&format!("{plain}/sign-in"));
    assert_eq!(b.eval("location.protocol"), "https:", "{}", b.text());
    b.fill("#sign-in-form input[name=name]", "cy");
    b.fill("#sign-in-form input[name=password]", PASSWORD);
    b.click_and_load("#sign-in-form #submit");
    assert_eq!(
        b.eval("document.getElementById('me') && document.getElementById('me').dataset.user"),
        "cy",
        "{}",
        b.text()
    );
    let session = cookie(&mut b, "xq_session");
    assert_eq!(session["secure"], true, "{session}");
    assert_eq!(session["httpOnly"], true, "{session}");
    assert_eq!(cookie(&mut b, "xq_csrf")["secure"], true);
    assert!(b.errors.is_empty(), "{:?}", b.errors);
    drop(b);

    // Five wrong passwords from one address lock that address out of the
    // name, even for the right password...
    let guesser: IpAddr = "127.0.0.2".parse().unwrap();
    for _ in 0..5 {
        let wrong = sign_in_from(&ca, guesser, web_addr, "cy", "guess").await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.body);
    }
    let locked = sign_in_from(&ca, guesser, web_addr, "cy", PASSWORD).await;
    assert_eq!(
        locked.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        locked.body
    );
    assert!(locked.body.contains("too many sign-in attempts"));
    // ...and the user signs in from another.
    let user: IpAddr = "127.0.0.3".parse().unwrap();
    let signed = sign_in_from(&ca, user, web_addr, "cy", PASSWORD).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.body);
    let set = signed
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("xq_session="))
        .expect("a session cookie")
        .to_owned();
    assert!(set.contains("; Secure"), "{set}");
}

/// A sign-in over plain HTTP to `base` with `forwarded` as the request's
/// `X-Forwarded-For`.
async fn sign_in_forwarded(base: &str, forwarded: &str, name: &str, password: &str) -> Answer {
    let page = web::get(&format!("{base}/sign-in")).await;
    let cookie = format!("xq_csrf={}", set_cookie(&page, "xq_csrf"));
    let csrf = form_csrf(&page.body);
    web::post_form(
        &format!("{base}/sign-in"),
        &[("cookie", &cookie), ("x-forwarded-for", forwarded)],
        &format!("name={name}&password={password}&csrf={csrf}"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_forwarded_client_is_counted_and_nobody_elses_header() {
    let db = TempDb::new("web-proxy");
    add_user(&db.0, "cy", "approver", PASSWORD);
    let config = ServerConfig {
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..fast_config(std::time::Duration::from_secs(30))
    };
    let server = TestServer::start_with_web("127.0.0.1:0", &db.0, config).await;
    let base = server.web_url();
    // The client wrote 10.9.9.9 itself; the proxy appended 198.51.100.7.
    for _ in 0..5 {
        let wrong = sign_in_forwarded(&base, "10.9.9.9, 198.51.100.7", "cy", "guess").await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.body);
    }
    let locked = sign_in_forwarded(&base, "198.51.100.7", "cy", PASSWORD).await;
    assert_eq!(
        locked.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        locked.body
    );
    let other = sign_in_forwarded(&base, "198.51.100.8", "cy", PASSWORD).await;
    assert_eq!(other.status, StatusCode::SEE_OTHER, "{}", other.body);
    server.stop().await;

    // Without --trusted-proxy the header counts for nothing: five failures
    // "from" five addresses are five from this one.
    let server = TestServer::start_with_web(
        "127.0.0.1:0",
        &db.0,
        fast_config(std::time::Duration::from_secs(30)),
    )
    .await;
    let base = server.web_url();
    for i in 0..5 {
        let wrong = sign_in_forwarded(&base, &format!("203.0.113.{i}"), "cy", "guess").await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.body);
    }
    let locked = sign_in_forwarded(&base, "203.0.113.77", "cy", PASSWORD).await;
    assert_eq!(
        locked.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        locked.body
    );
    server.stop().await;
}

#[test]
fn http_plain_keeps_the_web_view_plain_beside_a_tls_grpc_port() {
    let dir = TempDir::new("web-plain");
    let certs = dir.join("certs");
    let certs_arg = certs.to_str().expect("UTF-8 path");
    coordinator_cli(["cert", "--dir", certs_arg, "--ip", "127.0.0.1"]);
    let (cert, key) = (
        certs.join("coordinator.pem"),
        certs.join("coordinator-key.pem"),
    );
    let coordinator = Coordinator::start(
        &dir.join("xq.db"),
        0,
        &[
            "--tls-cert",
            cert.to_str().expect("UTF-8 path"),
            "--tls-key",
            key.to_str().expect("UTF-8 path"),
            "--http",
            "127.0.0.1:0",
            "--http-plain",
            "--secure-cookies",
        ],
        &dir.join("coordinator.log"),
    );
    let base = coordinator.web.clone().expect("the web view's address");
    assert!(base.starts_with("http://"), "{base}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let page = rt.block_on(web::get(&format!("{base}sign-in")));
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let set = page.headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(set.contains("; Secure"), "{set}");
}
