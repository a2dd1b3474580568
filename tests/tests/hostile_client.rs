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
//! The rest of the suite (`tests/py/hostile/`, run as `python -m hostile
//! GROUP`) does the other things hostile or broken clients would, one
//! group per test, each against a server of its own:
//!
//! * `outside`: every method without a token or with a revoked one, wrong
//!   roles, another user's run, the administration service's user methods
//!   (AddUser, ListUsers, SetUser) with a developer's token and a token of
//!   no user, 600 random byte strings to every method, a
//!   5 MiB request, huge repeated fields, nested and truncated messages,
//!   datagen specs with each bad value (refused naming the field, no run
//!   made) and one good one;
//! * `results`: another worker's id or lease, lying games (a 4-entry
//!   pentanomial, illegal moves, a garbage FEN, fabricated checkmates),
//!   replayed and reordered results, another run's lease, a lapsed lease
//!   and a worker that never heartbeats;
//! * `floods` (real rate limits, short connection timeouts): 3,200
//!   concurrent reads, floods of calls, sign-ins and health checks, and
//!   slow-loris connections.
//!
//! After each, the client checks through GetRun and the database file that
//! the run totals equal the results it saw accepted and that
//! `integrity_check` is ok; here every case must have got its expected
//! code with a short message. The client asks this test for honest results
//! (every game drawn by adjudication after its opening, as
//! [`drawn`] makes them): a line `{"drawn": HEX}` is answered with the
//! encoded `GameResults` in hex.
//!
//! Needs grpcio and grpcio-tools in [`xq_tests::tools::python`]'s environment
//! (`tests/py/requirements.txt`; `tests/run` installs them).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use prost::Message;
use serde_json::Value;
use xq_coordinator::access::{UserRole, passwords};
use xq_coordinator::auth::{RateLimits, Role, tokens};
use xq_coordinator::events::Actor;
use xq_coordinator::preface::ConnectionTimeouts;
use xq_coordinator::server::ServerConfig;
use xq_coordinator::service::Store;
use xq_coordinator::service::accounts::{Accounts, NewUser};
use xq_proto::pb;
use xq_tests::cluster::*;
use xq_tests::tools::PYTHON_HINT;

const PASSWORD: &str = "hostile-test-words";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_client_gets_named_refusals_and_nothing_is_counted() {
    let db = TempDb::new("hostile");
    // A user who signs in, and another user's token.
    seed(&db.0, "bo-laptop", Role::Personal, "xqt_bo").await;
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let mut admin = admin(&server.url()).await;
    let mut spec = sprt_spec(0.0, 5.0, 0);
    spec.batch_pairs = 2;
    let run = create(&mut admin, spec).await;

    let python = xq_tests::tools::python();
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
            .unwrap_or_else(|e| panic!("cannot run {}: {e}; {PYTHON_HINT}", python.display()))
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "the foreign client (needs grpcio and grpcio-tools: {PYTHON_HINT}):\n{stdout}\n{}",
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
    assert_eq!(refusals.len(), 60, "{refusals:?}");
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

const OTHER_WORKER_TOKEN: &str = "xqt_hostile_other_worker";

/// A database with a developer who signs in (`ana`) and a worker token of
/// another user (`bo`).
async fn seeded(tag: &str) -> TempDb {
    let db = TempDb::new(tag);
    seed(&db.0, "bo-box", Role::Worker, OTHER_WORKER_TOKEN).await;
    db
}

/// Adds to the database file `db` an untrusted developer `ana` who signs in
/// with [`PASSWORD`], and an untrusted developer `bo` without a password
/// who holds `token` of `role`, named `token_name`: as `user add` and
/// `token add --user bo` on the file do (the accounts service, as the
/// file's administrator).
async fn seed(db: &Path, token_name: &str, role: Role, token: &str) {
    let accounts = Accounts::new(Store::open(db).unwrap());
    let developer = |name: &str, password_hash| NewUser {
        name: name.to_owned(),
        role: UserRole::Developer,
        password_hash,
        trusted: false,
    };
    let hash = passwords::hash(PASSWORD).unwrap();
    accounts
        .add_user(Actor::cli(), developer("ana", Some(hash)))
        .await
        .unwrap();
    let bo = accounts
        .add_user(Actor::cli(), developer("bo", None))
        .await
        .unwrap();
    accounts
        .create_token(
            Actor::cli_for(Some(bo)),
            token_name.to_owned(),
            role,
            tokens::hash(token),
        )
        .await
        .unwrap();
}

/// Runs `python -m hostile GROUP` against `server`, answering its requests
/// for honest results; its report.
async fn hostile(group: &'static str, server: &TestServer, db: &Path, runs: &[u64]) -> Value {
    let python = xq_tests::tools::python();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let address = server.url().trim_start_matches("http://").to_owned();
    let runs = runs
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let db = db.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(&python)
            .args(["-m", "hostile", group, "--url", &address])
            .arg("--db")
            .arg(&db)
            .arg("--proto-dir")
            .arg(tests.join("../proto"))
            .args(["--admin-token", ADMIN_TOKEN, "--worker-token", WORKER_TOKEN])
            .args(["--other-worker-token", OTHER_WORKER_TOKEN])
            .args(["--user", "ana", "--password", PASSWORD, "--runs", &runs])
            .current_dir(tests.join("py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}; {PYTHON_HINT}", python.display()));
        let mut stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut last = String::new();
        for line in stdout.lines() {
            let line = line.unwrap();
            let Some(hex) = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| v["drawn"].as_str().map(str::to_owned))
            else {
                last = line;
                continue;
            };
            let lease = pb::Lease::decode(unhex(&hex).as_slice()).expect("a lease");
            writeln!(stdin, "{}", to_hex(&drawn(&lease).encode_to_vec())).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report: Value = serde_json::from_str(&last).unwrap_or_else(|e| {
            panic!(
                "the hostile client (needs grpcio and grpcio-tools: {PYTHON_HINT}) \
                 printed no report ({e}):\n{last}\n{stderr}"
            )
        });
        let failed = &report["failed"];
        let cases = report["cases"].as_object().expect("cases");
        let wrong: Vec<_> = failed
            .as_array()
            .unwrap()
            .iter()
            .map(|name| (name, &cases[name.as_str().unwrap()]))
            .collect();
        assert!(
            wrong.is_empty() && out.status.success() && report["check"]["ok"] == true,
            "{group}: cases that failed: {wrong:#?}\ncheck: {:#}\n{stderr}",
            report["check"]
        );
        if let Ok(path) = std::env::var("XQ_HOSTILE_REPORT") {
            std::fs::write(format!("{path}.{group}.json"), &last).unwrap();
        }
        eprintln!("{group}: {} cases in {} s", cases.len(), report["seconds"]);
        report
    })
    .await
    .unwrap()
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Two open-ended SPRT runs of different batch sizes.
async fn two_runs(url: &str) -> Vec<u64> {
    let mut admin = admin(url).await;
    let mut runs = Vec::new();
    for batch in [2, 3] {
        let mut spec = sprt_spec(0.0, 5.0, 0);
        spec.batch_pairs = batch;
        runs.push(create(&mut admin, spec).await);
    }
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_results_are_refused_and_totals_stay_exact() {
    let db = seeded("hostile-results").await;
    let server = TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(5))).await;
    let runs = two_runs(&server.url()).await;
    let report = hostile("results", &server, &db.0, &runs).await;
    assert!(report["cases"].as_object().unwrap().len() >= 20, "{report}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_callers_and_bytes_are_refused_and_the_server_stays_up() {
    let db = seeded("hostile-outside").await;
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let runs = two_runs(&server.url()).await;
    let report = hostile("outside", &server, &db.0, &runs).await;
    assert!(
        report["cases"].as_object().unwrap().len() >= 100,
        "{report}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_are_limited_and_slow_clients_dropped() {
    let db = seeded("hostile-floods").await;
    let config = ServerConfig {
        limits: RateLimits::default(),
        connections: ConnectionTimeouts {
            preface: Duration::from_secs(2),
            keepalive_interval: Duration::from_secs(1),
            keepalive_timeout: Duration::from_secs(1),
        },
        ..fast_config(Duration::from_secs(60))
    };
    let server = TestServer::start("127.0.0.1:0", &db.0, config).await;
    let runs = two_runs(&server.url()).await;
    let report = hostile("floods", &server, &db.0, &runs).await;
    assert!(report["cases"].as_object().unwrap().len() >= 10, "{report}");
    server.stop().await;
}
