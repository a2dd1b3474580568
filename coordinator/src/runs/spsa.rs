//! SPSA runs: each lease is one request of [`crate::spsa`] (one flip vector,
//! θ+ first, θ− second) over a batch of pairs; each counted result is
//! applied with [`crate::spsa::apply_result`] and the new θ is stored.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use xq_proto::BatchOutcome;

use super::{Kind, Params, RunKind, RunStatus, Slice, SliceWork};
use crate::spsa::{self, SpsaConfig, SpsaError, SpsaParamSpec, SpsaResult, SpsaState};
use crate::store::StoreError;
use crate::store::leases::Lease;
use crate::store::runs as run_rows;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpsaSpec {
    /// Integer parameters (the wire carries whole numbers).
    pub params: Vec<SpsaParamSpec>,
    /// Games in the whole run (2 per iteration).
    pub games: u64,
}

impl SpsaSpec {
    /// The initial state of a run.
    pub fn initial_state(&self) -> Result<SpsaState, SpsaError> {
        SpsaState::new(self.params.clone(), SpsaConfig::new(self.games))
    }
}

fn no_state(run: &RunStatus) -> StoreError {
    StoreError::Schema(format!("spsa run {} has no state", run.id))
}

impl Kind for SpsaSpec {
    fn kind(&self) -> RunKind {
        RunKind::Spsa
    }

    fn target_pairs(&self) -> Option<u64> {
        Some(self.games / 2)
    }

    fn prepare(&mut self, _: &Connection) -> Result<Option<SpsaState>, StoreError> {
        self.initial_state()
            .map(Some)
            .map_err(|e| StoreError::Invalid(e.to_string()))
    }

    /// A new request at the run's current θ: θ+ first, θ− second. Values
    /// are whole numbers: parameters are integer (see [`crate::spsa`]'s
    /// rounding). Flips are drawn from the run's seed and the slice, so a
    /// run replays the same perturbations given the same results.
    fn slice_work(&self, run: &RunStatus, slice: &Slice) -> Result<SliceWork, StoreError> {
        let state = run.spsa.as_ref().ok_or_else(|| no_state(run))?;
        let settings = &run.spec.settings;
        let mut rng = ChaCha8Rng::seed_from_u64(
            settings.seed
                ^ run.id.rotate_left(32)
                ^ slice.offset.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let request = spsa::next_request(state, &mut rng);
        let values = |theta: &[f64]| -> Params {
            state
                .params
                .iter()
                .zip(theta)
                .map(|(p, &v)| (p.name.clone(), v.round() as i64))
                .collect()
        };
        Ok(SliceWork {
            players: [
                settings.player(values(&request.theta_plus)),
                settings.player(values(&request.theta_minus)),
            ],
            rules: settings.rules.clone(),
            per_game: false,
            spsa_request: Some(request),
        })
    }

    /// Applies the lease's games to θ and stores it; finished after the
    /// planned iterations.
    fn apply(
        &self,
        conn: &Connection,
        run: &RunStatus,
        lease: &Lease,
        outcome: &BatchOutcome,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut state = run.spsa.clone().ok_or_else(|| no_state(run))?;
        let request = lease
            .spsa_request
            .as_ref()
            .ok_or_else(|| StoreError::Schema(format!("spsa lease {} has no request", lease.id)))?;
        let t = &outcome.totals;
        let result = SpsaResult {
            wins: t.wins,
            draws: t.draws,
            losses: t.losses,
        };
        spsa::apply_result(&mut state, request, result)
            .map_err(|e| StoreError::Invalid(format!("spsa: {e}")))?;
        run_rows::save_spsa(conn, run.id, lease.id, &state, t, now)?;
        Ok(state.finished())
    }
}
