//! The transposition table: power-of-two cache-line buckets of five entries, depth-preferred
//! replacement with ageing, mate scores stored relative to the node.

use super::{MATE_BOUND, Score};
use crate::Move;

/// What the stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true value is at most the score (fail low).
    Upper = 1,
    /// The true value is at least the score (fail high).
    Lower = 2,
    Exact = 3,
}

/// One entry. `key` is the upper 32 bits of the position hash (the lower bits pick
/// the bucket); `gen_bound` packs the search generation (bits 2–7) and the bound
/// (bits 0–1, 0 = empty).
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u32,
    mv: u16,
    score: i16,
    eval: i16,
    depth: u8,
    gen_bound: u8,
}

/// Entries per bucket: five 12-byte entries fill one 64-byte cache line.
const BUCKET: usize = 5;

/// One cache line of entries.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Bucket([Entry; BUCKET]);

/// A probe hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub mv: Option<Move>,
    /// Score adjusted to the probing node's ply.
    pub score: Score,
    /// Static evaluation of the position (cp).
    pub eval: Score,
    /// Remaining depth of the search that stored it (plies).
    pub depth: i32,
    pub bound: Bound,
}

/// The table. Its size is set in MB; the bucket count is the largest power of two
/// that fits.
#[derive(Debug)]
pub struct Tt {
    buckets: Vec<Bucket>,
    generation: u8,
}

impl Tt {
    /// A table of at most `mb` megabytes (at least one bucket).
    pub fn new(mb: usize) -> Tt {
        let bytes = mb.max(1) << 20;
        let per = std::mem::size_of::<Bucket>();
        let mut n = 1usize;
        while n * 2 * per <= bytes {
            n *= 2;
        }
        Tt {
            buckets: vec![Bucket::default(); n],
            generation: 0,
        }
    }

    /// Empties the table.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
        self.generation = 0;
    }

    /// Starts a new search: older entries become preferred victims.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    fn index(&self, hash: u64) -> usize {
        (hash as usize) & (self.buckets.len() - 1)
    }

    /// The entry for `hash`, if stored.
    pub fn probe(&self, hash: u64, ply: usize) -> Option<Hit> {
        let key = (hash >> 32) as u32;
        let bucket = &self.buckets[self.index(hash)].0;
        let e = bucket
            .iter()
            .find(|e| e.key == key && e.gen_bound & 3 != 0)?;
        let bound = match e.gen_bound & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            _ => Bound::Exact,
        };
        Some(Hit {
            mv: if e.mv == 0 {
                None
            } else {
                Move::from_raw(e.mv)
            },
            score: from_tt(Score::from(e.score), ply),
            eval: Score::from(e.eval),
            depth: i32::from(e.depth),
            bound,
        })
    }

    /// Stores a result. Replaces the same position's entry (keeping its move when
    /// the new result has none), else the entry with the least depth, entries of
    /// older searches counting 8 plies less.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        hash: u64,
        ply: usize,
        mv: Option<Move>,
        score: Score,
        eval: Score,
        depth: i32,
        bound: Bound,
    ) {
        let key = (hash >> 32) as u32;
        let generation = self.generation;
        let i = self.index(hash);
        let bucket = &mut self.buckets[i].0;
        let age = |e: &Entry| i32::from((generation.wrapping_sub(e.gen_bound >> 2)) & 63);
        let slot = match bucket
            .iter()
            .position(|e| e.key == key && e.gen_bound & 3 != 0)
        {
            Some(s) => s,
            None => (0..BUCKET)
                .min_by_key(|&s| {
                    let e = &bucket[s];
                    if e.gen_bound & 3 == 0 {
                        i32::MIN
                    } else {
                        i32::from(e.depth) - 8 * age(e)
                    }
                })
                .unwrap_or(0),
        };
        let e = &mut bucket[slot];
        let same = e.key == key && e.gen_bound & 3 != 0;
        if same && bound != Bound::Exact && depth + 2 < i32::from(e.depth) && age(e) == 0 {
            return;
        }
        let raw = match mv {
            Some(m) => m.raw(),
            None if same => e.mv,
            None => 0,
        };
        *e = Entry {
            key,
            mv: raw,
            score: to_tt(score, ply) as i16,
            eval: eval.clamp(-30_000, 30_000) as i16,
            depth: depth.clamp(0, 255) as u8,
            gen_bound: (generation << 2) | bound as u8,
        };
    }

    /// Permille of the first 1000 buckets' entries written in this search.
    pub fn hashfull(&self) -> u32 {
        let n = self.buckets.len().min(1000);
        let used: usize = self.buckets[..n]
            .iter()
            .flat_map(|b| b.0.iter())
            .filter(|e| e.gen_bound & 3 != 0 && e.gen_bound >> 2 == self.generation)
            .count();
        (used * 1000 / (n * BUCKET)) as u32
    }
}

/// A mate score counted from the root becomes one counted from this node.
fn to_tt(score: Score, ply: usize) -> Score {
    let ply = ply as Score;
    if score >= MATE_BOUND {
        score + ply
    } else if score <= -MATE_BOUND {
        score - ply
    } else {
        score
    }
}

/// Inverse of [`to_tt`].
fn from_tt(score: Score, ply: usize) -> Score {
    let ply = ply as Score;
    if score >= MATE_BOUND {
        score - ply
    } else if score <= -MATE_BOUND {
        score + ply
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE;

    #[test]
    fn store_probe_and_mate_adjustment() {
        let mut tt = Tt::new(1);
        let mv = Move::parse_coords("h2e2");
        tt.store(0xdead_beef_0000_0001, 3, mv, MATE - 7, 12, 5, Bound::Exact);
        let hit = tt.probe(0xdead_beef_0000_0001, 1).unwrap();
        assert_eq!(hit.mv, mv);
        assert_eq!(hit.score, MATE - 5);
        assert_eq!((hit.eval, hit.depth, hit.bound), (12, 5, Bound::Exact));
        assert!(tt.probe(0x1234_0000_0000_0001, 1).is_none());
        tt.clear();
        assert!(tt.probe(0xdead_beef_0000_0001, 1).is_none());
    }
}
