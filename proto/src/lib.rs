//! The cluster's contract: the wire protocol between coordinator, workers and
//! the operator CLI, the domain types it carries, and their conversions.
//!
//! The `.proto` file under `proto/xq/cluster/v1/` is the source of truth for
//! the wire (units, ranges and the first-player result convention are
//! documented there); this crate compiles it (with `protox` and
//! `tonic-prost-build`, so no system `protoc` is needed) into [`pb`], and
//! holds the domain types both sides exchange, the way qdrant's `api` crate
//! does.
//!
//! # Layout
//!
//! - [`pb`]: the generated messages and services, and [`FILE_DESCRIPTOR_SET`]
//!   (their descriptors, for server reflection);
//! - [`limit`]: [`Limit`] and [`TimeControl`], with their text forms
//!   (`nodes=N`, `depth=D`, `movetime=MS`, `tc=40/60+0.5`);
//! - [`adjudication`]: [`Adjudication`], with its one default;
//! - [`blob`]: the registry's content-addressed blobs (chunk size, `asset:` references);
//! - [`capacity`]: games a worker plays at once (cores, memory), and the
//!   time factor of a run's speed scaling;
//! - [`machine`]: a worker's [`Machine`] (CPU model, instruction-set
//!   [`Flags`], cores, memory) and its x86-64 level;
//! - [`arch`]: the table of ARCH values engine builds are tagged with;
//! - [`atomic_file`]: files replaced whole (written beside, synced, renamed);
//! - [`engine_binaries`]: which of an engine's executables a machine takes;
//! - [`engine_source`]: engines built from a git commit ([`EngineSource`]),
//!   the build tools a worker reports, a failed build's log tail;
//! - [`openings`]: [`OpeningSource`] and the opening-line format;
//! - [`private`]: files and folders created readable by their owner only;
//! - [`work`]: what a lease asks for ([`WorkSpec`], [`PlayerSpec`],
//!   [`EngineRef`] with its [`EngineBinary`] builds, [`OpeningSlice`]);
//! - [`results`]: [`Score`], [`Totals`] (the one totals record) and a lease's
//!   [`BatchOutcome`];
//! - [`rule_set`]: a rule set's text at the edges (parsed once, written by
//!   its canonical name, serde adapters);
//! - [`variant_stats`]: Red's view of a batch and capture conversion per kind,
//!   for rule-variant studies;
//! - [`game_record`]: one game as the game archive keeps it, and which
//!   games a run keeps ([`Retention`]);
//! - [`convert`]: shape conversion to and from [`pb`] (`From`/`TryFrom`);
//! - [`validate`]: the domain rules a value read from the wire has passed;
//! - [`error`]: [`Invalid`], the one error of both, and its gRPC status;
//! - [`cli`]: the command-line flags of these settings, shared by both binaries;
//! - [`connect`]: a client's channel and bearer-token interceptor;
//! - [`connect_failure`]: the mistakes no retry mends (a certificate clients
//!   refuse, TLS on one side only, a refused token), named in plain words;
//! - [`utc`]: calendar dates of Unix times;
//! - [`uci_variant`]: the `UCI_Variant` a rule set asks an external engine for;
//! - [`worker_version`]: worker versions, target triples and the too-old refusal.

pub mod adjudication;
pub mod arch;
pub mod atomic_file;
pub mod blob;
pub mod capacity;
pub mod cli;
pub mod connect;
pub mod connect_failure;
pub mod convert;
pub mod engine_binaries;
pub mod engine_source;
pub mod error;
pub mod game_record;
pub mod limit;
pub mod machine;
pub mod openings;
pub mod private;
pub mod results;
pub mod rule_set;
pub mod signature;
pub mod uci_variant;
pub mod utc;
pub mod validate;
pub mod variant_stats;
pub mod work;
pub mod worker_version;

/// Package `xq.cluster.v1`.
pub mod cluster {
    /// Version 1 of the cluster protocol.
    pub mod v1 {
        #![allow(missing_debug_implementations, clippy::all)]
        tonic::include_proto!("xq.cluster.v1");
    }
}

pub use cluster::v1 as pb;

/// The encoded `google.protobuf.FileDescriptorSet` of `cluster.proto`, as
/// protox compiled it: what server reflection tells clients such as
/// `grpcurl` that have no copy of the `.proto` file.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/cluster_descriptor.bin"));

pub use adjudication::Adjudication;
pub use arch::{Arch, UnknownArch};
pub use engine_binaries::Chosen;
pub use engine_source::EngineSource;
pub use error::{Invalid, bounded, invalid, named, quote, required};
pub use game_record::{GameRecord, MoveStats, Retention, RetentionError};
pub use limit::{Limit, LimitError, TimeControl, TimeControlError};
pub use machine::{Flag, Flags, Machine, UnknownFlag, X86Level};
pub use openings::{MAX_RANDOM_PLIES, Opening, OpeningError, OpeningSource};
pub use results::{BatchOutcome, Pentanomial, Score, Totals, Wdl};
pub use signature::{MAX_SIGNATURE_DEPTH, Signature, SignatureError};
pub use variant_stats::VariantStats;
pub use work::{
    Coords, CoordsError, EngineBinary, EngineRef, OpeningSlice, PlayerSpec, Protocol, WorkSpec,
    is_sha256_hex,
};
pub use worker_version::{VersionError, WorkerVersion};
