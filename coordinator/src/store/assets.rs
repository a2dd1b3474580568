//! Assets of the registry: network files and opening books, stored as
//! [`super::blobs`] by SHA-256 and registered under names. A name belongs
//! to the user who registered it (its owner): it never names other bytes,
//! and nobody else registers it.
//!
//! Engine options and `--book` name an asset as `asset:<sha256>` or
//! `asset:<name>`; [`resolve`] turns either into the SHA-256 the wire carries.

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, blobs, events};
use crate::events::{Actor, EventKind};

/// One registered asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asset {
    /// 1 to 128 characters, no whitespace.
    pub name: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
    /// The name of the user who registered it (every asset has one from
    /// schema version 19 on).
    pub owner: Option<String>,
    /// Registration time, unix ms.
    pub created_ms: i64,
}

/// An asset to register: a name for the stored blob `sha256` of `size` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAsset {
    pub name: String,
    pub sha256: String,
    pub size: u64,
}

/// Why `name` cannot name an asset, if it cannot.
pub fn check_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || name.chars().count() > 128 || name.chars().any(char::is_whitespace) {
        return Err(StoreError::invalid(
            "asset.name",
            format!(
                "{} must be 1 to 128 characters without whitespace",
                xq_proto::quote(name)
            ),
        ));
    }
    if xq_proto::is_sha256_hex(name) {
        return Err(StoreError::invalid(
            "asset.name",
            format!("{}: a SHA-256 cannot be a name", xq_proto::quote(name)),
        ));
    }
    Ok(())
}

/// What registering `new` for the user `owner` would find: `Some(asset)`
/// when the owner registered that name with those bytes already (nothing
/// to do); `None` when the name is free; refused, naming the owner, when it
/// names other bytes or belongs to someone else.
pub fn existing(
    conn: &Connection,
    new: &NewAsset,
    owner: u64,
) -> Result<Option<Asset>, StoreError> {
    check_name(&new.name)?;
    let Some((old, old_owner)) = conn
        .query_row(
            &format!("{SELECT} WHERE assets.name = ?1"),
            [&new.name],
            |r| Ok((row(r)?, r.get::<_, Option<i64>>(5)?)),
        )
        .optional()?
    else {
        return Ok(None);
    };
    if old.sha256 == new.sha256 && old_owner == Some(owner as i64) {
        return Ok(Some(old));
    }
    Err(StoreError::invalid(
        "asset.name",
        format!(
            "an asset named '{}' exists already, registered by {} (sha256 {}); \
             names are never overwritten: pick another",
            new.name,
            old.owner.as_deref().unwrap_or("nobody"),
            old.sha256
        ),
    ))
}

/// Registers the stored blob `new.sha256` as the asset `new.name` for the
/// user `owner`, logged as an `asset` event by `actor` at `now`, in the
/// caller's transaction. The blob must be stored, of `new.size` bytes.
/// Returns the asset, and whether the owner had registered it so already
/// (then nothing changed); a name that is taken otherwise is refused,
/// naming its owner.
pub fn register(
    conn: &Connection,
    new: &NewAsset,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<(Asset, bool), StoreError> {
    if let Some(old) = existing(conn, new, owner)? {
        return Ok((old, true));
    }
    match blobs::size(conn, &new.sha256)? {
        Some(size) if size == new.size => {}
        Some(size) => {
            return Err(StoreError::invalid(
                "asset.size",
                format!(
                    "asset '{}': {} bytes stated, the stored blob {} has {size}",
                    new.name, new.size, new.sha256
                ),
            ));
        }
        None => {
            return Err(StoreError::NotFound(format!(
                "asset '{}': no blob with sha256 {} is stored; upload it first",
                new.name, new.sha256
            )));
        }
    }
    conn.execute(
        "INSERT INTO assets (name, sha256, created_ms, owner_id) VALUES (?1, ?2, ?3, ?4)",
        params![new.name, new.sha256, now, owner as i64],
    )?;
    let detail = format!(
        "asset '{}' sha256 {} ({} bytes)",
        new.name, new.sha256, new.size
    );
    events::log(conn, actor, EventKind::Asset, None, &detail, now)?;
    let asset = get(conn, &new.name)?
        .ok_or_else(|| StoreError::Schema(format!("asset '{}' vanished", new.name)))?;
    Ok((asset, false))
}

/// Stores what `source` yields (`new.size` bytes with SHA-256
/// `new.sha256`, see [`blobs::insert`]) and [`register`]s it, in the
/// caller's transaction (tests: the doors upload, then register). Adding
/// the same bytes under the same name again, by its owner, changes nothing
/// (the source is not read).
#[cfg(test)]
pub fn add(
    conn: &Connection,
    new: &NewAsset,
    source: impl std::io::Read,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<Asset, StoreError> {
    if let Some(old) = existing(conn, new, owner)? {
        return Ok(old);
    }
    blobs::insert(conn, &new.sha256, new.size, source)?;
    Ok(register(conn, new, owner, actor, now)?.0)
}

const SELECT: &str = "SELECT assets.name, assets.sha256, blobs.size, assets.created_ms,
                             users.name, assets.owner_id
                        FROM assets JOIN blobs USING (sha256)
                        LEFT JOIN users ON users.id = assets.owner_id";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Asset> {
    Ok(Asset {
        name: r.get(0)?,
        sha256: r.get(1)?,
        size: r.get::<_, i64>(2)? as u64,
        created_ms: r.get(3)?,
        owner: r.get(4)?,
    })
}

/// The asset registered as `name`.
pub fn get(conn: &Connection, name: &str) -> Result<Option<Asset>, StoreError> {
    Ok(conn
        .query_row(&format!("{SELECT} WHERE assets.name = ?1"), [name], row)
        .optional()?)
}

/// Every asset, by name.
pub fn list(conn: &Connection) -> Result<Vec<Asset>, StoreError> {
    let mut stmt = conn.prepare(&format!("{SELECT} ORDER BY assets.name"))?;
    Ok(stmt.query_map([], row)?.collect::<Result<_, _>>()?)
}

/// The SHA-256 of the asset `reference` names: its SHA-256 or its name. An
/// unknown one is refused, naming it.
pub fn resolve(conn: &Connection, reference: &str) -> Result<String, StoreError> {
    if xq_proto::is_sha256_hex(reference) {
        let known: Option<String> = conn
            .query_row(
                "SELECT sha256 FROM assets WHERE sha256 = ?1 LIMIT 1",
                [reference],
                |r| r.get(0),
            )
            .optional()?;
        return known.ok_or_else(|| {
            StoreError::NotFound(format!("no asset with sha256 {reference} is registered"))
        });
    }
    get(conn, reference)?
        .map(|a| a.sha256)
        .ok_or_else(|| StoreError::NotFound(format!("no asset named '{reference}' is registered")))
}

/// Checks that the asset `sha256` is registered and is an opening book: UTF-8
/// lines in [`xq_proto::openings`]' format, at least one opening. It is read
/// a chunk at a time; returns the number of openings.
pub fn check_book(conn: &Connection, sha256: &str) -> Result<u64, StoreError> {
    let sha256 = resolve(conn, sha256)?;
    let bad = |why: String| {
        StoreError::invalid("openings", format!("opening book asset:{sha256}: {why}"))
    };
    let mut stmt = conn.prepare("SELECT data FROM blob_chunks WHERE sha256 = ?1 ORDER BY seq")?;
    let mut rows = stmt.query([&sha256])?;
    let (mut pending, mut line, mut openings) = (Vec::<u8>::new(), 0usize, 0u64);
    let mut lines = |text: &[u8], line: &mut usize| -> Result<(), StoreError> {
        let text = std::str::from_utf8(text)
            .map_err(|e| bad(format!("line {}: not UTF-8 text: {e}", *line + 1)))?;
        for raw in text.lines() {
            *line += 1;
            match xq_proto::openings::parse_lines(raw) {
                Ok(found) => openings += found.len() as u64,
                Err(xq_proto::OpeningError::Empty) => {}
                Err(mut e) => {
                    use xq_proto::OpeningError::{Fen, Junk, Move};
                    if let Fen { line: l, .. } | Move { line: l, .. } | Junk { line: l, .. } =
                        &mut e
                    {
                        *l = *line;
                    }
                    return Err(bad(e.to_string()));
                }
            }
        }
        Ok(())
    };
    while let Some(row) = rows.next()? {
        let data: Vec<u8> = row.get(0)?;
        pending.extend_from_slice(&data);
        if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
            lines(&pending[..=end], &mut line)?;
            pending.drain(..=end);
        }
    }
    lines(&pending, &mut line)?;
    if openings == 0 {
        return Err(bad("the file has no openings".to_owned()));
    }
    Ok(openings)
}

/// The opening book asset `sha256` as inline lines (comments and blank lines
/// dropped, each line checked), for the coordinator's check of a result's
/// openings. Read whole: a book is lines of text, checked when its run was
/// created ([`check_book`]).
pub fn book_lines(conn: &Connection, sha256: &str) -> Result<xq_proto::OpeningSource, StoreError> {
    let bad = |why: String| {
        StoreError::invalid("openings", format!("opening book asset:{sha256}: {why}"))
    };
    let mut bytes = Vec::new();
    if !blobs::write_to(conn, sha256, &mut bytes)? {
        return Err(StoreError::NotFound(format!(
            "no asset with sha256 {sha256} is registered"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| bad(format!("not UTF-8 text: {e}")))?;
    xq_proto::OpeningSource::from_file_text(&text).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::UserRole;
    use crate::store::users;

    fn sha(bytes: &[u8]) -> String {
        xq_proto::blob::sha256_hex(bytes)
    }

    /// [`add`] of `source` as `name` with the SHA-256 of `hashed`, for `owner`,
    /// in a transaction of its own (rolled back on an error).
    fn add_as(
        conn: &mut Connection,
        name: &str,
        hashed: &[u8],
        source: &[u8],
        owner: u64,
    ) -> Result<Asset, StoreError> {
        let new = NewAsset {
            name: name.to_owned(),
            sha256: sha(hashed),
            size: hashed.len() as u64,
        };
        let tx = conn.savepoint()?;
        let asset = add(&tx, &new, source, owner, &Actor::cli(), 5)?;
        tx.commit()?;
        Ok(asset)
    }

    #[test]
    fn assets_by_name_and_by_hash() {
        let mut conn = crate::store::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        let root = users::insert(&conn, "root", UserRole::Admin, None, true, 1).unwrap();
        let (a, b) = (b"net one".as_slice(), b"net two".as_slice());
        let added = add_as(&mut conn, "nn-1.bin", a, a, ana).unwrap();
        assert_eq!(added.owner.as_deref(), Some("ana"));
        assert_eq!(add_as(&mut conn, "nn-1.bin", a, a, ana).unwrap(), added);
        for (bytes, by) in [(b, ana), (a, root), (b, root)] {
            let taken = add_as(&mut conn, "nn-1.bin", bytes, bytes, by).unwrap_err();
            assert!(
                taken
                    .to_string()
                    .contains("'nn-1.bin' exists already, registered by ana"),
                "{taken}"
            );
        }
        add_as(&mut conn, "copy", a, a, root).unwrap();
        assert_eq!(
            list(&conn)
                .unwrap()
                .iter()
                .map(|a| (a.name.as_str(), a.owner.as_deref()))
                .collect::<Vec<_>>(),
            [("copy", Some("root")), ("nn-1.bin", Some("ana"))]
        );
        assert_eq!(resolve(&conn, "nn-1.bin").unwrap(), sha(a));
        assert_eq!(resolve(&conn, &sha(a)).unwrap(), sha(a));
        let e = resolve(&conn, &sha(b)).unwrap_err().to_string();
        assert!(e.contains(&sha(b)), "{e}");
        let e = resolve(&conn, "nope.bin").unwrap_err().to_string();
        assert!(e.contains("no asset named 'nope.bin'"), "{e}");
        for bad in ["", "a b", &sha(b)] {
            assert!(add_as(&mut conn, bad, b, b, ana).is_err(), "{bad:?}");
        }
        let e = add_as(&mut conn, "changed", b, a, ana).unwrap_err();
        assert!(e.to_string().contains("source changed"), "{e}");
        assert_eq!(get(&conn, "changed").unwrap(), None);
        assert_eq!(blobs::size(&conn, &sha(b)).unwrap(), None, "rolled back");
        let logged = events::list(
            &conn,
            &crate::events::EventFilter {
                kind: Some(EventKind::Asset),
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(logged.len(), 2, "one event per registration: {logged:?}");
    }

    #[test]
    fn registering_needs_the_stored_blob_of_the_stated_size() {
        let conn = crate::store::migrations::memory();
        let ana = users::insert(&conn, "ana", UserRole::Developer, None, false, 1).unwrap();
        let actor = Actor::user(ana, "ana");
        let mut new = NewAsset {
            name: "nn.bin".to_owned(),
            sha256: sha(b"net"),
            size: 3,
        };
        let e = register(&conn, &new, ana, &actor, 1).unwrap_err();
        assert!(e.to_string().contains("upload it first"), "{e}");
        blobs::insert(&conn, &new.sha256, 3, &b"net"[..]).unwrap();
        new.size = 4;
        let e = register(&conn, &new, ana, &actor, 1).unwrap_err();
        assert!(e.to_string().contains("4 bytes stated"), "{e}");
        new.size = 3;
        let (asset, existed) = register(&conn, &new, ana, &actor, 1).unwrap();
        assert_eq!((asset.size, existed), (3, false));
        assert!(register(&conn, &new, ana, &actor, 2).unwrap().1);
    }

    #[test]
    fn a_book_is_checked_line_by_line() {
        let mut conn = crate::store::migrations::memory();
        let start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
        let good = format!("# a book\n{start} moves h2e2\n\n{start} moves b2e2 h9g7\n");
        let bad = format!("{start}\n{start} moves h2e3\n");
        let admin = users::ensure(&conn, users::DEFAULT_ADMIN, UserRole::Admin, 1).unwrap();
        for (name, text) in [
            ("good", &good),
            ("bad", &bad),
            ("empty", &"# none\n".to_owned()),
        ] {
            add_as(&mut conn, name, text.as_bytes(), text.as_bytes(), admin).unwrap();
        }
        assert_eq!(check_book(&conn, &sha(good.as_bytes())).unwrap(), 2);
        assert_eq!(check_book(&conn, "good").unwrap(), 2);
        let xq_proto::OpeningSource::Lines { lines, .. } =
            book_lines(&conn, &sha(good.as_bytes())).unwrap()
        else {
            panic!("lines");
        };
        assert_eq!(lines.len(), 2);
        let e = check_book(&conn, "bad").unwrap_err().to_string();
        assert!(
            e.contains(&sha(bad.as_bytes())) && e.contains("line 2") && e.contains("h2e3"),
            "{e}"
        );
        let e = check_book(&conn, "empty").unwrap_err().to_string();
        assert!(e.contains("no openings"), "{e}");
        assert!(check_book(&conn, "missing").is_err());
    }
}
