//! Content-addressed blobs of the registry (engine executables and assets:
//! network files, opening books) and the `asset:` references that name them.
//!
//! A blob is stored and streamed in chunks of [`BLOB_CHUNK_BYTES`] (the last
//! one shorter), so neither the coordinator nor a worker holds a whole blob
//! in memory.

use std::io::Read;

use sha2::{Digest, Sha256};

/// Bytes per chunk, in the store and on the wire (`DownloadBlob`).
pub const BLOB_CHUNK_BYTES: usize = 1 << 20;

/// The largest blob the registry takes, in bytes (networks run to hundreds of MiB).
pub const MAX_BLOB_BYTES: u64 = 4 << 30;

/// The largest blob an upload over the wire announces (`UploadBlob`), in
/// bytes: 1 GiB. The database file's `engine add` and `asset add` take up to
/// [`MAX_BLOB_BYTES`].
pub const MAX_UPLOAD_BYTES: u64 = 1 << 30;

/// What an upload announces before its bytes (`UploadHeader` on the wire).
///
/// Invariants (checked on the wire, [`BlobHeader::validate`]): `sha256` is 64
/// lowercase hex digits; `size` is at most [`MAX_UPLOAD_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobHeader {
    /// SHA-256 of the whole blob, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// What it is uploaded to become, which the uploader must be allowed to
    /// register before a byte is stored.
    pub purpose: UploadPurpose,
}

/// What an uploaded blob is to become (`UploadPurpose` on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadPurpose {
    /// An executable of the engine of this name (1 to 64 characters).
    Engine(String),
    /// The asset of this name.
    Asset(String),
    /// An `xq-worker` executable, to be a worker release (admins only).
    WorkerRelease,
}

impl std::fmt::Display for UploadPurpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UploadPurpose::Engine(name) => write!(f, "engine {}", crate::quote(name)),
            UploadPurpose::Asset(name) => write!(f, "asset {}", crate::quote(name)),
            UploadPurpose::WorkerRelease => f.write_str("a worker release"),
        }
    }
}

/// The prefix of an option value or `--book` argument that names an asset.
pub const ASSET_PREFIX: &str = "asset:";

/// What follows [`ASSET_PREFIX`] in `value` (a SHA-256 or an asset name), or
/// `None` when `value` names no asset.
pub fn asset_reference(value: &str) -> Option<&str> {
    value.strip_prefix(ASSET_PREFIX).map(str::trim)
}

/// The SHA-256 a resolved option value names (`asset:<64 hex digits>`).
pub fn asset_sha256(value: &str) -> Option<&str> {
    asset_reference(value).filter(|s| crate::is_sha256_hex(s))
}

/// Reads from `source` until `buf` is full or `source` ends; the number of
/// bytes read (less than `buf.len()` only at the end), so a blob is cut into
/// whole chunks whatever sizes a reader's `read` returns.
pub fn fill(source: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
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

/// The number of chunks of a blob of `size` bytes.
pub fn chunk_count(size: u64) -> u64 {
    size.div_ceil(BLOB_CHUNK_BYTES as u64)
}

/// `digest` as lowercase hex, two digits per byte.
pub fn lower_hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    lower_hex(&Sha256::digest(bytes))
}

/// The SHA-256 (lowercase hex) and size of what `reader` yields, read in
/// chunks of [`BLOB_CHUNK_BYTES`].
pub fn sha256_of_reader(mut reader: impl Read) -> std::io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BLOB_CHUNK_BYTES];
    let mut size = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok((lower_hex(&hasher.finalize()), size));
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_chunk_counts() {
        let sha = "ab".repeat(32);
        assert_eq!(asset_reference("asset:nn.bin"), Some("nn.bin"));
        assert_eq!(asset_reference("/tmp/nn.bin"), None);
        assert_eq!(asset_sha256(&format!("asset:{sha}")), Some(sha.as_str()));
        assert_eq!(asset_sha256("asset:nn.bin"), None);
        assert_eq!(chunk_count(0), 0);
        assert_eq!(chunk_count(1), 1);
        assert_eq!(chunk_count(BLOB_CHUNK_BYTES as u64), 1);
        assert_eq!(chunk_count(BLOB_CHUNK_BYTES as u64 + 1), 2);
    }
}
