//! Opening books from game records (`xq-coordinator book make`, and `asset add`
//! of a `.pgn` file): every game of a PGN collection cut after N plies, one
//! opening per distinct position, in the opening-line format
//! ([`xq_proto::openings`]).
//!
//! - A book line is the FEN of the position after the cut, with the counters the
//!   game reached there (plies since a capture, move number). Games from a set-up
//!   position (`[FEN]`) are cut N plies after it.
//! - Positions are keyed by the board and the side to move (the FEN without its
//!   counters), so two games that reach one position by different move orders
//!   give one line, the first game's; the later one counts as a duplicate.
//! - A game gives no line when it does not read (a malformed or illegal move at
//!   ply k, a bad `[FEN]`), when it has fewer than N plies, or when the arbiter
//!   ends it within N plies (mate, stalemate, a repetition verdict, the move
//!   limit), since no game can start from such a position.
//!
//! Games are read with [`xq_games::pgn::read`], in every notation the engine
//! reads; moves and the arbiter follow the rule set given.

use std::collections::HashMap;
use std::fmt;

use thiserror::Error;
use xq_engine::rules::{Game, GameError, Outcome, RuleSet};
use xq_engine::{Move, Position};
use xq_games::pgn::read::{ReadError, ReadOptions, read_games};

/// Plies a book's openings are cut after when a command line does not say:
/// eight moves each, the depth of the usual 8-move books.
pub const DEFAULT_BOOK_PLIES: u32 = 16;

/// Why a game gave no opening.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Skip {
    #[error("{0}")]
    Unreadable(ReadError),
    #[error("it has {plies} {}, fewer than {wanted}", if *.plies == 1 { "ply" } else { "plies" })]
    Short { plies: usize, wanted: usize },
    #[error("the arbiter ends it at ply {}: {} ({})", .0.ply, .0.reason, .0.result)]
    Ended(Outcome),
    /// A move the arbiter refuses. The reader checks every move against the same
    /// rules, so this would mean the two disagree.
    #[error("the arbiter refuses it: {0}")]
    Refused(GameError),
}

/// What happened to one game that gave no new line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// The game (its number in the file, from 1) was skipped.
    Skipped { game: usize, why: Skip },
    /// The game reached the position of an earlier game's line.
    Duplicate { game: usize, of: usize },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Skipped { game, why } => write!(f, "game {game}: skipped: {why}"),
            Note::Duplicate { game, of } => {
                write!(f, "game {game}: duplicate: same position as game {of}")
            }
        }
    }
}

/// A book made from a collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    /// Plies each opening was cut after.
    pub plies: usize,
    /// The games in the collection.
    pub games: usize,
    /// One FEN per distinct position, in the order of the games that gave them.
    pub lines: Vec<String>,
    /// Skipped and duplicate games, in the order of the file.
    pub notes: Vec<Note>,
}

impl Book {
    /// The book file: one line per opening, each ending with a newline.
    pub fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Games skipped (unreadable, short or ended).
    pub fn skipped(&self) -> usize {
        self.notes
            .iter()
            .filter(|n| matches!(n, Note::Skipped { .. }))
            .count()
    }

    /// Games whose position an earlier game's line holds.
    pub fn duplicates(&self) -> usize {
        self.notes.len() - self.skipped()
    }

    /// `games read 5, openings written 3, duplicates 1, skipped 1 (16 plies)`.
    pub fn summary(&self) -> String {
        format!(
            "games read {}, openings written {}, duplicates {}, skipped {} ({} plies)",
            self.games,
            self.lines.len(),
            self.duplicates(),
            self.skipped(),
            self.plies
        )
    }
}

/// The book of the games in `pgn`, each cut after `plies` plies (at least 1) and
/// played under `rules`.
pub fn make(pgn: &str, plies: usize, rules: &RuleSet) -> Book {
    let options = ReadOptions {
        conversion: rules.conversion,
        max_plies: plies,
    };
    let games = read_games(pgn, options);
    let mut book = Book {
        plies,
        games: games.len(),
        lines: Vec::new(),
        notes: Vec::new(),
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    for g in games {
        let game = g.number;
        let fen = match g
            .record
            .map_err(Skip::Unreadable)
            .and_then(|r| cut(r.start, &r.moves, plies, *rules))
        {
            Ok(fen) => fen,
            Err(why) => {
                book.notes.push(Note::Skipped { game, why });
                continue;
            }
        };
        match seen.get(position_key(&fen)) {
            Some(&of) => book.notes.push(Note::Duplicate { game, of }),
            None => {
                seen.insert(position_key(&fen).to_owned(), game);
                book.lines.push(fen);
            }
        }
    }
    book
}

/// The FEN after `plies` of `moves` from `start`, if the game has them and the
/// arbiter lets it go on past them.
fn cut(start: Position, moves: &[Move], plies: usize, rules: RuleSet) -> Result<String, Skip> {
    let mut game = Game::new(start, rules);
    if let Some(outcome) = game.outcome() {
        return Err(Skip::Ended(outcome));
    }
    for &mv in moves.iter().take(plies) {
        if let Some(outcome) = game.play(mv).map_err(Skip::Refused)? {
            return Err(Skip::Ended(outcome));
        }
    }
    if moves.len() < plies {
        return Err(Skip::Short {
            plies: moves.len(),
            wanted: plies,
        });
    }
    Ok(game.position().to_fen())
}

/// The board and side-to-move fields of a FEN: what makes two positions the same
/// opening.
fn position_key(fen: &str) -> &str {
    match fen.match_indices(' ').nth(1) {
        Some((at, _)) => &fen[..at],
        None => fen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STANDARD: RuleSet = RuleSet::STANDARD;

    fn fen_after(moves: &str) -> String {
        let mut pos = Position::startpos();
        for m in moves.split_whitespace() {
            pos.make(Move::parse_coords(m).unwrap());
        }
        pos.to_fen()
    }

    #[test]
    fn games_cut_deduplicated_and_reported() {
        let pgn = "\
[Event \"1\"]
1. 炮二平五 马８进７ 2. 马二进三 车９平８ 3. 兵三进一 炮８平９ 4. 马八进七 卒３进１ 1-0
[Event \"2: transposes into 1\"]
1. 炮二平五 马８进７ 2. 马八进七 车９平８ 3. 马二进三 炮８平９ 4. 兵三进一 卒３进１ 0-1
[Event \"3: illegal at ply 3\"]
1. h2e2 h9g7 2. i0i3 *
[Event \"4: short\"]
1. C2.5 H8+7 *
[Event \"5: repetition at ply 8\"]
1. 马二进三 马8进7 2. 马三退二 马7退8 3. 马二进三 马8进7 4. 马三退二 马7退8 *
[Event \"6: mate at ply 1\"]
[FEN \"4k4/R8/9/9/9/9/9/9/9/1R1K5 w - - 0 1\"]
1. R8+9 *
[Event \"7: another opening\"]
1. 相三进五 卒３进１ 2. 马二进三 马２进３ 3. 车一平二 车１平２ 4. 马八进九 马８进７ *
";
        let book = make(pgn, 8, &STANDARD);
        assert_eq!(book.games, 7);
        assert_eq!(
            book.lines,
            vec![
                fen_after("h2e2 h9g7 h0g2 i9h9 g3g4 h7i7 b0c2 c6c5"),
                fen_after("g0e2 c6c5 h0g2 b9c7 i0h0 a9b9 b0a2 h9g7"),
            ]
        );
        let notes: Vec<String> = book.notes.iter().map(Note::to_string).collect();
        assert_eq!(
            notes,
            vec![
                "game 2: duplicate: same position as game 1",
                "game 3: skipped: ply 3: illegal move 'i0i3'",
                "game 4: skipped: it has 2 plies, fewer than 8",
                "game 5: skipped: the arbiter ends it at ply 8: repetition (draw)",
                "game 6: skipped: the arbiter ends it at ply 1: checkmate (red)",
            ]
        );
        assert_eq!(
            book.summary(),
            "games read 7, openings written 2, duplicates 1, skipped 4 (8 plies)"
        );
        let lines = xq_proto::openings::parse_lines(&book.text()).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| l.moves.is_empty()));
    }

    #[test]
    fn the_first_game_of_a_position_keeps_its_counters() {
        // The same position after a capture at different plies: the clocks differ,
        // the position does not.
        let pgn = "1. h2h9 i9h9 2. h0g2 g6g5 *\n1. h0g2 g6g5 2. h2h9 i9h9 *\n";
        let book = make(pgn, 4, &STANDARD);
        assert_eq!(book.lines, vec![fen_after("h2h9 i9h9 h0g2 g6g5")]);
        assert_eq!(book.duplicates(), 1);
        assert_ne!(
            book.lines[0],
            fen_after("h0g2 g6g5 h2h9 i9h9"),
            "the counters differ"
        );
        assert_eq!(
            position_key(&book.lines[0]),
            position_key(&fen_after("h0g2 g6g5 h2h9 i9h9"))
        );
    }

    #[test]
    fn an_empty_collection_makes_an_empty_book() {
        let book = make("", DEFAULT_BOOK_PLIES as usize, &STANDARD);
        assert_eq!(
            (book.games, book.lines.len(), book.text()),
            (0, 0, String::new())
        );
    }
}
