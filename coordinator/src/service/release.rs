//! ReleaseLease: a worker hands a lease back, so that its slice is handed
//! out again.

use super::lease::Leases;
use crate::runs::LeaseState;
use crate::store::{StoreError, leases, now_ms};

impl Leases<'_> {
    /// Hands a lease back so its slice is handed out again; returns its state
    /// afterwards (`None`: not this worker's lease).
    pub async fn release(
        &self,
        worker_id: u64,
        lease_id: u64,
    ) -> Result<Option<LeaseState>, StoreError> {
        self.core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let state = match leases::load(&tx, lease_id)? {
                    Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => {
                        leases::set_state(&tx, lease_id, LeaseState::Released, now)?;
                        Some(LeaseState::Released)
                    }
                    Some(l) if l.worker_id == worker_id => Some(l.state),
                    _ => None,
                };
                tx.commit()?;
                Ok(state)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use crate::service::testing::*;

    #[tokio::test]
    async fn released_slices_are_handed_out_again_lowest_opening_first() {
        let (s, w) = setup(Duration::from_secs(60)).await;
        s.runs()
            .create(games_spec(12, 4), false, Actor::system())
            .await
            .unwrap();
        let mut leases = Vec::new();
        for _ in 0..3 {
            leases.push(s.leases().request_work(w).await.unwrap().unwrap());
        }
        s.leases().release(w, leases[0].lease_id).await.unwrap();
        let retaken = s.leases().request_work(w).await.unwrap().unwrap();
        assert_eq!(retaken.work.openings.offset, 0);
        // Lapsed now: opening 4 (an older lease) and opening 0 (a newer one).
        s.leases().release(w, leases[1].lease_id).await.unwrap();
        s.leases().release(w, retaken.lease_id).await.unwrap();
        let mut again = Vec::new();
        for _ in 0..2 {
            let g = s.leases().request_work(w).await.unwrap().unwrap();
            again.push(g.work.openings.offset);
        }
        assert_eq!(again, [0, 4]);
    }
}
