//! Register: a worker joins the cluster and gets its id.

use super::Core;
use crate::store::{StoreError, now_ms, workers};

pub use crate::store::workers::{NewWorker, Registered};

/// Workers joining the cluster ([`Core::workers`]).
#[derive(Debug, Clone, Copy)]
pub struct Workers<'a> {
    pub(super) core: &'a Core,
}

impl Workers<'_> {
    /// Stores `worker` (its token is the caller's, checked by the gRPC
    /// layer): a new row, or the row its machine id had
    /// ([`workers::register`]). No event: workers come and go.
    pub async fn register(&self, worker: NewWorker) -> Result<Registered, StoreError> {
        self.core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let registered = workers::register(&tx, &worker, now_ms())?;
                tx.commit()?;
                Ok(registered)
            })
            .await
    }
}
