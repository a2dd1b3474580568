//! The game archive's size: bytes per stored game and the database file
//! after 100,000 games.
//!
//! ```sh
//! cargo bench -p xq-tests --bench archive_size
//! XQ_ARCHIVE_GAMES=100000 XQ_ARCHIVE_POOL_PAIRS=64 XQ_ARCHIVE_NODES=1000 \
//!     cargo bench -p xq-tests --bench archive_size
//! ```
//!
//! First the game runner plays a pool of real games (`XQ_ARCHIVE_POOL_PAIRS`
//! pairs, built-in engine, `XQ_ARCHIVE_NODES` nodes per move, built-in
//! openings with 4 random plies, each game its own opening (the example
//! lease's `per_game`) so that no two games repeat, the default
//! adjudication), with their per-move statistics. Then a fixed-games run of `XQ_ARCHIVE_GAMES` games
//! in leases of 8 pairs is created on a fresh database, each lease is handed
//! out by the core's lease service (a real lease row), and its 16 games, taken from the
//! pool in turn, are stored by `store::games::insert` (the function the
//! submission's transaction calls: one DEFLATE blob per lease and one row per
//! game) in one transaction that also marks the lease done. The replay and
//! opening checks are skipped: pool games are not the leases' openings.
//!
//! Prints the blob bytes per game, the database file (checkpointed) in
//! total and per game, and the insert time per lease.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, ensure};
use xq_coordinator::runs::RunSpec;
use xq_coordinator::runs::lease::LeaseState;
use xq_coordinator::service::{Core, NewWorker, SchedulerConfig};
use xq_coordinator::store::leases;
use xq_coordinator::store::{Store, games, now_ms};
use xq_proto::{GameRecord, Limit, OpeningSource, WorkSpec};
use xq_tests::cluster::{TempDb, games_spec};
use xq_worker::{BatchPlayer, EnginePlayer};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Pairs per lease, as the CLI's default for fixed-games runs.
const BATCH_PAIRS: u32 = 8;

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let total_games: u64 = env("XQ_ARCHIVE_GAMES", 100_000);
    let pool_pairs: u32 = env("XQ_ARCHIVE_POOL_PAIRS", 64);
    let nodes: u64 = env("XQ_ARCHIVE_NODES", 1000);
    let started = Instant::now();
    let pool = play_pool(pool_pairs, nodes)?;
    let plies: usize = pool.iter().map(|g| g.moves.len()).sum();
    println!(
        "pool: {} games, {:.0} plies per game, {nodes} nodes per move, played in {:.1} s",
        pool.len(),
        plies as f64 / pool.len() as f64,
        started.elapsed().as_secs_f64()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(store_games(&pool, total_games))
}

/// Real games with their per-move statistics, as workers send them.
fn play_pool(pairs: u32, nodes: u64) -> anyhow::Result<Vec<GameRecord>> {
    let mut work = WorkSpec::example();
    work.pairs = pairs;
    work.openings.count = pairs.into();
    work.openings.offset = 0;
    work.openings.source = OpeningSource::Builtin { random_plies: 4 };
    work.adjudication = xq_proto::Adjudication::default();
    for p in &mut work.players {
        p.params.clear();
        p.limit = Limit::Nodes(nodes);
        p.hash_mb = 1;
    }
    let player = EnginePlayer::new(2)?;
    let outcome = player.play(&work, &Arc::new(AtomicBool::new(false)), &|_| {})?;
    ensure!(
        outcome.games.len() == 2 * pairs as usize,
        "the pool has {} games",
        outcome.games.len()
    );
    Ok(outcome.games)
}

async fn store_games(pool: &[GameRecord], total_games: u64) -> anyhow::Result<()> {
    let db = TempDb::new("archive-size");
    let store = Store::open(&db.0)?;
    let core = Core::new(store.clone(), SchedulerConfig::default());
    let spec = RunSpec::try_from(games_spec(total_games / 2, BATCH_PAIRS))?;
    let (run_id, _) = core
        .runs()
        .create(spec, false, xq_coordinator::events::Actor::system())
        .await?;
    let worker_id = core
        .workers()
        .register(NewWorker {
            name: "archive-bench".to_owned(),
            threads: 1,
            version: "0.1.0".to_owned(),
            signature: 0,
            token_key: None,
            bench_nps: None,
            machine: None,
            tools: Default::default(),
            target: String::new(),
            updated_from: None,
        })
        .await?;
    let started = Instant::now();
    let (mut leases_done, mut next) = (0u64, 0usize);
    while let Some(grant) = core.leases().request_work(worker_id).await? {
        let n = 2 * grant.work.pairs as usize;
        let offset = grant.work.openings.offset;
        let batch: Vec<GameRecord> = (0..n)
            .map(|i| {
                let mut g = pool[(next + i) % pool.len()].clone();
                g.opening_index = offset + i as u64 / 2;
                g
            })
            .collect();
        next += n;
        let lease_id = grant.lease_id;
        store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                leases::set_state(&tx, lease_id, LeaseState::Done, now_ms())?;
                let kept = games::KeptGames::new(&batch, |_| true);
                games::insert(&tx, run_id, lease_id, worker_id, &batch, &kept)?;
                tx.commit()?;
                Ok(())
            })
            .await?;
        leases_done += 1;
    }
    let insert_secs = started.elapsed().as_secs_f64();
    let (blob_bytes, stored) = store
        .call(move |conn| {
            conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
            games::stored_bytes(conn, run_id)
        })
        .await?;
    drop(core);
    drop(store);
    ensure!(
        stored == total_games,
        "{stored} games stored, {total_games} asked"
    );
    let file = |suffix: &str| {
        std::fs::metadata(format!("{}{suffix}", db.0.display())).map_or(0, |m| m.len())
    };
    let db_bytes = file("") + file("-wal");
    println!(
        "stored {stored} games in {leases_done} leases of {BATCH_PAIRS} pairs in {insert_secs:.1} s \
         ({:.2} ms per lease)",
        1000.0 * insert_secs / leases_done as f64
    );
    println!(
        "  blobs {blob_bytes} bytes = {:.0} bytes per game",
        blob_bytes as f64 / stored as f64
    );
    println!(
        "  database file {db_bytes} bytes ({:.1} MB) = {:.0} bytes per game",
        db_bytes as f64 / 1e6,
        db_bytes as f64 / stored as f64
    );
    std::fs::metadata(&db.0).context("the database file")?;
    Ok(())
}
