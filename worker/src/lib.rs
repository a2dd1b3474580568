//! The worker: plays game pairs in parallel and reports results to the coordinator.
//!
//! - [`timecontrol`]: `moves/seconds+increment` time controls and the clock;
//! - [`adjudication`]: resign, draw and length adjudication;
//! - [`openings`]: the sixteen first moves with random plies, or opening files;
//! - [`pgn`]: PGN output in coordinates, WXF or Chinese notation;
//! - [`tally`]: W/D/L, pentanomial, plies and end reasons;
//! - [`runner`]: games on a rayon pool, one search state per thread;
//! - [`cli`]: the `xq-worker` command line.

pub mod adjudication;
pub mod cli;
pub mod openings;
pub mod pgn;
pub mod runner;
pub mod tally;
pub mod timecontrol;
