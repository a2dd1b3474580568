//! Reports computed from stored run totals (pure, no I/O).
//!
//! * [`variants`]: the per-variant report of a variants run and the
//!   comparisons with its first variant.

pub mod variants;
