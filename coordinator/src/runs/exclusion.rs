//! Excluding flagged workers from a run that asks for it
//! ([`super::WorkerPolicy::exclude_flagged`]).
//!
//! After every counted result of such a run, the workers still counted that
//! [`super::health`] finds excludable (a residual past the
//! [`crate::stats::residuals::ExclusionRule`], or too many crashes or time
//! losses) are excluded: their
//! stored results are kept but stop counting, their active leases of the run
//! are released, and they get no more work from it. The run's totals, its
//! reasons, its kind's state (the LLR, the variant totals) are then rebuilt
//! from the results still counted, all in the counting transaction. The
//! excluded slices are handed out again, so a run of fixed size still plays
//! every pair. SPSA runs cannot exclude: θ has already moved by every applied
//! result, so such runs are refused at creation.

use rusqlite::Connection;
use xq_proto::Totals;

use super::RunStatus;
use super::health::Standing;
use crate::store::StoreError;
use crate::store::lease_results::{self, StoredResult};
use crate::store::leases::Lease;
use crate::store::runs as run_rows;

/// What the exclusion check did after a counted result.
#[derive(Debug, Clone, PartialEq)]
pub enum Excluded {
    /// Nothing (the run does not exclude, or no new worker is flagged).
    None,
    /// These workers were excluded and the run recounted; `finished` says
    /// whether the run is at its end on the recounted totals.
    Workers { ids: Vec<u64>, finished: bool },
}

/// Excludes the run's newly flagged workers after `lease`'s result was
/// counted (see the module docs).
pub fn after_count(
    conn: &Connection,
    run: &RunStatus,
    lease: &Lease,
    now: i64,
) -> Result<Excluded, StoreError> {
    if !run.spec.workers.exclude_flagged {
        return Ok(Excluded::None);
    }
    let flagged: Vec<(u64, String)> = super::health::for_run(conn, run.id)?
        .into_iter()
        .filter_map(|w| match w.standing {
            Standing::Flagged {
                why,
                excludable: true,
            } => Some((w.sums.worker_id, why)),
            _ => None,
        })
        .collect();
    if flagged.is_empty() {
        return Ok(Excluded::None);
    }
    for (worker, why) in &flagged {
        lease_results::exclude(conn, run.id, *worker, why, now)?;
        tracing::warn!(
            run_id = run.id,
            worker_id = worker,
            reason = why.as_str(),
            "worker excluded"
        );
    }
    let finished = recount(conn, run.id, lease, now)?;
    Ok(Excluded::Workers {
        ids: flagged.into_iter().map(|(id, _)| id).collect(),
        finished,
    })
}

/// Rebuilds the run's totals from its counted results and lets its kind
/// recount its own state; returns whether the run is at its end.
pub fn recount(
    conn: &Connection,
    run_id: u64,
    lease: &Lease,
    now: i64,
) -> Result<bool, StoreError> {
    let kept = lease_results::counted(conn, run_id)?;
    let mut sum = Totals::default();
    for r in &kept {
        sum.merge(&r.totals);
    }
    run_rows::reset_totals(conn, run_id)?;
    run_rows::add_totals(conn, run_id, &sum, now)?;
    let run = run_rows::load(conn, run_id, now)?;
    run.spec.kind.ops().recount(conn, &run, &kept, lease, now)
}

/// The kept results of one variant, for a variants run's recount.
pub fn of_variant(kept: &[StoredResult], variant: usize) -> impl Iterator<Item = &StoredResult> {
    kept.iter().filter(move |r| r.variant == Some(variant))
}
