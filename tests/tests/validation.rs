//! Every refused request is refused before anything is stored: each gets a
//! status naming the field, and the run's totals and the lease are untouched.

use std::time::Duration;

use tonic::Code;
use xq_proto::pb;
use xq_tests::cluster::*;

/// A refused submission: what it is, worker id, lease id, results, the
/// expected code and a word the message must contain.
type Case = (
    &'static str,
    u64,
    u64,
    Option<pb::GameResults>,
    Code,
    &'static str,
);

/// The lease's pairs drawn by adjudication right after their openings, with
/// their games ([`drawn`]); game `bad` (if any) then plays `a0a9`, a Red
/// move with Black to move, as well.
fn drawn_games(lease: &pb::Lease, bad: Option<usize>) -> pb::GameResults {
    let mut results = drawn(lease);
    if let Some(i) = bad {
        let mut game = xq_proto::GameRecord::try_from(results.games[i].clone()).unwrap();
        game.moves
            .push(xq_engine::Move::parse_coords("a0a9").unwrap());
        game.per_move.push(xq_proto::MoveStats::default());
        results.games[i] = game.into();
        if let Some(t) = results.totals.as_mut() {
            t.total_plies += 1;
        }
    }
    results
}

/// `results` with its totals changed by `f`.
fn tweak(results: &pb::GameResults, f: impl FnOnce(&mut pb::Totals)) -> pb::GameResults {
    let mut r = results.clone();
    if let Some(t) = r.totals.as_mut() {
        f(t);
    }
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_submissions_are_refused_naming_the_field_and_change_nothing() {
    let db = TempDb::new("validate");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let url = server.url();
    let mut admin = admin(&url).await;
    let run = create(&mut admin, games_spec(8, 4)).await;
    let (mut rpc, worker_id) = raw_worker(&url, "v").await;
    let lease = rpc
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    let before = status(&mut admin, run).await;
    let good = drawn(&lease);
    let cases: Vec<Case> = vec![
        (
            "missing results",
            worker_id,
            lease.lease_id,
            None,
            Code::InvalidArgument,
            "results",
        ),
        (
            "fewer pairs",
            worker_id,
            lease.lease_id,
            Some(tweak(&good, |t| {
                t.pairs = 3;
            })),
            Code::InvalidArgument,
            "results.pairs",
        ),
        (
            "counts without their games",
            worker_id,
            lease.lease_id,
            Some(pb::GameResults {
                games: Vec::new(),
                ..good.clone()
            }),
            Code::InvalidArgument,
            "results.games",
        ),
        (
            "an end reason of 100,000 bytes",
            worker_id,
            lease.lease_id,
            Some({
                let mut r = good.clone();
                r.games[0].reason = "x".repeat(100_000);
                r
            }),
            Code::InvalidArgument,
            "(100000 bytes)",
        ),
        (
            "pentanomial off",
            worker_id,
            lease.lease_id,
            Some(tweak(&good, |t| {
                t.pentanomial = vec![0, 0, 3, 0, 0];
            })),
            Code::InvalidArgument,
            "results.pentanomial",
        ),
        (
            "pentanomial length",
            worker_id,
            lease.lease_id,
            Some(tweak(&good, |t| {
                t.pentanomial = vec![4];
            })),
            Code::InvalidArgument,
            "results.pentanomial",
        ),
        (
            "wdl overflow",
            worker_id,
            lease.lease_id,
            Some(tweak(&good, |t| {
                t.wins = u64::MAX;
                t.draws = 9;
                t.losses = u64::MAX;
            })),
            Code::InvalidArgument,
            "results.wins",
        ),
        (
            "absurd plies",
            worker_id,
            lease.lease_id,
            Some(tweak(&good, |t| {
                t.total_plies = 80_001;
            })),
            Code::InvalidArgument,
            "results.total_plies",
        ),
        (
            "reasons off",
            worker_id,
            lease.lease_id,
            Some(tweak(&good, |t| {
                t.reasons = [("x".to_owned(), 7)].into();
            })),
            Code::InvalidArgument,
            "results.reasons",
        ),
        (
            "a game that does not replay",
            worker_id,
            lease.lease_id,
            Some(drawn_games(&lease, Some(3))),
            Code::InvalidArgument,
            "results.games[3].moves",
        ),
        (
            "a game from another opening",
            worker_id,
            lease.lease_id,
            Some({
                let mut r = drawn_games(&lease, None);
                r.games[2].opening_index += 1;
                r
            }),
            Code::InvalidArgument,
            "results.games[2].opening_index",
        ),
        (
            "a game from another start position",
            worker_id,
            lease.lease_id,
            Some({
                let mut r = drawn_games(&lease, None);
                r.games[4].start_fen = "4k4/9/9/9/9/9/9/9/4A4/3AK4 w - - 0 1".to_owned();
                r
            }),
            Code::InvalidArgument,
            "results.games[4].start_fen",
        ),
        (
            "a game whose opening moves differ",
            worker_id,
            lease.lease_id,
            Some({
                let mut r = drawn_games(&lease, None);
                let (a, b) = (
                    r.games[1].moves[0..2].to_vec(),
                    r.games[1].moves[2..4].to_vec(),
                );
                r.games[1].moves.splice(0..4, b.into_iter().chain(a));
                r
            }),
            Code::InvalidArgument,
            "results.games[1].moves",
        ),
        (
            "games that contradict the counts",
            worker_id,
            lease.lease_id,
            Some(tweak(&drawn_games(&lease, None), |t| {
                t.total_plies += 1;
            })),
            Code::InvalidArgument,
            "results.games",
        ),
        (
            "fewer games than counted",
            worker_id,
            lease.lease_id,
            Some(pb::GameResults {
                games: drawn_games(&lease, None).games[..3].to_vec(),
                ..drawn_games(&lease, None)
            }),
            Code::InvalidArgument,
            "results.games",
        ),
        (
            "garbled moves",
            worker_id,
            lease.lease_id,
            Some({
                let mut r = drawn_games(&lease, None);
                r.games[5].moves.pop();
                r
            }),
            Code::InvalidArgument,
            "game.moves",
        ),
        (
            "unknown lease",
            worker_id,
            999,
            Some(good.clone()),
            Code::NotFound,
            "lease 999",
        ),
        (
            "unknown worker",
            999,
            lease.lease_id,
            Some(good.clone()),
            Code::NotFound,
            "worker 999",
        ),
        (
            "worker 0",
            0,
            lease.lease_id,
            Some(good.clone()),
            Code::InvalidArgument,
            "worker_id",
        ),
    ];
    for (what, worker_id, lease_id, results, code, field) in cases {
        let err = rpc
            .submit_result(pb::SubmitResultRequest {
                worker_id,
                lease_id,
                results,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), code, "{what}: {err}");
        assert!(err.message().contains(field), "{what}: {}", err.message());
        assert!(
            err.message().len() <= xq_proto::error::MAX_MESSAGE_BYTES,
            "{what}: a refusal of {} bytes",
            err.message().len()
        );
        let now = status(&mut admin, run).await;
        assert_eq!(now.totals, before.totals, "{what} changed the totals");
        assert_eq!(now.pairs_in_flight, 4, "{what} changed the lease");
    }
    // An oversized message is refused before it is decoded.
    let huge = pb::GameResults {
        games: vec![pb::GameRecord {
            moves: vec![0; 5 << 20],
            ..Default::default()
        }],
        ..good.clone()
    };
    let err = rpc
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: lease.lease_id,
            results: Some(huge),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err.code(), Code::OutOfRange | Code::ResourceExhausted),
        "{err}"
    );
    assert_eq!(status(&mut admin, run).await.totals, before.totals);
    // Unknown runs and bad heartbeats.
    let err = admin
        .get_run(pb::GetRunRequest {
            run_id: 77,
            include_history: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    let err = rpc
        .heartbeat(pb::HeartbeatRequest {
            worker_id,
            leases: vec![pb::LeaseProgress::default(); 65],
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("leases"), "{}", err.message());
    let err = rpc
        .heartbeat(pb::HeartbeatRequest {
            worker_id: 999,
            leases: vec![pb::LeaseProgress {
                lease_id: lease.lease_id,
                pairs_done: 1,
            }],
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("worker 999"), "{}", err.message());
    // The lease still holds: the right result counts once.
    let ok = rpc
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: lease.lease_id,
            results: Some(good),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ok.status(), pb::SubmitStatus::Accepted);
    assert_eq!(status(&mut admin, run).await.totals.unwrap().pairs, 4);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_parameters_outside_their_bounds_are_refused_at_creation() {
    let db = TempDb::new("bounds");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let mut spec = games_spec(4, 4);
    if let Some(pb::run_spec::Kind::Games(g)) = &mut spec.kind {
        g.dev_params.insert("chariot_value".to_owned(), i64::MAX);
    }
    let err = admin
        .create_run(pb::CreateRunRequest {
            spec: Some(spec),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("games.dev_params"),
        "{}",
        err.message()
    );
    let spsa = spsa_spec(
        vec![pb::SpsaParam {
            name: "chariot_value".to_owned(),
            start: 900.0,
            min: -1e12,
            max: 950.0,
            c_end: 10.0,
            r_end: 0.002,
            is_float: false,
        }],
        100,
        4,
    );
    let err = admin
        .create_run(pb::CreateRunRequest {
            spec: Some(spsa),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("spsa.params"), "{}", err.message());
    let runs = admin
        .list_runs(pb::ListRunsRequest {})
        .await
        .unwrap()
        .into_inner()
        .runs;
    assert!(runs.is_empty());
    server.stop().await;
}
