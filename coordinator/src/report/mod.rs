//! Reports computed from stored run totals (pure, no I/O).
//!
//! * [`summary`]: any run's summary as JSON (`report --json`, the web view).
//! * [`variants`]: the per-variant report of a variants run and the
//!   comparisons with its first variant.
//! * [`workers`]: a run's per-worker health table.
//! * [`versions`]: the cluster's worker versions and update states.

pub mod summary;
pub mod variants;
pub mod versions;
pub mod workers;
