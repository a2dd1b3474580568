//! Perft: counting the leaf nodes of the legal move tree, the move generator's test.

use crate::{Move, Position};

/// Leaf nodes at `depth` plies. The last ply is counted in bulk, without making
/// its moves, as the reference engines count.
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => u64::from(pos.count_legal()),
        _ => {
            let mut nodes = 0;
            for mv in pos.legal_moves() {
                let undo = pos.make(mv);
                nodes += perft(pos, depth - 1);
                pos.unmake(undo);
            }
            nodes
        }
    }
}

/// Leaf nodes below each root move, in generation order.
pub fn divide(pos: &mut Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let undo = pos.make(mv);
            let n = perft(pos, depth - 1);
            pos.unmake(undo);
            (mv, n)
        })
        .collect()
}

/// One line of the perft reference file: a FEN and its counts by depth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerftCase {
    pub fen: String,
    /// `(depth, nodes)` pairs in file order.
    pub counts: Vec<(u32, u64)>,
}

/// Parses `<FEN> ; D1 <n> ; D2 <n> ...` lines; `#` starts a comment line.
pub fn parse_cases(text: &str) -> Result<Vec<PerftCase>, String> {
    let mut cases = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(';').map(str::trim);
        let fen = parts.next().unwrap_or_default().to_string();
        let mut counts = Vec::new();
        for part in parts {
            let bad = || format!("line {}: bad depth entry '{part}'", no + 1);
            let (d, n) = part.split_once(' ').ok_or_else(bad)?;
            let depth = d
                .strip_prefix('D')
                .and_then(|d| d.parse().ok())
                .ok_or_else(bad)?;
            let nodes = n.trim().parse().map_err(|_| bad())?;
            counts.push((depth, nodes));
        }
        cases.push(PerftCase { fen, counts });
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The public reference table (chessprogramming wiki, "Chinese Chess Perft Results").
    const CASES: &str = include_str!("../data/perft.txt");

    fn run(max_nodes: u64) {
        let cases = parse_cases(CASES).unwrap();
        assert!(cases.len() >= 10);
        for case in cases {
            let mut pos = Position::from_fen(&case.fen).unwrap();
            for &(depth, nodes) in case.counts.iter().filter(|c| c.1 <= max_nodes) {
                assert_eq!(perft(&mut pos, depth), nodes, "{} depth {depth}", case.fen);
            }
            assert_eq!(
                pos.to_fen(),
                Position::from_fen(&case.fen).unwrap().to_fen()
            );
        }
    }

    #[test]
    fn reference_counts_up_to_a_few_million() {
        run(3_500_000);
    }

    #[test]
    #[ignore = "deep perft: minutes in release mode"]
    fn reference_counts_deep() {
        run(u64::MAX);
    }

    #[test]
    fn divide_sums_to_perft() {
        let mut pos = Position::startpos();
        let parts = divide(&mut pos, 3);
        assert_eq!(parts.len(), 44);
        assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), 79666);
    }
}
