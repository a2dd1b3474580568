//! A coordinator whose check lane is full refuses results for load before
//! reading them (`RESOURCE_EXHAUSTED` with `grpc-retry-pushback-ms`); the
//! worker keeps its lease alive through a minute of refusals and its result
//! is counted once when there is room again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::Code;
use xq_coordinator::service::{CheckConfig, CheckLane};
use xq_proto::pb;
use xq_tests::cluster::{
    SimulatedPlayer, TempDb, TestServer, admin, create, fast_config, games_spec, raw_worker,
    spawn_worker, status, wait_for_end,
};

/// How long the lane stays full.
const REFUSING: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_refused_for_a_minute_keeps_its_lease_and_is_counted_once() {
    let db = TempDb::new("overload");
    let lane = CheckLane::new(CheckConfig {
        threads: 1,
        admitted_per_thread: 1,
    });
    let full = lane.try_admit().expect("the lane's one place");
    // A lease lapses 10 s after its last heartbeat: a minute of refusals
    // without heartbeats would lose it six times over. Not 2 s: each
    // heartbeat's commit syncs the WAL, and on a CI machine one minute of
    // them once held a gap past 2 s, the lease lapsed and a second lease
    // played the pairs again.
    let mut config = fast_config(Duration::from_secs(10));
    config.check_lane = Some(lane.clone());
    let server = TestServer::start("127.0.0.1:0", &db.0, config).await;
    let url = server.url();
    let mut admin = admin(&url).await;

    // A client that is not ours: refused before its message is read (the
    // lease does not exist), with the delay to wait.
    let (mut raw, worker_id) = raw_worker(&url, "raw").await;
    let refused = raw
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: 999_999,
            results: None,
        })
        .await
        .expect_err("a full lane takes no result");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    let pushback = xq_proto::connect::retry_pushback(&refused)
        .unwrap_or_else(|| panic!("no retry delay in {:?}", refused.metadata()));
    assert!(
        pushback >= Duration::from_millis(100) && pushback <= Duration::from_secs(10),
        "{pushback:?}"
    );

    let run = create(&mut admin, games_spec(2, 2)).await;
    let player = Arc::new(SimulatedPlayer::first_player_stronger(0.0));
    let (stop, worker) = spawn_worker(&url, player, 1);
    let deadline = Instant::now() + Duration::from_secs(60);
    while lane.refused() < 2 {
        assert!(
            Instant::now() < deadline,
            "the worker never submitted its result"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = lane.refused();
    tokio::time::sleep(REFUSING).await;
    let refusals = lane.refused() - before;
    // The test's worker waits at most its back-off (200 ms) between tries.
    assert!(refusals >= 100, "{refusals} refusals in a minute");
    let waiting = status(&mut admin, run).await;
    assert_eq!(waiting.totals.map_or(0, |t| t.pairs), 0);

    drop(full);
    let done = wait_for_end(&mut admin, run, Duration::from_secs(30)).await;
    assert_eq!(
        done.totals.map_or(0, |t| t.pairs),
        2,
        "the result is counted once"
    );
    let _ = stop.send(());
    let summary = worker.await.unwrap();
    assert_eq!(
        (summary.leases_accepted, summary.leases_dropped),
        (1, 0),
        "{summary:?}"
    );
    server.stop().await;
}
