//! Training data from the cluster's games, and tuning the built-in engine's
//! evaluation on it.
//!
//! - [`data`]: one training position ([`Sample`]) and its text format,
//!   `fen | score | result`, read and written in one place.
//! - [`psv`]: the same positions as Fairy-Stockfish's 72-byte `.bin` records
//!   (`PackedSfenValue`), written and read in one place.
//! - [`texel`]: Texel tuning of the evaluation parameters on such positions.

pub mod data;
pub mod psv;
pub mod texel;

pub use data::{DataError, Sample, SampleResult};
