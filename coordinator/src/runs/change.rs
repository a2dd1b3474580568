//! A change of a running test: what may change without invalidating its
//! statistics (the game cap, the priority, the throughput share), checked
//! and applied to the run as stored. Players, limits, rules, openings and
//! SPRT bounds never change: a different test is a new run.
//!
//! The cap is counted in game pairs over the whole run, as
//! [`RunStatus::target_pairs`] is (a variants run's pairs over all its
//! variants, so a multiple of their number). An SPSA run has none that may
//! change: its gain schedule was fixed by its length when it started
//! ([`super::Kind::set_target_pairs`]).

use super::{RunError, RunStatus};

/// The share of a run that was given none: the normal share.
pub const DEFAULT_SHARE: u32 = 100;
/// Largest share: 100 times the normal share.
pub const MAX_SHARE: u32 = 10_000;

/// The fields of a change; `None` keeps the run's value. Build it with
/// [`RunChange::new`], which refuses a change of nothing and values out of
/// range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunChange {
    /// The new cap in game pairs over the whole run, at least 1.
    pub pairs: Option<u64>,
    /// The new priority (higher runs get workers first).
    pub priority: Option<i32>,
    /// The new throughput share, `1..=MAX_SHARE` (see the scheduler's fair
    /// share: runs of equal priority get pairs in flight in proportion).
    pub share: Option<u32>,
}

/// What a change makes of a run: its new spec (cap and priority) and share,
/// and the event's text, `field old → new` for each field that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    pub spec: super::RunSpec,
    pub share: u32,
    /// Empty when nothing differs from the run as it was.
    pub detail: String,
}

impl RunChange {
    /// A checked change: at least one field, a cap of at least one pair, a
    /// share in `1..=MAX_SHARE`.
    pub fn new(
        pairs: Option<u64>,
        priority: Option<i32>,
        share: Option<u32>,
    ) -> Result<RunChange, RunError> {
        if pairs.is_none() && priority.is_none() && share.is_none() {
            return Err(RunError::invalid(
                "change",
                "nothing to change: give a cap, a priority or a share",
            ));
        }
        if pairs == Some(0) {
            return Err(RunError::invalid("pairs", "a cap must be at least 1 pair"));
        }
        if let Some(s) = share
            && !(1..=MAX_SHARE).contains(&s)
        {
            return Err(RunError::invalid(
                "share",
                format!("{s} is not in 1..={MAX_SHARE} (normal: {DEFAULT_SHARE})"),
            ));
        }
        Ok(RunChange {
            pairs,
            priority,
            share,
        })
    }

    /// The run after this change, given the fresh pairs it has handed out
    /// (`issued`): a cap below them is refused, since those games are
    /// played or being played. The run's state is the caller's concern.
    pub fn apply(&self, run: &RunStatus, share: u32, issued: u64) -> Result<Changed, RunError> {
        let mut spec = run.spec.clone();
        let mut detail = Vec::new();
        if let Some(pairs) = self.pairs
            && run.target_pairs != Some(pairs)
        {
            if pairs < issued {
                return Err(RunError::invalid(
                    "pairs",
                    format!(
                        "run {} has handed out {issued} pairs ({} counted); \
                         a cap of {pairs} pairs is below them",
                        run.id, run.totals.pairs
                    ),
                ));
            }
            let batch = spec.batch_pairs;
            spec.kind
                .ops_mut()
                .set_target_pairs(pairs, issued, batch)
                .map_err(|e| with_run(e, run.id))?;
            let old = run
                .target_pairs
                .map_or_else(|| "none".to_owned(), |p| p.to_string());
            detail.push(format!("pairs {old} → {pairs}"));
        }
        if let Some(priority) = self.priority
            && priority != spec.priority
        {
            detail.push(format!("priority {} → {priority}", spec.priority));
            spec.priority = priority;
        }
        let new_share = self.share.unwrap_or(share);
        if new_share != share {
            detail.push(format!("share {share} → {new_share}"));
        }
        Ok(Changed {
            spec,
            share: new_share,
            detail: detail.join(", "),
        })
    }
}

/// `e` with the run's id in front of its reason.
fn with_run(e: RunError, id: u64) -> RunError {
    match e {
        RunError::Invalid(i) => RunError::invalid(&i.field, format!("run {id}: {}", i.reason)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_of_nothing_or_out_of_range_is_refused() {
        let err = |r: Result<RunChange, RunError>| r.unwrap_err().to_string();
        assert!(err(RunChange::new(None, None, None)).contains("nothing to change"));
        assert!(err(RunChange::new(Some(0), None, None)).contains("at least 1 pair"));
        assert!(err(RunChange::new(None, None, Some(0))).contains("not in 1..=10000"));
        assert!(err(RunChange::new(None, None, Some(MAX_SHARE + 1))).contains("share"));
        assert!(RunChange::new(None, Some(-3), None).is_ok());
    }
}
