//! The SQLite store: the coordinator's only state.
//!
//! # Threading
//!
//! rusqlite is blocking, so every store operation runs on tokio's blocking
//! pool ([`Store::call`] wraps `spawn_blocking`) on the one connection behind
//! a std `Mutex`. One connection is enough: SQLite admits one writer at a
//! time anyway, every operation is one short transaction (no network I/O
//! inside), and a single connection makes the transactions trivially
//! serializable. A std mutex is right because it is never held across an
//! `.await`.
//!
//! # Layout
//!
//! * [`migrations`]: the append-only schema list (`PRAGMA user_version`).
//! * [`runs`], [`leases`], [`workers`], [`tokens`], [`variants`], row-level reads and writes on a
//!   transaction; the rules that combine them live in [`crate::scheduler`].

pub mod engines;
pub mod leases;
pub mod migrations;
pub mod runs;
pub mod tokens;
pub mod variants;
pub mod workers;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;

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
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("the store's worker thread failed: {0}")]
    Join(String),
}

/// Settings of [`Store::open_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// Caps the database at this many pages (`PRAGMA max_page_count`, 4 KiB
    /// pages); a write that needs more fails with SQLITE_FULL and changes
    /// nothing. `None`: SQLite's own limit. Used to test a full disk.
    pub max_pages: Option<u64>,
}

/// A handle to the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    /// The file, for opening more connections; `None` in memory.
    path: Option<PathBuf>,
}

/// How long a connection waits for a lock held by another process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, StoreOptions::default())
    }

    /// [`Store::open`] with options.
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let conn = Connection::open(path)?;
        // WAL: readers never block the writer and a crash loses nothing committed.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL is durable in WAL mode up to the last checkpointed commit of a power loss.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut store = Self::setup(conn)?;
        if let Some(pages) = options.max_pages {
            let guard = store.conn.lock().unwrap_or_else(|e| e.into_inner());
            guard.pragma_update(None, "max_page_count", pages.min(i64::MAX as u64) as i64)?;
        }
        store.path = Some(path.to_owned());
        Ok(store)
    }

    /// A second handle for reads that must not wait behind writes: a new
    /// read-only connection to the same file (WAL readers never block the
    /// writer), or this same connection for an in-memory database.
    pub fn reader(&self) -> Result<Self, StoreError> {
        let Some(path) = &self.path else {
            return Ok(self.clone());
        };
        let conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
            path: Some(path.clone()),
        })
    }

    /// A private in-memory database (tests).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Self, StoreError> {
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        migrations::migrate(&mut conn)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
            path: None,
        })
    }

    /// Runs `f` on the connection on the blocking pool.
    pub async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            // A panic inside a transaction rolled it back, so the data is sound.
            let mut guard = conn.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut guard)
        })
        .await
        .map_err(|e| StoreError::Join(e.to_string()))?
    }
}

/// Milliseconds since the unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A stored count back to `u64` (counts are never negative).
pub(crate) fn count(v: i64) -> u64 {
    v.max(0) as u64
}
