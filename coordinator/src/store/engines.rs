//! The engine registry: executables stored by SHA-256, registered under names.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::{Coords, EngineRef, Protocol};

use super::StoreError;
use crate::spin_options::SpinOption;

/// The largest executable the registry accepts, in bytes.
pub const MAX_ENGINE_BYTES: usize = 64 << 20;

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Uci => "uci",
        Protocol::Ucci => "ucci",
    }
}

/// Registers `bytes` (whose SHA-256, size, signature, protocol and options
/// `engine` gives, and which advertised the spin options `spins`) under
/// `engine.name`. A name is registered once.
pub fn add(
    conn: &mut Connection,
    engine: &EngineRef,
    spins: &[SpinOption],
    bytes: &[u8],
    now: i64,
) -> Result<(), StoreError> {
    if bytes.len() > MAX_ENGINE_BYTES {
        return Err(StoreError::Invalid(format!(
            "engine '{}' is {} bytes; the registry takes at most {MAX_ENGINE_BYTES}",
            engine.name,
            bytes.len()
        )));
    }
    let tx = conn.transaction()?;
    let taken: Option<String> = tx
        .query_row(
            "SELECT sha256 FROM engines WHERE name = ?1",
            [&engine.name],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(sha) = taken {
        return Err(StoreError::Invalid(format!(
            "an engine named '{}' exists already (sha256 {sha})",
            engine.name
        )));
    }
    tx.execute(
        "INSERT OR IGNORE INTO engine_binaries (sha256, bytes) VALUES (?1, ?2)",
        params![engine.sha256, bytes],
    )?;
    tx.execute(
        "INSERT INTO engines (name, sha256, size, signature, protocol, options, created_ms,
                              spin_options, coords)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            engine.name,
            engine.sha256,
            engine.size as i64,
            engine.signature as i64,
            protocol_name(engine.protocol),
            serde_json::to_string(&engine.options)?,
            now,
            serde_json::to_string(spins)?,
            engine.coords.map(|c| c.name()),
        ],
    )?;
    tx.commit()?;
    Ok(())
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(EngineRef, String, i64)> {
    Ok((
        EngineRef {
            name: r.get(0)?,
            sha256: r.get(1)?,
            size: r.get::<_, i64>(2)? as u64,
            signature: r.get::<_, i64>(3)? as u64,
            protocol: if r.get::<_, String>(4)? == "ucci" {
                Protocol::Ucci
            } else {
                Protocol::Uci
            },
            options: BTreeMap::new(),
            coords: r
                .get::<_, Option<String>>(7)?
                .and_then(|c| c.parse::<Coords>().ok()),
        },
        r.get(5)?,
        r.get(6)?,
    ))
}

const COLUMNS: &str = "name, sha256, size, signature, protocol, options, created_ms, coords";

/// The engine registered as `name`.
pub fn get(conn: &Connection, name: &str) -> Result<Option<EngineRef>, StoreError> {
    let found = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM engines WHERE name = ?1"),
            [name],
            row,
        )
        .optional()?;
    found
        .map(|(mut e, options, _)| {
            e.options = serde_json::from_str(&options)?;
            Ok(e)
        })
        .transpose()
}

/// The spin options the engine registered as `name` advertised; `None`
/// when no such engine is registered.
pub fn spin_options(conn: &Connection, name: &str) -> Result<Option<Vec<SpinOption>>, StoreError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT spin_options FROM engines WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?;
    Ok(text.map(|t| serde_json::from_str(&t)).transpose()?)
}

/// Every registered engine with its registration time (unix ms), by name.
pub fn list(conn: &Connection) -> Result<Vec<(EngineRef, i64)>, StoreError> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM engines ORDER BY name"))?;
    let rows = stmt.query_map([], row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(mut e, options, created)| {
            e.options = serde_json::from_str(&options)?;
            Ok((e, created))
        })
        .collect()
}

/// Records the `UCI_Variant` values the engine `name` offered at its
/// handshake (`None`: it has no such option).
pub fn set_variants(
    conn: &Connection,
    name: &str,
    offered: Option<&[String]>,
) -> Result<(), StoreError> {
    let n = conn.execute(
        "UPDATE engines SET variants = ?2 WHERE name = ?1",
        params![name, serde_json::to_string(&offered)?],
    )?;
    if n == 0 {
        return Err(StoreError::NotFound(format!(
            "no engine named '{name}' is registered"
        )));
    }
    Ok(())
}

/// The `UCI_Variant` values the engine `name` offered when registered:
/// `None` when it was never probed, `Some(None)` when it has no such option.
pub fn variants(conn: &Connection, name: &str) -> Result<Option<Option<Vec<String>>>, StoreError> {
    let text: Option<Option<String>> = conn
        .query_row(
            "SELECT variants FROM engines WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?;
    Ok(match text.flatten() {
        Some(t) => Some(serde_json::from_str(&t)?),
        None => None,
    })
}

/// The executable with this SHA-256.
pub fn bytes(conn: &Connection, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT bytes FROM engine_binaries WHERE sha256 = ?1",
            [sha256],
            |r| r.get(0),
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(name: &str, sha: &str) -> EngineRef {
        EngineRef {
            name: name.to_owned(),
            sha256: sha.to_owned(),
            size: 3,
            signature: 42,
            protocol: Protocol::Ucci,
            options: [("Hash".to_owned(), "8".to_owned())].into(),
            coords: (name == "old").then_some(Coords::FromOne),
        }
    }

    #[test]
    fn add_get_list_and_bytes() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        let sha = "a".repeat(64);
        let spins = crate::spin_options::parse("option name Hash type spin default 8 min 1 max 64");
        add(&mut conn, &engine("old", &sha), &spins, b"abc", 1).unwrap();
        add(&mut conn, &engine("same-bytes", &sha), &[], b"abc", 2).unwrap();
        let again = add(&mut conn, &engine("old", &"b".repeat(64)), &[], b"xyz", 3);
        assert!(matches!(again, Err(StoreError::Invalid(m)) if m.contains("'old' exists")));
        assert_eq!(get(&conn, "old").unwrap(), Some(engine("old", &sha)));
        assert_eq!(get(&conn, "nope").unwrap(), None);
        assert_eq!(spin_options(&conn, "old").unwrap(), Some(spins));
        assert_eq!(spin_options(&conn, "same-bytes").unwrap(), Some(vec![]));
        assert_eq!(spin_options(&conn, "nope").unwrap(), None);
        assert_eq!(list(&conn).unwrap().len(), 2);
        assert_eq!(variants(&conn, "old").unwrap(), None, "not probed");
        set_variants(&conn, "old", Some(&["standard".to_owned()])).unwrap();
        set_variants(&conn, "same-bytes", None).unwrap();
        assert_eq!(
            variants(&conn, "old").unwrap(),
            Some(Some(vec!["standard".to_owned()]))
        );
        assert_eq!(variants(&conn, "same-bytes").unwrap(), Some(None));
        assert!(set_variants(&conn, "nope", None).is_err());
        assert_eq!(bytes(&conn, &sha).unwrap().as_deref(), Some(&b"abc"[..]));
        let huge = vec![0u8; MAX_ENGINE_BYTES + 1];
        assert!(matches!(
            add(&mut conn, &engine("huge", &"c".repeat(64)), &[], &huge, 4),
            Err(StoreError::Invalid(_))
        ));
    }
}
