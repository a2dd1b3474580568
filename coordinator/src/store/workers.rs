//! Registered workers.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::Machine;

use super::StoreError;
use crate::runs::Applicant;

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
    /// Its machine; `None`: it reported none.
    pub machine: Option<Machine>,
    /// The build tools on its PATH (names of [`xq_proto::engine_source::BUILD_TOOLS`]).
    pub tools: BTreeSet<String>,
    /// The target triple it was built for; empty: not reported.
    pub target: String,
    /// The version it replaced itself from (`--auto-update`), if it did.
    pub updated_from: Option<String>,
    /// The id it keeps across restarts ([`xq_proto::machine::is_machine_id`]);
    /// `None`: it sent none, and is a new worker every time.
    pub machine_id: Option<String>,
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

/// How [`register`] placed a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// A new row.
    New(u64),
    /// The row its machine id and token had before: the same id, the leases
    /// it still held handed back (how many).
    Again { id: u64, released: usize },
}

impl Registered {
    pub fn id(self) -> u64 {
        match self {
            Registered::New(id) | Registered::Again { id, .. } => id,
        }
    }
}

/// Registers `worker` at `now`: a worker with a machine id that its token
/// registered before (the latest such row) takes that row again, updated
/// to what it says now, and the leases its previous process held are
/// handed back (that process is gone: one machine id is one running
/// worker, [`xq_proto::machine::is_machine_id`]); any other worker gets a
/// new row. A change of version clears the last update failure (it was
/// about the version before). Call in a transaction.
pub fn register(conn: &Connection, worker: &NewWorker, now: i64) -> Result<Registered, StoreError> {
    let again = match (&worker.machine_id, worker.token_key) {
        (Some(machine_id), Some(token_key)) => conn
            .prepare_cached(
                "SELECT id FROM workers WHERE machine_id = ?1 AND token_key = ?2
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![machine_id, token_key], |r| r.get::<_, i64>(0))
            .optional()?,
        _ => None,
    };
    let Some(id) = again else {
        return insert(conn, worker, now).map(Registered::New);
    };
    conn.prepare_cached(
        "UPDATE workers SET name = ?2, threads = ?3, signature = ?4, last_seen_ms = ?5,
                bench_nps = ?6, machine = ?7, tools = ?8, target = ?9, updated_from = ?10,
                update_failed_to = CASE WHEN version = ?11 THEN update_failed_to END,
                update_failure = CASE WHEN version = ?11 THEN update_failure END,
                update_failed_ms = CASE WHEN version = ?11 THEN update_failed_ms END,
                version = ?11
         WHERE id = ?1",
    )?
    .execute(params![
        id,
        worker.name,
        worker.threads,
        worker.signature as i64,
        now,
        worker.bench_nps.map(|n| n.min(i64::MAX as u64) as i64),
        machine_json(worker)?,
        tools_text(&worker.tools),
        worker.target,
        worker.updated_from,
        worker.version,
    ])?;
    let released = super::leases::release_worker(conn, id as u64, now)?;
    Ok(Registered::Again {
        id: id as u64,
        released,
    })
}

fn machine_json(worker: &NewWorker) -> Result<Option<String>, StoreError> {
    Ok(worker
        .machine
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?)
}

/// Inserts a worker and returns its id.
pub fn insert(conn: &Connection, worker: &NewWorker, now: i64) -> Result<u64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO workers (name, threads, version, signature, registered_ms, last_seen_ms,
                              token_key, bench_nps, machine, tools, target, updated_from,
                              machine_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        worker.name,
        worker.threads,
        worker.version,
        worker.signature as i64,
        now,
        worker.token_key,
        worker.bench_nps.map(|n| n.min(i64::MAX as u64) as i64),
        machine_json(worker)?,
        tools_text(&worker.tools),
        worker.target,
        worker.updated_from,
        worker.machine_id,
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

/// A stored machine's JSON read back; a bad one is an error naming the
/// worker.
pub fn parse_machine(id: u64, json: Option<String>) -> Result<Option<Machine>, StoreError> {
    json.map(|text| {
        serde_json::from_str(&text)
            .map_err(|e| StoreError::Schema(format!("worker {id}: stored machine: {e}")))
    })
    .transpose()
}

/// Worker `id`'s machine as it registered (`None`: it reported none);
/// `NotFound` for an unknown worker.
pub fn machine(conn: &Connection, id: u64) -> Result<Option<Machine>, StoreError> {
    let json: Option<String> = conn
        .prepare_cached("SELECT machine FROM workers WHERE id = ?1")?
        .query_row([id as i64], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("unknown worker {id}")))?;
    parse_machine(id, json)
}

/// What admission needs of worker `id`: the CPUs it may use, its machine
/// and its build tools, as it registered, and the speeds it measured in
/// runs. An unknown worker is `NotFound`.
pub fn applicant(conn: &Connection, id: u64) -> Result<Applicant, StoreError> {
    let row = conn
        .prepare_cached("SELECT threads, machine, tools FROM workers WHERE id = ?1")?
        .query_row([id as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("unknown worker {id}")))?;
    let mut applicant = applicant_of(id, row)?;
    applicant.measured = super::speeds::nps_by_run(conn, id)?;
    Ok(applicant)
}

/// Worker `id`'s applicant from its `threads, machine, tools` columns, with
/// no speeds.
pub fn applicant_of(
    id: u64,
    (threads, machine, tools): (i64, Option<String>, String),
) -> Result<Applicant, StoreError> {
    Ok(Applicant {
        threads: u32::try_from(threads).unwrap_or(u32::MAX),
        machine: parse_machine(id, machine)?,
        tools: tools_of(&tools),
        measured: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_id_keeps_its_row_for_its_token_only() {
        let mut conn = super::super::migrations::memory();
        let worker = |machine_id: Option<&str>, token_key, version: &str| NewWorker {
            name: "box".to_owned(),
            threads: 2,
            version: version.to_owned(),
            signature: 1,
            bench_nps: None,
            token_key,
            machine: None,
            tools: BTreeSet::new(),
            target: String::new(),
            updated_from: None,
            machine_id: machine_id.map(str::to_owned),
        };
        let id = "ab".repeat(16);
        let first = register(&conn, &worker(Some(&id), Some(1), "0.1.0"), 1).unwrap();
        let Registered::New(row) = first else {
            panic!("{first:?}")
        };
        conn.execute(
            "UPDATE workers SET update_failed_to = '0.2.0', update_failure = 'x' WHERE id = ?1",
            [row as i64],
        )
        .unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(
            "INSERT INTO runs (id, spec, kind, priority, state, created_ms, updated_ms)
                 VALUES (1, '{}', 'games', 0, 'active', 0, 0);",
        )
        .unwrap();
        tx.execute(
            "INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs, created_ms,
                                 deadline_ms) VALUES (1, ?1, 'active', 0, 2, 0, 9)",
            [row as i64],
        )
        .unwrap();
        tx.commit().unwrap();
        let again = register(&conn, &worker(Some(&id), Some(1), "0.2.0"), 5).unwrap();
        assert_eq!(
            again,
            Registered::Again {
                id: row,
                released: 1
            }
        );
        let (version, failure, seen): (String, Option<String>, i64) = conn
            .query_row(
                "SELECT version, update_failure, last_seen_ms FROM workers WHERE id = ?1",
                [row as i64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((version.as_str(), failure, seen), ("0.2.0", None, 5));
        let other_token = register(&conn, &worker(Some(&id), Some(2), "0.2.0"), 6).unwrap();
        assert!(matches!(other_token, Registered::New(n) if n != row));
        let none = register(&conn, &worker(None, Some(1), "0.2.0"), 7).unwrap();
        assert!(matches!(none, Registered::New(_)));
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM workers", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 3);
    }

    #[test]
    fn a_machine_is_stored_with_the_worker_and_read_for_admission() {
        let conn = super::super::migrations::memory();
        let machine = Machine {
            cpu_model: "ARM Neoverse-N1".to_owned(),
            isa: "aarch64".to_owned(),
            flags: "neon,dotprod".parse().unwrap(),
            cores: 64,
            memory_mib: 126_000,
        };
        let worker = |machine| NewWorker {
            name: "graviton".to_owned(),
            threads: 64,
            version: "0".to_owned(),
            signature: 1,
            bench_nps: Some(900_000),
            token_key: None,
            machine,
            tools: BTreeSet::new(),
            target: String::new(),
            updated_from: None,
            machine_id: None,
        };
        let with = insert(&conn, &worker(Some(machine.clone())), 1).unwrap();
        let without = insert(&conn, &worker(None), 2).unwrap();
        assert_eq!(
            applicant(&conn, with).unwrap(),
            Applicant {
                threads: 64,
                machine: Some(machine),
                tools: BTreeSet::new(),
                measured: Default::default(),
            }
        );
        assert_eq!(applicant(&conn, without).unwrap().machine, None);
        assert!(matches!(applicant(&conn, 99), Err(StoreError::NotFound(_))));
        conn.execute(
            "UPDATE workers SET machine = '{\"isa\":1}' WHERE id = ?1",
            [with as i64],
        )
        .unwrap();
        let err = applicant(&conn, with).unwrap_err().to_string();
        assert!(
            err.contains(&format!("worker {with}: stored machine")),
            "{err}"
        );
    }
}
