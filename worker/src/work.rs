//! The domain types of a lease's work ([`WorkSpec`]) and of its outcome
//! ([`BatchOutcome`]), the [`BatchPlayer`] contract that plays one, and their
//! conversion to and from the wire (`xq_proto::pb`).
//!
//! # Conventions
//!
//! * Results are from the first player's view (`players[0]`): wins, draws,
//!   losses of player 0; the pentanomial counts game pairs as
//!   `[LL, LD+DL, LW+DD+WL, DW+WD, WW]` (pair scores 0 … 2 for player 0).
//! * Pair `i` of a lease (0-based) uses opening index `openings.offset + i`,
//!   played once with each player as Red.
//!
//! # Wire conversion
//!
//! These types are shared by the worker and the coordinator, so their wire
//! conversion lives here, once: `From<T> for pb::T` and
//! `TryFrom<pb::T> for T` with `Error = Status`, destructuring every field so
//! that a new proto field cannot be forgotten. A garbled message is an
//! `INVALID_ARGUMENT` naming the field.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use tonic::Status;
use xq_proto::pb;

use crate::variant_stats::{VariantStats, VariantStatsError};

/// Plays a lease's game pairs. The real implementation is the rayon game runner.
pub trait BatchPlayer: Send + Sync + 'static {
    /// Plays `work` to completion (or until `cancel` is set, then returns the pairs finished so far),
    /// calling `progress(pairs_done)` as pairs finish. Blocking: the client calls it on a blocking thread.
    fn play(
        &self,
        work: &WorkSpec,
        cancel: &Arc<AtomicBool>,
        progress: &(dyn Fn(u32) + Sync),
    ) -> anyhow::Result<BatchOutcome>;
    /// Engine bench signature reported at registration.
    fn signature(&self) -> u64;
    /// Where registered external engines must be put (as
    /// [`crate::engine_cache`] lays them out) before `play`; `None` when this
    /// player cannot play external engines.
    fn engine_cache(&self) -> Option<&std::path::Path> {
        None
    }
}

/// The game pairs of one lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkSpec {
    /// `players[0]` is the first player, whose view every result takes.
    pub players: [PlayerSpec; 2],
    /// Rule set preset, e.g. `"standard+conversion"`.
    pub rules: String,
    pub openings: OpeningSlice,
    /// Game pairs to play (2 games each); equals `openings.count`.
    pub pairs: u32,
    pub adjudication: Adjudication,
    /// Whether both engines value a draw by the rule set's scoring
    /// ([`xq_engine::SearchRules::scoring_aware`]); on when absent from the wire.
    #[serde(default = "on")]
    pub draw_contempt: bool,
}

fn on() -> bool {
    true
}

/// One engine configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerSpec {
    /// Parameter overrides by name, in engine units; others keep defaults.
    pub params: BTreeMap<String, i64>,
    pub limit: Limit,
    /// Transposition table size, MiB.
    pub hash_mb: u32,
    /// An external engine instead of the built-in one.
    pub engine: Option<EngineRef>,
}

/// A registered external engine, as a lease names it.
///
/// Invariants (checked on the wire): `name` is 1 to 64 characters; `sha256` is 64
/// lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineRef {
    pub name: String,
    /// SHA-256 of the executable, lowercase hex.
    pub sha256: String,
    /// Size of the executable in bytes.
    pub size: u64,
    /// The `Nodes searched` count of its `bench`.
    pub signature: u64,
    pub protocol: crate::external::Protocol,
    /// Options set after the handshake.
    pub options: BTreeMap<String, String>,
}

/// Whether `s` is a SHA-256 in lowercase hex.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl From<EngineRef> for pb::EngineRef {
    fn from(e: EngineRef) -> Self {
        let EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol,
            options,
        } = e;
        let protocol = match protocol {
            crate::external::Protocol::Uci => pb::EngineProtocol::Uci,
            crate::external::Protocol::Ucci => pb::EngineProtocol::Ucci,
        };
        pb::EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol: protocol.into(),
            options: options.into_iter().collect(),
        }
    }
}

impl TryFrom<pb::EngineRef> for EngineRef {
    type Error = Status;

    fn try_from(e: pb::EngineRef) -> Result<Self, Status> {
        let pb::EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol,
            options,
        } = e;
        if name.is_empty() || name.chars().count() > 64 {
            return Err(invalid("engine.name", "must be 1 to 64 characters"));
        }
        if !is_sha256_hex(&sha256) {
            return Err(invalid(
                "engine.sha256",
                format!("{sha256:?} is not 64 lowercase hex digits"),
            ));
        }
        let protocol = match pb::EngineProtocol::try_from(protocol) {
            Ok(pb::EngineProtocol::Uci) => crate::external::Protocol::Uci,
            Ok(pb::EngineProtocol::Ucci) => crate::external::Protocol::Ucci,
            _ => {
                return Err(invalid(
                    "engine.protocol",
                    format!("unknown value {protocol}"),
                ));
            }
        };
        Ok(EngineRef {
            name,
            sha256,
            size,
            signature,
            protocol,
            options: options.into_iter().collect(),
        })
    }
}

/// How long an engine thinks per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Nodes per move.
    Nodes(u64),
    /// Plies per move.
    Depth(u32),
    /// Milliseconds per move.
    MoveTimeMs(u64),
    /// `moves_to_go` moves in `base_ms` (`None`: the whole game), `inc_ms`
    /// added after each move.
    Clock {
        base_ms: u64,
        inc_ms: u64,
        moves_to_go: Option<u32>,
    },
}

/// The openings of a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpeningSlice {
    pub source: OpeningSource,
    /// The run's opening seed; with the index it fixes every opening.
    pub seed: u64,
    /// Index of the first opening (pairs of the run handed out before).
    pub offset: u64,
    /// Openings in the slice (= pairs).
    pub count: u64,
    /// Each game takes its own opening: game `k` of pair `i` uses index
    /// `2·(offset + i) + k` (variants runs, whose identical players would
    /// otherwise replay each opening's game move for move).
    #[serde(default)]
    pub per_game: bool,
}

/// Where openings come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpeningSource {
    /// The runner's generator: a book move, then `random_plies` random plies.
    Builtin { random_plies: u32 },
    /// FEN/EPD lines, indexed modulo their number.
    Lines(Vec<String>),
}

/// Adjudication rules; a zero field turns its rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Adjudication {
    /// Resign at a score at or below −`resign_cp` centipawns ...
    pub resign_cp: u32,
    /// ... held for this many consecutive moves of both engines (0 = off).
    pub resign_moves: u32,
    /// Draw at |score| ≤ `draw_cp` centipawns ...
    pub draw_cp: u32,
    /// ... held for this many consecutive moves of both engines (0 = off) ...
    pub draw_moves: u32,
    /// ... from this full-move number on.
    pub draw_after_move: u32,
    /// Draw after this many plies in all (0 = no cap).
    pub max_plies: u32,
}

/// The result of playing a lease (or, when cancelled, its first `pairs` pairs).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BatchOutcome {
    /// Pairs played.
    pub pairs: u32,
    /// `[LL, LD+DL, LW+DD+WL, DW+WD, WW]`, summing to `pairs`.
    pub pentanomial: [u64; 5],
    /// Player 0's wins, draws and losses; summing to `2 × pairs`.
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Games by end reason; empty or summing to `2 × pairs`.
    pub reasons: BTreeMap<String, u64>,
    /// Plies over all games.
    pub total_plies: u64,
    /// Game records, if the runner keeps them.
    pub games: Vec<GameRecord>,
    /// Red's view and capture statistics of the same games; required by
    /// variants runs, checked whenever present.
    pub variant: Option<VariantStats>,
}

/// An outcome whose counts do not add up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutcomeError {
    #[error("results cover {got} pairs but the lease has {want}")]
    Pairs { got: u32, want: u32 },
    #[error("pentanomial {0:?} does not sum to the {1} pairs")]
    Pentanomial([u64; 5], u32),
    #[error("wins {wins} + draws {draws} + losses {losses} is not 2 × {pairs} pairs")]
    Wdl {
        wins: u64,
        draws: u64,
        losses: u64,
        pairs: u32,
    },
    #[error("end reasons sum to {0} games, expected {1}")]
    Reasons(u64, u64),
    #[error("{0} end reasons, at most {MAX_REASONS}, each named in 1 to {MAX_REASON_BYTES} bytes")]
    ReasonNames(usize),
    #[error("{plies} plies is more than {MAX_PLIES_PER_GAME} per game over {games} games")]
    Plies { plies: u64, games: u64 },
    #[error(
        "{records} game records for {games} games, or a record of more than {MAX_PLIES_PER_GAME} moves"
    )]
    Games { records: usize, games: u64 },
    #[error(transparent)]
    Variant(#[from] VariantStatsError),
}

/// Most plies a game can have; the runner's own caps are far lower.
pub const MAX_PLIES_PER_GAME: u64 = 10_000;
/// Most distinct end reasons in one outcome.
pub const MAX_REASONS: usize = 32;
/// Longest end-reason name, in bytes.
pub const MAX_REASON_BYTES: usize = 64;

impl OutcomeError {
    /// The wire field at fault (`results.…`).
    pub fn field(&self) -> &'static str {
        match self {
            OutcomeError::Pairs { .. } => "results.pairs",
            OutcomeError::Pentanomial(..) => "results.pentanomial",
            OutcomeError::Wdl { .. } => "results.wins/draws/losses",
            OutcomeError::Reasons(..) | OutcomeError::ReasonNames(_) => "results.reasons",
            OutcomeError::Plies { .. } => "results.total_plies",
            OutcomeError::Games { .. } => "results.games",
            OutcomeError::Variant(_) => "results.variant",
        }
    }
}

impl BatchOutcome {
    /// Checks that the counts describe exactly `pairs` pairs.
    pub fn check(&self, pairs: u32) -> Result<(), OutcomeError> {
        if self.pairs != pairs {
            return Err(OutcomeError::Pairs {
                got: self.pairs,
                want: pairs,
            });
        }
        let games = 2 * u64::from(pairs);
        let penta_sum = self
            .pentanomial
            .iter()
            .try_fold(0u64, |a, &c| a.checked_add(c));
        if penta_sum != Some(u64::from(pairs)) {
            return Err(OutcomeError::Pentanomial(self.pentanomial, pairs));
        }
        let wdl = self
            .wins
            .checked_add(self.draws)
            .and_then(|s| s.checked_add(self.losses));
        if wdl != Some(games) {
            return Err(OutcomeError::Wdl {
                wins: self.wins,
                draws: self.draws,
                losses: self.losses,
                pairs,
            });
        }
        if !self.reasons.is_empty() {
            let sum = self
                .reasons
                .values()
                .try_fold(0u64, |a, &c| a.checked_add(c))
                .unwrap_or(u64::MAX);
            if sum != games {
                return Err(OutcomeError::Reasons(sum, games));
            }
        }
        if self.reasons.len() > MAX_REASONS
            || self
                .reasons
                .keys()
                .any(|k| k.is_empty() || k.len() > MAX_REASON_BYTES)
        {
            return Err(OutcomeError::ReasonNames(self.reasons.len()));
        }
        if self.total_plies > games.saturating_mul(MAX_PLIES_PER_GAME) {
            return Err(OutcomeError::Plies {
                plies: self.total_plies,
                games,
            });
        }
        if self.games.len() as u64 > games
            || self
                .games
                .iter()
                .any(|g| g.moves.len() as u64 > MAX_PLIES_PER_GAME)
        {
            return Err(OutcomeError::Games {
                records: self.games.len(),
                games,
            });
        }
        if let Some(v) = &self.variant {
            v.check(pairs)?;
        }
        Ok(())
    }
}

/// One played game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Coordinate moves (`h2e2`) from the opening position.
    pub moves: Vec<String>,
    pub result: GameResult,
    /// End reason, as in [`BatchOutcome::reasons`].
    pub reason: String,
    /// Opening position (FEN).
    pub opening: String,
    /// Which player (0 or 1) played Red.
    pub red_player: u8,
}

/// A game's result by colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    RedWins,
    Draw,
    BlackWins,
}

// ---------------------------------------------------------------------------
// Wire conversion
// ---------------------------------------------------------------------------

/// `INVALID_ARGUMENT` naming the field.
pub fn invalid(field: &str, reason: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("invalid {field}: {reason}"))
}

/// Unwraps a message field that must be present.
pub fn required<T>(field: &str, value: Option<T>) -> Result<T, Status> {
    value.ok_or_else(|| invalid(field, "missing"))
}

impl From<WorkSpec> for pb::WorkSpec {
    fn from(w: WorkSpec) -> Self {
        let WorkSpec {
            players,
            rules,
            openings,
            pairs,
            adjudication,
            draw_contempt,
        } = w;
        pb::WorkSpec {
            players: players.into_iter().map(Into::into).collect(),
            rules,
            openings: Some(openings.into()),
            pairs,
            adjudication: Some(adjudication.into()),
            draw_contempt: Some(draw_contempt),
        }
    }
}

impl TryFrom<pb::WorkSpec> for WorkSpec {
    type Error = Status;

    fn try_from(w: pb::WorkSpec) -> Result<Self, Status> {
        let pb::WorkSpec {
            players,
            rules,
            openings,
            pairs,
            adjudication,
            draw_contempt,
        } = w;
        let players: Vec<PlayerSpec> = players
            .into_iter()
            .map(PlayerSpec::try_from)
            .collect::<Result<_, _>>()?;
        let players: [PlayerSpec; 2] = players
            .try_into()
            .map_err(|p: Vec<_>| invalid("work.players", format!("{} players, need 2", p.len())))?;
        if rules.is_empty() {
            return Err(invalid("work.rules", "empty"));
        }
        let openings = OpeningSlice::try_from(required("work.openings", openings)?)?;
        if pairs == 0 || u64::from(pairs) != openings.count {
            return Err(invalid(
                "work.pairs",
                format!("{pairs} pairs for {} openings", openings.count),
            ));
        }
        Ok(WorkSpec {
            players,
            rules,
            openings,
            pairs,
            adjudication: adjudication.map(Into::into).unwrap_or_default(),
            draw_contempt: draw_contempt.unwrap_or(true),
        })
    }
}

impl From<PlayerSpec> for pb::PlayerSpec {
    fn from(p: PlayerSpec) -> Self {
        let PlayerSpec {
            params,
            limit,
            hash_mb,
            engine,
        } = p;
        pb::PlayerSpec {
            params: params.into_iter().collect(),
            limit: Some(limit.into()),
            hash_mb,
            engine: engine.map(Into::into),
        }
    }
}

impl TryFrom<pb::PlayerSpec> for PlayerSpec {
    type Error = Status;

    fn try_from(p: pb::PlayerSpec) -> Result<Self, Status> {
        let pb::PlayerSpec {
            params,
            limit,
            hash_mb,
            engine,
        } = p;
        if hash_mb == 0 {
            return Err(invalid("player.hash_mb", "must be at least 1"));
        }
        if let Some(name) = params.keys().find(|k| k.is_empty()) {
            return Err(invalid("player.params", format!("empty name {name:?}")));
        }
        Ok(PlayerSpec {
            params: params.into_iter().collect(),
            limit: Limit::try_from(required("player.limit", limit)?)?,
            hash_mb,
            engine: engine.map(EngineRef::try_from).transpose()?,
        })
    }
}

impl From<Limit> for pb::Limit {
    fn from(l: Limit) -> Self {
        use pb::limit::Kind;
        let kind = match l {
            Limit::Nodes(n) => Kind::Nodes(n),
            Limit::Depth(d) => Kind::Depth(d),
            Limit::MoveTimeMs(ms) => Kind::MovetimeMs(ms),
            Limit::Clock {
                base_ms,
                inc_ms,
                moves_to_go,
            } => Kind::Clock(pb::Clock {
                base_ms,
                inc_ms,
                moves_to_go: moves_to_go.unwrap_or(0),
            }),
        };
        pb::Limit { kind: Some(kind) }
    }
}

impl TryFrom<pb::Limit> for Limit {
    type Error = Status;

    fn try_from(l: pb::Limit) -> Result<Self, Status> {
        use pb::limit::Kind;
        let pb::Limit { kind } = l;
        let positive = |field: &str, v: u64| {
            if v == 0 {
                Err(invalid(field, "must be at least 1"))
            } else {
                Ok(v)
            }
        };
        Ok(match required("limit.kind", kind)? {
            Kind::Nodes(n) => Limit::Nodes(positive("limit.nodes", n)?),
            Kind::Depth(d) => Limit::Depth(positive("limit.depth", d.into())? as u32),
            Kind::MovetimeMs(ms) => Limit::MoveTimeMs(positive("limit.movetime_ms", ms)?),
            Kind::Clock(pb::Clock {
                base_ms,
                inc_ms,
                moves_to_go,
            }) => Limit::Clock {
                base_ms: positive("limit.clock.base_ms", base_ms)?,
                inc_ms,
                moves_to_go: (moves_to_go != 0).then_some(moves_to_go),
            },
        })
    }
}

impl From<OpeningSource> for pb::opening_slice::Source {
    fn from(s: OpeningSource) -> Self {
        match s {
            OpeningSource::Builtin { random_plies } => {
                pb::opening_slice::Source::Builtin(pb::BuiltinOpenings { random_plies })
            }
            OpeningSource::Lines(lines) => {
                pb::opening_slice::Source::Lines(pb::OpeningLines { lines })
            }
        }
    }
}

impl OpeningSource {
    /// The largest number of random plies accepted after a book move.
    pub const MAX_RANDOM_PLIES: u32 = 40;

    /// Validates the wire forms shared by a lease and a run's settings.
    pub fn from_wire(
        builtin: Option<pb::BuiltinOpenings>,
        lines: Option<pb::OpeningLines>,
        field: &str,
    ) -> Result<Self, Status> {
        match (builtin, lines) {
            (Some(pb::BuiltinOpenings { random_plies }), None) => {
                if random_plies > Self::MAX_RANDOM_PLIES {
                    return Err(invalid(
                        &format!("{field}.builtin.random_plies"),
                        format!("{random_plies} is above {}", Self::MAX_RANDOM_PLIES),
                    ));
                }
                Ok(OpeningSource::Builtin { random_plies })
            }
            (None, Some(pb::OpeningLines { lines })) => {
                if lines.is_empty() || lines.iter().any(|l| l.trim().is_empty()) {
                    return Err(invalid(
                        &format!("{field}.lines"),
                        "need at least one line and no empty lines",
                    ));
                }
                Ok(OpeningSource::Lines(lines))
            }
            _ => Err(invalid(field, "missing")),
        }
    }
}

impl From<OpeningSlice> for pb::OpeningSlice {
    fn from(o: OpeningSlice) -> Self {
        let OpeningSlice {
            source,
            seed,
            offset,
            count,
            per_game,
        } = o;
        pb::OpeningSlice {
            source: Some(source.into()),
            seed,
            offset,
            count,
            per_game,
        }
    }
}

impl TryFrom<pb::OpeningSlice> for OpeningSlice {
    type Error = Status;

    fn try_from(o: pb::OpeningSlice) -> Result<Self, Status> {
        use pb::opening_slice::Source;
        let pb::OpeningSlice {
            source,
            seed,
            offset,
            count,
            per_game,
        } = o;
        let source = match source {
            Some(Source::Builtin(b)) => OpeningSource::from_wire(Some(b), None, "openings"),
            Some(Source::Lines(l)) => OpeningSource::from_wire(None, Some(l), "openings"),
            None => Err(invalid("openings.source", "missing")),
        }?;
        if count == 0 {
            return Err(invalid("openings.count", "must be at least 1"));
        }
        Ok(OpeningSlice {
            source,
            seed,
            offset,
            count,
            per_game,
        })
    }
}

impl From<Adjudication> for pb::Adjudication {
    fn from(a: Adjudication) -> Self {
        let Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        } = a;
        pb::Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        }
    }
}

/// Every combination of values is meaningful, so this cannot fail.
impl From<pb::Adjudication> for Adjudication {
    fn from(a: pb::Adjudication) -> Self {
        let pb::Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        } = a;
        Adjudication {
            resign_cp,
            resign_moves,
            draw_cp,
            draw_moves,
            draw_after_move,
            max_plies,
        }
    }
}

impl From<BatchOutcome> for pb::GameResults {
    fn from(o: BatchOutcome) -> Self {
        let BatchOutcome {
            pairs,
            pentanomial,
            wins,
            draws,
            losses,
            reasons,
            total_plies,
            games,
            variant,
        } = o;
        pb::GameResults {
            pairs,
            pentanomial: pentanomial.to_vec(),
            wins,
            draws,
            losses,
            reasons: reasons.into_iter().collect(),
            total_plies,
            games: games.into_iter().map(Into::into).collect(),
            variant: variant.map(Into::into),
        }
    }
}

/// Checks the shape (5 pentanomial entries, known enums); whether the counts
/// fit a lease is [`BatchOutcome::check`]'s job.
impl TryFrom<pb::GameResults> for BatchOutcome {
    type Error = Status;

    fn try_from(r: pb::GameResults) -> Result<Self, Status> {
        let pb::GameResults {
            pairs,
            pentanomial,
            wins,
            draws,
            losses,
            reasons,
            total_plies,
            games,
            variant,
        } = r;
        let pentanomial: [u64; 5] = pentanomial.try_into().map_err(|p: Vec<u64>| {
            invalid(
                "results.pentanomial",
                format!("{} entries, need 5", p.len()),
            )
        })?;
        Ok(BatchOutcome {
            pairs,
            pentanomial,
            wins,
            draws,
            losses,
            reasons: reasons.into_iter().collect(),
            total_plies,
            games: games
                .into_iter()
                .map(GameRecord::try_from)
                .collect::<Result<_, _>>()?,
            variant: variant.map(VariantStats::try_from).transpose()?,
        })
    }
}

impl From<GameRecord> for pb::GameRecord {
    fn from(g: GameRecord) -> Self {
        let GameRecord {
            moves,
            result,
            reason,
            opening,
            red_player,
        } = g;
        let result = match result {
            GameResult::RedWins => pb::GameResult::RedWins,
            GameResult::Draw => pb::GameResult::Draw,
            GameResult::BlackWins => pb::GameResult::BlackWins,
        };
        pb::GameRecord {
            moves,
            result: result.into(),
            reason,
            opening,
            red_player: red_player.into(),
        }
    }
}

impl TryFrom<pb::GameRecord> for GameRecord {
    type Error = Status;

    fn try_from(g: pb::GameRecord) -> Result<Self, Status> {
        let pb::GameRecord {
            moves,
            result,
            reason,
            opening,
            red_player,
        } = g;
        let result = match pb::GameResult::try_from(result) {
            Ok(pb::GameResult::RedWins) => GameResult::RedWins,
            Ok(pb::GameResult::Draw) => GameResult::Draw,
            Ok(pb::GameResult::BlackWins) => GameResult::BlackWins,
            Ok(pb::GameResult::Unspecified) | Err(_) => {
                return Err(invalid("game.result", format!("unknown value {result}")));
            }
        };
        let red_player = match red_player {
            0 | 1 => red_player as u8,
            _ => {
                return Err(invalid(
                    "game.red_player",
                    format!("{red_player} is not 0 or 1"),
                ));
            }
        };
        Ok(GameRecord {
            moves,
            result,
            reason,
            opening,
            red_player,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample() -> WorkSpec {
        let player = |v| PlayerSpec {
            params: BTreeMap::from([("piece_chariot".to_owned(), v)]),
            limit: Limit::Clock {
                base_ms: 10_000,
                inc_ms: 100,
                moves_to_go: None,
            },
            hash_mb: 16,
            engine: None,
        };
        WorkSpec {
            players: [player(900), player(880)],
            rules: "standard".to_owned(),
            openings: OpeningSlice {
                source: OpeningSource::Builtin { random_plies: 4 },
                seed: 7,
                offset: 16,
                count: 8,
                per_game: true,
            },
            pairs: 8,
            adjudication: Adjudication {
                max_plies: 300,
                ..Adjudication::default()
            },
            draw_contempt: false,
        }
    }

    #[test]
    fn work_round_trips_through_the_wire() {
        let work = sample();
        let wire = pb::WorkSpec::from(work.clone());
        assert_eq!(WorkSpec::try_from(wire).unwrap(), work);
    }

    #[test]
    fn garbled_work_names_the_field() {
        let mut wire = pb::WorkSpec::from(sample());
        wire.players.pop();
        let err = WorkSpec::try_from(wire).unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().contains("work.players"), "{}", err.message());

        let mut wire = pb::WorkSpec::from(sample());
        wire.players[1].limit = Some(pb::Limit { kind: None });
        let err = WorkSpec::try_from(wire).unwrap_err();
        assert!(err.message().contains("limit.kind"), "{}", err.message());
    }

    #[test]
    fn outcome_counts_must_fit_the_lease() {
        let outcome = BatchOutcome {
            pairs: 2,
            pentanomial: [0, 0, 1, 1, 0],
            wins: 2,
            draws: 1,
            losses: 1,
            reasons: BTreeMap::from([("checkmate".to_owned(), 4)]),
            ..BatchOutcome::default()
        };
        assert_eq!(outcome.check(2), Ok(()));
        assert!(matches!(outcome.check(3), Err(OutcomeError::Pairs { .. })));
        let bad = BatchOutcome {
            wins: 3,
            ..outcome.clone()
        };
        assert!(matches!(bad.check(2), Err(OutcomeError::Wdl { .. })));
        let overflow = BatchOutcome {
            wins: u64::MAX,
            draws: 5,
            ..outcome.clone()
        };
        assert!(matches!(overflow.check(2), Err(OutcomeError::Wdl { .. })));
        let long = BatchOutcome {
            total_plies: 40_001,
            ..outcome.clone()
        };
        assert_eq!(long.check(2).unwrap_err().field(), "results.total_plies");
        let odd = BatchOutcome {
            reasons: BTreeMap::from([(String::new(), 4)]),
            ..outcome.clone()
        };
        assert_eq!(odd.check(2).unwrap_err().field(), "results.reasons");
        let wire = pb::GameResults {
            pentanomial: vec![1, 2],
            ..pb::GameResults::from(outcome)
        };
        let err = BatchOutcome::try_from(wire).unwrap_err();
        assert!(err.message().contains("results.pentanomial"));
    }
}
