//! Property tests over random playouts: the fast generator agrees with a slow,
//! obviously correct reference generator written here from the rules text alone;
//! make/unmake restores the position and hash; the incremental hash equals a
//! recomputed one; FEN round-trips. Run under the standard rules and under the
//! capture-conversion variant.

use proptest::prelude::*;
use xq_engine::{Color, Kind, Move, Piece, Position, Square};

/// A plain 9×10 array board: `cells[file][rank]`.
#[derive(Clone)]
struct Board {
    cells: [[Option<Piece>; 10]; 9],
    side: Color,
    conversion: bool,
}

fn at(b: &Board, f: i32, r: i32) -> Option<Option<Piece>> {
    if (0..9).contains(&f) && (0..10).contains(&r) {
        Some(b.cells[f as usize][r as usize])
    } else {
        None
    }
}

fn in_palace(color: Color, f: i32, r: i32) -> bool {
    (3..=5).contains(&f)
        && if color == Color::Red {
            (0..=2).contains(&r)
        } else {
            (7..=9).contains(&r)
        }
}

fn own_half(color: Color, r: i32) -> bool {
    if color == Color::Red { r <= 4 } else { r >= 5 }
}

impl Board {
    fn from_position(pos: &Position) -> Board {
        let mut cells = [[None; 10]; 9];
        for sq in Square::all() {
            cells[sq.file().index()][sq.rank().index()] = pos.piece_at(sq);
        }
        Board {
            cells,
            side: pos.side_to_move(),
            conversion: pos.conversion(),
        }
    }

    /// Points the piece on (f, r) could move to or capture on, ignoring what stands
    /// on the target and ignoring checks.
    fn reach(&self, f: i32, r: i32) -> Vec<(i32, i32)> {
        let Some(Some(p)) = at(self, f, r) else {
            return vec![];
        };
        let c = p.color();
        let mut out = vec![];
        let empty = |x: i32, y: i32| at(self, x, y) == Some(None);
        match p.kind() {
            Kind::General => {
                for (df, dr) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                    if in_palace(c, f + df, r + dr) {
                        out.push((f + df, r + dr));
                    }
                }
            }
            Kind::Advisor => {
                for (df, dr) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                    if in_palace(c, f + df, r + dr) {
                        out.push((f + df, r + dr));
                    }
                }
            }
            Kind::Elephant if p.is_converted() => {
                for (df, dr) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                    let (mut x, mut y) = (f + df, r + dr);
                    while at(self, x, y).is_some() {
                        out.push((x, y));
                        if !empty(x, y) {
                            break;
                        }
                        x += df;
                        y += dr;
                    }
                }
            }
            Kind::Elephant => {
                for (df, dr) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                    let (x, y) = (f + 2 * df, r + 2 * dr);
                    if at(self, x, y).is_some()
                        && own_half(c, y) == own_half(c, r)
                        && empty(f + df, r + dr)
                    {
                        out.push((x, y));
                    }
                }
            }
            Kind::Horse => {
                for (lf, lr) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                    if !empty(f + lf, r + lr) {
                        continue;
                    }
                    for side in [-1, 1] {
                        let (x, y) = if lf != 0 {
                            (f + 2 * lf, r + side)
                        } else {
                            (f + side, r + 2 * lr)
                        };
                        if at(self, x, y).is_some() {
                            out.push((x, y));
                        }
                    }
                }
            }
            Kind::Chariot | Kind::Cannon => {
                for (df, dr) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                    let (mut x, mut y) = (f + df, r + dr);
                    let mut screens = 0;
                    while let Some(cell) = at(self, x, y) {
                        match (p.kind(), cell, screens) {
                            (Kind::Chariot, None, _) => out.push((x, y)),
                            (Kind::Chariot, Some(_), _) => {
                                out.push((x, y));
                                break;
                            }
                            (_, None, 0) => out.push((x, y)),
                            (_, Some(_), 0) => screens = 1,
                            (_, None, _) => {}
                            (_, Some(_), _) => {
                                out.push((x, y));
                                break;
                            }
                        }
                        x += df;
                        y += dr;
                    }
                }
            }
            Kind::Soldier => {
                let fwd = if c == Color::Red { 1 } else { -1 };
                if at(self, f, r + fwd).is_some() {
                    out.push((f, r + fwd));
                }
                if !own_half(c, r) {
                    for df in [-1, 1] {
                        if at(self, f + df, r).is_some() {
                            out.push((f + df, r));
                        }
                    }
                }
            }
        }
        out
    }

    fn general(&self, color: Color) -> (i32, i32) {
        for f in 0..9 {
            for r in 0..10 {
                if self.cells[f as usize][r as usize] == Some(Piece::new(color, Kind::General)) {
                    return (f, r);
                }
            }
        }
        panic!("no {color:?} general");
    }

    /// Whether `color`'s general can be taken by an enemy piece or faces the enemy
    /// general on an open file.
    fn attacked(&self, color: Color) -> bool {
        let (kf, kr) = self.general(color);
        let (ef, er) = self.general(!color);
        if kf == ef && (kr.min(er) + 1..kr.max(er)).all(|y| at(self, kf, y) == Some(None)) {
            return true;
        }
        for f in 0..9 {
            for r in 0..10 {
                if let Some(Some(p)) = at(self, f, r)
                    && p.color() != color
                    && p.kind() != Kind::General
                    && self.reach(f, r).contains(&(kf, kr))
                {
                    return true;
                }
            }
        }
        false
    }

    fn play(&self, (f, r): (i32, i32), (x, y): (i32, i32)) -> Board {
        let mut b = self.clone();
        let Some(p) = b.cells[f as usize][r as usize].take() else {
            panic!("empty origin")
        };
        let captured = b.cells[x as usize][y as usize].replace(p);
        if let Some(c) = captured
            && b.conversion
            && c.kind().can_convert()
            && !c.is_converted()
            && c.kind() != p.kind()
        {
            let turned = Piece::new_converted(p.color(), c.kind()).unwrap();
            b.cells[f as usize][r as usize] = Some(turned);
            if !b.reach(f, r).contains(&b.general(c.color())) {
                b.cells[f as usize][r as usize] = None;
            }
        }
        b.side = !b.side;
        b
    }

    fn legal_moves(&self) -> Vec<String> {
        let mut out = vec![];
        for f in 0..9 {
            for r in 0..10 {
                let Some(Some(p)) = at(self, f, r) else {
                    continue;
                };
                if p.color() != self.side {
                    continue;
                }
                for (x, y) in self.reach(f, r) {
                    if matches!(at(self, x, y), Some(Some(q)) if q.color() == self.side) {
                        continue;
                    }
                    if !self.play((f, r), (x, y)).attacked(self.side) {
                        let name = |f: i32, r: i32| format!("{}{}", (b'a' + f as u8) as char, r);
                        out.push(format!("{}{}", name(f, r), name(x, y)));
                    }
                }
            }
        }
        out.sort();
        out
    }
}

fn names(moves: impl IntoIterator<Item = Move>) -> Vec<String> {
    let mut v: Vec<String> = moves.into_iter().map(|m| m.to_string()).collect();
    v.sort();
    v
}

const STARTS: &[&str] = &[
    xq_engine::START_FEN,
    "r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1",
    "1cbak4/9/n2a5/2p1p3p/5cp2/2n2N3/6PCP/3AB4/2C6/3A1K1N1 w - - 0 1",
    "CRN1k1b2/3ca4/4ba3/9/2nr5/9/9/4B4/4A4/4KA3 w - - 0 1",
    "C1nNk4/9/9/9/9/9/n1pp5/B3C4/9/3A1K3 w - - 0 1",
    "1C2ka3/9/C1Nab1n2/p3p3p/6p2/9/P3P3P/3AB4/3p2c2/c1BAK4 w - - 0 1",
    "4k4/4a4/4b4/9/2B~6/9/9/4B4/4A4/3AK4 w - - 0 1",
    "r1bak4/4a4/2n1b1n2/p1R1p3p/2p3p2/9/P1P1P1P1P/4B1N2/4A4/2BAK1C2 w - - 0 1",
];

/// Plays up to `plies` random legal moves from `fen`, checking every property at
/// each ply.
fn playout(fen: &str, conversion: bool, seed: u64, plies: usize) {
    let mut pos = Position::from_fen(fen).unwrap();
    pos.set_conversion(conversion);
    let mut rng = seed | 1;
    for _ in 0..plies {
        let moves = pos.legal_moves();
        let reference = Board::from_position(&pos);
        let fen = pos.to_fen();
        assert_eq!(
            names(moves.iter().copied()),
            reference.legal_moves(),
            "moves of {fen}"
        );
        assert_eq!(pos.count_legal() as usize, moves.len());
        assert_eq!(pos.has_legal_move(), !moves.is_empty());
        for &mv in &moves {
            assert!(pos.is_legal(mv), "{mv} in {fen}");
        }
        let caps: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|&m| pos.is_capture(m))
            .collect();
        assert_eq!(
            names(pos.legal_captures()),
            names(caps),
            "captures of {fen}"
        );
        assert_eq!(
            pos.in_check(),
            reference.attacked(pos.side_to_move()),
            "check in {fen}"
        );
        let mut reparsed = Position::from_fen(&fen).unwrap();
        reparsed.set_conversion(conversion);
        assert_eq!(reparsed, pos, "fen round trip of {fen}");
        if moves.is_empty() {
            return;
        }
        for &mv in &moves {
            let before = pos.clone();
            let undo = pos.make(mv);
            assert!(pos.is_consistent(), "after {mv} from {fen}");
            assert_eq!(pos.hash(), pos.compute_hash());
            pos.unmake(undo);
            assert_eq!(pos, before, "unmake of {mv}");
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // Prefer captures half the time so that playouts reach sparse endgames.
        let caps = pos.legal_captures();
        let mv = if !caps.is_empty() && rng & 1 == 0 {
            caps[(rng >> 1) as usize % caps.len()]
        } else {
            moves[(rng >> 1) as usize % moves.len()]
        };
        pos.make(mv);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn standard_rules_agree_with_reference(seed in any::<u64>(), start in 0..STARTS.len()) {
        playout(STARTS[start], false, seed, 120);
    }

    #[test]
    fn conversion_rules_agree_with_reference(seed in any::<u64>(), start in 0..STARTS.len()) {
        playout(STARTS[start], true, seed, 120);
    }
}
