//! Rows of `run_worker_speeds`: each worker's measured speed with a run's
//! base engine and the time factor the run's speed rule gave it (the
//! latest per worker and run). A run with a minimum speed leases nothing
//! more to a worker whose row is below it.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::capacity::SpeedMethod;

use super::{StoreError, count};

/// A worker's measured speed in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Speed {
    /// The measured engine's name (`built-in` for the built-in engine).
    pub engine: String,
    /// Nodes per second; 0 when it could not be measured.
    pub nps: u64,
    /// The factor its time limits are scaled by (1 without scaling).
    pub factor: f64,
    pub method: SpeedMethod,
    pub measured_ms: i64,
}

/// Stores `speed` as `worker_id`'s in `run_id`, replacing an earlier one.
pub fn record(
    conn: &Connection,
    run_id: u64,
    worker_id: u64,
    speed: &Speed,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO run_worker_speeds
             (run_id, worker_id, engine, nps, factor, method, measured_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        run_id as i64,
        worker_id as i64,
        speed.engine,
        speed.nps.min(i64::MAX as u64) as i64,
        speed.factor,
        speed.method.name(),
        speed.measured_ms,
    ])?;
    Ok(())
}

fn read(r: &rusqlite::Row<'_>, from: usize) -> rusqlite::Result<Speed> {
    let method: String = r.get(from + 3)?;
    Ok(Speed {
        engine: r.get(from)?,
        nps: count(r.get(from + 1)?),
        factor: r.get(from + 2)?,
        method: SpeedMethod::parse(&method).unwrap_or(SpeedMethod::Search),
        measured_ms: r.get(from + 4)?,
    })
}

/// `worker_id`'s speed in `run_id`, if it measured one.
pub fn get(conn: &Connection, run_id: u64, worker_id: u64) -> Result<Option<Speed>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT engine, nps, factor, method, measured_ms FROM run_worker_speeds
             WHERE run_id = ?1 AND worker_id = ?2",
        )?
        .query_row([run_id as i64, worker_id as i64], |r| read(r, 0))
        .optional()?)
}

/// Every worker's speed in `run_id`, by worker id.
pub fn for_run(conn: &Connection, run_id: u64) -> Result<BTreeMap<u64, Speed>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT worker_id, engine, nps, factor, method, measured_ms FROM run_worker_speeds
         WHERE run_id = ?1",
    )?;
    let rows = stmt.query_map([run_id as i64], |r| Ok((count(r.get(0)?), read(r, 1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `worker_id`'s latest speed with each engine it measured, by engine name.
pub fn for_worker(
    conn: &Connection,
    worker_id: u64,
) -> Result<BTreeMap<String, Speed>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT engine, nps, factor, method, measured_ms FROM run_worker_speeds
         WHERE worker_id = ?1 ORDER BY measured_ms",
    )?;
    let rows = stmt.query_map([worker_id as i64], |r| read(r, 0))?;
    let mut latest = BTreeMap::new();
    for speed in rows {
        let speed = speed?;
        latest.insert(speed.engine.clone(), speed);
    }
    Ok(latest)
}

/// The speeds `worker_id` measured, by run id (for admission).
pub fn nps_by_run(conn: &Connection, worker_id: u64) -> Result<BTreeMap<u64, u64>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT run_id, nps FROM run_worker_speeds WHERE worker_id = ?1")?;
    let rows = stmt.query_map([worker_id as i64], |r| {
        Ok((count(r.get(0)?), count(r.get(1)?)))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
