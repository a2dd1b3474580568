//! The web view's sign-in sessions, kept by the hash of the cookie's
//! secret. No event: signing in and out is not a change of the cluster.

use super::{Accounts, User};
use crate::access::tokens::TokenHash;
use crate::store::{StoreError, now_ms, sessions};

impl Accounts {
    /// A session with `hash` for the user `user`, who has just signed in or
    /// up (the caller checked the password), ending `ttl_ms` from now;
    /// sessions that have ended are dropped.
    pub async fn open_session(
        &self,
        hash: TokenHash,
        user: u64,
        ttl_ms: i64,
    ) -> Result<(), StoreError> {
        self.store
            .call(move |conn| {
                let now = now_ms();
                sessions::insert(conn, &hash, user, now, now + ttl_ms).map(drop)
            })
            .await
    }

    /// The user of the session `hash`, if it has not ended.
    pub async fn session_user(&self, hash: TokenHash) -> Result<Option<User>, StoreError> {
        self.store
            .call(move |conn| sessions::user(conn, &hash, now_ms()))
            .await
    }

    /// Ends the session `hash` (its holder signs out); false if there was
    /// none.
    pub async fn end_session(&self, hash: TokenHash) -> Result<bool, StoreError> {
        self.store
            .call(move |conn| sessions::delete(conn, &hash))
            .await
    }
}
