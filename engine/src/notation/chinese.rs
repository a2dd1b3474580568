//! Chinese notation (art. 7.5, engine/RULES.md §9): `炮二平五`, `马8进7`, `前炮平四`.
//!
//! A move is the piece, its file, the direction 进 (forward) / 退 (backward) /
//! 平 (sideways), then the target file (平, and the diagonal movers) or the number
//! of ranks (straight movers going 进/退). Red writes Chinese numerals 一…九, Black
//! writes digits 1…9.
//!
//! Like pieces on one file, as written:
//! - two: 前 / 后 replace the file (`前炮平四`);
//! - three (soldiers, or converted pieces): 前 / 中 / 后;
//! - four or five soldiers: their place from the front in the mover's numerals
//!   (`一兵` … `五兵` for Red, `1卒` … `5卒` for Black);
//! - when two files each hold two or more (soldiers, or converted pieces), the
//!   file follows the piece: `前兵三平四`, `后卒7进1`.
//!
//! Advisors and elephants keep the file form (`仕六进五`) even when two share the
//! file, as is usual, since only one of them can make the named move; the 前/后
//! form is used only if both could.
//!
//! Accepted on input, besides the above: 帅/帥/将/將, 仕/士, 相/象, 马/馬/傌,
//! 车/車/俥, 炮/砲/包, 兵/卒 whatever the side; 後 for 后, 進 for 进; Chinese
//! numerals, ASCII digits or full-width digits for either side; the marker after
//! the piece (`车前进一`); whitespace between the characters.
//!
//! **The abbreviated record** (简写记录, art. 7.5) is read too: the same move
//! without its direction character, both sides writing digits, `炮2 5`, `马8 7`,
//! `车1 2`. Art. 7.5 prints it with a space where the direction was; published
//! guides describe the direction as a line drawn under the last digit (进) or over
//! it (退), none for 平, which plain text loses. So the direction is taken from
//! a combining low line U+0332 after the number (进, `马8 7\u{332}`) or a
//! combining overline U+0305 or macron U+0304 (退); without a mark every direction
//! is tried and the text must fit exactly one legal move (`炮2 5` in the start
//! position), else it is refused as ambiguous (`车1 2` after 马二进三 is 车一平二 or
//! 车一进二). A missing mark is never read as 平, so a record whose marks were lost
//! can be refused but never misread.

use super::{Designation, Dir, NotationError, Sel, Spec};
use crate::{Color, Kind};

const NUMERALS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

/// One meaningful character of a Chinese move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Token {
    Piece(Kind),
    Num(u8),
    Dir(Dir),
    Front,
    Middle,
    Rear,
}

/// The kind a piece character names, whatever the side (帅/帥/将/將, 仕/士, 相/象,
/// 马/馬/傌, 车/車/俥, 炮/砲/包, 兵/卒).
pub(crate) fn piece_kind(c: char) -> Option<Kind> {
    Some(match c {
        '帅' | '帥' | '将' | '將' => Kind::General,
        '仕' | '士' => Kind::Advisor,
        '相' | '象' => Kind::Elephant,
        '马' | '馬' | '傌' => Kind::Horse,
        '车' | '車' | '俥' => Kind::Chariot,
        '炮' | '砲' | '包' => Kind::Cannon,
        '兵' | '卒' => Kind::Soldier,
        _ => return None,
    })
}

fn token(c: char) -> Option<Token> {
    if let Some(kind) = piece_kind(c) {
        return Some(Token::Piece(kind));
    }
    Some(match c {
        '进' | '進' => Token::Dir(Dir::Forward),
        '退' => Token::Dir(Dir::Backward),
        '平' => Token::Dir(Dir::Sideways),
        '前' => Token::Front,
        '中' => Token::Middle,
        '后' | '後' => Token::Rear,
        '1'..='9' => Token::Num(c as u8 - b'0'),
        '１'..='９' => Token::Num((c as u32 - '０' as u32) as u8),
        _ => Token::Num(NUMERALS.iter().position(|&n| n == c)? as u8 + 1),
    })
}

/// The direction an abbreviated record's mark gives: U+0332 (a line under the
/// number) 进, U+0305 or U+0304 (a line over it) 退.
fn mark(c: char) -> Option<Dir> {
    match c {
        '\u{332}' => Some(Dir::Forward),
        '\u{305}' | '\u{304}' => Some(Dir::Backward),
        _ => None,
    }
}

/// Parses the text into a [`Spec`]; which piece it names is decided later.
pub(crate) fn parse(text: &str) -> Result<Spec, NotationError> {
    let trimmed = text.trim();
    let (body, marked) = match trimmed.chars().last().and_then(mark) {
        Some(dir) => (trimmed.trim_end_matches(|c| mark(c).is_some()), Some(dir)),
        None => (trimmed, None),
    };
    let mut tokens = Vec::new();
    for c in body.chars().filter(|c| !c.is_whitespace()) {
        match token(c) {
            Some(t) => tokens.push(t),
            None => {
                return Err(NotationError::malformed(
                    text,
                    format!("unexpected character '{c}'"),
                ));
            }
        }
        if tokens.len() > 5 {
            return Err(NotationError::malformed(text, "too long"));
        }
    }
    let (dir, num, designator) = match tokens.as_slice() {
        [designator @ .., Token::Dir(dir), Token::Num(num)] if marked.is_none() => {
            (Some(*dir), *num, designator)
        }
        [designator @ .., Token::Num(num)]
            if !designator.iter().any(|t| matches!(t, Token::Dir(_))) =>
        {
            (marked, *num, designator)
        }
        _ => {
            return Err(NotationError::malformed(
                text,
                "expected it to end with 进, 退 or 平 and a number \
                 (abbreviated: the number alone, with its mark)",
            ));
        }
    };
    let marker = |t: Token| match t {
        Token::Front => Some(Sel::Nth(0)),
        Token::Middle => Some(Sel::Middle),
        Token::Rear => Some(Sel::Rear),
        Token::Num(n) if n <= 5 => Some(Sel::Nth(n - 1)),
        _ => None,
    };
    let parsed = match *designator {
        [Token::Piece(k), Token::Num(f)] => Some((k, Some(f), Sel::File)),
        [m, Token::Piece(k)] => marker(m).map(|s| (k, None, s)),
        [
            Token::Piece(k),
            m @ (Token::Front | Token::Middle | Token::Rear),
        ] => marker(m).map(|s| (k, None, s)),
        [m, Token::Piece(k), Token::Num(f)] => marker(m).map(|s| (k, Some(f), s)),
        _ => None,
    };
    let Some((kind, file_number, sel)) = parsed else {
        return Err(NotationError::malformed(
            text,
            "expected a piece and its file (车二), or 前/中/后 and a piece (前车)",
        ));
    };
    Ok(Spec {
        kind,
        file_number,
        sel,
        dir,
        num,
    })
}

/// A number as `color` writes it: Chinese numerals for Red, digits for Black.
fn numeral(n: u8, color: Color) -> Option<char> {
    match color {
        Color::Red => NUMERALS.get(usize::from(n).checked_sub(1)?).copied(),
        Color::Black => char::from_digit(u32::from(n), 10).filter(|_| (1..=9).contains(&n)),
    }
}

/// Writes `d` in the file form (`炮二平五`) or the place form (`前炮平四`).
pub(crate) fn render(d: &Designation, file_form: bool) -> Option<String> {
    let color = d.piece.color();
    let file = numeral(d.file_number, color)?;
    let mut out = String::new();
    if file_form {
        out.push(d.piece.chinese());
        out.push(file);
    } else {
        let marker = match (d.on_file, d.index) {
            (2 | 3, 0) => '前',
            (3, 1) => '中',
            (2, 1) | (3, 2) => '后',
            (_, i) => numeral(u8::try_from(i + 1).ok()?, color)?,
        };
        out.push(marker);
        out.push(d.piece.chinese());
        if d.tandem_files >= 2 {
            out.push(file);
        }
    }
    out.push(match d.dir {
        Dir::Forward => '进',
        Dir::Backward => '退',
        Dir::Sideways => '平',
    });
    out.push(numeral(d.num, color)?);
    Some(out)
}
