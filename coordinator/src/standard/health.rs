//! The health service: SERVING while the store answers, NOT_SERVING when
//! it does not or once shutdown has begun.
//!
//! # What is reported
//!
//! * One status, under every name the service knows: the overall status
//!   (`""`), each of the project's services ([`super::SERVICES`]) and the
//!   health service itself. Other names are NOT_FOUND.
//! * A probe every [`HealthProbe::every`] sends one empty call through the
//!   store's writer queue (it reads and writes nothing, so it never causes
//!   a sync). The store is healthy if that call is answered within
//!   [`HealthProbe::timeout`] and the last batch of calls that wrote lost
//!   nothing (its commit, which is the sync, did not fail:
//!   [`StoreMetrics::write_failed`](crate::store::instruments::StoreMetrics)).
//!   A queue so long that the probe waits past the timeout counts as not
//!   answering: a worker's call would wait as long.
//! * `Watch` streams see changes, not every probe: the first message is the
//!   status then, each next one a change.
//! * Once shutdown begins the status is NOT_SERVING, probing stops, and
//!   `Watch` streams end after that last message (so they do not hold the
//!   server's graceful shutdown open).

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

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

/// The health service, its status set from a first probe of `store`, and
/// a task that keeps probing until `shutdown` begins.
pub async fn serve(
    store: Store,
    shutdown: Shutdown,
    probe: HealthProbe,
) -> HealthServer<StoreHealth> {
    HealthServer::new(StoreHealth::start(store, shutdown, probe).await)
}

/// `grpc.health.v1.Health` reporting the store's status.
#[derive(Debug, Clone)]
pub struct StoreHealth {
    status: watch::Receiver<ServingStatus>,
}

impl StoreHealth {
    /// Probes `store` once, then spawns the task that probes it again every
    /// `probe.every` until `shutdown` begins.
    pub async fn start(store: Store, mut shutdown: Shutdown, probe: HealthProbe) -> Self {
        let (tx, status) = watch::channel(judge(&store, probe.timeout).await);
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
                tx.send_if_modified(|status| {
                    let changed = *status != now;
                    if changed {
                        tracing::warn!(from = ?*status, to = ?now, "store health changed");
                        *status = now;
                    }
                    changed
                });
            }
            tx.send_replace(ServingStatus::NotServing);
            // Dropping `tx` ends every Watch stream after its last message.
        });
        StoreHealth { status }
    }

    /// The status of `service`, or NOT_FOUND for a name not reported.
    fn of(&self, service: &str) -> Result<watch::Receiver<ServingStatus>, Status> {
        let known = service.is_empty()
            || service == <HealthServer<StoreHealth> as tonic::server::NamedService>::NAME
            || super::SERVICES.contains(&service);
        if known {
            Ok(self.status.clone())
        } else {
            Err(Status::not_found(format!(
                "no health is reported for service {}",
                xq_proto::quote(service)
            )))
        }
    }
}

type Statuses = Pin<Box<dyn Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

#[tonic::async_trait]
impl Health for StoreHealth {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let status = *self.of(&request.get_ref().service)?.borrow();
        Ok(Response::new(HealthCheckResponse {
            status: status.into(),
        }))
    }

    type WatchStream = Statuses;

    async fn watch(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<Statuses>, Status> {
        let statuses = WatchStream::new(self.of(&request.get_ref().service)?).map(|status| {
            Ok(HealthCheckResponse {
                status: status.into(),
            })
        });
        Ok(Response::new(Box::pin(statuses)))
    }
}

/// The store's health now: whether an empty call through its queue is
/// answered within `timeout` and its last batch that wrote lost nothing.
async fn judge(store: &Store, timeout: Duration) -> ServingStatus {
    let answered = matches!(
        tokio::time::timeout(timeout, store.ping()).await,
        Ok(Ok(()))
    );
    if answered && !store.metrics().write_failed.load(Ordering::Relaxed) {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(service: &str) -> Request<HealthCheckRequest> {
        Request::new(HealthCheckRequest {
            service: service.to_owned(),
        })
    }

    async fn watch(health: &StoreHealth, service: &str) -> Statuses {
        health.watch(asking(service)).await.unwrap().into_inner()
    }

    /// The next status of `stream`; `None` once it has ended.
    async fn next(stream: &mut Statuses) -> Option<ServingStatus> {
        // A bound on a hang, not a measured time: a change comes within a probe or two.
        tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("a status change or the end")
            .map(|r| r.unwrap().status())
    }

    #[tokio::test]
    async fn a_store_that_stops_answering_or_syncing_is_not_serving_until_it_recovers() {
        use ServingStatus::{NotServing, Serving};
        let store = Store::open_in_memory().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (shutdown, fire) = Shutdown::new(async {
            let _ = stopped.await;
        });
        tokio::spawn(fire);
        let probe = HealthProbe {
            every: Duration::from_millis(20),
            timeout: Duration::from_millis(50),
        };
        let health = StoreHealth::start(store.clone(), shutdown, probe).await;
        let mut overall = watch(&health, "").await;
        let mut runs = watch(&health, "xq.cluster.v1.RunService").await;
        assert_eq!(next(&mut overall).await, Some(Serving));
        assert_eq!(next(&mut runs).await, Some(Serving));

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
        assert_eq!(next(&mut overall).await, Some(NotServing));
        assert_eq!(next(&mut runs).await, Some(NotServing));
        release.send(()).unwrap();
        hold.await.unwrap().unwrap();
        assert_eq!(next(&mut overall).await, Some(Serving));
        assert_eq!(next(&mut runs).await, Some(Serving));

        // A batch that lost its writes: not serving until one commits.
        store.metrics().write_failed.store(true, Ordering::Relaxed);
        assert_eq!(next(&mut overall).await, Some(NotServing));
        store.metrics().write_failed.store(false, Ordering::Relaxed);
        assert_eq!(next(&mut overall).await, Some(Serving));

        // Shutdown: not serving for good, and the streams end.
        stop.send(()).unwrap();
        assert_eq!(next(&mut overall).await, Some(NotServing));
        assert_eq!(next(&mut overall).await, None);
        let check = health
            .check(asking("xq.cluster.v1.WorkerService"))
            .await
            .unwrap();
        assert_eq!(check.into_inner().status(), NotServing);
        let unknown = health
            .check(asking("xq.cluster.v1.Nothing"))
            .await
            .unwrap_err();
        assert_eq!(unknown.code(), tonic::Code::NotFound);
        assert!(
            unknown.message().contains("Nothing"),
            "{}",
            unknown.message()
        );
    }
}
