//! The coordinator: statistics, scheduling, storage and the gRPC server.
//! Its wire types and their conversion are `xq_proto`'s; the game formats
//! are `xq_games`'s: the openings a runner plays (the archive's opening check
//! regenerates them with the runner's own code), the PGN writer `xq-worker
//! play --pgn` shares and its reader. It uses `xq_worker` only for local
//! mode's embedded workers ([`local`]).
//!
//! # Layout
//!
//! * [`auth`]: tokens, roles, the auth layer and per-token rate limits.
//! * [`stats`]: the `xq-stats` crate (`coordinator/stats`): pure match statistics (Elo, SPRT, variant comparison, residuals) and SPSA, re-exported;
//! * [`spsa`]: `xq_stats::spsa`, the pure SPSA tuner state and its step functions;
//! * [`spin_options`]: the spin options an engine advertises, and a tune's
//!   fit to them.
//! * [`report`]: reports computed from run totals (variants runs).
//! * [`run_args`]: a new run's arguments (the CLI's flags, the web form's
//!   fields) and the one builder of its spec.
//! * [`runs`]: runs as domain types; the [`runs::Kind`] trait (next slice,
//!   the players of a slice, apply a result, finished, status), implemented
//!   once per kind in `runs/{sprt,spsa,games,variants}.rs` with the kind's
//!   spec and its wire form.
//! * [`events`]: the log of who did what (types; the store writes them).
//! * [`store`]: the SQLite store (the only state; one connection on its own
//!   thread). Its row-level modules and `Store::call` are private to the
//!   crate: the doors hold a [`service::Store`] only to give [`service::Core`],
//!   and work on the file itself only through [`store::backup`] and
//!   [`store::migrations`]; [`store::game_codec`] is the archive's byte
//!   format.
//! * [`service`]: the core's operations, one module each, behind the
//!   [`service::Core`] handle: workers, leases (fair share, exactly-once
//!   result counting), runs' administration and read-only queries; each
//!   one transaction, blind to the run kinds. Every door (gRPC, the web
//!   view, reports, local mode) calls these.
//! * [`git`]: a source engine's branch or tag resolved to its commit
//!   (`git ls-remote`) when a run is created; the coordinator never builds.
//! * [`convert`]: wire ↔ domain for the coordinator's own messages (run
//!   specs and settings, statuses, lease states); the contract shared with
//!   workers converts in `xq_proto`.
//! * [`service`]: the core's operations as services every door calls:
//!   [`service::accounts`] (users, tokens, sessions, what sign-in reads),
//!   [`service::registry`] (engines and assets from anywhere: blobs
//!   uploaded as they arrive, never whole in memory, and registered under
//!   names that belong to their owner; worker releases),
//!   [`service::events`] (the log, read). Each change is one transaction
//!   with its event and one permission check.
//! * [`registry`]: the registry's wire form; [`registry_service`]: its gRPC
//!   service.
//! * [`server`]: the thin tonic services, `run(listener, db, shutdown)`, and
//!   the one place store errors become statuses; [`account_service`]: the
//!   account service (`Login` without a token, a user's own tokens);
//!   [`standard`]: the standard gRPC services served beside them (health
//!   checking from the store's state, server reflection); [`preface`]:
//!   the deadline of a connection's HTTP/2 preface and the keepalive that
//!   drop slow-loris clients.
//! * [`book`]: opening books from game records (`book make`).
//! * [`archive`]: the checks of a result's games; [`game_export`]: a run's
//!   stored games read back by filter and written as PGN (`pgn`, the
//!   `ExportGames` RPC, the web view); [`datagen_export`]: training
//!   positions from a run's stored games (`datagen-export`).
//! * [`tls`]: TLS on the gRPC port, served here so that a certificate no
//!   client accepts and a client speaking plain HTTP are named; the
//!   cluster CA and coordinator certificate of `xq-coordinator cert`.
//! * [`local`]: embedded local mode (server and workers in one process).
//! * [`releases`]: worker versions on the wire: the too-old refusal of
//!   `Register` and `RequestWork`, releases by target, failed updates.
//! * [`http`]: what the server hands the HTTP view it serves beside gRPC
//!   (the `xq-web` crate: runs, graphs, workers, engines, and `/metrics`
//!   from [`metrics`]), without depending on it.

pub mod access;
pub mod account_service;
pub mod admin_service;
pub mod admission;
pub mod archive;
pub mod auth;
pub mod book;
pub mod convert;
pub mod datagen_export;
pub mod events;
pub mod game_export;
pub mod git;
pub mod http;
pub mod in_process;
pub mod local;
pub mod metrics;
pub mod pace;
pub mod preface;
pub mod registry;
pub mod registry_service;
pub mod releases;
pub mod report;
pub mod run_args;
pub mod runs;
pub mod server;
pub mod service;
pub mod shutdown;
pub mod spin_options;
pub mod standard;
pub use xq_stats as stats;
pub use xq_stats::spsa;
pub mod store;
pub mod tls;
