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
//! pairs, built-in engine, `XQ_ARCHIVE_NODES` nodes per move, the default
//! adjudication), with their per-move statistics, as a fixed-games run's
//! lease has them played: each pair from its own opening (built-in, 4 random
//! plies), dev (`tempo` 11, as [`games_spec`] sets it) against base, so that
//! the two games of a pair differ (the bench prints how many of the pool's
//! games are distinct). Then a fixed-games run of `XQ_ARCHIVE_GAMES` games
//! in leases of 8 pairs is created on a fresh database whose openings are
//! the pool's, as lines (`OpeningSource::Lines`, indexed modulo their
//! number), so that the pool's games are the right games for every lease.
//! Each lease is handed out by the core's lease service (a real lease row),
//! and its 16 games, the pool's games of its openings, are submitted
//! through it (`Leases::submit`: the opening and replay checks, the count,
//! and `store::games::insert`'s one DEFLATE blob per lease and one row per
//! game, in the transaction that marks the lease done), as a worker's result
//! would be.
//!
//! Prints the blob bytes per game, the database file (checkpointed) in
//! total and per game, and the submission time per lease.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use xq_coordinator::pace::PaceConfig;
use xq_coordinator::runs::RunSpec;
use xq_coordinator::service::{Core, NewWorker, SchedulerConfig, Store, SubmitStatus};
use xq_proto::{
    Adjudication, BatchOutcome, GameRecord, Limit, OpeningSlice, OpeningSource, Totals, WorkSpec,
};
use xq_tests::cluster::{DEV_MARK, TempDb, games_spec};
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
    let plies: usize = pool.games.iter().map(|g| g.moves.len()).sum();
    let distinct = pool
        .games
        .iter()
        .map(|g| &g.moves)
        .collect::<HashSet<_>>()
        .len();
    println!(
        "pool: {} games ({distinct} distinct), {:.0} plies per game, {nodes} nodes per move, \
         played in {:.1} s",
        pool.games.len(),
        plies as f64 / pool.games.len() as f64,
        started.elapsed().as_secs_f64()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(store_games(&pool, total_games))
}

/// Real games with their per-move statistics, as workers send them, and
/// the openings they were played from.
struct Pool {
    /// Opening `p` as a line: the start position and the opening's moves.
    lines: Vec<String>,
    /// Pair `p` is games `2p` (dev is Red) and `2p + 1`, from opening `p`.
    games: Vec<GameRecord>,
    /// The adjudication the games were played under, the run's too.
    adjudication: Adjudication,
    /// The limit each move was searched to, the run's too.
    limit: Limit,
}

/// `pairs` pairs of the built-in engine as a fixed-games lease has them
/// played (dev against base, both games of a pair from one opening).
fn play_pool(pairs: u32, nodes: u64) -> anyhow::Result<Pool> {
    let mut work = WorkSpec::example();
    work.pairs = pairs;
    work.openings = OpeningSlice {
        source: OpeningSource::Builtin { random_plies: 4 },
        offset: 0,
        count: pairs.into(),
        per_game: false,
        ..work.openings
    };
    work.adjudication = Adjudication::default();
    for p in &mut work.players {
        p.params.clear();
        p.limit = Limit::Nodes(nodes);
        p.hash_mb = 1;
    }
    work.players[0].params.insert(DEV_MARK.to_owned(), 11);
    let player = EnginePlayer::new(2)?;
    let outcome = player.play(&work, &Arc::new(AtomicBool::new(false)), &|_| {})?;
    ensure!(
        outcome.games.len() == 2 * pairs as usize,
        "the pool has {} games",
        outcome.games.len()
    );
    let lines = outcome
        .games
        .chunks(2)
        .map(|pair| {
            let line = opening_line(&pair[0]);
            ensure!(
                opening_line(&pair[1]) == line,
                "the games of pair {} start differently",
                pair[0].opening_index
            );
            Ok(line)
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Pool {
        lines,
        games: outcome.games,
        adjudication: work.adjudication,
        limit: Limit::Nodes(nodes),
    })
}

/// The opening `game` was played from, as a line (`FEN moves m1 m2 …`).
fn opening_line(game: &GameRecord) -> String {
    let moves: Vec<String> = game.moves[..game.opening_plies as usize]
        .iter()
        .map(ToString::to_string)
        .collect();
    format!("{} moves {}", game.start_fen, moves.join(" "))
}

async fn store_games(pool: &Pool, total_games: u64) -> anyhow::Result<()> {
    let db = TempDb::new("archive-size");
    // Every lease one batch of BATCH_PAIRS pairs: no lease sized by the
    // pace the bench's instant results would show.
    let config = SchedulerConfig {
        pace: PaceConfig {
            target: Duration::ZERO,
            ..PaceConfig::default()
        },
        ..SchedulerConfig::default()
    };
    let core = Core::new(Store::open(&db.0)?, config);
    let mut wire = games_spec(total_games / 2, BATCH_PAIRS);
    let settings = wire.settings.as_mut().context("a games run has settings")?;
    settings.openings = Some(
        OpeningSource::Lines {
            lines: pool.lines.clone(),
            random_plies: 0,
        }
        .into(),
    );
    settings.adjudication = Some(pool.adjudication.into());
    settings.limit = Some(pool.limit.into());
    let spec = RunSpec::try_from(wire)?;
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
            machine_id: None,
        })
        .await?
        .id();
    let started = Instant::now();
    let mut leases_done = 0u64;
    while let Some(grant) = core.leases().request_work(worker_id).await? {
        let slice = &grant.work.openings;
        ensure!(
            !slice.per_game,
            "a fixed-games lease shares a pair's opening"
        );
        let games: Vec<GameRecord> = (0..2 * u64::from(grant.work.pairs))
            .map(|g| {
                // The pool's game of this opening with the same player as Red.
                let index = slice.index_of_game(g);
                let pair = index % pool.lines.len() as u64;
                let mut game = pool.games[(2 * pair + g % 2) as usize].clone();
                game.opening_index = index;
                game
            })
            .collect();
        let outcome = BatchOutcome {
            totals: Totals::of_games(&games),
            variant: None,
            games,
        };
        let status = core
            .leases()
            .submit(worker_id, grant.lease_id, outcome)
            .await?;
        ensure!(
            status == SubmitStatus::Accepted,
            "lease {}: {status:?}",
            grant.lease_id
        );
        leases_done += 1;
    }
    let submit_secs = started.elapsed().as_secs_f64();
    let archive = core.queries().stored_games(run_id).await?;
    drop(core);
    ensure!(
        archive.games == total_games,
        "{} games stored, {total_games} asked",
        archive.games
    );
    // The file checkpointed, as the bench measures it.
    rusqlite::Connection::open(&db.0)?
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let file = |suffix: &str| {
        std::fs::metadata(format!("{}{suffix}", db.0.display())).map_or(0, |m| m.len())
    };
    let db_bytes = file("") + file("-wal");
    let (stored, blob_bytes) = (archive.games, archive.bytes);
    println!(
        "stored {stored} games in {leases_done} leases of {BATCH_PAIRS} pairs in {submit_secs:.1} s \
         ({:.2} ms per lease, submitted: checked, counted and stored)",
        1000.0 * submit_secs / leases_done as f64
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
