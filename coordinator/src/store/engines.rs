//! The engine registry: engines by name (protocol, options, bench
//! signature, advertised options), each with one or more executables stored
//! as blobs by SHA-256: an untagged one any worker may take and builds
//! tagged with the ARCH value they need (`engine_binaries`, `arch = ''` for
//! the untagged one). A name belongs to the user who registered it (its
//! owner): only the owner adds builds to it, and no executable is ever
//! replaced.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::{Arch, Coords, EngineBinary, EngineRef, Protocol, Signature};

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
    /// Name, its one executable (untagged, or a single tagged build; see
    /// [`only_executable`]), bench signature, protocol, options (an `asset:`
    /// value names a registered asset by SHA-256 or by name), coordinates.
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

/// What [`register`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new engine, with its first executable.
    Engine,
    /// Another executable of an engine registered before.
    Build,
}

/// The one executable `engine` names for [`register`]: the untagged one, or its
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

/// Registers the one executable `new.engine` names for the user `owner`,
/// logged as an `engine` event by `actor` at `now`, in the caller's
/// transaction. The executable must be a stored blob of the stated size
/// ([`blobs::insert`], or an upload); the assets its options name must be
/// registered (names are resolved to `asset:<sha256>`).
///
/// A new name is a new engine with the entry's protocol, options,
/// coordinates, signature, spin options and variants, owned by `owner`. A
/// name registered already gains a build, only for its owner (anyone else is
/// refused, naming the owner): the protocol, options, coordinates and
/// signature must equal the registered ones ([`check_same_engine`]; spin
/// options and variants are kept from the first) and the engine must have
/// no executable with that tag yet. The `signature` column holds 0 for an
/// engine without one (a signature is at least 1), `signature_depth` 0 for
/// a bench count, else the depth of the fixed search it counts.
pub fn register(
    conn: &Connection,
    new: &NewEngine,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<(Entry, Added), StoreError> {
    let mut engine = new.engine.clone();
    engine.validate()?;
    if let Some(s) = engine.signature {
        s.validate("engine.signature").map_err(|e| {
            StoreError::invalid(&e.field, format!("engine '{}': {}", engine.name, e.reason))
        })?;
    }
    let (count, depth) = Signature::to_wire(engine.signature);
    let (arch, sha256, size) = only_executable(&engine)?;
    let (sha256, tag) = (sha256.to_owned(), arch.map_or("", Arch::name));
    let stored_owner = refuse_taken(conn, &engine.name, owner)?;
    match blobs::size(conn, &sha256)? {
        Some(stored) if stored == size => {}
        Some(stored) => {
            return Err(StoreError::invalid(
                "engine.size",
                format!(
                    "engine '{}': {size} bytes stated, the stored executable {sha256} has {stored}",
                    engine.name
                ),
            ));
        }
        None => {
            return Err(StoreError::NotFound(format!(
                "engine '{}': no executable with sha256 {sha256} is stored; upload it first",
                engine.name
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
    let added = match stored_owner {
        Some(_) => {
            let stored = get(conn, &engine.name)?.ok_or_else(|| {
                StoreError::Schema(format!("engine '{}' has no row", engine.name))
            })?;
            check_same_engine(&stored, &engine)?;
            refuse_held(conn, &engine.name, arch)?;
            Added::Build
        }
        None => {
            conn.execute(
                "INSERT INTO engines (name, signature, protocol, options, created_ms,
                                      spin_options, coords, variants, owner_id, signature_depth)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    engine.name,
                    count.map_or(0, |n| n as i64),
                    protocol_name(engine.protocol),
                    serde_json::to_string(&engine.options)?,
                    now,
                    serde_json::to_string(&new.spins)?,
                    engine.coords.map(|c| c.name()),
                    serde_json::to_string(&new.variants)?,
                    owner as i64,
                    i64::from(depth),
                ],
            )?;
            Added::Engine
        }
    };
    conn.execute(
        "INSERT INTO engine_binaries (engine, arch, sha256, size, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![engine.name, tag, sha256, size as i64, now],
    )?;
    let detail = format!(
        "engine '{}'{} sha256 {sha256} ({size} bytes, signature {})",
        engine.name,
        arch.map_or_else(String::new, |a| format!(" build {a}")),
        engine.signature_text()
    );
    events::log(conn, actor, EventKind::Engine, None, &detail, now)?;
    let entry = get_entry(conn, &engine.name)?
        .ok_or_else(|| StoreError::Schema(format!("engine '{}' vanished", engine.name)))?;
    Ok((entry, added))
}

/// The owner's id of the engine `name` (`None`: no such engine); refuses
/// a name registered by another user than `owner`, naming them.
pub fn refuse_taken(conn: &Connection, name: &str, owner: u64) -> Result<Option<u64>, StoreError> {
    let found: Option<(Option<i64>, Option<String>)> = conn
        .query_row(
            "SELECT engines.owner_id, users.name
               FROM engines LEFT JOIN users ON users.id = engines.owner_id
              WHERE engines.name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match found {
        None => Ok(None),
        Some((Some(id), _)) if id as u64 == owner => Ok(Some(owner)),
        Some((_, by)) => Err(StoreError::invalid(
            "engine.name",
            format!(
                "an engine named '{name}' exists already, registered by {}; names are never \
                 overwritten and only their owner adds builds to them: pick another",
                by.as_deref().unwrap_or("nobody")
            ),
        )),
    }
}

/// Refuses a build for `arch` (`None`: the untagged executable) of the
/// engine `name` when it holds one already: executables are never replaced.
fn refuse_held(conn: &Connection, name: &str, arch: Option<Arch>) -> Result<(), StoreError> {
    let taken: Option<String> = conn
        .query_row(
            "SELECT sha256 FROM engine_binaries WHERE engine = ?1 AND arch = ?2",
            params![name, arch.map_or("", Arch::name)],
            |r| r.get(0),
        )
        .optional()?;
    match taken {
        None => Ok(()),
        Some(sha) => {
            let what = arch.map_or_else(|| "an untagged".to_owned(), |a| format!("an {a}"));
            Err(StoreError::invalid(
                "engine.arch",
                format!(
                    "engine '{name}' has {what} executable already (sha256 {sha}); executables \
                     are never replaced"
                ),
            ))
        }
    }
}

/// Stores the executable `source` yields (the one `new.engine` names; see
/// [`blobs::insert`]) and [`register`]s `new`, in the caller's transaction
/// (tests: the doors upload, then register).
#[cfg(test)]
pub fn add(
    conn: &Connection,
    new: &NewEngine,
    source: impl std::io::Read,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<(Entry, Added), StoreError> {
    let engine = &new.engine;
    engine.validate()?;
    let (arch, sha256, size) = only_executable(engine)?;
    refuse_taken(conn, &engine.name, owner)?;
    refuse_held(conn, &engine.name, arch)?;
    blobs::insert(conn, sha256, size, source).map_err(|e| match e {
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
                sha256: String::new(),
                size: 0,
                // A count of 0 stands for none: no signature is 0 (see
                // `register`); a depth of 0 for a bench count.
                signature: Some(r.get::<_, i64>(1)? as u64)
                    .filter(|&s| s != 0)
                    .map(|nodes| match r.get::<_, i64>(7) {
                        Ok(d) if d > 0 => Ok(Signature::Search {
                            depth: u32::try_from(d).unwrap_or(u32::MAX),
                            nodes,
                        }),
                        Ok(_) => Ok(Signature::Bench(nodes)),
                        Err(e) => Err(e),
                    })
                    .transpose()?,
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
            created_ms: r.get(4)?,
            owner: r.get(6)?,
        },
        r.get(3)?,
    ))
}

const SELECT: &str = "SELECT engines.name, engines.signature, engines.protocol, engines.options,
                             engines.created_ms, engines.coords, users.name,
                             engines.signature_depth
                        FROM engines LEFT JOIN users ON users.id = engines.owner_id";

/// Fills in the options and executables of an entry read by [`row`]: the
/// untagged executable as its `sha256`, the tagged builds in the ARCH
/// table's order (best first for each instruction-set architecture). A
/// stored tag that is not an ARCH value is an error naming it.
fn complete(conn: &Connection, (mut entry, options): (Entry, String)) -> Result<Entry, StoreError> {
    let engine = &mut entry.engine;
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
    Ok(entry)
}

/// The engine registered as `name`, with all its executables and its owner.
pub fn get_entry(conn: &Connection, name: &str) -> Result<Option<Entry>, StoreError> {
    let found = conn
        .query_row(&format!("{SELECT} WHERE engines.name = ?1"), [name], row)
        .optional()?;
    found.map(|r| complete(conn, r)).transpose()
}

/// The engine registered as `name`, with all its executables.
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

/// Every registered engine with all its executables, its owner and its
/// registration time, by name.
pub fn list(conn: &Connection) -> Result<Vec<Entry>, StoreError> {
    let mut stmt = conn.prepare(&format!("{SELECT} ORDER BY engines.name"))?;
    let rows = stmt.query_map([], row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|r| complete(conn, r)).collect()
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
            signature: Some(Signature::Bench(42)),
            protocol: Protocol::Ucci,
            options: [("Hash".to_owned(), "8".to_owned())].into(),
            coords: (name == "old").then_some(Coords::FromOne),
            binaries: Vec::new(),
            source: None,
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
        let (added, how) = add(&conn, &old, &b"abc"[..], ana, &cli, 1).unwrap();
        assert_eq!(how, Added::Engine);
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
        for (by, refusal) in [
            (ana, "'old' has an untagged executable already"),
            (root, "'old' exists already, registered by ana"),
        ] {
            let again = add(
                &conn,
                &new(engine("old", &"b".repeat(64)), vec![], None),
                &b"xyz"[..],
                by,
                &cli,
                3,
            );
            assert!(
                matches!(&again, Err(StoreError::Invalid(m)) if m.reason.contains(refusal)),
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
        let (entry, _) = register(&conn, &new(netted, vec![], None), ana, &actor, 6).unwrap();
        assert_eq!(entry.engine.options["EvalFile"], format!("asset:{net}"));
        assert_eq!(
            entry.engine.asset_options().collect::<Vec<_>>(),
            [("EvalFile", net.as_str())]
        );
        let mut unsigned = engine("zero", &sha);
        unsigned.signature = Some(Signature::Bench(0));
        let e = register(&conn, &new(unsigned, vec![], None), ana, &actor, 7).unwrap_err();
        assert!(e.to_string().contains("0 nodes"), "{e}");
        let mut searched = engine("searched", &sha);
        searched.signature = Some(Signature::Search { depth: 5, nodes: 9 });
        let (entry, _) =
            register(&conn, &new(searched.clone(), vec![], None), ana, &actor, 7).unwrap();
        assert_eq!(entry.engine.signature, searched.signature);
        assert_eq!(
            list(&conn)
                .unwrap()
                .into_iter()
                .find(|e| e.engine.name == "searched")
                .unwrap()
                .engine
                .signature,
            Some(Signature::Search { depth: 5, nodes: 9 })
        );
        let mut deep = engine("deep", &sha);
        deep.signature = Some(Signature::Search {
            depth: 99,
            nodes: 9,
        });
        let e = register(&conn, &new(deep, vec![], None), ana, &actor, 8).unwrap_err();
        assert!(e.to_string().contains("depth is 1 to 20"), "{e}");
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
        let conn = super::super::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        let bo = users::insert(&conn, "bo", UserRole::Admin, None, true, 1).unwrap();
        let add = |e: &EngineRef, bytes: &[u8], now| {
            add(
                &conn,
                &new(e.clone(), vec![], None),
                bytes,
                ana,
                &Actor::cli(),
                now,
            )
            .map(|r| r.1)
        };
        let base = engine("pika", &"0".repeat(64));
        let avx2 = build(&base, Arch::X86_64Avx2, b"avx2");
        assert_eq!(add(&avx2, b"avx2", 1).unwrap(), Added::Engine);
        let tagged_only = get(&conn, "pika").unwrap().unwrap();
        assert!(!tagged_only.has_untagged());
        assert_eq!(tagged_only.binaries, avx2.binaries);

        let arm = build(&base, Arch::Armv8Dotprod, b"arm");
        let vnni = build(&base, Arch::X86_64Vnni512, b"vnni");
        let generic = EngineRef {
            sha256: xq_proto::blob::sha256_hex(b"any"),
            ..base.clone()
        };
        assert_eq!(add(&arm, b"arm", 2).unwrap(), Added::Build);
        assert_eq!(add(&vnni, b"vnni", 3).unwrap(), Added::Build);
        assert_eq!(add(&generic, b"any", 4).unwrap(), Added::Build);
        let all = get(&conn, "pika").unwrap().unwrap();
        assert_eq!(all.sha256, generic.sha256);
        let arches: Vec<Arch> = all.binaries.iter().map(|b| b.arch).collect();
        assert_eq!(
            arches,
            [Arch::X86_64Vnni512, Arch::X86_64Avx2, Arch::Armv8Dotprod],
            "best first"
        );
        assert_eq!(list(&conn).unwrap()[0].engine, all);
        let mut out = Vec::new();
        assert!(blobs::write_to(&conn, &arm.binaries[0].sha256, &mut out).unwrap());
        assert_eq!(out, b"arm");

        let again = build(&base, Arch::X86_64Avx2, b"avx2 again");
        let err = add(&again, b"avx2 again", 5).unwrap_err();
        assert!(
            err.to_string()
                .contains("has an x86-64-avx2 executable already"),
            "{err}"
        );
        let refused = |changed: EngineRef, field: &str| {
            let e = build(&changed, Arch::X86_64Bmi2, b"bmi2");
            let err = add(&e, b"bmi2", 6).unwrap_err();
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
                signature: Some(Signature::Bench(43)),
                ..base.clone()
            },
            "signature",
        );
        let two = EngineRef {
            binaries: arm.binaries.clone(),
            ..generic
        };
        let err = add(&two, b"any", 7).unwrap_err();
        assert!(
            err.to_string().contains("one executable at a time"),
            "{err}"
        );
        let bmi2 = build(&base, Arch::X86_64Bmi2, b"bmi2");
        let theirs = super::add(
            &conn,
            &new(bmi2, vec![], None),
            &b"bmi2"[..],
            bo,
            &Actor::cli(),
            8,
        );
        assert!(
            matches!(&theirs, Err(StoreError::Invalid(m))
                if m.reason.contains("registered by ana") && m.reason.contains("only their owner")),
            "{theirs:?}"
        );
        assert_eq!(get(&conn, "pika").unwrap().unwrap(), all, "nothing changed");
    }
}
