//! The arbiter: a game record that plays moves and says when and how the game ends.

use std::fmt;

use thiserror::Error;

use crate::rules::mate::MateMemo;
use crate::rules::material_draw::{MaterialDraw, leaves_no_reply, material_draw};
use crate::rules::repetition::{Nature, Natures, PlyEntry, Verdict, find_cycle, judge_span};
use crate::rules::{Code, RuleSet, Stalemate};
use crate::{Color, Move, Piece, Position};

/// Who won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    Red,
    Black,
    Draw,
}

impl GameResult {
    /// `color` won.
    pub fn win_for(color: Color) -> GameResult {
        match color {
            Color::Red => GameResult::Red,
            Color::Black => GameResult::Black,
        }
    }

    /// The winner, `None` for a draw.
    pub fn winner(self) -> Option<Color> {
        match self {
            GameResult::Red => Some(Color::Red),
            GameResult::Black => Some(Color::Black),
            GameResult::Draw => None,
        }
    }

    /// `red`, `black` or `draw`.
    pub fn token(self) -> &'static str {
        match self {
            GameResult::Red => "red",
            GameResult::Black => "black",
            GameResult::Draw => "draw",
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// Why a game ended: the one list for the arbiter, the game runner and reports.
/// The arbiter gives the first nine; the last four are the runner's to give.
/// [`Reason::token`] is the stable lowercase kebab-case name used in output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The side to move is in check and has no legal move (将死, art. 4.1); it loses.
    Checkmate,
    /// The side to move is not in check and has no legal move (困毙); it loses, or
    /// draws under the `stalemate-draw` preset.
    Stalemate,
    /// A repetition in which one side checked with every move and the other did
    /// not (art. 24.1, 26.1); the checking side loses.
    PerpetualCheck,
    /// A repetition in which one side chased with every move, without checks, and
    /// the other had an idle move (art. 26.4); the chasing side loses.
    PerpetualChase,
    /// As [`Reason::PerpetualChase`], with both checks and chases among the losing
    /// side's moves (一将一捉, art. 25.2).
    PerpetualCheckAndChase,
    /// A repetition with both sides forbidden, mutual perpetual check included
    /// (art. 24.2, 26.3): a draw.
    MutualPerpetual,
    /// A repetition with both sides allowed (art. 24.2, 26.2): a draw.
    Repetition,
    /// The natural move limit (art. 4.2.4): a draw.
    MoveLimit,
    /// Too little material for either side to win, as Pikafish's rules judge it
    /// (`pikafish` code only; engine/PIKAFISH_RULES.md §6): a draw.
    InsufficientMaterial,
    /// The game runner adjudicated the result (score or tablebase rules).
    Adjudication,
    /// A side ran out of time.
    TimeForfeit,
    /// An engine sent an illegal or malformed move; it loses.
    IllegalMove,
    /// An engine claimed a draw (UCCI's `nobestmove` in a position with
    /// legal moves, as ElephantEye answers when its own draw rules end the
    /// game) that the rules in force do not give: it loses, as by a
    /// forfeit. A claim those rules uphold cannot come: the arbiter ends the
    /// game itself where they give a draw, before any move is asked for.
    FalseDrawClaim,
    /// A side resigned (or its engine crashed or disconnected).
    Resignation,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 14] = [
        Reason::Checkmate,
        Reason::Stalemate,
        Reason::PerpetualCheck,
        Reason::PerpetualChase,
        Reason::PerpetualCheckAndChase,
        Reason::MutualPerpetual,
        Reason::Repetition,
        Reason::MoveLimit,
        Reason::InsufficientMaterial,
        Reason::Adjudication,
        Reason::TimeForfeit,
        Reason::IllegalMove,
        Reason::FalseDrawClaim,
        Reason::Resignation,
    ];

    /// The lowercase kebab-case name: `checkmate`, `stalemate`, `perpetual-check`,
    /// `perpetual-chase`, `perpetual-check-and-chase`, `mutual-perpetual`,
    /// `repetition`, `move-limit`, `insufficient-material`, `adjudication`,
    /// `time-forfeit`, `illegal-move`, `false-draw-claim`, `resignation`.
    pub fn token(self) -> &'static str {
        match self {
            Reason::Checkmate => "checkmate",
            Reason::Stalemate => "stalemate",
            Reason::PerpetualCheck => "perpetual-check",
            Reason::PerpetualChase => "perpetual-chase",
            Reason::PerpetualCheckAndChase => "perpetual-check-and-chase",
            Reason::MutualPerpetual => "mutual-perpetual",
            Reason::Repetition => "repetition",
            Reason::MoveLimit => "move-limit",
            Reason::InsufficientMaterial => "insufficient-material",
            Reason::Adjudication => "adjudication",
            Reason::TimeForfeit => "time-forfeit",
            Reason::IllegalMove => "illegal-move",
            Reason::FalseDrawClaim => "false-draw-claim",
            Reason::Resignation => "resignation",
        }
    }

    /// Parses [`Reason::token`].
    pub fn from_token(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.token() == s)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub result: GameResult,
    pub reason: Reason,
    /// The number of plies played when the game ended.
    pub ply: usize,
}

impl fmt::Display for Outcome {
    /// `result: red reason: checkmate ply: 31`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "result: {} reason: {} ply: {}",
            self.result, self.reason, self.ply
        )
    }
}

/// Why [`Game::play`] refused a move.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GameError {
    #[error("illegal move '{mv}' at ply {ply} in position {fen}")]
    IllegalMove { mv: Move, ply: usize, fen: String },
    #[error("move '{mv}' after the end of the game ({outcome})")]
    GameOver { mv: Move, outcome: Outcome },
}

/// What the arbiter recorded about one ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlyRecord {
    pub mv: Move,
    /// The piece captured, if any.
    pub captured: Option<Piece>,
    /// Whether the captured piece converted and stayed (capture-conversion variant).
    pub converted: bool,
    /// Whether the move gave check.
    pub check: bool,
    /// The move's nature for repetition judgement, for the plies of a judged
    /// repetition that the verdict needed (all of them in a game that
    /// explains its verdicts, [`Game::explained`]); `None` for the others.
    pub judged: Option<Nature>,
}

impl PlyRecord {
    /// The move's heaviest nature (art. 27.4) as [`Nature::token`] gives it, or
    /// `"unjudged"` for a ply outside every judged repetition.
    pub fn nature(&self) -> &'static str {
        self.judged.as_ref().map_or("unjudged", Nature::token)
    }
}

/// A game: the start position, the rule set, the moves so far and the outcome.
///
/// Invariants: `stack.len() == records.len() + 1`; `stack[0]` is the start
/// position's entry and `stack[i]` the entry of ply `i`; `pos` is the start
/// position with every recorded move played; no move is recorded after the
/// outcome.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    rules: RuleSet,
    pos: Position,
    records: Vec<PlyRecord>,
    stack: Vec<PlyEntry>,
    outcome: Option<Outcome>,
    /// Which moves of a judged repetition get their nature recorded.
    natures: Natures,
}

impl Game {
    /// A game from `start` under `rules` (which sets the position's conversion
    /// rule). A start position without a legal move is already decided, at ply 0.
    /// A judged repetition classifies only the moves its verdict needs.
    pub fn new(start: Position, rules: RuleSet) -> Game {
        Game::with_natures(start, rules, Natures::AsNeeded)
    }

    /// As [`Game::new`], but a judged repetition records the nature of every
    /// move of its cycle, to explain its verdict (the same verdict).
    pub fn explained(start: Position, rules: RuleSet) -> Game {
        Game::with_natures(start, rules, Natures::Every)
    }

    fn with_natures(mut start: Position, rules: RuleSet, natures: Natures) -> Game {
        start.set_conversion(rules.conversion);
        let mut game = Game {
            stack: vec![PlyEntry::root(start.hash())],
            pos: start.clone(),
            start,
            rules,
            records: Vec::new(),
            outcome: None,
            natures,
        };
        game.outcome = game.judge();
        game
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The rule set.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// One record per ply played.
    pub fn records(&self) -> &[PlyRecord] {
        &self.records
    }

    /// The repetition stack (see [`crate::rules::repetition`]).
    pub fn stack(&self) -> &[PlyEntry] {
        &self.stack
    }

    /// The moves played.
    pub fn moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.records.iter().map(|r| r.mv)
    }

    /// How the game ended, if it did.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Plays `mv`; returns the outcome if the game ended with it.
    pub fn play(&mut self, mv: Move) -> Result<Option<Outcome>, GameError> {
        if let Some(outcome) = self.outcome {
            return Err(GameError::GameOver { mv, outcome });
        }
        if !self.pos.is_legal(mv) {
            return Err(GameError::IllegalMove {
                mv,
                ply: self.records.len(),
                fen: self.pos.to_fen(),
            });
        }
        let undo = self.pos.make(mv);
        let check = self.pos.in_check();
        self.records.push(PlyRecord {
            mv,
            captured: undo.captured(),
            converted: undo.converted_in_place(),
            check,
            judged: None,
        });
        self.stack.push(PlyEntry {
            hash: self.pos.hash(),
            check,
            mv: Some(mv),
        });
        self.outcome = self.judge();
        Ok(self.outcome)
    }

    /// Whether the current position ends the game, in order: no legal move, then
    /// repetition, then the natural move limit; under the Pikafish code also
    /// insufficient material, in the order of Pikafish's `rule_judge`, which
    /// its search calls before it looks for moves: a draw at once first (the
    /// material changes only by a capture, so no repetition or limit can come
    /// before it), a draw unless a mate in one last. Records the natures of a
    /// judged repetition's moves.
    fn judge(&mut self) -> Option<Outcome> {
        let ply = self.records.len();
        let to_move = self.pos.side_to_move();
        let ended = |result, reason| {
            Some(Outcome {
                result,
                reason,
                ply,
            })
        };
        let material = if self.rules.code == Code::Pikafish {
            material_draw(&self.pos)
        } else {
            MaterialDraw::No
        };
        if material == MaterialDraw::Direct {
            return ended(GameResult::Draw, Reason::InsufficientMaterial);
        }
        if !self.pos.has_legal_move() {
            return if self.pos.in_check() {
                ended(GameResult::win_for(!to_move), Reason::Checkmate)
            } else {
                match self.rules.stalemate {
                    Stalemate::Loss => ended(GameResult::win_for(!to_move), Reason::Stalemate),
                    Stalemate::Draw => ended(GameResult::Draw, Reason::Stalemate),
                }
            };
        }
        let clock = self.pos.halfmove_clock() as usize;
        let start = self.stack.len() - 1 - clock.min(ply);
        let since_capture = &self.stack[start..];
        if let Some(first) = find_cycle(since_capture, self.rules.repetition_count) {
            let (verdict, natures) = judge_span(
                &self.pos,
                &since_capture[first + 1..],
                &self.rules,
                &mut MateMemo::default(),
                self.natures,
            );
            let first_record = start + first;
            for (record, nature) in self.records[first_record..].iter_mut().zip(natures) {
                record.judged = nature;
            }
            return match verdict {
                Verdict::Draw(r) => ended(GameResult::Draw, r),
                Verdict::SideToMoveWins(r) => ended(GameResult::win_for(to_move), r),
                Verdict::SideToMoveLoses(r) => ended(GameResult::win_for(!to_move), r),
            };
        }
        let checks = self.records[ply - clock.min(ply)..].iter().map(|r| r.check);
        if self
            .rules
            .move_limit_reached(self.pos.halfmove_clock(), checks)
        {
            return ended(GameResult::Draw, Reason::MoveLimit);
        }
        if material == MaterialDraw::UnlessMateInOne && !leaves_no_reply(&mut self.pos) {
            return ended(GameResult::Draw, Reason::InsufficientMaterial);
        }
        None
    }
}
