//! The engine registry: executables stored by SHA-256, registered under
//! names. A name is registered once and belongs to the user who registered
//! it (its owner): nobody registers it again.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::{Coords, EngineRef, Protocol};

use super::{StoreError, assets, blobs, events};
use crate::events::{Actor, EventKind};
use crate::runs::{Registered, Registry};
use crate::spin_options::SpinOption;

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Uci => "uci",
        Protocol::Ucci => "ucci",
    }
}

/// An engine to register: its entry, and what its handshake showed the
/// client that measured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEngine {
    /// Name, SHA-256 and size of its executable, bench signature, protocol,
    /// options (an `asset:` value names a registered asset by SHA-256 or
    /// by name), coordinates.
    pub engine: EngineRef,
    /// The spin options it advertised (SPSA runs tune them).
    pub spins: Vec<SpinOption>,
    /// The `UCI_Variant` values it offered; `None`: it has no such option.
    pub variants: Option<Vec<String>>,
}

/// A registered engine as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub engine: EngineRef,
    /// The name of the user who registered it (every entry has one from
    /// schema version 19 on).
    pub owner: Option<String>,
    /// Registration time, unix ms.
    pub created_ms: i64,
}

/// Registers `new` for the user `owner`, logged as an `engine` event by
/// `actor` at `now`, in the caller's transaction. Its executable must be a
/// stored blob of the stated size ([`blobs::insert`], or an upload); the
/// assets its options name must be registered (names are resolved to
/// `asset:<sha256>`). A name that is registered already is refused, naming
/// its owner. The `signature` column holds 0 for an engine without one (a
/// signature is at least 1).
pub fn register(
    conn: &Connection,
    new: &NewEngine,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<Entry, StoreError> {
    let mut engine = new.engine.clone();
    engine.validate()?;
    if engine.signature == Some(0) {
        return Err(StoreError::invalid(
            "engine.signature",
            format!(
                "engine '{}': a bench signature of 0 nodes signs nothing",
                engine.name
            ),
        ));
    }
    refuse_taken(conn, &engine.name)?;
    match blobs::size(conn, &engine.sha256)? {
        Some(size) if size == engine.size => {}
        Some(size) => {
            return Err(StoreError::invalid(
                "engine.size",
                format!(
                    "engine '{}': {} bytes stated, the stored executable {} has {size}",
                    engine.name, engine.size, engine.sha256
                ),
            ));
        }
        None => {
            return Err(StoreError::NotFound(format!(
                "engine '{}': no executable with sha256 {} is stored; upload it first",
                engine.name, engine.sha256
            )));
        }
    }
    for (option, value) in engine.options.iter_mut() {
        let Some(reference) = xq_proto::blob::asset_reference(value) else {
            continue;
        };
        let sha = assets::resolve(conn, reference).map_err(|e| match e {
            StoreError::NotFound(why) => StoreError::NotFound(format!(
                "engine '{}': option {option}: {why}",
                new.engine.name
            )),
            e => e,
        })?;
        *value = format!("{}{sha}", xq_proto::blob::ASSET_PREFIX);
    }
    conn.execute(
        "INSERT INTO engines (name, sha256, size, signature, protocol, options, created_ms,
                              spin_options, coords, variants, owner_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            engine.name,
            engine.sha256,
            engine.size as i64,
            engine.signature.map_or(0, |s| s as i64),
            protocol_name(engine.protocol),
            serde_json::to_string(&engine.options)?,
            now,
            serde_json::to_string(&new.spins)?,
            engine.coords.map(|c| c.name()),
            serde_json::to_string(&new.variants)?,
            owner as i64,
        ],
    )?;
    let detail = format!(
        "engine '{}' sha256 {} ({} bytes, signature {})",
        engine.name,
        engine.sha256,
        engine.size,
        engine.signature_text()
    );
    events::log(conn, actor, EventKind::Engine, None, &detail, now)?;
    get_entry(conn, &engine.name)?
        .ok_or_else(|| StoreError::Schema(format!("engine '{}' vanished", engine.name)))
}

/// Refuses `name` if an engine is registered under it, naming its owner.
fn refuse_taken(conn: &Connection, name: &str) -> Result<(), StoreError> {
    let Some(entry) = get_entry(conn, name)? else {
        return Ok(());
    };
    Err(StoreError::invalid(
        "engine.name",
        format!(
            "an engine named '{name}' exists already, registered by {} (sha256 {}); \
             names are never overwritten: pick another",
            entry.owner.as_deref().unwrap_or("nobody"),
            entry.engine.sha256
        ),
    ))
}

/// Stores the executable `source` yields (whose SHA-256 and size
/// `new.engine` gives; see [`blobs::insert`]) and [`register`]s `new`, in
/// the caller's transaction (the database file's `engine add`).
pub fn add(
    conn: &Connection,
    new: &NewEngine,
    source: impl std::io::Read,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<Entry, StoreError> {
    let engine = &new.engine;
    engine.validate()?;
    refuse_taken(conn, &engine.name)?;
    blobs::insert(conn, &engine.sha256, engine.size, source).map_err(|e| match e {
        StoreError::Invalid(e) => {
            StoreError::invalid(&e.field, format!("engine '{}': {}", engine.name, e.reason))
        }
        e => e,
    })?;
    register(conn, new, owner, actor, now)
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Entry, String)> {
    Ok((
        Entry {
            engine: EngineRef {
                name: r.get(0)?,
                sha256: r.get(1)?,
                size: r.get::<_, i64>(2)? as u64,
                // 0 stands for none: no bench signature is 0 (see `register`).
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
            },
            created_ms: r.get(6)?,
            owner: r.get(8)?,
        },
        r.get(5)?,
    ))
}

const SELECT: &str = "SELECT engines.name, engines.sha256, engines.size, engines.signature,
                             engines.protocol, engines.options, engines.created_ms,
                             engines.coords, users.name
                        FROM engines LEFT JOIN users ON users.id = engines.owner_id";

/// The engine registered as `name`, with its owner.
pub fn get_entry(conn: &Connection, name: &str) -> Result<Option<Entry>, StoreError> {
    let found = conn
        .query_row(&format!("{SELECT} WHERE engines.name = ?1"), [name], row)
        .optional()?;
    found
        .map(|(mut e, options)| {
            e.engine.options = serde_json::from_str(&options)?;
            Ok(e)
        })
        .transpose()
}

/// The engine registered as `name`.
pub fn get(conn: &Connection, name: &str) -> Result<Option<EngineRef>, StoreError> {
    Ok(get_entry(conn, name)?.map(|e| e.engine))
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

/// Every registered engine with its owner and registration time, by name.
pub fn list(conn: &Connection) -> Result<Vec<Entry>, StoreError> {
    let mut stmt = conn.prepare(&format!("{SELECT} ORDER BY engines.name"))?;
    let rows = stmt.query_map([], row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(mut e, options)| {
            e.engine.options = serde_json::from_str(&options)?;
            Ok(e)
        })
        .collect()
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
    use crate::access::UserRole;
    use crate::store::users;

    fn engine(name: &str, sha: &str) -> EngineRef {
        EngineRef {
            name: name.to_owned(),
            sha256: sha.to_owned(),
            size: 3,
            signature: Some(42),
            protocol: Protocol::Ucci,
            options: [("Hash".to_owned(), "8".to_owned())].into(),
            coords: (name == "old").then_some(Coords::FromOne),
        }
    }

    fn new(engine: EngineRef, spins: Vec<SpinOption>, variants: Option<&[&str]>) -> NewEngine {
        NewEngine {
            engine,
            spins,
            variants: variants.map(|v| v.iter().map(|s| (*s).to_owned()).collect()),
        }
    }

    #[test]
    fn add_get_list_and_bytes() {
        let conn = crate::store::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        let root = users::insert(&conn, "root", UserRole::Admin, None, true, 1).unwrap();
        let cli = Actor::cli();
        let sha = xq_proto::blob::sha256_hex(b"abc");
        let spins = crate::spin_options::parse("option name Hash type spin default 8 min 1 max 64");
        let old = new(engine("old", &sha), spins.clone(), Some(&["xiangqi"]));
        let added = add(&conn, &old, &b"abc"[..], ana, &cli, 1).unwrap();
        assert_eq!(
            added,
            Entry {
                engine: engine("old", &sha),
                owner: Some("ana".to_owned()),
                created_ms: 1
            }
        );
        let same = new(engine("same-bytes", &sha), vec![], None);
        add(&conn, &same, &b"abc"[..], root, &cli, 2).unwrap();
        for by in [ana, root] {
            let again = add(
                &conn,
                &new(engine("old", &"b".repeat(64)), vec![], None),
                &b"xyz"[..],
                by,
                &cli,
                3,
            );
            assert!(
                matches!(&again, Err(StoreError::Invalid(m))
                    if m.reason.contains("'old' exists already, registered by ana")),
                "{again:?}"
            );
        }
        assert_eq!(get(&conn, "old").unwrap(), Some(engine("old", &sha)));
        assert_eq!(get(&conn, "nope").unwrap(), None);
        assert_eq!(spin_options(&conn, "old").unwrap(), Some(spins));
        assert_eq!(spin_options(&conn, "same-bytes").unwrap(), Some(vec![]));
        assert_eq!(spin_options(&conn, "nope").unwrap(), None);
        let listed = list(&conn).unwrap();
        assert_eq!(
            listed
                .iter()
                .map(|e| (e.engine.name.as_str(), e.owner.as_deref()))
                .collect::<Vec<_>>(),
            [("old", Some("ana")), ("same-bytes", Some("root"))]
        );
        assert_eq!(
            variants(&conn, "old").unwrap(),
            Some(Some(vec!["xiangqi".to_owned()]))
        );
        assert_eq!(variants(&conn, "same-bytes").unwrap(), Some(None));
        let mut out = Vec::new();
        assert!(blobs::write_to(&conn, &sha, &mut out).unwrap());
        assert_eq!(out, b"abc");
        let other = xq_proto::blob::sha256_hex(b"abe");
        let changed = add(
            &conn,
            &new(engine("changed", &other), vec![], None),
            &b"abd"[..],
            ana,
            &cli,
            4,
        );
        assert!(
            matches!(&changed, Err(StoreError::Invalid(m)) if m.reason.contains("engine 'changed'")),
            "{changed:?}"
        );
        let logged = events::list(
            &conn,
            &crate::events::EventFilter {
                kind: Some(EventKind::Engine),
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(logged.len(), 2, "{logged:?}");
        assert!(logged[1].detail.contains("engine 'old'"), "{logged:?}");
    }

    #[test]
    fn registering_an_uploaded_blob_resolves_asset_names() {
        let conn = crate::store::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        let actor = Actor::user(ana, "ana");
        let sha = xq_proto::blob::sha256_hex(b"abc");
        let mut netted = engine("netted", &sha);
        netted
            .options
            .insert("EvalFile".to_owned(), "asset:nn.bin".to_owned());
        let e = register(&conn, &new(netted.clone(), vec![], None), ana, &actor, 5)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no executable with sha256") && e.contains("upload it first"),
            "{e}"
        );
        blobs::insert(&conn, &sha, 3, &b"abc"[..]).unwrap();
        let e = register(&conn, &new(netted.clone(), vec![], None), ana, &actor, 5)
            .unwrap_err()
            .to_string();
        assert!(e.contains("EvalFile") && e.contains("'nn.bin'"), "{e}");
        let net = xq_proto::blob::sha256_hex(b"net");
        let asset = assets::NewAsset {
            name: "nn.bin".to_owned(),
            sha256: net.clone(),
            size: 3,
        };
        assets::add(&conn, &asset, &b"net"[..], ana, &actor, 5).unwrap();
        let mut wrong_size = netted.clone();
        wrong_size.size = 4;
        let e = register(&conn, &new(wrong_size, vec![], None), ana, &actor, 6)
            .unwrap_err()
            .to_string();
        assert!(e.contains("4 bytes stated"), "{e}");
        let entry = register(&conn, &new(netted, vec![], None), ana, &actor, 6).unwrap();
        assert_eq!(entry.engine.options["EvalFile"], format!("asset:{net}"));
        assert_eq!(
            entry.engine.asset_options().collect::<Vec<_>>(),
            [("EvalFile", net.as_str())]
        );
        let mut unsigned = engine("zero", &sha);
        unsigned.signature = Some(0);
        let e = register(&conn, &new(unsigned, vec![], None), ana, &actor, 7).unwrap_err();
        assert!(e.to_string().contains("0 nodes"), "{e}");
    }
}
