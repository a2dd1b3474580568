//! When the runner may end a game early: [`Adjudication`], with its one
//! default.

use serde::{Deserialize, Serialize};

/// Adjudication rules; a rule is off when its move count is 0. The wire
/// carries every field (there is no implicit default on the wire).
///
/// Scores are what the engines report, in centipawns from Red's view.
/// Resignation: both engines report at least `resign_cp` against the same
/// side for `resign_moves` consecutive moves each. Draw: from full move
/// `draw_after_move` on, both report |score| ≤ `draw_cp` for `draw_moves`
/// consecutive moves each. `max_plies` caps the game (a draw).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Resign at a score at or below −`resign_cp` centipawns ...
    pub resign_cp: u32,
    /// ... held for this many consecutive moves of both engines (0 = off).
    pub resign_moves: u32,
    /// Draw at |score| ≤ `draw_cp` centipawns ...
    pub draw_cp: u32,
    /// ... held for this many consecutive moves of both engines (0 = off) ...
    pub draw_moves: u32,
    /// ... from this full-move number on.
    pub draw_after_move: u32,
    /// Draw after this many plies in all (0 = no cap).
    pub max_plies: u32,
}

impl Default for Adjudication {
    /// Resign at 1000 cp for 4 moves; draw at ±10 cp for 8 moves after move
    /// 40; at most 400 plies. The only place these numbers are stated.
    fn default() -> Self {
        Adjudication {
            resign_cp: 1000,
            resign_moves: 4,
            draw_cp: 10,
            draw_moves: 8,
            draw_after_move: 40,
            max_plies: 400,
        }
    }
}

impl Adjudication {
    /// Every rule off (the rules arbiter still ends games).
    pub const OFF: Adjudication = Adjudication {
        resign_cp: 0,
        resign_moves: 0,
        draw_cp: 0,
        draw_moves: 0,
        draw_after_move: 0,
        max_plies: 0,
    };
}
