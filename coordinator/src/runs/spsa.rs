//! SPSA runs: each lease is one request of [`crate::spsa`] (one flip vector,
//! θ+ first, θ− second) over a batch of pairs; each counted result is
//! applied with [`crate::spsa::apply_result`] and the new θ is stored.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use xq_proto::{BatchOutcome, Invalid, pb};

use super::{DEFAULT_SPSA_BATCH_PAIRS, Kind, Params, RunKind, RunStatus, Slice, SliceWork};
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

    fn default_batch_pairs(&self) -> u32 {
        DEFAULT_SPSA_BATCH_PAIRS
    }

    /// The current θ and the iterations done and planned.
    fn status(&self, run: &RunStatus, out: &mut pb::RunStatus) {
        out.spsa = run.spsa.as_ref().map(|st| pb::SpsaStatus {
            iter: st.iter,
            iterations: st.iterations,
            theta: st
                .params
                .iter()
                .map(|p| pb::SpsaTheta {
                    name: p.name.clone(),
                    value: p.theta,
                })
                .collect(),
        });
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

impl TryFrom<pb::SpsaSpec> for SpsaSpec {
    type Error = Invalid;

    fn try_from(s: pb::SpsaSpec) -> Result<Self, Invalid> {
        let pb::SpsaSpec { params, games } = s;
        let params: Vec<SpsaParamSpec> = params
            .into_iter()
            .map(|p| {
                let pb::SpsaParam {
                    name,
                    start,
                    min,
                    max,
                    c_end,
                    r_end,
                } = p;
                SpsaParamSpec {
                    name,
                    start,
                    min,
                    max,
                    c_end,
                    r_end,
                    integer: true,
                }
            })
            .collect();
        for (i, p) in params.iter().enumerate() {
            if p.name.is_empty() || params[..i].iter().any(|q| q.name == p.name) {
                return Err(Invalid::new(
                    "spsa.params",
                    format!("name {:?} is empty or repeated", p.name),
                ));
            }
            let Some(spec) = xq_engine::params::spec(&p.name) else {
                return Err(Invalid::new(
                    "spsa.params",
                    format!("unknown parameter {:?}", p.name),
                ));
            };
            if p.min < f64::from(spec.min) || p.max > f64::from(spec.max) {
                return Err(Invalid::new(
                    "spsa.params",
                    format!(
                        "{:?} range [{}, {}] leaves the engine's [{}, {}]",
                        p.name, p.min, p.max, spec.min, spec.max
                    ),
                ));
            }
        }
        let spec = SpsaSpec { params, games };
        spec.initial_state().map_err(|e| Invalid::new("spsa", e))?;
        Ok(spec)
    }
}

impl From<SpsaSpec> for pb::SpsaSpec {
    fn from(s: SpsaSpec) -> Self {
        let SpsaSpec { params, games } = s;
        pb::SpsaSpec {
            params: params
                .into_iter()
                .map(|p| pb::SpsaParam {
                    name: p.name,
                    start: p.start,
                    min: p.min,
                    max: p.max,
                    c_end: p.c_end,
                    r_end: p.r_end,
                })
                .collect(),
            games,
        }
    }
}
