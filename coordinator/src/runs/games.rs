//! Fixed-games runs: `pairs` game pairs of dev against base, reported as Elo.

use serde::{Deserialize, Serialize};
use xq_proto::{BatchOutcome, EngineRef, Invalid, pb};

use super::wire;
use super::{
    Applied, Effect, Kind, KindInfo, Lease, Lineup, MatchSettings, Params, Registry, RunError, RunKind,
    RunStatus, Slice, SliceWork, StoredResult, Section,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GamesSpec {
    pub dev_params: Params,
    pub base_params: Params,
    /// External engines and per-player limits.
    #[serde(default)]
    pub lineup: Lineup,
    pub pairs: u64,
}

/// A fixed-games run: the Elo; dev against base.
pub const INFO: KindInfo = KindInfo {
    name: "games",
    sections: &[Section::Elo],
    player_names: ["dev", "base"],
};

impl Kind for GamesSpec {
    fn kind(&self) -> RunKind {
        RunKind::Games
    }

    fn target_pairs(&self) -> Option<u64> {
        Some(self.pairs)
    }

    /// Pairs count alike in any lease.
    fn sized_by_time(&self) -> bool {
        true
    }

    fn set_target_pairs(&mut self, pairs: u64, _: u64, _: u32) -> Result<(), RunError> {
        self.pairs = pairs;
        Ok(())
    }

    fn engines(&self) -> Vec<&str> {
        self.lineup.engines()
    }

    fn registered(&self) -> Vec<&EngineRef> {
        self.lineup.registered()
    }

    fn lineup(&self) -> Option<&Lineup> {
        Some(&self.lineup)
    }

    fn lineup_mut(&mut self) -> Option<&mut Lineup> {
        Some(&mut self.lineup)
    }

    fn prepare(
        &mut self,
        registry: &Registry,
        settings: &MatchSettings,
    ) -> Result<Vec<Effect>, RunError> {
        self.lineup.resolve(registry, &settings.rules)?;
        Ok(Vec::new())
    }

    /// Dev first, base second.
    fn slice_work(&self, run: &RunStatus, _: &Slice) -> Result<SliceWork, RunError> {
        Ok(self
            .lineup
            .slice_work(&run.spec.settings, &self.dev_params, &self.base_params))
    }

    /// Finished once every pair is counted.
    fn apply(&self, run: &RunStatus, _: &Lease, _: &BatchOutcome) -> Result<Applied, RunError> {
        Ok(Applied::done_if(run.totals.pairs >= self.pairs))
    }

    /// Nothing of its own to rebuild.
    fn recount(&self, run: &RunStatus, _: &[StoredResult], _: &Lease) -> Result<Applied, RunError> {
        Ok(Applied::done_if(run.totals.pairs >= self.pairs))
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
        wire::check_params("games.dev_params", &dev_params)?;
        wire::check_params("games.base_params", &base_params)?;
        Ok(GamesSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            lineup: wire::lineup("games.engines", engines)?,
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
