//! Fixed-sample Elo estimates: logistic Elo with its 95 % interval and the
//! likelihood of superiority (fishtest's `get_elo`), and normalized Elo with
//! its 95 % interval (fishtest's raw-statistics page).
//!
//! Both use the normal approximation to the sample mean of the score, with
//! the game pair as the sampling unit for pentanomial data. Counts are
//! regularized first (see the [module docs](super)).

use std::f64::consts::{LN_10, SQRT_2};

use serde::Serialize;

use super::distributions::{normal_cdf, normal_quantile};
use super::sample::{moments, results_to_pdf};
use super::{Results, StatsError};

/// Normalized Elo per unit of normalized t-value: `800 / ln 10`.
pub const NELO_PER_NT: f64 = 800.0 / LN_10;

/// Scores are clamped to `[SCORE_CLAMP, 1 − SCORE_CLAMP]` before conversion
/// to logistic Elo, so a perfect score gives ±1199.6 rather than ±∞.
pub const SCORE_CLAMP: f64 = 1e-3;

/// Logistic Elo of an expected score in `[0, 1]` (clamped, see
/// [`SCORE_CLAMP`]).
pub fn score_to_elo(score: f64) -> f64 {
    let s = score.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Expected score of a logistic Elo difference.
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo estimate of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EloEstimate {
    /// Logistic Elo of the mean score.
    pub elo: f64,
    /// Half-width of the 95 % interval: `(elo(μ_hi) − elo(μ_lo)) / 2`.
    pub elo95: f64,
    /// Likelihood of superiority `Φ((μ − ½)/se)`, in `[0, 1]`.
    pub los: f64,
    /// Mean score per game, in `[0, 1]`.
    pub score: f64,
    /// Number of games (twice the pairs for pentanomial data; regularized
    /// counts, so it may exceed the true count by a few thousandths).
    pub games: f64,
}

/// Logistic Elo, its 95 % half-interval and the LOS, as fishtest's
/// `get_elo` computes them.
pub fn logistic_elo(results: &Results) -> Result<EloEstimate, StatsError> {
    let (n, pdf) = results_to_pdf(results)?;
    let (mu, pdf_var) = moments(&pdf);
    let (games, var_per_game) = if results.is_pentanomial() {
        (2.0 * n, 2.0 * pdf_var)
    } else {
        (n, pdf_var)
    };
    let se = (var_per_game / games).sqrt();
    let lo = mu + normal_quantile(0.025) * se;
    let hi = mu + normal_quantile(0.975) * se;
    Ok(EloEstimate {
        elo: score_to_elo(mu),
        elo95: (score_to_elo(hi) - score_to_elo(lo)) / 2.0,
        los: normal_cdf((mu - 0.5) / se),
        score: mu,
        games,
    })
}

/// Normalized Elo estimate of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NormalizedEloEstimate {
    /// Normalized Elo: `NELO_PER_NT · (μ − ½)/σ_game`.
    pub nelo: f64,
    /// Lower end of the 95 % interval.
    pub lower: f64,
    /// Upper end of the 95 % interval.
    pub upper: f64,
}

/// Normalized Elo with a 95 % interval from the delta-method variance of the
/// t-value, `1 − t·skew + t²(exkurt + 2)/4`, per sampling unit.
pub fn normalized_elo(results: &Results) -> Result<NormalizedEloEstimate, StatsError> {
    let (n, pdf) = results_to_pdf(results)?;
    let (mu, var) = moments(&pdf);
    if var <= 0.0 {
        return Err(StatsError::Invalid(
            "normalized elo needs a sample with non-zero variance".to_owned(),
        ));
    }
    let m3: f64 = pdf.iter().map(|&(a, p)| p * (a - mu).powi(3)).sum();
    let m4: f64 = pdf.iter().map(|&(a, p)| p * (a - mu).powi(4)).sum();
    let skew = m3 / var.powf(1.5);
    let exkurt = m4 / (var * var) - 3.0;
    let t = (mu - 0.5) / var.sqrt();
    let var_t = (1.0 - t * skew + 0.25 * t * t * (exkurt + 2.0)).max(0.0);
    let half = normal_quantile(0.975) * (var_t / n).sqrt();
    let scale = if results.is_pentanomial() {
        NELO_PER_NT / SQRT_2
    } else {
        NELO_PER_NT
    };
    Ok(NormalizedEloEstimate {
        nelo: scale * t,
        lower: scale * (t - half),
        upper: scale * (t + half),
    })
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

    fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want}");
    }

    /// `(results, elo, elo95, los, nelo, nelo_lo, nelo_hi)` from a Python
    /// re-derivation of fishtest's formulas (scipy's norm).
    fn reference() -> Vec<(Results, [f64; 6])> {
        vec![
            (
                penta([100, 2000, 5000, 2100, 120]),
                [
                    2.609_543_810_8,
                    2.577_697_223_0,
                    0.976_388_224_3,
                    5.049_593_603_5,
                    0.061_915_387_9,
                    10.037_271_819_2,
                ],
            ),
            (
                penta([300, 1500, 4000, 1800, 400]),
                [
                    10.860_898_417_4,
                    3.318_865_108_4,
                    0.999_999_999_9,
                    17.629_284_550_4,
                    12.237_015_326_4,
                    23.021_553_774_3,
                ],
            ),
            (
                trin(1100, 3000, 1200),
                [
                    -6.556_166_475_3,
                    6.162_152_595_1,
                    0.018_489_314_5,
                    -9.955_215_237_1,
                    -19.312_856_579_7,
                    -0.597_573_894_5,
                ],
            ),
            (
                penta([0, 10, 30, 12, 0]),
                [
                    6.682_020_337_0,
                    30.753_632_687_0,
                    0.665_336_158_8,
                    14.549_540_048_0,
                    -52.336_970_402_7,
                    81.436_050_498_7,
                ],
            ),
            (
                trin(20, 0, 5),
                [
                    240.810_968_511_0,
                    217.844_256_440_1,
                    0.999_911_567_8,
                    260.568_546_502_1,
                    47.778_999_514_4,
                    473.358_093_489_8,
                ],
            ),
            (
                penta([10789, 19328, 33806, 19402, 10543]),
                [
                    -0.773_577_335_9,
                    1.277_579_895_7,
                    0.117_658_858_0,
                    -0.951_629_004_5,
                    -2.523_251_681_2,
                    0.619_993_672_3,
                ],
            ),
        ]
    }

    #[test]
    fn matches_fishtest_reference_values() {
        for (r, [elo, elo95, los, nelo, lo, hi]) in reference() {
            let e = logistic_elo(&r).unwrap();
            assert_close(e.elo, elo, 1e-6, "elo");
            assert_close(e.elo95, elo95, 1e-6, "elo95");
            assert_close(e.los, los, 1e-8, "los");
            let n = normalized_elo(&r).unwrap();
            assert_close(n.nelo, nelo, 1e-6, "nelo");
            assert_close(n.lower, lo, 1e-6, "nelo lower");
            assert_close(n.upper, hi, 1e-6, "nelo upper");
        }
    }

    #[test]
    fn elo_score_round_trip_and_clamp() {
        for elo in [-300.0, -1.0, 0.0, 7.5, 400.0] {
            assert_close(score_to_elo(elo_to_score(elo)), elo, 1e-9, "round trip");
        }
        assert_close(score_to_elo(1.0), score_to_elo(0.999), 0.0, "clamp");
        assert!(logistic_elo(&trin(0, 0, 0)).is_err());
    }
}
