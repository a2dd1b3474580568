//! SPSA runs: each lease is one request of [`crate::spsa`] (one flip vector,
//! θ+ first, θ− second) over a batch of pairs; each counted result is
//! applied with [`crate::spsa::apply_result`] and the new θ is stored.

use rand::Rng;
use xq_proto::{BatchOutcome, PlayerSpec};

use super::{MatchSettings, Params, SpsaSpec};
use crate::spsa::{self, SpsaConfig, SpsaError, SpsaRequest, SpsaResult, SpsaState};

/// The initial state of a run.
pub fn initial_state(spec: &SpsaSpec) -> Result<SpsaState, SpsaError> {
    SpsaState::new(spec.params.clone(), SpsaConfig::new(spec.games))
}

/// A new request at the run's current θ and its players (θ+, θ−). Values are
/// whole numbers: parameters are integer (see [`crate::spsa`]'s rounding).
pub fn request(
    state: &SpsaState,
    settings: &MatchSettings,
    rng: &mut impl Rng,
) -> (SpsaRequest, [PlayerSpec; 2]) {
    let request = spsa::next_request(state, rng);
    let values = |theta: &[f64]| -> Params {
        state
            .params
            .iter()
            .zip(theta)
            .map(|(p, &v)| (p.name.clone(), v.round() as i64))
            .collect()
    };
    let players = [
        settings.player(values(&request.theta_plus)),
        settings.player(values(&request.theta_minus)),
    ];
    (request, players)
}

/// Applies a lease's games to the state.
pub fn apply(
    state: &mut SpsaState,
    request: &SpsaRequest,
    outcome: &BatchOutcome,
) -> Result<(), SpsaError> {
    let result = SpsaResult {
        wins: outcome.totals.wins,
        draws: outcome.totals.draws,
        losses: outcome.totals.losses,
    };
    spsa::apply_result(state, request, result)
}
