//! Where a command works, chosen once for the whole command
//! ([`Place`]): a database file, whose core this process serves to itself
//! over an in-memory channel as the file's administrator
//! ([`xq_coordinator::in_process`]), or a served coordinator, as the user
//! of a personal token. Either way the command then has one code path, the
//! gRPC client ([`Coordinator`]); this module also holds the client's
//! longer calls: an upload streamed from a file, assets looked up by name
//! and downloaded.

use clap::Args;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use xq_coordinator::in_process::{Acting, InProcess};
use xq_coordinator::service::accounts::DEFAULT_ADMIN;
use xq_proto::blob::{BLOB_CHUNK_BYTES, BlobHeader, UploadPurpose};
use xq_proto::connect::Auth;
use xq_proto::pb;
use xq_proto::pb::account_service_client::AccountServiceClient;
use xq_proto::pb::admin_service_client::AdminServiceClient;
use xq_proto::pb::registry_service_client::RegistryServiceClient;
use xq_proto::pb::run_service_client::RunServiceClient;
use xq_proto::pb::upload_blob_request::Part;
use xq_worker::blob_cache;

use super::display::Admin;
use super::remote::{self, Accounts, Registry, Remote};

/// The database file a command uses when nothing names a place.
pub const DEFAULT_DB: &str = "xq.db";

/// An administration-service client.
pub type Users = AdminServiceClient<InterceptedService<Channel, Auth>>;

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

impl PlaceArgs {
    /// The place these flags choose ([`Place::choose`]).
    pub fn place(self) -> anyhow::Result<Place> {
        Place::choose(self.db, &self.remote)
    }
}

/// Where a command works.
#[derive(Debug)]
pub enum Place {
    /// The database file (no server needed; whoever can write it is the
    /// coordinator's administrator).
    File(PathBuf),
    /// A served coordinator, as the user of a personal token.
    Remote(Remote),
}

impl Place {
    /// The registry commands' rule: `--db FILE` given → that file; else
    /// `--coordinator` or `--token` given, or a stored `login` → that
    /// coordinator; else the file `xq.db`. (`--db` and `--coordinator`
    /// exclude each other.)
    pub fn choose(db: Option<PathBuf>, remote: &Remote) -> anyhow::Result<Place> {
        if let Some(db) = db {
            return Ok(Place::File(db));
        }
        if !remote.given() && remote::stored()?.newest().is_none() {
            return Ok(Place::File(PathBuf::from(DEFAULT_DB)));
        }
        Ok(Place::Remote(remote.clone()))
    }

    /// Fails unless the place is a database file that exists, or a
    /// coordinator (for commands that only read a database).
    pub fn existing(self) -> anyhow::Result<Place> {
        if let Place::File(db) = &self
            && !db.is_file()
        {
            bail!("no database file {}", db.display());
        }
        Ok(self)
    }

    /// Connects: on the file, serves its core in this process with the
    /// file's administrator acting as `acting`; at a coordinator, as the
    /// token's user, which `acting` may not name another user for.
    pub fn connect(self, acting: Acting) -> anyhow::Result<Coordinator> {
        let runtime = tokio::runtime::Runtime::new().context("start the async runtime")?;
        match self {
            Place::File(db) => {
                let me = match &acting {
                    Acting::For(user) => user.clone().or_else(|| Some(DEFAULT_ADMIN.to_owned())),
                    Acting::Administrator => None,
                };
                let core = runtime.block_on(InProcess::open(&db, acting))?;
                Ok(Coordinator {
                    channel: core.channel(),
                    auth: Auth::new(None)?,
                    url: db.display().to_string(),
                    me,
                    core: Some(core),
                    runtime,
                })
            }
            Place::Remote(remote) => {
                if matches!(acting, Acting::For(Some(_))) {
                    bail!(
                        "--user works only on the database file; at a coordinator it is you \
                         (the user of the token)"
                    );
                }
                let ((channel, auth), target) = {
                    let _entered = runtime.enter();
                    remote.channel()?
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
                    channel,
                    auth,
                    url: target.url,
                    me: None,
                    core: None,
                })
            }
        }
    }
}

/// A coordinator's services, served or on a database file in this
/// process, with a runtime to call them on.
#[derive(Debug)]
pub struct Coordinator {
    runtime: tokio::runtime::Runtime,
    channel: Channel,
    auth: Auth,
    /// Its address, or the database file, for messages.
    pub url: String,
    /// On the database file: the user the administrator acts as.
    me: Option<String>,
    /// The core on the database file, stopped when this is dropped.
    core: Option<InProcess>,
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        if let Some(core) = self.core.take()
            && let Err(e) = self.runtime.block_on(core.stop())
        {
            tracing::warn!(error = %e, "the in-process core stopped with an error");
        }
    }
}

impl Coordinator {
    /// A registry-service client.
    pub fn registry(&self) -> Registry {
        RegistryServiceClient::with_interceptor(self.channel.clone(), self.auth.clone())
    }

    /// An account-service client.
    pub fn accounts(&self) -> Accounts {
        AccountServiceClient::with_interceptor(self.channel.clone(), self.auth.clone())
    }

    /// An administration-service client.
    pub fn users(&self) -> Users {
        AdminServiceClient::with_interceptor(self.channel.clone(), self.auth.clone())
    }

    /// A run-service client.
    pub fn runs(&self) -> Admin {
        RunServiceClient::with_interceptor(self.channel.clone(), self.auth.clone())
    }

    /// The name of the user whose registrations these calls make: on the
    /// database file the one given (`--user`, else `admin`); at a
    /// coordinator the token's, as its token list names it.
    pub fn me(&self) -> anyhow::Result<String> {
        if let Some(me) = &self.me {
            return Ok(me.clone());
        }
        let request = pb::ListTokensRequest { all_users: false };
        let tokens = self
            .block_on(self.accounts().list_tokens(request))
            .with_context(|| format!("cannot ask {} whose token this is", self.url))?
            .into_inner()
            .tokens;
        tokens
            .into_iter()
            .map(|t| t.user)
            .find(|u| !u.is_empty())
            .with_context(|| format!("the token belongs to no user of {}", self.url))
    }

    /// Runs `call` to its end.
    pub fn block_on<F: std::future::Future>(&self, call: F) -> F::Output {
        self.runtime.block_on(call)
    }

    /// Runs a call of the registry service.
    pub fn call<T, F>(&mut self, f: impl FnOnce(Registry) -> F) -> Result<T, tonic::Status>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let client = self.registry();
        self.runtime
            .block_on(f(client))
            .map(tonic::Response::into_inner)
    }

    /// Uploads the file at `path` (`size` bytes with SHA-256 `sha256`, as
    /// hashed before) to become `purpose`, described as `what`, streaming it
    /// a chunk at a time; `true` when the coordinator had it already (then
    /// little or nothing was sent). The coordinator refuses, before any byte
    /// is sent, what this user may not register. A progress bar shows on a
    /// terminal.
    pub fn upload(
        &mut self,
        path: &Path,
        sha256: &str,
        size: u64,
        purpose: UploadPurpose,
        what: &str,
    ) -> anyhow::Result<bool> {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read {what} {}", path.display()))?;
        let header = BlobHeader {
            sha256: sha256.to_owned(),
            size,
            purpose,
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
            .block_on(self.registry().upload_blob(ReceiverStream::new(rx)));
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
                let what = if xq_proto::is_sha256_hex(reference) {
                    format!("with sha256 {reference}")
                } else {
                    format!("named '{reference}'")
                };
                format!(
                    "no asset {what} is registered in {}; add it with `xq-coordinator asset add FILE`",
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
        let mut client = self.registry();
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

/// Where an administrator's command works (`user`, `token`, `events`,
/// `pgn`, `datagen-export`): the coordinator `--coordinator` when given
/// (with `--token`, else the one `login` stored for it), else the
/// database file `--db` (default `xq.db`), no server needed. Invariant
/// (clap's): not both.
#[derive(Debug, Clone, Args)]
pub struct FileOrCoordinator {
    /// SQLite database of the coordinator (default xq.db): work on it as
    /// its administrator, no server needed.
    #[arg(long, global = true, conflicts_with = "coordinator")]
    db: Option<PathBuf>,
    /// Work at this coordinator instead, as the user of the token.
    #[arg(long, global = true)]
    coordinator: Option<String>,
    /// With `--coordinator`: the token to send; default: the personal
    /// token `login` stored for it.
    #[arg(long, global = true, env = "XQ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// With `--coordinator`: PEM file of the CA that signed its TLS certificate.
    #[arg(long, global = true)]
    ca: Option<PathBuf>,
}

impl FileOrCoordinator {
    /// The place these flags name.
    pub fn place(&self) -> Place {
        match &self.coordinator {
            Some(url) => Place::Remote(Remote::with_ca(
                url.clone(),
                self.token.clone(),
                self.ca.clone(),
            )),
            None => Place::File(self.db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB))),
        }
    }
}
