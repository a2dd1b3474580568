//! The coordinator: statistics, scheduling, storage and the gRPC server.
//!
//! # Layout
//!
//! * [`stats`]: pure match statistics (Elo, SPRT, variant comparison).
//! * [`spsa`]: the pure SPSA tuner state and its step functions.

pub mod spsa;
pub mod stats;
