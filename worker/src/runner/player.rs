//! A player: the built-in engine with a parameter set, a search limit and a hash size.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use xq_engine::params::Params;

use crate::external::EngineConfig;
use crate::timecontrol::{TimeControl, TimeControlError};

/// How long a player thinks per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Nodes per move (deterministic on every machine).
    Nodes(u64),
    /// Iterative-deepening depth per move, in plies (deterministic).
    Depth(u32),
    /// Wall time per move.
    MoveTime(Duration),
    /// A game clock.
    Clock(TimeControl),
}

impl Limit {
    /// The limit scaled by a time or node odds factor (`odds` ≥ 1); depth limits
    /// are not scaled.
    pub fn scaled(self, odds: u32) -> Limit {
        let k = u64::from(odds.max(1));
        match self {
            Limit::Nodes(n) => Limit::Nodes(n.saturating_mul(k)),
            Limit::Depth(d) => Limit::Depth(d),
            Limit::MoveTime(t) => Limit::MoveTime(t * odds.max(1)),
            Limit::Clock(tc) => Limit::Clock(TimeControl {
                base_ms: tc.base_ms.saturating_mul(k),
                increment_ms: tc.increment_ms.saturating_mul(k),
                ..tc
            }),
        }
    }

    /// Whether the game depends on wall time (and so is not reproducible).
    pub fn is_timed(self) -> bool {
        matches!(self, Limit::MoveTime(_) | Limit::Clock(_))
    }
}

impl fmt::Display for Limit {
    /// `nodes=2000`, `depth=6`, `movetime=100` (ms) or `tc=40/60+0.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Nodes(n) => write!(f, "nodes={n}"),
            Limit::Depth(d) => write!(f, "depth={d}"),
            Limit::MoveTime(t) => write!(f, "movetime={}", t.as_millis()),
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
            "depth" => {
                let d = number()?;
                u32::try_from(d)
                    .map(Limit::Depth)
                    .map_err(|_| LimitError::Value(s.to_string()))
            }
            "movetime" => Ok(Limit::MoveTime(Duration::from_millis(number()?))),
            "tc" => Ok(Limit::Clock(value.parse()?)),
            _ => Err(LimitError::Form(s.to_string())),
        }
    }
}

/// One side of a match.
#[derive(Clone, Debug)]
pub struct PlayerConfig {
    /// The name used in reports and PGN.
    pub name: String,
    /// Evaluation and search parameters.
    pub params: Params,
    pub limit: Limit,
    /// Transposition table size in MB.
    pub hash_mb: usize,
    /// An external engine process instead of the built-in engine (whose
    /// `params` and `hash_mb` are then unused).
    pub engine: Option<EngineConfig>,
    /// Whether the engine values a draw by the rule set's scoring
    /// ([`xq_engine::SearchRules::scoring_aware`]).
    pub draw_contempt: bool,
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
}
