//! [`BatchPlayer`]: the contract between the client loop and whatever plays a
//! lease's games.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use xq_proto::{BatchOutcome, WorkSpec};

/// Plays a lease's game pairs. The real implementation is the rayon game
/// runner ([`crate::EnginePlayer`]).
/// A bench of the built-in engine, measured once at the worker's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bench {
    /// `Nodes searched`: equal for every build whose search behaves the same.
    pub signature: u64,
    /// Nodes per second on this machine (0: not measured).
    pub nps: u64,
}

pub trait BatchPlayer: Send + Sync + 'static {
    /// Plays `work` to completion (or until `cancel` is set, then returns the pairs finished so far),
    /// calling `progress(pairs_done)` as pairs finish. Blocking: the client calls it on a blocking thread.
    fn play(
        &self,
        work: &WorkSpec,
        cancel: &Arc<AtomicBool>,
        progress: &(dyn Fn(u32) + Sync),
    ) -> anyhow::Result<BatchOutcome>;
    /// The engine's bench on this machine, reported at registration.
    fn bench(&self) -> Bench;
    /// How many of `work`'s games it plays at once (0: not even one fits its
    /// cores and memory, so it cannot play the lease).
    fn games_at_once(&self, work: &WorkSpec) -> u32 {
        let _ = work;
        1
    }
    /// Where registered external engines must be put (as
    /// [`crate::blob_cache`] lays them out) before `play`; `None` when this
    /// player cannot play external engines.
    fn blob_cache(&self) -> Option<&Path> {
        None
    }
}
