//! Training data end to end: `xq-coordinator datagen` creates a datagen run
//! on a served coordinator, a worker with the real engine plays it, and
//! `datagen-export` writes its positions as text and as Fairy-Stockfish
//! `.bin` records, from the server and from the database file; every
//! exported position's FEN, score and result is checked against the stored
//! games, replayed here with the test's own reading of the filters.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use xq_engine::Position;
use xq_engine::search::MATE_BOUND;
use xq_proto::GameRecord;
use xq_proto::game_record::ENGINE_FAILURES;
use xq_tests::binary;
use xq_tests::cluster::{
    ADMIN_TOKEN, TempDb, TestServer, WORKER_TOKEN, admin, fast_config, spawn_engine_worker,
    spawn_worker, status, wait_for_end,
};
use xq_tune::{Sample, SampleResult, psv};

/// The export's default filters, as DATAGEN.md states them.
const SKIP_PLIES: usize = 8;
const MAX_SCORE: i32 = 3000;

/// `(FEN, Red's score, Red's result)` of every position the default filters
/// keep, in game order, each position (pieces and side to move) once.
fn expected(stored: &[GameRecord]) -> Vec<(String, i32, SampleResult)> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for g in stored {
        if ENGINE_FAILURES.contains(&g.reason) {
            continue;
        }
        let result = SampleResult::from(g.result);
        let mut pos = Position::from_fen(&g.start_fen).expect("start FEN");
        for (ply, &mv) in g.moves.iter().enumerate() {
            let engine_ply = ply.checked_sub(g.opening_plies as usize);
            if let Some(stats) = engine_ply.and_then(|e| g.per_move.get(e)) {
                let cp = stats.score_cp;
                let keep = engine_ply.is_some_and(|e| e >= SKIP_PLIES)
                    && stats.depth > 0
                    && !pos.in_check()
                    && pos.piece_at(mv.to()).is_none()
                    && cp.abs() < MATE_BOUND
                    && cp.abs() <= MAX_SCORE;
                if keep && seen.insert(pos.hash()) {
                    let red = if pos.side_to_move() == xq_engine::Color::Red {
                        cp
                    } else {
                        -cp
                    };
                    out.push((pos.to_fen(), red, result));
                }
            }
            pos.make(mv);
        }
    }
    out
}

/// Every stored game of `run` in the database file `db`, in game order.
async fn stored_games(db: &Path, run: u64) -> Vec<GameRecord> {
    xq_tests::cluster::stored_games(db, run)
        .await
        .into_iter()
        .map(|g| g.game.record)
        .collect()
}

/// `datagen-export ARGS --out OUT`: its output, whatever its exit.
fn export_output(args: &[&str], out: &Path) -> std::process::Output {
    Command::new(binary("xq-coordinator"))
        .arg("datagen-export")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run xq-coordinator datagen-export")
}

/// `datagen-export ARGS --out OUT`, which must succeed: its stderr.
fn export(args: &[&str], out: &Path) -> String {
    let run = export_output(args, out);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    stderr
}

fn triple(s: &Sample) -> (String, i32, SampleResult) {
    (s.position.to_fen(), s.score, s.result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_datagen_run_exports_its_stored_positions_in_both_formats() {
    let db = TempDb::new("datagen");
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let url = server.url();
    let created = Command::new(binary("xq-coordinator"))
        .args(["datagen", "--coordinator", &url, "--token", ADMIN_TOKEN])
        .args([
            "--name",
            "datagen e2e",
            "--pairs",
            "4",
            "--batch-pairs",
            "2",
        ])
        .args([
            "--nodes",
            "400",
            "--hash",
            "1",
            "--random-plies",
            "6",
            "--seed",
            "36",
        ])
        .output()
        .expect("run xq-coordinator datagen");
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let run: u64 = String::from_utf8_lossy(&created.stdout)
        .trim()
        .parse()
        .expect("the run's id");
    let mut admin = admin(&url).await;
    let (stop, handle) = spawn_engine_worker(&url, 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(600)).await;
    let _ = stop.send(());
    handle.await.expect("worker task");
    let totals = end.totals.clone().expect("totals");
    assert_eq!(totals.pairs, 4);
    let progress = &status(&mut admin, run).await.variants;
    assert_eq!(progress.len(), 1, "one Red-view entry");
    let stats = progress[0].stats.clone().expect("Red's view");
    assert_eq!(stats.red_wins + stats.draws + stats.black_wins, 8);
    assert_eq!(progress[0].total_plies, totals.total_plies);

    let stored = stored_games(&db.0, run).await;
    assert_eq!(stored.len(), 8, "a datagen run keeps every game");
    let want = expected(&stored);
    assert!(want.len() > 20, "only {} positions kept", want.len());

    let dir = db.0.with_extension("export");
    std::fs::create_dir_all(&dir).unwrap();
    let (text, bin, bin_db) = (dir.join("d.txt"), dir.join("d.bin"), dir.join("db.bin"));
    let served = ["--coordinator", &url, "--token", WORKER_TOKEN];
    let run_arg = run.to_string();
    let said = export(
        &[
            &run_arg, "--format", "text", served[0], served[1], served[2], served[3],
        ],
        &text,
    );
    assert!(
        said.contains(&format!("{} positions written", want.len())),
        "{said}"
    );
    export(
        &[
            &run_arg, "--format", "bin", served[0], served[1], served[2], served[3],
        ],
        &bin,
    );
    let db_path = db.0.to_string_lossy().into_owned();
    export(&[&run_arg, "--format", "bin", "--db", &db_path], &bin_db);

    let lines: Vec<(String, i32, SampleResult)> = std::fs::read_to_string(&text)
        .unwrap()
        .lines()
        .map(|l| triple(&l.parse::<Sample>().expect("a sample line")))
        .collect();
    assert_eq!(lines, want, "text export against the stored games");
    let bytes = std::fs::read(&bin).unwrap();
    assert_eq!(bytes.len(), want.len() * psv::RECORD_LEN);
    let records: Vec<psv::Record> = psv::Records::new(&bytes[..])
        .map(|r| r.expect("a record"))
        .collect();
    let read: Vec<_> = records.iter().map(|r| triple(&r.sample)).collect();
    assert_eq!(read, want, ".bin export against the stored games");
    for r in &records {
        assert!(r.sample.position.is_legal(r.best), "{:?}", r.best);
    }
    let mut from_db = std::fs::read(&bin_db).unwrap();
    let mut from_server = bytes;
    for b in [&mut from_db, &mut from_server] {
        let mut recs: Vec<Vec<u8>> = b.chunks(psv::RECORD_LEN).map(<[u8]>::to_vec).collect();
        recs.sort();
        *b = recs.concat();
    }
    assert_eq!(
        from_db, from_server,
        "the database file gives the same records"
    );

    // A failed export leaves the file it was to replace as it was, and no
    // part of itself beside it.
    let before = std::fs::read(&text).unwrap();
    for args in [
        vec![
            "999", "--format", "text", served[0], served[1], served[2], served[3],
        ],
        vec!["999", "--format", "text", "--db", &db_path],
    ] {
        let failed = export_output(&args, &text);
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(!failed.status.success(), "{stderr}");
        assert!(stderr.contains("run 999"), "{stderr}");
        assert!(
            std::fs::read(&text).unwrap() == before,
            "{args:?} changed the file"
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["d.bin", "d.txt", "db.bin"]);
    server.stop().await;

    // The database file answers `report` and `status` (`--db`), with the
    // positions and their rate.
    let report: serde_json::Value = serde_json::from_str(&xq_tests::coordinator_cli([
        "report", &run_arg, "--json", "--db", &db_path,
    ]))
    .expect("report --json");
    assert_eq!(report["kind"], "datagen");
    assert_eq!(report["positions"], totals.total_plies);
    let rate = report["positions_per_second"].as_f64().expect("a rate");
    assert!(rate > 0.0, "{report}");
    let listed = xq_tests::coordinator_cli(["status", "--db", &db_path]);
    assert!(listed.contains("datagen e2e"), "{listed}");
    let detail = xq_tests::coordinator_cli(["status", &run_arg, "--db", &db_path]);
    assert!(
        detail.contains(&format!(
            "positions    {} (plies played), ",
            totals.total_plies
        )),
        "{detail}"
    );
}

/// A book's lines followed by random plies (`--book FILE --random-plies 3`):
/// every stored game opens with one of the book's lines and then exactly
/// three more plies, which differ from game to game; the coordinator, which
/// regenerates each result's openings before it counts them, counted all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_book_followed_by_random_plies_opens_every_game() {
    const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
    let db = TempDb::new("datagen-book");
    let dir = db.0.with_extension("files");
    std::fs::create_dir_all(&dir).unwrap();
    let book = dir.join("book.epd");
    std::fs::write(
        &book,
        format!("{START} moves h2e2 h9g7\n{START} moves b2e2 b9c7\n"),
    )
    .unwrap();
    let xq = |args: &[&str]| {
        let out = Command::new(binary("xq-coordinator"))
            .args(args)
            .output()
            .expect("run xq-coordinator");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let (db_path, book_path) = (db.0.to_str().unwrap(), book.to_str().unwrap());
    xq(&["asset", "add", book_path, "--db", db_path]);
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(60))).await;
    let url = server.url();
    let run: u64 = xq(&[
        "datagen",
        "--coordinator",
        &url,
        "--token",
        ADMIN_TOKEN,
        "--pairs",
        "4",
        "--batch-pairs",
        "2",
        "--nodes",
        "200",
        "--hash",
        "1",
        "--book",
        book_path,
        "--random-plies",
        "3",
        "--seed",
        "5",
    ])
    .parse()
    .expect("the run's id");
    let mut admin = admin(&url).await;
    let player = xq_worker::EnginePlayer::with_cache(2, dir.join("cache")).expect("threads");
    let (stop, handle) = spawn_worker(&url, std::sync::Arc::new(player), 2);
    let end = wait_for_end(&mut admin, run, Duration::from_secs(600)).await;
    let _ = stop.send(());
    handle.await.expect("worker task");
    assert_eq!(end.totals.expect("totals").pairs, 4);

    let stored = stored_games(&db.0, run).await;
    assert_eq!(stored.len(), 8);
    let lines = [["h2e2", "h9g7"], ["b2e2", "b9c7"]];
    let mut openings = HashSet::new();
    for game in &stored {
        assert_eq!(game.start_fen, START);
        assert_eq!(
            game.opening_plies, 5,
            "two book plies and three random ones"
        );
        let first: Vec<String> = game.moves[..2].iter().map(|m| m.to_string()).collect();
        assert!(lines.iter().any(|l| first == l), "{first:?}");
        openings.insert(game.moves[..5].to_vec());
    }
    assert!(openings.len() >= 6, "{} distinct openings", openings.len());
    server.stop().await;
}
