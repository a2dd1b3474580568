//! Cost of judging a repetition: `cargo bench -p xq-engine --bench repetition`.
//!
//! Replays every cycle of `tests/data/chase_cycles.txt` (repetition cycles from
//! self-play positions, see tests/chase/) up to its judged position, then times
//! [`judge_cycle`] there under each code (the arbiter's call: find the first
//! occurrence, replay and classify the cycle's moves, decide), and [`classify`]
//! alone per move. Prints microseconds per call, best of three rounds, and the
//! slowest single repetition (best of three for each).

use std::time::Instant;

use xq_engine::rules::repetition::classify;
use xq_engine::rules::{MateMemo, PlyEntry, judge_cycle};
use xq_engine::{Move, Position, RuleSet};

struct Cycle {
    pos: Position,
    stack: Vec<PlyEntry>,
    start: Position,
    moves: Vec<Move>,
}

fn cycles() -> Vec<Cycle> {
    let mut out = Vec::new();
    for line in include_str!("../tests/data/chase_cycles.txt").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = line.split('|');
        let fen = fields.next().expect("fen").trim();
        let moves: Vec<Move> = fields
            .next()
            .expect("moves")
            .split_whitespace()
            .map(|m| Move::parse_coords(m).expect("move"))
            .collect();
        let start = Position::from_fen(fen).expect("fen");
        let mut pos = start.clone();
        let mut stack = vec![PlyEntry::root(pos.hash())];
        for &mv in &moves {
            pos.make(mv);
            stack.push(PlyEntry {
                hash: pos.hash(),
                check: pos.in_check(),
                mv: Some(mv),
            });
        }
        out.push(Cycle {
            pos,
            stack,
            start,
            moves,
        });
    }
    out
}

fn best_of_three(mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut calls = 0;
    for _ in 0..3 {
        let start = Instant::now();
        calls = f();
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best * 1e6 / calls as f64, calls)
}

fn main() {
    let cycles = cycles();
    for preset in ["standard", "asian", "pikafish"] {
        let rules: RuleSet = preset.parse().expect("preset");
        let (us, calls) = best_of_three(|| {
            let mut judged = 0;
            for c in &cycles {
                judged += usize::from(
                    judge_cycle(
                        std::hint::black_box(&c.stack),
                        3,
                        &rules,
                        &c.pos,
                        &mut MateMemo::default(),
                    )
                    .is_some(),
                );
            }
            assert_eq!(judged, cycles.len(), "every cycle is judged");
            judged
        });
        println!("judge_cycle ({preset}): {us:.1} µs per repetition over {calls} cycles");
        let (worst_us, worst) = cycles
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (us, _) = best_of_three(|| {
                    usize::from(
                        judge_cycle(
                            std::hint::black_box(&c.stack),
                            3,
                            &rules,
                            &c.pos,
                            &mut MateMemo::default(),
                        )
                        .is_some(),
                    )
                });
                (us, i)
            })
            .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
        println!("judge_cycle ({preset}): slowest {worst_us:.1} µs (cycle {worst} of the file)");
        let (us, calls) = best_of_three(|| {
            let mut n = 0;
            for c in &cycles {
                let mut pos = c.start.clone();
                for &mv in &c.moves {
                    std::hint::black_box(classify(&mut pos, mv, &rules, &mut MateMemo::default()));
                    pos.make(mv);
                    n += 1;
                }
            }
            n
        });
        println!("classify ({preset}): {us:.2} µs per move over {calls} moves");
    }
}
