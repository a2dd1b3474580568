//! Load test of one coordinator: many fake workers on loopback, each with
//! its own connection and its own stored token, each looping
//! RequestWork → SubmitResult with an instantly made result of one pair.
//!
//! ```sh
//! cargo bench -p xq-tests --bench load
//! XQ_LOAD_WORKERS=1000 XQ_LOAD_SECS=20 XQ_LOAD_SYNC=normal cargo bench -p xq-tests --bench load
//! XQ_LOAD_PAUSE_MS=1000 cargo bench -p xq-tests --bench load   # think time per lease
//! XQ_LOAD_WEB_POLLERS=100 cargo bench -p xq-tests --bench load  # and 100 browsers on the run page
//! ```
//!
//! Every result carries its evidence, as the coordinator requires: the two
//! games of one real pair (played once at start by the game runner, 300
//! nodes per move), which the coordinator checks (opening regenerated,
//! replay, counts) and stores. The run's openings are one line
//! ([`BENCH_OPENING`]), so every lease's opening is that pair's: the fake
//! workers only set each game's `opening_index` to their lease's.
//!
//! Without a pause every worker calls back to back (a closed loop): the
//! figures are the server's throughput, and latency is mostly queueing
//! (about workers ÷ throughput). With `XQ_LOAD_PAUSE_MS` each worker starts
//! at a random point within one pause and waits a random 0.5–1.5 pauses
//! after each result, which offers a steady load of about
//! workers × 2 ÷ pause requests/s and shows the latency at that load.
//!
//! Prints requests per second and p50/p99 latency per call, then checks
//! that the run's totals equal the accepted submissions (none lost or
//! counted twice). The server runs in this process on 127.0.0.1:0 with a
//! temporary database; the clients share its two cores.
//!
//! With `XQ_LOAD_WEB_POLLERS=N` the web view is served too, and N pollers
//! do what the run page's script does: fetch the run's live part every 2 s
//! (± 50 %) with the last ETag in `If-None-Match`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use tokio::net::TcpListener;
use tokio::sync::{Barrier, oneshot};
use tonic::Code;
use xq_coordinator::auth::{RateLimits, Role, tokens};
use xq_coordinator::http::Http;
use xq_coordinator::scheduler::SchedulerConfig;
use xq_coordinator::server::{self, ServerConfig};
use xq_coordinator::store::{Durability, Store, StoreOptions, now_ms, tokens as token_rows};
use xq_proto::pb;
use xq_tests::cluster::{TempDb, create, games_spec, run_client, status, worker_client};
use xq_web::WebView;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The soft limit on open files, from /proc (Linux).
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let workers: usize = env("XQ_LOAD_WORKERS", 1000);
    let secs: u64 = env("XQ_LOAD_SECS", 20);
    let pause = Duration::from_millis(env("XQ_LOAD_PAUSE_MS", 0));
    let pollers: usize = env("XQ_LOAD_WEB_POLLERS", 0);
    let durability = match std::env::var("XQ_LOAD_SYNC").as_deref() {
        Ok("normal") => Durability::Normal,
        _ => Durability::Full,
    };
    // Two sockets per worker (client and server side) plus the database.
    let needed = 2 * workers as u64 + 64;
    if let Some(limit) = open_file_limit()
        && limit < needed
    {
        bail!("open file limit {limit} is below {needed}: raise it with `ulimit -n {needed}`");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let pair = real_pair()?;
    println!(
        "each result carries its 2 games ({} plies)",
        pair.totals.as_ref().map_or(0, |t| t.total_plies)
    );
    rt.block_on(run(
        workers,
        Duration::from_secs(secs),
        pause,
        durability,
        pair,
        pollers,
    ))
}

/// The only opening of the bench's run: every opening index is this line.
const BENCH_OPENING: &str =
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7";

#[derive(Default)]
struct Tally {
    request_work: Vec<u32>,
    submit: Vec<u32>,
    accepted_pairs: u64,
    errors: BTreeMap<String, u64>,
}

fn micros(since: Instant) -> u32 {
    since.elapsed().as_micros().min(u32::MAX as u128) as u32
}

/// One real pair played by the game runner, as a worker would submit it.
fn real_pair() -> anyhow::Result<pb::GameResults> {
    use xq_worker::BatchPlayer;
    let mut work = xq_proto::WorkSpec::example();
    work.pairs = 1;
    work.openings.count = 1;
    work.openings.offset = 0;
    work.openings.source = xq_proto::OpeningSource::Lines(vec![BENCH_OPENING.to_owned()]);
    for p in &mut work.players {
        p.limit = xq_proto::Limit::Nodes(300);
        p.hash_mb = 1;
    }
    let player = xq_worker::EnginePlayer::new(1)?;
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let outcome = player.play(&work, &cancel, &|_| {})?;
    ensure!(
        outcome.games.len() == 2,
        "the pair has {} games",
        outcome.games.len()
    );
    Ok(outcome.into())
}

async fn fake_worker(
    url: String,
    token: String,
    start: Arc<Barrier>,
    end: Instant,
    pause: Duration,
    results: pb::GameResults,
) -> Tally {
    let mut tally = Tally::default();
    use rand::Rng;
    let mut rpc = worker_client(&url, Some(&token));
    start.wait().await;
    let jitter = |scale: f64| pause.mul_f64(rand::rng().random::<f64>() * scale);
    tokio::time::sleep(jitter(1.0)).await;
    let worker_id = loop {
        match rpc
            .register(pb::RegisterRequest {
                name: "load".to_owned(),
                threads: 1,
                version: "0.1.0".to_owned(),
                bench_signature: 0,
                bench_nps: 0,
                machine: None,
                tools: Vec::new(),
                target: String::new(),
                updated_from: String::new(),
            })
            .await
        {
            Ok(r) => break r.into_inner().worker_id,
            Err(e) => {
                *tally
                    .errors
                    .entry(format!("register {:?}", e.code()))
                    .or_default() += 1;
                if Instant::now() > end {
                    return tally;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    while Instant::now() < end {
        let t = Instant::now();
        let answer = rpc.request_work(pb::RequestWorkRequest { worker_id }).await;
        let lease = match answer {
            Ok(a) => {
                tally.request_work.push(micros(t));
                a.into_inner().lease
            }
            Err(e) => {
                *tally
                    .errors
                    .entry(format!("request_work {:?}", e.code()))
                    .or_default() += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(lease) = lease else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let pairs = lease.work.as_ref().map_or(0, |w| w.pairs);
        let offset = lease
            .work
            .as_ref()
            .and_then(|w| w.openings.as_ref())
            .map_or(0, |o| o.offset);
        assert_eq!(
            pairs, 1,
            "the bench's run hands out one pair a lease, as its games"
        );
        let mut results = results.clone();
        for g in &mut results.games {
            g.opening_index = offset;
        }
        let request = pb::SubmitResultRequest {
            worker_id,
            lease_id: lease.lease_id,
            results: Some(results),
        };
        // Resubmit on transient errors, as the real client does.
        loop {
            let t = Instant::now();
            match rpc.submit_result(request.clone()).await {
                Ok(a) => {
                    tally.submit.push(micros(t));
                    if a.into_inner().status() == pb::SubmitStatus::Accepted {
                        tally.accepted_pairs += u64::from(pairs);
                    }
                    break;
                }
                Err(e) => {
                    *tally
                        .errors
                        .entry(format!("submit {:?}", e.code()))
                        .or_default() += 1;
                    if !matches!(e.code(), Code::ResourceExhausted | Code::Unavailable) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        if !pause.is_zero() {
            let wake = Instant::now() + pause / 2 + jitter(1.0);
            tokio::time::sleep_until(wake.min(end).into()).await;
        }
    }
    tally
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

async fn run(
    workers: usize,
    duration: Duration,
    pause: Duration,
    durability: Durability,
    results: pb::GameResults,
    pollers: usize,
) -> anyhow::Result<()> {
    let db = TempDb::new("load");
    let store = Store::open_with(
        &db.0,
        StoreOptions {
            durability,
            ..StoreOptions::default()
        },
    )?;
    let admin = tokens::generate()?;
    let worker_tokens: Vec<String> = (0..workers)
        .map(|_| tokens::generate())
        .collect::<Result<_, _>>()?;
    let hashes: Vec<_> = worker_tokens.iter().map(|t| tokens::hash(t)).collect();
    let admin_hash = tokens::hash(&admin);
    store
        .call(move |conn| {
            let tx = conn.savepoint()?;
            let owner = xq_coordinator::store::users::ensure(
                &tx,
                "admin",
                xq_coordinator::access::UserRole::Admin,
                now_ms(),
            )?;
            token_rows::insert(&tx, "admin", Role::Personal, owner, &admin_hash, now_ms())?;
            for (i, h) in hashes.iter().enumerate() {
                token_rows::insert(&tx, &format!("load-{i}"), Role::Worker, owner, h, now_ms())?;
            }
            tx.commit()?;
            Ok(())
        })
        .await?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let config = ServerConfig {
        scheduler: SchedulerConfig {
            lease_ttl: Duration::from_secs(60),
            heartbeat_interval: Duration::from_secs(10),
            idle_retry: Duration::from_millis(50),
            ..SchedulerConfig::default()
        },
        limits: RateLimits::default(),
        ..ServerConfig::default()
    };
    let web = match pollers {
        0 => None,
        _ => Some(TcpListener::bind("127.0.0.1:0").await?),
    };
    let web_url = web
        .as_ref()
        .map(|l| l.local_addr().map(|a| format!("http://{a}")))
        .transpose()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let web = web.map(|l| Http::new(l, WebView));
    let server = tokio::spawn(server::run_with_web(listener, web, store, config, async {
        let _ = stopped.await;
    }));
    let mut admin_client = run_client(&url, Some(&admin));
    let mut spec = games_spec(1 << 40, 1);
    if let Some(s) = spec.settings.as_mut() {
        s.openings = Some(xq_proto::OpeningSource::Lines(vec![BENCH_OPENING.to_owned()]).into());
    }
    let run = create(&mut admin_client, spec).await;

    let start = Arc::new(Barrier::new(workers + 1));
    // The clock starts once every worker is set up.
    let end_at = Instant::now() + duration + Duration::from_secs(2);
    let handles: Vec<_> = worker_tokens
        .into_iter()
        .map(|t| {
            tokio::spawn(fake_worker(
                url.clone(),
                t,
                Arc::clone(&start),
                end_at,
                pause,
                results.clone(),
            ))
        })
        .collect();
    let polls: Vec<_> = (0..pollers)
        .map(|_| {
            let url = format!("{}/runs/{run}/live", web_url.clone().unwrap_or_default());
            tokio::spawn(poller(url, end_at))
        })
        .collect();
    start.wait().await;
    let began = Instant::now();
    let mut total = Tally::default();
    for h in handles {
        let t = h.await.context("a fake worker panicked")?;
        total.request_work.extend(t.request_work);
        total.submit.extend(t.submit);
        total.accepted_pairs += t.accepted_pairs;
        for (k, v) in t.errors {
            *total.errors.entry(k).or_default() += v;
        }
    }
    let elapsed = began.elapsed().as_secs_f64();
    let mut web = Polls::default();
    for p in polls {
        let p = p.await.context("a poller panicked")?;
        web.latency.extend(p.latency);
        for (k, v) in p.statuses {
            *web.statuses.entry(k).or_default() += v;
        }
    }
    let counted = status(&mut admin_client, run)
        .await
        .totals
        .map_or(0, |t| t.pairs);
    let _ = stop.send(());
    server.await??;

    total.request_work.sort_unstable();
    total.submit.sort_unstable();
    let requests = total.request_work.len() + total.submit.len();
    println!(
        "load: {workers} workers (one connection and token each), {elapsed:.1} s, \
         sync {durability:?}, pause {pause:?}"
    );
    println!(
        "  {requests} requests, {:.0} requests/s; {} results accepted ({:.0}/s)",
        requests as f64 / elapsed,
        total.submit.len(),
        total.submit.len() as f64 / elapsed
    );
    for (name, lat) in [
        ("RequestWork", &total.request_work),
        ("SubmitResult", &total.submit),
    ] {
        println!(
            "  {name:<12} n={:<8} p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>8.2} ms",
            lat.len(),
            percentile(lat, 0.5),
            percentile(lat, 0.99),
            percentile(lat, 1.0)
        );
    }
    println!("  errors: {:?}", total.errors);
    if pollers > 0 {
        web.latency.sort_unstable();
        println!(
            "  web: {pollers} pollers, {} polls by status {:?}; p50 {:.2} ms  p99 {:.2} ms",
            web.latency.len(),
            web.statuses,
            percentile(&web.latency, 0.5),
            percentile(&web.latency, 0.99)
        );
    }
    println!(
        "  run totals {counted} pairs = accepted submissions {} pairs",
        total.accepted_pairs
    );
    ensure!(
        counted == total.accepted_pairs,
        "results lost or counted twice: run has {counted} pairs, workers were told {} were accepted",
        total.accepted_pairs
    );
    ensure!(
        !results_refused(&total.errors),
        "results were refused: {:?}",
        total.errors
    );
    Ok(())
}

/// Whether any submission was refused as invalid (a bench whose results do
/// not pass the checks measures nothing).
fn results_refused(errors: &BTreeMap<String, u64>) -> bool {
    errors
        .keys()
        .any(|k| k.starts_with("submit InvalidArgument"))
}

#[derive(Default)]
struct Polls {
    latency: Vec<u32>,
    statuses: BTreeMap<u16, u64>,
}

/// A browser on the run page: its live part every 2 s ± 50 %, conditional on
/// the last ETag, until `end_at`.
async fn poller(url: String, end_at: Instant) -> Polls {
    use rand::Rng;
    let mut polls = Polls::default();
    let jitter =
        |rng: &mut rand::rngs::ThreadRng| Duration::from_millis(rng.random_range(1000..3000));
    let first = jitter(&mut rand::rng());
    tokio::time::sleep(first).await;
    let mut etag = String::new();
    while Instant::now() < end_at {
        let started = Instant::now();
        let headers: Vec<(&str, &str)> = if etag.is_empty() {
            Vec::new()
        } else {
            vec![("if-none-match", etag.as_str())]
        };
        let answer = xq_tests::web::request(http::Method::GET, &url, &headers, "").await;
        polls.latency.push(micros(started));
        *polls.statuses.entry(answer.status.as_u16()).or_default() += 1;
        if let Some(tag) = answer.headers.get("etag").and_then(|v| v.to_str().ok()) {
            etag = tag.to_owned();
        }
        let pause = jitter(&mut rand::rng());
        tokio::time::sleep(pause).await;
    }
    polls
}
