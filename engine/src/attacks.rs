//! Precomputed move and attack tables, built at compile time.
//!
//! Sliding pieces use "bit-rank / bit-file" lookups: the occupancy of one rank
//! (9 bits, bit = file) or one file (10 bits, bit = rank) indexes a table of the
//! points a chariot reaches along that line and the points a cannon captures on.
//! Leaper tables give, per square, the targets together with the blocking point
//! (elephant eye, horse leg) that must be empty.

use crate::{Bitboard, Color, Square};

/// "No square" in the `u8` square tables below.
pub const NONE: u8 = u8::MAX;

/// The masks along one line for a slider at one position: low 16 bits are the
/// points a chariot reaches (empty points up to and including the first piece each
/// way), high 16 bits the points a cannon captures on (the first piece beyond the
/// first screen each way).
const fn slide(pos: u32, occ: u32, len: u32) -> u32 {
    let mut rook = 0u32;
    let mut cannon = 0u32;
    let mut dir = 0;
    while dir < 2 {
        let mut i = pos as i32;
        let mut screen = false;
        loop {
            i += if dir == 0 { 1 } else { -1 };
            if i < 0 || i >= len as i32 {
                break;
            }
            let bit = 1u32 << i;
            if !screen {
                rook |= bit;
                if occ & bit != 0 {
                    screen = true;
                }
            } else if occ & bit != 0 {
                cannon |= bit;
                break;
            }
        }
        dir += 1;
    }
    rook | (cannon << 16)
}

const fn rank_table() -> [[u32; 512]; 9] {
    let mut t = [[0u32; 512]; 9];
    let mut f = 0;
    while f < 9 {
        let mut occ = 0;
        while occ < 512 {
            t[f][occ] = slide(f as u32, occ as u32, 9);
            occ += 1;
        }
        f += 1;
    }
    t
}

const fn file_table() -> [[u32; 1024]; 10] {
    let mut t = [[0u32; 1024]; 10];
    let mut r = 0;
    while r < 10 {
        let mut occ = 0;
        while occ < 1024 {
            t[r][occ] = slide(r as u32, occ as u32, 10);
            occ += 1;
        }
        r += 1;
    }
    t
}

const fn spread_table() -> [u128; 1024] {
    let mut t = [0u128; 1024];
    let mut m = 0;
    while m < 1024 {
        let mut r = 0;
        while r < 10 {
            if m >> r & 1 != 0 {
                t[m] |= 1u128 << (r * 9);
            }
            r += 1;
        }
        m += 1;
    }
    t
}

/// `RANK_SLIDE[file][rank occupancy]`, see [`slide`].
static RANK_SLIDE: [[u32; 512]; 9] = rank_table();
/// `FILE_SLIDE[rank][file occupancy]`, see [`slide`].
static FILE_SLIDE: [[u32; 1024]; 10] = file_table();
/// A 10-bit file mask (bit = rank) spread onto file `a` of a board.
static SPREAD_FILE: [u128; 1024] = spread_table();

/// Occupancy of `rank` (bit = file) in the board mask `occ`.
#[inline]
pub fn rank_occupancy(occ: Bitboard, rank: usize) -> usize {
    (occ.0 >> (rank * 9)) as usize & 0x1ff
}

/// Chariot reach and cannon captures from `sq` given the occupancy of its rank
/// (`rank_occ`, bit = file) and of its file (`file_occ`, bit = rank).
/// Returns `(chariot, cannon_captures)`; both include occupied points of any colour.
#[inline]
pub fn slider_targets(sq: Square, rank_occ: usize, file_occ: usize) -> (Bitboard, Bitboard) {
    let f = sq.file().index();
    let r = sq.rank().index();
    let along_rank = RANK_SLIDE[f][rank_occ];
    let along_file = FILE_SLIDE[r][file_occ];
    let rank_shift = r * 9;
    let rook = (((along_rank & 0xffff) as u128) << rank_shift)
        | (SPREAD_FILE[(along_file & 0xffff) as usize] << f);
    let cannon = (((along_rank >> 16) as u128) << rank_shift)
        | (SPREAD_FILE[(along_file >> 16) as usize] << f);
    (Bitboard(rook), Bitboard(cannon))
}

const fn sq_at(f: i32, r: i32) -> u8 {
    if f >= 0 && f < 9 && r >= 0 && r < 10 {
        (r * 9 + f) as u8
    } else {
        NONE
    }
}

const fn palace_of(sq: u8) -> Option<Color> {
    let s = match Square::from_index(sq) {
        Some(s) => s,
        None => return None,
    };
    if s.in_palace(Color::Red) {
        Some(Color::Red)
    } else if s.in_palace(Color::Black) {
        Some(Color::Black)
    } else {
        None
    }
}

const fn palace_steps(diagonal: bool) -> [u128; 90] {
    let mut t = [0u128; 90];
    let mut s = 0;
    while s < 90 {
        if let Some(c) = palace_of(s as u8) {
            let (f, r) = ((s % 9) as i32, (s / 9) as i32);
            let mut d = 0;
            while d < 4 {
                let (df, dr) = if diagonal {
                    [(1, 1), (1, -1), (-1, 1), (-1, -1)][d]
                } else {
                    [(1, 0), (-1, 0), (0, 1), (0, -1)][d]
                };
                let t_sq = sq_at(f + df, r + dr);
                if t_sq != NONE
                    && let Some(tc) = palace_of(t_sq)
                    && tc as u8 == c as u8
                {
                    t[s] |= 1u128 << t_sq;
                }
                d += 1;
            }
        }
        s += 1;
    }
    t
}

/// General steps from each square within the palace that holds it (0 elsewhere).
pub static GENERAL_STEPS: [u128; 90] = palace_steps(false);
/// Advisor steps from each square within the palace that holds it (0 elsewhere).
pub static ADVISOR_STEPS: [u128; 90] = palace_steps(true);

/// Elephant moves: per square up to four `(eye, target)` pairs that stay on the
/// square's own side of the river; unused slots hold [`NONE`].
pub static ELEPHANT_MOVES: [[(u8, u8); 4]; 90] = {
    let mut t = [[(NONE, NONE); 4]; 90];
    let mut s = 0;
    while s < 90 {
        let (f, r) = ((s % 9) as i32, (s / 9) as i32);
        let home_red = r <= 4;
        let mut d = 0;
        let mut n = 0;
        while d < 4 {
            let (df, dr) = [(1, 1), (1, -1), (-1, 1), (-1, -1)][d];
            let to = sq_at(f + 2 * df, r + 2 * dr);
            if to != NONE && ((to / 9 <= 4) == home_red) {
                t[s][n] = (sq_at(f + df, r + dr), to);
                n += 1;
            }
            d += 1;
        }
        s += 1;
    }
    t
};

/// Horse moves: per square the four orthogonal legs, each with the targets it
/// opens (two at most); a leg off the board holds [`NONE`] and no targets.
pub static HORSE_MOVES: [[(u8, u128); 4]; 90] = {
    let mut t = [[(NONE, 0u128); 4]; 90];
    let mut s = 0;
    while s < 90 {
        let (f, r) = ((s % 9) as i32, (s / 9) as i32);
        let mut d = 0;
        while d < 4 {
            let (df, dr) = [(1, 0), (-1, 0), (0, 1), (0, -1)][d];
            let leg = sq_at(f + df, r + dr);
            if leg != NONE {
                let mut targets = 0u128;
                let mut side = 0;
                while side < 2 {
                    let sgn = if side == 0 { 1 } else { -1 };
                    let to = if df != 0 {
                        sq_at(f + 2 * df, r + sgn)
                    } else {
                        sq_at(f + sgn, r + 2 * dr)
                    };
                    if to != NONE {
                        targets |= 1u128 << to;
                    }
                    side += 1;
                }
                t[s][d] = (leg, targets);
            }
            d += 1;
        }
        s += 1;
    }
    t
};

/// Horses that attack a square: per target square its four diagonal neighbours
/// (the legs of every horse attacking it), each with the horse squares whose leg it
/// is; a neighbour off the board holds [`NONE`].
pub static HORSE_ATTACKERS: [[(u8, u128); 4]; 90] = {
    let mut t = [[(NONE, 0u128); 4]; 90];
    let mut k = 0;
    while k < 90 {
        let (f, r) = ((k % 9) as i32, (k / 9) as i32);
        let mut d = 0;
        while d < 4 {
            let (df, dr) = [(1, 1), (1, -1), (-1, 1), (-1, -1)][d];
            let leg = sq_at(f + df, r + dr);
            if leg != NONE {
                let mut sources = 0u128;
                let a = sq_at(f + 2 * df, r + dr);
                let b = sq_at(f + df, r + 2 * dr);
                if a != NONE {
                    sources |= 1u128 << a;
                }
                if b != NONE {
                    sources |= 1u128 << b;
                }
                t[k][d] = (leg, sources);
            }
            d += 1;
        }
        k += 1;
    }
    t
};

const fn soldier_steps(color: usize) -> [u128; 90] {
    let mut t = [0u128; 90];
    let mut s = 0;
    while s < 90 {
        let (f, r) = ((s % 9) as i32, (s / 9) as i32);
        let fwd = if color == 0 { 1 } else { -1 };
        let crossed = if color == 0 { r >= 5 } else { r <= 4 };
        let to = sq_at(f, r + fwd);
        if to != NONE {
            t[s] |= 1u128 << to;
        }
        if crossed {
            let l = sq_at(f - 1, r);
            let rt = sq_at(f + 1, r);
            if l != NONE {
                t[s] |= 1u128 << l;
            }
            if rt != NONE {
                t[s] |= 1u128 << rt;
            }
        }
        s += 1;
    }
    t
}

const fn invert(steps: &[u128; 90]) -> [u128; 90] {
    let mut t = [0u128; 90];
    let mut s = 0;
    while s < 90 {
        let mut to = 0;
        while to < 90 {
            if steps[s] >> to & 1 != 0 {
                t[to] |= 1u128 << s;
            }
            to += 1;
        }
        s += 1;
    }
    t
}

const SOLDIER_STEPS_RED: [u128; 90] = soldier_steps(0);
const SOLDIER_STEPS_BLACK: [u128; 90] = soldier_steps(1);

/// Soldier steps per colour and square (forward; sideways too once across the river).
pub static SOLDIER_STEPS: [[u128; 90]; 2] = [SOLDIER_STEPS_RED, SOLDIER_STEPS_BLACK];
/// Squares from which a soldier of the given colour attacks each square.
pub static SOLDIER_ATTACKERS: [[u128; 90]; 2] =
    [invert(&SOLDIER_STEPS_RED), invert(&SOLDIER_STEPS_BLACK)];

/// The four diagonal directions as `(file step, rank step)`.
pub const DIAGONALS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Points a bishop-moving converted elephant on `sq` reaches over `occ`: empty
/// points along each diagonal up to and including the first occupied one.
pub fn bishop_targets(sq: Square, occ: Bitboard) -> Bitboard {
    let mut out = Bitboard::EMPTY;
    for (df, dr) in DIAGONALS {
        let mut cur = sq;
        while let Some(next) = cur.offset(df, dr) {
            out.insert(next);
            if occ.contains(next) {
                break;
            }
            cur = next;
        }
    }
    out
}

/// Every point on the same rank or file as `sq`, `sq` excluded.
pub fn lines_through(sq: Square) -> Bitboard {
    let rank = 0x1ffu128 << (sq.rank().index() * 9);
    let file = SPREAD_FILE[0x3ff] << sq.file().index();
    Bitboard((rank | file) & !(1u128 << sq.index()))
}

/// Every point on the rank of `sq`.
pub fn rank_of(sq: Square) -> Bitboard {
    Bitboard(0x1ffu128 << (sq.rank().index() * 9))
}

/// Every point on a diagonal through `sq`, `sq` excluded.
pub fn diagonals_through(sq: Square) -> Bitboard {
    bishop_targets(sq, Bitboard::EMPTY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        Square::parse(s).unwrap()
    }

    #[test]
    fn slide_masks() {
        // Position 4 on a 9-point line, pieces at 1, 2, 6, 8.
        let m = slide(4, 0b1_0100_0110, 9);
        assert_eq!(m & 0xffff, 0b0_0110_1100);
        assert_eq!(m >> 16, 0b1_0000_0010);
    }

    #[test]
    fn slider_targets_on_board() {
        let occ = Bitboard::from_square(sq("e0"))
            | Bitboard::from_square(sq("e3"))
            | Bitboard::from_square(sq("e6"))
            | Bitboard::from_square(sq("b2"));
        let e2 = sq("e2");
        let rank_occ = rank_occupancy(occ, 2);
        let file_occ = (0..10)
            .filter(|&r| occ.contains(Square::from_coords(4, r).unwrap()))
            .fold(0, |m, r| m | 1 << r);
        let (rook, cannon) = slider_targets(e2, rank_occ, file_occ);
        assert!(rook.contains(sq("e0")) && rook.contains(sq("e3")) && rook.contains(sq("b2")));
        assert!(!rook.contains(sq("e4")) && !rook.contains(sq("a2")));
        assert_eq!(rook.count(), 2 + 3 + 4 + 1);
        assert_eq!(cannon, Bitboard::from_square(sq("e6")));
    }

    #[test]
    fn leaper_tables() {
        assert_eq!(Bitboard(GENERAL_STEPS[sq("e0").index()]).count(), 3);
        assert_eq!(Bitboard(ADVISOR_STEPS[sq("e1").index()]).count(), 4);
        assert_eq!(Bitboard(ADVISOR_STEPS[sq("d0").index()]).count(), 1);
        let elephant: Vec<_> = ELEPHANT_MOVES[sq("c4").index()]
            .iter()
            .filter(|m| m.1 != NONE)
            .collect();
        assert_eq!(elephant.len(), 2);
        let horse: u32 = HORSE_MOVES[sq("b0").index()]
            .iter()
            .map(|m| m.1.count_ones())
            .sum();
        assert_eq!(horse, 3);
        assert_eq!(Bitboard(SOLDIER_STEPS[0][sq("e5").index()]).count(), 3);
        assert_eq!(Bitboard(SOLDIER_STEPS[1][sq("e5").index()]).count(), 1);
        assert_eq!(Bitboard(SOLDIER_ATTACKERS[1][sq("e1").index()]).count(), 3);
    }
}
