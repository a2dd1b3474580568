//! Bad-worker detection: is one worker's share of a run's results drawn
//! from the same distribution as everyone else's?
//!
//! The test is fishtest's. Each worker's results become one row of a
//! contingency table with three columns: game pairs that scored below 1,
//! exactly 1 and above 1 (`[LL+LD, DD, DW+WW]`; the rare LL and WW cells
//! would make a five-column table invalid), or losses, draws and wins for
//! trinomial samples. Under the null hypothesis (every worker plays the same
//! match) the rows share one distribution, estimated by the pooled columns:
//! worker `i`'s expected count in column `j` is `rowᵢ · colⱼ / total`.
//!
//! * The table's Pearson statistic `χ² = Σ (O − E)² / E` has
//!   `(workers − 1) · (columns − 1)` degrees of freedom: `p` says whether the
//!   workers as a whole disagree.
//! * A worker's **residual** is its own row's χ² divided by
//!   `1 − rowᵢ / total`, which is the χ² of the 2-row table "this worker
//!   against all others" (columns − 1 degrees of freedom), converted to a
//!   standard normal z (the upper-tail quantile of its survival probability)
//!   and floored at 0.
//! * Thresholds for display, Bonferroni-corrected for the number of
//!   workers: `z_95 = Φ⁻¹(1 − 0.05 / workers)`, `z_99` likewise with 0.01.
//!
//! Workers whose expected count is at most 5 in some column (too few games
//! for the χ² approximation) are left out, repeatedly until none is; with
//! fewer than two left there is no test. [`bad_workers`] flags the worst
//! worker when `p` is below [`BadWorkerRule::p`] or its residual above
//! [`BadWorkerRule::residual`], and repeats on the others. A run that sets
//! its flagged workers aside excludes on the stricter [`ExclusionRule`],
//! since it looks after every result; [`super::bad_worker_sim`] measures
//! both rules on simulated runs.

use super::distributions::{chi_square_sf, normal_quantile};
use super::{Pentanomial, Results, StatsError};

/// Columns of the contingency table.
const COLUMNS: usize = 3;

/// Smallest expected count (exclusive) a worker needs in every column.
pub const MIN_EXPECTED: f64 = 5.0;

/// One worker's row: `[below 1, exactly 1, above 1]` pair scores, or
/// `[losses, draws, wins]`.
pub fn row(results: &Results) -> [u64; COLUMNS] {
    match results {
        Results::Pentanomial(Pentanomial([ll, ld, dd, dw, ww])) => {
            [ll.saturating_add(*ld), *dd, dw.saturating_add(*ww)]
        }
        Results::Trinomial(wdl) => wdl.trinomial(),
    }
}

/// The χ² test of homogeneity over the workers that qualify.
#[derive(Debug, Clone, PartialEq)]
pub struct Homogeneity<K> {
    pub chi2: f64,
    pub dof: u32,
    /// Probability of a χ² this large if every worker plays the same match.
    pub p: f64,
    /// Per qualifying worker, in input order: the residual as a standard
    /// normal z, at least 0.
    pub residuals: Vec<(K, f64)>,
    /// Bonferroni-corrected 95 % and 99 % thresholds for a residual.
    pub z_95: f64,
    pub z_99: f64,
}

impl<K: PartialEq> Homogeneity<K> {
    /// The residual of `worker`, if it qualified.
    pub fn residual(&self, worker: &K) -> Option<f64> {
        self.residuals
            .iter()
            .find(|(k, _)| k == worker)
            .map(|(_, r)| *r)
    }
}

/// The test over `workers` (results summed per worker; a key may appear
/// once). `None` when fewer than two workers have enough games.
pub fn homogeneity<K: Clone + PartialEq>(workers: &[(K, Results)]) -> Option<Homogeneity<K>> {
    let mut rows: Vec<(&K, [f64; COLUMNS])> = workers
        .iter()
        .map(|(k, r)| (k, row(r).map(|c| c as f64)))
        .filter(|(_, r)| r.iter().sum::<f64>() > 0.0)
        .collect();
    loop {
        if rows.len() < 2 {
            return None;
        }
        let (cols, total) = margins(&rows);
        if total == 0.0 {
            return None;
        }
        let before = rows.len();
        rows.retain(|(_, r)| {
            let n: f64 = r.iter().sum();
            cols.iter().all(|c| n * c / total > MIN_EXPECTED)
        });
        if rows.len() == before {
            break;
        }
    }
    let (cols, total) = margins(&rows);
    let mut chi2 = 0.0;
    let mut residuals = Vec::with_capacity(rows.len());
    for (key, r) in &rows {
        let n: f64 = r.iter().sum();
        let row_chi2: f64 = r
            .iter()
            .zip(&cols)
            .map(|(o, c)| {
                let e = n * c / total;
                (o - e) * (o - e) / e
            })
            .sum();
        chi2 += row_chi2;
        let against_rest = row_chi2 / (1.0 - n / total);
        residuals.push(((*key).clone(), upper_z(against_rest, (COLUMNS - 1) as f64)));
    }
    let dof = ((rows.len() - 1) * (COLUMNS - 1)) as u32;
    let workers = rows.len() as f64;
    Some(Homogeneity {
        chi2,
        dof,
        p: chi_square_sf(chi2, f64::from(dof)),
        residuals,
        z_95: -normal_quantile(0.05 / workers),
        z_99: -normal_quantile(0.01 / workers),
    })
}

/// Column sums and the grand total.
fn margins<K>(rows: &[(K, [f64; COLUMNS])]) -> ([f64; COLUMNS], f64) {
    let mut cols = [0.0; COLUMNS];
    for (_, r) in rows {
        for (c, o) in cols.iter_mut().zip(r) {
            *c += o;
        }
    }
    (cols, cols.iter().sum())
}

/// The standard normal z with the same upper-tail probability as `x` under
/// χ²(`dof`), floored at 0. Far in the tail, where the probability
/// underflows, the asymptotic `z² ≈ −2 ln P − ln(−4π ln P)` with the
/// exponential tail of χ²(2), `ln P = −x/2`.
fn upper_z(x: f64, dof: f64) -> f64 {
    let p = chi_square_sf(x, dof);
    if p >= 0.5 {
        return 0.0;
    }
    if p > 1e-300 {
        return -normal_quantile(p);
    }
    let ln_p = -x / 2.0;
    (-2.0 * ln_p - (-4.0 * std::f64::consts::PI * ln_p).ln())
        .max(0.0)
        .sqrt()
}

/// When a worker is flagged by [`bad_workers`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BadWorkerRule {
    /// The table's `p` below which its worst worker is flagged.
    pub p: f64,
    /// A residual above which a worker is flagged whatever `p`.
    pub residual: f64,
    /// Most workers flagged in one call (each after recomputing without the
    /// ones flagged before).
    pub max_flagged: usize,
}

impl Default for BadWorkerRule {
    /// fishtest's: `p < 0.001` or a residual above 7, one worker at a time.
    fn default() -> Self {
        BadWorkerRule {
            p: 0.001,
            residual: 7.0,
            max_flagged: 1,
        }
    }
}

impl BadWorkerRule {
    /// Checks the fields; a `p` outside (0, 1) or a negative residual is an error.
    pub fn validate(&self) -> Result<(), StatsError> {
        if !(self.p > 0.0 && self.p < 1.0) {
            return Err(StatsError::Probability {
                name: "bad-worker p",
                value: self.p,
            });
        }
        if !(self.residual >= 0.0 && self.residual.is_finite()) {
            return Err(StatsError::Invalid(format!(
                "bad-worker residual {} must be a finite number at least 0",
                self.residual
            )));
        }
        Ok(())
    }
}

/// The workers to flag, worst first: at each round the test runs on the
/// workers not flagged yet, and the one with the largest residual is flagged
/// if the table's `p` or its residual passes `rule`.
pub fn bad_workers<K: Clone + PartialEq>(workers: &[(K, Results)], rule: &BadWorkerRule) -> Vec<K> {
    let mut flagged: Vec<K> = Vec::new();
    while flagged.len() < rule.max_flagged {
        let rest: Vec<(K, Results)> = workers
            .iter()
            .filter(|(k, _)| !flagged.contains(k))
            .cloned()
            .collect();
        let Some(test) = homogeneity(&rest) else {
            break;
        };
        let worst = test
            .residuals
            .iter()
            .filter(|(_, r)| test.p < rule.p || *r > rule.residual)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match worst {
            Some((k, _)) => flagged.push(k.clone()),
            None => break,
        }
    }
    flagged
}

/// When a run that sets its flagged workers aside
/// ([`crate::runs::WorkerPolicy::exclude_flagged`]) excludes one on its
/// residual. The check repeats after every counted result, hundreds of looks
/// in one run, and each look of [`BadWorkerRule`] alone fires about once in
/// a thousand on honest workers: over a run those chances add up. This rule
/// is stricter so that the chance over a whole run stays small; the
/// simulation in [`super::bad_worker_sim`] measures both rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExclusionRule {
    /// Single-look upper-tail probability of one worker's residual, before
    /// the Bonferroni correction for the number of workers: the residual
    /// must exceed `Φ⁻¹(1 − p / workers)`.
    pub p: f64,
    /// Game pairs a worker must have in the run before its residual can
    /// exclude it (games, for trinomial samples: its row total).
    pub min_pairs: u64,
}

impl Default for ExclusionRule {
    /// `p = 1e-6` and 50 pairs (100 games).
    fn default() -> Self {
        ExclusionRule {
            p: 1e-6,
            min_pairs: 50,
        }
    }
}

impl ExclusionRule {
    /// The residual above which a worker is excluded when `workers` take
    /// part in the test.
    pub fn threshold(&self, workers: usize) -> f64 {
        -normal_quantile(self.p / workers.max(1) as f64)
    }

    /// The worker to exclude, if any, given `test`, the [`homogeneity`] of
    /// `workers`: the one with the largest residual, when that residual
    /// passes [`Self::threshold`] and the worker has at least
    /// [`Self::min_pairs`] pairs (its row total). Only the worst can be
    /// excluded: while a far-off worker is too young to judge, it also pulls
    /// the pooled result away from the honest ones.
    pub fn worst<K: Clone + PartialEq>(
        &self,
        test: &Homogeneity<K>,
        workers: &[(K, Results)],
    ) -> Option<(K, f64)> {
        let (key, z) = test.residuals.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        let pairs = workers
            .iter()
            .find(|(w, _)| w == key)
            .map_or(0, |(_, r)| row(r).iter().sum::<u64>());
        (*z > self.threshold(test.residuals.len()) && pairs >= self.min_pairs)
            .then(|| (key.clone(), *z))
    }
}

/// A worker's crashes and time losses in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Health {
    pub games: u64,
    /// Games lost because the worker's engine crashed or broke the protocol.
    pub crashes: u64,
    /// Games lost on time.
    pub time_losses: u64,
}

impl Health {
    /// fishtest's rule: more than 3 crashes, or more than 10 % of over 20
    /// games lost on time.
    pub fn unhealthy(&self) -> bool {
        self.crashes > 3 || (self.games > 20 && self.time_losses * 10 > self.games)
    }

    /// Time losses per game (0 without games).
    pub fn time_loss_rate(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.time_losses as f64 / self.games as f64
        }
    }

    /// Crashes per game (0 without games).
    pub fn crash_rate(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.crashes as f64 / self.games as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sprt::pentanomial_at;
    use crate::{EloModel, Wdl};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn penta(c: [u64; 5]) -> Results {
        Pentanomial(c).into()
    }

    /// A typical engine-test shape, about 0 Elo.
    const SHAPE: Pentanomial = Pentanomial([60, 1200, 2500, 1200, 60]);

    #[test]
    fn a_table_by_hand() {
        // Rows [below, equal, above]: worker a 30/40/30, worker b 10/60/30.
        let workers = [
            (
                "a",
                Results::from(Wdl {
                    losses: 30,
                    draws: 40,
                    wins: 30,
                }),
            ),
            (
                "b",
                Results::from(Wdl {
                    losses: 10,
                    draws: 60,
                    wins: 30,
                }),
            ),
        ];
        let t = homogeneity(&workers).unwrap();
        // Columns 40/100/60 of 200; expected a = b = 20/50/30.
        let chi2 = 2.0 * (100.0 / 20.0 + 100.0 / 50.0 + 0.0);
        assert!((t.chi2 - chi2).abs() < 1e-12);
        assert_eq!(t.dof, 2);
        assert!(
            (t.p - (-chi2 / 2.0f64).exp()).abs() < 1e-12,
            "χ²(2) tail is exp(−x/2)"
        );
        // With two workers, each against the rest is the whole table.
        let z = -normal_quantile((-chi2 / 2.0f64).exp());
        for (_, r) in &t.residuals {
            assert!((r - z).abs() < 1e-9, "{r} vs {z}");
        }
        assert!((t.z_95 - 1.959_963_985).abs() < 1e-6, "Φ⁻¹(1 − 0.025)");
    }

    #[test]
    fn pentanomial_rows_fold_the_rare_cells() {
        assert_eq!(row(&penta([1, 2, 3, 4, 5])), [3, 3, 9]);
        assert_eq!(
            row(&Wdl {
                wins: 7,
                draws: 8,
                losses: 9
            }
            .into()),
            [9, 8, 7]
        );
    }

    #[test]
    fn identical_workers_have_zero_residuals_and_small_workers_are_left_out() {
        let workers = [
            (1, penta([10, 100, 200, 100, 10])),
            (2, penta([10, 100, 200, 100, 10])),
            (3, penta([0, 1, 2, 1, 0])),
        ];
        let t = homogeneity(&workers).unwrap();
        assert_eq!(t.chi2, 0.0);
        assert_eq!(t.p, 1.0);
        assert_eq!(t.residuals, vec![(1, 0.0), (2, 0.0)]);
        assert_eq!(t.residual(&3), None, "too few games for the test");
        assert!(homogeneity(&workers[..1]).is_none());
        assert!(homogeneity::<u8>(&[]).is_none());
    }

    #[test]
    fn far_tail_residuals_stay_finite_and_ordered() {
        let z = |x: f64| upper_z(x, 2.0);
        let (a, b, c) = (z(1000.0), z(1600.0), z(5000.0));
        assert!(a.is_finite() && b.is_finite() && c.is_finite());
        assert!(a < b && b < c, "{a} {b} {c}");
        // The two branches meet: just inside and just past the underflow.
        let inside = z(1370.0);
        let past = z(1390.0);
        assert!((past - inside).abs() < 0.5, "{inside} {past}");
    }

    #[test]
    fn a_worker_reporting_biased_counts_is_flagged_and_honest_ones_are_not() {
        let mut workers: Vec<(String, Results)> = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(19);
        let honest = pentanomial_at(SHAPE, EloModel::Logistic, 0.0).unwrap();
        for w in 0..9 {
            let counts = super::super::sprt::draw_pairs(&honest, 4000, &mut rng);
            workers.push((format!("w{w}"), penta(counts)));
        }
        // Plausible counts, but a fifth of its lost pairs reported as drawn.
        let mut c = super::super::sprt::draw_pairs(&honest, 4000, &mut rng);
        let moved = (c[0] + c[1]) / 5;
        c[1] -= moved.min(c[1]);
        c[2] += moved;
        workers.push(("liar".to_owned(), penta(c)));
        let flagged = bad_workers(&workers, &BadWorkerRule::default());
        assert_eq!(flagged, ["liar"]);
        let t = homogeneity(&workers).unwrap();
        assert!(t.residual(&"liar".to_owned()).unwrap() > t.z_99);
    }

    #[test]
    fn health_follows_fishtests_rule() {
        let h = |games, crashes, time_losses| Health {
            games,
            crashes,
            time_losses,
        };
        assert!(!h(100, 3, 10).unhealthy());
        assert!(h(100, 4, 0).unhealthy());
        assert!(h(100, 0, 11).unhealthy());
        assert!(
            !h(20, 0, 10).unhealthy(),
            "too few games to judge time losses"
        );
        assert_eq!(h(0, 0, 0).time_loss_rate(), 0.0);
        assert!((h(50, 5, 0).crash_rate() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_bad_rule_is_refused() {
        let bad = BadWorkerRule {
            p: 1.5,
            ..BadWorkerRule::default()
        };
        assert!(bad.validate().is_err());
        let bad = BadWorkerRule {
            residual: f64::NAN,
            ..BadWorkerRule::default()
        };
        assert!(bad.validate().is_err());
        assert!(BadWorkerRule::default().validate().is_ok());
    }
}
