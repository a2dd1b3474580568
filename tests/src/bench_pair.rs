//! The benches' result: one real pair of the built-in engine's games, and a
//! lease's result made of copies of it.

use std::sync::Arc;

use anyhow::ensure;
use xq_proto::pb;

/// The only opening of the bench's run: every opening index is this line.
pub const BENCH_OPENING: &str =
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7";

/// One real pair played by the game runner, as a worker would submit it.
pub fn real_pair() -> anyhow::Result<pb::GameResults> {
    use xq_worker::BatchPlayer;
    let mut work = xq_proto::WorkSpec::example();
    work.pairs = 1;
    work.openings.count = 1;
    work.openings.offset = 0;
    work.openings.source = xq_proto::OpeningSource::Lines {
        lines: vec![BENCH_OPENING.to_owned()],
        random_plies: 0,
    };
    for p in &mut work.players {
        p.limit = xq_proto::Limit::Nodes(300);
        p.hash_mb = 1;
    }
    let player = xq_worker::EnginePlayer::new(1)?;
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let outcome = player.play(&work, &cancel, &|_| {})?;
    ensure!(
        outcome.games.len() == 2,
        "the pair has {} games",
        outcome.games.len()
    );
    Ok(outcome.into())
}

/// The results of a lease of `pairs` pairs from opening `offset`: every
/// pair a copy of `pair` (whose opening is the run's only line, so it is
/// every index's), its games' opening index that pair's, the totals and
/// the per-colour statistics `pairs` times the pair's.
pub fn results_for(pair: &pb::GameResults, pairs: u32, offset: u64) -> pb::GameResults {
    let n = u64::from(pairs);
    let times = |counts: &[u64]| -> Vec<u64> { counts.iter().map(|c| c * n).collect() };
    let totals = pair.totals.as_ref().map(|t| pb::Totals {
        pairs: t.pairs * n,
        pentanomial: times(&t.pentanomial),
        wins: t.wins * n,
        draws: t.draws * n,
        losses: t.losses * n,
        reasons: t.reasons.iter().map(|(k, v)| (k.clone(), v * n)).collect(),
        total_plies: t.total_plies * n,
    });
    let games = (0..n)
        .flat_map(|p| {
            pair.games.iter().map(move |g| pb::GameRecord {
                opening_index: offset + p,
                ..g.clone()
            })
        })
        .collect();
    let variant = pair.variant.as_ref().map(|v| pb::VariantStats {
        red_wins: v.red_wins * n,
        draws: v.draws * n,
        black_wins: v.black_wins * n,
        pair_outcomes: times(&v.pair_outcomes),
        plies_histogram: times(&v.plies_histogram),
        captured: times(&v.captured),
        converted: times(&v.converted),
        games_with_conversion: times(&v.games_with_conversion),
    });
    pb::GameResults {
        totals,
        games,
        variant,
    }
}
