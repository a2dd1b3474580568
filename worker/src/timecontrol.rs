//! The game clock that runs an [`xq_proto::TimeControl`], and what one move
//! may spend: the per-search budget derived from a player's [`Limit`] and the
//! clocks as they stand ([`search_limits`] for the built-in engine,
//! [`go_limit`] for an external one).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use xq_engine::search::Limits;
use xq_engine::{ByColor, Color};
use xq_proto::{Limit, TimeControl};

use crate::external::Go;

/// A move that took longer than the time left plus the forfeit margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the move overran the clock by {ms} ms")]
pub struct Overrun {
    /// Milliseconds beyond the time that was left.
    pub ms: u64,
}

/// One side's clock under a [`TimeControl`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    tc: TimeControl,
    /// Time left, in milliseconds (negative once flagged).
    remaining_ms: i64,
    /// Moves made by this side.
    moves_made: u32,
}

impl Clock {
    /// A fresh clock; `odds` scales the base time and increment (e.g. 2 for the
    /// side that gets twice the time).
    pub fn new(tc: TimeControl, odds: u32) -> Clock {
        let odds = u64::from(odds.max(1));
        let tc = TimeControl {
            base_ms: tc.base_ms * odds,
            inc_ms: tc.inc_ms * odds,
            ..tc
        };
        Clock {
            tc,
            remaining_ms: tc.base_ms as i64,
            moves_made: 0,
        }
    }

    /// Time left, in milliseconds.
    pub fn remaining_ms(&self) -> i64 {
        self.remaining_ms
    }

    /// Increment per move, in milliseconds.
    pub fn increment_ms(&self) -> u64 {
        self.tc.inc_ms
    }

    /// Moves left in the current period, if the control has periods.
    pub fn moves_to_go(&self) -> Option<u32> {
        self.tc.moves_to_go.map(|m| m - self.moves_made % m)
    }

    /// Charges a move that took `elapsed_ms`. The flag falls when the move took
    /// more than the time left plus `margin_ms` (the forfeit margin), and the
    /// error says by how many milliseconds the move overran the time left; a
    /// move within the margin leaves the clock at zero.
    pub fn charge(&mut self, elapsed_ms: u64, margin_ms: u64) -> Result<(), Overrun> {
        let elapsed = i64::try_from(elapsed_ms).unwrap_or(i64::MAX);
        let over = elapsed.saturating_sub(self.remaining_ms.max(0));
        if over > i64::try_from(margin_ms).unwrap_or(i64::MAX) {
            self.remaining_ms -= elapsed;
            return Err(Overrun {
                ms: u64::try_from(over).unwrap_or(0),
            });
        }
        self.remaining_ms = (self.remaining_ms - elapsed).max(0);
        self.moves_made += 1;
        self.remaining_ms += self.tc.inc_ms as i64;
        if let Some(m) = self.tc.moves_to_go
            && self.moves_made.is_multiple_of(m)
        {
            self.remaining_ms += self.tc.base_ms as i64;
        }
        Ok(())
    }
}

/// The built-in engine's budget for one move of a player with `limit`.
pub fn search_limits(
    limit: Limit,
    clocks: &ByColor<Option<Clock>>,
    stop: &Arc<AtomicBool>,
) -> Limits {
    let mut limits = Limits {
        stop: Arc::clone(stop),
        ..Limits::default()
    };
    match limit {
        Limit::Nodes(n) => limits.nodes = Some(n),
        Limit::Depth(d) => limits.depth = Some(d),
        Limit::MoveTimeMs(ms) => limits.movetime = Some(Duration::from_millis(ms)),
        Limit::Clock(_) => {
            for color in Color::ALL {
                if let Some(c) = &clocks[color] {
                    let ms = u64::try_from(c.remaining_ms().max(0)).unwrap_or(0);
                    limits.time[color.index()] = Some(Duration::from_millis(ms));
                    limits.inc[color.index()] = Duration::from_millis(c.increment_ms());
                    limits.movestogo = c.moves_to_go();
                }
            }
        }
    }
    limits
}

/// An external engine's `go` for one move of `mover` with `limit`, and the
/// time (ms) it may take when the move is timed.
pub fn go_limit(limit: Limit, clocks: &ByColor<Option<Clock>>, mover: Color) -> (Go, Option<u64>) {
    let ms = |c: &Option<Clock>| {
        c.as_ref()
            .map_or(0, |c| u64::try_from(c.remaining_ms()).unwrap_or(0))
    };
    match limit {
        Limit::Nodes(n) => (Go::Nodes(n), None),
        Limit::Depth(d) => (Go::Depth(d), None),
        Limit::MoveTimeMs(t) => (Go::MoveTimeMs(t), Some(t)),
        Limit::Clock(_) => {
            let go = Go::Clock {
                time_ms: [ms(&clocks.red), ms(&clocks.black)],
                inc_ms: [
                    clocks.red.as_ref().map_or(0, Clock::increment_ms),
                    clocks.black.as_ref().map_or(0, Clock::increment_ms),
                ],
                mover,
                moves_to_go: clocks[mover].as_ref().and_then(Clock::moves_to_go),
            };
            (go, Some(ms(&clocks[mover])))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_periods_and_increment() {
        let mut c = Clock::new("2/10+1".parse().unwrap(), 1);
        assert_eq!(c.moves_to_go(), Some(2));
        assert_eq!(c.charge(4000, 0), Ok(()));
        assert_eq!(c.remaining_ms(), 7000);
        assert_eq!(c.moves_to_go(), Some(1));
        assert_eq!(c.charge(4000, 0), Ok(()));
        assert_eq!(c.remaining_ms(), 14000);
        assert_eq!(c.charge(15000, 0), Err(Overrun { ms: 1000 }));
        let mut m = Clock::new("1+0.5".parse().unwrap(), 1);
        assert_eq!(m.charge(1200, 300), Ok(()), "within the margin");
        assert_eq!(m.remaining_ms(), 500, "left at zero, then the increment");
        assert_eq!(m.charge(801, 300), Err(Overrun { ms: 301 }));
        let odds = Clock::new("10+1".parse().unwrap(), 2);
        assert_eq!(odds.remaining_ms(), 20000);
        assert_eq!(odds.increment_ms(), 2000);
    }

    #[test]
    fn a_clock_limit_budgets_from_the_clocks_as_they_stand() {
        let tc: TimeControl = "40/60+0.5".parse().unwrap();
        let clocks = ByColor::new_with(|_| Some(Clock::new(tc, 1)));
        let stop = Arc::new(AtomicBool::new(false));
        let l = search_limits(Limit::Clock(tc), &clocks, &stop);
        assert_eq!(l.time[0], Some(Duration::from_secs(60)));
        assert_eq!(l.inc[1], Duration::from_millis(500));
        assert_eq!(l.movestogo, Some(40));
        let (go, allotted) = go_limit(Limit::MoveTimeMs(150), &clocks, Color::Red);
        assert_eq!((go, allotted), (Go::MoveTimeMs(150), Some(150)));
        assert_eq!(
            search_limits(Limit::Nodes(7), &clocks, &stop).nodes,
            Some(7)
        );
    }
}
