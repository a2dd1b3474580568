//! Wire ↔ domain conversion for the coordinator's own messages: run specs
//! and settings, statuses, lease states. Each run kind's spec converts in its
//! own file under [`crate::runs`] (with the helpers [`check_params`] and
//! [`lineup`] from here); the types shared with workers convert in
//! `xq_proto::convert`.
//!
//! Requests become domain types with `TryFrom<pb::X>` (`Error =
//! xq_proto::Invalid`), destructuring every field so that a new proto field
//! cannot be forgotten; a garbled request names the field, and an
//! `*_UNSPECIFIED` enum value is rejected.

use prost::Message;
use xq_proto::pb;
use xq_proto::{GameRecord, Invalid, OpeningSource, Retention, required};

use crate::game_export::{Export, ExportedGame, GameQuery};
use crate::runs::health::WorkerHealth;
use crate::runs::{
    EngineSel, KindSpec, Lineup, MAX_BATCH_PAIRS, MatchSettings, RunKind, RunSpec, RunState,
    RunStatus, SpsaHistoryRow, VariantTotals, WorkerPolicy,
};
use crate::scheduler::{Grant, SubmitStatus};
use crate::stats::sprt::SprtState;
use crate::store::games::{ArchivedGame, FailureCount};
use crate::store::history::LlrPoint;
use crate::store::leases::LeaseState;
use crate::store::workers::NewWorker;
use xq_proto::variant_stats::VariantStats;

fn name(field: &str, value: &str) -> Result<(), Invalid> {
    if value.is_empty() || value.len() > 128 {
        return Err(Invalid::new(
            field,
            format!("{} must be 1 to 128 bytes", xq_proto::quote(value)),
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
            bench_nps,
        } = r;
        name("name", &worker_name)?;
        if version.len() > 128 {
            return Err(Invalid::new(
                "version",
                format!("{} is longer than 128 bytes", xq_proto::quote(&version)),
            ));
        }
        if threads == 0 {
            return Err(Invalid::new("threads", "must be at least 1"));
        }
        Ok(NewWorker {
            name: worker_name,
            threads,
            version,
            signature: bench_signature,
            bench_nps: (bench_nps > 0).then_some(bench_nps),
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
            workers,
            keep_games,
        } = s;
        name("spec.name", &run_name)?;
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
        workers.check(kind.kind(), settings.limit)?;
        Ok(RunSpec {
            name: run_name,
            priority,
            batch_pairs,
            settings,
            kind,
            workers,
            keep_games: Retention::from_wire(keep_games, "spec.keep_games")?,
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

/// The lineup a request names; registry entries are resolved when the run is
/// created.
pub fn lineup(field: &str, engines: Option<pb::EngineChoice>) -> Result<Lineup, Invalid> {
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
    no_asset_options(&format!("{field}.dev_options"), &dev_options)?;
    no_asset_options(&format!("{field}.base_options"), &base_options)?;
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
            kind: Some(kind.into()),
            workers: (!workers.is_default()).then(|| workers.into()),
            keep_games: pb::GameRetention::from(keep_games).into(),
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

/// An SPRT's state on the wire (the statistics crate knows no wire).
pub fn sprt_state(s: SprtState) -> pb::SprtState {
    match s {
        SprtState::Continue => pb::SprtState::Continue,
        SprtState::AcceptedH0 => pb::SprtState::AcceptedH0,
        SprtState::AcceptedH1 => pb::SprtState::AcceptedH1,
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

/// With the Elo estimate ([`RunStatus::elo`]) and the kind's own status
/// ([`crate::runs::Kind::status`]).
impl From<RunStatus> for pb::RunStatus {
    fn from(s: RunStatus) -> Self {
        let mut kind = pb::RunStatus::default();
        s.spec.kind.ops().status(&s, &mut kind);
        let elo = s.elo().map(|e| pb::EloEstimate {
            elo: e.elo,
            elo95: e.elo95,
            los: e.los,
        });
        let RunStatus {
            id,
            spec,
            state,
            totals,
            target_pairs,
            pairs_in_flight,
            created_ms,
            updated_ms,
            sprt: _,
            spsa: _,
            flag,
            variants,
            linked,
        } = s;
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
            sprt: kind.sprt,
            spsa: kind.spsa,
            flag: flag.unwrap_or_default(),
            variants: variants.into_iter().map(Into::into).collect(),
            linked_run_id: linked.unwrap_or(0),
        }
    }
}

impl From<WorkerHealth> for pb::WorkerHealth {
    fn from(w: WorkerHealth) -> Self {
        let WorkerHealth {
            sums,
            residual,
            standing,
        } = w;
        pb::WorkerHealth {
            worker_id: sums.worker_id,
            worker_name: sums.name,
            leases: sums.leases,
            pairs: sums.pairs,
            pentanomial: sums.pentanomial.to_vec(),
            time_losses: sums.time_losses,
            crashes: sums.crashes,
            residual,
            flag: standing.flag().unwrap_or_default().to_owned(),
            excluded: standing.excluded(),
        }
    }
}

impl TryFrom<pb::GameFilter> for GameQuery {
    type Error = Invalid;

    fn try_from(f: pb::GameFilter) -> Result<Self, Invalid> {
        let pb::GameFilter {
            reason,
            worker,
            lost,
        } = f;
        let mut q = GameQuery {
            worker: (!worker.is_empty()).then_some(worker),
            lost,
            ..GameQuery::default()
        };
        if !reason.is_empty() {
            q = q
                .with_reason(&reason)
                .map_err(|e| Invalid::new("filter.reason", e))?;
        }
        Ok(q)
    }
}

impl From<GameQuery> for pb::GameFilter {
    fn from(q: GameQuery) -> Self {
        let GameQuery {
            reason,
            worker,
            lost,
        } = q;
        pb::GameFilter {
            reason: reason.unwrap_or_default(),
            worker: worker.unwrap_or_default(),
            lost,
        }
    }
}

impl From<ExportedGame> for pb::StoredGame {
    fn from(g: ExportedGame) -> Self {
        let ExportedGame {
            game:
                ArchivedGame {
                    lease_id,
                    worker_id,
                    game_index,
                    record,
                },
            rules,
        } = g;
        pb::StoredGame {
            lease_id,
            worker_id,
            game_index,
            rules,
            record: Some(record.into()),
        }
    }
}

impl TryFrom<pb::StoredGame> for ExportedGame {
    type Error = Invalid;

    fn try_from(g: pb::StoredGame) -> Result<Self, Invalid> {
        let pb::StoredGame {
            lease_id,
            worker_id,
            game_index,
            rules,
            record,
        } = g;
        Ok(ExportedGame {
            game: ArchivedGame {
                lease_id,
                worker_id,
                game_index,
                record: GameRecord::try_from(required("record", record)?)?,
            },
            rules,
        })
    }
}

/// An export as stream messages of at most about `max_bytes` each (a chunk
/// holds at least one game); a run without games is one empty chunk, so the
/// client still learns the run's name and players.
pub fn export_chunks(export: Export, max_bytes: usize) -> Vec<pb::ExportGamesResponse> {
    let Export {
        run_id: _,
        run_name,
        players,
        games,
    } = export;
    let chunk = || pb::ExportGamesResponse {
        run_name: run_name.clone(),
        players: players.to_vec(),
        games: Vec::new(),
    };
    let mut out = vec![chunk()];
    let mut bytes = 0;
    for g in games {
        let wire = pb::StoredGame::from(g);
        let len = wire.encoded_len();
        if bytes > 0 && bytes + len > max_bytes {
            out.push(chunk());
            bytes = 0;
        }
        bytes += len;
        if let Some(last) = out.last_mut() {
            last.games.push(wire);
        }
    }
    out
}

/// The export of run `run_id` that `chunks` (in order) carry.
pub fn export_of_chunks(
    run_id: u64,
    chunks: Vec<pb::ExportGamesResponse>,
) -> Result<Export, Invalid> {
    let mut export = Export {
        run_id,
        run_name: String::new(),
        players: Default::default(),
        games: Vec::new(),
    };
    for (i, c) in chunks.into_iter().enumerate() {
        let pb::ExportGamesResponse {
            run_name,
            players,
            games,
        } = c;
        export.players = <[String; 2]>::try_from(players)
            .map_err(|p| Invalid::new("players", format!("{} names, not 2", p.len())))?;
        export.run_name = run_name;
        for (j, g) in games.into_iter().enumerate() {
            export.games.push(
                ExportedGame::try_from(g)
                    .map_err(|e| e.within(&format!("chunks[{i}].games[{j}]")))?,
            );
        }
    }
    Ok(export)
}

impl From<FailureCount> for pb::FailureCount {
    fn from(f: FailureCount) -> Self {
        pb::FailureCount {
            worker_id: f.worker_id,
            worker_name: f.worker_name,
            loser: f.loser.into(),
            reason: f.reason,
            games: f.games,
            overruns_ms: f.overruns_ms,
        }
    }
}

impl From<LlrPoint> for pb::LlrPoint {
    fn from(p: LlrPoint) -> Self {
        pb::LlrPoint {
            pairs: p.pairs,
            llr: p.llr,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
