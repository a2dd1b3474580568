//! The wire protocol between coordinator, workers and the operator CLI.
//!
//! The `.proto` files under `proto/` are the single source of truth (units,
//! ranges and the first-player result convention are documented there); this
//! crate compiles them (with `protox` and `tonic-prost-build`, so no system
//! `protoc` is needed) and re-exports the generated module. Conversions to
//! domain types live with the domain types (`xq_worker::work`,
//! `xq_coordinator::convert`), not here.

/// Package `xq.cluster.v1`.
pub mod cluster {
    /// Version 1 of the cluster protocol.
    pub mod v1 {
        #![allow(missing_debug_implementations, clippy::all)]
        tonic::include_proto!("xq.cluster.v1");
    }
}

pub use cluster::v1 as pb;
