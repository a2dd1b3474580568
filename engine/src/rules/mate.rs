//! Mates by checks, for mate threats (杀, art. 28.2) and the mate test of art. 29.4.

use arrayvec::ArrayVec;

use crate::{Bitboard, MAX_MOVES, Move, Position, Square};

/// How many checking moves a mate threat may take (art. 28.2: "在下一着照将或连续
/// 照将，将死对方"). Longer series of checks are not looked for.
pub const MATE_THREAT_CHECKS: u32 = 2;

/// The side to move's legal moves that give check.
pub fn checking_moves(pos: &mut Position) -> ArrayVec<Move, MAX_MOVES> {
    let zone = check_zone(pos);
    let mut out = ArrayVec::new();
    for m in pos.legal_moves() {
        if (zone.contains(m.from()) || zone.contains(m.to())) && pos.gives_check(m) {
            out.push(m);
        }
    }
    out
}

/// The points a move must leave or reach to give check: the enemy general's file
/// and rank (chariots, cannons, their screens, the facing generals) and the
/// points within two files and two ranks of it (horses and their legs,
/// soldiers). Every point under the conversion variant, whose bishops check
/// along diagonals.
fn check_zone(pos: &Position) -> Bitboard {
    if pos.conversion() {
        return Bitboard::FULL;
    }
    Bitboard(CHECK_ZONES[pos.general(!pos.side_to_move()).index()])
}

/// [`check_zone`] without conversion, by the enemy general's square.
const CHECK_ZONES: [u128; Square::COUNT] = {
    let mut t = [0u128; Square::COUNT];
    let mut k = 0;
    while k < Square::COUNT {
        let mut sq = 0;
        while sq < Square::COUNT {
            let df = (sq % 9) as i32 - (k % 9) as i32;
            let dr = (sq / 9) as i32 - (k / 9) as i32;
            if df == 0 || dr == 0 || (df.abs() <= 2 && dr.abs() <= 2) {
                t[k] |= 1u128 << sq;
            }
            sq += 1;
        }
        k += 1;
    }
    t
};

/// Whether the side to move mates with one check.
pub fn mates_in_one(pos: &mut Position) -> bool {
    mates_by_checks(pos, 1)
}

/// Whether the side to move mates by a series of at most `checks` checking moves
/// whatever the other side replies. `pos` is left as it was.
pub fn mates_by_checks(pos: &mut Position, checks: u32) -> bool {
    if checks == 0 {
        return false;
    }
    for m in checking_moves(pos) {
        let undo = pos.make(m);
        let replies = pos.legal_moves();
        let mated = replies.is_empty()
            || (checks > 1
                && replies.iter().all(|&r| {
                    let u = pos.make(r);
                    let mated = mates_by_checks(pos, checks - 1);
                    pos.unmake(u);
                    mated
                }));
        pos.unmake(undo);
        if mated {
            return true;
        }
    }
    false
}

/// Whether `mv` (legal in `pos`, not a check) threatens mate (杀): after it, the
/// mover would mate by at most [`MATE_THREAT_CHECKS`] checks were it to move
/// again. `pos` is left as it was.
pub fn threatens_mate(pos: &mut Position, mv: Move) -> bool {
    let mover = pos.side_to_move();
    let undo = pos.make(mv);
    let mut again = pos.clone();
    pos.unmake(undo);
    again.set_side(mover);
    !again.in_check() && mates_by_checks(&mut again, MATE_THREAT_CHECKS)
}

/// Whether the side to move in `pos` already has a mate threat's mate: it mates
/// by at most [`MATE_THREAT_CHECKS`] checks as the position stands. A move after
/// which [`threatens_mate`] holds only keeps such a threat, which is no new mate
/// threat under the `new_mate_threats` reading (art. 29.2 applied to 28.2).
/// `pos` is left as it was.
pub fn mate_threat_stands(pos: &mut Position) -> bool {
    mates_by_checks(pos, MATE_THREAT_CHECKS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(s: &str) -> Move {
        Move::parse_coords(s).unwrap()
    }

    #[test]
    fn mate_in_one_and_two_checks() {
        // The chariot on a8 holds rank 8; g0g9 mates.
        let mut pos = Position::from_fen("3k5/R8/9/9/9/9/9/9/9/4K1R2 w").unwrap();
        assert!(mates_in_one(&mut pos));
        // With only the g-file chariot: g0g9 d9d8 is no mate, and nothing mates in two.
        let mut pos = Position::from_fen("3k5/9/9/9/9/9/9/9/9/4K1R2 w").unwrap();
        assert!(!mates_by_checks(&mut pos, 2));
        // a1a8 takes rank 8 and threatens h0h9 mate; a1a2 threatens nothing.
        let mut pos = Position::from_fen("3k5/9/9/9/9/9/9/9/R8/5K1R1 w").unwrap();
        assert!(threatens_mate(&mut pos, mv("a1a8")));
        assert!(!threatens_mate(&mut pos, mv("a1a2")));
    }
}
