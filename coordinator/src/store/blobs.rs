//! Content-addressed blobs (engine executables and assets) stored in chunks.
//!
//! A blob is a row of `blobs` (SHA-256, size) and its bytes in `blob_chunks`,
//! [`BLOB_CHUNK_BYTES`] per row (the last one shorter), so it is written and
//! read a chunk at a time and never held whole in memory. Chunks live in the
//! database itself, not in files next to it: a blob is added in the same
//! transaction as the engine or asset that names it, and the online backup
//! ([`super::backup`]) and restore carry the registry with everything else.

use std::io::Read;

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use xq_proto::blob::{BLOB_CHUNK_BYTES, MAX_BLOB_BYTES};

use super::StoreError;

/// Stores what `source` yields as the blob `sha256` of `size` bytes, unless
/// that blob is stored already (then `source` is not read). The bytes are
/// hashed as they are written: a source that does not give exactly `size`
/// bytes with that SHA-256 (a file changed since it was hashed) is refused,
/// and the caller's transaction must then be rolled back.
pub fn insert(
    conn: &Connection,
    sha256: &str,
    size: u64,
    mut source: impl Read,
) -> Result<(), StoreError> {
    if size > MAX_BLOB_BYTES {
        return Err(StoreError::invalid(
            "blob.size",
            format!("{size} bytes is more than the registry takes ({MAX_BLOB_BYTES})"),
        ));
    }
    if self::size(conn, sha256)?.is_some() {
        return Ok(());
    }
    conn.execute(
        "INSERT INTO blobs (sha256, size) VALUES (?1, ?2)",
        params![sha256, size as i64],
    )?;
    let mut insert =
        conn.prepare("INSERT INTO blob_chunks (sha256, seq, data) VALUES (?1, ?2, ?3)")?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BLOB_CHUNK_BYTES];
    let (mut seq, mut total) = (0i64, 0u64);
    loop {
        let n = fill(&mut source, &mut buf)
            .map_err(|e| StoreError::invalid("blob.source", format!("cannot be read: {e}")))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > size {
            break;
        }
        hasher.update(&buf[..n]);
        insert.execute(params![sha256, seq, &buf[..n]])?;
        seq += 1;
    }
    let got: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if total != size || got != sha256 {
        return Err(StoreError::invalid(
            "blob.source",
            format!(
                "the source changed while it was stored: expected {size} bytes with SHA-256 \
             {sha256}, read {total} bytes{}",
                if total == size {
                    format!(" with SHA-256 {got}")
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(())
}

/// Reads until `buf` is full or `source` ends; the number of bytes read.
fn fill(source: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match source.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The size in bytes of the blob `sha256`; `None` when it is not stored.
pub fn size(conn: &Connection, sha256: &str) -> Result<Option<u64>, StoreError> {
    Ok(conn
        .query_row("SELECT size FROM blobs WHERE sha256 = ?1", [sha256], |r| {
            r.get::<_, i64>(0)
        })
        .optional()?
        .map(|s| s as u64))
}

/// Chunk `seq` (0-based) of the blob `sha256`; `None` past its end.
pub fn chunk(conn: &Connection, sha256: &str, seq: u64) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT data FROM blob_chunks WHERE sha256 = ?1 AND seq = ?2",
            params![sha256, seq as i64],
            |r| r.get(0),
        )
        .optional()?)
}

/// Writes the blob `sha256` to `out` chunk by chunk; `false` when it is not stored.
pub fn write_to(
    conn: &Connection,
    sha256: &str,
    out: &mut impl std::io::Write,
) -> Result<bool, StoreError> {
    let Some(size) = size(conn, sha256)? else {
        return Ok(false);
    };
    let mut stmt = conn.prepare("SELECT data FROM blob_chunks WHERE sha256 = ?1 ORDER BY seq")?;
    let mut rows = stmt.query([sha256])?;
    let mut written = 0u64;
    while let Some(row) = rows.next()? {
        let data: Vec<u8> = row.get(0)?;
        out.write_all(&data).map_err(|e| {
            StoreError::invalid("out", format!("cannot write the blob {sha256}: {e}"))
        })?;
        written += data.len() as u64;
    }
    if written != size {
        return Err(StoreError::Schema(format!(
            "stored blob {sha256} has {written} of its {size} bytes"
        )));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn db() -> Connection {
        crate::store::migrations::memory()
    }

    #[test]
    fn a_blob_goes_in_and_out_in_chunks() {
        let conn = db();
        let bytes: Vec<u8> = (0..2 * BLOB_CHUNK_BYTES + 3)
            .map(|i| (i % 253) as u8)
            .collect();
        let h = sha(&bytes);
        insert(&conn, &h, bytes.len() as u64, &bytes[..]).unwrap();
        assert_eq!(size(&conn, &h).unwrap(), Some(bytes.len() as u64));
        let chunks: Vec<usize> = (0..4)
            .map(|i| chunk(&conn, &h, i).unwrap().map_or(0, |c| c.len()))
            .collect();
        assert_eq!(chunks, [BLOB_CHUNK_BYTES, BLOB_CHUNK_BYTES, 3, 0]);
        let mut out = Vec::new();
        assert!(write_to(&conn, &h, &mut out).unwrap());
        assert_eq!(out, bytes);
        assert!(!write_to(&conn, &"0".repeat(64), &mut out).unwrap());
        // Stored already: the source is not read again.
        insert(&conn, &h, bytes.len() as u64, &b"other"[..]).unwrap();
        assert_eq!(size(&conn, &"0".repeat(64)).unwrap(), None);
    }

    #[test]
    fn a_source_that_is_not_what_was_hashed_is_refused() {
        let mut conn = db();
        let h = sha(b"abc");
        for (given, size) in [(&b"abd"[..], 3), (&b"abcd"[..], 3), (&b"ab"[..], 3)] {
            let tx = conn.transaction().unwrap();
            let e = insert(&tx, &h, size, given).unwrap_err().to_string();
            assert!(e.contains("source changed") && e.contains(&h), "{e}");
            drop(tx);
            assert_eq!(size_of(&conn, &h), None, "rolled back");
        }
        let e = insert(&conn, &h, MAX_BLOB_BYTES + 1, &b""[..]).unwrap_err();
        assert!(
            e.to_string().contains("more than the registry takes"),
            "{e}"
        );
    }

    fn size_of(conn: &Connection, h: &str) -> Option<u64> {
        size(conn, h).unwrap()
    }
}
