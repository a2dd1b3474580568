//! The store's own instruments: the writer thread's queue and the time of
//! its batches and syncs. The store updates them; `crate::metrics` exports
//! them with the rest.

use std::sync::atomic::AtomicBool;

use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

/// Latency buckets in seconds: 0.1 ms … ~3.3 s, doubling.
pub fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.0001, 2.0, 16)
}

/// The store's own instruments; the store updates them, `crate::metrics::Metrics` exports them.
#[derive(Debug)]
pub struct StoreMetrics {
    /// Calls sent to the thread and not yet started.
    pub queued: Gauge,
    pub batch_seconds: Histogram,
    pub sync_seconds: Histogram,
    /// Whether the last batch that wrote lost a change (its commit, which
    /// with full durability is the sync, failed, or SQLite rolled part of it
    /// back); set by every such batch. The health service reports
    /// NOT_SERVING while it is.
    pub write_failed: AtomicBool,
}

impl Default for StoreMetrics {
    fn default() -> Self {
        StoreMetrics {
            queued: Gauge::default(),
            batch_seconds: Histogram::new(latency_buckets()),
            sync_seconds: Histogram::new(latency_buckets()),
            write_failed: AtomicBool::new(false),
        }
    }
}
