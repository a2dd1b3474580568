//! Fixed-games runs: `pairs` game pairs of dev against base, reported as Elo.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use xq_proto::{BatchOutcome, Invalid, pb};

use super::{Kind, Lineup, MatchSettings, Params, RunKind, RunStatus, Slice, SliceWork};
use crate::convert;
use crate::spsa::SpsaState;
use crate::store::StoreError;
use crate::store::lease_results::StoredResult;
use crate::store::leases::Lease;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GamesSpec {
    pub dev_params: Params,
    pub base_params: Params,
    /// External engines and per-player limits.
    #[serde(default)]
    pub lineup: Lineup,
    pub pairs: u64,
}

impl Kind for GamesSpec {
    fn kind(&self) -> RunKind {
        RunKind::Games
    }

    fn target_pairs(&self) -> Option<u64> {
        Some(self.pairs)
    }

    fn prepare(
        &mut self,
        conn: &Connection,
        settings: &MatchSettings,
    ) -> Result<Option<SpsaState>, StoreError> {
        self.lineup.resolve(conn, &settings.rules)?;
        Ok(None)
    }

    /// Dev first, base second.
    fn slice_work(&self, run: &RunStatus, _: &Slice) -> Result<SliceWork, StoreError> {
        Ok(self
            .lineup
            .slice_work(&run.spec.settings, &self.dev_params, &self.base_params))
    }

    /// Finished once every pair is counted.
    fn apply(
        &self,
        _: &Connection,
        run: &RunStatus,
        _: &Lease,
        _: &BatchOutcome,
        _: i64,
    ) -> Result<bool, StoreError> {
        Ok(run.totals.pairs >= self.pairs)
    }

    /// Nothing of its own to rebuild.
    fn recount(
        &self,
        _: &Connection,
        run: &RunStatus,
        _: &[StoredResult],
        _: &Lease,
        _: i64,
    ) -> Result<bool, StoreError> {
        Ok(run.totals.pairs >= self.pairs)
    }
}

impl TryFrom<pb::GamesSpec> for GamesSpec {
    type Error = Invalid;

    fn try_from(g: pb::GamesSpec) -> Result<Self, Invalid> {
        let pb::GamesSpec {
            dev_params,
            base_params,
            pairs,
            engines,
        } = g;
        if pairs == 0 {
            return Err(Invalid::new("games.pairs", "must be at least 1"));
        }
        convert::check_params("games.dev_params", &dev_params)?;
        convert::check_params("games.base_params", &base_params)?;
        Ok(GamesSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            lineup: convert::lineup("games.engines", engines)?,
            pairs,
        })
    }
}

impl From<GamesSpec> for pb::GamesSpec {
    fn from(g: GamesSpec) -> Self {
        let GamesSpec {
            dev_params,
            base_params,
            lineup,
            pairs,
        } = g;
        pb::GamesSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            pairs,
            engines: Some(lineup.into()),
        }
    }
}
