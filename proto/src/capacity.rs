//! How many games a worker plays at once: its cores against one game's
//! search threads, its memory against both players' hash. The coordinator
//! (which leases a run only to a worker that fits one game, and shows the
//! number) and the worker (which plays that many) read this one rule.
//!
//! Only the side to move searches (engines are not told to ponder), so a
//! game keeps busy as many cores as the larger of its two engines' thread
//! counts, as fishtest counts its SMP tests. Both engines' hash tables stay
//! allocated for the whole game, so both count in memory.

use serde::{Deserialize, Serialize};

use crate::{Machine, PlayerSpec};

/// Most search threads a run may give one engine: as many as the built-in
/// engine's search takes.
pub const MAX_ENGINE_THREADS: u32 = xq_engine::search::MAX_THREADS as u32;

/// Memory an engine process takes beyond its hash table, MiB: its code,
/// stacks and a network of the size Xiangqi engines load (Pikafish's is
/// about 50 MiB).
pub const ENGINE_MARGIN_MIB: u64 = 64;

/// Memory a worker leaves to the system and to itself, MiB.
pub const RESERVE_MIB: u64 = 512;

/// What one game needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameNeeds {
    /// Cores: the search threads of the engine to move, at most.
    pub cores: u32,
    /// MiB: both players' hash plus [`ENGINE_MARGIN_MIB`] each.
    pub memory_mib: u64,
}

impl GameNeeds {
    /// A game of two engines with `threads` search threads and `hash_mb`
    /// MiB of hash each.
    pub fn symmetric(threads: u32, hash_mb: u32) -> GameNeeds {
        GameNeeds {
            cores: threads.max(1),
            memory_mib: 2 * (u64::from(hash_mb) + ENGINE_MARGIN_MIB),
        }
    }

    /// A game between `players`.
    pub fn of(players: &[PlayerSpec; 2]) -> GameNeeds {
        GameNeeds {
            cores: players.iter().map(|p| p.threads.max(1)).max().unwrap_or(1),
            memory_mib: players
                .iter()
                .map(|p| u64::from(p.hash_mb) + ENGINE_MARGIN_MIB)
                .sum(),
        }
    }
}

/// What a worker offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// Logical CPUs it may use: its `--threads`, at most its machine's cores.
    pub cores: u32,
    /// Memory it may use, MiB; `None` when unknown (nothing is refused for
    /// memory then).
    pub memory_mib: Option<u64>,
}

impl Capacity {
    /// A worker that may use `threads` CPUs on `machine` (`None`: a worker
    /// that reported no machine, whose `threads` are taken as they are).
    pub fn of(threads: u32, machine: Option<&Machine>) -> Capacity {
        let cores = match machine {
            Some(m) if m.cores > 0 => threads.min(m.cores),
            _ => threads,
        };
        Capacity {
            cores: cores.max(1),
            memory_mib: machine.map(|m| m.memory_mib).filter(|&m| m > 0),
        }
    }

    /// Memory left for engines once [`RESERVE_MIB`] is set aside.
    pub fn engine_memory_mib(&self) -> Option<u64> {
        self.memory_mib.map(|m| m.saturating_sub(RESERVE_MIB))
    }

    /// Games it plays at once of a game that needs `needs`; 0 when not even
    /// one fits.
    pub fn games_at_once(&self, needs: GameNeeds) -> u32 {
        let by_cores = self.cores / needs.cores.max(1);
        let by_memory = match self.engine_memory_mib() {
            Some(m) => u32::try_from(m / needs.memory_mib.max(1)).unwrap_or(u32::MAX),
            None => u32::MAX,
        };
        by_cores.min(by_memory)
    }
}

/// Largest factor by which a run's speed scaling stretches or shrinks a time
/// limit: a worker measured 100 times slower than the reference is as slow
/// as it can get, not a reason for a game of hours.
pub const MAX_TIME_FACTOR: f64 = 8.0;

/// The factor a worker of `nps` scales a run's time limits by when the run's
/// reference speed is `reference_nps` (fishtest's scaling): 1 when either is
/// 0 (no scaling, or nothing measured), else their ratio clamped to
/// 1/[`MAX_TIME_FACTOR`]..[`MAX_TIME_FACTOR`].
pub fn time_factor(reference_nps: u64, nps: u64) -> f64 {
    if reference_nps == 0 || nps == 0 {
        return 1.0;
    }
    (reference_nps as f64 / nps as f64).clamp(1.0 / MAX_TIME_FACTOR, MAX_TIME_FACTOR)
}

/// What a lease of a run with a speed rule asks the worker to measure
/// before it plays: its speed with `player`'s engine (the run's base
/// engine), which fixes its time factor and whether it may play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpeedCheck {
    /// 0 or 1: the index of the measured player in the lease's
    /// [`crate::WorkSpec::players`].
    pub player: u8,
    /// The run's reference speed (nodes per second); 0: no scaling.
    pub reference_nps: u64,
    /// The run's minimum speed; 0: none.
    pub min_nps: u64,
}

impl SpeedCheck {
    /// The factor a worker of `nps` scales its time limits by.
    pub fn factor(&self, nps: u64) -> f64 {
        time_factor(self.reference_nps, nps)
    }

    /// Whether a worker of `nps` is too slow to play (an unmeasured one is,
    /// when the run has a minimum).
    pub fn too_slow(&self, nps: u64) -> bool {
        self.min_nps > 0 && nps < self.min_nps
    }
}

/// How a worker's speed with an engine was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpeedMethod {
    /// The engine's own `bench` command (its `Nodes/second` line).
    Bench,
    /// A fixed-time search on fixed positions (an engine without a bench).
    Search,
}

impl SpeedMethod {
    /// `bench` or `search`.
    pub fn name(self) -> &'static str {
        match self {
            SpeedMethod::Bench => "bench",
            SpeedMethod::Search => "search",
        }
    }

    /// The method called `name`.
    pub fn parse(name: &str) -> Option<SpeedMethod> {
        match name {
            "bench" => Some(SpeedMethod::Bench),
            "search" => Some(SpeedMethod::Search),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Flags;

    fn machine(cores: u32, memory_mib: u64) -> Machine {
        Machine {
            cpu_model: String::new(),
            isa: "x86_64".to_owned(),
            flags: Flags::default(),
            cores,
            memory_mib,
        }
    }

    #[test]
    fn cores_count_the_engine_to_move_and_memory_both_hashes() {
        let two_threads = GameNeeds::symmetric(2, 64);
        assert_eq!(two_threads.memory_mib, 2 * (64 + ENGINE_MARGIN_MIB));
        let small = Capacity::of(2, Some(&machine(2, 8192)));
        assert_eq!(small.games_at_once(two_threads), 1);
        assert_eq!(small.games_at_once(GameNeeds::symmetric(1, 16)), 2);
        assert_eq!(small.games_at_once(GameNeeds::symmetric(4, 16)), 0);
        let big = Capacity::of(64, Some(&machine(16, 1 << 20)));
        assert_eq!(big.cores, 16, "--threads above the machine's cores");
        assert_eq!(big.games_at_once(GameNeeds::symmetric(8, 16)), 2);
    }

    #[test]
    fn memory_bounds_the_games_and_unknown_memory_bounds_nothing() {
        let needs = GameNeeds::symmetric(1, 1024);
        let tight = Capacity::of(16, Some(&machine(16, RESERVE_MIB + 3 * needs.memory_mib)));
        assert_eq!(tight.games_at_once(needs), 3);
        let none = Capacity::of(16, Some(&machine(16, RESERVE_MIB + needs.memory_mib - 1)));
        assert_eq!(none.games_at_once(needs), 0);
        let unknown = Capacity::of(16, Some(&machine(16, 0)));
        assert_eq!(unknown.memory_mib, None);
        assert_eq!(unknown.games_at_once(needs), 16);
        assert_eq!(Capacity::of(3, None).games_at_once(needs), 3);
    }

    #[test]
    fn players_of_different_sizes_take_the_larger_thread_count() {
        let player = |threads, hash_mb| PlayerSpec {
            params: Default::default(),
            limit: crate::Limit::Nodes(1),
            hash_mb,
            threads,
            engine: None,
        };
        let needs = GameNeeds::of(&[player(1, 16), player(4, 256)]);
        assert_eq!(
            needs,
            GameNeeds {
                cores: 4,
                memory_mib: 16 + 256 + 2 * ENGINE_MARGIN_MIB
            }
        );
    }

    #[test]
    fn the_time_factor_is_the_clamped_ratio_and_one_without_a_measure() {
        assert_eq!(time_factor(1_000_000, 500_000), 2.0);
        assert_eq!(time_factor(1_000_000, 4_000_000), 0.25);
        assert_eq!(time_factor(1_000_000, 1), MAX_TIME_FACTOR);
        assert_eq!(time_factor(1, u64::MAX), 1.0 / MAX_TIME_FACTOR);
        assert_eq!(time_factor(0, 500_000), 1.0);
        assert_eq!(time_factor(1_000_000, 0), 1.0);
    }
}
