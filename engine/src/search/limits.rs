//! Search limits and the clock.
//!
//! Determinism: when no time limit is given (depth and/or node limits only), the
//! search never reads the clock to decide anything, so the same position,
//! parameters, rules and limits give the same move and node count on any machine.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::Color;

/// What bounds one search. The default is unbounded (runs until `stop` is set).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Maximum iterative-deepening depth (plies).
    pub depth: Option<u32>,
    /// Stop once this many nodes have been searched.
    pub nodes: Option<u64>,
    /// Time for this move.
    pub movetime: Option<Duration>,
    /// Remaining clock time per side.
    pub time: [Option<Duration>; 2],
    /// Increment per move per side.
    pub inc: [Duration; 2],
    /// Moves until the next time control (`None`: sudden death).
    pub movestogo: Option<u32>,
    /// Search until stopped (UCI `go infinite`).
    pub infinite: bool,
    /// Set from another thread to stop the search; it then returns the best move
    /// of the last completed iteration.
    pub stop: Arc<AtomicBool>,
}

impl Limits {
    /// A limit of `depth` plies only.
    pub fn depth(depth: u32) -> Limits {
        Limits {
            depth: Some(depth),
            ..Limits::default()
        }
    }

    /// A limit of `nodes` nodes only.
    pub fn nodes(nodes: u64) -> Limits {
        Limits {
            nodes: Some(nodes),
            ..Limits::default()
        }
    }

    /// Whether the stop flag is set.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Safety margin kept on the clock for communication (ms).
const MOVE_OVERHEAD_MS: u64 = 30;

/// Time budget of one search, fixed at its start.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
    /// Do not start a new iteration after this much time.
    soft: Option<Duration>,
    /// Abort the search after this much time.
    hard: Option<Duration>,
}

impl Clock {
    /// The budget for `us` under `limits`.
    pub fn new(limits: &Limits, us: Color) -> Clock {
        let start = Instant::now();
        if limits.infinite {
            return Clock {
                start,
                soft: None,
                hard: None,
            };
        }
        if let Some(mt) = limits.movetime {
            return Clock {
                start,
                soft: Some(mt),
                hard: Some(mt),
            };
        }
        let Some(left) = limits.time[us.index()] else {
            return Clock {
                start,
                soft: None,
                hard: None,
            };
        };
        let left_ms = (left.as_millis() as u64)
            .saturating_sub(MOVE_OVERHEAD_MS)
            .max(1);
        let inc_ms = limits.inc[us.index()].as_millis() as u64;
        let mtg = u64::from(limits.movestogo.unwrap_or(30).clamp(1, 50));
        let base = left_ms / mtg + inc_ms * 3 / 4;
        let hard = (base * 3).min(left_ms * 2 / 3).max(1);
        let soft = (base * 6 / 10).min(hard);
        Clock {
            start,
            soft: Some(Duration::from_millis(soft)),
            hard: Some(Duration::from_millis(hard)),
        }
    }

    /// Time since the search started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether any time limit applies (only then is the clock read for decisions).
    pub fn timed(&self) -> bool {
        self.hard.is_some()
    }

    /// Whether the hard limit has passed.
    pub fn hard_expired(&self) -> bool {
        self.hard.is_some_and(|h| self.start.elapsed() >= h)
    }

    /// Whether the soft limit has passed.
    pub fn soft_expired(&self) -> bool {
        self.soft.is_some_and(|s| self.start.elapsed() >= s)
    }
}
