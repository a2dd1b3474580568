//! SPRT runs: dev against base until the LLR leaves its bounds (or the pair
//! cap is reached). The LLR is evaluated on the run's pentanomial totals
//! after every counted result.

use xq_proto::PlayerSpec;

use super::{MatchSettings, SprtSpec};
use crate::stats::sprt::{SprtOutcome, SprtState};
use crate::stats::{Pentanomial, Results, StatsError};

/// Players of every lease: dev first, base second.
pub fn players(spec: &SprtSpec, settings: &MatchSettings) -> [PlayerSpec; 2] {
    spec.lineup
        .players(settings, &spec.dev_params, &spec.base_params)
}

/// The test on the run's totals.
pub fn evaluate(spec: &SprtSpec, pentanomial: [u64; 5]) -> Result<SprtOutcome, StatsError> {
    spec.sprt
        .evaluate(&Results::Pentanomial(Pentanomial(pentanomial)))
}

/// Finished at a bound or at the pair cap.
pub fn finished(spec: &SprtSpec, outcome: &SprtOutcome, pairs_counted: u64) -> bool {
    outcome.state != SprtState::Continue || spec.max_pairs.is_some_and(|m| pairs_counted >= m)
}
