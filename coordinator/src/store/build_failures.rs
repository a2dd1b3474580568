//! Rows of `build_failures`: the builds of a run's source engines that
//! failed, one per worker and run. A worker with a row gets no more of the
//! run's leases (`runs::candidates` leaves the run out for it).

use rusqlite::{Connection, params};
use xq_proto::engine_source::FailedBuild;

use super::{StoreError, count};

/// Most failures [`for_run`] returns: the latest.
pub const MAX_LISTED: usize = 32;

/// A stored failure, with the worker's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFailure {
    pub worker_id: u64,
    pub worker_name: String,
    pub repo: String,
    pub failed: FailedBuild,
    pub unix_ms: i64,
}

/// Records that the build of `repo`'s `failed.commit` failed on `worker_id`
/// in `run_id`'s lease `lease_id`; a second report of the same worker in the
/// same run is ignored. Returns whether it was recorded.
pub fn insert(
    conn: &Connection,
    run_id: u64,
    worker_id: u64,
    lease_id: u64,
    repo: &str,
    failed: &FailedBuild,
    now: i64,
) -> Result<bool, StoreError> {
    let added = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO build_failures
                 (run_id, worker_id, lease_id, repo, commit_id, reason, log_tail, unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            run_id as i64,
            worker_id as i64,
            lease_id as i64,
            repo,
            failed.commit,
            failed.reason,
            failed.log_tail,
            now
        ])?;
    Ok(added > 0)
}

/// Distinct workers on which a build of `run_id` failed.
pub fn workers_failed(conn: &Connection, run_id: u64) -> Result<u64, StoreError> {
    Ok(count(
        conn.prepare_cached("SELECT COUNT(*) FROM build_failures WHERE run_id = ?1")?
            .query_row([run_id as i64], |r| r.get(0))?,
    ))
}

/// The latest [`MAX_LISTED`] failures of `run_id`, oldest first.
pub fn for_run(conn: &Connection, run_id: u64) -> Result<Vec<StoredFailure>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT * FROM (
             SELECT b.worker_id, w.name, b.repo, b.commit_id, b.reason, b.log_tail, b.unix_ms
             FROM build_failures b JOIN workers w ON w.id = b.worker_id
             WHERE b.run_id = ?1 ORDER BY b.unix_ms DESC, b.worker_id DESC LIMIT ?2)
         ORDER BY unix_ms, worker_id",
    )?;
    let rows = stmt.query_map(params![run_id as i64, MAX_LISTED as i64], |r| {
        Ok(StoredFailure {
            worker_id: count(r.get(0)?),
            worker_name: r.get(1)?,
            repo: r.get(2)?,
            failed: FailedBuild {
                commit: r.get(3)?,
                reason: r.get(4)?,
                log_tail: r.get(5)?,
            },
            unix_ms: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failure_per_worker_and_run_is_kept_and_listed_oldest_first() {
        let conn = super::super::migrations::memory();
        conn.execute_batch(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                 VALUES ('{}', 'games', 0, 'active', 1, 1);
             INSERT INTO workers (name, threads, version, signature, registered_ms, last_seen_ms)
                 VALUES ('w1', 1, '0', 0, 1, 1), ('w2', 1, '0', 0, 1, 1);
             INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs,
                                 created_ms, deadline_ms)
                 VALUES (1, 1, 'released', 0, 1, 1, 2), (1, 2, 'released', 0, 1, 1, 2);",
        )
        .unwrap();
        let failed = |reason: &str| FailedBuild {
            commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            reason: reason.to_owned(),
            log_tail: "main.cpp:1:1: error: expected ';'\n".to_owned(),
        };
        let repo = "file:///src/engine";
        assert!(insert(&conn, 1, 2, 2, repo, &failed("exit 1"), 10).unwrap());
        assert!(insert(&conn, 1, 1, 1, repo, &failed("exit 2"), 20).unwrap());
        assert!(!insert(&conn, 1, 1, 1, repo, &failed("again"), 30).unwrap());
        assert_eq!(workers_failed(&conn, 1).unwrap(), 2);
        let listed = for_run(&conn, 1).unwrap();
        let seen: Vec<(&str, &str)> = listed
            .iter()
            .map(|f| (f.worker_name.as_str(), f.failed.reason.as_str()))
            .collect();
        assert_eq!(seen, [("w2", "exit 1"), ("w1", "exit 2")]);
        assert!(listed[0].failed.log_tail.contains("expected ';'"));
        let mut long = failed("too long");
        long.log_tail = "x".repeat(8193);
        conn.execute("DELETE FROM build_failures WHERE worker_id = 2", [])
            .unwrap();
        assert!(
            !insert(&conn, 1, 2, 2, repo, &long, 40).unwrap(),
            "the table's CHECK keeps an unbounded log out"
        );
    }
}
