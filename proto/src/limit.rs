//! How long a player thinks per move: [`Limit`], its text form (`nodes=N`,
//! `depth=D`, `movetime=MS`, `tc=40/60+0.5`) and the game clock's
//! [`TimeControl`].
//!
//! One type serves the CLI (parsed from flags), the wire (`pb::Limit`), the
//! stored run specs (serde) and the runner. What one search may spend at one
//! position (the clocks as they stand, a stop flag) is a different thing, the
//! per-search budget `xq_engine::search::Limits`, which the runner derives
//! from a `Limit` and the clocks before each move.
//!
//! Time control forms: `40/60+0.5` (40 moves in 60 s, 0.5 s added per move,
//! the allotment repeating every 40 moves), `10+0.1` (10 s for the game plus
//! 0.1 s per move), `300` (sudden death), `40/5400` (repeating periods without
//! increment). Seconds may be fractional; clocks count milliseconds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How long an engine thinks per move. Invariant: every count is at least 1
/// (checked when parsed and when read from the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Nodes per move (deterministic on every machine).
    Nodes(u64),
    /// Iterative-deepening depth per move, in plies (deterministic).
    Depth(u32),
    /// Wall time per move, in milliseconds.
    MoveTimeMs(u64),
    /// A game clock.
    Clock(TimeControl),
}

/// A game clock: `moves_to_go` moves in `base_ms`, `inc_ms` added after each
/// move. Invariant: `base_ms > 0`; `moves_to_go`, when set, is positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
    /// Time per period, in milliseconds.
    pub base_ms: u64,
    /// Time added after each move, in milliseconds.
    pub inc_ms: u64,
    /// Moves per period; `None` for one period covering the whole game.
    pub moves_to_go: Option<u32>,
}

impl Limit {
    /// The limit scaled by a time or node odds factor (`odds` ≥ 1); depth
    /// limits are not scaled.
    pub fn scaled(self, odds: u32) -> Limit {
        let k = u64::from(odds.max(1));
        match self {
            Limit::Nodes(n) => Limit::Nodes(n.saturating_mul(k)),
            Limit::Depth(d) => Limit::Depth(d),
            Limit::MoveTimeMs(ms) => Limit::MoveTimeMs(ms.saturating_mul(k)),
            Limit::Clock(tc) => Limit::Clock(tc.scaled(odds)),
        }
    }

    /// A timed limit with its times multiplied by `factor` (> 0), each at
    /// least 1 ms; node and depth limits are returned as they are.
    pub fn time_scaled(self, factor: f64) -> Limit {
        let scale = |ms: u64| ((ms as f64 * factor).round() as u64).max(1);
        match self {
            Limit::MoveTimeMs(ms) => Limit::MoveTimeMs(scale(ms)),
            Limit::Clock(tc) => Limit::Clock(TimeControl {
                base_ms: scale(tc.base_ms),
                inc_ms: if tc.inc_ms == 0 { 0 } else { scale(tc.inc_ms) },
                ..tc
            }),
            other => other,
        }
    }

    /// Whether the game depends on wall time (and so is not reproducible).
    pub fn is_timed(self) -> bool {
        matches!(self, Limit::MoveTimeMs(_) | Limit::Clock(_))
    }

    /// Whether every count is at least 1.
    pub fn is_valid(self) -> bool {
        match self {
            Limit::Nodes(n) | Limit::MoveTimeMs(n) => n > 0,
            Limit::Depth(d) => d > 0,
            Limit::Clock(tc) => tc.base_ms > 0 && tc.moves_to_go != Some(0),
        }
    }
}

impl TimeControl {
    /// Base time and increment scaled by `odds` (≥ 1).
    pub fn scaled(self, odds: u32) -> TimeControl {
        let k = u64::from(odds.max(1));
        TimeControl {
            base_ms: self.base_ms.saturating_mul(k),
            inc_ms: self.inc_ms.saturating_mul(k),
            ..self
        }
    }
}

impl fmt::Display for Limit {
    /// `nodes=2000`, `depth=6`, `movetime=100` (ms) or `tc=40/60+0.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Nodes(n) => write!(f, "nodes={n}"),
            Limit::Depth(d) => write!(f, "depth={d}"),
            Limit::MoveTimeMs(ms) => write!(f, "movetime={ms}"),
            Limit::Clock(tc) => write!(f, "tc={tc}"),
        }
    }
}

/// Why a limit was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("bad limit '{0}': expected nodes=N, depth=N, movetime=MS or tc=MOVES/SECONDS+INC")]
    Form(String),
    #[error("bad limit '{0}': the value must be a positive whole number")]
    Value(String),
    #[error(transparent)]
    TimeControl(#[from] TimeControlError),
}

impl FromStr for Limit {
    type Err = LimitError;

    fn from_str(s: &str) -> Result<Limit, LimitError> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| LimitError::Form(s.to_string()))?;
        let number = || match value.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(LimitError::Value(s.to_string())),
        };
        match key {
            "nodes" => Ok(Limit::Nodes(number()?)),
            "depth" => u32::try_from(number()?)
                .map(Limit::Depth)
                .map_err(|_| LimitError::Value(s.to_string())),
            "movetime" => Ok(Limit::MoveTimeMs(number()?)),
            "tc" => Ok(Limit::Clock(value.parse()?)),
            _ => Err(LimitError::Form(s.to_string())),
        }
    }
}

/// Why a time control was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad time control '{text}': {reason} (expected e.g. '40/60+0.5', '10+0.1' or '300')")]
pub struct TimeControlError {
    text: String,
    reason: &'static str,
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
        let (moves_to_go, rest) = match text.split_once('/') {
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
        let inc_ms = inc
            .map(|i| seconds_to_ms(text, i))
            .transpose()?
            .unwrap_or(0);
        Ok(TimeControl {
            base_ms,
            inc_ms,
            moves_to_go,
        })
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(m) = self.moves_to_go {
            write!(f, "{m}/")?;
        }
        write!(f, "{}", self.base_ms as f64 / 1000.0)?;
        if self.inc_ms > 0 {
            write!(f, "+{}", self.inc_ms as f64 / 1000.0)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_print_and_scale() {
        for text in ["nodes=2000", "depth=6", "movetime=150", "tc=40/60+0.5"] {
            assert_eq!(text.parse::<Limit>().unwrap().to_string(), text);
        }
        assert_eq!(
            "nodes=1000".parse::<Limit>().unwrap().scaled(2),
            Limit::Nodes(2000)
        );
        assert_eq!(
            "tc=10+0.1".parse::<Limit>().unwrap().scaled(2).to_string(),
            "tc=20+0.2"
        );
        for bad in [
            "nodes",
            "nodes=0",
            "nodes=-1",
            "depth=99999999999",
            "speed=3",
            "tc=x",
        ] {
            assert!(bad.parse::<Limit>().is_err(), "{bad}");
        }
    }

    #[test]
    fn time_controls_parse_in_every_form() {
        let tc: TimeControl = "40/60+0.5".parse().unwrap();
        assert_eq!(
            tc,
            TimeControl {
                base_ms: 60_000,
                inc_ms: 500,
                moves_to_go: Some(40),
            }
        );
        assert_eq!(tc.to_string(), "40/60+0.5");
        let tc: TimeControl = "10+0.1".parse().unwrap();
        assert_eq!((tc.base_ms, tc.inc_ms, tc.moves_to_go), (10_000, 100, None));
        assert_eq!("300".parse::<TimeControl>().unwrap().to_string(), "300");
        for bad in ["", "0", "x+1", "40/", "0/60", "40/60+", "-5", "1e99", "NaN"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn stored_specs_keep_their_json_form() {
        let tc = Limit::Clock("40/60+0.5".parse().unwrap());
        assert_eq!(
            serde_json::to_string(&tc).unwrap(),
            r#"{"clock":{"base_ms":60000,"inc_ms":500,"moves_to_go":40}}"#
        );
        assert_eq!(
            serde_json::to_string(&Limit::MoveTimeMs(5)).unwrap(),
            r#"{"move_time_ms":5}"#
        );
    }
}
