//! The position: pieces on the board, side to move, counters and hash, with
//! make/unmake and attack detection.

use std::fmt;

use crate::attacks::{self, HORSE_ATTACKERS, NONE, SOLDIER_ATTACKERS};
use crate::{Bitboard, ByColor, Color, Kind, Move, Piece, Square, zobrist};

/// A Xiangqi position.
///
/// Invariants: every occupied point appears in exactly one colour set and one kind
/// set; `occupied` is their union; `file_occ[f]` has bit `r` set exactly when the
/// point at file `f`, rank `r` is occupied; `generals` holds each side's general;
/// `hash` equals [`Position::compute_hash`].
#[derive(Clone, PartialEq, Eq)]
pub struct Position {
    board: [Option<Piece>; Square::COUNT],
    by_color: ByColor<Bitboard>,
    by_kind: [Bitboard; 7],
    converted: Bitboard,
    occupied: Bitboard,
    file_occ: [u16; 9],
    generals: ByColor<Square>,
    side: Color,
    halfmove_clock: u32,
    fullmove: u32,
    hash: u64,
    conversion: bool,
}

/// What [`Position::make`] changed, for [`Position::unmake`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    mv: Move,
    captured: Option<Piece>,
    converted_in_place: bool,
    halfmove_clock: u32,
    hash: u64,
}

impl Undo {
    /// The piece the move captured, if any.
    pub fn captured(&self) -> Option<Piece> {
        self.captured
    }

    /// Whether the captured piece changed sides and stayed on the board, on the
    /// capturer's origin point (capture-conversion variant).
    pub fn converted_in_place(&self) -> bool {
        self.converted_in_place
    }
}

/// The standard starting position in FEN.
pub const START_FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

impl Position {
    /// An empty board (no generals yet): only for building positions piece by piece.
    pub(crate) fn empty() -> Position {
        let e4 = Square::new(crate::File::new(4).unwrap(), crate::Rank::new(0).unwrap());
        Position {
            board: [None; Square::COUNT],
            by_color: ByColor::default(),
            by_kind: [Bitboard::EMPTY; 7],
            converted: Bitboard::EMPTY,
            occupied: Bitboard::EMPTY,
            file_occ: [0; 9],
            generals: ByColor { red: e4, black: e4 },
            side: Color::Red,
            halfmove_clock: 0,
            fullmove: 1,
            hash: 0,
            conversion: false,
        }
    }

    /// The standard starting position.
    pub fn startpos() -> Position {
        match Position::from_fen(START_FEN) {
            Ok(p) => p,
            Err(e) => unreachable!("start FEN is valid: {e}"),
        }
    }

    /// The piece on `sq`.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// Plies since the last capture (FEN field 5).
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }

    /// The move number, starting at 1 and incremented after each Black move.
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove
    }

    /// The Zobrist hash of pieces and side to move (counters excluded).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The point of `color`'s general.
    #[inline]
    pub fn general(&self, color: Color) -> Square {
        self.generals[color]
    }

    /// All of `color`'s pieces.
    #[inline]
    pub fn color_bb(&self, color: Color) -> Bitboard {
        self.by_color[color]
    }

    /// All pieces of `kind`, both colours, converted or not.
    #[inline]
    pub fn kind_bb(&self, kind: Kind) -> Bitboard {
        self.by_kind[kind.index()]
    }

    /// `color`'s pieces of `kind`.
    #[inline]
    pub fn pieces(&self, color: Color, kind: Kind) -> Bitboard {
        self.by_color[color] & self.by_kind[kind.index()]
    }

    /// Every converted piece, both colours.
    pub fn converted_bb(&self) -> Bitboard {
        self.converted
    }

    /// Every occupied point.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    /// Occupancy of file `f` (bit = rank).
    #[inline]
    pub(crate) fn file_occupancy(&self, f: usize) -> usize {
        self.file_occ[f] as usize
    }

    /// Whether captures convert pieces (the capture-conversion variant).
    pub fn conversion(&self) -> bool {
        self.conversion
    }

    /// Turns the capture-conversion rule on or off for the moves made from now on.
    pub fn set_conversion(&mut self, on: bool) {
        self.conversion = on;
    }

    pub(crate) fn set_side(&mut self, side: Color) {
        if self.side != side {
            self.hash ^= zobrist::BLACK_TO_MOVE;
        }
        self.side = side;
    }

    pub(crate) fn set_counters(&mut self, halfmove_clock: u32, fullmove: u32) {
        self.halfmove_clock = halfmove_clock;
        self.fullmove = fullmove;
    }

    /// Puts `piece` on the empty point `sq`, keeping every invariant but the
    /// general's point, which follows the last general put.
    pub(crate) fn put(&mut self, sq: Square, piece: Piece) {
        debug_assert!(self.board[sq.index()].is_none());
        self.board[sq.index()] = Some(piece);
        let bb = Bitboard::from_square(sq);
        self.by_color[piece.color()] |= bb;
        self.by_kind[piece.kind().index()] |= bb;
        if piece.is_converted() {
            self.converted |= bb;
        }
        self.occupied |= bb;
        self.file_occ[sq.file().index()] |= 1 << sq.rank().index();
        self.hash ^= zobrist::piece_key(piece, sq);
        if piece.kind() == Kind::General {
            self.generals[piece.color()] = sq;
        }
    }

    /// Removes `piece` from `sq`, where it stands.
    fn take(&mut self, sq: Square, piece: Piece) {
        self.board[sq.index()] = None;
        let bb = !Bitboard::from_square(sq);
        self.by_color[piece.color()] &= bb;
        self.by_kind[piece.kind().index()] &= bb;
        self.converted &= bb;
        self.occupied &= bb;
        self.file_occ[sq.file().index()] &= !(1 << sq.rank().index());
        self.hash ^= zobrist::piece_key(piece, sq);
    }

    /// Plays `mv`, which must be a legal move of this position (generated, or checked
    /// with [`Position::is_legal`]); returns what [`Position::unmake`] needs.
    ///
    /// Under the capture-conversion rule (engine/RULES.md §8) a captured chariot, horse,
    /// cannon or elephant that had not converted before, taken by a piece of another
    /// kind, is turned to the capturer's side and put on the capturer's origin point
    /// when from there it checks the enemy general; otherwise it leaves the board.
    pub fn make(&mut self, mv: Move) -> Undo {
        let (from, to) = (mv.from(), mv.to());
        let undo_hash = self.hash;
        let halfmove_clock = self.halfmove_clock;
        let Some(piece) = self.board[from.index()] else {
            unreachable!("make: no piece on {from} for {mv}");
        };
        let captured = self.board[to.index()];
        self.take(from, piece);
        if let Some(c) = captured {
            self.take(to, c);
        }
        self.put(to, piece);
        let mut converted_in_place = false;
        if let Some(c) = captured {
            self.halfmove_clock = 0;
            if let Some(turned) = self.converts(piece, c, from) {
                self.put(from, turned);
                converted_in_place = true;
            }
        } else {
            self.halfmove_clock += 1;
        }
        if self.side == Color::Black {
            self.fullmove += 1;
        }
        self.side = !self.side;
        self.hash ^= zobrist::BLACK_TO_MOVE;
        Undo {
            mv,
            captured,
            converted_in_place,
            halfmove_clock,
            hash: undo_hash,
        }
    }

    /// The piece that `captured`, just taken by `capturer` coming from `from`, turns
    /// into and stays on `from` as, if the capture-conversion rule applies and the
    /// turned piece checks the enemy general from there.
    fn converts(&self, capturer: Piece, captured: Piece, from: Square) -> Option<Piece> {
        if !self.conversion || captured.is_converted() || captured.kind() == capturer.kind() {
            return None;
        }
        let turned = Piece::new_converted(capturer.color(), captured.kind())?;
        let target = self.generals[captured.color()];
        self.attacks_from(from, turned, self.occupied)
            .contains(target)
            .then_some(turned)
    }

    /// Takes back the move that returned `undo`; it must be the last one made.
    pub fn unmake(&mut self, undo: Undo) {
        let (from, to) = (undo.mv.from(), undo.mv.to());
        self.side = !self.side;
        if self.side == Color::Black {
            self.fullmove -= 1;
        }
        if undo.converted_in_place
            && let Some(turned) = self.board[from.index()]
        {
            self.take(from, turned);
        }
        let Some(piece) = self.board[to.index()] else {
            unreachable!("unmake: no piece on {to}");
        };
        self.take(to, piece);
        self.put(from, piece);
        if let Some(c) = undo.captured {
            self.put(to, c);
        }
        self.halfmove_clock = undo.halfmove_clock;
        self.hash = undo.hash;
    }

    /// Passes the move to the other side (a "null move" for search); undo with
    /// [`Position::unmake_null`]. Must not be used while in check.
    pub fn make_null(&mut self) -> u32 {
        let clock = self.halfmove_clock;
        self.halfmove_clock += 1;
        self.side = !self.side;
        self.hash ^= zobrist::BLACK_TO_MOVE;
        clock
    }

    /// Takes back [`Position::make_null`].
    pub fn unmake_null(&mut self, halfmove_clock: u32) {
        self.side = !self.side;
        self.hash ^= zobrist::BLACK_TO_MOVE;
        self.halfmove_clock = halfmove_clock;
    }

    /// Points `piece` on `sq` attacks (may capture on, were an enemy there) over
    /// the occupancy `occ`. A general's attacks here are its palace steps only; the
    /// "flying general" rule is handled in check detection.
    pub fn attacks_from(&self, sq: Square, piece: Piece, occ: Bitboard) -> Bitboard {
        let i = sq.index();
        match piece.kind() {
            Kind::General => Bitboard(attacks::GENERAL_STEPS[i]),
            Kind::Advisor => Bitboard(attacks::ADVISOR_STEPS[i]),
            Kind::Elephant if piece.is_converted() => attacks::bishop_targets(sq, occ),
            Kind::Elephant => {
                let mut out = Bitboard::EMPTY;
                for &(eye, to) in &attacks::ELEPHANT_MOVES[i] {
                    if to != NONE && occ.0 >> eye & 1 == 0 {
                        out.0 |= 1u128 << to;
                    }
                }
                out
            }
            Kind::Horse => {
                let mut out = Bitboard::EMPTY;
                for &(leg, targets) in &attacks::HORSE_MOVES[i] {
                    if leg != NONE && occ.0 >> leg & 1 == 0 {
                        out.0 |= targets;
                    }
                }
                out
            }
            Kind::Chariot | Kind::Cannon => {
                let f = sq.file().index();
                let file_occ = if occ == self.occupied {
                    self.file_occ[f] as usize
                } else {
                    file_occupancy_of(occ, f)
                };
                let (rook, cannon) = attacks::slider_targets(
                    sq,
                    attacks::rank_occupancy(occ, sq.rank().index()),
                    file_occ,
                );
                if piece.kind() == Kind::Chariot {
                    rook
                } else {
                    (rook & !occ) | cannon
                }
            }
            Kind::Soldier => Bitboard(attacks::SOLDIER_STEPS[piece.color().index()][i]),
        }
    }

    /// Whether `by`'s pieces in `enemy` attack the general standing on `k`, given the
    /// board occupancy `occ` and the occupancy of `k`'s file `k_file_occ` (bit = rank).
    /// Includes the "flying general" rule: an enemy general on the same open file.
    #[inline]
    pub(crate) fn general_attacked(
        &self,
        k: Square,
        by: Color,
        occ: Bitboard,
        k_file_occ: usize,
        enemy: Bitboard,
    ) -> bool {
        let (rook, cannon) = attacks::slider_targets(
            k,
            attacks::rank_occupancy(occ, k.rank().index()),
            k_file_occ,
        );
        let kinds = &self.by_kind;
        if (rook & enemy & (kinds[Kind::Chariot.index()] | kinds[Kind::General.index()])).any() {
            return true;
        }
        if (cannon & enemy & kinds[Kind::Cannon.index()]).any() {
            return true;
        }
        let horses = enemy & kinds[Kind::Horse.index()];
        if horses.any() {
            for &(leg, sources) in &HORSE_ATTACKERS[k.index()] {
                if leg != NONE && occ.0 >> leg & 1 == 0 && sources & horses.0 != 0 {
                    return true;
                }
            }
        }
        if SOLDIER_ATTACKERS[by.index()][k.index()] & (enemy & kinds[Kind::Soldier.index()]).0 != 0
        {
            return true;
        }
        let bishops = enemy & kinds[Kind::Elephant.index()] & self.converted;
        bishops.any() && (attacks::bishop_targets(k, occ) & bishops).any()
    }

    /// Whether `color`'s general is attacked.
    pub fn is_check(&self, color: Color) -> bool {
        let k = self.generals[color];
        self.general_attacked(
            k,
            !color,
            self.occupied,
            self.file_occ[k.file().index()] as usize,
            self.by_color[!color],
        )
    }

    /// Whether the side to move is in check.
    #[inline]
    pub fn in_check(&self) -> bool {
        self.is_check(self.side)
    }

    /// Every piece of `by` that attacks `sq` (for exchange evaluation and chase
    /// judgement), over the occupancy `occ`. Generals count with their palace steps;
    /// use [`Position::is_check`] for the flying-general rule.
    pub fn attackers_to(&self, sq: Square, by: Color, occ: Bitboard) -> Bitboard {
        let mut out = Bitboard::EMPTY;
        for from in self.by_color[by] & occ {
            if let Some(p) = self.board[from.index()]
                && self.attacks_from(from, p, occ).contains(sq)
            {
                out.insert(from);
            }
        }
        out
    }

    /// The hash recomputed from scratch (equals [`Position::hash`]).
    pub fn compute_hash(&self) -> u64 {
        let mut h = if self.side == Color::Black {
            zobrist::BLACK_TO_MOVE
        } else {
            0
        };
        for sq in self.occupied {
            if let Some(p) = self.board[sq.index()] {
                h ^= zobrist::piece_key(p, sq);
            }
        }
        h
    }

    /// Checks every internal invariant (for tests and debugging).
    pub fn is_consistent(&self) -> bool {
        let mut copy = Position::empty();
        for sq in Square::all() {
            if let Some(p) = self.board[sq.index()] {
                copy.put(sq, p);
            }
        }
        copy.by_color == self.by_color
            && copy.by_kind == self.by_kind
            && copy.converted == self.converted
            && copy.occupied == self.occupied
            && copy.file_occ == self.file_occ
            && self.piece_at(self.generals.red) == Some(Piece::new(Color::Red, Kind::General))
            && self.piece_at(self.generals.black) == Some(Piece::new(Color::Black, Kind::General))
            && self.hash == self.compute_hash()
    }
}

/// Occupancy of file `f` in the board mask `occ` (bit = rank).
pub(crate) fn file_occupancy_of(occ: Bitboard, f: usize) -> usize {
    let mut m = 0;
    for r in 0..10 {
        m |= ((occ.0 >> (r * 9 + f)) as usize & 1) << r;
    }
    m
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_fen())
    }
}

impl fmt::Display for Position {
    /// A diagram with rank 9 on top, then the FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in (0..10).rev() {
            write!(f, "{r} ")?;
            for file in 0..9 {
                match Square::from_coords(file, r).and_then(|s| self.piece_at(s)) {
                    Some(p) => write!(f, " {}", p.fen_char())?,
                    None => write!(f, " .")?,
                }
            }
            writeln!(f)?;
        }
        writeln!(f, "   a b c d e f g h i")?;
        write!(f, "{}", self.to_fen())
    }
}
