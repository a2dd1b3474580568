//! Xiangqi (Chinese chess): board, rules, move generation, search and notation.
//!
//! Layout:
//! - basic types, re-exported flat: [`Square`], [`File`], [`Rank`], [`Color`],
//!   [`ByColor`], [`Kind`], [`Piece`], [`Move`], [`Bitboard`], [`Position`];
//! - `attacks` and `zobrist`: compile-time tables;
//! - `position` (make/unmake, attack detection), `movegen` (legal moves);
//! - text formats as public modules: [`fen`];
//! - [`perft`]: the move generator's test and benchmark;
//! - [`rules`]: rule sets, game end and repetition judgement (the arbiter);
//! - [`params`] (every tunable value), [`eval`], [`search`], [`bench`] (the
//!   search's node-count fingerprint) and the [`uci`] front end.
//!
//! Board conventions follow `engine/RULES.md` §1: files `a`..`i` from Red's left, ranks
//! 0..9 from Red's back rank, square index `rank * 9 + file`.

mod attacks;
pub mod bench;
mod bitboard;
mod color;
pub mod eval;
pub mod fen;
mod movegen;
mod moves;
pub mod notation;
pub mod params;
pub mod perft;
mod piece;
mod position;
pub mod rules;
pub mod search;
mod square;
pub mod uci;
mod zobrist;

pub use bitboard::Bitboard;
pub use color::{ByColor, Color};
pub use fen::FenError;
pub use moves::{MAX_MOVES, Move, MoveList};
pub use params::{ParamError, Params};
pub use piece::{Kind, Piece};
pub use position::{Position, START_FEN, Undo};
pub use rules::{Game, Outcome, Reason, RuleSet};
pub use search::{Limits, SearchResult, SearchRules, Searcher};
pub use square::{File, Rank, Square};
