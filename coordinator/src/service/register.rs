//! Register: a worker joins the cluster and gets its id.

use super::Core;
use crate::store::{StoreError, now_ms, workers};

pub use crate::store::workers::NewWorker;

/// Workers joining the cluster ([`Core::workers`]).
#[derive(Debug, Clone, Copy)]
pub struct Workers<'a> {
    pub(super) core: &'a Core,
}

impl Workers<'_> {
    /// Stores `worker` (its token is the caller's, checked by the gRPC
    /// layer) and returns its new id. No event: workers come and go.
    pub async fn register(&self, worker: NewWorker) -> Result<u64, StoreError> {
        self.core
            .store
            .call(move |conn| workers::insert(conn, &worker, now_ms()))
            .await
    }
}
