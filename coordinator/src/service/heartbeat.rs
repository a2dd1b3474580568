//! Heartbeat: a worker reports its progress and keeps its leases alive.

use super::config::ms;
use super::lease::Leases;
use crate::runs::LeaseState;
use crate::store::{StoreError, leases, now_ms, workers};

/// A lease's state as a heartbeat answers it; `None` = unknown to this worker.
pub type HeartbeatAnswer = (u64, Option<LeaseState>, i64);

impl Leases<'_> {
    /// Records progress and extends the worker's active leases.
    pub async fn heartbeat(
        &self,
        worker_id: u64,
        progress: Vec<(u64, u32)>,
    ) -> Result<Vec<HeartbeatAnswer>, StoreError> {
        let ttl = ms(self.core.config.lease_ttl);
        self.core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                workers::touch(&tx, worker_id, now)?;
                leases::expire_overdue(&tx, now)?;
                let mut answers = Vec::with_capacity(progress.len());
                for (lease_id, pairs_done) in progress {
                    let answer = match leases::load(&tx, lease_id)? {
                        Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => {
                            let deadline = now + ttl;
                            leases::extend(&tx, lease_id, pairs_done.min(l.pairs), deadline)?;
                            (lease_id, Some(LeaseState::Active), deadline)
                        }
                        Some(l) if l.worker_id == worker_id => (lease_id, Some(l.state), 0),
                        _ => (lease_id, None, 0),
                    };
                    answers.push(answer);
                }
                tx.commit()?;
                Ok(answers)
            })
            .await
    }
}
