//! A datagen run's section of its page: positions generated, their rate,
//! Red's results and the games' lengths, from the run's Red-view totals.

use serde::Serialize;
use xq_coordinator::report::summary::positions_per_second;
use xq_coordinator::runs::RunStatus;
use xq_proto::variant_stats::{PLIES_BUCKET, PLIES_BUCKETS};

/// What the section shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatagenView {
    /// Positions played (every ply of every counted game, openings included;
    /// the export keeps the scored, filtered ones).
    pub positions: u64,
    /// Positions per second of the run's life so far (its creation to its
    /// last counted result).
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
            per_second: positions_per_second(
                totals.total_plies,
                status.created_ms,
                status.updated_ms,
            ),
            games: s.red_wins + s.draws + s.black_wins,
            results: [s.red_wins, s.draws, s.black_wins],
            lengths,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_coordinator::runs::{
        DatagenSpec, KindSpec, MatchSettings, Progress, RunSpec, RunState, VariantTotals,
    };
    use xq_proto::variant_stats::VariantStats;
    use xq_proto::{Adjudication, Limit, OpeningSource, Retention, Totals};

    fn run(progress: Progress) -> RunStatus {
        RunStatus {
            id: 3,
            spec: RunSpec {
                name: "data".into(),
                priority: 0,
                batch_pairs: 8,
                settings: MatchSettings {
                    limit: Limit::Nodes(1000),
                    hash_mb: 16,
                    rules: xq_engine::rules::RuleSet::default(),
                    openings: OpeningSource::Builtin { random_plies: 8 },
                    seed: 1,
                    adjudication: Adjudication::default(),
                    draw_contempt: true,
                    threads: 1,
                },
                kind: KindSpec::Datagen(DatagenSpec {
                    engine: None,
                    params: Default::default(),
                    pairs: 3,
                }),
                workers: Default::default(),
                keep_games: Retention::All,
            },
            state: RunState::Finished,
            totals: Totals::default(),
            target_pairs: Some(3),
            pairs_in_flight: 0,
            created_ms: 1_000,
            updated_ms: 5_000,
            progress,
            flag: None,
            linked: None,
            author: None,
            rejection: None,
            share: 100,
        }
    }

    #[test]
    fn the_section_shows_positions_their_rate_results_and_lengths() {
        let mut plies_histogram = [0; PLIES_BUCKETS];
        plies_histogram[1] = 4;
        plies_histogram[PLIES_BUCKETS - 1] = 2;
        let totals = VariantTotals {
            pairs: 3,
            total_plies: 1_000,
            stats: VariantStats {
                red_wins: 3,
                draws: 2,
                black_wins: 1,
                plies_histogram,
                ..Default::default()
            },
            ..Default::default()
        };
        let view = DatagenView::new(&run(Progress::Datagen(Some(Box::new(totals))))).unwrap();
        assert_eq!(view.positions, 1_000);
        assert_eq!(view.per_second, Some(250.0), "1,000 plies in 4 s");
        assert_eq!((view.games, view.results), (6, [3, 2, 1]));
        assert_eq!(
            view.lengths,
            [("20–39".to_owned(), 4), ("400+".to_owned(), 2)]
        );
        assert_eq!(DatagenView::new(&run(Progress::Datagen(None))), None);
    }
}
