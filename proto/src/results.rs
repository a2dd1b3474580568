//! What playing games gives: a game's [`Score`] for the first player, the one
//! totals record [`Totals`] (a lease's results, a run's counted games, a local
//! match's summary), and a lease's [`BatchOutcome`].
//!
//! The counts themselves are the statistics' own types, [`Wdl`] and
//! [`Pentanomial`] of `xq-stats`: the estimators and the SPRT take a run's
//! totals as they are, with no copy into a second definition of the same
//! counts.
//!
//! A pair is one opening played twice, the first player taking Red in the
//! first game and Black in the second. Its pentanomial index is the first
//! player's pair score in half points: 0 = LL, 1 = LD or DL, 2 = LW, DD or
//! WL, 3 = DW or WD, 4 = WW (the fishtest order).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xq_engine::Color;
use xq_engine::rules::GameResult;
pub use xq_stats::{Pentanomial, Wdl};

use crate::{GameRecord, VariantStats};

/// A single game's result from one player's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    Loss,
    Draw,
    Win,
}

impl Score {
    /// The score of the player with `color` in a game that ended in `result`.
    pub fn of(result: GameResult, color: Color) -> Score {
        match result.winner() {
            None => Score::Draw,
            Some(c) if c == color => Score::Win,
            Some(_) => Score::Loss,
        }
    }

    /// The result of a game in which the player with `color` scored `self`
    /// (the inverse of [`Score::of`]).
    pub fn result_for(self, color: Color) -> GameResult {
        match self {
            Score::Draw => GameResult::Draw,
            Score::Win => GameResult::win_for(color),
            Score::Loss => GameResult::win_for(!color),
        }
    }

    /// Half points: 0, 1 or 2.
    pub const fn half_points(self) -> usize {
        match self {
            Score::Loss => 0,
            Score::Draw => 1,
            Score::Win => 2,
        }
    }
}

/// Counted games, first player's view.
///
/// Invariants of complete pairs (checked on the wire by
/// [`Totals::check`]): the pentanomial sums to `pairs`; `wins + draws +
/// losses = 2 × pairs`; the reason counts are empty or sum to the games.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Complete pairs.
    pub pairs: u64,
    /// `[LL, LD+DL, LW+DD+WL, DW+WD, WW]`.
    pub pentanomial: Pentanomial,
    /// Wins, draws and losses (in JSON: fields of the record itself).
    #[serde(flatten)]
    pub wdl: Wdl,
    /// Games by end reason (the reason's lowercase token).
    pub reasons: BTreeMap<String, u64>,
    /// Plies over all games.
    pub total_plies: u64,
}

impl Totals {
    /// The counts `games` give, pair by pair (pair p: games 2p and 2p + 1),
    /// from the first player's view.
    pub fn of_games(games: &[GameRecord]) -> Totals {
        let mut t = Totals::default();
        for pair in games.chunks_exact(2) {
            t.add_pair(
                [&pair[0], &pair[1]]
                    .map(|g| (g.first_score(), g.moves.len() as u64, g.reason.token())),
            );
        }
        t
    }

    /// Counts a finished pair: the first player's scores in its two games, and
    /// each game's plies and end reason.
    pub fn add_pair(&mut self, games: [(Score, u64, &str); 2]) {
        for (score, plies, reason) in games {
            match score {
                Score::Win => self.wdl.wins += 1,
                Score::Draw => self.wdl.draws += 1,
                Score::Loss => self.wdl.losses += 1,
            }
            self.total_plies += plies;
            *self.reasons.entry(reason.to_string()).or_default() += 1;
        }
        self.pairs += 1;
        self.pentanomial.0[games[0].0.half_points() + games[1].0.half_points()] += 1;
    }

    /// Adds another record (saturating: stored totals never wrap).
    pub fn merge(&mut self, other: &Totals) {
        let add = |a: &mut u64, b: u64| *a = a.saturating_add(b);
        add(&mut self.pairs, other.pairs);
        for (a, &b) in self.pentanomial.0.iter_mut().zip(&other.pentanomial.0) {
            add(a, b);
        }
        add(&mut self.wdl.wins, other.wdl.wins);
        add(&mut self.wdl.draws, other.wdl.draws);
        add(&mut self.wdl.losses, other.wdl.losses);
        for (reason, &n) in &other.reasons {
            add(self.reasons.entry(reason.clone()).or_default(), n);
        }
        add(&mut self.total_plies, other.total_plies);
    }

    /// Games counted.
    pub fn games(&self) -> u64 {
        self.wdl.games()
    }

    /// Mean game length in plies (0 without games).
    pub fn mean_plies(&self) -> f64 {
        match self.games() {
            0 => 0.0,
            g => self.total_plies as f64 / g as f64,
        }
    }
}

/// The result of playing a lease (or, when cancelled, its first pairs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchOutcome {
    /// The counts; `totals.pairs` is the pairs played.
    pub totals: Totals,
    /// The games of the counted pairs, in game order (pair p: games 2p, 2p + 1).
    pub games: Vec<GameRecord>,
    /// Red's view and capture statistics of the same games; required by
    /// variants runs, checked whenever present.
    pub variant: Option<VariantStats>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_land_in_the_fishtest_order() {
        let mut t = Totals::default();
        let pairs = [
            (Score::Loss, Score::Loss),
            (Score::Loss, Score::Draw),
            (Score::Win, Score::Loss),
            (Score::Draw, Score::Draw),
            (Score::Draw, Score::Win),
            (Score::Win, Score::Win),
        ];
        for (a, b) in pairs {
            t.add_pair([(a, 10, "checkmate"), (b, 20, "repetition draw")]);
        }
        assert_eq!(t.pentanomial, Pentanomial([1, 1, 2, 1, 1]));
        assert_eq!(
            (t.wdl.wins, t.wdl.draws, t.wdl.losses, t.games(), t.pairs),
            (4, 4, 4, 12, 6)
        );
        assert_eq!(t.mean_plies(), 15.0);
        let mut sum = Totals::default();
        sum.merge(&t);
        sum.merge(&t);
        assert_eq!(sum.pentanomial, Pentanomial([2, 2, 4, 2, 2]));
        assert_eq!(sum.reasons["checkmate"], 12);
    }

    #[test]
    fn a_score_is_read_from_the_colour() {
        assert_eq!(Score::of(GameResult::Red, Color::Red), Score::Win);
        assert_eq!(Score::of(GameResult::Red, Color::Black), Score::Loss);
        assert_eq!(Score::of(GameResult::Draw, Color::Black), Score::Draw);
    }
}
