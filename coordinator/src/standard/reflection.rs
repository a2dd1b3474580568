//! Server reflection: the descriptors of `cluster.proto`, of the health
//! service and of both reflection services, served in both protocol
//! versions (`grpc.reflection.v1`, and `v1alpha`, which older `grpcurl` and
//! other tools still ask for first); either lists every service.

use tonic_reflection::pb;
use tonic_reflection::server::{self, v1, v1alpha};

/// Why the reflection services could not be built (a descriptor set that
/// does not decode: a build fault, not an input).
pub type ReflectionError = server::Error;

/// The `grpc.reflection.v1` service.
pub fn v1() -> Result<v1::ServerReflectionServer<impl v1::ServerReflection>, ReflectionError> {
    builder().build_v1()
}

/// The `grpc.reflection.v1alpha` service.
pub fn v1alpha()
-> Result<v1alpha::ServerReflectionServer<impl v1alpha::ServerReflection>, ReflectionError> {
    builder().build_v1alpha()
}

fn builder() -> server::Builder<'static> {
    server::Builder::configure()
        .include_reflection_service(false)
        .register_encoded_file_descriptor_set(xq_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(pb::v1alpha::FILE_DESCRIPTOR_SET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_build_from_the_compiled_descriptors() {
        assert!(v1().is_ok());
        assert!(v1alpha().is_ok());
    }
}
