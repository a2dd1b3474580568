//! WXF notation: `C2.5`, `H8+7`, `R1+1`.
//!
//! A move is a piece letter (K general, A advisor, E elephant, H horse, R chariot,
//! C cannon, P soldier), the mover's file number, `+` forward / `-` backward / `.`
//! sideways, then the target file (`.`, and the diagonal movers A, E, H) or the
//! number of ranks (K, R, C, P going `+`/`-`). Both sides write digits, each
//! counting files from its own right.
//!
//! Like pieces on one file follow the WXF rules (wxf.org, "Tandem Positions"): the
//! file digit is replaced by `+` for the front piece and `-` for the rear one,
//! written after the letter (`R+.4`, `C-+1`). For soldiers:
//! - three on a file: `P+`, `P3` (the middle one keeps the file digit), `P-`;
//! - four: `++`, `P+`, `P-`, `--`; five: `++`, `P+`, `P3`, `P-`, `--`;
//! - two files each holding two or more: the file digit replaces the letter and
//!   `+` / `-` / the file digit again mark front / rear / middle (`3+.4`, `33.4`,
//!   `3-.4`, `7+.6`).
//!
//! Extension for converted pieces (capture-conversion variant), which can also
//! stand two deep on two files or four deep on one: the letter is kept before
//! those forms (`R3+.4`, `R++.4`).
//! Advisors and elephants keep the file form even when two share a file, since
//! only one of them can make the named move.
//!
//! Accepted on input, besides the above: lowercase letters, `B` for the elephant,
//! `N` for the horse, `G` for the general, `=` for `.`, and the marker before the
//! letter (`+R.4`, `-C+1`).

use super::{Designation, Dir, NotationError, Sel, Spec};
use crate::Kind;

fn kind_of(c: u8) -> Option<Kind> {
    Some(match c.to_ascii_uppercase() {
        b'K' | b'G' => Kind::General,
        b'A' => Kind::Advisor,
        b'E' | b'B' => Kind::Elephant,
        b'H' | b'N' => Kind::Horse,
        b'R' => Kind::Chariot,
        b'C' => Kind::Cannon,
        b'P' => Kind::Soldier,
        _ => return None,
    })
}

fn letter(kind: Kind) -> char {
    match kind {
        Kind::General => 'K',
        Kind::Advisor => 'A',
        Kind::Elephant => 'E',
        Kind::Horse => 'H',
        Kind::Chariot => 'R',
        Kind::Cannon => 'C',
        Kind::Soldier => 'P',
    }
}

fn digit(c: u8) -> Option<u8> {
    (b'1'..=b'9').contains(&c).then(|| c - b'0')
}

/// `+` / `-` as a place among like pieces on a file.
fn sign(c: u8) -> Option<Sel> {
    match c {
        b'+' => Some(Sel::WxfPlus),
        b'-' => Some(Sel::WxfMinus),
        _ => None,
    }
}

/// `+`, `-` or the file digit repeated (the middle one) after a file digit.
fn place_on_file(file: u8, c: u8) -> Option<Sel> {
    sign(c).or_else(|| (digit(c) == Some(file)).then_some(Sel::Middle))
}

/// Parses the text into a [`Spec`]; which piece it names is decided later.
pub(crate) fn parse(text: &str) -> Result<Spec, NotationError> {
    let t = text.trim();
    if !t.is_ascii() {
        return Err(NotationError::malformed(
            text,
            "WXF uses only letters, digits and + - . =",
        ));
    }
    let b = t.as_bytes();
    let Some((&[d, n], designator)) = b.split_last_chunk::<2>().map(|(d, last)| (last, d)) else {
        return Err(NotationError::malformed(text, "too short"));
    };
    let dir = match d {
        b'+' => Dir::Forward,
        b'-' => Dir::Backward,
        b'.' | b'=' => Dir::Sideways,
        _ => {
            return Err(NotationError::malformed(
                text,
                "the second-last character must be +, - or .",
            ));
        }
    };
    let num = digit(n)
        .ok_or_else(|| NotationError::malformed(text, "the last character must be 1 to 9"))?;
    let soldier = Kind::Soldier;
    let parsed = match *designator {
        [l, f] if kind_of(l).is_some() && digit(f).is_some() => {
            kind_of(l).map(|k| (k, digit(f), Sel::FileOrMiddle))
        }
        [l, s] if kind_of(l).is_some() && sign(s).is_some() => {
            kind_of(l).zip(sign(s)).map(|(k, s)| (k, None, s))
        }
        [s, l] if kind_of(l).is_some() && sign(s).is_some() => {
            kind_of(l).zip(sign(s)).map(|(k, s)| (k, None, s))
        }
        [b'+', b'+'] => Some((soldier, None, Sel::Nth(0))),
        [b'-', b'-'] => Some((soldier, None, Sel::Rear)),
        [l, b'+', b'+'] => kind_of(l).map(|k| (k, None, Sel::Nth(0))),
        [l, b'-', b'-'] => kind_of(l).map(|k| (k, None, Sel::Rear)),
        [f, p] => digit(f).and_then(|f| Some((soldier, Some(f), place_on_file(f, p)?))),
        [l, f, p] => kind_of(l)
            .zip(digit(f))
            .and_then(|(k, f)| Some((k, Some(f), place_on_file(f, p)?))),
        _ => None,
    };
    let Some((kind, file_number, sel)) = parsed else {
        return Err(NotationError::malformed(
            text,
            "expected a piece letter and its file (R1), or a letter and + or - (R+)",
        ));
    };
    Ok(Spec {
        kind,
        file_number,
        sel,
        dir: Some(dir),
        num,
    })
}

/// Writes `d` in the file form (`C2.5`) or the tandem form (`C+.5`, `++.4`, `3+.4`).
pub(crate) fn render(d: &Designation, file_form: bool) -> Option<String> {
    let l = letter(d.piece.kind());
    let file = char::from_digit(u32::from(d.file_number), 10)?;
    let mut out = String::new();
    if file_form {
        out.push(l);
        out.push(file);
    } else {
        let (n, i) = (d.on_file, d.index);
        let middle = n % 2 == 1 && i == n / 2;
        // The place mark: + front, - rear, the file digit for the middle one; with
        // four or five, ++ / -- for the outermost and +/- for the next ones in.
        let mark = if middle {
            file
        } else if i < n / 2 {
            '+'
        } else {
            '-'
        };
        if d.tandem_files >= 2 {
            if d.piece.kind() != Kind::Soldier {
                out.push(l);
            }
            out.push(file);
            out.push(mark);
        } else if n >= 4 && (i == 0 || i + 1 == n) {
            if d.piece.kind() != Kind::Soldier {
                out.push(l);
            }
            out.push(mark);
            out.push(mark);
        } else {
            out.push(l);
            out.push(mark);
        }
    }
    out.push(match d.dir {
        Dir::Forward => '+',
        Dir::Backward => '-',
        Dir::Sideways => '.',
    });
    out.push(char::from_digit(u32::from(d.num), 10)?);
    Some(out)
}
