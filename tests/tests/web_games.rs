//! The web view's games pages and new-run form over HTTP: the games list
//! with `pgn`'s filters and its paging, the PGN download byte for byte equal
//! to `xq-coordinator pgn`, a game's page, the workers' failure counts from
//! stored games, and a run created from the form only with an admin token,
//! through the CLI's own argument parser.

use std::path::Path;
use std::time::Duration;

use xq_engine::rules::GameResult;
use xq_engine::{Move, START_FEN};
use xq_proto::{GameRecord, MoveStats, pb};
use xq_tests::cluster::{
    ADMIN_TOKEN, TempDb, TestServer, WORKER_TOKEN, admin, create, engine_settings, fast_config,
    games_spec, spawn_engine_worker, status, wait_for_end, worker_client,
};
use xq_tests::pgn_of_db;
use xq_tests::web;

/// `xq-coordinator pgn RUN` of the database at `db` with `extra` flags.
fn cli_pgn(db: &Path, run: u64, extra: &[&str]) -> String {
    let out = std::env::temp_dir().join(format!("xq-web-games-{}-{run}.pgn", std::process::id()));
    let text = pgn_of_db(db, run, &out, extra);
    let _ = std::fs::remove_file(&out);
    text
}

/// The `data-total` of a games list.
fn total(page: &str) -> u64 {
    let at = page.find("data-total=\"").expect("a total") + "data-total=\"".len();
    page[at..at + page[at..].find('"').unwrap()]
        .parse()
        .unwrap()
}

fn game(red_player: u8, moves: &str, result: GameResult, reason: &str) -> GameRecord {
    let moves: Vec<Move> = moves
        .split_whitespace()
        .map(|m| Move::parse_coords(m).unwrap())
        .collect();
    GameRecord {
        opening_index: 0,
        start_fen: START_FEN.to_owned(),
        per_move: vec![
            MoveStats {
                score_cp: 12,
                depth: 3,
                nodes: 100,
                time_ms: 5,
            };
            moves.len()
        ],
        moves,
        opening_plies: 0,
        result,
        reason: xq_engine::rules::Reason::from_token(reason).expect("an end reason"),
        red_player,
        stderr_tail: String::new(),
        overrun_ms: None,
    }
}

/// Registers a worker named `name` and submits one pair of its games to a
/// lease of run `run` (batch size 1): a time forfeit and a crash.
async fn submit_failures(url: &str, name: &str) {
    let mut rpc = worker_client(url, Some(WORKER_TOKEN));
    let worker_id = rpc
        .register(pb::RegisterRequest {
            name: name.to_owned(),
            threads: 1,
            version: "0.1.0".to_owned(),
            bench_signature: 0,
            bench_nps: 654_321,
            machine: None,
            tools: Vec::new(),
            target: String::new(),
            updated_from: String::new(),
            machine_id: String::new(),
        })
        .await
        .expect("register")
        .into_inner()
        .worker_id;
    let lease = rpc
        .request_work(pb::RequestWorkRequest { worker_id })
        .await
        .expect("request work")
        .into_inner()
        .lease
        .expect("a lease");
    // Black (base) loses on time after Red's first move; then Red (base)
    // crashes at its second move.
    let games = vec![
        game(0, "h2e2", GameResult::Red, "time-forfeit"),
        game(1, "h2e2 h9g7", GameResult::Black, "resignation"),
    ];
    let totals = xq_proto::Totals::of_games(&games);
    let answer = rpc
        .submit_result(pb::SubmitResultRequest {
            worker_id,
            lease_id: lease.lease_id,
            results: Some(pb::GameResults {
                totals: Some(totals.into()),
                games: games.into_iter().map(Into::into).collect(),
                ..Default::default()
            }),
        })
        .await
        .expect("submit")
        .into_inner();
    assert_eq!(answer.status(), pb::SubmitStatus::Accepted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_pages_filter_page_and_download_what_pgn_writes() {
    let db = TempDb::new("web-games");
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let url = server.url();
    let base = server.web_url();
    let mut grpc = admin(&url).await;
    let run = create(
        &mut grpc,
        pb::RunSpec {
            name: "games".to_owned(),
            workers: None,
            priority: 0,
            batch_pairs: 4,
            settings: Some(pb::MatchSettings {
                seed: 3,
                ..engine_settings(150)
            }),
            kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
                dev_params: [("chariot_value".to_owned(), 500)].into(),
                base_params: Default::default(),
                pairs: 28,
                engines: None,
            })),
            keep_games: Default::default(),
        },
    )
    .await;
    let (stop, worker) = spawn_engine_worker(&url, 2);
    let end = wait_for_end(&mut grpc, run, Duration::from_secs(300)).await;
    let _ = stop.send(());
    worker.await.unwrap();
    let totals = end.totals.expect("totals");
    assert_eq!(totals.pairs, 28);

    // The list: every game, paged by 50, and the filters of `pgn`.
    let list = web::get(&format!("{base}/runs/{run}/games")).await;
    assert_eq!(list.status.as_u16(), 200, "{}", list.body);
    assert_eq!(total(&list.body), 56);
    assert_eq!(list.body.matches("<tr data-game=").count(), 50);
    assert!(list.body.contains("id=\"next-page\""));
    let second = web::get(&format!("{base}/runs/{run}/games?page=2"))
        .await
        .body;
    assert_eq!(second.matches("<tr data-game=").count(), 6);
    assert!(second.contains("id=\"prev-page\"") && !second.contains("id=\"next-page\""));
    let lost = web::get(&format!("{base}/runs/{run}/games?filter=lost"))
        .await
        .body;
    assert_eq!(total(&lost), totals.losses);
    for (reason, n) in &totals.reasons {
        let page = web::get(&format!("{base}/runs/{run}/games?filter=reason%3D{reason}"))
            .await
            .body;
        assert_eq!(total(&page), *n, "reason {reason}");
    }
    for bad in [
        "filter=won",
        "filter=reason%3Dbogus",
        "page=0",
        "colour=red",
    ] {
        let answer = web::get(&format!("{base}/runs/{run}/games?{bad}")).await;
        assert_eq!(answer.status.as_u16(), 400, "{bad}: {}", answer.body);
    }
    let answer = web::get(&format!("{base}/runs/999/games")).await;
    assert_eq!(answer.status.as_u16(), 404);

    // The download is `pgn`'s output, filtered the same way.
    for (query, flags) in [
        ("", &[][..]),
        ("?filter=lost", &["--filter", "lost"][..]),
        (
            "?filter=lost&notation=chinese",
            &["--filter", "lost", "--notation", "chinese"][..],
        ),
    ] {
        let answer = web::get(&format!("{base}/runs/{run}/games.pgn{query}")).await;
        assert_eq!(answer.status.as_u16(), 200, "{query}: {}", answer.body);
        assert!(
            answer.headers["content-disposition"]
                .to_str()
                .unwrap()
                .contains("attachment")
        );
        assert_eq!(answer.body, cli_pgn(&db.0, run, flags), "games.pgn{query}");
    }

    // A game's page: every ply in the move table, the end reason, the FEN.
    let at = list.body.find("<tr data-game=\"").expect("a game row") + 15;
    let game = &list.body[at..at + list.body[at..].find('"').unwrap()];
    let href = format!("/runs/{run}/games/{game}");
    let page = web::get(&format!("{base}{href}")).await;
    assert_eq!(page.status.as_u16(), 200, "{href}: {}", page.body);
    let at = page
        .body
        .find("id=\"start-fen\">")
        .expect("the opening FEN")
        + 15;
    // minijinja escapes '/' in HTML.
    let fen = page.body[at..at + page.body[at..].find('<').unwrap()].replace("&#x2f;", "/");
    xq_engine::Position::from_fen(&fen).unwrap_or_else(|e| panic!("opening FEN {fen:?}: {e}"));
    assert!(page.body.contains("id=\"game-data\""));
    let plies: usize = {
        let at = page.body.find("data-plies=\"").unwrap() + "data-plies=\"".len();
        page.body[at..at + page.body[at..].find('"').unwrap()]
            .parse()
            .unwrap()
    };
    assert!(plies > 0);
    assert_eq!(page.body.matches("<tr data-ply=").count(), plies);
    let missing = web::get(&format!("{base}/runs/{run}/games/999/0")).await;
    assert_eq!(missing.status.as_u16(), 404);

    // Failures per worker come from the stored games.
    // One opening, the start position with no moves, so that the hand-made
    // games below follow the lease's opening.
    let mut spec = games_spec(1, 1);
    spec.settings.as_mut().expect("settings").openings = Some(
        xq_proto::OpeningSource::from_file_text(&format!("{START_FEN}\n"))
            .expect("an opening file")
            .into(),
    );
    let failing = create(&mut grpc, spec).await;
    submit_failures(&url, "flaky").await;
    assert_eq!(
        status(&mut grpc, failing).await.state(),
        pb::RunState::Finished
    );
    let workers = web::get(&format!("{base}/workers")).await.body;
    let row = &workers[workers.find(">flaky<").expect("flaky listed")..];
    let row = &row[..row.find("</tr>").unwrap()];
    for (kind, n) in [("time-forfeit", 1), ("crash", 1), ("illegal-move", 0)] {
        assert!(
            row.contains(&format!("data-failures=\"{kind}\">{n}<")),
            "{kind}: {row}"
        );
    }
    assert!(
        row.contains("data-nps=\"654321\">654 knps<"),
        "bench speed: {row}"
    );
    // The run page's health table counts the same failures from the results.
    let page = web::get(&format!("{base}/runs/{failing}")).await.body;
    let health = &page[page.find("data-health-worker=").expect("a health row")..];
    let health = &health[..health.find("</tr>").unwrap()];
    assert!(health.contains("flaky"), "{health}");
    assert!(
        health.contains("<td>—</td><td>1</td><td>1</td>\n"),
        "one time loss, one crash: {health}"
    );
    let crashes = web::get(&format!("{base}/runs/{failing}/games?filter=crash"))
        .await
        .body;
    assert_eq!(total(&crashes), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_admin_creates_a_run_from_the_form_and_refusals_are_shown() {
    let db = TempDb::new("web-new-run");
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let base = server.web_url();
    let mut grpc = admin(&server.url()).await;
    let runs = |grpc: &mut xq_tests::cluster::AdminClient| {
        let mut grpc = grpc.clone();
        async move {
            grpc.list_runs(pb::ListRunsRequest {})
                .await
                .unwrap()
                .into_inner()
                .runs
        }
    };
    let form = web::get(&format!("{base}/runs/new")).await;
    assert_eq!(form.status.as_u16(), 200);
    assert!(form.body.contains("name=\"elo0\"") && form.body.contains("name=\"pairs\""));

    let fields = "kind=sprt&name=chariot+950&nodes=500&elo0=-1&elo1=4\
                  &dev=chariot_value+%3D+950%0A&dev-option=&max-games=200";
    let url = format!("{base}/runs/new");
    let bearer = |token: &str| format!("Bearer {token}");
    for (token, code) in [
        (None, 401),
        (Some(bearer("xqt_wrong")), 401),
        (Some(bearer(WORKER_TOKEN)), 403),
    ] {
        let headers: Vec<(&str, &str)> = token
            .iter()
            .map(|t| ("authorization", t.as_str()))
            .collect();
        let answer = web::post_form(&url, &headers, fields).await;
        assert_eq!(answer.status.as_u16(), code, "{token:?}: {}", answer.body);
        assert!(answer.body.contains("id=\"refusal\""), "{}", answer.body);
    }
    assert!(
        runs(&mut grpc).await.is_empty(),
        "a refused form created a run"
    );

    let admin_header = bearer(ADMIN_TOKEN);
    let admin_header = [("authorization", admin_header.as_str())];
    for (bad, needle) in [
        ("kind=games&nodes=500", "--pairs"),
        ("kind=games&nodes=500&pairs=4&elo0=1", "unknown field"),
        ("kind=sprt&nodes=500&depth=3", "cannot be used with"),
        (
            "kind=sprt&nodes=500&dev=chariot_value+%3D+%22x%22",
            "not an integer",
        ),
        (
            "kind=sprt&nodes=500&openings=%2Fetc%2Fpasswd",
            "reads no files on the server",
        ),
        ("kind=sprt&nodes=500&rules=nonsense", "nonsense"),
    ] {
        let answer = web::post_form(&url, &admin_header, bad).await;
        assert_eq!(answer.status.as_u16(), 400, "{bad}: {}", answer.body);
        assert!(
            answer.body.contains("id=\"refusal\"") && answer.body.contains(needle),
            "{bad}: {}",
            answer.body
        );
        assert!(!answer.body.contains(ADMIN_TOKEN), "the token is echoed");
        assert!(
            answer.body.contains("name=\"nodes\" value=\"500\""),
            "the form is not filled in again: {}",
            answer.body
        );
    }
    assert!(runs(&mut grpc).await.is_empty(), "a bad form created a run");

    let created = web::post_form(&url, &admin_header, fields).await;
    assert_eq!(created.status.as_u16(), 303, "{}", created.body);
    let listed = runs(&mut grpc).await;
    assert_eq!(listed.len(), 1);
    let id = listed[0].run_id;
    assert_eq!(created.headers["location"], format!("/runs/{id}").as_str());
    let spec = status(&mut grpc, id).await.spec.expect("spec");
    assert_eq!(spec.name, "chariot 950");
    let Some(pb::run_spec::Kind::Sprt(sprt)) = spec.kind else {
        panic!("an sprt: {spec:?}")
    };
    assert_eq!(sprt.dev_params["chariot_value"], 950);
    assert_eq!((sprt.elo0, sprt.elo1, sprt.max_games), (-1.0, 4.0, 200));

    let games = web::post_form(
        &url,
        &[("authorization", &format!("Bearer {ADMIN_TOKEN}"))],
        "kind=games&pairs=3&depth=2&rules=standard",
    )
    .await;
    assert_eq!(games.status.as_u16(), 303, "{}", games.body);
    assert_eq!(runs(&mut grpc).await.len(), 2);
    server.stop().await;
}
