//! The store's own instruments: the writer thread's queue, how long calls
//! wait in each lane, and the time of its batches and syncs. The store
//! updates them; `crate::metrics` exports them with the rest.

use std::sync::atomic::AtomicBool;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

use super::batch::Lane;

/// Latency buckets in seconds: 0.1 ms … ~3.3 s, doubling.
pub fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.0001, 2.0, 16)
}

/// Makes the histograms of a labelled latency family ([`latency_buckets`]).
#[derive(Debug, Clone, Copy)]
pub struct LatencyHistogram;

impl MetricConstructor<Histogram> for LatencyHistogram {
    fn new_metric(&self) -> Histogram {
        Histogram::new(latency_buckets())
    }
}

/// A writer's lane as a label: `control` or `bulk`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LaneLabels {
    lane: &'static str,
}

impl From<Lane> for LaneLabels {
    fn from(lane: Lane) -> Self {
        let lane = match lane {
            Lane::Control => "control",
            Lane::Bulk => "bulk",
        };
        LaneLabels { lane }
    }
}

/// Seconds by lane.
pub type LaneHistograms = Family<LaneLabels, Histogram, LatencyHistogram>;

/// The store's own instruments; the store updates them, `crate::metrics::Metrics` exports them.
#[derive(Debug)]
pub struct StoreMetrics {
    /// Calls sent to the thread and not yet started.
    pub queued: Gauge,
    /// From a call's sending to its start on the thread, by lane.
    pub wait_seconds: LaneHistograms,
    /// From a call's sending to its answer (its batch committed), by lane.
    pub call_seconds: LaneHistograms,
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
            wait_seconds: Family::new_with_constructor(LatencyHistogram),
            call_seconds: Family::new_with_constructor(LatencyHistogram),
            batch_seconds: Histogram::new(latency_buckets()),
            sync_seconds: Histogram::new(latency_buckets()),
            write_failed: AtomicBool::new(false),
        }
    }
}
