//! Signing in with a user's name and password (the web view's sign-in form,
//! the CLI's `login`), limited so that guessing stops without a stranger
//! being able to lock a user out.
//!
//! # Design
//!
//! * Each address has a bucket of attempts ([`SignInLimits::per_address`]):
//!   past it, an attempt is refused before any password is hashed, so one
//!   address cannot spend the server's CPU on argon2 or try many names.
//! * Each (name, address) pair counts its failures: after
//!   [`SignInLimits::failures_per_pair`] within [`SignInLimits::window`],
//!   that address may not try that name again until the window since the
//!   first of them has passed, even with the right password. Only the
//!   address that guessed is locked out; the user signs in from anywhere
//!   else.
//! * Each name counts its failures from every address: past
//!   [`SignInLimits::slow_after`] within the window, every attempt at the
//!   name first waits, 1 s doubled for each further failure up to
//!   [`SignInLimits::max_delay`], and is then checked as usual. A name is
//!   never refused this way, so many addresses guessing together slow each
//!   guess (and the user's sign-in) down but cannot lock the user out; the
//!   per-address limits bound how many guesses each of them makes.
//! * A success clears the pair's failures and the name's.
//! * An unknown name, a user without a password and a wrong password are
//!   the same answer ([`SignInError::Wrong`]) and cost the same: a password
//!   is always checked, against a fixed hash when there is none.
//! * The counters live in memory, bounded: entries older than their window
//!   are dropped when a map grows past [`MAX_ENTRIES`]. The address is the
//!   TCP peer's, or the client a trusted proxy names (the web view's
//!   `--trusted-proxy`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use super::ratelimit::{Bucket, Rate};
use crate::access::passwords;
use crate::service::accounts::{Accounts, User};
use crate::store::StoreError;

/// Entries a counter map keeps before it drops stale ones.
pub const MAX_ENTRIES: usize = 10_000;

/// The first wait of a name past [`SignInLimits::slow_after`] failures.
const FIRST_DELAY: Duration = Duration::from_secs(1);

/// How often sign-in may be tried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignInLimits {
    /// Attempts per address: on average, and at once.
    pub per_address: Rate,
    /// Failed attempts one address may make at one name within `window`
    /// before it is locked out of that name.
    pub failures_per_pair: u32,
    /// Failed attempts at a name from all addresses within `window` before
    /// each attempt at it waits.
    pub slow_after: u32,
    /// The longest such wait.
    pub max_delay: Duration,
    /// How long failures count.
    pub window: Duration,
}

impl Default for SignInLimits {
    /// 10 attempts at once per address, then one every 6 s; 5 failures per
    /// name and address in 15 minutes; past 5 failures of a name in 15
    /// minutes, waits of 1 s, 2 s, 4 s … up to 10 s.
    fn default() -> Self {
        SignInLimits {
            per_address: Rate {
                per_second: 1.0 / 6.0,
                burst: 10.0,
            },
            failures_per_pair: 5,
            slow_after: 5,
            max_delay: Duration::from_secs(10),
            window: Duration::from_secs(15 * 60),
        }
    }
}

/// Why a sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("wrong user name or password")]
    Wrong,
    #[error("too many sign-in attempts; try again in {} s", retry_after.as_secs().max(1))]
    Limited { retry_after: Duration },
    #[error("cannot check the password now: {0}")]
    Store(#[from] StoreError),
}

/// Failures counted since `first`.
#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    first: Instant,
}

/// Failures keyed by `K`, dropped once `window` has passed since their
/// first; at most [`MAX_ENTRIES`] keys.
#[derive(Debug)]
struct FailureMap<K>(Mutex<HashMap<K, Failures>>);

impl<K> Default for FailureMap<K> {
    fn default() -> Self {
        FailureMap(Mutex::new(HashMap::new()))
    }
}

impl<K: std::hash::Hash + Eq + Clone> FailureMap<K> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Failures>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `key`'s failures within `window` of `now`, and how long until they
    /// lapse.
    fn count(&self, key: &K, now: Instant, window: Duration) -> (u32, Duration) {
        let mut map = self.lock();
        let Some(f) = map.get(key).copied() else {
            return (0, Duration::ZERO);
        };
        let age = now.saturating_duration_since(f.first);
        if age >= window {
            map.remove(key);
            (0, Duration::ZERO)
        } else {
            (f.count, window - age)
        }
    }

    fn fail(&self, key: &K, now: Instant, window: Duration) {
        let mut map = self.lock();
        if map.len() >= MAX_ENTRIES {
            map.retain(|_, f| now.saturating_duration_since(f.first) < window);
        }
        // A key never seen is not stored when the map is still full: the
        // per-address limit bounds those attempts.
        if map.len() >= MAX_ENTRIES && !map.contains_key(key) {
            return;
        }
        let entry = map.entry(key.clone()).or_insert(Failures {
            count: 0,
            first: now,
        });
        if now.saturating_duration_since(entry.first) >= window {
            *entry = Failures {
                count: 0,
                first: now,
            };
        }
        entry.count += 1;
    }

    fn clear(&self, key: &K) {
        self.lock().remove(key);
    }
}

/// The counters of every address and name seen; std mutexes, never held
/// across an await.
#[derive(Debug, Default)]
pub struct SignInGuard {
    limits: SignInLimits,
    addresses: Mutex<HashMap<IpAddr, Bucket>>,
    pairs: FailureMap<(String, IpAddr)>,
    names: FailureMap<String>,
}

/// A hash to verify against when a user has none, so that an unknown name
/// costs what a known one does.
static DECOY: LazyLock<Option<String>> =
    LazyLock::new(|| passwords::hash("decoy password, never matched").ok());

impl SignInGuard {
    pub fn new(limits: SignInLimits) -> Self {
        SignInGuard {
            limits,
            ..SignInGuard::default()
        }
    }

    /// The user `name` if `password` is theirs, checked on `reader`, for an
    /// attempt from `from`; an attempt at a name under attack first waits
    /// [`SignInGuard::delay`].
    pub async fn sign_in(
        &self,
        reader: &Accounts,
        name: &str,
        password: &str,
        from: IpAddr,
    ) -> Result<User, SignInError> {
        let now = Instant::now();
        self.take_attempt(from, now)?;
        let pair = (name.to_owned(), from);
        let (failed, lapse) = self.pairs.count(&pair, now, self.limits.window);
        if failed >= self.limits.failures_per_pair {
            return Err(SignInError::Limited { retry_after: lapse });
        }
        let delay = self.delay(name, now);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let found = reader.password_of(name.to_owned()).await?;
        let (stored, user) = match found {
            Some((user, hash)) => (Some(hash), Some(user)),
            None => (DECOY.clone(), None),
        };
        let password = password.to_owned();
        let matches = tokio::task::spawn_blocking(move || {
            stored.is_some_and(|h| passwords::verify(&password, &h).unwrap_or(false))
        })
        .await
        .unwrap_or(false);
        match user {
            Some(user) if matches => {
                self.pairs.clear(&pair);
                self.names.clear(&pair.0);
                Ok(user)
            }
            _ => {
                let now = Instant::now();
                self.pairs.fail(&pair, now, self.limits.window);
                self.names.fail(&pair.0, now, self.limits.window);
                let (failures, _) = self.names.count(&pair.0, now, self.limits.window);
                if failures == self.limits.slow_after.saturating_add(1) {
                    tracing::warn!(
                        user = %xq_proto::quote(name),
                        failures,
                        "repeated failed sign-ins: attempts at this name are slowed down"
                    );
                }
                Err(SignInError::Wrong)
            }
        }
    }

    /// How long an attempt at `name` waits before its password is checked:
    /// zero up to [`SignInLimits::slow_after`] failures within the window,
    /// then 1 s doubled for each failure beyond, at most
    /// [`SignInLimits::max_delay`].
    pub fn delay(&self, name: &str, now: Instant) -> Duration {
        let (failed, _) = self.names.count(&name.to_owned(), now, self.limits.window);
        let Some(beyond) = failed.checked_sub(self.limits.slow_after + 1) else {
            return Duration::ZERO;
        };
        FIRST_DELAY
            .saturating_mul(1 << beyond.min(16))
            .min(self.limits.max_delay)
    }

    /// Takes one of `from`'s attempts for something other than a password
    /// check that must not be tried without limit (signing up).
    pub fn attempt(&self, from: IpAddr) -> Result<(), SignInError> {
        self.take_attempt(from, Instant::now())
    }

    fn take_attempt(&self, from: IpAddr, now: Instant) -> Result<(), SignInError> {
        let rate = self.limits.per_address;
        if rate.per_second <= 0.0 {
            return Ok(());
        }
        let mut addresses = self.addresses.lock().unwrap_or_else(|e| e.into_inner());
        if addresses.len() >= MAX_ENTRIES {
            let full = Duration::from_secs_f64(rate.burst.max(1.0) / rate.per_second);
            addresses.retain(|_, a| now.saturating_duration_since(a.last()) < full);
        }
        addresses
            .entry(from)
            .or_insert(Bucket::full(rate, now))
            .take(rate, now)
            .map_err(|wait| SignInError::Limited {
                retry_after: Duration::from_secs(wait.as_secs_f64().ceil() as u64),
            })
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;
    use crate::access::UserRole;
    use crate::events::Actor;
    use crate::service::accounts::NewUser;
    use crate::store::Store;

    const PASSWORD: &str = "correct horse";

    async fn store_with_user() -> Accounts {
        let accounts = Accounts::new(Store::open_in_memory().unwrap());
        let new = NewUser {
            name: "ana".to_owned(),
            role: UserRole::Developer,
            password_hash: Some(passwords::hash(PASSWORD).unwrap()),
            trusted: false,
        };
        accounts.add_user(Actor::cli(), new).await.unwrap();
        accounts
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, last))
    }

    fn generous() -> SignInLimits {
        SignInLimits {
            per_address: Rate {
                per_second: 1.0,
                burst: 100.0,
            },
            ..SignInLimits::default()
        }
    }

    #[tokio::test]
    async fn the_right_password_signs_in_and_others_are_one_answer() {
        let store = store_with_user().await;
        let guard = SignInGuard::new(generous());
        let user = guard.sign_in(&store, "ana", PASSWORD, ip(1)).await.unwrap();
        assert_eq!(user.name, "ana");
        for (name, password) in [("ana", "wrong password"), ("bob", PASSWORD), ("", "")] {
            let err = guard.sign_in(&store, name, password, ip(1)).await;
            assert!(matches!(err, Err(SignInError::Wrong)), "{name}: {err:?}");
        }
    }

    #[tokio::test]
    async fn guesses_lock_out_the_guessing_address_not_the_user() {
        let store = store_with_user().await;
        let guard = SignInGuard::new(generous());
        for _ in 0..5 {
            let err = guard.sign_in(&store, "ana", "nope nope", ip(1)).await;
            assert!(matches!(err, Err(SignInError::Wrong)), "{err:?}");
        }
        let err = guard.sign_in(&store, "ana", PASSWORD, ip(1)).await;
        let Err(SignInError::Limited { retry_after }) = err else {
            panic!("locked: {err:?}")
        };
        assert!(
            retry_after <= Duration::from_secs(15 * 60),
            "{retry_after:?}"
        );
        // The guessing address may still try another name.
        let err = guard.sign_in(&store, "bob", PASSWORD, ip(1)).await;
        assert!(matches!(err, Err(SignInError::Wrong)), "{err:?}");
        // The user signs in from elsewhere, which clears the name's count.
        let user = guard.sign_in(&store, "ana", PASSWORD, ip(2)).await.unwrap();
        assert_eq!(user.name, "ana");
        assert_eq!(guard.delay("ana", Instant::now()), Duration::ZERO);
    }

    #[tokio::test]
    async fn many_addresses_slow_a_name_down_but_never_lock_it() {
        let store = store_with_user().await;
        let guard = SignInGuard::new(generous());
        for i in 0..6 {
            let err = guard.sign_in(&store, "ana", "nope nope", ip(10 + i)).await;
            assert!(matches!(err, Err(SignInError::Wrong)), "{err:?}");
        }
        // 6 failures, 5 allowed: the next attempt waits 1 s.
        assert_eq!(guard.delay("ana", Instant::now()), Duration::from_secs(1));
        let before = Instant::now();
        let user = guard
            .sign_in(&store, "ana", PASSWORD, ip(99))
            .await
            .unwrap();
        assert_eq!(user.name, "ana");
        assert!(
            before.elapsed() >= Duration::from_secs(1),
            "{:?}",
            before.elapsed()
        );
    }

    #[test]
    fn the_wait_doubles_up_to_its_cap_and_lapses_with_the_window() {
        let guard = SignInGuard::new(SignInLimits::default());
        let t0 = Instant::now();
        let window = guard.limits.window;
        let mut waits = Vec::new();
        for _ in 0..10 {
            guard.names.fail(&"ana".to_owned(), t0, window);
            waits.push(guard.delay("ana", t0).as_secs());
        }
        assert_eq!(waits, [0, 0, 0, 0, 0, 1, 2, 4, 8, 10]);
        assert_eq!(guard.delay("ana", t0 + window), Duration::ZERO);
    }

    #[tokio::test]
    async fn a_success_clears_the_failures() {
        let store = store_with_user().await;
        let guard = SignInGuard::new(generous());
        for _ in 0..4 {
            let _ = guard.sign_in(&store, "ana", "nope nope", ip(1)).await;
        }
        guard.sign_in(&store, "ana", PASSWORD, ip(1)).await.unwrap();
        for _ in 0..4 {
            let _ = guard.sign_in(&store, "ana", "nope nope", ip(1)).await;
        }
        guard.sign_in(&store, "ana", PASSWORD, ip(1)).await.unwrap();
    }

    #[test]
    fn an_address_runs_out_of_attempts_and_they_refill() {
        let guard = SignInGuard::new(SignInLimits {
            per_address: Rate {
                per_second: 0.5,
                burst: 3.0,
            },
            ..SignInLimits::default()
        });
        let t0 = Instant::now();
        assert!((0..3).all(|_| guard.take_attempt(ip(1), t0).is_ok()));
        let Err(SignInError::Limited { retry_after }) = guard.take_attempt(ip(1), t0) else {
            panic!("limited")
        };
        assert_eq!(retry_after, Duration::from_secs(2));
        assert!(guard.take_attempt(ip(2), t0).is_ok());
        assert!(
            guard
                .take_attempt(ip(1), t0 + Duration::from_secs(2))
                .is_ok()
        );
    }
}
