//! Worker versions on the wire: the too-old check of `Register` and
//! `RequestWork`, the release a worker updates to, its failed updates, and
//! the cluster's versions for `report`. The required version is the newest
//! release registered as required ([`worker_releases::required`]); there
//! is no other source.

use tonic::Status;
use tonic::metadata::MetadataValue;
use xq_proto::worker_version::{self, REQUIRED_VERSION_KEY, WORKER_ID_KEY};
use xq_proto::{Invalid, WorkerVersion, pb};

use crate::service::registry::{NewRelease, Registry, Release, UploadQuota};
use crate::store::Store;
use crate::store::worker_versions::{TooOld, UpdateState, WorkerVersionRow};

/// How far back `report` lists the cluster's workers: a day, in ms.
pub const RECENT_MS: i64 = 24 * 3600 * 1000;

/// Longest failure reason stored, in bytes.
pub const MAX_REASON_BYTES: usize = 256;

/// The version checks and release lookups (on a read connection, so the
/// check of every `RequestWork` does not queue behind writes), and failed
/// updates (on the write store).
#[derive(Debug, Clone)]
pub struct Releases {
    registry: Registry,
    reader: Registry,
}

impl Releases {
    /// Writes to `store`, reads `reader` (e.g. [`Store::reader`] of it).
    pub fn new(store: Store, reader: Store) -> Self {
        Releases {
            registry: Registry::new(store, UploadQuota::default()),
            reader: Registry::new(reader, UploadQuota::default()),
        }
    }

    /// `Ok` when worker `id` may work; its too-old refusal otherwise.
    pub async fn check(&self, id: u64) -> Result<(), Status> {
        let old = self.reader.too_old(id).await?;
        match old {
            Some(old) => Err(refusal(&old)),
            None => Ok(()),
        }
    }

    /// The newest release for `target` and the required version.
    pub async fn for_target(&self, target: String) -> Result<pb::GetWorkerReleaseResponse, Status> {
        worker_version::check_target("target", &target)?;
        let (release, required) = self.reader.worker_release_and_required(target).await?;
        Ok(pb::GetWorkerReleaseResponse {
            release: release.map(Into::into),
            required_version: required.map(|v| v.to_string()).unwrap_or_default(),
        })
    }

    /// Records that worker `id` failed to update to `to` (empty: it found
    /// no release) for `reason`.
    pub async fn failed(&self, id: u64, to: String, reason: String) -> Result<(), Status> {
        let to = match to.as_str() {
            "" => None,
            text => Some(WorkerVersion::parse_field("to_version", text)?),
        };
        if reason.is_empty() || reason.len() > MAX_REASON_BYTES || reason.contains(['\n', '\r']) {
            return Err(Invalid::new(
                "reason",
                format!("give one line of 1 to {MAX_REASON_BYTES} bytes"),
            )
            .into());
        }
        tracing::warn!(worker_id = id, to = ?to.as_ref().map(ToString::to_string), %reason, "a worker's update failed");
        self.registry.update_failed(id, to, reason).await?;
        Ok(())
    }
}

/// The too-old refusal of `old`: FAILED_PRECONDITION naming both versions,
/// with the required version and the worker's id in its metadata.
pub fn refusal(old: &TooOld) -> Status {
    let mut status = Status::failed_precondition(worker_version::too_old_message(
        &old.version,
        &old.required,
        &old.target,
    ));
    let metadata = status.metadata_mut();
    if let Ok(v) = MetadataValue::try_from(old.required.to_string()) {
        metadata.insert(REQUIRED_VERSION_KEY, v);
    }
    metadata.insert(WORKER_ID_KEY, MetadataValue::from(old.worker_id));
    status
}

impl From<WorkerVersionRow> for pb::WorkerVersion {
    fn from(w: WorkerVersionRow) -> Self {
        let WorkerVersionRow {
            id,
            name,
            version,
            target,
            last_seen_ms,
            update,
        } = w;
        let mut out = pb::WorkerVersion {
            worker_id: id,
            worker_name: name,
            version,
            target,
            last_seen_unix_ms: last_seen_ms,
            update: pb::UpdateState::UpToDate.into(),
            updated_from: String::new(),
            failed_to: String::new(),
            failure: String::new(),
        };
        let state = match update {
            UpdateState::UpToDate => pb::UpdateState::UpToDate,
            UpdateState::Updated { from } => {
                out.updated_from = from;
                pb::UpdateState::Updated
            }
            UpdateState::TooOld { .. } => pb::UpdateState::TooOld,
            UpdateState::Failed { to, reason, .. } => {
                out.failed_to = to.unwrap_or_default();
                out.failure = reason;
                pb::UpdateState::Failed
            }
        };
        out.update = state.into();
        out
    }
}

impl From<Release> for pb::WorkerRelease {
    fn from(r: Release) -> Self {
        let Release {
            version,
            target,
            sha256,
            size,
            required,
            owner: _,
            created_ms,
        } = r;
        pb::WorkerRelease {
            version: version.to_string(),
            target,
            sha256,
            size,
            required,
            created_unix_ms: created_ms,
        }
    }
}

impl TryFrom<pb::WorkerRelease> for NewRelease {
    type Error = Invalid;

    fn try_from(r: pb::WorkerRelease) -> Result<Self, Invalid> {
        let pb::WorkerRelease {
            version,
            target,
            sha256,
            size,
            required,
            created_unix_ms: _,
        } = r;
        let version = WorkerVersion::parse_field("release.version", &version)?;
        worker_version::check_target("release.target", &target)?;
        if !xq_proto::is_sha256_hex(&sha256) {
            return Err(Invalid::new(
                "release.sha256",
                format!(
                    "{} is not 64 lowercase hex digits",
                    xq_proto::quote(&sha256)
                ),
            ));
        }
        Ok(NewRelease {
            version,
            target,
            sha256,
            size,
            required,
        })
    }
}

/// A listed release read back from the wire (the CLI's `worker-release list`).
pub fn release_from_wire(r: pb::WorkerRelease) -> Result<Release, Invalid> {
    let created_ms = r.created_unix_ms;
    let new = NewRelease::try_from(r)?;
    Ok(Release {
        version: new.version,
        target: new.target,
        sha256: new.sha256,
        size: new.size,
        required: new.required,
        owner: None,
        created_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_carries_the_required_version_and_the_worker() {
        let old = TooOld {
            worker_id: 12,
            version: "0.1.0".to_owned(),
            target: "x86_64-unknown-linux-gnu".to_owned(),
            required: "0.2.0".parse().unwrap(),
        };
        let status = refusal(&old);
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        assert!(status.message().contains("xq-worker 0.1.0"));
        assert!(status.message().contains("requires 0.2.0 or newer"));
        assert_eq!(
            status.metadata().get(REQUIRED_VERSION_KEY).unwrap(),
            "0.2.0"
        );
        assert_eq!(status.metadata().get(WORKER_ID_KEY).unwrap(), "12");
    }
}
