//! Per-worker health in one run, from its stored per-lease results
//! ([`crate::store::lease_results`]): each worker's residual against the
//! pooled result of the run's other workers ([`crate::stats::residuals`],
//! fishtest's test on the pentanomial), its time-loss and crash rates, and a
//! flag when one passes its threshold.
//!
//! The residual test runs over the workers still counted; a worker already
//! excluded keeps its flag and shows its residual against everyone.
//! Variants runs pool their variants (workers get them round by round, so
//! every worker plays about the same mix).

use rusqlite::Connection;

use crate::stats::residuals::{BadWorkerRule, Health, bad_workers, homogeneity};
use crate::stats::{Pentanomial, Results};
use crate::store::StoreError;
use crate::store::lease_results::{self, WorkerSums};

/// One worker's results and health in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerHealth {
    pub sums: WorkerSums,
    /// Residual as a standard normal z (≥ 0); `None` when the worker has too
    /// few games for the test or fewer than two workers qualify.
    pub residual: Option<f64>,
    /// Why the worker is flagged (a residual past the rule, too many crashes
    /// or time losses), or why it was excluded; `None` when healthy.
    pub flag: Option<String>,
    /// Whether the run set the worker's results aside.
    pub excluded: bool,
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

/// Every worker with a result in `run_id`, by worker id, with its health
/// under fishtest's rule ([`BadWorkerRule::default`]). This is the function
/// the web view and `report` call.
pub fn for_run(conn: &Connection, run_id: u64) -> Result<Vec<WorkerHealth>, StoreError> {
    Ok(judge(
        lease_results::per_worker(conn, run_id)?,
        &BadWorkerRule::default(),
    ))
}

/// A worker flagged in a run: `why` is [`WorkerHealth::flag`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunFlag {
    pub run_id: u64,
    pub why: String,
    pub excluded: bool,
}

/// Every worker's flags, by worker id: those of every run still active, and
/// every exclusion of any run (an exclusion outlives the run).
pub fn flags_by_worker(
    conn: &Connection,
) -> Result<std::collections::BTreeMap<u64, Vec<RunFlag>>, StoreError> {
    let mut runs = conn.prepare_cached(
        "SELECT id FROM runs WHERE state = 'active'
         UNION SELECT run_id FROM run_excluded_workers ORDER BY 1",
    )?;
    let ids = runs
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut found: std::collections::BTreeMap<u64, Vec<RunFlag>> = Default::default();
    for run_id in ids {
        for h in for_run(conn, run_id as u64)? {
            if let Some(why) = h.flag {
                found.entry(h.sums.worker_id).or_default().push(RunFlag {
                    run_id: run_id as u64,
                    why,
                    excluded: h.excluded,
                });
            }
        }
    }
    Ok(found)
}

fn results(s: &WorkerSums) -> (u64, Results) {
    (
        s.worker_id,
        Results::Pentanomial(Pentanomial(s.pentanomial)),
    )
}

/// The health of each worker of `sums` under `rule` (see the module docs).
pub fn judge(sums: Vec<WorkerSums>, rule: &BadWorkerRule) -> Vec<WorkerHealth> {
    let all: Vec<_> = sums.iter().map(results).collect();
    let counted: Vec<_> = sums
        .iter()
        .filter(|s| s.excluded.is_none())
        .map(results)
        .collect();
    let everyone = homogeneity(&all);
    let test = homogeneity(&counted);
    let bad = bad_workers(&counted, rule);
    sums.into_iter()
        .map(|sums| {
            let id = sums.worker_id;
            let excluded = sums.excluded.is_some();
            let residual = if excluded {
                everyone.as_ref().and_then(|t| t.residual(&id))
            } else {
                test.as_ref().and_then(|t| t.residual(&id))
            };
            let health = Health {
                games: sums.games(),
                crashes: sums.crashes,
                time_losses: sums.time_losses,
            };
            let flag = if let Some(why) = &sums.excluded {
                Some(why.clone())
            } else if bad.contains(&id) {
                let p = test.as_ref().map_or(1.0, |t| t.p);
                Some(format!(
                    "residual {:.2} against the other workers (table p {p:.1e})",
                    residual.unwrap_or(0.0)
                ))
            } else if health.unhealthy() {
                Some(format!(
                    "{} crashes and {} time losses in {} games",
                    health.crashes, health.time_losses, health.games
                ))
            } else {
                None
            };
            WorkerHealth {
                sums,
                residual,
                flag,
                excluded,
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
            pentanomial,
            ..WorkerSums::default()
        }
    }

    #[test]
    fn a_worker_far_from_the_others_is_flagged_and_an_excluded_one_keeps_its_reason() {
        let honest = [30, 240, 460, 240, 30];
        let mut sums: Vec<_> = (1..=5).map(|i| worker(i, honest)).collect();
        sums.push(worker(6, [10, 120, 460, 360, 50]));
        let judged = judge(sums.clone(), &BadWorkerRule::default());
        let flagged: Vec<u64> = judged
            .iter()
            .filter(|w| w.flag.is_some())
            .map(|w| w.sums.worker_id)
            .collect();
        assert_eq!(flagged, [6]);
        assert!(judged[5].residual.unwrap() > 7.0);
        assert!(judged[0].residual.unwrap() < 3.0);

        sums[5].excluded = Some("excluded for a test".to_owned());
        let judged = judge(sums, &BadWorkerRule::default());
        assert_eq!(judged[5].flag.as_deref(), Some("excluded for a test"));
        assert!(judged[5].excluded);
        assert!(judged[..5].iter().all(|w| w.flag.is_none()), "{judged:?}");
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
        );
        assert_eq!(judged[0].flag, None);
        assert!(judged[1].flag.as_deref().unwrap().contains("4 crashes"));
        assert!(
            judged[2]
                .flag
                .as_deref()
                .unwrap()
                .contains("21 time losses")
        );
    }
}
