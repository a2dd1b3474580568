//! Rows of `users`: a name, a role, whether their tests start without
//! approval, and an argon2id hash of the password (never the password).

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::access::UserRole;

/// A stored user, as `user list` and the pages show one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: u64,
    pub name: String,
    pub role: UserRole,
    /// Their tests start at once; an untrusted developer's wait for approval.
    pub trusted: bool,
    /// Whether a password is set (only then can the user sign in).
    pub has_password: bool,
    /// Unix ms.
    pub created_ms: i64,
}

/// Longest user name, in bytes.
pub const MAX_NAME: usize = 64;

/// The user who owns tokens made without naming one, and every run of a
/// database from before users (migration 13).
pub const DEFAULT_ADMIN: &str = "admin";

/// Checks a new user's name: 1 to [`MAX_NAME`] bytes of letters, digits,
/// `-`, `_` and `.`.
pub fn check_name(name: &str) -> Result<(), StoreError> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "user.name",
            format!(
                "{} must be 1 to {MAX_NAME} bytes of letters, digits, '-', '_' or '.'",
                xq_proto::quote(name)
            ),
        ))
    }
}

/// Stores a new user; `password_hash` is a PHC string from
/// [`crate::access::passwords::hash`]. Returns the user's id.
pub fn insert(
    conn: &Connection,
    name: &str,
    role: UserRole,
    password_hash: Option<&str>,
    trusted: bool,
    now: i64,
) -> Result<u64, StoreError> {
    check_name(name)?;
    if by_name(conn, name)?.is_some() {
        return Err(StoreError::invalid(
            "user.name",
            format!("a user named {} exists already", xq_proto::quote(name)),
        ));
    }
    conn.execute(
        "INSERT INTO users (name, role, password_hash, trusted, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![name, role.as_str(), password_hash, trusted, now],
    )?;
    Ok(conn.last_insert_rowid() as u64)
}

/// The user named `name`, made with `role` (trusted, no password) if there
/// is none yet; returns its id.
pub fn ensure(conn: &Connection, name: &str, role: UserRole, now: i64) -> Result<u64, StoreError> {
    match by_name(conn, name)? {
        Some(user) => Ok(user.id),
        None => insert(conn, name, role, None, true, now),
    }
}

/// The id of the user `name`, or, without a name, of [`DEFAULT_ADMIN`]
/// (made as an admin if missing): whom a change made with the command line
/// on the database file is for. An unknown name is refused, named.
pub fn named_or_admin(conn: &Connection, name: Option<&str>, now: i64) -> Result<u64, StoreError> {
    match name {
        Some(name) => Ok(by_name(conn, name)?
            .ok_or_else(|| {
                StoreError::NotFound(format!(
                    "no user named {} (add one with `user add`)",
                    xq_proto::quote(name)
                ))
            })?
            .id),
        None => ensure(conn, DEFAULT_ADMIN, UserRole::Admin, now),
    }
}

const COLUMNS: &str = "id, name, role, trusted, password_hash IS NOT NULL, created_ms";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, String, bool, bool, i64)> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}

fn user(
    (id, name, role, trusted, has_password, created_ms): (i64, String, String, bool, bool, i64),
) -> Result<User, StoreError> {
    Ok(User {
        id: id as u64,
        role: role
            .parse()
            .map_err(|e: String| StoreError::Schema(format!("users.role of user {id}: {e}")))?,
        name,
        trusted,
        has_password,
        created_ms,
    })
}

/// The user named `name`.
pub fn by_name(conn: &Connection, name: &str) -> Result<Option<User>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE name = ?1");
    conn.prepare_cached(&sql)?
        .query_row([name], row)
        .optional()?
        .map(user)
        .transpose()
}

/// Every user, oldest first.
pub fn list(conn: &Connection) -> Result<Vec<User>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users ORDER BY id");
    let rows = conn
        .prepare(&sql)?
        .query_map([], row)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(user).collect()
}

/// The user `id`; `NotFound` for an unknown id.
pub fn by_id(conn: &Connection, id: u64) -> Result<User, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE id = ?1");
    conn.prepare_cached(&sql)?
        .query_row([id as i64], row)
        .optional()?
        .map(user)
        .transpose()?
        .ok_or_else(|| StoreError::NotFound(format!("no user {id}")))
}

/// The stored password hash of `name`, if the user exists and has one.
pub fn password_hash(conn: &Connection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT password_hash FROM users WHERE name = ?1")?
        .query_row([name], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
}

/// Replaces user `id`'s password hash (a PHC string from
/// [`crate::access::passwords::hash`]); `NotFound` for an unknown user.
pub fn set_password(conn: &Connection, id: u64, password_hash: &str) -> Result<(), StoreError> {
    match conn.execute(
        "UPDATE users SET password_hash = ?2 WHERE id = ?1",
        params![id as i64, password_hash],
    )? {
        0 => Err(StoreError::NotFound(format!("no user {id}"))),
        _ => Ok(()),
    }
}

/// Sets `name`'s role and trust; `NotFound` for an unknown user.
pub fn set_role(
    conn: &Connection,
    name: &str,
    role: UserRole,
    trusted: bool,
) -> Result<(), StoreError> {
    let changed = conn.execute(
        "UPDATE users SET role = ?2, trusted = ?3 WHERE name = ?1",
        params![name, role.as_str(), trusted],
    )?;
    match changed {
        0 => Err(StoreError::NotFound(format!(
            "no user named {}",
            xq_proto::quote(name)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::passwords;

    fn db() -> Connection {
        crate::store::migrations::memory()
    }

    #[test]
    fn users_are_stored_with_a_role_and_only_a_password_hash() {
        let conn = db();
        let hash = passwords::hash("s3cret-words").unwrap();
        let id = insert(&conn, "ana", UserRole::Developer, Some(&hash), false, 5).unwrap();
        let ana = by_name(&conn, "ana").unwrap().unwrap();
        assert_eq!(
            (ana.id, ana.role, ana.trusted, ana.has_password),
            (id, UserRole::Developer, false, true)
        );
        let stored = password_hash(&conn, "ana").unwrap().unwrap();
        assert!(passwords::verify("s3cret-words", &stored).unwrap());
        assert_eq!(ensure(&conn, "ana", UserRole::Admin, 6).unwrap(), id);
        let bo = ensure(&conn, "bo", UserRole::Approver, 6).unwrap();
        assert_eq!(
            list(&conn)
                .unwrap()
                .iter()
                .map(|u| u.id)
                .collect::<Vec<_>>(),
            [id, bo]
        );
        set_role(&conn, "ana", UserRole::Approver, true).unwrap();
        assert_eq!(
            by_name(&conn, "ana").unwrap().unwrap().role,
            UserRole::Approver
        );
    }

    #[test]
    fn bad_names_duplicates_and_clear_passwords_are_refused() {
        let conn = db();
        assert!(insert(&conn, "", UserRole::Developer, None, false, 1).is_err());
        assert!(insert(&conn, "a b", UserRole::Developer, None, false, 1).is_err());
        insert(&conn, "cy", UserRole::Developer, None, false, 1).unwrap();
        let again = insert(&conn, "cy", UserRole::Admin, None, false, 1).unwrap_err();
        assert!(again.to_string().contains("exists already"), "{again}");
        assert!(
            insert(
                &conn,
                "dee",
                UserRole::Developer,
                Some("hunter22"),
                false,
                1
            )
            .is_err(),
            "the schema refuses a password that is not a hash"
        );
        assert!(set_role(&conn, "nobody", UserRole::Admin, true).is_err());
    }
}
