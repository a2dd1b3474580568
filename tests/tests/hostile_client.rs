//! A client that is not the project's own (Python's grpcio, with stubs
//! generated from the published proto by `tests/py/hostile_client.py`)
//! tries what a hostile worker would: counts without their games, fewer
//! games than pairs, and a name of 100,000 bytes. Each is refused naming the
//! field, the refusals stay small, and nothing is counted: the lease still
//! holds and its honest result counts once afterwards. It also calls the
//! run-management methods (ApproveRun, RejectRun, ResumeRun, ModifyRun) with
//! a worker token and with none (refused), and with an admin token on a run
//! that is not pending or stopped, an unknown run, a missing or
//! 100,000-byte rejection reason, a change of nothing, a share of 0 or over
//! the largest, a cap of 0 or below the pairs handed out: each a refusal of
//! the expected code, kept small, and the run unchanged. And the account
//! service: Login without values, with a wrong password and with
//! 100,000-byte fields, CreateToken without a token, with a worker token,
//! with a token of no user, without a role or with a 100,000-byte name, and
//! RevokeToken of another user's token. And the registry service: uploads
//! without a user's personal token, malformed or lying uploads, and
//! registrations of nothing uploaded, each refused with its code; nothing
//! of them is stored.
//!
//! Needs grpcio and grpcio-tools in `XQ_PYTHON`'s environment
//! (`tests/py/requirements.txt`; `.ci/run` installs them).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use xq_coordinator::access::{UserRole, passwords};
use xq_coordinator::auth::{Role, tokens};
use xq_coordinator::store::{Store, StoreError, now_ms, tokens as token_rows, users};
use xq_proto::pb;
use xq_tests::cluster::*;

const PASSWORD: &str = "hostile-test-words";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_client_gets_named_refusals_and_nothing_is_counted() {
    let db = TempDb::new("hostile");
    // A user who signs in, and another user's token.
    Store::open(&db.0)
        .unwrap()
        .call(|conn| {
            let hash = passwords::hash(PASSWORD).map_err(|e| StoreError::Schema(e.to_string()))?;
            users::insert(
                conn,
                "ana",
                UserRole::Developer,
                Some(&hash),
                false,
                now_ms(),
            )?;
            let bo = users::insert(conn, "bo", UserRole::Developer, None, false, now_ms())?;
            token_rows::insert(
                conn,
                "bo-laptop",
                Role::Personal,
                bo,
                &tokens::hash("xqt_bo"),
                now_ms(),
            )
        })
        .await
        .unwrap();
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let mut admin = admin(&server.url()).await;
    let mut spec = sprt_spec(0.0, 5.0, 0);
    spec.batch_pairs = 2;
    let run = create(&mut admin, spec).await;

    let python = std::env::var("XQ_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let address = server.url().trim_start_matches("http://").to_owned();
    let client = tokio::task::spawn_blocking(move || {
        Command::new(&python)
            .arg(tests.join("py/hostile_client.py"))
            .args(["--url", &address, "--token", WORKER_TOKEN])
            .args(["--admin-token", ADMIN_TOKEN, "--run", &run.to_string()])
            .args([
                "--user",
                "ana",
                "--password",
                PASSWORD,
                "--other-token",
                "bo-laptop",
            ])
            .arg("--proto-dir")
            .arg(tests.join("../proto"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run {python} (set XQ_PYTHON): {e}"))
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "the foreign client (needs grpcio and grpcio-tools: pip install -r \
         tests/py/requirements.txt, then set XQ_PYTHON):\n{stdout}\n{}",
        String::from_utf8_lossy(&client.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    for (name, attempt) in report["attempts"].as_object().expect("attempts") {
        assert_eq!(attempt["code"], "INVALID_ARGUMENT", "{name}: {attempt}");
        assert!(
            attempt["message_bytes"].as_u64().unwrap() <= 1024,
            "{name}: {attempt}"
        );
    }
    let refusals = report["refusals"].as_object().expect("refusals");
    assert_eq!(refusals.len(), 58, "{refusals:?}");
    for (name, refusal) in refusals {
        assert_eq!(refusal["code"], refusal["expected"], "{name}: {refusal}");
        assert!(
            refusal["message_bytes"].as_u64().unwrap() <= 1024,
            "{name}: {refusal}"
        );
    }
    let long = &report["attempts"]["name_of_100000_bytes"]["message"];
    assert!(
        long.as_str().unwrap().contains("invalid name"),
        "the refusal names the field: {long}"
    );

    let blobs: i64 = rusqlite::Connection::open(&db.0)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM blobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(blobs, 0, "no refused upload left a blob");

    let after = status(&mut admin, run).await;
    let totals = after.totals.clone().unwrap();
    assert_eq!((totals.pairs, totals.wins), (0, 0), "nothing counted");
    assert_eq!(after.pairs_in_flight, 2, "the lease still holds");
    assert_eq!(
        (
            after.spec.as_ref().map(|s| s.priority),
            after.share,
            after.target_pairs
        ),
        (Some(0), 100, 0),
        "no refused change changed the run"
    );

    // The same lease's honest result, with its games, counts once.
    let worker_id = report["worker_id"].as_u64().unwrap();
    let hex = report["lease"].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let lease = <pb::Lease as prost::Message>::decode(bytes.as_slice()).unwrap();
    let mut rpc = worker_client(&server.url(), Some(WORKER_TOKEN));
    let answer = rpc
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: lease.lease_id,
            results: Some(drawn(&lease)),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.status(), pb::SubmitStatus::Accepted);
    let totals = status(&mut admin, run).await.totals.unwrap();
    assert_eq!((totals.pairs, totals.draws), (2, 4));
    server.stop().await;
}
