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
//! every pair. The scheduler does this in its counting transaction; this
//! module decides who. SPSA runs cannot exclude: θ has already moved by every applied
//! result, so such runs are refused at creation.

use super::health::{Standing, WorkerHealth};
use super::{RunStatus, StoredResult};

/// The workers `run` now sets aside, with the flag each is excluded for:
/// none unless the run asks for it, else those `health` finds excludable.
pub fn to_exclude(run: &RunStatus, health: Vec<WorkerHealth>) -> Vec<(u64, String)> {
    if !run.spec.workers.exclude_flagged {
        return Vec::new();
    }
    health
        .into_iter()
        .filter_map(|w| match w.standing {
            Standing::Flagged {
                why,
                excludable: true,
            } => Some((w.sums.worker_id, why)),
            _ => None,
        })
        .collect()
}

/// The kept results of one variant, for a variants run's recount.
pub fn of_variant(kept: &[StoredResult], variant: usize) -> impl Iterator<Item = &StoredResult> {
    kept.iter().filter(move |r| r.variant == Some(variant))
}
