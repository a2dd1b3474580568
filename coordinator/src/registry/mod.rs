//! The registry through the wire and the web view: blobs uploaded as they
//! arrive ([`uploads`]), engines and assets registered under names by a
//! user ([`Registrar`]), and their wire form ([`wire`]).
//!
//! Who may: any user with a personal token (developer, approver or admin)
//! uploads and registers; a name then belongs to its owner, and nobody
//! registers it again (`store::engines`, `store::assets`). The coordinator
//! never runs what is uploaded: the client states an engine's bench
//! signature, and every worker checks it on first use.

pub mod uploads;
pub mod wire;

use crate::events::Actor;
use crate::store::assets::{self, Asset, NewAsset};
use crate::store::engines::{self, Entry, NewEngine};
use crate::store::worker_releases::{self, NewRelease, Release};
use crate::store::{Store, StoreError, now_ms};

/// Registrations on the write store, each one transaction with its event.
#[derive(Debug, Clone)]
pub struct Registrar {
    store: Store,
}

impl Registrar {
    pub fn new(store: Store) -> Self {
        Registrar { store }
    }

    /// Registers `new` for the user `owner`, by `actor`.
    pub async fn add_engine(
        &self,
        actor: Actor,
        owner: u64,
        new: NewEngine,
    ) -> Result<Entry, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let (entry, _) = engines::register(&tx, &new, owner, &actor, now_ms())?;
                tx.commit()?;
                Ok(entry)
            })
            .await
    }

    /// Registers the worker release `new` for the admin `owner`, by
    /// `actor`: the release, and whether it was registered so already.
    pub async fn add_worker_release(
        &self,
        actor: Actor,
        owner: u64,
        new: NewRelease,
    ) -> Result<(Release, bool), StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let added = worker_releases::register(&tx, &new, owner, &actor, now_ms())?;
                tx.commit()?;
                Ok(added)
            })
            .await
    }

    /// Registers `new` for the user `owner`, by `actor`: the asset, and
    /// whether the owner had registered it so already.
    pub async fn add_asset(
        &self,
        actor: Actor,
        owner: u64,
        new: NewAsset,
    ) -> Result<(Asset, bool), StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let added = assets::register(&tx, &new, owner, &actor, now_ms())?;
                tx.commit()?;
                Ok(added)
            })
            .await
    }
}
