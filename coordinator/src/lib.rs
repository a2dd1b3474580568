//! The coordinator: statistics, scheduling, storage and the gRPC server.
//!
//! # Layout
//!
//! * [`auth`]: tokens, roles, the auth layer and per-token rate limits.
//! * [`stats`]: pure match statistics (Elo, SPRT, variant comparison).
//! * [`spsa`]: the pure SPSA tuner state and its step functions.
//! * [`report`]: reports computed from run totals (variants runs).
//! * [`runs`]: runs as domain types and, per kind, how leases are formed and
//!   results applied.
//! * [`store`]: the SQLite store (the only state; blocking, on tokio's
//!   blocking pool).
//! * [`scheduler`]: leases, fair share, exactly-once result counting.
//! * [`convert`]: the one place where wire and domain types meet.
//! * [`server`]: the thin tonic services and `run(listener, db, shutdown)`.
//! * [`local`]: embedded local mode (server and workers in one process).
//! * [`web`]: the web view (runs, graphs, workers, engines) over a read
//!   connection, and `/metrics` ([`metrics`]).

pub mod auth;
pub mod convert;
pub mod local;
pub mod metrics;
pub mod report;
pub mod runs;
pub mod scheduler;
pub mod server;
pub mod shutdown;
pub mod spsa;
pub mod stats;
pub mod store;
pub mod web;
