//! Embedded local mode: a coordinator on a loopback port and in-process
//! workers that talk to it over real gRPC, in one process.
//!
//! The player comes from the caller (the binary supplies the real game
//! runner; tests supply a simulated one), so this crate needs no runner.
//! Authentication: each start makes two random tokens, a personal token for
//! the caller's own client ([`LocalCluster::personal_token`]) and a worker token
//! for the in-process workers. The server keeps only their hashes, in
//! memory; no token is written to the database, and they die with the
//! process. The personal token acts as the user [`LOCAL_USER`], the author of
//! local runs.
//!
//! Resuming is the caller's choice: create the run with
//! `reuse_identical = true` and an unfinished run with an identical spec in
//! the same database continues where it stood.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use xq_worker::BatchPlayer;
use xq_worker::client::{self, ClientConfig, ClientError, ClientSummary};

use crate::access::UserRole;
use crate::auth::tokens::{self, TokenError};
use crate::auth::{EphemeralToken, Role};
use crate::http::{Http, HttpView};
use crate::server::{self, ServerConfig, ServerError};
use crate::store::Store;

/// The user local mode acts as (an admin without a password, made in the
/// database on first use): the author of the runs it creates.
pub const LOCAL_USER: &str = "local";

/// Makes the player for `threads` parallel games.
pub type PlayerFactory = dyn Fn(u32) -> anyhow::Result<Arc<dyn BatchPlayer>> + Send + Sync;

/// Errors starting or stopping local mode.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("cannot make a token: {0}")]
    Token(#[from] TokenError),
    #[error("cannot listen: {0}")]
    Bind(std::io::Error),
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error("worker: {0}")]
    Worker(#[from] ClientError),
    #[error("a task panicked: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// A worker client's stop signal and task.
type WorkerTask = (
    oneshot::Sender<()>,
    JoinHandle<Result<ClientSummary, ClientError>>,
);

/// A running coordinator with its workers.
pub struct LocalCluster {
    addr: SocketAddr,
    web_addr: Option<SocketAddr>,
    server: JoinHandle<Result<(), ServerError>>,
    stop_server: oneshot::Sender<()>,
    workers: Vec<WorkerTask>,
    personal_token: String,
}

impl std::fmt::Debug for LocalCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCluster")
            .field("addr", &self.addr)
            .field("workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

impl LocalCluster {
    /// Starts the coordinator on `127.0.0.1:0` over the database at `db`, and
    /// `workers` worker clients, each playing through `player`; with `http`,
    /// that view (the web view) on that address.
    pub async fn start(
        db: &Path,
        mut config: ServerConfig,
        player: Arc<dyn BatchPlayer>,
        workers: u32,
        threads: u32,
        http: Option<(SocketAddr, Box<dyn HttpView>)>,
    ) -> Result<Self, LocalError> {
        let store = Store::open(db).map_err(ServerError::from)?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(LocalError::Bind)?;
        let addr = listener.local_addr().map_err(LocalError::Bind)?;
        let http = match http {
            Some((at, view)) => Some(Http {
                listener: TcpListener::bind(at).await.map_err(LocalError::Bind)?,
                view,
            }),
            None => None,
        };
        let web_addr = http
            .as_ref()
            .map(|h| h.listener.local_addr().map_err(LocalError::Bind))
            .transpose()?;
        let (stop_server, stopped) = oneshot::channel::<()>();
        let personal_token = tokens::generate()?;
        let worker_token = tokens::generate()?;
        let me = crate::service::accounts::Accounts::new(store.clone())
            .ensure_user(LOCAL_USER.to_owned(), UserRole::Admin)
            .await
            .map_err(ServerError::from)?;
        config.tokens.push(
            EphemeralToken::new("local-personal", Role::Personal, &personal_token).for_user(me),
        );
        config.tokens.push(EphemeralToken::new(
            "local-worker",
            Role::Worker,
            &worker_token,
        ));
        let server = tokio::spawn(server::run_with_web(listener, http, store, config, async {
            let _ = stopped.await;
        }));
        let workers = (0..workers)
            .map(|i| {
                let mut config =
                    ClientConfig::new(format!("http://{addr}"), format!("local-{i}"), threads);
                config.token = Some(worker_token.clone());
                let (stop, stopped) = oneshot::channel::<()>();
                let handle = tokio::spawn(client::run(config, Arc::clone(&player), async {
                    let _ = stopped.await;
                }));
                (stop, handle)
            })
            .collect();
        Ok(LocalCluster {
            addr,
            web_addr,
            server,
            stop_server,
            workers,
            personal_token,
        })
    }

    /// The personal token of this run, for the caller's own client.
    pub fn personal_token(&self) -> &str {
        &self.personal_token
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/` of the web view, if it is served.
    pub fn web_url(&self) -> Option<String> {
        self.web_addr.map(|a| format!("http://{a}/"))
    }

    /// Stops the workers (handing back their leases), then the server.
    pub async fn stop(self) -> Result<ClientSummary, LocalError> {
        let mut total = ClientSummary::default();
        for (stop, handle) in self.workers {
            let _ = stop.send(());
            let s = handle.await??;
            total.leases_accepted += s.leases_accepted;
            total.pairs_accepted += s.pairs_accepted;
            total.leases_dropped += s.leases_dropped;
        }
        let _ = self.stop_server.send(());
        self.server.await??;
        Ok(total)
    }
}
