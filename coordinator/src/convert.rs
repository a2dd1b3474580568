//! Wire ↔ domain conversion for the coordinator's own messages: statuses,
//! grants, lease states, worker health, game exports, histories, tokens
//! and roles. Run specs
//! and settings convert in [`crate::runs::wire`] (each kind's spec in its
//! own file); the types shared with workers convert in `xq_proto::convert`.
//!
//! Requests become domain types with `TryFrom<pb::X>` (`Error =
//! xq_proto::Invalid`), destructuring every field so that a new proto field
//! cannot be forgotten; a garbled request names the field, and an
//! `*_UNSPECIFIED` enum value is rejected.

use std::time::Duration;

use prost::Message;
use xq_proto::pb;
use xq_proto::{GameRecord, Invalid, Machine, WorkerVersion, required};

use crate::access::{Role, UserRole};
use crate::events::{Event, EventFilter, EventKind};
use crate::game_export::{Export, ExportedGame, GameQuery};
use crate::runs::LeaseState;
use crate::runs::health::WorkerHealth;
use crate::runs::{RunStatus, SpsaHistoryRow};
use crate::service::{Grant, SubmitStatus};
use crate::store::build_failures::StoredFailure;
use crate::store::games::{ArchivedGame, FailureCount};
use crate::store::history::LlrPoint;
use crate::store::serving::WorkerPlay;
use crate::store::tokens::TokenRow;
use crate::store::users::User;
use crate::store::workers::NewWorker;

impl TryFrom<pb::RegisterRequest> for NewWorker {
    type Error = Invalid;

    fn try_from(r: pb::RegisterRequest) -> Result<Self, Invalid> {
        let pb::RegisterRequest {
            name: worker_name,
            threads,
            version,
            bench_signature,
            bench_nps,
            machine,
            tools: tool_list,
            target,
            updated_from,
            machine_id,
        } = r;
        xq_proto::named("name", &worker_name)?;
        if !machine_id.is_empty() && !xq_proto::machine::is_machine_id(&machine_id) {
            return Err(Invalid::new(
                "machine_id",
                format!(
                    "{} is not {} lowercase hex digits",
                    xq_proto::quote(&machine_id),
                    xq_proto::machine::MACHINE_ID_DIGITS
                ),
            ));
        }
        let mut tools = std::collections::BTreeSet::new();
        for tool in tool_list {
            if !xq_proto::engine_source::is_build_tool(&tool) {
                return Err(Invalid::new(
                    "tools",
                    format!(
                        "unknown tool {}: report only {}",
                        xq_proto::quote(&tool),
                        xq_proto::engine_source::BUILD_TOOLS.join(", ")
                    ),
                ));
            }
            if !tools.insert(tool) {
                return Err(Invalid::new("tools", "a tool is named twice"));
            }
        }
        WorkerVersion::parse_field("version", &version)?;
        if !target.is_empty() {
            xq_proto::worker_version::check_target("target", &target)?;
        }
        if !updated_from.is_empty() {
            WorkerVersion::parse_field("updated_from", &updated_from)?;
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
            machine: machine.map(Machine::try_from).transpose()?,
            tools,
            target,
            updated_from: (!updated_from.is_empty()).then_some(updated_from),
            machine_id: (!machine_id.is_empty()).then_some(machine_id),
        })
    }
}

impl From<StoredFailure> for pb::BuildFailure {
    fn from(f: StoredFailure) -> Self {
        let StoredFailure {
            worker_id,
            worker_name,
            repo,
            failed,
            unix_ms,
        } = f;
        pb::BuildFailure {
            worker_id,
            worker_name,
            repo,
            commit: failed.commit,
            reason: failed.reason,
            log_tail: failed.log_tail,
            unix_ms,
        }
    }
}

/// A duration as the wire's `…_ms` fields carry it: whole milliseconds,
/// saturating.
pub fn wire_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
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
            speed,
            heartbeat_interval,
        } = g;
        pb::Lease {
            lease_id,
            run_id,
            kind: pb::RunKind::from(kind).into(),
            work: Some(work.into()),
            deadline_unix_ms: deadline_ms,
            speed: speed.map(Into::into),
            heartbeat_interval_ms: wire_ms(heartbeat_interval),
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
            progress,
            flag,
            linked,
            author,
            rejection,
            share,
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
            variants: progress
                .variants()
                .iter()
                .cloned()
                .map(Into::into)
                .collect(),
            linked_run_id: linked.unwrap_or(0),
            author: author.unwrap_or_default(),
            rejection: rejection.unwrap_or_default(),
            share,
        }
    }
}

/// A worker's health in a run on the wire, with what it plays there.
pub fn worker_health(w: WorkerHealth, play: Option<&WorkerPlay>) -> pb::WorkerHealth {
    let WorkerHealth {
        sums,
        residual,
        standing,
    } = w;
    let speed = play.and_then(|p| p.speed.as_ref());
    pb::WorkerHealth {
        worker_id: sums.worker_id,
        worker_name: sums.name,
        leases: sums.leases,
        pairs: sums.pairs,
        pentanomial: sums.pentanomial.0.to_vec(),
        time_losses: sums.time_losses,
        crashes: sums.crashes,
        residual,
        flag: standing.flag().unwrap_or_default().to_owned(),
        excluded: standing.excluded(),
        engine_nps: speed.map_or(0, |s| s.nps),
        time_factor: speed.map_or(0.0, |s| s.factor),
        games_at_once: play.map_or(0, |p| p.games_at_once),
        builds: sums.builds,
        cores: play.map_or(0, |p| p.capacity.cores),
        memory_mib: play.and_then(|p| p.capacity.memory_mib).unwrap_or(0),
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
            reason: reason.map(|r| r.token().to_owned()).unwrap_or_default(),
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
            builds,
        } = g;
        pb::StoredGame {
            lease_id,
            worker_id,
            game_index,
            rules: xq_proto::rule_set::name(&rules),
            record: Some(record.into()),
            builds: match &builds {
                [None, None] => Vec::new(),
                played => played
                    .iter()
                    .map(|b| b.clone().unwrap_or_default())
                    .collect(),
            },
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
            builds: played,
        } = g;
        let mut builds = [None, None];
        match played.len() {
            0 => {}
            2 => {
                for (slot, build) in builds.iter_mut().zip(played) {
                    if !build.is_empty() {
                        xq_proto::Arch::parse(&build)
                            .map_err(|e| Invalid::new("stored_game.builds", e.to_string()))?;
                        *slot = Some(build);
                    }
                }
            }
            n => {
                return Err(Invalid::new(
                    "stored_game.builds",
                    format!("{n} entries; a game has 2 players (or none is listed)"),
                ));
            }
        }
        Ok(ExportedGame {
            builds,
            game: ArchivedGame {
                lease_id,
                worker_id,
                game_index,
                record: GameRecord::try_from(required("record", record)?)?,
            },
            rules: xq_proto::rule_set::parse("stored_game.rules", &rules)?,
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
            reason: f.reason.token().to_owned(),
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

impl From<Role> for pb::TokenRole {
    fn from(role: Role) -> Self {
        match role {
            Role::Worker => pb::TokenRole::Worker,
            Role::Personal => pb::TokenRole::Personal,
        }
    }
}

impl TryFrom<pb::TokenRole> for Role {
    type Error = Invalid;

    fn try_from(role: pb::TokenRole) -> Result<Self, Invalid> {
        match role {
            pb::TokenRole::Worker => Ok(Role::Worker),
            pb::TokenRole::Personal => Ok(Role::Personal),
            pb::TokenRole::Unspecified => Err(Invalid::new("role", "worker or personal")),
        }
    }
}

impl From<UserRole> for pb::UserRole {
    fn from(role: UserRole) -> Self {
        match role {
            UserRole::Developer => pb::UserRole::Developer,
            UserRole::Approver => pb::UserRole::Approver,
            UserRole::Admin => pb::UserRole::Admin,
        }
    }
}

impl TryFrom<pb::UserRole> for UserRole {
    type Error = Invalid;

    fn try_from(role: pb::UserRole) -> Result<Self, Invalid> {
        match role {
            pb::UserRole::Developer => Ok(UserRole::Developer),
            pb::UserRole::Approver => Ok(UserRole::Approver),
            pb::UserRole::Admin => Ok(UserRole::Admin),
            pb::UserRole::Unspecified => Err(Invalid::new("role", "developer, approver or admin")),
        }
    }
}

/// A user role as a request carries it (an `i32` that may name no role).
pub fn user_role(role: i32) -> Result<UserRole, Invalid> {
    UserRole::try_from(pb::UserRole::try_from(role).unwrap_or(pb::UserRole::Unspecified))
}

impl From<User> for pb::UserInfo {
    fn from(u: User) -> Self {
        let User {
            id: _,
            name,
            role,
            trusted,
            has_password,
            created_ms,
        } = u;
        pb::UserInfo {
            name,
            role: pb::UserRole::from(role).into(),
            trusted,
            has_password,
            created_unix_ms: created_ms,
        }
    }
}

impl From<Event> for pb::EventInfo {
    fn from(e: Event) -> Self {
        let Event {
            id,
            time_ms,
            actor,
            kind,
            run,
            detail,
        } = e;
        pb::EventInfo {
            id,
            time_unix_ms: time_ms,
            actor,
            kind: kind.as_str().to_owned(),
            run_id: run.unwrap_or(0),
            detail,
        }
    }
}

/// Most events one `ListEvents` answers.
pub const MAX_EVENTS: u32 = 10_000;

impl TryFrom<pb::ListEventsRequest> for EventFilter {
    type Error = Invalid;

    fn try_from(r: pb::ListEventsRequest) -> Result<Self, Invalid> {
        let pb::ListEventsRequest {
            actor,
            run_id,
            kind,
            limit,
        } = r;
        let kind = match kind.as_str() {
            "" => None,
            k => Some(EventKind::parse(k).ok_or_else(|| {
                let all: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
                Invalid::new(
                    "kind",
                    format!(
                        "unknown event kind {} (one of {})",
                        xq_proto::quote(k),
                        all.join(", ")
                    ),
                )
            })?),
        };
        if !(1..=MAX_EVENTS).contains(&limit) {
            return Err(Invalid::new(
                "limit",
                format!("{limit} is outside 1..={MAX_EVENTS}"),
            ));
        }
        Ok(EventFilter {
            actor: (!actor.is_empty()).then_some(actor),
            run: (run_id != 0).then_some(run_id),
            kind,
            limit,
        })
    }
}

impl From<TokenRow> for pb::TokenInfo {
    fn from(t: TokenRow) -> Self {
        let TokenRow {
            id: _,
            name,
            role,
            user,
            user_id: _,
            created_ms,
            revoked_ms,
        } = t;
        pb::TokenInfo {
            name,
            role: pb::TokenRole::from(role).into(),
            user: user.unwrap_or_default(),
            created_unix_ms: created_ms,
            revoked_unix_ms: revoked_ms.unwrap_or(0),
        }
    }
}
