//! The tonic services (thin: convert, call the core's services, convert back) and
//! [`run`], which serves them until a shutdown future completes.
//!
//! Every call passes the [`AuthLayer`] first (see [`crate::auth`]); worker
//! calls then check that the worker id belongs to the calling token.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Response, Status};
use xq_proto::capacity::SpeedMethod;
use xq_proto::engine_source::FailedBuild;
use xq_proto::pb;
use xq_proto::pb::account_service_server::AccountServiceServer;
use xq_proto::pb::admin_service_server::AdminServiceServer;
use xq_proto::pb::registry_service_server::RegistryServiceServer;
use xq_proto::pb::run_service_server::{RunService, RunServiceServer};
use xq_proto::pb::worker_service_server::{WorkerService, WorkerServiceServer};
use xq_proto::{BatchOutcome, Invalid, required};

use crate::account_service::AccountServer;
use crate::admin_service::AdminServer;
use crate::admission::{AdmissionLayer, Admitted};
use crate::auth::owners::Owners;
use crate::auth::sign_in::SignInLimits;
use crate::auth::{AuthLayer, Authenticator, EphemeralToken, Principal, RateLimits, caller};
use crate::convert::{self, lease_state};
use crate::events::Actor;
use crate::game_export::{self, GameQuery};
use crate::http::{Http, ViewParts};
use crate::metrics::{GrpcMetricsLayer, Metrics};
use crate::preface::{ConnectionTimeouts, PrefaceDeadline};
use crate::registry_service::{self, BlobStream, RegistryServer};
use crate::releases::Releases;
use crate::runs::{RunChange, RunSpec, RunState};
use crate::service::accounts::Accounts;
use crate::service::queries::RunWorkers;
use crate::service::registry::{BlobGc, Registry, UploadQuota};
use crate::service::{CheckLane, Core, NewWorker, Registered, SchedulerConfig};
use crate::shutdown::Shutdown;
use crate::standard::health::HealthProbe;
use crate::standard::{self, reflection};
use crate::store::{Store, StoreError};

/// A refused request field as a status.
fn bad(field: &str, reason: impl std::fmt::Display) -> Status {
    Invalid::new(field, reason).into()
}

/// Store errors as gRPC statuses: unknown ids are `NOT_FOUND`, refused
/// content `INVALID_ARGUMENT`, another worker's lease `PERMISSION_DENIED`;
/// a full disk is `RESOURCE_EXHAUSTED` and a database that cannot be written
/// now (read-only, locked, I/O error) `UNAVAILABLE`, both of which workers
/// retry; the rest `INTERNAL`. Storage failures are logged.
impl From<StoreError> for Status {
    fn from(e: StoreError) -> Self {
        let (code, message) = code_and_message(e);
        Status::new(code, xq_proto::bounded(message))
    }
}

fn code_and_message(e: StoreError) -> (Code, String) {
    use rusqlite::ErrorCode;
    if let StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) = &e {
        match f.code {
            ErrorCode::DiskFull => {
                tracing::error!(error = %e, "database full");
                return (
                    Code::ResourceExhausted,
                    format!("the coordinator's database is full; nothing was stored: {e}"),
                );
            }
            ErrorCode::ReadOnly
            | ErrorCode::DatabaseBusy
            | ErrorCode::DatabaseLocked
            | ErrorCode::SystemIoFailure
            | ErrorCode::CannotOpen => {
                tracing::error!(error = %e, "database unavailable");
                return (
                    Code::Unavailable,
                    format!(
                        "the coordinator cannot write its database now; nothing was stored: {e}"
                    ),
                );
            }
            _ => {}
        }
    }
    match e {
        StoreError::Unsynced(_) => {
            tracing::error!(error = %e, "database sync failed");
            (
                Code::Unavailable,
                format!("{e}; retry (a repeated result is not counted twice)"),
            )
        }
        StoreError::NotFound(m) => (Code::NotFound, m),
        StoreError::Invalid(e) => (Code::InvalidArgument, e.to_string()),
        StoreError::Forbidden(m) => (Code::PermissionDenied, m),
        StoreError::Precondition(m) => (Code::FailedPrecondition, m),
        other => {
            tracing::error!(error = %other, "store failure");
            (Code::Internal, other.to_string())
        }
    }
}

/// Largest request message the server decodes by default: 4 MiB.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub scheduler: SchedulerConfig,
    /// Tokens accepted besides the stored ones, held only in memory (local
    /// mode, tests).
    pub tokens: Vec<EphemeralToken>,
    /// Request rates per token.
    pub limits: RateLimits,
    /// Sign-in attempts per address, failures per name and address, and the
    /// wait of a name under attack ([`crate::auth::sign_in`]).
    pub sign_in: SignInLimits,
    /// Serve TLS with this checked certificate chain and key ([`crate::tls`])
    /// on the gRPC port and, unless `plain_web`, on the web view's; plain
    /// HTTP if `None`.
    pub tls: Option<crate::tls::ServerTls>,
    /// The web view speaks plain HTTP even with `tls` (a TLS proxy in front
    /// of it terminates HTTPS).
    pub plain_web: bool,
    /// The addresses of reverse proxies in front of the web view: a request
    /// from one of them is counted against the client address its
    /// `X-Forwarded-For` names (sign-in limits), not against the proxy's.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Largest request message decoded, in bytes; larger ones are refused
    /// with OUT_OF_RANGE (tonic's decoder) before any handler runs.
    pub max_message_bytes: usize,
    /// The web view is reached over HTTPS through a TLS proxy in front of
    /// it: its session and CSRF cookies are marked `Secure` (as they are
    /// anyway when the view serves TLS itself).
    pub secure_cookies: bool,
    /// Anyone may make a developer account on the web view (`/sign-up`);
    /// otherwise only admins add users.
    pub open_sign_up: bool,
    /// How many bytes of blobs one user's uploads may store.
    pub upload_quota: UploadQuota,
    /// When blobs that nothing references are deleted; `None`: never.
    pub blob_gc: Option<BlobGc>,
    /// How the health service probes the store ([`crate::standard::health`]).
    pub health: HealthProbe,
    /// How long slow or silent clients keep a connection ([`crate::preface`]).
    pub connections: ConnectionTimeouts,
    /// The check lane to use instead of one made from
    /// `scheduler.checks` (a caller that watches or fills it: tests).
    pub check_lane: Option<CheckLane>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            scheduler: SchedulerConfig::default(),
            tokens: Vec::new(),
            limits: RateLimits::default(),
            sign_in: SignInLimits::default(),
            tls: None,
            plain_web: false,
            trusted_proxies: Vec::new(),
            max_message_bytes: MAX_MESSAGE_BYTES,
            secure_cookies: false,
            open_sign_up: true,
            upload_quota: UploadQuota::default(),
            blob_gc: Some(BlobGc::default()),
            health: HealthProbe::default(),
            connections: ConnectionTimeouts::default(),
            check_lane: None,
        }
    }
}

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot open the database: {0}")]
    Store(#[from] StoreError),
    #[error("grpc transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("server reflection: {0}")]
    Reflection(#[from] reflection::ReflectionError),
}

/// Serves the database at `store_path` on `listener` until `shutdown`
/// completes, with default settings.
pub async fn run(
    listener: TcpListener,
    store_path: impl AsRef<Path>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    let store = Store::open(store_path)?;
    run_with(listener, store, ServerConfig::default(), shutdown).await
}

/// Serves `store` on `listener` until `shutdown` completes; in-flight calls
/// finish and `WatchRun` streams end first.
pub async fn run_with(
    listener: TcpListener,
    store: Store,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    run_with_web(listener, None, store, config, shutdown).await
}

/// [`run_with`], and the web view with `/metrics` on `http` if given.
pub async fn run_with_web(
    listener: TcpListener,
    http: Option<Http>,
    store: Store,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    let (signal, fire) = Shutdown::new(shutdown);
    let registry = Registry::new(store.clone(), config.upload_quota);
    let leftovers = registry.discard_leftover_uploads().await?;
    if leftovers > 0 {
        tracing::warn!(leftovers, "deleted uploads a stop cut off");
    }
    if let Some(gc) = config.blob_gc {
        tokio::spawn(registry.clone().collect_blobs_until(gc, signal.clone()));
    }
    let metrics = Arc::new(Metrics::new(store.metrics()));
    let reader = store.reader()?;
    let known = Accounts::new(reader.clone());
    let stored = known.working_tokens().await?;
    let signing_in = known.users_who_sign_in().await?;
    if stored == 0 && signing_in == 0 && config.tokens.is_empty() {
        tracing::warn!(
            "nobody can authenticate (no access token, no user with a password): every call \
             will be refused; make a user with `xq-coordinator user add NAME --role admin \
             --password-stdin` or a token with `xq-coordinator token add`"
        );
    }
    let auth = Arc::new(
        Authenticator::new(reader.clone(), config.tokens, config.limits)
            .with_sign_in(config.sign_in),
    );
    let owners = Arc::new(Owners::new(reader));
    let core = match config.check_lane {
        Some(lane) => Core::with_check_lane(store.clone(), config.scheduler, lane),
        None => Core::new(store.clone(), config.scheduler),
    };
    let accounts = AccountServer::new(Arc::clone(&auth), Accounts::new(store.clone()));
    let admin = AdminServer::new(
        Accounts::new(store.clone()),
        Accounts::new(core.views().clone()),
        core.events(),
    );
    let web = match http {
        Some(Http {
            listener: http,
            view,
        }) => {
            let tls = config.tls.clone().filter(|_| !config.plain_web);
            let parts = ViewParts {
                reader: core.views().clone(),
                store: store.clone(),
                core: core.clone(),
                secure_cookies: config.secure_cookies || tls.is_some(),
                tls,
                trusted_proxies: config.trusted_proxies.clone(),
                open_sign_up: config.open_sign_up,
                upload_quota: config.upload_quota,
                auth: Arc::clone(&auth),
                metrics: Arc::clone(&metrics),
            };
            let mut stop = signal.clone();
            tracing::info!(addr = ?http.local_addr().ok(), tls = parts.tls.is_some(), "web view listening");
            Some(tokio::spawn(view.serve(
                http,
                parts,
                Box::pin(async move { stop.recv().await }),
            )))
        }
        None => None,
    };
    let registry = RegistryServer::new(
        registry,
        Registry::new(store.reader()?, config.upload_quota),
    );
    let blobs = store.clone();
    let releases = Releases::new(store.clone(), store.reader()?);
    let health = standard::health::serve(store.clone(), signal.clone(), config.health).await;
    drop(store);
    let limit = config.max_message_bytes;
    tracing::info!(addr = ?listener.local_addr().ok(), tls = config.tls.is_some(), "coordinator listening");
    let timeouts = config.connections;
    let router = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(timeouts.keepalive_interval))
        .http2_keepalive_timeout(Some(timeouts.keepalive_timeout))
        .layer(GrpcMetricsLayer::new(metrics))
        .layer(AuthLayer::new(auth))
        .layer(AdmissionLayer::new(core.checks().clone()))
        .add_service(
            WorkerServiceServer::new(Workers {
                core: core.clone(),
                owners,
                blobs,
                releases,
            })
            .max_decoding_message_size(limit),
        )
        .add_service(
            RunServiceServer::new(Runs {
                registry: Registry::new(core.views().clone(), config.upload_quota),
                core,
                shutdown: signal,
            })
            .max_decoding_message_size(limit),
        )
        .add_service(AccountServiceServer::new(accounts).max_decoding_message_size(limit))
        .add_service(RegistryServiceServer::new(registry).max_decoding_message_size(limit))
        .add_service(AdminServiceServer::new(admin).max_decoding_message_size(limit))
        .add_service(health)
        .add_service(reflection::v1()?)
        .add_service(reflection::v1alpha()?);
    match &config.tls {
        Some(tls) => {
            let incoming = crate::tls::accept::incoming(listener, tls)
                .map(move |c| c.map(|io| PrefaceDeadline::new(io, timeouts.preface)));
            router.serve_with_incoming_shutdown(incoming, fire).await?
        }
        None => {
            let incoming = TcpListenerStream::new(listener)
                .map(move |c| c.map(|io| PrefaceDeadline::new(io, timeouts.preface)));
            router.serve_with_incoming_shutdown(incoming, fire).await?
        }
    }
    if let Some(web) = web {
        match web.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "web view failed"),
            Err(e) => tracing::error!(error = %e, "web view task failed"),
        }
    }
    tracing::info!("coordinator stopped");
    Ok(())
}

/// Most leases one heartbeat may report (a worker holds one at a time).
const MAX_HEARTBEAT_LEASES: usize = 64;

struct Workers {
    core: Core,
    owners: Arc<Owners>,
    /// The write store, which blob downloads read.
    blobs: Store,
    /// The version checks of `Register` and `RequestWork`.
    releases: Releases,
}

impl Workers {
    /// The caller, once it is known to own `worker_id`.
    async fn owner<T>(&self, request: &Request<T>, worker_id: u64) -> Result<Principal, Status> {
        if worker_id == 0 {
            return Err(bad("worker_id", "must be at least 1"));
        }
        let principal = caller(request)?;
        self.owners.check(&principal, worker_id).await?;
        Ok(principal)
    }
}

#[tonic::async_trait]
impl WorkerService for Workers {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        let principal = caller(&request)?;
        let mut worker = NewWorker::try_from(request.into_inner())?;
        worker.token_key = Some(principal.key);
        tracing::info!(name = %worker.name, threads = worker.threads, token = %principal.name, "worker registers");
        let joined = self.core.workers().register(worker).await?;
        let worker_id = match joined.registered {
            Registered::New(id) => id,
            Registered::Again { id, released } => {
                tracing::info!(
                    worker_id = id,
                    released,
                    "the worker registers again: its row is kept"
                );
                id
            }
        };
        self.owners.registered(worker_id, principal.key);
        self.releases.check(worker_id).await?;
        Ok(Response::new(pb::RegisterResponse {
            worker_id,
            heartbeat_interval_ms: convert::wire_ms(joined.heartbeat_interval),
        }))
    }

    async fn request_work(
        &self,
        request: Request<pb::RequestWorkRequest>,
    ) -> Result<Response<pb::RequestWorkResponse>, Status> {
        let pb::RequestWorkRequest { worker_id } = *request.get_ref();
        self.owner(&request, worker_id).await?;
        self.releases.check(worker_id).await?;
        let grant = self.core.leases().request_work(worker_id).await?;
        let retry = self.core.config().idle_retry;
        Ok(Response::new(pb::RequestWorkResponse {
            retry_after_ms: if grant.is_some() {
                0
            } else {
                convert::wire_ms(retry)
            },
            lease: grant.map(Into::into),
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let pb::HeartbeatRequest { worker_id, leases } = request.into_inner();
        if leases.len() > MAX_HEARTBEAT_LEASES {
            return Err(bad(
                "leases",
                format!("{} entries, at most {MAX_HEARTBEAT_LEASES}", leases.len()),
            ));
        }
        let progress = leases
            .into_iter()
            .map(
                |pb::LeaseProgress {
                     lease_id,
                     pairs_done,
                 }| (lease_id, pairs_done),
            )
            .collect();
        let reply = self.core.leases().heartbeat(worker_id, progress).await?;
        Ok(Response::new(pb::HeartbeatResponse {
            heartbeat_interval_ms: convert::wire_ms(reply.interval),
            leases: reply
                .leases
                .into_iter()
                .map(|(lease_id, state, deadline)| pb::LeaseHeartbeat {
                    lease_id,
                    state: lease_state(state).into(),
                    deadline_unix_ms: deadline,
                })
                .collect(),
        }))
    }

    async fn submit_result(
        &self,
        request: Request<pb::SubmitResultRequest>,
    ) -> Result<Response<pb::SubmitResultResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let admission = Admitted::take(&request);
        let pb::SubmitResultRequest {
            worker_id,
            lease_id,
            results,
        } = request.into_inner();
        let outcome = BatchOutcome::try_from(required("results", results)?)?;
        let leases = self.core.leases();
        let status = match admission {
            Some(admission) => {
                leases
                    .submit_admitted(admission, worker_id, lease_id, outcome)
                    .await?
            }
            None => leases.submit(worker_id, lease_id, outcome).await?,
        };
        tracing::debug!(lease_id, ?status, "result submitted");
        Ok(Response::new(pb::SubmitResultResponse {
            status: pb::SubmitStatus::from(status).into(),
        }))
    }

    async fn release_lease(
        &self,
        request: Request<pb::ReleaseLeaseRequest>,
    ) -> Result<Response<pb::ReleaseLeaseResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let pb::ReleaseLeaseRequest {
            worker_id,
            lease_id,
        } = request.into_inner();
        let state = self.core.leases().release(worker_id, lease_id).await?;
        Ok(Response::new(pb::ReleaseLeaseResponse {
            state: lease_state(state).into(),
        }))
    }

    type DownloadBlobStream = BlobStream;

    async fn download_blob(
        &self,
        request: Request<pb::DownloadBlobRequest>,
    ) -> Result<Response<BlobStream>, Status> {
        let pb::DownloadBlobRequest { sha256 } = request.into_inner();
        Ok(Response::new(
            registry_service::download(&self.blobs, sha256).await?,
        ))
    }

    async fn report_engine_mismatch(
        &self,
        request: Request<pb::ReportEngineMismatchRequest>,
    ) -> Result<Response<pb::ReportEngineMismatchResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let pb::ReportEngineMismatchRequest {
            lease_id,
            name,
            sha256,
            expected,
            measured,
            worker_id,
            depth,
            failure,
        } = request.into_inner();
        let message = mismatch_flag(&name, &sha256, expected, measured, depth, &failure);
        let run_id = self
            .core
            .leases()
            .flag_lease_run(worker_id, lease_id, message.clone())
            .await?;
        tracing::error!(run_id, lease_id, %message, "run stopped: engine signature mismatch");
        Ok(Response::new(pb::ReportEngineMismatchResponse {}))
    }

    async fn report_build_failure(
        &self,
        request: Request<pb::ReportBuildFailureRequest>,
    ) -> Result<Response<pb::ReportBuildFailureResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let (worker_id, lease_id, failed) = failed_build(request.into_inner())?;
        let reason = failed.reason.clone();
        let (run_id, run_stopped) = self
            .core
            .leases()
            .build_failed(worker_id, lease_id, failed)
            .await?;
        tracing::warn!(run_id, lease_id, worker_id, %reason, run_stopped, "a source engine did not build");
        Ok(Response::new(pb::ReportBuildFailureResponse {
            run_stopped,
        }))
    }

    async fn report_engine_speed(
        &self,
        request: Request<pb::ReportEngineSpeedRequest>,
    ) -> Result<Response<pb::ReportEngineSpeedResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let pb::ReportEngineSpeedRequest {
            worker_id,
            lease_id,
            nps,
            method,
        } = request.into_inner();
        let method = SpeedMethod::parse(&method).ok_or_else(|| {
            Invalid::new(
                "method",
                format!("{}: \"bench\" or \"search\"", xq_proto::quote(&method)),
            )
        })?;
        let factor = self
            .core
            .leases()
            .engine_speed(worker_id, lease_id, nps, method)
            .await?;
        tracing::info!(
            worker_id,
            lease_id,
            nps,
            factor,
            method = method.name(),
            "engine speed measured"
        );
        Ok(Response::new(pb::ReportEngineSpeedResponse { factor }))
    }

    async fn get_worker_release(
        &self,
        request: Request<pb::GetWorkerReleaseRequest>,
    ) -> Result<Response<pb::GetWorkerReleaseResponse>, Status> {
        let pb::GetWorkerReleaseRequest { target } = request.into_inner();
        Ok(Response::new(self.releases.for_target(target).await?))
    }

    async fn report_update_failure(
        &self,
        request: Request<pb::ReportUpdateFailureRequest>,
    ) -> Result<Response<pb::ReportUpdateFailureResponse>, Status> {
        self.owner(&request, request.get_ref().worker_id).await?;
        let pb::ReportUpdateFailureRequest {
            worker_id,
            to_version,
            reason,
        } = request.into_inner();
        self.releases.failed(worker_id, to_version, reason).await?;
        Ok(Response::new(pb::ReportUpdateFailureResponse {}))
    }
}

/// The wire's report of a failed build, checked ([`FailedBuild::validate`]).
/// The flag of a run stopped by `ReportEngineMismatch`: the cause a worker
/// gave when it measured nothing (at most 256 characters of it), else the
/// two counts, of a bench or of a fixed search of `depth`.
fn mismatch_flag(
    name: &str,
    sha256: &str,
    expected: u64,
    measured: u64,
    depth: u32,
    failure: &str,
) -> String {
    let name: String = name.chars().take(64).collect();
    let sha256: String = sha256.chars().take(64).collect();
    if !failure.is_empty() {
        let failure: String = failure.chars().take(256).collect();
        return format!("engine '{name}' ({sha256}) gave no signature on a worker: {failure}");
    }
    let (did, kind) = match depth {
        0 => ("benched", "signature".to_owned()),
        d => ("searched", format!("fixed-search signature (go depth {d})")),
    };
    format!(
        "engine '{name}' ({sha256}) {did} {measured} nodes on a worker, not its {kind} \
         {expected} (the registry's, or the one a source engine's author declared)"
    )
}

fn failed_build(request: pb::ReportBuildFailureRequest) -> Result<(u64, u64, FailedBuild), Status> {
    let pb::ReportBuildFailureRequest {
        lease_id,
        worker_id,
        commit,
        reason,
        log_tail,
    } = request;
    let failed = FailedBuild {
        commit,
        reason,
        log_tail,
    };
    failed.validate()?;
    Ok((worker_id, lease_id, failed))
}

/// The run service over `core`, for the command line's in-process core
/// ([`crate::in_process`]).
pub(crate) fn run_service(
    core: Core,
    shutdown: Shutdown,
    registry: Registry,
) -> RunServiceServer<impl RunService> {
    RunServiceServer::new(Runs {
        core,
        shutdown,
        registry,
    })
}

struct Runs {
    core: Core,
    shutdown: Shutdown,
    /// The registry on a read connection (the cluster's worker versions).
    registry: Registry,
}

/// Largest encoded chunk of a game export, in bytes (well below the 4 MiB
/// a client decodes by default).
const EXPORT_CHUNK_BYTES: usize = 1 << 20;

type ExportStream = Pin<Box<dyn Stream<Item = Result<pb::ExportGamesResponse, Status>> + Send>>;

/// How often a watch stream re-reads a run even without a counted result
/// (pairs in flight change when leases are handed out or expire).
const WATCH_REFRESH: Duration = Duration::from_secs(1);

type StatusStream = Pin<Box<dyn Stream<Item = Result<pb::RunStatus, Status>> + Send>>;

#[tonic::async_trait]
impl RunService for Runs {
    async fn create_run(
        &self,
        request: Request<pb::CreateRunRequest>,
    ) -> Result<Response<pb::CreateRunResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::CreateRunRequest {
            spec,
            reuse_identical,
        } = request.into_inner();
        let spec = RunSpec::try_from(required("spec", spec)?)?;
        let (run_id, reused) = self
            .core
            .runs()
            .create(spec, reuse_identical, actor)
            .await?;
        tracing::info!(run_id, reused, "run created");
        Ok(Response::new(pb::CreateRunResponse { run_id, reused }))
    }

    async fn list_runs(
        &self,
        _request: Request<pb::ListRunsRequest>,
    ) -> Result<Response<pb::ListRunsResponse>, Status> {
        let runs = self.core.queries().list_runs().await?;
        Ok(Response::new(pb::ListRunsResponse {
            runs: runs.into_iter().map(Into::into).collect(),
        }))
    }

    async fn get_run(
        &self,
        request: Request<pb::GetRunRequest>,
    ) -> Result<Response<pb::GetRunResponse>, Status> {
        let pb::GetRunRequest {
            run_id,
            include_history,
        } = request.into_inner();
        let queries = self.core.queries();
        let run = queries.get_run(run_id).await?;
        let (history, failures, llr) = if include_history {
            (
                queries.spsa_history(run_id).await?,
                queries.failures(run_id).await?,
                queries.llr_history(run_id).await?,
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        let RunWorkers {
            health: workers,
            build_failures: builds,
            serving,
        } = queries.run_workers(run.clone()).await?;
        let since = crate::store::now_ms() - crate::releases::RECENT_MS;
        let (versions, required) = self.registry.cluster_versions(since).await?;
        let worker_versions: Vec<pb::WorkerVersion> =
            versions.into_iter().map(Into::into).collect();
        let required_worker_version = required.map(|v| v.to_string()).unwrap_or_default();
        Ok(Response::new(pb::GetRunResponse {
            run: Some(run.into()),
            history: history.into_iter().map(Into::into).collect(),
            failures: failures.into_iter().map(Into::into).collect(),
            workers: workers
                .into_iter()
                .map(|w| {
                    let play = serving.workers.get(&w.sums.worker_id);
                    crate::convert::worker_health(w, play)
                })
                .collect(),
            llr_history: llr.into_iter().map(Into::into).collect(),
            build_failures: builds.into_iter().map(Into::into).collect(),
            workers_active: serving.active,
            workers_able: serving.able,
            worker_versions,
            required_worker_version,
        }))
    }

    async fn approve_run(
        &self,
        request: Request<pb::ApproveRunRequest>,
    ) -> Result<Response<pb::ApproveRunResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::ApproveRunRequest { run_id } = request.into_inner();
        let run = self.core.runs().approve(run_id, actor).await?;
        tracing::info!(run_id, "run approved");
        Ok(Response::new(pb::ApproveRunResponse {
            run: Some(run.into()),
        }))
    }

    async fn reject_run(
        &self,
        request: Request<pb::RejectRunRequest>,
    ) -> Result<Response<pb::RejectRunResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::RejectRunRequest { run_id, reason } = request.into_inner();
        let reason = reason.trim();
        if reason.is_empty() || reason.len() > 500 {
            return Err(bad("reason", "give why in 1 to 500 bytes"));
        }
        let run = self
            .core
            .runs()
            .reject(run_id, actor, reason.to_owned())
            .await?;
        tracing::info!(run_id, "run rejected");
        Ok(Response::new(pb::RejectRunResponse {
            run: Some(run.into()),
        }))
    }

    async fn resume_run(
        &self,
        request: Request<pb::ResumeRunRequest>,
    ) -> Result<Response<pb::ResumeRunResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::ResumeRunRequest { run_id } = request.into_inner();
        let run = self.core.runs().resume(run_id, actor).await?;
        tracing::info!(run_id, "run resumed");
        Ok(Response::new(pb::ResumeRunResponse {
            run: Some(run.into()),
        }))
    }

    async fn modify_run(
        &self,
        request: Request<pb::ModifyRunRequest>,
    ) -> Result<Response<pb::ModifyRunResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::ModifyRunRequest {
            run_id,
            pairs,
            priority,
            share,
        } = request.into_inner();
        let change = RunChange::new(pairs, priority, share).map_err(StoreError::from)?;
        let run = self.core.runs().modify(run_id, change, actor).await?;
        tracing::info!(run_id, "run modified");
        Ok(Response::new(pb::ModifyRunResponse {
            run: Some(run.into()),
        }))
    }

    async fn stop_run(
        &self,
        request: Request<pb::StopRunRequest>,
    ) -> Result<Response<pb::StopRunResponse>, Status> {
        let actor = Actor::from(&caller(&request)?);
        let pb::StopRunRequest { run_id } = request.into_inner();
        let run = self.core.runs().stop(run_id, actor).await?;
        tracing::info!(run_id, "run stopped");
        Ok(Response::new(pb::StopRunResponse {
            run: Some(run.into()),
        }))
    }

    type WatchRunStream = StatusStream;

    async fn watch_run(
        &self,
        request: Request<pb::WatchRunRequest>,
    ) -> Result<Response<Self::WatchRunStream>, Status> {
        let pb::WatchRunRequest { run_id } = request.into_inner();
        if run_id == 0 {
            return Err(bad("run_id", "must be at least 1"));
        }
        // Fail with NOT_FOUND before the stream starts.
        self.core.queries().get_run(run_id).await?;
        let (tx, rx) = mpsc::channel(16);
        let core = self.core.clone();
        let mut shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            let mut changes = core.subscribe();
            loop {
                let status = core.queries().get_run(run_id).await.map_err(Status::from);
                let ended = status
                    .as_ref()
                    .map_or(true, |s| s.state != RunState::Active);
                if tx.send(status.map(Into::into)).await.is_err() || ended {
                    return;
                }
                tokio::select! {
                    () = wait_for_change(&mut changes, run_id) => {}
                    () = tokio::time::sleep(WATCH_REFRESH) => {}
                    () = shutdown.recv() => return,
                    () = tx.closed() => return,
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    type ExportGamesStream = ExportStream;

    async fn export_games(
        &self,
        request: Request<pb::ExportGamesRequest>,
    ) -> Result<Response<Self::ExportGamesStream>, Status> {
        let pb::ExportGamesRequest { run_id, filter } = request.into_inner();
        if run_id == 0 {
            return Err(bad("run_id", "must be at least 1"));
        }
        let query = GameQuery::try_from(filter.unwrap_or_default())?;
        let (run, filter) = self.core.queries().export_start(run_id, query).await?;
        let (tx, rx) = mpsc::channel(2);
        let core = self.core.clone();
        tokio::spawn(async move {
            let mut after = 0;
            let mut players = game_export::default_players();
            loop {
                let (run, filter, names) = (run.clone(), filter.clone(), players.clone());
                let page = core.queries().export_page(run, filter, after, names).await;
                let (export, last, names) = match page {
                    Ok(page) => page,
                    Err(e) => {
                        let _ = tx.send(Err(Status::from(e))).await;
                        return;
                    }
                };
                players = names;
                for chunk in convert::export_chunks(export, EXPORT_CHUNK_BYTES) {
                    if tx.send(Ok(chunk)).await.is_err() {
                        return;
                    }
                }
                match last {
                    Some(id) => after = id,
                    None => return,
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// Waits for a change of `run_id` (a lagging receiver counts as a change).
async fn wait_for_change(changes: &mut tokio::sync::broadcast::Receiver<u64>, run_id: u64) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match changes.recv().await {
            Ok(id) if id == run_id => return,
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_flag_gives_the_cause_or_both_counts_of_their_kind() {
        let timed_out = mismatch_flag("e", "ab", 9, 0, 0, "bench timed out after 60 s");
        assert_eq!(
            timed_out,
            "engine 'e' (ab) gave no signature on a worker: bench timed out after 60 s"
        );
        let bench = mismatch_flag("e", "ab", 9, 8, 0, "");
        assert!(
            bench.contains("benched 8 nodes") && bench.contains("signature 9"),
            "{bench}"
        );
        let search = mismatch_flag("e", "ab", 9, 8, 6, "");
        assert!(
            search.contains("searched 8 nodes") && search.contains("(go depth 6) 9"),
            "{search}"
        );
        let long = mismatch_flag(&"n".repeat(500), "ab", 1, 0, 0, &"x".repeat(5000));
        assert!(long.len() < 400, "{} bytes", long.len());
    }
}
