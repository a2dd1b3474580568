//! Checking a game record: replaying its moves under a rule set and comparing
//! the stated ending with what the rules say.
//!
//! A record states its moves (opening included), how many of them came from the
//! opening, and its [`Outcome`]. [`replay`] accepts it when
//! - every move is legal where it is played and no move follows the end of the
//!   game;
//! - the stated ply is the number of moves (every ending is after the last move);
//! - an arbiter ending (checkmate to move limit, [`Reason::is_arbiter`]) is
//!   exactly the arbiter's verdict at that ply, result included;
//! - any other ending (adjudication, time forfeit, illegal move, resignation)
//!   comes at a ply the rules have not already ended; a forfeit is never a
//!   draw; a time forfeit or an illegal move after the first ply past the
//!   opening is lost by the side to move (only the mover's clock runs and only
//!   the mover sends a move). At that first ply either side may forfeit: an
//!   engine that fails to start loses before it moves.

use thiserror::Error;

use crate::rules::{Game, GameError, Outcome, Reason, RuleSet};
use crate::{Color, Move, Position};

/// A game as its record states it.
#[derive(Clone, Copy, Debug)]
pub struct Claim<'a> {
    /// Every move from the start position, opening moves included.
    pub moves: &'a [Move],
    /// Leading moves that came from the opening.
    pub opening_plies: usize,
    /// The stated ending.
    pub outcome: Outcome,
}

/// Why a record does not replay to its stated ending. Every variant names the
/// ply (0-based: ply `n` is the position after `n` moves) where it fails.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReplayError {
    #[error("ply {ply}: the record ends at ply {ply} but has {moves} moves")]
    PlyMismatch { ply: usize, moves: usize },
    #[error("ply {moves}: {opening_plies} opening plies of {moves} moves")]
    OpeningTooLong { opening_plies: usize, moves: usize },
    #[error("ply {ply}: illegal move {mv} in {fen}")]
    Illegal { ply: usize, mv: Move, fen: String },
    #[error("ply {ply}: move {mv} after the rules ended the game ({ended})")]
    MoveAfterEnd {
        ply: usize,
        mv: Move,
        ended: Outcome,
    },
    #[error("ply {ply}: the record says {claimed} but the rules say {actual}")]
    Disagrees {
        ply: usize,
        claimed: Outcome,
        actual: Outcome,
    },
    #[error("ply {ply}: the record says {reason} but the rules do not end the game there")]
    NotEnded { ply: usize, reason: Reason },
    #[error("ply {ply}: a {reason} cannot be a draw")]
    DrawnForfeit { ply: usize, reason: Reason },
    #[error("ply {ply}: a {reason} is lost by the side to move ({mover:?}), not {loser:?}")]
    WrongLoser {
        ply: usize,
        reason: Reason,
        mover: Color,
        loser: Color,
    },
}

impl ReplayError {
    /// The ply where the record fails.
    pub fn ply(&self) -> usize {
        match *self {
            ReplayError::PlyMismatch { ply, .. }
            | ReplayError::Illegal { ply, .. }
            | ReplayError::MoveAfterEnd { ply, .. }
            | ReplayError::Disagrees { ply, .. }
            | ReplayError::NotEnded { ply, .. }
            | ReplayError::DrawnForfeit { ply, .. }
            | ReplayError::WrongLoser { ply, .. } => ply,
            ReplayError::OpeningTooLong { moves, .. } => moves,
        }
    }
}

impl Reason {
    /// Whether the arbiter gives this ending (checkmate to move limit); the
    /// others are the game runner's.
    pub fn is_arbiter(self) -> bool {
        !matches!(
            self,
            Reason::Adjudication
                | Reason::TimeForfeit
                | Reason::IllegalMove
                | Reason::FalseDrawClaim
                | Reason::Resignation
        )
    }
}

/// Replays `claim` from `start` under `rules`; returns the replayed game (its
/// records, for statistics) when the record holds, else where and why not.
pub fn replay(start: Position, rules: RuleSet, claim: &Claim<'_>) -> Result<Game, ReplayError> {
    let moves = claim.moves.len();
    let claimed = claim.outcome;
    if claim.opening_plies > moves {
        return Err(ReplayError::OpeningTooLong {
            opening_plies: claim.opening_plies,
            moves,
        });
    }
    let mut game = Game::new(start, rules);
    for (ply, &mv) in claim.moves.iter().enumerate() {
        match game.play(mv) {
            Ok(_) => {}
            Err(GameError::IllegalMove { mv, ply, fen }) => {
                return Err(ReplayError::Illegal { ply, mv, fen });
            }
            Err(GameError::GameOver { mv, outcome }) => {
                return Err(ReplayError::MoveAfterEnd {
                    ply,
                    mv,
                    ended: outcome,
                });
            }
        }
    }
    if claimed.ply != moves {
        return Err(ReplayError::PlyMismatch {
            ply: claimed.ply,
            moves,
        });
    }
    let ply = moves;
    if let Some(actual) = game.outcome() {
        return if actual == claimed {
            Ok(game)
        } else {
            Err(ReplayError::Disagrees {
                ply,
                claimed,
                actual,
            })
        };
    }
    let reason = claimed.reason;
    if reason.is_arbiter() {
        return Err(ReplayError::NotEnded { ply, reason });
    }
    if reason == Reason::Adjudication {
        return Ok(game);
    }
    let Some(winner) = claimed.result.winner() else {
        return Err(ReplayError::DrawnForfeit { ply, reason });
    };
    let mover = game.position().side_to_move();
    let loser = !winner;
    let mover_only = matches!(
        reason,
        Reason::TimeForfeit | Reason::IllegalMove | Reason::FalseDrawClaim
    );
    if mover_only && ply > claim.opening_plies && loser != mover {
        return Err(ReplayError::WrongLoser {
            ply,
            reason,
            mover,
            loser,
        });
    }
    Ok(game)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::START_FEN;
    use crate::rules::GameResult;

    fn moves(text: &str) -> Vec<Move> {
        text.split_whitespace()
            .map(|m| Move::parse_coords(m).unwrap())
            .collect()
    }

    fn outcome(result: GameResult, reason: Reason, ply: usize) -> Outcome {
        Outcome {
            result,
            reason,
            ply,
        }
    }

    fn check(fen: &str, mv: &[Move], opening: usize, o: Outcome) -> Result<Game, ReplayError> {
        replay(
            Position::from_fen(fen).unwrap(),
            RuleSet::STANDARD,
            &Claim {
                moves: mv,
                opening_plies: opening,
                outcome: o,
            },
        )
    }

    /// Red mates with b0b9: the chariot on a8 holds rank 8, the red general
    /// holds the d-file.
    const MATE_IN_ONE: &str = "4k4/R8/9/9/9/9/9/9/9/1R1K5 w - - 0 1";

    #[test]
    fn a_checkmate_replays_to_its_result() {
        let mv = moves("b0b9");
        let game = check(
            MATE_IN_ONE,
            &mv,
            0,
            outcome(GameResult::Red, Reason::Checkmate, 1),
        )
        .unwrap();
        assert_eq!(game.records().len(), 1);
    }

    #[test]
    fn a_wrong_result_or_reason_is_named_with_its_ply() {
        let mv = moves("b0b9");
        let err = check(
            MATE_IN_ONE,
            &mv,
            0,
            outcome(GameResult::Black, Reason::Checkmate, 1),
        )
        .unwrap_err();
        assert!(
            matches!(err, ReplayError::Disagrees { ply: 1, .. }),
            "{err}"
        );
        // A runner ending where the rules already ended the game is refused too.
        let err = check(
            MATE_IN_ONE,
            &mv,
            0,
            outcome(GameResult::Red, Reason::Adjudication, 1),
        )
        .unwrap_err();
        assert!(matches!(err, ReplayError::Disagrees { .. }), "{err}");
        assert!(err.to_string().contains("checkmate"), "{err}");
    }

    #[test]
    fn an_illegal_move_and_a_move_after_the_end_are_refused() {
        let mv = moves("h2e2 h9g7 e2e9");
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Red, Reason::Resignation, 3),
        )
        .unwrap_err();
        assert_eq!(err.ply(), 2);
        assert!(
            err.to_string().starts_with("ply 2: illegal move e2e9"),
            "{err}"
        );
        let mv = moves("b0b9 e9e8");
        let err = check(
            MATE_IN_ONE,
            &mv,
            0,
            outcome(GameResult::Red, Reason::Checkmate, 2),
        )
        .unwrap_err();
        assert!(
            matches!(err, ReplayError::MoveAfterEnd { ply: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn the_stated_ply_must_be_the_number_of_moves() {
        let mv = moves("h2e2 h9g7");
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Draw, Reason::Adjudication, 5),
        )
        .unwrap_err();
        assert_eq!(err, ReplayError::PlyMismatch { ply: 5, moves: 2 });
        let err = check(
            START_FEN,
            &mv,
            3,
            outcome(GameResult::Draw, Reason::Adjudication, 2),
        )
        .unwrap_err();
        assert!(matches!(err, ReplayError::OpeningTooLong { .. }), "{err}");
    }

    #[test]
    fn an_arbiter_reason_needs_the_rules_to_end_the_game() {
        let mv = moves("h2e2 h9g7");
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Red, Reason::Checkmate, 2),
        )
        .unwrap_err();
        assert_eq!(
            err,
            ReplayError::NotEnded {
                ply: 2,
                reason: Reason::Checkmate
            }
        );
    }

    #[test]
    fn runner_endings_are_accepted_where_the_rules_allow_them() {
        let mv = moves("h2e2 h9g7");
        // Red to move at ply 2.
        for (result, reason) in [
            (GameResult::Draw, Reason::Adjudication),
            (GameResult::Black, Reason::Adjudication),
            (GameResult::Black, Reason::TimeForfeit),
            (GameResult::Black, Reason::IllegalMove),
            (GameResult::Black, Reason::FalseDrawClaim),
            (GameResult::Red, Reason::Resignation),
            (GameResult::Black, Reason::Resignation),
        ] {
            check(START_FEN, &mv, 0, outcome(result, reason, 2))
                .unwrap_or_else(|e| panic!("{result} by {reason}: {e}"));
        }
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Draw, Reason::TimeForfeit, 2),
        )
        .unwrap_err();
        assert!(matches!(err, ReplayError::DrawnForfeit { .. }), "{err}");
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Red, Reason::FalseDrawClaim, 2),
        )
        .unwrap_err();
        assert!(matches!(err, ReplayError::WrongLoser { .. }), "{err}");
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Draw, Reason::FalseDrawClaim, 2),
        )
        .unwrap_err();
        assert!(matches!(err, ReplayError::DrawnForfeit { .. }), "{err}");
        let err = check(
            START_FEN,
            &mv,
            0,
            outcome(GameResult::Red, Reason::TimeForfeit, 2),
        )
        .unwrap_err();
        assert_eq!(
            err,
            ReplayError::WrongLoser {
                ply: 2,
                reason: Reason::TimeForfeit,
                mover: Color::Red,
                loser: Color::Black
            }
        );
        // Right after the opening either engine may fail to start.
        check(
            START_FEN,
            &mv,
            2,
            outcome(GameResult::Red, Reason::IllegalMove, 2),
        )
        .unwrap();
    }

    #[test]
    fn a_perpetual_check_replays_to_a_loss_for_the_checker() {
        // Red's chariot checks along ranks 9 and 8 while Black's general steps
        // between d9 and d8: a one-sided perpetual check.
        let fen = "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1";
        let line = moves("a0a9 d9d8 a9a8 d8d9 a8a9 d9d8 a9a8 d8d9 a8a9 d9d8 a9a8 d8d9");
        let mut game = Game::new(Position::from_fen(fen).unwrap(), RuleSet::STANDARD);
        let mut played = Vec::new();
        let mut ended = None;
        for mv in line {
            played.push(mv);
            if let Some(o) = game.play(mv).unwrap() {
                ended = Some(o);
                break;
            }
        }
        let ended = ended.expect("the arbiter ends a perpetual check");
        assert_eq!(ended.reason, Reason::PerpetualCheck);
        let replayed = check(fen, &played, 0, ended).unwrap();
        assert_eq!(replayed.outcome(), Some(ended));
        let mut wrong = ended;
        wrong.reason = Reason::Repetition;
        wrong.result = GameResult::Draw;
        assert!(check(fen, &played, 0, wrong).is_err());
    }
}
