//! `/metrics`: the coordinator's counters in the Prometheus text format.
//!
//! * `xq_requests_total{protocol, method, status}` and
//!   `xq_request_duration_seconds{protocol, method}`: every gRPC call
//!   (method = the RPC name, status = the gRPC code number; counted by
//!   [`GrpcMetricsLayer`] in front of the auth layer, so refused calls count
//!   too) and every web request (method = `GET /runs/{id}`, status = the HTTP
//!   code). Latency runs until the response headers are ready, which for
//!   unary calls is the whole call.
//! * `xq_store_queue_depth`, `xq_store_batch_seconds`, `xq_store_sync_seconds`:
//!   calls waiting for the store's writer thread, the time of each batch the
//!   thread runs (from its first call to its answers, sync included) and of
//!   its WAL sync alone.
//! * `xq_store_wait_seconds{lane}`, `xq_store_call_seconds{lane}`: how long
//!   a store call waited for the writer thread, and until its
//!   answer, by lane (`control`: leases, heartbeats, administration; `bulk`:
//!   results' writes).
//! * `xq_leases_in_flight`, `xq_results_counted`, `xq_runs_active`,
//!   `xq_workers`: read from the database at every scrape, so they hold
//!   across restarts and other processes' writes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::store::activity::Counts;
use crate::store::instruments::{LatencyHistogram, StoreMetrics};

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    protocol: &'static str,
    method: String,
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    protocol: &'static str,
    method: String,
}

/// Every exported metric; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<MethodLabels, Histogram, LatencyHistogram>,
    leases_in_flight: Gauge,
    results_counted: Gauge,
    runs_active: Gauge,
    workers: Gauge,
}

impl Metrics {
    /// The metrics, exporting `store`'s instruments.
    pub fn new(store: &StoreMetrics) -> Self {
        let mut registry = Registry::with_prefix("xq");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::new_with_constructor(LatencyHistogram);
        registry.register(
            "requests",
            "Requests by protocol, method and status",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time to the response headers",
            latency.clone(),
        );
        registry.register(
            "store_queue_depth",
            "Calls waiting for the store's writer thread",
            store.queued.clone(),
        );
        registry.register(
            "store_wait_seconds",
            "Time a store call waits for the writer thread, by lane",
            store.wait_seconds.clone(),
        );
        registry.register(
            "store_call_seconds",
            "Time from a store call's sending to its answer, by lane",
            store.call_seconds.clone(),
        );
        registry.register(
            "store_batch_seconds",
            "Time of one batch of store calls, sync included",
            store.batch_seconds.clone(),
        );
        registry.register(
            "store_sync_seconds",
            "Time of the WAL sync that ends a batch that wrote",
            store.sync_seconds.clone(),
        );
        let gauge = |registry: &mut Registry, name: &str, help: &str| {
            let g = Gauge::default();
            registry.register(name, help, g.clone());
            g
        };
        let leases_in_flight = gauge(
            &mut registry,
            "leases_in_flight",
            "Active leases within their deadline",
        );
        let results_counted = gauge(
            &mut registry,
            "results_counted",
            "Lease results counted, ever",
        );
        let runs_active = gauge(&mut registry, "runs_active", "Active runs");
        let workers = gauge(&mut registry, "workers", "Registered workers");
        Metrics {
            registry,
            requests,
            latency,
            leases_in_flight,
            results_counted,
            runs_active,
            workers,
        }
    }

    /// Counts one request and its latency.
    pub fn observe(&self, protocol: &'static str, method: &str, status: &str, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                protocol,
                method: method.to_owned(),
                status: status.to_owned(),
            })
            .inc();
        self.latency
            .get_or_create(&MethodLabels {
                protocol,
                method: method.to_owned(),
            })
            .observe(seconds);
    }

    /// The text exposition, with the database counts as read at this scrape.
    pub fn encode(&self, counts: Counts) -> String {
        let set = |g: &Gauge, v: u64| g.set(v.min(i64::MAX as u64) as i64);
        set(&self.leases_in_flight, counts.leases_in_flight);
        set(&self.results_counted, counts.results_counted);
        set(&self.runs_active, counts.runs_active);
        set(&self.workers, counts.workers);
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The RPC name of a gRPC path (`/pkg.Service/Method` → `Method`); anything
/// else is `other`, so a client cannot grow the label set without bound.
fn rpc_name(path: &str) -> &str {
    match path.strip_prefix('/').and_then(|p| p.split_once('/')) {
        Some((service, method))
            if service.starts_with("xq.cluster.v1.")
                && crate::access::permission(path).is_some() =>
        {
            method
        }
        _ => "other",
    }
}

/// Counts every gRPC call; put it in front of the auth layer.
#[derive(Debug, Clone)]
pub struct GrpcMetricsLayer {
    metrics: Arc<Metrics>,
}

impl GrpcMetricsLayer {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        GrpcMetricsLayer { metrics }
    }
}

impl<S> tower::Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetricsService<S>;

    fn layer(&self, inner: S) -> GrpcMetricsService<S> {
        GrpcMetricsService {
            inner,
            metrics: Arc::clone(&self.metrics),
        }
    }
}

/// The service [`GrpcMetricsLayer`] makes.
#[derive(Debug, Clone)]
pub struct GrpcMetricsService<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S, B, R> tower::Service<http::Request<B>> for GrpcMetricsService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let metrics = Arc::clone(&self.metrics);
        let method = rpc_name(request.uri().path()).to_owned();
        Box::pin(async move {
            let start = Instant::now();
            let response = inner.call(request).await;
            // An error comes as `grpc-status` in the headers (trailers-only
            // response); a success sends it in the trailers, after the body.
            let status = match &response {
                Ok(r) => r
                    .headers()
                    .get("grpc-status")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("0")
                    .to_owned(),
                Err(_) => "transport".to_owned(),
            };
            metrics.observe("grpc", &method, &status, start.elapsed().as_secs_f64());
            response
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_has_every_family() {
        let store = StoreMetrics::default();
        let metrics = Metrics::new(&store);
        metrics.observe("grpc", "SubmitResult", "0", 0.002);
        metrics.observe("http", "GET /runs", "200", 0.01);
        store.queued.inc();
        store.sync_seconds.observe(0.004);
        store
            .wait_seconds
            .get_or_create(&crate::store::batch::Lane::Bulk.into())
            .observe(0.02);
        let text = metrics.encode(Counts {
            leases_in_flight: 3,
            results_counted: 7,
            runs_active: 1,
            workers: 2,
        });
        for line in [
            "xq_requests_total{protocol=\"grpc\",method=\"SubmitResult\",status=\"0\"} 1",
            "xq_requests_total{protocol=\"http\",method=\"GET /runs\",status=\"200\"} 1",
            "xq_request_duration_seconds_count{protocol=\"grpc\",method=\"SubmitResult\"} 1",
            "xq_store_queue_depth 1",
            "xq_store_sync_seconds_count 1",
            "xq_store_wait_seconds_count{lane=\"bulk\"} 1",
            "xq_leases_in_flight 3",
            "xq_results_counted 7",
            "xq_workers 2",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn unknown_paths_share_one_label() {
        assert_eq!(
            rpc_name("/xq.cluster.v1.WorkerService/SubmitResult"),
            "SubmitResult"
        );
        assert_eq!(rpc_name("/xq.cluster.v1.RunService/Anything"), "other");
        assert_eq!(rpc_name("/evil/Service"), "other");
    }
}
