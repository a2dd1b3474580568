//! Chases under the `pikafish` code: the computer rules by which Pikafish judges
//! repetitions (engine/PIKAFISH_RULES.md §4–§5 states them, with each difference
//! from the Chinese code by article).
//!
//! Side `c` *chases* the enemy piece `T` on `t` in a position, whoever is to move,
//! when some piece `A` of `c` on `a`:
//! - is not the general or a soldier, and `T` is not the general nor a soldier on
//!   its own side of the river ([`is_chase_target`]);
//! - attacks `t` and may legally capture there;
//! - is not *pinned* (its removal would give check), or else `T` is one of the
//!   pieces that pin `c`'s pieces so;
//! - is a horse or a cannon attacking a chariot, or an advisor or an elephant
//!   attacking a chariot, a cannon or a horse; or else, after the capture, no
//!   piece of `T`'s side may legally recapture on `t` (any recapture protects:
//!   there is no exchange count), and `T` is not of `A`'s kind with a legal
//!   capture of `A` (an exchange offer).
//!
//! A move chases the pieces its side chases after it and did not chase before it
//! (per target: a piece that already hung to any piece is not chased anew). No
//! capture through a check, no mate-in-one test after the capture, no art. 27.3
//! exception.

use crate::rules::chase::is_chase_target;
use crate::rules::see::capture_is_safe;
use crate::{Bitboard, Color, Kind, Move, Piece, Position, Square};

/// The enemy pieces `mv` (legal in `pos`) newly chases, at their points after the
/// move. `pos` is left as it was.
pub fn chased_by(pos: &mut Position, mv: Move) -> Bitboard {
    let mover = pos.side_to_move();
    let before = chased(pos, mover);
    let undo = pos.make(mv);
    let after = chased(pos, mover);
    pos.unmake(undo);
    after & !before
}

/// The enemy pieces that `c` chases in `pos`, whoever is to move there.
pub fn chased(pos: &Position, c: Color) -> Bitboard {
    let occ = pos.occupied();
    let pinners = pinners(pos, c);
    let mut out = Bitboard::EMPTY;
    for a in pos.color_bb(c) {
        let Some(attacker) = pos.piece_at(a) else {
            continue;
        };
        if matches!(attacker.kind(), Kind::General | Kind::Soldier) {
            continue;
        }
        let pinned = pinners.pinned.contains(a);
        for t in pos.attacks_from(a, attacker, occ) & pos.color_bb(!c) & !out {
            let Some(target) = pos.piece_at(t) else {
                continue;
            };
            let allowed = if pinned {
                pinners.pinners.contains(t)
            } else {
                is_chase_target(target, t)
            };
            if allowed
                && capture_is_safe(pos, c, a, t, occ, Bitboard::EMPTY)
                && (outranks(attacker.kind(), target.kind())
                    || (!recapture_exists(pos, !c, a, t) && !offers_exchange(pos, a, t)))
            {
                out.insert(t);
            }
        }
    }
    out
}

/// Whether `attacker` chases a `target` of this kind even when it is protected:
/// a horse or a cannon on a chariot, an advisor or an elephant on a chariot, a
/// cannon or a horse.
fn outranks(attacker: Kind, target: Kind) -> bool {
    match attacker {
        Kind::Horse | Kind::Cannon => target == Kind::Chariot,
        Kind::Advisor | Kind::Elephant => {
            matches!(target, Kind::Chariot | Kind::Cannon | Kind::Horse)
        }
        _ => false,
    }
}

/// Whether `side` may legally recapture on `t` after the enemy piece on `a` took
/// the piece on `t`.
fn recapture_exists(pos: &Position, side: Color, a: Square, t: Square) -> bool {
    let occ = pos.occupied() & !Bitboard::from_square(a);
    Iterator::any(&mut pos.attackers_to(t, side, occ), |d| {
        capture_is_safe(pos, side, d, t, occ, Bitboard::EMPTY)
    })
}

/// Whether the piece on `t` is of the kind of the piece on `a` and may legally
/// capture it (an offer to exchange, idle).
fn offers_exchange(pos: &Position, a: Square, t: Square) -> bool {
    let (Some(attacker), Some(target)) = (pos.piece_at(a), pos.piece_at(t)) else {
        return false;
    };
    let occ = pos.occupied();
    attacker.kind() == target.kind()
        && pos.attacks_from(t, target, occ).contains(a)
        && capture_is_safe(pos, target.color(), t, a, occ, Bitboard::EMPTY)
}

/// `c`'s pinned pieces and the enemy pieces (not the general) that pin them.
struct Pins {
    /// Pieces of `c` (not its general) whose removal would let a new enemy piece
    /// give check.
    pinned: Bitboard,
    /// The enemy pieces other than the general that would then give check.
    pinners: Bitboard,
}

/// `c`'s pins in `pos`. Only a piece on its general's file or rank, or on a
/// point diagonally next to it (a horse's leg), can shield it.
fn pinners(pos: &Position, c: Color) -> Pins {
    let k = pos.general(c);
    let occ = pos.occupied();
    let base = checkers(pos, c, occ);
    let mut pins = Pins {
        pinned: Bitboard::EMPTY,
        pinners: Bitboard::EMPTY,
    };
    for a in pos.color_bb(c) {
        if a == k || !may_shield(k, a) {
            continue;
        }
        let new = checkers(pos, c, occ & !Bitboard::from_square(a)) & !base;
        if new.any() {
            pins.pinned.insert(a);
            pins.pinners |= new & !pos.kind_bb(Kind::General);
        }
    }
    pins
}

/// Whether a piece on `a` may stand between the general on `k` and an attacker.
fn may_shield(k: Square, a: Square) -> bool {
    let df = k.file().index().abs_diff(a.file().index());
    let dr = k.rank().index().abs_diff(a.rank().index());
    df == 0 || dr == 0 || (df == 1 && dr == 1)
}

/// The enemy pieces attacking `c`'s general over the occupancy `occ`, the
/// facing general included.
fn checkers(pos: &Position, c: Color, occ: Bitboard) -> Bitboard {
    let k = pos.general(c);
    let mut out = pos.attackers_to(k, !c, occ);
    let g = pos.general(!c);
    let file = pos.attacks_from(k, Piece::new(c, Kind::Chariot), occ);
    if g.file() == k.file() && file.contains(g) {
        out.insert(g);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chased_in(fen: &str, c: Color) -> Vec<String> {
        let pos = Position::from_fen(fen).expect("fen");
        chased(&pos, c).into_iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn any_legal_recapture_protects() {
        // The black horse on a5 is guarded by the chariot on i5: not chased by
        // the chariot on a0, although the exchange wins nothing for Black.
        assert!(chased_in("3k5/9/9/9/n7r/9/9/9/9/R3K4 w", Color::Red).is_empty());
        assert_eq!(chased_in("3k5/9/9/9/n8/9/9/9/9/R3K4 w", Color::Red), ["a5"]);
    }

    #[test]
    fn a_horse_chases_a_protected_chariot_and_a_cannon_an_unprotected_horse() {
        // Horse c3 on the chariot d5, guarded by the chariot i5.
        assert_eq!(
            chased_in("3k5/9/9/9/3r4r/9/2N6/9/9/4K4 w", Color::Red),
            ["d5"]
        );
        // A cannon on a horse chases it only when it is unprotected.
        let fen = "3k5/9/9/9/9/2n6/9/2N6/2C6/5K3 w";
        assert_eq!(chased_in(fen, Color::Red), ["c4"]);
        let guarded = "3k5/9/9/9/2r6/2n6/9/2N6/2C6/5K3 w";
        assert!(chased_in(guarded, Color::Red).is_empty());
    }

    #[test]
    fn same_kinds_that_can_take_back_offer_an_exchange() {
        let fen = "3k5/9/9/9/r8/9/9/9/9/R4K3 w";
        assert!(chased_in(fen, Color::Red).is_empty());
        assert!(chased_in(fen, Color::Black).is_empty());
    }

    #[test]
    fn a_pinned_piece_chases_only_its_pinner() {
        // The red chariot on d1 is the leg of the black horse on d2, which would
        // check the general on e0: it chases that horse, not the one on a1.
        let fen = "3k5/9/9/9/9/9/9/3n5/n2R5/4K4 w";
        assert_eq!(chased_in(fen, Color::Red), ["d2"]);
    }
}
