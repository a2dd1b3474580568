//! Regression test over generated repetition cycles: `tests/data/chase_cycles.txt`
//! holds a fixed sample of the cycles that `tests/chase/differential.py` builds
//! from self-play positions, each with its verdict under the Chinese code
//! (preset `standard`), under the Asian code (preset `asian`) and from
//! Fairy-Stockfish. Every cycle is replayed here and must get the recorded
//! verdicts, and the count of cycles on which `asian` agrees with Fairy-Stockfish
//! must stay the one recorded in the file's header (no Python needed).

mod common;

use xq_engine::Move;

struct Line<'a> {
    number: usize,
    fen: &'a str,
    moves: Vec<Move>,
    chinese: &'a str,
    asian: &'a str,
    fairy_stockfish: &'a str,
}

fn lines() -> Vec<Line<'static>> {
    common::records(include_str!("data/chase_cycles.txt"), 5)
        .into_iter()
        .map(|(number, f)| Line {
            number,
            fen: f[0],
            moves: common::moves(f[1]),
            chinese: f[2],
            asian: f[3],
            fairy_stockfish: f[4],
        })
        .collect()
}

fn verdict(line: &Line, rules: &str) -> String {
    common::verdict(line.fen, &line.moves, rules)
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
