//! A blob streamed into the store as it arrives: the incremental writer
//! behind `UploadBlob` and the web view's upload form.
//!
//! An upload never holds the whole blob in memory, nor the store's one
//! writer for its whole length: [`Registry::begin_upload`] stores the blob's row
//! marked pending (checking, in the same transaction, that the uploader may
//! register what the blob is for and the uploader's quota),
//! [`BlobWriter::write`] hashes what arrives and commits every full chunk
//! ([`BLOB_CHUNK_BYTES`]) in a transaction of its own, and
//! [`BlobWriter::finish`] checks the size and SHA-256 and marks the blob
//! complete in one short transaction. Until then no reader sees it.
//!
//! Whatever goes wrong (bytes past the announced size, too few, another
//! hash, a client gone, a store error) leaves nothing stored: the writer
//! deletes what it wrote, a few chunks per transaction, before it answers;
//! a writer dropped unfinished (its request cancelled) does so too. The
//! start of an upload and every deletion run on tasks of their own, so a
//! request cancelled halfway (its future dropped) cannot leave a pending row
//! without a writer that deletes it. The leftovers of a crash are deleted
//! when the server starts ([`Registry::discard_leftover_uploads`]).

use sha2::{Digest, Sha256};
use xq_proto::Invalid;
use xq_proto::blob::{BLOB_CHUNK_BYTES, BlobHeader, UploadPurpose, lower_hex};

use super::Registry;
use crate::access::UserRole;
use crate::store::assets::NewAsset;
use crate::store::blobs::{self, BlobState};
use crate::store::{Store, StoreError, assets, engines, now_ms, users, worker_releases};

/// Chunks deleted per transaction when an upload is discarded (16 MiB).
const DISCARD_CHUNKS: u64 = 16;

/// Why an upload was refused or failed; nothing of it is stored.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Another upload of the same blob is in progress (retry when it ends).
    #[error("an upload of blob {0} is in progress; retry when it ends")]
    InProgress(String),
    /// The upload would take the user past their quota.
    #[error(
        "uploading {size} bytes would take your uploads to {} bytes, over the quota of {quota}",
        stored + size
    )]
    OverQuota { stored: u64, size: u64, quota: u64 },
    /// The bytes are not what the header announced.
    #[error("{0}")]
    Refused(#[from] Invalid),
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// How many bytes of blobs one user's uploads may store in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadQuota {
    /// Bytes per user (complete and in-progress uploads); `None`: no cap.
    /// Admins are never capped.
    pub bytes_per_user: Option<u64>,
}

impl Default for UploadQuota {
    /// 8 GiB per user (`serve --upload-quota-mib 8192`): a few dozen
    /// engines and networks.
    fn default() -> Self {
        UploadQuota {
            bytes_per_user: Some(8 << 30),
        }
    }
}

/// What the start of an upload ([`Registry::begin_upload`]) found.
#[derive(Debug)]
pub enum Begun {
    /// The blob is stored already (`size` bytes): nothing to send.
    Stored { size: u64 },
    /// Send the bytes here.
    Writing(Box<BlobWriter>),
}

/// The blob's state as the start of an upload finds it.
enum Start {
    Stored(u64),
    Busy,
    OverQuota(u64),
    Begun,
}

/// Starts the upload of the blob `header` announces on `store`, by the
/// user `uploader`: answered at once when the blob is stored already. Runs
/// on a task of its own: if the caller goes away meanwhile, the writer it
/// would have had is dropped, and discards the upload.
pub(super) async fn begin_on(
    store: Store,
    quota: UploadQuota,
    header: BlobHeader,
    uploader: u64,
) -> Result<Begun, UploadError> {
    tokio::spawn(begin(store, quota.bytes_per_user, header, uploader))
        .await
        .map_err(|e| StoreError::Join(format!("the start of an upload failed: {e}")))?
}

/// [`begin_on`]'s work: the row, pending, in one transaction with
/// the quota's check.
async fn begin(
    store: Store,
    quota: Option<u64>,
    header: BlobHeader,
    uploader: u64,
) -> Result<Begun, UploadError> {
    let (sha256, size, purpose) = (header.sha256.clone(), header.size, header.purpose.clone());
    let start = store
        .call(move |conn| {
            let tx = conn.savepoint()?;
            permit(&tx, uploader, &purpose, &sha256, size)?;
            match blobs::state(&tx, &sha256)? {
                BlobState::Complete { size } => return Ok(Start::Stored(size)),
                BlobState::Pending => return Ok(Start::Busy),
                BlobState::Absent => {}
            }
            if let Some(quota) = quota
                && users::by_id(&tx, uploader)?.role != UserRole::Admin
            {
                let stored = blobs::uploaded_bytes(&tx, uploader)?;
                if stored.saturating_add(size) > quota {
                    return Ok(Start::OverQuota(stored));
                }
            }
            blobs::begin_upload(&tx, &sha256, size, uploader, now_ms())?;
            tx.commit()?;
            Ok(Start::Begun)
        })
        .await?;
    match start {
        Start::Stored(stored) if stored == header.size => Ok(Begun::Stored { size: stored }),
        Start::Stored(stored) => Err(Invalid::new(
            "header.size",
            format!(
                "blob {} is stored with {stored} bytes, not {}",
                header.sha256, header.size
            ),
        )
        .into()),
        Start::Busy => Err(UploadError::InProgress(header.sha256)),
        Start::OverQuota(stored) => Err(UploadError::OverQuota {
            stored,
            size: header.size,
            quota: quota.unwrap_or(u64::MAX),
        }),
        Start::Begun => Ok(Begun::Writing(Box::new(BlobWriter {
            store,
            header,
            hasher: Sha256::new(),
            buffer: Vec::with_capacity(BLOB_CHUNK_BYTES),
            seq: 0,
            received: 0,
            open: true,
        }))),
    }
}

/// Refuses an upload by the user `uploader` of what they may not register
/// as `purpose` (the blob `sha256` of `size` bytes): a worker release by
/// anyone but an admin, an engine or asset name another user registered,
/// an asset name registered with other bytes. The registrations check the
/// same again; this check only keeps a refused upload from being stored.
fn permit(
    conn: &rusqlite::Connection,
    uploader: u64,
    purpose: &UploadPurpose,
    sha256: &str,
    size: u64,
) -> Result<(), StoreError> {
    match purpose {
        UploadPurpose::WorkerRelease => worker_releases::check_may_register(conn, uploader),
        UploadPurpose::Engine(name) => engines::refuse_taken(conn, name, uploader).map(|_| ()),
        UploadPurpose::Asset(name) => {
            let new = NewAsset {
                name: name.clone(),
                sha256: sha256.to_owned(),
                size,
            };
            assets::existing(conn, &new, uploader).map(|_| ())
        }
    }
}

/// One upload in progress: takes the bytes in order. Holds at most one
/// chunk ([`BLOB_CHUNK_BYTES`]) of them.
#[derive(Debug)]
pub struct BlobWriter {
    store: Store,
    header: BlobHeader,
    hasher: Sha256,
    /// Bytes received and not yet stored: less than a chunk.
    buffer: Vec<u8>,
    /// The next chunk's number.
    seq: u64,
    /// Bytes received so far.
    received: u64,
    /// Rows of this upload may be stored: they must go unless it finishes.
    open: bool,
}

impl BlobWriter {
    /// Takes the next bytes, committing each chunk they complete. On an
    /// error the upload is discarded (and every later call refused).
    pub async fn write(&mut self, mut data: &[u8]) -> Result<(), UploadError> {
        if !self.open {
            return Err(StoreError::NotFound("this upload was discarded".to_owned()).into());
        }
        let end = self.received.saturating_add(data.len() as u64);
        if end > self.header.size {
            let why = Invalid::new(
                "data",
                format!(
                    "{end} bytes sent, more than the {} announced",
                    self.header.size
                ),
            );
            return Err(self.fail(why.into()).await);
        }
        self.received = end;
        self.hasher.update(data);
        while !data.is_empty() {
            let take = data.len().min(BLOB_CHUNK_BYTES - self.buffer.len());
            self.buffer.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buffer.len() == BLOB_CHUNK_BYTES
                && let Err(e) = self.flush().await
            {
                return Err(self.fail(e).await);
            }
        }
        Ok(())
    }

    /// Ends the upload: the size and SHA-256 are checked and the blob
    /// marked complete; its size. On an error nothing is kept.
    pub async fn finish(mut self) -> Result<u64, UploadError> {
        if self.received != self.header.size {
            let why = Invalid::new(
                "data",
                format!(
                    "the upload ended after {} of its {} bytes",
                    self.received, self.header.size
                ),
            );
            return Err(self.fail(why.into()).await);
        }
        let digest = lower_hex(&std::mem::take(&mut self.hasher).finalize());
        if digest != self.header.sha256 {
            let why = Invalid::new(
                "data",
                format!(
                    "the bytes hash to {digest}, not to the announced {}",
                    self.header.sha256
                ),
            );
            return Err(self.fail(why.into()).await);
        }
        if !self.buffer.is_empty()
            && let Err(e) = self.flush().await
        {
            return Err(self.fail(e).await);
        }
        let sha256 = self.header.sha256.clone();
        match self
            .store
            .call(move |conn| blobs::complete_upload(conn, &sha256))
            .await
        {
            Ok(size) => {
                self.open = false;
                Ok(size)
            }
            Err(e) => Err(self.fail(e.into()).await),
        }
    }

    /// Drops the upload and deletes what it stored.
    pub async fn discard(mut self) {
        self.open = false;
        discard(&self.store, self.header.sha256.clone()).await;
    }

    /// Stores the buffered chunk.
    async fn flush(&mut self) -> Result<(), UploadError> {
        let data = std::mem::replace(&mut self.buffer, Vec::with_capacity(BLOB_CHUNK_BYTES));
        let (sha256, seq) = (self.header.sha256.clone(), self.seq);
        self.store
            .call(move |conn| blobs::append_chunk(conn, &sha256, seq, &data))
            .await?;
        self.seq += 1;
        Ok(())
    }

    /// Discards the upload and returns `e`.
    async fn fail(&mut self, e: UploadError) -> UploadError {
        if self.open {
            self.open = false;
            discard(&self.store, self.header.sha256.clone()).await;
        }
        e
    }
}

impl Drop for BlobWriter {
    /// An upload dropped unfinished (its request cancelled) is discarded
    /// on a task of its own.
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let (store, sha256) = (self.store.clone(), self.header.sha256.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(discard_now(store, sha256));
            }
            Err(_) => tracing::error!(
                %sha256,
                "an unfinished upload outlived its runtime; the next start deletes it"
            ),
        }
    }
}

/// Deletes the pending blob `sha256`, [`DISCARD_CHUNKS`] chunks per
/// transaction, then its row, on a task of its own (it finishes even if the
/// caller goes away). A failure is logged (the next start deletes what is
/// left).
pub(super) async fn discard(store: &Store, sha256: String) {
    let _ = tokio::spawn(discard_now(store.clone(), sha256)).await;
}

async fn discard_now(store: Store, sha256: String) {
    let result: Result<(), StoreError> = async {
        loop {
            let sha = sha256.clone();
            let deleted = store
                .call(move |conn| blobs::discard_chunks(conn, &sha, DISCARD_CHUNKS))
                .await?;
            if deleted == 0 {
                break;
            }
        }
        let sha = sha256.clone();
        store
            .call(move |conn| blobs::discard_pending(conn, &sha))
            .await?;
        Ok(())
    }
    .await;
    match result {
        Ok(()) => tracing::info!(%sha256, "unfinished upload discarded"),
        Err(e) => tracing::error!(%sha256, error = %e, "cannot discard an unfinished upload"),
    }
}

impl Registry {
    /// Refuses `actor`'s upload of a blob for `purpose` that they may not
    /// register, before its bytes are known: the web view's form checks
    /// this before it reads the file ([`Registry::begin_upload`] checks
    /// again with the blob's SHA-256). An asset name registered already is
    /// refused here whoever owns it (its bytes are not known yet).
    pub async fn check_upload(
        &self,
        actor: &crate::events::Actor,
        purpose: UploadPurpose,
    ) -> Result<(), StoreError> {
        let uploader = super::owner_of(actor)?;
        self.store
            .call(move |conn| permit(conn, uploader, &purpose, "", 0))
            .await
    }

    /// Deletes every pending blob: what uploads cut off by a crash left.
    /// Called when the server starts, before it serves (no upload is in
    /// progress then; the database file's commands never leave a blob
    /// pending). Returns how many there were.
    pub async fn discard_leftover_uploads(&self) -> Result<usize, StoreError> {
        let pending = self.store.call(|conn| blobs::pending(conn)).await?;
        for sha256 in &pending {
            discard(&self.store, sha256.clone()).await;
        }
        Ok(pending.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry's uploads by user id.
    struct Uploads(Registry);

    impl Uploads {
        fn new(store: Store, quota: UploadQuota) -> Self {
            Uploads(Registry::new(store, quota))
        }

        async fn begin(&self, header: BlobHeader, uploader: u64) -> Result<Begun, UploadError> {
            let actor = crate::events::Actor::user(uploader, "uploader");
            self.0.begin_upload(&actor, header).await
        }
    }

    async fn discard_leftovers(store: &Store) -> Result<usize, StoreError> {
        Registry::new(store.clone(), UploadQuota::default())
            .discard_leftover_uploads()
            .await
    }

    async fn user(store: &Store, name: &str, role: UserRole) -> u64 {
        let name = name.to_owned();
        store
            .call(move |conn| users::insert(conn, &name, role, None, false, 1))
            .await
            .unwrap()
    }

    fn header(bytes: &[u8]) -> BlobHeader {
        BlobHeader {
            sha256: xq_proto::blob::sha256_hex(bytes),
            size: bytes.len() as u64,
            purpose: UploadPurpose::Asset("nn.bin".to_owned()),
        }
    }

    async fn rows(store: &Store) -> (i64, i64) {
        store
            .call(|conn| {
                let count = |t: &str| {
                    conn.query_row(&format!("SELECT COUNT(*) FROM {t}"), [], |r| r.get(0))
                };
                Ok((count("blobs")?, count("blob_chunks")?))
            })
            .await
            .unwrap()
    }

    fn writing(begun: Begun) -> BlobWriter {
        match begun {
            Begun::Writing(w) => *w,
            Begun::Stored { .. } => panic!("stored already"),
        }
    }

    #[tokio::test]
    async fn bytes_in_odd_pieces_are_stored_in_whole_chunks() {
        let store = Store::open_in_memory().unwrap();
        let ana = user(&store, "ana", UserRole::Developer).await;
        let uploads = Uploads::new(store.clone(), UploadQuota::default());
        let bytes: Vec<u8> = (0..2 * BLOB_CHUNK_BYTES + 77)
            .map(|i| (i * 7 % 256) as u8)
            .collect();
        let mut w = writing(uploads.begin(header(&bytes), ana).await.unwrap());
        let e = uploads.begin(header(&bytes), ana).await.unwrap_err();
        assert!(matches!(e, UploadError::InProgress(_)), "{e}");
        for piece in bytes.chunks(300_001) {
            w.write(piece).await.unwrap();
        }
        assert_eq!(w.finish().await.unwrap(), bytes.len() as u64);
        assert_eq!(rows(&store).await, (1, 3));
        let h = header(&bytes).sha256;
        let back = store
            .call(move |conn| {
                let mut out = Vec::new();
                blobs::write_to(conn, &h, &mut out)?;
                Ok(out)
            })
            .await
            .unwrap();
        assert_eq!(back, bytes);
        match uploads.begin(header(&bytes), ana).await.unwrap() {
            Begun::Stored { size } => assert_eq!(size, bytes.len() as u64),
            Begun::Writing(_) => panic!("uploaded twice"),
        }
        let mut lie = header(&bytes);
        lie.size += 1;
        let e = uploads.begin(lie, ana).await.unwrap_err();
        assert!(e.to_string().contains("is stored with"), "{e}");
        let empty = writing(uploads.begin(header(b""), ana).await.unwrap());
        assert_eq!(empty.finish().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_lying_or_broken_upload_leaves_nothing() {
        let store = Store::open_in_memory().unwrap();
        let ana = user(&store, "ana", UserRole::Developer).await;
        let uploads = Uploads::new(store.clone(), UploadQuota::default());
        let bytes = vec![9u8; BLOB_CHUNK_BYTES + 10];

        let mut other = header(&bytes);
        other.sha256 = xq_proto::blob::sha256_hex(b"something else");
        let mut w = writing(uploads.begin(other, ana).await.unwrap());
        w.write(&bytes).await.unwrap();
        assert_eq!(rows(&store).await, (1, 1), "a full chunk is committed");
        let e = w.finish().await.unwrap_err();
        assert!(e.to_string().contains("not to the announced"), "{e}");
        assert_eq!(rows(&store).await, (0, 0));

        let mut w = writing(uploads.begin(header(&bytes), ana).await.unwrap());
        w.write(&bytes[..BLOB_CHUNK_BYTES + 1]).await.unwrap();
        let e = w.finish().await.unwrap_err();
        assert!(e.to_string().contains("ended after"), "{e}");
        assert_eq!(rows(&store).await, (0, 0));

        let mut w = writing(uploads.begin(header(&bytes), ana).await.unwrap());
        w.write(&bytes).await.unwrap();
        let e = w.write(b"x").await.unwrap_err();
        assert!(e.to_string().contains("more than the"), "{e}");
        assert!(w.write(b"x").await.is_err(), "discarded");
        assert_eq!(rows(&store).await, (0, 0));

        let mut w = writing(uploads.begin(header(&bytes), ana).await.unwrap());
        w.write(&bytes[..BLOB_CHUNK_BYTES]).await.unwrap();
        w.discard().await;
        assert_eq!(rows(&store).await, (0, 0));

        let mut w = writing(uploads.begin(header(&bytes), ana).await.unwrap());
        w.write(&bytes[..BLOB_CHUNK_BYTES]).await.unwrap();
        drop(w);
        for _ in 0..200 {
            if rows(&store).await == (0, 0) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(rows(&store).await, (0, 0), "a dropped upload is discarded");

        let w = writing(uploads.begin(header(&bytes), ana).await.unwrap());
        std::mem::forget(w);
        assert_eq!(rows(&store).await, (1, 0), "as a crash leaves it");
        assert_eq!(discard_leftovers(&store).await.unwrap(), 1);
        assert_eq!(rows(&store).await, (0, 0));
    }

    #[tokio::test]
    async fn an_upload_of_what_the_user_may_not_register_stores_nothing() {
        let store = Store::open_in_memory().unwrap();
        let ana = user(&store, "ana", UserRole::Developer).await;
        let bo = user(&store, "bo", UserRole::Developer).await;
        let root = user(&store, "root", UserRole::Admin).await;
        let uploads = Uploads::new(store.clone(), UploadQuota::default());
        let with = |bytes: &[u8], purpose: UploadPurpose| BlobHeader {
            purpose,
            ..header(bytes)
        };
        let e = uploads
            .begin(with(b"worker", UploadPurpose::WorkerRelease), ana)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, UploadError::Store(StoreError::Forbidden(m)) if m.contains("only an admin")),
            "{e}"
        );
        assert_eq!(rows(&store).await, (0, 0));
        let mut w = writing(uploads.begin(header(b"net"), ana).await.unwrap());
        w.write(b"net").await.unwrap();
        w.finish().await.unwrap();
        let actor = crate::events::Actor::user(ana, "ana");
        let new = NewAsset {
            name: "nn.bin".to_owned(),
            sha256: header(b"net").sha256,
            size: 3,
        };
        uploads.0.add_asset(actor, new).await.unwrap();
        for (purpose, by) in [
            (UploadPurpose::Asset("nn.bin".to_owned()), bo),
            (UploadPurpose::Asset("nn.bin".to_owned()), ana),
        ] {
            let e = uploads
                .begin(with(b"other", purpose), by)
                .await
                .unwrap_err();
            assert!(e.to_string().contains("registered by ana"), "{e}");
        }
        assert_eq!(rows(&store).await, (1, 1), "only the registered asset");
        let w = writing(
            uploads
                .begin(with(b"worker", UploadPurpose::WorkerRelease), root)
                .await
                .unwrap(),
        );
        w.discard().await;
    }

    #[tokio::test]
    async fn a_quota_caps_a_developer_but_not_an_admin() {
        let store = Store::open_in_memory().unwrap();
        let ana = user(&store, "ana", UserRole::Developer).await;
        let root = user(&store, "root", UserRole::Admin).await;
        let quota = UploadQuota {
            bytes_per_user: Some(10),
        };
        let uploads = Uploads::new(store.clone(), quota);
        let first = writing(uploads.begin(header(b"123456"), ana).await.unwrap());
        let e = uploads.begin(header(b"abcdef"), ana).await.unwrap_err();
        assert!(
            matches!(
                e,
                UploadError::OverQuota {
                    stored: 6,
                    size: 6,
                    quota: 10
                }
            ),
            "{e}"
        );
        first.discard().await;
        let mut w = writing(uploads.begin(header(b"abcdef"), ana).await.unwrap());
        w.write(b"abcdef").await.unwrap();
        w.finish().await.unwrap();
        assert!(uploads.begin(header(b"7890ab"), ana).await.is_err());
        let w = writing(uploads.begin(header(b"7890ab"), root).await.unwrap());
        w.discard().await;
    }
}
