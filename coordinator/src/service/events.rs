//! The log of who did what, read. Events are written by the services that
//! make the changes, each in its change's transaction (`store::events::log`).

use crate::events::{Event, EventFilter};
use crate::store::{Store, StoreError, events};

/// Reads of the events log; open to everyone who may read runs (the web
/// view shows it to every visitor), so no check.
#[derive(Debug, Clone)]
pub struct Events {
    store: Store,
}

impl Events {
    /// Reads `store` (a read connection serves).
    pub fn new(store: Store) -> Self {
        Events { store }
    }

    /// The events `filter` selects, newest first.
    pub async fn list(&self, filter: EventFilter) -> Result<Vec<Event>, StoreError> {
        self.store
            .call(move |conn| events::list(conn, &filter))
            .await
    }
}
