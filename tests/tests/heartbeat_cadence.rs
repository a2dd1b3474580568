//! A fleet past the coordinator's heartbeat budget is told a longer
//! interval with its leases and heartbeats' answers, and the real worker
//! beats at it: its lease lives through beats far apart, and the
//! coordinator counts far fewer of them (`serve --heartbeats-per-sec`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use xq_proto::pb;
use xq_tests::cluster::{registered_worker, wait_for_end};
use xq_tests::procs::{Served, create_games_run};
use xq_tests::web;

/// Heartbeat calls the coordinator answered, by its `/metrics`.
async fn heartbeats(metrics_url: &str) -> u64 {
    let body = web::get(metrics_url).await.body;
    body.lines()
        .find_map(|l| {
            l.strip_prefix(
                "xq_requests_total{protocol=\"grpc\",method=\"Heartbeat\",status=\"0\"} ",
            )
        })
        .map_or(0, |n| n.trim().parse().expect("a count"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_beats_at_the_longer_interval_a_large_fleet_is_told() {
    // Leases of 1 s, heartbeats every 200 ms, paced to one heartbeat a
    // second: one worker beats every second, three every 3 s (a lease then
    // lives 15 s).
    let served = Served::start(
        "cadence",
        &[
            "--lease-secs",
            "1",
            "--heartbeats-per-sec",
            "1",
            "--http",
            "127.0.0.1:0",
        ],
    );
    let url = served.coordinator.url();
    let metrics = format!(
        "{}metrics",
        served.coordinator.web.clone().expect("web view")
    );
    // The real worker registers alone, and is told a 1 s interval.
    let worker = served.worker("w", &[]);
    worker.wait_for_log("registered", Duration::from_secs(60));
    // Two more workers join; they keep calling (heartbeats without leases)
    // so the fleet stays at three.
    let mut others = Vec::new();
    for name in ["idle-1", "idle-2"] {
        others.push(registered_worker(&url, &served.worker, name).await);
    }
    let idle_beats = Arc::new(AtomicU64::new(0));
    let told = Arc::new(AtomicU64::new(0));
    let keep_calling = tokio::spawn({
        let (idle_beats, told) = (Arc::clone(&idle_beats), Arc::clone(&told));
        async move {
            loop {
                for (rpc, worker_id) in &mut others {
                    let beat = pb::HeartbeatRequest {
                        worker_id: *worker_id,
                        leases: Vec::new(),
                    };
                    let answer = rpc.heartbeat(beat).await.expect("heartbeat").into_inner();
                    told.store(answer.heartbeat_interval_ms, Ordering::SeqCst);
                    idle_beats.fetch_add(1, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(1_500)).await;
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (before, idle_before) = (
        heartbeats(&metrics).await,
        idle_beats.load(Ordering::SeqCst),
    );
    let started = Instant::now();
    let run = create_games_run(&url, &served.admin, 2, 2, 80_000);
    let end = wait_for_end(&mut served.client(), run, Duration::from_secs(300)).await;
    let elapsed = started.elapsed();
    let (after, idle_after) = (
        heartbeats(&metrics).await,
        idle_beats.load(Ordering::SeqCst),
    );
    keep_calling.abort();
    assert_eq!(end.state(), pb::RunState::Finished, "{end:?}");
    assert_eq!(
        told.load(Ordering::SeqCst),
        3_000,
        "the interval told a fleet of three"
    );
    assert_eq!(end.totals.map_or(0, |t| t.pairs), 2);
    assert!(
        elapsed >= Duration::from_secs(8),
        "the lease was played in {elapsed:?}: too short to tell a 1 s interval from a 3 s one"
    );
    // The idle workers' heartbeats are theirs to subtract; one of theirs may
    // be answered but not yet counted at each end.
    let worker_beats = (after - before).saturating_sub(idle_after - idle_before + 2);
    let at_3s = elapsed.as_secs() / 3 + 1;
    assert!(
        worker_beats <= at_3s,
        "{worker_beats} heartbeats of the worker in {elapsed:?}: at most {at_3s} at 3 s"
    );
    eprintln!("{worker_beats} heartbeats of the worker in {elapsed:?}");
    drop(worker);
}
