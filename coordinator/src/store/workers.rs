//! Registered workers.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;

/// A worker as it registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWorker {
    pub name: String,
    pub threads: u32,
    pub version: String,
    pub signature: u64,
    /// Nodes per second of that bench on the worker's machine; `None`: not
    /// measured.
    pub bench_nps: Option<u64>,
    /// The key of the token that registered it (see [`crate::access::Principal`]).
    pub token_key: Option<i64>,
    /// The build tools on its PATH (names of [`xq_proto::engine_source::BUILD_TOOLS`]).
    pub tools: BTreeSet<String>,
}

/// What deciding whether a worker may play a run needs of it, read in one
/// query on every request for work.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Admission {
    /// Its measured speed (bench nodes per second); `None`: not measured.
    pub bench_nps: Option<u64>,
    /// The build tools it reported.
    pub tools: BTreeSet<String>,
}

/// The tools as the `tools` column holds them: sorted, separated by single spaces.
fn tools_text(tools: &BTreeSet<String>) -> String {
    tools
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `tools` column read back.
pub fn tools_of(text: &str) -> BTreeSet<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

/// Inserts a worker and returns its id.
pub fn insert(conn: &Connection, worker: &NewWorker, now: i64) -> Result<u64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO workers (name, threads, version, signature, registered_ms, last_seen_ms,
                              token_key, bench_nps, tools)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        worker.name,
        worker.threads,
        worker.version,
        worker.signature as i64,
        now,
        worker.token_key,
        worker.bench_nps.map(|n| n.min(i64::MAX as u64) as i64),
        tools_text(&worker.tools),
    ])?;
    Ok(conn.last_insert_rowid() as u64)
}

/// Records that the worker called; fails with `NotFound` for an unknown id.
pub fn touch(conn: &Connection, id: u64, now: i64) -> Result<(), StoreError> {
    let found = conn
        .prepare_cached("UPDATE workers SET last_seen_ms = ?2 WHERE id = ?1 RETURNING id")?
        .query_row(params![id as i64, now], |r| r.get::<_, i64>(0))
        .optional()?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::NotFound(format!("unknown worker {id}"))),
    }
}

/// `NotFound` for an unknown worker id.
pub fn check_known(conn: &Connection, id: u64) -> Result<(), StoreError> {
    let known = conn
        .prepare_cached("SELECT 1 FROM workers WHERE id = ?1")?
        .exists([id as i64])?;
    if known {
        Ok(())
    } else {
        Err(StoreError::NotFound(format!("unknown worker {id}")))
    }
}

/// The key of the token that registered worker `id`: `None` for an unknown
/// worker, `Some(None)` for one registered before tokens existed.
pub fn token_key(conn: &Connection, id: u64) -> Result<Option<Option<i64>>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT token_key FROM workers WHERE id = ?1")?
        .query_row([id as i64], |r| r.get::<_, Option<i64>>(0))
        .optional()?)
}

/// The id of the (first registered) worker named `name`.
pub fn id_by_name(conn: &Connection, name: &str) -> Result<Option<u64>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT id FROM workers WHERE name = ?1 ORDER BY id LIMIT 1")?
        .query_row([name], |r| r.get::<_, i64>(0))
        .optional()?
        .map(|id| id as u64))
}

/// What admission to a run needs of worker `id` ([`Admission`]); an
/// unknown worker asks nothing and has nothing.
pub fn admission(conn: &Connection, id: u64) -> Result<Admission, StoreError> {
    Ok(conn
        .prepare_cached("SELECT bench_nps, tools FROM workers WHERE id = ?1")?
        .query_row([id as i64], |r| {
            Ok(Admission {
                bench_nps: r.get::<_, Option<i64>>(0)?.map(super::count),
                tools: tools_of(&r.get::<_, String>(1)?),
            })
        })
        .optional()?
        .unwrap_or_default())
}
