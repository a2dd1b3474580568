//! Rows of `lease_results` (every counted result, by lease) and
//! `run_excluded_workers` (workers whose results a run set aside).
//!
//! Invariant: a run's totals (`runs.pairs`, the pentanomial, W/D/L, plies and
//! `run_reasons`) equal the sum of its rows here whose `excluded_ms` is NULL,
//! for every run whose results were all counted at schema version 11 or
//! later. A row is written in the transaction that counts it
//! ([`insert`]); exclusion marks rows and the run's totals are rebuilt from
//! the others in the same transaction ([`crate::runs::exclusion`]).

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use xq_engine::rules::Reason;
use xq_proto::{Arch, BatchOutcome, Pentanomial, Totals, Wdl};

use super::{StoreError, count};
use crate::runs::health::WorkerSums;
use crate::runs::lease::{Lease, StoredResult};

/// End reasons counted as a time loss.
pub const TIME_LOSS_REASONS: &[Reason] = &[Reason::TimeForfeit];
/// End reasons counted as an engine failure: a crash or an engine that did
/// not start (both reported as a resignation) and an illegal move.
pub const CRASH_REASONS: &[Reason] = &[Reason::Resignation, Reason::IllegalMove];

/// Games of `reasons` (counts by token) that ended by one of `which`.
fn games_with(reasons: &BTreeMap<String, u64>, which: &[Reason]) -> u64 {
    which
        .iter()
        .filter_map(|r| reasons.get(r.token()))
        .fold(0, |a, n| a.saturating_add(*n))
}

/// The `builds` column of the builds the two players played: `None` when
/// neither played a tagged build.
fn builds_text(builds: &[Option<Arch>; 2]) -> Option<String> {
    builds
        .iter()
        .any(Option::is_some)
        .then(|| builds.map(|b| b.map_or("-", Arch::name)).join(" "))
}

/// A `builds` column read back, as the report shows it: "A" when both
/// players played the build A, else "A / B" ("-": no tagged build).
pub fn builds_label(text: &str) -> String {
    match text.split_once(' ') {
        Some((a, b)) if a == b => a.to_owned(),
        Some((a, b)) => format!("{a} / {b}"),
        None => text.to_owned(),
    }
}

/// The builds the players of `lease_id`'s counted result played (ARCH
/// values; `None`: no tagged build), for the PGN of its games.
pub fn lease_builds(conn: &Connection, lease_id: u64) -> Result<[Option<String>; 2], StoreError> {
    let text: Option<String> = conn
        .prepare_cached("SELECT builds FROM lease_results WHERE lease_id = ?1")?
        .query_row([lease_id as i64], |r| r.get(0))
        .optional()?
        .flatten();
    let mut out = [None, None];
    if let Some(text) = text {
        for (slot, word) in out.iter_mut().zip(text.split(' ')) {
            *slot = (word != "-").then(|| word.to_owned());
        }
    }
    Ok(out)
}

/// Records a counted result of `lease`, whose players played `builds` on
/// the worker's machine; called in the counting transaction.
pub fn insert(
    conn: &Connection,
    lease: &Lease,
    outcome: &BatchOutcome,
    builds: &[Option<Arch>; 2],
) -> Result<(), StoreError> {
    let t = &outcome.totals;
    let [ll, ld, dd, dw, ww] = t.pentanomial.0.map(|c| c as i64);
    conn.prepare_cached(
        "INSERT INTO lease_results (lease_id, run_id, worker_id, pairs, penta_ll, penta_ld,
             penta_dd, penta_dw, penta_ww, wins, draws, losses, total_plies, time_losses,
             crashes, reasons, variant, builds)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18)",
    )?
    .execute(params![
        lease.id as i64,
        lease.run_id as i64,
        lease.worker_id as i64,
        t.pairs as i64,
        ll,
        ld,
        dd,
        dw,
        ww,
        t.wdl.wins as i64,
        t.wdl.draws as i64,
        t.wdl.losses as i64,
        t.total_plies as i64,
        games_with(&t.reasons, TIME_LOSS_REASONS) as i64,
        games_with(&t.reasons, CRASH_REASONS) as i64,
        serde_json::to_string(&t.reasons)?,
        outcome
            .variant
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?,
        builds_text(builds),
    ])?;
    Ok(())
}

/// Every worker with a result in `run_id`, by worker id.
pub fn per_worker(conn: &Connection, run_id: u64) -> Result<Vec<WorkerSums>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.worker_id, w.name, COUNT(*), SUM(r.pairs), SUM(r.penta_ll), SUM(r.penta_ld),
                SUM(r.penta_dd), SUM(r.penta_dw), SUM(r.penta_ww), SUM(r.wins), SUM(r.draws),
                SUM(r.losses), SUM(r.time_losses), SUM(r.crashes), e.reason,
                GROUP_CONCAT(DISTINCT r.builds)
         FROM lease_results r JOIN workers w ON w.id = r.worker_id
         LEFT JOIN run_excluded_workers e ON e.run_id = r.run_id AND e.worker_id = r.worker_id
         WHERE r.run_id = ?1 GROUP BY r.worker_id ORDER BY r.worker_id",
    )?;
    let rows = stmt.query_map([run_id as i64], |r| {
        let n = |i: usize| r.get::<_, i64>(i).map(count);
        Ok(WorkerSums {
            worker_id: n(0)?,
            name: r.get(1)?,
            leases: n(2)?,
            pairs: n(3)?,
            pentanomial: Pentanomial([n(4)?, n(5)?, n(6)?, n(7)?, n(8)?]),
            wdl: Wdl {
                wins: n(9)?,
                draws: n(10)?,
                losses: n(11)?,
            },
            time_losses: n(12)?,
            crashes: n(13)?,
            excluded: r.get(14)?,
            builds: r
                .get::<_, Option<String>>(15)?
                .map(|all| all.split(',').map(builds_label).collect())
                .unwrap_or_default(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The results of `run_id` that still count (not excluded), oldest lease
/// first. Fails when one of the run's done leases has no stored result (a
/// run from before schema version 11): its totals cannot be rebuilt.
pub fn counted(conn: &Connection, run_id: u64) -> Result<Vec<StoredResult>, StoreError> {
    let missing: i64 = conn
        .prepare_cached(
            "SELECT COUNT(*) FROM leases l WHERE l.run_id = ?1 AND l.state = 'done'
         AND NOT EXISTS (SELECT 1 FROM lease_results r WHERE r.lease_id = l.id)",
        )?
        .query_row([run_id as i64], |r| r.get(0))?;
    if missing > 0 {
        return Err(StoreError::invalid(
            "run",
            format!(
                "run {run_id} has {missing} results counted before per-lease results were stored; \
             its totals cannot be rebuilt without a worker"
            ),
        ));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT r.lease_id, l.variant, r.pairs, r.penta_ll, r.penta_ld, r.penta_dd, r.penta_dw,
                r.penta_ww, r.wins, r.draws, r.losses, r.total_plies, r.reasons, r.variant
         FROM lease_results r JOIN leases l ON l.id = r.lease_id
         WHERE r.run_id = ?1 AND r.excluded_ms IS NULL ORDER BY r.lease_id",
    )?;
    let rows = stmt
        .query_map([run_id as i64], |r| {
            let n = |i: usize| r.get::<_, i64>(i).map(count);
            Ok((
                n(0)?,
                r.get::<_, Option<i64>>(1)?.map(|v| count(v) as usize),
                Totals {
                    pairs: n(2)?,
                    pentanomial: Pentanomial([n(3)?, n(4)?, n(5)?, n(6)?, n(7)?]),
                    wdl: Wdl {
                        wins: n(8)?,
                        draws: n(9)?,
                        losses: n(10)?,
                    },
                    total_plies: n(11)?,
                    reasons: BTreeMap::new(),
                },
                r.get::<_, String>(12)?,
                r.get::<_, Option<String>>(13)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(lease_id, variant, mut totals, reasons, stats)| {
            totals.reasons = serde_json::from_str(&reasons)?;
            Ok(StoredResult {
                lease_id,
                variant,
                totals,
                stats: stats.as_deref().map(serde_json::from_str).transpose()?,
            })
        })
        .collect()
}

/// Excludes `worker_id` from `run_id` for `reason`: its stored results stop
/// counting and its active leases of the run are released (handed out again
/// to others). Returns whether the worker was not excluded before. The
/// caller rebuilds the run's totals in the same transaction.
pub fn exclude(
    conn: &Connection,
    run_id: u64,
    worker_id: u64,
    reason: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let added = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO run_excluded_workers (run_id, worker_id, reason, unix_ms)
         VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![run_id as i64, worker_id as i64, reason, now])?;
    conn.prepare_cached(
        "UPDATE lease_results SET excluded_ms = ?3
         WHERE run_id = ?1 AND worker_id = ?2 AND excluded_ms IS NULL",
    )?
    .execute(params![run_id as i64, worker_id as i64, now])?;
    conn.prepare_cached(
        "UPDATE leases SET state = 'released', finished_ms = ?3
         WHERE run_id = ?1 AND worker_id = ?2 AND state = 'active'",
    )?
    .execute(params![run_id as i64, worker_id as i64, now])?;
    Ok(added > 0)
}
