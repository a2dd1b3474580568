//! The worker: plays game pairs in parallel and reports results to the coordinator.
//!
//! # Layout
//!
//! The contract it plays by (what a lease asks for, what playing it gives,
//! limits, adjudication, openings, and their wire forms) is `xq_proto`; the
//! openings it plays and the PGN it writes are `xq_games`'s (its
//! `openings` and `pgn`), which the coordinator shares.
//!
//! - [`timecontrol`]: the game clock that runs an `xq_proto::TimeControl`,
//!   and the per-search budget a move gets from a limit and the clocks;
//! - [`adjudication`]: the adjudicator that applies `xq_proto::Adjudication`;
//! - [`runner`]: games on a rayon pool, one search state per thread, and
//!   [`EnginePlayer`], the [`BatchPlayer`] that plays the coordinator's leases;
//! - [`batch_player`]: the [`BatchPlayer`] contract between the client loop
//!   and the runner;
//! - [`client`]: the coordinator client loop (register, lease, play, heartbeat,
//!   submit), with back-off and graceful shutdown;
//! - [`identity`]: the host name and the machine id a worker keeps across
//!   restarts, in its state directory;
//! - [`rejected`]: results the coordinator refused, kept on disk;
//! - [`external`]: UCI and UCCI engine processes as players;
//! - [`blob_cache`]: downloaded engine executables and assets, verified by SHA-256;
//! - [`machine`]: this machine's CPU, flags, cores and memory, as reported
//!   at registration;
//! - [`signature`]: an engine's signature measured here, by its bench or
//!   a fixed search, bounded in time;
//! - [`speed`]: this machine's speed with an engine under test, by its
//!   own bench or a fixed search, cached per build and machine;
//! - [`build`]: engines built from a git commit (a lease's source engine),
//!   cached per commit, command and ARCH;
//! - [`version`]: this worker's version (patchable in the executable) and
//!   target triple;
//! - [`update`]: self-update from the coordinator's worker release
//!   (`xq-worker work --auto-update`);
//! - [`cli`]: the `xq-worker` command line.

pub mod adjudication;
pub mod batch_player;
pub mod blob_cache;
pub mod build;
pub mod cli;
pub mod client;
pub mod external;
pub mod identity;
pub mod machine;
pub mod rejected;
pub mod runner;
pub mod signature;
pub mod speed;
pub mod timecontrol;
pub mod update;
pub mod version;

pub use batch_player::{BatchPlayer, Bench};
pub use runner::EnginePlayer;
