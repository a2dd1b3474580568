//! One played game as the game archive keeps it ([`GameRecord`], carried in
//! the wire's `GameResults.games`), and which of a run's games it keeps
//! ([`Retention`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use xq_engine::rules::{GameResult, Outcome, PlyRecord, Reason};
use xq_engine::{Color, Move};

use crate::variant_stats::{GameSummary, game_captures};
use crate::{Score, Totals};

/// Most plies a game can have; the runner's own caps are far lower.
pub const MAX_PLIES_PER_GAME: usize = 10_000;
/// Longest stderr tail kept with a game, in bytes.
pub const MAX_STDERR_TAIL_BYTES: usize = 4096;

/// One played game.
///
/// Invariants (checked on the wire): `opening_plies ≤ moves.len() ≤`
/// [`MAX_PLIES_PER_GAME`]; `per_move` has one entry per move after the
/// opening; `red_player` is 0 or 1; `stderr_tail` is at most
/// [`MAX_STDERR_TAIL_BYTES`]; `overrun_ms` is set only for a time forfeit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// The opening's index in the run's source.
    pub opening_index: u64,
    /// The position before any move (FEN).
    pub start_fen: String,
    /// Every move from `start_fen`, opening moves included.
    pub moves: Vec<Move>,
    /// Leading moves that came from the opening.
    pub opening_plies: u32,
    pub result: GameResult,
    /// Why it ended (on the wire and in [`crate::Totals::reasons`]: its
    /// token).
    pub reason: Reason,
    /// Which player (0 or 1) played Red.
    pub red_player: u8,
    /// What the mover reported with each move after the opening.
    pub per_move: Vec<MoveStats>,
    /// The last stderr lines of an external engine that failed in this game.
    pub stderr_tail: String,
    /// For a time forfeit: how far the loser overran its time, ms (a lower
    /// bound when the runner stopped waiting for a hung engine).
    pub overrun_ms: Option<u64>,
}

impl GameRecord {
    /// The colour the first player (player 0) had.
    pub fn first_color(&self) -> Color {
        if self.red_player == 0 {
            Color::Red
        } else {
            Color::Black
        }
    }

    /// The first player's score.
    pub fn first_score(&self) -> Score {
        Score::of(self.result, self.first_color())
    }

    /// How the game ended: every ending comes after the last move.
    pub fn outcome(&self) -> Outcome {
        Outcome {
            result: self.result,
            reason: self.reason,
            ply: self.moves.len(),
        }
    }

    /// The game as the variant statistics count it; `plies` are the
    /// arbiter's records of its replay.
    pub fn summary(&self, plies: &[PlyRecord]) -> GameSummary {
        GameSummary {
            result: self.result,
            plies: self.moves.len(),
            captures: game_captures(plies),
        }
    }

    /// The player (0 or 1) that lost, `None` for a draw.
    pub fn loser(&self) -> Option<u8> {
        match self.result {
            GameResult::Draw => None,
            GameResult::Black => Some(self.red_player),
            GameResult::Red => Some(1 - self.red_player),
        }
    }
}

/// End reasons that are failures of an engine or its host rather than
/// results of play: a time loss, an illegal move, a crash (an engine that
/// crashed, hung or did not start loses by resignation).
pub const ENGINE_FAILURES: [Reason; 3] = [
    Reason::TimeForfeit,
    Reason::IllegalMove,
    Reason::Resignation,
];

/// End reasons that are losses by the rules rather than results of play,
/// though no failure of an engine or its host: a draw claimed where the
/// rules in force give none. Kept with the failures, never counted as one
/// (a worker is not flagged for them).
pub const RULE_FORFEITS: [Reason; 1] = [Reason::FalseDrawClaim];

/// The arbiter's repetition rulings that engines and other arbiters dispute
/// (chases, art. 25–26; plain perpetual check is not among them).
pub const DISPUTED_RULINGS: [Reason; 3] = [
    Reason::PerpetualChase,
    Reason::PerpetualCheckAndChase,
    Reason::MutualPerpetual,
];

/// Which of a run's counted games the archive stores. Every game is still
/// replayed and checked against the counts; retention decides only what is
/// stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Retention {
    /// Every game (the default).
    #[default]
    All,
    /// Games with a winner.
    Decisive,
    /// [`ENGINE_FAILURES`], [`RULE_FORFEITS`] and [`DISPUTED_RULINGS`].
    Failures,
    /// No game.
    None,
}

impl Retention {
    /// Every retention, in the CLI's order.
    pub const ALL: [Retention; 4] = [
        Retention::All,
        Retention::Decisive,
        Retention::Failures,
        Retention::None,
    ];

    /// The CLI's and the status's name: `all`, `decisive`, `failures`, `none`.
    pub fn token(self) -> &'static str {
        match self {
            Retention::All => "all",
            Retention::Decisive => "decisive",
            Retention::Failures => "failures",
            Retention::None => "none",
        }
    }

    /// Whether the default (for specs that leave it out).
    pub fn is_all(&self) -> bool {
        *self == Retention::All
    }

    /// Whether a game with `result` ended by `reason` is kept.
    pub fn keeps(self, result: GameResult, reason: Reason) -> bool {
        let among = |list: &[Reason]| list.contains(&reason);
        match self {
            Retention::All => true,
            Retention::Decisive => result != GameResult::Draw,
            Retention::Failures => {
                among(&ENGINE_FAILURES) || among(&RULE_FORFEITS) || among(&DISPUTED_RULINGS)
            }
            Retention::None => false,
        }
    }

    /// How many of the games counted in `totals` this retention keeps (what
    /// the archive must hold after them); the reasons must be counted for
    /// [`Retention::Failures`].
    pub fn kept_of(self, totals: &Totals) -> u64 {
        match self {
            Retention::All => totals.games(),
            Retention::Decisive => totals.wdl.wins + totals.wdl.losses,
            Retention::Failures => totals
                .reasons
                .iter()
                .filter(|(token, _)| {
                    Reason::from_token(token).is_some_and(|r| self.keeps(GameResult::Red, r))
                })
                .map(|(_, n)| n)
                .sum(),
            Retention::None => 0,
        }
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// A retention name that is none of [`Retention::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown game retention '{0}'; expected all, decisive, failures or none")]
pub struct RetentionError(pub String);

impl FromStr for Retention {
    type Err = RetentionError;

    fn from_str(s: &str) -> Result<Self, RetentionError> {
        Retention::ALL
            .into_iter()
            .find(|r| r.token() == s)
            .ok_or_else(|| RetentionError(s.to_owned()))
    }
}

/// What a player reported with one move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoveStats {
    /// Centipawns from the mover's view (0 when none was reported).
    pub score_cp: i32,
    /// Plies; 0 when no score was reported, so a depth marks a real score.
    pub depth: u32,
    pub nodes: u64,
    /// Time used, milliseconds.
    pub time_ms: u32,
}

/// Moves as the wire packs them: 2 bytes each, [`Move::raw`] little-endian.
pub fn pack_moves(moves: &[Move]) -> Vec<u8> {
    moves.iter().flat_map(|m| m.raw().to_le_bytes()).collect()
}

/// The moves of [`pack_moves`]'s form; `None` for an odd length or a value
/// that is no move.
pub fn unpack_moves(bytes: &[u8]) -> Option<Vec<Move>> {
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|c| Move::from_raw(u16::from_le_bytes([c[0], c[1]])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_keeps_what_it_names_and_counts_it_from_the_totals() {
        let mut t = Totals::default();
        t.add_pair([
            (crate::Score::Win, 10, "time-forfeit"),
            (crate::Score::Draw, 20, "repetition"),
        ]);
        t.add_pair([
            (crate::Score::Loss, 10, "checkmate"),
            (crate::Score::Draw, 20, "perpetual-chase"),
        ]);
        let kept = |r: Retention| r.kept_of(&t);
        assert_eq!(
            Retention::ALL.map(kept),
            [4, 2, 2, 0],
            "all, decisive, failures, none"
        );
        assert!(Retention::Failures.keeps(GameResult::Draw, Reason::MutualPerpetual));
        assert!(!Retention::Failures.keeps(GameResult::Red, Reason::PerpetualCheck));
        assert!(Retention::Failures.keeps(GameResult::Red, Reason::FalseDrawClaim));
        assert!(!Retention::Decisive.keeps(GameResult::Draw, Reason::TimeForfeit));
        for r in Retention::ALL {
            assert_eq!(r.token().parse::<Retention>(), Ok(r));
        }
        let err = "some".parse::<Retention>().unwrap_err().to_string();
        assert!(err.contains("'some'"), "{err}");
    }
}
