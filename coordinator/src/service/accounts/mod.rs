//! Users, their tokens, their web sessions and what signing in reads: the
//! accounts service. Each change is one transaction with its `user` or
//! `token` event, and who may make it is decided inside that transaction
//! (the caller's role read there, not from a cache).
//!
//! * [`users`]: users listed, added, changed, signed up, their passwords.
//! * [`tokens`]: a user's own tokens made, listed and revoked, and the
//!   token a request carries looked up.
//! * [`sessions`]: the web view's sign-in sessions.

mod sessions;
mod tokens;
mod users;

use rusqlite::Connection;

pub use crate::store::tokens::{
    Found as FoundToken, MAX_NAME as MAX_TOKEN_NAME, TokenRow, check_name as check_token_name,
};
pub use crate::store::users::{
    DEFAULT_ADMIN, MAX_NAME as MAX_USER_NAME, User, check_name as check_user_name,
};
pub use users::{NewUser, UserChange};

use crate::access::UserRole;
use crate::events::Actor;
use crate::store::{Store, StoreError, users as user_rows};

/// The accounts on one store: the write store for changes, a read
/// connection ([`Store::reader`]) serves the reads.
#[derive(Debug, Clone)]
pub struct Accounts {
    store: Store,
}

impl Accounts {
    pub fn new(store: Store) -> Self {
        Accounts { store }
    }
}

/// The role `actor` acts with, read in the caller's transaction: its
/// user's; the command line on the database file ([`Actor::cli`]) is the
/// administrator (whoever can reach the file is). A token without a user
/// has none and is refused.
fn role_of(conn: &Connection, actor: &Actor) -> Result<UserRole, StoreError> {
    match actor.user {
        Some(id) => Ok(user_rows::by_id(conn, id)?.role),
        None if actor.is_local_admin() => Ok(UserRole::Admin),
        None => Err(StoreError::Forbidden(format!(
            "token {} belongs to no user; sign in with `xq-coordinator login`",
            xq_proto::quote(&actor.name)
        ))),
    }
}

/// `Ok` when `actor` acts with at least the role `needed` (see
/// [`role_of`]); the refusal names both roles.
fn at_least(conn: &Connection, actor: &Actor, needed: UserRole) -> Result<UserRole, StoreError> {
    let role = role_of(conn, actor)?;
    if role < needed {
        return Err(StoreError::Forbidden(format!(
            "this needs the {} role; you are {}",
            needed.as_str(),
            role.as_str()
        )));
    }
    Ok(role)
}

/// The user `actor` acts as; a token without one (local mode's, the
/// tests') may not manage tokens or passwords.
fn user_of(actor: &Actor) -> Result<u64, StoreError> {
    actor.owner().ok_or_else(|| {
        StoreError::Forbidden(format!(
            "token {} belongs to no user; sign in with `xq-coordinator login`",
            xq_proto::quote(&actor.name)
        ))
    })
}
