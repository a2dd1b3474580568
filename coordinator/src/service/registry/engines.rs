//! Engines and assets: registered by their owner, listed for everyone.

use xq_proto::Invalid;

use super::{Asset, Entry, NewAsset, NewEngine, Registry, owner_of};
use crate::events::Actor;
use crate::store::{StoreError, assets, engines, now_ms};

impl Registry {
    /// Registers `new` for `actor`'s user, its owner: the entry.
    pub async fn add_engine(&self, actor: Actor, new: NewEngine) -> Result<Entry, StoreError> {
        let owner = owner_of(&actor)?;
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let (entry, _) = engines::register(&tx, &new, owner, &actor, now_ms())?;
                tx.commit()?;
                Ok(entry)
            })
            .await
    }

    /// Registers `new` for `actor`'s user, its owner: the asset, and
    /// whether the owner had registered it so already.
    pub async fn add_asset(
        &self,
        actor: Actor,
        new: NewAsset,
    ) -> Result<(Asset, bool), StoreError> {
        let owner = owner_of(&actor)?;
        assets::check_name(&new.name)?;
        if !xq_proto::is_sha256_hex(&new.sha256) {
            return Err(Invalid::new(
                "sha256",
                format!(
                    "{} is not 64 lowercase hex digits",
                    xq_proto::quote(&new.sha256)
                ),
            )
            .into());
        }
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let added = assets::register(&tx, &new, owner, &actor, now_ms())?;
                tx.commit()?;
                Ok(added)
            })
            .await
    }

    /// Every engine, by name.
    pub async fn engines(&self) -> Result<Vec<Entry>, StoreError> {
        self.store.call(|conn| engines::list(conn)).await
    }

    /// The engine named `name`, if any.
    pub async fn engine(&self, name: String) -> Result<Option<Entry>, StoreError> {
        self.store
            .call(move |conn| engines::get_entry(conn, &name))
            .await
    }

    /// Every asset, by name.
    pub async fn assets(&self) -> Result<Vec<Asset>, StoreError> {
        self.store.call(|conn| assets::list(conn)).await
    }
}
