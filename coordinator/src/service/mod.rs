//! The core's operations, as services that every door (the gRPC handlers,
//! the web view, the CLI on the database file) calls alike. Each mutating
//! method checks the caller once, then makes its change and writes its
//! event with its actor in one store transaction; a read is one call.
//!
//! (This branch holds the registry, accounts and events services only; the
//! `Core` handle that owns the store and hands them out is merged beside
//! them.)

pub mod accounts;
pub mod events;
pub mod registry;
