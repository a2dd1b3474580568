//! A sample as a distribution over its per-unit scores, the form both the
//! Elo estimates ([`super::elo`]) and the likelihood ratio ([`super::llr`])
//! start from.

use super::{Results, StatsError};

/// A discrete distribution: `(value, probability)` pairs, values ascending,
/// probabilities summing to one.
pub type Pdf = Vec<(f64, f64)>;

/// The number of sampling units and the empirical distribution of a sample,
/// on values `i/(k − 1)`, after regularization.
pub fn results_to_pdf(results: &Results) -> Result<(f64, Pdf), StatsError> {
    let counts = results.regularized()?;
    let n: f64 = counts.iter().sum();
    let last = (counts.len() - 1) as f64;
    let pdf = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 / last, c / n))
        .collect();
    Ok((n, pdf))
}

/// Mean and variance of a distribution.
pub fn moments(pdf: &[(f64, f64)]) -> (f64, f64) {
    let mean: f64 = pdf.iter().map(|&(a, p)| p * a).sum();
    let var = pdf.iter().map(|&(a, p)| p * (a - mean).powi(2)).sum();
    (mean, var)
}
