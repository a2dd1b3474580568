//! The wire form of runs: specs, settings, engine choices, variant totals,
//! kinds and states. Each kind's own spec converts in its file; the helpers
//! they share ([`check_params`], [`lineup`], [`no_asset_options`]) are here.

use xq_proto::capacity::MAX_ENGINE_THREADS;
use xq_proto::pb;
use xq_proto::variant_stats::VariantStats;
use xq_proto::{Invalid, OpeningSource, Retention, required};

use super::{
    EngineSel, KindSpec, Lineup, MAX_BATCH_PAIRS, MatchSettings, RunSpec, RunState, VariantTotals,
    WorkerPolicy,
};
use crate::stats::sprt::SprtState;

impl TryFrom<pb::RunSpec> for RunSpec {
    type Error = Invalid;

    fn try_from(s: pb::RunSpec) -> Result<Self, Invalid> {
        let pb::RunSpec {
            name: run_name,
            priority,
            batch_pairs,
            settings,
            kind,
            workers,
            keep_games,
        } = s;
        xq_proto::named("spec.name", &run_name)?;
        let kind = KindSpec::try_from(required("spec.kind", kind)?)?;
        let mut kind = kind;
        let batch_pairs = match kind.ops_mut().batch_pairs(batch_pairs)? {
            b if b > MAX_BATCH_PAIRS => {
                return Err(Invalid::new(
                    "spec.batch_pairs",
                    format!("{b} is above {MAX_BATCH_PAIRS}"),
                ));
            }
            b => b,
        };
        let settings: MatchSettings = required("spec.settings", settings)?.try_into()?;
        let workers = WorkerPolicy::try_from(workers.unwrap_or_default())?;
        let keep_games = Retention::from_wire(keep_games, "spec.keep_games")?;
        kind.ops().check(&settings, keep_games)?;
        workers.check(kind.kind(), settings.limit)?;
        Ok(RunSpec {
            name: run_name,
            priority,
            batch_pairs,
            settings,
            kind,
            workers,
            keep_games,
        })
    }
}

/// Checks parameter overrides by name and range, as the engine will apply them.
pub fn check_params(
    field: &str,
    params: &std::collections::HashMap<String, i64>,
) -> Result<(), Invalid> {
    let mut engine = xq_engine::Params::default();
    for (name, &value) in params {
        engine
            .set(name, value)
            .map_err(|e| Invalid::new(field, e))?;
    }
    Ok(())
}

/// Per-run engine options may not name assets: an engine's assets are part of
/// its registration (`engine add --option`), where its bench signature is
/// measured with them.
pub fn no_asset_options(
    field: &str,
    options: &std::collections::HashMap<String, String>,
) -> Result<(), Invalid> {
    match options
        .iter()
        .find(|(_, v)| xq_proto::blob::asset_reference(v).is_some())
    {
        Some((name, value)) => Err(Invalid::new(
            format!("{field}.{name}"),
            format!(
                "{value:?} names an asset; a run's options cannot (register the engine with \
                 it: engine add --option {name}={value})"
            ),
        )),
        None => Ok(()),
    }
}

/// The lineup a request names: registry entries are resolved when the run
/// is created, and so are the commits of source engines named by a branch
/// or tag.
pub fn lineup(field: &str, engines: Option<pb::EngineChoice>) -> Result<Lineup, Invalid> {
    let Some(pb::EngineChoice {
        dev_engine,
        base_engine,
        dev_options,
        base_options,
        dev_limit,
        base_limit,
        dev_source,
        base_source,
    }) = engines
    else {
        return Ok(Lineup::default());
    };
    no_asset_options(&format!("{field}.dev_options"), &dev_options)?;
    no_asset_options(&format!("{field}.base_options"), &base_options)?;
    let sel = |side: &str,
               name: String,
               source: Option<pb::EngineRef>,
               options: std::collections::HashMap<String, String>|
     -> Result<Option<EngineSel>, Invalid> {
        let options = options.into_iter().collect();
        match (name.is_empty(), source) {
            (true, None) => Ok(None),
            (false, None) => Ok(Some(EngineSel {
                name,
                options,
                registered: None,
            })),
            (true, Some(source)) => {
                let engine = xq_proto::EngineRef::source_request(source)
                    .map_err(|e| e.within(&format!("{field}.{side}_source")))?;
                Ok(Some(EngineSel {
                    name: engine.name.clone(),
                    options,
                    registered: Some(engine),
                }))
            }
            (false, Some(_)) => Err(Invalid::new(
                format!("{field}.{side}_source"),
                format!("name a registered engine ({side}_engine) or a source, not both"),
            )),
        }
    };
    let limit = |l: Option<pb::Limit>| -> Result<_, Invalid> {
        l.map(xq_proto::Limit::try_from)
            .transpose()
            .map_err(|e| e.within(field))
    };
    Ok(Lineup {
        dev: sel("dev", dev_engine, dev_source, dev_options)?,
        base: sel("base", base_engine, base_source, base_options)?,
        dev_limit: limit(dev_limit)?,
        base_limit: limit(base_limit)?,
    })
}

impl From<Lineup> for pb::EngineChoice {
    fn from(l: Lineup) -> Self {
        let Lineup {
            dev,
            base,
            dev_limit,
            base_limit,
        } = l;
        let name = |s: &Option<EngineSel>| match s {
            Some(s) if s.source().is_none() => s.name.clone(),
            _ => String::new(),
        };
        let source = |s: &Option<EngineSel>| {
            let s = s.as_ref().filter(|s| s.source().is_some())?;
            s.registered.clone().map(Into::into)
        };
        let options = |s: &Option<EngineSel>| {
            s.as_ref()
                .map(|s| s.options.clone().into_iter().collect())
                .unwrap_or_default()
        };
        pb::EngineChoice {
            dev_engine: name(&dev),
            base_engine: name(&base),
            dev_options: options(&dev),
            base_options: options(&base),
            dev_limit: dev_limit.map(Into::into),
            base_limit: base_limit.map(Into::into),
            dev_source: source(&dev),
            base_source: source(&base),
        }
    }
}

impl TryFrom<pb::MatchSettings> for MatchSettings {
    type Error = Invalid;

    fn try_from(m: pb::MatchSettings) -> Result<Self, Invalid> {
        let pb::MatchSettings {
            limit,
            hash_mb,
            rules,
            openings,
            seed,
            adjudication,
            draw_contempt,
            threads,
        } = m;
        if hash_mb == 0 {
            return Err(Invalid::new("settings.hash_mb", "must be at least 1"));
        }
        let threads = threads.max(1);
        if threads > MAX_ENGINE_THREADS {
            return Err(Invalid::new(
                "settings.threads",
                format!("{threads} search threads per engine; at most {MAX_ENGINE_THREADS}"),
            ));
        }
        let rules = xq_proto::rule_set::parse("settings.rules", &rules)?;
        let openings = OpeningSource::from_wire(openings, "settings.openings")?;
        if let OpeningSource::Lines { lines, .. } = &openings {
            xq_proto::openings::parse_lines(&lines.join("\n"))
                .map_err(|e| Invalid::new("settings.openings.lines", e))?;
        }
        Ok(MatchSettings {
            limit: required("settings.limit", limit)?.try_into()?,
            hash_mb,
            rules,
            openings,
            seed,
            adjudication: required("settings.adjudication", adjudication)?.into(),
            draw_contempt,
            threads,
        })
    }
}

impl From<VariantTotals> for pb::VariantTotals {
    fn from(v: VariantTotals) -> Self {
        let VariantTotals {
            rules,
            pairs,
            reasons,
            total_plies,
            stats,
        } = v;
        pb::VariantTotals {
            rules: xq_proto::rule_set::name(&rules),
            pairs,
            reasons: reasons.into_iter().collect(),
            total_plies,
            stats: Some(stats.into()),
        }
    }
}

/// Checks the shape and that the counts fit the pairs (for reports of a
/// status read back from the wire).
impl TryFrom<pb::VariantTotals> for VariantTotals {
    type Error = Invalid;

    fn try_from(v: pb::VariantTotals) -> Result<Self, Invalid> {
        let pb::VariantTotals {
            rules,
            pairs,
            reasons,
            total_plies,
            stats,
        } = v;
        let stats = VariantStats::try_from(stats.unwrap_or_default())?;
        let pairs32 =
            u32::try_from(pairs).map_err(|_| Invalid::new("variant.pairs", "too large"))?;
        stats
            .check(pairs32)
            .map_err(|e| Invalid::new("variant.stats", e))?;
        Ok(VariantTotals {
            rules: xq_proto::rule_set::parse("variant.rules", &rules)?,
            pairs,
            reasons: reasons.into_iter().collect(),
            total_plies,
            stats,
        })
    }
}

impl From<RunSpec> for pb::RunSpec {
    fn from(s: RunSpec) -> Self {
        let RunSpec {
            name,
            priority,
            batch_pairs,
            settings,
            kind,
            workers,
            keep_games,
        } = s;
        let MatchSettings {
            limit,
            hash_mb,
            rules,
            openings,
            seed,
            adjudication,
            draw_contempt,
            threads,
        } = settings;
        pb::RunSpec {
            name,
            priority,
            batch_pairs,
            settings: Some(pb::MatchSettings {
                limit: Some(limit.into()),
                hash_mb,
                rules: xq_proto::rule_set::name(&rules),
                openings: Some(openings.into()),
                seed,
                adjudication: Some(adjudication.into()),
                draw_contempt,
                threads,
            }),
            kind: Some(kind.into()),
            workers: (!workers.is_default()).then(|| workers.into()),
            keep_games: pb::GameRetention::from(keep_games).into(),
        }
    }
}

impl From<RunState> for pb::RunState {
    fn from(s: RunState) -> Self {
        match s {
            RunState::Pending => pb::RunState::Pending,
            RunState::Rejected => pb::RunState::Rejected,
            RunState::Active => pb::RunState::Active,
            RunState::Finished => pb::RunState::Finished,
            RunState::Stopped => pb::RunState::Stopped,
        }
    }
}

impl RunState {
    /// A state on the wire; `None` for `UNSPECIFIED`.
    pub fn of_wire(state: pb::RunState) -> Option<RunState> {
        match state {
            pb::RunState::Pending => Some(RunState::Pending),
            pb::RunState::Rejected => Some(RunState::Rejected),
            pb::RunState::Active => Some(RunState::Active),
            pb::RunState::Finished => Some(RunState::Finished),
            pb::RunState::Stopped => Some(RunState::Stopped),
            pb::RunState::Unspecified => None,
        }
    }
}

/// An SPRT's state on the wire (the statistics crate knows no wire).
pub fn sprt_state(s: SprtState) -> pb::SprtState {
    match s {
        SprtState::Continue => pb::SprtState::Continue,
        SprtState::AcceptedH0 => pb::SprtState::AcceptedH0,
        SprtState::AcceptedH1 => pb::SprtState::AcceptedH1,
    }
}

/// An SPRT's state from the wire; `None` for `UNSPECIFIED`.
pub fn sprt_state_of_wire(s: pb::SprtState) -> Option<SprtState> {
    match s {
        pb::SprtState::Continue => Some(SprtState::Continue),
        pb::SprtState::AcceptedH0 => Some(SprtState::AcceptedH0),
        pb::SprtState::AcceptedH1 => Some(SprtState::AcceptedH1),
        pb::SprtState::Unspecified => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source_ref(commit: &str, git_ref: &str) -> pb::EngineRef {
        pb::EngineRef {
            name: "engine@main".to_owned(),
            signature: Some(4242),
            protocol: pb::EngineProtocol::Uci.into(),
            source: Some(pb::EngineSource {
                repo: "https://example.org/engine.git".to_owned(),
                commit: commit.to_owned(),
                git_ref: git_ref.to_owned(),
                build: "make".to_owned(),
                binary: "engine".to_owned(),
                needs: Vec::new(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_source_engine_round_trips_through_the_lineup_and_excludes_a_name() {
        let choice = pb::EngineChoice {
            base_source: Some(source_ref("", "main")),
            base_options: [("Hash".to_owned(), "8".to_owned())].into(),
            dev_engine: "pika".to_owned(),
            ..Default::default()
        };
        let l = lineup("games.engines", Some(choice.clone())).unwrap();
        assert_eq!(l.engines(), ["pika"], "a source is no registry name");
        assert_eq!(l.sources().len(), 1);
        assert_eq!(pb::EngineChoice::from(l), choice);
        let both = pb::EngineChoice {
            dev_engine: "pika".to_owned(),
            dev_source: Some(source_ref("", "main")),
            ..Default::default()
        };
        let e = lineup("games.engines", Some(both)).unwrap_err();
        assert_eq!(e.field, "games.engines.dev_source");
        let unnamed = pb::EngineChoice {
            dev_source: Some(source_ref("", "")),
            ..Default::default()
        };
        let e = lineup("games.engines", Some(unnamed)).unwrap_err();
        assert_eq!(e.field, "games.engines.dev_source.engine.source.commit");
    }

    #[test]
    fn a_runs_options_cannot_name_assets() {
        let choice = |value: &str| pb::EngineChoice {
            dev_engine: "pika".to_owned(),
            dev_options: [("EvalFile".to_owned(), value.to_owned())].into(),
            ..Default::default()
        };
        assert!(lineup("sprt.engines", Some(choice("/nets/nn.nnue"))).is_ok());
        let e = lineup("sprt.engines", Some(choice("asset:nn.nnue"))).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("sprt.engines.dev_options.EvalFile") && text.contains("engine add"),
            "{text}"
        );
    }

    #[test]
    fn a_built_in_run_takes_search_threads_up_to_the_bound() {
        let spec = |threads| {
            let mut spec = crate::runs::games_spec(8, 2);
            spec.settings.threads = threads;
            spec
        };
        let two = spec(2);
        assert_eq!(RunSpec::try_from(pb::RunSpec::from(two.clone())), Ok(two));
        let e = RunSpec::try_from(pb::RunSpec::from(spec(MAX_ENGINE_THREADS + 1))).unwrap_err();
        assert_eq!(e.field, "settings.threads");
    }
}
