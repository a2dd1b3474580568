//! How often workers heartbeat and how long a lease lives without one, as
//! the fleet grows.
//!
//! A fleet of N workers at an interval I sends N/I heartbeats a second. At
//! the configured interval (10 s by default) 100,000 workers would send
//! 10,000 a second, more than two cores answer beside the fleet's other
//! calls, and a queue past capacity grows until leases lapse. So the
//! coordinator counts the workers that called within a lease's life and
//! stretches the interval until the fleet's heartbeats fit
//! [`SchedulerConfig::heartbeat_budget`], and the lease's life with it in
//! the same proportion (a lease still lapses after the same number of
//! missed heartbeats). Below the budget nothing changes.
//!
//! # Invariant
//!
//! Every answer that tells a worker an interval (Register, a lease, a
//! heartbeat) takes it from the same [`Cadence`] as the deadline it grants,
//! so a deadline is always at least `lease_ttl / heartbeat_interval`
//! intervals away from the arrival of the call that told that interval: a
//! worker that beats at the interval it was last told keeps its leases,
//! whatever the interval becomes meanwhile. And while a worker is counted,
//! its lease life is never shorter than that of the longest interval it
//! was told, so a client that keeps an earlier interval (one that reads
//! only Register's answer) keeps its leases when the fleet shrinks.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::config::SchedulerConfig;
use crate::store::now_ms;

/// How often the counted workers are pruned to those seen within a lease's
/// life, in ms.
const PRUNE_EVERY_MS: i64 = 1_000;

/// One heartbeat interval and the lease life that goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    /// How often a worker sends heartbeats.
    pub interval: Duration,
    /// A lease lapses this long after it was handed out or last heartbeat.
    pub lease_ttl: Duration,
}

impl Cadence {
    /// The lease life in ms, as deadlines are stored.
    pub fn ttl_ms(self) -> i64 {
        super::config::ms(self.lease_ttl)
    }
}

/// A counted worker.
#[derive(Debug, Clone, Copy)]
struct Told {
    /// When it last called (ms since the epoch).
    seen_ms: i64,
    /// The longest interval it was told.
    longest: Duration,
}

#[derive(Debug, Default)]
struct Seen {
    at: HashMap<u64, Told>,
    pruned_ms: i64,
    /// The lease life last answered, ms: a worker not seen for that long
    /// (or for the lease life of the longest interval it was told) is no
    /// longer counted.
    window_ms: i64,
}

/// The fleet's count and the cadence it sets; one per core.
#[derive(Debug)]
pub struct FleetCadence {
    base: Cadence,
    /// Heartbeats a second the fleet is paced to; 0: never stretched.
    budget: u32,
    seen: Mutex<Seen>,
}

impl FleetCadence {
    pub fn new(config: &SchedulerConfig) -> Self {
        FleetCadence {
            base: Cadence {
                interval: config.heartbeat_interval.max(Duration::from_millis(1)),
                lease_ttl: config.lease_ttl,
            },
            budget: config.heartbeat_budget,
            seen: Mutex::default(),
        }
    }

    /// Counts `worker_id` as calling now and returns the cadence to answer
    /// it with. The count is of the workers seen within the lease life last
    /// answered, which every worker heartbeating at its interval is. The
    /// lease life answered is never shorter than that of the longest
    /// interval the worker was told: a client that kept an earlier, longer
    /// interval (one that reads only Register's) keeps its leases when the
    /// fleet shrinks.
    pub fn seen(&self, worker_id: u64) -> Cadence {
        let now = now_ms();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let told = *seen
            .at
            .entry(worker_id)
            .and_modify(|t| t.seen_ms = now)
            .or_insert(Told {
                seen_ms: now,
                longest: self.base.interval,
            });
        if now - seen.pruned_ms >= PRUNE_EVERY_MS {
            let window = seen.window_ms.max(self.base.ttl_ms());
            seen.at.retain(|_, t| {
                let life = super::config::ms(self.with_interval(t.longest).lease_ttl);
                t.seen_ms >= now - window.max(life)
            });
            seen.pruned_ms = now;
        }
        let cadence = self.for_fleet(seen.at.len());
        seen.window_ms = cadence.ttl_ms();
        let longest = told.longest.max(cadence.interval);
        seen.at.insert(worker_id, Told { longest, ..told });
        Cadence {
            interval: cadence.interval,
            lease_ttl: cadence.lease_ttl.max(self.with_interval(longest).lease_ttl),
        }
    }

    /// The cadence for a fleet of `workers`: the base one, or its interval
    /// stretched to `workers / budget` seconds and the lease life in the
    /// same proportion.
    pub fn for_fleet(&self, workers: usize) -> Cadence {
        if self.budget == 0 {
            return self.base;
        }
        let wanted_ms = (workers as u128 * 1_000).div_ceil(u128::from(self.budget));
        let wanted = Duration::from_millis(u64::try_from(wanted_ms).unwrap_or(u64::MAX));
        self.with_interval(wanted)
    }

    /// The base cadence, or with its interval stretched to `interval` and
    /// the lease life in the same proportion.
    fn with_interval(&self, interval: Duration) -> Cadence {
        let base_ms = self.base.interval.as_millis();
        if interval.as_millis() <= base_ms {
            return self.base;
        }
        let ttl_ms = self.base.lease_ttl.as_millis() * interval.as_millis() / base_ms;
        Cadence {
            interval,
            lease_ttl: Duration::from_millis(u64::try_from(ttl_ms).unwrap_or(u64::MAX)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cadence(interval_ms: u64, ttl_ms: u64, budget: u32) -> FleetCadence {
        FleetCadence::new(&SchedulerConfig {
            heartbeat_interval: Duration::from_millis(interval_ms),
            lease_ttl: Duration::from_millis(ttl_ms),
            heartbeat_budget: budget,
            ..SchedulerConfig::default()
        })
    }

    #[test]
    fn the_interval_and_the_lease_life_stretch_together_past_the_budget() {
        let c = cadence(10_000, 60_000, 2_000);
        let base = Cadence {
            interval: Duration::from_secs(10),
            lease_ttl: Duration::from_secs(60),
        };
        assert_eq!(c.for_fleet(0), base);
        assert_eq!(c.for_fleet(20_000), base);
        let stretched = c.for_fleet(20_001);
        assert_eq!(stretched.interval, Duration::from_millis(10_001));
        assert_eq!(stretched.lease_ttl, Duration::from_millis(60_006));
        let large = c.for_fleet(100_000);
        assert_eq!(large.interval, Duration::from_secs(50));
        assert_eq!(large.lease_ttl, Duration::from_secs(300));
        assert_eq!(cadence(10_000, 60_000, 0).for_fleet(1_000_000), base);
    }

    #[test]
    fn workers_are_counted_once_and_forgotten_after_a_lease_life() {
        let c = cadence(10, 60, 100);
        for id in 1..=4 {
            c.seen(id);
        }
        let four = c.seen(1);
        assert_eq!(four.interval, Duration::from_millis(40));
        assert_eq!(four.lease_ttl, Duration::from_millis(240));
        std::thread::sleep(Duration::from_millis(1_100));
        let alone = c.seen(5);
        assert_eq!(alone.interval, Duration::from_millis(10));
        assert_eq!(alone.lease_ttl, Duration::from_millis(60));
        assert_eq!(c.seen(6).interval, Duration::from_millis(20));
    }

    #[test]
    fn a_worker_told_a_long_interval_keeps_its_lease_life_when_the_fleet_shrinks() {
        let c = cadence(10, 60, 100);
        for id in 1..=4 {
            c.seen(id);
        }
        assert_eq!(c.seen(1).interval, Duration::from_millis(40));
        std::thread::sleep(Duration::from_millis(1_100));
        let shrunk = c.seen(1);
        assert_eq!(shrunk.interval, Duration::from_millis(10));
        assert_eq!(shrunk.lease_ttl, Duration::from_millis(240));
        assert_eq!(c.seen(7).lease_ttl, Duration::from_millis(120));
    }
}
