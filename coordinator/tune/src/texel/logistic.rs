//! The logistic model of Texel's method, its training target and the loss.
//!
//! An evaluation `e` (cp, for the side to move) predicts that side's expected
//! points as `σ(e) = 1 / (1 + 10^(−K·e/400))`, the base-10 form in which `K = 1`
//! makes 400 cp a 10:1 favourite. The target of a position is
//! `λ·σ(score) + (1 − λ)·result`, `score` being the engine's score and `result`
//! the game's points for the side to move. The loss is the mean squared error
//! between target and prediction.

use std::fmt;

/// `ln 10`, the derivative factor of the base-10 logistic.
pub const LN_10: f64 = std::f64::consts::LN_10;

/// The scaling constant `K` of the logistic. Invariant: finite and positive.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Scale(f64);

impl Scale {
    /// Bounds searched by [`fit_scale`].
    pub const SEARCH: (f64, f64) = (0.01, 10.0);

    /// `None` unless `k` is finite and positive.
    pub fn new(k: f64) -> Option<Scale> {
        (k.is_finite() && k > 0.0).then_some(Scale(k))
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// The expected points `σ(e)` of an evaluation `e` (cp).
    #[inline]
    pub fn expectation(self, eval: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-self.0 * eval / 400.0))
    }

    /// `dσ/de` at an expectation `s = σ(e)` (per cp).
    #[inline]
    pub fn slope(self, s: f64) -> f64 {
        s * (1.0 - s) * LN_10 * self.0 / 400.0
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.4}", self.0)
    }
}

/// The weight `λ` of the engine's score in the target. Invariant: in `0..=1`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Lambda(f64);

/// `λ` outside `0..=1`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("lambda {0} is not in 0..=1 (the weight of the engine's score in the target)")]
pub struct LambdaError(pub f64);

impl Lambda {
    /// The pure game result.
    pub const RESULT: Lambda = Lambda(0.0);

    pub fn new(l: f64) -> Result<Lambda, LambdaError> {
        if (0.0..=1.0).contains(&l) {
            Ok(Lambda(l))
        } else {
            Err(LambdaError(l))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// The target for a position whose side to move scored `points` (1, ½ or 0)
    /// and was given `score` (cp) by the engine.
    #[inline]
    pub fn target(self, k: Scale, score: f64, points: f64) -> f64 {
        if self.0 == 0.0 {
            points
        } else {
            self.0 * k.expectation(score) + (1.0 - self.0) * points
        }
    }
}

/// One position's squared error.
#[inline]
pub fn squared_error(k: Scale, lambda: Lambda, eval: f64, score: f64, points: f64) -> f64 {
    let d = lambda.target(k, score, points) - k.expectation(eval);
    d * d
}

/// The `K` in [`Scale::SEARCH`] that minimises `loss` (unimodal in `K` for the
/// logistic model), by golden-section search on `ln K` to a relative precision
/// of 1e-4.
pub fn fit_scale(mut loss: impl FnMut(Scale) -> f64) -> Scale {
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (Scale::SEARCH.0.ln(), Scale::SEARCH.1.ln());
    let mut at = |x: f64| loss(Scale(x.exp()));
    let mut c = b - inv_phi * (b - a);
    let mut d = a + inv_phi * (b - a);
    let (mut fc, mut fd) = (at(c), at(d));
    while b - a > 1e-4 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - inv_phi * (b - a);
            fc = at(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + inv_phi * (b - a);
            fd = at(d);
        }
    }
    Scale(((a + b) / 2.0).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logistic_is_base_ten() {
        let k = Scale::new(1.0).unwrap();
        assert_eq!(k.expectation(0.0), 0.5);
        assert!((k.expectation(400.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((k.expectation(-400.0) - 1.0 / 11.0).abs() < 1e-12);
        let h = 1e-4;
        let numeric = (k.expectation(123.0 + h) - k.expectation(123.0 - h)) / (2.0 * h);
        assert!((k.slope(k.expectation(123.0)) - numeric).abs() < 1e-9);
        assert!(Scale::new(0.0).is_none() && Scale::new(f64::NAN).is_none());
    }

    #[test]
    fn targets_and_errors() {
        let k = Scale::new(1.0).unwrap();
        assert_eq!(Lambda::RESULT.target(k, 400.0, 1.0), 1.0);
        let half = Lambda::new(0.5).unwrap();
        let t = half.target(k, 400.0, 0.0);
        assert!((t - 5.0 / 11.0).abs() < 1e-12);
        let e = squared_error(k, Lambda::RESULT, 400.0, 0.0, 0.0);
        assert!((e - 100.0 / 121.0).abs() < 1e-12);
        assert!(Lambda::new(1.5).unwrap_err().to_string().contains("1.5"));
        assert!(Lambda::new(-0.1).is_err());
    }

    /// Results drawn from the model with a known K: the fitted K is that K.
    #[test]
    fn the_scale_of_synthetic_games_is_found() {
        for true_k in [0.6, 1.3, 2.5] {
            let k = Scale::new(true_k).unwrap();
            let evals: Vec<f64> = (-400..=400).map(|e| f64::from(e) * 2.0).collect();
            // The exact expectation as a fractional result: the loss's minimum
            // is at the true K.
            let loss = |s: Scale| {
                evals
                    .iter()
                    .map(|&e| squared_error(s, Lambda::RESULT, e, 0.0, k.expectation(e)))
                    .sum::<f64>()
            };
            let fitted = fit_scale(loss).get();
            assert!(
                (fitted - true_k).abs() < 1e-3 * true_k,
                "{fitted} vs {true_k}"
            );
        }
    }

    /// With pure-score targets (λ = 1) and evaluations equal to the scores,
    /// the loss is zero for every K.
    #[test]
    fn a_pure_score_target_matches_its_own_scores() {
        let k = Scale::new(0.8).unwrap();
        let one = Lambda::new(1.0).unwrap();
        assert_eq!(squared_error(k, one, 250.0, 250.0, 0.0), 0.0);
        assert!(squared_error(k, one, 250.0, -250.0, 1.0) > 0.1);
    }
}
