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
//! * [`runs`], [`leases`], [`workers`], [`variants`]: row-level reads and writes on a
//!   transaction; the rules that combine them live in [`crate::scheduler`].

pub mod leases;
pub mod migrations;
pub mod runs;
pub mod variants;
pub mod workers;

use std::path::Path;
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
    #[error("the store's worker thread failed: {0}")]
    Join(String),
}

/// A handle to the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
}

/// How long a connection waits for a lock held by another process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        // WAL: readers never block the writer and a crash loses nothing committed.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL is durable in WAL mode up to the last checkpointed commit of a power loss.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Self::setup(conn)
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
