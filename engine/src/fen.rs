//! FEN: parsing and printing positions.
//!
//! Six space-separated fields: the board (ranks 9 down to 0, separated by `/`;
//! digits count empty points; uppercase letters are Red's), the side to move (`w`
//! or `r` for Red, `b` for Black), two unused placeholders (printed `-`), the plies
//! since the last capture, and the move number. Fields 3–6 may be left out (they
//! default to `- - 0 1`). A piece letter followed by `~` is a converted piece
//! (capture-conversion variant). Letters `E`/`e` and `H`/`h` are accepted for the
//! elephant and the horse; printing always uses `B` and `N`.

use thiserror::Error;

use crate::{Color, File, Kind, Piece, Position, Rank, Square};

/// Why a FEN was rejected. Ranks are numbered 0–9 from Red's side, as on the board.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FenError {
    #[error("empty fen")]
    Empty,
    #[error("the board has {0} rank{s}; it needs 10 separated by '/'", s = if *.0 == 1 { "" } else { "s" })]
    WrongRankCount(usize),
    #[error("bad piece letter '{letter}' in rank {rank}")]
    BadPiece { letter: char, rank: u8 },
    #[error("rank {rank} is too long: '{text}' describes more than 9 points")]
    RankTooLong { rank: u8, text: String },
    #[error("rank {rank} is too short: '{text}' describes {points} of 9 points")]
    RankTooShort { rank: u8, text: String, points: u32 },
    #[error("'~' in rank {rank} must follow a chariot, horse, cannon or elephant letter")]
    BadConversionMark { rank: u8 },
    #[error("{} has no general", .0.name())]
    MissingGeneral(Color),
    #[error("{} has more than one general", .0.name())]
    TwoGenerals(Color),
    #[error("{} has {count} {}s; at most {max} are possible", .color.name(), .kind.name())]
    TooMany {
        color: Color,
        kind: Kind,
        count: u32,
        max: u32,
    },
    #[error("{} {} on {square} stands where it can never go", .color.name(), .kind.name())]
    Misplaced {
        color: Color,
        kind: Kind,
        square: Square,
    },
    #[error("the generals face each other on an open file")]
    GeneralsFacing,
    #[error("{} is in check but it is {}'s move", .0.name(), .0.other().name())]
    OpponentInCheck(Color),
    #[error("bad side to move '{0}'; expected 'w', 'r' or 'b'")]
    BadSide(String),
    #[error("bad halfmove clock '{0}'; expected a number of plies")]
    BadHalfmoveClock(String),
    #[error("bad move number '{0}'; expected a number from 1")]
    BadFullmoveNumber(String),
    #[error("too many fields: '{0}' follows the move number")]
    TooManyFields(String),
}

/// Whether an unconverted `kind` of `color` may ever stand on `sq`.
fn reachable(color: Color, kind: Kind, sq: Square) -> bool {
    let f = sq.file().index();
    let rel = sq.rank().relative_to(color);
    match kind {
        Kind::General => sq.in_palace(color),
        Kind::Advisor => sq.in_palace(color) && (f == 4) == (rel == 1),
        Kind::Elephant => {
            matches!((f, rel), (2 | 6, 0) | (0 | 4 | 8, 2) | (2 | 6, 4))
        }
        Kind::Soldier => rel >= 5 || (rel >= 3 && f.is_multiple_of(2)),
        Kind::Horse | Kind::Chariot | Kind::Cannon => true,
    }
}

impl Position {
    /// Parses a FEN. Never panics: every malformed input is a [`FenError`].
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let mut fields = fen.split_whitespace();
        let board = fields.next().ok_or(FenError::Empty)?;
        let mut pos = Position::empty();
        let ranks: Vec<&str> = board.split('/').collect();
        if ranks.len() != 10 {
            return Err(FenError::WrongRankCount(ranks.len()));
        }
        let mut generals = [0u32; 2];
        let mut counts = [[0u32; 7]; 2];
        for (i, text) in ranks.iter().enumerate() {
            let rank_no = 9 - i as u8;
            let rank = Rank::new(rank_no).ok_or(FenError::WrongRankCount(ranks.len()))?;
            let mut file: u32 = 0;
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if let Some(d) = c.to_digit(10).filter(|&d| d > 0) {
                    file += d;
                    if file > 9 {
                        return Err(FenError::RankTooLong {
                            rank: rank_no,
                            text: text.to_string(),
                        });
                    }
                    continue;
                }
                if c == '~' {
                    return Err(FenError::BadConversionMark { rank: rank_no });
                }
                let (color, kind) = Kind::from_fen_char(c).ok_or(FenError::BadPiece {
                    letter: c,
                    rank: rank_no,
                })?;
                let converted = chars.next_if_eq(&'~').is_some();
                let piece = if converted {
                    Piece::new_converted(color, kind)
                        .ok_or(FenError::BadConversionMark { rank: rank_no })?
                } else {
                    Piece::new(color, kind)
                };
                let Some(f) = File::new(file as u8) else {
                    return Err(FenError::RankTooLong {
                        rank: rank_no,
                        text: text.to_string(),
                    });
                };
                let sq = Square::new(f, rank);
                if !converted && !reachable(color, kind, sq) {
                    return Err(FenError::Misplaced {
                        color,
                        kind,
                        square: sq,
                    });
                }
                if kind == Kind::General {
                    generals[color.index()] += 1;
                    if generals[color.index()] > 1 {
                        return Err(FenError::TwoGenerals(color));
                    }
                }
                if !converted {
                    counts[color.index()][kind.index()] += 1;
                }
                pos.put(sq, piece);
                file += 1;
            }
            if file < 9 {
                return Err(FenError::RankTooShort {
                    rank: rank_no,
                    text: text.to_string(),
                    points: file,
                });
            }
        }
        for color in Color::ALL {
            if generals[color.index()] == 0 {
                return Err(FenError::MissingGeneral(color));
            }
            for kind in Kind::ALL {
                let count = counts[color.index()][kind.index()];
                if count > kind.start_count() {
                    return Err(FenError::TooMany {
                        color,
                        kind,
                        count,
                        max: kind.start_count(),
                    });
                }
            }
            // A converted piece came from the other side: its kind's total is bounded.
            for kind in Kind::ALL.into_iter().filter(|k| k.can_convert()) {
                let turned = (pos.pieces(!color, kind) & pos.converted_bb()).count();
                let count = counts[color.index()][kind.index()] + turned;
                if count > kind.start_count() {
                    return Err(FenError::TooMany {
                        color,
                        kind,
                        count,
                        max: kind.start_count(),
                    });
                }
            }
        }

        let side = match fields.next() {
            None | Some("w" | "r" | "W" | "R") => Color::Red,
            Some("b" | "B") => Color::Black,
            Some(other) => return Err(FenError::BadSide(other.to_string())),
        };
        pos.set_side(side);
        let _placeholders = (fields.next(), fields.next());
        let halfmove = match fields.next() {
            None => 0,
            Some(s) => s
                .parse::<u32>()
                .map_err(|_| FenError::BadHalfmoveClock(s.to_string()))?,
        };
        let fullmove = match fields.next() {
            None => 1,
            Some(s) => match s.parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(FenError::BadFullmoveNumber(s.to_string())),
            },
        };
        if let Some(extra) = fields.next() {
            return Err(FenError::TooManyFields(extra.to_string()));
        }
        pos.set_counters(halfmove, fullmove);

        let (rk, bk) = (pos.general(Color::Red), pos.general(Color::Black));
        if rk.file() == bk.file() {
            let between = (rk.rank().index() + 1..bk.rank().index())
                .filter_map(|r| Square::from_coords(rk.file().index() as i32, r as i32))
                .any(|s| pos.piece_at(s).is_some());
            if !between {
                return Err(FenError::GeneralsFacing);
            }
        }
        if pos.is_check(!side) {
            return Err(FenError::OpponentInCheck(!side));
        }
        Ok(pos)
    }

    /// The FEN of this position, in canonical letters.
    pub fn to_fen(&self) -> String {
        let mut out = String::with_capacity(90);
        for r in (0..10).rev() {
            let mut empty = 0;
            for f in 0..9 {
                match Square::from_coords(f, r).and_then(|s| self.piece_at(s)) {
                    Some(p) => {
                        if empty > 0 {
                            out.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        out.push_str(&p.to_string());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if r > 0 {
                out.push('/');
            }
        }
        let side = match self.side_to_move() {
            Color::Red => 'w',
            Color::Black => 'b',
        };
        format!(
            "{out} {side} - - {} {}",
            self.halfmove_clock(),
            self.fullmove_number()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::START_FEN;

    fn err(fen: &str) -> FenError {
        Position::from_fen(fen).expect_err(fen)
    }

    #[test]
    fn start_round_trips() {
        let p = Position::from_fen(START_FEN).unwrap();
        assert_eq!(p.to_fen(), START_FEN);
        assert!(p.is_consistent());
    }

    #[test]
    fn aliases_and_defaults() {
        let p = Position::from_fen("rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r")
            .unwrap();
        assert_eq!(p.to_fen(), START_FEN);
    }

    #[test]
    fn converted_pieces_round_trip() {
        let fen = "4k4/9/9/9/4B~4/9/9/9/4A4/3AK4 b - - 3 20";
        let p = Position::from_fen(fen).unwrap();
        assert_eq!(p.to_fen(), fen);
        assert!(
            p.piece_at(Square::parse("e5").unwrap())
                .unwrap()
                .is_converted()
        );
    }

    #[test]
    fn typed_errors() {
        assert_eq!(err(""), FenError::Empty);
        assert!(matches!(err("9/9/9"), FenError::WrongRankCount(3)));
        assert!(matches!(
            err("rnbakabnx/9/9/9/9/9/9/9/9/4K4"),
            FenError::BadPiece { letter: 'x', .. }
        ));
        assert!(matches!(
            err("4k5/9/9/9/9/9/9/9/9/4K4"),
            FenError::RankTooLong { rank: 9, .. }
        ));
        assert!(matches!(
            err("4k3/9/9/9/9/9/9/9/9/4K4"),
            FenError::RankTooShort { rank: 9, .. }
        ));
        assert_eq!(
            err("9/9/9/9/9/9/9/9/9/4K4"),
            FenError::MissingGeneral(Color::Black)
        );
        assert!(matches!(
            err("3kk4/9/9/9/9/9/9/9/9/4K4"),
            FenError::TwoGenerals(Color::Black)
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/9/K8"),
            FenError::Misplaced {
                kind: Kind::General,
                ..
            }
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/3A5/4K4"),
            FenError::Misplaced {
                kind: Kind::Advisor,
                ..
            }
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/1B7/9/4K4"),
            FenError::Misplaced {
                kind: Kind::Elephant,
                ..
            }
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/4P4/4K4"),
            FenError::Misplaced {
                kind: Kind::Soldier,
                ..
            }
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/1P7/9/9/9/3K5"),
            FenError::Misplaced {
                kind: Kind::Soldier,
                ..
            }
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/9/4K4 x"),
            FenError::BadSide(_)
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/9/3K5 w - - z 1"),
            FenError::BadHalfmoveClock(_)
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 0"),
            FenError::BadFullmoveNumber(_)
        ));
        assert!(matches!(
            err("4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1 x"),
            FenError::TooManyFields(_)
        ));
        assert_eq!(err("4k4/9/9/9/9/9/9/9/9/4K4"), FenError::GeneralsFacing);
        assert_eq!(
            err("3k5/9/9/9/9/9/9/9/9/3RK4 w"),
            FenError::OpponentInCheck(Color::Black)
        );
        assert!(matches!(
            err("3k5/9/9/9/9/9/9/9/9/P~3K4"),
            FenError::BadConversionMark { .. }
        ));
        assert!(matches!(
            err("3k5/9/9/9/9/9/9/9/9/~4K4"),
            FenError::BadConversionMark { .. }
        ));
        assert!(matches!(
            err("3k5/9/9/9/PPPPPP3/9/9/9/9/4K4"),
            FenError::Misplaced { .. } | FenError::TooMany { .. }
        ));
    }

    #[test]
    fn never_panics_on_junk() {
        for junk in [
            "/",
            "//////////",
            "9/9/9/9/9/9/9/9/9/9/9",
            "99/9",
            "k",
            "~",
            "4k4/9/9/9/9/9/9/9/9/3K5 w - - 99999999999 1",
            "\u{0}",
            "炮二平五",
        ] {
            let _ = Position::from_fen(junk);
        }
    }
}
