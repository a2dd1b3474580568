//! The transposition table: power-of-two cache-line buckets of five entries, depth-preferred
//! replacement with ageing, mate scores stored relative to the node.
//!
//! Shared by the threads of one search without locks: an entry is a 64-bit
//! data word and a 32-bit check word (the key xor both halves of the data),
//! each written and read atomically. A read that meets half of one write and
//! half of another fails the check and is a miss (a false hit needs a 32-bit
//! coincidence, and its move is checked for legality before use).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

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

/// One entry, unpacked. `key` is the upper 32 bits of the position hash (the
/// lower bits pick the bucket); `gen_bound` packs the search generation (bits
/// 2–7) and the bound (bits 0–1, 0 = empty).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    key: u32,
    mv: u16,
    score: i16,
    eval: i16,
    depth: u8,
    gen_bound: u8,
}

impl Entry {
    fn is_empty(&self) -> bool {
        self.gen_bound & 3 == 0
    }

    /// Everything but the key: move (bits 0–15), score (16–31), eval (32–47),
    /// depth (48–55), generation and bound (56–63).
    fn data(&self) -> u64 {
        u64::from(self.mv)
            | u64::from(self.score as u16) << 16
            | u64::from(self.eval as u16) << 32
            | u64::from(self.depth) << 48
            | u64::from(self.gen_bound) << 56
    }

    fn from_words(check: u32, data: u64) -> Entry {
        Entry {
            key: check ^ fold(data),
            mv: data as u16,
            score: (data >> 16) as u16 as i16,
            eval: (data >> 32) as u16 as i16,
            depth: (data >> 48) as u8,
            gen_bound: (data >> 56) as u8,
        }
    }
}

/// The two halves of a data word, xored.
fn fold(data: u64) -> u32 {
    (data as u32) ^ ((data >> 32) as u32)
}

/// Entries per bucket: five 12-byte entries fill one 64-byte cache line.
const BUCKET: usize = 5;

/// One cache line of entries: data words, then check words.
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Bucket {
    data: [AtomicU64; BUCKET],
    check: [AtomicU32; BUCKET],
}

impl Bucket {
    fn load(&self, slot: usize) -> Entry {
        let data = self.data[slot].load(Relaxed);
        Entry::from_words(self.check[slot].load(Relaxed), data)
    }

    fn save(&self, slot: usize, e: &Entry) {
        let data = e.data();
        self.data[slot].store(data, Relaxed);
        self.check[slot].store(e.key ^ fold(data), Relaxed);
    }
}

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
/// that fits. Probes and stores take `&self` (see the module's note on sharing).
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
            buckets: (0..n).map(|_| Bucket::default()).collect(),
            generation: 0,
        }
    }

    /// Empties the table.
    pub fn clear(&mut self) {
        for b in &mut self.buckets {
            *b = Bucket::default();
        }
        self.generation = 0;
    }

    /// Starts a new search: older entries become preferred victims.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    fn bucket(&self, hash: u64) -> &Bucket {
        &self.buckets[(hash as usize) & (self.buckets.len() - 1)]
    }

    /// The entry for `hash`, if stored.
    pub fn probe(&self, hash: u64, ply: usize) -> Option<Hit> {
        let key = (hash >> 32) as u32;
        let bucket = self.bucket(hash);
        let e = (0..BUCKET)
            .map(|s| bucket.load(s))
            .find(|e| e.key == key && !e.is_empty())?;
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
        &self,
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
        let bucket = self.bucket(hash);
        let entries: [Entry; BUCKET] = std::array::from_fn(|s| bucket.load(s));
        let age = |e: &Entry| i32::from((generation.wrapping_sub(e.gen_bound >> 2)) & 63);
        let slot = match entries.iter().position(|e| e.key == key && !e.is_empty()) {
            Some(s) => s,
            None => (0..BUCKET)
                .min_by_key(|&s| {
                    let e = &entries[s];
                    if e.is_empty() {
                        i32::MIN
                    } else {
                        i32::from(e.depth) - 8 * age(e)
                    }
                })
                .unwrap_or(0),
        };
        let e = &entries[slot];
        let same = e.key == key && !e.is_empty();
        if same && bound != Bound::Exact && depth + 2 < i32::from(e.depth) && age(e) == 0 {
            return;
        }
        let raw = match mv {
            Some(m) => m.raw(),
            None if same => e.mv,
            None => 0,
        };
        bucket.save(
            slot,
            &Entry {
                key,
                mv: raw,
                score: to_tt(score, ply) as i16,
                eval: eval.clamp(-30_000, 30_000) as i16,
                depth: depth.clamp(0, 255) as u8,
                gen_bound: (generation << 2) | bound as u8,
            },
        );
    }

    /// Permille of the first 1000 buckets' entries written in this search.
    pub fn hashfull(&self) -> u32 {
        let n = self.buckets.len().min(1000);
        let used: usize = self.buckets[..n]
            .iter()
            .flat_map(|b| (0..BUCKET).map(move |s| b.load(s)))
            .filter(|e| !e.is_empty() && e.gen_bound >> 2 == self.generation)
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
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
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

    #[test]
    fn a_torn_entry_is_a_miss() {
        let tt = Tt::new(1);
        let (a, b) = (0x1111_2222_0000_0007u64, 0x3333_4444_0000_0007u64);
        tt.store(a, 0, Move::parse_coords("h2e2"), 10, 5, 3, Bound::Lower);
        let bucket = tt.bucket(a);
        let slot = (0..BUCKET).find(|&s| !bucket.load(s).is_empty()).unwrap();
        let first = bucket.data[slot].load(Relaxed);
        tt.store(b, 0, Move::parse_coords("b2e2"), -10, -5, 9, Bound::Exact);
        let slot_b = (0..BUCKET)
            .find(|&s| bucket.load(s).key == (b >> 32) as u32)
            .unwrap();
        assert!(tt.probe(a, 0).is_some() && tt.probe(b, 0).is_some());
        // The data of one write beside the check of another.
        bucket.data[slot_b].store(first, Relaxed);
        assert!(tt.probe(b, 0).is_none());
    }

    #[test]
    fn entries_round_trip_through_their_words() {
        let e = Entry {
            key: 0xdead_beef,
            mv: 0x1234,
            score: -31_000,
            eval: 29_999,
            depth: 200,
            gen_bound: 0xfe,
        };
        let data = e.data();
        assert_eq!(Entry::from_words(e.key ^ fold(data), data), e);
    }
}
