//! The standard gRPC services of a served coordinator (`xq-coordinator
//! serve`), called as the common tools call them: `buf curl` (the same
//! reflection protocol as `grpcurl`, which has no package here) lists the
//! services by reflection, in both protocol versions, and calls
//! `grpc.health.v1.Health/Check` without a token; a project method without
//! a token is still UNAUTHENTICATED. tonic-health's own client checks and
//! watches the status, which turns NOT_SERVING when the coordinator stops.
//!
//! Needs `buf` from npm's `@bufbuild/buf` at `target/buf/node_modules/.bin/buf`
//! (`tests/run` installs it) or at `XQ_BUF`.

use std::process::{Command, Output};
use std::time::Duration;

use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use xq_tests::procs::Served;
use xq_tests::tools::buf;

/// `buf curl --protocol grpc --http2-prior-knowledge ARGS…`.
fn buf_curl(args: &[&str]) -> Output {
    let buf = buf();
    Command::new(&buf)
        .args(["curl", "--protocol", "grpc", "--http2-prior-knowledge"])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} ({e}): run tests/run once (it installs target/buf), or set XQ_BUF",
                buf.display()
            )
        })
}

fn text(out: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn reflection_lists_the_services_and_health_answers_without_a_token() {
    let served = Served::start("standard-services", &[]);
    let url = served.coordinator.url();
    for version in ["grpc-v1", "grpc-v1alpha"] {
        let out = buf_curl(&["--reflect-protocol", version, "--list-services", &url]);
        assert!(out.status.success(), "{version}: {}", text(&out));
        let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        for service in [
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
            "xq.cluster.v1.WorkerService",
            "xq.cluster.v1.RunService",
            "xq.cluster.v1.AccountService",
            "xq.cluster.v1.RegistryService",
        ] {
            assert!(
                listed.iter().any(|l| l == service),
                "{version}: {service} not listed: {listed:?}"
            );
        }
    }
    let out = buf_curl(&["--list-methods", &url]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("xq.cluster.v1.RunService/GetRun"),
        "{}",
        text(&out)
    );

    // Health, overall and per service, without a token.
    for service in ["", "xq.cluster.v1.WorkerService"] {
        let body = format!(r#"{{"service":"{service}"}}"#);
        let out = buf_curl(&["-d", &body, &format!("{url}/grpc.health.v1.Health/Check")]);
        assert!(out.status.success(), "{service:?}: {}", text(&out));
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(answer["status"], "SERVING", "{service:?}: {}", text(&out));
    }
    let out = buf_curl(&[
        "-d",
        r#"{"service":"xq.cluster.v1.Nothing"}"#,
        &format!("{url}/grpc.health.v1.Health/Check"),
    ]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not_found"),
        "{}",
        text(&out)
    );

    // A project method: its request is made from reflection, but the call
    // itself still needs a token.
    let get_run = format!("{url}/xq.cluster.v1.RunService/ListRuns");
    let out = buf_curl(&["-d", "{}", &get_run]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unauthenticated"),
        "{}",
        text(&out)
    );
    let bearer = format!("Authorization: Bearer {}", served.admin);
    let out = buf_curl(&["-H", &bearer, "-d", "{}", &get_run]);
    assert!(out.status.success(), "{}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tonic_health_checks_and_watches_until_the_coordinator_stops() {
    let mut served = Served::start("standard-health", &[]);
    let channel = tonic::transport::Endpoint::from_shared(served.coordinator.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = HealthClient::new(channel);
    let ask = |service: &str| HealthCheckRequest {
        service: service.to_owned(),
    };
    for service in ["", "xq.cluster.v1.RunService", "grpc.health.v1.Health"] {
        let answer = health.check(ask(service)).await.unwrap().into_inner();
        assert_eq!(answer.status(), ServingStatus::Serving, "{service:?}");
    }
    let mut watch = health.watch(ask("")).await.unwrap().into_inner();
    let first = watch.message().await.unwrap().expect("a first status");
    assert_eq!(first.status(), ServingStatus::Serving);

    // Ctrl-C: the stream ends (an open Watch would otherwise hold the
    // graceful stop open), saying nothing but NOT_SERVING before it does
    // (that message races the connection's close, so it may be lost; the
    // unit test of `standard::health` sees it), and the coordinator exits.
    let pid = served.coordinator.pid().to_string();
    let interrupted = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(interrupted.success());
    loop {
        let next = tokio::time::timeout(Duration::from_secs(60), watch.message())
            .await
            .expect("the Watch stream ends when the coordinator stops");
        match next {
            Ok(Some(status)) => assert_eq!(status.status(), ServingStatus::NotServing),
            Ok(None) | Err(_) => break,
        }
    }
    let stopped = tokio::task::spawn_blocking(move || served.coordinator.interrupt());
    tokio::time::timeout(Duration::from_secs(60), stopped)
        .await
        .expect("the coordinator exits")
        .unwrap();
}
