//! Perft speed: `cargo bench -p xq-engine --bench perft`.
//!
//! Counts the start position to depth 5 (133,312,995 leaves) and every reference
//! position of `data/perft.txt` to its depth 4, with bulk counting at the last ply,
//! and prints nodes per second on one thread. Best of three runs each.

use std::time::Instant;

use xq_engine::{Position, perft};

fn measure(fen: &str, depth: u32) -> (u64, f64) {
    let mut best = f64::MAX;
    let mut nodes = 0;
    for _ in 0..3 {
        let mut pos = Position::from_fen(fen).expect("reference fen");
        let start = Instant::now();
        nodes = perft::perft(&mut pos, depth);
        best = best.min(start.elapsed().as_secs_f64());
    }
    (nodes, best)
}

fn main() {
    let (nodes, secs) = measure(xq_engine::START_FEN, 5);
    println!(
        "startpos depth 5: {nodes} nodes in {secs:.3} s = {:.1} M nodes/s",
        nodes as f64 / secs / 1e6
    );
    let cases = perft::parse_cases(include_str!("../data/perft.txt")).expect("perft table");
    let (mut total_nodes, mut total_secs) = (0, 0.0);
    for case in cases.iter().skip(1) {
        let (n, s) = measure(&case.fen, 4);
        total_nodes += n;
        total_secs += s;
    }
    println!(
        "{} reference positions depth 4: {total_nodes} nodes = {:.1} M nodes/s",
        cases.len() - 1,
        total_nodes as f64 / total_secs / 1e6
    );
}
