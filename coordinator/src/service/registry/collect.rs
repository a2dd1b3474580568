//! Blobs that nothing references are deleted: an upload refused at its
//! registration, a client that stopped between `UploadBlob` and `AddEngine`,
//! leave a blob that would otherwise stay forever and count against its
//! uploader's quota.
//!
//! A blob is collected once its upload began longer ago than the grace
//! period ([`BlobGc::grace`], the time an upload's registration may take)
//! and no engine, asset, worker release or run references it
//! ([`blobs::referenced`]). Each blob is checked again and marked in one
//! transaction, so a registration that lands meanwhile keeps its blob
//! (or, once the blob is marked, fails as for a blob never uploaded); its
//! chunks then go a few per transaction, as a broken upload's do.

use std::time::Duration;

use super::Registry;
use super::uploads::discard;
use crate::shutdown::Shutdown;
use crate::store::{StoreError, blobs, now_ms};

/// When the serve loop collects unreferenced blobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobGc {
    /// How old (since its upload began) an unreferenced blob must be to be
    /// deleted: a day (`serve --blob-grace-hours 24`), far more than an
    /// upload's registration takes.
    pub grace: Duration,
    /// How often the serve loop looks: hourly.
    pub every: Duration,
}

impl Default for BlobGc {
    fn default() -> Self {
        BlobGc {
            grace: Duration::from_secs(24 * 3600),
            every: Duration::from_secs(3600),
        }
    }
}

/// A blob deleted: its SHA-256 and size in bytes.
pub type Collected = (String, u64);

impl Registry {
    /// Deletes every complete blob that nothing references and whose upload
    /// began more than `grace` ago; the blobs deleted, oldest first.
    pub async fn collect_blobs(&self, grace: Duration) -> Result<Vec<Collected>, StoreError> {
        let before = now_ms().saturating_sub(i64::try_from(grace.as_millis()).unwrap_or(i64::MAX));
        let candidates = self
            .store
            .call(move |conn| blobs::unreferenced(conn, before))
            .await?;
        let mut collected = Vec::new();
        for (sha256, size) in candidates {
            let sha = sha256.clone();
            let marked = self
                .store
                .call(move |conn| {
                    let tx = conn.savepoint()?;
                    let marked = blobs::collect(&tx, &sha, before, now_ms())?;
                    tx.commit()?;
                    Ok(marked)
                })
                .await?;
            if marked {
                discard(&self.store, sha256.clone()).await;
                tracing::info!(%sha256, size, "deleted a blob nothing references");
                collected.push((sha256, size));
            }
        }
        Ok(collected)
    }

    /// Collects unreferenced blobs as `gc` says, first at once, until
    /// `shutdown`. A failed round is logged and tried again next time.
    pub async fn collect_blobs_until(self, gc: BlobGc, mut shutdown: Shutdown) {
        let mut ticks = tokio::time::interval(gc.every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = shutdown.recv() => return,
            }
            match self.collect_blobs(gc.grace).await {
                Ok(done) if done.is_empty() => {}
                Ok(done) => {
                    let bytes: u64 = done.iter().map(|(_, size)| size).sum();
                    tracing::info!(blobs = done.len(), bytes, "unreferenced blobs deleted");
                }
                Err(e) => tracing::error!(error = %e, "cannot collect unreferenced blobs"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use xq_proto::blob::{BlobHeader, UploadPurpose, sha256_hex};

    use super::*;
    use crate::access::UserRole;
    use crate::events::Actor;
    use crate::service::registry::{Begun, NewAsset, UploadQuota};
    use crate::store::{Store, users};

    async fn upload(registry: &Registry, actor: &Actor, bytes: &[u8]) -> String {
        let header = BlobHeader {
            sha256: sha256_hex(bytes),
            size: bytes.len() as u64,
            purpose: UploadPurpose::Asset("a".to_owned()),
        };
        let Begun::Writing(mut w) = registry.begin_upload(actor, header).await.unwrap() else {
            panic!("stored already")
        };
        w.write(bytes).await.unwrap();
        w.finish().await.unwrap();
        sha256_hex(bytes)
    }

    #[tokio::test]
    async fn only_old_blobs_nothing_references_are_deleted() {
        let store = Store::open_in_memory().unwrap();
        let ana = store
            .call(|conn| users::insert(conn, "ana", UserRole::Developer, None, false, 1))
            .await
            .unwrap();
        let actor = Actor::user(ana, "ana");
        let registry = Registry::new(store.clone(), UploadQuota::default());
        let asset = upload(&registry, &actor, b"a network").await;
        let by_run = upload(&registry, &actor, b"named by a run").await;
        let orphan = upload(&registry, &actor, b"never registered").await;
        let young = upload(&registry, &actor, b"registered soon").await;
        let new = NewAsset {
            name: "nn.bin".to_owned(),
            sha256: asset.clone(),
            size: 9,
        };
        registry.add_asset(actor, new).await.unwrap();
        let run_sha = by_run.clone();
        let old = [asset.clone(), by_run.clone(), orphan.clone()];
        store
            .call(move |conn| {
                conn.execute(
                    "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                     VALUES (?1, 'games', 0, 'finished', 0, 0)",
                    [format!("{{\"book\":\"asset:{run_sha}\"}}")],
                )?;
                for sha in old {
                    conn.execute("UPDATE blobs SET stored_ms = 1000 WHERE sha256 = ?1", [sha])?;
                }
                Ok(())
            })
            .await
            .unwrap();
        let grace = Duration::from_secs(3600);
        let done = registry.collect_blobs(grace).await.unwrap();
        assert_eq!(done, [(orphan.clone(), 16)]);
        let left = store
            .call(|conn| {
                let mut stmt = conn.prepare("SELECT sha256 FROM blobs ORDER BY sha256")?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap();
        let mut kept = vec![asset, by_run, young];
        kept.sort();
        assert_eq!(left, kept);
        let chunks: i64 = store
            .call(move |conn| {
                Ok(conn.query_row(
                    "SELECT COUNT(*) FROM blob_chunks WHERE sha256 = ?1",
                    [orphan],
                    |r| r.get(0),
                )?)
            })
            .await
            .unwrap();
        assert_eq!(chunks, 0);
        assert!(registry.collect_blobs(grace).await.unwrap().is_empty());
    }
}
