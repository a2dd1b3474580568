//! The game archive end to end: a cluster SPRT with the real engine stores
//! every counted game, each replays to its stored ending, and
//! `xq-coordinator pgn` writes them as PGN that independent readers accept
//! (`tests/py/check_pgn.py`, as in `pgn_reader.rs`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use xq_engine::Position;
use xq_engine::rules::{Claim, Outcome, RuleSet, replay};
use xq_proto::pb;
use xq_tests::cluster::{
    TempDb, TestServer, WORKER_TOKEN, admin, create, engine_settings, fast_config,
    spawn_engine_worker, stored_games, wait_for_end,
};
use xq_tests::{binary, pgn_from, pgn_of_db};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_sprt_stores_every_game_and_pgn_writes_them() {
    let db = TempDb::new("archive");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let weak: HashMap<String, i64> = [("chariot_value".to_owned(), 300)].into();
    let run = create(
        &mut admin,
        pb::RunSpec {
            keep_games: Default::default(),
            name: "chariot 300".to_owned(),
            priority: 0,
            batch_pairs: 4,
            settings: Some(pb::MatchSettings {
                seed: 5,
                ..engine_settings(300)
            }),
            kind: Some(pb::run_spec::Kind::Sprt(pb::SprtSpec {
                dev_params: HashMap::new(),
                base_params: weak,
                elo0: 0.0,
                elo1: 10.0,
                alpha: 0.05,
                beta: 0.05,
                model: pb::EloModel::Normalized.into(),
                max_games: 400,
                engines: None,
            })),
            workers: None,
        },
    )
    .await;
    let (stop, handle) = spawn_engine_worker(&server.url(), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(300)).await;
    let _ = stop.send(());
    handle.await.expect("worker task");
    let totals = end.totals.expect("totals");
    let counted = 2 * totals.pairs;
    assert!(counted >= 40, "{totals:?}");

    let stored: Vec<_> = stored_games(&db.0, run)
        .await
        .into_iter()
        .map(|g| g.game)
        .collect();
    assert_eq!(stored.len() as u64, counted, "stored games = counted games");
    let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
    for g in &stored {
        let r = &g.record;
        let ending = Outcome {
            result: r.result,
            reason: r.reason,
            ply: r.moves.len(),
        };
        let replayed = replay(
            Position::from_fen(&r.start_fen).expect("start FEN"),
            RuleSet::STANDARD,
            &Claim {
                moves: &r.moves,
                opening_plies: r.opening_plies as usize,
                outcome: ending,
            },
        )
        .unwrap_or_else(|e| panic!("lease {} game {}: {e}", g.lease_id, g.game_index));
        if ending.reason.is_arbiter() {
            assert_eq!(replayed.outcome(), Some(ending));
        }
        *reasons.entry(r.reason.token().to_owned()).or_default() += 1;
    }
    let counted_reasons: BTreeMap<String, u64> = totals.reasons.into_iter().collect();
    assert_eq!(reasons, counted_reasons);

    let dir = std::env::temp_dir().join(format!("xq-archive-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let all = dir.join("all.pgn");
    let text = pgn_of_db(&db.0, run, &all, &[]);
    assert_eq!(
        text.matches("[Game \"Chinese Chess\"]").count() as u64,
        counted
    );
    let lost = pgn_of_db(&db.0, run, &dir.join("lost.pgn"), &["--filter", "lost"]);
    assert_eq!(
        lost.matches("[Game \"Chinese Chess\"]").count() as u64,
        totals.losses
    );
    // The served coordinator streams the same games, filtered the same way,
    // to a read (worker) token: the same PGN byte for byte.
    let url = server.url();
    let served = ["--coordinator", url.as_str(), "--token", WORKER_TOKEN];
    for extra in [
        &[][..],
        &["--filter", "lost"][..],
        &["--filter", "reason=adjudication", "--notation", "wxf"][..],
    ] {
        let from_db = pgn_of_db(&db.0, run, &dir.join("db.pgn"), extra);
        let from_server = pgn_from(&served, run, &dir.join("served.pgn"), extra);
        assert_eq!(from_server, from_db, "pgn {extra:?}");
    }
    let refused = Command::new(binary("xq-coordinator"))
        .args([
            "pgn",
            &run.to_string(),
            "--coordinator",
            &url,
            "--token",
            "nope",
        ])
        .arg("--out")
        .arg(dir.join("refused.pgn"))
        .output()
        .expect("run xq-coordinator pgn");
    assert!(!refused.status.success());
    server.stop().await;
    let python = xq_tests::tools::python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("py/check_pgn.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&all)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; {}",
                python.display(),
                xq_tests::tools::PYTHON_HINT
            )
        });
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_keeps_decisive_games_stores_only_those_and_says_so() {
    let db = TempDb::new("decisive");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let mut admin = admin(&server.url()).await;
    let weak: HashMap<String, i64> = [("chariot_value".to_owned(), 300)].into();
    let spec = pb::RunSpec {
        keep_games: pb::GameRetention::Decisive.into(),
        name: "decisive only".to_owned(),
        priority: 0,
        batch_pairs: 2,
        settings: Some(engine_settings(300)),
        kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
            dev_params: HashMap::new(),
            base_params: weak,
            pairs: 8,
            engines: None,
        })),
        workers: None,
    };
    let run = create(&mut admin, spec).await;
    let (stop, handle) = spawn_engine_worker(&server.url(), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(300)).await;
    let _ = stop.send(());
    handle.await.expect("worker task");
    let totals = end.totals.clone().expect("totals");
    assert_eq!(totals.pairs, 8);
    let stored: Vec<_> = stored_games(&db.0, run)
        .await
        .into_iter()
        .map(|g| g.game)
        .collect();
    assert_eq!(
        stored.len() as u64,
        totals.wins + totals.losses,
        "stored = decisive counted games ({totals:?})"
    );
    assert!(
        stored
            .iter()
            .all(|g| g.record.result != xq_engine::rules::GameResult::Draw)
    );
    let report = Command::new(binary("xq-coordinator"))
        .args(["report", &run.to_string(), "--coordinator", &server.url()])
        .args(["--token", WORKER_TOKEN])
        .output()
        .expect("run xq-coordinator report");
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains("games kept   decisive\n"), "{text}");
    let status = Command::new(binary("xq-coordinator"))
        .args(["status", "--coordinator", &server.url()])
        .args(["--token", WORKER_TOKEN])
        .output()
        .expect("run xq-coordinator status");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("keeps decisive games"), "{text}");
    server.stop().await;
}
