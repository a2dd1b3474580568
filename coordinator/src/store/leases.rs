//! Rows of `leases`: work handed to a worker until a deadline.
//!
//! A lease's life: `active` → `done` (its result was counted), `expired`
//! (the deadline passed), `released` (the worker handed it back) or
//! `cancelled` (the run ended). An expired or released lease's slice
//! (`opening_offset`, `pairs`, and for variants runs `variant`) is handed out
//! again exactly once, by a new lease; `reissued` marks that it was. So is
//! the slice of a done lease whose result was set aside when its worker was
//! excluded from the run ([`super::lease_results::exclude`]).

use rusqlite::{Connection, OptionalExtension, params};

use super::beats::Settled;
use super::{StoreError, count};
use crate::runs::Slice;
use crate::runs::lease::{Lease, LeaseState};
use crate::spsa::SpsaRequest;

/// A lease to insert.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLease<'a> {
    pub run_id: u64,
    pub worker_id: u64,
    pub slice: Slice,
    pub spsa_request: Option<&'a SpsaRequest>,
    pub deadline_ms: i64,
}

/// Inserts an active lease.
pub fn insert(conn: &Connection, lease: &NewLease<'_>, now: i64) -> Result<u64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs, spsa_request,
                             created_ms, deadline_ms, variant)
         VALUES (?1, ?2, 'active', ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        lease.run_id as i64,
        lease.worker_id as i64,
        lease.slice.offset as i64,
        lease.slice.pairs,
        lease.spsa_request.map(serde_json::to_string).transpose()?,
        now,
        lease.deadline_ms,
        lease.slice.variant.map(|v| v as i64),
    ])?;
    Ok(conn.last_insert_rowid() as u64)
}

/// A lease by id.
pub fn load(conn: &Connection, id: u64) -> Result<Option<Lease>, StoreError> {
    let row = conn
        .prepare_cached(
            "SELECT id, run_id, worker_id, state, opening_offset, pairs, spsa_request, deadline_ms,
                    variant, created_ms
             FROM leases WHERE id = ?1",
        )?
        .query_row([id as i64], |r| {
            Ok((
                [r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?],
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, u32>(5)?,
                r.get::<_, Option<String>>(6)?,
                r.get::<_, i64>(7)?,
                r.get::<_, Option<i64>>(8)?,
                r.get::<_, i64>(9)?,
            ))
        })
        .optional()?;
    let Some((
        [id, run_id, worker_id],
        state,
        offset,
        pairs,
        request,
        deadline_ms,
        variant,
        created_ms,
    )) = row
    else {
        return Ok(None);
    };
    Ok(Some(Lease {
        id: id as u64,
        run_id: run_id as u64,
        worker_id: worker_id as u64,
        state: LeaseState::parse(&state)
            .ok_or_else(|| StoreError::Schema(format!("unknown lease state {state:?}")))?,
        opening_offset: count(offset),
        pairs,
        spsa_request: request.as_deref().map(serde_json::from_str).transpose()?,
        created_ms,
        deadline_ms,
        variant: variant.map(|v| count(v) as usize),
    }))
}

/// Marks every active lease whose deadline is before `now` as expired.
pub fn expire_overdue(conn: &Connection, now: Settled) -> Result<usize, StoreError> {
    Ok(conn.prepare_cached("UPDATE leases SET state = 'expired', finished_ms = ?1 WHERE state = 'active' AND deadline_ms < ?1")?.execute(
        [now.ms()],
    )?)
}

/// The slices of run `run` (an SQL expression) still to be handed out
/// again, as rows `(opening_offset, id)` of their leases: expired or
/// released leases not yet reissued (through the partial index
/// `leases_to_reissue`), and done ones whose result was set aside because
/// their worker was excluded (through `run_excluded_workers`). Both parts
/// read only such rows, never the run's other leases, so asking costs the
/// same after a million leases as after ten.
pub fn requeued(run: &str) -> String {
    let [lapsed, set_aside] = requeued_parts(run);
    format!("{lapsed} UNION ALL {set_aside}")
}

/// The two parts of [`requeued`]: lapsed (expired or released) leases, and
/// done ones set aside.
fn requeued_parts(run: &str) -> [String; 2] {
    [
        format!(
            "SELECT opening_offset, id FROM leases INDEXED BY leases_to_reissue
             WHERE run_id = {run} AND reissued = 0 AND state IN ('expired', 'released')"
        ),
        format!(
            "SELECT l.opening_offset, l.id FROM run_excluded_workers e
             CROSS JOIN lease_results r ON r.run_id = e.run_id AND r.worker_id = e.worker_id
             CROSS JOIN leases l ON l.id = r.lease_id
             WHERE e.run_id = {run} AND r.excluded_ms IS NOT NULL
             AND l.state = 'done' AND l.reissued = 0"
        ),
    ]
}

/// Claims the lowest requeued ([`requeued`]) slice of a run. Each part is
/// cut to its lowest row before the two are compared: the lapsed part then
/// reads one entry of `leases_to_reissue` in index order, where ordering
/// their union sorted every lapsed lease of the run (2.7 ms at 105,000, when
/// a saturated coordinator lets a fleet's leases expire).
///
/// The run's id is written into the statement, not bound: SQLite re-plans a
/// statement at every new binding of a parameter that it compared with a
/// partial index's condition (here `leases_to_reissue`'s), so a bound id
/// would cost a fresh compilation at each call (the most expensive of a
/// RequestWork's). One cached statement a run instead.
pub fn take_requeued(conn: &Connection, run_id: u64) -> Result<Option<Slice>, StoreError> {
    let row = conn
        .prepare_cached(&take_requeued_sql(run_id))?
        .query_row([], |r| {
            Ok(Slice {
                offset: count(r.get(0)?),
                pairs: r.get(1)?,
                variant: r.get::<_, Option<i64>>(2)?.map(|v| count(v) as usize),
            })
        })
        .optional()?;
    Ok(row)
}

/// [`take_requeued`]'s statement for run `run_id`.
fn take_requeued_sql(run_id: u64) -> String {
    let [lapsed, set_aside] = requeued_parts(&run_id.to_string());
    format!(
        "UPDATE leases SET reissued = 1
         WHERE id = (SELECT id FROM (
             SELECT * FROM ({lapsed} ORDER BY 1, 2 LIMIT 1)
             UNION ALL
             SELECT * FROM ({set_aside} ORDER BY 1, 2 LIMIT 1)
         ) ORDER BY opening_offset, id LIMIT 1)
         RETURNING opening_offset, pairs, variant"
    )
}

/// Moves a lease to `state` (from whatever it was).
pub fn set_state(
    conn: &Connection,
    id: u64,
    state: LeaseState,
    now: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE leases SET state = ?2, finished_ms = ?3 WHERE id = ?1")?
        .execute(params![id as i64, state.as_str(), now])?;
    Ok(())
}

/// Hands back every active lease `worker_id` holds in `run_id` (their
/// slices are handed out again); returns how many.
pub fn release_all(
    conn: &Connection,
    run_id: u64,
    worker_id: u64,
    now: i64,
) -> Result<usize, StoreError> {
    Ok(conn
        .prepare_cached(
            "UPDATE leases SET state = 'released', finished_ms = ?3
             WHERE run_id = ?1 AND worker_id = ?2 AND state = 'active'",
        )?
        .execute(params![run_id as i64, worker_id as i64, now])?)
}

/// Hands back every active lease `worker_id` holds, in every run (their
/// slices are handed out again): the worker restarted. Returns how many.
pub fn release_worker(conn: &Connection, worker_id: u64, now: i64) -> Result<usize, StoreError> {
    Ok(conn
        .prepare_cached(
            "UPDATE leases SET state = 'released', finished_ms = ?2
             WHERE worker_id = ?1 AND state = 'active'",
        )?
        .execute(params![worker_id as i64, now])?)
}

/// Records progress and extends the deadline of an active lease.
pub fn extend(
    conn: &Connection,
    id: u64,
    pairs_done: u32,
    deadline_ms: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE leases SET pairs_done = ?2, deadline_ms = ?3 WHERE id = ?1 AND state = 'active'",
    )?
    .execute(params![id as i64, pairs_done, deadline_ms])?;
    Ok(())
}

/// What [`finish`] did to a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// It was active and in time: now `done`, its result to be counted.
    Done,
    /// It was active but its deadline had passed: now `expired`.
    Lapsed,
    /// It was no longer active; it stays in this state.
    Was(LeaseState),
    /// There is no such lease.
    Unknown,
}

/// Ends lease `id` with a result at `now`: an active lease in time becomes
/// `done`, one past its deadline `expired`. On that path this is one
/// statement and reads the row no other way; only a lease that was no
/// longer active is read, to say what it was.
pub fn finish(conn: &Connection, id: u64, now: Settled) -> Result<Finished, StoreError> {
    let state = conn
        .prepare_cached(
            "UPDATE leases
             SET state = CASE WHEN deadline_ms < ?2 THEN 'expired' ELSE 'done' END,
                 finished_ms = ?2
             WHERE id = ?1 AND state = 'active'
             RETURNING state",
        )?
        .query_row(params![id as i64, now.ms()], |r| r.get::<_, String>(0))
        .optional()?;
    match state.as_deref() {
        Some("done") => return Ok(Finished::Done),
        Some(_) => return Ok(Finished::Lapsed),
        None => {}
    }
    let state: Option<String> = conn
        .prepare_cached("SELECT state FROM leases WHERE id = ?1")?
        .query_row([id as i64], |r| r.get(0))
        .optional()?;
    match state {
        None => Ok(Finished::Unknown),
        Some(state) => Ok(Finished::Was(LeaseState::parse(&state).ok_or_else(
            || StoreError::Schema(format!("unknown lease state {state:?}")),
        )?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claiming_a_requeued_slice_reuses_its_compiled_statement() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::store::migrations::migrate(&mut conn).unwrap();
        for _ in 0..3 {
            assert_eq!(take_requeued(&conn, 7).unwrap(), None);
        }
        let statement = conn.prepare_cached(&take_requeued_sql(7)).unwrap();
        let compiled_again = statement.get_status(rusqlite::StatementStatus::RePrepare);
        assert_eq!(compiled_again, 0, "re-prepared {compiled_again} times");
    }
}
