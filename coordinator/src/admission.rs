//! The tower layer that admits a `SubmitResult` into the check lane
//! ([`crate::service::check_lane`]) before its message is read, or refuses
//! it with `RESOURCE_EXHAUSTED` and the delay after which to try again
//! (gRPC's `grpc-retry-pushback-ms` trailer).
//!
//! It runs after authentication, so only a known worker's result takes a
//! place. The place travels to the handler in the request's extensions
//! ([`Admitted`]) and is released when the submission is answered. An
//! admitted result is served, its message decoded, on the lane's result
//! readers ([`crate::service::result_readers`]), not on the threads that
//! serve every other call.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tonic::Status;
use tonic::metadata::MetadataValue;

use crate::service::{Admission, CheckLane};

/// The path of the one call the layer admits.
pub const SUBMIT_RESULT: &str = "/xq.cluster.v1.WorkerService/SubmitResult";

pub use xq_proto::connect::RETRY_PUSHBACK;

/// A result's admission, for its handler to take.
#[derive(Debug, Clone)]
pub struct Admitted(Arc<Mutex<Option<Admission>>>);

impl Admitted {
    /// The admission of `request`, if the layer admitted it (once).
    pub fn take<T>(request: &tonic::Request<T>) -> Option<Admission> {
        request
            .extensions()
            .get::<Admitted>()
            .and_then(|a| a.0.lock().unwrap_or_else(PoisonError::into_inner).take())
    }
}

/// The status of a result refused for load: `RESOURCE_EXHAUSTED`, with the
/// delay in [`RETRY_PUSHBACK`] and in words.
pub fn refused(retry_after: std::time::Duration) -> Status {
    let ms = retry_after.as_millis().min(u128::from(u32::MAX)) as u64;
    let mut status = Status::resource_exhausted(format!(
        "the coordinator is checking as many results as it holds; nothing was read or \
         counted: keep the lease alive and submit again in {ms} ms"
    ));
    status
        .metadata_mut()
        .insert(RETRY_PUSHBACK, MetadataValue::from(ms));
    status
}

/// Puts the check lane's admission in front of a service.
#[derive(Debug, Clone)]
pub struct AdmissionLayer {
    lane: CheckLane,
}

impl AdmissionLayer {
    pub fn new(lane: CheckLane) -> Self {
        AdmissionLayer { lane }
    }
}

impl<S> tower::Layer<S> for AdmissionLayer {
    type Service = AdmissionService<S>;

    fn layer(&self, inner: S) -> AdmissionService<S> {
        AdmissionService {
            inner,
            lane: self.lane.clone(),
        }
    }
}

/// The service [`AdmissionLayer`] makes.
#[derive(Debug, Clone)]
pub struct AdmissionService<S> {
    inner: S,
    lane: CheckLane,
}

impl<S, B> tower::Service<http::Request<B>> for AdmissionService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        if request.uri().path() == SUBMIT_RESULT {
            match self.lane.try_admit() {
                Ok(admission) => {
                    request
                        .extensions_mut()
                        .insert(Admitted(Arc::new(Mutex::new(Some(admission)))));
                    let served = self
                        .lane
                        .readers()
                        .spawn(async move { inner.call(request).await });
                    return Box::pin(async move {
                        served.await.unwrap_or_else(|e| {
                            tracing::error!(error = %e, "a result's handler stopped");
                            let status = Status::internal(
                                "the result's handler stopped before it answered: submit again \
                                 (a result already counted is answered DUPLICATE)",
                            );
                            Ok(status.into_http())
                        })
                    });
                }
                Err(busy) => {
                    let refusal = refused(busy.retry_after).into_http();
                    return Box::pin(async move { Ok(refusal) });
                }
            }
        }
        Box::pin(async move { inner.call(request).await })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use tower::{Layer, Service};

    use super::*;
    use crate::service::CheckConfig;

    type Answer = http::Response<tonic::body::Body>;

    /// Answers with the name of the thread that served the request.
    async fn thread_name(_: http::Request<()>) -> Result<Answer, Infallible> {
        let name = std::thread::current().name().unwrap_or("").to_owned();
        Ok(http::Response::builder()
            .header("thread", name)
            .body(tonic::body::Body::empty())
            .unwrap())
    }

    async fn served_on<S>(service: &mut S, path: &str) -> String
    where
        S: Service<http::Request<()>, Response = Answer, Error = Infallible>,
    {
        let request = http::Request::builder().uri(path).body(()).unwrap();
        let answer = service.call(request).await.unwrap();
        answer.headers()["thread"].to_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn an_admitted_result_is_served_on_the_readers_threads_and_other_calls_where_they_came() {
        let lane = CheckLane::new(CheckConfig {
            threads: 1,
            admitted_per_thread: 1,
        });
        let mut service = AdmissionLayer::new(lane.clone()).layer(tower::service_fn(thread_name));
        assert_eq!(
            served_on(&mut service, SUBMIT_RESULT).await,
            "xq-read-result"
        );
        let here = std::thread::current().name().unwrap_or("").to_owned();
        let other = "/xq.cluster.v1.WorkerService/Heartbeat";
        assert_eq!(served_on(&mut service, other).await, here);
        assert_eq!(lane.in_flight(), 0, "the place is released with the answer");
    }
}
