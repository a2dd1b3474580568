//! Points of the board: files, ranks and squares.
//!
//! Files `a`..`i` run left to right as Red sees the board; ranks `0`..`9` run from
//! Red's back rank. A square's index is `rank * 9 + file`, so index 0 is `a0` and
//! index 89 is `i9`.

use std::fmt;

use crate::Color;

/// A file, `a` (0) to `i` (8), left to right from Red's side.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct File(u8);

/// A rank, 0 to 9, counted from Red's back rank.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Rank(u8);

/// One of the 90 points of the board. Invariant: the index is below 90.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Square(u8);

impl File {
    /// Number of files.
    pub const COUNT: usize = 9;

    /// The file with index `i` (0 = `a`), or `None` when `i >= 9`.
    pub const fn new(i: u8) -> Option<File> {
        if i < 9 { Some(File(i)) } else { None }
    }

    /// Index 0..9.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The file's letter, `a`..`i`.
    pub const fn char(self) -> char {
        (b'a' + self.0) as char
    }

    /// Parses a letter `a`..`i`.
    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='i' => Some(File(c as u8 - b'a')),
            _ => None,
        }
    }

    /// The traditional file number (1..=9) as `color` counts it: each side numbers
    /// the files from its own right, so Red's 1 is file `i` and Black's 1 is file `a`.
    pub const fn number_for(self, color: Color) -> u8 {
        match color {
            Color::Red => 9 - self.0,
            Color::Black => self.0 + 1,
        }
    }

    /// The file that `color` calls `number` (1..=9).
    pub const fn from_number(number: u8, color: Color) -> Option<File> {
        if number < 1 || number > 9 {
            return None;
        }
        Some(match color {
            Color::Red => File(9 - number),
            Color::Black => File(number - 1),
        })
    }

    /// All files, `a` first.
    pub fn all() -> impl DoubleEndedIterator<Item = File> + Clone {
        (0..9).map(File)
    }
}

impl Rank {
    /// Number of ranks.
    pub const COUNT: usize = 10;

    /// The rank with index `i`, or `None` when `i >= 10`.
    pub const fn new(i: u8) -> Option<Rank> {
        if i < 10 { Some(Rank(i)) } else { None }
    }

    /// Index 0..10.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The rank's digit, `0`..`9`.
    pub const fn char(self) -> char {
        (b'0' + self.0) as char
    }

    /// Parses a digit `0`..`9`.
    pub const fn from_char(c: char) -> Option<Rank> {
        match c {
            '0'..='9' => Some(Rank(c as u8 - b'0')),
            _ => None,
        }
    }

    /// Whether this rank lies on `color`'s own side of the river.
    pub const fn is_home_for(self, color: Color) -> bool {
        match color {
            Color::Red => self.0 <= 4,
            Color::Black => self.0 >= 5,
        }
    }

    /// Distance from `color`'s back rank (0 = back rank, 9 = the enemy's back rank).
    pub const fn relative_to(self, color: Color) -> u8 {
        match color {
            Color::Red => self.0,
            Color::Black => 9 - self.0,
        }
    }

    /// All ranks, 0 first.
    pub fn all() -> impl DoubleEndedIterator<Item = Rank> + Clone {
        (0..10).map(Rank)
    }
}

impl Square {
    /// Number of squares.
    pub const COUNT: usize = 90;

    /// The square at `file` and `rank`.
    pub const fn new(file: File, rank: Rank) -> Square {
        Square(rank.0 * 9 + file.0)
    }

    /// The square with index `i`, or `None` when `i >= 90`.
    pub const fn from_index(i: u8) -> Option<Square> {
        if i < 90 { Some(Square(i)) } else { None }
    }

    /// The square at file index `f` and rank index `r`, or `None` off the board.
    pub const fn from_coords(f: i32, r: i32) -> Option<Square> {
        if f >= 0 && f < 9 && r >= 0 && r < 10 {
            Some(Square((r * 9 + f) as u8))
        } else {
            None
        }
    }

    /// Index `rank * 9 + file`, 0..90.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// This square's file.
    pub const fn file(self) -> File {
        File(self.0 % 9)
    }

    /// This square's rank.
    pub const fn rank(self) -> Rank {
        Rank(self.0 / 9)
    }

    /// The square `df` files and `dr` ranks away, if it is on the board.
    pub const fn offset(self, df: i32, dr: i32) -> Option<Square> {
        Square::from_coords((self.0 % 9) as i32 + df, (self.0 / 9) as i32 + dr)
    }

    /// Whether this square lies inside `color`'s palace (files d–f, three back ranks).
    pub const fn in_palace(self, color: Color) -> bool {
        let f = self.0 % 9;
        let r = self.0 / 9;
        let rank_ok = match color {
            Color::Red => r <= 2,
            Color::Black => r >= 7,
        };
        f >= 3 && f <= 5 && rank_ok
    }

    /// All 90 squares in index order.
    pub fn all() -> impl DoubleEndedIterator<Item = Square> + Clone {
        (0..90).map(Square)
    }

    /// Parses a coordinate such as `e0`.
    pub fn parse(s: &str) -> Option<Square> {
        let mut chars = s.chars();
        let file = File::from_char(chars.next()?)?;
        let rank = Rank::from_char(chars.next()?)?;
        if chars.next().is_some() {
            return None;
        }
        Some(Square::new(file, rank))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip() {
        for sq in Square::all() {
            assert_eq!(Square::parse(&sq.to_string()), Some(sq));
            assert_eq!(Square::new(sq.file(), sq.rank()), sq);
        }
        assert_eq!(Square::parse("e0").map(Square::index), Some(4));
        assert_eq!(Square::parse("j0"), None);
        assert_eq!(Square::parse("e10"), None);
    }

    #[test]
    fn traditional_file_numbers() {
        let i = File::from_char('i').unwrap();
        assert_eq!(i.number_for(Color::Red), 1);
        assert_eq!(i.number_for(Color::Black), 9);
        for f in File::all() {
            for c in [Color::Red, Color::Black] {
                assert_eq!(File::from_number(f.number_for(c), c), Some(f));
            }
        }
    }

    #[test]
    fn palaces() {
        assert!(Square::parse("e0").unwrap().in_palace(Color::Red));
        assert!(!Square::parse("e3").unwrap().in_palace(Color::Red));
        assert!(Square::parse("d9").unwrap().in_palace(Color::Black));
        assert!(!Square::parse("c9").unwrap().in_palace(Color::Black));
    }
}
