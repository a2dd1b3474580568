//! The SQLite store: the coordinator's only state.
//!
//! # Threading
//!
//! rusqlite is blocking, so each connection lives on its own thread, and
//! [`Store::call`] sends that thread a closure and awaits its answer. One
//! connection is enough: SQLite admits one writer at a time anyway, every
//! operation is one short transaction (no network I/O inside), and a single
//! connection makes the transactions trivially serializable. A dedicated
//! thread with a queue (rather than tokio's blocking pool and a mutex) keeps
//! a thousand concurrent calls from becoming hundreds of threads fighting
//! over one lock; the queue is FIFO, so calls are served in arrival order.
//!
//! # Group commit
//!
//! The thread runs every call waiting in the queue (up to
//! [`batch::MAX_BATCH`]) inside one transaction and commits it before it
//! answers any of them ([`batch`]). A call's own transaction is a savepoint
//! (`conn.savepoint()`, never `conn.transaction()`): it commits or rolls
//! back alone within the batch. With [`Durability::Full`] the connection
//! runs `synchronous = FULL`, so the batch's one commit syncs the WAL: no
//! caller (no worker told ACCEPTED) ever hears of a change that a power cut
//! could still lose, and a thousand calls cost one sync instead of a
//! thousand. A call whose batch fails to commit is answered
//! [`StoreError::Unsynced`] if it wrote.
//!
//! # Layout
//!
//! * [`batch`]: the writer thread and its batches.
//! * [`migrations`]: the append-only schema list (`PRAGMA user_version`).
//! * [`backup`]: online backups, their checks and restore.
//! * [`blobs`]: content-addressed blobs in chunks; [`engines`] and [`assets`]: the
//!   registry's names for them.
//! * [`game_codec`]: the compressed form of a result's games; [`games`]:
//!   their rows.
//! * [`runs`], [`leases`], [`workers`], [`tokens`], [`variants`], [`history`]: row-level reads
//!   and writes on a transaction; the rules that combine them live in [`crate::service`].
//! * [`activity`]: read-only aggregates (workers with their leases, counts).
//! * [`build_failures`]: the failed builds of runs' source engines, one per
//!   worker and run.
//! * [`worker_releases`]: `xq-worker` executables by version and target,
//!   and the required version; [`worker_versions`]: each worker's version
//!   and update state against it.
//!
//! # Visibility
//!
//! Every module that reads or writes rows on a connection, and
//! [`Store::call`] and [`Store::call_bulk`] that hand one out, is private
//! to the crate: outside it,
//! the doors (the gRPC services, the web view, the CLI) and the tests go
//! through [`crate::service`], which re-exports what they name ([`Store`]
//! as an opaque handle, [`StoreError`], [`StoreOptions`], [`now_ms`] and
//! [`utc`]). Three modules touch no connection of the store's and stay
//! public: [`backup`] (`xq-coordinator backup` and `restore`, which copy
//! and check whole database files), [`migrations`] (the schema list
//! `backup` checks a file's version against, and `migrate`, which the
//! end-to-end tests' own fixture databases are built with), and
//! [`game_codec`], the archive's stored form of a result's games as bytes,
//! a pure format like a notation (the `result_check` bench times it).

pub(crate) mod activity;
pub(crate) mod assets;
pub mod backup;
pub(crate) mod batch;
pub(crate) mod beats;
pub(crate) mod blobs;
pub(crate) mod build_failures;
pub(crate) mod engines;
pub(crate) mod events;
pub mod game_codec;
pub(crate) mod games;
pub(crate) mod health;
pub(crate) mod history;
pub(crate) mod instruments;
pub(crate) mod lease_results;
pub(crate) mod leases;
pub mod migrations;
pub(crate) mod runs;
pub(crate) mod serving;
pub(crate) mod sessions;
pub(crate) mod speeds;
pub(crate) mod tokens;
pub(crate) mod users;
pub(crate) mod worker_releases;
pub(crate) mod worker_versions;
pub(crate) mod workers;

#[cfg(test)]
mod schema_upgrade;

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;

pub use batch::Lane;
use batch::{Deliver, Job};
use instruments::StoreMetrics;

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("corrupt stored json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Schema(String),
    #[error("{0}")]
    NotFound(String),
    /// Refused content, naming the field (mapped to `INVALID_ARGUMENT`).
    #[error("{0}")]
    Invalid(#[from] xq_proto::Invalid),
    #[error("{0}")]
    Forbidden(String),
    /// A right request that the state refuses (mapped to
    /// `FAILED_PRECONDITION`), e.g. a worker too slow for a run.
    #[error("{0}")]
    Precondition(String),
    /// The batch holding a call's change failed to commit or sync: the
    /// change is not on disk.
    #[error("the change could not be committed to disk: {0}")]
    Unsynced(String),
    #[error("the store's worker thread failed: {0}")]
    Join(String),
    /// The database file could not be created.
    #[error("{0}")]
    Io(String),
}

impl StoreError {
    /// Refused content: `field` is wrong because of `reason`.
    pub fn invalid(field: &str, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Invalid(xq_proto::Invalid::new(field, reason))
    }
}

impl From<crate::runs::RunError> for StoreError {
    fn from(e: crate::runs::RunError) -> Self {
        use crate::runs::RunError;
        match e {
            RunError::Invalid(invalid) => StoreError::Invalid(invalid),
            RunError::NotFound(what) => StoreError::NotFound(what),
            RunError::Corrupt(what) => StoreError::Schema(what),
        }
    }
}

/// When a commit reaches the disk (`PRAGMA synchronous` under WAL).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// Every commit is synced before the call returns (`FULL`): an answer
    /// such as ACCEPTED is never lost, even to a power cut.
    #[default]
    Full,
    /// Commits are synced at checkpoints only (`NORMAL`): never corrupt, but
    /// a power cut (not a process crash) may lose the last commits after
    /// their answers were sent. See coordinator/SECURITY.md.
    Normal,
}

/// Settings of [`Store::open_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreOptions {
    pub durability: Durability,
    /// Caps the database at this many pages (`PRAGMA max_page_count`, 4 KiB
    /// pages); a write that needs more fails with SQLITE_FULL and changes
    /// nothing. `None`: SQLite's own limit. Used to test a full disk.
    pub max_pages: Option<u64>,
}

/// A handle to the database; cheap to clone. The connection's thread ends
/// when the last handle is dropped.
#[derive(Debug, Clone)]
pub struct Store {
    jobs: mpsc::Sender<(Lane, Job)>,
    /// The file, for opening more connections; `None` in memory.
    path: Option<PathBuf>,
    /// This connection's queue depth and batch times.
    metrics: Arc<StoreMetrics>,
}

/// Prepared statements each connection keeps: every statement of the
/// request path (RequestWork, SubmitResult, Heartbeat) stays parsed, which
/// rusqlite's default of 16 does not hold.
const STATEMENT_CACHE: usize = 64;

/// How long a connection waits for a lock held by another process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Creates the database file at `path` private unless it exists (or is
/// SQLite's in-memory name); warns when an existing one is open to others.
pub(crate) fn create_private(path: &Path) -> Result<(), StoreError> {
    if path.as_os_str().is_empty() || path == Path::new(":memory:") {
        return Ok(());
    }
    let created = xq_proto::private::create_file_if_missing(path).map_err(|e| {
        StoreError::Io(format!(
            "cannot create the database {}: {e}",
            path.display()
        ))
    })?;
    let open = xq_proto::private::open_to_others(path);
    if !created && open != 0 {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{open:03o}"),
            "other users may read the database (password, token and session hashes): \
             `chmod 600` it and its -wal and -shm files"
        );
    }
    Ok(())
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`. A new
    /// database is created readable by its owner only (0600), and so are its
    /// `-wal` and `-shm` (SQLite gives them the database file's mode); an
    /// existing one that others may read is opened with a warning.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, StoreOptions::default())
    }

    /// [`Store::open`] with options.
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Self, StoreError> {
        let path = path.as_ref();
        create_private(path)?;
        let conn = Connection::open(path)?;
        // WAL: readers never block the writer and a crash loses nothing committed.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // Full durability syncs at each batch's commit (see the module docs).
        let synchronous = match options.durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", synchronous)?;
        if let Some(pages) = options.max_pages {
            conn.pragma_update(None, "max_page_count", pages.min(i64::MAX as u64) as i64)?;
        }
        let mut store = Self::setup(conn)?;
        store.path = Some(path.to_owned());
        Ok(store)
    }

    /// A second handle for reads that must not wait behind writes: a new
    /// read-only connection to the same file (WAL readers never block the
    /// writer), or this same connection for an in-memory database.
    pub(crate) fn reader(&self) -> Result<Self, StoreError> {
        let Some(path) = &self.path else {
            return Ok(self.clone());
        };
        let conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let metrics = Arc::new(StoreMetrics::default());
        Ok(Store {
            jobs: Self::spawn(conn, false, Arc::clone(&metrics))?,
            path: Some(path.clone()),
            metrics,
        })
    }

    /// This connection's queue depth and batch times.
    pub(crate) fn metrics(&self) -> &StoreMetrics {
        &self.metrics
    }

    /// A private in-memory database (tests).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Self, StoreError> {
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        migrations::migrate(&mut conn)?;
        let metrics = Arc::new(StoreMetrics::default());
        Ok(Store {
            jobs: Self::spawn(conn, true, Arc::clone(&metrics))?,
            path: None,
            metrics,
        })
    }

    /// Starts the thread that owns `conn` and runs jobs in arrival order,
    /// in batches; with `grouped`, each batch in one transaction.
    fn spawn(
        conn: Connection,
        grouped: bool,
        metrics: Arc<StoreMetrics>,
    ) -> Result<mpsc::Sender<(Lane, Job)>, StoreError> {
        let (tx, rx) = mpsc::channel::<(Lane, Job)>();
        std::thread::Builder::new()
            .name("xq-store".to_owned())
            .spawn(move || batch::serve(conn, rx, grouped, metrics))
            .map_err(|e| StoreError::Join(format!("cannot start the store thread: {e}")))?;
        Ok(tx)
    }

    /// An empty call through the queue, answered once the calls queued
    /// before it are (the health check's probe).
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        self.call(|_| Ok(())).await
    }

    /// Runs `f` on the connection's thread in the control lane, after the
    /// control calls queued before it and before every bulk call waiting.
    pub(crate) async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.call_in(Lane::Control, f).await
    }

    /// Runs `f` on the connection's thread in the bulk lane (a result's
    /// write), after the control calls waiting ([`batch`]).
    pub(crate) async fn call_bulk<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.call_in(Lane::Bulk, f).await
    }

    async fn call_in<T, F>(&self, lane: Lane, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let metrics = Arc::clone(&self.metrics);
        let sent = Instant::now();
        let job: Job = Box::new(move |conn| {
            metrics.queued.dec();
            let label = lane.into();
            metrics
                .wait_seconds
                .get_or_create(&label)
                .observe(sent.elapsed().as_secs_f64());
            let before = conn.total_changes();
            // A panic inside a transaction rolled it back, so the data is
            // sound and the thread keeps serving.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn)))
                .unwrap_or_else(|_| Err(StoreError::Join("a store call panicked".to_owned())));
            let wrote = conn.total_changes() != before;
            let deliver: Deliver = Box::new(move |sync_failure| {
                let result = match (result, sync_failure) {
                    (Ok(_), Some(e)) => Err(StoreError::Unsynced(e.to_owned())),
                    (result, _) => result,
                };
                metrics
                    .call_seconds
                    .get_or_create(&label)
                    .observe(sent.elapsed().as_secs_f64());
                let _ = tx.send(result);
            });
            (wrote, deliver)
        });
        self.metrics.queued.inc();
        if self.jobs.send((lane, job)).is_err() {
            self.metrics.queued.dec();
            return Err(StoreError::Join("the store thread has stopped".to_owned()));
        }
        rx.await
            .map_err(|_| StoreError::Join("the store thread dropped a call".to_owned()))?
    }
}

/// Milliseconds since the unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Unix ms as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = xq_proto::utc::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A stored count back to `u64` (counts are never negative).
pub(crate) fn count(v: i64) -> u64 {
    v.max(0) as u64
}

/// The JSON stored in `column` (with its row, e.g. `runs.spec of run 3`)
/// read back into its domain type, whose text fields (a rule set's preset
/// name) are parsed on the way; a value that does not read is corrupt, and
/// the error names the column.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    column: &str,
    json: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(json)
        .map_err(|e| StoreError::Schema(format!("corrupt stored {column}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[cfg(unix)]
    #[tokio::test]
    async fn a_new_database_and_its_wal_and_shm_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("xq-store-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("xq.db");
        let store = super::Store::open(&db).unwrap();
        let reader = store.reader().unwrap();
        crate::service::accounts::Accounts::new(reader)
            .working_tokens()
            .await
            .unwrap();
        for name in ["xq.db", "xq.db-wal", "xq.db-shm"] {
            let meta = std::fs::metadata(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{name}");
        }
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn utc_formats_unix_ms() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_796_083_200_000 + 3_723_000), "2026-12-01 01:02:03");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13:20");
    }
}
