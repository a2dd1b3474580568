//! Fitting: the scale `K` first, at the start set on the training positions
//! against the games' results alone (with the engine's score in the target, a
//! smaller `K` flattens target and prediction alike, and the loss would fall
//! towards nothing as `K` → 0), then the chosen parameters by full-batch Adam on the training loss with `K`
//! fixed, each parameter kept inside its range; the result is rounded to
//! integers and its loss reported.

use std::time::Instant;

use xq_engine::Params;

use super::load::Data;
use super::logistic::{Lambda, Scale, fit_scale};
use super::selection::Selection;

/// Adam's decay rates and guard (the usual values; the guard is far below the
/// gradients of a cp-valued loss, about 1e-7 per cp).
const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-15;

/// How to fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitOptions {
    /// Weight of the engine's score in the target.
    pub lambda: Lambda,
    /// Gradient passes over the training positions.
    pub iterations: u32,
    /// Adam's step at the first pass (parameter units, cp for most), falling
    /// linearly to a tenth of it at the last.
    pub rate: f64,
}

impl FitOptions {
    /// Whether the options can work (the rate is positive and finite).
    pub fn validate(&self) -> Result<(), FitError> {
        if self.rate.is_finite() && self.rate > 0.0 {
            Ok(())
        } else {
            Err(FitError::Rate(self.rate))
        }
    }
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            lambda: Lambda::RESULT,
            iterations: 1000,
            rate: 1.0,
        }
    }
}

/// Why nothing could be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("no training position (the data is empty, all held out or all in check)")]
    NoPositions,
    #[error("rate {0} is not a positive number of parameter units")]
    Rate(f64),
}

/// The training and held-out loss of one parameter set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Losses {
    pub train: f64,
    /// `None` without held-out positions.
    pub holdout: Option<f64>,
}

/// One gradient pass, for progress reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pass {
    /// 1-based.
    pub iteration: u32,
    /// Training loss at the start of the pass (real-valued parameters).
    pub loss: f64,
}

/// The outcome of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub k: Scale,
    /// At the start set.
    pub before: Losses,
    /// At the rounded result.
    pub after: Losses,
    /// The start set with the chosen parameters replaced by the rounded fit.
    pub params: Params,
    /// The fitted values before rounding, by selection index.
    pub real: Vec<f64>,
    pub passes: u32,
    /// Wall time of all gradient passes (s).
    pub pass_seconds: f64,
}

impl Fit {
    /// Training positions one gradient pass goes through per second.
    pub fn positions_per_second(&self, train: usize) -> f64 {
        train as f64 * f64::from(self.passes) / self.pass_seconds.max(1e-9)
    }
}

/// Fits `selection`'s parameters to `data`, which was loaded around `start`.
pub fn fit(
    data: &Data,
    start: &Params,
    selection: &Selection,
    options: &FitOptions,
    mut progress: impl FnMut(&Pass),
) -> Result<Fit, FitError> {
    if data.train.is_empty() {
        return Err(FitError::NoPositions);
    }
    options.validate()?;
    let m = selection.len();
    let zero = vec![0.0; m];
    let lambda = options.lambda;
    let k = fit_scale(|k| data.train.loss(k, Lambda::RESULT, &zero));
    let losses = |delta: &[f64]| Losses {
        train: data.train.loss(k, lambda, delta),
        holdout: (!data.holdout.is_empty()).then(|| data.holdout.loss(k, lambda, delta)),
    };
    let before = losses(&zero);
    let specs = selection.specs();
    let origin: Vec<f64> = specs
        .iter()
        .map(|s| f64::from(start.get(s.name).unwrap_or(s.default)))
        .collect();
    let mut delta = zero.clone();
    let (mut mom, mut var) = (zero.clone(), zero);
    let clock = Instant::now();
    for t in 1..=options.iterations {
        let g = data.train.gradient(k, lambda, &delta);
        progress(&Pass {
            iteration: t,
            loss: g.loss,
        });
        let done = f64::from(t - 1) / f64::from(options.iterations.max(2) - 1);
        let rate = options.rate * (1.0 - 0.9 * done);
        let (c1, c2) = (1.0 - BETA1.powi(t as i32), 1.0 - BETA2.powi(t as i32));
        for j in 0..m {
            mom[j] = BETA1 * mom[j] + (1.0 - BETA1) * g.grad[j];
            var[j] = BETA2 * var[j] + (1.0 - BETA2) * g.grad[j] * g.grad[j];
            let step = rate * (mom[j] / c1) / ((var[j] / c2).sqrt() + EPSILON);
            let (lo, hi) = (f64::from(specs[j].min), f64::from(specs[j].max));
            delta[j] = (origin[j] + delta[j] - step).clamp(lo, hi) - origin[j];
        }
    }
    let pass_seconds = clock.elapsed().as_secs_f64();
    let real: Vec<f64> = origin.iter().zip(&delta).map(|(o, d)| o + d).collect();
    let mut params = start.clone();
    let mut rounded = Vec::with_capacity(m);
    for (spec, &x) in specs.iter().zip(&real) {
        let v = (x.round() as i32).clamp(spec.min, spec.max);
        let _ = params.set(spec.name, i64::from(v));
        rounded.push(f64::from(v));
    }
    let rounded_delta: Vec<f64> = rounded.iter().zip(&origin).map(|(r, o)| r - o).collect();
    Ok(Fit {
        k,
        before,
        after: losses(&rounded_delta),
        params,
        real,
        passes: options.iterations,
        pass_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texel::linear::Row;
    use crate::texel::rows::Rows;

    /// Positions whose evaluation is `c·horse_value`, with results drawn from
    /// the logistic at `K = 1` of `c·300` and scores `c·300`. `K` is fitted at
    /// the start value 379 against the results, so it absorbs the scale:
    /// 300/379. Against the scores (λ = 1) the fit then finds 300.
    #[test]
    fn adam_finds_the_value_the_targets_imply() {
        let start = Params {
            horse_value: 379,
            ..Params::default()
        };
        let selection = Selection::parse("horse_value").unwrap();
        let truth = Scale::new(1.0).unwrap();
        let mut train = Rows::default();
        for c in [-2, -1, 1, 2] {
            for _ in 0..50 {
                let row = Row {
                    eval: c * start.horse_value,
                    coefs: vec![(0, c)],
                };
                let score = c * 300;
                train.push(row, score, truth.expectation(f64::from(score)));
            }
        }
        let data = Data {
            train,
            ..Data::default()
        };
        let options = FitOptions {
            lambda: Lambda::new(1.0).unwrap(),
            iterations: 600,
            rate: 1.0,
        };
        let fit = fit(&data, &start, &selection, &options, |_| {}).unwrap();
        assert!((fit.k.get() - 300.0 / 379.0).abs() < 1e-3, "{}", fit.k);
        assert!((fit.real[0] - 300.0).abs() < 1.0, "{:?}", fit.real);
        assert_eq!(fit.params.horse_value, 300);
        assert!(
            fit.after.train < 1e-9 && fit.before.train > 1e-3,
            "{:?}",
            fit
        );
        assert_eq!(fit.after.holdout, None);
    }

    #[test]
    fn bad_options_and_empty_data_are_refused() {
        let selection = Selection::parse("tempo").unwrap();
        let none = fit(
            &Data::default(),
            &Params::default(),
            &selection,
            &FitOptions::default(),
            |_| {},
        );
        assert_eq!(none.unwrap_err(), FitError::NoPositions);
        let bad = FitOptions {
            rate: 0.0,
            ..FitOptions::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("rate 0 "));
    }
}
