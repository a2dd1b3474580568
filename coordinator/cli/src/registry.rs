//! Where `engine` and `asset` commands register ([`Place::choose`]: the
//! database file or a served coordinator), and their remote half: an upload
//! streamed from a file, assets looked up by name and downloaded.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use tokio_stream::wrappers::ReceiverStream;
use xq_proto::blob::{BLOB_CHUNK_BYTES, BlobHeader};
use xq_proto::pb;
use xq_proto::pb::upload_blob_request::Part;
use xq_worker::blob_cache;

use super::remote::{self, Registry, Remote};

/// The database file a registry command uses when nothing names a place.
pub const DEFAULT_DB: &str = "xq.db";

/// Where a registry command works, as its flags say: `--db FILE`, or a
/// coordinator (`--coordinator`, `--token`, a stored login); see
/// [`Place::choose`].
#[derive(Debug, clap::Args)]
pub struct PlaceArgs {
    /// The coordinator's database file: work on it (no server needed).
    /// Without `--db`, `--coordinator`, `--token` or a stored login: xq.db.
    #[arg(long, conflicts_with = "coordinator")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub remote: Remote,
}

/// Where a registry command works.
#[derive(Debug)]
pub enum Place {
    /// The database file (no server needed; whoever can write it is the
    /// coordinator's administrator).
    File(PathBuf),
    /// A served coordinator, as the user of a personal token.
    Remote(Box<Coordinator>),
}

impl Place {
    /// The rule: `--db FILE` given → that file; else `--coordinator` or
    /// `--token` given, or a stored `login` → that coordinator; else the
    /// file `xq.db`. (`--db` and `--coordinator` exclude each other.)
    pub fn choose(db: Option<PathBuf>, remote: &Remote) -> anyhow::Result<Place> {
        if let Some(db) = db {
            return Ok(Place::File(db));
        }
        if !remote.given() && remote::stored()?.newest().is_none() {
            return Ok(Place::File(PathBuf::from(DEFAULT_DB)));
        }
        Ok(Place::Remote(Box::new(Coordinator::connect(remote)?)))
    }
}

/// A served coordinator's registry service, with a runtime to call it on.
#[derive(Debug)]
pub struct Coordinator {
    runtime: tokio::runtime::Runtime,
    client: Registry,
    /// Its address, for messages.
    pub url: String,
}

impl Coordinator {
    fn connect(remote: &Remote) -> anyhow::Result<Coordinator> {
        let runtime = tokio::runtime::Runtime::new().context("start the async runtime")?;
        let (client, target) = {
            let _entered = runtime.enter();
            remote.registry()?
        };
        if target.token.is_none() {
            bail!(
                "no token for {}: give --token, or sign in with `xq-coordinator login --coordinator {}`",
                target.url,
                target.url
            );
        }
        Ok(Coordinator {
            runtime,
            client,
            url: target.url,
        })
    }

    /// Runs a call of the registry service.
    pub fn call<T, F>(&mut self, f: impl FnOnce(Registry) -> F) -> Result<T, tonic::Status>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let client = self.client.clone();
        self.runtime
            .block_on(f(client))
            .map(tonic::Response::into_inner)
    }

    /// Uploads the file at `path` (`size` bytes with SHA-256 `sha256`, as
    /// hashed before), described as `what`, streaming it a chunk at a time;
    /// `true` when the coordinator had it already (then little or nothing
    /// was sent). A progress bar shows on a terminal.
    pub fn upload(
        &mut self,
        path: &Path,
        sha256: &str,
        size: u64,
        what: &str,
    ) -> anyhow::Result<bool> {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read {what} {}", path.display()))?;
        let header = BlobHeader {
            sha256: sha256.to_owned(),
            size,
        };
        let (tx, rx) = tokio::sync::mpsc::channel::<pb::UploadBlobRequest>(2);
        let bar = ProgressBar::new(size);
        bar.set_style(
            ProgressStyle::with_template("{msg} {bar:30} {binary_bytes}/{binary_total_bytes}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(format!("uploading {what}"));
        let shown = bar.clone();
        let reader = std::thread::spawn(move || -> std::io::Result<()> {
            let send = |part| {
                tx.blocking_send(pb::UploadBlobRequest { part: Some(part) })
                    .is_ok()
            };
            if !send(Part::Header(header.into())) {
                return Ok(());
            }
            let mut file = file;
            loop {
                let mut buf = vec![0u8; BLOB_CHUNK_BYTES];
                let n = xq_proto::blob::fill(&mut file, &mut buf)?;
                if n == 0 {
                    return Ok(());
                }
                buf.truncate(n);
                shown.inc(n as u64);
                // A closed stream: the coordinator answered (stored already,
                // or refused); its answer says which.
                if !send(Part::Data(buf)) {
                    return Ok(());
                }
            }
        });
        let answer = self
            .runtime
            .block_on(self.client.upload_blob(ReceiverStream::new(rx)));
        bar.finish_and_clear();
        let read = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the upload's reader panicked"))?;
        read.with_context(|| format!("cannot read {what} {}", path.display()))?;
        let answer = answer
            .with_context(|| format!("cannot upload {what} to {}", self.url))?
            .into_inner();
        Ok(answer.already_stored)
    }

    /// The SHA-256 of the asset `reference` names (its name or SHA-256), as
    /// the coordinator lists it; an unknown one is refused, named.
    pub fn asset_sha256(&mut self, reference: &str) -> anyhow::Result<String> {
        let assets = self
            .call(|mut c| async move { c.list_assets(pb::ListAssetsRequest {}).await })
            .with_context(|| format!("cannot list the assets of {}", self.url))?
            .assets;
        assets
            .into_iter()
            .find(|a| a.name == reference || a.sha256 == reference)
            .map(|a| a.sha256)
            .with_context(|| {
                format!(
                    "no asset {} is registered at {}; upload it with `xq-coordinator asset add FILE`",
                    xq_proto::quote(reference),
                    self.url
                )
            })
    }

    /// Downloads the blob `sha256` (described as `what`) into `dir`, laid
    /// out as a worker's cache, checking its digest as it is written.
    pub fn download(&mut self, dir: &Path, sha256: &str, what: &str) -> anyhow::Result<()> {
        let mut download = blob_cache::Download::begin(dir, sha256, what)?;
        let request = pb::DownloadBlobRequest {
            sha256: sha256.to_owned(),
        };
        let mut client = self.client.clone();
        self.runtime.block_on(async {
            let mut stream = client
                .download_blob(request)
                .await
                .with_context(|| format!("cannot download {what}"))?
                .into_inner();
            let mut chunks = 0u64;
            while let Some(chunk) = stream
                .message()
                .await
                .with_context(|| format!("cannot download {what}"))?
            {
                download.push(&chunk.data, chunk.size)?;
                chunks += 1;
            }
            if chunks == 0 {
                download.push(&[], 0)?;
            }
            anyhow::Ok(())
        })?;
        download.finish(false)?;
        Ok(())
    }
}
