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
///
/// Under a clock (`X+inc`, or `N/X+inc`) the search stops iterating once it has
/// spent its optimum time scaled by how settled the root is
/// ([`Clock::soft_expired`]): less when the best move has survived several
/// iterations, more when it just changed or the score is falling. It aborts
/// at the hard limit whatever the root looks like.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
    /// Do not start a new iteration after this much time times the root's
    /// scale (percent).
    optimum: Option<Duration>,
    /// Abort the search after this much time.
    hard: Option<Duration>,
    /// Whether the optimum scales with the root (a clock; not a fixed `movetime`).
    scales: bool,
}

/// How settled the root of a search is after its last completed iteration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RootTrend {
    /// Completed iterations in a row, the last included, whose best move was
    /// the one before's (0: it just changed, or the first iteration).
    pub stable_iterations: u32,
    /// How far the score fell from the iteration before (centipawns; negative
    /// when it rose).
    pub score_drop: i32,
}

impl RootTrend {
    /// The scale of the optimum time for this root, in percent: 190 when the
    /// best move just changed down to 70 after four unchanged iterations;
    /// times 100–160 % as the score fell by 0–120 centipawns (88 % when it
    /// rose by 24 or more).
    pub fn time_scale(self) -> u64 {
        const BY_STABILITY: [u64; 5] = [190, 130, 100, 85, 70];
        let stability = BY_STABILITY[(self.stable_iterations as usize).min(4)];
        let falling = (100 + self.score_drop.clamp(-24, 120) / 2) as u64;
        stability * falling / 100
    }
}

impl Clock {
    /// The budget for `us` under `limits`.
    pub fn new(limits: &Limits, us: Color) -> Clock {
        let start = Instant::now();
        let untimed = Clock {
            start,
            optimum: None,
            hard: None,
            scales: false,
        };
        if limits.infinite {
            return untimed;
        }
        if let Some(mt) = limits.movetime {
            return Clock {
                start,
                optimum: Some(mt),
                hard: Some(mt),
                scales: false,
            };
        }
        let Some(left) = limits.time[us.index()] else {
            return untimed;
        };
        let left_ms = (left.as_millis() as u64)
            .saturating_sub(MOVE_OVERHEAD_MS)
            .max(1);
        let inc_ms = limits.inc[us.index()].as_millis() as u64;
        let mtg = u64::from(limits.movestogo.unwrap_or(30).clamp(1, 50));
        let base = left_ms / mtg + inc_ms * 3 / 4;
        let hard = (base * 3).min(left_ms * 2 / 3).max(1);
        let optimum = (base * 8 / 10).min(hard);
        Clock {
            start,
            optimum: Some(Duration::from_millis(optimum)),
            hard: Some(Duration::from_millis(hard)),
            scales: true,
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

    /// Whether the search should not start another iteration: the optimum
    /// time scaled by `trend` (under a clock; a `movetime` is spent whole) has
    /// passed, or the hard limit.
    pub fn soft_expired(&self, trend: RootTrend) -> bool {
        let Some(optimum) = self.optimum else {
            return false;
        };
        let soft = if self.scales {
            optimum.mul_f64(trend.time_scale() as f64 / 100.0)
        } else {
            optimum
        };
        let soft = self.hard.map_or(soft, |h| soft.min(h));
        self.start.elapsed() >= soft
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend(stable_iterations: u32, score_drop: i32) -> RootTrend {
        RootTrend {
            stable_iterations,
            score_drop,
        }
    }

    #[test]
    fn a_settled_root_takes_less_time_and_a_doubtful_one_more() {
        assert_eq!(trend(2, 0).time_scale(), 100);
        assert_eq!(trend(0, 0).time_scale(), 190);
        assert_eq!(trend(9, 0).time_scale(), 70);
        assert_eq!(trend(2, 60).time_scale(), 130);
        assert_eq!(trend(2, 5_000).time_scale(), 160);
        assert_eq!(trend(2, -5_000).time_scale(), 88);
        assert_eq!(trend(0, 120).time_scale(), 304);
        let scales: Vec<u64> = (0..6).map(|s| trend(s, 0).time_scale()).collect();
        assert!(scales.windows(2).all(|w| w[0] >= w[1]), "{scales:?}");
    }

    #[test]
    fn the_optimum_is_four_fifths_of_the_base_and_the_hard_limit_caps_every_scale() {
        let mut limits = Limits::default();
        limits.time[Color::Red.index()] = Some(Duration::from_millis(10_030));
        limits.inc[Color::Red.index()] = Duration::from_millis(100);
        let clock = Clock::new(&limits, Color::Red);
        // base = 10,000 / 30 + 75 = 408 ms.
        assert_eq!(clock.optimum, Some(Duration::from_millis(326)));
        assert_eq!(clock.hard, Some(Duration::from_millis(1_224)));
        assert!(clock.scales);
        let late = Clock {
            start: Instant::now() - Duration::from_millis(1_300),
            ..clock
        };
        assert!(late.soft_expired(trend(0, 10_000)));
        let early = Clock {
            start: Instant::now() - Duration::from_millis(300),
            ..clock
        };
        assert!(!early.soft_expired(trend(2, 0)));
        assert!(early.soft_expired(trend(4, 0)));
    }

    #[test]
    fn a_movetime_is_spent_whole_and_no_limit_never_expires() {
        let limits = Limits {
            movetime: Some(Duration::from_millis(500)),
            ..Limits::default()
        };
        let clock = Clock {
            start: Instant::now() - Duration::from_millis(400),
            ..Clock::new(&limits, Color::Black)
        };
        assert!(!clock.soft_expired(trend(9, -100)));
        let untimed = Clock {
            start: Instant::now() - Duration::from_secs(3_600),
            ..Clock::new(&Limits::default(), Color::Red)
        };
        assert!(!untimed.soft_expired(trend(9, 0)) && !untimed.timed());
    }
}
