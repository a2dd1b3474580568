//! Heartbeat: a worker reports its progress and keeps its leases alive.
//!
//! A heartbeat does not wait for the writer: it is recorded in memory
//! ([`crate::store::beats`]), answered from a read of its leases on a
//! read-only connection, and written with the others by the next settle,
//! which every call that expires or finishes leases runs first. Only a
//! lease the read cannot vouch for (its stored deadline passed, which an
//! unwritten heartbeat may not yet show) is answered by the writer, as
//! every heartbeat was before.

use std::time::Duration;

use super::lease::Leases;
use crate::runs::LeaseState;
use crate::runs::lease::Lease;
use crate::store::{StoreError, leases, workers};

/// A lease's state as a heartbeat answers it; `None` = unknown to this worker.
pub type HeartbeatAnswer = (u64, Option<LeaseState>, i64);

/// What a heartbeat is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatReply {
    /// One per lease of the heartbeat, in its order.
    pub leases: Vec<HeartbeatAnswer>,
    /// When to beat next, and from then on ([`super::cadence`]): every
    /// active deadline answered is a lease life of this cadence away.
    pub interval: Duration,
}

impl Leases<'_> {
    /// Records progress and extends the worker's active leases by the
    /// lease life of the fleet's cadence ([`super::cadence`]).
    pub async fn heartbeat(
        &self,
        worker_id: u64,
        progress: Vec<(u64, u32)>,
    ) -> Result<HeartbeatReply, StoreError> {
        let cadence = self.core.cadence.seen(worker_id);
        let ttl = cadence.ttl_ms();
        let beats = &self.core.beats;
        let recorded = beats.record(worker_id, &progress, ttl);
        let arrived = recorded.arrived_ms;
        let ids: Vec<u64> = progress.iter().map(|&(id, _)| id).collect();
        let rows = self
            .core
            .reads
            .call(move |conn| {
                ids.iter()
                    .map(|&id| leases::load(conn, id))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                for &(id, _) in &progress {
                    beats.withdraw(worker_id, id, arrived);
                }
                return Err(e);
            }
        };
        let mut answers = Vec::with_capacity(progress.len());
        let mut unsure = Vec::new();
        for ((&(lease_id, pairs_done), row), vouched) in
            progress.iter().zip(rows).zip(recorded.vouched)
        {
            let answer = match row {
                Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => {
                    if vouched || l.deadline_ms >= arrived {
                        beats.confirm(worker_id, lease_id, arrived);
                        (lease_id, Some(LeaseState::Active), arrived + ttl)
                    } else {
                        beats.withdraw(worker_id, lease_id, arrived);
                        unsure.push((answers.len(), lease_id, pairs_done));
                        (lease_id, None, 0)
                    }
                }
                mine => {
                    beats.withdraw(worker_id, lease_id, arrived);
                    (lease_id, owned_state(mine.as_ref(), worker_id), 0)
                }
            };
            answers.push(answer);
        }
        if !unsure.is_empty() {
            for (at, answer) in self
                .heartbeat_in_writer(worker_id, arrived, ttl, unsure)
                .await?
            {
                answers[at] = answer;
            }
        }
        if beats.due(crate::store::now_ms()) {
            self.core.settle_later();
        }
        Ok(HeartbeatReply {
            leases: answers,
            interval: cadence.interval,
        })
    }

    /// Answers the leases `(index, id, pairs done)` whose read could not
    /// vouch for them, in the writer after the beats recorded until now are
    /// written: an active lease still in time at `arrived` is extended to
    /// `ttl` ms after it, one past it expires.
    async fn heartbeat_in_writer(
        &self,
        worker_id: u64,
        arrived: i64,
        ttl: i64,
        unsure: Vec<(usize, u64, u32)>,
    ) -> Result<Vec<(usize, HeartbeatAnswer)>, StoreError> {
        let beats = std::sync::Arc::clone(&self.core.beats);
        self.core
            .store
            .call(move |conn| {
                let settled = beats.settle(conn)?;
                let tx = conn.savepoint()?;
                workers::touch(&tx, worker_id, settled.ms())?;
                let mut answers = Vec::with_capacity(unsure.len());
                for (at, lease_id, pairs_done) in unsure {
                    let lease = leases::load(&tx, lease_id)?;
                    let answer = match lease {
                        Some(l)
                            if l.worker_id == worker_id
                                && l.state == LeaseState::Active
                                && l.deadline_ms >= arrived =>
                        {
                            let deadline = (arrived + ttl).max(l.deadline_ms);
                            leases::extend(&tx, lease_id, pairs_done.min(l.pairs), deadline)?;
                            (lease_id, Some(LeaseState::Active), deadline)
                        }
                        Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => {
                            (lease_id, Some(LeaseState::Expired), 0)
                        }
                        mine => (lease_id, owned_state(mine.as_ref(), worker_id), 0),
                    };
                    answers.push((at, answer));
                }
                leases::expire_overdue(&tx, settled)?;
                tx.commit()?;
                Ok(answers)
            })
            .await
    }
}

/// A lease's state if it is `worker_id`'s, else `None`.
fn owned_state(lease: Option<&Lease>, worker_id: u64) -> Option<LeaseState> {
    lease.filter(|l| l.worker_id == worker_id).map(|l| l.state)
}

#[cfg(test)]
mod tests {
    use crate::runs::LeaseState;
    use crate::service::testing::*;

    #[tokio::test]
    async fn heartbeats_in_time_keep_a_lease_and_a_late_one_finds_it_expired() {
        let ttl = Duration::from_secs(2);
        let (s, w) = setup(ttl).await;
        s.runs()
            .create(games_spec(200, 4), false, Actor::system())
            .await
            .unwrap();
        let g = s.leases().request_work(w).await.unwrap().unwrap();
        let stranger = register(&s, "stranger", None).await;
        let beat = |worker: u64| {
            let s = s.clone();
            async move {
                s.leases()
                    .heartbeat(worker, vec![(g.lease_id, 2)])
                    .await
                    .map(|r| r.leases)
            }
        };
        // Longer than the lease's time to live, kept by heartbeats (each with
        // 1.7 s to spare); other workers' calls expire overdue leases meanwhile.
        for _ in 0..8 {
            let before = crate::store::now_ms();
            let [(id, state, deadline)] = beat(w).await.unwrap()[..] else {
                panic!("one answer");
            };
            assert_eq!((id, state), (g.lease_id, Some(LeaseState::Active)));
            assert!(deadline >= before + 2_000, "{deadline} from {before}");
            assert_eq!(beat(stranger).await.unwrap(), [(g.lease_id, None, 0)]);
            let other = s.leases().request_work(stranger).await.unwrap().unwrap();
            assert_ne!(other.work.openings.offset, g.work.openings.offset);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        assert_eq!(submit_draws(&s, w, &g).await, SubmitStatus::Accepted);
        assert_eq!(
            beat(w).await.unwrap(),
            [(g.lease_id, Some(LeaseState::Done), 0)]
        );

        let late = s.leases().request_work(w).await.unwrap().unwrap();
        tokio::time::sleep(ttl + Duration::from_millis(100)).await;
        let answer = s
            .leases()
            .heartbeat(w, vec![(late.lease_id, 1)])
            .await
            .unwrap()
            .leases;
        assert_eq!(answer, [(late.lease_id, Some(LeaseState::Expired), 0)]);
        assert_eq!(
            s.leases()
                .submit(w, late.lease_id, draws(&late.work))
                .await
                .unwrap(),
            SubmitStatus::ExpiredIgnored
        );
        // Its slice is handed out again, with the stranger's lapsed ones.
        let mut again = Vec::new();
        for _ in 0..10 {
            let g = s.leases().request_work(w).await.unwrap().unwrap();
            again.push(g.work.openings.offset);
        }
        assert!(again.contains(&late.work.openings.offset), "{again:?}");
    }

    #[tokio::test]
    async fn a_fleet_past_the_budget_beats_less_often_and_its_leases_live_in_proportion() {
        let (s, w) = setup_with(SchedulerConfig {
            heartbeat_interval: Duration::from_millis(100),
            lease_ttl: Duration::from_millis(600),
            heartbeat_budget: 1,
            ..SchedulerConfig::default()
        })
        .await;
        register(&s, "w2", None).await;
        s.runs()
            .create(games_spec(200, 4), false, Actor::system())
            .await
            .unwrap();
        let before = crate::store::now_ms();
        let g = s.leases().request_work(w).await.unwrap().unwrap();
        assert_eq!(g.heartbeat_interval, Duration::from_secs(2));
        assert!(
            g.deadline_ms >= before + 12_000,
            "{} from {before}",
            g.deadline_ms
        );
        // Beating at the interval told, four times the base lease life apart.
        for _ in 0..2 {
            tokio::time::sleep(g.heartbeat_interval).await;
            let before = crate::store::now_ms();
            let reply = s
                .leases()
                .heartbeat(w, vec![(g.lease_id, 1)])
                .await
                .unwrap();
            assert_eq!(reply.interval, Duration::from_secs(2));
            let [(_, state, deadline)] = reply.leases[..] else {
                panic!("one answer");
            };
            assert_eq!(state, Some(LeaseState::Active));
            assert!(deadline >= before + 12_000, "{deadline} from {before}");
        }
        assert_eq!(submit_draws(&s, w, &g).await, SubmitStatus::Accepted);
    }
}
