//! The worker: plays game pairs in parallel and reports results to the coordinator.
//!
//! The game runner arrives with issue 5 and the coordinator client with issue 7.
