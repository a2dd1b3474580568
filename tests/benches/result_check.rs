//! What checking and storing one result costs, stage by stage, per ply: the
//! profile behind the coordinator's result lane (issue 49).
//!
//! ```sh
//! cargo bench -p xq-tests --bench result_check
//! XQ_CHECK_PAIRS=16 XQ_CHECK_ROUNDS=300 cargo bench -p xq-tests --bench result_check
//! ```
//!
//! The result is the load bench's: `XQ_CHECK_PAIRS` (16) copies of one real
//! pair of the built-in engine (300 nodes a move, 351 plies), as a worker
//! submits it. Each round times, on one thread:
//!
//! 1. **decode**: the `SubmitResultRequest` message from its bytes;
//! 2. **convert**: the message into the domain's result (`BatchOutcome`);
//! 3. **openings**: each game's start and first moves against its opening;
//! 4. **legality**: each move tested legal and made, nothing else;
//! 5. **verdict**: the rest of the replay (checks, repetitions and their
//!    judgement, the move limit, the counts): the full replay
//!    (`archive::check`) less the legality stage;
//! 6. **compress**: the games in their stored form (protobuf, DEFLATE);
//! 7. **write**: a whole `SubmitResult` on a database file (the lease read,
//!    stages 3–6 again, the write and its commit) less stages 3–6, i.e. the
//!    reads and the write
//!    (`--sync normal`: the server's one sync per batch of up to 512 calls
//!    is no result's own).
//!
//! and prints each stage's median per result and per ply, and the plies per
//! second one core checks and stores. Times are the process's CPU time (all
//! its threads), not the clock's: a busy machine slows the stages, it does
//! not change what they cost, and the write stage's threads hand work to
//! each other without counting the wait.

use std::time::Duration;

use anyhow::{Context, ensure};
use prost::Message;
use xq_coordinator::archive;
use xq_coordinator::events::Actor;
use xq_coordinator::pace::PaceConfig;
use xq_coordinator::runs::RunSpec;
use xq_coordinator::service::{
    CheckConfig, Core, Durability, NewWorker, SchedulerConfig, Store, StoreOptions, SubmitStatus,
};
use xq_engine::Position;
use xq_games::openings::OpeningBook;
use xq_proto::{BatchOutcome, OpeningSource, pb};
use xq_tests::bench_pair::{BENCH_OPENING, real_pair, results_for};
use xq_tests::cluster::{TempDb, games_spec, register_request};

/// The stages, in the order the module doc gives them.
const STAGES: [&str; 7] = [
    "decode", "convert", "openings", "legality", "verdict", "compress", "write",
];

/// The process's CPU time so far (every thread).
#[derive(Clone, Copy)]
struct Cpu(Duration);

impl Cpu {
    fn now() -> Cpu {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Cpu(Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
    }

    fn elapsed(self) -> Duration {
        Cpu::now().0.saturating_sub(self.0)
    }
}

fn env(name: &str, default: u32) -> anyhow::Result<u32> {
    match std::env::var(name) {
        Ok(v) => v.parse().with_context(|| {
            format!(
                "{name}={:?} is not a count",
                v.chars().take(20).collect::<String>()
            )
        }),
        Err(_) => Ok(default),
    }
}

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let pairs = env("XQ_CHECK_PAIRS", 16)?.max(1);
    let rounds = env("XQ_CHECK_ROUNDS", 200)?.max(1);
    let pair = real_pair()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(bench(pair, pairs, rounds))
}

async fn bench(pair: pb::GameResults, pairs: u32, rounds: u32) -> anyhow::Result<()> {
    let db = TempDb::new("result-check");
    let config = SchedulerConfig {
        pace: PaceConfig {
            target: Duration::ZERO,
            ..PaceConfig::default()
        },
        checks: CheckConfig {
            threads: 1,
            ..CheckConfig::default()
        },
        ..SchedulerConfig::default()
    };
    // The server syncs once per batch of up to 512 calls: the sync is not a
    // result's own cost.
    let options = StoreOptions {
        durability: Durability::Normal,
        ..StoreOptions::default()
    };
    let core = Core::new(Store::open_with(&db.0, options)?, config);
    let mut spec = games_spec(1 << 40, pairs);
    if let Some(s) = spec.settings.as_mut() {
        s.openings = Some(
            OpeningSource::Lines {
                lines: vec![BENCH_OPENING.to_owned()],
                random_plies: 0,
            }
            .into(),
        );
    }
    let spec = RunSpec::try_from(spec)?;
    let rules = spec.settings.rules;
    core.runs().create(spec, false, Actor::system()).await?;
    let worker = core
        .workers()
        .register(NewWorker::try_from(register_request("bench"))?)
        .await?
        .id();

    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); STAGES.len()];
    let mut plies = 0;
    let mut sizes = (0, 0);
    for _ in 0..rounds {
        let grant = core
            .leases()
            .request_work(worker)
            .await?
            .context("the run gave no lease")?;
        let slice = grant.work.openings.clone();
        let results = results_for(&pair, grant.work.pairs, slice.offset);
        let bytes = pb::SubmitResultRequest {
            worker_id: worker,
            lease_id: grant.lease_id,
            results: Some(results),
        }
        .encode_to_vec();

        let t = Cpu::now();
        let request = pb::SubmitResultRequest::decode(&bytes[..])?;
        let decode = t.elapsed();

        let t = Cpu::now();
        let outcome = BatchOutcome::try_from(request.results.context("no results")?)?;
        let convert = t.elapsed();
        plies = outcome.totals.total_plies;

        let book = OpeningBook::load(&slice.source, std::path::Path::new(""))?;
        let t = Cpu::now();
        archive::check_openings(&slice, &book, &rules, &outcome.games)?;
        let openings = t.elapsed();

        let t = Cpu::now();
        for g in &outcome.games {
            let mut pos = Position::from_fen(&g.start_fen)?;
            pos.set_conversion(rules.conversion);
            for &mv in &g.moves {
                ensure!(pos.is_legal(mv), "an illegal move in the bench's pair");
                pos.make(mv);
            }
        }
        let legality = t.elapsed();

        let t = Cpu::now();
        archive::check(&rules, &outcome)?;
        let replay = t.elapsed();

        let wire: Vec<pb::GameRecord> = outcome.games.iter().cloned().map(Into::into).collect();
        let t = Cpu::now();
        let blob = xq_coordinator::store::game_codec::encode(&wire);
        let compress = t.elapsed();
        ensure!(!blob.is_empty(), "nothing compressed");
        sizes = (bytes.len(), blob.len());

        let t = Cpu::now();
        let status = core
            .leases()
            .submit(worker, grant.lease_id, outcome)
            .await?;
        let submit = t.elapsed();
        ensure!(
            status == SubmitStatus::Accepted,
            "the result was {status:?}"
        );

        let stages = [
            decode,
            convert,
            openings,
            legality,
            replay.saturating_sub(legality),
            compress,
            submit.saturating_sub(openings + replay + compress),
        ];
        for (all, t) in times.iter_mut().zip(stages) {
            all.push(t);
        }
    }

    println!(
        "one result of {pairs} pairs ({} games, {plies} plies): {} bytes sent, {} stored; \
         {rounds} rounds, medians of CPU time:",
        2 * pairs,
        sizes.0,
        sizes.1
    );
    let mut total = Duration::ZERO;
    for (name, all) in STAGES.iter().zip(&mut times) {
        all.sort_unstable();
        let median = all[all.len() / 2];
        total += median;
        println!(
            "  {name:<9} {:>9.1} µs  {:>7.1} ns/ply",
            median.as_secs_f64() * 1e6,
            median.as_secs_f64() * 1e9 / plies as f64
        );
    }
    println!(
        "  total     {:>9.1} µs  {:>7.1} ns/ply: {:.2} million plies/s on one core",
        total.as_secs_f64() * 1e6,
        total.as_secs_f64() * 1e9 / plies as f64,
        plies as f64 / total.as_secs_f64() / 1e6
    );
    Ok(())
}
