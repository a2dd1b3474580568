//! Fault injection with the real binaries: `xq-coordinator serve` and
//! `xq-worker work` (real engine, 200 nodes per move) as child processes on
//! 127.0.0.1, tokens and runs made with the CLI.
//!
//! Every scenario also checks the game archive: the stored games are exactly
//! the counted games that the run's retention keeps (all, decisive only in
//! the killed-worker scenario, none in the killed-coordinator one).
//!
//! The killed-worker and dead-connection scenarios run by default; the others
//! (7–12 s each, and the full-disk one mounts a tmpfs, which needs root) are
//! `#[ignore]`d: `cargo test -p xq-tests --test faults -- --ignored`.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use xq_proto::{Retention, pb};
use xq_tests::cluster::{AdminClient, run_client, status, wait_for_end};
use xq_tests::procs::{
    Coordinator, TempDir, Worker, create_games_run, create_games_run_keeping, token_add,
};
use xq_tests::proxy::{ChaosProxy, Fault};

const NODES: u64 = 200;
const RUN_LIMIT: Duration = Duration::from_secs(240);

fn query(db: &Path, sql: &str) -> i64 {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn integrity(db: &Path) -> String {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// Totals describe exactly `pairs` pairs, and the pairs of `done` leases
/// (each counted once) add up to the same.
fn assert_exact(db: &Path, end: &pb::RunStatus, pairs: u64) {
    assert_exact_keeping(db, end, pairs, Retention::All);
}

/// [`assert_exact`] for a run that keeps the games `keep` keeps.
fn assert_exact_keeping(db: &Path, end: &pb::RunStatus, pairs: u64, keep: Retention) {
    let t = end.totals.clone().unwrap();
    assert_eq!(t.pairs, pairs);
    assert_eq!(t.pentanomial.iter().sum::<u64>(), pairs);
    assert_eq!(t.wins + t.draws + t.losses, 2 * pairs);
    assert_eq!(t.reasons.values().sum::<u64>(), 2 * pairs);
    let done = query(
        db,
        "SELECT COALESCE(SUM(pairs), 0) FROM leases WHERE state = 'done'",
    );
    assert_eq!(done as u64, pairs, "pairs of counted leases");
    // The game archive: a game is stored exactly when it is counted and
    // its retention keeps it, and only with a counted lease.
    assert_eq!(
        query(db, "SELECT COUNT(*) FROM games") as u64,
        keep.kept_of(&xq_proto::Totals::from_wire(Some(t), "totals").unwrap()),
        "stored games = counted games that the retention {keep} keeps"
    );
    if keep == Retention::Decisive {
        assert_eq!(
            query(db, "SELECT COUNT(*) FROM games WHERE result = 'draw'"),
            0,
            "draws stored by a decisive-only run"
        );
    }
    assert_eq!(
        query(
            db,
            "SELECT COUNT(*) FROM games g JOIN leases l ON l.id = g.lease_id
             WHERE l.state != 'done'"
        ),
        0,
        "games of leases that were not counted"
    );
    assert_eq!(integrity(db), "ok");
}

struct Setup {
    dir: TempDir,
    admin: String,
    worker: String,
}

impl Setup {
    fn new(tag: &str) -> Self {
        let dir = TempDir::new(tag);
        let db = dir.join("xq.db");
        let admin = token_add(&db, "personal", "ops");
        let worker = token_add(&db, "worker", "hosts");
        Setup { dir, admin, worker }
    }

    fn db(&self) -> std::path::PathBuf {
        self.dir.join("xq.db")
    }

    fn client(&self, coordinator: &Coordinator) -> AdminClient {
        run_client(&coordinator.url(), Some(&self.admin))
    }

    fn worker(&self, coordinator: &Coordinator, name: &str) -> Worker {
        Worker::start(
            &coordinator.url(),
            &self.worker,
            name,
            &self.dir.join(&format!("{name}.log")),
        )
    }
}

async fn counted(client: &mut AdminClient, run: u64) -> u64 {
    status(client, run).await.totals.map_or(0, |t| t.pairs)
}

async fn wait_counted(client: &mut AdminClient, run: u64, pairs: u64) {
    let end = Instant::now() + RUN_LIMIT;
    while counted(client, run).await < pairs {
        assert!(
            Instant::now() < end,
            "run {run} never counted {pairs} pairs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_lease_expires_and_is_played_again() {
    let s = Setup::new("fault-a");
    let db = s.db();
    let coordinator = Coordinator::start(&db, 0, &["--lease-secs", "2"], &s.dir.join("c.log"));
    let run = create_games_run_keeping(&coordinator.url(), &s.admin, 12, 2, NODES, "decisive");
    let mut victim = s.worker(&coordinator, "victim");
    victim.wait_for_log("playing lease", Duration::from_secs(30));
    victim.kill();
    let _survivor = s.worker(&coordinator, "survivor");
    let mut client = s.client(&coordinator);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact_keeping(&db, &end, 12, Retention::Decisive);
    let requeued = query(
        &db,
        "SELECT COUNT(*) FROM leases WHERE state = 'expired' AND reissued = 1",
    );
    assert!(
        requeued >= 1,
        "the killed worker's lease was handed out again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "real processes and engine games, about 7 s"]
async fn a_killed_coordinator_restarts_on_the_same_database_and_the_run_continues() {
    let s = Setup::new("fault-b");
    let db = s.db();
    let log = s.dir.join("c.log");
    let mut coordinator = Coordinator::start(&db, 0, &["--lease-secs", "3"], &log);
    let port = coordinator.port();
    let run = create_games_run_keeping(&coordinator.url(), &s.admin, 16, 2, NODES, "none");
    let _w1 = s.worker(&coordinator, "w1");
    let _w2 = s.worker(&coordinator, "w2");
    let mut client = s.client(&coordinator);
    wait_counted(&mut client, run, 4).await;
    coordinator.kill();
    assert_eq!(integrity(&db), "ok");
    let mid = query(&db, "SELECT pairs FROM runs");
    assert!(mid < 16, "the run must still be going at the kill");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let coordinator = Coordinator::start(&db, port, &["--lease-secs", "3"], &s.dir.join("c2.log"));
    let mut client = s.client(&coordinator);
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact_keeping(&db, &end, 16, Retention::None);
    assert_eq!(query(&db, "SELECT COUNT(*) FROM game_batches"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "real processes and engine games, about 12 s"]
async fn a_cut_off_worker_loses_expired_leases_and_keeps_live_ones() {
    let s = Setup::new("fault-c");
    let db = s.db();
    let coordinator = Coordinator::start(&db, 0, &["--lease-secs", "3"], &s.dir.join("c.log"));
    let run = create_games_run(&coordinator.url(), &s.admin, 20, 2, NODES);
    let w1 = s.worker(&coordinator, "w1");
    let w2 = s.worker(&coordinator, "w2");
    let mut client = s.client(&coordinator);
    wait_counted(&mut client, run, 2).await;
    // Cut off for less than a lease: nothing expires, results still count.
    let expired = || query(&db, "SELECT COUNT(*) FROM leases WHERE state = 'expired'");
    let before = (expired(), counted(&mut client, run).await);
    coordinator.pause();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    coordinator.resume();
    wait_counted(&mut client, run, before.1 + 2).await;
    assert_eq!(expired(), before.0, "a short cut-off expired a lease");
    // Cut off for longer than a lease while both workers play: their leases
    // expire, and what they send afterwards is not counted.
    w1.wait_for_log("playing lease", Duration::from_secs(30));
    coordinator.pause();
    tokio::time::sleep(Duration::from_secs(5)).await;
    coordinator.resume();
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact(&db, &end, 20);
    assert!(expired() > before.0, "the long cut-off expired leases");
    let logs = w1.log_text() + &w2.log_text();
    assert!(
        logs.contains("EXPIRED_IGNORED") || logs.contains("lease lost"),
        "a worker was told its lease had gone"
    );
}

/// Mounts a small tmpfs (root only); `None` where mounting is not allowed.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Self> {
        std::fs::create_dir_all(dir).ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .ok()?
            .success();
        ok.then(|| Tmpfs(dir.to_owned()))
    }

    /// Writes a file until the disk is full.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "real processes, mounts a tmpfs (root), about 2 s"]
async fn a_full_disk_refuses_writes_keeps_reads_and_recovers_exactly_once() {
    let outer = TempDir::new("fault-d");
    let Some(disk) = Tmpfs::mount(&outer.join("disk"), "16m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let db = disk.0.join("xq.db");
    let admin = token_add(&db, "personal", "ops");
    let worker = token_add(&db, "worker", "hosts");
    let coordinator = Coordinator::start(&db, 0, &["--lease-secs", "120"], &outer.join("c.log"));
    let run = create_games_run(&coordinator.url(), &admin, 6, 2, NODES);
    let w = Worker::start(&coordinator.url(), &worker, "w", &outer.join("w.log"));
    w.wait_for_log("playing lease", Duration::from_secs(30));
    let filler = disk.fill();
    // The lease's result cannot be stored; the worker keeps it and retries.
    w.wait_for_log("submit failed; keeping the result", Duration::from_secs(60));
    let mut client = run_client(&coordinator.url(), Some(&admin));
    let runs = client
        .list_runs(pb::ListRunsRequest {})
        .await
        .expect("reads work on a full disk")
        .into_inner()
        .runs;
    assert_eq!(runs.len(), 1);
    assert_eq!(counted(&mut client, run).await, 0);
    let err = client
        .create_run(pb::CreateRunRequest {
            spec: runs[0].spec.clone(),
            reuse_identical: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::ResourceExhausted, "{err}");
    assert!(err.message().contains("full"), "{}", err.message());
    // Space comes back: the retried result counts, once.
    std::fs::remove_file(filler).unwrap();
    let end = wait_for_end(&mut client, run, RUN_LIMIT).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact(&db, &end, 6);
    let log = w.log_text();
    assert_eq!(log.matches("result accepted").count(), 3, "{log}");
    assert!(!log.contains("result not counted"), "{log}");
    drop(w);
    drop(coordinator);
}

/// A partition that ends without a reset: the old connection stays a black
/// hole for good (a NAT or firewall that forgot it), new connections work.
/// The worker must notice the dead connection by itself and carry on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_connection_silently_died_reconnects_and_the_run_finishes() {
    let s = Setup::new("fault-e");
    let db = s.db();
    let coordinator = Coordinator::start(&db, 0, &["--lease-secs", "3"], &s.dir.join("c.log"));
    let run = create_games_run(&coordinator.url(), &s.admin, 8, 2, NODES);
    let proxy = ChaosProxy::start(coordinator.port()).await.unwrap();
    let w = Worker::start(&proxy.url(), &s.worker, "w", &s.dir.join("w.log"));
    w.wait_for_log("playing lease", Duration::from_secs(30));
    proxy.set(Fault::Blackhole);
    tokio::time::sleep(Duration::from_secs(4)).await;
    proxy.end_partition(false);
    let mut client = s.client(&coordinator);
    let end = wait_for_end(&mut client, run, Duration::from_secs(90)).await;
    assert_eq!(end.state(), pb::RunState::Finished);
    assert_exact(&db, &end, 8);
}
