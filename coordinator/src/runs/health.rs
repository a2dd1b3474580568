//! Per-worker health in one run, from its stored per-lease results
//! ([`crate::store::lease_results`]): each worker's residual against the
//! pooled result of the run's other workers ([`crate::stats::residuals`],
//! fishtest's test on the pentanomial), its time-loss and crash rates, and a
//! flag when one passes its threshold.
//!
//! The flag is fishtest's ([`BadWorkerRule`]), for the eye. A run that sets
//! its flagged workers aside acts only on a flag past the stricter
//! [`ExclusionRule`] (the check repeats after every result, so a single-look
//! bound would accuse honest workers in a few runs out of a hundred), or on a
//! crash or time-loss flag.
//!
//! The residual test runs over the workers still counted; a worker already
//! excluded keeps its flag and shows its residual against everyone.
//! Variants runs pool their variants (workers get them round by round, so
//! every worker plays about the same mix).

use crate::stats::residuals::{BadWorkerRule, ExclusionRule, Health, bad_workers, homogeneity};
use crate::stats::{Pentanomial, Results, Wdl};

/// One worker's results and health in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerHealth {
    pub sums: WorkerSums,
    /// Residual as a standard normal z (≥ 0); `None` when the worker has too
    /// few games for the test or fewer than two workers qualify.
    pub residual: Option<f64>,
    pub standing: Standing,
}

/// Where a worker stands in a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    Healthy,
    /// Past [`BadWorkerRule`] (a residual) or [`Health::unhealthy`] (crashes
    /// or time losses); `why` says which. `excludable` when a run that sets
    /// its flagged workers aside acts on it: a residual past the stricter
    /// [`ExclusionRule`], or any crash or time-loss flag.
    Flagged {
        why: String,
        excludable: bool,
    },
    /// Set aside by the run; `why` is the flag it was excluded for.
    Excluded {
        why: String,
    },
}

impl Standing {
    /// The flag's text, or the exclusion's; `None` when healthy.
    pub fn flag(&self) -> Option<&str> {
        match self {
            Standing::Healthy => None,
            Standing::Flagged { why, .. } | Standing::Excluded { why } => Some(why),
        }
    }

    pub fn excluded(&self) -> bool {
        matches!(self, Standing::Excluded { .. })
    }
}

impl WorkerHealth {
    pub fn health(&self) -> Health {
        Health {
            games: self.sums.games(),
            crashes: self.sums.crashes,
            time_losses: self.sums.time_losses,
        }
    }
}

/// One worker's results in one run, summed over its leases.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkerSums {
    pub worker_id: u64,
    pub name: String,
    /// Counted and excluded leases.
    pub leases: u64,
    pub pairs: u64,
    /// First player's view.
    pub pentanomial: Pentanomial,
    pub wdl: Wdl,
    pub time_losses: u64,
    pub crashes: u64,
    /// Why the worker was excluded from the run, if it was.
    pub excluded: Option<String>,
    /// The engine builds it played, one label per distinct pair
    /// ([`crate::store::lease_results::builds_label`]); empty: no tagged
    /// build.
    pub builds: Vec<String>,
}
impl WorkerSums {
    pub fn games(&self) -> u64 {
        self.pairs.saturating_mul(2)
    }
}

/// A worker flagged in a run: `why` is [`WorkerHealth::flag`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunFlag {
    pub run_id: u64,
    pub why: String,
    pub excluded: bool,
}

fn results(s: &WorkerSums) -> (u64, Results) {
    (s.worker_id, Results::Pentanomial(s.pentanomial))
}

/// The health of each worker of `sums` under `flag` and `exclude` (see the
/// module docs).
pub fn judge(
    sums: Vec<WorkerSums>,
    flag: &BadWorkerRule,
    exclude: &ExclusionRule,
) -> Vec<WorkerHealth> {
    let all: Vec<_> = sums.iter().map(results).collect();
    let counted: Vec<_> = sums
        .iter()
        .filter(|s| s.excluded.is_none())
        .map(results)
        .collect();
    let everyone = homogeneity(&all);
    let test = homogeneity(&counted);
    let bad = bad_workers(&counted, flag);
    let worst = test
        .as_ref()
        .and_then(|t| exclude.worst(t, &counted))
        .map(|(id, _)| id);
    let bound = test
        .as_ref()
        .map_or(0.0, |t| exclude.threshold(t.residuals.len()));
    sums.into_iter()
        .map(|sums| {
            let id = sums.worker_id;
            let residual = if sums.excluded.is_some() {
                everyone.as_ref().and_then(|t| t.residual(&id))
            } else {
                test.as_ref().and_then(|t| t.residual(&id))
            };
            let health = Health {
                games: sums.games(),
                crashes: sums.crashes,
                time_losses: sums.time_losses,
            };
            let standing = if let Some(why) = &sums.excluded {
                Standing::Excluded { why: why.clone() }
            } else if worst == Some(id) || bad.contains(&id) {
                let p = test.as_ref().map_or(1.0, |t| t.p);
                let excludable = worst == Some(id);
                let past = if excludable { "past" } else { "within" };
                Standing::Flagged {
                    why: format!(
                        "residual {:.2} against the other workers (table p {p:.1e}; {past} the exclusion bound {bound:.2})",
                        residual.unwrap_or(0.0)
                    ),
                    excludable,
                }
            } else if health.unhealthy() {
                Standing::Flagged {
                    why: format!(
                        "{} crashes and {} time losses in {} games",
                        health.crashes, health.time_losses, health.games
                    ),
                    excludable: true,
                }
            } else {
                Standing::Healthy
            };
            WorkerHealth {
                sums,
                residual,
                standing,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(id: u64, pentanomial: [u64; 5]) -> WorkerSums {
        let pairs = pentanomial.iter().sum();
        WorkerSums {
            worker_id: id,
            name: format!("w{id}"),
            leases: 1,
            pairs,
            pentanomial: Pentanomial(pentanomial),
            ..WorkerSums::default()
        }
    }

    #[test]
    fn a_worker_far_from_the_others_is_flagged_and_an_excluded_one_keeps_its_reason() {
        let honest = [30, 240, 460, 240, 30];
        let mut sums: Vec<_> = (1..=5).map(|i| worker(i, honest)).collect();
        sums.push(worker(6, [10, 120, 460, 360, 50]));
        let judged = judge(
            sums.clone(),
            &BadWorkerRule::default(),
            &ExclusionRule::default(),
        );
        let flagged: Vec<u64> = judged
            .iter()
            .filter(|w| w.standing.flag().is_some())
            .map(|w| w.sums.worker_id)
            .collect();
        assert_eq!(flagged, [6]);
        assert!(
            matches!(
                judged[5].standing,
                Standing::Flagged {
                    excludable: true,
                    ..
                }
            ),
            "{:?}",
            judged[5]
        );
        assert!(judged[5].residual.unwrap() > 7.0);
        assert!(judged[0].residual.unwrap() < 3.0);

        sums[5].excluded = Some("excluded for a test".to_owned());
        let judged = judge(sums, &BadWorkerRule::default(), &ExclusionRule::default());
        assert_eq!(judged[5].standing.flag(), Some("excluded for a test"));
        assert!(judged[5].standing.excluded());
        assert!(
            judged[..5].iter().all(|w| w.standing == Standing::Healthy),
            "{judged:?}"
        );
    }

    #[test]
    fn crashes_and_time_losses_flag_a_worker_whose_results_look_normal() {
        let mut crashing = worker(2, [3, 24, 46, 24, 3]);
        crashing.crashes = 4;
        let mut slow = worker(3, [3, 24, 46, 24, 3]);
        slow.time_losses = 21;
        let judged = judge(
            vec![worker(1, [3, 24, 46, 24, 3]), crashing, slow],
            &BadWorkerRule::default(),
            &ExclusionRule::default(),
        );
        assert_eq!(judged[0].standing, Standing::Healthy);
        assert!(judged[1].standing.flag().unwrap().contains("4 crashes"));
        assert!(
            judged[2]
                .standing
                .flag()
                .unwrap()
                .contains("21 time losses")
        );
        assert!(judged[1..].iter().all(|w| matches!(
            w.standing,
            Standing::Flagged {
                excludable: true,
                ..
            }
        )));
    }

    #[test]
    fn a_flag_within_the_exclusion_bound_is_shown_but_not_acted_on() {
        // Six workers, one at residual 5.02: past fishtest's table p (7.6e-4),
        // within the exclusion bound Φ⁻¹(1 − 1e-6 / 6) = 5.10.
        let honest = [30, 240, 460, 240, 30];
        let mut sums: Vec<_> = (1..=5).map(|i| worker(i, honest)).collect();
        sums.push(worker(6, [20, 180, 460, 300, 40]));
        let judged = judge(sums, &BadWorkerRule::default(), &ExclusionRule::default());
        let z = judged[5].residual.unwrap();
        assert!((5.0..5.1).contains(&z), "residual {z}");
        match &judged[5].standing {
            Standing::Flagged { why, excludable } => {
                assert!(!excludable);
                assert!(why.contains("within the exclusion bound"), "{why}");
            }
            other => panic!("not flagged: {other:?}"),
        }
    }
}
