//! A datagen run's section of its page: positions generated, their rate,
//! Red's results and the games' lengths, from the run's Red-view totals.

use serde::Serialize;
use xq_coordinator::runs::RunStatus;
use xq_proto::variant_stats::{PLIES_BUCKET, PLIES_BUCKETS};

/// What the section shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatagenView {
    /// Positions played (every ply of every counted game, openings included;
    /// the export keeps the scored, filtered ones).
    pub positions: u64,
    /// Positions per second of the run's life so far (first result to last).
    pub per_second: Option<f64>,
    pub games: u64,
    /// Games won by Red, drawn, won by Black.
    pub results: [u64; 3],
    /// `(plies range, games)`, one row per 20-ply bucket that has games.
    pub lengths: Vec<(String, u64)>,
}

impl DatagenView {
    /// The section of `status`, a datagen run's (`None` for another kind
    /// or before its first result).
    pub fn new(status: &RunStatus) -> Option<DatagenView> {
        let totals = status.progress.datagen()?;
        let s = &totals.stats;
        let seconds = (status.updated_ms - status.created_ms) as f64 / 1000.0;
        let lengths = s
            .plies_histogram
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| {
                let from = i as u32 * PLIES_BUCKET;
                let range = if i + 1 == PLIES_BUCKETS {
                    format!("{from}+")
                } else {
                    format!("{from}–{}", from + PLIES_BUCKET - 1)
                };
                (range, *n)
            })
            .collect();
        Some(DatagenView {
            positions: totals.total_plies,
            per_second: (seconds > 0.0).then(|| totals.total_plies as f64 / seconds),
            games: s.red_wins + s.draws + s.black_wins,
            results: [s.red_wins, s.draws, s.black_wins],
            lengths,
        })
    }
}
