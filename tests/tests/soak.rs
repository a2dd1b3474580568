//! The chaos soak: a real coordinator and `XQ_SOAK_WORKERS` (default 8)
//! worker processes with the real engine play SPRT, SPSA and variants runs
//! at once (a finished run is replaced by a new one of its kind) for
//! `XQ_SOAK_SECS` seconds (default 600), while a controller seeded by
//! `XQ_SOAK_SEED` (default 19) injects faults at random:
//!
//! * `kill -9` of a worker (restarted later) or of the coordinator
//!   (restarted on the same database and port);
//! * `SIGSTOP` … `SIGCONT` of a worker or of the coordinator, some longer
//!   than a lease;
//! * on the TCP proxy in front of each worker ([`ChaosProxy`]): delays,
//!   refused connections, resets, and partitions longer than a lease that
//!   end either with a reset or with the old connections left as black
//!   holes for good.
//!
//! Then every fault is healed, the cluster is given time to settle, and
//! every invariant is checked ([`xq_tests::invariants`]): totals, slices,
//! histories and integrity on the database file; no lease active past its
//! deadline while the cluster runs; every result a worker was told was
//! accepted is counted; every worker got work done after the faults; every
//! run finished or still progressing. It prints the faults by kind, the
//! games counted and the runs finished.
//!
//! `XQ_SOAK_SECS=120 cargo test -p xq-tests --test soak -- --ignored --nocapture`

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_proto::pb;
use xq_tests::cluster::{AdminClient, run_client};
use xq_tests::invariants;
use xq_tests::procs::{Coordinator, TempDir, Worker, token_add};
use xq_tests::proxy::{ChaosProxy, Fault};

/// Lease time-to-live of the soak's coordinator.
const LEASE_SECS: u64 = 4;
const LEASE: Duration = Duration::from_secs(LEASE_SECS);
/// Time after the last fault for leases in play to finish or expire.
const SETTLE: Duration = Duration::from_secs(6 * LEASE_SECS + 12);

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number")),
        Err(_) => default,
    }
}

/// The faults, by the name printed in the summary.
const KINDS: [(&str, u32); 8] = [
    ("kill -9 worker", 3),
    ("kill -9 coordinator", 1),
    ("SIGSTOP worker", 2),
    ("SIGSTOP coordinator", 1),
    ("proxy delay", 2),
    ("proxy refuse", 1),
    ("proxy reset", 2),
    ("proxy partition", 2),
];

/// Something to do later to end a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Undo {
    StartWorker(usize),
    ResumeWorker(usize),
    StartCoordinator,
    ResumeCoordinator,
    Heal(usize),
    EndPartition(usize, bool),
}

struct Slot {
    name: String,
    process: Option<Worker>,
    stopped: bool,
    /// Every log file this slot's processes wrote.
    logs: Vec<PathBuf>,
}

struct Soak {
    dir: TempDir,
    admin: String,
    worker_token: String,
    coordinator: Option<Coordinator>,
    coordinator_stopped: bool,
    coordinator_starts: u32,
    port: u16,
    slots: Vec<Slot>,
    proxies: Vec<ChaosProxy>,
    /// Pending undos with their time; a target with one pending gets no new fault.
    undo: Vec<(Instant, Undo)>,
    faults: BTreeMap<&'static str, u64>,
    rng: ChaCha8Rng,
    runs_made: BTreeMap<&'static str, u64>,
}

impl Soak {
    fn db(&self) -> PathBuf {
        self.dir.join("xq.db")
    }

    fn coordinator_args() -> Vec<&'static str> {
        vec![
            "--lease-secs",
            "4",
            "--worker-rate",
            "0",
            "--personal-rate",
            "0",
        ]
    }

    fn start_coordinator(&mut self) {
        self.coordinator_starts += 1;
        let log = self
            .dir
            .join(&format!("coordinator-{}.log", self.coordinator_starts));
        let c = Coordinator::start(&self.db(), self.port, &Self::coordinator_args(), &log);
        self.port = c.port();
        self.coordinator = Some(c);
        self.coordinator_stopped = false;
    }

    fn start_worker(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        let log = self
            .dir
            .join(&format!("{}-{}.log", slot.name, slot.logs.len() + 1));
        slot.process = Some(Worker::start(
            &self.proxies[i].url(),
            &self.worker_token,
            &slot.name,
            &log,
        ));
        slot.logs.push(log);
        slot.stopped = false;
    }

    fn busy(&self, target: Undo) -> bool {
        let same = |u: &Undo| match (u, target) {
            (
                Undo::StartWorker(a) | Undo::ResumeWorker(a),
                Undo::StartWorker(b) | Undo::ResumeWorker(b),
            ) => *a == b,
            (
                Undo::StartCoordinator | Undo::ResumeCoordinator,
                Undo::StartCoordinator | Undo::ResumeCoordinator,
            ) => true,
            (
                Undo::Heal(a) | Undo::EndPartition(a, _),
                Undo::Heal(b) | Undo::EndPartition(b, _),
            ) => *a == b,
            _ => false,
        };
        self.undo.iter().any(|(_, u)| same(u))
    }

    fn secs(&mut self, lo: f64, hi: f64) -> Duration {
        Duration::from_secs_f64(self.rng.random_range(lo..hi))
    }

    /// Injects one random fault on a target that has none pending.
    fn inject(&mut self) {
        let total: u32 = KINDS.iter().map(|k| k.1).sum();
        let mut pick = self.rng.random_range(0..total);
        let kind = KINDS
            .iter()
            .find(|(_, w)| {
                if pick < *w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .map_or(KINDS[0].0, |k| k.0);
        let w = self.rng.random_range(0..self.slots.len());
        let now = Instant::now();
        let lease = LEASE.as_secs_f64();
        let undo = match kind {
            "kill -9 worker" if !self.busy(Undo::StartWorker(w)) => {
                if let Some(mut p) = self.slots[w].process.take() {
                    p.kill();
                }
                Some((self.secs(0.2, 3.0), Undo::StartWorker(w)))
            }
            "SIGSTOP worker" if !self.busy(Undo::ResumeWorker(w)) => {
                if let Some(p) = &self.slots[w].process {
                    p.pause();
                }
                self.slots[w].stopped = true;
                Some((self.secs(0.5, 2.0 * lease), Undo::ResumeWorker(w)))
            }
            "kill -9 coordinator" if !self.busy(Undo::StartCoordinator) => {
                if let Some(mut c) = self.coordinator.take() {
                    c.kill();
                }
                Some((self.secs(0.1, 3.0), Undo::StartCoordinator))
            }
            "SIGSTOP coordinator" if !self.busy(Undo::ResumeCoordinator) => {
                if let Some(c) = &self.coordinator {
                    c.pause();
                }
                self.coordinator_stopped = true;
                Some((self.secs(0.3, 1.5 * lease), Undo::ResumeCoordinator))
            }
            "proxy delay" if !self.busy(Undo::Heal(w)) => {
                let d = Duration::from_millis(self.rng.random_range(20..800));
                self.proxies[w].set(Fault::Delay(d));
                Some((self.secs(2.0, 15.0), Undo::Heal(w)))
            }
            "proxy refuse" if !self.busy(Undo::Heal(w)) => {
                self.proxies[w].set(Fault::Refuse);
                Some((self.secs(0.5, 8.0), Undo::Heal(w)))
            }
            "proxy reset" if !self.busy(Undo::Heal(w)) => {
                self.proxies[w].reset();
                None
            }
            "proxy partition" if !self.busy(Undo::Heal(w)) => {
                self.proxies[w].set(Fault::Blackhole);
                let reset = self.rng.random_bool(0.5);
                Some((
                    self.secs(lease + 1.0, lease + 8.0),
                    Undo::EndPartition(w, reset),
                ))
            }
            _ => return,
        };
        *self.faults.entry(kind).or_default() += 1;
        if let Some((after, u)) = undo {
            self.undo.push((now + after, u));
        }
    }

    fn apply(&mut self, u: Undo) {
        match u {
            Undo::StartWorker(i) => self.start_worker(i),
            Undo::ResumeWorker(i) => {
                if let Some(p) = &self.slots[i].process {
                    p.resume();
                }
                self.slots[i].stopped = false;
            }
            Undo::StartCoordinator => self.start_coordinator(),
            Undo::ResumeCoordinator => {
                if let Some(c) = &self.coordinator {
                    c.resume();
                }
                self.coordinator_stopped = false;
            }
            Undo::Heal(i) => self.proxies[i].set(Fault::None),
            Undo::EndPartition(i, reset) => self.proxies[i].end_partition(reset),
        }
    }

    /// Ends the faults whose time has come (all of them with `all`).
    fn undo_due(&mut self, all: bool) {
        let now = Instant::now();
        let (due, pending): (Vec<_>, Vec<_>) =
            self.undo.drain(..).partition(|(at, _)| all || *at <= now);
        self.undo = pending;
        for (_, u) in due {
            self.apply(u);
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Keeps one active run of each kind, when the coordinator answers.
    async fn keep_runs(&mut self, admin: &mut AdminClient) {
        if self.coordinator.is_none() || self.coordinator_stopped {
            return;
        }
        let list = tokio::time::timeout(
            Duration::from_secs(2),
            admin.list_runs(pb::ListRunsRequest {}),
        )
        .await;
        let Ok(Ok(list)) = list else {
            return;
        };
        let active: BTreeSet<String> = list
            .into_inner()
            .runs
            .iter()
            .filter(|r| r.state() == pb::RunState::Active)
            .filter_map(|r| {
                r.spec
                    .as_ref()?
                    .name
                    .strip_prefix("soak ")
                    .map(str::to_owned)
            })
            .collect();
        for kind in ["sprt", "spsa", "variants"] {
            if active.contains(kind) {
                continue;
            }
            let n = self.runs_made.get(kind).copied().unwrap_or(0);
            let request = pb::CreateRunRequest {
                spec: Some(spec(kind, n)),
                reuse_identical: false,
            };
            let made =
                tokio::time::timeout(Duration::from_secs(3), admin.create_run(request)).await;
            if let Ok(Ok(_)) = made {
                *self.runs_made.entry(kind).or_default() += 1;
            }
        }
    }
}

fn settings(seed: u64) -> pb::MatchSettings {
    pb::MatchSettings {
        limit: Some(pb::Limit {
            kind: Some(pb::limit::Kind::Nodes(250)),
        }),
        hash_mb: 1,
        rules: "standard".to_owned(),
        openings: Some(xq_proto::OpeningSource::Builtin { random_plies: 4 }.into()),
        seed,
        adjudication: Some(pb::Adjudication {
            resign_cp: 600,
            resign_moves: 3,
            draw_cp: 10,
            draw_moves: 6,
            draw_after_move: 20,
            max_plies: 120,
        }),
        draw_contempt: true,
        threads: 1,
    }
}

/// The `n`th run of `kind`.
fn spec(kind: &str, n: u64) -> pb::RunSpec {
    let seed = 1000 * n + kind.len() as u64;
    let kind_spec = match kind {
        "sprt" => pb::run_spec::Kind::Sprt(pb::SprtSpec {
            dev_params: [("tempo".to_owned(), 30)].into(),
            base_params: Default::default(),
            elo0: 0.0,
            elo1: 15.0,
            alpha: 0.05,
            beta: 0.05,
            model: pb::EloModel::Normalized.into(),
            max_games: 400,
            engines: None,
        }),
        "spsa" => pb::run_spec::Kind::Spsa(pb::SpsaSpec {
            params: vec![
                pb::SpsaParam {
                    name: "chariot_value".to_owned(),
                    start: 850.0,
                    min: 700.0,
                    max: 1000.0,
                    c_end: 20.0,
                    r_end: 0.002,
                    is_float: false,
                },
                pb::SpsaParam {
                    name: "horse_value".to_owned(),
                    start: 420.0,
                    min: 300.0,
                    max: 500.0,
                    c_end: 15.0,
                    r_end: 0.002,
                    is_float: false,
                },
            ],
            games: 240,
            ..Default::default()
        }),
        _ => pb::run_spec::Kind::Variants(pb::VariantsSpec {
            rules: vec!["standard".to_owned(), "standard+conversion".to_owned()],
            params: Default::default(),
            pairs: 60,
        }),
    };
    pb::RunSpec {
        keep_games: Default::default(),
        name: format!("soak {kind}"),
        priority: 0,
        batch_pairs: 4,
        settings: Some(settings(seed)),
        kind: Some(kind_spec),
        // Every kind that can exclude flagged workers does, so exclusions
        // (and their recounts) happen under the faults whenever a worker is
        // flagged; SPSA cannot.
        workers: Some(pb::WorkerPolicy {
            exclude_flagged: kind != "spsa",
            ..Default::default()
        }),
    }
}

/// State and counted pairs per run id.
fn pairs_by_run(db: &std::path::Path) -> BTreeMap<u64, (String, u64)> {
    let report = invariants::check(db);
    report
        .runs
        .into_iter()
        .map(|r| (r.id, (r.state, r.pairs)))
        .collect()
}

fn accepted(slot: &Slot) -> BTreeSet<u64> {
    slot.logs
        .iter()
        .flat_map(|p| invariants::accepted_in_log(&std::fs::read_to_string(p).unwrap_or_default()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "the chaos soak: XQ_SOAK_SECS (default 600) of real processes and faults"]
async fn chaos_soak_loses_and_doubles_nothing() {
    let secs = env_u64("XQ_SOAK_SECS", 600);
    let seed = env_u64("XQ_SOAK_SEED", 19);
    let workers = env_u64("XQ_SOAK_WORKERS", 8) as usize;
    let dir = TempDir::new("soak");
    let db = dir.join("xq.db");
    let admin_token = token_add(&db, "personal", "ops");
    let worker_token = token_add(&db, "worker", "hosts");
    let mut soak = Soak {
        dir,
        admin: admin_token,
        worker_token,
        coordinator: None,
        coordinator_stopped: false,
        coordinator_starts: 0,
        port: 0,
        slots: (0..workers)
            .map(|i| Slot {
                name: format!("w{i}"),
                process: None,
                stopped: false,
                logs: Vec::new(),
            })
            .collect(),
        proxies: Vec::new(),
        undo: Vec::new(),
        faults: BTreeMap::new(),
        rng: ChaCha8Rng::seed_from_u64(seed),
        runs_made: BTreeMap::new(),
    };
    soak.start_coordinator();
    for _ in 0..workers {
        soak.proxies
            .push(ChaosProxy::start(soak.port).await.expect("proxy"));
    }
    for i in 0..workers {
        soak.start_worker(i);
    }
    let mut admin = run_client(&soak.url(), Some(&soak.admin));
    let started = Instant::now();
    let end = started + Duration::from_secs(secs);
    let mut next_fault = started + soak.secs(1.0, 3.0);
    let mut next_runs = started;
    println!(
        "soak: {secs} s, {workers} workers, seed {seed}, lease {LEASE_SECS} s, db {}",
        soak.db().display()
    );
    while Instant::now() < end {
        soak.undo_due(false);
        let now = Instant::now();
        if now >= next_fault {
            soak.inject();
            next_fault = now + soak.secs(0.3, 3.0);
        }
        if now >= next_runs {
            soak.keep_runs(&mut admin).await;
            next_runs = Instant::now() + Duration::from_secs(2);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Heal everything, but leave partitioned connections as they are: a
    // worker stuck on one is a failure to find.
    soak.undo_due(true);
    for i in 0..workers {
        if soak.slots[i].process.is_none() {
            soak.start_worker(i);
        }
        soak.proxies[i].set(Fault::None);
    }
    if soak.coordinator.is_none() {
        soak.start_coordinator();
    }
    println!(
        "soak: faults over after {:.0} s; settling for {SETTLE:?}",
        started.elapsed().as_secs_f64()
    );
    // Runs created from here on have a whole settle window to progress.
    soak.keep_runs(&mut admin).await;
    let before = pairs_by_run(&soak.db());
    let accepted_before: Vec<usize> = soak.slots.iter().map(|s| accepted(s).len()).collect();
    let mut overdue = BTreeSet::new();
    let settle_end = Instant::now() + SETTLE;
    while Instant::now() < settle_end {
        tokio::time::sleep(Duration::from_secs(2)).await;
        soak.keep_runs(&mut admin).await;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        if let Ok(ids) = invariants::overdue_active(&soak.db(), now_ms, 2000) {
            overdue.extend(ids);
        }
    }
    let after = pairs_by_run(&soak.db());
    let accepted_after: Vec<usize> = soak.slots.iter().map(|s| accepted(s).len()).collect();

    // Stop the cluster gracefully and check the file.
    for slot in &mut soak.slots {
        if let Some(mut p) = slot.process.take() {
            p.interrupt();
        }
    }
    if let Some(mut c) = soak.coordinator.take() {
        c.interrupt();
    }
    let report = invariants::check(&soak.db());
    let mut violations = report.violations.clone();
    if !overdue.is_empty() {
        violations.push(format!(
            "leases active past their deadline while the cluster ran: {overdue:?}"
        ));
    }
    let mut acknowledged = BTreeSet::new();
    for slot in &soak.slots {
        acknowledged.extend(accepted(slot));
    }
    let mut lost_results = 0;
    match invariants::lost_acknowledged(&soak.db(), &acknowledged) {
        Ok(lost) if lost.is_empty() => {}
        Ok(lost) => {
            lost_results = lost.len();
            violations.push(format!(
                "results acknowledged as accepted but not counted: leases {lost:?}"
            ));
        }
        Err(e) => violations.push(format!("cannot check acknowledged results: {e}")),
    }
    for (i, slot) in soak.slots.iter().enumerate() {
        if accepted_after[i] <= accepted_before[i] {
            violations.push(format!(
                "worker {} had no result accepted in the {SETTLE:?} after the faults (stuck?); its last log: {}",
                slot.name,
                slot.logs.last().map_or(String::new(), |p| p.display().to_string())
            ));
        }
    }
    // Runs made during the settle (a run before them finished) may not have
    // had their turn yet; the others had the whole window.
    for (id, (state, pairs)) in &after {
        let Some((_, was)) = before.get(id) else {
            continue;
        };
        if state == "active" && pairs <= was {
            violations.push(format!(
                "run {id} is active but counted nothing while the cluster settled ({was} pairs)"
            ));
        }
    }

    println!("soak: faults injected by kind:");
    for (kind, n) in &soak.faults {
        println!("  {kind:<22} {n}");
    }
    println!("  {:<22} {}", "total", soak.faults.values().sum::<u64>());
    let by_kind = |k: &str| report.runs.iter().filter(|r| r.kind == k).count();
    println!(
        "soak: {} games counted in {} runs ({} sprt, {} spsa, {} variants), {} finished; {} results acknowledged to workers, coordinator started {} times",
        report.games,
        report.runs.len(),
        by_kind("sprt"),
        by_kind("spsa"),
        by_kind("variants"),
        report.finished(),
        acknowledged.len(),
        soak.coordinator_starts
    );
    println!(
        "soak: results lost: {lost_results} acknowledged results not counted, {} pairs of finished runs never counted; results doubled: {}",
        report.lost_pairs, report.doubled
    );
    println!(
        "soak: exclusions: {} results set aside (kept, not counted) of flagged workers",
        report.excluded_leases
    );
    println!("soak: archive: {}", report.archive);
    println!("soak: {} invariant violations", violations.len());
    for v in &violations {
        println!("  VIOLATION: {v}");
    }
    if !violations.is_empty() {
        // Keep the evidence.
        let keep = std::env::temp_dir().join(format!("xq-soak-failed-{}", std::process::id()));
        let _ = std::fs::rename(&soak.dir.0, &keep);
        println!("soak: database and logs kept in {}", keep.display());
    }
    assert!(
        violations.is_empty(),
        "{} invariant violations",
        violations.len()
    );
    assert!(report.games > 0, "no games were counted");
}
