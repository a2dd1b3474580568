//! Who can serve a run: how many of the workers seen lately admission lets
//! take its leases, and for each worker that held one of its leases the
//! games it plays at once and the speed it measured. Nothing here writes.

use std::collections::BTreeMap;

use rusqlite::Connection;
use xq_proto::capacity::Capacity;

use super::speeds::{self, Speed};
use super::workers::applicant_of;
use super::{StoreError, count};
use crate::runs::RunStatus;
use crate::runs::admission;

/// A worker counts as active when seen this recently, ms.
pub const ACTIVE_MS: i64 = 10 * 60 * 1000;

/// A worker's part in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerPlay {
    /// What it offers a game.
    pub capacity: Capacity,
    /// Games it plays at once of the run (0: one game does not fit).
    pub games_at_once: u32,
    /// Its speed with the run's base engine, if it measured one.
    pub speed: Option<Speed>,
}

/// Who can serve a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Serving {
    /// Workers seen in the last [`ACTIVE_MS`].
    pub active: u32,
    /// Those of them that admission lets take the run's leases.
    pub able: u32,
    /// Each worker that held a lease of the run, by id.
    pub workers: BTreeMap<u64, WorkerPlay>,
}

/// Who can serve `run` at `now`.
pub fn for_run(conn: &Connection, run: &RunStatus, now: i64) -> Result<Serving, StoreError> {
    let mut measured = speeds::for_run(conn, run.id)?;
    let needs = run.spec.settings.game_needs();
    let mut stmt = conn.prepare_cached(
        "SELECT id, threads, machine, tools, last_seen_ms >= ?2,
                id IN (SELECT worker_id FROM leases WHERE run_id = ?1)
         FROM workers
         WHERE last_seen_ms >= ?2 OR id IN (SELECT worker_id FROM leases WHERE run_id = ?1)",
    )?;
    let rows = stmt
        .query_map([run.id as i64, now - ACTIVE_MS], |r| {
            Ok((
                count(r.get(0)?),
                (r.get(1)?, r.get(2)?, r.get(3)?),
                r.get::<_, bool>(4)?,
                r.get::<_, bool>(5)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut serving = Serving::default();
    for (id, columns, active, played) in rows {
        let mut applicant = applicant_of(id, columns)?;
        let speed = measured.remove(&id);
        if let Some(s) = &speed {
            applicant.measured.insert(run.id, s.nps);
        }
        if active {
            serving.active += 1;
            if admission::admits(run.id, &run.spec, &applicant).is_ok() {
                serving.able += 1;
            }
        }
        if played {
            let capacity = applicant.capacity();
            serving.workers.insert(
                id,
                WorkerPlay {
                    capacity,
                    games_at_once: capacity.games_at_once(needs),
                    speed,
                },
            );
        }
    }
    Ok(serving)
}
