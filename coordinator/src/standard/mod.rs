//! The standard gRPC services every gRPC tool speaks, served beside the
//! project's own: health checking (`grpc.health.v1.Health`, [`health`])
//! and server reflection (`grpc.reflection.v1` and `v1alpha`,
//! [`reflection`]), so `grpcurl`, `grpc_health_probe` and orchestrators'
//! probes work without the `.proto` file. Both are open without a token
//! and rate-limited per client address ([`crate::auth`]); nothing they
//! answer is secret (the protocol is published, health is one word).

pub mod health;
pub mod reflection;

/// The project's services, each of which health reports by name.
pub const SERVICES: [&str; 4] = [
    xq_proto::pb::worker_service_server::SERVICE_NAME,
    xq_proto::pb::run_service_server::SERVICE_NAME,
    xq_proto::pb::account_service_server::SERVICE_NAME,
    xq_proto::pb::registry_service_server::SERVICE_NAME,
];
