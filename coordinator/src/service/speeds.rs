//! ReportEngineSpeed: a worker's measured speed with a run's engine, which
//! scales its time limits or refuses it.

use xq_proto::capacity::SpeedMethod;

use super::lease::Leases;
use crate::runs::LeaseState;
use crate::store::runs as run_rows;
use crate::store::{StoreError, leases, now_ms, speeds};

impl Leases<'_> {
    /// Records the speed `worker_id` measured with the base engine of its
    /// lease `lease_id`'s run (`nps`, 0 if the measurement failed) and
    /// answers the factor its time limits are scaled by. A worker below the
    /// run's minimum gets `TooSlow`: the lease is handed back, and the run
    /// leases it nothing more ([`crate::runs::admission`]). The worker must hold the
    /// lease (else `NotFound`).
    pub async fn engine_speed(
        &self,
        worker_id: u64,
        lease_id: u64,
        nps: u64,
        method: SpeedMethod,
    ) -> Result<f64, StoreError> {
        self.core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let lease = match leases::load(&tx, lease_id)? {
                    Some(l) if l.worker_id == worker_id && l.state == LeaseState::Active => l,
                    _ => {
                        return Err(StoreError::NotFound(format!(
                            "worker {worker_id} holds no active lease {lease_id}"
                        )));
                    }
                };
                let run = run_rows::load(&tx, lease.run_id)?;
                let check = run.spec.workers.speed_check().ok_or_else(|| {
                    StoreError::Precondition(format!(
                        "run {} has no speed rule: lease {lease_id} asks for no measurement",
                        run.id
                    ))
                })?;
                let slice = run.spec.kind.ops().slice_work(&run, &lease.slice())?;
                let engine = slice.players[usize::from(check.player)]
                    .engine
                    .as_ref()
                    .map_or_else(|| "built-in".to_owned(), |e| e.name.clone());
                let factor = check.factor(nps);
                let speed = speeds::Speed {
                    engine,
                    nps,
                    factor,
                    method,
                    measured_ms: now,
                };
                speeds::record(&tx, run.id, worker_id, &speed)?;
                if check.too_slow(nps) {
                    leases::set_state(&tx, lease_id, LeaseState::Released, now)?;
                    tx.commit()?;
                    return Err(StoreError::Precondition(format!(
                        "{nps} nodes per second with engine '{}' is below run {}'s minimum of {}; \
                         the lease is handed back and the run leases this worker nothing more",
                        speed.engine, run.id, check.min_nps
                    )));
                }
                tx.commit()?;
                Ok(factor)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::testing::*;

    #[tokio::test]
    async fn workers_measure_on_their_first_lease_and_slow_ones_get_no_more() {
        use crate::runs::{SpeedRule, WorkerPolicy};
        use xq_proto::capacity::{SpeedCheck, SpeedMethod};
        let (s, slow) = setup(Duration::from_secs(60)).await;
        let fast = register(&s, "fast", Some(2_000_000)).await;
        let mut refusing = games_spec(8, 4);
        refusing.settings.limit = Limit::MoveTimeMs(100);
        refusing.workers = WorkerPolicy {
            speed: Some(SpeedRule::RefuseBelow { min_nps: 1_000_000 }),
            ..WorkerPolicy::default()
        };
        let (run, _) = s
            .runs()
            .create(refusing.clone(), false, Actor::system())
            .await
            .unwrap();
        let g = s.leases().request_work(slow).await.unwrap().unwrap();
        assert_eq!(
            g.speed,
            Some(SpeedCheck {
                player: 1,
                reference_nps: 0,
                min_nps: 1_000_000
            }),
            "not measured yet: measure first"
        );
        assert_eq!(g.work.players[0].limit, Limit::MoveTimeMs(100));
        let err = s
            .leases()
            .submit(slow, g.lease_id, from_pentanomial(&g.work, [0, 0, 0, 0, 4]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Precondition(m) if m.contains("reported no speed")),
            "a result without the speed it was played at: {err}"
        );
        let err = s
            .leases()
            .engine_speed(slow, g.lease_id, 999_999, SpeedMethod::Bench)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Precondition(m) if m.contains("999999 nodes per second")),
            "{err}"
        );
        assert_eq!(
            s.leases().request_work(slow).await.unwrap(),
            None,
            "too slow"
        );
        let g = s.leases().request_work(fast).await.unwrap().unwrap();
        assert_eq!(g.work.pairs, 4, "the slow worker's slice went back");
        let factor = s
            .leases()
            .engine_speed(fast, g.lease_id, 1_500_000, SpeedMethod::Search)
            .await
            .unwrap();
        assert_eq!(factor, 1.0, "refusing scales nothing");
        let err = s
            .leases()
            .engine_speed(slow, g.lease_id, 1_500_000, SpeedMethod::Bench)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound(_)), "another's lease");

        let mut scaled = refusing;
        scaled.name = "scaled".to_owned();
        scaled.workers.speed = Some(SpeedRule::Scale {
            reference_nps: 1_000_000,
        });
        scaled.priority = 1;
        let (scaled, _) = s
            .runs()
            .create(scaled, false, Actor::system())
            .await
            .unwrap();
        let g = s.leases().request_work(slow).await.unwrap().unwrap();
        assert_eq!(g.run_id, scaled);
        let factor = s
            .leases()
            .engine_speed(slow, g.lease_id, 400_000, SpeedMethod::Bench)
            .await
            .unwrap();
        assert_eq!(factor, 2.5);
        let serving = s.queries().serving(scaled).await.unwrap();
        let play = &serving.workers[&slow];
        assert_eq!(
            play.speed.as_ref().map(|p| (p.nps, p.factor)),
            Some((400_000, 2.5))
        );
        assert_eq!(play.speed.as_ref().unwrap().engine, "built-in");
        assert_eq!((serving.active, serving.able), (2, 2));
        let serving = s.queries().serving(run).await.unwrap();
        assert_eq!(
            (serving.active, serving.able),
            (2, 1),
            "the slow one cannot"
        );
    }
}
