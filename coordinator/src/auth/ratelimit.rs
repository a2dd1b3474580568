//! Per-token request rates: a token bucket per token key.
//!
//! A bucket holds up to `burst` requests and refills at `per_second`; a
//! call takes one request or is refused with RESOURCE_EXHAUSTED, which the
//! worker client treats as transient and backs off from.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Role;

/// A rate: `per_second` requests on average, up to `burst` at once.
/// `per_second = 0` means unlimited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub per_second: f64,
    pub burst: f64,
}

impl Rate {
    pub const UNLIMITED: Rate = Rate {
        per_second: 0.0,
        burst: 0.0,
    };
}

/// Rates by role.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimits {
    pub worker: Rate,
    pub personal: Rate,
}

impl Default for RateLimits {
    /// Workers 50 requests/s with bursts of 100; personal tokens 20/s, bursts of 50.
    fn default() -> Self {
        RateLimits {
            worker: Rate {
                per_second: 50.0,
                burst: 100.0,
            },
            personal: Rate {
                per_second: 20.0,
                burst: 50.0,
            },
        }
    }
}

impl RateLimits {
    pub const UNLIMITED: RateLimits = RateLimits {
        worker: Rate::UNLIMITED,
        personal: Rate::UNLIMITED,
    };
}

/// A token bucket: up to `burst` takes at once, refilled at `per_second`.
#[derive(Debug, Clone, Copy)]
pub struct Bucket {
    /// Takes available now (fractional while refilling).
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// A full bucket of `rate` at `now`.
    pub fn full(rate: Rate, now: Instant) -> Bucket {
        Bucket {
            tokens: rate.burst.max(1.0),
            last: now,
        }
    }

    /// When it was last taken from.
    pub fn last(&self) -> Instant {
        self.last
    }

    /// Takes one at `now`, or says how long until one is there. A rate of
    /// 0 per second is unlimited.
    pub fn take(&mut self, rate: Rate, now: Instant) -> Result<(), Duration> {
        if rate.per_second <= 0.0 {
            return Ok(());
        }
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate.per_second).min(rate.burst.max(1.0));
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - self.tokens) / rate.per_second,
            ))
        }
    }
}

/// The buckets of every token seen; a std mutex, never held across an await.
#[derive(Debug)]
pub struct RateLimiter {
    limits: RateLimits,
    buckets: Mutex<HashMap<i64, Bucket>>,
}

impl RateLimiter {
    pub fn new(limits: RateLimits) -> Self {
        RateLimiter {
            limits,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `key`'s bucket at `now`; false if it is empty.
    pub fn allow(&self, key: i64, role: Role, now: Instant) -> bool {
        let rate = match role {
            Role::Worker => self.limits.worker,
            Role::Personal => self.limits.personal,
        };
        if rate.per_second <= 0.0 {
            return true;
        }
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        buckets
            .entry(key)
            .or_insert(Bucket::full(rate, now))
            .take(rate, now)
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_rate_refills() {
        let limiter = RateLimiter::new(RateLimits {
            worker: Rate {
                per_second: 10.0,
                burst: 3.0,
            },
            ..RateLimits::default()
        });
        let t0 = Instant::now();
        assert!((0..3).all(|_| limiter.allow(1, Role::Worker, t0)));
        assert!(!limiter.allow(1, Role::Worker, t0));
        // Another token has its own bucket.
        assert!(limiter.allow(2, Role::Worker, t0));
        // 100 ms at 10/s refills one request.
        let t1 = t0 + Duration::from_millis(100);
        assert!(limiter.allow(1, Role::Worker, t1));
        assert!(!limiter.allow(1, Role::Worker, t1));
    }

    #[test]
    fn a_zero_rate_is_unlimited() {
        let limiter = RateLimiter::new(RateLimits::UNLIMITED);
        let now = Instant::now();
        assert!((0..10_000).all(|_| limiter.allow(1, Role::Personal, now)));
    }
}
