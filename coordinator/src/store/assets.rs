//! Assets of the registry: network files and opening books, stored as
//! [`super::blobs`] by SHA-256 and registered under names.
//!
//! Engine options and `--book` name an asset as `asset:<sha256>` or
//! `asset:<name>`; [`resolve`] turns either into the SHA-256 the wire carries.

use std::io::Read;

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, blobs};

/// One registered asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asset {
    /// 1 to 128 characters, no whitespace.
    pub name: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
    /// Registration time, unix ms.
    pub created_ms: i64,
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

/// Stores what `source` yields (`size` bytes with SHA-256 `sha256`, see
/// [`blobs::insert`]) as the asset `name`, in one transaction. Adding the
/// same bytes under the same name again changes nothing; a name taken by
/// other bytes is refused.
pub fn add(
    conn: &mut Connection,
    name: &str,
    sha256: &str,
    size: u64,
    source: impl Read,
    now: i64,
) -> Result<Asset, StoreError> {
    check_name(name)?;
    let tx = conn.transaction()?;
    if let Some(old) = get(&tx, name)? {
        if old.sha256 == sha256 {
            return Ok(old);
        }
        return Err(StoreError::invalid(
            "asset.name",
            format!(
                "an asset named '{name}' exists already (sha256 {})",
                old.sha256
            ),
        ));
    }
    blobs::insert(&tx, sha256, size, source)?;
    tx.execute(
        "INSERT INTO assets (name, sha256, created_ms) VALUES (?1, ?2, ?3)",
        params![name, sha256, now],
    )?;
    tx.commit()?;
    Ok(Asset {
        name: name.to_owned(),
        sha256: sha256.to_owned(),
        size,
        created_ms: now,
    })
}

const SELECT: &str = "SELECT assets.name, assets.sha256, blobs.size, assets.created_ms
                        FROM assets JOIN blobs USING (sha256)";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Asset> {
    Ok(Asset {
        name: r.get(0)?,
        sha256: r.get(1)?,
        size: r.get::<_, i64>(2)? as u64,
        created_ms: r.get(3)?,
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

    fn sha(bytes: &[u8]) -> String {
        xq_proto::blob::sha256_hex(bytes)
    }

    #[test]
    fn assets_by_name_and_by_hash() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        let (a, b) = (b"net one".as_slice(), b"net two".as_slice());
        let added = add(&mut conn, "nn-1.bin", &sha(a), 7, a, 5).unwrap();
        assert_eq!(add(&mut conn, "nn-1.bin", &sha(a), 7, a, 6).unwrap(), added);
        let taken = add(&mut conn, "nn-1.bin", &sha(b), 7, b, 7).unwrap_err();
        assert!(
            taken.to_string().contains("'nn-1.bin' exists already"),
            "{taken}"
        );
        add(&mut conn, "copy", &sha(a), 7, a, 8).unwrap();
        assert_eq!(
            list(&conn)
                .unwrap()
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>(),
            ["copy", "nn-1.bin"]
        );
        assert_eq!(resolve(&conn, "nn-1.bin").unwrap(), sha(a));
        assert_eq!(resolve(&conn, &sha(a)).unwrap(), sha(a));
        let e = resolve(&conn, &sha(b)).unwrap_err().to_string();
        assert!(e.contains(&sha(b)), "{e}");
        let e = resolve(&conn, "nope.bin").unwrap_err().to_string();
        assert!(e.contains("no asset named 'nope.bin'"), "{e}");
        for bad in ["", "a b", &sha(b)] {
            assert!(add(&mut conn, bad, &sha(b), 7, b, 9).is_err(), "{bad:?}");
        }
        let e = add(&mut conn, "changed", &sha(b), 7, a, 9).unwrap_err();
        assert!(e.to_string().contains("source changed"), "{e}");
        assert_eq!(get(&conn, "changed").unwrap(), None);
    }

    #[test]
    fn a_book_is_checked_line_by_line() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        let start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
        let good = format!("# a book\n{start} moves h2e2\n\n{start} moves b2e2 h9g7\n");
        let bad = format!("{start}\n{start} moves h2e3\n");
        for (name, text) in [
            ("good", &good),
            ("bad", &bad),
            ("empty", &"# none\n".to_owned()),
        ] {
            add(
                &mut conn,
                name,
                &sha(text.as_bytes()),
                text.len() as u64,
                text.as_bytes(),
                1,
            )
            .unwrap();
        }
        assert_eq!(check_book(&conn, &sha(good.as_bytes())).unwrap(), 2);
        assert_eq!(check_book(&conn, "good").unwrap(), 2);
        let xq_proto::OpeningSource::Lines(lines) =
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
