//! Domain rules of the contract's values: what must hold beyond a message's
//! shape (counts that add up, ranges, names). The wire conversions in
//! [`crate::convert`] call these after building a value, so a value read from
//! the wire has passed them; senders may call them too.

use xq_engine::rules::Reason;

use crate::blob::{BlobHeader, MAX_UPLOAD_BYTES};
use crate::error::{Invalid, invalid};
use crate::game_record::{MAX_PLIES_PER_GAME, MAX_STDERR_TAIL_BYTES};
use crate::variant_stats::CONVERTIBLE;
use crate::{
    BatchOutcome, EngineRef, GameRecord, Limit, MAX_RANDOM_PLIES, OpeningSlice, OpeningSource,
    PlayerSpec, Totals, VariantStats, WorkSpec, is_sha256_hex,
};

/// Most distinct end reasons in one record.
pub const MAX_REASONS: usize = 32;
/// Longest end-reason name, in bytes.
pub const MAX_REASON_BYTES: usize = 64;

fn sum(values: &[u64]) -> Option<u64> {
    values.iter().try_fold(0u64, |a, &c| a.checked_add(c))
}

impl Limit {
    /// Every count at least 1.
    pub fn validate(&self) -> Result<(), Invalid> {
        let field = match self {
            Limit::Nodes(_) => "limit.nodes",
            Limit::Depth(_) => "limit.depth",
            Limit::MoveTimeMs(_) => "limit.movetime_ms",
            Limit::Clock(tc) if tc.moves_to_go == Some(0) => "limit.clock.moves_to_go",
            Limit::Clock(_) => "limit.clock.base_ms",
        };
        if self.is_valid() {
            Ok(())
        } else {
            invalid(field, "must be at least 1")
        }
    }
}

impl OpeningSource {
    /// At most [`MAX_RANDOM_PLIES`] random plies; at least one line, none
    /// empty. (Whether every line parses is checked once per run, when the
    /// coordinator creates it.)
    pub fn validate(&self, field: &str) -> Result<(), Invalid> {
        match self {
            OpeningSource::Builtin { random_plies } if *random_plies > MAX_RANDOM_PLIES => invalid(
                format!("{field}.builtin.random_plies"),
                format!("{random_plies} is above {MAX_RANDOM_PLIES}"),
            ),
            OpeningSource::Lines(lines)
                if lines.is_empty() || lines.iter().any(|l| l.trim().is_empty()) =>
            {
                invalid(
                    format!("{field}.lines"),
                    "need at least one line and no empty lines",
                )
            }
            OpeningSource::Book { sha256 } if !is_sha256_hex(sha256) => invalid(
                format!("{field}.book.sha256"),
                format!("{sha256:?} is not 64 lowercase hex digits"),
            ),
            _ => Ok(()),
        }
    }
}

impl OpeningSlice {
    pub fn validate(&self) -> Result<(), Invalid> {
        self.source.validate("openings")?;
        if self.count == 0 {
            return invalid("openings.count", "must be at least 1");
        }
        Ok(())
    }
}

impl EngineRef {
    /// A name of 1 to 64 characters and a SHA-256 in lowercase hex.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.name.is_empty() || self.name.chars().count() > 64 {
            return invalid("engine.name", "must be 1 to 64 characters");
        }
        if !is_sha256_hex(&self.sha256) {
            return invalid(
                "engine.sha256",
                format!(
                    "{} is not 64 lowercase hex digits",
                    crate::quote(&self.sha256)
                ),
            );
        }
        Ok(())
    }
}

impl BlobHeader {
    /// A SHA-256 in lowercase hex and a size the registry takes over the wire.
    pub fn validate(&self) -> Result<(), Invalid> {
        if !is_sha256_hex(&self.sha256) {
            return invalid(
                "header.sha256",
                format!(
                    "{} is not 64 lowercase hex digits",
                    crate::quote(&self.sha256)
                ),
            );
        }
        if self.size > MAX_UPLOAD_BYTES {
            return invalid(
                "header.size",
                format!(
                    "{} bytes is more than an upload takes ({MAX_UPLOAD_BYTES})",
                    self.size
                ),
            );
        }
        Ok(())
    }
}

impl PlayerSpec {
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.hash_mb == 0 {
            return invalid("player.hash_mb", "must be at least 1");
        }
        if let Some(name) = self.params.keys().find(|k| k.is_empty()) {
            return invalid("player.params", format!("empty name {name:?}"));
        }
        self.limit.validate()?;
        if let Some(e) = &self.engine {
            e.validate()?;
        }
        Ok(())
    }
}

impl WorkSpec {
    pub fn validate(&self) -> Result<(), Invalid> {
        for p in &self.players {
            p.validate()?;
        }
        self.openings.validate()?;
        if self.pairs == 0 || u64::from(self.pairs) != self.openings.count {
            return invalid(
                "work.pairs",
                format!("{} pairs for {} openings", self.pairs, self.openings.count),
            );
        }
        Ok(())
    }
}

impl Totals {
    /// Checks that the counts describe exactly `pairs` complete pairs;
    /// `field` names the record (`results`, `totals`).
    pub fn check(&self, pairs: u64, field: &str) -> Result<(), Invalid> {
        let at = |name: &str| format!("{field}.{name}");
        if self.pairs != pairs {
            return invalid(
                at("pairs"),
                format!(
                    "results cover {} pairs but the lease has {pairs}",
                    self.pairs
                ),
            );
        }
        let games = pairs.saturating_mul(2);
        if sum(&self.pentanomial.0) != Some(pairs) {
            return invalid(
                at("pentanomial"),
                format!("{:?} does not sum to the {pairs} pairs", self.pentanomial.0),
            );
        }
        let wdl = &self.wdl;
        if sum(&[wdl.wins, wdl.draws, wdl.losses]) != Some(games) {
            return invalid(
                at("wins/draws/losses"),
                format!(
                    "wins {} + draws {} + losses {} is not 2 × {pairs} pairs",
                    wdl.wins, wdl.draws, wdl.losses
                ),
            );
        }
        if !self.reasons.is_empty() {
            let total = self
                .reasons
                .values()
                .try_fold(0u64, |a, &c| a.checked_add(c));
            if total != Some(games) {
                return invalid(
                    at("reasons"),
                    format!(
                        "end reasons sum to {} games, expected {games}",
                        total.unwrap_or(u64::MAX)
                    ),
                );
            }
        }
        if self.reasons.len() > MAX_REASONS
            || self
                .reasons
                .keys()
                .any(|k| k.is_empty() || k.len() > MAX_REASON_BYTES)
        {
            return invalid(
                at("reasons"),
                format!(
                    "{} end reasons, at most {MAX_REASONS}, each named in 1 to {MAX_REASON_BYTES} bytes",
                    self.reasons.len()
                ),
            );
        }
        if self.total_plies > games.saturating_mul(MAX_PLIES_PER_GAME as u64) {
            return invalid(
                at("total_plies"),
                format!(
                    "{} plies is more than {MAX_PLIES_PER_GAME} per game over {games} games",
                    self.total_plies
                ),
            );
        }
        Ok(())
    }
}

impl BatchOutcome {
    /// Checks that the outcome describes exactly the lease's `pairs` pairs,
    /// with the record of every game (two per pair): a result is counted
    /// only with its evidence.
    pub fn check(&self, pairs: u32) -> Result<(), Invalid> {
        self.totals.check(u64::from(pairs), "results")?;
        let games = 2 * u64::from(pairs);
        if self.games.len() as u64 != games {
            return invalid(
                "results.games",
                format!(
                    "{} game records for the lease's {games} games: a result carries every game it counts",
                    self.games.len()
                ),
            );
        }
        for g in &self.games {
            g.validate().map_err(|e| e.within("results"))?;
        }
        if let Some(v) = &self.variant {
            v.check(pairs)?;
        }
        Ok(())
    }
}

impl GameRecord {
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.moves.len() > MAX_PLIES_PER_GAME {
            return invalid(
                "game.moves",
                format!("{} moves, at most {MAX_PLIES_PER_GAME}", self.moves.len()),
            );
        }
        let opening = self.opening_plies as usize;
        if opening > self.moves.len() {
            return invalid(
                "game.opening_plies",
                format!("{opening} of {} moves", self.moves.len()),
            );
        }
        if self.per_move.len() != self.moves.len() - opening {
            return invalid(
                "game.per_move",
                format!(
                    "{} entries for {} moves after the opening",
                    self.per_move.len(),
                    self.moves.len() - opening
                ),
            );
        }
        if self.red_player > 1 {
            return invalid(
                "game.red_player",
                format!("{} is not 0 or 1", self.red_player),
            );
        }
        if self.stderr_tail.len() > MAX_STDERR_TAIL_BYTES {
            return invalid(
                "game.stderr_tail",
                format!("more than {MAX_STDERR_TAIL_BYTES} bytes"),
            );
        }
        if let Some(ms) = self.overrun_ms
            && self.reason != Reason::TimeForfeit
        {
            return invalid(
                "game.overrun_ms",
                format!(
                    "{ms} ms for a game ended by {}, not a time forfeit",
                    self.reason
                ),
            );
        }
        Ok(())
    }
}

impl VariantStats {
    /// Checks the invariants for a batch of `pairs` pairs, naming the first
    /// field (`results.variant.…`) that does not add up.
    pub fn check(&self, pairs: u32) -> Result<(), Invalid> {
        let bad = |field: &str, reason: String| invalid(format!("results.variant.{field}"), reason);
        let games = 2 * u64::from(pairs);
        if sum(&self.results()) != Some(games) {
            return bad(
                "red_wins",
                format!(
                    "red wins {} + draws {} + black wins {} is not {games} games",
                    self.red_wins, self.draws, self.black_wins
                ),
            );
        }
        if sum(&self.pair_outcomes) != Some(u64::from(pairs)) {
            return bad(
                "pair_outcomes",
                format!("{:?} does not sum to {pairs} pairs", self.pair_outcomes),
            );
        }
        let mut by_game = [0u64; 3];
        for (i, &n) in self.pair_outcomes.iter().enumerate() {
            by_game[i / 3] += n;
            by_game[i % 3] += n;
        }
        if by_game != self.results() {
            return bad(
                "pair_outcomes",
                format!(
                    "{:?} gives results {by_game:?}, not {:?}",
                    self.pair_outcomes,
                    self.results()
                ),
            );
        }
        if sum(&self.plies_histogram) != Some(games) {
            return bad("plies_histogram", format!("does not sum to {games} games"));
        }
        for (i, kind) in CONVERTIBLE.iter().enumerate() {
            if self.converted[i] > self.captured[i] {
                return bad(
                    "converted",
                    format!(
                        "{kind:?}: {} converted of {} captured",
                        self.converted[i], self.captured[i]
                    ),
                );
            }
            let g = self.games_with_conversion[i];
            if g > self.converted[i] || g > games {
                return bad(
                    "games_with_conversion",
                    format!(
                        "{kind:?}: {g} games with {} conversions in {games} games",
                        self.converted[i]
                    ),
                );
            }
        }
        Ok(())
    }
}
