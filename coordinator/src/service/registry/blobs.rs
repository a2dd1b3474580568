//! Blobs: uploads begun for their uploader, downloads a chunk at a time.

use std::pin::Pin;

use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use xq_proto::blob::BlobHeader;
use xq_proto::pb;

use super::uploads::{self, Begun, UploadError};
use super::{Registry, owner_of};
use crate::events::Actor;
use crate::store::blobs;

/// Chunks of a blob download read ahead of the network (of
/// [`BLOB_CHUNK_BYTES`](xq_proto::blob::BLOB_CHUNK_BYTES) each, well below
/// gRPC's 4 MiB limit).
const BLOB_QUEUE_CHUNKS: usize = 4;

/// A blob download's stream of chunks.
pub type BlobStream = Pin<Box<dyn Stream<Item = Result<pb::BlobChunk, Status>> + Send>>;

impl Registry {
    /// Starts the upload of the blob `header` announces for `actor`'s user,
    /// within their quota: answered at once when the blob is stored
    /// already (see [`uploads`]).
    pub async fn begin_upload(
        &self,
        actor: &Actor,
        header: BlobHeader,
    ) -> Result<Begun, UploadError> {
        let uploader = owner_of(actor)?;
        uploads::begin_on(self.store.clone(), self.quota, header, uploader).await
    }

    /// Streams the stored blob `sha256`: NOT_FOUND when it is not stored.
    /// Chunks are read one at a time, each in its own store call, and sent
    /// through a short queue: a download holds at most a few chunks in
    /// memory and never the store's connection for longer than one read.
    pub async fn download(&self, sha256: String) -> Result<BlobStream, Status> {
        if !xq_proto::is_sha256_hex(&sha256) {
            return Err(Status::invalid_argument(format!(
                "invalid sha256: {} is not 64 lowercase hex digits",
                xq_proto::quote(&sha256)
            )));
        }
        let sha = sha256.clone();
        let size = self
            .store
            .call(move |conn| blobs::size(conn, &sha))
            .await?
            .ok_or_else(|| Status::not_found(format!("no engine or asset with sha256 {sha256}")))?;
        let (tx, rx) = mpsc::channel(BLOB_QUEUE_CHUNKS);
        let store = self.store.clone();
        tokio::spawn(async move {
            for seq in 0..xq_proto::blob::chunk_count(size) {
                let sha = sha256.clone();
                let chunk = match store.call(move |conn| blobs::chunk(conn, &sha, seq)).await {
                    Ok(Some(data)) => Ok(pb::BlobChunk { data, size }),
                    Ok(None) => Err(Status::data_loss(format!(
                        "blob {sha256} lacks its chunk {seq}"
                    ))),
                    Err(e) => Err(Status::from(e)),
                };
                let failed = chunk.is_err();
                if tx.send(chunk).await.is_err() || failed {
                    return;
                }
            }
        });
        Ok(Box::pin(ReceiverStream::new(rx)))
    }
}
