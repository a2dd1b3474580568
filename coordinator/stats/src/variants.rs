//! Comparing rule variants (or any two conditions) by their game results
//! from Red's side: Red win / draw / Black win rates with Wilson intervals,
//! the decisive rate, Red's mean score, game lengths, and tests between two
//! variants.
//!
//! # Units
//!
//! Rates are per game, in `[0, 1]`. Red's score is normalized to `[0, 1]`:
//! under [`Scoring::Standard`] a win scores 1, a draw ½, a loss 0; under
//! [`Scoring::Reform2007`] (win 3, loss 0, a draw 1 point for Red and 2 for
//! Black) Red's score is `points / 3`, so a draw is worth ⅓ to Red.
//!
//! # Pairs
//!
//! The two games of a pair share an opening, so they are not independent.
//! Given only per-game counts ([`ColorCounts`]) the games are treated as
//! independent. Given pair counts ([`PairCounts`]) the standard errors of the
//! draw rate and of Red's score use the pair as the unit, and the tests
//! between variants are corrected by the pooled design effect (first-order
//! Rao–Scott correction): `design effect = pair-based variance / i.i.d.
//! variance` of the per-game mean.

use std::str::FromStr;

use serde::Serialize;
use xq_engine::Color;
pub use xq_engine::rules::{GameResult, Scoring};

use super::distributions::{chi_square_sf, erfc, normal_quantile};
use super::{StatsError, parse_counts};

/// Normal quantile for 95 % two-sided intervals.
fn z95() -> f64 {
    normal_quantile(0.975)
}

/// Game results in table order: Red win, draw, Black win.
pub const OUTCOMES: [GameResult; 3] = [GameResult::Red, GameResult::Draw, GameResult::Black];

/// Red's normalized score in `[0, 1]` for one game: its points under
/// `scoring` over a win's.
pub fn red_score(scoring: Scoring, result: GameResult) -> f64 {
    scoring.points(result.winner(), Color::Red) / scoring.points(Some(Color::Red), Color::Red)
}

/// Per-game counts from Red's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ColorCounts {
    pub red_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
}

impl ColorCounts {
    pub fn games(&self) -> u64 {
        self.red_wins
            .saturating_add(self.draws)
            .saturating_add(self.black_wins)
    }

    pub fn get(&self, outcome: GameResult) -> u64 {
        match outcome {
            GameResult::Red => self.red_wins,
            GameResult::Draw => self.draws,
            GameResult::Black => self.black_wins,
        }
    }
}

impl FromStr for ColorCounts {
    type Err = StatsError;

    /// Parses `"RED_WINS,DRAWS,BLACK_WINS"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let [red_wins, draws, black_wins] = parse_counts::<3>("red/draw/black counts", s)?;
        Ok(ColorCounts {
            red_wins,
            draws,
            black_wins,
        })
    }
}

/// Pair counts: `0[i][j]` pairs whose first game ended `OUTCOMES[i]` and
/// second game `OUTCOMES[j]`, both from Red's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PairCounts(pub [[u64; 3]; 3]);

impl PairCounts {
    pub fn pairs(&self) -> u64 {
        self.0
            .iter()
            .flatten()
            .fold(0, |acc, &c| acc.saturating_add(c))
    }

    /// The per-game counts of all games in the pairs.
    pub fn games(&self) -> ColorCounts {
        let mut by_outcome = [0u64; 3];
        for (i, row) in self.0.iter().enumerate() {
            for (j, &n) in row.iter().enumerate() {
                by_outcome[i] = by_outcome[i].saturating_add(n);
                by_outcome[j] = by_outcome[j].saturating_add(n);
            }
        }
        ColorCounts {
            red_wins: by_outcome[0],
            draws: by_outcome[1],
            black_wins: by_outcome[2],
        }
    }

    /// Per-game mean of `f` and its pair-based variance (variance of the
    /// per-game mean, the pair as the unit).
    fn pair_mean_variance(&self, f: impl Fn(GameResult) -> f64) -> (f64, f64) {
        let m = self.pairs() as f64;
        let cells = || {
            self.0.iter().enumerate().flat_map(move |(i, row)| {
                row.iter()
                    .enumerate()
                    .map(move |(j, &n)| (OUTCOMES[i], OUTCOMES[j], n as f64))
            })
        };
        let mean_pair: f64 = cells().map(|(a, b, n)| n * (f(a) + f(b))).sum::<f64>() / m;
        let var_pair: f64 = cells()
            .map(|(a, b, n)| n * (f(a) + f(b) - mean_pair).powi(2))
            .sum::<f64>()
            / m;
        (mean_pair / 2.0, var_pair / (4.0 * m))
    }
}

impl FromStr for PairCounts {
    type Err = StatsError;

    /// Parses nine counts, row-major by first game then second game, each in
    /// the order Red win, draw, Black win: `"RR,RD,RB,DR,DD,DB,BR,BD,BB"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let c = parse_counts::<9>("pair counts", s)?;
        Ok(PairCounts([
            [c[0], c[1], c[2]],
            [c[3], c[4], c[5]],
            [c[6], c[7], c[8]],
        ]))
    }
}

/// The 95 % Wilson score interval for `successes` out of `n` trials.
/// Returns `(0, 1)` for `n = 0`.
pub fn wilson_interval(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// A rate with its 95 % Wilson interval (games as the unit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Proportion {
    pub rate: f64,
    pub lower: f64,
    pub upper: f64,
}

impl Proportion {
    fn wilson(successes: u64, n: u64) -> Self {
        let (lower, upper) = wilson_interval(successes, n, z95());
        Proportion {
            rate: successes as f64 / n as f64,
            lower,
            upper,
        }
    }
}

/// A per-game mean with its standard error and 95 % normal interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanEstimate {
    pub mean: f64,
    /// Standard error of the mean (pair-based when pair data was given).
    pub se: f64,
    pub lower: f64,
    pub upper: f64,
    /// Pair-based variance over i.i.d. variance; 1 without pair data.
    pub design_effect: f64,
}

impl MeanEstimate {
    fn new(mean: f64, var_of_mean: f64, iid_var_of_mean: f64) -> Self {
        let se = var_of_mean.max(0.0).sqrt();
        let design_effect = if iid_var_of_mean > 0.0 {
            var_of_mean / iid_var_of_mean
        } else {
            1.0
        };
        MeanEstimate {
            mean,
            se,
            lower: mean - z95() * se,
            upper: mean + z95() * se,
            design_effect,
        }
    }
}

/// Distribution of game lengths (plies).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthSummary {
    pub games: u64,
    pub mean: f64,
    pub std_dev: f64,
    pub min: u32,
    pub median: f64,
    pub max: u32,
    /// `(bucket start, games)` for buckets `[start, start + width)`, empty
    /// buckets included between min and max.
    pub histogram: Vec<(u32, u64)>,
}

/// Summarizes game lengths in plies; `None` for an empty slice. A zero
/// `bucket_width` is treated as 1.
pub fn length_summary(plies: &[u32], bucket_width: u32) -> Option<LengthSummary> {
    if plies.is_empty() {
        return None;
    }
    let width = bucket_width.max(1);
    let mut sorted = plies.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let mean = sorted.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64;
    let var = sorted
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n as f64;
    let median = if n % 2 == 1 {
        f64::from(sorted[n / 2])
    } else {
        (f64::from(sorted[n / 2 - 1]) + f64::from(sorted[n / 2])) / 2.0
    };
    let (min, max) = (sorted[0], sorted[n - 1]);
    let first = min / width;
    let mut histogram: Vec<(u32, u64)> = (first..=max / width).map(|b| (b * width, 0)).collect();
    for &x in &sorted {
        histogram[(x / width - first) as usize].1 += 1;
    }
    Some(LengthSummary {
        games: n as u64,
        mean,
        std_dev: var.sqrt(),
        min,
        median,
        max,
        histogram,
    })
}

/// Everything reported for one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantSummary {
    pub scoring: Scoring,
    pub counts: ColorCounts,
    /// Number of pairs, when pair data was given.
    pub pairs: Option<u64>,
    pub red_win: Proportion,
    pub draw: Proportion,
    pub black_win: Proportion,
    pub decisive: Proportion,
    /// Draw rate as a mean, with a pair-based standard error if available.
    pub draw_rate: MeanEstimate,
    /// Red's mean normalized score (see the module docs).
    pub red_score: MeanEstimate,
    /// Per-outcome design effects (Red win, draw, Black win); all 1
    /// without pair data.
    pub design_effects: [f64; 3],
    pub lengths: Option<LengthSummary>,
}

fn indicator(target: GameResult) -> impl Fn(GameResult) -> f64 {
    move |o| if o == target { 1.0 } else { 0.0 }
}

/// I.i.d. mean and variance of the per-game mean of `f`.
fn iid_mean_variance(counts: &ColorCounts, f: impl Fn(GameResult) -> f64) -> (f64, f64) {
    let n = counts.games() as f64;
    let mean = OUTCOMES
        .iter()
        .map(|&o| counts.get(o) as f64 * f(o))
        .sum::<f64>()
        / n;
    let var = OUTCOMES
        .iter()
        .map(|&o| counts.get(o) as f64 * (f(o) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean, var / n)
}

fn summary(
    counts: ColorCounts,
    pairs: Option<&PairCounts>,
    scoring: Scoring,
    lengths: Option<&[u32]>,
) -> Result<VariantSummary, StatsError> {
    let n = counts.games();
    if n == 0 {
        return Err(StatsError::Empty);
    }
    let estimate = |f: &dyn Fn(GameResult) -> f64| {
        let (mean, iid_var) = iid_mean_variance(&counts, f);
        let var = pairs.map_or(iid_var, |p| p.pair_mean_variance(f).1);
        MeanEstimate::new(mean, var, iid_var)
    };
    let design_effects = OUTCOMES.map(|o| estimate(&indicator(o)).design_effect);
    Ok(VariantSummary {
        scoring,
        counts,
        pairs: pairs.map(PairCounts::pairs),
        red_win: Proportion::wilson(counts.red_wins, n),
        draw: Proportion::wilson(counts.draws, n),
        black_win: Proportion::wilson(counts.black_wins, n),
        decisive: Proportion::wilson(counts.red_wins.saturating_add(counts.black_wins), n),
        draw_rate: estimate(&indicator(GameResult::Draw)),
        red_score: estimate(&|o| red_score(scoring, o)),
        design_effects,
        lengths: lengths.and_then(|l| length_summary(l, 10)),
    })
}

/// Summary from per-game counts (games treated as independent).
pub fn summarize(
    counts: ColorCounts,
    scoring: Scoring,
    lengths: Option<&[u32]>,
) -> Result<VariantSummary, StatsError> {
    summary(counts, None, scoring, lengths)
}

/// Summary from pair counts: variances use the pair as the unit.
pub fn summarize_pairs(
    pairs: &PairCounts,
    scoring: Scoring,
    lengths: Option<&[u32]>,
) -> Result<VariantSummary, StatsError> {
    summary(pairs.games(), Some(pairs), scoring, lengths)
}

/// A difference `a − b` with its 95 % normal interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    pub diff: f64,
    pub lower: f64,
    pub upper: f64,
}

impl Difference {
    fn new(a: f64, b: f64, var: f64) -> Self {
        let half = z95() * var.max(0.0).sqrt();
        Difference {
            diff: a - b,
            lower: a - b - half,
            upper: a - b + half,
        }
    }
}

/// A test statistic with its p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TestResult {
    pub statistic: f64,
    pub df: f64,
    pub p_value: f64,
}

/// The comparison of variant `a` with variant `b` (differences are `a − b`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantComparison {
    pub red_win: Difference,
    pub draw: Difference,
    pub black_win: Difference,
    pub red_score: Difference,
    /// G-test of homogeneity of the 2×3 table, divided by the pooled
    /// design effect.
    pub g_test: TestResult,
    /// Pearson χ² test of homogeneity, divided by the pooled design effect.
    pub chi_square: TestResult,
    /// Pooled two-proportion z-test on the draw rate (statistic = z, df 0),
    /// variance scaled by the pooled draw design effect.
    pub draw_rate_test: TestResult,
    /// The design effect used for the homogeneity tests.
    pub design_effect: f64,
}

/// The G and Pearson χ² statistics of a 2×k table and their degrees of
/// freedom; all-zero columns are dropped.
pub fn homogeneity_statistics(rows: [[u64; 3]; 2]) -> (f64, f64, f64) {
    let row_totals = rows.map(|r| r.iter().map(|&c| c as f64).sum::<f64>());
    let total: f64 = row_totals.iter().sum();
    let mut g = 0.0;
    let mut x2 = 0.0;
    let mut columns = 0;
    for c in 0..3 {
        let col_total = rows[0][c] as f64 + rows[1][c] as f64;
        if col_total == 0.0 {
            continue;
        }
        columns += 1;
        for (row, row_total) in rows.iter().zip(row_totals) {
            let observed = row[c] as f64;
            let expected = row_total * col_total / total;
            if observed > 0.0 {
                g += 2.0 * observed * (observed / expected).ln();
            }
            if expected > 0.0 {
                x2 += (observed - expected).powi(2) / expected;
            }
        }
    }
    (g, x2, f64::from(columns.max(1) - 1))
}

/// Compares two summaries. Both must use the same scoring.
pub fn compare(a: &VariantSummary, b: &VariantSummary) -> Result<VariantComparison, StatsError> {
    if a.scoring != b.scoring {
        return Err(StatsError::Invalid(
            "cannot compare summaries made with different scorings".to_owned(),
        ));
    }
    let prop_diff = |pa: &Proportion, pb: &Proportion, deff_a: f64, deff_b: f64| {
        let var = |p: &Proportion, n: u64, deff: f64| p.rate * (1.0 - p.rate) / n as f64 * deff;
        Difference::new(
            pa.rate,
            pb.rate,
            var(pa, a.counts.games(), deff_a) + var(pb, b.counts.games(), deff_b),
        )
    };
    let mean_diff = |ma: &MeanEstimate, mb: &MeanEstimate| {
        Difference::new(ma.mean, mb.mean, ma.se.powi(2) + mb.se.powi(2))
    };

    let (na, nb) = (a.counts.games() as f64, b.counts.games() as f64);
    let pooled_deff = |i: usize| (a.design_effects[i] * na + b.design_effects[i] * nb) / (na + nb);
    let design_effect = ((0..3).map(pooled_deff).sum::<f64>() / 3.0).max(f64::MIN_POSITIVE);

    let table = [a.counts, b.counts].map(|c| [c.red_wins, c.draws, c.black_wins]);
    let (g, x2, df) = homogeneity_statistics(table);
    let test = |statistic: f64| {
        let statistic = statistic / design_effect;
        TestResult {
            statistic,
            df,
            p_value: if df > 0.0 {
                chi_square_sf(statistic, df)
            } else {
                1.0
            },
        }
    };

    let pooled = (a.counts.draws as f64 + b.counts.draws as f64) / (na + nb);
    let var = pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb) * pooled_deff(1);
    let z = if var > 0.0 {
        (a.draw.rate - b.draw.rate) / var.sqrt()
    } else {
        0.0
    };

    Ok(VariantComparison {
        red_win: prop_diff(
            &a.red_win,
            &b.red_win,
            a.design_effects[0],
            b.design_effects[0],
        ),
        draw: mean_diff(&a.draw_rate, &b.draw_rate),
        black_win: prop_diff(
            &a.black_win,
            &b.black_win,
            a.design_effects[2],
            b.design_effects[2],
        ),
        red_score: mean_diff(&a.red_score, &b.red_score),
        g_test: test(g),
        chi_square: test(x2),
        draw_rate_test: TestResult {
            statistic: z,
            df: 0.0,
            p_value: erfc(z.abs() / std::f64::consts::SQRT_2),
        },
        design_effect,
    })
}

/// Games needed *per variant* for a two-sided two-proportion test at level
/// `alpha` to detect draw rates `p1` vs `p2` with probability `power`:
/// `n = (z_{1−α/2}·√(2 p̄ q̄) + z_{power}·√(p1 q1 + p2 q2))² / (p1 − p2)²`,
/// multiplied by `design_effect` (1 for independent games; use the pair
/// design effect when games come in pairs).
pub fn games_to_detect_draw_difference(
    p1: f64,
    p2: f64,
    alpha: f64,
    power: f64,
    design_effect: f64,
) -> Result<u64, StatsError> {
    for (name, value) in [
        ("draw rate", p1),
        ("draw rate", p2),
        ("alpha", alpha),
        ("power", power),
    ] {
        if !(value > 0.0 && value < 1.0) {
            return Err(StatsError::Probability { name, value });
        }
    }
    if p1 == p2 {
        return Err(StatsError::Invalid(format!(
            "draw rates {p1} and {p2} are equal: no sample size detects a zero difference"
        )));
    }
    if !(design_effect.is_finite() && design_effect > 0.0) {
        return Err(StatsError::Invalid(format!(
            "invalid design effect {design_effect}: must be positive"
        )));
    }
    let mean = (p1 + p2) / 2.0;
    let za = normal_quantile(1.0 - alpha / 2.0);
    let zb = normal_quantile(power);
    let root =
        za * (2.0 * mean * (1.0 - mean)).sqrt() + zb * (p1 * (1.0 - p1) + p2 * (1.0 - p2)).sqrt();
    let n = root * root / (p1 - p2).powi(2) * design_effect;
    Ok(n.ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_scores_follow_the_rule_sets_scoring() {
        let scores = |s| OUTCOMES.map(|o| red_score(s, o));
        assert_eq!(scores(Scoring::Standard), [1.0, 0.5, 0.0]);
        assert_eq!(scores(Scoring::Reform2007), [1.0, 1.0 / 3.0, 0.0]);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn wilson_known_values() {
        // Reference values from a direct evaluation of Wilson's formula (scipy's norm).
        let (lo, hi) = wilson_interval(81, 263, z95());
        assert!(
            close(lo, 0.255_288_5, 1e-6) && close(hi, 0.366_209_6, 1e-6),
            "{lo} {hi}"
        );
        let (lo, hi) = wilson_interval(0, 10, z95());
        assert!(
            close(lo, 0.0, 1e-12) && close(hi, 0.277_532_8, 1e-6),
            "{lo} {hi}"
        );
        let (lo, hi) = wilson_interval(10, 10, z95());
        assert!(
            close(lo, 0.722_467_2, 1e-6) && close(hi, 1.0, 1e-12),
            "{lo} {hi}"
        );
        assert_eq!(wilson_interval(0, 0, z95()), (0.0, 1.0));
    }

    #[test]
    fn scoring_normalizes_to_unit_interval() {
        let c = ColorCounts {
            red_wins: 30,
            draws: 60,
            black_wins: 10,
        };
        let s = summarize(c, Scoring::Standard, None).unwrap();
        assert!(close(s.red_score.mean, 0.6, 1e-12));
        let r = summarize(c, Scoring::Reform2007, None).unwrap();
        assert!(close(r.red_score.mean, 0.5, 1e-12));
        assert!(close(s.decisive.rate, 0.4, 1e-12));
        assert!(close(s.draw_rate.design_effect, 1.0, 1e-12));
    }

    #[test]
    fn pair_variance_reflects_within_pair_correlation() {
        // Draws come in matched pairs: the pair-based variance is larger.
        let correlated = PairCounts([[20, 0, 10], [0, 40, 0], [10, 0, 20]]);
        let s = summarize_pairs(&correlated, Scoring::Standard, None).unwrap();
        assert_eq!(s.counts.games(), 200);
        assert!(close(s.draw.rate, 0.4, 1e-12));
        assert!(
            close(s.draw_rate.design_effect, 2.0, 1e-9),
            "{}",
            s.draw_rate.design_effect
        );
        // Independent-looking pairs: design effect near 1.
        let independent = PairCounts([[9, 12, 9], [12, 16, 12], [9, 12, 9]]);
        let s = summarize_pairs(&independent, Scoring::Standard, None).unwrap();
        assert!(
            close(s.draw_rate.design_effect, 1.0, 1e-2),
            "{}",
            s.draw_rate.design_effect
        );
    }

    #[test]
    fn homogeneity_tests_match_scipy() {
        // scipy.stats.chi2_contingency([[30,50,20],[20,50,30]]) and with
        // lambda_="log-likelihood".
        let (g, x2, df) = homogeneity_statistics([[30, 50, 20], [20, 50, 30]]);
        assert_eq!(df, 2.0);
        assert!(close(x2, 4.0, 1e-12), "{x2}");
        assert!(close(g, 4.027_102_710_1, 1e-8), "{g}");
        assert!(close(chi_square_sf(x2, df), 0.135_335_283_2, 1e-9));
        let (_, _, df) = homogeneity_statistics([[3, 0, 4], [5, 0, 1]]);
        assert_eq!(df, 1.0);
    }

    #[test]
    fn comparison_and_draw_test() {
        let a = summarize("300,500,200".parse().unwrap(), Scoring::Standard, None).unwrap();
        let b = summarize("250,600,150".parse().unwrap(), Scoring::Standard, None).unwrap();
        let c = compare(&a, &b).unwrap();
        assert!(close(c.draw.diff, -0.1, 1e-12));
        assert!(c.draw.lower < -0.1 && c.draw.upper > -0.1 && c.draw.upper < 0.0);
        // Pooled z for 500/1000 vs 600/1000: -0.1 / sqrt(0.55·0.45·0.002).
        assert!(close(c.draw_rate_test.statistic, -4.494_665_749_8, 1e-8));
        assert!(c.draw_rate_test.p_value < 1e-4);
        assert!(c.g_test.p_value < 1e-3 && c.chi_square.p_value < 1e-3);
        let reform = summarize("1,1,1".parse().unwrap(), Scoring::Reform2007, None).unwrap();
        assert!(compare(&a, &reform).is_err());
    }

    #[test]
    fn sample_size_known_value() {
        // Fleiss without continuity correction: p1 = 0.5, p2 = 0.55,
        // alpha 0.05, power 0.8 gives 1565 per group.
        let n = games_to_detect_draw_difference(0.5, 0.55, 0.05, 0.8, 1.0).unwrap();
        assert_eq!(n, 1565);
        let n2 = games_to_detect_draw_difference(0.5, 0.55, 0.05, 0.8, 2.0).unwrap();
        assert!(n2 >= 2 * n - 1 && n2 <= 2 * n);
        assert!(games_to_detect_draw_difference(0.5, 0.5, 0.05, 0.8, 1.0).is_err());
        assert!(games_to_detect_draw_difference(0.5, 0.6, 1.5, 0.8, 1.0).is_err());
    }

    #[test]
    fn length_summary_histogram() {
        let s = length_summary(&[12, 15, 31, 40, 40], 10).unwrap();
        assert_eq!(s.min, 12);
        assert_eq!(s.max, 40);
        assert!(close(s.mean, 27.6, 1e-12));
        assert!(close(s.median, 31.0, 1e-12));
        assert_eq!(s.histogram, vec![(10, 2), (20, 0), (30, 1), (40, 2)]);
        assert!(length_summary(&[], 10).is_none());
    }
}
