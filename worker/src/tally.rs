//! Counting results: W/D/L from the first player's view, the pentanomial of game
//! pairs, plies and end reasons.
//!
//! A pair is one opening played twice, the first player taking Red in the first
//! game and Black in the second. Its pentanomial index is the first player's pair
//! score in half points: 0 = LL, 1 = LD or DL, 2 = LW, DD or WL, 3 = DW or WD,
//! 4 = WW (the fishtest order).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A single game's result from the first player's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    Loss,
    Draw,
    Win,
}

impl Score {
    /// Half points: 0, 1 or 2.
    pub const fn half_points(self) -> usize {
        match self {
            Score::Loss => 0,
            Score::Draw => 1,
            Score::Win => 2,
        }
    }
}

/// Totals over finished games and pairs.
///
/// Invariants: `wins + draws + losses == games`; the pentanomial sums to `pairs`;
/// `2 * pairs <= games` (games of an unfinished pair count, the pair does not);
/// the reason counts sum to `games`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub pairs: u64,
    /// `[LL, LD+DL, LW+DD+WL, DW+WD, WW]`.
    pub pentanomial: [u64; 5],
    /// Plies over all games.
    pub plies: u64,
    /// Games by end reason (the reason's lowercase name).
    pub reasons: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts one game.
    pub fn add_game(&mut self, score: Score, plies: u64, reason: &str) {
        self.games += 1;
        match score {
            Score::Win => self.wins += 1,
            Score::Draw => self.draws += 1,
            Score::Loss => self.losses += 1,
        }
        self.plies += plies;
        *self.reasons.entry(reason.to_string()).or_default() += 1;
    }

    /// Counts a finished pair whose two games were already added with `add_game`.
    pub fn add_pair(&mut self, first: Score, second: Score) {
        self.pairs += 1;
        self.pentanomial[first.half_points() + second.half_points()] += 1;
    }

    /// Adds another tally.
    pub fn merge(&mut self, other: &Tally) {
        self.games += other.games;
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
        self.pairs += other.pairs;
        for (a, b) in self.pentanomial.iter_mut().zip(other.pentanomial) {
            *a += b;
        }
        self.plies += other.plies;
        for (reason, n) in &other.reasons {
            *self.reasons.entry(reason.clone()).or_default() += n;
        }
    }

    /// Mean game length in plies (0 without games).
    pub fn mean_plies(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.plies as f64 / self.games as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_land_in_the_fishtest_order() {
        let mut t = Tally::default();
        let pairs = [
            (Score::Loss, Score::Loss),
            (Score::Loss, Score::Draw),
            (Score::Win, Score::Loss),
            (Score::Draw, Score::Draw),
            (Score::Draw, Score::Win),
            (Score::Win, Score::Win),
        ];
        for (a, b) in pairs {
            t.add_game(a, 10, "checkmate");
            t.add_game(b, 20, "repetition draw");
            t.add_pair(a, b);
        }
        assert_eq!(t.pentanomial, [1, 1, 2, 1, 1]);
        assert_eq!(
            (t.wins, t.draws, t.losses, t.games, t.pairs),
            (4, 4, 4, 12, 6)
        );
        assert_eq!(t.mean_plies(), 15.0);
        let mut sum = Tally::default();
        sum.merge(&t);
        sum.merge(&t);
        assert_eq!(sum.pentanomial, [2, 2, 4, 2, 2]);
        assert_eq!(sum.reasons["checkmate"], 12);
    }
}
