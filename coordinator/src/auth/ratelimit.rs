//! Request rates: a token bucket per token key, and one per client
//! address for the calls made without a token (the standard services).
//!
//! A bucket holds up to `burst` requests and refills at `per_second`; a
//! call takes one request or is refused with RESOURCE_EXHAUSTED, which the
//! worker client treats as transient and backs off from.

use std::collections::HashMap;
use std::net::IpAddr;
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

/// Rates by role, and per address for calls without a token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimits {
    pub worker: Rate,
    pub personal: Rate,
    /// Calls without a token to the standard services (health checks,
    /// reflection), per client IP address.
    pub open: Rate,
}

impl Default for RateLimits {
    /// Workers 50 requests/s with bursts of 100; personal tokens 20/s,
    /// bursts of 50; calls without a token 10/s per address, bursts of 50
    /// (a probe every few seconds and a `grpcurl` session fit well inside).
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
            open: Rate {
                per_second: 10.0,
                burst: 50.0,
            },
        }
    }
}

impl RateLimits {
    pub const UNLIMITED: RateLimits = RateLimits {
        worker: Rate::UNLIMITED,
        personal: Rate::UNLIMITED,
        open: Rate::UNLIMITED,
    };
}

/// Addresses whose buckets are kept before the idle ones are dropped.
pub const MAX_ADDRESSES: usize = 10_000;

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

/// The buckets of every token and address seen; std mutexes, never held
/// across an await.
#[derive(Debug)]
pub struct RateLimiter {
    limits: RateLimits,
    buckets: Mutex<HashMap<i64, Bucket>>,
    /// Bounded by [`MAX_ADDRESSES`]: past it, buckets that have refilled
    /// (whose address has been idle long enough) are dropped, which
    /// forgets nothing a fresh bucket would not grant.
    addresses: Mutex<HashMap<IpAddr, Bucket>>,
}

impl RateLimiter {
    pub fn new(limits: RateLimits) -> Self {
        RateLimiter {
            limits,
            buckets: Mutex::new(HashMap::new()),
            addresses: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one call without a token from `address`'s bucket at `now`;
    /// false if it is empty.
    pub fn allow_address(&self, address: IpAddr, now: Instant) -> bool {
        let rate = self.limits.open;
        if rate.per_second <= 0.0 {
            return true;
        }
        let mut addresses = self.addresses.lock().unwrap_or_else(|e| e.into_inner());
        if addresses.len() >= MAX_ADDRESSES && !addresses.contains_key(&address) {
            let refill = Duration::from_secs_f64(rate.burst.max(1.0) / rate.per_second);
            addresses.retain(|_, b| now.saturating_duration_since(b.last()) < refill);
        }
        addresses
            .entry(address)
            .or_insert(Bucket::full(rate, now))
            .take(rate, now)
            .is_ok()
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
    fn each_address_has_its_bucket_for_calls_without_a_token() {
        let limiter = RateLimiter::new(RateLimits {
            open: Rate {
                per_second: 1.0,
                burst: 2.0,
            },
            ..RateLimits::UNLIMITED
        });
        let t0 = Instant::now();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "2001:db8::1".parse().unwrap();
        assert!(limiter.allow_address(a, t0) && limiter.allow_address(a, t0));
        assert!(!limiter.allow_address(a, t0));
        assert!(limiter.allow_address(b, t0));
        assert!(limiter.allow_address(a, t0 + Duration::from_secs(1)));
    }

    #[test]
    fn idle_addresses_are_forgotten_past_the_bound() {
        let limiter = RateLimiter::new(RateLimits {
            open: Rate {
                per_second: 1.0,
                burst: 1.0,
            },
            ..RateLimits::UNLIMITED
        });
        let t0 = Instant::now();
        for i in 0..MAX_ADDRESSES as u32 {
            assert!(limiter.allow_address(IpAddr::from(i.to_be_bytes()), t0));
        }
        let busy = IpAddr::from(0u32.to_be_bytes());
        let later = t0 + Duration::from_secs(2);
        assert!(limiter.allow_address("2001:db8::1".parse().unwrap(), later));
        let kept = limiter.addresses.lock().unwrap().len();
        assert_eq!(kept, 1, "every refilled bucket was dropped");
        assert!(limiter.allow_address(busy, later));
    }

    #[test]
    fn a_zero_rate_is_unlimited() {
        let limiter = RateLimiter::new(RateLimits::UNLIMITED);
        let now = Instant::now();
        assert!((0..10_000).all(|_| limiter.allow(1, Role::Personal, now)));
    }
}
