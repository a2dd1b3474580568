//! Wire ↔ domain conversion for the coordinator: the one place where
//! `xq_proto::pb` meets [`crate::runs`] and [`crate::scheduler`].
//!
//! Requests become domain types with `TryFrom<pb::X>` (`Error =
//! xq_proto::Invalid`), destructuring every field so that a new proto field
//! cannot be forgotten; a garbled request names the field, and an
//! `*_UNSPECIFIED` enum value is rejected. The types shared with workers
//! convert in `xq_proto::convert`.

use xq_proto::pb;
use xq_proto::{Invalid, OpeningSource, required};

use crate::runs::{
    DEFAULT_BATCH_PAIRS, DEFAULT_SPSA_BATCH_PAIRS, EngineSel, GamesSpec, KindSpec, Lineup,
    MAX_BATCH_PAIRS, MatchSettings, RunKind, RunSpec, RunState, RunStatus, SprtSpec,
    SpsaHistoryRow, SpsaSpec, VariantTotals, VariantsSpec, variants::MAX_VARIANTS,
};
use crate::scheduler::{Grant, SubmitStatus};
use crate::spsa::SpsaParamSpec;
use crate::stats::elo::logistic_elo;
use crate::stats::sprt::{SprtParams, SprtState};
use crate::stats::{EloModel, Pentanomial, Results};
use crate::store::leases::LeaseState;
use crate::store::workers::NewWorker;
use xq_proto::variant_stats::VariantStats;

fn name(field: &str, value: &str) -> Result<(), Invalid> {
    if value.is_empty() || value.len() > 128 {
        return Err(Invalid::new(
            field,
            format!("{value:?} must be 1 to 128 bytes"),
        ));
    }
    Ok(())
}

impl TryFrom<pb::RegisterRequest> for NewWorker {
    type Error = Invalid;

    fn try_from(r: pb::RegisterRequest) -> Result<Self, Invalid> {
        let pb::RegisterRequest {
            name: worker_name,
            threads,
            version,
            bench_signature,
        } = r;
        name("name", &worker_name)?;
        if threads == 0 {
            return Err(Invalid::new("threads", "must be at least 1"));
        }
        Ok(NewWorker {
            name: worker_name,
            threads,
            version,
            signature: bench_signature,
            token_key: None,
        })
    }
}

impl TryFrom<pb::RunSpec> for RunSpec {
    type Error = Invalid;

    fn try_from(s: pb::RunSpec) -> Result<Self, Invalid> {
        let pb::RunSpec {
            name: run_name,
            priority,
            batch_pairs,
            settings,
            kind,
        } = s;
        name("spec.name", &run_name)?;
        let kind = match required("spec.kind", kind)? {
            pb::run_spec::Kind::Sprt(s) => KindSpec::Sprt(s.try_into()?),
            pb::run_spec::Kind::Spsa(s) => KindSpec::Spsa(s.try_into()?),
            pb::run_spec::Kind::Games(g) => KindSpec::Games(g.try_into()?),
            pb::run_spec::Kind::Variants(v) => KindSpec::Variants(v.try_into()?),
        };
        let batch_pairs = match (batch_pairs, &kind) {
            (0, KindSpec::Spsa(_)) => DEFAULT_SPSA_BATCH_PAIRS,
            (0, _) => DEFAULT_BATCH_PAIRS,
            (b, _) if b > MAX_BATCH_PAIRS => {
                return Err(Invalid::new(
                    "spec.batch_pairs",
                    format!("{b} is above {MAX_BATCH_PAIRS}"),
                ));
            }
            (b, _) => b,
        };
        Ok(RunSpec {
            name: run_name,
            priority,
            batch_pairs,
            settings: required("spec.settings", settings)?.try_into()?,
            kind,
        })
    }
}

/// Checks parameter overrides by name and range, as the engine will apply them.
fn check_params(
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

/// The lineup a request names; registry entries are resolved when the run is
/// created.
fn lineup(field: &str, engines: Option<pb::EngineChoice>) -> Result<Lineup, Invalid> {
    let Some(pb::EngineChoice {
        dev_engine,
        base_engine,
        dev_options,
        base_options,
        dev_limit,
        base_limit,
    }) = engines
    else {
        return Ok(Lineup::default());
    };
    let sel = |name: String, options: std::collections::HashMap<String, String>| {
        (!name.is_empty()).then(|| EngineSel {
            name,
            options: options.into_iter().collect(),
            registered: None,
        })
    };
    let limit = |l: Option<pb::Limit>| -> Result<_, Invalid> {
        l.map(xq_proto::Limit::try_from)
            .transpose()
            .map_err(|e| e.within(field))
    };
    Ok(Lineup {
        dev: sel(dev_engine, dev_options),
        base: sel(base_engine, base_options),
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
        let name = |s: &Option<EngineSel>| s.as_ref().map(|s| s.name.clone()).unwrap_or_default();
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
        } = m;
        if hash_mb == 0 {
            return Err(Invalid::new("settings.hash_mb", "must be at least 1"));
        }
        rules
            .parse::<xq_engine::RuleSet>()
            .map_err(|e| Invalid::new("settings.rules", e))?;
        let openings = OpeningSource::from_wire(openings, "settings.openings")?;
        if let OpeningSource::Lines(lines) = &openings {
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
        })
    }
}

impl TryFrom<pb::VariantsSpec> for VariantsSpec {
    type Error = Invalid;

    fn try_from(v: pb::VariantsSpec) -> Result<Self, Invalid> {
        let pb::VariantsSpec {
            rules,
            params,
            pairs,
        } = v;
        if !(2..=MAX_VARIANTS).contains(&rules.len()) {
            return Err(Invalid::new(
                "variants.rules",
                format!("{} rule sets, need 2 to {MAX_VARIANTS}", rules.len()),
            ));
        }
        let mut seen: Vec<xq_engine::RuleSet> = Vec::with_capacity(rules.len());
        for r in &rules {
            let parsed: xq_engine::RuleSet = r
                .parse()
                .map_err(|e| Invalid::new("variants.rules", format!("'{r}': {e}")))?;
            if seen.contains(&parsed) {
                return Err(Invalid::new(
                    "variants.rules",
                    format!("'{r}' repeats an earlier rule set"),
                ));
            }
            seen.push(parsed);
        }
        if pairs == 0 {
            return Err(Invalid::new("variants.pairs", "must be at least 1"));
        }
        check_params("variants.params", &params)?;
        Ok(VariantsSpec {
            rules,
            params: params.into_iter().collect(),
            pairs,
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
            rules,
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
            rules,
            pairs,
            reasons: reasons.into_iter().collect(),
            total_plies,
            stats,
        })
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
        check_params("sprt.dev_params", &dev_params)?;
        check_params("sprt.base_params", &base_params)?;
        let max_pairs = match max_games {
            0 => None,
            1 => return Err(Invalid::new("sprt.max_games", "1 is less than a game pair")),
            g => Some(g / 2),
        };
        Ok(SprtSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            lineup: lineup("sprt.engines", engines)?,
            sprt,
            max_pairs,
        })
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
        check_params("games.dev_params", &dev_params)?;
        check_params("games.base_params", &base_params)?;
        Ok(GamesSpec {
            dev_params: dev_params.into_iter().collect(),
            base_params: base_params.into_iter().collect(),
            lineup: lineup("games.engines", engines)?,
            pairs,
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
        } = s;
        let kind = match kind {
            KindSpec::Sprt(s) => pb::run_spec::Kind::Sprt(pb::SprtSpec {
                dev_params: s.dev_params.into_iter().collect(),
                base_params: s.base_params.into_iter().collect(),
                elo0: s.sprt.elo0(),
                elo1: s.sprt.elo1(),
                alpha: s.sprt.alpha(),
                beta: s.sprt.beta(),
                model: match s.sprt.model() {
                    EloModel::Logistic => pb::EloModel::Logistic,
                    EloModel::Normalized => pb::EloModel::Normalized,
                }
                .into(),
                max_games: s.max_pairs.map_or(0, |p| 2 * p),
                engines: Some(s.lineup.into()),
            }),
            KindSpec::Spsa(s) => pb::run_spec::Kind::Spsa(pb::SpsaSpec {
                params: s
                    .params
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
                games: s.games,
            }),
            KindSpec::Games(g) => pb::run_spec::Kind::Games(pb::GamesSpec {
                dev_params: g.dev_params.into_iter().collect(),
                base_params: g.base_params.into_iter().collect(),
                pairs: g.pairs,
                engines: Some(g.lineup.into()),
            }),
            KindSpec::Variants(v) => pb::run_spec::Kind::Variants(pb::VariantsSpec {
                rules: v.rules,
                params: v.params.into_iter().collect(),
                pairs: v.pairs,
            }),
        };
        let MatchSettings {
            limit,
            hash_mb,
            rules,
            openings,
            seed,
            adjudication,
            draw_contempt,
        } = settings;
        pb::RunSpec {
            name,
            priority,
            batch_pairs,
            settings: Some(pb::MatchSettings {
                limit: Some(limit.into()),
                hash_mb,
                rules,
                openings: Some(openings.into()),
                seed,
                adjudication: Some(adjudication.into()),
                draw_contempt,
            }),
            kind: Some(kind),
        }
    }
}

impl From<RunKind> for pb::RunKind {
    fn from(k: RunKind) -> Self {
        match k {
            RunKind::Sprt => pb::RunKind::Sprt,
            RunKind::Spsa => pb::RunKind::Spsa,
            RunKind::Games => pb::RunKind::Games,
            RunKind::Variants => pb::RunKind::Variants,
        }
    }
}

impl From<RunState> for pb::RunState {
    fn from(s: RunState) -> Self {
        match s {
            RunState::Active => pb::RunState::Active,
            RunState::Finished => pb::RunState::Finished,
            RunState::Stopped => pb::RunState::Stopped,
        }
    }
}

impl From<SprtState> for pb::SprtState {
    fn from(s: SprtState) -> Self {
        match s {
            SprtState::Continue => pb::SprtState::Continue,
            SprtState::AcceptedH0 => pb::SprtState::AcceptedH0,
            SprtState::AcceptedH1 => pb::SprtState::AcceptedH1,
        }
    }
}

/// `None` (a lease that is not the caller's) is `UNKNOWN`.
pub fn lease_state(state: Option<LeaseState>) -> pb::LeaseState {
    match state {
        Some(LeaseState::Active) => pb::LeaseState::Active,
        Some(LeaseState::Done) => pb::LeaseState::Done,
        Some(LeaseState::Expired) => pb::LeaseState::Expired,
        Some(LeaseState::Released) => pb::LeaseState::Released,
        Some(LeaseState::Cancelled) => pb::LeaseState::Cancelled,
        None => pb::LeaseState::Unknown,
    }
}

impl From<SubmitStatus> for pb::SubmitStatus {
    fn from(s: SubmitStatus) -> Self {
        match s {
            SubmitStatus::Accepted => pb::SubmitStatus::Accepted,
            SubmitStatus::Duplicate => pb::SubmitStatus::Duplicate,
            SubmitStatus::ExpiredIgnored => pb::SubmitStatus::ExpiredIgnored,
            SubmitStatus::CancelledIgnored => pb::SubmitStatus::CancelledIgnored,
        }
    }
}

impl From<Grant> for pb::Lease {
    fn from(g: Grant) -> Self {
        let Grant {
            lease_id,
            run_id,
            kind,
            work,
            deadline_ms,
        } = g;
        pb::Lease {
            lease_id,
            run_id,
            kind: pb::RunKind::from(kind).into(),
            work: Some(work.into()),
            deadline_unix_ms: deadline_ms,
        }
    }
}

/// Adds the Elo estimate computed from the pentanomial totals.
impl From<RunStatus> for pb::RunStatus {
    fn from(s: RunStatus) -> Self {
        let RunStatus {
            id,
            spec,
            state,
            totals,
            target_pairs,
            pairs_in_flight,
            created_ms,
            updated_ms,
            sprt,
            spsa,
            flag,
            variants,
        } = s;
        let elo = (totals.pairs > 0)
            .then(|| logistic_elo(&Results::Pentanomial(Pentanomial(totals.pentanomial))).ok())
            .flatten()
            .map(|e| pb::EloEstimate {
                elo: e.elo,
                elo95: e.elo95,
                los: e.los,
            });
        let sprt = match (&spec.kind, sprt) {
            (_, Some(o)) => Some(pb::SprtStatus {
                llr: o.llr,
                lower_bound: o.lower_bound,
                upper_bound: o.upper_bound,
                state: pb::SprtState::from(o.state).into(),
            }),
            (KindSpec::Sprt(s), None) => Some(pb::SprtStatus {
                llr: 0.0,
                lower_bound: s.sprt.lower_bound(),
                upper_bound: s.sprt.upper_bound(),
                state: pb::SprtState::Continue.into(),
            }),
            _ => None,
        };
        let spsa = spsa.map(|st| pb::SpsaStatus {
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
        pb::RunStatus {
            run_id: id,
            spec: Some(spec.into()),
            state: pb::RunState::from(state).into(),
            totals: Some(totals.into()),
            target_pairs: target_pairs.unwrap_or(0),
            pairs_in_flight,
            created_unix_ms: created_ms,
            updated_unix_ms: updated_ms,
            elo,
            sprt,
            spsa,
            flag: flag.unwrap_or_default(),
            variants: variants.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<SpsaHistoryRow> for pb::SpsaHistoryRow {
    fn from(r: SpsaHistoryRow) -> Self {
        let SpsaHistoryRow {
            lease_id,
            iter,
            wins,
            draws,
            losses,
            theta,
            unix_ms,
        } = r;
        pb::SpsaHistoryRow {
            lease_id,
            iter,
            wins,
            draws,
            losses,
            theta,
            unix_ms,
        }
    }
}
