//! Load test of one coordinator: many simulated workers, each with its own
//! stored token, worker id and name, in this process; the coordinator in a
//! child process ([`server`]) that serves as `xq-coordinator serve` does,
//! with rate limits off.
//!
//! ```sh
//! cargo bench -p xq-tests --bench load
//! XQ_LOAD_WORKERS=1000 XQ_LOAD_SECS=20 XQ_LOAD_SYNC=normal cargo bench -p xq-tests --bench load
//! XQ_LOAD_PAUSE_MS=1000 cargo bench -p xq-tests --bench load   # think time per lease
//! XQ_LOAD_WEB_POLLERS=100 cargo bench -p xq-tests --bench load  # and 100 browsers on the run page
//! XQ_LOAD_PATTERN=fleet XQ_LOAD_WORKERS=100000 XQ_LOAD_CONNECTIONS=32 \
//!     cargo bench -p xq-tests --bench load                      # a fleet of real-worker patterns
//! ```
//!
//! Settings (environment):
//! - `XQ_LOAD_WORKERS` (1000): simulated workers.
//! - `XQ_LOAD_CONNECTIONS` (0): HTTP/2 connections the workers share
//!   (worker i uses connection i mod N; each call carries its worker's token
//!   and id); 0: one connection per worker.
//! - `XQ_LOAD_PATTERN`: `loop` (default) or `fleet` ([`workers`]).
//! - `XQ_LOAD_PAUSE_MS` (0): `loop`'s think time after each result; 0 is a
//!   closed loop, where the figures are the server's throughput and latency
//!   is mostly queueing (about workers ÷ throughput). With a pause each
//!   worker starts within one pause and waits 0.5–1.5 pauses after each
//!   result, which offers about workers × 2 ÷ pause requests/s.
//! - `XQ_LOAD_LEASE_SECS` (60): `fleet`'s mean time a lease of the run's
//!   `XQ_LOAD_PAIRS` is played (0.5–1.5 of it; a lease the coordinator
//!   sized larger takes proportionally longer), with a heartbeat every
//!   interval the server asks for (`XQ_LOAD_LEASE_TTL_SECS` ÷ 6, 10 s by
//!   default); each worker makes its first call within one lease length.
//! - `XQ_LOAD_WARMUP_SECS` (`fleet`: 1.5 lease lengths; `loop`: 0): time
//!   before the measured window, so it sees the steady state.
//! - `XQ_LOAD_SECS` (20): the measured window.
//! - `XQ_LOAD_LEASE_TTL_SECS` (60, as `serve --lease-secs`): how long a
//!   lease lives without a heartbeat; workers are asked to beat every sixth
//!   of it, so it sets the heartbeats' share of the load.
//! - `XQ_LOAD_LEASE_MINUTES` (30, as `serve`): the time leases are sized to;
//!   0 hands out single batches (as before issue 34), which the `loop`
//!   pattern needs to compare with earlier figures, since its pause does not
//!   grow with a lease's pairs.
//! - `XQ_LOAD_PAIRS` (1): the run's pairs per lease; a lease's result has
//!   as many pairs as the lease says, whatever it says.
//! - `XQ_LOAD_SYNC`: `normal` for the server's `--sync normal`, else full.
//! - `XQ_LOAD_WEB_POLLERS` (0): browsers on the run page ([`pollers`]).
//!   The web view is always served: the bench reads its `/metrics` at the
//!   window's start and end.
//! - `XQ_LOAD_PERF` (a file): record the server with `perf record -g` over
//!   the window into it.
//! - `XQ_LOAD_KEEP_DB` (a file): copy the database there at the end (the
//!   server has stopped; the leases in play are still active in it).
//!
//! Every result carries its evidence, as the coordinator requires: the two
//! games of one real pair per pair of the lease (played once at start by the
//! game runner, 300 nodes per move), which the coordinator checks (opening
//! regenerated, replay, counts) and stores. The run's openings are one line
//! ([`BENCH_OPENING`]), so every opening index is that pair's: the
//! simulated workers only set each game's `opening_index`.
//!
//! Prints the offered and achieved rates in the window, results and games
//! accepted per second, p50/p99 latency per call of the calls that ended in
//! the window, errors by call and code, the coordinator's CPU (user +
//! system time over the window, as a share of one core) and memory (resident
//! at the end, and its peak), the clients' CPU, each side's threads by name
//! (CPU, and time runnable but waiting for a CPU), `/proc/loadavg` before
//! and after, and the server's own quantiles over the window from its
//! `/metrics` (each call until its response, the writer's wait and answer by
//! lane, its batches: [`xq_tests::scrape`]); then checks that the run's totals equal what the server
//! counted (an accepted answer, or a `DUPLICATE` to a resubmission whose
//! first answer was lost: none lost or counted twice), that no lease was lost
//! while its worker kept it alive, and that no result came back after its
//! lease lapsed. A result refused for load (`RESOURCE_EXHAUSTED`) is
//! submitted again after the delay the server asks for, with heartbeats
//! meanwhile, as the real worker does; the refusals per second are printed
//! with the plies per second checked and stored. The database is temporary.
//!
//! The open-file limit is raised up to the hard limit (one socket per
//! connection on each side); one connection per worker needs more than
//! 100,000 workers can have, so large fleets share connections.
//!
//! Measured at 1eccc4c (release build; the 2 cores shared with other
//! builds, load average 3–6; leases of one pair, 32 connections, a 60 s
//! window after 90 s, `--sync full`), one run each:
//!
//! ```sh
//! for n in 5000 10000 50000 100000; do
//!   cat /proc/loadavg
//!   XQ_LOAD_PATTERN=fleet XQ_LOAD_WORKERS=$n XQ_LOAD_CONNECTIONS=32 XQ_LOAD_SECS=60 \
//!     cargo bench -p xq-tests --bench load
//!   cat /proc/loadavg
//! done
//! ```
//!
//! | workers | offered / achieved req/s | results/s (games/s) | RequestWork p50 / p99 | Heartbeat p50 / p99 | SubmitResult p50 / p99 | coordinator CPU, RSS |
//! |---|---|---|---|---|---|---|
//! | 5,000 | 625 / 625 | 85 (170) | 4.3 / 94 ms | 3.0 / 92 ms | 7.9 / 124 ms | 0.35 core, 19 MiB |
//! | 10,000 | 1,250 / 1,239 | 169 (337) | 265 / 803 ms | 153 / 699 ms | 458 / 1,164 ms | 0.74 core, 28 MiB |
//! | 50,000 | 6,250 / 511 | 0 (0) | 59 / 77 s | 59 / 77 s | 92 / 102 s | 0.66 core, 329 MiB |
//! | 100,000 | 12,500 / 1,086 | 0 (0) | 73 / 86 s | 72 / 86 s | none in the window | 0.76 core, 656 MiB |
//!
//! At 10,000 workers the p50 of three saturated runs varied from 0.15 to 2 s
//! with the machine's load.
//!
//! The first limit is the store's one writing thread, busy all the time
//! from 10,000 workers on (at 10,000: CPU 0.62 and 0.33 of a core waiting
//! for one; `perf` puts 60–80 % of the server's samples in SQLite's VDBE and
//! b-tree code on that thread). Its cost per lease grows with the leases in
//! play: RequestWork (`runs::candidates` and `runs::load`) and SubmitResult
//! (`runs::load` twice) each sum the pairs of every active lease of the run,
//! 1.1–2.3 ms per sum at 10,000 active leases. From 50,000 workers the
//! answers take longer than a lease lives (60 s), the leases expire, every
//! result is `EXPIRED_IGNORED`, and each RequestWork then sorted every
//! expired lease of the run (`leases::take_requeued`, 2.7 ms at 105,000;
//! since then it reads the lowest one only, 0.01 ms).
//!
//! With both sums replaced by 0 as an experiment (one run, so the pick
//! among runs does not need them), on the same machine under the same
//! load: 10,000 workers 1,251 requests/s, p50 1.7–3.3 ms, p99 94–222 ms;
//! 50,000 workers 4,898 requests/s, 699 results/s, p50 4.0–8.0 s; 100,000
//! workers 5,288 requests/s, 811 results/s (1,622 games/s), p50 15–29 s, no
//! lease lost, the coordinator 0.73 core busy and 1.5 cores waiting for a
//! CPU: about 0.14 ms of CPU a request, which at the 12,500 requests/s of
//! 100,000 workers is 1.7 cores.
//!
//! This branch merged onto main at 3b9e96c (leases sized by time, the
//! writer's calls batched in one transaction; not yet fd8dfc2's in-flight
//! counts), the same command: 10,000 workers 1,249 requests/s, 170
//! results/s carrying 7,334 games/s, p50 19–30 ms, p99 180–217 ms, the
//! coordinator 0.90 core, 38 MiB (load average 5.4–5.9); 50,000 workers
//! 674 requests/s, 39 results/s (78 games/s), p50 35–48 s, leases expiring,
//! the store's writer at 0.98 of a core and not waiting for one (load
//! average 2.0–2.2): the in-flight sums are still the limit there.
//!
//! The quiet side-by-side sequence of 1eccc4c and issue 34's build (16-pair
//! leases, 10,000 / 50,000 / 100,000 workers, and 100,000 with
//! `XQ_LOAD_LEASE_TTL_SECS=360`) is the README's Load table.
//!
//! No HTTP/2 limit of the server caps the shared connections: tonic passes
//! no `max_concurrent_streams` to hyper, which then advertises none (hyper's
//! own default of 200 is replaced), and sets no per-connection concurrency
//! limit. At 100,000 workers over 32 connections about 78,000 calls were in
//! flight at once (1,086 answers/s × 72 s), none refused.

mod pollers;
mod procfs;
mod server;
mod tally;
mod workers;

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use xq_coordinator::auth::{Role, tokens};
use xq_coordinator::events::Actor;
use xq_coordinator::service::accounts::Accounts;
use xq_coordinator::service::{Durability, SchedulerConfig, Store, StoreOptions};
use xq_proto::connect::Auth;
use xq_proto::pb;
use xq_tests::bench_pair::{BENCH_OPENING, EncodedPair, real_pair};
use xq_tests::cluster::{TempDb, create, games_spec, run_client, status};
use xq_tests::scrape::{self, Histograms};

use pollers::Polls;
use server::Served;
use tally::{Call, Tally, Window, percentile};
use workers::{Pattern, Plan};

/// Files each process opens besides its sockets (database, pipes, runtime).
const OTHER_FILES: u64 = 64;

/// Environment variable `name` parsed, or `default` when unset.
fn env<T: FromStr>(name: &str, default: T) -> anyhow::Result<T>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(v) => v.parse().map_err(|e| {
            let shown: String = v.chars().take(20).collect();
            anyhow::anyhow!("{name}={shown:?} is not valid: {e}")
        }),
        Err(_) => Ok(default),
    }
}

/// The bench's settings, from the environment (see the module doc).
#[derive(Debug)]
struct Config {
    workers: usize,
    /// 0: one per worker.
    connections: usize,
    pattern: Pattern,
    warmup: Duration,
    window: Duration,
    pairs: u32,
    /// The server's lease time-to-live (heartbeats every sixth of it).
    lease_ttl: Duration,
    durability: Durability,
    pollers: usize,
    perf: Option<String>,
    keep_db: Option<String>,
}

impl Config {
    fn from_env() -> anyhow::Result<Config> {
        let workers: usize = env("XQ_LOAD_WORKERS", 1000)?;
        ensure!(workers >= 1, "XQ_LOAD_WORKERS must be at least 1");
        let pattern = match std::env::var("XQ_LOAD_PATTERN").as_deref() {
            Ok("fleet") => Pattern::Fleet {
                lease: Duration::from_secs_f64(env("XQ_LOAD_LEASE_SECS", 60.0)?),
            },
            Ok("loop") | Err(_) => Pattern::Loop {
                pause: Duration::from_millis(env("XQ_LOAD_PAUSE_MS", 0)?),
            },
            Ok(other) => bail!(
                "XQ_LOAD_PATTERN={:?} is neither loop nor fleet",
                other.chars().take(20).collect::<String>()
            ),
        };
        let default_warmup = match pattern {
            Pattern::Fleet { lease } => lease.as_secs_f64() * 1.5,
            Pattern::Loop { .. } => 0.0,
        };
        let pairs: u32 = env("XQ_LOAD_PAIRS", 1)?;
        ensure!(pairs >= 1, "XQ_LOAD_PAIRS must be at least 1");
        Ok(Config {
            workers,
            connections: env("XQ_LOAD_CONNECTIONS", 0)?,
            pattern,
            warmup: Duration::from_secs_f64(env("XQ_LOAD_WARMUP_SECS", default_warmup)?),
            window: Duration::from_secs_f64(env("XQ_LOAD_SECS", 20.0)?),
            pairs,
            lease_ttl: server::lease_ttl()?,
            durability: match std::env::var("XQ_LOAD_SYNC").as_deref() {
                Ok("normal") => Durability::Normal,
                _ => Durability::Full,
            },
            pollers: env("XQ_LOAD_WEB_POLLERS", 0)?,
            perf: std::env::var("XQ_LOAD_PERF").ok(),
            keep_db: std::env::var("XQ_LOAD_KEEP_DB").ok(),
        })
    }

    /// Sockets each side holds, plus the rest.
    fn open_files(&self) -> u64 {
        let connections = match self.connections {
            0 => self.workers,
            n => n,
        };
        (connections + self.pollers + 1) as u64 + OTHER_FILES
    }

    /// Requests per second the workers would send if every call answered at
    /// once; `None` for a closed loop.
    fn offered(&self) -> Option<f64> {
        let workers = self.workers as f64;
        match self.pattern {
            Pattern::Loop { pause } if pause.is_zero() => None,
            Pattern::Loop { pause } => Some(workers * 2.0 / pause.as_secs_f64()),
            Pattern::Fleet { lease } => {
                // A lease is played for U(0.5, 1.5) × lease, with heartbeats
                // strictly before its end: the mean count by the midpoint rule.
                let beat = SchedulerConfig::default()
                    .with_lease_ttl(self.lease_ttl)
                    .heartbeat_interval
                    .as_secs_f64();
                let lease = lease.as_secs_f64();
                const STEPS: usize = 10_000;
                let beats: f64 = (0..STEPS)
                    .map(|i| {
                        let played = lease * (0.5 + (i as f64 + 0.5) / STEPS as f64);
                        (played / beat).ceil() - 1.0
                    })
                    .sum::<f64>()
                    / STEPS as f64;
                Some(workers * (2.0 + beats) / lease)
            }
        }
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return Ok(());
    }
    if args.first().map(String::as_str) == Some(server::SERVE_ARG) {
        return server::serve(&args[1..]);
    }
    let config = Config::from_env()?;
    procfs::raise_open_file_limit(config.open_files())?;
    let pair = real_pair()?;
    let plies = pair.totals.as_ref().map_or(0, |t| t.total_plies);
    println!("each pair carries its 2 games ({plies} plies)");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run(config, pair, plies))
}

/// The database with an admin token and one worker token per worker: the
/// admin's token and the workers'.
async fn prepare(db: &TempDb, config: &Config) -> anyhow::Result<(String, Vec<String>)> {
    let store = Store::open_with(
        &db.0,
        StoreOptions {
            durability: config.durability,
            ..StoreOptions::default()
        },
    )?;
    let admin = tokens::generate()?;
    let worker_tokens: Vec<String> = (0..config.workers)
        .map(|_| tokens::generate())
        .collect::<Result<_, _>>()?;
    // As `token add --db` makes them: the accounts service, as the file's
    // administrator acting for the user `admin` (made here), each token one
    // transaction with its event; all asked at once, so that the store's
    // group commit writes hundreds of them per commit.
    let accounts = Accounts::new(store);
    let owner = accounts.named_or_admin(None).await?;
    let actor = Actor::cli_for(Some(owner));
    let wanted = std::iter::once(("admin".to_owned(), Role::Personal, &admin)).chain(
        worker_tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("load-{i}"), Role::Worker, t)),
    );
    let mut adding = tokio::task::JoinSet::new();
    for (name, role, token) in wanted {
        let (accounts, actor, hash) = (accounts.clone(), actor.clone(), tokens::hash(token));
        adding.spawn(async move { accounts.create_token(actor, name, role, hash).await });
    }
    while let Some(added) = adding.join_next().await {
        added??;
    }
    Ok((admin, worker_tokens))
}

/// The connections the workers share (`None`: one each).
fn shared_channels(url: &str, config: &Config) -> anyhow::Result<Option<Vec<Channel>>> {
    if config.connections == 0 {
        return Ok(None);
    }
    // Each connection queues as many calls as its workers can make at once,
    // so the client's buffer is never what limits the bench.
    let per_connection = config.workers.div_ceil(config.connections).max(1);
    let endpoint = Endpoint::from_shared(url.to_owned())?.buffer_size(per_connection);
    Ok(Some(
        (0..config.connections)
            .map(|_| endpoint.connect_lazy())
            .collect(),
    ))
}

/// CPU times of the server and of this process at the window's start and
/// end, the server's memory at the end, and the load average around it.
#[derive(Debug)]
struct Usage {
    server_cpu: Duration,
    clients_cpu: Duration,
    memory: procfs::Memory,
    /// The server's threads over the window, grouped by name.
    server_threads: Vec<ThreadGroup>,
    /// The bench's own (the clients'), likewise.
    client_threads: Vec<ThreadGroup>,
    load_before: String,
    load_after: String,
    /// The server's histograms over the window.
    server: Histograms,
}

/// The threads of one name over the window.
#[derive(Debug)]
struct ThreadGroup {
    name: String,
    count: usize,
    cpu: Duration,
    /// Time runnable but waiting for a CPU (other processes, or each other).
    waited: Duration,
    /// CPU and waiting time of its busiest thread.
    busiest: (Duration, Duration),
}

/// What the threads of `end` did since `start`, grouped by name.
fn thread_groups(start: &[procfs::ThreadTimes], end: &[procfs::ThreadTimes]) -> Vec<ThreadGroup> {
    let mut groups: BTreeMap<&str, ThreadGroup> = BTreeMap::new();
    for t in end {
        let before = start.iter().find(|s| s.tid == t.tid);
        let group = groups.entry(&t.name).or_insert_with(|| ThreadGroup {
            name: t.name.clone(),
            count: 0,
            cpu: Duration::ZERO,
            waited: Duration::ZERO,
            busiest: (Duration::ZERO, Duration::ZERO),
        });
        let cpu = t
            .cpu
            .saturating_sub(before.map_or(Duration::ZERO, |b| b.cpu));
        let waited = t
            .waited
            .saturating_sub(before.map_or(Duration::ZERO, |b| b.waited));
        group.count += 1;
        group.cpu += cpu;
        group.waited += waited;
        if cpu + waited > group.busiest.0 + group.busiest.1 {
            group.busiest = (cpu, waited);
        }
    }
    groups.into_values().collect()
}

async fn sample(server: u32, web: String, window: Window) -> anyhow::Result<Usage> {
    let me = std::process::id();
    let loadavg = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    tokio::time::sleep_until(window.from.into()).await;
    let (server_from, clients_from) = (procfs::cpu_time(server)?, procfs::cpu_time(me)?);
    let threads_from = procfs::threads(server)?;
    let client_threads_from = procfs::threads(me)?;
    let load_before = loadavg();
    let histograms_from = Histograms::fetch(&web).await?;
    tokio::time::sleep_until(window.to.into()).await;
    let histograms = Histograms::fetch(&web).await?.since(&histograms_from);
    Ok(Usage {
        server_threads: thread_groups(&threads_from, &procfs::threads(server)?),
        client_threads: thread_groups(&client_threads_from, &procfs::threads(me)?),
        server_cpu: procfs::cpu_time(server)? - server_from,
        clients_cpu: procfs::cpu_time(me)? - clients_from,
        memory: procfs::memory(server)?,
        load_before,
        load_after: loadavg(),
        server: histograms,
    })
}

/// `perf record -g` of the server over the window into `file`.
async fn profile(server: u32, window: Window, file: String) -> anyhow::Result<()> {
    tokio::time::sleep_until(window.from.into()).await;
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("perf")
            .args(["record", "-g", "-p", &server.to_string(), "-o", &file, "--"])
            .args(["sleep", &format!("{:.0}", window.secs())])
            .status()
    })
    .await?
    .context("cannot run perf")?;
    ensure!(status.success(), "perf record failed: {status}");
    Ok(())
}

async fn run(config: Config, pair: pb::GameResults, plies: u64) -> anyhow::Result<()> {
    let db = TempDb::new("load");
    let (admin, worker_tokens) = prepare(&db, &config).await?;
    let served = Served::start(&db.0, config.durability, config.open_files())?;
    // GetRun lists every worker with a result in the run: several MiB for a
    // large fleet, more than a client decodes by default.
    let mut admin_client =
        run_client(&served.grpc_url, Some(&admin)).max_decoding_message_size(usize::MAX);
    let mut spec = games_spec(1 << 40, config.pairs);
    if let Some(s) = spec.settings.as_mut() {
        s.openings = Some(
            xq_proto::OpeningSource::Lines {
                lines: vec![BENCH_OPENING.to_owned()],
                random_plies: 0,
            }
            .into(),
        );
    }
    let run = create(&mut admin_client, spec).await;

    let shared = shared_channels(&served.grpc_url, &config)?;
    let clients = worker_tokens
        .iter()
        .enumerate()
        .map(|(i, token)| {
            let channel = match &shared {
                Some(channels) => channels[i % channels.len()].clone(),
                None => xq_proto::connect::channel(&served.grpc_url, None)?,
            };
            Ok(InterceptedService::new(channel, Auth::new(Some(token))?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    drop(shared);
    // Every client exists and every task is spawned well before the start.
    let start = Instant::now() + Duration::from_secs(1);
    let from = start + config.warmup;
    let window = Window {
        from,
        to: from + config.window,
    };
    let plan = Arc::new(Plan {
        pattern: config.pattern,
        start,
        window,
        end: window.to,
        pair: EncodedPair::new(&pair),
        batch_pairs: config.pairs,
    });
    let handles: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, rpc)| tokio::spawn(workers::worker(rpc, format!("load-{i}"), Arc::clone(&plan))))
        .collect();
    let web = &served.web_url;
    let polls: Vec<_> = (0..config.pollers)
        .map(|_| tokio::spawn(pollers::poller(format!("{web}/runs/{run}/live"), window.to)))
        .collect();
    let usage = tokio::spawn(sample(served.pid, web.clone(), window));
    let perf = config
        .perf
        .clone()
        .map(|file| tokio::spawn(profile(served.pid, window, file)));
    println!(
        "server pid {}; window {:.0} s from {:.0} s after the start",
        served.pid,
        config.window.as_secs_f64(),
        config.warmup.as_secs_f64()
    );

    let mut total = Tally::default();
    for h in handles {
        total.add(h.await.context("a simulated worker panicked")?);
    }
    let mut web = Polls::default();
    for p in polls {
        web.add(p.await.context("a poller panicked")?);
    }
    let usage = usage.await??;
    if let Some(perf) = perf {
        perf.await??;
    }
    let counted = status(&mut admin_client, run)
        .await
        .totals
        .map_or(0, |t| t.pairs);
    drop(admin_client);
    served.stop()?;
    if let Some(keep) = &config.keep_db {
        std::fs::copy(&db.0, keep)
            .with_context(|| format!("cannot copy the database to {keep}"))?;
    }

    report(&config, &window, &mut total, &usage, &mut web, plies);
    println!(
        "  run totals {counted} pairs = pairs the server counted {} \
         (accepted, or DUPLICATE after a lost answer)",
        total.accepted_pairs
    );
    ensure!(
        counted == total.accepted_pairs,
        "results lost or counted twice: run has {counted} pairs, the workers' answers say {}",
        total.accepted_pairs
    );
    ensure!(
        total.lost_leases == 0,
        "{} leases were lost while their workers kept them alive",
        total.lost_leases
    );
    let thrown = total
        .errors
        .get("SubmitResult answered ExpiredIgnored")
        .copied()
        .unwrap_or(0);
    ensure!(
        thrown == 0,
        "{thrown} results came back after their lease had lapsed: their games were thrown away"
    );
    ensure!(
        !total.results_refused(),
        "results were refused: {:?}; the first: {}",
        total.errors,
        total.first_refusal.as_deref().unwrap_or("")
    );
    Ok(())
}

fn report(
    config: &Config,
    window: &Window,
    total: &mut Tally,
    usage: &Usage,
    web: &mut Polls,
    plies: u64,
) {
    total.sort();
    let secs = window.secs();
    let connections = match config.connections {
        0 => "one connection each".to_owned(),
        n => format!("{n} shared connections"),
    };
    let pattern = match config.pattern {
        Pattern::Loop { pause } if pause.is_zero() => "closed loop".to_owned(),
        Pattern::Loop { pause } => format!("loop, pause {pause:?}"),
        Pattern::Fleet { lease } => format!("fleet, leases of {lease:?} ± 50 %"),
    };
    println!(
        "load: {} workers ({connections}), {pattern}, {} pairs a lease, window {secs:.1} s \
         after {:.1} s, sync {:?}",
        config.workers,
        config.pairs,
        config.warmup.as_secs_f64(),
        config.durability
    );
    let started: u64 = Call::ALL.iter().map(|&c| total.started(c)).sum();
    let answered: usize = Call::ALL.iter().map(|&c| total.latency(c).len()).sum();
    let offered = config
        .offered()
        .map_or("closed loop".to_owned(), |r| format!("{r:.0} requests/s"));
    println!(
        "  offered {offered} (started in the window: {:.0}/s); achieved {:.0} requests/s",
        started as f64 / secs,
        answered as f64 / secs
    );
    println!(
        "  {:.1} results/s accepted, {:.0} games/s ({:.0} plies/s) checked and stored; \
         {:.1} submissions/s refused for load ({} in all)",
        total.window_results as f64 / secs,
        2.0 * total.window_pairs as f64 / secs,
        (total.window_pairs * plies) as f64 / secs,
        total.window_load_refusals as f64 / secs,
        total.load_refusals
    );
    for call in Call::ALL {
        let lat = total.latency(call);
        println!(
            "  {:<12} n={:<8} p50 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms",
            call.name(),
            lat.len(),
            percentile(lat, 0.5),
            percentile(lat, 0.99),
            percentile(lat, 1.0)
        );
    }
    println!(
        "  errors: {:?}; leases lost: {}",
        total.errors, total.lost_leases
    );
    println!(
        "  coordinator: CPU {:.2} of one core, resident {} MiB at the end (peak {} MiB); \
         clients: CPU {:.2} of one core",
        usage.server_cpu.as_secs_f64() / secs,
        usage.memory.rss_kib / 1024,
        usage.memory.peak_kib / 1024,
        usage.clients_cpu.as_secs_f64() / secs
    );
    let groups = |threads: &[ThreadGroup]| {
        for t in threads
            .iter()
            .filter(|t| !t.cpu.is_zero() || !t.waited.is_zero())
        {
            println!(
                "    {:<16} ×{:<3} CPU {:.2}, waited for a CPU {:.2} of one core; \
                 the busiest: CPU {:.2}, waited {:.2}",
                t.name,
                t.count,
                t.cpu.as_secs_f64() / secs,
                t.waited.as_secs_f64() / secs,
                t.busiest.0.as_secs_f64() / secs,
                t.busiest.1.as_secs_f64() / secs
            );
        }
    };
    groups(&usage.server_threads);
    println!("  the clients' threads:");
    groups(&usage.client_threads);
    println!(
        "  loadavg at the window's start: {}; at its end: {}",
        usage.load_before, usage.load_after
    );
    println!("  in the server (bucket bounds, ms: the quantile is at most this):");
    for (series, name) in scrape::SERIES {
        let q = |p| usage.server.quantile(series, p);
        let Some((n, p50)) = q(0.5) else {
            continue;
        };
        let ms = |b: Option<(u64, f64)>| b.map_or(f64::NAN, |b| b.1 * 1e3);
        println!(
            "    {name:<28} n={n:<8} p50 ≤ {:>7.1}  p99 ≤ {:>7.1}  max ≤ {:>7.1}",
            p50 * 1e3,
            ms(q(0.99)),
            ms(q(1.0))
        );
    }
    if config.pollers > 0 {
        web.latency.sort_unstable();
        println!(
            "  web: {} pollers, {} polls by status {:?}; p50 {:.2} ms  p99 {:.2} ms",
            config.pollers,
            web.latency.len(),
            web.statuses,
            percentile(&web.latency, 0.5),
            percentile(&web.latency, 0.99)
        );
    }
}
