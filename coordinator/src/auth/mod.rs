//! Who may call what: bearer tokens, roles and per-token rate limits.
//!
//! # Design
//!
//! * Every gRPC call carries `authorization: Bearer <token>`. A token is
//!   `xqt_` followed by 64 hex digits (32 random bytes). Only its SHA-256
//!   hash is stored (table `tokens`); a hash of a 256-bit random secret
//!   cannot be reversed or guessed, so no salt or slow hash is needed.
//! * Two roles. A **worker** token (a machine's) may call the
//!   `WorkerService` methods and read runs (List/Get/Watch, so a status
//!   page or a worker host can show progress without power). A
//!   **personal** token (a person's) acts as its user: it reads runs,
//!   manages them within the user's role and manages the user's own
//!   tokens, uploads and registers engines and assets, but never plays
//!   leases. [`permission`](crate::access::permission) maps each method to what it needs
//!   and [`Role::allows`] decides; a new method gets a
//!   line in [`permission`], and a method missing there is refused.
//! * One project method needs no token: `AccountService/Login`, which signs
//!   in with a name and password and is limited by [`sign_in`] instead.
//!   The standard gRPC services (health checking and server reflection,
//!   [`crate::standard`]) need none either and are limited per client
//!   address ([`RateLimits::open`]). Nothing else is open.
//! * [`layer::AuthLayer`] checks every call before any handler runs:
//!   UNAUTHENTICATED without a known, unrevoked token, PERMISSION_DENIED for
//!   a role that may not call the method, RESOURCE_EXHAUSTED past the
//!   token's rate ([`ratelimit`]). Stored tokens are looked up on every call
//!   (one indexed read on a separate read connection), so a revocation made
//!   with `xq-coordinator token revoke` by another process holds from the
//!   next call on.
//! * Ephemeral tokens ([`EphemeralToken`]) live only in the
//!   server's memory: local mode makes a random personal and worker token per
//!   run and never writes them anywhere.
//! * Users sign in with a name and password ([`sign_in`]): the web view's
//!   form and the CLI's `login`, rate-limited per address and per name.
//! * A worker id belongs to the token that registered it ([`owners`]):
//!   another token's calls with that worker id are PERMISSION_DENIED, and
//!   calls with an id no worker has are NOT_FOUND.

pub mod layer;
pub mod owners;
pub mod ratelimit;
pub mod sign_in;

pub use crate::access::tokens::{self, EphemeralToken};
pub use crate::access::{Permission, Principal, Role, permission};
pub use layer::{AuthLayer, Authenticator, caller};
pub use ratelimit::{Rate, RateLimits};
