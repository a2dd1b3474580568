//! 一字三码 ("one character, three digits"; seeds 001 and 003, §9, 新编棋步的读法与
//! 记法): `马325`, `将451`, `车220`.
//!
//! A move is the piece's character, then three Arabic digits, the same for both
//! sides: the file the piece stands on, the file it goes to, the rank it goes to.
//! Files are numbered as in Chinese notation, 1–9 from the mover's right; ranks
//! 1–10 from the mover's own back rank, the tenth (the enemy's back rank) written
//! `0` "so that no rank takes two digits". The last two digits are always the
//! target point, so the notation has no 前/中/后 and no 平.
//!
//! When two like pieces stand on one file and both can reach the target, the
//! origin file is left out and 进 (forward) or 退 (backward) says which one moves:
//! `马进25`. The seeds name 车 马 炮 相/象 仕/士 for this; two such pieces on one file
//! that reach one point always come from opposite sides of it (a nearer own piece
//! would block a chariot or cannon; a leaper's rank offset to a given file has one
//! size), so one advances and the other retreats. The seeds do not say where 进/退
//! stands; it is written after the piece, and read before it too (`进马25`).
//!
//! Extension, needed only in the capture-conversion variant (where a third like
//! piece on another file may reach the same point in the same direction): the
//! origin file and 进/退 together, `马3进25`.
//!
//! Accepted on input: every piece character Chinese notation reads (帥 馬 車 …) and
//! 進 for 进; full-width digits are folded by [`super::parse_as`].

use super::{Dir, NotationError};
use crate::{File, Kind, Move, Position, Rank, Square};

/// One meaningful character of a 一字三码 move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Token {
    Piece(Kind),
    Digit(u8),
    Dir(Dir),
}

fn token(c: char) -> Option<Token> {
    if let Some(kind) = super::chinese::piece_kind(c) {
        return Some(Token::Piece(kind));
    }
    match c {
        '0'..='9' => Some(Token::Digit(c as u8 - b'0')),
        '进' | '進' => Some(Token::Dir(Dir::Forward)),
        '退' => Some(Token::Dir(Dir::Backward)),
        _ => None,
    }
}

/// A parsed 一字三码 move: the piece's kind, which of them, and the target point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Code {
    kind: Kind,
    /// The origin file in the mover's numbering (1..=9), if written.
    origin: Option<u8>,
    /// 进 or 退, if written.
    dir: Option<Dir>,
    /// The target file in the mover's numbering, 1..=9.
    file: u8,
    /// The target rank counted from the mover's back rank, 1..=10.
    rank: u8,
}

/// Parses the text (already folded to ASCII digits) into a [`Code`].
pub(crate) fn parse(text: &str) -> Result<Code, NotationError> {
    let t = text.trim();
    let mut tokens = Vec::with_capacity(5);
    for c in t.chars() {
        let Some(tok) = token(c) else {
            return Err(NotationError::malformed(
                text,
                format!("unexpected character '{c}'"),
            ));
        };
        tokens.push(tok);
        if tokens.len() > 5 {
            return Err(NotationError::malformed(text, "too long"));
        }
    }
    use Token::{Digit, Piece};
    let (kind, origin, dir, file, rank) = match tokens.as_slice() {
        [Piece(k), Digit(o), Digit(f), Digit(r)] => (*k, Some(*o), None, *f, *r),
        [Piece(k), Token::Dir(d), Digit(f), Digit(r)]
        | [Token::Dir(d), Piece(k), Digit(f), Digit(r)] => (*k, None, Some(*d), *f, *r),
        [Piece(k), Digit(o), Token::Dir(d), Digit(f), Digit(r)] => (*k, Some(*o), Some(*d), *f, *r),
        _ => {
            return Err(NotationError::malformed(
                text,
                "expected a piece and three digits (马325), or a piece, 进 or 退 and two \
                 digits (马进25)",
            ));
        }
    };
    for (what, n) in [("origin file", origin), ("target file", Some(file))] {
        if n == Some(0) {
            return Err(NotationError::malformed(
                text,
                format!("the {what} is 0; files are 1 to 9"),
            ));
        }
    }
    Ok(Code {
        kind,
        origin,
        dir,
        file,
        rank: if rank == 0 { 10 } else { rank },
    })
}

/// The move's direction as its mover sees it, `None` for a sideways move.
fn direction(pos: &Position, mv: Move) -> Option<Dir> {
    let us = pos.side_to_move();
    let from = mv.from().rank().relative_to(us);
    let to = mv.to().rank().relative_to(us);
    match to.cmp(&from) {
        std::cmp::Ordering::Greater => Some(Dir::Forward),
        std::cmp::Ordering::Less => Some(Dir::Backward),
        std::cmp::Ordering::Equal => None,
    }
}

impl Code {
    /// The one legal move this code names in `pos`.
    pub(crate) fn resolve(&self, pos: &Position, text: &str) -> Result<Move, NotationError> {
        let us = pos.side_to_move();
        let (Some(file), Some(rank)) = (
            File::from_number(self.file, us),
            Rank::new(self.rank - 1)
                .map(|r| r.relative_to(us))
                .and_then(Rank::new),
        ) else {
            return Err(NotationError::malformed(text, "no such target point"));
        };
        let to = Square::new(file, rank);
        let origin_file = self.origin.and_then(|n| File::from_number(n, us));
        let pieces: Vec<Square> = pos
            .pieces(us, self.kind)
            .into_iter()
            .filter(|sq| origin_file.is_none_or(|f| sq.file() == f))
            .collect();
        if pieces.is_empty() {
            let place = match self.origin {
                Some(n) => format!(" on file {n}"),
                None => String::new(),
            };
            return Err(NotationError::NoSuchPiece {
                text: text.to_string(),
                reason: format!("{} has no {}{place}", us.name(), self.kind.name()),
            });
        }
        let legal: Vec<Move> = pieces
            .into_iter()
            .filter(|&from| from != to)
            .map(|from| Move::new(from, to))
            .filter(|&m| pos.is_legal(m))
            .filter(|&m| self.dir.is_none_or(|d| direction(pos, m) == Some(d)))
            .collect();
        match legal.as_slice() {
            [m] => Ok(*m),
            [] => Err(NotationError::Illegal {
                text: text.to_string(),
            }),
            _ => Err(NotationError::Ambiguous {
                text: text.to_string(),
                candidates: legal,
            }),
        }
    }
}

/// Writes the legal move `mv`: `马325`; `马进25` when another like piece on the
/// origin file reaches the same point; `马3进25` when even that names two moves
/// (converted pieces only). The text parses back to `mv`.
pub(crate) fn format(pos: &Position, mv: Move) -> Result<String, NotationError> {
    let inexpressible = NotationError::Inexpressible {
        mv,
        notation: super::Notation::Yizisanma,
    };
    let Some(piece) = pos.piece_at(mv.from()) else {
        return Err(NotationError::NotLegal(mv));
    };
    if !pos.is_legal(mv) {
        return Err(NotationError::NotLegal(mv));
    }
    let us = piece.color();
    let c = piece.chinese();
    let origin = mv.from().file().number_for(us);
    let file = mv.to().file().number_for(us);
    let rank = (mv.to().rank().relative_to(us) + 1) % 10;
    let mut forms = vec![format!("{c}{origin}{file}{rank}")];
    if let Some(dir) = direction(pos, mv) {
        let d = if dir == Dir::Forward { '进' } else { '退' };
        forms.push(format!("{c}{d}{file}{rank}"));
        forms.push(format!("{c}{origin}{d}{file}{rank}"));
    }
    forms
        .into_iter()
        .find(|t| parse(t).and_then(|code| code.resolve(pos, t)) == Ok(mv))
        .ok_or(inexpressible)
}
