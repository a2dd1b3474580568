//! Per-batch statistics for rule-variant studies, from Red's side: results,
//! pair outcomes, game lengths and capture conversion per convertible kind.
//!
//! The worker computes them from its own games (the arbiter's
//! [`PlyRecord`]s) and ships only these counts, never the games.
//!
//! # Conventions
//!
//! * Results are by colour (Red win, draw, Black win), not by player.
//! * A pair's first game is the one with `players[0]` as Red.
//! * Convertible kinds are in [`CONVERTIBLE`] order: chariot, horse, cannon,
//!   elephant.
//! * Game lengths count every ply, opening included, in buckets of
//!   [`PLIES_BUCKET`] plies; the last bucket holds every longer game.

use serde::{Deserialize, Serialize};
use xq_engine::Kind;
use xq_engine::rules::{GameResult, PlyRecord};

/// The kinds that may convert when captured, in table order.
pub const CONVERTIBLE: [Kind; 4] = [Kind::Chariot, Kind::Horse, Kind::Cannon, Kind::Elephant];
/// Width of a game-length bucket, plies.
pub const PLIES_BUCKET: u32 = 20;
/// Number of game-length buckets; the last is open-ended (400 plies and more).
pub const PLIES_BUCKETS: usize = 21;

/// One game's captures of one convertible kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindCaptures {
    /// Pieces of the kind captured.
    pub captured: u64,
    /// Of those, the ones that converted and stayed in play.
    pub converted: u64,
}

/// Captures per convertible kind ([`CONVERTIBLE`] order) in one game's plies.
pub fn game_captures(records: &[PlyRecord]) -> [KindCaptures; 4] {
    let mut out = [KindCaptures::default(); 4];
    for r in records {
        let Some(piece) = r.captured else { continue };
        if let Some(i) = CONVERTIBLE.iter().position(|&k| k == piece.kind()) {
            out[i].captured += 1;
            out[i].converted += u64::from(r.converted);
        }
    }
    out
}

/// The statistics of a batch of game pairs (see the module docs).
///
/// Invariants checked on the wire by [`VariantStats::check`]: the results and the length
/// histogram each sum to 2 × pairs, the pair outcomes to pairs and agree with
/// the results; per kind, converted ≤ captured, and games with a conversion ≤
/// converted and ≤ games.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct VariantStats {
    pub red_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    /// `[RR, RD, RB, DR, DD, DB, BR, BD, BB]`: first game's result × second's.
    pub pair_outcomes: [u64; 9],
    /// Games by length bucket ([`PLIES_BUCKET`] plies wide).
    pub plies_histogram: [u64; PLIES_BUCKETS],
    /// Per convertible kind: pieces captured.
    pub captured: [u64; 4],
    /// Per convertible kind: captured pieces that converted.
    pub converted: [u64; 4],
    /// Per convertible kind: games with at least one conversion of the kind.
    pub games_with_conversion: [u64; 4],
}

/// One finished game as the statistics need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameSummary {
    pub result: GameResult,
    /// Plies played, opening included.
    pub plies: usize,
    pub captures: [KindCaptures; 4],
}

fn outcome_index(r: GameResult) -> usize {
    match r {
        GameResult::Red => 0,
        GameResult::Draw => 1,
        GameResult::Black => 2,
    }
}

impl VariantStats {
    /// Games counted.
    pub fn games(&self) -> u64 {
        self.red_wins + self.draws + self.black_wins
    }

    /// `[red wins, draws, black wins]`.
    pub fn results(&self) -> [u64; 3] {
        [self.red_wins, self.draws, self.black_wins]
    }

    fn add_game(&mut self, g: &GameSummary) {
        match g.result {
            GameResult::Red => self.red_wins += 1,
            GameResult::Draw => self.draws += 1,
            GameResult::Black => self.black_wins += 1,
        }
        let bucket = (g.plies / PLIES_BUCKET as usize).min(PLIES_BUCKETS - 1);
        self.plies_histogram[bucket] += 1;
        for (i, c) in g.captures.iter().enumerate() {
            self.captured[i] += c.captured;
            self.converted[i] += c.converted;
            self.games_with_conversion[i] += u64::from(c.converted > 0);
        }
    }

    /// The statistics of `games`, pair by pair (pair p: games 2p and 2p + 1).
    pub fn of_pairs(games: &[GameSummary]) -> VariantStats {
        let mut stats = VariantStats::default();
        for pair in games.chunks_exact(2) {
            stats.add_pair(&pair[0], &pair[1]);
        }
        stats
    }

    /// Adds a pair: `first` had `players[0]` as Red, `second` `players[1]`.
    pub fn add_pair(&mut self, first: &GameSummary, second: &GameSummary) {
        self.add_game(first);
        self.add_game(second);
        self.pair_outcomes[3 * outcome_index(first.result) + outcome_index(second.result)] += 1;
    }

    /// Adds another batch's counts (saturating).
    pub fn merge(&mut self, o: &VariantStats) {
        let add = |a: &mut [u64], b: &[u64]| {
            for (x, y) in a.iter_mut().zip(b) {
                *x = x.saturating_add(*y);
            }
        };
        self.red_wins = self.red_wins.saturating_add(o.red_wins);
        self.draws = self.draws.saturating_add(o.draws);
        self.black_wins = self.black_wins.saturating_add(o.black_wins);
        add(&mut self.pair_outcomes, &o.pair_outcomes);
        add(&mut self.plies_histogram, &o.plies_histogram);
        add(&mut self.captured, &o.captured);
        add(&mut self.converted, &o.converted);
        add(&mut self.games_with_conversion, &o.games_with_conversion);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb;
    use xq_engine::rules::{Game, RuleSet};
    use xq_engine::{Move, Position};

    fn game(result: GameResult, plies: usize, chariots: (u64, u64)) -> GameSummary {
        let mut captures = [KindCaptures::default(); 4];
        captures[0] = KindCaptures {
            captured: chariots.0,
            converted: chariots.1,
        };
        GameSummary {
            result,
            plies,
            captures,
        }
    }

    #[test]
    fn pairs_fill_every_table_and_check() {
        let mut s = VariantStats::default();
        s.add_pair(
            &game(GameResult::Red, 35, (1, 1)),
            &game(GameResult::Draw, 500, (2, 1)),
        );
        s.add_pair(
            &game(GameResult::Black, 0, (0, 0)),
            &game(GameResult::Red, 19, (1, 0)),
        );
        assert_eq!(s.results(), [2, 1, 1]);
        assert_eq!(s.pair_outcomes, [0, 1, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(s.plies_histogram[0], 2);
        assert_eq!(s.plies_histogram[1], 1);
        assert_eq!(s.plies_histogram[PLIES_BUCKETS - 1], 1);
        assert_eq!((s.captured[0], s.converted[0]), (4, 2));
        assert_eq!(s.games_with_conversion[0], 2);
        assert_eq!(s.check(2), Ok(()));
        let wire = pb::VariantStats::from(s.clone());
        assert_eq!(VariantStats::try_from(wire).unwrap(), s);
    }

    #[test]
    fn counts_that_do_not_add_up_name_the_field() {
        let mut s = VariantStats::default();
        s.add_pair(
            &game(GameResult::Red, 30, (2, 1)),
            &game(GameResult::Draw, 30, (0, 0)),
        );
        let field = |s: &VariantStats| s.check(1).unwrap_err().field;
        assert_eq!(
            field(&VariantStats {
                draws: 2,
                ..s.clone()
            }),
            "results.variant.red_wins"
        );
        let mut moved = s.clone();
        moved.pair_outcomes = [0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(field(&moved), "results.variant.pair_outcomes");
        let mut long = s.clone();
        long.plies_histogram[3] += 1;
        assert_eq!(field(&long), "results.variant.plies_histogram");
        let mut over = s.clone();
        over.converted[0] = 3;
        assert_eq!(field(&over), "results.variant.converted");
        let mut games = s.clone();
        games.games_with_conversion[0] = 2;
        assert_eq!(field(&games), "results.variant.games_with_conversion");
        let wire = pb::VariantStats {
            captured: vec![1],
            ..pb::VariantStats::from(s)
        };
        let err = VariantStats::try_from(wire).unwrap_err();
        assert!(err.to_string().contains("results.variant.captured"));
    }

    #[test]
    fn captures_are_read_from_the_arbiter_records() {
        let play = |rules: &str| {
            let mut g = Game::new(Position::startpos(), rules.parse::<RuleSet>().unwrap());
            // The cannon takes the horse (h2h9), the chariot takes the cannon back (i9h9).
            for m in ["h2h9", "i9h9"] {
                g.play(Move::parse_coords(m).unwrap()).unwrap();
            }
            game_captures(g.records())
        };
        let standard = play("standard");
        assert_eq!(standard[1].captured, 1);
        assert_eq!(standard[2].captured, 1);
        assert!(standard.iter().all(|c| c.converted == 0));
    }
}
