//! Chase (捉) detection: which enemy pieces a move newly threatens (art. 28.3, 29).
//!
//! A side *threatens* an enemy piece when all of these hold (RULES.md §5):
//! - the piece has material value (art. 25.3): not the general, not a soldier on its
//!   own side of the river;
//! - a piece of the side other than its general or a soldier attacks it (attacks by
//!   the general alone or a soldier alone are idle, art. 27.1, 27.2; the general
//!   may still take part in the exchange that follows, "借帅之力");
//! - that capture is legal: it does not leave the capturer's general attacked or
//!   facing the other general (art. 29.4, read as "the capture must not be
//!   illegal"; a capture after which the capturer is mated by a longer sequence
//!   is still a threat);
//! - the exchange on the piece's point wins material ([`see`] > 0): the piece is
//!   unprotected, falsely protected (its defender is pinned or may not recapture,
//!   art. 28.16), under-protected, or worth more than its attacker (a horse or
//!   cannon attacking a chariot, an advisor or elephant attacking a chariot, horse
//!   or cannon chases it even when protected, art. 25.3). Even exchanges (兑, a
//!   horse attacking a protected cannon) are idle (art. 28.5).
//!
//! A move *chases* the pieces it threatens after the move that were not threatened
//! before it (art. 29.2); discovered attacks count, since both sets are computed on
//! whole positions.
//!
//! Not implemented, and treated as idle: mate threats (杀, art. 28.2); captures won
//! through a series of checks (art. 29.1, "通过连续照将吃子"); the exception for
//! mutual perpetual attack by soldiers or generals (art. 27.2: they stay idle);
//! art. 27.3 (attacks on advisors and elephants incidental to a drawn fortress).

use crate::rules::see::see;
use crate::{Bitboard, Color, Kind, Move, Piece, Position, Square};

/// Whether `piece` on `sq` has material value as a chase target (art. 25.3).
pub fn is_chase_target(piece: Piece, sq: Square) -> bool {
    match piece.kind() {
        Kind::General => false,
        Kind::Soldier => !sq.rank().is_home_for(piece.color()),
        _ => true,
    }
}

/// The enemy pieces that `by` threatens in `pos`, as defined in the module docs,
/// whichever side is to move.
pub fn threats(pos: &Position, by: Color) -> Bitboard {
    let mut as_mover = pos.clone();
    as_mover.set_side(by);
    let occ = pos.occupied();
    let enemy = pos.color_bb(!by);
    let attackers =
        pos.color_bb(by) & !pos.pieces(by, Kind::General) & !pos.pieces(by, Kind::Soldier);
    let mut out = Bitboard::EMPTY;
    for from in attackers {
        let Some(piece) = pos.piece_at(from) else {
            continue;
        };
        for to in pos.attacks_from(from, piece, occ) & enemy & !out {
            let Some(target) = pos.piece_at(to) else {
                continue;
            };
            if is_chase_target(target, to)
                && as_mover.is_legal(Move::new(from, to))
                && see(pos, from, to) > 0
            {
                out.insert(to);
            }
        }
    }
    out
}

/// The pieces that `mv` (legal in `pos`) chases: threatened by the mover after the
/// move and not before it. `pos` is left as it was.
pub fn chased_by(pos: &mut Position, mv: Move) -> Bitboard {
    let mover = pos.side_to_move();
    let before = threats(pos, mover);
    let undo = pos.make(mv);
    let after = threats(pos, mover);
    pos.unmake(undo);
    after & !before
}
