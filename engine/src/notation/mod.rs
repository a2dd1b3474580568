//! Move notation: coordinates, WXF, Chinese and 一字三码, read and written against a
//! position.
//!
//! - **Coordinates** (ICCS / UCI): `h2e2`; on input also `H2E2` and `H2-E2`.
//! - **WXF** ([`wxf`]): `C2.5`, `H8+7`, `R1+1`, tandem pieces `R+.4`, `C-+1`.
//! - **Chinese** ([`chinese`], engine/RULES.md §9, art. 7.5): `炮二平五`, `马8进7`, `前炮平四`;
//!   on input also art. 7.5's abbreviated record, `炮2 5`.
//! - **一字三码** ([`yizisanma`], seeds 001/003 §9): `马325`, piece, origin file, target
//!   file, target rank.
//!
//! Every reader first folds full-width ASCII forms (U+FF01..U+FF5E, as printed
//! collections write `Ｃ２＝５`) and the ideographic space to ASCII ([`fold_width`]).
//!
//! WXF and Chinese name a piece (by its file or, for like pieces sharing
//! a file, by its place front to back as the mover sees it), a direction (forward,
//! backward, sideways) and a number: the target file for sideways moves and for the
//! diagonal movers (advisor, elephant, horse; a converted elephant, which moves like
//! a chess bishop, counts as diagonal), otherwise the number of ranks travelled.
//! Parsing turns the text into a [`Spec`], finds the pieces it names, works out
//! each one's target and keeps the legal move; printing builds the text and then
//! parses it back, so whatever [`format_move`] prints, [`parse_as`] reads as the
//! same move.
//!
//! Input is lenient (aliases, either numeral style, markers before or after the
//! letter); output is strict and follows one documented form.

pub mod chinese;
pub mod wxf;
pub mod yizisanma;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::{Color, File, Kind, Move, Piece, Position, Square};

/// A move notation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Notation {
    /// ICCS / UCI coordinates, `h2e2`.
    Coords,
    /// World Xiangqi Federation notation, `C2.5`.
    Wxf,
    /// Chinese notation, `炮二平五`.
    Chinese,
    /// 一字三码, `马325`: piece, origin file, target file, target rank.
    Yizisanma,
}

impl Notation {
    /// Every notation, in the order help texts list them.
    pub const ALL: [Notation; 4] = [
        Notation::Coords,
        Notation::Wxf,
        Notation::Chinese,
        Notation::Yizisanma,
    ];

    /// The lowercase name (`coords`, `wxf`, `chinese`, `yizisanma`).
    pub const fn name(self) -> &'static str {
        match self {
            Notation::Coords => "coords",
            Notation::Wxf => "wxf",
            Notation::Chinese => "chinese",
            Notation::Yizisanma => "yizisanma",
        }
    }
}

impl fmt::Display for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Notation {
    type Err = String;

    /// Accepts `coords`, `iccs`, `uci`, `wxf`, `chinese` (also `cn`, `zh`),
    /// `yizisanma` (also `一字三码`, `一字三碼`, `three-digit`), any case.
    fn from_str(s: &str) -> Result<Notation, String> {
        match s.to_ascii_lowercase().as_str() {
            "coords" | "coordinates" | "iccs" | "uci" => Ok(Notation::Coords),
            "wxf" => Ok(Notation::Wxf),
            "chinese" | "cn" | "zh" => Ok(Notation::Chinese),
            "yizisanma" | "一字三码" | "一字三碼" | "three-digit" => {
                Ok(Notation::Yizisanma)
            }
            _ => Err(format!(
                "unknown notation '{}'; expected chinese, wxf, iccs or yizisanma",
                s.chars().take(32).collect::<String>()
            )),
        }
    }
}

/// Why a move text could not be read, or a move not written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotationError {
    #[error("malformed move '{text}': {reason}")]
    Malformed { text: String, reason: String },
    #[error("no such piece for '{text}': {reason}")]
    NoSuchPiece { text: String, reason: String },
    /// Several legal moves fit the text.
    #[error("ambiguous move '{text}': it could be {}", join(.candidates, "or"))]
    Ambiguous { text: String, candidates: Vec<Move> },
    /// The text names a file holding several like pieces without saying which.
    #[error(
        "ambiguous move '{text}': it fits the pieces on {}; name one by its place (前/中/后, +/-)",
        join(.pieces, "and")
    )]
    AmbiguousPiece { text: String, pieces: Vec<Square> },
    #[error("illegal move '{text}'")]
    Illegal { text: String },
    #[error("move {0} is not legal in this position")]
    NotLegal(Move),
    #[error("move {mv} cannot be written unambiguously in {notation} notation")]
    Inexpressible { mv: Move, notation: Notation },
}

/// `a, b or c` (with `conjunction` = "or").
fn join<T: fmt::Display>(items: &[T], conjunction: &str) -> String {
    let mut out = String::new();
    for (i, m) in items.iter().enumerate() {
        if i > 0 {
            if i + 1 == items.len() {
                out.push(' ');
                out.push_str(conjunction);
                out.push(' ');
            } else {
                out.push_str(", ");
            }
        }
        out.push_str(&m.to_string());
    }
    out
}

impl NotationError {
    fn malformed(text: &str, reason: impl Into<String>) -> NotationError {
        NotationError::Malformed {
            text: text.to_string(),
            reason: reason.into(),
        }
    }

    /// The same error quoting `text` (the input as given, before [`fold_width`]).
    fn quoting(self, text: &str) -> NotationError {
        let text = text.to_string();
        match self {
            NotationError::Malformed { reason, .. } => NotationError::Malformed { text, reason },
            NotationError::NoSuchPiece { reason, .. } => {
                NotationError::NoSuchPiece { text, reason }
            }
            NotationError::Ambiguous { candidates, .. } => {
                NotationError::Ambiguous { text, candidates }
            }
            NotationError::AmbiguousPiece { pieces, .. } => {
                NotationError::AmbiguousPiece { text, pieces }
            }
            NotationError::Illegal { .. } => NotationError::Illegal { text },
            other => other,
        }
    }
}

/// `text` with full-width ASCII forms (U+FF01..U+FF5E: `Ｃ２＝５`, `８`, `．`) and the
/// ideographic space U+3000 replaced by their ASCII counterparts; other characters
/// are kept. Borrowed when there is nothing to replace.
pub fn fold_width(text: &str) -> Cow<'_, str> {
    let wide = |c: char| c == '\u{3000}' || ('\u{FF01}'..='\u{FF5E}').contains(&c);
    if !text.chars().any(wide) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\u{3000}' => ' ',
                c if wide(c) => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
                c => c,
            })
            .collect(),
    )
}

/// Reads a move in any accepted notation, after [`fold_width`]: coordinates when the
/// text looks like `h2e2` / `H2-E2`, WXF when it is otherwise ASCII, 一字三码 when it
/// has that shape (a piece and three digits, `马325`, or 进/退 and two, `马进25`),
/// else Chinese (complete or abbreviated).
pub fn parse_move(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let folded = fold_width(text);
    let t = folded.trim();
    let notation = if looks_like_coords(t) {
        Notation::Coords
    } else if t.is_ascii() {
        Notation::Wxf
    } else if yizisanma::parse(t).is_ok() {
        Notation::Yizisanma
    } else {
        Notation::Chinese
    };
    parse_as(pos, text, notation)
}

/// Reads a move written in `notation` (after [`fold_width`]); the move must be legal
/// in `pos`. Errors quote `text` as given.
pub fn parse_as(pos: &Position, text: &str, notation: Notation) -> Result<Move, NotationError> {
    let folded = fold_width(text);
    let t = folded.as_ref();
    let read = match notation {
        Notation::Coords => parse_coords(pos, t),
        Notation::Wxf => wxf::parse(t).and_then(|spec| resolve(pos, &spec, t)),
        Notation::Chinese => chinese::parse(t).and_then(|spec| resolve(pos, &spec, t)),
        Notation::Yizisanma => yizisanma::parse(t).and_then(|code| code.resolve(pos, t)),
    };
    read.map_err(|e| match folded {
        Cow::Borrowed(_) => e,
        Cow::Owned(_) => e.quoting(text),
    })
}

/// Writes the legal move `mv` in `notation`. The text parses back to `mv`.
pub fn format_move(pos: &Position, mv: Move, notation: Notation) -> Result<String, NotationError> {
    if !pos.is_legal(mv) {
        return Err(NotationError::NotLegal(mv));
    }
    match notation {
        Notation::Coords => return Ok(mv.to_string()),
        Notation::Yizisanma => return yizisanma::format(pos, mv),
        Notation::Wxf | Notation::Chinese => {}
    }
    let d = Designation::of(pos, mv).ok_or(NotationError::NotLegal(mv))?;
    let render = |d: &Designation, file_form: bool| match notation {
        Notation::Chinese => chinese::render(d, file_form),
        _ => wxf::render(d, file_form),
    };
    // Advisors and elephants keep the file form when it names one legal move (the
    // usual practice: of two on a file only one can go each way).
    let mut texts = Vec::with_capacity(2);
    if d.on_file == 1 || d.piece.kind() == Kind::Advisor || d.piece.kind() == Kind::Elephant {
        texts.push(render(&d, true));
    }
    if d.on_file > 1 {
        texts.push(render(&d, false));
    }
    texts
        .into_iter()
        .flatten()
        .find(|t| parse_as(pos, t, notation) == Ok(mv))
        .ok_or(NotationError::Inexpressible { mv, notation })
}

/// Whether `t` has the shape of a coordinate move (`h2e2`, `H2-E2`).
fn looks_like_coords(t: &str) -> bool {
    let b = t.as_bytes();
    let sq = |f: u8, r: u8| (b'a'..=b'i').contains(&f.to_ascii_lowercase()) && r.is_ascii_digit();
    match b {
        [f1, r1, f2, r2] => sq(*f1, *r1) && sq(*f2, *r2),
        [f1, r1, b'-', f2, r2] => sq(*f1, *r1) && sq(*f2, *r2),
        _ => false,
    }
}

fn parse_coords(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let t = text.trim();
    if !looks_like_coords(t) {
        return Err(NotationError::malformed(
            text,
            "expected coordinates such as h2e2 or H2-E2",
        ));
    }
    let compact: String = t
        .chars()
        .filter(|&c| c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let mv = Move::parse_coords(&compact)
        .ok_or_else(|| NotationError::malformed(text, "origin and target are the same point"))?;
    match pos.piece_at(mv.from()) {
        Some(p) if p.color() == pos.side_to_move() => {}
        _ => {
            return Err(NotationError::NoSuchPiece {
                text: text.to_string(),
                reason: format!(
                    "{} has no piece on {}",
                    pos.side_to_move().name(),
                    mv.from()
                ),
            });
        }
    }
    if pos.is_legal(mv) {
        Ok(mv)
    } else {
        Err(NotationError::Illegal {
            text: text.to_string(),
        })
    }
}

/// Direction of a move as its mover sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dir {
    /// 进, `+`.
    Forward,
    /// 退, `-`.
    Backward,
    /// 平, `.`.
    Sideways,
}

/// Which of the mover's like pieces a text names. Pieces of one kind on one file
/// are counted front to back from the mover's side ("front" = nearer the enemy).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sel {
    /// Every piece on the named file (Chinese `车二`): must be a single piece,
    /// except that advisors and elephants may share the file when only one of them
    /// has the move.
    File,
    /// WXF `P3`: the only piece on the file, or the middle one of three or five.
    FileOrMiddle,
    /// The `n`-th (0 = front) of two or more pieces on a file (`前` = 0, `二` = 1 …).
    Nth(u8),
    /// The rearmost of two or more on a file (`后`).
    Rear,
    /// The middle one of an odd number, three or more, on a file (`中`).
    Middle,
    /// WXF `+`: the front one of two or three, the second of four or five.
    WxfPlus,
    /// WXF `-`: the rear one of two or three, the second-last of four or five.
    WxfMinus,
}

/// A parsed traditional move: which piece, which way, how far or where.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Spec {
    pub kind: Kind,
    /// The file named in the text, if any.
    pub file_number: Option<u8>,
    pub sel: Sel,
    /// `None`: not written (art. 7.5's abbreviated record without its marks); any
    /// direction that gives exactly one legal move is taken.
    pub dir: Option<Dir>,
    /// 1..=9: ranks travelled, or the target file number.
    pub num: u8,
}

/// Whether the piece moves diagonally, so that notation gives its target file after
/// 进/退 rather than a number of ranks.
fn is_diagonal(piece: Piece) -> bool {
    matches!(piece.kind(), Kind::Advisor | Kind::Elephant | Kind::Horse)
}

/// The mover's pieces of `kind`, file by file, each file's list front to back.
fn file_groups(pos: &Position, color: Color, kind: Kind) -> [Vec<Square>; File::COUNT] {
    let mut groups: [Vec<Square>; File::COUNT] = Default::default();
    for sq in pos.pieces(color, kind) {
        if let Some(g) = groups.get_mut(sq.file().index()) {
            g.push(sq);
        }
    }
    for g in &mut groups {
        g.sort_by_key(|s| std::cmp::Reverse(s.rank().relative_to(color)));
    }
    groups
}

/// Where `piece` on `from` lands when moved `dir` by `num` (ranks, or the target
/// file), if that is a point on the board its kind can step to; legality is not
/// checked.
fn target(from: Square, piece: Piece, dir: Dir, num: u8) -> Option<Square> {
    let color = piece.color();
    let fwd: i32 = match color {
        Color::Red => 1,
        Color::Black => -1,
    };
    let sign = match dir {
        Dir::Forward => fwd,
        Dir::Backward => -fwd,
        Dir::Sideways => 0,
    };
    if !is_diagonal(piece) {
        if dir == Dir::Sideways {
            let f = File::from_number(num, color)?;
            return (f != from.file()).then(|| Square::new(f, from.rank()));
        }
        return from.offset(0, sign * i32::from(num));
    }
    if dir == Dir::Sideways {
        return None;
    }
    let f = File::from_number(num, color)?;
    let df = f.index() as i32 - from.file().index() as i32;
    let dr = match (piece.kind(), df.abs()) {
        (Kind::Advisor, 1) => 1,
        (Kind::Elephant, d) if piece.is_converted() && d > 0 => d,
        (Kind::Elephant, 2) => 2,
        (Kind::Horse, 1) => 2,
        (Kind::Horse, 2) => 1,
        _ => return None,
    };
    from.offset(df, sign * dr)
}

/// Finds the one legal move `spec` describes.
fn resolve(pos: &Position, spec: &Spec, text: &str) -> Result<Move, NotationError> {
    let us = pos.side_to_move();
    let file = match spec.file_number {
        Some(n) => Some(File::from_number(n, us).ok_or_else(|| {
            NotationError::malformed(text, format!("file {n} is not between 1 and 9"))
        })?),
        None => None,
    };
    let groups = file_groups(pos, us, spec.kind);
    let mut pieces = Vec::new();
    for (g, f) in groups.iter().zip(File::all()) {
        if file.is_some_and(|want| want != f) {
            continue;
        }
        let n = g.len();
        match spec.sel {
            Sel::File => pieces.extend(g.iter().copied()),
            Sel::FileOrMiddle if n % 2 == 1 => pieces.extend(g.get(n / 2)),
            Sel::FileOrMiddle => pieces.extend(g.iter().copied()),
            _ if n < 2 => {}
            Sel::Nth(i) => pieces.extend(g.get(usize::from(i))),
            Sel::Rear => pieces.extend(g.last()),
            Sel::Middle if n % 2 == 1 => pieces.extend(g.get(n / 2)),
            Sel::Middle => {}
            Sel::WxfPlus => pieces.extend(g.get(usize::from(n >= 4))),
            Sel::WxfMinus => pieces.extend(g.get(n - 1 - usize::from(n >= 4))),
        }
    }
    if pieces.is_empty() {
        let place = match (spec.sel, file) {
            (Sel::File | Sel::FileOrMiddle, Some(f)) => {
                format!("on file {}", f.number_for(us))
            }
            _ => "in that place among like pieces on one file".to_string(),
        };
        return Err(NotationError::NoSuchPiece {
            text: text.to_string(),
            reason: format!("{} has no {} {place}", us.name(), spec.kind.name()),
        });
    }
    let dirs = match spec.dir {
        Some(dir) => vec![dir],
        None => vec![Dir::Forward, Dir::Backward, Dir::Sideways],
    };
    let implied = pieces.iter().flat_map(|&from| {
        let piece = pos.piece_at(from);
        dirs.iter().filter_map(move |&dir| {
            target(from, piece?, dir, spec.num).map(|to| Move::new(from, to))
        })
    });
    let legal: Vec<Move> = implied.filter(|&m| pos.is_legal(m)).collect();
    // Like pieces the text does not tell apart are told apart by legality: input
    // may name a shared file when only one of its pieces has the move, as
    // Fairy-Stockfish writes WXF (`H7+6` for one of two horses on file 7) and as
    // records write advisors and elephants; output names such a piece by its place.
    let several_pieces = legal
        .iter()
        .any(|m| legal.first().is_some_and(|f| f.from() != m.from()));
    let lenient = matches!(spec.kind, Kind::Advisor | Kind::Elephant);
    match legal.as_slice() {
        [m] => Ok(*m),
        [] => Err(NotationError::Illegal {
            text: text.to_string(),
        }),
        _ if several_pieces && !lenient => Err(NotationError::AmbiguousPiece {
            text: text.to_string(),
            pieces,
        }),
        _ => Err(NotationError::Ambiguous {
            text: text.to_string(),
            candidates: legal,
        }),
    }
}

/// Everything a notation needs to write a move: the piece, its place among like
/// pieces on its file, direction and number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Designation {
    pub piece: Piece,
    /// The mover's file number.
    pub file_number: u8,
    /// Like pieces on the mover's file (1 = alone).
    pub on_file: usize,
    /// The mover's place among them, 0 = front.
    pub index: usize,
    /// How many files hold two or more of the mover's like pieces.
    pub tandem_files: usize,
    pub dir: Dir,
    pub num: u8,
}

impl Designation {
    fn of(pos: &Position, mv: Move) -> Option<Designation> {
        let (from, to) = (mv.from(), mv.to());
        let piece = pos.piece_at(from)?;
        let color = piece.color();
        let groups = file_groups(pos, color, piece.kind());
        let group = groups.get(from.file().index())?;
        let index = group.iter().position(|&s| s == from)?;
        let rel = |s: Square| i32::from(s.rank().relative_to(color));
        let dr = rel(to) - rel(from);
        let dir = match dr {
            0 => Dir::Sideways,
            d if d > 0 => Dir::Forward,
            _ => Dir::Backward,
        };
        let num = if is_diagonal(piece) || dir == Dir::Sideways {
            to.file().number_for(color)
        } else {
            u8::try_from(dr.unsigned_abs()).ok()?
        };
        Some(Designation {
            piece,
            file_number: from.file().number_for(color),
            on_file: group.len(),
            index,
            tandem_files: groups.iter().filter(|g| g.len() >= 2).count(),
            dir,
            num,
        })
    }
}

#[cfg(test)]
mod tests;
