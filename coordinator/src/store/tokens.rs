//! Rows of `tokens`: access tokens by name, role, SHA-256 hash and the user
//! they belong to. The token text itself is never stored.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::access::Role;
use crate::access::tokens::TokenHash;

/// A stored token, as `token list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: u64,
    pub name: String,
    pub role: Role,
    /// The user the token belongs to (`None` only in a database that had
    /// tokens made before users and no admin to give them to).
    pub user: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
    /// Unix ms; `None` while the token works.
    pub revoked_ms: Option<i64>,
}

/// Longest token name, in bytes.
pub const MAX_NAME: usize = 128;

/// Stores a token's hash under a new name for the user `user_id`; returns
/// its id.
pub fn insert(
    conn: &Connection,
    name: &str,
    role: Role,
    user_id: u64,
    hash: &TokenHash,
    now: i64,
) -> Result<u64, StoreError> {
    if name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            "token.name",
            format!(
                "{} must be 1 to {MAX_NAME} bytes without control characters",
                xq_proto::quote(name)
            ),
        ));
    }
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM tokens WHERE name = ?1)",
        [name],
        |r| r.get(0),
    )?;
    if exists {
        return Err(StoreError::invalid(
            "token.name",
            format!(
                "a token named {} exists already (revoked names are not reused)",
                xq_proto::quote(name)
            ),
        ));
    }
    conn.execute(
        "INSERT INTO tokens (name, role, user_id, hash, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![name, role.as_str(), user_id as i64, &hash[..], now],
    )?;
    Ok(conn.last_insert_rowid() as u64)
}

/// Every token, oldest first.
pub fn list(conn: &Connection) -> Result<Vec<TokenRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT t.id, t.name, t.role, u.name, t.created_ms, t.revoked_ms
         FROM tokens t LEFT JOIN users u ON u.id = t.user_id ORDER BY t.id",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(id, name, role, user, created_ms, revoked_ms)| {
            Ok(TokenRow {
                id: id as u64,
                name,
                role: role.parse().map_err(StoreError::Schema)?,
                user,
                created_ms,
                revoked_ms,
            })
        })
        .collect()
}

/// Revokes the token named `name`; false if it was revoked already.
pub fn revoke(conn: &Connection, name: &str, now: i64) -> Result<bool, StoreError> {
    let found = conn
        .query_row(
            "SELECT revoked_ms FROM tokens WHERE name = ?1",
            [name],
            |r| r.get::<_, Option<i64>>(0),
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("no token named {name:?}")))?;
    if found.is_some() {
        return Ok(false);
    }
    conn.execute(
        "UPDATE tokens SET revoked_ms = ?2 WHERE name = ?1",
        params![name, now],
    )?;
    Ok(true)
}

/// A working token, as a request's caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub id: u64,
    pub name: String,
    pub role: Role,
    /// `users.id` of its owner.
    pub user: Option<u64>,
}

/// The working (unrevoked) token with this hash.
pub fn lookup(conn: &Connection, hash: &TokenHash) -> Result<Option<Found>, StoreError> {
    let row = conn
        .prepare_cached(
            "SELECT id, name, role, user_id FROM tokens WHERE hash = ?1 AND revoked_ms IS NULL",
        )?
        .query_row([&hash[..]], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<i64>>(3)?,
            ))
        })
        .optional()?;
    row.map(|(id, name, role, user)| {
        Ok(Found {
            id: id as u64,
            name,
            role: role.parse().map_err(StoreError::Schema)?,
            user: user.map(|u| u as u64),
        })
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::tokens::hash;

    fn db() -> Connection {
        crate::store::migrations::memory()
    }

    fn owner(conn: &Connection) -> u64 {
        crate::store::users::ensure(conn, "ana", crate::access::UserRole::Admin, 0).unwrap()
    }

    #[test]
    fn a_token_is_found_by_hash_until_revoked() {
        let conn = db();
        let ana = owner(&conn);
        let id = insert(&conn, "w1", Role::Worker, ana, &hash("xqt_1"), 5).unwrap();
        assert_eq!(
            lookup(&conn, &hash("xqt_1")).unwrap(),
            Some(Found {
                id,
                name: "w1".to_owned(),
                role: Role::Worker,
                user: Some(ana)
            })
        );
        assert_eq!(list(&conn).unwrap()[0].user.as_deref(), Some("ana"));
        assert_eq!(lookup(&conn, &hash("xqt_2")).unwrap(), None);
        assert!(revoke(&conn, "w1", 9).unwrap());
        assert!(!revoke(&conn, "w1", 10).unwrap());
        assert_eq!(lookup(&conn, &hash("xqt_1")).unwrap(), None);
        let rows = list(&conn).unwrap();
        assert_eq!(rows[0].revoked_ms, Some(9));
        assert!(matches!(
            revoke(&conn, "nobody", 1),
            Err(StoreError::NotFound(_))
        ));
    }

    #[test]
    fn names_are_unique_and_sane() {
        let conn = db();
        let ana = owner(&conn);
        insert(&conn, "a", Role::Personal, ana, &hash("xqt_1"), 0).unwrap();
        assert!(matches!(
            insert(&conn, "a", Role::Personal, ana, &hash("xqt_2"), 0),
            Err(StoreError::Invalid(_))
        ));
        assert!(matches!(
            insert(&conn, "", Role::Personal, ana, &hash("xqt_3"), 0),
            Err(StoreError::Invalid(_))
        ));
        let stored: Vec<u8> = conn
            .query_row("SELECT hash FROM tokens WHERE name = 'a'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, hash("xqt_1"));
    }
}
