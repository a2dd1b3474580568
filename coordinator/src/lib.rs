//! The coordinator: statistics, scheduling, storage and the gRPC server.
