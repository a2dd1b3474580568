//! Positions as linear models with their targets, stored compressed, and the
//! loss and its gradient over them, in parallel across positions.

use rayon::prelude::*;

use super::linear::{self, Row};
use super::logistic::{Lambda, Scale, squared_error};

/// Positions below this many per rayon task are not split further.
const MIN_TASK: usize = 2048;

/// Linear models of positions and their targets. Invariants: `eval`, `score`
/// and `points` have one entry per position, `start` one more, increasing from
/// 0 to `index.len() == coef.len()`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rows {
    /// Evaluation at the start set (cp, side to move).
    eval: Vec<i32>,
    /// The engine's score (cp, side to move).
    score: Vec<i32>,
    /// The game's points for the side to move: 1, ½ or 0.
    points: Vec<f32>,
    start: Vec<u32>,
    index: Vec<u16>,
    coef: Vec<i32>,
}

/// The loss and its gradient with respect to each chosen parameter (per unit).
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    pub loss: f64,
    pub grad: Vec<f64>,
}

impl Default for Rows {
    /// No positions.
    fn default() -> Rows {
        Rows {
            eval: Vec::new(),
            score: Vec::new(),
            points: Vec::new(),
            start: vec![0],
            index: Vec::new(),
            coef: Vec::new(),
        }
    }
}

impl Rows {
    pub fn push(&mut self, row: Row, score: i32, points: f64) {
        self.eval.push(row.eval);
        self.score.push(score);
        self.points.push(points as f32);
        for (j, c) in row.coefs {
            self.index.push(j);
            self.coef.push(c);
        }
        self.start.push(self.index.len() as u32);
    }

    pub fn len(&self) -> usize {
        self.eval.len()
    }

    pub fn is_empty(&self) -> bool {
        self.eval.is_empty()
    }

    /// Position `i`'s evaluation at offsets `delta` from the start set, its
    /// score and its points.
    #[inline]
    fn at(&self, i: usize, delta: &[f64]) -> (f64, f64, f64) {
        let (a, b) = (self.start[i] as usize, self.start[i + 1] as usize);
        let e = f64::from(self.eval[i])
            + self.index[a..b]
                .iter()
                .zip(&self.coef[a..b])
                .map(|(&j, &c)| f64::from(c) * delta[usize::from(j)])
                .sum::<f64>();
        (e, f64::from(self.score[i]), f64::from(self.points[i]))
    }

    /// The mean squared error at offsets `delta` (0 when there are no
    /// positions).
    pub fn loss(&self, k: Scale, lambda: Lambda, delta: &[f64]) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let sum: f64 = (0..self.len())
            .into_par_iter()
            .with_min_len(MIN_TASK)
            .map(|i| {
                let (e, s, p) = self.at(i, delta);
                squared_error(k, lambda, e, s, p)
            })
            .sum();
        sum / self.len() as f64
    }

    /// The loss and its gradient at `delta`, in one pass.
    pub fn gradient(&self, k: Scale, lambda: Lambda, delta: &[f64]) -> Gradient {
        let m = delta.len();
        let (loss, grad) = (0..self.len())
            .into_par_iter()
            .with_min_len(MIN_TASK)
            .fold(
                || (0.0, vec![0.0; m]),
                |(mut loss, mut grad), i| {
                    let (e, s, p) = self.at(i, delta);
                    let t = lambda.target(k, s, p);
                    let q = k.expectation(e);
                    loss += (t - q) * (t - q);
                    let g = -2.0 * (t - q) * k.slope(q);
                    let (a, b) = (self.start[i] as usize, self.start[i + 1] as usize);
                    for (&j, &c) in self.index[a..b].iter().zip(&self.coef[a..b]) {
                        grad[usize::from(j)] += g * f64::from(c);
                    }
                    (loss, grad)
                },
            )
            .reduce(
                || (0.0, vec![0.0; m]),
                |(la, mut ga), (lb, gb)| {
                    ga.iter_mut().zip(gb).for_each(|(a, b)| *a += b);
                    (la + lb, ga)
                },
            );
        let n = self.len().max(1) as f64;
        Gradient {
            loss: loss / n,
            grad: grad.into_iter().map(|g| g / n).collect(),
        }
    }

    /// The evaluation of position `i` at `delta` (for tests and reports).
    pub fn evaluation(&self, i: usize, delta: &[f64]) -> f64 {
        let (a, b) = (self.start[i] as usize, self.start[i + 1] as usize);
        let coefs: Vec<(u16, i32)> = self.index[a..b]
            .iter()
            .copied()
            .zip(self.coef[a..b].iter().copied())
            .collect();
        linear::evaluate(self.eval[i], &coefs, delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Rows {
        let mut r = Rows::default();
        r.push(
            Row {
                eval: 100,
                coefs: vec![(0, 1), (1, -2)],
            },
            80,
            1.0,
        );
        r.push(
            Row {
                eval: -50,
                coefs: vec![(1, 3)],
            },
            -40,
            0.5,
        );
        r.push(
            Row {
                eval: 0,
                coefs: vec![],
            },
            0,
            0.0,
        );
        r
    }

    #[test]
    fn the_loss_is_the_mean_squared_error() {
        let k = Scale::new(1.0).unwrap();
        let r = rows();
        let delta = [10.0, 5.0];
        assert_eq!(r.evaluation(0, &delta), 100.0);
        assert_eq!(r.evaluation(1, &delta), -35.0);
        let want = (squared_error(k, Lambda::RESULT, 100.0, 80.0, 1.0)
            + squared_error(k, Lambda::RESULT, -35.0, -40.0, 0.5)
            + squared_error(k, Lambda::RESULT, 0.0, 0.0, 0.0))
            / 3.0;
        assert!((r.loss(k, Lambda::RESULT, &delta) - want).abs() < 1e-15);
        assert_eq!(Rows::default().loss(k, Lambda::RESULT, &delta), 0.0);
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        let k = Scale::new(1.3).unwrap();
        let lambda = Lambda::new(0.4).unwrap();
        let r = rows();
        let delta = [3.0, -7.0];
        let g = r.gradient(k, lambda, &delta);
        assert!((g.loss - r.loss(k, lambda, &delta)).abs() < 1e-15);
        for j in 0..2 {
            let h = 1e-3;
            let mut up = delta;
            up[j] += h;
            let mut down = delta;
            down[j] -= h;
            let numeric = (r.loss(k, lambda, &up) - r.loss(k, lambda, &down)) / (2.0 * h);
            assert!(
                (g.grad[j] - numeric).abs() < 1e-9,
                "{j}: {} vs {numeric}",
                g.grad[j]
            );
        }
    }
}
