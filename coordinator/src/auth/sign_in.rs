//! Signing in with a user's name and password (the web view's sign-in form,
//! the CLI's `login`), rate-limited per name and per address.
//!
//! # Design
//!
//! * Each address has a bucket of attempts ([`SignInLimits::per_address`]):
//!   past it, an attempt is refused before any password is hashed, so one
//!   address cannot spend the server's CPU on argon2 or try many names.
//! * Each name counts its failures: after [`SignInLimits::failures_per_name`]
//!   within [`SignInLimits::name_window`], the name is locked until the
//!   window since the first of them has passed, even for the right
//!   password. A success clears the name's failures.
//! * An unknown name, a user without a password and a wrong password are
//!   the same answer ([`SignInError::Wrong`]) and cost the same: a password
//!   is always checked, against a fixed hash when there is none.
//! * The counters live in memory, bounded: entries older than their window
//!   are dropped when a map grows past [`MAX_ENTRIES`].

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

/// How often sign-in may be tried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignInLimits {
    /// Attempts per address: on average, and at once.
    pub per_address: Rate,
    /// Failed attempts a name may have within `name_window`.
    pub failures_per_name: u32,
    pub name_window: Duration,
}

impl Default for SignInLimits {
    /// 10 attempts at once per address, then one every 6 s; 5 failures per
    /// name in 15 minutes.
    fn default() -> Self {
        SignInLimits {
            per_address: Rate {
                per_second: 1.0 / 6.0,
                burst: 10.0,
            },
            failures_per_name: 5,
            name_window: Duration::from_secs(15 * 60),
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

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    first: Instant,
}

/// The counters of every address and name seen; std mutexes, never held
/// across an await.
#[derive(Debug, Default)]
pub struct SignInGuard {
    limits: SignInLimits,
    addresses: Mutex<HashMap<IpAddr, Bucket>>,
    names: Mutex<HashMap<String, Failures>>,
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
    /// attempt from `from`.
    pub async fn sign_in(
        &self,
        reader: &Accounts,
        name: &str,
        password: &str,
        from: IpAddr,
    ) -> Result<User, SignInError> {
        let now = Instant::now();
        self.take_attempt(from, now)?;
        self.check_name(name, now)?;
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
                self.lock_names().remove(name);
                Ok(user)
            }
            _ => {
                self.fail(name, Instant::now());
                Err(SignInError::Wrong)
            }
        }
    }

    /// Takes one of `from`'s attempts for something other than a password
    /// check that must not be tried without limit (signing up).
    pub fn attempt(&self, from: IpAddr) -> Result<(), SignInError> {
        self.take_attempt(from, Instant::now())
    }

    fn lock_names(&self) -> std::sync::MutexGuard<'_, HashMap<String, Failures>> {
        self.names.lock().unwrap_or_else(|e| e.into_inner())
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

    fn check_name(&self, name: &str, now: Instant) -> Result<(), SignInError> {
        let window = self.limits.name_window;
        let mut names = self.lock_names();
        let Some(f) = names.get(name).copied() else {
            return Ok(());
        };
        let age = now.saturating_duration_since(f.first);
        if age >= window {
            names.remove(name);
            Ok(())
        } else if f.count >= self.limits.failures_per_name {
            Err(SignInError::Limited {
                retry_after: window - age,
            })
        } else {
            Ok(())
        }
    }

    fn fail(&self, name: &str, now: Instant) {
        let window = self.limits.name_window;
        let mut names = self.lock_names();
        if names.len() >= MAX_ENTRIES {
            names.retain(|_, f| now.saturating_duration_since(f.first) < window);
        }
        // A name never seen is not stored when the map is still full: the
        // per-address limit bounds those attempts.
        if names.len() >= MAX_ENTRIES && !names.contains_key(name) {
            return;
        }
        let entry = names.entry(name.to_owned()).or_insert(Failures {
            count: 0,
            first: now,
        });
        entry.count += 1;
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
    async fn a_name_locks_after_its_failures_even_for_the_right_password() {
        let store = store_with_user().await;
        let guard = SignInGuard::new(generous());
        for i in 0..5 {
            let err = guard.sign_in(&store, "ana", "nope nope", ip(i)).await;
            assert!(matches!(err, Err(SignInError::Wrong)), "{err:?}");
        }
        let err = guard.sign_in(&store, "ana", PASSWORD, ip(9)).await;
        let Err(SignInError::Limited { retry_after }) = err else {
            panic!("locked: {err:?}")
        };
        assert!(
            retry_after <= Duration::from_secs(15 * 60),
            "{retry_after:?}"
        );
        // Another name is not locked.
        let err = guard.sign_in(&store, "bob", PASSWORD, ip(9)).await;
        assert!(matches!(err, Err(SignInError::Wrong)), "{err:?}");
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
