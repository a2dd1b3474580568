//! Legal move generation.
//!
//! Pseudo-legal targets come from the attack tables; legality is decided without
//! making the move. With the mover's general on `k` and not in check, a move of
//! another piece can only expose `k` when
//! - it leaves a point of a rank or file through `k` on which an enemy chariot,
//!   cannon or general stands (an opened line or a changed cannon screen),
//! - it leaves a diagonal neighbour of `k` that is the leg of an enemy horse,
//! - it leaves a diagonal through `k` on which an enemy bishop-moving converted
//!   elephant stands, or
//! - it lands on an *empty* point of a rank or file through `k` on which an enemy
//!   cannon stands (a new screen).
//!
//! Only those moves, general moves, and every move while in check are tested one
//! by one; the rest are counted in bulk. In check, a move of another piece is
//! tested only when it could answer the (first found) checker: capture it, land
//! between it and the general or on the checking horse's leg, or move a checking
//! cannon's screen away.

use crate::attacks::{self, NONE};
use crate::moves::MoveList;
use crate::position::Position;
use crate::{Bitboard, Kind, Move, Piece, Square};

mod checks;

/// Which moves to produce.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Filter {
    All,
    Captures,
}

/// What the legality test needs about the side to move, computed once per node.
struct Guard {
    in_check: bool,
    /// Moves from these points are tested one by one.
    risky_from: Bitboard,
    /// Moves to these (empty) points are tested one by one.
    risky_to: Bitboard,
    /// In check: moves of pieces other than the general must land here or start
    /// from `evasion_from` (everything when not in check).
    evasion_to: Bitboard,
    evasion_from: Bitboard,
}

/// The points strictly between `a` and `b` on their common rank or file (empty
/// when they share neither).
fn between(a: Square, b: Square) -> Bitboard {
    let (lo, hi) = if a < b {
        (a.index(), b.index())
    } else {
        (b.index(), a.index())
    };
    let step = if a.rank() == b.rank() {
        1
    } else if a.file() == b.file() {
        9
    } else {
        return Bitboard::EMPTY;
    };
    let mut out = 0u128;
    let mut i = lo + step;
    while i < hi {
        out |= 1u128 << i;
        i += step;
    }
    Bitboard(out)
}

impl Position {
    fn guard(&self) -> Guard {
        let us = self.side_to_move();
        let them = !us;
        let k = self.general(us);
        let enemy = self.color_bb(them);
        let lines = attacks::lines_through(k);
        let rank = lines & attacks::rank_of(k);
        let file = lines & !rank;
        let line_movers = enemy
            & (self.kind_bb(Kind::Chariot)
                | self.kind_bb(Kind::Cannon)
                | self.kind_bb(Kind::General));
        let cannons = enemy & self.kind_bb(Kind::Cannon);
        let mut risky_from = Bitboard::EMPTY;
        let mut risky_to = Bitboard::EMPTY;
        for line in [rank, file] {
            if (line & line_movers).any() {
                risky_from |= line;
            }
            if (line & cannons).any() {
                risky_to |= line;
            }
        }
        let horses = enemy & self.kind_bb(Kind::Horse);
        if horses.any() {
            for &(leg, sources) in &attacks::HORSE_ATTACKERS[k.index()] {
                if leg != NONE && sources & horses.bits() != 0 {
                    risky_from.insert_index(leg);
                }
            }
        }
        let enemy_bishops = enemy & self.kind_bb(Kind::Elephant) & self.converted_bb();
        if enemy_bishops.any() {
            risky_from |= attacks::diagonals_through(k);
        }
        let in_check = self.in_check();
        let (evasion_to, evasion_from) = if in_check {
            self.evasion_masks()
        } else {
            (Bitboard::FULL, Bitboard::EMPTY)
        };
        Guard {
            in_check,
            risky_from,
            risky_to: risky_to & !self.occupied(),
            evasion_to,
            evasion_from,
        }
    }

    /// The points a non-general move must land on, or start from, to answer a
    /// check by the first checker found (chariot, cannon, horse, soldier):
    /// `(to, from)`. Everything when the checker is none of these or pieces can
    /// convert.
    fn evasion_masks(&self) -> (Bitboard, Bitboard) {
        let all = (Bitboard::FULL, Bitboard::EMPTY);
        if self.conversion() || self.converted_bb().any() {
            return all;
        }
        let us = self.side_to_move();
        let them = !us;
        let k = self.general(us);
        let occ = self.occupied();
        let enemy = self.color_bb(them);
        let (rook, cannon) = attacks::slider_targets(
            k,
            attacks::rank_occupancy(occ, k.rank().index()),
            self.file_occupancy(k.file().index()),
        );
        let line_checker = (rook & enemy & self.kind_bb(Kind::Chariot))
            .chain(cannon & enemy & self.kind_bb(Kind::Cannon))
            .next();
        if let Some(c) = line_checker {
            let gap = between(c, k);
            return (gap | Bitboard::from_square(c), gap & occ);
        }
        let horses = enemy & self.kind_bb(Kind::Horse);
        for &(leg, sources) in &attacks::HORSE_ATTACKERS[k.index()] {
            if leg != NONE && occ.bits() >> leg & 1 == 0 && sources & horses.bits() != 0 {
                let mut to = Bitboard(sources & horses.bits());
                to.insert_index(leg);
                return (to, Bitboard::EMPTY);
            }
        }
        let soldiers = attacks::SOLDIER_ATTACKERS[them.index()][k.index()]
            & (enemy & self.kind_bb(Kind::Soldier)).bits();
        if soldiers != 0 {
            return (Bitboard(soldiers), Bitboard::EMPTY);
        }
        all
    }

    /// Whether the move `from`→`to` of `piece` (the mover's, pseudo-legal) leaves the
    /// mover's general safe.
    #[inline]
    fn leaves_general_safe(&self, from: Square, to: Square, piece: Piece) -> bool {
        let us = self.side_to_move();
        if self.conversion() && self.piece_at(to).is_some_and(|c| c.kind().can_convert()) {
            let mut after = self.clone();
            after.make(Move::new(from, to));
            return !after.is_check(us);
        }
        let from_bb = Bitboard::from_square(from);
        let to_bb = Bitboard::from_square(to);
        let occ = (self.occupied() ^ from_bb) | to_bb;
        let enemy = self.color_bb(!us) & !to_bb;
        let k = if piece.kind() == Kind::General {
            to
        } else {
            self.general(us)
        };
        let k_file_occ = self.file_occupancy_after(k, from, to);
        !self.general_attacked(k, !us, occ, k_file_occ, enemy)
    }

    /// The occupancy of `k`'s file (bit = rank) after a move from `from` to `to`.
    #[inline]
    fn file_occupancy_after(&self, k: Square, from: Square, to: Square) -> usize {
        let kf = k.file().index();
        let mut occ = self.file_occupancy(kf);
        if from.file().index() == kf {
            occ &= !(1 << from.rank().index());
        }
        if to.file().index() == kf {
            occ |= 1 << to.rank().index();
        }
        occ
    }

    /// Pseudo-legal targets of the mover's `piece` on `from` (own pieces excluded).
    #[inline]
    fn targets(&self, from: Square, piece: Piece, own: Bitboard) -> Bitboard {
        self.attacks_from(from, piece, self.occupied()) & !own
    }

    /// Calls `emit(from, to)` for every legal move among the candidates
    /// `candidates(from, piece)` (a subset of the pseudo-legal targets of each of
    /// the mover's pieces); returns the count. Moves come by origin, then safe
    /// targets before tested ones, each by index.
    #[inline]
    fn walk(
        &self,
        mut candidates: impl FnMut(Square, Piece) -> Bitboard,
        mut emit: impl FnMut(Square, Square),
    ) -> u32 {
        let mut guard = None;
        let mut count = 0;
        for from in self.color_bb(self.side_to_move()) {
            let Some(piece) = self.piece_at(from) else {
                continue;
            };
            let mut targets = candidates(from, piece);
            if targets.is_empty() {
                continue;
            }
            let guard = guard.get_or_insert_with(|| self.guard());
            if piece.kind() != Kind::General && !guard.evasion_from.contains(from) {
                targets &= guard.evasion_to;
            }
            if targets.is_empty() {
                continue;
            }
            let (safe, risky) = if guard.in_check
                || piece.kind() == Kind::General
                || guard.risky_from.contains(from)
            {
                (Bitboard::EMPTY, targets)
            } else {
                (targets & !guard.risky_to, targets & guard.risky_to)
            };
            for to in safe {
                emit(from, to);
            }
            count += safe.count();
            for to in risky {
                if self.leaves_general_safe(from, to, piece) {
                    emit(from, to);
                    count += 1;
                }
            }
        }
        count
    }

    /// Calls `emit(from, to)` for every legal move passing `filter`; returns the count.
    #[inline]
    fn walk_filtered(&self, filter: Filter, emit: impl FnMut(Square, Square)) -> u32 {
        let us = self.side_to_move();
        let own = self.color_bb(us);
        let mask = match filter {
            Filter::All => !own,
            Filter::Captures => self.color_bb(!us),
        };
        self.walk(|from, piece| self.targets(from, piece, own) & mask, emit)
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.walk_filtered(Filter::All, |from, to| list.push(Move::new(from, to)));
        list
    }

    /// Every legal capture (for quiescence search).
    pub fn legal_captures(&self) -> MoveList {
        let mut list = MoveList::new();
        self.walk_filtered(Filter::Captures, |from, to| list.push(Move::new(from, to)));
        list
    }

    /// The number of legal moves, without listing them (bulk counting for perft).
    pub fn count_legal(&self) -> u32 {
        self.walk_filtered(Filter::All, |_, _| {})
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        let us = self.side_to_move();
        let own = self.color_bb(us);
        for from in own {
            let Some(piece) = self.piece_at(from) else {
                continue;
            };
            for to in self.targets(from, piece, own) {
                if self.leaves_general_safe(from, to, piece) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        let us = self.side_to_move();
        let Some(piece) = self.piece_at(mv.from()) else {
            return false;
        };
        piece.color() == us
            && self
                .targets(mv.from(), piece, self.color_bb(us))
                .contains(mv.to())
            && self.leaves_general_safe(mv.from(), mv.to(), piece)
    }

    /// Whether `mv` (legal here) captures.
    pub fn is_capture(&self, mv: Move) -> bool {
        self.piece_at(mv.to()).is_some()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Color;
    use proptest::prelude::*;

    /// Legal moves found the slow way: every pseudo-legal move (targets from
    /// [`Position::attacks_from`] that are not own pieces), made on a copy and kept
    /// when the mover's general is not attacked afterwards.
    pub(crate) fn brute_legal(pos: &Position) -> Vec<Move> {
        let us = pos.side_to_move();
        let mut out = Vec::new();
        for from in pos.color_bb(us) {
            let Some(piece) = pos.piece_at(from) else {
                continue;
            };
            for to in pos.attacks_from(from, piece, pos.occupied()) & !pos.color_bb(us) {
                let m = Move::new(from, to);
                let mut after = pos.clone();
                after.make(m);
                if !after.is_check(us) {
                    out.push(m);
                }
            }
        }
        out
    }

    /// The legal non-captures after which the other side is in check, in
    /// `legal_moves` order, found by making each move.
    fn slow_quiet_checks(pos: &mut Position) -> Vec<Move> {
        let mut out = Vec::new();
        for m in pos.legal_moves() {
            let capture = pos.is_capture(m);
            let undo = pos.make(m);
            if !capture && pos.in_check() {
                out.push(m);
            }
            pos.unmake(undo);
        }
        out
    }

    /// With the enemy general already attacked (by a chariot, horse, cannon,
    /// soldier, converted elephant), almost every move keeps the check.
    #[test]
    fn quiet_checks_with_the_enemy_general_attacked() {
        for fen in [
            "3k5/9/9/9/9/9/9/9/9/3RK4 b",
            "4k4/9/3N5/9/9/9/9/9/9/3K5 b",
            "4k4/9/4P4/9/4C4/9/9/9/9/3K5 b",
            "3k5/3P5/9/9/9/9/9/9/9/4K4 b",
            "4k4/9/6B~2/9/9/9/9/9/9/3K5 b",
        ] {
            let mut pos = Position::from_fen(fen).unwrap();
            pos.set_side(Color::Red);
            assert!(pos.is_check(Color::Black), "{fen}");
            let slow = slow_quiet_checks(&mut pos);
            assert!(!slow.is_empty(), "{fen}");
            assert_eq!(pos.quiet_checks().to_vec(), slow, "{fen}");
        }
    }

    /// The bench position `fen`, as a test-case result.
    fn bench_start(fen: &str) -> Result<Position, TestCaseError> {
        crate::bench::position(fen)
            .map_err(|e| TestCaseError::fail(format!("bad bench position {fen}: {e}")))
    }

    /// Makes the move `choice` picks among `moves`, among the checking ones only
    /// when `prefer_check` and there are some (so that random games reach many
    /// positions in check).
    fn random_step(
        pos: &mut Position,
        moves: &[Move],
        prefer_check: bool,
        choice: prop::sample::Index,
    ) {
        let checks: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|&m| pos.gives_check(m))
            .collect();
        let pool = if prefer_check && !checks.is_empty() {
            &checks[..]
        } else {
            moves
        };
        pos.make(*choice.get(pool));
    }

    proptest! {
        /// Along random games from the bench positions that prefer checking moves
        /// (so that many positions are in check), the generator finds exactly the
        /// moves the slow way finds.
        #[test]
        fn legal_moves_match_the_slow_way_in_and_out_of_check(
            start in prop::sample::select(crate::bench::POSITIONS),
            choices in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..60),
        ) {
            let mut pos = bench_start(start)?;
            for (prefer_check, choice) in choices {
                let mut fast = pos.legal_moves().to_vec();
                let mut slow = brute_legal(&pos);
                fast.sort_by_key(|m| m.raw());
                slow.sort_by_key(|m| m.raw());
                prop_assert_eq!(&fast, &slow, "{}", pos.to_fen());
                if fast.is_empty() {
                    break;
                }
                random_step(&mut pos, &fast, prefer_check, choice);
            }
        }

        /// Along random games from the bench positions that prefer checking moves,
        /// `quiet_checks` lists exactly the legal non-captures after which the
        /// other side is in check, in `legal_moves` order.
        #[test]
        fn quiet_checks_are_the_checking_non_captures_in_order(
            start in prop::sample::select(crate::bench::POSITIONS),
            choices in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..80),
        ) {
            let mut pos = bench_start(start)?;
            for (prefer_check, choice) in choices {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let quiet = slow_quiet_checks(&mut pos);
                prop_assert_eq!(pos.quiet_checks().to_vec(), quiet, "{}", pos.to_fen());
                random_step(&mut pos, &moves, prefer_check, choice);
            }
        }

        /// Along random games from the bench positions, `gives_check` agrees with
        /// making each legal move and testing for check.
        #[test]
        fn gives_check_agrees_with_making_the_move(
            start in prop::sample::select(crate::bench::POSITIONS),
            choices in prop::collection::vec(any::<prop::sample::Index>(), 0..80),
        ) {
            let mut pos = bench_start(start)?;
            for choice in choices {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for &m in &moves {
                    let undo = pos.make(m);
                    let made = pos.in_check();
                    pos.unmake(undo);
                    prop_assert_eq!(pos.gives_check(m), made, "{} in {}", m, pos.to_fen());
                }
                pos.make(*choice.get(&moves));
            }
        }
    }
}
