//! Piece kinds and pieces.

use std::fmt;
use std::num::NonZeroU8;

use crate::Color;

/// The seven kinds of piece.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Kind {
    General = 0,
    Advisor = 1,
    Elephant = 2,
    Horse = 3,
    Chariot = 4,
    Cannon = 5,
    Soldier = 6,
}

impl Kind {
    /// All kinds in index order.
    pub const ALL: [Kind; 7] = [
        Kind::General,
        Kind::Advisor,
        Kind::Elephant,
        Kind::Horse,
        Kind::Chariot,
        Kind::Cannon,
        Kind::Soldier,
    ];

    /// Index 0..7.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// How many of this kind each side has at the start.
    pub const fn start_count(self) -> u32 {
        match self {
            Kind::General => 1,
            Kind::Soldier => 5,
            _ => 2,
        }
    }

    /// Whether a captured piece of this kind may change sides in the
    /// capture-conversion variant (chariots, horses, cannons and elephants).
    pub const fn can_convert(self) -> bool {
        matches!(
            self,
            Kind::Elephant | Kind::Horse | Kind::Chariot | Kind::Cannon
        )
    }

    /// Red's (uppercase) FEN letter.
    pub const fn fen_char(self) -> char {
        match self {
            Kind::General => 'K',
            Kind::Advisor => 'A',
            Kind::Elephant => 'B',
            Kind::Horse => 'N',
            Kind::Chariot => 'R',
            Kind::Cannon => 'C',
            Kind::Soldier => 'P',
        }
    }

    /// Parses a FEN letter, uppercase for Red; accepts the aliases `E` (elephant)
    /// and `H` (horse).
    pub const fn from_fen_char(c: char) -> Option<(Color, Kind)> {
        let color = if c.is_ascii_uppercase() {
            Color::Red
        } else {
            Color::Black
        };
        let kind = match c.to_ascii_uppercase() {
            'K' => Kind::General,
            'A' => Kind::Advisor,
            'B' | 'E' => Kind::Elephant,
            'N' | 'H' => Kind::Horse,
            'R' => Kind::Chariot,
            'C' => Kind::Cannon,
            'P' => Kind::Soldier,
            _ => return None,
        };
        Some((color, kind))
    }

    /// The lowercase English name.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::General => "general",
            Kind::Advisor => "advisor",
            Kind::Elephant => "elephant",
            Kind::Horse => "horse",
            Kind::Chariot => "chariot",
            Kind::Cannon => "cannon",
            Kind::Soldier => "soldier",
        }
    }
}

/// A piece: colour, kind and whether it was converted (taken over from the other
/// side in the capture-conversion variant).
///
/// Packed in one non-zero byte so that `Option<Piece>` is one byte: bits 0–2 hold
/// the kind index plus one, bit 3 is set for Black, bit 4 for a converted piece.
/// Invariant: only kinds that [`Kind::can_convert`] carry the converted bit.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Piece(NonZeroU8);

impl Piece {
    /// Number of distinct values of [`Piece::index`].
    pub const INDEX_COUNT: usize = 32;

    /// An unconverted piece.
    pub const fn new(color: Color, kind: Kind) -> Piece {
        Piece::pack(color, kind, false)
    }

    /// A converted piece, or `None` for a kind that never converts.
    pub const fn new_converted(color: Color, kind: Kind) -> Option<Piece> {
        if kind.can_convert() {
            Some(Piece::pack(color, kind, true))
        } else {
            None
        }
    }

    const fn pack(color: Color, kind: Kind, converted: bool) -> Piece {
        let bits = (kind as u8 + 1) | ((color as u8) << 3) | ((converted as u8) << 4);
        match NonZeroU8::new(bits) {
            Some(b) => Piece(b),
            None => unreachable!(),
        }
    }

    /// The piece's side.
    pub const fn color(self) -> Color {
        if self.0.get() & 8 == 0 {
            Color::Red
        } else {
            Color::Black
        }
    }

    /// The piece's kind.
    pub const fn kind(self) -> Kind {
        Kind::ALL[((self.0.get() & 7) - 1) as usize]
    }

    /// Whether the piece changed sides by capture conversion.
    pub const fn is_converted(self) -> bool {
        self.0.get() & 16 != 0
    }

    /// A dense index below [`Piece::INDEX_COUNT`], distinct for every piece value.
    pub const fn index(self) -> usize {
        self.0.get() as usize
    }

    /// The FEN letter (uppercase for Red), without the `~` conversion mark.
    pub const fn fen_char(self) -> char {
        let c = self.kind().fen_char();
        match self.color() {
            Color::Red => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }

    /// The piece's Chinese character as the rules write it (帅 仕 相 马 车 炮 兵 for Red,
    /// 将 士 象 马 车 炮 卒 for Black).
    pub const fn chinese(self) -> char {
        match (self.color(), self.kind()) {
            (Color::Red, Kind::General) => '帅',
            (Color::Black, Kind::General) => '将',
            (Color::Red, Kind::Advisor) => '仕',
            (Color::Black, Kind::Advisor) => '士',
            (Color::Red, Kind::Elephant) => '相',
            (Color::Black, Kind::Elephant) => '象',
            (_, Kind::Horse) => '马',
            (_, Kind::Chariot) => '车',
            (_, Kind::Cannon) => '炮',
            (Color::Red, Kind::Soldier) => '兵',
            (Color::Black, Kind::Soldier) => '卒',
        }
    }
}

impl fmt::Display for Piece {
    /// The FEN form: the letter, then `~` for a converted piece.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.fen_char())?;
        if self.is_converted() {
            write!(f, "~")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Piece({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips() {
        for color in Color::ALL {
            for kind in Kind::ALL {
                let p = Piece::new(color, kind);
                assert_eq!(
                    (p.color(), p.kind(), p.is_converted()),
                    (color, kind, false)
                );
                if let Some(c) = Piece::new_converted(color, kind) {
                    assert_eq!((c.color(), c.kind(), c.is_converted()), (color, kind, true));
                    assert_ne!(c.index(), p.index());
                }
            }
        }
        assert_eq!(std::mem::size_of::<Option<Piece>>(), 1);
        assert!(Piece::new_converted(Color::Red, Kind::Soldier).is_none());
    }

    #[test]
    fn fen_letters() {
        assert_eq!(
            Kind::from_fen_char('e'),
            Some((Color::Black, Kind::Elephant))
        );
        assert_eq!(Kind::from_fen_char('H'), Some((Color::Red, Kind::Horse)));
        assert_eq!(Kind::from_fen_char('x'), None);
        let p = Piece::new_converted(Color::Red, Kind::Horse).unwrap();
        assert_eq!(p.to_string(), "N~");
    }
}
