//! Worker releases: registered by an admin, listed and served by target;
//! and the worker versions checked against the required one.

use xq_proto::WorkerVersion;

use super::{NewRelease, Registry, Release, owner_of};
use crate::events::Actor;
use crate::store::worker_versions::{self, TooOld, WorkerVersionRow};
use crate::store::{StoreError, now_ms, worker_releases};

impl Registry {
    /// Registers the worker release `new` for `actor`'s user, who must be
    /// an admin (checked in the transaction, `store::worker_releases`):
    /// the release, and whether it was registered so already.
    pub async fn add_worker_release(
        &self,
        actor: Actor,
        new: NewRelease,
    ) -> Result<(Release, bool), StoreError> {
        let owner = owner_of(&actor)?;
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let added = worker_releases::register(&tx, &new, owner, &actor, now_ms())?;
                tx.commit()?;
                Ok(added)
            })
            .await
    }

    /// Every release, newest first, and the required version.
    pub async fn worker_releases(
        &self,
    ) -> Result<(Vec<Release>, Option<WorkerVersion>), StoreError> {
        self.store.call(|conn| worker_releases::listing(conn)).await
    }

    /// The newest release for `target`, if any.
    pub async fn worker_release_for(&self, target: String) -> Result<Option<Release>, StoreError> {
        self.store
            .call(move |conn| worker_releases::for_target(conn, &target))
            .await
    }

    /// The newest release for `target` and the required version.
    pub async fn worker_release_and_required(
        &self,
        target: String,
    ) -> Result<(Option<Release>, Option<WorkerVersion>), StoreError> {
        self.store
            .call(move |conn| {
                Ok((
                    worker_releases::for_target(conn, &target)?,
                    worker_releases::required(conn)?,
                ))
            })
            .await
    }

    /// The versions of the workers seen since `since` (unix ms) and the
    /// required version, for `GetRun`.
    pub async fn cluster_versions(
        &self,
        since: i64,
    ) -> Result<(Vec<WorkerVersionRow>, Option<WorkerVersion>), StoreError> {
        self.store
            .call(move |conn| {
                Ok((
                    worker_versions::list(conn, since)?,
                    worker_releases::required(conn)?,
                ))
            })
            .await
    }

    /// Worker `id`'s version when it is older than the required one.
    pub async fn too_old(&self, id: u64) -> Result<Option<TooOld>, StoreError> {
        self.store
            .call(move |conn| worker_versions::too_old(conn, id))
            .await
    }

    /// Records that worker `id` (its caller checked to own it) failed to
    /// update to `to` (`None`: it found no release) for `reason`.
    pub async fn update_failed(
        &self,
        id: u64,
        to: Option<WorkerVersion>,
        reason: String,
    ) -> Result<(), StoreError> {
        self.store
            .call(move |conn| {
                worker_versions::record_failure(conn, id, to.as_ref(), &reason, now_ms())
            })
            .await
    }
}
