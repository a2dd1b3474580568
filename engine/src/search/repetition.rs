//! Scoring repeated positions and the other rule-based draws inside the search
//! (the natural limit, and Pikafish's material draws under its code).
//!
//! The search keeps one [`HistoryEntry`] per position on the current line (game
//! positions before the root, then the tree), each with the move that led to it.
//! [`judge`] looks for an earlier occurrence of the current position and scores
//! the cycle with the arbiter's own verdict ([`crate::rules::judge_cycle`], engine/RULES.md
//! §5): perpetual check, and with the chase rule on, perpetual chase and mixtures,
//! lose; any other repetition is a draw.
//!
//! Moves are classified only when a repetition is found, so ordinary nodes pay
//! nothing for it: [`judge_cycle`] replays the cycle's moves from the current
//! position (the cycle's first one) and classifies every move exactly, as the
//! arbiter does.

use crate::rules::material_draw::{MaterialDraw, leaves_no_reply, material_draw};
use crate::rules::{Code, MateMemo, PlyEntry, RuleSet, Stalemate, Verdict, judge_cycle};
use crate::{Color, Move, Position};

use super::{MATE_BOUND, Score};

/// One position of the game or search line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HistoryEntry {
    /// [`crate::Position::hash`] of the position.
    pub hash: u64,
    /// Whether the move that led to this position gave check (the side to move in
    /// it is in check). False for a game's first position unless it is in check.
    pub gave_check: bool,
    /// The move that led to this position; `None` for a game's first position and
    /// after a null move.
    pub mv: Option<Move>,
}

impl HistoryEntry {
    /// The entry for `pos` as it stands, reached by `mv`: its hash, and whether its
    /// side to move is in check (which is whether the move into it gave check).
    pub fn of(pos: &Position, mv: Option<Move>) -> HistoryEntry {
        HistoryEntry {
            hash: pos.hash(),
            gave_check: pos.in_check(),
            mv,
        }
    }
}

/// The rules the search plays by: a rule set, and the value of a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchRules {
    /// Repetition judgement, the natural limit, stalemate and conversion.
    pub rules: RuleSet,
    /// Score of a draw for Red (cp); Black's is the negation. Non-zero for a
    /// scoring-aware engine under the 2007 reform, where a draw is worth less to
    /// Red than to Black.
    pub draw_value_red_cp: i32,
}

impl Default for SearchRules {
    /// The standard rules, draws worth 0.
    fn default() -> Self {
        SearchRules {
            rules: RuleSet::default(),
            draw_value_red_cp: 0,
        }
    }
}

impl From<&RuleSet> for SearchRules {
    /// `rules` with draws worth 0 to both sides.
    fn from(rules: &RuleSet) -> Self {
        SearchRules {
            rules: *rules,
            draw_value_red_cp: 0,
        }
    }
}

impl SearchRules {
    /// The rules as an engine plays them that knows the scoring: with
    /// `draw_contempt`, a draw is valued at the score whose logistic expectation
    /// (400 cp per tenfold odds, the Elo scale) equals Red's share of a win that a
    /// draw earns under `rules.scoring`. That share is ½ under the standard scoring,
    /// so the value is 0. Under the 2007 reform it is 1 point of 3 for Red and 2 of
    /// 3 for Black, which gives −120 cp for Red and +120 cp for Black. Without
    /// `draw_contempt` a draw is worth 0 to both.
    pub fn scoring_aware(rules: &RuleSet, draw_contempt: bool) -> SearchRules {
        let share = rules.scoring.points(None, Color::Red)
            / rules.scoring.points(Some(Color::Red), Color::Red);
        let draw_value_red_cp = if draw_contempt && share > 0.0 && share < 1.0 {
            (400.0 * (share / (1.0 - share)).log10()).round() as i32
        } else {
            0
        };
        SearchRules {
            rules: *rules,
            draw_value_red_cp,
        }
    }

    /// The score of a draw for the side to move `stm` (cp).
    pub fn draw_score(&self, stm: Color) -> Score {
        match stm {
            Color::Red => self.draw_value_red_cp,
            Color::Black => -self.draw_value_red_cp,
        }
    }

    /// Plies without capture after which the game may be drawn (`u32::MAX`: no
    /// limit); [`move_limit_reached`] decides, counting checks (art. 23.3).
    pub fn natural_limit_plies(&self) -> u32 {
        self.rules.move_limit_plies().unwrap_or(u32::MAX)
    }

    /// Whether having no legal move while not in check draws (otherwise it loses).
    pub fn stalemate_is_draw(&self) -> bool {
        self.rules.stalemate == Stalemate::Draw
    }
}

/// Score for the side that repeats by a forbidden perpetual (check, chase or a
/// mixture): a decisive value well above any evaluation and below every mate score
/// ([`MATE_BOUND`]), so it is never reported as a mate. The loser gets
/// `-PERPETUAL_LOSS`.
pub const PERPETUAL_LOSS: Score = MATE_BOUND - 2000;

/// Judges the last entry of `line`, the current position `pos`.
///
/// `root` is the index in `line` of the search root: an earlier occurrence at or
/// after it is enough; occurrences before it count toward the rule set's
/// repetition count. `reversible` is how many plies back a repetition may lie
/// (captures and null moves cut it). Returns `None` when the position is not
/// judged a repetition, else the score for the side to move (cp; a draw, or
/// ±[`PERPETUAL_LOSS`]). `memo` keeps the answers of the mate-threat tests
/// from one call to the next (the search judges the same cycles at many nodes).
pub fn judge(
    line: &[HistoryEntry],
    root: usize,
    reversible: usize,
    pos: &Position,
    rules: &SearchRules,
    memo: &mut MateMemo,
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
        if i >= root || occurrences >= rules.rules.repetition_count {
            return Some(verdict(&line[i..=now], pos, rules, memo));
        }
    }
    None
}

/// The outcome of the cycle `cycle` (its first and last positions are the same,
/// the last being `pos`), for the side to move in `pos`.
fn verdict(
    cycle: &[HistoryEntry],
    pos: &Position,
    rules: &SearchRules,
    memo: &mut MateMemo,
) -> Score {
    let stack: Vec<PlyEntry> = cycle
        .iter()
        .enumerate()
        .map(|(i, e)| PlyEntry {
            hash: e.hash,
            check: e.gave_check,
            mv: if i == 0 { None } else { e.mv },
        })
        .collect();
    match judge_cycle(&stack, 2, &rules.rules, pos, memo) {
        Some(Verdict::SideToMoveWins(_)) => PERPETUAL_LOSS,
        Some(Verdict::SideToMoveLoses(_)) => -PERPETUAL_LOSS,
        Some(Verdict::Draw(_)) | None => rules.draw_score(pos.side_to_move()),
    }
}

/// Whether the natural move limit draws at the last entry of `line`, the
/// current position `pos`, counting the checks of the last `reversible` plies
/// as the rule set's code does (art. 23.3: at most ten of a side's checks
/// count; [`RuleSet::move_limit_reached`]).
pub fn move_limit_reached(
    line: &[HistoryEntry],
    reversible: usize,
    pos: &Position,
    rules: &SearchRules,
) -> bool {
    let plies = pos.halfmove_clock();
    if plies < rules.natural_limit_plies() {
        return false;
    }
    let known = &line[line.len() - reversible.min(line.len())..];
    rules
        .rules
        .move_limit_reached(plies, known.iter().map(|e| e.gave_check))
}

/// Whether `pos` is drawn for insufficient material: under the Pikafish code
/// only, as Pikafish's `rule_judge` declares it (engine/PIKAFISH_RULES.md §6).
/// A position without a legal move is left to the search (mated, as there).
pub fn material_drawn(pos: &Position, rules: &SearchRules) -> bool {
    if rules.rules.code != Code::Pikafish {
        return false;
    }
    match material_draw(pos) {
        MaterialDraw::No => false,
        MaterialDraw::Direct => true,
        MaterialDraw::UnlessMateInOne => pos.has_legal_move() && !leaves_no_reply(&mut pos.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position with `stm` to move (only its side to move matters here).
    fn to_move(stm: Color) -> Position {
        let mut pos = Position::startpos();
        if stm == Color::Black {
            pos.make_null();
        }
        pos
    }

    fn line(spec: &[(u64, bool)]) -> Vec<HistoryEntry> {
        spec.iter()
            .map(|&(hash, gave_check)| HistoryEntry {
                hash,
                gave_check,
                mv: None,
            })
            .collect()
    }

    #[test]
    fn perpetual_check_loses_and_plain_repetition_draws() {
        let rules = SearchRules::default();
        // Hashes 1 2 3 4 1, `stm` to move at the end: the moves into line
        // indices 4 and 2 were the opponent's, into indices 3 and 1 `stm`'s.
        let them_check = line(&[(1, false), (2, false), (3, true), (4, false), (1, true)]);
        assert_eq!(
            judge(
                &them_check,
                0,
                10,
                &to_move(Color::Red),
                &rules,
                &mut MateMemo::default()
            ),
            Some(PERPETUAL_LOSS)
        );
        let us_check = line(&[(1, false), (2, true), (3, false), (4, true), (1, false)]);
        assert_eq!(
            judge(
                &us_check,
                0,
                10,
                &to_move(Color::Red),
                &rules,
                &mut MateMemo::default()
            ),
            Some(-PERPETUAL_LOSS)
        );
        let both = line(&[(1, false), (2, true), (3, true), (4, true), (1, true)]);
        assert_eq!(
            judge(
                &both,
                0,
                10,
                &to_move(Color::Black),
                &rules,
                &mut MateMemo::default()
            ),
            Some(0)
        );
        let contempt = SearchRules {
            draw_value_red_cp: -40,
            ..rules
        };
        let quiet = line(&[(1, false), (2, false), (3, false), (4, false), (1, false)]);
        assert_eq!(
            judge(
                &quiet,
                0,
                10,
                &to_move(Color::Black),
                &contempt,
                &mut MateMemo::default()
            ),
            Some(40)
        );
        assert_eq!(
            judge(
                &quiet,
                0,
                3,
                &to_move(Color::Black),
                &contempt,
                &mut MateMemo::default()
            ),
            None
        );
    }

    #[test]
    fn draw_values_follow_the_scoring() {
        let standard = SearchRules::scoring_aware(&RuleSet::default(), true);
        assert_eq!(standard.draw_value_red_cp, 0);
        let reform: RuleSet = "reform-2007".parse().unwrap();
        assert_eq!(
            SearchRules::scoring_aware(&reform, true).draw_value_red_cp,
            -120
        );
        assert_eq!(
            SearchRules::scoring_aware(&reform, false).draw_value_red_cp,
            0
        );
    }

    #[test]
    fn game_history_needs_the_standard_count() {
        let rules = SearchRules::default();
        let once = line(&[(1, false), (2, false), (3, false), (4, false), (1, false)]);
        assert_eq!(
            judge(
                &once,
                4,
                10,
                &to_move(Color::Red),
                &rules,
                &mut MateMemo::default()
            ),
            None
        );
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
        assert_eq!(
            judge(
                &twice,
                8,
                10,
                &to_move(Color::Red),
                &rules,
                &mut MateMemo::default()
            ),
            Some(0)
        );
    }
}
