//! Online backups of the database and their restore.
//!
//! # Backup
//!
//! [`backup`] copies a database while a coordinator keeps writing to it,
//! with SQLite's online backup API. The copy is one consistent snapshot: the
//! source connection holds a read transaction across all steps, so every
//! step reads the same snapshot and the copy never restarts when the server
//! commits meanwhile. Under WAL (the store always runs WAL) a reader never
//! blocks the writer; a step holds only a read lock, and the copy goes in
//! steps of [`BackupOptions::pages_per_step`] pages with a pause between
//! them to leave the disk to the server. While the snapshot is held the
//! server's checkpoints cannot pass it, so the WAL grows by what is written
//! meanwhile and is checkpointed after.
//!
//! The copy is written to `FILE.partial`, switched to a self-contained
//! rollback-journal file, checked ([`inspect`]), synced, and only then
//! renamed over `FILE`: a failed or interrupted backup never leaves a
//! half-written file under the backup's name. Like the database, the copy
//! (and a restore's new target) is created readable by its owner only.
//!
//! # Restore
//!
//! [`restore`] checks a backup ([`inspect`]: SQLite's `integrity_check`, a
//! schema version this coordinator knows, and exactly the tables that
//! version of the schema has) and copies it over the target under an
//! exclusive lock. A target that another connection holds, such as a
//! running (or paused) coordinator, is refused: the lock cannot be taken
//! while any other connection has the file open in WAL mode. An older schema
//! is installed as it is; the next `serve` migrates it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::StoreError;
use super::migrations::{self, MIGRATIONS};

/// Errors of [`backup`], [`inspect`] and [`restore`].
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not an xq coordinator database: {why}")]
    NotXq { path: PathBuf, why: String },
    #[error("{path} fails SQLite's integrity check: {report}")]
    Corrupt { path: PathBuf, report: String },
    #[error(
        "{path} is in use by another connection (a running or paused coordinator?); stop it first"
    )]
    Held { path: PathBuf },
    #[error("{path} exists; pass --replace to overwrite it")]
    Exists { path: PathBuf },
    #[error("the backup file and the database are the same file: {path}")]
    SameFile { path: PathBuf },
}

/// How [`backup`] steps through the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupOptions {
    /// Pages (4 KiB each) copied per step; at least 1.
    pub pages_per_step: u32,
    /// Sleep between steps.
    pub pause: Duration,
}

impl Default for BackupOptions {
    /// 4 MiB per step, 10 ms apart: about 400 MB/s at most, a few ms per step.
    fn default() -> Self {
        BackupOptions {
            pages_per_step: 1024,
            pause: Duration::from_millis(10),
        }
    }
}

/// What a checked database holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbInfo {
    /// Schema version (`PRAGMA user_version`), at most [`MIGRATIONS`]`.len()`.
    pub version: usize,
    pub runs: u64,
    pub leases: u64,
    /// Size in pages.
    pub pages: u64,
}

/// What [`backup`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupReport {
    /// The copy, as [`inspect`] found it.
    pub info: DbInfo,
    pub steps: u64,
    /// The longest single step (the longest the read lock was held at once).
    pub longest_step: Duration,
    pub elapsed: Duration,
}

fn sqlite(path: &Path) -> impl Fn(rusqlite::Error) -> BackupError + '_ {
    move |source| BackupError::Sqlite {
        path: path.to_owned(),
        source,
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> BackupError + '_ {
    move |source| BackupError::Io {
        path: path.to_owned(),
        source,
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Copies the database at `db` to `dest` while it stays in use (see the
/// module docs). `dest` is replaced atomically if it exists.
pub fn backup(db: &Path, dest: &Path, options: BackupOptions) -> Result<BackupReport, BackupError> {
    let started = Instant::now();
    if !db.exists() {
        return Err(io(db)(std::io::ErrorKind::NotFound.into()));
    }
    if dest.exists() && same_file(db, dest)? {
        return Err(BackupError::SameFile {
            path: dest.to_owned(),
        });
    }
    let src = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite(db))?;
    src.busy_timeout(Duration::from_secs(5))
        .map_err(sqlite(db))?;
    // One read transaction over every step: a fixed snapshot.
    src.execute_batch("BEGIN").map_err(sqlite(db))?;
    check_schema(&src, db)?;
    let partial = partial_path(dest);
    remove_if_exists(&partial)?;
    // A backup holds what the database does: private from its first byte.
    xq_proto::private::create_file_if_missing(&partial).map_err(io(&partial))?;
    let (steps, longest_step) = {
        let mut out = Connection::open(&partial).map_err(sqlite(&partial))?;
        let copy = Backup::new(&src, &mut out).map_err(sqlite(&partial))?;
        let pages = i32::try_from(options.pages_per_step.max(1)).unwrap_or(i32::MAX);
        let (mut steps, mut longest) = (0u64, Duration::ZERO);
        loop {
            let t = Instant::now();
            let step = copy.step(pages).map_err(sqlite(db))?;
            longest = longest.max(t.elapsed());
            steps += 1;
            match step {
                StepResult::Done => break,
                _ => std::thread::sleep(options.pause),
            }
        }
        (steps, longest)
    };
    src.execute_batch("COMMIT").map_err(sqlite(db))?;
    drop(src);
    // The copy carries the source's WAL flag; make it one self-contained file.
    {
        let out = Connection::open(&partial).map_err(sqlite(&partial))?;
        out.pragma_update(None, "journal_mode", "DELETE")
            .map_err(sqlite(&partial))?;
    }
    let info = match inspect(&partial) {
        Ok(info) => info,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    sync_file(&partial)?;
    std::fs::rename(&partial, dest).map_err(io(dest))?;
    sync_dir(dest)?;
    Ok(BackupReport {
        info,
        steps,
        longest_step,
        elapsed: started.elapsed(),
    })
}

/// Checks that `path` is a sound xq coordinator database: SQLite's
/// `integrity_check` passes, its schema version is one this coordinator
/// knows, and it has exactly the objects of that version's schema.
pub fn inspect(path: &Path) -> Result<DbInfo, BackupError> {
    if !path.is_file() {
        return Err(io(path)(std::io::ErrorKind::NotFound.into()));
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(sqlite(path))?;
    let not_xq = |why: String| BackupError::NotXq {
        path: path.to_owned(),
        why,
    };
    let report: Vec<String> = (|| {
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()
    })()
    .map_err(|e| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => not_xq("not a SQLite database".to_owned()),
        Some(ErrorCode::DatabaseCorrupt) => BackupError::Corrupt {
            path: path.to_owned(),
            report: e.to_string(),
        },
        _ => sqlite(path)(e),
    })?;
    if report != ["ok"] {
        return Err(BackupError::Corrupt {
            path: path.to_owned(),
            report: report.join("; "),
        });
    }
    let version = check_schema(&conn, path)?;
    let count = |sql: &str| -> Result<u64, BackupError> {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(sqlite(path))
    };
    Ok(DbInfo {
        version,
        runs: count("SELECT COUNT(*) FROM runs")?,
        leases: count("SELECT COUNT(*) FROM leases")?,
        pages: count("PRAGMA page_count")?,
    })
}

/// The schema version of `conn`, if its objects are exactly that version's.
fn check_schema(conn: &Connection, path: &Path) -> Result<usize, BackupError> {
    let not_xq = |why: String| BackupError::NotXq {
        path: path.to_owned(),
        why,
    };
    let store = |e: StoreError| match e {
        StoreError::Sqlite(e) => sqlite(path)(e),
        other => not_xq(other.to_string()),
    };
    let version = migrations::version(conn).map_err(store)?;
    if version == 0 {
        return Err(not_xq(
            "schema version 0 (an empty or foreign database)".to_owned(),
        ));
    }
    if version > MIGRATIONS.len() {
        return Err(not_xq(format!(
            "schema version {version} is newer than this coordinator's {}",
            MIGRATIONS.len()
        )));
    }
    let found = migrations::schema(conn).map_err(store)?;
    let expected = migrations::schema_at(version).map_err(store)?;
    if found != expected {
        let names = |s: &[migrations::SchemaEntry]| -> Vec<String> {
            s.iter().map(|(_, name, _)| name.clone()).collect()
        };
        let missing: Vec<_> = expected.iter().filter(|e| !found.contains(e)).collect();
        let extra: Vec<_> = found.iter().filter(|e| !expected.contains(e)).collect();
        return Err(not_xq(format!(
            "its tables differ from schema version {version}: missing or changed {:?}, unexpected {:?}",
            names(&missing.into_iter().cloned().collect::<Vec<_>>()),
            names(&extra.into_iter().cloned().collect::<Vec<_>>()),
        )));
    }
    Ok(version)
}

/// Checks `backup` ([`inspect`]) and installs it as `target`. An existing
/// `target` is overwritten only with `replace`, and never while another
/// connection holds it. Returns what was installed.
pub fn restore(backup: &Path, target: &Path, replace: bool) -> Result<DbInfo, BackupError> {
    let info = inspect(backup)?;
    let existed = target.exists();
    let result = install(backup, target, replace, existed, &info);
    if result.is_err() && !existed {
        let _ = std::fs::remove_file(target);
    }
    result.map(|()| info)
}

fn install(
    backup: &Path,
    target: &Path,
    replace: bool,
    existed: bool,
    info: &DbInfo,
) -> Result<(), BackupError> {
    if existed {
        if same_file(backup, target)? {
            return Err(BackupError::SameFile {
                path: target.to_owned(),
            });
        }
        if !replace {
            return Err(BackupError::Exists {
                path: target.to_owned(),
            });
        }
    }
    let held = |e: rusqlite::Error| {
        if is_busy(&e) {
            BackupError::Held {
                path: target.to_owned(),
            }
        } else if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) {
            BackupError::NotXq {
                path: target.to_owned(),
                why: "not a SQLite database; remove it yourself if it is to go".to_owned(),
            }
        } else {
            sqlite(target)(e)
        }
    };
    xq_proto::private::create_file_if_missing(target).map_err(io(target))?;
    let mut conn = Connection::open(target).map_err(sqlite(target))?;
    conn.busy_timeout(Duration::ZERO).map_err(sqlite(target))?;
    // Keep every lock this connection takes until it closes; leaving WAL
    // needs the only connection to the file, so a server that has it open
    // makes this fail with SQLITE_BUSY.
    conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
        .map_err(held)?;
    conn.pragma_update(None, "journal_mode", "DELETE")
        .map_err(held)?;
    conn.execute_batch("BEGIN EXCLUSIVE; COMMIT;")
        .map_err(held)?;
    {
        let src = Connection::open_with_flags(backup, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(sqlite(backup))?;
        let copy = Backup::new(&src, &mut conn).map_err(sqlite(target))?;
        loop {
            match copy.step(-1).map_err(held)? {
                StepResult::Done => break,
                StepResult::More => {}
                _ => {
                    return Err(BackupError::Held {
                        path: target.to_owned(),
                    });
                }
            }
        }
    }
    let installed = migrations::version(&conn).map_err(|e| match e {
        StoreError::Sqlite(e) => sqlite(target)(e),
        other => BackupError::NotXq {
            path: target.to_owned(),
            why: other.to_string(),
        },
    })?;
    drop(conn);
    if installed != info.version {
        return Err(BackupError::NotXq {
            path: target.to_owned(),
            why: format!(
                "after the copy its schema version is {installed}, the backup's is {}",
                info.version
            ),
        });
    }
    sync_file(target)?;
    if !existed {
        sync_dir(target)?;
    }
    Ok(())
}

/// `FILE.partial` next to `FILE`.
fn partial_path(dest: &Path) -> PathBuf {
    let mut name = dest.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

fn remove_if_exists(path: &Path) -> Result<(), BackupError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(path)(e)),
        _ => Ok(()),
    }
}

fn same_file(a: &Path, b: &Path) -> Result<bool, BackupError> {
    let a = std::fs::canonicalize(a).map_err(io(a))?;
    let b = std::fs::canonicalize(b).map_err(io(b))?;
    Ok(a == b)
}

fn sync_file(path: &Path) -> Result<(), BackupError> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(io(path))
}

/// Syncs the folder holding `path`, so a rename or a new file survives a power cut.
fn sync_dir(path: &Path) -> Result<(), BackupError> {
    xq_proto::atomic_file::sync_dir(path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Self {
            use std::sync::atomic::AtomicU64;
            static N: AtomicU64 = AtomicU64::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let p =
                std::env::temp_dir().join(format!("xq-backup-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        fn join(&self, name: &str) -> PathBuf {
            self.0.join(name)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A WAL database with the full schema, as a server leaves it.
    fn served(path: &Path) -> Connection {
        let mut conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        migrations::migrate(&mut conn).unwrap();
        conn
    }

    fn add_run(conn: &Connection, pairs: i64) {
        conn.execute(
            "INSERT INTO runs (spec, kind, priority, state, pairs, created_ms, updated_ms)
             VALUES ('{}', 'games', 0, 'active', ?1, 1, 1)",
            [pairs],
        )
        .unwrap();
    }

    #[test]
    fn a_backup_taken_during_writes_is_one_consistent_snapshot_and_the_writer_is_not_held_up() {
        let dir = Dir::new("online");
        let db = dir.join("xq.db");
        let conn = served(&db);
        // About 8 MB of rows, so the copy takes many steps.
        let blob = "x".repeat(4000);
        conn.execute_batch("BEGIN").unwrap();
        for i in 0..2000 {
            conn.execute(
                "INSERT INTO runs (spec, kind, priority, state, pairs, created_ms, updated_ms)
                 VALUES (?1, 'games', 0, 'active', 1, 1, 1)",
                [format!("{blob}{i}")],
            )
            .unwrap();
        }
        conn.execute_batch("COMMIT").unwrap();
        drop(conn);
        // The writer: each commit adds a run and a lease of it, so a
        // consistent copy has as many leases as runs beyond the first 2000.
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let conn = Connection::open(&db).unwrap();
                conn.busy_timeout(Duration::from_secs(5)).unwrap();
                conn.execute(
                    "INSERT INTO workers (name, threads, version, signature, registered_ms, last_seen_ms)
                     VALUES ('w', 1, '0', 0, 1, 1)",
                    [],
                )
                .unwrap();
                let (mut commits, mut slowest) = (0u32, Duration::ZERO);
                while !stop.load(Ordering::Relaxed) || commits < 20 {
                    let t = Instant::now();
                    conn.execute_batch(
                        "BEGIN IMMEDIATE;
                         INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                             VALUES ('{}', 'games', 0, 'active', 1, 1);
                         INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs,
                                             created_ms, deadline_ms)
                             VALUES (last_insert_rowid(), 1, 'done', 0, 1, 1, 1);
                         COMMIT;",
                    )
                    .unwrap();
                    slowest = slowest.max(t.elapsed());
                    commits += 1;
                    std::thread::sleep(Duration::from_millis(2));
                }
                (commits, slowest)
            })
        };
        let options = BackupOptions {
            pages_per_step: 64,
            pause: Duration::from_millis(5),
        };
        let copy = dir.join("copy.db");
        let report = backup(&db, &copy, options).unwrap();
        stop.store(true, Ordering::Relaxed);
        let (commits, slowest) = writer.join().unwrap();
        assert!(report.steps > 20, "{report:?}");
        assert!(commits >= 20);
        // Generous for a loaded 2-core machine; a writer blocked for the
        // whole copy would wait over 100 ms (20+ steps × 5 ms pauses).
        assert!(
            slowest < Duration::from_millis(100),
            "slowest commit {slowest:?}"
        );
        assert_eq!(report.info.leases, report.info.runs - 2000, "{report:?}");
        assert!(!partial_path(&copy).exists());
        let c = Connection::open(&copy).unwrap();
        let mode: String = c
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete", "the backup is one self-contained file");
    }

    #[test]
    fn a_backup_restores_over_a_stopped_database_and_the_store_opens_it() {
        let dir = Dir::new("restore");
        let db = dir.join("xq.db");
        let conn = served(&db);
        add_run(&conn, 7);
        drop(conn);
        let copy = dir.join("copy.db");
        backup(&db, &copy, BackupOptions::default()).unwrap();
        // Later changes to the live database, then a restore back to the copy.
        let conn = Connection::open(&db).unwrap();
        add_run(&conn, 9);
        drop(conn);
        let err = restore(&copy, &db, false).unwrap_err();
        assert!(matches!(err, BackupError::Exists { .. }), "{err}");
        let info = restore(&copy, &db, true).unwrap();
        assert_eq!((info.runs, info.version), (1, MIGRATIONS.len()));
        let store = Store::open(&db).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let pairs: Vec<i64> = rt
            .block_on(store.call(|c| {
                let mut s = c.prepare("SELECT pairs FROM runs")?;
                let rows = s.query_map([], |r| r.get(0))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            }))
            .unwrap();
        assert_eq!(pairs, [7]);
        // Into a new file too.
        let fresh = dir.join("fresh.db");
        assert_eq!(restore(&copy, &fresh, false).unwrap().runs, 1);
    }

    #[test]
    fn restore_refuses_a_database_another_connection_holds() {
        let dir = Dir::new("held");
        let db = dir.join("xq.db");
        let holder = served(&db);
        add_run(&holder, 1);
        let copy = dir.join("copy.db");
        backup(&db, &copy, BackupOptions::default()).unwrap();
        let err = restore(&copy, &db, true).unwrap_err();
        assert!(matches!(err, BackupError::Held { .. }), "{err}");
        // The held database is untouched and still usable.
        add_run(&holder, 2);
        let n: i64 = holder
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2);
    }

    #[test]
    fn inspect_names_what_is_wrong_with_a_file() {
        let dir = Dir::new("inspect");
        let junk = dir.join("junk.db");
        std::fs::write(&junk, vec![b'z'; 8192]).unwrap();
        assert!(matches!(inspect(&junk), Err(BackupError::NotXq { .. })));
        let foreign = dir.join("foreign.db");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); PRAGMA user_version = 2;")
            .unwrap();
        let err = inspect(&foreign).unwrap_err().to_string();
        assert!(err.contains("differ from schema version 2"), "{err}");
        let empty = dir.join("empty.db");
        Connection::open(&empty)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        assert!(
            inspect(&empty)
                .unwrap_err()
                .to_string()
                .contains("version 0")
        );
        let newer = dir.join("newer.db");
        let c = served(&newer);
        c.pragma_update(None, "user_version", MIGRATIONS.len() as i64 + 1)
            .unwrap();
        drop(c);
        assert!(inspect(&newer).unwrap_err().to_string().contains("newer"));
        // A damaged page fails the integrity check.
        let db = dir.join("xq.db");
        let c = served(&db);
        c.execute_batch("BEGIN").unwrap();
        for i in 0..500 {
            c.execute(
                "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                 VALUES (?1, 'games', 0, 'active', 1, 1)",
                [format!("{i:0>300}")],
            )
            .unwrap();
        }
        c.execute_batch("COMMIT; PRAGMA journal_mode = DELETE;")
            .unwrap();
        drop(c);
        let mut bytes = std::fs::read(&db).unwrap();
        let page = 4096;
        let last = bytes.len() / page - 1;
        for b in &mut bytes[last * page + 16..last * page + 200] {
            *b = 0xA5;
        }
        std::fs::write(&db, bytes).unwrap();
        let err = inspect(&db).unwrap_err();
        assert!(matches!(err, BackupError::Corrupt { .. }), "{err}");
        assert!(matches!(
            restore(&db, &dir.join("t.db"), false),
            Err(BackupError::Corrupt { .. })
        ));
        assert!(!dir.join("t.db").exists());
    }

    #[test]
    fn a_backup_onto_its_own_database_is_refused() {
        let dir = Dir::new("same");
        let db = dir.join("xq.db");
        drop(served(&db));
        let err = backup(&db, &db, BackupOptions::default()).unwrap_err();
        assert!(matches!(err, BackupError::SameFile { .. }), "{err}");
        assert!(inspect(&db).is_ok());
    }
}
