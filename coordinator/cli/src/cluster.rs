//! Cluster commands: `serve`, run creation (`sprt`, `spsa`, `games`),
//! `status`, `watch`, `report`, `stop` and embedded `local` mode.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use xq_coordinator::auth::{Rate, RateLimits};
use xq_coordinator::git::{GitConfig, GitProtocols};
use xq_coordinator::http::Http;
use xq_coordinator::local::{LocalCluster, PlayerFactory};
use xq_coordinator::pace::{DEFAULT_MAX_PAIRS, PaceConfig};
use xq_coordinator::report::{versions, workers};
use xq_coordinator::server::{self, ServerConfig};
use xq_coordinator::service::registry::{BlobGc, UploadQuota};
use xq_coordinator::service::{CheckConfig, Durability, SchedulerConfig, Store, StoreOptions};
use xq_proto::pb;
use xq_web::WebView;
use xq_worker::BatchPlayer;

use super::display::{self, Admin};
use super::registry::{Coordinator, PlaceArgs};
use super::remote::Remote;
use super::report_variants;
use xq_coordinator::in_process::Acting;
use xq_coordinator::run_args::{
    DatagenRunArgs, GamesRunArgs, KindArgs, SprtRunArgs, SpsaRunArgs, VariantsRunArgs,
};
use xq_coordinator::runs::Section;
use xq_coordinator::runs::sources::DEFAULT_FAILURES_TO_STOP;
use xq_proto::{out, outln};

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new().context("start the async runtime")
}

/// `serve`: run the coordinator.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// SQLite database (created if missing); the coordinator's only state.
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Also serve the web view and `/metrics` on this address (read-only for
    /// anyone who can reach it; stopping or creating a run needs a personal token).
    /// With --tls-cert it serves HTTPS with the same certificate, unless
    /// --http-plain.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Serve the web view as plain HTTP even with --tls-cert: only for a TLS
    /// proxy in front of --http (passwords, session cookies and the tokens
    /// shown on /account would otherwise cross the network in clear).
    #[arg(long, requires = "http")]
    http_plain: bool,
    /// The address of a reverse proxy in front of --http (repeatable): the
    /// sign-in limits count a request from it against the client address
    /// its `X-Forwarded-For` names, not against the proxy's.
    #[arg(long, value_name = "IP", requires = "http")]
    trusted_proxy: Vec<std::net::IpAddr>,
    /// Lease time-to-live in seconds (extended by every heartbeat); workers
    /// are told to beat every sixth of it, so N workers send 6·N/SECS
    /// heartbeats a second, until --heartbeats-per-sec stretches both.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    lease_secs: u64,
    /// Heartbeats a second the fleet is paced to: past this many times the
    /// heartbeat interval in workers, the interval and the lease's life
    /// stretch in proportion (100,000 workers beat every 50 s at 2,000);
    /// 0: never stretched.
    #[arg(long, value_name = "N", default_value_t = xq_coordinator::service::config::DEFAULT_HEARTBEAT_BUDGET)]
    heartbeats_per_sec: u32,
    /// TLS certificate chain (PEM, the server's certificate first, e.g.
    /// coordinator.pem from `xq-coordinator cert`); with --tls-key, serves
    /// TLS only, on the gRPC port and the web view's (--http). A certificate no client would accept (a CA certificate,
    /// expired, naming no host) or a key that is not its own is refused.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM, e.g. coordinator-key.pem).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Requests per second per worker token (0 = unlimited).
    #[arg(long, default_value_t = 50.0)]
    worker_rate: f64,
    /// Burst size per worker token.
    #[arg(long, default_value_t = 100.0)]
    worker_burst: f64,
    /// Requests per second per personal token (0 = unlimited).
    #[arg(long, alias = "admin-rate", default_value_t = 20.0)]
    personal_rate: f64,
    /// Burst size per personal token.
    #[arg(long, alias = "admin-burst", default_value_t = 50.0)]
    personal_burst: f64,
    /// Calls without a token (health checks, reflection) per second per
    /// client address (0 = unlimited).
    #[arg(long, default_value_t = 10.0)]
    open_rate: f64,
    /// Burst size per client address for calls without a token.
    #[arg(long, default_value_t = 50.0)]
    open_burst: f64,
    /// Cap the database at N pages of 4 KiB (SQLite's max_page_count), so
    /// writes beyond it fail as on a full disk; for tests and hard quotas.
    #[arg(long)]
    max_db_pages: Option<u64>,
    /// `full`: every commit is on disk before the answer (default). `normal`:
    /// faster, never corrupt, but a power cut may lose the last results a
    /// worker was told were accepted (they are then played again).
    #[arg(long, value_parser = ["full", "normal"], default_value = "full")]
    sync: String,
    /// The web view is reached over HTTPS through a TLS proxy in front of
    /// --http: its session and CSRF cookies get `Secure`. (They always do
    /// when the view serves TLS itself, and on a request a proxy marks
    /// `X-Forwarded-Proto: https`.)
    #[arg(long)]
    secure_cookies: bool,
    /// Nobody makes an account on the web view's sign-up page; only admins
    /// add users (`user add`, the users page).
    #[arg(long)]
    no_sign_up: bool,
    /// The git transports a run's source engines may name, comma-separated
    /// (https, http, ssh, git, file); also what `git ls-remote` may use when
    /// the coordinator resolves a branch to its commit (GIT_ALLOW_PROTOCOL).
    #[arg(long, value_name = "LIST", default_value = "https", value_parser = GitProtocols::parse)]
    git_protocols: GitProtocols,
    /// Stop a run once its source engines failed to build on this many
    /// distinct workers (each such worker gets no more of its leases at once).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FAILURES_TO_STOP,
          value_parser = clap::value_parser!(u32).range(1..))]
    build_failures_to_stop: u32,
    /// MiB of engines and assets one user's uploads may store in all
    /// (admins: no cap; 0: no cap for anyone).
    #[arg(long, default_value_t = 8192)]
    upload_quota_mib: u64,
    /// Delete blobs that no engine, asset, worker release or run references
    /// once their upload began this many hours ago (checked hourly; 0:
    /// never delete them).
    #[arg(long, value_name = "HOURS", default_value_t = 24)]
    blob_grace_hours: u64,
    /// Size each worker's leases of games and SPRT runs to about this many
    /// minutes of its play (0: every lease holds the run's batch pairs).
    #[arg(long, value_name = "MIN", default_value_t = 30)]
    lease_minutes: u64,
    /// Most pairs a lease sized by time holds.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PAIRS,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_lease_pairs: u32,
    /// Threads that replay and check results, at a lower priority than the
    /// rest of the server (0: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    check_threads: usize,
    /// Results admitted at once per check thread (being read, checked or
    /// written); a result beyond them is refused for load, before it is
    /// read, and its worker told when to submit again. Bounds the memory
    /// results take: this × threads × the largest request (4 MiB).
    #[arg(long, value_name = "N", default_value_t = CheckConfig::default().admitted_per_thread as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    checks_per_thread: u64,
}

impl ServeArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let options = StoreOptions {
            max_pages: self.max_db_pages,
            durability: if self.sync == "normal" {
                Durability::Normal
            } else {
                Durability::Full
            },
        };
        let store = Store::open_with(&self.db, options)
            .with_context(|| format!("cannot open database {}", self.db.display()))?;
        let web_scheme = if self.tls_cert.is_some() && !self.http_plain {
            "https"
        } else {
            "http"
        };
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(super::cert::server_tls(cert, key)?),
            _ => None,
        };
        let config = ServerConfig {
            scheduler: SchedulerConfig {
                git: GitConfig {
                    protocols: self.git_protocols,
                    ..GitConfig::default()
                },
                build_failures_to_stop: self.build_failures_to_stop,
                pace: PaceConfig {
                    target: Duration::from_secs(self.lease_minutes.saturating_mul(60)),
                    max_pairs: self.max_lease_pairs,
                },
                checks: CheckConfig {
                    threads: self.check_threads,
                    admitted_per_thread: self.checks_per_thread as usize,
                },
                heartbeat_budget: self.heartbeats_per_sec,
                ..SchedulerConfig::default()
            }
            .with_lease_ttl(Duration::from_secs(self.lease_secs)),
            limits: RateLimits {
                worker: Rate {
                    per_second: self.worker_rate,
                    burst: self.worker_burst,
                },
                personal: Rate {
                    per_second: self.personal_rate,
                    burst: self.personal_burst,
                },
                open: Rate {
                    per_second: self.open_rate,
                    burst: self.open_burst,
                },
            },
            tls,
            plain_web: self.http_plain,
            trusted_proxies: self.trusted_proxy,
            secure_cookies: self.secure_cookies,
            open_sign_up: !self.no_sign_up,
            upload_quota: UploadQuota {
                bytes_per_user: (self.upload_quota_mib > 0)
                    .then(|| self.upload_quota_mib.saturating_mul(1 << 20)),
            },
            blob_gc: (self.blob_grace_hours > 0).then(|| BlobGc {
                grace: std::time::Duration::from_secs(self.blob_grace_hours.saturating_mul(3600)),
                ..BlobGc::default()
            }),
            ..ServerConfig::default()
        };
        runtime()?.block_on(async {
            let listener = tokio::net::TcpListener::bind(self.listen)
                .await
                .with_context(|| format!("cannot listen on {}", self.listen))?;
            let addr = listener.local_addr().context("listening address")?;
            // The bound address (useful with port 0), for scripts and tests.
            outln!("listening on {addr}")?;
            let http = match self.http {
                Some(at) => {
                    let http = tokio::net::TcpListener::bind(at)
                        .await
                        .with_context(|| format!("cannot listen on {at} for the web view"))?;
                    let addr = http.local_addr().context("web view address")?;
                    outln!("web view on {web_scheme}://{addr}/")?;
                    Some(Http::new(http, WebView))
                }
                None => None,
            };
            server::run_with_web(listener, http, store, config, async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
            Ok(())
        })
    }
}

/// Creating a run on a running coordinator.
#[derive(Debug, Args)]
pub struct CreateArgs<T: Args> {
    #[command(flatten)]
    remote: Remote,
    #[command(flatten)]
    run: T,
}

pub fn create(remote: &Remote, run: &dyn KindArgs) -> anyhow::Result<()> {
    let spec = run.spec()?;
    let (rt, mut admin) = remote.connect()?;
    let answer = rt.block_on(admin.create_run(pb::CreateRunRequest {
        spec: Some(spec),
        reuse_identical: false,
    }))?;
    outln!("{}", answer.into_inner().run_id)?;
    Ok(())
}

impl<T: Args + KindArgs> CreateArgs<T> {
    pub fn run(self) -> anyhow::Result<()> {
        create(&self.remote, &self.run)
    }
}

/// `status [RUN]`: one line per run, or one run in detail.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    place: PlaceArgs,
    run: Option<u64>,
}

/// The services of the place `args` name (a database file must exist), as
/// its administrator on a file.
fn reader(args: PlaceArgs) -> anyhow::Result<Coordinator> {
    args.place()?.existing()?.connect(Acting::Administrator)
}

impl StatusArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let coordinator = reader(self.place)?;
        let mut admin = coordinator.runs();
        coordinator.block_on(async {
            match self.run {
                Some(id) => {
                    let (run, answer) = get_all(&mut admin, id, false).await?;
                    out!("{}", display::summary_text(&run))?;
                    out!(
                        "{}",
                        workers::serving(answer.workers_able, answer.workers_active)
                    )?;
                    out!("{}", workers::text(&answer.workers))?;
                    out!("{}", linked(&mut admin, &run).await?)?;
                }
                None => {
                    let runs = admin
                        .list_runs(pb::ListRunsRequest {})
                        .await?
                        .into_inner()
                        .runs;
                    for run in &runs {
                        outln!("{}", display::status_line(run))?;
                    }
                }
            }
            Ok(())
        })
    }
}

/// For a tune and its verification SPRT (from either), the other run's
/// summary and the verdict; empty for an unlinked run.
async fn linked(admin: &mut Admin, run: &pb::RunStatus) -> anyhow::Result<String> {
    if run.linked_run_id == 0 {
        return Ok(display::verdict(run, None)
            .map(|v| format!("\n{v}\n"))
            .unwrap_or_default());
    }
    let other = get(admin, run.linked_run_id, false).await?.0;
    let (tune, verify) = if run.spsa.is_some() {
        (run, &other)
    } else {
        (&other, run)
    };
    let mut out = format!("\n{}", display::summary_text(&other));
    if let Some(v) = display::verdict(tune, Some(verify)) {
        out += &format!("\n{v}\n");
    }
    Ok(out)
}

async fn get(
    admin: &mut Admin,
    run_id: u64,
    history: bool,
) -> anyhow::Result<(pb::RunStatus, Vec<pb::SpsaHistoryRow>)> {
    let (run, answer) = get_all(admin, run_id, history).await?;
    Ok((run, answer.history))
}

/// The run and the rest of the coordinator's answer about it: its SPSA
/// history, failure counts and LLR history (with `history`), and its
/// workers' health.
async fn get_all(
    admin: &mut Admin,
    run_id: u64,
    history: bool,
) -> anyhow::Result<(pb::RunStatus, pb::GetRunResponse)> {
    let mut answer = admin
        .get_run(pb::GetRunRequest {
            run_id,
            include_history: history,
        })
        .await?
        .into_inner();
    let run = answer.run.take().context("the coordinator sent no run")?;
    Ok((run, answer))
}

/// `watch RUN`: a progress bar until the run ends.
#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    remote: Remote,
    run: u64,
}

impl WatchArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let (rt, mut admin) = self.remote.connect()?;
        let last = rt.block_on(display::watch(&mut admin, self.run))?;
        out!("{}", display::summary_text(&last))?;
        Ok(())
    }
}

/// `report RUN`: the final summary; SPSA runs add their history.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    place: PlaceArgs,
    run: u64,
    /// Print the SPSA history (variants runs: one row per variant) as CSV only.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also draw the run's charts into this file, SVG or PNG by its
    /// extension: SPSA θ (in % of c_end, then each parameter's absolute
    /// value) against iterations; SPRT LLR against games with its bounds.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

impl ReportArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let coordinator = reader(self.place)?;
        let mut admin = coordinator.runs();
        let (run, answer) = coordinator.block_on(get_all(&mut admin, self.run, true))?;
        let pb::GetRunResponse {
            history: rows,
            failures,
            workers: health,
            llr_history: llr,
            build_failures: builds,
            workers_able,
            workers_active,
            worker_versions,
            required_worker_version: required,
            ..
        } = answer;
        if let Some(path) = &self.plot {
            super::plot::write(path, &super::plot::panels(&run, &rows, &llr)?)?;
        }
        if report_variants::is_variants(&run) {
            print_variants(&run, &health, self.json, self.csv)?;
            if !self.json && !self.csv {
                out!("{}", versions::text(&worker_versions, &required))?;
            }
            return Ok(());
        }
        if self.csv {
            out!("{}", display::history(&run, &rows, true))?;
        } else if self.json {
            let mut v = display::summary_json(&run);
            v["workers"] = workers::json(&health);
            v["workers_able"] = workers_able.into();
            v["workers_active"] = workers_active.into();
            v["build_failures"] = super::sources::failures_json(&builds);
            v["worker_versions"] = versions::json(&worker_versions, &required);
            v["required_worker_version"] =
                (!required.is_empty()).then_some(required.as_str()).into();
            outln!("{v}")?;
        } else {
            out!("{}", display::summary_text(&run))?;
            out!("{}", super::sources::failures(&builds))?;
            out!("{}", display::failures(&run, &failures))?;
            out!("{}", workers::serving(workers_able, workers_active))?;
            out!("{}", workers::text(&health))?;
            out!("{}", versions::text(&worker_versions, &required))?;
            if !rows.is_empty() {
                out!("\n{}", display::history(&run, &rows, false))?;
            }
            out!("{}", coordinator.block_on(linked(&mut admin, &run))?)?;
        }
        Ok(())
    }
}

/// Prints a variants run's report as text, JSON or CSV, with its workers'
/// health (not in CSV).
fn print_variants(
    run: &pb::RunStatus,
    health: &[pb::WorkerHealth],
    json: bool,
    csv: bool,
) -> anyhow::Result<()> {
    let state = display::state(run);
    if csv {
        out!("{}", report_variants::csv(run)?.unwrap_or_default())?;
    } else if json {
        if let Some(mut v) = report_variants::json(run, state)? {
            v["workers"] = workers::json(health);
            outln!("{v}")?;
        }
    } else {
        out!("{}", report_variants::text(run, state)?.unwrap_or_default())?;
        out!("{}", workers::text(health))?;
    }
    Ok(())
}

/// `stop RUN`, `resume RUN`, `approve RUN`: one run on a served coordinator.
#[derive(Debug, Args)]
pub struct RunRefArgs {
    #[command(flatten)]
    remote: Remote,
    run: u64,
}

impl RunRefArgs {
    /// Stops the run and prints its summary.
    pub fn stop(self) -> anyhow::Result<()> {
        let run_id = self.run;
        let run = self.call(|mut admin| async move {
            Ok(admin
                .stop_run(pb::StopRunRequest { run_id })
                .await?
                .into_inner()
                .run)
        })?;
        out!("{}", display::summary_text(&run))?;
        Ok(())
    }

    /// Resumes a stopped run where it stood (its author, an approver or an admin).
    pub fn resume(self) -> anyhow::Result<()> {
        let run_id = self.run;
        let run = self.call(|mut admin| async move {
            Ok(admin
                .resume_run(pb::ResumeRunRequest { run_id })
                .await?
                .into_inner()
                .run)
        })?;
        outln!("{}", display::status_line(&run))?;
        Ok(())
    }

    /// Approves a pending run (approvers and admins, not its author).
    pub fn approve(self) -> anyhow::Result<()> {
        let run_id = self.run;
        let run = self.call(|mut admin| async move {
            Ok(admin
                .approve_run(pb::ApproveRunRequest { run_id })
                .await?
                .into_inner()
                .run)
        })?;
        outln!("{}", display::status_line(&run))?;
        Ok(())
    }

    /// Connects and makes `call`, which answers with the run it changed.
    fn call<F, Fut>(&self, call: F) -> anyhow::Result<pb::RunStatus>
    where
        F: FnOnce(Admin) -> Fut,
        Fut: std::future::Future<Output = Result<Option<pb::RunStatus>, tonic::Status>>,
    {
        let (rt, admin) = self.remote.connect()?;
        rt.block_on(call(admin))?
            .context("the coordinator sent no run")
    }
}

/// `reject RUN --reason TEXT`: a pending test never plays; its author sees why.
#[derive(Debug, Args)]
pub struct RejectArgs {
    #[command(flatten)]
    remote: Remote,
    run: u64,
    /// Why, for the author (1 to 500 bytes).
    #[arg(long)]
    reason: String,
}

impl RejectArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let (rt, mut admin) = self.remote.connect()?;
        let run = rt
            .block_on(admin.reject_run(pb::RejectRunRequest {
                run_id: self.run,
                reason: self.reason,
            }))?
            .into_inner()
            .run
            .context("the coordinator sent no run")?;
        outln!("{}", display::status_line(&run))?;
        Ok(())
    }
}

/// `local sprt|spsa|games|variants|datagen`: coordinator and workers in this process.
#[derive(Debug, Args)]
pub struct LocalArgs {
    #[command(subcommand)]
    run: LocalRun,
}

#[derive(Debug, Subcommand)]
enum LocalRun {
    Sprt(LocalCommon<SprtRunArgs>),
    Spsa(LocalCommon<SpsaRunArgs>),
    Games(LocalCommon<GamesRunArgs>),
    Variants(LocalCommon<VariantsRunArgs>),
    Datagen(LocalCommon<DatagenRunArgs>),
}

#[derive(Debug, Args)]
struct LocalCommon<T: Args> {
    #[command(flatten)]
    local: LocalSettings,
    #[command(flatten)]
    run: T,
}

/// Local mode's own flags, the same for every kind of run.
#[derive(Debug, Args)]
struct LocalSettings {
    /// SQLite database; an unfinished identical run in it is resumed.
    #[arg(long, default_value = "xq.db")]
    db: PathBuf,
    /// Games each worker plays in parallel.
    #[arg(long, default_value_t = 1)]
    threads: u32,
    /// In-process workers.
    #[arg(long, default_value_t = 1)]
    workers: u32,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Serve the web view on this address while the run plays (its URL goes
    /// to stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    http: SocketAddr,
    /// When the run ends, draw its charts into this file (SVG or PNG by its
    /// extension), as `report RUN --plot`; a tune's verification SPRT adds
    /// its LLR panel.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

impl<T: Args + KindArgs + 'static> LocalCommon<T> {
    /// The settings, and the run's arguments of any kind.
    fn split(self) -> (LocalSettings, Box<dyn KindArgs>) {
        (self.local, Box::new(self.run))
    }
}

impl LocalArgs {
    pub fn run(self, player: &PlayerFactory) -> anyhow::Result<()> {
        let (settings, run) = match self.run {
            LocalRun::Sprt(c) => c.split(),
            LocalRun::Spsa(c) => c.split(),
            LocalRun::Games(c) => c.split(),
            LocalRun::Variants(c) => c.split(),
            LocalRun::Datagen(c) => c.split(),
        };
        if let Some(path) = &settings.plot {
            check_plot(path, run.as_ref())?;
        }
        let spec = run.spec()?;
        let player = player(settings.threads.max(1))?;
        runtime()?.block_on(settings.play(spec, player))
    }
}

/// Refuses `--plot` for a kind of run that has no chart, before it plays.
fn check_plot(path: &std::path::Path, run: &dyn KindArgs) -> anyhow::Result<()> {
    xq_web::charts::ImageFormat::from_path(path)?;
    let kind = run.kind();
    if !kind
        .sections()
        .iter()
        .any(|s| matches!(s, Section::Llr | Section::Theta))
    {
        anyhow::bail!(
            "--plot draws SPSA runs (θ) and SPRT runs (LLR), not {} runs",
            kind.as_str()
        );
    }
    Ok(())
}

/// What `local` followed: the run as it ended (or stood when interrupted)
/// and a tune's verification SPRT.
struct Followed {
    run_id: u64,
    last: pb::RunStatus,
    verify: Option<pb::RunStatus>,
}

impl LocalSettings {
    /// Starts the cluster, creates (or resumes) the run, follows it and its
    /// verification to their ends, then prints the result.
    async fn play(self, spec: pb::RunSpec, player: Arc<dyn BatchPlayer>) -> anyhow::Result<()> {
        let cluster = LocalCluster::start(
            &self.db,
            ServerConfig::default(),
            player,
            self.workers.max(1),
            self.threads,
            Some((self.http, Box::new(WebView))),
        )
        .await
        .with_context(|| format!("cannot start local mode on {}", self.db.display()))?;
        if let Some(url) = cluster.web_url() {
            eprintln!("web view on {url}");
        }
        let remote = Remote::new(cluster.url(), Some(cluster.personal_token().to_owned()));
        let mut admin = remote.admin()?;
        let created = admin
            .create_run(pb::CreateRunRequest {
                spec: Some(spec),
                reuse_identical: true,
            })
            .await?
            .into_inner();
        if created.reused {
            tracing::info!(
                run_id = created.run_id,
                "resuming an identical unfinished run"
            );
        }
        let followed = follow(&mut admin, created.run_id).await?;
        if let Some(path) = &self.plot {
            let mut panels = Vec::new();
            let verify = followed.verify.as_ref().map(|v| v.run_id);
            for id in std::iter::once(followed.run_id).chain(verify) {
                let (run, answer) = get_all(&mut admin, id, true).await?;
                panels.extend(super::plot::panels(
                    &run,
                    &answer.history,
                    &answer.llr_history,
                )?);
            }
            super::plot::write(path, &panels)?;
        }
        cluster.stop().await?;
        print_local(&followed, self.json)
    }
}

/// Watches run `run_id` until it ends or Ctrl-C; a tune with `--verify`
/// then has its SPRT watched too.
async fn follow(admin: &mut Admin, run_id: u64) -> anyhow::Result<Followed> {
    let watched = tokio::select! {
        last = display::watch(admin, run_id) => Some(last?),
        _ = tokio::signal::ctrl_c() => None,
    };
    let interrupted = || {
        eprintln!("interrupted: the run resumes when the same command runs again");
    };
    let mut last = match watched {
        Some(last) => last,
        None => {
            interrupted();
            get(admin, run_id, false).await?.0
        }
    };
    let mut verify = None;
    if watched_to_end(&last) {
        last = get(admin, run_id, false).await?.0;
        if last.spsa.is_some() && last.linked_run_id != 0 {
            let id = last.linked_run_id;
            verify = Some(tokio::select! {
                v = display::watch(admin, id) => v?,
                _ = tokio::signal::ctrl_c() => {
                    interrupted();
                    get(admin, id, false).await?.0
                }
            });
        }
    }
    Ok(Followed {
        run_id,
        last,
        verify,
    })
}

/// Prints what `local` followed: its summary (and the verification's and
/// the verdict), as text or one JSON object.
fn print_local(followed: &Followed, json: bool) -> anyhow::Result<()> {
    let Followed { last, verify, .. } = followed;
    if report_variants::is_variants(last) {
        return print_variants(last, &[], json, false);
    }
    let verdict = display::verdict(last, verify.as_ref());
    if json {
        let mut v = display::summary_json(last);
        if let Some(run) = verify {
            v["verification"] = display::summary_json(run);
        }
        if let Some(text) = &verdict {
            v["verdict"] = serde_json::Value::from(text.as_str());
        }
        outln!("{v}")?;
    } else {
        out!("{}", display::summary_text(last))?;
        if let Some(run) = verify {
            out!("\n{}", display::summary_text(run))?;
        }
        if let Some(text) = &verdict {
            outln!("\n{text}")?;
        }
    }
    Ok(())
}

/// Whether `run` ended (rather than being interrupted while active).
fn watched_to_end(run: &pb::RunStatus) -> bool {
    run.state() != pb::RunState::Active
}
