//! Authentication, roles, revocation and rate limits against a real server
//! on 127.0.0.1:0 (TLS: `tls.rs`).

use std::time::Duration;

use tonic::Code;
use xq_coordinator::auth::{Rate, RateLimits, Role};
use xq_coordinator::events::Actor;
use xq_coordinator::service::Store;
use xq_coordinator::service::accounts::Accounts;
use xq_proto::pb;
use xq_tests::accounts::add_token;
use xq_tests::cluster::*;

fn register() -> pb::RegisterRequest {
    register_request("sec")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_without_a_good_token_are_unauthenticated_and_roles_are_enforced() {
    let db = TempDb::new("auth");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let url = server.url();
    for token in [None, Some("xqt_wrong"), Some("")] {
        let err = run_client(&url, token)
            .list_runs(pb::ListRunsRequest {})
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated, "{token:?}: {err}");
        let err = worker_client(&url, token)
            .register(register())
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated, "{token:?}: {err}");
    }
    // A worker token may read runs and work, but not create or stop runs.
    let mut as_worker = run_client(&url, Some(WORKER_TOKEN));
    as_worker.list_runs(pb::ListRunsRequest {}).await.unwrap();
    let err = as_worker
        .create_run(pb::CreateRunRequest {
            spec: Some(games_spec(4, 4)),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let run = create(&mut admin(&url).await, games_spec(4, 4)).await;
    let err = as_worker
        .stop_run(pb::StopRunRequest { run_id: run })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    assert!(err.message().contains("StopRun"), "{}", err.message());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_tokens_work_until_revoked_without_a_restart() {
    let db = TempDb::new("revoke");
    // The schema exists before the server starts, as after `token add`.
    let token = add_token(&db.0, "host-1", Role::Worker).await;
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let url = server.url();
    let mut rpc = worker_client(&url, Some(&token));
    rpc.register(register()).await.unwrap();
    // A token added while the server runs works at once.
    let admin_token = add_token(&db.0, "ops", Role::Personal).await;
    create(&mut run_client(&url, Some(&admin_token)), games_spec(4, 4)).await;
    // As `token revoke host-1 --db` does, while the server runs.
    let revoked = Accounts::new(Store::open(&db.0).unwrap())
        .revoke_token(Actor::cli(), "host-1".to_owned())
        .await
        .unwrap();
    assert!(revoked, "host-1 was working");
    let err = rpc.register(register()).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    // Nothing stored holds the token text.
    let bytes = std::fs::read(&db.0).unwrap();
    let wal = std::fs::read(format!("{}-wal", db.0.display())).unwrap_or_default();
    for hay in [&bytes, &wal] {
        assert!(!hay.windows(token.len()).any(|w| w == token.as_bytes()));
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_cannot_act_for_another_tokens_worker() {
    let db = TempDb::new("owner");
    let other = add_token(&db.0, "other", Role::Worker).await;
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(10))).await;
    let url = server.url();
    let run = create(&mut admin(&url).await, games_spec(8, 8)).await;
    let mut mine = worker_client(&url, Some(WORKER_TOKEN));
    let worker_id = mine
        .register(register())
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    let lease = mine
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    let mut theirs = worker_client(&url, Some(&other));
    let err = theirs
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let err = theirs
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: lease.lease_id,
            results: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    // Their own worker may not submit my lease either.
    let their_id = theirs
        .register(register())
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    let err = theirs
        .submit_result(pb::SubmitResultRequest {
            worker_id: their_id,
            lease_id: lease.lease_id,
            results: Some(drawn(&lease)),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let s = status(&mut admin(&url).await, run).await;
    assert_eq!(s.totals.unwrap().pairs, 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_over_its_rate_gets_resource_exhausted() {
    let db = TempDb::new("rate");
    let mut config = fast_config(Duration::from_secs(10));
    config.limits = RateLimits {
        worker: Rate {
            per_second: 1.0,
            burst: 5.0,
        },
        ..RateLimits::UNLIMITED
    };
    let server = TestServer::start("127.0.0.1:0", &db.0, config).await;
    let mut rpc = worker_client(&server.url(), Some(WORKER_TOKEN));
    let mut codes = Vec::new();
    for _ in 0..8 {
        codes.push(match rpc.register(register()).await {
            Ok(_) => Code::Ok,
            Err(e) => e.code(),
        });
    }
    assert_eq!(codes[..5], [Code::Ok; 5]);
    assert!(
        codes[5..].iter().all(|c| *c == Code::ResourceExhausted),
        "{codes:?}"
    );
    // The admin token has its own, unlimited bucket.
    for _ in 0..20 {
        admin(&server.url())
            .await
            .list_runs(pb::ListRunsRequest {})
            .await
            .unwrap();
    }
    server.stop().await;
}
