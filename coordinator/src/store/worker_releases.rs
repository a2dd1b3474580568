//! Worker releases: uploaded `xq-worker` executables, stored as
//! [`super::blobs`], registered by version and target triple by an admin.
//!
//! The one source of the version workers must have: the newest release
//! registered as required ([`required`]), whatever its target. A worker
//! older than it is refused (at registration and when it asks for work); a
//! worker with `--auto-update` downloads the newest release of its own
//! target ([`for_target`]) and replaces itself. A release is never
//! replaced: the same version and target name the same bytes forever.

use rusqlite::{Connection, OptionalExtension, params};
use xq_proto::WorkerVersion;

use super::{StoreError, blobs, events, users};
use crate::access::UserRole;
use crate::events::{Actor, EventKind};

/// One registered release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub version: WorkerVersion,
    /// Its target triple (checked by `xq_proto::worker_version::check_target`).
    pub target: String,
    /// SHA-256 of the executable, lowercase hex, and its size in bytes.
    pub sha256: String,
    pub size: u64,
    /// Workers older than it are refused.
    pub required: bool,
    /// The admin who registered it.
    pub owner: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
}

/// A release to register: the stored blob `sha256` of `size` bytes as
/// `version` for `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRelease {
    pub version: WorkerVersion,
    pub target: String,
    pub sha256: String,
    pub size: u64,
    pub required: bool,
}

const SELECT: &str =
    "SELECT r.version, r.target, r.sha256, r.size, r.required, u.name, r.created_ms
     FROM worker_releases r LEFT JOIN users u ON u.id = r.owner_id";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Release> {
    let version: String = r.get(0)?;
    Ok(Release {
        version: version.parse().map_err(|e: xq_proto::VersionError| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })?,
        target: r.get(1)?,
        sha256: r.get(2)?,
        size: super::count(r.get(3)?),
        required: r.get(4)?,
        owner: r.get(5)?,
        created_ms: r.get(6)?,
    })
}

/// Every release, newest version first (then by target).
pub fn list(conn: &Connection) -> Result<Vec<Release>, StoreError> {
    let mut stmt = conn.prepare_cached(SELECT)?;
    let mut found = stmt.query_map([], row)?.collect::<Result<Vec<_>, _>>()?;
    found.sort_by(|a, b| {
        b.version
            .cmp(&a.version)
            .then_with(|| a.target.cmp(&b.target))
    });
    Ok(found)
}

/// The version workers must have: the newest required release's; `None`
/// when no release is required.
pub fn required(conn: &Connection) -> Result<Option<WorkerVersion>, StoreError> {
    Ok(required_of(&list(conn)?))
}

/// Every release ([`list`]) and the required version ([`required`]), in
/// one read: what `ListWorkerReleases` and the download page show.
pub fn listing(conn: &Connection) -> Result<(Vec<Release>, Option<WorkerVersion>), StoreError> {
    let found = list(conn)?;
    let required = required_of(&found);
    Ok((found, required))
}

fn required_of(releases: &[Release]) -> Option<WorkerVersion> {
    releases
        .iter()
        .filter(|r| r.required)
        .map(|r| r.version.clone())
        .max()
}

/// The newest release for `target`, if any.
pub fn for_target(conn: &Connection, target: &str) -> Result<Option<Release>, StoreError> {
    Ok(list(conn)?.into_iter().find(|r| r.target == target))
}

/// `Forbidden` unless the user `owner` is an admin: only admins register
/// (and upload) worker releases.
pub fn check_may_register(conn: &Connection, owner: u64) -> Result<(), StoreError> {
    let user = users::by_id(conn, owner)?;
    if user.role != UserRole::Admin {
        return Err(StoreError::Forbidden(format!(
            "only an admin registers worker releases; {} is a {}",
            user.name,
            user.role.as_str()
        )));
    }
    Ok(())
}

/// Registers the stored blob of `new` for the admin `owner`, logged as a
/// `worker_release` event by `actor` at `now`, in the caller's transaction. Returns
/// the release and whether it was registered with these bytes already (then
/// only `required` may change, from false to true). Refused: a user who is
/// not an admin, a blob that is not stored with `new.size` bytes, the same
/// version and target with other bytes.
pub fn register(
    conn: &Connection,
    new: &NewRelease,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<(Release, bool), StoreError> {
    check_may_register(conn, owner)?;
    xq_proto::worker_version::check_target("release.target", &new.target)?;
    let version = new.version.to_string();
    let what = format!("worker release {version} for {}", new.target);
    let old = list(conn)?
        .into_iter()
        .find(|r| r.target == new.target && r.version == new.version);
    if let Some(old) = old {
        if old.sha256 != new.sha256 {
            return Err(StoreError::invalid(
                "release.sha256",
                format!(
                    "{what} is registered already with sha256 {}; releases are never replaced: \
                     give the new build a new version",
                    old.sha256
                ),
            ));
        }
        if new.required && !old.required {
            conn.execute(
                "UPDATE worker_releases SET required = 1 WHERE target = ?1 AND version = ?2",
                params![new.target, old.version.to_string()],
            )?;
            events::log(
                conn,
                actor,
                EventKind::WorkerRelease,
                None,
                &format!("{what} required"),
                now,
            )?;
        }
        let release = Release {
            required: old.required || new.required,
            ..old
        };
        return Ok((release, true));
    }
    match blobs::size(conn, &new.sha256)? {
        Some(size) if size == new.size => {}
        Some(size) => {
            return Err(StoreError::invalid(
                "release.size",
                format!(
                    "{what}: {} bytes stated, the stored blob {} has {size}",
                    new.size, new.sha256
                ),
            ));
        }
        None => {
            return Err(StoreError::NotFound(format!(
                "{what}: no blob with sha256 {} is stored; upload it first",
                new.sha256
            )));
        }
    }
    conn.execute(
        "INSERT INTO worker_releases (version, target, sha256, size, required, owner_id, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            version,
            new.target,
            new.sha256,
            new.size as i64,
            new.required,
            owner as i64,
            now
        ],
    )?;
    let detail = format!(
        "{what}{} sha256 {} ({} bytes)",
        if new.required { " (required)" } else { "" },
        new.sha256,
        new.size
    );
    events::log(conn, actor, EventKind::WorkerRelease, None, &detail, now)?;
    let release = conn
        .query_row(
            &format!("{SELECT} WHERE r.target = ?1 AND r.version = ?2"),
            params![new.target, version],
            row,
        )
        .optional()?
        .ok_or_else(|| StoreError::Schema(format!("{what} vanished")))?;
    Ok((release, false))
}

/// Stores what `source` yields (see [`blobs::insert`]) and [`register`]s
/// it, in the caller's transaction (tests: the doors upload, then
/// register).
#[cfg(test)]
pub fn add(
    conn: &Connection,
    new: &NewRelease,
    source: impl std::io::Read,
    owner: u64,
    actor: &Actor,
    now: i64,
) -> Result<(Release, bool), StoreError> {
    blobs::insert(conn, &new.sha256, new.size, source)?;
    register(conn, new, owner, actor, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::migrations;

    fn new(version: &str, target: &str, bytes: &[u8], required: bool) -> NewRelease {
        NewRelease {
            version: version.parse().unwrap(),
            target: target.to_owned(),
            sha256: xq_proto::blob::sha256_hex(bytes),
            size: bytes.len() as u64,
            required,
        }
    }

    #[test]
    fn the_newest_required_release_sets_the_required_version() {
        let conn = migrations::memory();
        let root = users::insert(&conn, "root", UserRole::Admin, None, true, 1).unwrap();
        let x86 = "x86_64-unknown-linux-gnu";
        assert_eq!(required(&conn).unwrap(), None);
        let add_one =
            |v, t, b: &[u8], req| add(&conn, &new(v, t, b, req), b, root, &Actor::cli(), 5);
        add_one("0.9.0", x86, b"nine", true).unwrap();
        add_one("0.10.0", x86, b"ten", false).unwrap();
        add_one("0.2.0", "aarch64-unknown-linux-gnu", b"two", true).unwrap();
        assert_eq!(required(&conn).unwrap(), Some("0.9.0".parse().unwrap()));
        let newest = for_target(&conn, x86).unwrap().unwrap();
        assert_eq!(
            (newest.version.to_string(), newest.required),
            ("0.10.0".to_owned(), false)
        );
        let (again, existed) = add_one("0.10.0", x86, b"ten", true).unwrap();
        assert!(existed && again.required);
        assert_eq!(required(&conn).unwrap(), Some("0.10.0".parse().unwrap()));
        let err = add_one("0.10.0", x86, b"other", false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("never replaced"), "{err}");
        assert_eq!(
            for_target(&conn, "riscv64gc-unknown-linux-gnu").unwrap(),
            None
        );
        assert_eq!(list(&conn).unwrap()[0].owner.as_deref(), Some("root"));
    }

    #[test]
    fn only_an_admin_registers_a_release() {
        let conn = migrations::memory();
        let dev = users::insert(&conn, "dev", UserRole::Approver, None, true, 1).unwrap();
        let release = new("0.2.0", "x86_64-unknown-linux-gnu", b"w", true);
        let err = add(&conn, &release, &b"w"[..], dev, &Actor::cli(), 5).unwrap_err();
        assert!(matches!(err, StoreError::Forbidden(_)), "{err}");
    }
}
