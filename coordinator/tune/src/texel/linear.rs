//! The static evaluation as a linear function of the chosen parameters.
//!
//! Every evaluation term is a parameter times a count read off the board, so
//! for a start set `b` and a position, `eval(x) = eval(b) + Σⱼ cⱼ·(xⱼ − bⱼ)`
//! with integer coefficients `cⱼ`. [`Basis::row`] measures each `cⱼ` by moving
//! parameter `j` one unit on its own, then checks the model against an
//! evaluation with every chosen parameter moved at once by several units:
//! a parameter entering the evaluation other than linearly fails that check
//! and the position is refused, so a fit never rests on a wrong model.

use xq_engine::eval::Evaluator;
use xq_engine::{Params, Position};

use super::selection::Selection;

/// One position's linear model. `coefs` holds the non-zero coefficients as
/// (index into the [`Selection`], cp per parameter unit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The evaluation at the start set (cp, side to move).
    pub eval: i32,
    pub coefs: Vec<(u16, i32)>,
}

/// The evaluation of a position is not linear in the chosen parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the evaluation of '{fen}' is not linear in the chosen parameters (model {model} cp, engine {engine} cp)"
)]
pub struct NonLinear {
    pub fen: String,
    pub model: i64,
    pub engine: i32,
}

/// The evaluators that measure the coefficients of a start set.
#[derive(Clone, Debug)]
pub struct Basis {
    start: Evaluator,
    /// Per chosen parameter: the evaluator with it moved by `step`, and `step`
    /// (±1, inward from the range's end).
    unit: Vec<(Evaluator, i32)>,
    /// The evaluator with every chosen parameter moved by `offsets`.
    check: Evaluator,
    offsets: Vec<i32>,
}

impl Basis {
    /// The basis around `start` for `selection`.
    pub fn new(start: &Params, selection: &Selection) -> Basis {
        let moved = |name: &str, by: i32| {
            let mut p = start.clone();
            let v = start.get(name).unwrap_or_default();
            let _ = p.set(name, i64::from(v) + i64::from(by));
            p
        };
        let unit = selection
            .specs()
            .iter()
            .map(|s| {
                let v = start.get(s.name).unwrap_or(s.default);
                let step = if v < s.max { 1 } else { -1 };
                (Evaluator::new(&moved(s.name, step)), step)
            })
            .collect();
        let mut check = start.clone();
        let offsets = selection
            .specs()
            .iter()
            .enumerate()
            .map(|(j, s)| {
                let v = start.get(s.name).unwrap_or(s.default);
                let want = v + 2 + (j as i32 * 5) % 9;
                let to = if want <= s.max { want } else { v - (want - v) }.clamp(s.min, s.max);
                let _ = check.set(s.name, i64::from(to));
                to - v
            })
            .collect();
        Basis {
            start: Evaluator::new(start),
            unit,
            check: Evaluator::new(&check),
            offsets,
        }
    }

    /// The linear model of `pos`, checked against the engine.
    pub fn row(&self, pos: &Position) -> Result<Row, NonLinear> {
        let eval = self.start.evaluate(pos);
        let coefs: Vec<(u16, i32)> = self
            .unit
            .iter()
            .enumerate()
            .filter_map(|(j, (e, step))| {
                let c = (e.evaluate(pos) - eval) * step;
                (c != 0).then_some((j as u16, c))
            })
            .collect();
        let model = i64::from(eval)
            + coefs
                .iter()
                .map(|&(j, c)| i64::from(c) * i64::from(self.offsets[usize::from(j)]))
                .sum::<i64>();
        let engine = self.check.evaluate(pos);
        if model != i64::from(engine) {
            return Err(NonLinear {
                fen: pos.to_fen(),
                model,
                engine,
            });
        }
        Ok(Row { eval, coefs })
    }
}

/// The model's evaluation of a row at parameter offsets `delta` (reals, by
/// selection index, from the start set).
#[inline]
pub fn evaluate(eval: i32, coefs: &[(u16, i32)], delta: &[f64]) -> f64 {
    f64::from(eval)
        + coefs
            .iter()
            .map(|&(j, c)| f64::from(c) * delta[usize::from(j)])
            .sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_engine::params::SPECS;

    /// Positions along a fixed pseudo-random game, with conversion on so that
    /// bishops appear.
    pub(crate) fn game_positions(plies: usize, seed: u64) -> Vec<Position> {
        let mut pos = Position::startpos();
        pos.set_conversion(true);
        let mut state = seed;
        let mut out = Vec::new();
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            pos.make(moves[(state >> 33) as usize % moves.len()]);
            out.push(pos.clone());
        }
        out
    }

    /// For parameter sets across each range, the model of every position equals
    /// the engine's evaluation exactly.
    #[test]
    fn the_model_reproduces_the_engine_exactly() {
        let selection = Selection::all();
        let start = Params::default();
        let basis = Basis::new(&start, &selection);
        let positions: Vec<Position> = (0..6).flat_map(|s| game_positions(150, s)).collect();
        let rows: Vec<Row> = positions.iter().map(|p| basis.row(p).unwrap()).collect();
        for trial in 0..8u32 {
            let mut p = start.clone();
            let delta: Vec<f64> = selection
                .specs()
                .iter()
                .enumerate()
                .map(|(j, s)| {
                    let span = i64::from(s.max - s.min);
                    let v = i64::from(s.min)
                        + (i64::from(trial) * 7919 + j as i64 * 104_729) % (span + 1);
                    p.set(s.name, v).unwrap();
                    (v - i64::from(s.default)) as f64
                })
                .collect();
            let engine = Evaluator::new(&p);
            for (pos, row) in positions.iter().zip(&rows) {
                let model = evaluate(row.eval, &row.coefs, &delta);
                assert_eq!(model, f64::from(engine.evaluate(pos)), "{}", pos.to_fen());
            }
        }
    }

    #[test]
    fn coefficients_count_what_the_parameter_multiplies() {
        let horse = Selection::parse("horse_value,tempo").unwrap();
        let basis = Basis::new(&Params::default(), &horse);
        let start = basis.row(&Position::startpos()).unwrap();
        // Two horses each: the horse value cancels; the side to move gets the tempo.
        assert_eq!(start.coefs, [(1, 1)]);
        let up = Position::from_fen("3k5/9/9/9/9/9/9/9/9/1N2K4 b - - 0 1").unwrap();
        assert_eq!(basis.row(&up).unwrap().coefs, [(0, -1), (1, 1)]);
        assert!(SPECS.iter().any(|s| s.name == "horse_value"));
    }
}
