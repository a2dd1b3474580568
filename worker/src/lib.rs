//! The worker: plays game pairs in parallel and reports results to the coordinator.
//!
//! - [`timecontrol`]: `moves/seconds+increment` time controls and the clock;
//! - [`adjudication`]: resign, draw and length adjudication.

pub mod adjudication;
pub mod timecontrol;
