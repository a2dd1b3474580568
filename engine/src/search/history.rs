//! Quiet-move histories: how often a quiet move caused a cutoff, by the piece
//! and its target ([`History`]) and by the move before it as well
//! ([`ContinuationHistory`]). Both are per search thread, kept across
//! searches and cleared for a new game.

use crate::{Piece, Square};

/// Upper bound of a history score's magnitude.
pub const HISTORY_MAX: i32 = 16_384;

/// Moves `*entry` toward `bonus` (negative for a malus) with gravity toward
/// zero, keeping |entry| ≤ [`HISTORY_MAX`].
fn apply(entry: i32, bonus: i32) -> i32 {
    let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
    entry + bonus - entry * bonus.abs() / HISTORY_MAX
}

/// Quiet-move history: by [`Piece::index`] and target square.
#[derive(Clone, Debug)]
pub struct History {
    table: Vec<[i32; Square::COUNT]>,
}

impl Default for History {
    fn default() -> Self {
        History {
            table: vec![[0; Square::COUNT]; Piece::INDEX_COUNT],
        }
    }
}

impl History {
    /// The score of `piece` moving to `to`.
    pub fn get(&self, piece: Piece, to: Square) -> i32 {
        self.table[piece.index()][to.index()]
    }

    /// Adds `bonus` (negative for a malus) with gravity toward zero, keeping
    /// |score| ≤ [`HISTORY_MAX`].
    pub fn update(&mut self, piece: Piece, to: Square, bonus: i32) {
        let e = &mut self.table[piece.index()][to.index()];
        *e = apply(*e, bonus);
    }

    pub fn clear(&mut self) {
        for row in &mut self.table {
            row.fill(0);
        }
    }
}

/// A piece (by side and kind; a converted piece shares its kind's slot) and
/// the square it moved to.
const SLOTS: usize = 14 * Square::COUNT;

fn slot(piece: Piece, to: Square) -> usize {
    (piece.color() as usize * 7 + piece.kind() as usize) * Square::COUNT + to.index()
}

/// The move just played, as a continuation history row's key: the piece on
/// its target square, and that square.
pub type PreviousMove = (Piece, Square);

/// Continuation history: a quiet move's score by the move before it (its piece
/// and target) and by its own piece and target, |score| ≤ [`HISTORY_MAX`].
/// Empty (no memory) until its first update: 3.2 MB per thread once used.
#[derive(Clone, Debug, Default)]
pub struct ContinuationHistory {
    /// [`SLOTS`] rows of [`SLOTS`] entries, or empty.
    table: Vec<i16>,
}

impl ContinuationHistory {
    /// The row of scores after `prev`; `None` before the first update.
    pub fn row(&self, prev: PreviousMove) -> Option<&[i16]> {
        let start = slot(prev.0, prev.1) * SLOTS;
        self.table.get(start..start + SLOTS)
    }

    /// Adds `bonus` to `piece` moving to `to` after `prev`, as [`History::update`].
    pub fn update(&mut self, prev: PreviousMove, piece: Piece, to: Square, bonus: i32) {
        if self.table.is_empty() {
            self.table = vec![0; SLOTS * SLOTS];
        }
        let e = &mut self.table[slot(prev.0, prev.1) * SLOTS + slot(piece, to)];
        // Within ±HISTORY_MAX, so within i16.
        *e = apply(i32::from(*e), bonus) as i16;
    }

    pub fn clear(&mut self) {
        self.table.fill(0);
    }
}

/// A quiet move's ordering score at one node: its history plus `weight` % of
/// its continuation score after the previous move (when there is one), so
/// |score| ≤ [`HISTORY_MAX`] × (1 + `weight` / 100).
#[derive(Clone, Copy, Debug)]
pub struct QuietScores<'a> {
    history: &'a History,
    continuation: Option<&'a [i16]>,
    weight: i32,
}

impl<'a> QuietScores<'a> {
    /// `continuation` is the row after the previous move ([`ContinuationHistory::row`]);
    /// `weight` in percent (0: history alone).
    pub fn new(history: &'a History, continuation: Option<&'a [i16]>, weight: i32) -> Self {
        QuietScores {
            history,
            continuation: continuation.filter(|_| weight != 0),
            weight,
        }
    }

    /// The score of `piece` moving to `to`.
    pub fn score(&self, piece: Piece, to: Square) -> i32 {
        let h = self.history.get(piece, to);
        match self.continuation {
            Some(row) => h + i32::from(row[slot(piece, to)]) * self.weight / 100,
            None => h,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Color, Kind};

    #[test]
    fn slots_are_distinct_for_every_side_kind_and_square() {
        let mut seen = vec![false; SLOTS];
        for color in [Color::Red, Color::Black] {
            for kind in Kind::ALL {
                for sq in Square::all() {
                    let s = slot(Piece::new(color, kind), sq);
                    assert!(!seen[s], "{color:?} {kind:?} {sq}");
                    seen[s] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn continuation_scores_stay_bounded_and_follow_the_previous_move() {
        let chariot = Piece::new(Color::Red, Kind::Chariot);
        let horse = Piece::new(Color::Black, Kind::Horse);
        let a = Square::all().next().unwrap();
        let b = Square::all().nth(40).unwrap();
        let mut c = ContinuationHistory::default();
        assert!(
            c.row((horse, a)).is_none(),
            "no memory before the first update"
        );
        for _ in 0..1000 {
            c.update((horse, a), chariot, b, 1600);
        }
        let h = History::default();
        let after_a = QuietScores::new(&h, c.row((horse, a)), 100);
        let after_b = QuietScores::new(&h, c.row((horse, b)), 100);
        assert!(after_a.score(chariot, b) > 15_000 && after_a.score(chariot, b) <= HISTORY_MAX);
        assert_eq!(after_b.score(chariot, b), 0);
        assert_eq!(
            QuietScores::new(&h, c.row((horse, a)), 0).score(chariot, b),
            0
        );
        for _ in 0..1000 {
            c.update((horse, a), chariot, b, -HISTORY_MAX * 4);
        }
        assert!(c.row((horse, a)).unwrap()[slot(chariot, b)] >= -HISTORY_MAX as i16);
    }
}
