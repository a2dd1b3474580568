//! Checking moves: whether a move gives check, and the quiet moves that do,
//! found from where checks can come rather than by trying every move.

use arrayvec::ArrayVec;

use super::between;
use crate::attacks::{self, NONE};
use crate::moves::MoveList;
use crate::position::Position;
use crate::{Bitboard, Kind, Move, Square};

/// Where the side to move's quiet moves give check, the enemy general not being
/// attacked yet (so a move gives check exactly when it makes one of the mover's
/// pieces attack it). Direct checks: the empty points from which a piece of each
/// kind would attack the general. Discovered checks: a piece leaving the one point
/// between a chariot and the general, one of the two points between a cannon and
/// the general, a horse leg, or the one point between a converted elephant and
/// the general on a diagonal; a piece landing between a cannon and the general
/// with nothing between them (a new screen). Non-captures never convert a piece,
/// so the capture-conversion rule changes none of this.
struct CheckMap {
    /// Empty points on an open line to the general.
    chariot: Bitboard,
    /// Empty points with exactly one piece between them and the general.
    cannon: Bitboard,
    /// Empty points of horses attacking the general over an empty leg.
    horse: Bitboard,
    /// Empty points of soldiers attacking the general.
    soldier: Bitboard,
    /// Empty points on an open diagonal to the general (for converted elephants,
    /// which move as bishops; empty when the mover has none).
    bishop: Bitboard,
    /// The empty points between the mover's cannons and the general where
    /// nothing stands between them.
    screen: Bitboard,
    /// The first piece on each ray from the general. A cannon there checks by
    /// no move of its own: along its ray it keeps no screen or has none, and it
    /// reaches no other line through the general.
    first: Bitboard,
    /// `(from, gap)`: a move from `from` to any point outside `gap` uncovers an
    /// attack on the general. At most three per ray (behind a chariot
    /// and a cannon), one per horse leg and one per diagonal.
    uncover: ArrayVec<(Square, Bitboard), 20>,
    /// The origins in `uncover`.
    uncover_from: Bitboard,
}

impl CheckMap {
    /// Records that each piece in `from` uncovers an attack by leaving `gap`.
    fn uncover_all(&mut self, from: Bitboard, gap: Bitboard) {
        for sq in from {
            self.uncover.push((sq, gap));
            self.uncover_from.insert(sq);
        }
    }

    /// The points a move from `from` may go to in order to uncover an attack.
    fn uncovered(&self, from: Square) -> Bitboard {
        let mut out = Bitboard::EMPTY;
        if self.uncover_from.contains(from) {
            for &(sq, gap) in &self.uncover {
                if sq == from {
                    out |= !gap;
                }
            }
        }
        out
    }
}

impl Position {
    /// Whether `mv` (legal here) gives check. Decided without making the move:
    /// the mover attacks the enemy general from its target, or another piece
    /// does over the occupancy after the move (an opened line or horse leg, a new
    /// cannon screen). Positions with converted pieces or the conversion rule
    /// make the move instead.
    pub fn gives_check(&mut self, mv: Move) -> bool {
        let (from, to) = (mv.from(), mv.to());
        let Some(piece) = self.piece_at(from) else {
            return false;
        };
        if self.conversion() || self.converted_bb().any() {
            let undo = self.make(mv);
            let check = self.in_check();
            self.unmake(undo);
            return check;
        }
        let us = self.side_to_move();
        let k = self.general(!us);
        let from_bb = Bitboard::from_square(from);
        let occ = (self.occupied() ^ from_bb) | Bitboard::from_square(to);
        if piece.kind() != Kind::General && self.attacks_from(to, piece, occ).contains(k) {
            return true;
        }
        let k_file_occ = self.file_occupancy_after(k, from, to);
        self.general_attacked(k, us, occ, k_file_occ, self.color_bb(us) & !from_bb)
    }

    /// Every legal non-capture that gives check, in [`Position::legal_moves`]
    /// order. Found from where checks can come (see [`CheckMap`]) rather than by
    /// testing every move; with the enemy general already attacked (not in a
    /// position reached by legal play), by filtering the legal moves.
    pub fn quiet_checks(&self) -> MoveList {
        let mut list = MoveList::new();
        let Some(map) = self.check_map() else {
            let mut pos = self.clone();
            for m in self.legal_moves() {
                if !self.is_capture(m) && pos.gives_check(m) {
                    list.push(m);
                }
            }
            return list;
        };
        let occ = self.occupied();
        let empty = !occ;
        let k = self.general(!self.side_to_move());
        self.walk(
            |from, piece| {
                let mut want = map.uncovered(from);
                want |= match piece.kind() {
                    Kind::Chariot => map.chariot | map.screen,
                    Kind::Cannon if map.first.contains(from) => map.screen & !between(from, k),
                    Kind::Cannon => map.cannon | map.screen,
                    Kind::Horse => map.horse | map.screen,
                    Kind::Soldier => map.soldier | map.screen,
                    Kind::Elephant if piece.is_converted() => map.bishop | map.screen,
                    _ => map.screen,
                };
                want &= empty;
                let slider = matches!(piece.kind(), Kind::Chariot | Kind::Cannon);
                if want.is_empty() || slider && (want & attacks::lines_through(from)).is_empty() {
                    return Bitboard::EMPTY;
                }
                self.attacks_from(from, piece, occ) & want
            },
            |from, to| list.push(Move::new(from, to)),
        );
        list
    }

    /// Where quiet moves of the side to move give check; `None` when the enemy
    /// general is attacked already (a move could then keep or remove a check),
    /// which is found on the way.
    fn check_map(&self) -> Option<CheckMap> {
        let us = self.side_to_move();
        let them = !us;
        let k = self.general(them);
        let (kf, kr) = (k.file().index(), k.rank().index());
        let occ = self.occupied();
        let empty = !occ;
        let own = self.color_bb(us);
        let chariots = own & self.kind_bb(Kind::Chariot);
        let cannons = own & self.kind_bb(Kind::Cannon);
        // `reach(o, cleared)`: the points a chariot on `k` reaches over `o`, which
        // is the last occupancy without the pieces `cleared`; the pieces it stops
        // on are the next blockers on each of the four rays.
        let mut k_file_occ = self.file_occupancy(kf);
        let mut reach = |o: Bitboard, cleared: Bitboard| {
            for sq in cleared {
                if sq.file().index() == kf {
                    k_file_occ &= !(1 << sq.rank().index());
                }
            }
            attacks::slider_targets(k, attacks::rank_occupancy(o, kr), k_file_occ).0
        };
        let reach1 = reach(occ, Bitboard::EMPTY);
        let first = reach1 & occ;
        let soldiers = Bitboard(attacks::SOLDIER_ATTACKERS[us.index()][k.index()]);
        let general = own & self.kind_bb(Kind::General);
        if (first & (chariots | general)).any()
            || (soldiers & own & self.kind_bb(Kind::Soldier)).any()
        {
            return None;
        }
        let mut map = CheckMap {
            chariot: reach1 & empty,
            cannon: Bitboard::EMPTY,
            horse: Bitboard::EMPTY,
            soldier: soldiers & empty,
            bishop: Bitboard::EMPTY,
            screen: Bitboard::EMPTY,
            first,
            uncover: ArrayVec::new(),
            uncover_from: Bitboard::EMPTY,
        };
        let on_lines = attacks::lines_through(k);
        if cannons.any() || (chariots & on_lines).any() {
            let occ2 = occ ^ first;
            let reach2 = reach(occ2, first);
            let second = reach2 & occ2;
            if (second & cannons).any() {
                return None;
            }
            map.cannon = reach2 & empty & !reach1;
            for p in second & chariots {
                let gap = between(p, k);
                map.uncover_all(gap & own, gap);
            }
            for p in first & cannons {
                map.screen |= between(p, k);
            }
            if (cannons & on_lines & !first & !second).any() {
                let occ3 = occ2 ^ second;
                let third = reach(occ3, second) & occ3;
                for p in third & cannons {
                    let gap = between(p, k);
                    map.uncover_all(gap & own, gap);
                }
            }
        }
        let horses = own & self.kind_bb(Kind::Horse);
        if horses.any() {
            for &(leg, sources) in &attacks::HORSE_ATTACKERS[k.index()] {
                if leg == NONE {
                    continue;
                }
                if occ.bits() >> leg & 1 == 0 {
                    if sources & horses.bits() != 0 {
                        return None;
                    }
                    map.horse |= Bitboard(sources) & empty;
                } else if own.bits() >> leg & 1 != 0 && sources & horses.bits() != 0 {
                    map.uncover_all(Bitboard(1 << leg), Bitboard::EMPTY);
                }
            }
        }
        let bishops = own & self.kind_bb(Kind::Elephant) & self.converted_bb();
        if bishops.any() {
            let diagonals = attacks::bishop_targets(k, occ);
            if (diagonals & bishops).any() {
                return None;
            }
            map.bishop = diagonals & empty;
            let occ2 = occ ^ (diagonals & occ);
            for p in attacks::bishop_targets(k, occ2) & occ2 & bishops {
                // From `p` towards the general up to the one piece between.
                let gap = attacks::bishop_targets(p, occ) & diagonals;
                map.uncover_all(gap & own, gap);
            }
        }
        Some(map)
    }
}
