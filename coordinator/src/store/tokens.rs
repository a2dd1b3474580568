//! Rows of `tokens`: access tokens by name, role, SHA-256 hash and the user
//! they belong to. The token text itself is never stored. [`add`] and
//! [`revoke_as`] log their change as an event of kind `token` in the
//! caller's transaction.

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, events};
use crate::access::Role;
use crate::access::tokens::TokenHash;
use crate::events::{Actor, EventKind};

/// A stored token, as `token list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: u64,
    pub name: String,
    pub role: Role,
    /// The user the token belongs to (`None` only in a database that had
    /// tokens made before users and no admin to give them to).
    pub user: Option<String>,
    /// That user's `users.id`.
    pub user_id: Option<u64>,
    /// Unix ms.
    pub created_ms: i64,
    /// Unix ms; `None` while the token works.
    pub revoked_ms: Option<i64>,
}

/// Longest token name, in bytes.
pub const MAX_NAME: usize = 128;

/// Checks a new token's name: 1 to [`MAX_NAME`] bytes without control
/// characters.
pub fn check_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            "token.name",
            format!(
                "{} must be 1 to {MAX_NAME} bytes without control characters",
                xq_proto::quote(name)
            ),
        ));
    }
    Ok(())
}

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
    check_name(name)?;
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

const ROW_SQL: &str = "SELECT t.id, t.name, t.role, u.name, t.user_id, t.created_ms, t.revoked_ms
     FROM tokens t LEFT JOIN users u ON u.id = t.user_id";

type RawRow = (
    i64,
    String,
    String,
    Option<String>,
    Option<i64>,
    i64,
    Option<i64>,
);

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
    ))
}

fn token_row(
    (id, name, role, user, user_id, created_ms, revoked_ms): RawRow,
) -> Result<TokenRow, StoreError> {
    Ok(TokenRow {
        id: id as u64,
        role: role
            .parse()
            .map_err(|e: String| StoreError::Schema(format!("tokens.role of token {id}: {e}")))?,
        name,
        user,
        user_id: user_id.map(|u| u as u64),
        created_ms,
        revoked_ms,
    })
}

/// Every token, oldest first.
pub fn list(conn: &Connection) -> Result<Vec<TokenRow>, StoreError> {
    let rows = conn
        .prepare(&format!("{ROW_SQL} ORDER BY t.id"))?
        .query_map([], raw)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(token_row).collect()
}

/// The tokens of the user `user_id`, oldest first.
pub fn of_user(conn: &Connection, user_id: u64) -> Result<Vec<TokenRow>, StoreError> {
    let rows = conn
        .prepare(&format!("{ROW_SQL} WHERE t.user_id = ?1 ORDER BY t.id"))?
        .query_map([user_id as i64], raw)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(token_row).collect()
}

/// The token named `name`, revoked or not.
pub fn by_name(conn: &Connection, name: &str) -> Result<Option<TokenRow>, StoreError> {
    conn.prepare(&format!("{ROW_SQL} WHERE t.name = ?1"))?
        .query_row([name], raw)
        .optional()?
        .map(token_row)
        .transpose()
}

/// Stores a token's hash under a new name for the user `user_id` and logs
/// it, by `actor`, as an event of kind `token`; returns the token's row.
/// Call it inside a transaction: the token and its event land together.
pub fn add(
    conn: &Connection,
    actor: &Actor,
    name: &str,
    role: Role,
    user_id: u64,
    hash: &TokenHash,
    now: i64,
) -> Result<TokenRow, StoreError> {
    insert(conn, name, role, user_id, hash, now)?;
    let row = by_name(conn, name)?
        .ok_or_else(|| StoreError::Schema(format!("token {name:?} vanished as it was added")))?;
    let detail = format!(
        "added {name} ({}) for {}",
        role.as_str(),
        row.user.as_deref().unwrap_or("-")
    );
    events::log(conn, actor, EventKind::Token, None, &detail, now)?;
    Ok(row)
}

/// Revokes the token named `name` and logs it, by `actor`, as an event of
/// kind `token`; false (and nothing logged) if it was revoked already.
/// Call it inside a transaction.
pub fn revoke_as(
    conn: &Connection,
    actor: &Actor,
    name: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let revoked = revoke(conn, name, now)?;
    if revoked {
        events::log(
            conn,
            actor,
            EventKind::Token,
            None,
            &format!("revoked {name}"),
            now,
        )?;
    }
    Ok(revoked)
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
        .ok_or_else(|| StoreError::NotFound(format!("no token named {}", xq_proto::quote(name))))?;
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
    fn added_and_revoked_tokens_are_logged_with_their_owner() {
        let conn = db();
        let ana = owner(&conn);
        let actor = Actor::user(ana, "ana-cli");
        let row = add(&conn, &actor, "box", Role::Worker, ana, &hash("xqt_9"), 3).unwrap();
        assert_eq!(
            (row.role, row.user.as_deref(), row.user_id),
            (Role::Worker, Some("ana"), Some(ana))
        );
        assert_eq!(of_user(&conn, ana).unwrap(), [row]);
        assert!(of_user(&conn, ana + 1).unwrap().is_empty());
        assert!(revoke_as(&conn, &actor, "box", 4).unwrap());
        assert!(!revoke_as(&conn, &actor, "box", 5).unwrap());
        let filter = crate::events::EventFilter {
            limit: 10,
            ..Default::default()
        };
        let logged: Vec<(String, String)> = events::list(&conn, &filter)
            .unwrap()
            .into_iter()
            .map(|e| (e.actor, e.detail))
            .collect();
        assert_eq!(
            logged,
            [
                ("ana".to_owned(), "revoked box".to_owned()),
                ("ana".to_owned(), "added box (worker) for ana".to_owned())
            ]
        );
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
