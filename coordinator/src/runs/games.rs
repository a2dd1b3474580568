//! Fixed-games runs: `pairs` game pairs of dev against base, reported as Elo.

use xq_proto::PlayerSpec;

use super::{GamesSpec, MatchSettings};

/// Players of every lease: dev first, base second.
pub fn players(spec: &GamesSpec, settings: &MatchSettings) -> [PlayerSpec; 2] {
    spec.lineup
        .players(settings, &spec.dev_params, &spec.base_params)
}

/// Finished once every pair is counted.
pub fn finished(spec: &GamesSpec, pairs_counted: u64) -> bool {
    pairs_counted >= spec.pairs
}
