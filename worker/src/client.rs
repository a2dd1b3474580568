//! The coordinator client: register, then loop lease → play → submit.
//!
//! * The [`BatchPlayer`] runs on a blocking thread (`spawn_blocking`); while it
//!   plays, the client sends a heartbeat every `heartbeat_interval_ms` (the
//!   latest of the registration's, the lease's and the last heartbeat's
//!   answers: a large fleet is told to beat less often) with the pairs done
//!   so far. If the coordinator
//!   answers that the lease no longer holds (expired, cancelled), the client
//!   sets the player's cancel flag and drops the lease's games.
//! * When the coordinator is unreachable (`UNAVAILABLE` and other transport
//!   errors), every call is retried with a back-off that doubles from
//!   [`ClientConfig::backoff_initial`] up to [`ClientConfig::backoff_max`].
//!   A finished result is kept and resubmitted until the coordinator answers
//!   (accepted, duplicate, or the lease is gone); heartbeats are not retried.
//!   A mistake no retry mends ([`ConnectFailure`]: a certificate the client
//!   refuses, TLS on one side only, a refused token) ends the client with its
//!   message instead.
//! * Fleet mode ([`ClientConfig::fleet_idle`]) ends the client, holding no
//!   lease, once the coordinator has had no work for it that long.
//! * Shutdown (the `shutdown` future of [`run`]) cancels the batch in play,
//!   waits for the player to return, and hands the lease back with
//!   `ReleaseLease` so its games are handed out again at once; games finished
//!   before the cancel are dropped, which keeps every lease all-or-nothing. A
//!   result that was already complete is submitted (one attempt) instead.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Status};
use xq_proto::pb;
use xq_proto::pb::worker_service_client::WorkerServiceClient;

use crate::build::{self, BuildConfig, BuildError};
use crate::signature::{self, MeasureError};
use crate::update;
use crate::{blob_cache, speed};

use crate::BatchPlayer;
use xq_proto::capacity::{GameNeeds, SpeedCheck, SpeedMethod};
pub use xq_proto::connect::{Auth, channel};
use xq_proto::connect_failure::{ConnectFailure, Dialed};
use xq_proto::{Arch, BatchOutcome, EngineRef, Invalid, Machine, OpeningSource, WorkSpec};

/// How the client reaches the coordinator and describes itself. Its
/// `Debug` output leaves the token out.
#[derive(Clone)]
pub struct ClientConfig {
    /// `http://HOST:PORT`, or `https://HOST:PORT` for TLS.
    pub coordinator: String,
    /// Sent as `authorization: Bearer <token>` when set.
    pub token: Option<String>,
    /// PEM certificate(s) that the coordinator's TLS certificate must chain
    /// to; `None`: the system's roots are not used, so `https` needs this.
    pub ca_pem: Option<Vec<u8>>,
    /// The file `ca_pem` was read from, named in errors.
    pub ca_file: Option<PathBuf>,
    /// Fleet mode: stop (successfully) after this long without work, counted
    /// while the coordinator answers that it has none.
    pub fleet_idle: Option<Duration>,
    /// Worker name for the coordinator's logs (e.g. the host name).
    pub name: String,
    /// Games the player runs in parallel.
    pub threads: u32,
    /// First retry delay after a failed call.
    pub backoff_initial: Duration,
    /// Longest retry delay.
    pub backoff_max: Duration,
    /// Where results the coordinator refuses are kept ([`crate::rejected`]).
    pub rejected_dir: PathBuf,
    /// The machine reported at registration, which also picks each engine's
    /// build; `None` reports none (as a worker older than the report), and
    /// takes engines' untagged executables only.
    pub machine: Option<Machine>,
    /// How source engines are built, and the tools reported at registration.
    pub build: BuildConfig,
    /// Refused as too old, replace this executable with the coordinator's
    /// worker release ([`crate::update`]) instead of stopping.
    pub auto_update: bool,
    /// The version this process replaced itself from, reported at
    /// registration.
    pub updated_from: Option<String>,
    /// The longest an engine's signature (its bench, or a fixed search) may
    /// take; past it the engine is killed and the time-out reported as the
    /// run's cause.
    pub signature_timeout: Duration,
    /// The id this worker keeps across restarts ([`crate::identity`]);
    /// `None`: it registers as a new worker every time.
    pub machine_id: Option<String>,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("coordinator", &self.coordinator)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("tls", &self.ca_pem.is_some())
            .field("fleet_idle", &self.fleet_idle)
            .field("name", &self.name)
            .field("threads", &self.threads)
            .field("rejected_dir", &self.rejected_dir)
            .field("machine", &self.machine)
            .field("build", &self.build)
            .field("auto_update", &self.auto_update)
            .field("machine_id", &self.machine_id)
            .finish_non_exhaustive()
    }
}

impl ClientConfig {
    /// Defaults: back-off from 250 ms to 30 s; refused results kept in
    /// [`crate::rejected::default_dir`]; this machine as
    /// [`crate::machine::detect`] finds it; builds with the tools on PATH
    /// ([`BuildConfig::detect`]) for its best ARCH value.
    pub fn new(coordinator: impl Into<String>, name: impl Into<String>, threads: u32) -> Self {
        ClientConfig {
            coordinator: coordinator.into(),
            token: None,
            ca_pem: None,
            ca_file: None,
            fleet_idle: None,
            name: name.into(),
            threads,
            backoff_initial: Duration::from_millis(250),
            backoff_max: Duration::from_secs(30),
            rejected_dir: crate::rejected::default_dir(),
            machine: Some(crate::machine::detect()),
            build: BuildConfig::detect(),
            auto_update: false,
            updated_from: None,
            signature_timeout: speed::BENCH_TIMEOUT,
            machine_id: None,
        }
    }
}

/// Why the client stopped other than by shutdown.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Connect(#[from] xq_proto::connect::ConnectError),
    #[error("the coordinator refused {call}: {status}")]
    Refused { call: &'static str, status: Status },
    /// A certificate, protocol or token mistake that no retry mends.
    #[error(transparent)]
    Unworkable(ConnectFailure),
    #[error("the coordinator sent a lease the worker cannot read: {0}")]
    BadLease(Invalid),
    #[error("the player failed: {0:#}")]
    Player(anyhow::Error),
    /// Refused as too old without `--auto-update`: the coordinator's message.
    #[error("{0}")]
    TooOld(String),
}

/// The longest wait a coordinator's `grpc-retry-pushback-ms` may ask for
/// before a result is submitted again (it asks for at most two minutes;
/// the lease is kept alive with heartbeats meanwhile). Longer asks are cut
/// to it, so that a wrong answer cannot park a finished result for days.
pub const PUSHBACK_MAX: Duration = Duration::from_secs(300);

/// First wait before another try of a failed self-update; it doubles up to
/// [`UPDATE_RETRY_MAX`].
pub const UPDATE_RETRY: Duration = Duration::from_secs(60);

/// Longest wait between tries of a failed self-update.
pub const UPDATE_RETRY_MAX: Duration = Duration::from_secs(3600);

/// What the client did before it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientSummary {
    /// Leases whose results the coordinator accepted.
    pub leases_accepted: u64,
    /// Game pairs in those leases.
    pub pairs_accepted: u64,
    /// Leases handed back or dropped (expired, cancelled, shut down,
    /// refused).
    pub leases_dropped: u64,
    /// Results the coordinator refused (kept in the rejected directory).
    pub results_refused: u64,
}

/// A worker-service client with its token.
pub type Rpc = WorkerServiceClient<InterceptedService<Channel, Auth>>;

/// Downloads the blob `sha256` (described as `what`, for errors) into the
/// blob cache `dir` with `DownloadBlob`: each chunk is written and hashed as
/// it arrives, and the file is kept only when its size and digest are right
/// (see [`blob_cache::Download`]). Returns the cached copy's path, or why
/// there is none.
pub async fn download_blob(
    rpc: &mut Rpc,
    dir: &Path,
    sha256: &str,
    what: &str,
    executable: bool,
) -> Result<std::path::PathBuf, String> {
    let mut download = blob_cache::Download::begin(dir, sha256, what).map_err(|e| e.to_string())?;
    let request = pb::DownloadBlobRequest {
        sha256: sha256.to_owned(),
    };
    let mut stream = rpc
        .download_blob(request)
        .await
        .map_err(|s| format!("cannot download {what}: {}", s.message()))?
        .into_inner();
    loop {
        match stream.message().await {
            Ok(Some(chunk)) => download
                .push(&chunk.data, chunk.size)
                .map_err(|e| e.to_string())?,
            Ok(None) => break,
            Err(s) => return Err(format!("cannot download {what}: {}", s.message())),
        }
    }
    tokio::task::spawn_blocking(move || download.finish(executable))
        .await
        .map_err(|e| format!("the cache task for {what} failed: {e}"))?
        .map_err(|e| e.to_string())
}

/// Runs the client until `shutdown` completes (then hands back the lease in
/// play), fleet mode finds no work for its idle time, or an unrecoverable
/// error (the coordinator refuses a call, a [`ConnectFailure`], the player
/// fails).
pub async fn run(
    config: ClientConfig,
    player: Arc<dyn BatchPlayer>,
    shutdown: impl Future<Output = ()>,
) -> Result<ClientSummary, ClientError> {
    let rpc = WorkerServiceClient::with_interceptor(
        channel(&config.coordinator, config.ca_pem.as_deref())?,
        Auth::new(config.token.as_deref())?,
    );
    let (stop_tx, stop_rx) = watch::channel(false);
    let client = Client {
        config,
        player,
        rpc,
        stop: stop_rx,
        worker_id: 0,
        heartbeat: Duration::from_secs(5),
        summary: ClientSummary::default(),
        signatures: std::collections::HashMap::new(),
        verified: std::collections::HashSet::new(),
        speeds: None,
    };
    let work = client.serve();
    tokio::pin!(work, shutdown);
    let mut stopping = false;
    loop {
        tokio::select! {
            result = &mut work => return result,
            () = &mut shutdown, if !stopping => {
                tracing::info!("shutting down: finishing or handing back the lease in play");
                stopping = true;
                let _ = stop_tx.send(true);
            }
        }
    }
}

struct Client {
    config: ClientConfig,
    player: Arc<dyn BatchPlayer>,
    rpc: Rpc,
    /// Signatures measured on this machine (or why none was), by engine
    /// SHA-256, the assets its options name and the signature's kind.
    signatures: std::collections::HashMap<String, Result<u64, String>>,
    /// Blobs of the cache this process has verified (by SHA-256).
    verified: std::collections::HashSet<String>,
    /// Speeds measured with engines, opened on first use.
    speeds: Option<speed::SpeedCache>,
    stop: watch::Receiver<bool>,
    worker_id: u64,
    /// The heartbeat interval the coordinator last told (Register, a lease
    /// or a heartbeat's answer); the next beat is due this long after the
    /// last.
    heartbeat: Duration,
    summary: ClientSummary,
}

/// Errors worth retrying: the coordinator is down, restarting or overloaded.
/// `Cancelled` is what tonic reports when the connection closes under a call (the
/// coordinator shutting down); the coordinator itself never answers with it.
fn transient(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::ResourceExhausted
            | Code::Cancelled
    )
}

/// Completes once shutdown has begun (the guard `wait_for` returns is not
/// `Send`, so it must not live in a `select!` output).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// How a played lease ended.
enum Played {
    Finished(BatchOutcome),
    Lost,
    Stopped(BatchOutcome),
}

impl Client {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Sleeps `delay`; false if shutdown came first.
    async fn sleep(&mut self, delay: Duration) -> bool {
        tokio::select! {
            () = tokio::time::sleep(delay) => true,
            () = stopped(&mut self.stop) => false,
        }
    }

    fn dialed(&self) -> Dialed {
        Dialed::new(&self.config.coordinator, self.config.ca_file.as_deref())
    }

    /// The error a refused `call` ends the client with: the
    /// [`ConnectFailure`] in plain words when it is one.
    fn refused(&self, call: &'static str, status: Status) -> ClientError {
        match ConnectFailure::of_status(&status, &self.dialed()) {
            Some(failure) => ClientError::Unworkable(failure),
            None => ClientError::Refused { call, status },
        }
    }

    /// Calls `f` until it succeeds or fails for a non-transient reason (a
    /// [`ConnectFailure`] is not transient whatever its code).
    /// `Ok(None)` means shutdown came during a back-off.
    async fn retry<T, F, Fut>(&mut self, call: &'static str, f: F) -> Result<Option<T>, Status>
    where
        F: Fn(Rpc) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let mut delay = self.config.backoff_initial;
        let dialed = self.dialed();
        loop {
            match f(self.rpc.clone()).await {
                Ok(response) => return Ok(Some(response.into_inner())),
                Err(status)
                    if transient(&status)
                        && ConnectFailure::of_status(&status, &dialed).is_none() =>
                {
                    tracing::warn!(call, error = %status.message(), "coordinator unreachable; retrying in {delay:?}");
                    if !self.sleep(delay).await {
                        return Ok(None);
                    }
                    delay = (delay * 2).min(self.config.backoff_max);
                }
                Err(status) => return Err(status),
            }
        }
    }

    async fn register(&mut self) -> Result<bool, ClientError> {
        let bench = self.player.bench();
        let request = pb::RegisterRequest {
            name: self.config.name.clone(),
            threads: self.config.threads,
            version: crate::version::version().to_owned(),
            bench_signature: bench.signature,
            bench_nps: bench.nps,
            machine: self.config.machine.clone().map(Into::into),
            tools: self.config.build.tools.iter().cloned().collect(),
            target: crate::version::TARGET.to_owned(),
            updated_from: self.config.updated_from.clone().unwrap_or_default(),
            machine_id: self.config.machine_id.clone().unwrap_or_default(),
        };
        let answer = self
            .retry("register", |mut rpc| {
                let request = request.clone();
                async move { rpc.register(request).await }
            })
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(status) => match update::too_old(&status) {
                Some(old) => {
                    self.too_old(old).await?;
                    return Ok(false);
                }
                None => return Err(self.refused("register", status)),
            },
        };
        let Some(answer) = answer else {
            return Ok(false);
        };
        self.worker_id = answer.worker_id;
        self.told_interval(answer.heartbeat_interval_ms);
        let machine = self.config.machine.as_ref();
        tracing::info!(
            worker_id = self.worker_id,
            bench_nps = bench.nps,
            arch = %machine.and_then(Machine::best_arch).map_or("-", Arch::name),
            flags = %machine.map_or_else(|| "not reported".to_owned(), |m| m.flags.to_string()),
            tools = ?self.config.build.tools,
            "registered"
        );
        Ok(true)
    }

    async fn serve(mut self) -> Result<ClientSummary, ClientError> {
        if !self.register().await? {
            return Ok(self.summary);
        }
        let mut idle_since = tokio::time::Instant::now();
        while !self.stopping() {
            let worker_id = self.worker_id;
            let answer = self
                .retry("request work", |mut rpc| async move {
                    rpc.request_work(pb::RequestWorkRequest { worker_id }).await
                })
                .await;
            let answer = match answer {
                Ok(Some(answer)) => answer,
                Ok(None) => break,
                // The coordinator lost our registration (e.g. a new database).
                Err(status) if status.code() == Code::NotFound => {
                    if !self.register().await? {
                        break;
                    }
                    continue;
                }
                Err(status) => match update::too_old(&status) {
                    Some(old) => {
                        self.too_old(old).await?;
                        break;
                    }
                    None => return Err(self.refused("request work", status)),
                },
            };
            match answer.lease {
                Some(lease) => {
                    self.told_interval(lease.heartbeat_interval_ms);
                    self.lease(lease).await?;
                    idle_since = tokio::time::Instant::now();
                }
                None => {
                    let mut wait = Duration::from_millis(answer.retry_after_ms.clamp(10, 60_000));
                    if let Some(limit) = self.config.fleet_idle {
                        let idle = idle_since.elapsed();
                        if idle >= limit {
                            tracing::info!(
                                idle_secs = idle.as_secs(),
                                "fleet mode: no work for {limit:?}; exiting"
                            );
                            break;
                        }
                        wait = wait.min(limit - idle);
                    }
                    if !self.sleep(wait).await {
                        break;
                    }
                }
            }
        }
        Ok(self.summary)
    }

    /// Refused as too old: without `--auto-update` that ends the worker with
    /// the coordinator's message; with it, the worker replaces itself
    /// ([`Client::replace_self`], which does not return when it succeeds),
    /// and reports each failure and tries again later, doubling the wait
    /// from [`UPDATE_RETRY`], until shutdown (`Ok`).
    async fn too_old(&mut self, old: update::TooOld) -> Result<(), ClientError> {
        if !self.config.auto_update {
            return Err(ClientError::TooOld(old.message));
        }
        if let Some(id) = old.worker_id {
            self.worker_id = id;
        }
        tracing::warn!(required = %old.required, "{}; updating", old.message);
        let mut wait = UPDATE_RETRY;
        loop {
            let failure = self.replace_self().await;
            tracing::error!(to = failure.to.as_deref().unwrap_or("-"), reason = %failure.reason, "the update failed; this worker keeps running, without work, and tries again in {wait:?}");
            if self.worker_id != 0 {
                let report = pb::ReportUpdateFailureRequest {
                    worker_id: self.worker_id,
                    reason: failure.reported_reason(),
                    to_version: failure.to.unwrap_or_default(),
                };
                if let Err(status) = self.rpc.report_update_failure(report).await {
                    tracing::warn!(error = %status, "could not report the failed update");
                }
            }
            if !self.sleep(wait).await {
                return Ok(());
            }
            wait = (wait * 2).min(UPDATE_RETRY_MAX);
        }
    }

    /// Replaces this executable with the coordinator's worker release and
    /// re-executes it ([`update`]'s steps); returns only when that failed,
    /// and why.
    async fn replace_self(&mut self) -> update::Failure {
        let request = pb::GetWorkerReleaseRequest {
            target: crate::version::TARGET.to_owned(),
        };
        let answer = self
            .rpc
            .get_worker_release(request)
            .await
            .map(tonic::Response::into_inner);
        let plan = match update::plan(answer) {
            Ok(plan) => plan,
            Err(failure) => return failure,
        };
        tracing::info!(from = %plan.from, to = %plan.to, sha256 = %plan.sha256, size = plan.size, "updating this worker");
        match download_blob(&mut self.rpc, &plan.dir, &plan.sha256, &plan.what(), true).await {
            Ok(new) => update::install(&plan, new).await,
            Err(reason) => plan.failed(reason),
        }
    }

    /// Plays one lease and settles it (submit, release or drop).
    async fn lease(&mut self, lease: pb::Lease) -> Result<(), ClientError> {
        let lease_id = lease.lease_id;
        let mut work = match lease.work.map(WorkSpec::try_from) {
            Some(Ok(work)) => work,
            Some(Err(status)) => {
                self.release(lease_id).await;
                return Err(ClientError::BadLease(status));
            }
            None => {
                self.release(lease_id).await;
                return Err(ClientError::BadLease(Invalid::new("lease.work", "missing")));
            }
        };
        tracing::info!(
            lease_id,
            run_id = lease.run_id,
            pairs = work.pairs,
            "playing lease"
        );
        if let OpeningSource::Book { sha256, .. } = &work.openings.source {
            let fetched = match self.player.blob_cache().map(Path::to_path_buf) {
                Some(dir) => {
                    let what = format!("opening book asset:{sha256}");
                    self.fetch_blob(&dir, sha256, &what, false).await
                }
                None => Err("this player cannot read opening books from the registry".into()),
            };
            if let Err(e) = fetched {
                tracing::warn!(lease_id, error = %e, "cannot have the lease's opening book");
                self.release(lease_id).await;
                self.summary.leases_dropped += 1;
                return Ok(());
            }
        }
        if let Err(e) = self.choose_builds(&mut work) {
            tracing::warn!(lease_id, error = %e, "cannot play the lease's engines here");
            self.release(lease_id).await;
            self.summary.leases_dropped += 1;
            return Ok(());
        }
        for engine in work.players.iter_mut().filter_map(|p| p.engine.as_mut()) {
            if !self.resolve_engine(lease_id, engine).await? {
                self.release(lease_id).await;
                self.summary.leases_dropped += 1;
                return Ok(());
            }
        }
        for engine in work.players.iter().filter_map(|p| p.engine.clone()) {
            if !self.prepare_engine(lease_id, &engine).await? {
                self.release(lease_id).await;
                self.summary.leases_dropped += 1;
                return Ok(());
            }
        }
        let at_once = self.player.games_at_once(&work);
        if at_once == 0 {
            tracing::warn!(
                lease_id,
                needs = ?GameNeeds::of(&work.players),
                "one game of the lease needs more cores or memory than this worker offers"
            );
            self.release(lease_id).await;
            self.summary.leases_dropped += 1;
            return Ok(());
        }
        if let Some(check) = lease.speed {
            let check = match SpeedCheck::try_from(check) {
                Ok(check) => check,
                Err(e) => {
                    self.release(lease_id).await;
                    return Err(ClientError::BadLease(e));
                }
            };
            let Some(factor) = self.speed_factor(lease_id, &work, check).await? else {
                self.summary.leases_dropped += 1;
                return Ok(());
            };
            if factor != 1.0 {
                for p in &mut work.players {
                    p.limit = p.limit.time_scaled(factor);
                }
            }
        }
        tracing::info!(lease_id, games_at_once = at_once, limit = %work.players[0].limit, "games start");
        let pairs = work.pairs;
        match self.play(lease_id, work).await? {
            Played::Finished(outcome) => self.submit(lease_id, outcome, true).await,
            Played::Stopped(outcome) if outcome.totals.pairs == u64::from(pairs) => {
                self.submit(lease_id, outcome, false).await
            }
            Played::Stopped(_) => {
                self.release(lease_id).await;
                self.summary.leases_dropped += 1;
            }
            Played::Lost => self.summary.leases_dropped += 1,
        }
        Ok(())
    }

    /// Runs the player on a blocking thread, with heartbeats meanwhile.
    async fn play(&mut self, lease_id: u64, work: WorkSpec) -> Result<Played, ClientError> {
        let cancel = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU32::new(0));
        let player = Arc::clone(&self.player);
        let mut handle = tokio::task::spawn_blocking({
            let (cancel, done) = (Arc::clone(&cancel), Arc::clone(&done));
            move || {
                player.play(&work, &cancel, &|pairs| {
                    done.store(pairs, Ordering::Relaxed);
                })
            }
        });
        let mut beat_at = Instant::now() + self.heartbeat;
        let mut lost = false;
        let mut stop = self.stop.clone();
        let outcome = loop {
            tokio::select! {
                joined = &mut handle => break joined,
                () = tokio::time::sleep_until(beat_at.into()), if !lost => {
                    let pairs_done = done.load(Ordering::Relaxed);
                    if !self.heartbeat(lease_id, pairs_done).await {
                        lost = true;
                        cancel.store(true, Ordering::Relaxed);
                    }
                    beat_at = Instant::now() + self.heartbeat;
                }
                () = stopped(&mut stop), if !cancel.load(Ordering::Relaxed) => {
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        };
        let outcome = match outcome {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(err)) => {
                self.release(lease_id).await;
                return Err(ClientError::Player(err));
            }
            Err(join) => {
                self.release(lease_id).await;
                return Err(ClientError::Player(anyhow::anyhow!(
                    "the player panicked: {join}"
                )));
            }
        };
        Ok(if lost {
            Played::Lost
        } else if self.stopping() {
            Played::Stopped(outcome)
        } else {
            Played::Finished(outcome)
        })
    }

    /// Takes the heartbeat interval an answer told, in ms (0: none told,
    /// keep the current one; at least 50 ms).
    fn told_interval(&mut self, ms: u64) {
        if ms > 0 {
            self.heartbeat = Duration::from_millis(ms.max(50));
        }
    }

    /// One heartbeat; false if the coordinator says the lease no longer holds.
    /// An unreachable coordinator is not an answer: keep playing.
    async fn heartbeat(&mut self, lease_id: u64, pairs_done: u32) -> bool {
        let request = pb::HeartbeatRequest {
            worker_id: self.worker_id,
            leases: vec![pb::LeaseProgress {
                lease_id,
                pairs_done,
            }],
        };
        match self.rpc.heartbeat(request).await {
            Ok(answer) => {
                let answer = answer.into_inner();
                self.told_interval(answer.heartbeat_interval_ms);
                let state = answer
                    .leases
                    .first()
                    .map_or(pb::LeaseState::Unknown, |l| l.state());
                if state != pb::LeaseState::Active {
                    tracing::warn!(
                        lease_id,
                        state = state.as_str_name(),
                        "lease lost; dropping it"
                    );
                    return false;
                }
                true
            }
            Err(status) => {
                tracing::warn!(lease_id, error = %status.message(), "heartbeat failed");
                !matches!(status.code(), Code::NotFound | Code::InvalidArgument)
            }
        }
    }

    /// Submits until the coordinator answers; `retry = false` tries once
    /// (used during shutdown).
    ///
    /// A result refused for load (`RESOURCE_EXHAUSTED`) or not delivered
    /// (the coordinator unreachable) is submitted again after the delay the
    /// coordinator asks for ([`xq_proto::connect::RETRY_PUSHBACK`]) or the back-off, and the
    /// lease is kept alive with heartbeats meanwhile, however long that
    /// takes. A submission answered `DUPLICATE` was counted by an earlier
    /// attempt whose answer was lost: it is done.
    async fn submit(&mut self, lease_id: u64, outcome: BatchOutcome, retry: bool) {
        let pairs = outcome.totals.pairs;
        let request = pb::SubmitResultRequest {
            worker_id: self.worker_id,
            lease_id,
            results: Some(outcome.into()),
        };
        let answer = if retry {
            // Not `self.retry`: a result must outlive a shutdown request made
            // while the coordinator is down only for one more attempt.
            let mut delay = self.config.backoff_initial;
            let mut last_beat = Instant::now();
            loop {
                match self.rpc.submit_result(request.clone()).await {
                    Ok(answer) => break Ok(answer.into_inner()),
                    Err(status) if transient(&status) && !self.stopping() => {
                        let wait = match xq_proto::connect::retry_pushback(&status) {
                            Some(asked) => asked.min(PUSHBACK_MAX),
                            None => {
                                let wait = delay;
                                delay = (delay * 2).min(self.config.backoff_max);
                                wait
                            }
                        };
                        tracing::warn!(lease_id, code = ?status.code(), error = %status.message(), "result not taken yet; keeping it and the lease, submitting again in {wait:?}");
                        self.wait_keeping(lease_id, pairs, wait, &mut last_beat)
                            .await;
                    }
                    Err(status) => break Err(status),
                }
            }
        } else {
            self.rpc
                .submit_result(request.clone())
                .await
                .map(tonic::Response::into_inner)
        };
        match answer.map(|a| a.status()) {
            Ok(status @ (pb::SubmitStatus::Accepted | pb::SubmitStatus::Duplicate)) => {
                self.summary.leases_accepted += 1;
                self.summary.pairs_accepted += pairs;
                if status == pb::SubmitStatus::Duplicate {
                    tracing::info!(
                        lease_id,
                        pairs,
                        "result already counted (an earlier answer was lost)"
                    );
                } else {
                    tracing::info!(lease_id, pairs, "result accepted");
                }
            }
            Ok(status) => {
                self.summary.leases_dropped += 1;
                tracing::warn!(
                    lease_id,
                    status = status.as_str_name(),
                    "result not counted"
                );
            }
            Err(status) if transient(&status) => {
                self.summary.leases_dropped += 1;
                tracing::error!(lease_id, error = %status, "result not delivered; dropping it");
            }
            Err(status) => {
                self.summary.leases_dropped += 1;
                self.summary.results_refused += 1;
                let dir = &self.config.rejected_dir;
                match crate::rejected::keep(dir, &request, &self.config.coordinator, &status) {
                    Ok(path) => tracing::error!(
                        lease_id,
                        code = ?status.code(),
                        message = %status.message(),
                        path = %path.display(),
                        "result refused by the coordinator; kept it, not retrying"
                    ),
                    Err(e) => tracing::error!(
                        lease_id,
                        code = ?status.code(),
                        message = %status.message(),
                        dir = %dir.display(),
                        error = %e,
                        "result refused by the coordinator; could not keep it"
                    ),
                }
            }
        }
    }

    /// Waits `wait` (or until shutdown) with a heartbeat for `lease_id`
    /// (all its `pairs` played) whenever one is due since `last_beat`.
    async fn wait_keeping(
        &mut self,
        lease_id: u64,
        pairs: u64,
        wait: Duration,
        last_beat: &mut Instant,
    ) {
        let until = Instant::now() + wait;
        loop {
            let beat_at = *last_beat + self.heartbeat;
            if beat_at >= until {
                self.sleep(until.saturating_duration_since(Instant::now()))
                    .await;
                return;
            }
            if !self
                .sleep(beat_at.saturating_duration_since(Instant::now()))
                .await
            {
                return;
            }
            let done = u32::try_from(pairs).unwrap_or(u32::MAX);
            self.heartbeat(lease_id, done).await;
            *last_beat = Instant::now();
        }
    }

    /// Makes sure the blob `sha256` (described as `what`) is in the player's
    /// cache `dir`, downloading it chunk by chunk and verifying it as it is
    /// written if needed. A blob verified once by this process is not hashed
    /// again. `Err` says why it cannot be had.
    async fn fetch_blob(
        &mut self,
        dir: &Path,
        sha256: &str,
        what: &str,
        executable: bool,
    ) -> Result<(), String> {
        if self.verified.contains(sha256) {
            return Ok(());
        }
        let (dir2, sha) = (dir.to_path_buf(), sha256.to_owned());
        let cached = tokio::task::spawn_blocking(move || blob_cache::has(&dir2, &sha))
            .await
            .unwrap_or(false);
        if !cached {
            let path = download_blob(&mut self.rpc, dir, sha256, what, executable).await?;
            tracing::info!(what, path = %path.display(), "downloaded and verified");
        }
        self.verified.insert(sha256.to_owned());
        Ok(())
    }

    /// Replaces each player's engine by the build this machine takes
    /// ([`EngineRef::resolved_for`]), which is then fetched and benched as
    /// its one executable. `Err` names an engine with no build for it.
    fn choose_builds(&self, work: &mut WorkSpec) -> Result<(), String> {
        let machine = self.config.machine.as_ref();
        for engine in work.players.iter_mut().filter_map(|p| p.engine.as_mut()) {
            if engine.binaries.is_empty() {
                continue;
            }
            let (arch, chosen) = engine.resolved_for(machine).ok_or_else(|| {
                format!(
                    "no build of engine '{}' runs on this machine ({})",
                    engine.name,
                    machine.map_or_else(|| "not reported".to_owned(), |m| m.flags.to_string())
                )
            })?;
            tracing::info!(
                engine = %engine.name,
                build = %arch.map_or("untagged", Arch::name),
                sha256 = %chosen.sha256,
                "chose the engine's build for this machine"
            );
            *engine = chosen;
        }
        Ok(())
    }

    /// Turns a source engine of the lease into a concrete executable: builds
    /// it (or finds it built, [`build`]) into the player's blob cache and
    /// names it there by SHA-256 and size, as a registered engine is named.
    /// A registered engine is left as it is. `false` when there is no
    /// executable: a failed build is reported (`ReportBuildFailure`).
    async fn resolve_engine(
        &mut self,
        lease_id: u64,
        engine: &mut EngineRef,
    ) -> Result<bool, ClientError> {
        let Some(source) = engine.source.clone() else {
            return Ok(true);
        };
        let Some(blobs) = self.player.blob_cache().map(Path::to_path_buf) else {
            tracing::warn!(engine = %engine.name, "this player cannot play external engines");
            return Ok(false);
        };
        let label = source.label();
        tracing::info!(lease_id, engine = %engine.name, source = %label, "building a source engine");
        match self
            .build_with_heartbeats(lease_id, source.clone(), blobs)
            .await
        {
            Ok(built) => {
                if built.cached {
                    tracing::info!(engine = %engine.name, source = %label, sha256 = %built.sha256, "build cache hit: not rebuilding");
                } else {
                    tracing::info!(engine = %engine.name, source = %label, sha256 = %built.sha256, size = built.size, "built");
                }
                engine.sha256 = built.sha256;
                engine.size = built.size;
                engine.source = None;
                Ok(true)
            }
            Err(BuildError::Cancelled) => {
                tracing::warn!(lease_id, source = %label, "build cancelled");
                Ok(false)
            }
            Err(BuildError::Failed { reason, log_tail }) => {
                tracing::error!(lease_id, source = %label, %reason, "the build failed; reporting it\n{log_tail}");
                let report = pb::ReportBuildFailureRequest {
                    lease_id,
                    worker_id: self.worker_id,
                    commit: source.commit,
                    reason,
                    log_tail,
                };
                match self.rpc.report_build_failure(report).await {
                    Ok(answer) if answer.get_ref().run_stopped => {
                        tracing::warn!(
                            lease_id,
                            "the coordinator stopped the run for failed builds"
                        );
                    }
                    Ok(_) => {}
                    Err(status) => {
                        tracing::warn!(error = %status, "could not report the failed build")
                    }
                }
                Ok(false)
            }
        }
    }

    /// Builds `source` on a blocking thread, with heartbeats for the lease
    /// meanwhile (a long build must not let it lapse); a lost lease or a
    /// shutdown cancels the build.
    async fn build_with_heartbeats(
        &mut self,
        lease_id: u64,
        source: xq_proto::EngineSource,
        blobs: std::path::PathBuf,
    ) -> Result<build::Built, BuildError> {
        let mut config = self.config.build.clone();
        config.arch = build::arch_for(self.config.machine.as_ref());
        self.blocking_with_heartbeats(lease_id, move |cancel| {
            build::build(&config, &source, &blobs, &cancel)
        })
        .await
        .unwrap_or_else(|e| {
            Err(BuildError::Failed {
                reason: format!("the build task failed: {e}"),
                log_tail: String::new(),
            })
        })
    }

    /// Runs `job` on a blocking thread with heartbeats for the lease
    /// meanwhile; the flag it is given is set when the lease is lost or the
    /// worker stops, and `job` must then end soon.
    async fn blocking_with_heartbeats<T: Send + 'static>(
        &mut self,
        lease_id: u64,
        job: impl FnOnce(Arc<AtomicBool>) -> T + Send + 'static,
    ) -> Result<T, tokio::task::JoinError> {
        let cancel = Arc::new(AtomicBool::new(false));
        let mut handle = tokio::task::spawn_blocking({
            let cancel = Arc::clone(&cancel);
            move || job(cancel)
        });
        let mut beat_at = Instant::now() + self.heartbeat;
        let mut stop = self.stop.clone();
        loop {
            tokio::select! {
                joined = &mut handle => break joined,
                () = tokio::time::sleep_until(beat_at.into()), if !cancel.load(Ordering::Relaxed) => {
                    if !self.heartbeat(lease_id, 0).await {
                        cancel.store(true, Ordering::Relaxed);
                    }
                    beat_at = Instant::now() + self.heartbeat;
                }
                () = stopped(&mut stop), if !cancel.load(Ordering::Relaxed) => {
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// Makes sure `engine` and the assets its options name are in the
    /// player's cache (downloading and verifying them if needed) and that its
    /// bench signature here, measured with those assets, matches the registry's.
    /// `false` when it cannot be played: the mismatch or failure is reported.
    async fn prepare_engine(
        &mut self,
        lease_id: u64,
        engine: &EngineRef,
    ) -> Result<bool, ClientError> {
        let Some(dir) = self.player.blob_cache().map(Path::to_path_buf) else {
            tracing::warn!(engine = %engine.name, "this player cannot play external engines");
            return Ok(false);
        };
        let what = format!("engine '{}'", engine.name);
        if let Err(e) = self.fetch_blob(&dir, &engine.sha256, &what, true).await {
            tracing::warn!(engine = %engine.name, error = %e, "cannot have the engine");
            return Ok(false);
        }
        let mut key = engine.sha256.clone();
        for (option, sha) in engine.asset_options() {
            let what = format!("asset {option}=asset:{sha} of engine '{}'", engine.name);
            if let Err(e) = self.fetch_blob(&dir, sha, &what, false).await {
                tracing::warn!(engine = %engine.name, error = %e, "cannot have the engine's asset");
                return Ok(false);
            }
            key += &format!(" {option}={sha}");
        }
        let Some(expected) = engine.signature else {
            return Ok(true);
        };
        if let Some(depth) = expected.depth() {
            key += &format!(" go depth {depth}");
        }
        let measured = match self.signatures.get(&key) {
            Some(s) => s.clone(),
            None => {
                tracing::info!(engine = %engine.name, signature = %engine.signature_text(), "measuring the engine's signature");
                let (engine2, dir2) = (engine.clone(), dir.clone());
                let timeout = self.config.signature_timeout;
                let joined = self
                    .blocking_with_heartbeats(lease_id, move |cancel| {
                        signature::measure(&engine2, &dir2, expected, timeout, &cancel)
                    })
                    .await;
                let s = match joined {
                    Ok(Ok(m)) => {
                        if let Some(nps) = m.nps {
                            let key = speed::key(engine, self.config.machine.as_ref());
                            let measured = speed::Measured {
                                nps,
                                method: SpeedMethod::Bench,
                            };
                            self.speeds
                                .get_or_insert_with(|| speed::SpeedCache::open(&dir))
                                .insert(key, measured);
                        }
                        Ok(m.nodes)
                    }
                    Ok(Err(MeasureError::Cancelled)) => {
                        tracing::warn!(engine = %engine.name, lease_id, "signature measurement cancelled: the lease is lost or the worker stops");
                        return Ok(false);
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(engine = %engine.name, error = %e, "no signature measured");
                        Err(e.cause())
                    }
                    Err(e) => Err(format!("the signature task failed: {e}")),
                };
                self.signatures.insert(key, s.clone());
                s
            }
        };
        if measured == Ok(expected.nodes()) {
            return Ok(true);
        }
        let (measured, failure) = match measured {
            Ok(n) => (n, String::new()),
            Err(why) => (0, why),
        };
        tracing::error!(
            engine = %engine.name,
            expected = %engine.signature_text(),
            measured,
            %failure,
            "engine signature differs from the declared one, or none was measured; refusing the run"
        );
        let report = pb::ReportEngineMismatchRequest {
            worker_id: self.worker_id,
            lease_id,
            name: engine.name.clone(),
            sha256: engine.sha256.clone(),
            expected: expected.nodes(),
            measured,
            depth: expected.depth().unwrap_or(0),
            failure,
        };
        if let Err(status) = self.rpc.report_engine_mismatch(report).await {
            tracing::warn!(error = %status, "could not report the engine mismatch");
        }
        Ok(false)
    }

    /// Measures this worker's speed with the engine `check` names (once per
    /// engine build and machine, [`speed`]), reports it and returns the
    /// factor the coordinator answers. `None` when the lease is not to be
    /// played: too slow for the run (the coordinator took it back), or lost.
    async fn speed_factor(
        &mut self,
        lease_id: u64,
        work: &WorkSpec,
        check: SpeedCheck,
    ) -> Result<Option<f64>, ClientError> {
        let player = &work.players[usize::from(check.player)];
        let measured = match (&player.engine, self.player.blob_cache()) {
            (None, _) => Some(speed::Measured {
                nps: self.player.bench().nps,
                method: SpeedMethod::Bench,
            })
            .filter(|m| m.nps > 0),
            (Some(engine), Some(dir)) => {
                let dir = dir.to_path_buf();
                let key = speed::key(engine, self.config.machine.as_ref());
                let cache = self
                    .speeds
                    .get_or_insert_with(|| speed::SpeedCache::open(&dir));
                match cache.get(&key) {
                    Some(m) => Some(m),
                    None => {
                        tracing::info!(engine = %engine.name, "measuring this machine's speed with the engine");
                        let engine2 = engine.clone();
                        let measured =
                            tokio::task::spawn_blocking(move || speed::measure(&engine2, &dir))
                                .await
                                .map_err(|e| anyhow::anyhow!("the measurement task failed: {e}"))
                                .and_then(|m| m);
                        match measured {
                            Ok(m) => {
                                if let Some(cache) = self.speeds.as_mut() {
                                    cache.insert(key, m);
                                }
                                Some(m)
                            }
                            Err(e) => {
                                tracing::warn!(engine = %engine.name, error = %format!("{e:#}"), "cannot measure the engine's speed");
                                None
                            }
                        }
                    }
                }
            }
            (Some(_), None) => None,
        };
        let (nps, method) = measured.map_or((0, SpeedMethod::Search), |m| (m.nps, m.method));
        let request = pb::ReportEngineSpeedRequest {
            worker_id: self.worker_id,
            lease_id,
            nps,
            method: method.name().to_owned(),
        };
        let answer = self
            .retry("report engine speed", |mut rpc| {
                let request = request.clone();
                async move { rpc.report_engine_speed(request).await }
            })
            .await;
        match answer {
            Ok(Some(answer)) => {
                tracing::info!(
                    lease_id,
                    nps,
                    method = method.name(),
                    factor = answer.factor,
                    "engine speed reported"
                );
                Ok(Some(answer.factor))
            }
            Ok(None) => Ok(None),
            Err(status) if status.code() == Code::FailedPrecondition => {
                tracing::warn!(lease_id, reason = %status.message(), "too slow for the run");
                Ok(None)
            }
            Err(status) if status.code() == Code::NotFound => {
                tracing::warn!(lease_id, reason = %status.message(), "the lease no longer holds");
                Ok(None)
            }
            Err(status) => Err(ClientError::Refused {
                call: "report engine speed",
                status,
            }),
        }
    }

    /// Hands a lease back (one attempt; if it fails, the lease expires).
    async fn release(&mut self, lease_id: u64) {
        let request = pb::ReleaseLeaseRequest {
            worker_id: self.worker_id,
            lease_id,
        };
        let call = tokio::time::timeout(Duration::from_secs(5), self.rpc.release_lease(request));
        match call.await {
            Ok(Ok(_)) => tracing::info!(lease_id, "lease handed back"),
            Ok(Err(status)) => {
                tracing::warn!(lease_id, error = %status, "could not hand back the lease; it will expire")
            }
            Err(_) => tracing::warn!(lease_id, "handing back the lease timed out; it will expire"),
        }
    }
}
