//! Reading PGN game collections: each game's tags, start position and moves, in
//! every notation [`notation::parse_move`] reads (ICCS, WXF also in full-width
//! letters, Chinese also with full-width digits and in art. 7.5's abbreviated
//! record, 一字三码).
//!
//! What the reader accepts, as Xiangqi collections write it:
//! - tag pairs `[Name "value"]`; `[FEN "…"]` (any case of the name) is the start
//!   position, else the standard one;
//! - movetext words, after folding full-width forms ([`notation::fold_width`]):
//!   move numbers (`1.`, `1...`, `12…`, bare `1`, glued to the move as in
//!   `1.炮二平五`), NAGs (`$1`), annotation marks after a move (`!`, `?`, `+`,
//!   `#`), comments and variations (skipped by the lexer);
//! - the abbreviated record written with its space, `炮2 5`: a word that is not
//!   a move on its own, followed by a bare number, is read with it;
//! - a game ends at its result (`1-0`, `0-1`, `1/2-1/2`, `*`), or where the next
//!   game's tags begin, or at the end of the text.
//!
//! Games are numbered from 1 in the order of the file; a game that cannot be
//! read is returned as its error, and reading goes on with the next.

use thiserror::Error;
use xq_engine::notation::{self, NotationError};
use xq_engine::{FenError, Move, Position};

use super::lex::{LexError, Lexer, Token};

/// A word longer than this (in characters) is never a move.
const LONGEST_MOVE: usize = 16;

/// One game as the file records it.
#[derive(Clone, Debug)]
pub struct PgnRecord {
    /// The tag pairs, in the file's order.
    pub tags: Vec<(String, String)>,
    /// The position before the first move (`[FEN]`, else the standard start).
    pub start: Position,
    /// The moves read, all legal from `start`: the whole game, or its first
    /// [`ReadOptions::max_plies`].
    pub moves: Vec<Move>,
    /// The result token, if the game has one.
    pub result: Option<String>,
}

impl PgnRecord {
    /// The value of the tag `name` (any case), if present.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a game could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReadError {
    #[error(transparent)]
    Lex(#[from] LexError),
    #[error("[FEN \"{fen}\"]: {source}")]
    Fen {
        /// The tag's value, at most 100 characters of it.
        fen: String,
        #[source]
        source: FenError,
    },
    /// A move that does not read; `ply` counts from 1.
    #[error("ply {ply}: {source}")]
    Move {
        ply: usize,
        #[source]
        source: NotationError,
    },
    #[error("ply {ply}: '{prefix}…' is too long to be a move")]
    TooLong { ply: usize, prefix: String },
}

/// How to read the games.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Whether moves follow the capture-conversion rule.
    pub conversion: bool,
    /// Read at most this many plies of each game; the rest of its movetext is
    /// skipped unread.
    pub max_plies: usize,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            conversion: false,
            max_plies: usize::MAX,
        }
    }
}

/// One game of the file: its number (from 1) and what was read.
#[derive(Clone, Debug)]
pub struct GameRead {
    pub number: usize,
    pub record: Result<PgnRecord, ReadError>,
}

/// A game's raw parts while its tokens are gathered.
#[derive(Default)]
struct Gathered<'a> {
    tags: Vec<(String, String)>,
    words: Vec<&'a str>,
    result: Option<String>,
    error: Option<LexError>,
}

impl Gathered<'_> {
    fn is_empty(&self) -> bool {
        self.tags.is_empty()
            && self.words.is_empty()
            && self.result.is_none()
            && self.error.is_none()
    }
}

/// Every game in `text`.
pub fn read_games(text: &str, options: ReadOptions) -> Vec<GameRead> {
    let mut games = Vec::new();
    let mut current = Gathered::default();
    let mut finish = |g: &mut Gathered<'_>| {
        if !g.is_empty() {
            let number = games.len() + 1;
            let record = build(std::mem::take(g), options);
            games.push(GameRead { number, record });
        }
    };
    for token in Lexer::new(text) {
        match token {
            Ok(Token::Tag { name, value }) => {
                if !current.words.is_empty() {
                    finish(&mut current);
                }
                current.tags.push((name.to_owned(), value));
            }
            Ok(Token::Word(word)) => {
                let folded = notation::fold_width(word);
                if is_result(&folded) {
                    current.result = Some(folded.into_owned());
                    finish(&mut current);
                } else {
                    current.words.push(word);
                }
            }
            Err(e) => {
                current.error.get_or_insert(e);
            }
        }
    }
    finish(&mut current);
    games
}

fn is_result(word: &str) -> bool {
    matches!(word, "1-0" | "0-1" | "1/2-1/2" | "*")
}

/// The record of a gathered game.
fn build(g: Gathered<'_>, options: ReadOptions) -> Result<PgnRecord, ReadError> {
    if let Some(e) = g.error {
        return Err(e.into());
    }
    let fen = g
        .tags
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("FEN"))
        .map(|(_, v)| v.trim());
    let mut start = match fen {
        Some(fen) => Position::from_fen(fen).map_err(|source| ReadError::Fen {
            fen: fen.chars().take(100).collect(),
            source,
        })?,
        None => Position::startpos(),
    };
    start.set_conversion(options.conversion);
    let moves = read_moves(&start, &g.words, options.max_plies)?;
    Ok(PgnRecord {
        tags: g.tags,
        start,
        moves,
        result: g.result,
    })
}

/// What a word (with the one after it) is.
enum Word {
    /// A move number, NAG or other word that names no move.
    Skip,
    Move(Move),
    /// A move written over this word and the next (`炮2 5`).
    MoveOfTwo(Move),
}

/// The moves of `words` from `start`, at most `max`.
fn read_moves(start: &Position, words: &[&str], max: usize) -> Result<Vec<Move>, ReadError> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let mut i = 0;
    while let Some(&word) = words.get(i) {
        if moves.len() == max {
            break;
        }
        i += 1;
        let mv = match read_word(&pos, word, words.get(i).copied(), moves.len() + 1)? {
            Word::Skip => continue,
            Word::Move(mv) => mv,
            Word::MoveOfTwo(mv) => {
                i += 1;
                mv
            }
        };
        pos.make(mv);
        moves.push(mv);
    }
    Ok(moves)
}

/// Reads one word at ply `ply` (from 1); `next` is the word after it.
fn read_word(pos: &Position, raw: &str, next: Option<&str>, ply: usize) -> Result<Word, ReadError> {
    let folded = notation::fold_width(raw);
    let text = folded.trim_end_matches(['!', '?', '+', '#']);
    if text.is_empty() || text.starts_with('$') || text.chars().all(|c| c == '.' || c == '…') {
        return Ok(Word::Skip);
    }
    if text.chars().count() > LONGEST_MOVE {
        return Err(ReadError::TooLong {
            ply,
            prefix: raw.chars().take(LONGEST_MOVE).collect(),
        });
    }
    let whole = match notation::parse_move(pos, text) {
        Ok(mv) => return Ok(Word::Move(mv)),
        Err(e) => e,
    };
    // A move number (`12`, `12.`, `12...`), alone or glued to the move.
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let after = &text[digits..];
    let body = after.trim_start_matches(['.', '…']);
    let numbered = digits > 0 && (after.is_empty() || body.len() < after.len());
    if numbered && body.is_empty() {
        return Ok(Word::Skip);
    }
    let (body, error) = if numbered {
        match notation::parse_move(pos, body) {
            Ok(mv) => return Ok(Word::Move(mv)),
            // `33.4` (WXF soldiers on two files) is no move number: keep the
            // whole word's error when it says more than "malformed".
            Err(e) => {
                let malformed = |e: &NotationError| matches!(e, NotationError::Malformed { .. });
                (
                    body,
                    if malformed(&e) && !malformed(&whole) {
                        whole
                    } else {
                        e
                    },
                )
            }
        }
    } else {
        (text, whole)
    };
    if let Some(next) = next.filter(|n| is_bare_number(n)) {
        let joined = format!("{body} {}", notation::fold_width(next));
        if let Ok(mv) = notation::parse_move(pos, &joined) {
            return Ok(Word::MoveOfTwo(mv));
        }
    }
    Err(ReadError::Move { ply, source: error })
}

/// A word that can be the number of an abbreviated move: one digit or Chinese
/// numeral, with the marks of its direction.
fn is_bare_number(word: &str) -> bool {
    let folded = notation::fold_width(word);
    let mut chars = folded.chars();
    let first = chars.next();
    first.is_some_and(|c| c.is_ascii_digit() || "一二三四五六七八九".contains(c))
        && chars.all(|c| matches!(c, '\u{332}' | '\u{305}' | '\u{304}'))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn coords(moves: &[Move]) -> String {
        moves
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn one(text: &str) -> PgnRecord {
        let games = read_games(text, ReadOptions::default());
        assert_eq!(games.len(), 1, "{games:?}");
        games.into_iter().next().map(|g| g.record.unwrap()).unwrap()
    }

    const OPENING: &str = "h2e2 h9g7 h0g2 i9h9 i0h0 h7h3";

    #[test]
    fn every_notation_reads_the_same_moves() {
        for movetext in [
            "1. H2-E2 H9-G7 2. H0-G2 I9-H9 3. I0-H0 H7-H3 *",
            "1. h2e2 h9g7 2. h0g2 i9h9 3. i0h0 h7h3 *",
            "1. C2.5 H8+7 2. H2+3 R9.8 3. R1.2 C8+4 *",
            "１． Ｃ２＝５ Ｈ８＋７ ２． Ｈ２＋３ Ｒ９＝８ ３． Ｒ１＝２ Ｃ８＋４ *",
            "1. 炮二平五 马８进７ 2. 马二进三 车９平８ 3. 车一平二 炮８进４ *",
            "1.炮二平五 馬8進7 2.馬二進三 車9平8 3.車一平二 砲8進4 *",
            "1. 炮253 马873 2. 马233 车981 3. 车121 炮887 *",
            // Art. 7.5's abbreviated record with bare round numbers; its 车1 2
            // fits both 车一平二 and 车一进二, so that move is written in full.
            "1 炮2 5 马8 7 2 马2 3 车9 8 3 车一平二 炮8 4 *",
            "1. 炮二平五 {当头炮} (1. 相三进五 象7进5) 马8进7 $1 2. 马二进三! 车9平8?! \
             3. 车一平二 炮8进4+ *",
        ] {
            let record = one(movetext);
            assert_eq!(coords(&record.moves), OPENING, "{movetext}");
            assert_eq!(record.result.as_deref(), Some("*"));
        }
    }

    #[test]
    fn tags_fen_and_game_boundaries() {
        let text = "[Game \"Chinese Chess\"]\n[Event \"一\"]\n\n1. h2e2 h9g7 1-0\n\n\
                    [Event \"二\"]\n[Fen \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C4C2/9/RNBAKABNR b - - 0 1\"]\n\
                    1... C8.5 2. H8+7\n\
                    [Event \"三\"]\n1. h2e2\n";
        let games = read_games(text, ReadOptions::default());
        assert_eq!(games.len(), 3);
        let first = games[0].record.as_ref().unwrap();
        assert_eq!((games[0].number, first.tag("event")), (1, Some("一")));
        assert_eq!(first.result.as_deref(), Some("1-0"));
        let second = games[1].record.as_ref().unwrap();
        assert_eq!(coords(&second.moves), "h7e7 b0c2");
        assert_eq!(second.result, None);
        assert_eq!(games[2].number, 3);
        assert_eq!(coords(&games[2].record.as_ref().unwrap().moves), "h2e2");
    }

    #[test]
    fn a_bad_game_is_reported_and_reading_goes_on() {
        let text = "[Event \"a\"]\n1. 炮二平五 马8进7 2. 车一进三 车9平8 *\n\
                    [Event \"b\"]\n[FEN \"9/9/9 w\"]\n1. h2e2 *\n\
                    [Event \"c\"]\n1. h2e2 {open\n\
                    [Event \"d\"]\n";
        let games = read_games(text, ReadOptions::default());
        assert_eq!(games.len(), 3, "{games:?}");
        let err = |i: usize| games[i].record.as_ref().unwrap_err().to_string();
        assert_eq!(err(0), "ply 3: illegal move '车一进三'");
        assert!(err(1).starts_with("[FEN \"9/9/9 w\"]: "), "{}", err(1));
        assert_eq!(err(2), "line 7: a comment '{' that is never closed");
    }

    #[test]
    fn errors_quote_the_move_not_its_number() {
        let games = read_games("1.炮二平九 *", ReadOptions::default());
        let err = games[0].record.as_ref().unwrap_err().to_string();
        assert_eq!(err, "ply 1: illegal move '炮二平九'");
        let games = read_games("1. 炮二平五 x123456789abcdefghij *", ReadOptions::default());
        let err = games[0].record.as_ref().unwrap_err().to_string();
        assert_eq!(err, "ply 2: 'x123456789abcdef…' is too long to be a move");
    }

    #[test]
    fn max_plies_stops_reading() {
        let options = ReadOptions {
            max_plies: 2,
            ..ReadOptions::default()
        };
        let record = read_games("1. h2e2 h9g7 2. junk *", options)
            .into_iter()
            .next()
            .unwrap()
            .record
            .unwrap();
        assert_eq!(coords(&record.moves), "h2e2 h9g7");
    }

    #[test]
    fn empty_text_has_no_games() {
        assert!(read_games("", ReadOptions::default()).is_empty());
        assert!(read_games(" \n{just a comment}\n", ReadOptions::default()).is_empty());
    }

    /// Pieces of PGN and of every notation, to drive the reader into its paths.
    const PIECES: &[&str] = &[
        "[Event \"x\"]\n",
        "[FEN \"4k4/9/9/9/9/9/9/9/9/3K5 w\"]\n",
        "[FEN \"",
        "\"]",
        "{",
        "}",
        "(",
        ")",
        ";",
        "\n",
        " ",
        "1.",
        "1...",
        "１．",
        "$1",
        "1-0",
        "*",
        "h2e2",
        "H2-E2",
        "h9g7",
        "C2.5",
        "Ｃ２＝５",
        "H8+7",
        "炮二平五",
        "马８进７",
        "炮253",
        "马873",
        "炮2",
        "5",
        "7",
        "\u{332}",
        "马进25",
        "!?",
        "\u{3000}",
        "%",
        "[",
        "]",
        "\\",
    ];

    proptest! {
        /// Any text reads without a panic, and every move read is legal from
        /// its game's start.
        #[test]
        fn any_text_reads_to_legal_moves(
            parts in prop::collection::vec(prop::sample::select(PIECES), 0..40),
            noise in "\\PC{0,20}",
        ) {
            let text = parts.concat() + &noise;
            for game in read_games(&text, ReadOptions::default()) {
                if let Ok(record) = game.record {
                    let mut pos = record.start.clone();
                    for mv in record.moves {
                        prop_assert!(pos.is_legal(mv), "{} in {:?}", mv, text);
                        pos.make(mv);
                    }
                }
            }
        }
    }
}
