//! The rules arbiter: rule sets, game end, repetition judgement (RULES.md §4–§8).
//!
//! - [`ruleset`]: [`RuleSet`] and its presets (`standard`, `repetition-4`,
//!   `stalemate-draw`, `no-chase-rule`, `conversion`, `reform-2007`);
//! - [`arbiter`]: [`Game`], which plays moves and reports the [`Outcome`];
//! - [`repetition`]: judging a repeated position from a stack of [`PlyEntry`]s,
//!   the API the search calls ([`judge_cycle`]);
//! - [`chase`]: which pieces a move chases (捉);
//! - [`see`]: static exchange evaluation, for chase judgement;
//! - [`replay`]: checking a game record against the rules ([`replay()`]).
//!
//! Interpretations (RULES.md says which are this project's choices):
//! - perpetual check is judged exactly; chase with a static exchange evaluation;
//! - mate threats (杀) are not detected and count as idle moves;
//! - a forbidden side loses at the first judged repetition (the rules make it vary
//!   first, art. 24.3);
//! - attacks by a general or a soldier alone stay idle even in mutual perpetual
//!   attack (art. 27.2's exception is not implemented).

pub mod arbiter;
pub mod chase;
pub mod repetition;
pub mod replay;
pub mod ruleset;
pub mod see;

#[cfg(test)]
mod tests;

pub use arbiter::{Game, GameError, GameResult, Outcome, PlyRecord, Reason};
pub use repetition::{PlyEntry, Verdict, judge_cycle};
pub use replay::{Claim, ReplayError, replay};
pub use ruleset::{Odds, PRESETS, RuleSet, RuleSetError, Scoring, Stalemate};
