//! Quiet positions: the end of the capture sequence a quiescence search
//! expects, so that the static evaluation is not fitted to positions where a
//! piece hangs.
//!
//! The search is fail-hard alpha-beta over legal captures, most valuable victim
//! first, with the side to move free to stand pat on its static evaluation
//! except when in check. The position at the end of its principal variation is
//! the quiet position.

use xq_engine::eval::{Evaluator, see_value};
use xq_engine::{Move, Params, Position};

/// Captures deeper than this many plies are not searched (the side to move
/// stands pat); no real capture sequence in Xiangqi is longer.
const MAX_PLY: usize = 32;
/// Beyond every evaluation.
const INF: i32 = 1_000_000;

/// The position at the end of the capture sequence from `pos` under `eval`
/// (built from `params`, which order the captures), or `None` when the side to
/// move is in check there: its static evaluation says little, and the sample
/// is left out.
pub fn resolve(pos: &Position, eval: &Evaluator, params: &Params) -> Option<Position> {
    let mut pos = pos.clone();
    let mut line = Vec::new();
    qsearch(&mut pos, eval, params, -INF, INF, 0, &mut line);
    for mv in line {
        pos.make(mv);
    }
    (!pos.in_check()).then_some(pos)
}

/// The quiescence score of `pos` for the side to move, its principal variation
/// written to `line`.
fn qsearch(
    pos: &mut Position,
    eval: &Evaluator,
    params: &Params,
    mut alpha: i32,
    beta: i32,
    ply: usize,
    line: &mut Vec<Move>,
) -> i32 {
    line.clear();
    let in_check = pos.in_check();
    let stand_pat = eval.evaluate(pos);
    if ply >= MAX_PLY {
        return stand_pat;
    }
    if !in_check {
        if stand_pat >= beta {
            return beta;
        }
        alpha = alpha.max(stand_pat);
    }
    let mut captures: Vec<Move> = pos.legal_captures().into_iter().collect();
    if in_check && captures.is_empty() {
        return stand_pat;
    }
    captures.sort_by_key(|&mv| {
        let victim = pos
            .piece_at(mv.to())
            .map_or(0, |p| see_value(params, p.kind()));
        let attacker = pos
            .piece_at(mv.from())
            .map_or(0, |p| see_value(params, p.kind()));
        -(victim * 16 - attacker / 16)
    });
    let mut best = if in_check { -INF } else { alpha };
    let mut child = Vec::new();
    for mv in captures {
        let undo = pos.make(mv);
        let score = -qsearch(
            pos,
            eval,
            params,
            -beta,
            -alpha.max(best),
            ply + 1,
            &mut child,
        );
        pos.unmake(undo);
        if score > best {
            best = score;
            line.clear();
            line.push(mv);
            line.extend_from_slice(&child);
            if score >= beta {
                return beta;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(fen: &str) -> Option<Position> {
        let p = Params::default();
        resolve(&Position::from_fen(fen).unwrap(), &Evaluator::new(&p), &p)
    }

    #[test]
    fn a_quiet_position_is_its_own_leaf() {
        let start = Position::startpos();
        assert_eq!(leaf(&start.to_fen()), Some(start));
    }

    #[test]
    fn a_hanging_chariot_is_taken() {
        // Red's chariot on e5 takes Black's undefended chariot on e8.
        let fen = "3k5/9/4r4/9/9/4R4/9/9/9/5K3 w - - 0 1";
        let pos = leaf(fen).map(|p| p.to_fen());
        assert_eq!(pos.as_deref(), Some("3k5/9/4R4/9/9/9/9/9/9/5K3 b - - 0 1"));
    }

    #[test]
    fn a_position_in_check_without_captures_is_left_out() {
        // Black's general on d9 faces Red's chariot on d1 and cannot take it.
        assert_eq!(leaf("3k5/9/9/9/9/9/9/9/3R5/4K4 b - - 0 1"), None);
    }
}
