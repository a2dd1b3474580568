//! Register: a worker joins the cluster and gets its id.

use std::time::Duration;

use super::Core;
use crate::store::{StoreError, now_ms, workers};

pub use crate::store::workers::{NewWorker, Registered};

/// A worker's registration and the heartbeat interval it is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joined {
    pub registered: Registered,
    /// How often it heartbeats until told otherwise ([`super::cadence`]).
    pub heartbeat_interval: Duration,
}

impl Joined {
    /// The worker's id.
    pub fn id(&self) -> u64 {
        self.registered.id()
    }
}

/// Workers joining the cluster ([`Core::workers`]).
#[derive(Debug, Clone, Copy)]
pub struct Workers<'a> {
    pub(super) core: &'a Core,
}

impl Workers<'_> {
    /// Stores `worker` (its token is the caller's, checked by the gRPC
    /// layer): a new row, or the row its machine id had
    /// ([`workers::register`]). No event: workers come and go.
    pub async fn register(&self, worker: NewWorker) -> Result<Joined, StoreError> {
        let registered = self
            .core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let registered = workers::register(&tx, &worker, now_ms())?;
                tx.commit()?;
                Ok(registered)
            })
            .await?;
        Ok(Joined {
            registered,
            heartbeat_interval: self.core.cadence.seen(registered.id()).interval,
        })
    }
}
