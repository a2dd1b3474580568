//! Move ordering (TT move, captures by MVV-LVA, killers, quiet-move histories)
//! and static exchange evaluation.

use super::history::QuietScores;
use crate::attacks::{self, NONE};
use crate::eval::see_value;
use crate::params::Params;
use crate::position::file_occupancy_of;
use crate::{Bitboard, Kind, Move, MoveList, Position, Square};

const TT_MOVE: i32 = 4_000_000;
const GOOD_CAPTURE: i32 = 2_000_000;
const KILLER: i32 = 1_000_000;
/// Captures that lose material by static exchange come after every quiet move
/// (quiet scores stay within ±3 × [`HISTORY_MAX`](super::history::HISTORY_MAX)).
const BAD_CAPTURE: i32 = -1_000_000;

/// Ordering key of a capture: most valuable victim, then least valuable attacker.
fn mvv_lva(pos: &Position, mv: Move) -> i32 {
    let victim = pos.piece_at(mv.to()).map_or(0, |p| victim_rank(p.kind()));
    let attacker = pos.piece_at(mv.from()).map_or(0, |p| victim_rank(p.kind()));
    victim * 16 - attacker
}

/// Rank of a kind as a capture victim (0..=6).
fn victim_rank(kind: Kind) -> i32 {
    match kind {
        Kind::Soldier => 1,
        Kind::Advisor => 2,
        Kind::Elephant => 2,
        Kind::Horse => 4,
        Kind::Cannon => 4,
        Kind::Chariot => 6,
        Kind::General => 7,
    }
}

/// Moves with their ordering scores, handed out best first.
#[derive(Debug)]
pub struct Picker {
    moves: MoveList,
    scores: arrayvec::ArrayVec<i32, { crate::MAX_MOVES }>,
    next: usize,
}

impl Picker {
    /// Orders all `moves` of `pos`: the TT move, captures that do not lose by
    /// static exchange (by MVV-LVA), killers, quiet moves by history, then the
    /// losing captures (by MVV-LVA).
    pub fn new(
        pos: &Position,
        moves: MoveList,
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        quiet: QuietScores,
        params: &Params,
    ) -> Picker {
        let scores = moves
            .iter()
            .map(|&mv| {
                if Some(mv) == tt_move {
                    TT_MOVE
                } else if pos.is_capture(mv) {
                    let class = if see_ge(pos, mv, 0, params) {
                        GOOD_CAPTURE
                    } else {
                        BAD_CAPTURE
                    };
                    class + mvv_lva(pos, mv)
                } else if Some(mv) == killers[0] {
                    KILLER + 1
                } else if Some(mv) == killers[1] {
                    KILLER
                } else {
                    pos.piece_at(mv.from())
                        .map_or(0, |p| quiet.score(p, mv.to()))
                }
            })
            .collect();
        Picker {
            moves,
            scores,
            next: 0,
        }
    }

    /// Orders captures by MVV-LVA (quiescence search).
    pub fn captures(pos: &Position, moves: MoveList) -> Picker {
        let scores = moves.iter().map(|&mv| mvv_lva(pos, mv)).collect();
        Picker {
            moves,
            scores,
            next: 0,
        }
    }
}

impl Iterator for Picker {
    type Item = Move;

    /// The best remaining move (selection sort step; ties keep generation order).
    fn next(&mut self) -> Option<Move> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        // The first of the highest scores: a key of score and reversed index, so
        // the scan is a plain maximum.
        let key = |i: usize| i64::from(self.scores[i]) << 8 | (255 - i) as i64;
        let best = (self.next..n)
            .map(key)
            .max()
            .map_or(self.next, |k| 255 - (k & 255) as usize);
        self.moves.swap(self.next, best);
        self.scores.swap(self.next, best);
        self.next += 1;
        Some(self.moves[self.next - 1])
    }
}

/// Whether the static exchange on `mv`'s target square wins at least `threshold`
/// cp for the mover. Attackers are recomputed from the occupancy after each
/// capture, so cannon screens and horse legs are followed; pins, the flying
/// general and capture conversion are ignored.
pub fn see_ge(pos: &Position, mv: Move, threshold: i32, params: &Params) -> bool {
    let (from, to) = (mv.from(), mv.to());
    let Some(mover) = pos.piece_at(from) else {
        return false;
    };
    let mut swap = pos.piece_at(to).map_or(0, |p| see_value(params, p.kind())) - threshold;
    if swap < 0 {
        return false;
    }
    swap = see_value(params, mover.kind()) - swap;
    if swap <= 0 {
        return true;
    }
    let mut occ = pos.occupied() ^ Bitboard::from_square(from) | Bitboard::from_square(to);
    let mut stm = mover.color();
    let mut res = true;
    loop {
        stm = !stm;
        let attackers = attackers_to(pos, to, occ) & pos.color_bb(stm) & occ;
        let Some((sq, kind)) = least_valuable(pos, attackers, params) else {
            break;
        };
        res = !res;
        if kind == Kind::General {
            let occ_after = occ ^ Bitboard::from_square(sq);
            if (attackers_to(pos, to, occ_after) & pos.color_bb(!stm) & occ_after).any() {
                res = !res;
            }
            break;
        }
        swap = see_value(params, kind) - swap;
        if swap < i32::from(res) {
            break;
        }
        occ ^= Bitboard::from_square(sq);
    }
    res
}

/// Pieces of both sides (standing on `occ`, which need not match the board)
/// that could capture on `sq` over the occupancy `occ`, which must contain `sq`; found from `sq` outward, using the
/// symmetry of every move pattern. Generals count with their palace steps only.
fn attackers_to(pos: &Position, sq: Square, occ: Bitboard) -> Bitboard {
    let i = sq.index();
    let (rook, cannon) = attacks::slider_targets(
        sq,
        attacks::rank_occupancy(occ, sq.rank().index()),
        file_occupancy_of(occ, sq.file().index()),
    );
    let mut out = (rook & pos.kind_bb(Kind::Chariot)) | (cannon & pos.kind_bb(Kind::Cannon));
    out |= Bitboard(attacks::GENERAL_STEPS[i]) & pos.kind_bb(Kind::General);
    out |= Bitboard(attacks::ADVISOR_STEPS[i]) & pos.kind_bb(Kind::Advisor);
    let elephants = pos.kind_bb(Kind::Elephant);
    let bishops = elephants & pos.converted_bb();
    for &(eye, from) in &attacks::ELEPHANT_MOVES[i] {
        if from != NONE && occ.0 >> eye & 1 == 0 {
            out.0 |= (1u128 << from) & (elephants & !bishops).0;
        }
    }
    if bishops.any() {
        out |= attacks::bishop_targets(sq, occ) & bishops;
    }
    let horses = pos.kind_bb(Kind::Horse);
    for &(leg, sources) in &attacks::HORSE_ATTACKERS[i] {
        if leg != NONE && occ.0 >> leg & 1 == 0 {
            out.0 |= sources & horses.0;
        }
    }
    let soldiers = pos.kind_bb(Kind::Soldier);
    for color in crate::Color::ALL {
        out.0 |= attacks::SOLDIER_ATTACKERS[color.index()][i] & (soldiers & pos.color_bb(color)).0;
    }
    out & occ
}

/// The least valuable of `attackers` and its kind.
fn least_valuable(pos: &Position, attackers: Bitboard, params: &Params) -> Option<(Square, Kind)> {
    attackers
        .filter_map(|sq| pos.piece_at(sq).map(|p| (sq, p.kind())))
        .min_by_key(|&(_, k)| see_value(params, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::history::History;

    #[test]
    fn see_follows_cannon_screens() {
        let p = Params::default();
        // Red chariot takes a soldier defended by a black cannon behind a screen.
        let pos = Position::from_fen("4k4/9/4c4/4n4/4p4/9/9/9/4R4/5K3 w - - 0 1").unwrap();
        let take = Move::parse_coords("e1e5").unwrap();
        assert!(!see_ge(&pos, take, 0, &p));
        // Undefended soldier: winning.
        let pos = Position::from_fen("3k5/9/9/9/4p4/9/9/9/4R4/5K3 w - - 0 1").unwrap();
        assert!(see_ge(&pos, take, 0, &p));
        assert!(!see_ge(&pos, take, 300, &p));
    }

    #[test]
    fn reverse_attackers_match_forward_attacks() {
        for fen in crate::bench::POSITIONS {
            let pos = crate::bench::position(fen).unwrap();
            for sq in Square::all() {
                let occ = pos.occupied() | Bitboard::from_square(sq);
                let expected = pos.attackers_to(sq, crate::Color::Red, occ)
                    | pos.attackers_to(sq, crate::Color::Black, occ);
                assert_eq!(attackers_to(&pos, sq, occ), expected, "{fen} {sq}");
            }
        }
    }

    #[test]
    fn picker_puts_tt_move_then_captures_first() {
        let pos = Position::from_fen("3k5/9/9/9/4p4/9/9/9/4R4/5K3 w - - 0 1").unwrap();
        let tt = Move::parse_coords("e1a1");
        let p = Params::default();
        let h = History::default();
        let quiet = QuietScores::new(&h, None, 0);
        let mut picker = Picker::new(&pos, pos.legal_moves(), tt, [None; 2], quiet, &p);
        assert_eq!(picker.next(), tt);
        assert_eq!(picker.next(), Move::parse_coords("e1e5"));
    }

    #[test]
    fn picker_puts_losing_captures_after_quiet_moves() {
        // The chariot can take a soldier guarded by a cannon behind a screen.
        let pos = Position::from_fen("4k4/9/4c4/4n4/4p4/9/9/9/4R4/5K3 w - - 0 1").unwrap();
        let take = Move::parse_coords("e1e5").unwrap();
        let order: Vec<Move> = Picker::new(
            &pos,
            pos.legal_moves(),
            None,
            [None; 2],
            QuietScores::new(&History::default(), None, 0),
            &Params::default(),
        )
        .collect();
        assert_eq!(order.last(), Some(&take), "{order:?}");
        assert!(order.len() > 1);
    }
}
