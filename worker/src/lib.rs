//! The worker: plays game pairs in parallel and reports results to the coordinator.
//!
//! # Layout
//!
//! - [`timecontrol`]: `moves/seconds+increment` time controls and the clock;
//! - [`adjudication`]: resign, draw and length adjudication;
//! - [`openings`]: the sixteen first moves with random plies, or opening files;
//! - [`pgn`]: PGN output in coordinates, WXF or Chinese notation;
//! - [`tally`]: W/D/L, pentanomial, plies and end reasons;
//! - [`variant_stats`]: Red's view of a batch and capture conversion per kind,
//!   for rule-variant studies;
//! - [`runner`]: games on a rayon pool, one search state per thread, and
//!   [`EnginePlayer`], the [`BatchPlayer`] that plays the coordinator's leases;
//! - [`work`]: what a lease asks for ([`WorkSpec`]) and what playing it gives
//!   ([`BatchOutcome`]), the [`BatchPlayer`] contract, and their wire conversion;
//! - [`client`]: the coordinator client loop (register, lease, play, heartbeat,
//!   submit), with back-off and graceful shutdown;
//! - [`external`]: UCI and UCCI engine processes as players;
//! - [`engine_cache`]: downloaded engine executables, verified by SHA-256;
//! - [`cli`]: the `xq-worker` command line.

pub mod adjudication;
pub mod cli;
pub mod client;
pub mod engine_cache;
pub mod external;
pub mod openings;
pub mod pgn;
pub mod runner;
pub mod tally;
pub mod timecontrol;
pub mod variant_stats;
pub mod work;

pub use runner::EnginePlayer;
pub use work::{BatchOutcome, BatchPlayer, WorkSpec};
