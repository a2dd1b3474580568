//! Openings as the runner plays them: the sixteen traditional first moves
//! extended by random plies, or parsed opening lines (an [`OpeningBook`]
//! loaded from an [`xq_proto::OpeningSource`], whose module documents the
//! line format and the indexing).

use std::path::Path;
use std::sync::Arc;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_engine::params::Params;
use xq_engine::rules::RuleSet;
use xq_engine::search::{Limits, SearchRules, Searcher};
use xq_engine::{Move, Position};
use xq_proto::openings::parse_lines;
use xq_proto::{Opening, OpeningError, OpeningSource};

/// The sixteen first moves of engine/RULES.md §11: (name, Chinese notation, coordinates).
pub const FIRST_MOVES: [(&str, &str, &str); 16] = [
    ("当头炮", "炮二平五", "h2e2"),
    ("飞相局", "相三进五", "g0e2"),
    ("仙人指路", "兵七进一", "c3c4"),
    ("起马局", "马二进三", "h0g2"),
    ("过宫炮", "炮二平六", "h2d2"),
    ("仕角炮", "炮八平六", "b2d2"),
    ("上仕局", "仕四进五", "f0e1"),
    ("兵底炮", "炮二平三", "h2g2"),
    ("金钩炮", "炮二平七", "h2c2"),
    ("边马局", "马二进一", "h0i2"),
    ("九尾龟", "兵九进一", "a3a4"),
    ("巡河炮", "炮二进二", "h2h4"),
    ("边炮", "炮二平一", "h2i2"),
    ("龟背炮", "炮八退一", "b2b1"),
    ("过河炮", "炮二进四", "h2h6"),
    ("铁滑车", "车一进一", "i0i1"),
];

/// Why a lease's openings cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error(transparent)]
    Lines(#[from] OpeningError),
    #[error("opening book asset:{sha256}: {source}")]
    Asset {
        sha256: String,
        source: BookAssetError,
    },
}

/// What is wrong with a cached opening book.
#[derive(Debug, thiserror::Error)]
pub enum BookAssetError {
    #[error("cannot read its cached copy: {0}")]
    Read(std::io::Error),
    #[error("not UTF-8 text (at byte {offset})")]
    Utf8 { offset: usize },
    #[error("{0}")]
    Lines(OpeningError),
}

/// The order in which openings are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Opening `i` is line `i` (cycling).
    #[default]
    Sequential,
    /// A seeded shuffle of the lines (reshuffled each time the list is exhausted).
    Random,
}

/// A playable opening source: the built-in generator, or parsed lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningBook {
    /// The sixteen first moves, each followed by `random_plies` random legal plies.
    Builtin { random_plies: u32 },
    /// Parsed opening lines, each followed by `random_plies` random legal
    /// plies (none: the lines as they are).
    Lines {
        lines: Arc<[Opening]>,
        random_plies: u32,
    },
}

impl OpeningBook {
    /// The book of `source`; lines are parsed here (once per source: callers
    /// keep the book for as long as the source does not change). A book asset
    /// is read from its verified copy in the blob cache `cache`, at
    /// `<cache>/<sha256>` (the worker's `blob_cache` layout), which the
    /// caller has fetched.
    pub fn load(source: &OpeningSource, cache: &Path) -> Result<OpeningBook, BookError> {
        Ok(match source {
            OpeningSource::Builtin { random_plies } => OpeningBook::Builtin {
                random_plies: *random_plies,
            },
            OpeningSource::Lines {
                lines,
                random_plies,
            } => OpeningBook::Lines {
                lines: parse_lines(&lines.join("\n"))?.into(),
                random_plies: *random_plies,
            },
            OpeningSource::Book {
                sha256,
                random_plies,
            } => {
                let path = cache.join(sha256);
                let book = |source| BookError::Asset {
                    sha256: sha256.clone(),
                    source,
                };
                let text = std::fs::read(&path).map_err(|e| book(BookAssetError::Read(e)))?;
                let text = String::from_utf8(text).map_err(|e| {
                    book(BookAssetError::Utf8 {
                        offset: e.utf8_error().valid_up_to(),
                    })
                })?;
                OpeningBook::Lines {
                    lines: parse_lines(&text)
                        .map_err(|e| book(BookAssetError::Lines(e)))?
                        .into(),
                    random_plies: *random_plies,
                }
            }
        })
    }

    /// Opening number `index` for `seed` and `order`. `balanced` judges a
    /// candidate after its random plies (e.g. a search within a margin);
    /// rejected plies are redrawn, up to a fixed number of tries after which
    /// the last candidate is kept. Lines without random plies are taken as
    /// they are.
    pub fn opening(
        &self,
        seed: u64,
        order: Order,
        index: u64,
        balanced: &mut dyn FnMut(&Position) -> bool,
    ) -> Opening {
        match self {
            OpeningBook::Builtin { random_plies } => {
                let (name, _, coords) = FIRST_MOVES[pick(FIRST_MOVES.len(), seed, order, index)];
                let start = Position::startpos();
                let first = Move::parse_coords(coords).filter(|&m| start.is_legal(m));
                let first = Opening {
                    fen: xq_engine::START_FEN.to_string(),
                    moves: first.into_iter().collect(),
                    name: name.to_string(),
                };
                follow(first, *random_plies, stream_seed(seed, index), balanced)
            }
            OpeningBook::Lines {
                lines,
                random_plies: 0,
            } => lines[pick(lines.len(), seed, order, index)].clone(),
            OpeningBook::Lines {
                lines,
                random_plies,
            } => {
                let line = lines[pick(lines.len(), seed, order, index)].clone();
                follow(line, *random_plies, stream_seed(seed, index), balanced)
            }
        }
    }
}

/// Margin (cp) within which a generated opening counts as balanced.
pub const BALANCE_MARGIN: i32 = 150;
/// Depth of the search that judges a generated opening.
pub const BALANCE_DEPTH: u32 = 4;

/// Openings exactly as every runner plays them: [`OpeningBook::opening`]
/// with generated lines judged balanced by a depth-[`BALANCE_DEPTH`] search
/// (default parameters, standard rules) within ±[`BALANCE_MARGIN`] cp. The
/// coordinator regenerates a result's openings with it to check them.
///
/// The probe's search (and its hash table) is made on the first generated
/// line, so a maker that only reads a book's lines costs nothing.
#[derive(Debug, Default)]
pub struct OpeningMaker {
    probe: Option<Searcher>,
}

impl OpeningMaker {
    /// Opening number `index` of `book` for `seed` and `order`.
    pub fn opening(&mut self, book: &OpeningBook, seed: u64, order: Order, index: u64) -> Opening {
        let rules = SearchRules::from(&RuleSet::STANDARD);
        let probe = &mut self.probe;
        let mut balanced = |pos: &Position| {
            let probe = probe.get_or_insert_with(|| Searcher::new(1));
            probe.clear();
            let mut p = pos.clone();
            let r = probe.search(
                &mut p,
                &[],
                &Limits::depth(BALANCE_DEPTH),
                &Params::default(),
                &rules,
                |_| {},
            );
            r.score.abs() <= BALANCE_MARGIN
        };
        book.opening(seed, order, index, &mut balanced)
    }
}

/// A per-opening random stream, independent of every other index.
fn stream_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The entry of a list of `len` taken as opening `index`.
fn pick(len: usize, seed: u64, order: Order, index: u64) -> usize {
    let len64 = len as u64;
    match order {
        Order::Sequential => (index % len64) as usize,
        Order::Random => {
            let round = index / len64;
            let mut perm: Vec<usize> = (0..len).collect();
            perm.shuffle(&mut ChaCha8Rng::seed_from_u64(stream_seed(seed, round)));
            perm[(index % len64) as usize]
        }
    }
}

const MAX_TRIES: u32 = 32;

/// `opening` followed by `plies` random legal plies drawn from `seed`,
/// redrawn until `balanced` accepts the position (at most [`MAX_TRIES`]
/// draws; the last is kept).
fn follow(
    opening: Opening,
    plies: u32,
    seed: u64,
    balanced: &mut dyn FnMut(&Position) -> bool,
) -> Opening {
    let start = opening.position();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut best = Vec::new();
    for _ in 0..MAX_TRIES {
        let mut pos = start.clone();
        let mut moves = opening.moves.clone();
        for _ in 0..plies {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[rng.random_range(0..legal.len())];
            pos.make(mv);
            moves.push(mv);
        }
        let ok = pos.has_legal_move() && balanced(&pos);
        best = moves;
        if ok {
            break;
        }
    }
    Opening {
        moves: best,
        ..opening
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn any(_: &Position) -> bool {
        true
    }

    #[test]
    fn builtin_openings_are_reproducible_and_legal() {
        let src = OpeningBook::Builtin { random_plies: 6 };
        for i in 0..40 {
            let a = src.opening(7, Order::Sequential, i, &mut any);
            assert_eq!(a, src.opening(7, Order::Sequential, i, &mut any));
            assert_eq!(a.moves.len(), 7);
            assert_eq!(a.moves[0].to_string(), FIRST_MOVES[(i % 16) as usize].2);
            assert_eq!(a.name, FIRST_MOVES[(i % 16) as usize].0);
            let mut pos = Position::startpos();
            for &mv in &a.moves {
                assert!(pos.is_legal(mv));
                pos.make(mv);
            }
        }
        let other = src.opening(8, Order::Sequential, 0, &mut any);
        assert_ne!(
            other.moves,
            src.opening(7, Order::Sequential, 0, &mut any).moves
        );
    }

    #[test]
    fn random_order_visits_every_first_move_once_per_round() {
        let src = OpeningBook::Builtin { random_plies: 0 };
        let mut firsts: Vec<String> = (16..32)
            .map(|i| src.opening(3, Order::Random, i, &mut any).name)
            .collect();
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), 16);
    }

    #[test]
    fn lines_are_followed_by_their_random_plies() {
        let lines: Arc<[Opening]> = parse_lines(
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7\n\
             4k4/9/9/9/9/9/9/9/4A4/3AK4 w - - 0 1\n",
        )
        .unwrap()
        .into();
        let plain = OpeningBook::Lines {
            lines: Arc::clone(&lines),
            random_plies: 0,
        };
        let followed = OpeningBook::Lines {
            lines: Arc::clone(&lines),
            random_plies: 5,
        };
        let mut seen = HashSet::new();
        for i in 0..20 {
            let line = &lines[(i % 2) as usize];
            assert_eq!(&plain.opening(3, Order::Sequential, i, &mut any), line);
            let o = followed.opening(3, Order::Sequential, i, &mut any);
            assert_eq!(o, followed.opening(3, Order::Sequential, i, &mut any));
            assert_eq!((&o.fen, &o.name), (&line.fen, &line.name));
            assert_eq!(o.moves[..line.moves.len()], line.moves[..]);
            let mut pos = Position::from_fen(&o.fen).unwrap();
            for &mv in &o.moves {
                assert!(pos.is_legal(mv), "opening {i}: {mv}");
                pos.make(mv);
            }
            if i % 2 == 0 {
                assert_eq!(o.moves.len(), line.moves.len() + 5);
                seen.insert(o.moves);
            }
        }
        assert!(seen.len() > 5, "the plies differ from opening to opening");
    }

    #[test]
    fn the_balance_check_redraws_lines() {
        let src = OpeningBook::Builtin { random_plies: 4 };
        let mut no_capture = |p: &Position| p.fullmove_number() == 3 && p.halfmove_clock() == 5;
        let o = src.opening(1, Order::Sequential, 0, &mut no_capture);
        assert!(no_capture(&o.position()));
    }
}
