//! What a worker reports against a run's engines: a source engine that did
//! not build ([`Leases::build_failed`]) and an engine that did not match its
//! signature ([`Leases::flag_lease_run`]).

use xq_proto::engine_source::FailedBuild;

use super::lease::Leases;
use crate::events::{Actor, EventKind};
use crate::runs::{LeaseState, RunState, sources};
use crate::store::runs as run_rows;
use crate::store::{StoreError, build_failures, events, leases, now_ms};

impl Leases<'_> {
    /// Stops the run of `lease_id`, held by `worker_id`, with `message` (an
    /// engine did not match its registered signature on that worker), and
    /// tells its watchers.
    pub async fn flag_lease_run(
        &self,
        worker_id: u64,
        lease_id: u64,
        message: String,
    ) -> Result<u64, StoreError> {
        let run_id = self
            .core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let lease = leases::load(&tx, lease_id)?
                    .filter(|l| l.worker_id == worker_id)
                    .ok_or_else(|| {
                        StoreError::NotFound(format!(
                            "worker {worker_id} holds no lease {lease_id}"
                        ))
                    })?;
                run_rows::flag_run(&tx, lease.run_id, &message, now_ms())?;
                tx.commit()?;
                Ok(lease.run_id)
            })
            .await?;
        self.core.changed(run_id);
        Ok(run_id)
    }

    /// Records that a source engine of lease `lease_id`, which `worker_id`
    /// must hold, did not build there: the failure is stored with its log,
    /// the worker's leases of the run are handed back and it gets no more
    /// of them. Once builds failed on [`super::SchedulerConfig::build_failures_to_stop`]
    /// distinct workers, an active run is stopped with the failure as its
    /// flag and a `stop` event by the system. Returns the run's id and
    /// whether this failure stopped it.
    pub async fn build_failed(
        &self,
        worker_id: u64,
        lease_id: u64,
        failed: FailedBuild,
    ) -> Result<(u64, bool), StoreError> {
        let threshold = u64::from(self.core.config.build_failures_to_stop.max(1));
        let (run_id, stopped) = self
            .core
            .store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let lease = leases::load(&tx, lease_id)?
                    .filter(|l| l.worker_id == worker_id && l.state == LeaseState::Active)
                    .ok_or_else(|| {
                        StoreError::NotFound(format!(
                            "worker {worker_id} holds no active lease {lease_id}"
                        ))
                    })?;
                let run = run_rows::load(&tx, lease.run_id)?;
                let source = sources::of(&run.spec)
                    .into_iter()
                    .find(|s| s.commit == failed.commit)
                    .cloned()
                    .ok_or_else(|| {
                        StoreError::invalid(
                            "commit",
                            format!("{} is no source of run {}", failed.commit, run.id),
                        )
                    })?;
                build_failures::insert(
                    &tx,
                    run.id,
                    worker_id,
                    lease_id,
                    &source.repo,
                    &failed,
                    now,
                )?;
                leases::release_all(&tx, run.id, worker_id, now)?;
                let failed_on = build_failures::workers_failed(&tx, run.id)?;
                let stop = run.state == RunState::Active && failed_on >= threshold;
                if stop {
                    let flag = sources::stop_flag(&source, &failed, failed_on);
                    run_rows::flag_run(&tx, run.id, &flag, now)?;
                    events::log(
                        &tx,
                        &Actor::system(),
                        EventKind::Stop,
                        Some(run.id),
                        &flag,
                        now,
                    )?;
                }
                tx.commit()?;
                Ok((run.id, stop))
            })
            .await?;
        self.core.changed(run_id);
        Ok((run_id, stopped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::testing::*;

    #[tokio::test]
    async fn a_source_run_goes_to_workers_that_can_build_it_and_failed_builds_stop_it() {
        let config = SchedulerConfig {
            build_failures_to_stop: 2,
            ..SchedulerConfig::default()
        };
        let s = Core::new(Store::open_in_memory().unwrap(), config);
        let none = register(&s, "no-tools", None).await;
        let no_make = register_with(&s, "no-make", None, None, &["git", "g++"]).await;
        let b1 = register_with(&s, "b1", None, None, &["git", "make", "g++"]).await;
        let b2 = register_with(&s, "b2", None, None, &["git", "make"]).await;
        let (run, _) = s
            .runs()
            .create(
                source_spec("https://example.org/engine.git"),
                false,
                Actor::system(),
            )
            .await
            .unwrap();
        assert_eq!(
            s.leases().request_work(none).await.unwrap(),
            None,
            "builds nothing"
        );
        assert_eq!(
            s.leases().request_work(no_make).await.unwrap(),
            None,
            "lacks make"
        );
        let g1 = s
            .leases()
            .request_work(b1)
            .await
            .unwrap()
            .expect("b1 can build");
        let dev = g1.work.players[0].engine.as_ref().expect("dev engine");
        assert_eq!(dev.source.as_ref().map(|x| x.commit.as_str()), Some(COMMIT));

        let wrong = s
            .leases()
            .build_failed(b1, g1.lease_id, failed(&"f".repeat(40)))
            .await;
        assert!(matches!(wrong, Err(StoreError::Invalid(_))), "{wrong:?}");
        let theirs = s
            .leases()
            .build_failed(b2, g1.lease_id, failed(COMMIT))
            .await;
        assert!(matches!(theirs, Err(StoreError::NotFound(_))), "{theirs:?}");
        assert_eq!(
            s.leases()
                .build_failed(b1, g1.lease_id, failed(COMMIT))
                .await
                .unwrap(),
            (run, false),
            "one worker of two"
        );
        let again = s
            .leases()
            .build_failed(b1, g1.lease_id, failed(COMMIT))
            .await;
        assert!(matches!(again, Err(StoreError::NotFound(_))), "handed back");
        assert_eq!(
            s.leases().request_work(b1).await.unwrap(),
            None,
            "no more of it for b1"
        );
        let g2 = s
            .leases()
            .request_work(b2)
            .await
            .unwrap()
            .expect("b2 gets the slice again");
        assert_eq!(g2.work.openings.offset, g1.work.openings.offset);
        assert_eq!(
            s.leases()
                .build_failed(b2, g2.lease_id, failed(COMMIT))
                .await
                .unwrap(),
            (run, true)
        );
        let stopped = s.queries().get_run(run).await.unwrap();
        assert_eq!(stopped.state, RunState::Stopped);
        let flag = stopped.flag.unwrap_or_default();
        assert!(
            flag.contains("failed on 2 workers") && flag.contains("expected ';'"),
            "{flag}"
        );
        let listed = s.queries().build_failures(run).await.unwrap();
        assert_eq!(
            listed.iter().map(|f| f.worker_id).collect::<Vec<_>>(),
            [b1, b2]
        );
        assert!(listed[1].failed.log_tail.contains("expected ';'"));
        let events = s
            .store
            .call(move |conn| {
                events::list(
                    conn,
                    &crate::events::EventFilter {
                        run: Some(run),
                        kind: Some(EventKind::Stop),
                        limit: 10,
                        ..Default::default()
                    },
                )
            })
            .await
            .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(
            (events[0].actor.as_str(), events[0].detail.as_str()),
            ("system", flag.as_str())
        );
    }
}
