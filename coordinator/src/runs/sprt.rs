//! SPRT runs: dev against base until the LLR leaves its bounds (or the pair
//! cap is reached). The LLR is evaluated on the run's pentanomial totals
//! after every counted result.

use serde::{Deserialize, Serialize};
use xq_proto::{BatchOutcome, EngineRef, Invalid, pb};

use super::wire;
use super::{
    Applied, Effect, Kind, KindInfo, Lease, Lineup, MatchSettings, Params, Progress, Registry, RunError,
    RunKind, RunStatus, Slice, SliceWork, StoredProgress, StoredResult, Section,
};
use crate::stats::sprt::{SprtOutcome, SprtParams, SprtState};
use crate::stats::{EloModel, Results};

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

/// An SPRT run's stored progress: the test after the last counted result
/// (its bounds are the spec's). `{"llr": -0.41, "state": "continue"}`.
#[derive(Serialize, Deserialize)]
struct Stored {
    llr: f64,
    state: SprtState,
}

/// An SPRT run: the LLR against its bounds and the Elo; dev against base.
pub const INFO: KindInfo = KindInfo {
    name: "sprt",
    sections: &[Section::Llr, Section::Elo],
    player_names: ["dev", "base"],
};

impl Kind for SprtSpec {
    fn kind(&self) -> RunKind {
        RunKind::Sprt
    }

    fn target_pairs(&self) -> Option<u64> {
        self.max_pairs
    }

    /// Pairs count alike in any lease.
    fn sized_by_time(&self) -> bool {
        true
    }

    fn sprt(&self) -> Option<&SprtParams> {
        Some(&self.sprt)
    }

    /// The pair cap; the test and its bounds stay as they are.
    fn set_target_pairs(&mut self, pairs: u64, _: u64, _: u32) -> Result<(), RunError> {
        self.max_pairs = Some(pairs);
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

    /// The test after the last counted result; `None` before one.
    fn read_progress(
        &self,
        run: u64,
        stored: Option<&StoredProgress>,
    ) -> Result<Progress, RunError> {
        let outcome = stored
            .map(|s| s.decode::<Stored>(run))
            .transpose()?
            .map(|Stored { llr, state }| SprtOutcome {
                llr,
                lower_bound: self.sprt.lower_bound(),
                upper_bound: self.sprt.upper_bound(),
                state,
            });
        Ok(Progress::Sprt(outcome))
    }

    /// Dev first, base second.
    fn slice_work(&self, run: &RunStatus, _: &Slice) -> Result<SliceWork, RunError> {
        Ok(self
            .lineup
            .slice_work(&run.spec.settings, &self.dev_params, &self.base_params))
    }

    /// The test's state: after the last counted result, or at its start.
    fn status(&self, run: &RunStatus, out: &mut pb::RunStatus) {
        out.sprt = Some(match run.progress.sprt() {
            Some(o) => pb::SprtStatus {
                llr: o.llr,
                lower_bound: o.lower_bound,
                upper_bound: o.upper_bound,
                state: super::wire::sprt_state(o.state).into(),
            },
            None => pb::SprtStatus {
                llr: 0.0,
                lower_bound: self.sprt.lower_bound(),
                upper_bound: self.sprt.upper_bound(),
                state: pb::SprtState::Continue.into(),
            },
        });
    }

    /// The test on the run's totals; finished at a bound or at the pair cap.
    fn apply(&self, run: &RunStatus, _: &Lease, _: &BatchOutcome) -> Result<Applied, RunError> {
        let test = self
            .sprt
            .evaluate(&Results::Pentanomial(run.totals.pentanomial))
            .map_err(|e| RunError::invalid("spec.sprt", e))?;
        let finished = test.state != SprtState::Continue
            || self.max_pairs.is_some_and(|m| run.totals.pairs >= m);
        let stored = StoredProgress::of(&Stored {
            llr: test.llr,
            state: test.state,
        })?;
        Ok(Applied {
            effects: vec![Effect::Progress(stored), Effect::LlrPoint(test.llr)],
            finished,
        })
    }

    /// The test on the rebuilt totals; it replaces the history row of the
    /// result that caused the recount.
    fn recount(
        &self,
        run: &RunStatus,
        _: &[StoredResult],
        lease: &Lease,
    ) -> Result<Applied, RunError> {
        self.apply(run, lease, &BatchOutcome::default())
    }
}

impl TryFrom<pb::SprtSpec> for SprtSpec {
    type Error = Invalid;

    fn try_from(s: pb::SprtSpec) -> Result<Self, Invalid> {
        let pb::SprtSpec {
            dev_params,
            base_params,
            elo0,
            elo1,
            alpha,
            beta,
            model,
            max_games,
            engines,
        } = s;
        let model = match pb::EloModel::try_from(model) {
            Ok(pb::EloModel::Logistic) => EloModel::Logistic,
            Ok(pb::EloModel::Normalized) => EloModel::Normalized,
            _ => return Err(Invalid::new("sprt.model", format!("unknown value {model}"))),
        };
        let sprt =
            SprtParams::new(elo0, elo1, alpha, beta, model).map_err(|e| Invalid::new("sprt", e))?;
        wire::check_params("sprt.dev_params", &dev_params)?;
        wire::check_params("sprt.base_params", &base_params)?;
        let max_pairs = match max_games {
            0 => None,
            1 => return Err(Invalid::new("sprt.max_games", "1 is less than a game pair")),
            g => Some(g / 2),
        };
        Ok(SprtSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            lineup: wire::lineup("sprt.engines", engines)?,
            sprt,
            max_pairs,
        })
    }
}

impl From<SprtSpec> for pb::SprtSpec {
    fn from(s: SprtSpec) -> Self {
        let SprtSpec {
            dev_params,
            base_params,
            lineup,
            sprt,
            max_pairs,
        } = s;
        pb::SprtSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            elo0: sprt.elo0(),
            elo1: sprt.elo1(),
            alpha: sprt.alpha(),
            beta: sprt.beta(),
            model: match sprt.model() {
                EloModel::Logistic => pb::EloModel::Logistic,
                EloModel::Normalized => pb::EloModel::Normalized,
            }
            .into(),
            max_games: max_pairs.map_or(0, |p| 2 * p),
            engines: Some(lineup.into()),
        }
    }
}
