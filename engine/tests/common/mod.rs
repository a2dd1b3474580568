//! What the tests over frozen repetition cycles share: reading a data file's
//! `|`-separated lines, and the verdict a rule set gives a cycle.

use xq_engine::rules::GameResult;
use xq_engine::{Color, Game, Move, Position, RuleSet};

/// The data lines of a frozen cycles file (not comments, not blank): each line's
/// number (from 1) and its trimmed fields, of which there must be `fields`.
pub fn records(text: &'static str, fields: usize) -> Vec<(usize, Vec<&'static str>)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(f.len(), fields, "line {}: {fields} fields", i + 1);
            (i + 1, f)
        })
        .collect()
}

/// The moves of a record's moves field.
pub fn moves(field: &str) -> Vec<Move> {
    field
        .split_whitespace()
        .map(|m| Move::parse_coords(m).unwrap_or_else(|| panic!("bad move {m}")))
        .collect()
}

/// `win:<reason>`, `loss:<reason>` or `draw:<reason>` for the side to move after
/// `moves` played from `fen` under `rules`; `none` when the game goes on, `early
/// at ply N` when it ended before the last move.
pub fn verdict(fen: &str, moves: &[Move], rules: &str) -> String {
    let rules: RuleSet = rules.parse().expect("preset");
    let mut game = Game::new(Position::from_fen(fen).expect("fen"), rules);
    for &m in moves {
        if let Some(o) = game.outcome() {
            return format!("early at ply {}", o.ply);
        }
        game.play(m).unwrap_or_else(|e| panic!("{fen}: {e}"));
    }
    let Some(o) = game.outcome() else {
        return "none".to_string();
    };
    let stm: Color = game.position().side_to_move();
    let word = match o.result {
        GameResult::Draw => "draw",
        r if r.winner() == Some(stm) => "win",
        _ => "loss",
    };
    format!("{word}:{}", o.reason)
}
