//! The generalized log-likelihood ratio (GLLR) used by fishtest's SPRT.
//!
//! A sample is reduced to its empirical distribution `p̂` over the possible
//! per-unit scores `a_i ∈ [0, 1]` (game or pair score, rescaled). For each
//! hypothesis the maximum-likelihood distribution `p⁽ʲ⁾` under the
//! hypothesis' constraint is found, and
//!
//! ```text
//! LLR = N · Σ_i p̂_i · (ln p⁽¹⁾_i − ln p⁽⁰⁾_i)
//! ```
//!
//! where `N` is the number of sampling units (games or pairs).
//!
//! * **Logistic** bounds constrain the expectation: `E[a] = L(elo)`. The MLE
//!   is `p_i = p̂_i / (1 + x (a_i − s))` where `x` solves the secular equation
//!   `Σ p̂_i (a_i − s)/(1 + x (a_i − s)) = 0` on the interval that keeps every
//!   `p_i` positive (Van den Bergh, "support_MLE_multinomial").
//! * **Normalized** bounds constrain the t-value: `(E[a] − ½)/σ = t`, with
//!   `t = nelo/(800/ln 10)` for games and `√2` times that for pairs. The MLE
//!   is found by fixed-point iteration, each step solving a secular equation
//!   with `a_i − ½ − t·σ·(1 + ((μ − a_i)/σ)²)/2` in place of `a_i − s`
//!   ("normalized_elo_practical", section 4.1).

use std::f64::consts::SQRT_2;

use super::elo::{NELO_PER_NT, elo_to_score};
use super::roots::brent;
use super::sample::{Pdf, moments, results_to_pdf};
use super::{EloModel, Results, StatsError};

/// Distance kept from the poles of the secular equation.
const POLE_MARGIN: f64 = 1e-9;
/// Fixed-point iterations for the t-value MLE (as fishtest).
const T_VALUE_ITERATIONS: usize = 10;
const T_VALUE_TOLERANCE: f64 = 1e-9;

/// Solves `Σ p_i a_i / (1 + x a_i) = 0` for `x` with every `1 + x a_i > 0`.
/// Requires values of both signs among the `a_i`.
fn secular(shifted: &[(f64, f64)]) -> Result<f64, StatsError> {
    let lo = shifted
        .iter()
        .map(|&(a, _)| a)
        .fold(f64::INFINITY, f64::min);
    let hi = shifted
        .iter()
        .map(|&(a, _)| a)
        .fold(f64::NEG_INFINITY, f64::max);
    let product = lo * hi;
    if product.is_nan() || product >= 0.0 {
        return Err(StatsError::NoSolution {
            what: "that constraint: it lies outside the observable outcomes".to_owned(),
        });
    }
    let f = |x: f64| {
        shifted
            .iter()
            .map(|&(a, p)| p * a / (1.0 + x * a))
            .sum::<f64>()
    };
    brent(f, -1.0 / hi + POLE_MARGIN, -1.0 / lo - POLE_MARGIN)
}

/// The maximum-likelihood distribution on the support of `pdf` whose
/// expectation is `s`.
pub fn mle_expected(pdf: &[(f64, f64)], s: f64) -> Result<Pdf, StatsError> {
    let shifted: Pdf = pdf.iter().map(|&(a, p)| (a - s, p)).collect();
    let x = secular(&shifted)?;
    Ok(pdf
        .iter()
        .map(|&(a, p)| (a, p / (1.0 + x * (a - s))))
        .collect())
}

/// The maximum-likelihood distribution on the support of `pdf` whose
/// t-value `(μ − reference)/σ` is `t`.
pub fn mle_t_value(pdf: &[(f64, f64)], reference: f64, t: f64) -> Result<Pdf, StatsError> {
    let uniform = 1.0 / pdf.len() as f64;
    let mut mle: Pdf = pdf.iter().map(|&(a, _)| (a, uniform)).collect();
    for _ in 0..T_VALUE_ITERATIONS {
        let (mu, var) = moments(&mle);
        let sigma = var.sqrt();
        let shifted: Pdf = pdf
            .iter()
            .map(|&(a, p)| {
                let z = (mu - a) / sigma;
                (a - reference - t * sigma * (1.0 + z * z) / 2.0, p)
            })
            .collect();
        let x = secular(&shifted)?;
        let next: Pdf = pdf
            .iter()
            .zip(&shifted)
            .map(|(&(a, p), &(b, _))| (a, p / (1.0 + x * b)))
            .collect();
        let change = next
            .iter()
            .zip(&mle)
            .map(|(n, o)| (n.1 - o.1).abs())
            .fold(0.0, f64::max);
        mle = next;
        if change < T_VALUE_TOLERANCE {
            break;
        }
    }
    Ok(mle)
}

/// `Σ p̂_i (ln p⁽¹⁾_i − ln p⁽⁰⁾_i)`: the GLLR per sampling unit.
fn llr_per_unit(pdf: &[(f64, f64)], pdf0: &[(f64, f64)], pdf1: &[(f64, f64)]) -> f64 {
    pdf.iter()
        .zip(pdf0.iter().zip(pdf1))
        .map(|(&(_, p), (&(_, p0), &(_, p1)))| p * (p1.ln() - p0.ln()))
        .sum()
}

/// GLLR of H1: `elo = elo1` against H0: `elo = elo0`, logistic Elo.
pub fn llr_logistic(elo0: f64, elo1: f64, results: &Results) -> Result<f64, StatsError> {
    let (n, pdf) = results_to_pdf(results)?;
    let pdf0 = mle_expected(&pdf, elo_to_score(elo0))?;
    let pdf1 = mle_expected(&pdf, elo_to_score(elo1))?;
    Ok(n * llr_per_unit(&pdf, &pdf0, &pdf1))
}

/// The t-value of one sampling unit for a normalized Elo.
pub fn nelo_to_t(nelo: f64, results: &Results) -> f64 {
    let nt = nelo / NELO_PER_NT;
    if results.is_pentanomial() {
        nt * SQRT_2
    } else {
        nt
    }
}

/// GLLR of H1: `nelo = nelo1` against H0: `nelo = nelo0`, normalized Elo.
pub fn llr_normalized(nelo0: f64, nelo1: f64, results: &Results) -> Result<f64, StatsError> {
    let (n, pdf) = results_to_pdf(results)?;
    let pdf0 = mle_t_value(&pdf, 0.5, nelo_to_t(nelo0, results))?;
    let pdf1 = mle_t_value(&pdf, 0.5, nelo_to_t(nelo1, results))?;
    Ok(n * llr_per_unit(&pdf, &pdf0, &pdf1))
}

/// GLLR under either Elo model.
pub fn llr(model: EloModel, elo0: f64, elo1: f64, results: &Results) -> Result<f64, StatsError> {
    match model {
        EloModel::Logistic => llr_logistic(elo0, elo1, results),
        EloModel::Normalized => llr_normalized(elo0, elo1, results),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Pentanomial, Wdl};

    fn penta(c: [u64; 5]) -> Results {
        Pentanomial(c).into()
    }

    fn trin(w: u64, d: u64, l: u64) -> Results {
        Wdl {
            wins: w,
            draws: d,
            losses: l,
        }
        .into()
    }

    #[test]
    fn matches_fishtest_reference_values() {
        use EloModel::{Logistic, Normalized};
        // From a Python re-derivation of fishtest's LLRcalc (scipy brentq).
        let cases = [
            (
                penta([100, 2000, 5000, 2100, 120]),
                Normalized,
                0.0,
                2.0,
                1.250_581_061_0,
            ),
            (
                penta([300, 1500, 4000, 1800, 400]),
                Logistic,
                -1.75,
                0.25,
                8.053_756_584_8,
            ),
            (trin(1100, 3000, 1200), Logistic, 0.0, 5.0, -4.578_225_633_6),
            (
                trin(1100, 3000, 1200),
                Normalized,
                0.0,
                5.0,
                -2.733_225_402_6,
            ),
            (
                penta([0, 10, 30, 12, 0]),
                Logistic,
                -2.0,
                3.0,
                0.125_843_203_1,
            ),
            (
                penta([0, 10, 30, 12, 0]),
                Normalized,
                -2.0,
                3.0,
                0.060_417_172_9,
            ),
            (trin(20, 0, 5), Normalized, 0.0, 10.0, 0.421_332_392_5),
            (trin(20, 0, 5), Logistic, 0.0, 10.0, 0.421_397_451_7),
            (
                penta([39, 2226, 31451, 2412, 40]),
                Normalized,
                0.764,
                3.439,
                2.162_940_869_6,
            ),
            (
                penta([10789, 19328, 33806, 19402, 10543]),
                Logistic,
                -3.0,
                1.0,
                2.131_067_811_8,
            ),
        ];
        for (r, model, e0, e1, want) in cases {
            let got = llr(model, e0, e1, &r).unwrap();
            assert!(
                (got - want).abs() < 1e-6,
                "{r:?} {model} [{e0}, {e1}]: {got} vs {want}"
            );
        }
    }

    #[test]
    fn mle_distributions_satisfy_their_constraints() {
        let (_, pdf) = results_to_pdf(&penta([100, 2000, 5000, 2100, 120])).unwrap();
        let m = mle_expected(&pdf, 0.52).unwrap();
        let (mu, _) = moments(&m);
        assert!((mu - 0.52).abs() < 1e-9);
        assert!((m.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-9);
        let m = mle_t_value(&pdf, 0.5, 0.05).unwrap();
        let (mu, var) = moments(&m);
        assert!(((mu - 0.5) / var.sqrt() - 0.05).abs() < 1e-6);
    }

    #[test]
    fn unreachable_bounds_are_errors_not_panics() {
        let r = penta([1, 2, 3, 2, 1]);
        assert!(llr_normalized(0.0, 1e6, &r).is_err());
        let (_, pdf) = results_to_pdf(&r).unwrap();
        assert!(mle_expected(&pdf, 1.5).is_err());
    }
}
