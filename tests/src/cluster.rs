//! Helpers for the cluster tests: a deterministic [`SimulatedPlayer`], a
//! coordinator on a loopback port that a test can stop and restart, run
//! specs and a few admin calls.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use xq_coordinator::auth::{EphemeralToken, RateLimits, Role};
use xq_coordinator::game_export::{ExportedGame, GameQuery};
use xq_coordinator::http::Http;
use xq_coordinator::pace::PaceConfig;
use xq_coordinator::server::{self, ServerConfig, ServerError};
use xq_coordinator::service::{Core, SchedulerConfig, Store};
use xq_proto::connect::{Auth, channel};
use xq_proto::pb;
use xq_proto::pb::registry_service_client::RegistryServiceClient;
use xq_proto::pb::run_service_client::RunServiceClient;
use xq_proto::pb::worker_service_client::WorkerServiceClient;
use xq_proto::{BatchOutcome, Score, WorkSpec};
use xq_web::WebView;
use xq_worker::{BatchPlayer, Bench};

type EloFn = dyn Fn(&BTreeMap<String, i64>) -> f64 + Send + Sync;

/// A test-only player: games are drawn from a logistic Elo model, seeded by
/// the opening (run seed and opening index), so a lease's outcome depends
/// only on its work. Its games end by adjudication right after their
/// openings ([`xq_games::stand_in`]), so every result carries games that
/// pass the coordinator's checks. Player `i` has strength `strength(params_i)` Elo; draws
/// take 40 % of the probability mass the decisive edge leaves.
pub struct SimulatedPlayer {
    strength: Box<EloFn>,
    /// Wall time per pair, to keep batches in flight for a while.
    pub pair_delay: Duration,
    /// The speed it reports at registration (bench nodes per second).
    pub bench_nps: u64,
}

impl std::fmt::Debug for SimulatedPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimulatedPlayer")
            .field("pair_delay", &self.pair_delay)
            .finish_non_exhaustive()
    }
}

impl SimulatedPlayer {
    /// Player 0 is `elo` stronger than player 1 whatever their parameters.
    pub fn first_player_stronger(elo: f64) -> Self {
        Self::with_strength(move |params| {
            if params.contains_key(DEV_MARK) {
                elo
            } else {
                0.0
            }
        })
    }

    /// Strength as a function of a player's parameters.
    pub fn with_strength(
        f: impl Fn(&BTreeMap<String, i64>) -> f64 + Send + Sync + 'static,
    ) -> Self {
        SimulatedPlayer {
            strength: Box::new(f),
            pair_delay: Duration::ZERO,
            bench_nps: 1_000_000,
        }
    }

    fn game(elo: f64, rng: &mut impl Rng) -> Score {
        let s = 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
        let draw = 0.4 * (1.0 - (2.0 * s - 1.0).abs());
        let u: f64 = rng.random();
        if u < s - draw / 2.0 {
            Score::Win
        } else if u < s + draw / 2.0 {
            Score::Draw
        } else {
            Score::Loss
        }
    }
}

impl BatchPlayer for SimulatedPlayer {
    fn play(
        &self,
        work: &WorkSpec,
        cancel: &Arc<AtomicBool>,
        progress: &(dyn Fn(u32) + Sync),
    ) -> anyhow::Result<BatchOutcome> {
        let elo =
            (self.strength)(&work.players[0].params) - (self.strength)(&work.players[1].params);
        let mut scores = Vec::with_capacity(2 * work.pairs as usize);
        for i in 0..work.pairs {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(self.pair_delay);
            let index = work.openings.offset + u64::from(i);
            let mut rng = ChaCha8Rng::seed_from_u64(
                work.openings.seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            scores.push(Self::game(elo, &mut rng));
            scores.push(Self::game(elo, &mut rng));
            progress(i + 1);
        }
        let played = WorkSpec {
            pairs: (scores.len() / 2) as u32,
            ..work.clone()
        };
        Ok(xq_games::stand_in::adjudicated(&played, |g| {
            scores[g as usize]
        })?)
    }

    fn bench(&self) -> Bench {
        Bench {
            signature: 42,
            nps: self.bench_nps,
        }
    }
}

/// A fresh database path under the system temp dir (removed with its WAL
/// files by [`TempDb`]'s drop).
#[derive(Debug)]
pub struct TempDb(pub PathBuf);

impl TempDb {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("xq-test-{}-{tag}-{n}.db", std::process::id()));
        let db = TempDb(path);
        db.remove();
        db
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The core on the database file `db`, for what a test reads back of what
/// its server stored: the read-only queries the doors use.
pub fn core_on(db: &Path) -> Core {
    Core::new(
        Store::open(db).expect("open the database"),
        SchedulerConfig::default(),
    )
}

/// Every stored game of `run` in the database file `db`, in the order they
/// were counted, each with its lease's rule set ([`Queries::export`]).
///
/// [`Queries::export`]: xq_coordinator::service::Queries::export
pub async fn stored_games(db: &Path, run: u64) -> Vec<ExportedGame> {
    core_on(db)
        .queries()
        .export(run, GameQuery::default())
        .await
        .expect("stored games")
        .games
}

/// The admin token every test server accepts (in memory only).
pub const ADMIN_TOKEN: &str = "xqt_test_admin";
/// The worker token every test server accepts (in memory only).
pub const WORKER_TOKEN: &str = "xqt_test_worker";

/// The result of `lease` with every game drawn by adjudication right after
/// its opening, with those games ([`xq_games::stand_in`]): what a worker
/// that plays nothing but is honest about it sends.
pub fn drawn(lease: &pb::Lease) -> pb::GameResults {
    let work = WorkSpec::try_from(lease.work.clone().expect("the lease's work"))
        .expect("the lease's work decodes");
    xq_games::stand_in::adjudicated(&work, |_| Score::Draw)
        .expect("the lease's openings")
        .into()
}

/// Lease timing for tests: short leases, frequent heartbeats, quick retries;
/// accepts [`ADMIN_TOKEN`] and [`WORKER_TOKEN`]; no rate limits.
pub fn fast_config(lease_ttl: Duration) -> ServerConfig {
    ServerConfig {
        scheduler: SchedulerConfig {
            lease_ttl,
            heartbeat_interval: Duration::from_millis(100),
            idle_retry: Duration::from_millis(50),
            // Every lease one batch, so that tests can count leases.
            pace: PaceConfig {
                target: Duration::ZERO,
                ..PaceConfig::default()
            },
            ..SchedulerConfig::default()
        },
        tokens: vec![
            EphemeralToken::new("test-admin", Role::Personal, ADMIN_TOKEN),
            EphemeralToken::new("test-worker", Role::Worker, WORKER_TOKEN),
        ],
        limits: RateLimits::UNLIMITED,
        ..ServerConfig::default()
    }
}

/// A client that sends a token.
pub type Authed = InterceptedService<Channel, Auth>;
/// An admin client (run service) with a token.
pub type AdminClient = RunServiceClient<Authed>;
/// A worker-service client with a token.
pub type WorkerClient = WorkerServiceClient<Authed>;
/// A registry-service client with a token.
pub type RegistryClient = RegistryServiceClient<Authed>;

fn authed(url: &str, token: Option<&str>) -> Authed {
    InterceptedService::new(
        channel(url, None).expect("channel"),
        Auth::new(token).expect("token"),
    )
}

/// A run-service client with `token` (`None`: none).
pub fn run_client(url: &str, token: Option<&str>) -> AdminClient {
    RunServiceClient::new(authed(url, token))
}

/// A worker-service client with `token` (`None`: none).
pub fn worker_client(url: &str, token: Option<&str>) -> WorkerClient {
    WorkerServiceClient::new(authed(url, token))
}

/// A registry-service client with `token` (`None`: none).
pub fn registry_client(url: &str, token: Option<&str>) -> RegistryClient {
    RegistryServiceClient::new(authed(url, token))
}

/// A worker client with [`WORKER_TOKEN`], registered as `name` (one
/// thread, no bench): the client and its worker id.
pub async fn raw_worker(url: &str, name: &str) -> (WorkerClient, u64) {
    registered_worker(url, WORKER_TOKEN, name).await
}

/// A registration as a plain one-thread worker of version 0.1.0 named
/// `name`, with no machine, tools or target.
pub fn register_request(name: &str) -> pb::RegisterRequest {
    pb::RegisterRequest {
        name: name.to_owned(),
        threads: 1,
        version: "0.1.0".to_owned(),
        bench_signature: 0,
        bench_nps: 0,
        machine: None,
        tools: Vec::new(),
        target: String::new(),
        updated_from: String::new(),
        machine_id: String::new(),
    }
}

/// A worker client with `token`, registered as `name` (one thread, no
/// bench): the client and its worker id.
pub async fn registered_worker(url: &str, token: &str, name: &str) -> (WorkerClient, u64) {
    let mut rpc = worker_client(url, Some(token));
    let id = rpc
        .register(register_request(name))
        .await
        .expect("register")
        .into_inner()
        .worker_id;
    (rpc, id)
}

/// A coordinator serving a database until [`TestServer::stop`].
#[derive(Debug)]
pub struct TestServer {
    pub addr: SocketAddr,
    /// The web view's address, when it is served.
    pub web: Option<SocketAddr>,
    stop: oneshot::Sender<()>,
    handle: JoinHandle<Result<(), ServerError>>,
}

impl TestServer {
    /// On `addr` (`127.0.0.1:0` for any free port).
    pub async fn start(addr: &str, db: &Path, config: ServerConfig) -> Self {
        Self::serve(addr, None, db, config).await
    }

    /// [`TestServer::start`] with the web view on `127.0.0.1:0`.
    pub async fn start_with_web(addr: &str, db: &Path, config: ServerConfig) -> Self {
        let web = TcpListener::bind("127.0.0.1:0").await.expect("bind web");
        Self::serve(addr, Some(web), db, config).await
    }

    async fn serve(addr: &str, web: Option<TcpListener>, db: &Path, config: ServerConfig) -> Self {
        let listener = TcpListener::bind(addr).await.expect("bind");
        let addr = listener.local_addr().unwrap();
        let web_addr = web.as_ref().map(|l| l.local_addr().unwrap());
        let store = Store::open(db).expect("open store");
        let (stop, stopped) = oneshot::channel::<()>();
        let web = web.map(|l| Http::new(l, WebView));
        let handle = tokio::spawn(server::run_with_web(listener, web, store, config, async {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            web: web_addr,
            stop,
            handle,
        }
    }

    /// `http://ADDR` of the web view (panics when it is not served).
    pub fn web_url(&self) -> String {
        format!("http://{}", self.web.expect("the web view is served"))
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Triggers the shutdown future and waits for the server to end.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.handle.await.unwrap().unwrap();
    }
}

/// An admin client with [`ADMIN_TOKEN`].
pub async fn admin(url: &str) -> AdminClient {
    run_client(url, Some(ADMIN_TOKEN))
}

fn settings() -> pb::MatchSettings {
    pb::MatchSettings {
        limit: Some(pb::Limit {
            kind: Some(pb::limit::Kind::Nodes(1000)),
        }),
        hash_mb: 1,
        rules: "standard".to_owned(),
        openings: Some(xq_proto::OpeningSource::Builtin { random_plies: 4 }.into()),
        seed: 7,
        adjudication: Some(xq_proto::Adjudication::OFF.into()),
        draw_contempt: true,
        threads: 1,
    }
}

/// Settings for games with the real engine: `nodes` per move, tiny hash,
/// quick resign and draw adjudication, 300-ply cap.
pub fn engine_settings(nodes: u64) -> pb::MatchSettings {
    pb::MatchSettings {
        limit: Some(pb::Limit {
            kind: Some(pb::limit::Kind::Nodes(nodes)),
        }),
        hash_mb: 1,
        rules: "standard".to_owned(),
        openings: Some(xq_proto::OpeningSource::Builtin { random_plies: 4 }.into()),
        seed: 3,
        adjudication: Some(pb::Adjudication {
            resign_cp: 1000,
            resign_moves: 3,
            draw_cp: 10,
            draw_moves: 8,
            draw_after_move: 40,
            max_plies: 300,
        }),
        draw_contempt: true,
        threads: 1,
    }
}

/// The engine parameter whose presence marks the dev player for [`SimulatedPlayer`].
pub const DEV_MARK: &str = "tempo";

fn dev() -> std::collections::HashMap<String, i64> {
    [(DEV_MARK.to_owned(), 11)].into()
}

/// A fixed-games run; the dev player is `players[0]` (it sets [`DEV_MARK`]).
pub fn games_spec(pairs: u64, batch_pairs: u32) -> pb::RunSpec {
    pb::RunSpec {
        keep_games: Default::default(),
        name: "games".to_owned(),
        priority: 0,
        batch_pairs,
        settings: Some(settings()),
        kind: Some(pb::run_spec::Kind::Games(pb::GamesSpec {
            dev_params: dev(),
            base_params: Default::default(),
            pairs,
            engines: None,
        })),
        workers: None,
    }
}

/// An SPRT run of dev (`dev = 1`) against base.
pub fn sprt_spec(elo0: f64, elo1: f64, max_games: u64) -> pb::RunSpec {
    pb::RunSpec {
        keep_games: Default::default(),
        name: "sprt".to_owned(),
        priority: 0,
        batch_pairs: 8,
        settings: Some(settings()),
        kind: Some(pb::run_spec::Kind::Sprt(pb::SprtSpec {
            dev_params: dev(),
            base_params: Default::default(),
            elo0,
            elo1,
            alpha: 0.05,
            beta: 0.05,
            model: pb::EloModel::Normalized.into(),
            max_games,
            engines: None,
        })),
        workers: None,
    }
}

/// An SPSA run over the given parameters.
pub fn spsa_spec(params: Vec<pb::SpsaParam>, games: u64, batch_pairs: u32) -> pb::RunSpec {
    pb::RunSpec {
        keep_games: Default::default(),
        name: "spsa".to_owned(),
        priority: 0,
        batch_pairs,
        settings: Some(settings()),
        kind: Some(pb::run_spec::Kind::Spsa(pb::SpsaSpec {
            params,
            games,
            ..Default::default()
        })),
        workers: None,
    }
}

/// A variants run of the built-in engine at 150 nodes, with adjudication so
/// that games stay short.
pub fn variants_spec(rules: &[&str], pairs: u64, batch_pairs: u32) -> pb::RunSpec {
    pb::RunSpec {
        keep_games: Default::default(),
        name: "variants".to_owned(),
        priority: 0,
        batch_pairs,
        settings: Some(pb::MatchSettings {
            limit: Some(pb::Limit {
                kind: Some(pb::limit::Kind::Nodes(150)),
            }),
            hash_mb: 1,
            rules: "standard".to_owned(),
            openings: Some(xq_proto::OpeningSource::Builtin { random_plies: 4 }.into()),
            seed: 5,
            adjudication: Some(pb::Adjudication {
                resign_cp: 1000,
                resign_moves: 3,
                draw_cp: 10,
                draw_moves: 8,
                draw_after_move: 40,
                max_plies: 200,
            }),
            draw_contempt: true,
            threads: 1,
        }),
        kind: Some(pb::run_spec::Kind::Variants(pb::VariantsSpec {
            rules: rules.iter().map(|r| (*r).to_owned()).collect(),
            params: Default::default(),
            pairs,
        })),
        workers: None,
    }
}

pub async fn create(admin: &mut AdminClient, spec: pb::RunSpec) -> u64 {
    admin
        .create_run(pb::CreateRunRequest {
            spec: Some(spec),
            reuse_identical: false,
        })
        .await
        .expect("create run")
        .into_inner()
        .run_id
}

pub async fn status(admin: &mut AdminClient, run_id: u64) -> pb::RunStatus {
    admin
        .get_run(pb::GetRunRequest {
            run_id,
            include_history: false,
        })
        .await
        .expect("get run")
        .into_inner()
        .run
        .expect("run")
}

/// Follows `WatchRun` to the run's end (panics after `limit`).
pub async fn wait_for_end(admin: &mut AdminClient, run_id: u64, limit: Duration) -> pb::RunStatus {
    wait_for_end_or(admin, run_id, limit, String::new).await
}

/// [`wait_for_end`], whose panic after `limit` adds `context()` (a worker's
/// log, say) to its message.
pub async fn wait_for_end_or(
    admin: &mut AdminClient,
    run_id: u64,
    limit: Duration,
    context: impl FnOnce() -> String,
) -> pb::RunStatus {
    let watch = async {
        let mut stream = admin
            .watch_run(pb::WatchRunRequest { run_id })
            .await
            .expect("watch")
            .into_inner();
        let mut last = None;
        while let Some(status) = stream.next().await {
            last = Some(status.expect("status"));
        }
        last.expect("at least one status")
    };
    match tokio::time::timeout(limit, watch).await {
        Ok(status) => status,
        Err(_) => panic!("run {run_id} did not end within {limit:?}\n{}", context()),
    }
}

/// Polls until the run has counted at least `pairs` pairs.
/// A finished SPRT (0/10, the first player 60 Elo stronger) and a finished
/// 80-game SPSA of `chariot_value` and `horse_value` in leases of 4 pairs (a
/// strength peaked at chariot 900), both played by simulated players:
/// (SPRT id, its final status, SPSA id).
pub async fn finished_sprt_and_spsa(
    url: &str,
    grpc: &mut AdminClient,
) -> (u64, pb::RunStatus, u64) {
    let strong = Arc::new(SimulatedPlayer::first_player_stronger(60.0));
    let (stop, worker) = spawn_worker(url, strong, 2);
    let sprt = create(grpc, sprt_spec(0.0, 10.0, 20_000)).await;
    let sprt_end = wait_for_end(grpc, sprt, Duration::from_secs(120)).await;
    let _ = stop.send(());
    worker.await.unwrap();
    assert_eq!(sprt_end.state(), pb::RunState::Finished);

    let param = |name: &str, start: f64| pb::SpsaParam {
        name: name.to_owned(),
        start,
        min: start - 100.0,
        max: start + 100.0,
        c_end: 10.0,
        r_end: 0.005,
        is_float: false,
    };
    let spsa = create(
        grpc,
        spsa_spec(
            vec![param("chariot_value", 850.0), param("horse_value", 400.0)],
            80,
            4,
        ),
    )
    .await;
    let tuned = Arc::new(SimulatedPlayer::with_strength(|p| {
        let x = p.get("chariot_value").copied().unwrap_or(850) as f64;
        -0.05 * (x - 900.0) * (x - 900.0)
    }));
    let (stop, worker) = spawn_worker(url, tuned, 2);
    wait_for_end(grpc, spsa, Duration::from_secs(120)).await;
    let _ = stop.send(());
    worker.await.unwrap();
    (sprt, sprt_end, spsa)
}

pub async fn wait_for_pairs(admin: &mut AdminClient, run_id: u64, pairs: u64) {
    for _ in 0..2000 {
        let s = status(admin, run_id).await;
        if s.totals.as_ref().is_some_and(|t| t.pairs >= pairs) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("run {run_id} never reached {pairs} pairs");
}

/// Starts a worker client playing with `player`; stop it with the returned sender.
pub fn spawn_worker(
    url: &str,
    player: Arc<dyn BatchPlayer>,
    threads: u32,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<xq_worker::client::ClientSummary>,
) {
    spawn_worker_with(url, player, threads, |_| {})
}

/// [`spawn_worker`] with its client configuration changed by `configure`.
pub fn spawn_worker_with(
    url: &str,
    player: Arc<dyn BatchPlayer>,
    threads: u32,
    configure: impl FnOnce(&mut xq_worker::client::ClientConfig),
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<xq_worker::client::ClientSummary>,
) {
    let mut config =
        xq_worker::client::ClientConfig::new(url.to_owned(), "test".to_owned(), threads);
    config.token = Some(WORKER_TOKEN.to_owned());
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(200);
    configure(&mut config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        xq_worker::client::run(config, player, async {
            let _ = stopped.await;
        })
        .await
        .expect("worker")
    });
    (stop, handle)
}

/// Starts a worker client whose player is the game runner with `threads` game
/// threads and the default engine cache.
pub fn spawn_engine_worker(
    url: &str,
    threads: u32,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<xq_worker::client::ClientSummary>,
) {
    let player = Arc::new(xq_worker::EnginePlayer::new(threads as usize).expect("game threads"));
    spawn_worker(url, player, threads)
}
