//! Leases sized by time: each worker's lease of a run holds about the pairs
//! it plays in [`PaceConfig::target`], as fishtest sizes a task as the games
//! of about 30 minutes, so that a fast fleet sends fewer, larger results.
//!
//! A worker's pace on a run is what its accepted results took: the time from
//! the lease's grant to its result, per pair, smoothed over its results
//! (each new one weighs half). Its first lease of a run, and every lease
//! after a coordinator restart (paces live in memory only), holds the run's
//! `batch_pairs`. A sized lease is a whole number of batches, at least one,
//! at most [`PaceConfig::max_pairs`] (so that its result stays well inside
//! the server's message limit) and never more than the run has left.
//!
//! Only kinds whose statistics do not depend on the lease size are sized
//! ([`crate::runs::Kind::sized_by_time`]): an SPSA lease is one
//! perturbation, and a variants run cuts its openings into rounds of batches.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How leases are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaceConfig {
    /// The playing time a lease aims at; zero: every lease holds the run's
    /// `batch_pairs`.
    pub target: Duration,
    /// Most pairs a sized lease holds.
    pub max_pairs: u32,
}

/// 30 minutes, as fishtest's tasks.
pub const DEFAULT_TARGET: Duration = Duration::from_secs(30 * 60);

/// 256 pairs: 512 games of about 2.5 KB each at most, about 1.3 MB, within
/// the 4 MiB message limit with room for long games.
pub const DEFAULT_MAX_PAIRS: u32 = 256;

impl Default for PaceConfig {
    fn default() -> Self {
        PaceConfig {
            target: DEFAULT_TARGET,
            max_pairs: DEFAULT_MAX_PAIRS,
        }
    }
}

/// The workers' paces: at most one entry per worker (its latest run).
#[derive(Debug, Default)]
pub struct Paces {
    config: PaceConfig,
    /// Worker id → (run id, seconds per pair).
    seen: Mutex<HashMap<u64, (u64, f64)>>,
}

impl Paces {
    pub fn new(config: PaceConfig) -> Paces {
        Paces {
            config,
            seen: Mutex::default(),
        }
    }

    /// Records that `worker` played `pairs` of `run` in `elapsed`.
    pub fn record(&self, worker: u64, run: u64, pairs: u32, elapsed: Duration) {
        if pairs == 0 || self.config.target.is_zero() {
            return;
        }
        let sample = elapsed.as_secs_f64() / f64::from(pairs);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let pace = match seen.get(&worker) {
            Some(&(r, old)) if r == run => (old + sample) / 2.0,
            _ => sample,
        };
        seen.insert(worker, (run, pace));
    }

    /// The pairs of `worker`'s next lease of `run`, whose leases are cut in
    /// batches of `batch` pairs (before the run's own cap), and hold at most
    /// `checked` pairs (those whose result the coordinator checks within its
    /// budget, [`crate::service::check_lane::CHECK_BUDGET`]) unless one batch
    /// is more.
    pub fn pairs(&self, worker: u64, run: u64, batch: u32, checked: u32) -> u32 {
        let batch = batch.max(1);
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let Some(&(r, pace)) = seen.get(&worker) else {
            return batch;
        };
        if r != run {
            return batch;
        }
        let fit = self.config.target.as_secs_f64() / pace.max(1e-6);
        let most = self.config.max_pairs.min(checked).max(batch);
        let batches = (fit.min(f64::from(most)) as u32 / batch).max(1);
        batches * batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paces(target_secs: u64) -> Paces {
        Paces::new(PaceConfig {
            target: Duration::from_secs(target_secs),
            max_pairs: 256,
        })
    }

    #[test]
    fn a_first_lease_holds_one_batch_and_later_ones_the_pairs_of_the_target() {
        let p = paces(1800);
        assert_eq!(p.pairs(1, 7, 4, u32::MAX), 4);
        // 8 pairs in 80 s: 10 s a pair, 180 pairs in 30 minutes: 45 batches of 4.
        p.record(1, 7, 8, Duration::from_secs(80));
        assert_eq!(p.pairs(1, 7, 4, u32::MAX), 180);
        // Not a multiple of the batch: rounded down to whole batches.
        assert_eq!(p.pairs(1, 7, 7, u32::MAX), 175);
        // Another run, another worker: one batch.
        assert_eq!(p.pairs(1, 8, 4, u32::MAX), 4);
        assert_eq!(p.pairs(2, 7, 4, u32::MAX), 4);
    }

    #[test]
    fn the_pace_is_smoothed_and_the_size_bounded() {
        let p = paces(1800);
        p.record(1, 7, 10, Duration::from_secs(100));
        p.record(1, 7, 10, Duration::from_secs(300));
        // (10 + 30) / 2 = 20 s a pair: 90 pairs.
        assert_eq!(p.pairs(1, 7, 2, u32::MAX), 90);
        // Instant results: the largest lease, in whole batches.
        p.record(1, 7, 10, Duration::ZERO);
        p.record(1, 7, 10, Duration::ZERO);
        p.record(1, 7, 10, Duration::ZERO);
        p.record(1, 7, 10, Duration::ZERO);
        assert_eq!(p.pairs(1, 7, 10, u32::MAX), 250);
        // Slow beyond the target: still one batch.
        p.record(3, 7, 1, Duration::from_secs(7200));
        assert_eq!(p.pairs(3, 7, 16, u32::MAX), 16);
        // A batch above the largest lease is still handed out whole.
        assert_eq!(p.pairs(1, 7, 300, u32::MAX), 300);
    }

    #[test]
    fn a_lease_holds_no_more_than_the_coordinator_checks_in_its_budget() {
        let p = paces(1800);
        p.record(1, 7, 10, Duration::from_secs(10));
        assert_eq!(p.pairs(1, 7, 4, u32::MAX), 256);
        assert_eq!(p.pairs(1, 7, 4, 50), 48);
        // Never less than one batch.
        assert_eq!(p.pairs(1, 7, 4, 1), 4);
    }

    #[test]
    fn a_zero_target_keeps_every_lease_at_one_batch() {
        let p = paces(0);
        p.record(1, 7, 10, Duration::from_secs(1));
        assert_eq!(p.pairs(1, 7, 3, u32::MAX), 3);
    }
}
