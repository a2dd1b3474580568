//! The web view end to end: HTTP status codes and the bearer token on a real
//! server, and a headless Chromium that renders every page of a coordinator
//! holding a finished SPRT, SPSA and variants run and an active run, checks
//! the numbers against `report --json`, the graphs' point counts, and that the
//! pages run without JavaScript errors. Screenshots for coordinator/WEB.md are written
//! to `coordinator/docs/` when `XQ_SCREENSHOTS=1`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use xq_engine::Position;
use xq_proto::pb;
use xq_tests::binary;
use xq_tests::browser::Browser;
use xq_tests::cluster::{
    ADMIN_TOKEN, SimulatedPlayer, TempDb, TestServer, WORKER_TOKEN, admin, create, fast_config,
    finished_sprt_and_spsa, games_spec, spawn_engine_worker, spawn_worker, status, variants_spec,
    wait_for_end, wait_for_pairs,
};
use xq_tests::web::{self, chart_points, data_value, data_values};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_answer_with_the_right_status_and_only_admins_may_stop_or_create() {
    let db = TempDb::new("web-http");
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let mut grpc = admin(&server.url()).await;
    let run = create(&mut grpc, games_spec(1000, 4)).await;
    let base = server.web_url();

    for (path, code) in [
        ("/", 200),
        ("/?kind=games&state=active", 200),
        (&format!("/runs/{run}") as &str, 200),
        (&format!("/runs/{run}/live"), 200),
        ("/workers", 200),
        ("/engines", 200),
        ("/metrics", 200),
        ("/static/live.js", 200),
        ("/runs/999", 404),
        ("/runs/abc", 400),
        ("/?kind=bogus", 400),
        ("/no/such/page", 404),
    ] {
        let answer = web::get(&format!("{base}{path}")).await;
        assert_eq!(answer.status.as_u16(), code, "GET {path}: {}", answer.body);
    }
    // A browser gets refusals as pages of the site, with its navigation;
    // scripts keep the plain text.
    let browser = [("accept", "text/html,application/xhtml+xml,*/*;q=0.8")];
    for path in ["/no/such/page", "/runs/999"] {
        let page = web::request(http::Method::GET, &format!("{base}{path}"), &browser, "").await;
        assert_eq!(page.status.as_u16(), 404, "{path}");
        assert!(
            page.body.contains("<nav>")
                && page.body.contains("404 Not Found")
                && page.body.contains("id=\"error-message\""),
            "{path}: {}",
            page.body
        );
        let plain = web::get(&format!("{base}{path}")).await;
        assert!(plain.body.starts_with("404 Not Found: "), "{}", plain.body);
    }
    let not_found =
        web::request(http::Method::GET, &format!("{base}/runs/999"), &browser, "").await;
    assert!(not_found.body.contains("no run 999"), "{}", not_found.body);
    let long = web::get(&format!("{base}/?kind={}", "k".repeat(6000))).await;
    assert_eq!(long.status.as_u16(), 400);
    assert!(
        long.body.contains("(6000 bytes)") && !long.body.contains(&"k".repeat(100)),
        "a refused filter is quoted short: {} bytes",
        long.body.len()
    );
    let list = web::get(&format!("{base}/?state=finished")).await.body;
    assert!(
        !list.contains(&format!("data-run=\"{run}\"")),
        "filter kept an active run"
    );
    let list = web::get(&format!("{base}/?kind=games")).await.body;
    assert!(list.contains(&format!("data-run=\"{run}\"")));

    let live = web::get(&format!("{base}/runs/{run}/live")).await;
    let etag = live.headers["etag"].to_str().unwrap().to_owned();
    let again = web::request(
        http::Method::GET,
        &format!("{base}/runs/{run}/live"),
        &[("if-none-match", &etag)],
        "",
    )
    .await;
    assert_eq!(again.status.as_u16(), 304);

    let stop = format!("{base}/runs/{run}/stop");
    let refused = [
        web::post_form(&stop, &[], "").await,
        web::post_form(&stop, &[], "token=xqt_wrong").await,
        web::post_form(&stop, &[("authorization", "Bearer xqt_wrong")], "").await,
        web::request(http::Method::POST, &stop, &[], "").await,
    ];
    for answer in &refused {
        assert_eq!(answer.status.as_u16(), 401, "{}", answer.body);
    }
    let worker = web::post_form(
        &stop,
        &[("authorization", &format!("Bearer {WORKER_TOKEN}"))],
        "",
    )
    .await;
    assert_eq!(worker.status.as_u16(), 403, "{}", worker.body);
    let forbidden = web::post_form(
        &stop,
        &[
            ("authorization", &format!("Bearer {WORKER_TOKEN}")),
            browser[0],
        ],
        "",
    )
    .await;
    assert_eq!(forbidden.status.as_u16(), 403);
    assert!(
        forbidden.body.contains("<nav>") && forbidden.body.contains("403 Forbidden"),
        "{}",
        forbidden.body
    );
    assert_eq!(status(&mut grpc, run).await.state(), pb::RunState::Active);
    let clone = web::post_form(&format!("{base}/runs/{run}/clone"), &[], "").await;
    assert_eq!(clone.status.as_u16(), 401);
    assert_eq!(
        grpc.list_runs(pb::ListRunsRequest {})
            .await
            .unwrap()
            .into_inner()
            .runs
            .len(),
        1
    );

    let stopped = web::post_form(
        &stop,
        &[("authorization", &format!("Bearer {ADMIN_TOKEN}"))],
        "",
    )
    .await;
    assert_eq!(stopped.status.as_u16(), 303, "{}", stopped.body);
    assert_eq!(stopped.headers["location"], format!("/runs/{run}").as_str());
    assert_eq!(status(&mut grpc, run).await.state(), pb::RunState::Stopped);
    let cloned = web::post_form(
        &format!("{base}/runs/{run}/clone"),
        &[("authorization", &format!("Bearer {ADMIN_TOKEN}"))],
        "",
    )
    .await;
    assert_eq!(cloned.status.as_u16(), 303, "{}", cloned.body);
    let runs = grpc
        .list_runs(pb::ListRunsRequest {})
        .await
        .unwrap()
        .into_inner()
        .runs;
    assert_eq!(runs.len(), 2);
    assert_eq!(
        cloned.headers["location"],
        format!("/runs/{}", runs[0].run_id).as_str()
    );

    let metrics = web::get(&format!("{base}/metrics")).await.body;
    for needle in [
        "xq_requests_total{protocol=\"grpc\",method=\"CreateRun\",status=\"0\"}",
        "xq_requests_total{protocol=\"http\",method=\"POST /runs/{id}/stop\",status=\"401\"} 4",
        "xq_request_duration_seconds_bucket{",
        "xq_store_queue_depth",
        "xq_store_batch_seconds_count",
        "xq_leases_in_flight 0",
        "xq_results_counted 0",
        "xq_runs_active 1",
    ] {
        assert!(metrics.contains(needle), "{needle} missing from\n{metrics}");
    }
    server.stop().await;
}

/// `report RUN --json` of the CLI against the server.
async fn report_json(url: &str, run: u64) -> Value {
    let url = url.to_owned();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(binary("xq-coordinator"))
            .args(["report", &run.to_string(), "--json", "--coordinator", &url])
            .args(["--token", ADMIN_TOKEN])
            .output()
            .expect("run xq-coordinator report")
    })
    .await
    .expect("report task");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("report json")
}

fn screenshots() -> Option<PathBuf> {
    std::env::var_os("XQ_SCREENSHOTS").map(|_| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace")
            .join("coordinator/docs")
    })
}

/// The occupied squares of `pos` (ICCS names) and how many pieces are Red's.
fn occupied(pos: &Position) -> (Vec<String>, usize) {
    let mut squares = Vec::new();
    let mut red = 0;
    for i in 0..90u8 {
        let sq = xq_engine::Square::from_index(i).expect("a square");
        if let Some(p) = pos.piece_at(sq) {
            squares.push(sq.to_string());
            red += usize::from(p.color() == xq_engine::Color::Red);
        }
    }
    squares.sort();
    (squares, red)
}

/// Opens the page of a stored game of `run` with at least 14 plies, steps
/// through it with the arrow keys and the buttons, and checks after each
/// step the board's pieces, the ply, the FEN and the score against the
/// stored game replayed here. Returns the game's path.
fn replay_a_game(db: &std::path::Path, run: u64, base: &str, profile: &std::path::Path) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let stored = rt.block_on(xq_tests::cluster::stored_games(db, run));
    let exported = stored
        .iter()
        .find(|g| g.game.record.moves.len() >= 14)
        .expect("a game of 14 plies");
    let (g, r) = (&exported.game, &exported.game.record);
    let rules = exported.rules;
    let mut pos = Position::from_fen(&r.start_fen).unwrap();
    pos.set_conversion(rules.conversion);
    let mut positions = vec![pos.clone()];
    for &mv in &r.moves {
        pos.make(mv);
        positions.push(pos.clone());
    }
    let path = format!("/runs/{run}/games/{}/{}", g.lease_id, g.game_index);
    let mut browser = Browser::start(profile, (1400, 1000));
    browser.open(&format!("{base}{path}"));
    assert_eq!(
        browser.eval("document.getElementById('replay').dataset.js"),
        "ready"
    );
    let check = |browser: &mut Browser, ply: usize| {
        let shown = browser.eval("Number(document.getElementById('replay').dataset.ply)");
        assert_eq!(shown.as_u64(), Some(ply as u64), "ply");
        let squares = browser.eval(
            "[...document.querySelectorAll('#pieces .piece')].map(p => p.dataset.square).sort()",
        );
        let red = browser.eval("document.querySelectorAll('#pieces .piece.red').length");
        let (expected, expected_red) = occupied(&positions[ply]);
        assert_eq!(
            squares,
            serde_json::json!(expected),
            "the board at ply {ply}"
        );
        assert_eq!(
            red.as_u64(),
            Some(expected_red as u64),
            "Red's pieces at ply {ply}"
        );
        let fen = browser.eval("document.getElementById('info-fen').textContent");
        let board = |f: &str| f.split(' ').next().unwrap_or("").to_owned();
        assert_eq!(
            board(fen.as_str().unwrap()),
            board(&positions[ply].to_fen()),
            "FEN at ply {ply}"
        );
        let score = browser.eval("document.getElementById('info-score').textContent");
        let expected_score = match ply.checked_sub(1 + r.opening_plies as usize) {
            None if ply == 0 => "—".to_owned(),
            None => "book".to_owned(),
            Some(k) => xq_games::pgn::score_text(r.per_move[k].score_cp),
        };
        assert_eq!(
            score.as_str(),
            Some(expected_score.as_str()),
            "score at ply {ply}"
        );
    };
    check(&mut browser, 0);
    let mut ply = 0;
    for _ in 0..r.opening_plies + 3 {
        browser.key("ArrowRight", 39);
        ply += 1;
        check(&mut browser, ply);
    }
    for _ in 0..3 {
        browser.click("#next");
        ply += 1;
        check(&mut browser, ply);
    }
    browser.key("ArrowLeft", 37);
    ply -= 1;
    check(&mut browser, ply);
    browser.click("#prev");
    ply -= 1;
    check(&mut browser, ply);
    browser.key("End", 35);
    check(&mut browser, r.moves.len());
    browser.click("#moves tbody tr[data-ply='5']");
    check(&mut browser, 5);
    browser.click("#first");
    check(&mut browser, 0);
    assert!(
        browser.errors.is_empty(),
        "JavaScript errors: {:?}",
        browser.errors
    );
    path
}

fn assert_same(dom: &str, key: &str, report: &Value, field: &str) {
    let shown = data_value(dom, key).unwrap_or_else(|| panic!("no {key} on the page"));
    let reported = report[field]
        .as_f64()
        .unwrap_or_else(|| panic!("no {field} in {report}"));
    assert_eq!(
        shown, reported,
        "{key}: page {shown}, report --json {reported}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_renders_every_page_with_the_numbers_of_report_json() {
    let chromium_profile = TempDb::new("web-chromium");
    let _ = std::fs::create_dir_all(&chromium_profile.0);
    web::chromium();
    let db = TempDb::new("web-browser");
    let server =
        TestServer::start_with_web("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30)))
            .await;
    let url = server.url();
    let base = server.web_url();
    let mut grpc = admin(&url).await;

    let (sprt, _, spsa) = finished_sprt_and_spsa(&url, &mut grpc).await;
    let strong: Arc<SimulatedPlayer> = Arc::new(SimulatedPlayer::first_player_stronger(60.0));

    let variants = create(&mut grpc, variants_spec(&["standard", "conversion"], 3, 1)).await;
    let (stop, worker) = spawn_engine_worker(&url, 2);
    wait_for_end(&mut grpc, variants, Duration::from_secs(300)).await;
    let _ = stop.send(());
    worker.await.unwrap();

    let (stop, worker) = spawn_worker(&url, strong, 1);
    let active = create(&mut grpc, games_spec(100_000, 4)).await;
    wait_for_pairs(&mut grpc, active, 8).await;
    let _ = stop.send(());
    worker.await.unwrap();
    assert_eq!(
        status(&mut grpc, active).await.state(),
        pb::RunState::Active
    );

    let profile = chromium_profile.0.clone();
    let render = |path: String| {
        let profile = profile.clone();
        let url = format!("{base}{path}");
        tokio::task::spawn_blocking(move || web::render(&url, &profile, Duration::from_secs(5)))
    };

    // The runs list: every run, with the report's numbers.
    let list = render("/".into()).await.unwrap();
    assert!(list.js_errors.is_empty(), "{:?}", list.js_errors);
    for id in [sprt, spsa, variants, active] {
        assert!(
            list.dom.contains(&format!("data-run=\"{id}\"")),
            "run {id} not listed"
        );
    }
    assert!(list.dom.contains("id=\"runs-active\""));

    // SPRT: numbers equal report --json; LLR and Elo graphs with one point
    // per counted result (LLR from the origin).
    let report = report_json(&url, sprt).await;
    let page = render(format!("/runs/{sprt}")).await.unwrap();
    assert!(page.js_errors.is_empty(), "{:?}", page.js_errors);
    assert!(
        page.dom.contains("data-js=\"ready\""),
        "live script did not start"
    );
    for (key, field) in [
        ("elo", "elo"),
        ("elo95", "elo95"),
        ("los", "los"),
        ("llr", "llr"),
        ("lower_bound", "lower_bound"),
        ("upper_bound", "upper_bound"),
    ] {
        assert_same(&page.dom, key, &report, field);
    }
    let games = report["games"].as_u64().unwrap();
    let results = games / 16; // 8 pairs per lease, all counted
    assert!(data_value(&page.dom, "nelo").is_some());
    let llr = chart_points(&page.dom, "llr");
    assert!(
        llr.contains(&(results as usize + 1)),
        "LLR points {llr:?}, {results} results"
    );
    let elo = chart_points(&page.dom, "elo");
    let full = elo.iter().filter(|&&n| n == results as usize).count();
    assert_eq!(
        full, 3,
        "Elo and its interval: points {elo:?}, {results} results"
    );
    let penta: Vec<String> = report["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert!(
        page.dom.contains(&penta.join(", ")),
        "pentanomial {penta:?}"
    );
    assert!(
        page.dom.contains("class=\"players\""),
        "no dev/base spec table"
    );

    // SPSA: θ equal to the report, one θ graph per parameter plus the % one,
    // one point per applied result (40 pairs in leases of 4) plus the start.
    let report = report_json(&url, spsa).await;
    let page = render(format!("/runs/{spsa}")).await.unwrap();
    assert!(page.js_errors.is_empty(), "{:?}", page.js_errors);
    for name in ["chariot_value", "horse_value"] {
        assert_same(&page.dom, &format!("theta.{name}"), &report["theta"], name);
        assert!(chart_points(&page.dom, &format!("theta-{name}")).contains(&11));
    }
    let pct = chart_points(&page.dom, "theta-pct");
    assert_eq!(
        pct.iter().filter(|&&n| n == 11).count(),
        2,
        "θ % points {pct:?}"
    );
    assert!(
        page.dom.contains("chariot_value, int, "),
        "no paste-back line"
    );
    assert!(
        page.dom.contains("class=\"chart hidden\""),
        "θ toggle did not hide a chart"
    );

    // Variants: the report's rates, comparisons and conversions.
    let report = report_json(&url, variants).await;
    let page = render(format!("/runs/{variants}")).await.unwrap();
    assert!(page.js_errors.is_empty(), "{:?}", page.js_errors);
    let shown = data_values(&page.dom);
    for (i, v) in report["variants"].as_array().unwrap().iter().enumerate() {
        for field in ["red_win", "draw", "black_win", "decisive"] {
            let rate = v[field]["rate"].as_f64().unwrap();
            assert!(
                shown.contains(&rate),
                "variant {i} {field} {rate} not shown"
            );
        }
    }
    let p = report["comparisons"][0]["g_test"]["p_value"]
        .as_f64()
        .unwrap();
    assert!(shown.contains(&p), "G-test p {p} not shown");
    assert!(
        page.dom
            .contains("Capture conversion in standard+conversion")
    );
    assert!(
        page.dom.contains("id=\"games-link\""),
        "no link to the games"
    );
    assert!(page.dom.contains("id=\"chart-variants\""));

    // The active run polls its live part.
    let page = render(format!("/runs/{active}")).await.unwrap();
    assert!(page.js_errors.is_empty(), "{:?}", page.js_errors);
    assert!(page.dom.contains("data-state=\"active\""));
    assert!(
        page.dom.contains("to manage this run"),
        "no sign-in prompt for managing"
    );

    // The variants run's games (played by the real engine): the list, and a
    // game replayed on the board with real key presses and clicks.
    let games = render(format!("/runs/{variants}/games")).await.unwrap();
    assert!(games.js_errors.is_empty(), "{:?}", games.js_errors);
    assert!(games.dom.contains("data-total=\"12\""), "12 stored games");
    assert_eq!(games.dom.matches("<tr data-game=").count(), 12);
    let (db_path, replay_base, replay_profile) = (db.0.clone(), base.clone(), profile.clone());
    let game_path = tokio::task::spawn_blocking(move || {
        replay_a_game(&db_path, variants, &replay_base, &replay_profile)
    })
    .await
    .unwrap();

    for path in ["/workers", "/engines", "/runs/new"] {
        let page = render(path.into()).await.unwrap();
        assert!(page.js_errors.is_empty(), "{path}: {:?}", page.js_errors);
    }
    let workers = render("/workers".into()).await.unwrap();
    assert!(workers.dom.contains("data-worker="), "no worker listed");

    if let Some(dir) = screenshots() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, path, size) in [
            ("web-runs.png", "/".to_owned(), (1280, 700)),
            ("web-sprt.png", format!("/runs/{sprt}"), (1400, 1500)),
            ("web-spsa.png", format!("/runs/{spsa}"), (1400, 1500)),
            (
                "web-variants.png",
                format!("/runs/{variants}"),
                (1400, 1700),
            ),
            (
                "web-games.png",
                format!("/runs/{variants}/games"),
                (1400, 800),
            ),
            ("web-game.png", format!("{game_path}#ply=12"), (1400, 1000)),
        ] {
            let (url, profile, png) = (format!("{base}{path}"), profile.clone(), dir.join(name));
            tokio::task::spawn_blocking(move || web::screenshot(&url, &profile, &png, size))
                .await
                .unwrap();
        }
    }
    server.stop().await;
}
