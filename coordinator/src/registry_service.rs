//! The registry service on the wire: `UploadBlob` (a client stream written
//! to the store as it arrives, [`crate::service::registry::uploads`]),
//! `AddEngine` and `AddAsset` for a personal token of a user, `ListEngines`,
//! `ListAssets` and `DownloadBlob` for any token. The auth layer has
//! checked the token's role; the registry service checks that it has a
//! user.

use std::time::Duration;

use tonic::{Request, Response, Status, Streaming};
use xq_proto::Invalid;
use xq_proto::blob::{BLOB_CHUNK_BYTES, BlobHeader, MAX_UPLOAD_BYTES};
use xq_proto::pb;
use xq_proto::pb::registry_service_server::RegistryService;
use xq_proto::pb::upload_blob_request::Part;

use crate::auth::caller;
use crate::events::Actor;
use crate::service::registry::{Begun, NewAsset, NewEngine, NewRelease, Registry, UploadError};
use crate::store::Store;

pub use crate::service::registry::BlobStream;

/// How long an upload may send nothing before it is dropped.
pub const UPLOAD_IDLE: Duration = Duration::from_secs(60);

/// The registry service's state.
#[derive(Debug)]
pub struct RegistryServer {
    /// Uploads and registrations, on the write store.
    registry: Registry,
    /// Lists and downloads read here, not on the writer's queue.
    reader: Registry,
    /// The largest blob an upload may announce, in bytes:
    /// [`MAX_UPLOAD_BYTES`] over the network, [`xq_proto::blob::MAX_BLOB_BYTES`] for the
    /// command line on its own database file ([`crate::in_process`]).
    max_upload: u64,
}

impl RegistryServer {
    /// Writes through `registry`, reads through `reader` (the same on a
    /// read connection).
    pub fn new(registry: Registry, reader: Registry) -> Self {
        RegistryServer {
            registry,
            reader,
            max_upload: MAX_UPLOAD_BYTES,
        }
    }

    /// The same, taking uploads of up to `bytes`.
    pub fn with_max_upload(mut self, bytes: u64) -> Self {
        self.max_upload = bytes;
        self
    }
}

impl From<UploadError> for Status {
    fn from(e: UploadError) -> Self {
        match e {
            UploadError::InProgress(_) => Status::aborted(e.to_string()),
            UploadError::OverQuota { .. } => Status::resource_exhausted(e.to_string()),
            UploadError::Refused(invalid) => invalid.into(),
            UploadError::Store(e) => e.into(),
        }
    }
}

/// The next message of an upload, or the status that ends it.
async fn next_part(stream: &mut Streaming<pb::UploadBlobRequest>) -> Result<Option<Part>, Status> {
    match tokio::time::timeout(UPLOAD_IDLE, stream.message()).await {
        Err(_) => Err(Status::deadline_exceeded(format!(
            "the upload sent nothing for {} s; nothing was stored",
            UPLOAD_IDLE.as_secs()
        ))),
        // The stream's own code: INTERNAL for bytes that do not decode,
        // OUT_OF_RANGE for a message over the limit, CANCELLED for a client
        // that went away.
        Ok(Err(status)) => Err(Status::new(
            status.code(),
            format!(
                "the upload broke off ({}); nothing was stored",
                xq_proto::bounded(status.message().to_owned())
            ),
        )),
        Ok(Ok(None)) => Ok(None),
        Ok(Ok(Some(pb::UploadBlobRequest { part }))) => match part {
            Some(part) => Ok(Some(part)),
            None => Err(Invalid::new("part", "a message with neither header nor data").into()),
        },
    }
}

/// Streams the stored blob `sha256` from `store` (see
/// [`Registry::download`]).
pub async fn download(store: &Store, sha256: String) -> Result<BlobStream, Status> {
    Registry::new(store.clone(), Default::default())
        .download(sha256)
        .await
}

#[tonic::async_trait]
impl RegistryService for RegistryServer {
    async fn upload_blob(
        &self,
        request: Request<Streaming<pb::UploadBlobRequest>>,
    ) -> Result<Response<pb::UploadBlobResponse>, Status> {
        let principal = caller(&request)?;
        let actor = Actor::from(&principal);
        let mut stream = request.into_inner();
        let header = match next_part(&mut stream).await? {
            Some(Part::Header(header)) => BlobHeader::from_wire(header, self.max_upload)?,
            _ => {
                return Err(Invalid::new("header", "the first message must be the header").into());
            }
        };
        let (sha256, size) = (header.sha256.clone(), header.size);
        let mut writer = match self.registry.begin_upload(&actor, header).await? {
            Begun::Stored { size } => {
                tracing::info!(%sha256, size, by = %principal.name, "upload: stored already");
                return Ok(Response::new(pb::UploadBlobResponse {
                    sha256,
                    size,
                    already_stored: true,
                }));
            }
            Begun::Writing(writer) => writer,
        };
        tracing::info!(%sha256, size, by = %principal.name, "upload begins");
        loop {
            let data = match next_part(&mut stream).await {
                Ok(Some(Part::Data(data))) => data,
                Ok(None) => break,
                Ok(Some(Part::Header(_))) => {
                    writer.discard().await;
                    return Err(Invalid::new("header", "sent twice").into());
                }
                Err(status) => {
                    writer.discard().await;
                    tracing::warn!(%sha256, error = %status.message(), "upload dropped");
                    return Err(status);
                }
            };
            if data.is_empty() || data.len() > BLOB_CHUNK_BYTES {
                writer.discard().await;
                return Err(Invalid::new(
                    "data",
                    format!(
                        "{} bytes in one message; send 1 to {BLOB_CHUNK_BYTES}",
                        data.len()
                    ),
                )
                .into());
            }
            writer.write(&data).await?;
        }
        let size = writer.finish().await?;
        tracing::info!(%sha256, size, by = %principal.name, "upload stored");
        Ok(Response::new(pb::UploadBlobResponse {
            sha256,
            size,
            already_stored: false,
        }))
    }

    async fn add_engine(
        &self,
        request: Request<pb::AddEngineRequest>,
    ) -> Result<Response<pb::AddEngineResponse>, Status> {
        let principal = caller(&request)?;
        let new = NewEngine::try_from(request.into_inner())?;
        let entry = self
            .registry
            .add_engine(Actor::from(&principal), new)
            .await?;
        tracing::info!(engine = %entry.engine.name, sha256 = %entry.engine.sha256, by = %principal.name, "engine registered");
        Ok(Response::new(pb::AddEngineResponse {
            engine: Some(entry.into()),
        }))
    }

    async fn add_asset(
        &self,
        request: Request<pb::AddAssetRequest>,
    ) -> Result<Response<pb::AddAssetResponse>, Status> {
        let principal = caller(&request)?;
        let pb::AddAssetRequest { name, sha256, size } = request.into_inner();
        let (asset, existed) = self
            .registry
            .add_asset(Actor::from(&principal), NewAsset { name, sha256, size })
            .await?;
        tracing::info!(asset = %asset.name, sha256 = %asset.sha256, existed, by = %principal.name, "asset registered");
        Ok(Response::new(pb::AddAssetResponse {
            asset: Some(asset.into()),
            existed,
        }))
    }

    async fn list_engines(
        &self,
        _request: Request<pb::ListEnginesRequest>,
    ) -> Result<Response<pb::ListEnginesResponse>, Status> {
        let entries = self.reader.engines().await?;
        Ok(Response::new(pb::ListEnginesResponse {
            engines: entries.into_iter().map(Into::into).collect(),
        }))
    }

    async fn list_assets(
        &self,
        _request: Request<pb::ListAssetsRequest>,
    ) -> Result<Response<pb::ListAssetsResponse>, Status> {
        let found = self.reader.assets().await?;
        Ok(Response::new(pb::ListAssetsResponse {
            assets: found.into_iter().map(Into::into).collect(),
        }))
    }

    type DownloadBlobStream = BlobStream;

    async fn download_blob(
        &self,
        request: Request<pb::DownloadBlobRequest>,
    ) -> Result<Response<BlobStream>, Status> {
        let pb::DownloadBlobRequest { sha256 } = request.into_inner();
        Ok(Response::new(self.reader.download(sha256).await?))
    }

    async fn add_worker_release(
        &self,
        request: Request<pb::AddWorkerReleaseRequest>,
    ) -> Result<Response<pb::AddWorkerReleaseResponse>, Status> {
        let principal = caller(&request)?;
        let pb::AddWorkerReleaseRequest { release } = request.into_inner();
        let new = NewRelease::try_from(xq_proto::required("release", release)?)?;
        let (release, existed) = self
            .registry
            .add_worker_release(Actor::from(&principal), new)
            .await?;
        tracing::info!(version = %release.version, target = %release.target, required = release.required, existed, by = %principal.name, "worker release registered");
        Ok(Response::new(pb::AddWorkerReleaseResponse {
            release: Some(release.into()),
            existed,
        }))
    }

    async fn list_worker_releases(
        &self,
        _request: Request<pb::ListWorkerReleasesRequest>,
    ) -> Result<Response<pb::ListWorkerReleasesResponse>, Status> {
        let (releases, required) = self.reader.worker_releases().await?;
        Ok(Response::new(pb::ListWorkerReleasesResponse {
            releases: releases.into_iter().map(Into::into).collect(),
            required_version: required.map(|v| v.to_string()).unwrap_or_default(),
        }))
    }
}
