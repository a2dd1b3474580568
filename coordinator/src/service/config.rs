//! How the core's operations are timed: leases, heartbeats, the rules of
//! runs' source engines and the sizing of leases by pace.

use std::time::Duration;

use super::check_lane::CheckConfig;
use crate::git::GitConfig;
use crate::pace::PaceConfig;
use crate::runs::sources;

/// Heartbeats a second a fleet is paced to by default: about a fifth of
/// what a 2-core coordinator answers beside its fleet's other calls
/// (coordinator/SECURITY.md), so a fleet of 100,000 beats every 50 s.
pub const DEFAULT_HEARTBEAT_BUDGET: u32 = 2_000;

/// Timing of leases, and the rules of runs' source engines.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerConfig {
    /// A lease lapses this long after it was handed out or last heartbeat.
    pub lease_ttl: Duration,
    /// How often workers are told to send heartbeats (well below `lease_ttl`)
    /// while the fleet is within `heartbeat_budget`.
    pub heartbeat_interval: Duration,
    /// Heartbeats a second the fleet is paced to: past `heartbeat_budget ×
    /// heartbeat_interval` workers the interval and the lease life stretch
    /// in proportion ([`super::cadence`]); 0: never.
    pub heartbeat_budget: u32,
    /// How long a worker waits before asking again when there is no work.
    pub idle_retry: Duration,
    /// Which repositories source engines may name, and how a branch is
    /// resolved to its commit when a run is created.
    pub git: GitConfig,
    /// Failed builds on this many distinct workers stop a run; at least 1.
    pub build_failures_to_stop: u32,
    /// How leases are sized by each worker's pace.
    pub pace: PaceConfig,
    /// The threads that check results and how many results are admitted.
    pub checks: CheckConfig,
}

impl Default for SchedulerConfig {
    /// Leases of 60 s, heartbeats every 10 s (stretched past 20,000 workers
    /// to keep within [`DEFAULT_HEARTBEAT_BUDGET`]), idle workers ask every 2 s;
    /// https repositories only; a run stops after failed builds on
    /// [`sources::DEFAULT_FAILURES_TO_STOP`] workers; leases sized to about
    /// 30 minutes of play ([`PaceConfig::default`]); results checked on
    /// one thread per core ([`CheckConfig::default`]).
    fn default() -> Self {
        SchedulerConfig {
            lease_ttl: Duration::from_secs(60),
            heartbeat_interval: Duration::from_secs(10),
            heartbeat_budget: DEFAULT_HEARTBEAT_BUDGET,
            idle_retry: Duration::from_secs(2),
            git: GitConfig::default(),
            build_failures_to_stop: sources::DEFAULT_FAILURES_TO_STOP,
            pace: PaceConfig::default(),
            checks: CheckConfig::default(),
        }
    }
}

impl SchedulerConfig {
    /// Leases of `ttl` (at least 1 s) with heartbeats every sixth of it (at
    /// least 200 ms), as `serve --lease-secs` sets them: a lease lapses after
    /// six missed heartbeats, and a fleet of N workers sends 6·N/ttl
    /// heartbeats a second, at most `heartbeat_budget` ([`super::cadence`]).
    pub fn with_lease_ttl(self, ttl: Duration) -> Self {
        let ttl = ttl.max(Duration::from_secs(1));
        SchedulerConfig {
            lease_ttl: ttl,
            heartbeat_interval: (ttl / 6).max(Duration::from_millis(200)),
            ..self
        }
    }
}

/// A duration in whole milliseconds, as stored.
pub(super) fn ms(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_are_a_sixth_of_the_lease_ttl() {
        let default = SchedulerConfig::default();
        let same = SchedulerConfig::default().with_lease_ttl(default.lease_ttl);
        assert_eq!(same.heartbeat_interval, default.heartbeat_interval);
        let fleet = SchedulerConfig::default().with_lease_ttl(Duration::from_secs(360));
        assert_eq!(fleet.lease_ttl, Duration::from_secs(360));
        assert_eq!(fleet.heartbeat_interval, Duration::from_secs(60));
        let zero = SchedulerConfig::default().with_lease_ttl(Duration::ZERO);
        assert_eq!(zero.lease_ttl, Duration::from_secs(1));
        assert_eq!(zero.heartbeat_interval, Duration::from_millis(200));
    }
}
