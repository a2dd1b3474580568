//! Scoring repeated positions and the other rule-based draws inside the search.
//!
//! The search keeps one [`HistoryEntry`] per position on the current line (game
//! positions before the root, then the tree). [`judge`] looks for an earlier
//! occurrence of the current position and scores the cycle with the exact
//! perpetual-check rule (RULES.md §5, art. 24): if every move of one side inside
//! the cycle gave check and not every move of the other side did, the checking
//! side loses; otherwise the repetition is a draw. Chases are not judged here.
//!
//! Integration point: [`judge`] is the one function that decides a repetition's
//! outcome. It can later delegate to the rules module's chase-aware verdict; it
//! needs only the cycle's slice of [`HistoryEntry`] (hash and gave-check per ply),
//! which a chase judgement would extend with the moves themselves.

use crate::Color;

use super::{MATE_BOUND, Score};

/// One position of the game or search line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HistoryEntry {
    /// [`crate::Position::hash`] of the position.
    pub hash: u64,
    /// Whether the move that led to this position gave check (the side to move in
    /// it is in check). False for a game's first position unless it is in check.
    pub gave_check: bool,
}

impl HistoryEntry {
    /// The entry for `pos` as it stands: its hash, and whether its side to move is
    /// in check (which is whether the move into it gave check).
    pub fn of(pos: &crate::Position) -> HistoryEntry {
        HistoryEntry {
            hash: pos.hash(),
            gave_check: pos.in_check(),
        }
    }
}

/// The rule settings the search needs; build it from a rule set preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchRules {
    /// Plies without capture after which the game is drawn (RULES.md §4: 120).
    pub natural_limit_plies: u32,
    /// Whether a side with no legal move and not in check draws (otherwise it loses).
    pub stalemate_is_draw: bool,
    /// Occurrence of the same position that ends the game (3 standard, 4 variant).
    /// Within the search tree one repetition is judged at once.
    pub repetition_count: u32,
    /// Score of a draw for Red (cp); Black's is the negation. Non-zero under the
    /// 2007 reform scoring, where a draw is worth less to Red than to Black.
    pub draw_value_red_cp: i32,
}

impl Default for SearchRules {
    /// The standard rules: 120-ply limit, stalemate loses, third occurrence, no contempt.
    fn default() -> Self {
        SearchRules {
            natural_limit_plies: 120,
            stalemate_is_draw: false,
            repetition_count: 3,
            draw_value_red_cp: 0,
        }
    }
}

impl SearchRules {
    /// The score of a draw for the side to move `stm` (cp).
    pub fn draw_score(&self, stm: Color) -> Score {
        match stm {
            Color::Red => self.draw_value_red_cp,
            Color::Black => -self.draw_value_red_cp,
        }
    }
}

/// Score for the side that repeats by perpetual check: a decisive value well above
/// any evaluation and below every mate score ([`MATE_BOUND`]), so it is never
/// reported as a mate. The perpetual checker gets `-PERPETUAL_LOSS`.
pub const PERPETUAL_LOSS: Score = MATE_BOUND - 2000;

/// Judges the last entry of `line` (the current position, side to move `stm`).
///
/// `root` is the index in `line` of the search root: an earlier occurrence at or
/// after it is enough; occurrences before it count toward `rules.repetition_count`.
/// `reversible` is how many plies back a repetition may lie (captures and null
/// moves cut it). Returns `None` when the position is not judged a repetition,
/// else the score for `stm` (cp; a draw, or ±[`PERPETUAL_LOSS`]).
pub fn judge(
    line: &[HistoryEntry],
    root: usize,
    reversible: usize,
    stm: Color,
    rules: &SearchRules,
) -> Option<Score> {
    let now = line.len().checked_sub(1)?;
    let hash = line[now].hash;
    let earliest = now.saturating_sub(reversible);
    let mut occurrences = 1;
    let mut i = now;
    while i >= earliest + 2 && i >= 2 {
        i -= 2;
        if line[i].hash != hash {
            continue;
        }
        occurrences += 1;
        if i >= root || occurrences >= rules.repetition_count {
            return Some(verdict(&line[i + 1..=now], stm, rules));
        }
    }
    None
}

/// The outcome of the cycle whose moves led to the positions `cycle` (the last one
/// being the current position, `stm` to move): perpetual check loses, anything
/// else draws.
fn verdict(cycle: &[HistoryEntry], stm: Color, rules: &SearchRules) -> Score {
    let n = cycle.len();
    // Entry k (from the end, 0-based) was produced by the opponent of `stm` when k
    // is even, by `stm` when k is odd.
    let mut them_all_check = true;
    let mut us_all_check = true;
    for (k, e) in cycle.iter().rev().enumerate() {
        if k % 2 == 0 {
            them_all_check &= e.gave_check;
        } else {
            us_all_check &= e.gave_check;
        }
    }
    if n < 2 {
        return rules.draw_score(stm);
    }
    match (us_all_check, them_all_check) {
        (true, false) => -PERPETUAL_LOSS,
        (false, true) => PERPETUAL_LOSS,
        _ => rules.draw_score(stm),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(spec: &[(u64, bool)]) -> Vec<HistoryEntry> {
        spec.iter()
            .map(|&(hash, gave_check)| HistoryEntry { hash, gave_check })
            .collect()
    }

    #[test]
    fn perpetual_check_loses_and_plain_repetition_draws() {
        let rules = SearchRules::default();
        // Hashes 1 2 3 4 1, `stm` to move at the end: the moves into line
        // indices 4 and 2 were the opponent's, into indices 3 and 1 `stm`'s.
        let them_check = line(&[(1, false), (2, false), (3, true), (4, false), (1, true)]);
        assert_eq!(
            judge(&them_check, 0, 10, Color::Red, &rules),
            Some(PERPETUAL_LOSS)
        );
        let us_check = line(&[(1, false), (2, true), (3, false), (4, true), (1, false)]);
        assert_eq!(
            judge(&us_check, 0, 10, Color::Red, &rules),
            Some(-PERPETUAL_LOSS)
        );
        let both = line(&[(1, false), (2, true), (3, true), (4, true), (1, true)]);
        assert_eq!(judge(&both, 0, 10, Color::Black, &rules), Some(0));
        let contempt = SearchRules {
            draw_value_red_cp: -40,
            ..rules
        };
        let quiet = line(&[(1, false), (2, false), (3, false), (4, false), (1, false)]);
        assert_eq!(judge(&quiet, 0, 10, Color::Black, &contempt), Some(40));
        assert_eq!(judge(&quiet, 0, 3, Color::Black, &contempt), None);
    }

    #[test]
    fn game_history_needs_the_standard_count() {
        let rules = SearchRules::default();
        let once = line(&[(1, false), (2, false), (3, false), (4, false), (1, false)]);
        assert_eq!(judge(&once, 4, 10, Color::Red, &rules), None);
        let twice = line(&[
            (1, false),
            (2, false),
            (3, false),
            (4, false),
            (1, false),
            (2, false),
            (3, false),
            (4, false),
            (1, false),
        ]);
        assert_eq!(judge(&twice, 8, 10, Color::Red, &rules), Some(0));
    }
}
