//! Upgrades: a database made by every earlier schema version opens with the
//! current coordinator, migrates, and reads back the same runs.
//!
//! A database "made by version K" lived through versions 1 to K: migration
//! 1, then the frozen data file `fixtures/schema/v1.sql` (what a coordinator
//! at that version wrote, in its stored JSON format of the time), migration
//! 2, `v2.sql`, and so on up to `vK.sql`.
//!
//! The current coordinator reads the upgraded file with the store's own
//! row-level functions, which are private to the crate: hence a unit test
//! beside them (it was `coordinator/tests/schema_upgrade.rs`). The data
//! files stay in `coordinator/tests/fixtures/schema`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use xq_proto::Arch;
use xq_proto::capacity::{GameNeeds, SpeedMethod};

use crate::access::{Role, UserRole, passwords};
use crate::runs::{KindSpec, Progress, RunState, RunStatus, SpeedRule, VariantTotals};
use crate::stats::sprt::SprtState;
use crate::store::migrations::{self, MIGRATIONS};
use crate::store::{
    Store, activity, assets, backup, blobs, build_failures, engines, leases, runs, speeds, tokens,
    users, worker_releases, worker_versions, workers,
};

/// A time after every fixture's lease deadline but lease 4's.
const NOW: i64 = 1_800_000_000_000;

/// The version that builds engines from a commit: workers' tools and failed
/// builds (migration 21, issue 32).
const BUILD_FROM_SOURCE: usize = 21;

/// The version that checks worker versions: targets, self-updates and
/// worker releases (migration 22, issue 33).
const SELF_UPDATE: usize = 22;

/// The version that stores threads per engine and workers' speeds with a
/// run's base engine (migration 23, issue 33).
const SPEED_BY_ENGINE: usize = 23;

/// The version that keeps each run's pairs in flight in its row (migration
/// 24, issue 34).
const IN_FLIGHT_KEPT: usize = 24;

/// The version that admits datagen runs (migration 25, issue 36).
const DATAGEN: usize = 25;

/// The version whose runs keep their kind's progress in one JSON value,
/// written and read by the kind (migration 26, issue 48).
const PROGRESS: usize = 26;

/// The version whose events' kind is plain text, where a worker release is
/// its own kind (migration 27, issue 48).
const EVENT_KINDS: usize = 27;

/// The version whose engines may be signed by a fixed search (migration 28,
/// issue 50).
const SEARCH_SIGNATURE: usize = 28;

/// The versions that keep a worker's machine id, the time a blob's upload
/// began, and the builds a result's players played (migrations 29 to 31,
/// issue 50).
const MACHINE_ID: usize = 29;
const BLOB_STORED_MS: usize = 30;
const RESULT_BUILDS: usize = 31;

fn fixture(version: usize) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schema")
        .join(format!("v{version}.sql"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; every schema version needs its data file",
            path.display()
        )
    })
}

struct TempFile(PathBuf);

impl TempFile {
    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.remove();
    }
}

/// A database file that schema versions 1 to `version` wrote in turn, as
/// such a coordinator left it (WAL mode, foreign keys on while it wrote).
fn made_by(version: usize) -> TempFile {
    let path =
        std::env::temp_dir().join(format!("xq-upgrade-{}-v{version}.db", std::process::id()));
    let file = TempFile(path);
    file.remove();
    let mut conn = Connection::open(&file.0).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    for (i, sql) in MIGRATIONS[..version].iter().enumerate() {
        let v = i + 1;
        // As `migrations::migrate` does: foreign keys off for the migration
        // (a table rebuild needs that), on while the coordinator writes.
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(sql).unwrap();
        tx.pragma_update(None, "user_version", v as i64).unwrap();
        tx.commit().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(&fixture(v))
            .unwrap_or_else(|e| panic!("v{v}.sql at schema version {v}: {e}"));
        tx.commit().unwrap();
    }
    assert!(!dangling(&conn));
    file
}

/// The store's reading of every run, its SPSA history and every lease.
struct ReadBack {
    runs: Vec<RunStatus>,
    spsa_history: Vec<(u64, Vec<f64>)>,
    leases: Vec<crate::runs::Lease>,
}

fn read_back(path: &Path) -> ReadBack {
    let store = Store::open(path).expect("the current coordinator opens and migrates it");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(store.call(|conn| {
        let runs = runs::list(conn)?;
        let spsa_history = runs::spsa_history(conn, 2)?
            .into_iter()
            .map(|r| (r.iter, r.theta))
            .collect();
        let ids: Vec<i64> = {
            let mut stmt = conn.prepare("SELECT id FROM leases ORDER BY id")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        let leases = ids
            .into_iter()
            .map(|id| Ok(leases::load(conn, id as u64)?.expect("lease")))
            .collect::<Result<_, crate::store::StoreError>>()?;
        Ok(ReadBack {
            runs,
            spsa_history,
            leases,
        })
    }))
    .unwrap()
}

fn run(back: &ReadBack, id: u64) -> &RunStatus {
    back.runs.iter().find(|r| r.id == id).expect("run")
}

/// The runs of the version-1 data, as the fixture describes them.
fn check_version_1_runs(back: &ReadBack) {
    let sprt = run(back, 1);
    assert_eq!(sprt.state, RunState::Finished);
    assert!(matches!(sprt.spec.kind, KindSpec::Sprt(_)));
    assert!(
        sprt.spec.settings.draw_contempt,
        "absent draw_contempt is on"
    );
    assert_eq!(sprt.totals.pairs, 4);
    assert_eq!(sprt.totals.pentanomial.0, [1, 0, 1, 1, 1]);
    assert_eq!(
        (
            sprt.totals.wdl.wins,
            sprt.totals.wdl.draws,
            sprt.totals.wdl.losses
        ),
        (4, 1, 3)
    );
    assert_eq!(sprt.totals.reasons.values().sum::<u64>(), 8);
    let outcome = sprt.progress.sprt().expect("sprt outcome");
    assert_eq!(outcome.state, SprtState::Continue);
    assert_eq!(outcome.llr, 0.012516499155219102, "the LLR to the last bit");
    assert!((outcome.upper_bound - (0.95f64 / 0.05).ln()).abs() < 1e-12);

    let spsa = run(back, 2);
    assert_eq!((spsa.state, spsa.spec.priority), (RunState::Active, 3));
    let state = spsa.progress.spsa().expect("spsa state");
    assert_eq!((state.iter, state.iterations), (4, 8));
    assert_eq!(state.theta(), vec![299.6049121229258, 299.3415202048763]);
    assert_eq!(
        state.params.iter().map(|p| (p.c, p.a)).collect::<Vec<_>>(),
        [
            (18.50560754714245, 2.083056719093878),
            (30.842679245237413, 5.7862686641496595)
        ],
        "the gain schedule to the last bit"
    );
    assert_eq!(spsa.pairs_in_flight, 4, "lease 4 is active at NOW");
    assert_eq!(
        back.spsa_history,
        vec![(4, vec![299.6049121229258, 299.3415202048763])],
        "θ history as applied"
    );

    let games = run(back, 3);
    assert_eq!(games.target_pairs, Some(6));
    assert_eq!(
        games.progress,
        Progress::Totals,
        "a games run keeps only totals"
    );
    assert_eq!(
        games.totals.reasons,
        BTreeMap::from([("move_limit".to_owned(), 3), ("time_forfeit".to_owned(), 1)])
    );
    assert_eq!(games.pairs_in_flight, 0);
}

fn check_later_runs(back: &ReadBack, version: usize) {
    let ids: Vec<u64> = back.runs.iter().map(|r| r.id).collect();
    let expected: &[u64] = match version {
        1 => &[3, 2, 1],
        2 => &[4, 3, 2, 1],
        3 => &[5, 4, 3, 2, 1],
        4 => &[6, 5, 4, 3, 2, 1],
        5 => &[7, 6, 5, 4, 3, 2, 1],
        6..=10 => &[9, 8, 7, 6, 5, 4, 3, 2, 1],
        11..=14 => &[10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        15..=17 => &[40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        18..=19 => &[41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        v if v < BUILD_FROM_SOURCE => &[42, 41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        v if v < SPEED_BY_ENGINE => &[43, 42, 41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        v if v < IN_FLIGHT_KEPT => &[44, 43, 42, 41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        v if v < DATAGEN => &[45, 44, 43, 42, 41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        v if v < PROGRESS => &[46, 45, 44, 43, 42, 41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        _ => &[
            47, 46, 45, 44, 43, 42, 41, 40, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
        ],
    };
    assert_eq!(ids, expected, "runs of a version-{version} database");
    if version >= 2 {
        let stopped = run(back, 4);
        assert_eq!(stopped.state, RunState::Stopped);
        assert!(!stopped.spec.settings.draw_contempt);
        assert_eq!(stopped.totals.wdl.wins, 2);
    }
    if version >= 3 {
        let external = run(back, 5);
        assert!(
            external
                .flag
                .as_deref()
                .is_some_and(|f| f.contains("555443"))
        );
        let KindSpec::Sprt(s) = &external.spec.kind else {
            panic!("run 5 is an SPRT");
        };
        let dev = s.lineup.dev.as_ref().expect("dev engine");
        assert_eq!(
            dev.registered.as_ref().and_then(|e| e.signature),
            Some(xq_proto::Signature::Bench(555444))
        );
        assert_eq!(external.target_pairs, None);
    }
    if version >= 5 {
        let games = run(back, 7);
        assert_eq!((games.spec.priority, games.pairs_in_flight), (2, 3));
        assert_eq!(
            games.spec.settings.rules.name().as_deref(),
            Some("standard+conversion")
        );
    }
    if version >= 6 {
        assert_eq!(
            run(back, 8).linked,
            Some(9),
            "the SPRT names the tune it verifies"
        );
        assert_eq!(
            run(back, 9).linked,
            Some(8),
            "the tune names its verification"
        );
    }
    if version >= 11 {
        let timed = run(back, 10);
        assert!(timed.spec.workers.exclude_flagged);
        assert_eq!(
            timed.spec.workers.speed,
            Some(SpeedRule::Scale {
                reference_nps: 1_000_000
            })
        );
        assert_eq!(timed.totals.pairs, 2, "the excluded result is not counted");
    }
    if version < 11 {
        assert!(
            back.runs.iter().all(|r| r.spec.workers.is_default()),
            "runs from before worker policies ask nothing of their workers"
        );
    }
    // Runs from before shares have the normal share.
    assert!(
        back.runs
            .iter()
            .filter(|r| r.id != 41)
            .all(|r| r.share == 100),
        "shares of a version-{version} database"
    );
    if version >= 18 {
        let raised = run(back, 41);
        assert_eq!(
            (raised.spec.priority, raised.share, raised.target_pairs),
            (3, 250, Some(6))
        );
        assert_eq!(raised.spec.kind.target_pairs(), raised.target_pairs);
    }
    if version >= 20 {
        let arm = run(back, 42);
        assert_eq!(arm.spec.workers.require_flags.to_string(), "neon,dotprod");
        let KindSpec::Games(g) = &arm.spec.kind else {
            panic!("run 42 is a games run");
        };
        let engine = g.lineup.dev.as_ref().and_then(|d| d.registered.as_ref());
        let builds: Vec<Arch> =
            engine.map_or(Vec::new(), |e| e.binaries.iter().map(|b| b.arch).collect());
        assert_eq!(builds, [Arch::Armv8Dotprod]);
    }
    assert!(
        back.runs
            .iter()
            .filter(|r| r.id != 42 && r.id != 43)
            .all(|r| r.spec.workers.require_flags.is_empty()),
        "runs from before required flags require none"
    );
    assert!(
        back.runs
            .iter()
            .filter(|r| r.id != 44 && r.id != 45)
            .all(|r| r.spec.settings.threads == 1),
        "runs from before threads per engine search on one"
    );
    if version >= BUILD_FROM_SOURCE {
        let built = run(back, 43);
        assert_eq!(built.state, RunState::Stopped);
        assert!(
            built
                .flag
                .as_deref()
                .is_some_and(|f| f.contains("failed on 1 worker")),
            "{:?}",
            built.flag
        );
        let KindSpec::Games(g) = &built.spec.kind else {
            panic!("run 43 is a games run");
        };
        let dev = g.lineup.dev.as_ref().expect("dev engine");
        let source = dev.source().expect("built from source");
        assert!(source.is_resolved() && source.git_ref.as_deref() == Some("main"));
        assert_eq!(
            dev.registered.as_ref().and_then(|e| e.signature),
            Some(xq_proto::Signature::Bench(1914342))
        );
        assert!(g.lineup.engines().is_empty(), "no registry name");
    }
    if version >= DATAGEN {
        let datagen = run(back, 46);
        assert!(matches!(&datagen.spec.kind, KindSpec::Datagen(d) if d.engine.is_none()));
        let totals = datagen.progress.datagen().expect("datagen totals");
        assert_eq!((totals.stats.red_wins, totals.stats.black_wins), (3, 1));
        assert_eq!(totals.total_plies, datagen.totals.total_plies);
        assert_eq!((totals.pairs, totals.stats.captured), (2, [2, 4, 6, 3]));
        assert_eq!(
            totals.reasons,
            BTreeMap::from([("adjudication".to_owned(), 2), ("checkmate".to_owned(), 2)])
        );
        assert_eq!(datagen.progress.variants().len(), 1);
    }
    if version >= PROGRESS {
        let h0 = run(back, 47);
        let outcome = h0.progress.sprt().expect("the stored test");
        assert_eq!(
            (outcome.llr, outcome.state),
            (-2.9561928166375445, SprtState::AcceptedH0)
        );
        assert!((outcome.lower_bound - (0.05f64 / 0.95).ln()).abs() < 1e-12);
    }
    // Each run's progress is of its kind (by name: a new kind, with no run
    // in these files, needs no arm here).
    for r in &back.runs {
        let of_its_kind = match r.spec.kind.kind().as_str() {
            "sprt" => matches!(r.progress, Progress::Sprt(_)),
            "spsa" => matches!(r.progress, Progress::Spsa(_)),
            "games" => r.progress == Progress::Totals,
            "variants" => matches!(r.progress, Progress::Variants(_)),
            "datagen" => matches!(r.progress, Progress::Datagen(_)),
            other => panic!("run {}: no check for kind {other}", r.id),
        };
        // Version 6's tune 9 was stored without its state, as before.
        let stateless_tune = r.id == 9 && r.progress == Progress::Totals;
        assert!(
            of_its_kind || stateless_tune,
            "run {}: {:?}",
            r.id,
            r.progress
        );
    }
    if version >= 4 {
        let variants = run(back, 6);
        assert_eq!(variants.progress.variants().len(), 2);
        assert_eq!(
            variants.progress.variants()[0].stats.captured,
            [1, 3, 12, 2]
        );
        assert_eq!(
            variants.progress.variants()[1].stats.converted,
            [0, 0, 2, 0]
        );
        assert_eq!(
            variants.progress.variants()[1].rules.name().as_deref(),
            Some("standard+conversion")
        );
        assert_eq!(variants.progress.variants()[1].total_plies, 189);
        assert_eq!(
            variants
                .progress
                .variants()
                .iter()
                .map(|v| v.pairs)
                .sum::<u64>(),
            variants.totals.pairs
        );
    }
}

/// A run's kind-specific values as a database from before version 26
/// keeps them: in columns of `runs` and rows of `variant_totals`.
struct OldProgress {
    id: u64,
    sprt: Option<(f64, String)>,
    spsa_state: Option<String>,
    /// `variant_totals` rows by variant (a datagen run's "variant 0").
    variants: BTreeMap<usize, String>,
}

/// Every run's [`OldProgress`] in the database at `path` (version < 26).
fn old_progress(path: &Path, version: usize) -> Vec<OldProgress> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, sprt_llr, sprt_state, spsa_state FROM runs ORDER BY id")
        .unwrap();
    let mut runs: Vec<OldProgress> = stmt
        .query_map([], |r| {
            let llr: Option<f64> = r.get(1)?;
            let state: Option<String> = r.get(2)?;
            Ok(OldProgress {
                id: r.get::<_, i64>(0)? as u64,
                sprt: llr.zip(state),
                spsa_state: r.get(3)?,
                variants: BTreeMap::new(),
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    if version >= 4 {
        let mut rows = conn
            .prepare("SELECT run_id, variant, totals FROM variant_totals")
            .unwrap();
        let rows: Vec<(i64, i64, String)> = rows
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (run, variant, totals) in rows {
            let old = runs.iter_mut().find(|o| o.id == run as u64).unwrap();
            old.variants.insert(variant as usize, totals);
        }
    }
    runs
}

/// Each run reads back, after the upgrade, the very values its kind kept
/// before it: the SPRT's LLR (to the last bit) and state, the tune's state,
/// every variant's totals (the others zero under their rule set), a
/// datagen run's totals; a games run keeps none.
fn check_progress_kept(old: &[OldProgress], back: &ReadBack, version: usize) {
    assert_eq!(old.len(), back.runs.len());
    for o in old {
        let r = run(back, o.id);
        let what = format!("progress of run {} from a version-{version} database", o.id);
        let totals = |json: &str| serde_json::from_str::<VariantTotals>(json).unwrap();
        match r.spec.kind.kind().as_str() {
            "sprt" => {
                let read = r
                    .progress
                    .sprt()
                    .map(|s| (s.llr, s.state.as_str().to_owned()));
                assert_eq!(read, o.sprt, "{what}");
            }
            "spsa" => {
                let stored = o
                    .spsa_state
                    .as_deref()
                    .map(|s| serde_json::from_str(s).unwrap());
                assert_eq!(r.progress.spsa(), stored.as_ref(), "{what}");
            }
            "games" => assert_eq!(r.progress, Progress::Totals, "{what}"),
            "variants" => {
                let expected: Vec<VariantTotals> = (r.spec.kind.ops().variants().iter())
                    .enumerate()
                    .map(|(i, rules)| match o.variants.get(&i) {
                        Some(json) => totals(json),
                        None => VariantTotals {
                            rules: *rules,
                            ..Default::default()
                        },
                    })
                    .collect();
                assert_eq!(r.progress.variants(), expected, "{what}");
            }
            "datagen" => {
                let expected = o.variants.get(&0).map(|json| totals(json));
                assert_eq!(r.progress.datagen(), expected.as_ref(), "{what}");
            }
            other => panic!("{what}: no check for kind {other}"),
        }
        if r.progress.sprt().is_none() {
            assert_eq!(o.sprt, None, "{what}: an LLR that was not read back");
        }
    }
    let kinds: BTreeSet<&str> = back
        .runs
        .iter()
        .map(|r| r.spec.kind.kind().as_str())
        .collect();
    let expected: &[&str] = match version {
        ..4 => &["games", "sprt", "spsa"],
        4..DATAGEN => &["games", "sprt", "spsa", "variants"],
        _ => &["datagen", "games", "sprt", "spsa", "variants"],
    };
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn every_schema_version_has_a_data_file() {
    for version in 1..=MIGRATIONS.len() {
        fixture(version);
    }
}

#[test]
fn a_database_from_every_earlier_version_upgrades_and_reads_back_the_same_runs() {
    let current = made_by(MIGRATIONS.len());
    let latest = read_back(&current.0);
    check_version_1_runs(&latest);
    check_later_runs(&latest, MIGRATIONS.len());
    check_worker_health(&current.0);
    let fresh_schema = migrations::schema_at(MIGRATIONS.len()).unwrap();
    for version in 1..MIGRATIONS.len() {
        let db = made_by(version);
        let old = (version < PROGRESS).then(|| old_progress(&db.0, version));
        let back = read_back(&db.0);
        if let Some(old) = old {
            check_progress_kept(&old, &back, version);
        }
        check_version_1_runs(&back);
        check_later_runs(&back, version);
        // Whatever it held reads back exactly as the same data written at
        // the current version.
        for r in &back.runs {
            assert_eq!(
                r,
                run(&latest, r.id),
                "run {} from a version-{version} database",
                r.id
            );
        }
        for l in &back.leases {
            let now = latest.leases.iter().find(|x| x.id == l.id).expect("lease");
            assert_eq!(l, now, "lease {} from a version-{version} database", l.id);
        }
        assert_eq!(back.spsa_history, latest.spsa_history);
        // The upgraded file is sound and has exactly the current schema.
        let info = backup::inspect(&db.0).unwrap();
        assert_eq!(info.version, MIGRATIONS.len());
        let conn = Connection::open(&db.0).unwrap();
        assert_eq!(
            migrations::schema(&conn).unwrap(),
            fresh_schema,
            "schema after upgrading from {version}"
        );
        assert!(
            !dangling(&conn),
            "foreign keys after upgrading from {version}"
        );
        check_registry(&conn, version);
    }
    check_registry(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    check_users(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    check_builds(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    check_versions(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    check_speeds(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    check_in_flight(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    check_machines(&Connection::open(&current.0).unwrap(), MIGRATIONS.len());
    for version in 1..MIGRATIONS.len() {
        let db = made_by(version);
        read_back(&db.0);
        check_users(&Connection::open(&db.0).unwrap(), version);
        check_builds(&Connection::open(&db.0).unwrap(), version);
        check_versions(&Connection::open(&db.0).unwrap(), version);
        check_speeds(&Connection::open(&db.0).unwrap(), version);
        check_in_flight(&Connection::open(&db.0).unwrap(), version);
        check_machines(&Connection::open(&db.0).unwrap(), version);
    }
}

/// Version 29's worker 50 is found again by its machine id and token;
/// version 30's unregistered blob is one to collect (every blob stored before
/// is stamped by the migration, so none of them is, at the fixtures' time);
/// version 31's lease 30 keeps the builds its players played.
fn check_machines(conn: &Connection, version: usize) {
    let again = workers::NewWorker {
        name: "rack-7".to_owned(),
        threads: 8,
        version: "0.2.0".to_owned(),
        signature: 1,
        bench_nps: None,
        token_key: Some(1),
        machine: None,
        tools: BTreeSet::new(),
        target: String::new(),
        updated_from: None,
        machine_id: Some("0123456789abcdef0123456789abcdef".to_owned()),
    };
    let registered = workers::register(conn, &again, NOW).unwrap();
    if version >= MACHINE_ID {
        assert_eq!(
            registered,
            workers::Registered::Again {
                id: 50,
                released: 0
            }
        );
    } else {
        assert!(
            matches!(registered, workers::Registered::New(_)),
            "{registered:?}"
        );
    }
    let collectable: Vec<String> = blobs::unreferenced(conn, 1_700_050_000_000)
        .unwrap()
        .into_iter()
        .map(|(sha, _)| sha)
        .collect();
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    if version >= BLOB_STORED_MS {
        assert_eq!(collectable, [empty], "after upgrading from {version}");
    } else {
        assert!(
            collectable.is_empty(),
            "after upgrading from {version}: {collectable:?}"
        );
    }
    let builds = crate::store::lease_results::lease_builds(conn, 30).unwrap();
    if version >= RESULT_BUILDS {
        assert_eq!(builds, [Some("x86-64-avx2".to_owned()), None]);
    } else {
        assert_eq!(builds, [None, None]);
    }
}

/// Every run's `pairs_in_flight` is the pairs of its active leases, whether
/// the upgrade computed it or the triggers kept it (run 45 of version 24:
/// one lease active, one handed back).
fn check_in_flight(conn: &Connection, version: usize) {
    let mut q = conn
        .prepare(
            "SELECT id, pairs_in_flight,
                    (SELECT COALESCE(SUM(pairs), 0) FROM leases l
                     WHERE l.run_id = runs.id AND l.state = 'active')
             FROM runs ORDER BY id",
        )
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!rows.is_empty());
    for (id, kept, summed) in &rows {
        assert_eq!(kept, summed, "run {id} of a version-{version} database");
    }
    let run_45 = rows.iter().find(|r| r.0 == 45);
    if version >= IN_FLIGHT_KEPT {
        assert_eq!(run_45.map(|r| r.1), Some(2));
        assert_eq!(runs::load(conn, 45).unwrap().pairs_in_flight, 2);
    } else {
        assert!(run_45.is_none());
    }
}

/// Every earlier token and run belongs to the user `admin` the upgrade made
/// (trusted, no password); version 13's developer keeps their hash.
fn check_users(conn: &Connection, version: usize) {
    let users = users::list(conn).unwrap();
    let admin = users
        .iter()
        .find(|u| u.name == users::DEFAULT_ADMIN)
        .expect("admin");
    assert_eq!(
        (admin.role, admin.trusted, admin.has_password),
        (UserRole::Admin, true, false)
    );
    let all_tokens = tokens::list(conn).unwrap();
    let owners: Vec<Option<String>> = all_tokens
        .iter()
        .filter(|t| !t.name.starts_with("dev1-"))
        .map(|t| t.user.clone())
        .collect();
    // Version 16 renamed the token role `admin` to `personal`.
    let roles: Vec<(&str, Role)> = all_tokens
        .iter()
        .map(|t| (t.name.as_str(), t.role))
        .collect();
    let expected: &[(&str, Role)] = match version {
        1 => &[],
        2..=12 => &[("hosts", Role::Worker), ("ops", Role::Personal)],
        13..=15 => &[
            ("hosts", Role::Worker),
            ("ops", Role::Personal),
            ("dev1-laptop", Role::Personal),
        ],
        _ => &[
            ("hosts", Role::Worker),
            ("ops", Role::Personal),
            ("dev1-laptop", Role::Personal),
            ("dev1-login", Role::Personal),
            ("dev1-box", Role::Worker),
        ],
    };
    assert_eq!(roles, expected, "tokens of a version-{version} database");
    for t in all_tokens.iter().filter(|t| t.name.starts_with("dev1-")) {
        assert_eq!(t.user.as_deref(), Some("dev1"), "{t:?}");
    }
    assert_eq!(owners.is_empty(), version < 2, "tokens came with version 2");
    assert!(
        owners.iter().all(|o| o.as_deref() == Some("admin")),
        "{owners:?}"
    );
    let all = runs::list(conn).unwrap();
    let rejected = all.iter().find(|r| r.id == 40);
    assert_eq!(rejected.is_some(), version >= 15);
    if let Some(r) = rejected {
        assert_eq!(r.state, RunState::Rejected);
        assert_eq!(r.author.as_deref(), Some("dev1"));
        assert_eq!(
            r.rejection.as_deref(),
            Some("tempo 10 was tested last week")
        );
    }
    let authors: Vec<Option<String>> = all
        .into_iter()
        .filter(|r| r.id != 40)
        .map(|r| r.author)
        .collect();
    assert!(
        authors.iter().all(|a| a.as_deref() == Some("admin")),
        "{authors:?}"
    );
    let dev = users.iter().find(|u| u.name == "dev1");
    assert_eq!(dev.is_some(), version >= 13);
    if let Some(dev) = dev {
        assert_eq!(
            (dev.role, dev.trusted, dev.has_password),
            (UserRole::Developer, false, true)
        );
        let stored = users::password_hash(conn, "dev1").unwrap().unwrap();
        assert!(passwords::verify("fixture-password", &stored).unwrap());
    }
    // Version 17's sessions: the live one signs dev1 in, the ended one nobody.
    // (Plain SQL: sessions are the accounts service's, private to the core.)
    let session = |byte: u8, at: i64| -> Option<String> {
        conn.query_row(
            "SELECT u.name FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.hash = ?1 AND s.expires_ms > ?2",
            rusqlite::params![&[byte; 32][..], at],
            |r| r.get(0),
        )
        .optional()
        .unwrap()
    };
    let signed_in = session(0x19, 1_700_010_000_000);
    assert_eq!(signed_in.as_deref(), (version >= 17).then_some("dev1"));
    assert_eq!(session(0x18, 1_700_010_000_000), None);
}

/// The executable of version 3 reads back from its chunks and stays the
/// engine's untagged one; version 20's build is listed with it; the asset of
/// version 10 is listed; version 20's worker has its machine; every engine
/// and asset has its owner (`admin` for those from before owners).
fn check_registry(conn: &Connection, version: usize) {
    let engine = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    let pikafish = engines::get(conn, "pikafish").unwrap();
    assert_eq!(pikafish.is_some(), version >= 3);
    if let Some(p) = pikafish {
        assert_eq!((p.sha256.as_str(), p.size), (engine, 8));
        assert_eq!(p.signature, Some(xq_proto::Signature::Bench(555444)));
        let builds: Vec<(Arch, u64)> = p.binaries.iter().map(|b| (b.arch, b.size)).collect();
        let expected: &[(Arch, u64)] = if version >= 20 {
            &[(Arch::Armv8Dotprod, 9)]
        } else {
            &[]
        };
        assert_eq!(builds, expected, "builds of a version-{version} database");
    }
    let eleeye = engines::get(conn, "eleeye").unwrap();
    assert_eq!(eleeye.is_some(), version >= SEARCH_SIGNATURE);
    if let Some(e) = eleeye {
        assert_eq!(
            e.signature,
            Some(xq_proto::Signature::Search {
                depth: 5,
                nodes: 106_064
            })
        );
    }
    let machines: Vec<(u64, String)> = activity::workers(conn, NOW)
        .unwrap()
        .into_iter()
        .filter_map(|w| Some((w.id, w.machine?.best_arch()?.name().to_owned())))
        .collect();
    let expected: &[(u64, &str)] = match version {
        v if v >= SPEED_BY_ENGINE => &[(10, "x86-64-bmi2"), (6, "armv8-dotprod")],
        v if v >= 20 => &[(6, "armv8-dotprod")],
        _ => &[],
    };
    let expected: Vec<(u64, String)> = expected
        .iter()
        .map(|(i, a)| (*i, (*a).to_owned()))
        .collect();
    assert_eq!(
        machines, expected,
        "machines of a version-{version} database"
    );
    let mut bytes = Vec::new();
    let found = blobs::write_to(conn, engine, &mut bytes).unwrap();
    assert_eq!(
        found,
        version >= 3,
        "engine blob of a version-{version} database"
    );
    if found {
        assert_eq!(bytes, [0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]);
    }
    let owned: Vec<(String, Option<String>)> = assets::list(conn)
        .unwrap()
        .into_iter()
        .map(|a| (a.name, a.owner))
        .collect();
    let owner = |name: &str, user: &str| (name.to_owned(), Some(user.to_owned()));
    let expected = match version {
        ..=9 => vec![],
        10..=18 => vec![owner("book.epd", "admin")],
        _ => vec![owner("book.epd", "admin"), owner("dev1.nnue", "dev1")],
    };
    assert_eq!(owned, expected, "assets of a version-{version} database");
    if version >= 10 {
        assert_eq!(assets::check_book(conn, "book.epd").unwrap(), 1);
    }
    let owned: Vec<(String, Option<String>)> = engines::list(conn)
        .unwrap()
        .into_iter()
        .map(|e| (e.engine.name, e.owner))
        .collect();
    let expected = match version {
        ..=2 => vec![],
        3..=18 => vec![owner("pikafish", "admin")],
        19..SEARCH_SIGNATURE => vec![owner("dev1-engine", "dev1"), owner("pikafish", "admin")],
        _ => vec![
            owner("dev1-engine", "dev1"),
            owner("eleeye", "admin"),
            owner("pikafish", "admin"),
        ],
    };
    assert_eq!(owned, expected, "engines of a version-{version} database");
    // Version 19's upload cut off by a crash: stored, pending, seen by no
    // reader, charged to dev1 until the server's start deletes it.
    let cut = "3cc23d0d326e66af579077461b7791674c9d605ad811a31f12b49756152d5d6c";
    assert_eq!(blobs::size(conn, cut).unwrap(), None);
    let pending = blobs::pending(conn).unwrap();
    assert_eq!(pending.len(), usize::from(version >= 19));
    if version >= 19 {
        assert_eq!(pending, [cut]);
        assert_eq!(blobs::uploaded_bytes(conn, 20).unwrap(), 12 + 16 + 18);
        let dev = engines::get(conn, "dev1-engine")
            .unwrap()
            .expect("dev1's engine");
        assert_eq!(dev.asset_options().count(), 1);
        assert_eq!(
            engines::variants(conn, "dev1-engine").unwrap(),
            Some(Some(vec!["xiangqi".to_owned()]))
        );
    }
}

/// Whether `foreign_key_check` finds a dangling reference.
fn dangling(conn: &Connection) -> bool {
    conn.prepare("PRAGMA foreign_key_check")
        .unwrap()
        .exists([])
        .unwrap()
}

/// The per-worker health of the fixture's run 10: worker 4 counted, worker 5
/// excluded with its reason; runs from before per-lease results have none.
fn check_worker_health(path: &Path) {
    let conn = Connection::open(path).unwrap();
    let health = crate::store::health::for_run(&conn, 10).unwrap();
    let rows: Vec<_> = health
        .iter()
        .map(|h| (h.sums.worker_id, h.sums.pairs, h.standing.excluded()))
        .collect();
    assert_eq!(rows, [(4, 2, false), (5, 2, true)]);
    assert!(health[1].standing.flag().unwrap().contains("residual 9.12"));
    assert!(crate::store::health::for_run(&conn, 7).unwrap().is_empty());
    let nps: Option<i64> = conn
        .query_row("SELECT bench_nps FROM workers WHERE id = 4", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(nps, Some(812_000));
}

/// Workers registered before tools were reported have none; version 21's
/// worker has its own, and run 43's failed build keeps its log.
fn check_builds(conn: &Connection, version: usize) {
    let tools = |id| workers::applicant(conn, id).unwrap().tools;
    assert!(
        tools(1).is_empty(),
        "a worker from version 1 builds nothing"
    );
    if version >= 11 {
        let registered = crate::store::activity::workers(conn, 0).unwrap();
        let four = registered.iter().find(|w| w.id == 4).unwrap();
        assert_eq!(four.bench_nps, Some(812_000));
    }
    let failures = build_failures::for_run(conn, 43).unwrap();
    if version < BUILD_FROM_SOURCE {
        assert!(failures.is_empty());
        return;
    }
    assert_eq!(
        tools(7).into_iter().collect::<Vec<_>>(),
        ["g++", "git", "make"]
    );
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].worker_name, "eta");
    assert!(failures[0].failed.log_tail.contains("expected ';'"));
}

/// Workers registered before versions were checked have no target and no
/// update; version 22's release is required, its updated worker shows where
/// it came from and its refused one why its update failed.
fn check_versions(conn: &Connection, version: usize) {
    let rows = worker_versions::list(conn, 0).unwrap();
    let first = rows.iter().find(|w| w.id == 1).expect("worker 1");
    assert_eq!(first.target, "");
    let required = worker_releases::required(conn).unwrap();
    if version < SELF_UPDATE {
        assert_eq!(required, None);
        assert!(worker_releases::list(conn).unwrap().is_empty());
        assert!(
            rows.iter()
                .all(|w| w.update == worker_versions::UpdateState::UpToDate),
            "{rows:?}"
        );
        return;
    }
    assert_eq!(required.map(|v| v.to_string()).as_deref(), Some("0.2.0"));
    let release = worker_releases::for_target(conn, "x86_64-unknown-linux-gnu")
        .unwrap()
        .expect("the release");
    assert_eq!(
        (release.size, release.owner.as_deref()),
        (15, Some("admin"))
    );
    let mut bytes = Vec::new();
    assert!(blobs::write_to(conn, &release.sha256, &mut bytes).unwrap());
    assert_eq!(bytes, b"xq-worker 0.2.0");
    let state = |id: u64| {
        rows.iter()
            .find(|w| w.id == id)
            .map(|w| w.update.text())
            .expect("worker")
    };
    // Version 22 logged its release as an `engine` event; from version 27
    // on it is a `worker_release` event, and version 27's own is stored so.
    let kinds: Vec<(i64, String)> = conn
        .prepare("SELECT id, kind FROM events WHERE detail LIKE 'worker release %' ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut expected = vec![(11, "worker_release".to_owned())];
    if version >= EVENT_KINDS {
        expected.push((48, "worker_release".to_owned()));
    }
    assert_eq!(
        kinds, expected,
        "worker release events after upgrading from {version}"
    );
    assert_eq!(state(8), "updated from 0.1.0");
    assert_eq!(
        state(9),
        "update to 0.2.0 failed: no worker release for aarch64-unknown-linux-gnu"
    );
    assert_eq!(state(1), "too old (requires 0.2.0)");
}

/// Version 23's run 44 keeps its 2 search threads per engine and worker 10
/// its measured speed with pikafish, which admission reads; before it no
/// worker measured anything.
fn check_speeds(conn: &Connection, version: usize) {
    let measured = speeds::for_run(conn, 44).unwrap();
    if version < SPEED_BY_ENGINE {
        assert!(measured.is_empty());
        return;
    }
    let run = runs::load(conn, 44).unwrap();
    assert_eq!(run.spec.settings.threads, 2);
    assert_eq!(
        run.spec.settings.game_needs(),
        GameNeeds {
            cores: 2,
            memory_mib: 2 * (64 + xq_proto::capacity::ENGINE_MARGIN_MIB)
        }
    );
    let kappa = &measured[&10];
    assert_eq!(
        (kappa.engine.as_str(), kappa.nps, kappa.factor, kappa.method),
        ("pikafish", 2_500_000, 0.4, SpeedMethod::Bench)
    );
    let applicant = workers::applicant(conn, 10).unwrap();
    assert_eq!(applicant.measured.get(&44), Some(&2_500_000));
    assert_eq!(
        applicant
            .capacity()
            .games_at_once(run.spec.settings.game_needs()),
        4
    );
}
