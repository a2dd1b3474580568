//! Reading a data file into linear models: streaming, line by line, in
//! batches that all cores resolve in parallel, each position to its quiet
//! position and its row, split deterministically into training and held-out
//! positions.

use std::io::BufRead;
use std::time::Instant;

use rayon::prelude::*;
use xq_engine::eval::Evaluator;
use xq_engine::{Color, Params};

use super::linear::{Basis, NonLinear, Row};
use super::quiet::resolve;
use super::rows::Rows;
use super::selection::Selection;
use crate::data::{DataError, Sample};

/// Lines read before a batch is resolved.
const BATCH: usize = 1 << 15;

/// The share of positions held out from fitting. Invariant: in `0..1`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Holdout(f64);

/// A hold-out share outside `0..1`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("hold-out share {0} is not in 0..1 (0.1 holds out a tenth of the positions)")]
pub struct HoldoutError(pub f64);

impl Holdout {
    pub const DEFAULT: Holdout = Holdout(0.1);

    pub fn new(share: f64) -> Result<Holdout, HoldoutError> {
        if (0.0..1.0).contains(&share) {
            Ok(Holdout(share))
        } else {
            Err(HoldoutError(share))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// Whether the position with Zobrist key `hash` is held out: the same
    /// position always falls on the same side, whatever file it comes from.
    pub fn holds_out(self, hash: u64) -> bool {
        let mut z = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 11) as f64 / (1u64 << 53) as f64) < self.0
    }
}

/// Why a data file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("line {line}: {source}")]
    Data { line: u64, source: DataError },
    #[error("line {line}: {source}")]
    NonLinear { line: u64, source: NonLinear },
    #[error("line {line}: {source}")]
    Io { line: u64, source: std::io::Error },
}

/// The positions of a data file, ready to fit.
#[derive(Clone, Debug, Default)]
pub struct Data {
    pub train: Rows,
    pub holdout: Rows,
    /// Samples whose quiet position is in check, left out.
    pub in_check: u64,
    /// Samples read (blank lines are skipped).
    pub samples: u64,
    /// Wall time of reading and resolving (s).
    pub seconds: f64,
}

/// One resolved sample: `None` when left out (in check).
type Resolved = Option<(bool, Row, i32, f64)>;

/// Reads `fen | score | result` lines from `input` (blank lines skipped),
/// resolving each position to its quiet position under `start` and modelling
/// its evaluation in `selection`'s parameters.
pub fn load(
    input: impl BufRead,
    start: &Params,
    selection: &Selection,
    holdout: Holdout,
) -> Result<Data, LoadError> {
    let clock = Instant::now();
    let eval = Evaluator::new(start);
    let basis = Basis::new(start, selection);
    let mut data = Data::default();
    let mut batch: Vec<(u64, String)> = Vec::with_capacity(BATCH);
    let mut lines = input.lines();
    let mut number = 0u64;
    loop {
        let next = lines.next();
        let end = next.is_none();
        if let Some(line) = next {
            number += 1;
            match line {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => batch.push((number, text)),
                Err(source) => {
                    return Err(LoadError::Io {
                        line: number,
                        source,
                    });
                }
            }
        }
        if batch.len() == BATCH || (end && !batch.is_empty()) {
            let resolved: Vec<Result<Resolved, LoadError>> = batch
                .par_iter()
                .map(|(line, text)| one(*line, text, start, &eval, &basis, holdout))
                .collect();
            for r in resolved {
                data.samples += 1;
                match r? {
                    Some((true, row, score, points)) => data.holdout.push(row, score, points),
                    Some((false, row, score, points)) => data.train.push(row, score, points),
                    None => data.in_check += 1,
                }
            }
            batch.clear();
        }
        if end {
            break;
        }
    }
    data.seconds = clock.elapsed().as_secs_f64();
    Ok(data)
}

fn one(
    line: u64,
    text: &str,
    start: &Params,
    eval: &Evaluator,
    basis: &Basis,
    holdout: Holdout,
) -> Result<Resolved, LoadError> {
    let sample: Sample = text
        .parse()
        .map_err(|source| LoadError::Data { line, source })?;
    let Some(leaf) = resolve(&sample.position, eval, start) else {
        return Ok(None);
    };
    let row = basis
        .row(&leaf)
        .map_err(|source| LoadError::NonLinear { line, source })?;
    let us = leaf.side_to_move();
    let score = match us {
        Color::Red => sample.score,
        Color::Black => -sample.score,
    };
    let held = holdout.holds_out(leaf.hash());
    Ok(Some((held, row, score, sample.result.points_for(us))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texel::logistic::{Lambda, Scale};

    const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

    fn read(text: &str, share: f64) -> Result<Data, LoadError> {
        let selection = Selection::parse("horse_value,tempo").unwrap();
        load(
            text.as_bytes(),
            &Params::default(),
            &selection,
            Holdout::new(share).unwrap(),
        )
    }

    #[test]
    fn bad_lines_are_reported_with_their_number() {
        let text = format!("{START} | 10 | 0.5\n\n{START} | 10 | 2.0\n{START} | x | 1\n");
        let e = read(&text, 0.0).unwrap_err().to_string();
        assert!(e.starts_with("line 3: bad result '2.0'"), "{e}");
        let e = read("\n\nnot a line\n", 0.0).unwrap_err().to_string();
        assert!(
            e.starts_with("line 3: expected 'fen | score | result'"),
            "{e}"
        );
        let bytes = [START.as_bytes(), b" | 1 | 1\n\xff\xfe | 1 | 1\n"].concat();
        let e = load(
            &bytes[..],
            &Params::default(),
            &Selection::all(),
            Holdout::DEFAULT,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("line 2: "), "{e}");
    }

    #[test]
    fn positions_are_oriented_to_the_quiet_sides_move() {
        // Red to move takes a hanging chariot: the quiet position has Black to
        // move, so Red's +300 and Red's win become -300 and 0 points.
        let text = "3k5/9/4r4/9/9/4R4/9/9/9/5K3 w - - 0 1 | 300 | 1.0\n";
        let data = read(text, 0.0).unwrap();
        assert_eq!(
            (data.samples, data.train.len(), data.holdout.len()),
            (1, 1, 0)
        );
        let g = data.train.gradient(
            Scale::new(1.0).unwrap(),
            Lambda::new(1.0).unwrap(),
            &[0.0, 0.0],
        );
        // Black to move, a chariot down: its evaluation and score are negative
        // and near each other, the error small.
        assert!(data.train.evaluation(0, &[0.0, 0.0]) < -500.0);
        assert!(g.loss < 0.05, "{}", g.loss);
        let by_result = data
            .train
            .loss(Scale::new(1.0).unwrap(), Lambda::RESULT, &[0.0, 0.0]);
        assert!(by_result < 0.01, "{by_result}");
        let check = "3k5/9/9/9/9/9/9/9/3R5/4K4 b - - 0 1 | 900 | 1.0\n";
        assert_eq!(read(check, 0.0).unwrap().in_check, 1);
    }

    #[test]
    fn the_split_is_deterministic_and_near_its_share() {
        let h = Holdout::new(0.1).unwrap();
        let held = (0..100_000u64)
            .filter(|i| h.holds_out(i.wrapping_mul(0x2545_f491_4f6c_dd1d)))
            .count();
        assert!((9_000..11_000).contains(&held), "{held}");
        assert!(!Holdout::new(0.0).unwrap().holds_out(12345));
        assert!(Holdout::new(1.0).is_err() && Holdout::new(-0.5).is_err());
        assert!(Holdout::new(1.0).unwrap_err().to_string().contains("0..1"));
    }
}
