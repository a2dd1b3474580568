//! Games as the cluster writes and reads them, below both binaries: the
//! worker plays and writes them, the coordinator checks, exports and reads
//! them, and neither depends on the other for it.
//!
//! # Layout
//!
//! Moves in one notation are `xq_engine::notation`'s; where openings come
//! from and the opening-line format are `xq_proto::openings`'s. This crate
//! adds what works on whole games:
//!
//! - [`openings`]: the sixteen first moves with random plies, or opening
//!   lines, as a playable [`openings::OpeningBook`], made as every runner
//!   makes them ([`openings::OpeningMaker`]): what a worker plays and what
//!   the coordinator's archive checks a game's opening against;
//! - [`pgn`]: PGN output in any of the engine's notations (ICCS, WXF,
//!   Chinese, 一字三码), and [`pgn::read`], game collections read back in
//!   every notation the engine reads (what `xq-coordinator book make` reads);
//! - [`stand_in`]: results adjudicated right after their openings, which
//!   pass the coordinator's checks, for tests and benches.

pub mod openings;
pub mod pgn;
pub mod stand_in;
