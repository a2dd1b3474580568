//! How long the web view takes to render a run page with a long history.
//!
//! ```sh
//! cargo bench -p xq-tests --bench web_render
//! XQ_RENDER_GAMES=100000 XQ_RENDER_PAIRS_PER_RESULT=1 cargo bench -p xq-tests --bench web_render
//! ```
//!
//! Makes an SPRT run whose history holds `XQ_RENDER_GAMES` games (100 000 by
//! default) counted in results of `XQ_RENDER_PAIRS_PER_RESULT` pairs (1 by
//! default: the longest history those games can have), written straight into
//! the database, then serves the web view in this process and times
//! `GET /runs/ID` (every request renders: the page is never cached) and one
//! uncached `GET /runs/ID/live`, each request on a fresh connection.

use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use rusqlite::params;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use xq_coordinator::http::Http;
use xq_coordinator::server;
use xq_coordinator::service::Store;
use xq_tests::cluster::{ADMIN_TOKEN, TempDb, admin, create, fast_config, sprt_spec};
use xq_web::WebView;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let games: u64 = env("XQ_RENDER_GAMES", 100_000);
    let per_result: u64 = env("XQ_RENDER_PAIRS_PER_RESULT", 1).max(1);
    let requests: usize = env("XQ_RENDER_REQUESTS", 20);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run(games, per_result, requests))
}

/// Writes `results` history rows of `per_result` pairs each for run `id`,
/// with a dev player about 20 Elo stronger, and the run's final totals.
fn fill(db: &std::path::Path, id: u64, results: u64, per_result: u64) -> anyhow::Result<()> {
    let mut conn = rusqlite::Connection::open(db)?;
    // The made-up sprt_history rows have no leases behind them.
    conn.pragma_update(None, "foreign_keys", false)?;
    let tx = conn.savepoint()?;
    let mut penta = [0u64; 5];
    let (mut w, mut d, mut l) = (0u64, 0u64, 0u64);
    let mut llr = 0.0f64;
    {
        let mut totals = tx.prepare(
            "INSERT INTO run_history (run_id, pairs, penta_ll, penta_ld, penta_dd, penta_dw,
                                      penta_ww, wins, draws, losses, unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut lease = tx.prepare(
            "INSERT INTO sprt_history (lease_id, run_id, pairs, llr, unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for r in 1..=results {
            for p in 0..per_result {
                // A fixed cycle with a small edge for the first player.
                let slot = [2, 3, 2, 1, 2, 3, 4, 2, 0, 3][((r * per_result + p) % 10) as usize];
                penta[slot] += 1;
                match slot {
                    0 => l += 2,
                    1 => {
                        l += 1;
                        d += 1
                    }
                    2 => d += 2,
                    3 => {
                        w += 1;
                        d += 1
                    }
                    _ => w += 2,
                }
            }
            llr += 0.0004;
            let pairs = r * per_result;
            let c = penta.map(|v| v as i64);
            totals.execute(params![
                id as i64,
                pairs as i64,
                c[0],
                c[1],
                c[2],
                c[3],
                c[4],
                w as i64,
                d as i64,
                l as i64,
                r as i64
            ])?;
            lease.execute(params![-(r as i64), id as i64, pairs as i64, llr, r as i64])?;
        }
    }
    let c = penta.map(|v| v as i64);
    tx.execute(
        "UPDATE runs SET pairs = ?2, pairs_issued = ?2, penta_ll = ?3, penta_ld = ?4,
             penta_dd = ?5, penta_dw = ?6, penta_ww = ?7, wins = ?8, draws = ?9, losses = ?10,
             progress = json_object('llr', ?11, 'state', 'continue')
         WHERE id = ?1",
        params![
            id as i64,
            (results * per_result) as i64,
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            w as i64,
            d as i64,
            l as i64,
            llr
        ],
    )?;
    tx.commit()?;
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn run(games: u64, per_result: u64, requests: usize) -> anyhow::Result<()> {
    let db = TempDb::new("web-render");
    let grpc = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", grpc.local_addr()?);
    let http = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", http.local_addr()?);
    let store = Store::open(&db.0)?;
    let (stop, stopped) = oneshot::channel::<()>();
    let config = fast_config(Duration::from_secs(60));
    let server = tokio::spawn(server::run_with_web(
        grpc,
        Some(Http::new(http, WebView)),
        store,
        config,
        async {
            let _ = stopped.await;
        },
    ));
    let mut client = admin(&url).await;
    let run = create(&mut client, sprt_spec(-100.0, 100.0, 0)).await;
    let results = games / 2 / per_result;
    let path = db.0.clone();
    tokio::task::spawn_blocking(move || fill(&path, run, results, per_result))
        .await
        .context("fill task")??;

    let page = format!("{base}/runs/{run}");
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..requests {
        let started = Instant::now();
        let answer = xq_tests::web::get(&page).await;
        times.push(started.elapsed());
        ensure!(
            answer.status == 200,
            "GET {page}: {} {}",
            answer.status,
            answer.body
        );
        bytes = answer.body.len();
    }
    let started = Instant::now();
    let live = xq_tests::web::get(&format!("{page}/live")).await;
    let live_time = started.elapsed();
    ensure!(live.status == 200, "live: {}", live.status);
    times.sort();
    println!(
        "web render: run {run} with {} games in {results} results of {per_result} pair(s); \
         page {bytes} bytes (token {})",
        2 * results * per_result,
        &ADMIN_TOKEN[..4]
    );
    println!(
        "  GET /runs/{run}: n={requests}  min {:.1} ms  p50 {:.1} ms  max {:.1} ms",
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
    println!("  GET /runs/{run}/live (uncached): {:.1} ms", ms(live_time));
    let _ = stop.send(());
    server.await??;
    Ok(())
}
