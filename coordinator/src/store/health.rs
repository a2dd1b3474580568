//! Workers' health in runs, read from the stored per-lease results and
//! judged by [`crate::runs::health`].

use std::collections::BTreeMap;

use rusqlite::Connection;

use super::{StoreError, lease_results};
use crate::runs::health::{self, RunFlag, WorkerHealth};
use crate::stats::residuals::{BadWorkerRule, ExclusionRule};

/// Every worker with a result in `run_id`, by worker id, with its health
/// under fishtest's flag ([`BadWorkerRule::default`](crate::stats::residuals::BadWorkerRule)) and the default
/// [`ExclusionRule`](crate::stats::residuals::ExclusionRule). The web view, `report` and the exclusion of flagged
/// workers all read this.
pub fn for_run(conn: &Connection, run_id: u64) -> Result<Vec<WorkerHealth>, StoreError> {
    Ok(health::judge(
        lease_results::per_worker(conn, run_id)?,
        &BadWorkerRule::default(),
        &ExclusionRule::default(),
    ))
}

/// Every worker's flags, by worker id: those of every run still active, and
/// every exclusion of any run (an exclusion outlives the run).
pub fn flags_by_worker(conn: &Connection) -> Result<BTreeMap<u64, Vec<RunFlag>>, StoreError> {
    let mut runs = conn.prepare_cached(
        "SELECT id FROM runs WHERE state = 'active'
         UNION SELECT run_id FROM run_excluded_workers ORDER BY 1",
    )?;
    let ids = runs
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut found: BTreeMap<u64, Vec<RunFlag>> = Default::default();
    for run_id in ids {
        for h in for_run(conn, run_id as u64)? {
            if let Some(why) = h.standing.flag() {
                found.entry(h.sums.worker_id).or_default().push(RunFlag {
                    run_id: run_id as u64,
                    why: why.to_owned(),
                    excluded: h.standing.excluded(),
                });
            }
        }
    }
    Ok(found)
}
