//! Static exchange evaluation (SEE) on one point, for chase judgement.
//!
//! The exchange is played out on occupancy masks: after each capture the capturer's
//! origin leaves the occupancy and attacks are recomputed with
//! [`Position::attacks_from`] over the new occupancy, so cannon screens that appear
//! or vanish during the exchange (and horse legs and elephant eyes that open) are
//! followed exactly. Each side recaptures with its least valuable piece whose
//! recapture is legal: a pinned defender, a defender whose recapture would leave its
//! general attacked or facing the other general, and a general stepping onto a
//! defended point do not take part (art. 28.16: a false protector is no protector).
//! Either side may stop when going on would lose material.
//!
//! Known simplifications: the capture-conversion rule (engine/RULES.md §8) is ignored
//! during the exchange, and a recapture that gives check is not preferred.

use crate::position::file_occupancy_of;
use crate::{Bitboard, Color, Kind, Piece, Position, Square};

/// A general's value: larger than everything else on the board together. A legal
/// exchange never captures a general.
const GENERAL_VALUE: i32 = 1000;

/// The value of `piece` standing on `sq` for judging chases (art. 25.3): a chariot
/// is worth two horses, two cannons or a horse and a cannon (9); horse and cannon
/// are equal (4, unlike the evaluation's 4.5, so that cannon for horse is an even
/// exchange as the article says); advisor and elephant are equal (2); a soldier is
/// worth 2 across the river and 1 at home (at home it has no material value as a
/// target, but may still be won in an exchange).
pub fn judge_value(piece: Piece, sq: Square) -> i32 {
    match piece.kind() {
        Kind::General => GENERAL_VALUE,
        Kind::Chariot => 9,
        Kind::Horse | Kind::Cannon => 4,
        Kind::Advisor | Kind::Elephant => 2,
        Kind::Soldier if sq.rank().is_home_for(piece.color()) => 1,
        Kind::Soldier => 2,
    }
}

/// Whether `side` capturing from `from` onto `to` leaves its general safe, with
/// the board reduced to the occupancy `occ` (which holds both points). `side`'s
/// pieces in `occ` other than on `to` stand where the position has them, and so do
/// the other side's. Pieces in `standing` do not count as attacking the general:
/// chase judgement passes the pieces giving the checks already on the board, so
/// that a side in check keeps its standing threats and protections (engine/RULES.md §5).
pub fn capture_is_safe(
    pos: &Position,
    side: Color,
    from: Square,
    to: Square,
    occ: Bitboard,
    standing: Bitboard,
) -> bool {
    let Some(piece) = pos.piece_at(from) else {
        return false;
    };
    let to_bb = Bitboard::from_square(to);
    let after = occ & !Bitboard::from_square(from);
    let k = if piece.kind() == Kind::General {
        to
    } else {
        pos.general(side)
    };
    let enemy = pos.color_bb(!side) & occ & !to_bb & !standing;
    let k_file_occ = file_occupancy_of(after, k.file().index());
    !pos.general_attacked(k, !side, after, k_file_occ, enemy)
}

/// The material the side owning the piece on `from` wins (positive) or loses by
/// capturing the enemy piece on `to` and letting both sides recapture on `to` as
/// long as it pays, in [`judge_value`] units. The first capture is assumed made
/// whether or not it is legal (check that separately); every recapture must be
/// legal, with the checks given by the pieces in `standing` set aside (see
/// [`capture_is_safe`]). The side to move of `pos` does not matter.
pub fn see(pos: &Position, from: Square, to: Square, standing: Bitboard) -> i32 {
    let (Some(attacker), Some(target)) = (pos.piece_at(from), pos.piece_at(to)) else {
        return 0;
    };
    let mut gains = [0i32; 34];
    gains[0] = judge_value(target, to);
    let mut on_target = judge_value(attacker, to);
    let mut occ = pos.occupied() & !Bitboard::from_square(from);
    let mut side = !attacker.color();
    let mut depth = 0;
    while let Some((sq, value)) = least_valuable_recapture(pos, side, to, occ, standing) {
        depth += 1;
        gains[depth] = on_target - gains[depth - 1];
        if (-gains[depth - 1]).max(gains[depth]) < 0 {
            break;
        }
        on_target = value;
        occ &= !Bitboard::from_square(sq);
        side = !side;
    }
    while depth > 0 {
        gains[depth - 1] = -(-gains[depth - 1]).max(gains[depth]);
        depth -= 1;
    }
    gains[0]
}

/// `side`'s least valuable piece in `occ` that can legally capture on `to`, with
/// its value standing on `to`.
fn least_valuable_recapture(
    pos: &Position,
    side: Color,
    to: Square,
    occ: Bitboard,
    standing: Bitboard,
) -> Option<(Square, i32)> {
    let mut best: Option<(Square, i32)> = None;
    for sq in pos.color_bb(side) & occ & !Bitboard::from_square(to) {
        let Some(piece) = pos.piece_at(sq) else {
            continue;
        };
        let value = judge_value(piece, to);
        if best.is_some_and(|(_, v)| v <= value) {
            continue;
        }
        if pos.attacks_from(sq, piece, occ).contains(to)
            && capture_is_safe(pos, side, sq, to, occ, standing)
        {
            best = Some((sq, value));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::parse(s).unwrap()
    }

    fn see_of(fen: &str, mv: &str) -> i32 {
        let pos = Position::from_fen(fen).unwrap();
        see(&pos, sq(&mv[..2]), sq(&mv[2..]), Bitboard::EMPTY)
    }

    #[test]
    fn unprotected_piece_is_won() {
        assert_eq!(see_of("3k5/9/9/9/n8/9/9/9/9/R3K4 w", "a0a5"), 4);
    }

    #[test]
    fn protected_piece_costs_the_attacker() {
        // Chariot a0 takes the horse on a5, defended along rank 5 by the chariot on i5.
        assert_eq!(see_of("3k5/9/9/9/n7r/9/9/9/9/R3K4 w", "a0a5"), 4 - 9);
        // Horse c3 takes the chariot on d5, defended by the chariot on i5: still wins.
        assert_eq!(see_of("3k5/9/9/9/3r4r/9/2N6/9/9/4K4 w", "c3d5"), 9 - 4);
    }

    #[test]
    fn pinned_defender_does_not_protect() {
        // The horse on d8 guards e6 but is pinned to its general by the chariot on d0.
        let fen = "3k5/3n5/9/4r4/9/9/9/4R4/9/3R1K3 w";
        assert_eq!(see_of(fen, "e2e6"), 9);
        let unpinned = "3k5/3n5/9/4r4/9/9/9/4R4/9/5K3 w";
        assert_eq!(see_of(unpinned, "e2e6"), 0);
    }

    #[test]
    fn general_recaptures_only_onto_a_safe_point() {
        // The black general on e9 guards the advisor on e8 unless a red horse on d6
        // covers e8 too.
        let guarded = "4k4/4a4/9/9/9/9/9/4R4/9/3K5 w";
        assert_eq!(see_of(guarded, "e2e8"), 2 - 9);
        let covered = "4k4/4a4/9/3N5/9/9/9/4R4/9/3K5 w";
        assert_eq!(see_of(covered, "e2e8"), 2);
    }

    #[test]
    fn cannon_screens_follow_the_exchange() {
        // Chariot e2 takes the horse on e5; the soldier on e6 recaptures, which
        // takes the screen away from Black's cannon on e8; Red's cannon on e0 (screen
        // e1) wins the soldier and nothing can take back: 4 - 9 + 1.
        let fen = "5k3/4c4/9/4p4/4n4/9/9/4R4/4A4/3KC4 w";
        assert_eq!(see_of(fen, "e2e5"), -4);
    }
}
