//! Moves and move lists.

use std::fmt;

use arrayvec::ArrayVec;

use crate::Square;

/// A move from one point to another. Packed: bits 0–6 the origin index, bits 7–13
/// the target index. Whether it captures or converts is a property of the position
/// it is played in.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(u16);

impl Move {
    /// The move from `from` to `to`.
    pub const fn new(from: Square, to: Square) -> Move {
        Move(from.index() as u16 | (to.index() as u16) << 7)
    }

    /// The origin point.
    pub const fn from(self) -> Square {
        match Square::from_index((self.0 & 0x7f) as u8) {
            Some(s) => s,
            None => unreachable!(),
        }
    }

    /// The target point.
    pub const fn to(self) -> Square {
        match Square::from_index((self.0 >> 7) as u8) {
            Some(s) => s,
            None => unreachable!(),
        }
    }

    /// The packed 14-bit form (for transposition tables).
    pub const fn raw(self) -> u16 {
        self.0
    }

    /// Unpacks [`Move::raw`]; `None` for a value no move packs to.
    pub const fn from_raw(raw: u16) -> Option<Move> {
        let from = raw & 0x7f;
        let to = (raw >> 7) & 0x7f;
        if raw >> 14 == 0 && from < 90 && to < 90 {
            Some(Move(raw))
        } else {
            None
        }
    }

    /// Parses coordinate notation such as `h2e2` (ICCS / UCI: file letter, rank digit
    /// 0–9, twice). Only the syntax is checked; legality depends on a position.
    pub fn parse_coords(s: &str) -> Option<Move> {
        if s.len() != 4 || !s.is_ascii() {
            return None;
        }
        let from = Square::parse(&s[..2])?;
        let to = Square::parse(&s[2..])?;
        if from == to {
            return None;
        }
        Some(Move::new(from, to))
    }
}

impl fmt::Display for Move {
    /// Coordinate notation, e.g. `h2e2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from(), self.to())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({self})")
    }
}

/// Upper bound on the legal moves of any position, conversions included: at most
/// four chariots and four cannons (17 targets each), four horses (8), two bishops
/// (16), two elephants, two advisors, a general (4 each) and five soldiers (3 each)
/// make 235.
pub const MAX_MOVES: usize = 256;

/// A list of moves with no heap allocation.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip() {
        let m = Move::parse_coords("h2e2").unwrap();
        assert_eq!(m.to_string(), "h2e2");
        assert_eq!(Move::from_raw(m.raw()), Some(m));
        assert!(Move::parse_coords("h2h2").is_none());
        assert!(Move::parse_coords("h2e").is_none());
        assert!(Move::parse_coords("z2e2").is_none());
        assert!(Move::parse_coords("炮二平").is_none());
    }
}
