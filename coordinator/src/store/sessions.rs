//! Rows of `sessions`: who is signed in to the web view, by the SHA-256
//! hash of the cookie's secret (the secret itself is never stored), until
//! when. A session is the user's: a change of role or trust holds on the
//! next request, and a session of a user who is gone does not sign in.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::users::{self, User};
use crate::access::tokens::TokenHash;

/// Stores a session of `user_id` that ends at `expires_ms` (Unix ms, after
/// `now`), dropping every session that has ended; returns its id.
pub fn insert(
    conn: &Connection,
    hash: &TokenHash,
    user_id: u64,
    now: i64,
    expires_ms: i64,
) -> Result<u64, StoreError> {
    conn.prepare_cached("DELETE FROM sessions WHERE expires_ms <= ?1")?
        .execute([now])?;
    conn.prepare_cached(
        "INSERT INTO sessions (hash, user_id, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![&hash[..], user_id as i64, now, expires_ms])?;
    Ok(conn.last_insert_rowid() as u64)
}

/// The user of the session `hash` if it has not ended at `now`.
pub fn user(conn: &Connection, hash: &TokenHash, now: i64) -> Result<Option<User>, StoreError> {
    let id: Option<i64> = conn
        .prepare_cached("SELECT user_id FROM sessions WHERE hash = ?1 AND expires_ms > ?2")?
        .query_row(params![&hash[..], now], |r| r.get(0))
        .optional()?;
    match id {
        Some(id) => match users::by_id(conn, id as u64) {
            Ok(user) => Ok(Some(user)),
            Err(StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        },
        None => Ok(None),
    }
}

/// Ends the session `hash` (signing out); false if there was none.
pub fn delete(conn: &Connection, hash: &TokenHash) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("DELETE FROM sessions WHERE hash = ?1")?
        .execute([&hash[..]])?
        > 0)
}

/// Ends every session of `user_id` (a new password, a removed user).
pub fn delete_for_user(conn: &Connection, user_id: u64) -> Result<usize, StoreError> {
    Ok(conn
        .prepare_cached("DELETE FROM sessions WHERE user_id = ?1")?
        .execute([user_id as i64])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::UserRole;
    use crate::access::tokens;

    #[test]
    fn a_session_signs_its_user_in_until_it_ends() {
        let conn = crate::store::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        let secret = tokens::hash("xqs_one");
        insert(&conn, &secret, ana, 10, 100).unwrap();
        assert_eq!(user(&conn, &secret, 99).unwrap().unwrap().name, "ana");
        assert_eq!(user(&conn, &secret, 100).unwrap(), None);
        assert_eq!(user(&conn, &tokens::hash("xqs_other"), 50).unwrap(), None);
        // A later session drops the ended one.
        insert(&conn, &tokens::hash("xqs_two"), ana, 200, 300).unwrap();
        let left: i64 = conn
            .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 1);
        assert!(delete(&conn, &tokens::hash("xqs_two")).unwrap());
        assert!(!delete(&conn, &tokens::hash("xqs_two")).unwrap());
    }

    #[test]
    fn a_session_ends_with_its_users_sessions() {
        let conn = crate::store::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        insert(&conn, &tokens::hash("a"), ana, 10, 100).unwrap();
        insert(&conn, &tokens::hash("b"), ana, 10, 100).unwrap();
        assert_eq!(delete_for_user(&conn, ana).unwrap(), 2);
        assert_eq!(user(&conn, &tokens::hash("a"), 20).unwrap(), None);
        assert!(insert(&conn, &tokens::hash("c"), ana, 10, 10).is_err());
    }
}
