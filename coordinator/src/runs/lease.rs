//! Leases as the domain sees them: a slice of a run handed to one worker
//! until a deadline, where it is in its life, and the counted results the
//! store keeps by lease.

use xq_proto::Totals;
use xq_proto::variant_stats::VariantStats;

use crate::spsa::SpsaRequest;

/// Where a lease is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseState {
    Active,
    Done,
    Expired,
    Released,
    Cancelled,
}

impl LeaseState {
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseState::Active => "active",
            LeaseState::Done => "done",
            LeaseState::Expired => "expired",
            LeaseState::Released => "released",
            LeaseState::Cancelled => "cancelled",
        }
    }

    /// The state a stored name means; `None` for an unknown one.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "active" => LeaseState::Active,
            "done" => LeaseState::Done,
            "expired" => LeaseState::Expired,
            "released" => LeaseState::Released,
            "cancelled" => LeaseState::Cancelled,
            _ => return None,
        })
    }
}

/// A stored lease.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub id: u64,
    pub run_id: u64,
    pub worker_id: u64,
    pub state: LeaseState,
    pub opening_offset: u64,
    pub pairs: u32,
    pub spsa_request: Option<SpsaRequest>,
    /// When it was handed out, unix ms.
    pub created_ms: i64,
    /// Unix ms.
    pub deadline_ms: i64,
    /// Variants runs: the index of the lease's rule set in the spec.
    pub variant: Option<usize>,
}

impl Lease {
    /// The slice of its run's openings it plays.
    pub fn slice(&self) -> super::Slice {
        super::Slice {
            offset: self.opening_offset,
            pairs: self.pairs,
            variant: self.variant,
        }
    }
}

/// A counted result as stored, for rebuilding a run's totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResult {
    pub lease_id: u64,
    /// Variants runs: the lease's variant.
    pub variant: Option<usize>,
    pub totals: Totals,
    pub stats: Option<VariantStats>,
}
