//! Static evaluation in centipawns from the side to move's point of view.
//!
//! Terms (all from [`Params`]): material, with the soldier valued separately
//! before and after the river and a converted elephant (a bishop) valued as an
//! elephant plus `bishop_bonus`; piece-square terms generated from a few shape
//! parameters; mobility of horses, chariots, cannons and bishops (pseudo-legal
//! moves, own-occupied points excluded); chariots on open files; the cannon
//! patterns against the general (hollow, central and bottom cannon); attacks on
//! the enemy palace (per palace point a horse, chariot or cannon reaches, and per
//! attacking piece beyond the first); missing advisors and elephants while the
//! enemy has both a horse and a cannon; and a tempo bonus. Converted pieces are otherwise evaluated by their kind.
//! Shapes (issue 36, for Texel tuning to weigh): a chariot on a rib file, a horse
//! on its own palace centre, crossed soldiers side by side, horse–cannon
//! batteries, and palace points the enemy reaches that no advisor or the general
//! guards.
//!
//! [`Evaluator::new`] turns a `&Params` into lookup tables once per search.
//! Material and piece-square values form the *piece-square sum* ([`Psq`]), which
//! depends only on what stands where: the search keeps it up to date move by move
//! ([`Evaluator::psq_after`]) and hands it to [`Evaluator::evaluate_with`], which
//! adds the terms that look at the whole board. [`Evaluator::evaluate`]
//! recomputes everything from scratch.

use crate::attacks;
use crate::params::Params;
use crate::{Bitboard, Color, Kind, Piece, Position, Square};

/// The points of file `f` as a board mask.
fn file_mask(f: usize) -> Bitboard {
    let mut m = 0u128;
    for r in 0..10 {
        m |= 1u128 << (r * 9 + f);
    }
    Bitboard(m)
}

/// The material plus piece-square sum of a position, Red's minus Black's (cp).
pub type Psq = i32;

/// Lookup tables built from one parameter set. Equal evaluators evaluate every
/// position alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluator {
    /// Material plus piece-square value by [`Piece::index`] and square (cp, from the
    /// piece owner's point of view).
    pst: Vec<[i32; Square::COUNT]>,
    /// Mobility weight by kind index; the elephant entry is used for bishops only.
    mobility: [i32; 7],
    files: [Bitboard; 9],
    chariot_open_file: i32,
    hollow_cannon: i32,
    central_cannon: i32,
    bottom_cannon: i32,
    advisor_missing: i32,
    elephant_missing: i32,
    /// The nine points of each colour's palace, by [`Color::index`].
    palaces: [Bitboard; 2],
    palace_attack: i32,
    palace_attackers: i32,
    tempo: i32,
    /// Each colour's crossed half (the points its soldiers have crossed to), by
    /// [`Color::index`], without the last file so that a soldier and its right-hand
    /// neighbour stay on one rank.
    chain_starts: [Bitboard; 2],
    soldier_chain: i32,
    cannon_horse_battery: i32,
    palace_weak_point: i32,
}

/// Material value of `kind` for ordering and exchange evaluation (cp), soldiers
/// counted as crossed; the general is worth more than everything else together.
pub fn see_value(params: &Params, kind: Kind) -> i32 {
    match kind {
        Kind::General => 20_000,
        Kind::Advisor => params.advisor_value,
        Kind::Elephant => params.elephant_value,
        Kind::Horse => params.horse_value,
        Kind::Chariot => params.chariot_value,
        Kind::Cannon => params.cannon_value,
        Kind::Soldier => params.soldier_crossed_value,
    }
}

impl Evaluator {
    /// Builds the tables for `p`.
    pub fn new(p: &Params) -> Evaluator {
        let mut pst = vec![[0i32; Square::COUNT]; Piece::INDEX_COUNT];
        for color in Color::ALL {
            for kind in Kind::ALL {
                let plain = Piece::new(color, kind);
                let converted = Piece::new_converted(color, kind);
                for sq in Square::all() {
                    let v = square_value(p, color, kind, sq);
                    pst[plain.index()][sq.index()] = v;
                    if let Some(c) = converted {
                        let extra = if kind == Kind::Elephant {
                            p.bishop_bonus
                        } else {
                            0
                        };
                        pst[c.index()][sq.index()] = v + extra;
                    }
                }
            }
        }
        let mut mobility = [0; 7];
        mobility[Kind::Horse.index()] = p.mobility_horse;
        mobility[Kind::Chariot.index()] = p.mobility_chariot;
        mobility[Kind::Cannon.index()] = p.mobility_cannon;
        mobility[Kind::Elephant.index()] = p.mobility_bishop;
        Evaluator {
            pst,
            mobility,
            files: std::array::from_fn(file_mask),
            chariot_open_file: p.chariot_open_file,
            hollow_cannon: p.hollow_cannon,
            central_cannon: p.central_cannon,
            bottom_cannon: p.bottom_cannon,
            advisor_missing: p.advisor_missing_penalty,
            elephant_missing: p.elephant_missing_penalty,
            palaces: Color::ALL.map(|c| {
                Square::all()
                    .filter(|sq| sq.in_palace(c))
                    .fold(Bitboard::EMPTY, |b, sq| b | Bitboard::from_square(sq))
            }),
            palace_attack: p.palace_attack,
            palace_attackers: p.palace_attackers,
            tempo: p.tempo,
            chain_starts: Color::ALL.map(|c| {
                Square::all()
                    .filter(|sq| sq.rank().relative_to(c) >= 5 && sq.file().index() < 8)
                    .fold(Bitboard::EMPTY, |b, sq| b | Bitboard::from_square(sq))
            }),
            soldier_chain: p.soldier_chain,
            cannon_horse_battery: p.cannon_horse_battery,
            palace_weak_point: p.palace_weak_point,
        }
    }

    /// The score of `pos` for the side to move (cp).
    pub fn evaluate(&self, pos: &Position) -> i32 {
        self.evaluate_with(pos, self.psq(pos))
    }

    /// The score of `pos` for the side to move (cp), given its piece-square sum
    /// `psq` (which must equal [`Evaluator::psq`] of `pos`).
    pub fn evaluate_with(&self, pos: &Position, psq: Psq) -> i32 {
        let red = self.side(pos, Color::Red);
        let black = self.side(pos, Color::Black);
        let weak = |us: Color, enemy_reach: Bitboard| {
            (enemy_reach & !self.palace_guard(pos, us)).count() as i32 * self.palace_weak_point
        };
        let score = psq + red.score - black.score + weak(Color::Red, black.palace_reach)
            - weak(Color::Black, red.palace_reach);
        let stm = match pos.side_to_move() {
            Color::Red => score,
            Color::Black => -score,
        };
        stm + self.tempo
    }

    /// The piece-square sum of `pos`, from scratch.
    pub fn psq(&self, pos: &Position) -> Psq {
        pos.occupied().map(|sq| self.psq_at(pos, sq)).sum()
    }

    /// The piece-square sum after `pos` has changed only on `a` and `b` (as a move
    /// changes its two points), given the sum `psq` and the pieces `before` that
    /// stood on them.
    pub fn psq_after(&self, psq: Psq, before: Psq, pos: &Position, a: Square, b: Square) -> Psq {
        psq - before + self.psq_at(pos, a) + self.psq_at(pos, b)
    }

    /// The signed piece-square value of what stands on `sq` (Red positive; 0 when
    /// empty).
    #[inline]
    pub fn psq_at(&self, pos: &Position, sq: Square) -> Psq {
        match pos.piece_at(sq) {
            Some(p) if p.color() == Color::Red => self.pst[p.index()][sq.index()],
            Some(p) => -self.pst[p.index()][sq.index()],
            None => 0,
        }
    }

    /// The points of `us`'s palace that its advisors or its general guard.
    fn palace_guard(&self, pos: &Position, us: Color) -> Bitboard {
        let general = Bitboard(attacks::GENERAL_STEPS[pos.general(us).index()]);
        pos.pieces(us, Kind::Advisor).fold(general, |g, sq| {
            g | Bitboard(attacks::ADVISOR_STEPS[sq.index()])
        }) & self.palaces[us.index()]
    }

    /// `us`'s share of the score beyond the piece-square sum and the palace
    /// points its horses, chariots and cannons reach.
    fn side(&self, pos: &Position, us: Color) -> Side {
        let occ = pos.occupied();
        let own = pos.color_bb(us);
        let soldiers = pos.kind_bb(Kind::Soldier);
        let their_general = pos.general(!us);
        let their_palace = self.palaces[(!us).index()];
        let mut score = 0;
        let mut palace_points = 0;
        let mut palace_attackers = 0;
        let mut palace_reach = Bitboard::EMPTY;
        let movers = own
            & (pos.kind_bb(Kind::Horse)
                | pos.kind_bb(Kind::Chariot)
                | pos.kind_bb(Kind::Cannon)
                | (pos.kind_bb(Kind::Elephant) & pos.converted_bb()));
        for sq in movers {
            let Some(piece) = pos.piece_at(sq) else {
                continue;
            };
            let kind = piece.kind();
            let targets = match kind {
                Kind::Chariot | Kind::Cannon => {
                    let (rook, cannon) = attacks::slider_targets(
                        sq,
                        attacks::rank_occupancy(occ, sq.rank().index()),
                        pos.file_occupancy(sq.file().index()),
                    );
                    if kind == Kind::Chariot {
                        rook
                    } else {
                        (rook & !occ) | cannon
                    }
                }
                _ => pos.attacks_from(sq, piece, occ),
            };
            let n = (targets & !own).count() as i32;
            score += n * self.mobility[kind.index()];
            if kind != Kind::Elephant {
                let reach = targets & their_palace;
                let hits = reach.count() as i32;
                palace_points += hits;
                palace_attackers += i32::from(hits > 0);
                palace_reach |= reach;
            }
            match kind {
                Kind::Chariot if (self.files[sq.file().index()] & soldiers).is_empty() => {
                    score += self.chariot_open_file;
                }
                Kind::Cannon => score += self.cannon_patterns(pos, us, sq, their_general),
                _ => {}
            }
        }
        score += palace_points * self.palace_attack
            + (palace_attackers - 1).max(0) * self.palace_attackers;
        let theirs = pos.color_bb(!us);
        if (theirs & pos.kind_bb(Kind::Horse)).any() && (theirs & pos.kind_bb(Kind::Cannon)).any() {
            let advisors = pos.pieces(us, Kind::Advisor).count().min(2) as i32;
            let elephants = (pos.pieces(us, Kind::Elephant) & !pos.converted_bb())
                .count()
                .min(2) as i32;
            score -=
                (2 - advisors) * self.advisor_missing + (2 - elephants) * self.elephant_missing;
        }
        let soldiers = pos.pieces(us, Kind::Soldier);
        let pairs = soldiers & self.chain_starts[us.index()] & Bitboard(soldiers.bits() >> 1);
        score += pairs.count() as i32 * self.soldier_chain;
        Side {
            score,
            palace_reach,
        }
    }

    /// Hollow, central and bottom cannon terms, and the horse–cannon battery, for
    /// `us`'s cannon on `sq`.
    fn cannon_patterns(&self, pos: &Position, us: Color, sq: Square, general: Square) -> i32 {
        let mut v = 0;
        let (lo, hi) = if sq < general {
            (sq.index(), general.index())
        } else {
            (general.index(), sq.index())
        };
        let strictly_between = ((1u128 << hi) - 1) & !((1u128 << (lo + 1)) - 1);
        let line = if sq.file() == general.file() {
            Some(self.files[sq.file().index()].bits())
        } else if sq.rank() == general.rank() {
            Some(strictly_between)
        } else {
            None
        };
        if let Some(line) = line {
            let between = Bitboard(line & strictly_between & pos.occupied().bits());
            if sq.file() == general.file() {
                v += if between.is_empty() {
                    self.hollow_cannon
                } else {
                    self.central_cannon
                };
            }
            if between.count() == 2 && (between & pos.pieces(us, Kind::Horse)).any() {
                v += self.cannon_horse_battery;
            }
        }
        let back = sq.rank().relative_to(us) == 9;
        if back && general.rank() == sq.rank() {
            v += self.bottom_cannon;
        }
        v
    }
}

/// One side's terms beyond the piece-square sum.
struct Side {
    /// Its share of the score (cp, from its own point of view).
    score: i32,
    /// The points of the enemy palace its horses, chariots and cannons reach.
    palace_reach: Bitboard,
}

/// Material plus piece-square value of an unconverted `kind` of `color` on `sq`.
fn square_value(p: &Params, color: Color, kind: Kind, sq: Square) -> i32 {
    let rr = i32::from(sq.rank().relative_to(color));
    let f = sq.file().index() as i32;
    let from_edge = f.min(8 - f);
    match kind {
        Kind::General => {
            if rr > 0 {
                -p.general_raised_penalty
            } else {
                0
            }
        }
        Kind::Advisor => p.advisor_value,
        Kind::Elephant => p.elephant_value,
        Kind::Horse => {
            let advance = if (5..=8).contains(&rr) { rr - 4 } else { 0 };
            let heart = if rr == 1 && f == 4 {
                p.palace_heart_horse
            } else {
                0
            };
            p.horse_value + p.horse_center * from_edge + p.horse_advance * advance + heart
        }
        Kind::Chariot => {
            p.chariot_value
                + if f == 3 || f == 5 {
                    p.chariot_rib_file
                } else {
                    0
                }
        }
        Kind::Cannon => p.cannon_value + if f == 4 { p.cannon_center_file } else { 0 },
        Kind::Soldier => {
            if rr <= 4 {
                p.soldier_home_value
            } else if rr == 9 {
                p.soldier_crossed_value - p.soldier_bottom_penalty
            } else {
                let center = if (3..=5).contains(&f) {
                    p.soldier_center
                } else {
                    0
                };
                p.soldier_crossed_value + p.soldier_advance * (rr - 5) + center
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Along random games, with and without capture conversion (which changes
        /// the mover's own point too), the sum kept move by move equals the sum
        /// from scratch, and so does the evaluation built on it.
        #[test]
        fn piece_square_sum_follows_every_move(
            choices in prop::collection::vec(any::<prop::sample::Index>(), 0..120),
            conversion in any::<bool>(),
        ) {
            let e = Evaluator::new(&Params::default());
            let mut pos = Position::startpos();
            pos.set_conversion(conversion);
            let mut psq = e.psq(&pos);
            for choice in choices {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = *choice.get(&moves);
                let before = e.psq_at(&pos, mv.from()) + e.psq_at(&pos, mv.to());
                pos.make(mv);
                psq = e.psq_after(psq, before, &pos, mv.from(), mv.to());
                prop_assert_eq!(psq, e.psq(&pos), "{}", pos.to_fen());
                prop_assert_eq!(e.evaluate_with(&pos, psq), e.evaluate(&pos));
            }
        }
    }

    fn mirror(fen: &str) -> String {
        let mut parts = fen.split(' ');
        let board = parts.next().unwrap_or_default();
        let side = parts.next().unwrap_or("w");
        let ranks: Vec<String> = board
            .split('/')
            .rev()
            .map(|r| {
                r.chars()
                    .map(|c| {
                        if c.is_ascii_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect()
            })
            .collect();
        let side = if side == "b" { "w" } else { "b" };
        format!("{} {side} - - 0 1", ranks.join("/"))
    }

    #[test]
    fn start_position_is_balanced_and_colour_symmetric() {
        let e = Evaluator::new(&Params::default());
        let start = Position::startpos();
        assert_eq!(e.evaluate(&start), Params::default().tempo);
        for fen in [
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1",
            "3k5/4a4/4b4/9/2p6/9/9/2NAB4/4C4/3AK4 w - - 0 1",
            "4k4/9/4b4/9/9/2B~6/9/9/4A4/3AK4 w - - 0 1",
        ] {
            let a = Position::from_fen(fen).unwrap();
            let b = Position::from_fen(&mirror(fen)).unwrap();
            assert_eq!(e.evaluate(&a), e.evaluate(&b), "{fen}");
        }
    }

    /// The default parameters with every shape term of issue 36 switched on.
    fn with_shapes() -> Params {
        Params {
            chariot_rib_file: 11,
            palace_heart_horse: -23,
            soldier_chain: 13,
            cannon_horse_battery: 29,
            palace_weak_point: -7,
            ..Params::default()
        }
    }

    /// The defaults with every shape term of issue 36 at weight 0.
    fn without_shapes() -> Params {
        Params {
            chariot_rib_file: 0,
            palace_heart_horse: 0,
            soldier_chain: 0,
            cannon_horse_battery: 0,
            palace_weak_point: 0,
            ..Params::default()
        }
    }

    /// `fen`'s evaluation with `with` minus that without the shapes (cp, side to move).
    fn gain(fen: &str, with: &Params) -> i32 {
        let pos = Position::from_fen(fen).unwrap();
        Evaluator::new(with).evaluate(&pos) - Evaluator::new(&without_shapes()).evaluate(&pos)
    }

    #[test]
    fn shape_terms_are_colour_symmetric() {
        let e = Evaluator::new(&with_shapes());
        for fen in [
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
            "3k5/4a4/4b4/2PP5/9/9/9/3R5/4N4/3AKC3 w - - 0 1",
            "2bakab2/9/4N4/3R5/9/9/9/4C4/9/4K4 b - - 0 1",
        ] {
            let a = Position::from_fen(fen).unwrap();
            let b = Position::from_fen(&mirror(fen)).unwrap();
            assert_eq!(e.evaluate(&a), e.evaluate(&b), "{fen}");
        }
    }

    #[test]
    fn each_shape_term_counts_where_it_applies() {
        let p = with_shapes();
        let only = |f: fn(&mut Params, &Params)| {
            let mut q = without_shapes();
            f(&mut q, &p);
            q
        };
        // A red chariot on the d file; on the e file it is not on a rib.
        let rib = only(|q, p| q.chariot_rib_file = p.chariot_rib_file);
        assert_eq!(gain("5k3/9/9/9/9/9/9/3R5/9/4K4 w", &rib), 11);
        assert_eq!(gain("5k3/9/9/9/9/9/9/4R4/9/4K4 w", &rib), 0);
        // A red horse on e1, the palace centre; on d1 it is not.
        let heart = only(|q, p| q.palace_heart_horse = p.palace_heart_horse);
        assert_eq!(gain("5k3/9/9/9/9/9/9/9/4N4/3K5 w", &heart), -23);
        assert_eq!(gain("5k3/9/9/9/9/9/9/9/3N5/4K4 w", &heart), 0);
        // Three red soldiers side by side across the river: two pairs. A soldier on
        // i5 and one on a6 are next to each other in the board's order only.
        let chain = only(|q, p| q.soldier_chain = p.soldier_chain);
        assert_eq!(gain("3k5/9/9/2PPP4/9/9/9/9/9/4K4 w", &chain), 26);
        assert_eq!(gain("3k5/9/9/P8/8P/9/9/9/9/4K4 w", &chain), 0);
        // A red cannon on the black general's file behind an advisor and a red horse:
        // the horse moving uncovers check. With a third piece between, no battery.
        let battery = only(|q, p| q.cannon_horse_battery = p.cannon_horse_battery);
        assert_eq!(gain("4k4/4a4/9/9/4N4/9/9/4C4/9/3K5 w", &battery), 29);
        assert_eq!(gain("4k4/4a4/9/4p4/4N4/9/9/4C4/9/3K5 w", &battery), 0);
        // The same along the general's rank.
        assert_eq!(gain("C1Nak4/9/9/9/9/9/9/9/9/3K5 w", &battery), 29);
        // A red chariot on d3 reaches d7, d8 and d9 in Black's palace; the general on
        // e9 guards d9, so d8 and d7 are weak (Black's loss, Red's gain). An advisor
        // on e8 guards d7 too.
        let weak = only(|q, p| q.palace_weak_point = p.palace_weak_point);
        assert_eq!(gain("4k4/9/9/9/9/9/3R5/9/9/5K3 w", &weak), 14);
        assert_eq!(gain("4k4/4a4/9/9/9/9/3R5/9/9/5K3 w", &weak), 7);
    }

    #[test]
    fn material_and_patterns_count() {
        let p = Params::default();
        let e = Evaluator::new(&p);
        let up = Position::from_fen("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1").unwrap();
        assert!(e.evaluate(&up) > 900);
        let hollow = Position::from_fen("4k4/9/9/9/9/9/9/9/4C4/3K5 w - - 0 1").unwrap();
        let off = Position::from_fen("4k4/9/9/9/9/9/9/9/3C5/3K5 w - - 0 1").unwrap();
        assert!(e.evaluate(&hollow) - e.evaluate(&off) >= p.hollow_cannon);
    }
}
