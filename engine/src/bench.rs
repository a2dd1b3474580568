//! Bench: a fixed list of positions searched to a fixed depth. The total node
//! count is the search's functional fingerprint: the same on every machine and
//! run for the same code and parameters. Every search starts from a cleared
//! [`Searcher`], so the count does not depend on the order of positions either.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use crate::params::Params;
use crate::search::{Limits, SearchRules, Searcher};
use crate::{Position, START_FEN};

/// Depth of `xq-engine bench` without an argument (plies).
pub const DEFAULT_DEPTH: u32 = 12;

/// Transposition table size for bench (MB); part of the fingerprint.
pub const HASH_MB: usize = 16;

/// Bench positions: openings, middlegames (reached by the move lists noted) and
/// endgames. A `~` in a FEN marks a converted piece; those positions are searched
/// under the capture-conversion rule.
pub const POSITIONS: &[&str] = &[
    START_FEN,
    // h2e2 h9g7
    "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2",
    // h2e2 h9g7 h0g2 i9h9 i0h0 b9c7
    "r1bakabr1/9/1cn3nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKABR1 w - - 6 4",
    // c3c4 g6g5
    "rnbakabnr/9/1c5c1/p1p1p3p/6p2/2P6/P3P1P1P/1C5C1/9/RNBAKABNR w - - 2 2",
    // g0e2 h7e7
    "rnbakabnr/9/1c2c4/p1p1p1p1p/9/9/P1P1P1P1P/1C2B2C1/9/RNBAKA1NR w - - 2 2",
    // h2e2 h7e7 h0g2 h9g7
    "rnbakab1r/9/1c2c1n2/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R w - - 4 3",
    // h2e2 b7e7
    "rnbakabnr/9/4c2c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2",
    // b2d2 h9g7
    "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/3C3C1/9/RNBAKABNR w - - 2 2",
    // h0g2 c6c5
    "rnbakabnr/9/1c5c1/p3p1p1p/2p6/9/P1P1P1P1P/1C4NC1/9/RNBAKAB1R w - - 2 2",
    // h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 c6c5 b0c2 b7a7 a0b0 a9b9
    "1rbakabr1/9/c1n3nc1/p3p1p1p/2p6/2P6/P3P1P1P/1CN1C1N2/9/1RBAKABR1 w - - 12 7",
    // h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 h0h6 c6c5 h6g6 a9b9 b0c2 b7b3 g3g4 h7h3
    "1rbakabr1/9/2n3n2/p3p1R1p/2p6/6P2/PcP1P2cP/1CN1C1N2/9/R1BAKAB2 w - - 5 8",
    // h2e2 b9c7 h0g2 a9b9 i0h0 h9g7 h0h4 b7b3 b0c2 c6c5 b2a2 b9b5 a0b0 g6g5
    "2bakab1r/9/2n3nc1/p3p3p/1rp3p2/7R1/PcP1P1P1P/C1N1C1N2/9/1RBAKAB2 w - - 14 8",
    // c3c4 h7e7 h0g2 h9g7 i0h0 i9h9 b0c2 b9c7 b2b6 h9h5 g3g4 c6c5 h2h1
    "r1bakab2/9/1cn1c1n2/pC2p1p1p/2p4r1/2P3P2/P3P3P/2N3N2/7C1/R1BAKABR1 b - - 13 7",
    // h2e2 h7e7 h0g2 h9g7 i0h0 i9i8 h0h6 b9c7 h6g6 i8f8 b0c2 f8f3 a0a1 b7b3
    "r1bakab2/9/2n1c1n2/p1p1p1R1p/9/9/PcP1PrP1P/1CN1C1N2/R8/2BAKAB2 w - - 5 8",
    // g0e2 c6c5 h0g2 b9c7 i0h0 h9g7 b2b6 a9b9 c3c4 c5c4 e2c4
    "1rbakab1r/9/1cn3nc1/pC2p1p1p/9/2B6/P3P1P1P/6NC1/9/RNBAKA1R1 b - - 0 6",
    // Endgames.
    "3k5/4a4/4b4/9/9/9/9/4B4/4A4/3AK1R2 w - - 0 1",
    "4k4/9/4b4/9/2p6/9/9/9/4A4/3AK1N2 w - - 0 1",
    "2bk5/4a4/4b4/4P4/9/9/9/9/9/4K4 w - - 0 1",
    "3ak4/4a4/4b4/9/9/2N6/9/2r6/9/3RK4 w - - 0 1",
    "3a1k3/4a4/9/9/9/9/6P2/9/4C4/4K4 w - - 0 1",
    "4k4/9/4b4/9/5r3/9/9/2N1B1N2/9/3K5 w - - 0 1",
    "3akab2/9/9/9/2p3p2/4R4/9/9/9/3K5 b - - 0 1",
    "4ka3/9/5a3/2P6/4n4/9/9/3AB4/4A4/2C1K4 w - - 0 1",
    "2b1k4/4a4/4c4/9/9/9/9/4B4/4A4/3AKC3 b - - 0 1",
    "5k3/9/9/3PP4/9/9/9/9/4r4/3K5 w - - 0 1",
    // Capture-conversion variant.
    "rnbaka2r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1B~2/9/RNBAKA1NR w - - 0 4",
    "r1bakabr1/9/1cn4c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N~2/9/R1BAKAB1R b - - 0 5",
    "2baka3/9/4c4/9/9/6B~2/9/4B4/4A4/3AK4 w - - 0 1",
    "3k5/4a4/3a5/9/9/4b~4/9/9/9/4K4 b - - 0 1",
    "r2akab2/9/1cn3n2/p1p1C~1R1p/9/9/P1P1P1P1P/2N1C1N2/9/R1BAKAB2 w - - 0 9",
];

/// A bench position ready to search: parsed, with the conversion rule on when
/// its FEN has a converted piece.
pub fn position(fen: &str) -> Result<Position, crate::FenError> {
    let mut pos = Position::from_fen(fen)?;
    pos.set_conversion(fen.contains('~'));
    Ok(pos)
}

/// Totals of one bench run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchResult {
    pub nodes: u64,
    /// Time spent searching (clearing the table between positions excluded).
    pub elapsed: Duration,
}

impl BenchResult {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)) as u64
    }
}

/// Searches every bench position to `depth` plies with `params`, printing one line
/// per position to `out`. Returns the node total.
pub fn run(depth: u32, params: &Params, out: &mut impl Write) -> io::Result<BenchResult> {
    run_threads(depth, 1, params, out)
}

/// [`run`] on `threads` search threads: its time is the time to depth of a
/// multi-threaded search; its node count (every thread's nodes) varies from
/// run to run when `threads` is above 1, so it is no signature then.
pub fn run_threads(
    depth: u32,
    threads: usize,
    params: &Params,
    out: &mut impl Write,
) -> io::Result<BenchResult> {
    let mut searcher = Searcher::new(HASH_MB);
    searcher.set_threads(threads);
    let rules = SearchRules::default();
    let mut elapsed = Duration::ZERO;
    let mut nodes = 0;
    for (i, fen) in POSITIONS.iter().enumerate() {
        let mut pos = position(fen).map_err(|e| io::Error::other(format!("bench fen {i}: {e}")))?;
        searcher.clear();
        let start = Instant::now();
        let r = searcher.search(&mut pos, &[], &Limits::depth(depth), params, &rules, |_| {});
        elapsed += start.elapsed();
        nodes += r.nodes;
        let best = r.best_move.map_or("(none)".to_string(), |m| m.to_string());
        writeln!(
            out,
            "position {:>2}: bestmove {best} score {} nodes {}",
            i + 1,
            crate::search::score_to_uci(r.score),
            r.nodes
        )?;
    }
    Ok(BenchResult { nodes, elapsed })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bench signature at depth 5: update it (and say so in the commit
    /// message) whenever search or evaluation changes on purpose.
    const DEPTH5_NODES: u64 = 38947;

    #[test]
    fn node_count_is_pinned() {
        let mut sink = Vec::new();
        let r = run(5, &Params::default(), &mut sink).unwrap();
        assert_eq!(r.nodes, DEPTH5_NODES);
    }

    #[test]
    fn positions_parse_and_have_moves() {
        assert!(POSITIONS.len() >= 30);
        for fen in POSITIONS {
            let pos = position(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert!(pos.has_legal_move(), "{fen}");
            assert_eq!(pos.conversion(), fen.contains('~'));
        }
    }
}
