//! Training data from the cluster's games, and tuning the built-in engine's
//! evaluation on it.
//!
//! - [`data`]: one training position ([`Sample`]) and its text format,
//!   `fen | score | result`, read and written in one place.

pub mod data;
pub mod psv;

pub use data::{DataError, Sample, SampleResult};
