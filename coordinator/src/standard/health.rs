//! The health service: SERVING while the store answers, NOT_SERVING when
//! it does not or once shutdown has begun.
//!
//! # What is reported
//!
//! * The overall status (service `""`) and each of the project's services
//!   ([`super::SERVICES`]) by name carry the same status; the health
//!   service itself is always SERVING while the server runs.
//! * A probe every [`HealthProbe::every`] sends one empty call through the
//!   store's writer queue (it reads and writes nothing, so it never causes
//!   a sync). The store is healthy if that call is answered within
//!   [`HealthProbe::timeout`] and the last group sync did not fail
//!   ([`StoreMetrics::sync_failed`](crate::store::instruments::StoreMetrics)).
//!   A queue so long that the probe waits past the timeout counts as not
//!   answering: a worker's call would wait as long.
//! * A status changes only when the judgement does, so `Watch` streams see
//!   changes, not every probe.
//! * Once shutdown begins every status is NOT_SERVING and probing stops.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tonic_health::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::server::HealthReporter;

use crate::shutdown::Shutdown;
use crate::store::Store;

/// How the store is probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthProbe {
    /// Time between probes.
    pub every: Duration,
    /// How long a probe may wait for the store before it counts as not
    /// answering.
    pub timeout: Duration,
}

impl Default for HealthProbe {
    /// A probe every 5 s, failed after 10 s: one store call every few
    /// seconds, and a status that does not flip on a busy second.
    fn default() -> Self {
        HealthProbe {
            every: Duration::from_secs(5),
            timeout: Duration::from_secs(10),
        }
    }
}

/// The health service, its statuses set from a first probe of `store`,
/// and a task that keeps probing until `shutdown` begins.
pub async fn serve(
    store: Store,
    shutdown: Shutdown,
    probe: HealthProbe,
) -> HealthServer<impl Health> {
    let (reporter, server) = tonic_health::server::health_reporter();
    keep_reporting(store, shutdown, probe, reporter).await;
    server
}

/// Sets `reporter`'s statuses from a first probe of `store`, and spawns the
/// task that probes again every `probe.every` until `shutdown` begins.
async fn keep_reporting(
    store: Store,
    mut shutdown: Shutdown,
    probe: HealthProbe,
    reporter: HealthReporter,
) {
    let mut status = judge(&store, probe.timeout).await;
    report(&reporter, status).await;
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(probe.every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            let now = tokio::select! {
                () = shutdown.recv() => break,
                now = async {
                    ticks.tick().await;
                    judge(&store, probe.timeout).await
                } => now,
            };
            if now != status {
                tracing::warn!(from = ?status, to = ?now, "store health changed");
                status = now;
                report(&reporter, status).await;
            }
        }
        report(&reporter, ServingStatus::NotServing).await;
    });
}

/// The store's health now: whether an empty call through its queue is
/// answered within `timeout` and its last sync did not fail.
async fn judge(store: &Store, timeout: Duration) -> ServingStatus {
    let answered = matches!(
        tokio::time::timeout(timeout, store.call(|_| Ok(()))).await,
        Ok(Ok(()))
    );
    if answered && !store.metrics().sync_failed.load(Ordering::Relaxed) {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    }
}

/// Sets the overall status and each project service's to `status`.
async fn report(reporter: &HealthReporter, status: ServingStatus) {
    for service in std::iter::once("").chain(super::SERVICES) {
        reporter.set_service_status(service, status).await;
    }
}

#[cfg(test)]
mod tests {
    use tokio_stream::StreamExt;
    use tonic::Request;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_server::Health;
    use tonic_health::server::HealthService;

    use super::{Duration, HealthProbe, HealthReporter, Ordering, Shutdown, Store, keep_reporting};

    /// The statuses `service` reports, one per change.
    async fn watch(
        health: &HealthService,
        service: &str,
    ) -> impl tokio_stream::Stream<Item = ServingStatus> {
        let request = Request::new(HealthCheckRequest {
            service: service.to_owned(),
        });
        health
            .watch(request)
            .await
            .unwrap()
            .into_inner()
            .map(|r| r.unwrap().status())
    }

    async fn next(
        stream: &mut (impl tokio_stream::Stream<Item = ServingStatus> + Unpin),
    ) -> ServingStatus {
        // A bound on a hang, not a measured time: a change comes within a probe or two.
        tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("a status change")
            .expect("an open stream")
    }

    #[tokio::test]
    async fn a_store_that_stops_answering_or_syncing_is_not_serving_until_it_recovers() {
        let store = Store::open_in_memory().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (shutdown, fire) = Shutdown::new(async {
            let _ = stopped.await;
        });
        tokio::spawn(fire);
        let reporter = HealthReporter::new();
        let health = HealthService::from_health_reporter(reporter.clone());
        let probe = HealthProbe {
            every: Duration::from_millis(20),
            timeout: Duration::from_millis(50),
        };
        keep_reporting(store.clone(), shutdown, probe, reporter).await;
        let mut overall = Box::pin(watch(&health, "").await);
        let mut runs = Box::pin(watch(&health, "xq.cluster.v1.RunService").await);
        assert_eq!(next(&mut overall).await, ServingStatus::Serving);
        assert_eq!(next(&mut runs).await, ServingStatus::Serving);

        // The writer thread is held by a call that waits for `release`.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let blocked = store.clone();
        let hold = tokio::spawn(async move {
            blocked
                .call(move |_| {
                    let _ = held.recv();
                    Ok(())
                })
                .await
        });
        assert_eq!(next(&mut overall).await, ServingStatus::NotServing);
        assert_eq!(next(&mut runs).await, ServingStatus::NotServing);
        release.send(()).unwrap();
        hold.await.unwrap().unwrap();
        assert_eq!(next(&mut overall).await, ServingStatus::Serving);
        assert_eq!(next(&mut runs).await, ServingStatus::Serving);

        // A failed group sync: not serving until a sync succeeds.
        store.metrics().sync_failed.store(true, Ordering::Relaxed);
        assert_eq!(next(&mut overall).await, ServingStatus::NotServing);
        store.metrics().sync_failed.store(false, Ordering::Relaxed);
        assert_eq!(next(&mut overall).await, ServingStatus::Serving);

        // Shutdown: not serving, for good.
        stop.send(()).unwrap();
        assert_eq!(next(&mut overall).await, ServingStatus::NotServing);
        let check = health
            .check(Request::new(HealthCheckRequest {
                service: "xq.cluster.v1.WorkerService".to_owned(),
            }))
            .await
            .unwrap();
        assert_eq!(check.into_inner().status(), ServingStatus::NotServing);
        let unknown = health
            .check(Request::new(HealthCheckRequest {
                service: "xq.cluster.v1.Nothing".to_owned(),
            }))
            .await
            .unwrap_err();
        assert_eq!(unknown.code(), tonic::Code::NotFound);
    }
}
