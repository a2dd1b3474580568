//! The `pikafish` code against Pikafish's own repetition judgement:
//! `tests/data/pikafish_cycles.txt` holds 3,000 generated cycles with the verdict
//! that Pikafish's source gave each (engine/PIKAFISH_RULES.md §8) and the pieces
//! it saw each move newly chase. Every cycle is replayed under the preset
//! `pikafish`; the verdict must be Pikafish's, and so must every move's nature
//! (check, the pieces it chases anew, or idle).

mod common;

use xq_engine::rules::repetition::classify;
use xq_engine::rules::{MateMemo, RuleSet};
use xq_engine::{Move, Position};

struct Line<'a> {
    number: usize,
    fen: &'a str,
    moves: Vec<Move>,
    verdict: &'a str,
    natures: Vec<&'a str>,
}

fn lines() -> Vec<Line<'static>> {
    common::records(include_str!("data/pikafish_cycles.txt"), 6)
        .into_iter()
        .map(|(number, f)| Line {
            number,
            fen: f[0],
            moves: common::moves(f[1]),
            verdict: f[4],
            natures: f[5]
                .split_once("natures:")
                .unwrap_or_else(|| panic!("line {number}: no natures"))
                .1
                .split(',')
                .collect(),
        })
        .collect()
}

/// Pikafish's branch as this project's reason token (engine/PIKAFISH_RULES.md §3).
fn our_verdict(pikafish: &str) -> String {
    let (word, branch) = pikafish.split_once(':').expect("word:branch");
    let reason = match branch {
        "perpetual-check" => "perpetual-check",
        "mutual-check" | "mutual-chase" => "mutual-perpetual",
        "check-in-cycle" | "idle" => "repetition",
        "perpetual-chase" => "perpetual-chase",
        other => panic!("unknown Pikafish branch {other}"),
    };
    format!("{word}:{reason}")
}

fn pikafish() -> RuleSet {
    "pikafish".parse().expect("preset")
}

/// The verdict for the side to move after the last move.
fn verdict(line: &Line) -> String {
    common::verdict(line.fen, &line.moves, "pikafish")
}

/// Each move's nature as the data writes it: `check`, `chase:<points>` (sorted,
/// joined with `+`) or `idle`.
fn natures(line: &Line) -> Vec<String> {
    let rules = pikafish();
    let mut pos = Position::from_fen(line.fen).expect("fen");
    line.moves
        .iter()
        .map(|&m| {
            let n = classify(&mut pos, m, &rules, &mut MateMemo::default());
            pos.make(m);
            if n.check {
                "check".to_string()
            } else if n.chase.major.any() {
                let mut points: Vec<String> =
                    n.chase.major.into_iter().map(|s| s.to_string()).collect();
                points.sort();
                format!("chase:{}", points.join("+"))
            } else {
                "idle".to_string()
            }
        })
        .collect()
}

fn sorted_nature(n: &str) -> String {
    match n.strip_prefix("chase:") {
        Some(points) => {
            let mut p: Vec<&str> = points.split('+').collect();
            p.sort_unstable();
            format!("chase:{}", p.join("+"))
        }
        None => n.to_string(),
    }
}

#[test]
fn the_pikafish_code_gives_pikafish_verdicts() {
    let lines = lines();
    assert_eq!(lines.len(), 3000);
    let mut failures = Vec::new();
    for line in &lines {
        let ours = verdict(line);
        let theirs = our_verdict(line.verdict);
        if ours != theirs {
            failures.push(format!(
                "line {}: pikafish code {ours}, Pikafish {theirs}",
                line.number
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

#[test]
fn every_move_chases_what_pikafish_sees_it_chase() {
    let mut failures = Vec::new();
    for line in &lines() {
        let ours = natures(line);
        let theirs: Vec<String> = line.natures.iter().map(|n| sorted_nature(n)).collect();
        if ours != theirs {
            failures.push(format!(
                "line {}: ours {}, Pikafish {}",
                line.number,
                ours.join(","),
                theirs.join(",")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
