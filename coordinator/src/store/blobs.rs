//! Content-addressed blobs (engine executables and assets) stored in chunks.
//!
//! A blob is a row of `blobs` (SHA-256, size) and its bytes in `blob_chunks`,
//! [`BLOB_CHUNK_BYTES`] per row (the last one shorter), so it is written and
//! read a chunk at a time and never held whole in memory. Chunks live in the
//! database itself, not in files next to it: the online backup
//! ([`super::backup`]) and restore carry the registry with everything else.
//!
//! Two ways in:
//!
//! * [`insert`], in the caller's transaction: the unit tests' way to store
//!   a blob and register it in the same transaction (every door uploads).
//! * An upload over the wire, which must not hold the one writer for as
//!   long as its bytes take to arrive: [`begin_upload`] stores the row
//!   marked pending (`pending_ms`), each chunk is committed on its own
//!   ([`append_chunk`]), and [`complete_upload`] clears the mark once the
//!   uploader has checked the SHA-256 of what it wrote, in one short
//!   transaction. A broken upload is removed a few chunks per transaction
//!   ([`discard_chunks`], then [`discard_pending`]); [`pending`] lists the
//!   leftovers of a crash.
//!
//! Readers ([`size`], [`write_to`], and through them downloads and
//! registrations) see only complete blobs.
//!
//! One way out: a complete blob that nothing references ([`referenced`]:
//! no engine, asset, worker release or run) and whose upload began before a
//! grace period ([`unreferenced`]) is marked pending ([`collect`]) and
//! deleted as a broken upload is. The grace period is the time between an
//! upload and the registration that references it.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::blob::BLOB_CHUNK_BYTES;

use super::StoreError;

/// Stores what `source` yields as the blob `sha256` of `size` bytes, unless
/// that blob is stored already (then `source` is not read). The bytes are
/// hashed as they are written: a source that does not give exactly `size`
/// bytes with that SHA-256 (a file changed since it was hashed) is refused,
/// and the caller's transaction must then be rolled back. Tests only: the
/// doors upload ([`begin_upload`]).
#[cfg(test)]
pub fn insert(
    conn: &Connection,
    sha256: &str,
    size: u64,
    mut source: impl std::io::Read,
) -> Result<(), StoreError> {
    use sha2::{Digest, Sha256};
    use xq_proto::blob::MAX_BLOB_BYTES;
    if size > MAX_BLOB_BYTES {
        return Err(StoreError::invalid(
            "blob.size",
            format!("{size} bytes is more than the registry takes ({MAX_BLOB_BYTES})"),
        ));
    }
    match state(conn, sha256)? {
        BlobState::Complete { .. } => return Ok(()),
        BlobState::Pending => return Err(in_progress(sha256)),
        BlobState::Absent => {}
    }
    conn.execute(
        "INSERT INTO blobs (sha256, size, stored_ms) VALUES (?1, ?2, 0)",
        params![sha256, size as i64],
    )?;
    let mut insert =
        conn.prepare("INSERT INTO blob_chunks (sha256, seq, data) VALUES (?1, ?2, ?3)")?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BLOB_CHUNK_BYTES];
    let (mut seq, mut total) = (0i64, 0u64);
    loop {
        let n = xq_proto::blob::fill(&mut source, &mut buf)
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

/// The size in bytes of the blob `sha256`; `None` when it is not stored
/// (or its upload is not complete).
pub fn size(conn: &Connection, sha256: &str) -> Result<Option<u64>, StoreError> {
    Ok(match state(conn, sha256)? {
        BlobState::Complete { size } => Some(size),
        BlobState::Pending | BlobState::Absent => None,
    })
}

/// Where a blob stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobState {
    /// Stored, `size` bytes, readable.
    Complete { size: u64 },
    /// An upload of it is in progress (or was cut off by a crash).
    Pending,
    /// Not stored.
    Absent,
}

/// Where the blob `sha256` stands.
pub fn state(conn: &Connection, sha256: &str) -> Result<BlobState, StoreError> {
    let row = conn
        .prepare_cached("SELECT size, pending_ms IS NOT NULL FROM blobs WHERE sha256 = ?1")?
        .query_row([sha256], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, bool>(1)?))
        })
        .optional()?;
    Ok(match row {
        None => BlobState::Absent,
        Some((_, true)) => BlobState::Pending,
        Some((size, false)) => BlobState::Complete { size: size as u64 },
    })
}

fn in_progress(sha256: &str) -> StoreError {
    StoreError::invalid(
        "blob.sha256",
        format!("an upload of blob {sha256} is in progress; retry when it ends"),
    )
}

/// Bytes of the blobs the uploads of the user `uploader` stored, complete
/// or in progress (what an upload quota counts).
pub fn uploaded_bytes(conn: &Connection, uploader: u64) -> Result<u64, StoreError> {
    let total: i64 = conn.query_row(
        "SELECT COALESCE(SUM(size), 0) FROM blobs WHERE uploader_id = ?1",
        [uploader as i64],
        |r| r.get(0),
    )?;
    Ok(super::count(total))
}

/// Starts an upload of the blob `sha256` of `size` bytes by the user
/// `uploader` at `now`: its row, pending. The blob must be absent.
pub fn begin_upload(
    conn: &Connection,
    sha256: &str,
    size: u64,
    uploader: u64,
    now: i64,
) -> Result<(), StoreError> {
    match state(conn, sha256)? {
        BlobState::Absent => {}
        BlobState::Pending => return Err(in_progress(sha256)),
        BlobState::Complete { .. } => {
            return Err(StoreError::invalid(
                "blob.sha256",
                format!("blob {sha256} is stored already"),
            ));
        }
    }
    conn.execute(
        "INSERT INTO blobs (sha256, size, pending_ms, uploader_id) VALUES (?1, ?2, ?3, ?4)",
        params![sha256, size as i64, now, uploader as i64],
    )?;
    Ok(())
}

/// Stores chunk `seq` of the pending blob `sha256`. Refused when no upload
/// of it is pending (it was discarded meanwhile).
pub fn append_chunk(
    conn: &Connection,
    sha256: &str,
    seq: u64,
    data: &[u8],
) -> Result<(), StoreError> {
    let n = conn
        .prepare_cached(
            "INSERT INTO blob_chunks (sha256, seq, data)
             SELECT ?1, ?2, ?3 WHERE EXISTS
                 (SELECT 1 FROM blobs WHERE sha256 = ?1 AND pending_ms IS NOT NULL)",
        )?
        .execute(params![sha256, seq as i64, data])?;
    if n == 0 {
        return Err(StoreError::NotFound(format!(
            "no upload of blob {sha256} is in progress"
        )));
    }
    Ok(())
}

/// Marks the pending blob `sha256` complete, once its uploader has checked
/// that the bytes it wrote have that SHA-256. Its chunks must be exactly
/// the [`BLOB_CHUNK_BYTES`]-byte pieces of its announced size.
pub fn complete_upload(conn: &Connection, sha256: &str) -> Result<u64, StoreError> {
    let Some((size, chunks, bytes, full)): Option<(i64, i64, i64, i64)> = conn
        .query_row(
            "SELECT blobs.size, COUNT(blob_chunks.seq), COALESCE(SUM(length(blob_chunks.data)), 0),
                    COUNT(CASE WHEN length(blob_chunks.data) = ?2 THEN 1 END)
               FROM blobs LEFT JOIN blob_chunks USING (sha256)
              WHERE blobs.sha256 = ?1 AND blobs.pending_ms IS NOT NULL
              GROUP BY blobs.sha256",
            params![sha256, BLOB_CHUNK_BYTES as i64],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?
    else {
        return Err(StoreError::NotFound(format!(
            "no upload of blob {sha256} is in progress"
        )));
    };
    let size = size as u64;
    let expected = xq_proto::blob::chunk_count(size) as i64;
    let full_expected = (size / BLOB_CHUNK_BYTES as u64) as i64;
    if chunks != expected || bytes as u64 != size || full != full_expected {
        return Err(StoreError::Schema(format!(
            "the upload of blob {sha256} stored {chunks} chunks of {bytes} bytes for its {size}"
        )));
    }
    conn.execute(
        "UPDATE blobs SET stored_ms = pending_ms, pending_ms = NULL WHERE sha256 = ?1",
        [sha256],
    )?;
    Ok(size)
}

/// Deletes up to `at_most` chunks of the pending blob `sha256`; how many it
/// deleted (0: none are left). A complete blob is never touched.
pub fn discard_chunks(conn: &Connection, sha256: &str, at_most: u64) -> Result<u64, StoreError> {
    let n = conn.execute(
        "DELETE FROM blob_chunks WHERE rowid IN
             (SELECT blob_chunks.rowid FROM blob_chunks JOIN blobs USING (sha256)
               WHERE sha256 = ?1 AND blobs.pending_ms IS NOT NULL LIMIT ?2)",
        params![sha256, at_most.min(i64::MAX as u64) as i64],
    )?;
    Ok(n as u64)
}

/// Deletes the row of the pending blob `sha256` once its chunks are gone
/// ([`discard_chunks`]); whether there was one.
pub fn discard_pending(conn: &Connection, sha256: &str) -> Result<bool, StoreError> {
    let n = conn.execute(
        "DELETE FROM blobs WHERE sha256 = ?1 AND pending_ms IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM blob_chunks WHERE sha256 = ?1)",
        [sha256],
    )?;
    Ok(n > 0)
}

/// The SHA-256 of every pending blob, oldest upload first.
pub fn pending(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT sha256 FROM blobs WHERE pending_ms IS NOT NULL ORDER BY pending_ms")?;
    Ok(stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// The SHA-256 of every blob something references: an engine's executable,
/// an asset, a worker release, and any SHA-256 written in a run's spec or an
/// engine's options (a run names its engines' executables and its book;
/// `asset:<sha256>` option values name assets). The columns that reference
/// `blobs`, and every text that may name one, are all read here: a blob
/// outside this set can be deleted ([`collect`]).
pub fn referenced(conn: &Connection) -> Result<HashSet<String>, StoreError> {
    let mut found = HashSet::new();
    let mut stmt = conn.prepare(
        "SELECT sha256 FROM engine_binaries
         UNION SELECT sha256 FROM assets
         UNION SELECT sha256 FROM worker_releases",
    )?;
    for sha in stmt.query_map([], |r| r.get::<_, String>(0))? {
        found.insert(sha?);
    }
    let mut stmt = conn.prepare("SELECT spec FROM runs UNION ALL SELECT options FROM engines")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        found.extend(hex_words(&text, 64));
    }
    Ok(found)
}

/// The runs of exactly `digits` lowercase hex digits in `text`.
fn hex_words(text: &str, digits: usize) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_digit() || ('a'..='f').contains(&c)))
        .filter(move |w| w.len() == digits)
        .map(str::to_owned)
}

/// The complete blobs whose upload began before `before` (unix ms) that
/// nothing references ([`referenced`]), oldest first, with their sizes.
pub fn unreferenced(conn: &Connection, before: i64) -> Result<Vec<(String, u64)>, StoreError> {
    let referenced = referenced(conn)?;
    let mut stmt = conn.prepare(
        "SELECT sha256, size FROM blobs
          WHERE pending_ms IS NULL AND COALESCE(stored_ms, 0) < ?1
          ORDER BY stored_ms, sha256",
    )?;
    let rows = stmt.query_map([before], |r| {
        Ok((r.get::<_, String>(0)?, super::count(r.get(1)?)))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (sha, size) = row?;
        if !referenced.contains(&sha) {
            out.push((sha, size));
        }
    }
    Ok(out)
}

/// Starts deleting the complete blob `sha256` if nothing references it now
/// and its upload began before `before`: marks it pending at `now`, so no
/// reader sees it and no registration takes it, and its chunks and row are
/// then deleted as a broken upload's are ([`discard_chunks`],
/// [`discard_pending`]; a stop halfway leaves a pending blob, which the
/// next start deletes). Whether it was marked. Call in a transaction.
pub fn collect(conn: &Connection, sha256: &str, before: i64, now: i64) -> Result<bool, StoreError> {
    if referenced(conn)?.contains(sha256) {
        return Ok(false);
    }
    let n = conn.execute(
        "UPDATE blobs SET pending_ms = ?3
          WHERE sha256 = ?1 AND pending_ms IS NULL AND COALESCE(stored_ms, 0) < ?2",
        params![sha256, before, now],
    )?;
    Ok(n > 0)
}

/// Chunk `seq` (0-based) of the blob `sha256`; `None` past its end. Read
/// only chunks of a blob [`size`] found.
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
    use sha2::{Digest, Sha256};
    use xq_proto::blob::MAX_BLOB_BYTES;

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

    #[test]
    fn an_upload_is_invisible_until_complete_and_leaves_nothing_when_discarded() {
        let conn = db();
        let user = crate::store::users::insert(
            &conn,
            "ana",
            crate::access::UserRole::Developer,
            None,
            false,
            1,
        )
        .unwrap();
        let bytes: Vec<u8> = (0..BLOB_CHUNK_BYTES + 5).map(|i| (i % 251) as u8).collect();
        let h = sha(&bytes);
        let size = bytes.len() as u64;
        begin_upload(&conn, &h, size, user, 7).unwrap();
        assert_eq!(state(&conn, &h).unwrap(), BlobState::Pending);
        assert_eq!(size_of(&conn, &h), None, "readers do not see it");
        assert_eq!(uploaded_bytes(&conn, user).unwrap(), size);
        let e = begin_upload(&conn, &h, size, user, 8).unwrap_err();
        assert!(e.to_string().contains("in progress"), "{e}");
        let e = insert(&conn, &h, size, &bytes[..]).unwrap_err();
        assert!(e.to_string().contains("in progress"), "{e}");
        append_chunk(&conn, &h, 0, &bytes[..BLOB_CHUNK_BYTES]).unwrap();
        let e = complete_upload(&conn, &h).unwrap_err();
        assert!(e.to_string().contains("1 chunks"), "{e}");
        append_chunk(&conn, &h, 1, &bytes[BLOB_CHUNK_BYTES..]).unwrap();
        assert_eq!(pending(&conn).unwrap(), std::slice::from_ref(&h));
        assert_eq!(complete_upload(&conn, &h).unwrap(), size);
        assert_eq!(size_of(&conn, &h), Some(size));
        assert!(pending(&conn).unwrap().is_empty());
        assert_eq!(discard_chunks(&conn, &h, 10).unwrap(), 0, "complete: kept");
        assert!(!discard_pending(&conn, &h).unwrap());
        let mut out = Vec::new();
        assert!(write_to(&conn, &h, &mut out).unwrap());
        assert_eq!(out, bytes);
        let e = begin_upload(&conn, &h, size, user, 9).unwrap_err();
        assert!(e.to_string().contains("stored already"), "{e}");

        let other = sha(b"cut off");
        begin_upload(&conn, &other, 7, user, 10).unwrap();
        append_chunk(&conn, &other, 0, b"cut").unwrap();
        assert!(!discard_pending(&conn, &other).unwrap(), "chunks first");
        assert_eq!(discard_chunks(&conn, &other, 10).unwrap(), 1);
        assert!(discard_pending(&conn, &other).unwrap());
        assert_eq!(state(&conn, &other).unwrap(), BlobState::Absent);
        let e = append_chunk(&conn, &other, 1, b" off").unwrap_err();
        assert!(matches!(e, StoreError::NotFound(_)), "{e}");
        assert_eq!(uploaded_bytes(&conn, user).unwrap(), size);
    }

    fn size_of(conn: &Connection, h: &str) -> Option<u64> {
        size(conn, h).unwrap()
    }
}
