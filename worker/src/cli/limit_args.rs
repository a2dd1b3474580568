//! Search-limit flags, shared by `xq-worker play` and the coordinator's run commands.

use std::time::Duration;

use clap::Args;

use crate::runner::Limit;

/// One limit per move for both players; at most one flag may be given.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Nodes per move.
    #[arg(long, group = "limit")]
    nodes: Option<u64>,
    /// Depth per move, plies.
    #[arg(long, group = "limit")]
    depth: Option<u32>,
    /// Milliseconds per move.
    #[arg(long, group = "limit")]
    movetime: Option<u64>,
    /// Time control `[MOVES/]SECONDS[+INCREMENT]`, e.g. 40/60+0.5 or 10+0.1.
    #[arg(long, group = "limit")]
    tc: Option<String>,
}

impl LimitArgs {
    /// The limit given, if any; zero is an error.
    pub fn limit(&self) -> anyhow::Result<Option<Limit>> {
        let positive = |name: &str, v: u64| {
            if v == 0 {
                anyhow::bail!("--{name} must be positive")
            } else {
                Ok(v)
            }
        };
        Ok(Some(
            match (self.nodes, self.depth, self.movetime, &self.tc) {
                (Some(n), ..) => Limit::Nodes(positive("nodes", n)?),
                (_, Some(d), ..) => Limit::Depth(positive("depth", u64::from(d))? as u32),
                (_, _, Some(ms), _) => {
                    Limit::MoveTime(Duration::from_millis(positive("movetime", ms)?))
                }
                (_, _, _, Some(tc)) => Limit::Clock(tc.parse()?),
                (None, None, None, None) => return Ok(None),
            },
        ))
    }
}
