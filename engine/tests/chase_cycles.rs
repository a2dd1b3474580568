//! Regression test over generated repetition cycles: `tests/data/chase_cycles.txt`
//! holds a fixed sample of the cycles that `tests/chase/differential.py` builds
//! from self-play positions, each with its verdict under the Chinese code
//! (preset `standard`), under the Asian code (preset `asian`) and from
//! Fairy-Stockfish. Every cycle is replayed here and must get the recorded
//! verdicts, and the count of cycles on which `asian` agrees with Fairy-Stockfish
//! must stay the one recorded in the file's header (no Python needed).

use xq_engine::rules::GameResult;
use xq_engine::{Color, Game, Move, Position, RuleSet};

struct Line<'a> {
    number: usize,
    fen: &'a str,
    moves: Vec<&'a str>,
    chinese: &'a str,
    asian: &'a str,
    fairy_stockfish: &'a str,
}

fn lines() -> Vec<Line<'static>> {
    include_str!("data/chase_cycles.txt")
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(f.len(), 5, "line {}: five fields", i + 1);
            Line {
                number: i + 1,
                fen: f[0],
                moves: f[1].split_whitespace().collect(),
                chinese: f[2],
                asian: f[3],
                fairy_stockfish: f[4],
            }
        })
        .collect()
}

/// `win:<reason>`, `loss:<reason>` or `draw:<reason>` for the side to move
/// after the last move.
fn verdict(line: &Line, rules: &str) -> String {
    let rules: RuleSet = rules.parse().unwrap();
    let mut game = Game::new(Position::from_fen(line.fen).unwrap(), rules);
    for m in &line.moves {
        game.play(Move::parse_coords(m).unwrap())
            .unwrap_or_else(|e| panic!("line {}: {e}", line.number));
    }
    let o = game
        .outcome()
        .unwrap_or_else(|| panic!("line {}: no verdict", line.number));
    assert_eq!(o.ply, line.moves.len(), "line {}", line.number);
    let stm: Color = game.position().side_to_move();
    let word = match o.result {
        GameResult::Draw => "draw",
        r if r.winner() == Some(stm) => "win",
        _ => "loss",
    };
    format!("{word}:{}", o.reason)
}

#[test]
fn generated_cycles_keep_their_verdicts() {
    let lines = lines();
    assert!(lines.len() >= 200, "{} cycles", lines.len());
    let mut failures = Vec::new();
    let mut agree = 0;
    for line in &lines {
        let chinese = verdict(line, "standard");
        let asian = verdict(line, "asian");
        if chinese != line.chinese || asian != line.asian {
            failures.push(format!(
                "line {}: chinese {chinese} (recorded {}), asian {asian} (recorded {})",
                line.number, line.chinese, line.asian
            ));
        }
        agree += usize::from(asian.split(':').next() == Some(line.fairy_stockfish));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The sample's agreement with Fairy-Stockfish, as its header records it.
    let recorded = include_str!("data/chase_cycles.txt")
        .lines()
        .find_map(|l| l.strip_prefix("# agreement: "))
        .expect("an agreement line");
    assert_eq!(recorded, format!("{agree} of {}", lines.len()));
}
