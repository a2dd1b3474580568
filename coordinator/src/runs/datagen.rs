//! Data-generation runs: one engine (the built-in one or a registered one,
//! both players alike) plays itself at a fixed node count from the run's
//! openings, `pairs` pairs, every game kept; `datagen-export` turns the
//! stored games into training positions.
//!
//! Leases set `OpeningSlice::per_game`, as variants runs do: the two players
//! are the same engine, so a colour-swapped replay of one opening would
//! repeat the game move for move. The kind's own progress is one
//! [`VariantTotals`] under the run's rule set: Red's results and the games'
//! lengths, summed from the statistics every result carries, stored as its
//! JSON.

use serde::{Deserialize, Serialize};
use xq_proto::variant_stats::VariantStats;
use xq_proto::{BatchOutcome, EngineRef, Invalid, Limit, Retention, pb};

use super::{
    Applied, Effect, EngineSel, Kind, KindInfo, Lease, MatchSettings, Params, Progress, Registry, RunError,
    RunKind, RunStatus, Slice, SliceWork, StoredProgress, StoredResult, VariantTotals, wire, Section,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatagenSpec {
    /// The engine from the registry; `None`: the built-in engine.
    pub engine: Option<EngineSel>,
    /// Parameter overrides of the built-in engine (empty with `engine`).
    pub params: Params,
    pub pairs: u64,
}

impl DatagenSpec {
    /// The totals after adding `outcome` (with its checked `stats`) to `run`'s.
    fn added(run: &RunStatus, outcome: &BatchOutcome, stats: &VariantStats) -> VariantTotals {
        let mut totals = run
            .progress
            .datagen()
            .cloned()
            .unwrap_or_else(|| VariantTotals {
                rules: run.spec.settings.rules,
                ..Default::default()
            });
        totals.add(outcome, stats);
        totals
    }
}

/// A datagen run: positions, Red's results and game lengths; one engine as
/// first and second player.
pub const INFO: KindInfo = KindInfo {
    name: "datagen",
    sections: &[Section::Datagen],
    player_names: ["first", "second"],
};

impl Kind for DatagenSpec {
    fn kind(&self) -> RunKind {
        RunKind::Datagen
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

    /// A fixed node count, and every game kept: the export reads them.
    fn check(&self, settings: &MatchSettings, keep: Retention) -> Result<(), Invalid> {
        if !matches!(settings.limit, Limit::Nodes(_)) {
            return Err(Invalid::new(
                "spec.settings.limit",
                "a datagen run plays at a fixed node count (nodes=N)",
            ));
        }
        if keep != Retention::All {
            return Err(Invalid::new(
                "spec.keep_games",
                "a datagen run keeps every game (its positions are the data)",
            ));
        }
        Ok(())
    }

    fn engines(&self) -> Vec<&str> {
        self.engine.iter().map(|s| s.name.as_str()).collect()
    }

    fn registered(&self) -> Vec<&EngineRef> {
        self.engine
            .iter()
            .filter_map(|s| s.registered.as_ref())
            .collect()
    }

    fn prepare(
        &mut self,
        registry: &Registry,
        settings: &MatchSettings,
    ) -> Result<Vec<Effect>, RunError> {
        if let Some(sel) = &mut self.engine {
            sel.resolve(registry, &settings.rules)?;
        }
        Ok(Vec::new())
    }

    /// Red's results and the games' lengths; `None` before a result.
    fn read_progress(
        &self,
        run: u64,
        stored: Option<&StoredProgress>,
    ) -> Result<Progress, RunError> {
        let totals = stored.map(|s| s.decode(run)).transpose()?;
        Ok(Progress::Datagen(totals.map(Box::new)))
    }

    /// Both players: the engine with the same parameters; each game takes
    /// its own opening.
    fn slice_work(&self, run: &RunStatus, _: &Slice) -> Result<SliceWork, RunError> {
        let settings = &run.spec.settings;
        let mut player = settings.player(self.params.clone());
        if let Some(sel) = &self.engine {
            let mut engine = sel.registered.clone().ok_or_else(|| {
                RunError::Corrupt(format!(
                    "datagen run {}: engine {} was never resolved",
                    run.id,
                    xq_proto::quote(&sel.name)
                ))
            })?;
            engine.options.extend(sel.options.clone());
            player.engine = Some(engine);
        }
        Ok(SliceWork {
            players: [player.clone(), player],
            rules: settings.rules,
            per_game: true,
            spsa_request: None,
        })
    }

    /// Adds the lease's games to the run's Red-view totals; finished once
    /// every pair is counted.
    fn apply(
        &self,
        run: &RunStatus,
        _: &Lease,
        outcome: &BatchOutcome,
    ) -> Result<Applied, RunError> {
        let stats = outcome.variant.as_ref().ok_or_else(|| {
            RunError::invalid("results.variant", "missing (a datagen run needs it)")
        })?;
        let totals = Self::added(run, outcome, stats);
        Ok(Applied {
            effects: vec![Effect::Progress(StoredProgress::of(&totals)?)],
            finished: run.totals.pairs >= self.pairs,
        })
    }

    /// The totals from the kept results.
    fn recount(
        &self,
        run: &RunStatus,
        kept: &[StoredResult],
        _: &Lease,
    ) -> Result<Applied, RunError> {
        let mut totals = VariantTotals {
            rules: run.spec.settings.rules,
            ..Default::default()
        };
        for r in kept {
            let stats = r.stats.as_ref().ok_or_else(|| {
                RunError::Corrupt(format!(
                    "datagen lease {} has no stored statistics",
                    r.lease_id
                ))
            })?;
            let outcome = BatchOutcome {
                totals: r.totals.clone(),
                ..BatchOutcome::default()
            };
            totals.add(&outcome, stats);
        }
        Ok(Applied {
            effects: vec![Effect::Progress(StoredProgress::of(&totals)?)],
            finished: run.totals.pairs >= self.pairs,
        })
    }
}

impl TryFrom<pb::DatagenSpec> for DatagenSpec {
    type Error = Invalid;

    fn try_from(d: pb::DatagenSpec) -> Result<Self, Invalid> {
        let pb::DatagenSpec {
            engine,
            engine_options,
            params,
            pairs,
        } = d;
        if pairs == 0 {
            return Err(Invalid::new("datagen.pairs", "must be at least 1"));
        }
        if engine.chars().count() > 64 {
            return Err(Invalid::new("datagen.engine", "longer than 64 characters"));
        }
        if engine.is_empty() && !engine_options.is_empty() {
            return Err(Invalid::new(
                "datagen.engine_options",
                "options need a registered engine (datagen.engine)",
            ));
        }
        if !engine.is_empty() && !params.is_empty() {
            return Err(Invalid::new(
                "datagen.params",
                "parameters are the built-in engine's; give a registered engine options",
            ));
        }
        wire::no_asset_options("datagen.engine_options", &engine_options)?;
        wire::check_params("datagen.params", &params)?;
        Ok(DatagenSpec {
            engine: (!engine.is_empty()).then(|| EngineSel {
                name: engine,
                options: engine_options.into_iter().collect(),
                registered: None,
            }),
            params: params.into_iter().collect(),
            pairs,
        })
    }
}

impl From<DatagenSpec> for pb::DatagenSpec {
    fn from(d: DatagenSpec) -> Self {
        let DatagenSpec {
            engine,
            params,
            pairs,
        } = d;
        let (engine, engine_options) = engine
            .map(|e| (e.name, e.options.into_iter().collect()))
            .unwrap_or_default();
        pb::DatagenSpec {
            engine,
            engine_options,
            params: params.into_iter().collect(),
            pairs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_round_trips_and_bad_specs_name_their_field() {
        let wire = pb::DatagenSpec {
            engine: "pika".into(),
            engine_options: [("Hash".to_owned(), "16".to_owned())].into(),
            params: Default::default(),
            pairs: 5,
        };
        let spec = DatagenSpec::try_from(wire.clone()).unwrap();
        assert_eq!(spec.engines(), ["pika"]);
        assert_eq!(pb::DatagenSpec::from(spec), wire);
        for (bad, field) in [
            (
                pb::DatagenSpec {
                    pairs: 0,
                    ..wire.clone()
                },
                "datagen.pairs",
            ),
            (
                pb::DatagenSpec {
                    engine: String::new(),
                    ..wire.clone()
                },
                "datagen.engine_options",
            ),
            (
                pb::DatagenSpec {
                    params: [("NoSuchParam".to_owned(), 1)].into(),
                    engine: String::new(),
                    engine_options: Default::default(),
                    pairs: 1,
                },
                "datagen.params",
            ),
        ] {
            let err = DatagenSpec::try_from(bad).unwrap_err().to_string();
            assert!(err.contains(field), "{err}");
        }
    }
}
