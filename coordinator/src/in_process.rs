//! The core served to the command line in its own process: the CLI working
//! on a database file (`--db FILE`: bootstrapping the first admin, a machine
//! without the server running) calls the same gRPC services as at a served
//! coordinator, over an in-memory channel instead of a socket.
//!
//! # Who calls
//!
//! Whoever can write the database file is the coordinator's administrator.
//! Every call on this channel is made as [`Principal::in_process`]: no token
//! is sent or checked, and [`InProcessLayer`] puts that principal on each
//! request where the network's [`crate::auth::AuthLayer`] puts a token's.
//! Nothing else makes one: the network server mounts only the auth layer,
//! whose principals come from tokens (keys from 1 up, or below 0), and no
//! listening socket is opened here, so the in-process principal cannot be
//! reached from the network. Its changes are logged as `cli`.
//!
//! # What differs from the network
//!
//! Settings, not code: uploads may be as large as the registry stores
//! ([`MAX_BLOB_BYTES`], not [`xq_proto::blob::MAX_UPLOAD_BYTES`]) and count
//! against no quota; there are no rate limits. Nothing runs in the
//! background (no health probe, no clean-up of a served coordinator's
//! unfinished uploads), since a server may hold the same file meanwhile.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::rt::TokioIo;
use tokio::io::DuplexStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Status;
use tonic::transport::server::Connected;
use tonic::transport::{Channel, Endpoint};
use xq_proto::blob::MAX_BLOB_BYTES;
use xq_proto::pb::account_service_server::AccountServiceServer;
use xq_proto::pb::admin_service_server::AdminServiceServer;
use xq_proto::pb::registry_service_server::RegistryServiceServer;

use crate::access::{Principal, permission};
use crate::account_service::AccountServer;
use crate::admin_service::AdminServer;
use crate::auth::{Authenticator, RateLimits};
use crate::registry_service::RegistryServer;
use crate::server::{self, MAX_MESSAGE_BYTES, ServerError};
use crate::service::accounts::Accounts;
use crate::service::registry::{Registry, UploadQuota};
use crate::service::{Core, SchedulerConfig};
use crate::shutdown::Shutdown;
use crate::store::Store;

/// Bytes each direction of the in-memory pipe buffers.
const PIPE_BYTES: usize = 1 << 20;

/// Whom the in-process administrator's registrations and tokens belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acting {
    /// Nobody: the command makes nothing that has an owner (lists, users,
    /// events, revocations).
    Administrator,
    /// The user named (`--user NAME`, who must exist), else `admin`, made
    /// (role admin, no password) if there is none yet.
    For(Option<String>),
}

/// Why the core on a database file does not open.
#[derive(Debug, thiserror::Error)]
pub enum InProcessError {
    #[error("cannot open database {path}: {source}")]
    Open {
        path: String,
        source: crate::store::StoreError,
    },
    /// The user to act as is not there (or cannot be made).
    #[error("{0}")]
    User(crate::store::StoreError),
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// The core on a database file, served to this process.
#[derive(Debug)]
pub struct InProcess {
    channel: Channel,
    stop: oneshot::Sender<()>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
}

impl InProcess {
    /// Opens the database at `db` (made if missing) and serves the account,
    /// registry, administration and run services on an in-memory channel,
    /// every call made as the file's administrator acting as `acting`.
    /// Must be called inside a tokio runtime, which then runs the server.
    pub async fn open(db: &Path, acting: Acting) -> Result<InProcess, InProcessError> {
        let store = Store::open(db).map_err(|source| InProcessError::Open {
            path: db.display().to_string(),
            source,
        })?;
        let user = match acting {
            Acting::Administrator => None,
            Acting::For(name) => Some(
                Accounts::new(store.clone())
                    .named_or_admin(name)
                    .await
                    .map_err(InProcessError::User)?,
            ),
        };
        let reader = store.reader().map_err(ServerError::from)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let (signal, fire) = Shutdown::new(async {
            let _ = stopped.await;
        });
        let limit = MAX_MESSAGE_BYTES;
        // Sign-in is not called here; the account service wants its
        // authenticator all the same.
        let auth = Arc::new(Authenticator::new(
            reader.clone(),
            Vec::new(),
            RateLimits::UNLIMITED,
        ));
        let accounts = AccountServer::new(auth, Accounts::new(store.clone()));
        let quota = UploadQuota {
            bytes_per_user: None,
        };
        let registry = RegistryServer::new(
            Registry::new(store.clone(), quota),
            Registry::new(reader.clone(), quota),
        )
        .with_max_upload(MAX_BLOB_BYTES);
        let core = Core::new(store.clone(), SchedulerConfig::default());
        let admin = AdminServer::new(
            Accounts::new(store.clone()),
            Accounts::new(reader.clone()),
            core.events(),
        );
        let runs = server::run_service(core, signal, Registry::new(reader, quota));
        let router = tonic::transport::Server::builder()
            .layer(InProcessLayer {
                principal: Principal::in_process(user),
            })
            .add_service(AccountServiceServer::new(accounts).max_decoding_message_size(limit))
            .add_service(RegistryServiceServer::new(registry).max_decoding_message_size(limit))
            .add_service(AdminServiceServer::new(admin).max_decoding_message_size(limit))
            .add_service(runs.max_decoding_message_size(limit));
        let (pipes, incoming) = mpsc::unbounded_channel::<DuplexStream>();
        let incoming =
            UnboundedReceiverStream::new(incoming).map(|io| Ok::<_, std::io::Error>(Pipe(io)));
        let server = tokio::spawn(router.serve_with_incoming_shutdown(incoming, fire));
        // Each connection the channel makes is a new pipe whose other end
        // goes to the server; the URI only satisfies the endpoint.
        let channel = Endpoint::from_static("http://in-process.invalid")
            .connect_with_connector_lazy(tower::service_fn(move |_: http::Uri| {
                let (client, served) = tokio::io::duplex(PIPE_BYTES);
                let sent = pipes.send(served);
                async move {
                    sent.map_err(|_| {
                        std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the core has stopped")
                    })?;
                    Ok::<_, std::io::Error>(TokioIo::new(client))
                }
            }));
        Ok(InProcess {
            channel,
            stop,
            server,
        })
    }

    /// The channel to the core; clients on it send no token.
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// Stops the server once its calls have ended.
    pub async fn stop(self) -> Result<(), ServerError> {
        drop(self.channel);
        let _ = self.stop.send(());
        match self.server.await {
            Ok(served) => Ok(served?),
            Err(e) => {
                tracing::error!(error = %e, "the in-process core panicked");
                Ok(())
            }
        }
    }
}

/// One end of an in-memory pipe, as the server takes a connection.
struct Pipe(DuplexStream);

impl Connected for Pipe {
    type ConnectInfo = ();

    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl tokio::io::AsyncRead for Pipe {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Pipe {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Puts the in-process administrator on every call, in place of the
/// network's token check; a method the permission table does not know, or
/// that the administrator's role may not call (playing leases), is refused
/// as it is on the network.
#[derive(Debug, Clone)]
struct InProcessLayer {
    principal: Principal,
}

impl<S> tower::Layer<S> for InProcessLayer {
    type Service = InProcessService<S>;

    fn layer(&self, inner: S) -> InProcessService<S> {
        InProcessService {
            inner,
            principal: self.principal.clone(),
        }
    }
}

/// The service [`InProcessLayer`] makes.
#[derive(Debug, Clone)]
struct InProcessService<S> {
    inner: S,
    principal: Principal,
}

impl<S, B> tower::Service<http::Request<B>> for InProcessService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let path = request.uri().path().to_owned();
        let allowed = permission(&path).is_some_and(|p| self.principal.role.allows(p));
        request.extensions_mut().insert(self.principal.clone());
        Box::pin(async move {
            if !allowed {
                return Ok(Status::permission_denied(format!(
                    "method {} is not open to the database file's administrator",
                    xq_proto::quote(&path)
                ))
                .into_http());
            }
            inner.call(request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_proto::pb;
    use xq_proto::pb::admin_service_client::AdminServiceClient;
    use xq_proto::pb::registry_service_client::RegistryServiceClient;

    fn temp_db(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xq-in-process-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("xq.db")
    }

    #[tokio::test]
    async fn the_first_admin_is_added_on_a_new_file_and_logged_as_cli() {
        let db = temp_db("first-admin");
        let core = InProcess::open(&db, Acting::Administrator).await.unwrap();
        let mut admin = AdminServiceClient::new(core.channel());
        admin
            .add_user(pb::AddUserRequest {
                name: "root".to_owned(),
                role: pb::UserRole::Admin.into(),
                trusted: false,
                password: String::new(),
            })
            .await
            .unwrap();
        let users = admin
            .list_users(pb::ListUsersRequest {})
            .await
            .unwrap()
            .into_inner()
            .users;
        let names: Vec<&str> = users.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, ["root"], "no `admin` is made for a user change");
        let events = admin
            .list_events(pb::ListEventsRequest {
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .events;
        assert_eq!(events.len(), 1);
        assert_eq!(
            (events[0].actor.as_str(), events[0].kind.as_str()),
            ("cli", "user")
        );
        core.stop().await.unwrap();
    }

    #[tokio::test]
    async fn work_is_refused_and_uploads_take_what_the_registry_stores() {
        let db = temp_db("refusals");
        let core = InProcess::open(&db, Acting::For(None)).await.unwrap();
        let mut registry = RegistryServiceClient::new(core.channel());
        let listed = registry
            .list_worker_releases(pb::ListWorkerReleasesRequest {})
            .await
            .unwrap();
        assert!(listed.into_inner().releases.is_empty());
        let (tx, rx) = mpsc::channel(1);
        tx.send(pb::UploadBlobRequest {
            part: Some(pb::upload_blob_request::Part::Header(pb::UploadHeader {
                sha256: "0".repeat(64),
                size: MAX_BLOB_BYTES + 1,
                purpose: Some(pb::UploadPurpose {
                    what: Some(pb::upload_purpose::What::Asset("big".to_owned())),
                }),
            })),
        })
        .await
        .unwrap();
        drop(tx);
        let e = registry
            .upload_blob(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(
            e.message().contains(&MAX_BLOB_BYTES.to_string()),
            "{}",
            e.message()
        );
        core.stop().await.unwrap();
    }
}
