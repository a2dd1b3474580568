//! The rules arbiter: rule sets, game end, repetition judgement (engine/RULES.md §4–§8).
//!
//! - [`ruleset`]: [`RuleSet`] and its presets (`standard`, `repetition-4`,
//!   `stalemate-draw`, `no-chase-rule`, `chinese`, `asian`, `pikafish`, the readings
//!   `chase-per-target`, `new-mate-threats` and `check-reply-chases`,
//!   `conversion`, `reform-2007`);
//! - [`arbiter`]: [`Game`], which plays moves and reports the [`Outcome`];
//! - [`repetition`]: judging a repeated position from a stack of [`PlyEntry`]s,
//!   the API the arbiter and the search call ([`judge_cycle`]), under the Chinese,
//!   the Asian or the Pikafish code ([`Code`]);
//! - [`chase`]: which pieces a move chases (捉) under the Chinese and Asian codes;
//! - [`pikafish`]: which pieces a move chases under the Pikafish code;
//! - [`mate`]: mates by checks, for mate threats (杀);
//! - [`material_draw`]: Pikafish's draws for insufficient material, for the
//!   Pikafish code;
//! - [`plain_draw`]: plain draws on material, for art. 27.3;
//! - [`see`]: static exchange evaluation, for chase judgement;
//! - [`replay`]: checking a game record against the rules ([`replay()`]).
//!
//! Interpretations (engine/RULES.md §5 gives each next to its article):
//! - perpetual check is judged exactly; chases with a static exchange evaluation
//!   on legal captures, threats through one check, and a mate-in-one test;
//!   mate threats by checks of any number, exact within a budget of
//!   [`mate::MATE_SEARCH_NODES`] moves;
//! - a forbidden side loses at the first judged repetition (the rules make it vary
//!   first, art. 24.3).

pub mod arbiter;
pub mod chase;
pub mod mate;
pub mod material_draw;
pub mod pikafish;
pub mod plain_draw;
pub mod repetition;
pub mod replay;
pub mod ruleset;
pub mod see;

#[cfg(test)]
mod tests;

pub use arbiter::{Game, GameError, GameResult, Outcome, PlyRecord, Reason};
pub use mate::MateMemo;
pub use repetition::{Nature, Natures, PlyEntry, Verdict, judge_cycle};
pub use replay::{Claim, ReplayError, replay};
pub use ruleset::{Code, Odds, PRESETS, RuleSet, RuleSetError, Scoring, Stalemate};
