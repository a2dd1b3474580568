//! What the cluster is doing, as read-only aggregates: each worker with the
//! games it played and the lease it holds, and the counts `/metrics`
//! exports. Nothing here writes.

use rusqlite::{Connection, OptionalExtension};

use xq_proto::Machine;

use super::{StoreError, count};

/// A registered worker and its activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerActivity {
    pub id: u64,
    pub name: String,
    pub threads: u32,
    pub version: String,
    /// The engine's bench node count the worker reported.
    pub signature: u64,
    /// Nodes per second of that bench at the worker's start; `None` when it
    /// did not measure it.
    pub bench_nps: Option<u64>,
    pub registered_ms: i64,
    pub last_seen_ms: i64,
    /// Games of its counted leases (two per pair).
    pub games: u64,
    /// Leases it handed in that were counted.
    pub leases_done: u64,
    /// Leases that ran past their deadline while it held them.
    pub leases_expired: u64,
    /// The active lease it holds at `now`: `(lease id, run id, pairs)`.
    pub current: Option<(u64, u64, u32)>,
    /// The user whose token registered it (`None` for an in-memory token
    /// or a worker from before tokens).
    pub owner: Option<String>,
    /// Its machine; `None`: it reported none.
    pub machine: Option<Machine>,
    /// The build tools it reported (none: it builds no source engine).
    pub tools: std::collections::BTreeSet<String>,
}

/// Every worker, most recently seen first.
pub fn workers(conn: &Connection, now: i64) -> Result<Vec<WorkerActivity>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT w.id, w.name, w.threads, w.version, w.signature, w.registered_ms, w.last_seen_ms,
            (SELECT COALESCE(SUM(pairs), 0) FROM leases l
             WHERE l.worker_id = w.id AND l.state = 'done'),
            (SELECT COUNT(*) FROM leases l WHERE l.worker_id = w.id AND l.state = 'done'),
            (SELECT COUNT(*) FROM leases l WHERE l.worker_id = w.id AND l.state = 'expired'),
            w.bench_nps,
            (SELECT u.name FROM tokens t JOIN users u ON u.id = t.user_id
             WHERE t.id = w.token_key),
            w.machine,
            w.tools
         FROM workers w ORDER BY w.last_seen_ms DESC, w.id DESC",
    )?;
    let rows = stmt
        .query_map([], |r| {
            let activity = WorkerActivity {
                id: count(r.get(0)?),
                name: r.get(1)?,
                threads: r.get(2)?,
                version: r.get(3)?,
                signature: r.get::<_, i64>(4)? as u64,
                registered_ms: r.get(5)?,
                last_seen_ms: r.get(6)?,
                games: 2 * count(r.get(7)?),
                leases_done: count(r.get(8)?),
                leases_expired: count(r.get(9)?),
                bench_nps: r.get::<_, Option<i64>>(10)?.map(count),
                current: None,
                owner: r.get(11)?,
                machine: None,
                tools: super::workers::tools_of(&r.get::<_, String>(13)?),
            };
            Ok((activity, r.get::<_, Option<String>>(12)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut current = conn.prepare_cached(
        "SELECT id, run_id, pairs FROM leases
         WHERE worker_id = ?1 AND state = 'active' AND deadline_ms >= ?2
         ORDER BY id DESC LIMIT 1",
    )?;
    rows.into_iter()
        .map(|(mut w, machine)| {
            w.machine = super::workers::parse_machine(w.id, machine)?;
            w.current = current
                .query_row([w.id as i64, now], |r| {
                    Ok((count(r.get(0)?), count(r.get(1)?), r.get(2)?))
                })
                .optional()?;
            Ok(w)
        })
        .collect()
}

/// Cluster-wide counts for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Leases active and within their deadline.
    pub leases_in_flight: u64,
    /// Leases whose result was counted, since the database was made.
    pub results_counted: u64,
    pub runs_active: u64,
    pub workers: u64,
}

pub fn counts(conn: &Connection, now: i64) -> Result<Counts, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT
                (SELECT COUNT(*) FROM leases WHERE state = 'active' AND deadline_ms >= ?1),
                (SELECT COUNT(*) FROM leases WHERE state = 'done'),
                (SELECT COUNT(*) FROM runs WHERE state = 'active'),
                (SELECT COUNT(*) FROM workers)",
        )?
        .query_row([now], |r| {
            Ok(Counts {
                leases_in_flight: count(r.get(0)?),
                results_counted: count(r.get(1)?),
                runs_active: count(r.get(2)?),
                workers: count(r.get(3)?),
            })
        })?)
}
