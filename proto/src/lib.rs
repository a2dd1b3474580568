//! The wire protocol between coordinator and workers.
//!
//! The `.proto` files under `proto/` are the single source of truth; this crate
//! compiles them (with `protox` and `tonic-prost-build`, so no system `protoc` is
//! needed) and re-exports the generated module. The protocol itself arrives with
//! the cluster (issue 7); until then the crate has no items.
