//! SPRT runs: dev against base until the LLR leaves its bounds (or the pair
//! cap is reached). The LLR is evaluated on the run's pentanomial totals
//! after every counted result.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use xq_proto::BatchOutcome;

use super::{Kind, Lineup, Params, RunKind, RunStatus, Slice, SliceWork};
use crate::spsa::SpsaState;
use crate::stats::sprt::{SprtParams, SprtState};
use crate::stats::{Pentanomial, Results};
use crate::store::StoreError;
use crate::store::leases::Lease;
use crate::store::runs as run_rows;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SprtSpec {
    pub dev_params: Params,
    pub base_params: Params,
    /// External engines and per-player limits.
    #[serde(default)]
    pub lineup: Lineup,
    pub sprt: SprtParams,
    /// Stop after this many pairs if no bound is reached.
    pub max_pairs: Option<u64>,
}

impl Kind for SprtSpec {
    fn kind(&self) -> RunKind {
        RunKind::Sprt
    }

    fn target_pairs(&self) -> Option<u64> {
        self.max_pairs
    }

    fn prepare(&mut self, conn: &Connection) -> Result<Option<SpsaState>, StoreError> {
        self.lineup.resolve(conn)?;
        Ok(None)
    }

    /// Dev first, base second.
    fn slice_work(&self, run: &RunStatus, _: &Slice) -> Result<SliceWork, StoreError> {
        let settings = &run.spec.settings;
        Ok(SliceWork {
            players: self
                .lineup
                .players(settings, &self.dev_params, &self.base_params),
            rules: settings.rules.clone(),
            per_game: false,
            spsa_request: None,
        })
    }

    /// Stores the test on the run's totals; finished at a bound or at the
    /// pair cap.
    fn apply(
        &self,
        conn: &Connection,
        run: &RunStatus,
        lease: &Lease,
        _: &BatchOutcome,
        now: i64,
    ) -> Result<bool, StoreError> {
        let test = self
            .sprt
            .evaluate(&Results::Pentanomial(Pentanomial(run.totals.pentanomial)))
            .map_err(|e| StoreError::Invalid(format!("sprt: {e}")))?;
        run_rows::save_sprt(conn, run.id, lease.id, run.totals.pairs, &test, now)?;
        Ok(test.state != SprtState::Continue
            || self.max_pairs.is_some_and(|m| run.totals.pairs >= m))
    }
}
