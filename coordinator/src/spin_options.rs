//! The spin options an engine advertises in its `uci` (or `ucci`) answer,
//! recorded by the registry at `engine add`, and the check of a tune's
//! parameters against them.
//!
//! A UCI line reads `option name <N> type spin default <D> min <A> max <B>`
//! (the name may hold spaces; the fields may come in any order); UCCI drops
//! the `name` keyword. Only `spin` options can be tuned.

use serde::{Deserialize, Serialize};

/// One advertised integer option, bounds inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpinOption {
    pub name: String,
    pub default: i64,
    pub min: i64,
    pub max: i64,
}

/// The spin option of one `option …` line; `None` for any other line or
/// option type, or a spin option without a readable default, min and max.
pub fn parse_line(line: &str) -> Option<SpinOption> {
    let rest = line.trim().strip_prefix("option ")?;
    let rest = rest.strip_prefix("name ").unwrap_or(rest);
    let (name, fields) = rest.split_once(" type ")?;
    let words: Vec<&str> = fields.split_whitespace().collect();
    if words.first() != Some(&"spin") {
        return None;
    }
    let field = |key: &str| {
        words
            .windows(2)
            .find(|w| w[0] == key)
            .and_then(|w| w[1].parse::<i64>().ok())
    };
    let (default, min, max) = (field("default")?, field("min")?, field("max")?);
    let name = name.trim();
    (!name.is_empty() && min <= max).then(|| SpinOption {
        name: name.to_owned(),
        default,
        min,
        max,
    })
}

/// Every spin option in an engine's answer, in order, the last one winning
/// when a name repeats.
pub fn parse(answer: &str) -> Vec<SpinOption> {
    let mut out: Vec<SpinOption> = Vec::new();
    for o in answer.lines().filter_map(parse_line) {
        out.retain(|p| p.name != o.name);
        out.push(o);
    }
    out
}

/// Why a tuned parameter does not fit the engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("engine '{engine}' has no spin option {name:?} to tune (it offers: {offered})")]
    Unknown {
        engine: String,
        name: String,
        offered: String,
    },
    #[error(
        "{name:?} range [{min}, {max}] leaves engine '{engine}''s option range [{omin}, {omax}]"
    )]
    Range {
        engine: String,
        name: String,
        min: f64,
        max: f64,
        omin: i64,
        omax: i64,
    },
}

/// Checks that `name` is one of `offered` and `[min, max]` lies in its range.
pub fn check(
    engine: &str,
    offered: &[SpinOption],
    name: &str,
    min: f64,
    max: f64,
) -> Result<(), FitError> {
    let Some(o) = offered.iter().find(|o| o.name == name) else {
        let names: Vec<&str> = offered.iter().map(|o| o.name.as_str()).collect();
        return Err(FitError::Unknown {
            engine: engine.to_owned(),
            name: name.to_owned(),
            offered: if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            },
        });
    };
    if min < o.min as f64 || max > o.max as f64 {
        return Err(FitError::Range {
            engine: engine.to_owned(),
            name: name.to_owned(),
            min,
            max,
            omin: o.min,
            omax: o.max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_uci_and_ucci_spin_lines_only() {
        let answer = "id name x\n\
            option name Hash type spin default 16 min 1 max 1024\n\
            option name Clear Hash type button\n\
            option name Skill Level type spin default 20 min 0 max 20\n\
            option hashsize type spin min 1 max 512 default 8\n\
            option name UCI_Variant type combo default xiangqi var xiangqi\n\
            option name Bad type spin default 1 min 5 max 2\n\
            option name Hash type spin default 32 min 1 max 2048\n\
            uciok\n";
        let got = parse(answer);
        let names: Vec<&str> = got.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["Skill Level", "hashsize", "Hash"]);
        assert_eq!(
            got[2],
            SpinOption {
                name: "Hash".into(),
                default: 32,
                min: 1,
                max: 2048
            }
        );
        assert_eq!(got[1].default, 8);
    }

    #[test]
    fn a_tune_must_name_an_offered_option_within_its_range() {
        let offered = parse("option name chariot_value type spin default 900 min 100 max 2000\n");
        assert!(check("e", &offered, "chariot_value", 300.0, 1500.0).is_ok());
        let unknown = check("e", &offered, "rook", 0.0, 1.0).unwrap_err();
        assert!(unknown.to_string().contains("\"rook\""), "{unknown}");
        assert!(unknown.to_string().contains("chariot_value"), "{unknown}");
        let wide = check("e", &offered, "chariot_value", 50.0, 1500.0).unwrap_err();
        assert!(wide.to_string().contains("[100, 2000]"), "{wide}");
    }
}
