//! The worker: plays game pairs in parallel and reports results to the coordinator.
//!
//! # Layout
//!
//! * [`work`]: what a lease asks for ([`WorkSpec`]) and what playing it gives
//!   ([`BatchOutcome`]), the [`BatchPlayer`] contract, and their wire conversion.
//! * [`client`]: the coordinator client loop (register, lease, play,
//!   heartbeat, submit), with back-off and graceful shutdown.
//!
//! The game runner (the real [`BatchPlayer`]) arrives with issue 5.

pub mod client;
pub mod work;

pub use work::{BatchOutcome, BatchPlayer, WorkSpec};
