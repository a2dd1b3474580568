//! Zobrist keys, generated at compile time from a fixed seed so that hashes are the
//! same on every machine and run.

use crate::{Piece, Square};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

const fn piece_keys() -> [[u64; 90]; Piece::INDEX_COUNT] {
    let mut t = [[0u64; 90]; Piece::INDEX_COUNT];
    let mut state = 0x5851_f42d_4c95_7f2d;
    let mut p = 0;
    while p < Piece::INDEX_COUNT {
        let mut s = 0;
        while s < 90 {
            let (next, key) = splitmix(state);
            state = next;
            t[p][s] = key;
            s += 1;
        }
        p += 1;
    }
    t
}

static PIECE_KEYS: [[u64; 90]; Piece::INDEX_COUNT] = piece_keys();

/// XORed into the hash when Black is to move.
pub const BLACK_TO_MOVE: u64 = 0x1d8e_4e27_c47d_124f;

/// The key of `piece` standing on `sq`.
#[inline]
pub fn piece_key(piece: Piece, sq: Square) -> u64 {
    PIECE_KEYS[piece.index()][sq.index()]
}
