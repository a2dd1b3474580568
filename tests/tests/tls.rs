//! TLS with the real binaries. A cluster whose certificates `xq-coordinator
//! cert` made serves TLS, and a worker given its CA plays a run over it.
//! What cannot work is named in plain words: a CA certificate served as the
//! server's (the one-line `openssl req -x509` certificate, made with that
//! very command), a certificate for another name, another CA, TLS on one side
//! only, a refused token; by a client call and by `xq-worker work`, which
//! exits with the message instead of retrying, and on the serving side by
//! `serve`, which refuses a CA certificate, and by its log. A fleet worker
//! exits by itself when there is no work.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tonic::Code;
use xq_proto::connect::{Auth, channel};
use xq_proto::connect_failure::{ConnectFailure, Dialed};
use xq_proto::pb;
use xq_proto::pb::run_service_client::RunServiceClient;
use xq_tests::cluster::*;
use xq_tests::procs::{Coordinator, TempDir, Worker, token_add};
use xq_tests::{binary, coordinator_cli};

/// How long a worker with a mistake may take to give up (it benches its
/// engine first); one that retries forever fails the test.
const EXIT_LIMIT: Duration = Duration::from_secs(90);

/// `xq-coordinator cert --dir DIR ARGS…`: its stdout.
fn cert(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["cert", "--dir", dir.to_str().expect("UTF-8 path")];
    all.extend(args);
    coordinator_cli(all)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The failure a client call to `url` (trusting `ca`) meets.
async fn call(url: &str, ca: Option<&Path>) -> ConnectFailure {
    let pem = ca.map(|p| std::fs::read(p).expect("CA file"));
    let mut client = RunServiceClient::new(channel(url, pem.as_deref()).expect("channel"));
    let status = client
        .list_runs(pb::ListRunsRequest {})
        .await
        .expect_err("the call must fail");
    ConnectFailure::of_status(&status, &Dialed::new(url, ca))
        .unwrap_or_else(|| panic!("not named: {status:?}"))
}

/// A real `xq-worker work` against `url` that must exit non-zero by itself:
/// its log.
fn worker_fails(dir: &TempDir, name: &str, url: &str, token: &str, extra: &[&str]) -> String {
    let mut worker = Worker::start_with(
        url,
        token,
        name,
        &dir.join(&format!("{name}.log")),
        extra,
        &[],
    );
    let status = worker.wait_exit(EXIT_LIMIT);
    assert!(!status.success(), "{status}: {}", worker.log_text());
    worker.log_text()
}

/// Waits until `log` contains `needle`.
fn wait_for(log: &Path, needle: &str) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            Instant::now() < end,
            "{} never showed {needle:?}:\n{text}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn admin_over_tls(url: &str, ca: &Path, token: &str) -> AdminClient {
    let pem = std::fs::read(ca).expect("ca.pem");
    RunServiceClient::with_interceptor(
        channel(url, Some(&pem)).expect("channel"),
        Auth::new(Some(token)).expect("token"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_made_with_cert_serves_tls_and_a_worker_plays_a_run_over_it() {
    let dir = TempDir::new("tls-cluster");
    let certs = dir.join("certs");
    let out = cert(&certs, &["--name", "localhost", "--ip", "127.0.0.1"]);
    for needle in [
        "ca.pem",
        "ca-key.pem",
        "coordinator.pem",
        "coordinator-key.pem",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    assert!(out.contains("xq-coordinator serve --db xq.db"), "{out}");
    let ca_line = format!(
        "xq-worker work --coordinator https://localhost:50051 --ca {}",
        certs.join("ca.pem").display()
    );
    assert!(out.contains(&ca_line), "{out}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for key in ["ca-key.pem", "coordinator-key.pem"] {
            let mode = std::fs::metadata(certs.join(key))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{key}");
        }
    }
    let (ca, server_cert, server_key) = (
        certs.join("ca.pem"),
        certs.join("coordinator.pem"),
        certs.join("coordinator-key.pem"),
    );
    let db = dir.join("xq.db");
    let admin = token_add(&db, "personal", "ops");
    let worker_token = token_add(&db, "worker", "hosts");
    let coordinator = Coordinator::start(
        &db,
        0,
        &[
            "--tls-cert",
            path(&server_cert),
            "--tls-key",
            path(&server_key),
        ],
        &dir.join("coordinator.log"),
    );
    let url = format!("https://127.0.0.1:{}", coordinator.port());
    let run: u64 = coordinator_cli([
        "games",
        "--coordinator",
        &url,
        "--token",
        &admin,
        "--ca",
        path(&ca),
        "--pairs",
        "2",
        "--batch-pairs",
        "2",
        "--nodes",
        "200",
        "--hash",
        "1",
        "--max-plies",
        "120",
    ])
    .trim()
    .parse()
    .expect("run id");
    let _worker = Worker::start_with(
        &url,
        &worker_token,
        "tls-worker",
        &dir.join("worker.log"),
        &["--ca", path(&ca)],
        &[],
    );
    let mut client = admin_over_tls(&url, &ca, &admin);
    let end = wait_for_end(&mut client, run, Duration::from_secs(240)).await;
    assert_eq!(end.totals.expect("totals").pairs, 2);

    // Again: the CA stays; the coordinator's certificate is replaced only with --force.
    let refused = Command::new(binary("xq-coordinator"))
        .args(["cert", "--dir", path(&certs), "--name", "localhost"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("coordinator.pem already exists"),
        "{stderr}"
    );
    let ca_before = std::fs::read(&ca).unwrap();
    let out = cert(
        &certs,
        &["--name", "localhost", "--ip", "127.0.0.1", "--force"],
    );
    assert!(out.contains("kept"), "{out}");
    assert_eq!(std::fs::read(&ca).unwrap(), ca_before, "the CA is kept");
}

/// Serves TLS with `cert_pem` and `key_pem` whatever they are (the
/// coordinator refuses a CA certificate, as an old one did not): its address.
async fn present(cert_pem: &str, key_pem: &str) -> std::net::SocketAddr {
    let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    addr
}

/// The one-line self-signed certificate a new user makes, made exactly so:
/// `openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem
/// -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1`
/// (openssl marks it CA:TRUE): (cert.pem, key.pem) in `dir`.
fn one_line_self_signed(dir: &TempDir) -> (PathBuf, PathBuf) {
    let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout"])
        .arg(&key_file)
        .arg("-out")
        .arg(&cert_file)
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        .output()
        .expect("openssl (tests/run installs it)");
    assert!(
        out.status.success(),
        "openssl req: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (cert_file, key_file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ca_certificate_as_the_servers_is_named_by_clients_workers_and_serve() {
    let dir = TempDir::new("tls-ca-cert");
    let (cert_file, key_file) = one_line_self_signed(&dir);
    let serve = Command::new(binary("xq-coordinator"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.join("xq.db"))
        .args(["--tls-cert", path(&cert_file), "--tls-key", path(&key_file)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&serve.stderr);
    assert!(!serve.status.success(), "serve started: {stderr}");
    assert!(
        stderr.contains("the certificate is a CA certificate"),
        "{stderr}"
    );
    assert!(stderr.contains("xq-coordinator cert"), "{stderr}");

    let addr = present(
        &std::fs::read_to_string(&cert_file).unwrap(),
        &std::fs::read_to_string(&key_file).unwrap(),
    )
    .await;
    let url = format!("https://127.0.0.1:{}", addr.port());
    let failure = call(&url, Some(&cert_file)).await;
    assert!(
        matches!(failure, ConnectFailure::CaCertificate { .. }),
        "{failure}"
    );
    let text = failure.to_string();
    assert!(text.contains("presents a CA certificate"), "{text}");
    assert!(text.contains("`xq-coordinator cert"), "{text}");
    let log = worker_fails(
        &dir,
        "ca-cert",
        &url,
        "xqt_any",
        &["--ca", path(&cert_file)],
    );
    assert!(log.contains("presents a CA certificate"), "{log}");
    assert!(!log.contains("retrying"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_name_another_ca_and_plain_http_on_the_tls_port_are_named() {
    let dir = TempDir::new("tls-mistakes");
    let (certs, other) = (dir.join("certs"), dir.join("other"));
    cert(&certs, &["--name", "coordinator.example.org"]);
    cert(&other, &["--name", "coordinator.example.org"]);
    let (ca, other_ca) = (certs.join("ca.pem"), other.join("ca.pem"));
    let log = dir.join("coordinator.log");
    let coordinator = Coordinator::start(
        &dir.join("xq.db"),
        0,
        &[
            "--tls-cert",
            path(&certs.join("coordinator.pem")),
            "--tls-key",
            path(&certs.join("coordinator-key.pem")),
        ],
        &log,
    );
    let https = format!("https://127.0.0.1:{}", coordinator.port());
    let http = format!("http://127.0.0.1:{}", coordinator.port());

    // The certificate names coordinator.example.org, not 127.0.0.1.
    let failure = call(&https, Some(&ca)).await;
    let text = failure.to_string();
    assert!(
        text.contains("is for coordinator.example.org, not for 127.0.0.1"),
        "{text}"
    );
    let worker = worker_fails(&dir, "name", &https, "xqt_any", &["--ca", path(&ca)]);
    assert!(
        worker.contains("is for coordinator.example.org, not for 127.0.0.1"),
        "{worker}"
    );
    let served = wait_for(&log, "aborted the TLS handshake");
    assert!(served.contains("BadCertificate"), "{served}");

    // Another cluster's CA.
    let failure = call(&https, Some(&other_ca)).await;
    let text = failure.to_string();
    let named = format!("is not signed by the CA in --ca {}", other_ca.display());
    assert!(text.contains(&named), "{text}");
    let worker = worker_fails(&dir, "ca", &https, "xqt_any", &["--ca", path(&other_ca)]);
    assert!(worker.contains(&named), "{worker}");
    wait_for(&log, "UnknownCA");

    // http:// to the TLS port.
    let failure = call(&http, None).await;
    assert!(
        matches!(failure, ConnectFailure::SpeaksTls { .. }),
        "{failure}"
    );
    let text = failure.to_string();
    assert!(text.contains("speaks TLS: use https:// and --ca"), "{text}");
    let worker = worker_fails(&dir, "plain", &http, "xqt_any", &[]);
    assert!(
        worker.contains("speaks TLS: use https:// and --ca"),
        "{worker}"
    );
    wait_for(&log, "spoke plain HTTP/2 to this TLS port");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_to_a_plain_port_a_wrong_token_and_an_idle_fleet_worker_end_the_worker() {
    let dir = TempDir::new("tls-plain");
    let certs = dir.join("certs");
    cert(&certs, &["--ip", "127.0.0.1"]);
    let ca = certs.join("ca.pem");
    let db = dir.join("xq.db");
    let token = token_add(&db, "worker", "hosts");
    let coordinator = Coordinator::start(&db, 0, &[], &dir.join("coordinator.log"));
    let https = format!("https://127.0.0.1:{}", coordinator.port());

    let failure = call(&https, Some(&ca)).await;
    assert!(matches!(failure, ConnectFailure::NoTls { .. }), "{failure}");
    assert!(
        failure
            .to_string()
            .contains("does not speak TLS: use http://"),
        "{failure}"
    );
    let worker = worker_fails(&dir, "tls", &https, &token, &["--ca", path(&ca)]);
    assert!(
        worker.contains("does not speak TLS: use http://"),
        "{worker}"
    );

    let worker = worker_fails(&dir, "token", &coordinator.url(), "xqt_wrong", &[]);
    assert!(worker.contains("does not accept this token"), "{worker}");
    assert!(worker.contains("xq-coordinator token add"), "{worker}");

    // https:// without --ca is refused before anything is sent.
    let worker = worker_fails(&dir, "no-ca", &https, &token, &[]);
    assert!(worker.contains("no CA was given: add --ca"), "{worker}");

    let mut fleet = Worker::start_with(
        &coordinator.url(),
        &token,
        "fleet",
        &dir.join("fleet.log"),
        &["--fleet", "--fleet-idle", "2"],
        &[],
    );
    let status = fleet.wait_exit(EXIT_LIMIT);
    let log = fleet.log_text();
    assert!(status.success(), "{status}: {log}");
    assert!(log.contains("fleet mode: no work for 2s; exiting"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_self_signed_certificate() {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert_pem = cert.cert.pem();
    let key_pem = cert.signing_key.serialize_pem();
    let db = TempDb::new("tls");
    let mut config = fast_config(Duration::from_secs(10));
    config.tls = Some(
        xq_coordinator::tls::ServerTls::from_pem(cert_pem.as_bytes(), key_pem.as_bytes()).unwrap(),
    );
    let server = TestServer::start("127.0.0.1:0", &db.0, config).await;
    let url = format!("https://{}", server.addr);
    let channel = xq_worker::client::channel(&url, Some(cert_pem.as_bytes())).unwrap();
    let mut client = RunServiceClient::with_interceptor(
        channel,
        xq_proto::connect::Auth::new(Some(ADMIN_TOKEN)).unwrap(),
    );
    client.list_runs(pb::ListRunsRequest {}).await.unwrap();
    // Plain HTTP/2 to a TLS server fails.
    let err = run_client(&format!("http://{}", server.addr), Some(ADMIN_TOKEN))
        .list_runs(pb::ListRunsRequest {})
        .await
        .unwrap_err();
    assert_ne!(err.code(), Code::Ok);
    // A certificate not signed by the given CA is refused.
    let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let channel = xq_worker::client::channel(&url, Some(other.cert.pem().as_bytes())).unwrap();
    let err = RunServiceClient::new(channel)
        .list_runs(pb::ListRunsRequest {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unavailable, "{err}");
    server.stop().await;
}
