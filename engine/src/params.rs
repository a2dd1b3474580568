//! Every tunable value of evaluation and search, declared once.
//!
//! The table in [`define_params!`] below is the single source: it generates the
//! [`Params`] struct (one `i32` field per parameter), its [`Default`], the
//! [`SPECS`] table (name, default, range and the SPSA constants), lookup by name,
//! and the printers. Evaluation and search read a `&Params`, never a global, so one
//! process can play two parameter sets against each other.
//!
//! SPSA constants follow the fishtest convention: `c_end` is the perturbation step
//! at the end of the run, in the parameter's own unit, and `r_end` the learning
//! rate at the end. Defaults: the search parameters are those of the search-only
//! SPSA tune at 2,000 nodes a move (issue 52), which started from the first SPSA
//! tune of evaluation and search together; the evaluation parameters those of the
//! second Texel pass (λ = 0.5, on games at 2,000 nodes of that search), which
//! started from the first Texel tune (engine/CHANGELOG.md has all four). All are
//! open to tuning.

use std::fmt::Write as _;

use serde::Serialize;

/// One parameter's declaration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// Identifier used by `setoption`, TOML files and SPSA lines.
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    /// SPSA perturbation step at the end of tuning (parameter units).
    pub c_end: f64,
    /// SPSA learning rate at the end of tuning.
    pub r_end: f64,
    /// What the value means, with its unit (the doc comment's text, untrimmed).
    pub doc: &'static str,
}

/// Why a parameter could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown parameter '{0}'")]
    Unknown(String),
    #[error("parameter '{name}' = {value} is out of range {min}..={max}")]
    OutOfRange {
        name: String,
        value: i64,
        min: i32,
        max: i32,
    },
    #[error("parameter '{name}': bad value '{value}', expected an integer in {min}..={max}")]
    BadValue {
        name: String,
        value: String,
        min: i32,
        max: i32,
    },
    #[error("bad parameter file: {0}")]
    Toml(String),
}

macro_rules! define_params {
    ($( $(#[doc = $doc:literal])* $name:ident = $default:literal, $min:literal ..= $max:literal, c $c:literal, r $r:literal; )*) => {
        /// The values of every tunable parameter; see [`SPECS`] for their ranges.
        /// Invariant (kept by [`Params::set`]): each value lies in its range.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Params {
            $( $(#[doc = $doc])* pub $name: i32, )*
        }

        impl Default for Params {
            fn default() -> Self {
                Params { $( $name: $default, )* }
            }
        }

        /// Every parameter's declaration, in table order.
        pub const SPECS: &[ParamSpec] = &[
            $( ParamSpec {
                name: stringify!($name),
                default: $default,
                min: $min,
                max: $max,
                c_end: $c as f64,
                r_end: $r,
                doc: concat!($($doc),*),
            }, )*
        ];

        impl Params {
            fn slot(&self, name: &str) -> Option<&i32> {
                match name {
                    $( stringify!($name) => Some(&self.$name), )*
                    _ => None,
                }
            }

            fn slot_mut(&mut self, name: &str) -> Option<&mut i32> {
                match name {
                    $( stringify!($name) => Some(&mut self.$name), )*
                    _ => None,
                }
            }
        }
    };
}

define_params! {
    /// Chariot value (cp). The book value (engine/RULES.md §7) is 900. The
    /// ranges are wide so that a tuning run may start far off (or a test may
    /// weaken a side on purpose).
    chariot_value = 1411, 100..=2000, c 30, r 0.002;
    /// Horse value (cp).
    horse_value = 362, 50..=1000, c 15, r 0.002;
    /// Cannon value (cp).
    cannon_value = 431, 50..=1000, c 15, r 0.002;
    /// Elephant value (cp).
    elephant_value = 85, 20..=600, c 10, r 0.002;
    /// Advisor value (cp).
    advisor_value = 98, 20..=600, c 10, r 0.002;
    /// Soldier value on its own side of the river (cp).
    soldier_home_value = 115, 10..=400, c 8, r 0.002;
    /// Soldier value once across the river (cp).
    soldier_crossed_value = 209, 20..=600, c 10, r 0.002;
    /// Extra value of a converted elephant, which moves like a bishop (cp).
    bishop_bonus = 104, 0..=400, c 15, r 0.002;
    /// Crossed soldier: bonus per rank advanced beyond the river bank, up to the
    /// rank before the enemy's back rank (cp per rank).
    soldier_advance = 21, 0..=60, c 3, r 0.002;
    /// Crossed soldier on the three central files (cp).
    soldier_center = 38, 0..=80, c 4, r 0.002;
    /// Soldier on the enemy's back rank ("old soldier"), subtracted (cp).
    soldier_bottom_penalty = 161, 0..=200, c 8, r 0.002;
    /// Horse: bonus per file step away from the edge (cp per file).
    horse_center = 3, 0..=30, c 2, r 0.002;
    /// Horse across the river: bonus per rank advanced, back rank excluded (cp per rank).
    horse_advance = 15, 0..=40, c 2, r 0.002;
    /// Chariot on a file with no soldier of either side (cp).
    chariot_open_file = 48, 0..=80, c 4, r 0.002;
    /// Cannon on the central file (cp).
    cannon_center_file = 32, 0..=60, c 3, r 0.002;
    /// General off its back rank, subtracted (cp).
    general_raised_penalty = 55, 0..=80, c 3, r 0.002;
    /// Horse mobility (cp per pseudo-legal move).
    mobility_horse = 20, 0..=30, c 1, r 0.002;
    /// Chariot mobility (cp per pseudo-legal move).
    mobility_chariot = 9, 0..=20, c 1, r 0.002;
    /// Cannon mobility (cp per pseudo-legal move).
    mobility_cannon = 0, 0..=20, c 1, r 0.002;
    /// Converted-elephant (bishop) mobility (cp per pseudo-legal move).
    mobility_bishop = 4, 0..=20, c 1, r 0.002;
    /// Hollow cannon 空头炮: a cannon on the enemy general's file, nothing between (cp).
    hollow_cannon = 101, 0..=250, c 8, r 0.002;
    /// Central cannon 中炮: a cannon on the enemy general's file with screens between (cp).
    central_cannon = 75, 0..=120, c 4, r 0.002;
    /// Bottom cannon 沉底炮: a cannon on the enemy back rank while the enemy general is on it (cp).
    bottom_cannon = 21, 0..=120, c 4, r 0.002;
    /// Per missing advisor while the enemy has a horse and a cannon (cp).
    advisor_missing_penalty = 48, 0..=150, c 5, r 0.002;
    /// Per missing elephant while the enemy has a horse and a cannon (cp).
    elephant_missing_penalty = 118, 0..=150, c 4, r 0.002;
    /// Per point of the enemy palace a horse, chariot or cannon attacks or can move
    /// to (cp per point).
    palace_attack = 0, 0..=40, c 2, r 0.002;
    /// Per attacking piece beyond the first, when two or more horses, chariots and
    /// cannons reach the enemy palace (cp per piece).
    palace_attackers = 65, 0..=120, c 4, r 0.002;
    /// Bonus for the side to move (cp).
    tempo = 2, 0..=50, c 2, r 0.002;
    /// Chariot on a rib file 肋道 (the d or f file, beside the generals' file)
    /// (cp). 0: its SPRT rejected the fitted −9 (engine/CHANGELOG.md).
    chariot_rib_file = 0, -60..=100, c 4, r 0.002;
    /// Horse on its own palace centre 窝心马, where it blocks the general and the
    /// advisors (cp; negative is a penalty).
    palace_heart_horse = -150, -150..=60, c 6, r 0.002;
    /// Per pair of own crossed soldiers side by side on one rank (cp per
    /// pair). 0: its SPRT rejected the fitted 73 (engine/CHANGELOG.md).
    soldier_chain = 0, -60..=100, c 4, r 0.002;
    /// Horse–cannon battery: a cannon on the enemy general's file or rank with two
    /// pieces between, one of them an own horse, which uncovers check by moving
    /// away (cp).
    cannon_horse_battery = 150, -60..=150, c 6, r 0.002;
    /// Per point of the own palace that an enemy horse, chariot or cannon reaches and
    /// no own advisor or the general guards (cp; negative is a penalty). 0: its
    /// SPRT rejected the fitted 7 (engine/CHANGELOG.md).
    palace_weak_point = 0, -80..=40, c 3, r 0.002;
    /// Half-width of the first aspiration window (cp).
    aspiration_window = 31, 5..=200, c 4, r 0.002;
    /// Null-move reduction: base (plies).
    nmp_base = 3, 1..=6, c 1, r 0.002;
    /// Null-move reduction: one more ply per this many plies of depth.
    nmp_depth_divisor = 4, 2..=10, c 1, r 0.002;
    /// Late-move reduction: base (hundredths of a ply).
    lmr_base = 66, 0..=200, c 10, r 0.002;
    /// Late-move reduction: divisor of ln(depth)·ln(move number) (hundredths).
    lmr_divisor = 233, 100..=500, c 15, r 0.002;
    /// Futility margin (cp per ply of remaining depth).
    futility_margin = 89, 30..=300, c 8, r 0.002;
    /// Reverse futility (static null move) margin (cp per ply).
    rfp_margin = 94, 30..=300, c 8, r 0.002;
    /// Razoring margin (cp per ply).
    razor_margin = 294, 50..=800, c 20, r 0.002;
    /// Late-move pruning: quiet moves searched at depth d are lmp_base + lmp_scale·d²/2.
    lmp_base = 3, 1..=12, c 1, r 0.002;
    /// Late-move pruning: see `lmp_base`.
    lmp_scale = 4, 1..=8, c 1, r 0.002;
    /// Late-move pruning where the static evaluation is not improving on that of
    /// two plies before: the move count, in percent of the improving count (100:
    /// the same count).
    lmp_worsening = 100, 25..=100, c 5, r 0.002;
    /// Captures losing more than this per ply of depth (static exchange) are pruned (cp).
    see_capture_margin = 92, 0..=300, c 8, r 0.002;
    /// Quiet moves losing more than this per ply of depth (static exchange) are pruned (cp).
    see_quiet_margin = 58, 0..=300, c 6, r 0.002;
    /// History bonus for a quiet cutoff: this × depth², capped at 1600.
    history_bonus_scale = 17, 1..=64, c 2, r 0.002;
    /// History pruning: at depth 3 or less, a quiet move that is no killer and
    /// gives no check is pruned when its history is below −this × depth (0: off;
    /// history is within ±16,384).
    history_prune = 0, 0..=8000, c 400, r 0.002;
    /// Continuation history: a quiet move's ordering and reduction score adds this
    /// percentage of its score after the previous move (0: off, and no table).
    cont_history = 0, 0..=200, c 10, r 0.002;
    /// Internal iterative reduction: a node of at least this depth without a
    /// table move is searched one ply shallower (0: off).
    iir_depth = 0, 0..=12, c 1, r 0.002;
}

impl Params {
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Result<i32, ParamError> {
        self.slot(name)
            .copied()
            .ok_or_else(|| ParamError::Unknown(name.to_string()))
    }

    /// Sets `name` to `value`; errors name the parameter and its range.
    pub fn set(&mut self, name: &str, value: i64) -> Result<(), ParamError> {
        let spec = spec(name).ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        if value < i64::from(spec.min) || value > i64::from(spec.max) {
            return Err(ParamError::OutOfRange {
                name: name.to_string(),
                value,
                min: spec.min,
                max: spec.max,
            });
        }
        if let Some(slot) = self.slot_mut(name) {
            *slot = value as i32;
        }
        Ok(())
    }

    /// Sets `name` from text (as `setoption` gives it).
    pub fn set_str(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        let spec = spec(name).ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        let v = value
            .trim()
            .parse::<i64>()
            .map_err(|_| ParamError::BadValue {
                name: name.to_string(),
                value: value.to_string(),
                min: spec.min,
                max: spec.max,
            })?;
        self.set(name, v)
    }

    /// Every parameter's declaration with its current value, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static ParamSpec, i32)> + '_ {
        SPECS
            .iter()
            .map(|s| (s, self.slot(s.name).copied().unwrap_or(s.default)))
    }

    /// Applies `name = value` lines (TOML, any subset of the parameters) on top of
    /// the current values. Unknown names and out-of-range values are errors.
    pub fn apply_toml(&mut self, text: &str) -> Result<(), ParamError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ParamError::Toml(e.message().to_string()))?;
        for (name, value) in &table {
            let spec = spec(name).ok_or_else(|| ParamError::Unknown(name.clone()))?;
            let v = value.as_integer().ok_or_else(|| ParamError::BadValue {
                name: name.clone(),
                value: value.to_string(),
                min: spec.min,
                max: spec.max,
            })?;
            self.set(name, v)?;
        }
        Ok(())
    }

    /// Default values with `text` (TOML) applied.
    pub fn from_toml(text: &str) -> Result<Params, ParamError> {
        let mut p = Params::default();
        p.apply_toml(text)?;
        Ok(p)
    }

    /// One `name, int, value, min, max, c_end, r_end` line per parameter, the
    /// format fishtest and OpenBench accept for SPSA tuning.
    pub fn to_spsa(&self) -> String {
        let mut s = String::new();
        for (spec, v) in self.iter() {
            let _ = writeln!(
                s,
                "{}, int, {}, {}, {}, {}, {}",
                spec.name, v, spec.min, spec.max, spec.c_end, spec.r_end
            );
        }
        s
    }

    /// A human-readable table: name, value, min, max, c_end, r_end.
    pub fn to_table(&self) -> String {
        let mut s = format!(
            "{:<26} {:>6} {:>6} {:>6} {:>6} {:>7}\n",
            "name", "value", "min", "max", "c_end", "r_end"
        );
        for (spec, v) in self.iter() {
            let _ = writeln!(
                s,
                "{:<26} {:>6} {:>6} {:>6} {:>6} {:>7}",
                spec.name, v, spec.min, spec.max, spec.c_end, spec.r_end
            );
        }
        s
    }

    /// A JSON array of `{name, value, default, min, max, c_end, r_end, doc}` objects.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Row<'a> {
            name: &'a str,
            value: i32,
            default: i32,
            min: i32,
            max: i32,
            c_end: f64,
            r_end: f64,
            doc: &'a str,
        }
        let rows: Vec<Row<'_>> = self
            .iter()
            .map(|(s, value)| Row {
                name: s.name,
                value,
                default: s.default,
                min: s.min,
                max: s.max,
                c_end: s.c_end,
                r_end: s.r_end,
                doc: s.doc.trim(),
            })
            .collect();
        serde_json::to_string_pretty(&rows).unwrap_or_default()
    }
}

/// The declaration of `name`.
pub fn spec(name: &str) -> Option<&'static ParamSpec> {
    SPECS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_in_range_and_names_are_unique() {
        let p = Params::default();
        for (i, (spec, v)) in p.iter().enumerate() {
            assert_eq!(v, spec.default);
            assert!(spec.min <= v && v <= spec.max, "{}", spec.name);
            assert!(spec.c_end > 0.0 && spec.r_end > 0.0, "{}", spec.name);
            assert!(
                SPECS[..i].iter().all(|s| s.name != spec.name),
                "{}",
                spec.name
            );
        }
        assert_eq!(p.chariot_value, 1411);
        assert_eq!(p.soldier_crossed_value, 209);
    }

    #[test]
    fn set_get_and_errors_name_the_parameter() {
        let mut p = Params::default();
        p.set("horse_value", 420).unwrap();
        assert_eq!(p.get("horse_value"), Ok(420));
        let e = p.set("horse_value", 9999).unwrap_err().to_string();
        assert!(e.contains("horse_value") && e.contains("50..=1000"), "{e}");
        let e = p.set("no_such", 1).unwrap_err().to_string();
        assert!(e.contains("no_such"), "{e}");
        let e = p.set_str("tempo", "x").unwrap_err().to_string();
        assert!(e.contains("tempo") && e.contains("'x'"), "{e}");
    }

    #[test]
    fn toml_subset_and_printers() {
        let p = Params::from_toml("horse_value = 410\n# comment\ntempo = 5\n").unwrap();
        assert_eq!((p.horse_value, p.tempo, p.chariot_value), (410, 5, 1411));
        let e = Params::from_toml("bogus = 3").unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
        let e = Params::from_toml("tempo = 500").unwrap_err().to_string();
        assert!(e.contains("tempo"), "{e}");
        let spsa = p.to_spsa();
        assert!(
            spsa.lines()
                .any(|l| l == "horse_value, int, 410, 50, 1000, 15, 0.002"),
            "{spsa}"
        );
        assert_eq!(spsa.lines().count(), SPECS.len());
        let json: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(json.as_array().map(Vec::len), Some(SPECS.len()));
        assert_eq!(json[1]["value"], 410);
        assert_eq!(json[1]["doc"], "Horse value (cp).");
    }
}
