//! The engine registry: engines by name (protocol, options, bench
//! signature, advertised options), each with one or more executables stored
//! as blobs by SHA-256: an untagged one any worker may take and builds
//! tagged with the ARCH value they need (`engine_binaries`, `arch = ''` for
//! the untagged one).

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::{Arch, Coords, EngineBinary, EngineRef, Protocol};

use super::{StoreError, blobs};
use crate::runs::{Registered, Registry};
use crate::spin_options::SpinOption;

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Uci => "uci",
        Protocol::Ucci => "ucci",
    }
}

/// What [`add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new engine, with its first executable.
    Engine,
    /// Another executable of an engine registered before.
    Build,
}

/// The one executable `engine` names for [`add`]: the untagged one, or its
/// only tagged build.
fn only_executable(engine: &EngineRef) -> Result<(Option<Arch>, &str, u64), StoreError> {
    match (engine.has_untagged(), engine.binaries.as_slice()) {
        (true, []) => Ok((None, &engine.sha256, engine.size)),
        (false, [b]) => Ok((Some(b.arch), &b.sha256, b.size)),
        _ => Err(StoreError::invalid(
            "engine",
            format!(
                "engine '{}': add one executable at a time (untagged, or one build)",
                engine.name
            ),
        )),
    }
}

/// Refuses `engine` as a new build of `stored` unless they agree on what
/// all builds of one engine share: protocol, options, coordinates and bench
/// signature (every build of an engine searches alike).
fn check_same_engine(stored: &EngineRef, engine: &EngineRef) -> Result<(), StoreError> {
    let name = &engine.name;
    let differs = |field: &str, theirs: String, ours: String| {
        Err(StoreError::invalid(
            &format!("engine.{field}"),
            format!(
                "engine '{name}' is registered with {field} {theirs}; a build of it must have the \
                 same, not {ours}"
            ),
        ))
    };
    if stored.protocol != engine.protocol {
        return differs(
            "protocol",
            stored.protocol.name().to_owned(),
            engine.protocol.name().to_owned(),
        );
    }
    if stored.options != engine.options {
        let text = |o: &BTreeMap<String, String>| {
            let pairs: Vec<String> = o.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("[{}]", pairs.join(", "))
        };
        return differs("options", text(&stored.options), text(&engine.options));
    }
    if stored.coords != engine.coords {
        let text = |c: Option<Coords>| c.map_or("detected".to_owned(), |c| c.name().to_owned());
        return differs("coords", text(stored.coords), text(engine.coords));
    }
    if stored.signature != engine.signature {
        return differs(
            "signature",
            stored.signature_text(),
            engine.signature_text(),
        );
    }
    Ok(())
}

/// Registers the one executable `engine` names (untagged, or a single
/// tagged build; see [`only_executable`]), whose bytes `source` yields,
/// storing them as a blob (see [`blobs::insert`]), in one transaction.
///
/// A new name is a new engine with `engine`'s protocol, options,
/// coordinates and signature and the spin options `spins`. An existing
/// name gains a build: the protocol, options, coordinates and signature
/// must equal the registered ones ([`check_same_engine`]; `spins` is not
/// stored again) and the engine must have no executable with that tag yet.
/// Every asset its options name must be stored. The `signature` column holds
/// 0 for an engine without one (a signature is at least 1).
pub fn add(
    conn: &mut Connection,
    engine: &EngineRef,
    spins: &[SpinOption],
    source: impl std::io::Read,
    now: i64,
) -> Result<Added, StoreError> {
    if engine.signature == Some(0) {
        return Err(StoreError::invalid(
            "engine.signature",
            format!(
                "engine '{}': a bench signature of 0 nodes signs nothing",
                engine.name
            ),
        ));
    }
    let (arch, sha256, size) = only_executable(engine)?;
    let tag = arch.map_or("", Arch::name);
    let tx = conn.transaction()?;
    for (option, sha) in engine.asset_options() {
        if blobs::size(&tx, sha)?.is_none() {
            return Err(StoreError::NotFound(format!(
                "engine '{}': option {option} names asset {sha}, which is not registered",
                engine.name
            )));
        }
    }
    let added = match get(&tx, &engine.name)? {
        Some(stored) => {
            check_same_engine(&stored, engine)?;
            let taken: Option<String> = tx
                .query_row(
                    "SELECT sha256 FROM engine_binaries WHERE engine = ?1 AND arch = ?2",
                    params![engine.name, tag],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(sha) = taken {
                let what = arch.map_or_else(|| "an untagged".to_owned(), |a| format!("an {a}"));
                return Err(StoreError::invalid(
                    "engine.arch",
                    format!(
                        "engine '{}' has {what} executable already (sha256 {sha})",
                        engine.name
                    ),
                ));
            }
            Added::Build
        }
        None => {
            tx.execute(
                "INSERT INTO engines (name, signature, protocol, options, created_ms,
                                      spin_options, coords)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    engine.name,
                    engine.signature.map_or(0, |s| s as i64),
                    protocol_name(engine.protocol),
                    serde_json::to_string(&engine.options)?,
                    now,
                    serde_json::to_string(spins)?,
                    engine.coords.map(|c| c.name()),
                ],
            )?;
            Added::Engine
        }
    };
    blobs::insert(&tx, sha256, size, source).map_err(|e| match e {
        StoreError::Invalid(e) => {
            StoreError::invalid(&e.field, format!("engine '{}': {}", engine.name, e.reason))
        }
        e => e,
    })?;
    tx.execute(
        "INSERT INTO engine_binaries (engine, arch, sha256, size, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![engine.name, tag, sha256, size as i64, now],
    )?;
    tx.commit()?;
    Ok(added)
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(EngineRef, String, i64)> {
    Ok((
        EngineRef {
            name: r.get(0)?,
            sha256: String::new(),
            size: 0,
            // 0 stands for none: no bench signature is 0 (see `add`).
            signature: Some(r.get::<_, i64>(1)? as u64).filter(|&s| s != 0),
            protocol: if r.get::<_, String>(2)? == "ucci" {
                Protocol::Ucci
            } else {
                Protocol::Uci
            },
            options: BTreeMap::new(),
            coords: r
                .get::<_, Option<String>>(5)?
                .and_then(|c| c.parse::<Coords>().ok()),
            binaries: Vec::new(),
            source: None,
        },
        r.get(3)?,
        r.get(4)?,
    ))
}

const COLUMNS: &str = "name, signature, protocol, options, created_ms, coords";

/// Fills in the options and executables of an engine read by [`row`]: the
/// untagged executable as its `sha256`, the tagged builds in the ARCH
/// table's order (best first for each instruction-set architecture). A
/// stored tag that is not an ARCH value is an error naming it.
fn complete(
    conn: &Connection,
    (mut engine, options, created): (EngineRef, String, i64),
) -> Result<(EngineRef, i64), StoreError> {
    engine.options = serde_json::from_str(&options)?;
    let mut stmt = conn.prepare_cached(
        "SELECT arch, sha256, size FROM engine_binaries WHERE engine = ?1 ORDER BY arch",
    )?;
    let rows = stmt
        .query_map([&engine.name], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)? as u64,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for (tag, sha256, size) in rows {
        if tag.is_empty() {
            engine.sha256 = sha256;
            engine.size = size;
            continue;
        }
        let arch = Arch::parse(&tag).map_err(|e| {
            StoreError::Schema(format!("engine '{}': stored build {e}", engine.name))
        })?;
        engine.binaries.push(EngineBinary { arch, sha256, size });
    }
    engine.binaries.sort_by_key(|b| b.arch);
    Ok((engine, created))
}

/// The engine registered as `name`, with all its executables.
pub fn get(conn: &Connection, name: &str) -> Result<Option<EngineRef>, StoreError> {
    let found = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM engines WHERE name = ?1"),
            [name],
            row,
        )
        .optional()?;
    found.map(|r| complete(conn, r).map(|(e, _)| e)).transpose()
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

/// Every registered engine with all its executables and its registration
/// time (unix ms), by name.
pub fn list(conn: &Connection) -> Result<Vec<(EngineRef, i64)>, StoreError> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM engines ORDER BY name"))?;
    let rows = stmt.query_map([], row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|r| complete(conn, r)).collect()
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
            binaries: Vec::new(),
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
        assert!(
            matches!(&again, Err(StoreError::Invalid(m))
                if m.reason.contains("'old' has an untagged executable already")),
            "{again:?}"
        );
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

    /// `engine` with one build for `arch` of `bytes` and no untagged executable.
    fn build(engine: &EngineRef, arch: Arch, bytes: &[u8]) -> EngineRef {
        EngineRef {
            sha256: String::new(),
            size: 0,
            binaries: vec![EngineBinary {
                arch,
                sha256: xq_proto::blob::sha256_hex(bytes),
                size: bytes.len() as u64,
            }],
            ..engine.clone()
        }
    }

    #[test]
    fn an_engine_gains_builds_that_share_its_settings_one_per_arch() {
        let mut conn = super::super::migrations::memory();
        let base = engine("pika", &"0".repeat(64));
        let avx2 = build(&base, Arch::X86_64Avx2, b"avx2");
        assert_eq!(
            add(&mut conn, &avx2, &[], &b"avx2"[..], 1).unwrap(),
            Added::Engine
        );
        let tagged_only = get(&conn, "pika").unwrap().unwrap();
        assert!(!tagged_only.has_untagged());
        assert_eq!(tagged_only.binaries, avx2.binaries);

        let arm = build(&base, Arch::Armv8Dotprod, b"arm");
        let vnni = build(&base, Arch::X86_64Vnni512, b"vnni");
        let generic = EngineRef {
            sha256: xq_proto::blob::sha256_hex(b"any"),
            ..base.clone()
        };
        assert_eq!(
            add(&mut conn, &arm, &[], &b"arm"[..], 2).unwrap(),
            Added::Build
        );
        assert_eq!(
            add(&mut conn, &vnni, &[], &b"vnni"[..], 3).unwrap(),
            Added::Build
        );
        assert_eq!(
            add(&mut conn, &generic, &[], &b"any"[..], 4).unwrap(),
            Added::Build
        );
        let all = get(&conn, "pika").unwrap().unwrap();
        assert_eq!(all.sha256, generic.sha256);
        let arches: Vec<Arch> = all.binaries.iter().map(|b| b.arch).collect();
        assert_eq!(
            arches,
            [Arch::X86_64Vnni512, Arch::X86_64Avx2, Arch::Armv8Dotprod],
            "best first"
        );
        assert_eq!(list(&conn).unwrap()[0].0, all);
        let mut out = Vec::new();
        assert!(blobs::write_to(&conn, &arm.binaries[0].sha256, &mut out).unwrap());
        assert_eq!(out, b"arm");

        let again = build(&base, Arch::X86_64Avx2, b"avx2 again");
        let err = add(&mut conn, &again, &[], &b"avx2 again"[..], 5).unwrap_err();
        assert!(
            err.to_string()
                .contains("has an x86-64-avx2 executable already"),
            "{err}"
        );
        let mut refused = |changed: EngineRef, field: &str| {
            let e = build(&changed, Arch::X86_64Bmi2, b"bmi2");
            let err = add(&mut conn, &e, &[], &b"bmi2"[..], 6).unwrap_err();
            assert!(
                matches!(&err, StoreError::Invalid(i) if i.field == format!("engine.{field}")),
                "{field}: {err}"
            );
        };
        refused(
            EngineRef {
                protocol: Protocol::Uci,
                ..base.clone()
            },
            "protocol",
        );
        refused(
            EngineRef {
                options: BTreeMap::new(),
                ..base.clone()
            },
            "options",
        );
        refused(
            EngineRef {
                coords: Some(Coords::FromZero),
                ..base.clone()
            },
            "coords",
        );
        refused(
            EngineRef {
                signature: Some(43),
                ..base.clone()
            },
            "signature",
        );
        let err = add(
            &mut conn,
            &EngineRef {
                binaries: arm.binaries.clone(),
                ..generic
            },
            &[],
            &b"any"[..],
            7,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("one executable at a time"),
            "{err}"
        );
        assert_eq!(get(&conn, "pika").unwrap().unwrap(), all, "nothing changed");
    }
}
