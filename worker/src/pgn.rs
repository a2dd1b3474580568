//! PGN output for Xiangqi games.
//!
//! Tags: Event, Site, Date, Round, Red, Black, Result, FEN (only when the game did
//! not start from the standard position), Variant, Opening, Termination, then
//! PlyCount. Results are written `1-0` (Red won), `0-1` (Black won), `1/2-1/2`.
//! Moves are numbered per full move and written in coordinates (`h2e2`) unless
//! WXF or Chinese notation is asked for.

use std::fmt::Write as _;

use xq_engine::notation::{self, Notation};
use xq_engine::{Color, Move, Position, START_FEN};

/// What PGN needs to know about one finished game.
#[derive(Clone, Debug)]
pub struct PgnGame<'a> {
    pub event: &'a str,
    pub site: &'a str,
    /// `YYYY.MM.DD`.
    pub date: &'a str,
    pub round: u64,
    pub red: &'a str,
    pub black: &'a str,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: &'a str,
    /// The start position's FEN.
    pub fen: &'a str,
    /// The rule set's name, e.g. `standard+conversion`.
    pub variant: &'a str,
    pub opening: &'a str,
    /// Why the game ended, e.g. `checkmate`.
    pub termination: &'a str,
    /// Every move from `fen`, opening moves included; all legal.
    pub moves: &'a [Move],
    /// Whether captures convert pieces (needed to replay the moves).
    pub conversion: bool,
}

/// The PGN result token for a game won by `winner` (`None`: a draw).
pub fn result_token(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::Red) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    }
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The game as PGN text, ending with a blank line.
pub fn write(game: &PgnGame<'_>, notation: Notation) -> String {
    let mut out = String::new();
    let mut tag = |name: &str, value: &str| {
        let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
    };
    tag("Event", game.event);
    tag("Site", game.site);
    tag("Date", game.date);
    tag("Round", &game.round.to_string());
    tag("Red", game.red);
    tag("Black", game.black);
    tag("Result", game.result);
    let start = Position::from_fen(game.fen).unwrap_or_else(|_| Position::startpos());
    if start.to_fen() != START_FEN {
        tag("FEN", &start.to_fen());
    }
    tag("Variant", game.variant);
    tag("Opening", game.opening);
    tag("Termination", game.termination);
    tag("PlyCount", &game.moves.len().to_string());
    out.push('\n');

    let mut pos = start;
    pos.set_conversion(game.conversion);
    let mut line = String::new();
    for (i, &mv) in game.moves.iter().enumerate() {
        let black = pos.side_to_move() == Color::Black;
        let mut token = String::new();
        if !black {
            let _ = write!(token, "{}. ", pos.fullmove_number());
        } else if i == 0 {
            let _ = write!(token, "{}... ", pos.fullmove_number());
        }
        let text = notation::format_move(&pos, mv, notation).unwrap_or_else(|_| mv.to_string());
        token.push_str(&text);
        if !line.is_empty() && line.chars().count() + token.chars().count() + 1 > 79 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
        pos.make(mv);
    }
    if !line.is_empty() {
        line.push(' ');
    }
    line.push_str(game.result);
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game<'a>(moves: &'a [Move], fen: &'a str) -> PgnGame<'a> {
        PgnGame {
            event: "test \"match\"",
            site: "here",
            date: "2026.11.29",
            round: 3,
            red: "dev",
            black: "base",
            result: "1/2-1/2",
            fen,
            variant: "standard",
            opening: "当头炮",
            termination: "repetition draw",
            moves,
            conversion: false,
        }
    }

    #[test]
    fn writes_tags_and_numbered_moves() {
        let moves: Vec<Move> = ["h2e2", "h9g7", "h0g2"]
            .iter()
            .map(|m| Move::parse_coords(m).unwrap())
            .collect();
        let text = write(&game(&moves, START_FEN), Notation::Coords);
        assert!(
            text.starts_with("[Event \"test \\\"match\\\"\"]\n"),
            "{text}"
        );
        assert!(!text.contains("[FEN"), "{text}");
        assert!(text.contains("[Opening \"当头炮\"]\n"));
        assert!(text.contains("\n1. h2e2 h9g7 2. h0g2 1/2-1/2\n"), "{text}");
        let chinese = write(&game(&moves, START_FEN), Notation::Chinese);
        assert!(
            chinese.contains("1. 炮二平五 马8进7 2. 马二进三 1/2-1/2"),
            "{chinese}"
        );
        let wxf = write(&game(&moves, START_FEN), Notation::Wxf);
        assert!(wxf.contains("1. C2.5 H8+7 2. H2+3"), "{wxf}");
    }

    #[test]
    fn result_tokens() {
        assert_eq!(result_token(Some(Color::Red)), "1-0");
        assert_eq!(result_token(Some(Color::Black)), "0-1");
        assert_eq!(result_token(None), "1/2-1/2");
    }

    #[test]
    fn a_black_start_gets_a_fen_tag_and_ellipsis() {
        let fen = "4k4/9/9/9/9/9/9/9/4A4/3AK4 b - - 0 7";
        let moves = [Move::parse_coords("e9d9").unwrap()];
        let text = write(&game(&moves, fen), Notation::Coords);
        assert!(text.contains(&format!("[FEN \"{fen}\"]")), "{text}");
        assert!(text.contains("7... e9d9 1/2-1/2"), "{text}");
    }
}
