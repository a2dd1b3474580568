//! Which parameters Texel tuning fits: those the static evaluation reads.
//!
//! A parameter is an evaluation parameter when changing it by one changes the
//! [`Evaluator`] built from the table. The evaluator holds everything
//! [`Evaluator::evaluate`] reads besides the position, so a parameter that
//! leaves it unchanged (a search margin, a reduction) moves no evaluation, and
//! one that changes it changes the evaluation of some position.

use xq_engine::Params;
use xq_engine::eval::Evaluator;
use xq_engine::params::{ParamSpec, SPECS};

/// Why a `--params` list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error("unknown parameter '{0}' (`xq-engine params` lists them)")]
    Unknown(String),
    #[error(
        "'{0}' is a search parameter: the static evaluation does not read it, so Texel tuning cannot fit it"
    )]
    NotEvaluation(String),
    #[error("parameter '{0}' is listed twice")]
    Duplicate(String),
    #[error("no parameter chosen")]
    Empty,
}

/// Whether the static evaluation reads `spec`.
pub fn is_evaluation_param(spec: &ParamSpec) -> bool {
    let base = Params::default();
    let mut moved = base.clone();
    let next = if spec.default < spec.max {
        spec.default + 1
    } else {
        spec.default - 1
    };
    moved.set(spec.name, i64::from(next)).is_ok() && Evaluator::new(&moved) != Evaluator::new(&base)
}

/// The parameters to fit, in table order. Invariant: non-empty, no repeats,
/// every one an evaluation parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    specs: Vec<&'static ParamSpec>,
}

impl Selection {
    /// Every evaluation parameter.
    pub fn all() -> Selection {
        Selection {
            specs: SPECS.iter().filter(|s| is_evaluation_param(s)).collect(),
        }
    }

    /// The parameters named in `list`, separated by commas (blanks around names
    /// ignored).
    pub fn parse(list: &str) -> Result<Selection, SelectionError> {
        let mut specs: Vec<&'static ParamSpec> = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let quoted: String = name.chars().take(40).collect();
            let spec =
                xq_engine::params::spec(name).ok_or(SelectionError::Unknown(quoted.clone()))?;
            if !is_evaluation_param(spec) {
                return Err(SelectionError::NotEvaluation(quoted));
            }
            if specs.iter().any(|s| s.name == spec.name) {
                return Err(SelectionError::Duplicate(quoted));
            }
            specs.push(spec);
        }
        if specs.is_empty() {
            return Err(SelectionError::Empty);
        }
        specs.sort_by_key(|s| SPECS.iter().position(|t| t.name == s.name));
        Ok(Selection { specs })
    }

    pub fn specs(&self) -> &[&'static ParamSpec] {
        &self.specs
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Never true (see the invariant); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_and_search_parameters_are_told_apart() {
        let all = Selection::all();
        let names: Vec<&str> = all.specs().iter().map(|s| s.name).collect();
        for eval in [
            "chariot_value",
            "horse_value",
            "tempo",
            "palace_attackers",
            "bishop_bonus",
        ] {
            assert!(names.contains(&eval), "{eval} missing from {names:?}");
        }
        for search in [
            "aspiration_window",
            "lmr_base",
            "futility_margin",
            "history_bonus_scale",
        ] {
            assert!(!names.contains(&search), "{search} in {names:?}");
        }
        let first_search = SPECS
            .iter()
            .position(|s| s.name == "aspiration_window")
            .unwrap();
        assert_eq!(names.len(), first_search, "{names:?}");
    }

    #[test]
    fn lists_are_checked() {
        let s = Selection::parse(" tempo, horse_value ").unwrap();
        let names: Vec<&str> = s.specs().iter().map(|s| s.name).collect();
        assert_eq!(names, ["horse_value", "tempo"]);
        for (list, want) in [
            ("horse_value,horse_valu", "unknown parameter 'horse_valu'"),
            ("lmr_base", "'lmr_base' is a search parameter"),
            ("tempo,tempo", "'tempo' is listed twice"),
            (" , ", "no parameter chosen"),
        ] {
            let e = Selection::parse(list).unwrap_err().to_string();
            assert!(e.contains(want), "{list}: {e}");
        }
    }
}
