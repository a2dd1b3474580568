//! Match statistics: Elo estimates, the SPRT, variant comparison, the
//! bad-worker residual test ([`residuals`]) and SPSA ([`spsa`]).
//!
//! Everything here is pure: no I/O, no clocks, no global state. Randomness,
//! where a function needs it, is passed in as an [`rand::Rng`].
//!
//! # Representations
//!
//! * **WDL** ([`Wdl`]): wins, draws and losses counted from the point of view
//!   of the player under test (the "first player", e.g. the new engine or θ+).
//!   The fishtest-style *trinomial* vector derived from it is in ascending
//!   score order `[L, D, W]`, i.e. game scores 0, ½, 1.
//! * **Pentanomial** ([`Pentanomial`]): game pairs that share an opening, one
//!   game with each colour, counted as `[LL, LD+DL, LW+DD+WL, DW+WD, WW]`:
//!   pair scores 0, ½, 1, 1½, 2 from the first player's view.
//! * **Elo models** ([`EloModel`]): *logistic* Elo maps an expected score `s`
//!   to `-400·log10(1/s − 1)`; *normalized* Elo is `(800 / ln 10)·t` where
//!   `t = (s − ½)/σ` and σ is the standard deviation of one game's score
//!   (for pentanomial data, σ per game is `√2 ×` the pair-score standard
//!   deviation measured on the `[0, 1]` scale). Normalized Elo is independent
//!   of the draw ratio, so its SPRT bounds mean the same effort at any
//!   time control.
//! * **Regularization**: as in fishtest, a zero count is replaced by `1e-3`
//!   before any estimate, so all formulas stay finite on small or lopsided
//!   samples. An all-zero sample is an error.

pub mod bad_worker_sim;
pub mod distributions;
pub mod elo;
pub mod llr;
pub mod residuals;
pub mod roots;
pub mod sample;
pub mod sprt;
pub mod spsa;
pub mod variants;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The value that replaces a zero count before estimation (fishtest's
/// `regularize`).
pub const ZERO_COUNT_PRIOR: f64 = 1e-3;

/// Errors from the statistics layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A count list could not be parsed; `input` is the text as given.
    #[error("invalid {what} {input:?}: {reason}")]
    Parse {
        what: &'static str,
        input: String,
        reason: String,
    },
    /// All counts are zero: nothing can be estimated.
    #[error("no games: all counts are zero")]
    Empty,
    /// SPRT bounds are not strictly increasing or not finite.
    #[error("invalid elo bounds [{elo0}, {elo1}]: elo0 must be finite and below elo1")]
    InvertedBounds { elo0: f64, elo1: f64 },
    /// An error rate or probability outside its open interval.
    #[error("invalid {name} {value}: must lie strictly between 0 and 1")]
    Probability { name: &'static str, value: f64 },
    /// The constrained maximum-likelihood problem has no solution (e.g. a
    /// bound outside the range the observed outcomes can reach).
    #[error("no maximum-likelihood distribution with {what}")]
    NoSolution { what: String },
    /// Any other invalid argument, described in the message.
    #[error("{0}")]
    Invalid(String),
}

/// Game results from the first player's view. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    /// Number of games.
    pub fn games(&self) -> u64 {
        self.wins
            .saturating_add(self.draws)
            .saturating_add(self.losses)
    }

    /// Fishtest's trinomial order `[L, D, W]` (ascending score).
    pub fn trinomial(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }
}

/// Game-pair frequencies `[LL, LD+DL, LW+DD+WL, DW+WD, WW]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// Number of game pairs.
    pub fn pairs(&self) -> u64 {
        self.0.iter().fold(0, |acc, &c| acc.saturating_add(c))
    }
}

/// Either kind of sample; the estimators accept both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Results {
    Trinomial(Wdl),
    Pentanomial(Pentanomial),
}

impl Results {
    /// Counts in ascending score order: `[L, D, W]` or the pentanomial order.
    pub fn counts(&self) -> Vec<u64> {
        match self {
            Results::Trinomial(wdl) => wdl.trinomial().to_vec(),
            Results::Pentanomial(p) => p.0.to_vec(),
        }
    }

    /// Counts with zeros replaced by [`ZERO_COUNT_PRIOR`]; fails on an
    /// all-zero sample.
    pub fn regularized(&self) -> Result<Vec<f64>, StatsError> {
        let counts = self.counts();
        if counts.iter().all(|&c| c == 0) {
            return Err(StatsError::Empty);
        }
        Ok(counts
            .into_iter()
            .map(|c| if c == 0 { ZERO_COUNT_PRIOR } else { c as f64 })
            .collect())
    }

    /// Whether the sampling unit is a game pair.
    pub fn is_pentanomial(&self) -> bool {
        matches!(self, Results::Pentanomial(_))
    }
}

impl From<Wdl> for Results {
    fn from(wdl: Wdl) -> Self {
        Results::Trinomial(wdl)
    }
}

impl From<Pentanomial> for Results {
    fn from(p: Pentanomial) -> Self {
        Results::Pentanomial(p)
    }
}

/// How an Elo number is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EloModel {
    Logistic,
    Normalized,
}

impl fmt::Display for EloModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EloModel::Logistic => "logistic",
            EloModel::Normalized => "normalized",
        })
    }
}

impl FromStr for EloModel {
    type Err = StatsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "logistic" => Ok(EloModel::Logistic),
            "normalized" => Ok(EloModel::Normalized),
            _ => Err(StatsError::Parse {
                what: "elo model",
                input: s.to_owned(),
                reason: "expected \"logistic\" or \"normalized\"".to_owned(),
            }),
        }
    }
}

/// The largest total accepted by [`parse_counts`]: 2⁵³, below which every
/// count and sum is exact in `f64` and doubling cannot overflow `u64`.
pub const MAX_TOTAL_COUNT: u64 = 1 << 53;

/// Parses exactly `N` comma-separated non-negative integer counts, not all
/// zero. `what` names the input in error messages.
pub fn parse_counts<const N: usize>(
    what: &'static str,
    input: &str,
) -> Result<[u64; N], StatsError> {
    let err = |reason: String| StatsError::Parse {
        what,
        input: input.to_owned(),
        reason,
    };
    let fields: Vec<&str> = input.split(',').map(str::trim).collect();
    if fields.len() != N {
        return Err(err(format!(
            "expected {N} comma-separated counts, found {}",
            fields.len()
        )));
    }
    let mut counts = [0u64; N];
    for (slot, field) in counts.iter_mut().zip(&fields) {
        if field.starts_with('-') {
            return Err(err(format!("count {field:?} is negative")));
        }
        *slot = field
            .parse()
            .map_err(|_| err(format!("count {field:?} is not a non-negative integer")))?;
    }
    if counts.iter().all(|&c| c == 0) {
        return Err(err("all counts are zero".to_owned()));
    }
    let total = counts.iter().try_fold(0u64, |acc, &c| acc.checked_add(c));
    if total.is_none_or(|t| t > MAX_TOTAL_COUNT) {
        return Err(err(format!(
            "the counts add up to more than {MAX_TOTAL_COUNT}"
        )));
    }
    Ok(counts)
}

impl FromStr for Pentanomial {
    type Err = StatsError;

    /// Parses `"LL,LD+DL,LW+DD+WL,DW+WD,WW"`, e.g. `"100,2000,5000,2100,120"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_counts::<5>("pentanomial", s).map(Pentanomial)
    }
}

impl FromStr for Wdl {
    type Err = StatsError;

    /// Parses `"W,D,L"` (note: wins first, unlike the trinomial order).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let [wins, draws, losses] = parse_counts::<3>("wdl", s)?;
        Ok(Wdl {
            wins,
            draws,
            losses,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_rejects_bad_ones() {
        assert_eq!(
            "100,2000,5000,2100,120".parse::<Pentanomial>().unwrap(),
            Pentanomial([100, 2000, 5000, 2100, 120])
        );
        assert_eq!(
            " 3, 2 ,1".parse::<Wdl>().unwrap(),
            Wdl {
                wins: 3,
                draws: 2,
                losses: 1
            }
        );
        let msg = "1,2,3".parse::<Pentanomial>().unwrap_err().to_string();
        assert!(
            msg.contains("\"1,2,3\"") && msg.contains("expected 5"),
            "{msg}"
        );
        let msg = "1,-2,3".parse::<Wdl>().unwrap_err().to_string();
        assert!(msg.contains("\"-2\" is negative"), "{msg}");
        let msg = "18446744073709551615,1,0"
            .parse::<Wdl>()
            .unwrap_err()
            .to_string();
        assert!(msg.contains("add up to more than"), "{msg}");
        let msg = "0,0,0".parse::<Wdl>().unwrap_err().to_string();
        assert!(msg.contains("all counts are zero"), "{msg}");
        assert!("1,x,3".parse::<Wdl>().is_err());
        assert!("normalised".parse::<EloModel>().is_err());
    }

    #[test]
    fn regularization_replaces_zeros() {
        let r = Results::from(Pentanomial([0, 1, 2, 0, 3]));
        assert_eq!(r.regularized().unwrap(), vec![1e-3, 1.0, 2.0, 1e-3, 3.0]);
        assert_eq!(
            Results::from(Wdl::default()).regularized(),
            Err(StatsError::Empty)
        );
    }
}
