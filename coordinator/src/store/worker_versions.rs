//! Each worker's version against the required one
//! ([`super::worker_releases::required`]): whether it is refused as too
//! old, and where its self-update stands, for the version checks of
//! `Register` and `RequestWork`, the workers page and `report`.

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::WorkerVersion;

use super::{StoreError, count, worker_releases};

/// Where a worker's version stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateState {
    /// At or above the required version (or none is required).
    UpToDate,
    /// At or above it after replacing itself from version `from`.
    Updated { from: String },
    /// Below `required`: refused, no failed update reported.
    TooOld { required: WorkerVersion },
    /// Below `required`, and its last update, to `to` (`None`: it found no
    /// release), failed for `reason`.
    Failed {
        required: WorkerVersion,
        to: Option<String>,
        reason: String,
    },
}

impl UpdateState {
    /// The state of a worker of `version` that replaced itself from
    /// `updated_from` and last failed to update as `failed` (to, reason),
    /// against `required`. A version that does not parse (a worker from
    /// before versions were checked) is too old for any requirement.
    pub fn of(
        version: &str,
        updated_from: Option<String>,
        failed: Option<(Option<String>, String)>,
        required: Option<&WorkerVersion>,
    ) -> UpdateState {
        if let Some(required) = required {
            let old = version
                .parse::<WorkerVersion>()
                .map_or(true, |v| v < *required);
            if old {
                return match failed {
                    Some((to, reason)) => UpdateState::Failed {
                        required: required.clone(),
                        to,
                        reason,
                    },
                    None => UpdateState::TooOld {
                        required: required.clone(),
                    },
                };
            }
        }
        match updated_from {
            Some(from) => UpdateState::Updated { from },
            None => UpdateState::UpToDate,
        }
    }

    /// One short line: `up to date`, `updated from 0.1.0`, `too old
    /// (requires 0.2.0)`, `update to 0.2.0 failed: …`.
    pub fn text(&self) -> String {
        match self {
            UpdateState::UpToDate => "up to date".to_owned(),
            UpdateState::Updated { from } => format!("updated from {from}"),
            UpdateState::TooOld { required } => format!("too old (requires {required})"),
            UpdateState::Failed {
                to: Some(to),
                reason,
                ..
            } => format!("update to {to} failed: {reason}"),
            UpdateState::Failed {
                to: None,
                reason,
                required,
            } => format!("update to {required} failed: {reason}"),
        }
    }

    /// The stable name of the state: `up_to_date`, `updated`, `too_old`, `failed`.
    pub fn name(&self) -> &'static str {
        match self {
            UpdateState::UpToDate => "up_to_date",
            UpdateState::Updated { .. } => "updated",
            UpdateState::TooOld { .. } => "too_old",
            UpdateState::Failed { .. } => "failed",
        }
    }
}

/// A worker's version and update state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerVersionRow {
    pub id: u64,
    pub name: String,
    pub version: String,
    /// Empty: not reported.
    pub target: String,
    pub last_seen_ms: i64,
    pub update: UpdateState,
}

const SELECT: &str = "SELECT id, name, version, target, last_seen_ms, updated_from,
            update_failed_to, update_failure
     FROM workers";

fn read(
    r: &rusqlite::Row<'_>,
    required: Option<&WorkerVersion>,
) -> rusqlite::Result<WorkerVersionRow> {
    let version: String = r.get(2)?;
    let to: Option<String> = r.get(6)?;
    let failed = r.get::<_, Option<String>>(7)?.map(|reason| (to, reason));
    let update = UpdateState::of(&version, r.get(5)?, failed, required);
    Ok(WorkerVersionRow {
        id: count(r.get(0)?),
        name: r.get(1)?,
        version,
        target: r.get(3)?,
        last_seen_ms: r.get(4)?,
        update,
    })
}

/// Every worker seen at or after `since` (unix ms), most recently seen first.
pub fn list(conn: &Connection, since: i64) -> Result<Vec<WorkerVersionRow>, StoreError> {
    let required = worker_releases::required(conn)?;
    let mut stmt = conn.prepare_cached(&format!(
        "{SELECT} WHERE last_seen_ms >= ?1 ORDER BY last_seen_ms DESC, id DESC"
    ))?;
    let rows = stmt
        .query_map([since], |r| read(r, required.as_ref()))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Worker `id`'s row (`NotFound` for an unknown id).
pub fn of_worker(conn: &Connection, id: u64) -> Result<WorkerVersionRow, StoreError> {
    let required = worker_releases::required(conn)?;
    conn.prepare_cached(&format!("{SELECT} WHERE id = ?1"))?
        .query_row([id as i64], |r| read(r, required.as_ref()))
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("unknown worker {id}")))
}

/// The version worker `id` must have when it is older than that (it gets
/// no work); `None` when it may work.
pub fn too_old(conn: &Connection, id: u64) -> Result<Option<TooOld>, StoreError> {
    let row = of_worker(conn, id)?;
    Ok(match row.update {
        UpdateState::TooOld { required } | UpdateState::Failed { required, .. } => Some(TooOld {
            worker_id: id,
            version: row.version,
            target: row.target,
            required,
        }),
        UpdateState::UpToDate | UpdateState::Updated { .. } => None,
    })
}

/// A worker refused as too old.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooOld {
    pub worker_id: u64,
    /// Its version, as it registered.
    pub version: String,
    pub target: String,
    pub required: WorkerVersion,
}

/// Records that worker `id` failed to update to `to` (`None`: it found no
/// release) for `reason` at `now`; it counts as a call of the worker.
pub fn record_failure(
    conn: &Connection,
    id: u64,
    to: Option<&WorkerVersion>,
    reason: &str,
    now: i64,
) -> Result<(), StoreError> {
    let n = conn.execute(
        "UPDATE workers SET update_failed_to = ?2, update_failure = ?3, update_failed_ms = ?4,
                            last_seen_ms = ?4
         WHERE id = ?1",
        params![id as i64, to.map(ToString::to_string), reason, now],
    )?;
    if n == 0 {
        return Err(StoreError::NotFound(format!("unknown worker {id}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> WorkerVersion {
        s.parse().unwrap()
    }

    #[test]
    fn a_worker_is_too_old_below_the_required_version_only() {
        let req = v("0.2.0");
        let of = |version, from: Option<&str>, failed| {
            UpdateState::of(version, from.map(str::to_owned), failed, Some(&req))
        };
        assert_eq!(of("0.2.0", None, None), UpdateState::UpToDate);
        assert_eq!(of("0.10.0", None, None), UpdateState::UpToDate);
        assert_eq!(of("0.1.9", None, None).text(), "too old (requires 0.2.0)");
        assert_eq!(of("test", None, None).name(), "too_old");
        assert_eq!(
            of("0.2.0", Some("0.1.0"), None).text(),
            "updated from 0.1.0"
        );
        let failed = of(
            "0.1.0",
            None,
            Some((
                Some("0.2.0".to_owned()),
                "the new binary does not run".to_owned(),
            )),
        );
        assert_eq!(
            failed.text(),
            "update to 0.2.0 failed: the new binary does not run"
        );
        assert_eq!(
            UpdateState::of("test", None, None, None),
            UpdateState::UpToDate
        );
    }
}
