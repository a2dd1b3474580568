//! Fixed-games runs: `pairs` game pairs of dev against base, reported as Elo.

use xq_worker::work::PlayerSpec;

use super::{GamesSpec, MatchSettings};

/// Players of every lease: dev first, base second.
pub fn players(spec: &GamesSpec, settings: &MatchSettings) -> [PlayerSpec; 2] {
    [
        settings.player(spec.dev_params.clone()),
        settings.player(spec.base_params.clone()),
    ]
}

/// Finished once every pair is counted.
pub fn finished(spec: &GamesSpec, pairs_counted: u64) -> bool {
    pairs_counted >= spec.pairs
}
