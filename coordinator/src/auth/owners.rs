//! Which token registered which worker id, so one token cannot act for
//! another token's workers.
//!
//! A worker's token never changes after registration, so answers are cached
//! in memory; a miss reads `workers.token_key` on the read connection.

use std::collections::HashMap;
use std::sync::Mutex;

use tonic::Status;

use super::Principal;
use crate::service::accounts::Accounts;
use crate::store::{Store, StoreError};

/// The worker → token map.
#[derive(Debug)]
pub struct Owners {
    /// On the read connection.
    reader: Accounts,
    /// `None`: a worker registered before tokens existed (any token may use it).
    known: Mutex<HashMap<u64, Option<i64>>>,
}

impl Owners {
    pub fn new(reader: Store) -> Self {
        Owners {
            reader: Accounts::new(reader),
            known: Mutex::new(HashMap::new()),
        }
    }

    /// Records the token that registered `worker_id`.
    pub fn registered(&self, worker_id: u64, key: i64) {
        self.lock().insert(worker_id, Some(key));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Option<i64>>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ok when `caller` may act as `worker_id`: it registered it. An unknown
    /// worker is NOT_FOUND (the heartbeat, answered from a read, does not
    /// touch the worker's row on its way).
    pub async fn check(&self, caller: &Principal, worker_id: u64) -> Result<(), Status> {
        let cached = self.lock().get(&worker_id).copied();
        let owner = match cached {
            Some(owner) => Some(owner),
            None => {
                let found = self
                    .reader
                    .worker_token(worker_id)
                    .await
                    .map_err(|e: StoreError| Status::from(e))?;
                if let Some(owner) = found {
                    self.lock().insert(worker_id, owner);
                }
                found
            }
        };
        match owner {
            None => Err(Status::not_found(format!("unknown worker {worker_id}"))),
            Some(Some(key)) if key != caller.key => Err(Status::permission_denied(format!(
                "worker {worker_id} was registered by another token than {:?}",
                caller.name
            ))),
            Some(_) => Ok(()),
        }
    }
}
