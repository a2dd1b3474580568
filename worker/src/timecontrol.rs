//! Time controls `moves/seconds+increment` and the chess clock that runs them.
//!
//! Forms accepted: `40/60+0.5` (40 moves in 60 s, 0.5 s added per move, the
//! allotment repeating every 40 moves), `10+0.1` (10 s for the game plus 0.1 s per
//! move), `300` (sudden death), `40/5400` (art. 6.1-style repeating periods without
//! increment). Seconds may be fractional; the clock counts milliseconds.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Why a time control was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("bad time control '{text}': {reason} (expected e.g. '40/60+0.5', '10+0.1' or '300')")]
pub struct TimeControlError {
    text: String,
    reason: &'static str,
}

/// A time control. Invariant: `base_ms > 0`; `moves`, when set, is positive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Moves per period; `None` for one period covering the whole game.
    pub moves: Option<u32>,
    /// Time per period, in milliseconds.
    pub base_ms: u64,
    /// Time added after each move, in milliseconds.
    pub increment_ms: u64,
}

fn seconds_to_ms(text: &str, s: &str) -> Result<u64, TimeControlError> {
    let bad = |reason| TimeControlError {
        text: text.to_string(),
        reason,
    };
    let v: f64 = s
        .parse()
        .map_err(|_| bad("a time is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=1e7).contains(&v) {
        return Err(bad("a time is negative or absurdly large"));
    }
    Ok((v * 1000.0).round() as u64)
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |reason| TimeControlError {
            text: text.to_string(),
            reason,
        };
        let (moves, rest) = match text.split_once('/') {
            Some((m, rest)) => {
                let m: u32 = m
                    .parse()
                    .map_err(|_| bad("the move count is not a whole number"))?;
                if m == 0 {
                    return Err(bad("the move count must be positive"));
                }
                (Some(m), rest)
            }
            None => (None, text),
        };
        let (base, inc) = match rest.split_once('+') {
            Some((b, i)) => (b, Some(i)),
            None => (rest, None),
        };
        let base_ms = seconds_to_ms(text, base)?;
        if base_ms == 0 {
            return Err(bad("the base time must be positive"));
        }
        let increment_ms = inc
            .map(|i| seconds_to_ms(text, i))
            .transpose()?
            .unwrap_or(0);
        Ok(TimeControl {
            moves,
            base_ms,
            increment_ms,
        })
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(m) = self.moves {
            write!(f, "{m}/")?;
        }
        write!(f, "{}", self.base_ms as f64 / 1000.0)?;
        if self.increment_ms > 0 {
            write!(f, "+{}", self.increment_ms as f64 / 1000.0)?;
        }
        Ok(())
    }
}

/// A move that took longer than the time left plus the forfeit margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
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
            increment_ms: tc.increment_ms * odds,
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
        self.tc.increment_ms
    }

    /// Moves left in the current period, if the control has periods.
    pub fn moves_to_go(&self) -> Option<u32> {
        self.tc.moves.map(|m| m - self.moves_made % m)
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
        self.remaining_ms += self.tc.increment_ms as i64;
        if let Some(m) = self.tc.moves
            && self.moves_made.is_multiple_of(m)
        {
            self.remaining_ms += self.tc.base_ms as i64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms() {
        let tc: TimeControl = "40/60+0.5".parse().unwrap();
        assert_eq!(
            tc,
            TimeControl {
                moves: Some(40),
                base_ms: 60_000,
                increment_ms: 500
            }
        );
        assert_eq!(tc.to_string(), "40/60+0.5");
        let tc: TimeControl = "10+0.1".parse().unwrap();
        assert_eq!(
            tc,
            TimeControl {
                moves: None,
                base_ms: 10_000,
                increment_ms: 100
            }
        );
        let tc: TimeControl = "300".parse().unwrap();
        assert_eq!(tc.to_string(), "300");
        for bad in ["", "0", "x+1", "40/", "0/60", "40/60+", "-5", "1e99", "NaN"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad}");
        }
    }

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
}
