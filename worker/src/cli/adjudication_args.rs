//! Adjudication flags, shared by `xq-worker play` and the coordinator's run commands.

use clap::Args;

use crate::adjudication::AdjudicationConfig;

/// Adjudication flags; unset flags keep [`AdjudicationConfig::default`].
#[derive(Debug, Clone, Args)]
pub struct AdjudicationArgs {
    /// Turn every adjudication rule off (the rules arbiter still ends games).
    #[arg(long)]
    no_adjudication: bool,
    /// Resign score in cp (both engines agree) [default: 1000].
    #[arg(long)]
    resign_cp: Option<u32>,
    /// Moves per side the resign score must hold; 0 = off [default: 4].
    #[arg(long)]
    resign_moves: Option<u32>,
    /// Draw score bound in cp [default: 10].
    #[arg(long)]
    draw_cp: Option<u32>,
    /// Moves per side the draw score must hold; 0 = off [default: 8].
    #[arg(long)]
    draw_moves: Option<u32>,
    /// Move number after which draw adjudication may start [default: 40].
    #[arg(long)]
    draw_after: Option<u32>,
    /// Game length cap in plies; 0 = off [default: 400].
    #[arg(long)]
    max_plies: Option<u32>,
}

impl AdjudicationArgs {
    /// The settings these flags describe.
    pub fn config(&self) -> AdjudicationConfig {
        let base = if self.no_adjudication {
            AdjudicationConfig::OFF
        } else {
            AdjudicationConfig::default()
        };
        let cp = |v: Option<u32>, d: i32| v.map_or(d, |v| i32::try_from(v).unwrap_or(i32::MAX));
        AdjudicationConfig {
            resign_cp: cp(self.resign_cp, base.resign_cp),
            resign_moves: self.resign_moves.unwrap_or(base.resign_moves),
            draw_cp: cp(self.draw_cp, base.draw_cp),
            draw_moves: self.draw_moves.unwrap_or(base.draw_moves),
            draw_after_move: self.draw_after.unwrap_or(base.draw_after_move),
            max_plies: self.max_plies.unwrap_or(base.max_plies),
        }
    }
}
