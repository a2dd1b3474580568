//! The engine registry: executables stored by SHA-256, registered under names.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::{Coords, EngineRef, Protocol};

use super::{StoreError, blobs};
use crate::runs::{Registered, Registry};
use crate::spin_options::SpinOption;

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Uci => "uci",
        Protocol::Ucci => "ucci",
    }
}

/// Registers the executable `source` yields (whose SHA-256, size, signature,
/// protocol and options `engine` gives, and which advertised the spin options
/// `spins`) under `engine.name`, storing it as a blob (see [`blobs::insert`]).
/// A name is registered once; every asset its options name must be stored.
/// The `signature` column holds 0 for an engine without one (a signature is
/// at least 1).
pub fn add(
    conn: &mut Connection,
    engine: &EngineRef,
    spins: &[SpinOption],
    source: impl std::io::Read,
    now: i64,
) -> Result<(), StoreError> {
    if engine.signature == Some(0) {
        return Err(StoreError::invalid(
            "engine.signature",
            format!(
                "engine '{}': a bench signature of 0 nodes signs nothing",
                engine.name
            ),
        ));
    }
    let tx = conn.transaction()?;
    for (option, sha) in engine.asset_options() {
        if blobs::size(&tx, sha)?.is_none() {
            return Err(StoreError::NotFound(format!(
                "engine '{}': option {option} names asset {sha}, which is not registered",
                engine.name
            )));
        }
    }
    let taken: Option<String> = tx
        .query_row(
            "SELECT sha256 FROM engines WHERE name = ?1",
            [&engine.name],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(sha) = taken {
        return Err(StoreError::invalid(
            "engine.name",
            format!(
                "an engine named '{}' exists already (sha256 {sha})",
                engine.name
            ),
        ));
    }
    blobs::insert(&tx, &engine.sha256, engine.size, source).map_err(|e| match e {
        StoreError::Invalid(e) => {
            StoreError::invalid(&e.field, format!("engine '{}': {}", engine.name, e.reason))
        }
        e => e,
    })?;
    tx.execute(
        "INSERT INTO engines (name, sha256, size, signature, protocol, options, created_ms,
                              spin_options, coords)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            engine.name,
            engine.sha256,
            engine.size as i64,
            engine.signature.map_or(0, |s| s as i64),
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
            // 0 stands for none: no bench signature is 0 (see `add`).
            signature: Some(r.get::<_, i64>(3)? as u64).filter(|&s| s != 0),
            protocol: if r.get::<_, String>(4)? == "ucci" {
                Protocol::Ucci
            } else {
                Protocol::Uci
            },
            options: BTreeMap::new(),
            coords: r
                .get::<_, Option<String>>(7)?
                .and_then(|c| c.parse::<Coords>().ok()),
            source: None,
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
/// The registry entries of `names` (an unregistered name is left out), as a
/// run kind's preparation reads them.
pub fn registry(conn: &Connection, names: &[&str]) -> Result<Registry, StoreError> {
    let mut found = Registry::new();
    for &name in names {
        if found.contains_key(name) {
            continue;
        }
        let Some(entry) = get(conn, name)? else {
            continue;
        };
        let registered = Registered {
            entry,
            variants: variants(conn, name)?.flatten(),
            spins: spin_options(conn, name)?.unwrap_or_default(),
        };
        found.insert(name.to_owned(), registered);
    }
    Ok(found)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(name: &str, sha: &str) -> EngineRef {
        EngineRef {
            name: name.to_owned(),
            sha256: sha.to_owned(),
            size: 3,
            signature: Some(42),
            protocol: Protocol::Ucci,
            options: [("Hash".to_owned(), "8".to_owned())].into(),
            coords: (name == "old").then_some(Coords::FromOne),
            source: None,
        }
    }

    #[test]
    fn add_get_list_and_bytes() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        let sha = xq_proto::blob::sha256_hex(b"abc");
        let spins = crate::spin_options::parse("option name Hash type spin default 8 min 1 max 64");
        add(&mut conn, &engine("old", &sha), &spins, &b"abc"[..], 1).unwrap();
        add(&mut conn, &engine("same-bytes", &sha), &[], &b"abc"[..], 2).unwrap();
        let again = add(
            &mut conn,
            &engine("old", &"b".repeat(64)),
            &[],
            &b"xyz"[..],
            3,
        );
        assert!(matches!(again, Err(StoreError::Invalid(m)) if m.reason.contains("'old' exists")));
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
        let mut out = Vec::new();
        assert!(blobs::write_to(&conn, &sha, &mut out).unwrap());
        assert_eq!(out, b"abc");
        let other = xq_proto::blob::sha256_hex(b"abe");
        let changed = add(&mut conn, &engine("changed", &other), &[], &b"abd"[..], 4);
        assert!(
            matches!(&changed, Err(StoreError::Invalid(m)) if m.reason.contains("engine 'changed'")),
            "{changed:?}"
        );
        let mut with_asset = engine("netted", &sha);
        let net = "d".repeat(64);
        with_asset
            .options
            .insert("EvalFile".to_owned(), format!("asset:{net}"));
        let e = add(&mut conn, &with_asset, &[], &b"abc"[..], 5)
            .unwrap_err()
            .to_string();
        assert!(e.contains("EvalFile") && e.contains(&net), "{e}");
        assert_eq!(get(&conn, "netted").unwrap(), None);
    }
}
