//! Engines, assets, blobs and worker releases from anywhere: the registry
//! service. Blobs are uploaded as they arrive ([`uploads`]), downloaded
//! a chunk at a time ([`blobs`]) and deleted once nothing references them
//! ([`collect`]); engines, assets ([`engines`]) and worker
//! releases ([`worker_releases`]) are registered under names that belong to
//! their owner, each one transaction with its event.
//!
//! Who may: any user (developer, approver or admin) uploads and registers
//! engines and assets, an admin uploads and registers worker releases (an
//! upload says what it is for and is refused before its bytes are read when
//! its user may not register that); a caller without
//! a user (local mode's and the tests' tokens) does neither. A name then
//! belongs to its owner, and nobody registers it again (`store::engines`,
//! `store::assets`). The coordinator never runs what is uploaded: the
//! client states an engine's bench signature, and every worker checks it
//! on first use.

pub mod blobs;
pub mod collect;
pub mod engines;
pub mod uploads;
pub mod worker_releases;

pub use crate::store::assets::{Asset, NewAsset, check_name as check_asset_name};
pub use crate::store::engines::{Entry, NewEngine};
pub use crate::store::worker_releases::{NewRelease, Release};
pub use blobs::BlobStream;
pub use collect::{BlobGc, Collected};
pub use uploads::{Begun, BlobWriter, UploadError, UploadQuota};

use crate::events::Actor;
use crate::store::{Store, StoreError};

/// The registry on one store: the write store for uploads and
/// registrations; a read connection ([`Store::reader`]) serves lists and
/// downloads.
#[derive(Debug, Clone)]
pub struct Registry {
    store: Store,
    /// How much one user's uploads may store.
    quota: UploadQuota,
}

impl Registry {
    pub fn new(store: Store, quota: UploadQuota) -> Self {
        Registry { store, quota }
    }
}

/// The user `actor` acts as, who owns what they upload and register; a
/// caller without a user (local mode's, the tests') may do neither.
fn owner_of(actor: &Actor) -> Result<u64, StoreError> {
    actor.owner().ok_or_else(|| {
        StoreError::Forbidden(format!(
            "token {} belongs to no user; uploads and registrations need a user's personal \
             token (`xq-coordinator login`)",
            xq_proto::quote(&actor.name)
        ))
    })
}
