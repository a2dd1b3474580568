//! One played game as the game archive will keep it ([`GameRecord`]). The
//! wire carries these in `GameResults.games`; no worker sends them yet.

use xq_engine::Move;
use xq_engine::rules::GameResult;

/// Most plies a game can have; the runner's own caps are far lower.
pub const MAX_PLIES_PER_GAME: usize = 10_000;
/// Longest stderr tail kept with a game, in bytes.
pub const MAX_STDERR_TAIL_BYTES: usize = 4096;

/// One played game.
///
/// Invariants (checked on the wire): `opening_plies ≤ moves.len() ≤`
/// [`MAX_PLIES_PER_GAME`]; `per_move` has one entry per move after the
/// opening; `red_player` is 0 or 1; `stderr_tail` is at most
/// [`MAX_STDERR_TAIL_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// The opening's index in the run's source.
    pub opening_index: u64,
    /// The position before any move (FEN).
    pub start_fen: String,
    /// Every move from `start_fen`, opening moves included.
    pub moves: Vec<Move>,
    /// Leading moves that came from the opening.
    pub opening_plies: u32,
    pub result: GameResult,
    /// The end reason's token (as in [`crate::Totals::reasons`]).
    pub reason: String,
    /// Which player (0 or 1) played Red.
    pub red_player: u8,
    /// What the mover reported with each move after the opening.
    pub per_move: Vec<MoveStats>,
    /// The last stderr lines of an external engine that failed in this game.
    pub stderr_tail: String,
}

/// What a player reported with one move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoveStats {
    /// Centipawns from the mover's view (0 when none was reported).
    pub score_cp: i32,
    /// Plies.
    pub depth: u32,
    pub nodes: u64,
    /// Time used, milliseconds.
    pub time_ms: u32,
}

/// Moves as the wire packs them: 2 bytes each, [`Move::raw`] little-endian.
pub fn pack_moves(moves: &[Move]) -> Vec<u8> {
    moves.iter().flat_map(|m| m.raw().to_le_bytes()).collect()
}

/// The moves of [`pack_moves`]'s form; `None` for an odd length or a value
/// that is no move.
pub fn unpack_moves(bytes: &[u8]) -> Option<Vec<Move>> {
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|c| Move::from_raw(u16::from_le_bytes([c[0], c[1]])))
        .collect()
}
