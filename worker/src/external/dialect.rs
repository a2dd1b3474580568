//! Move dialects: how an external engine numbers the ranks in coordinate moves,
//! and which letters its FEN gives the horse and the elephant.
//!
//! The runner's own notation numbers ranks 0–9 from Red's side (`h2e2`), as
//! UCCI, ElephantEye, Pikafish and `xq-engine` do. Engines that grew out of
//! chess-variant programs (Fairy-Stockfish, Sjaak II) number them 1–10 (`h3e3`,
//! a reply `b10c8`) and read FEN with H and E for horse and elephant (Sjaak II
//! refuses N and B; Fairy-Stockfish reads both). Every line to and from such an
//! engine is translated: `position … moves`, `bestmove`/`ponder` and the PV of
//! `info` lines.

use xq_engine::{Move, Position, Square};
pub use xq_proto::{Coords, CoordsError};

/// The text of a [`Coords`] dialect (the enum itself is part of the cluster's
/// contract, in `xq_proto`).
pub trait Dialect: Copy {
    /// Appends `m` as the engine writes it to `out`.
    fn write_move(self, m: Move, out: &mut String);
    /// `m` as the engine writes it.
    fn move_text(self, m: Move) -> String;
    /// Reads a move the engine wrote, or `None` when it is not a coordinate
    /// move on the board in this dialect. Legality is not checked.
    fn read_move(self, text: &str) -> Option<Move>;
    /// `fen` with the piece letters the engine reads.
    fn fen(self, fen: &str) -> String;
}

/// The number written for rank index `rank` (0 = Red's back rank).
fn rank_number(coords: Coords, rank: usize) -> usize {
    match coords {
        Coords::FromZero => rank,
        Coords::FromOne => rank + 1,
    }
}

impl Dialect for Coords {
    fn write_move(self, m: Move, out: &mut String) {
        for sq in [m.from(), m.to()] {
            out.push(sq.file().char());
            let n = rank_number(self, sq.rank().index());
            if n >= 10 {
                out.push('1');
                out.push(char::from(b'0' + (n - 10) as u8));
            } else {
                out.push(char::from(b'0' + n as u8));
            }
        }
    }

    fn move_text(self, m: Move) -> String {
        let mut s = String::with_capacity(6);
        self.write_move(m, &mut s);
        s
    }

    fn read_move(self, text: &str) -> Option<Move> {
        let bytes = text.as_bytes();
        let (from, rest) = read_square(self, bytes)?;
        let (to, rest) = read_square(self, rest)?;
        rest.is_empty().then(|| Move::new(from, to))
    }

    fn fen(self, fen: &str) -> String {
        match self {
            Coords::FromZero => fen.to_string(),
            Coords::FromOne => {
                let (board, rest) = fen.split_once(' ').unwrap_or((fen, ""));
                let mut out: String = board
                    .chars()
                    .map(|c| match c {
                        'N' => 'H',
                        'n' => 'h',
                        'B' => 'E',
                        'b' => 'e',
                        c => c,
                    })
                    .collect();
                if !rest.is_empty() {
                    out.push(' ');
                    out.push_str(rest);
                }
                out
            }
        }
    }
}

/// One square (a file letter and a rank number) from the front of `bytes`.
fn read_square(coords: Coords, bytes: &[u8]) -> Option<(Square, &[u8])> {
    let (&file, rest) = bytes.split_first()?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let (number, rest) = rest.split_at(digits);
    let number: usize = std::str::from_utf8(number).ok()?.parse().ok()?;
    if digits == 2 && number < 10 {
        return None;
    }
    let rank = match coords {
        Coords::FromZero => number,
        Coords::FromOne => number.checked_sub(1)?,
    };
    if rank > 9 || !(b'a'..=b'i').contains(&file) {
        return None;
    }
    let sq = Square::from_coords(i32::from(file - b'a'), rank as i32)?;
    Some((sq, rest))
}

/// A move read in one dialect that is illegal there but legal in the other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the engine answered '{text}', illegal with ranks numbered {stated} but legal with ranks \
     numbered {other}: it numbers ranks {other}, not {stated} (state {other} with \
     --dev-coords / --base-coords, or engine add --coords, or leave it to be detected)"
)]
pub struct DialectMismatch {
    pub text: String,
    pub stated: Coords,
    pub other: Coords,
}

/// Judges a reply in `pos`: the legal move, `Ok(None)` when it is illegal in
/// both dialects, or the mismatch when only the other dialect makes it legal.
pub fn judge(coords: Coords, pos: &Position, text: &str) -> Result<Option<Move>, DialectMismatch> {
    if let Some(m) = coords.read_move(text).filter(|&m| pos.is_legal(m)) {
        return Ok(Some(m));
    }
    let other = coords.other();
    match other.read_move(text).filter(|&m| pos.is_legal(m)) {
        Some(_) => Err(DialectMismatch {
            text: text.to_string(),
            stated: coords,
            other,
        }),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_cross_both_ways() {
        let m = Move::parse_coords("h2e2").unwrap();
        assert_eq!(Coords::FromZero.move_text(m), "h2e2");
        assert_eq!(Coords::FromOne.move_text(m), "h3e3");
        let top = Move::parse_coords("b9c7").unwrap();
        assert_eq!(Coords::FromOne.move_text(top), "b10c8");
        assert_eq!(Coords::FromOne.read_move("b10c8"), Some(top));
        assert_eq!(Coords::FromZero.read_move("b9c7"), Some(top));
        for sq in Square::all() {
            for to in [Square::all().next().unwrap(), sq] {
                let m = Move::new(sq, to);
                for c in [Coords::FromZero, Coords::FromOne] {
                    assert_eq!(c.read_move(&c.move_text(m)), Some(m));
                }
            }
        }
        for bad in [
            "", "h0", "h0g", "j0a0", "a10a9", "a0a01", "a00a1", "a11a1", "a-1a1",
        ] {
            assert_eq!(Coords::FromZero.read_move(bad), None, "{bad}");
        }
        for bad in ["a0a1", "a11a1", "a01a2", "b10c"] {
            assert_eq!(Coords::FromOne.read_move(bad), None, "{bad}");
        }
    }

    #[test]
    fn fen_letters_follow_the_dialect() {
        let start = xq_engine::START_FEN;
        assert_eq!(Coords::FromZero.fen(start), start);
        assert_eq!(
            Coords::FromOne.fen(start),
            "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w - - 0 1"
        );
        let back = Position::from_fen(&Coords::FromOne.fen(start)).unwrap();
        assert_eq!(back.to_fen(), start);
    }

    #[test]
    fn a_move_legal_only_in_the_other_dialect_names_it() {
        let pos = Position::startpos();
        assert_eq!(
            judge(Coords::FromZero, &pos, "h2e2"),
            Ok(Move::parse_coords("h2e2"))
        );
        assert_eq!(
            judge(Coords::FromOne, &pos, "h3e3"),
            Ok(Move::parse_coords("h2e2"))
        );
        let e = judge(Coords::FromZero, &pos, "h1g3").unwrap_err();
        assert_eq!((e.stated, e.other), (Coords::FromZero, Coords::FromOne));
        assert!(e.to_string().contains("ranks numbered 1-10"), "{e}");
        assert!(judge(Coords::FromOne, &pos, "h0g2").is_err());
        assert_eq!(judge(Coords::FromZero, &pos, "a0a9"), Ok(None));
        assert_eq!(judge(Coords::FromZero, &pos, "garbage"), Ok(None));
    }

    #[test]
    fn from_the_start_every_move_is_illegal_in_the_wrong_dialect() {
        let pos = Position::startpos();
        for m in pos.legal_moves() {
            for c in [Coords::FromZero, Coords::FromOne] {
                let read_wrong = c.other().read_move(&c.move_text(m));
                assert!(read_wrong.is_none_or(|w| !pos.is_legal(w)), "{m} in {c}");
            }
        }
    }
}
